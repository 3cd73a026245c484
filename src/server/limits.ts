/**
 * @module
 * Rate limits and reply slots, kept in the store so that several instances share them. Per-IP limits apply only
 * when the client's address is known: from the `clientIp` hook, the socket, or the proxies in front of us that the
 * configuration trusts.
 */
import type { BackendConfig, ResolvedConfig } from './config.js';
import type { Ctx } from './context.js';
import { HttpError } from './errors.js';
import type { BackendStore } from './store.js';

export class Limiter {
  readonly #store: BackendStore;
  readonly #settings: ResolvedConfig;
  readonly #clientIpHook: BackendConfig['clientIp'];

  constructor(store: BackendStore, settings: ResolvedConfig, clientIp: BackendConfig['clientIp']) {
    this.#store = store;
    this.#settings = settings;
    this.#clientIpHook = clientIp;
  }

  /** Counts one request on `key`; a 429 with Retry-After past `perMinute`. */
  async perMinute(key: string, perMinute: number) {
    const { count, resetMs } = await this.#store.hit(key, 60_000);
    if (count > perMinute) {
      throw new HttpError(429, 'rate_limited', 'Too many requests. Try again shortly.', { retryAfter: resetMs / 1000 });
    }
  }

  /** Counts one request of `kind` on the client's address, when it is known. */
  async perIp(kind: string, perMinute: number, c: Ctx) {
    const ip = this.clientIp(c);
    if (ip) await this.perMinute(`${kind}:ip:${ip}`, perMinute);
  }

  /** Takes one of the user's reply slots; a 429 when all are in use. Returns the slot's release. */
  async replySlot(sub: string): Promise<() => Promise<void>> {
    const key = `streams:${sub}`;
    if (!(await this.#store.acquire(key, this.#settings.limits.concurrentStreamsPerUser))) {
      throw new HttpError(429, 'rate_limited', 'Too many replies at once. Wait for one to finish.', {
        retryAfter: 1,
      });
    }
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      await this.#store.release(key);
    };
  }

  /** The client's address: the hook's, the socket's, or the one the trusted proxies in front of us recorded. */
  clientIp(c: Ctx): string | undefined {
    if (this.#clientIpHook) return this.#clientIpHook(c.req.raw) ?? undefined;
    const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
    const socket = incoming?.socket?.remoteAddress;
    const hops = this.#settings.trustedHops;
    if (hops === 0 || !socket) return socket;
    const forwarded = (c.req.header('x-forwarded-for') ?? '')
      .split(',')
      .map(part => part.trim())
      .filter(Boolean);
    const chain = [...forwarded, socket];
    return chain[Math.max(0, chain.length - 1 - hops)];
  }
}
