/**
 * @module
 * Rate limits and reply slots, kept in the store so that several instances share them. Per-IP limits apply only
 * when the client's address is known: from the `clientIp` hook, the socket, or the proxies in front of us that the
 * configuration trusts.
 */
import type { BackendConfig, ResolvedConfig } from './config.js';
import type { Ctx } from './env.js';
import { HttpError } from './errors.js';
import type { Admission } from './producer.js';
import { MemoryStore, StoreUnavailableError } from './store.js';
import type { BackendStore, RunAdmission, RunRefusal } from './store.js';

/** The refusal of a request past its limit, given the seconds until the window resets. */
export type Refusal = (retryAfter: number) => HttpError;

const tooManyRequests: Refusal = retryAfter =>
  new HttpError(429, 'rate_limited', 'Too many requests. Try again shortly.', { retryAfter });

const tooManyReplies = () =>
  new HttpError(429, 'rate_limited', 'Too many replies at once. Wait for one to finish.', { retryAfter: 1 });

/** A message's admission as a store takes it with the run's creation (`BackendStore.createAdmittedRun`). */
export interface AdmissionPlan {
  /** What the store counts and takes. */
  admission: RunAdmission;
  /** The admission once the store took it: its slot renewed and given back. */
  granted(): Admission;
  /** The error a refusal is answered with. */
  refusal(refused: RunRefusal): HttpError;
}

export class Limiter {
  readonly #store: BackendStore;
  /** Counts for this instance alone while the shared store is away, so that limits hold through an outage. */
  readonly #fallback = new MemoryStore();
  readonly #settings: ResolvedConfig;
  readonly #clientIpHook: BackendConfig['clientIp'];
  #warnedOfProxy = false;

  constructor(store: BackendStore, settings: ResolvedConfig, clientIp: BackendConfig['clientIp']) {
    this.#store = store;
    this.#settings = settings;
    this.#clientIpHook = clientIp;
  }

  /** Counts one request on `key`; refused (by default a 429 with Retry-After) past `perMinute`. */
  async perMinute(key: string, perMinute: number, refuse: Refusal = tooManyRequests) {
    const { count, resetMs } = await this.#store
      .hit(key, 60_000)
      .catch(error =>
        error instanceof StoreUnavailableError ? this.#fallback.hit(key, 60_000) : Promise.reject(error),
      );
    if (count > perMinute) throw refuse(resetMs / 1000);
  }

  /** Counts one request of `kind` on the client's address, when it is known. */
  async perIp(kind: string, perMinute: number, c: Ctx, refuse?: Refusal) {
    const ip = this.clientIp(c);
    if (ip) await this.perMinute(`${kind}:ip:${ip}`, perMinute, refuse);
  }

  /**
   * Takes one of the user's reply slots; a 429 when all are in use. The slot is a lease that its producer renews
   * with its own (every third of it); the slot of an instance that died comes back by itself two leases later.
   */
  replySlot(sub: string): Promise<Admission> {
    return this.#take(this.#slot(sub));
  }

  async #take(slot: RunAdmission['slot']): Promise<Admission> {
    if (!(await this.#store.acquireSlot(slot.key, slot.token, slot.limit, slot.ttlMs))) throw tooManyReplies();
    return this.#held(slot);
  }

  /** A new slot of the user's, to take. */
  #slot(sub: string): RunAdmission['slot'] {
    return {
      key: `streams:${sub}`,
      token: crypto.randomUUID(),
      limit: this.#settings.limits.concurrentStreamsPerUser,
      ttlMs: 2 * this.#settings.leaseMs,
    };
  }

  /** The admission a slot taken stands for: renewed with the reply's lease, and given back once. */
  #held({ key, token, ttlMs }: RunAdmission['slot']): Admission {
    let released = false;
    return {
      renew: async () => {
        // A slot lost while the store was away is taken again: the reply it stands for is still being produced.
        if (!(await this.#store.renewSlot(key, token, ttlMs))) {
          await this.#store.acquireSlot(key, token, Number.MAX_SAFE_INTEGER, ttlMs);
        }
      },
      release: async () => {
        if (released) return;
        released = true;
        await this.#store.releaseSlot(key, token);
      },
    };
  }

  /**
   * A message's admission (`messageAdmission`'s windows and slot) asked for apart from the run's creation: counted in
   * the windows and one of the user's reply slots taken, all at once (with a shared store, one write). Refused as
   * `perMinute` refuses first, then as `replySlot` does; a slot taken for a message a window refused is given back.
   */
  async message(sub: string, c: Ctx): Promise<Admission> {
    const { windows, slot: wanted } = this.messageAdmission(sub, c).admission;
    const slot = this.#take(wanted);
    slot.catch(() => {});
    try {
      await Promise.all(windows.map(({ key, limit }) => this.perMinute(key, limit)));
    } catch (error) {
      await slot.then(
        admission => admission.release(),
        () => {},
      );
      throw error;
    }
    return slot;
  }

  /**
   * A message's admission: one hit in the user's window and in the address's (when known), each a minute, and one of
   * the user's reply slots. As a plan, for a store that counts and takes it as it creates the run
   * (`createAdmittedRun`), refused as `message` refuses; where the store is away, the run is not created and the
   * message refused with a 503, as it would be without it.
   */
  messageAdmission(sub: string, c: Ctx): AdmissionPlan {
    const { messagesPerUserPerMinute, messagesPerIpPerMinute } = this.#settings.limits;
    const ip = this.clientIp(c);
    const windows = [{ key: `message:user:${sub}`, windowMs: 60_000, limit: messagesPerUserPerMinute }];
    if (ip) windows.push({ key: `message:ip:${ip}`, windowMs: 60_000, limit: messagesPerIpPerMinute });
    const slot = this.#slot(sub);
    return {
      admission: { windows, slot },
      granted: () => this.#held(slot),
      refusal: refused => ('slot' in refused ? tooManyReplies() : tooManyRequests(refused.resetMs / 1000)),
    };
  }

  /** The client's address: the hook's, the socket's, or the one the trusted proxies in front of us recorded. */
  clientIp(c: Ctx): string | undefined {
    if (this.#clientIpHook) return this.#clientIpHook(c.req.raw) ?? undefined;
    const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
    const socket = incoming?.socket?.remoteAddress;
    const hops = this.#settings.trustedHops;
    if (hops === 0 && !this.#warnedOfProxy && c.req.header('x-forwarded-for') !== undefined) {
      this.#warnedOfProxy = true;
      console.warn(
        'persona-chat backend: requests carry X-Forwarded-For but no proxy is trusted, so every visitor behind the ' +
          'proxy shares one address for rate limits. Set --trust-proxy (trustProxy) to the number of proxies in ' +
          'front of this server.',
      );
    }
    if (hops === 0 || !socket) return socket;
    const forwarded = (c.req.header('x-forwarded-for') ?? '')
      .split(',')
      .map(part => part.trim())
      .filter(Boolean);
    const chain = [...forwarded, socket];
    return chain[Math.max(0, chain.length - 1 - hops)];
  }
}
