/**
 * @module
 * The backend's short-lived state behind one interface: rate-limit windows, concurrent-reply slots, and the runs
 * of replies (their records, their event logs, the producer's lease and stop signals). `MemoryStore` keeps it all
 * in the process; a shared store implements the same interface so that several instances see one state.
 *
 * The run operations are shaped for Redis: a record created with `SET NX PX`, a log per run as a Redis Stream
 * (`XADD`, `XRANGE` after an id, `XREAD BLOCK` for new entries, `XTRIM MAXLEN 0` on a new attempt, which keeps the
 * ids increasing), a lease as `SET NX PX` renewed and released only by its holder (a compare in Lua), and a stop
 * signal as a key plus a notification. Event ids are opaque to callers and have the form `<number>-<number>`,
 * increasing within a run across its attempts.
 */
import { MemoryLog } from './memory-log.js';

export interface WindowHit {
  /** Hits in the current window, this one included. */
  count: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

/** A reply being produced or kept for replay, keyed by the message's Idempotency-Key in its conversation. */
export interface RunRecord {
  key: string;
  conversationId: string;
  /** The externalUserId of the visitor who sent the message. */
  owner: string;
  message: string;
  /** Epoch milliseconds of the first attempt. */
  createdAt: number;
  /** 1 at first; each restart after a failure or a stop starts the next attempt with an empty log. */
  attempt: number;
  /** Epoch milliseconds when the current attempt started. */
  attemptedAt: number;
}

/** One event of a run's log: an event name of the reply stream, its JSON data, and the attempt it belongs to. */
export interface LoggedEvent {
  id: string;
  event: string;
  data: string;
  attempt: number;
}

export interface RunStore {
  /**
   * Stores a run unless its id is taken, gives its producer's lease to `lease.token` in the same step, and adds it
   * to its conversation's list (which keeps the newest `perConversation`). Returns the record that stands and
   * whether it is this one. Expires after `ttlMs`.
   */
  createRun(id: string, record: RunRecord, options: CreateRunOptions): Promise<CreatedRun>;
  getRun(id: string): Promise<RunRecord | undefined>;
  /** The ids of a conversation's runs that have not expired, oldest first. */
  listRuns(conversationId: string): Promise<string[]>;
  /** Starts the next attempt for the lease holder: the record is updated and the log emptied. False without the lease. */
  restartRun(id: string, record: RunRecord, leaseToken: string, ttlMs: number): Promise<boolean>;
  /** Appends an event for the lease holder and returns its id; null when the lease is not held (stop writing). */
  appendEvent(id: string, event: string, data: string, leaseToken: string, ttlMs: number): Promise<string | null>;
  /**
   * Appends several events in order, in one step (for a shared store, one round trip), for the lease holder: their
   * ids, or null when the lease is not held (and none was appended). `release`: the last of them ends the attempt,
   * and the lease may be given up in the same step (its holder still calls `releaseLease`). Optional: without it,
   * `appendAll` appends them one by one.
   */
  appendEvents?(
    id: string,
    events: readonly NewEvent[],
    leaseToken: string,
    ttlMs: number,
    options?: { release?: boolean },
  ): Promise<string[] | null>;
  /**
   * The events after `after` (from the start when null or from an earlier attempt), oldest first. When there are
   * none, waits up to `waitMs` for one; resolves empty on timeout or when `signal` aborts.
   */
  readEvents(
    id: string,
    after: string | null,
    options: { waitMs: number; signal?: AbortSignal },
  ): Promise<LoggedEvent[]>;
  /** The newest event of the run's log, if any. */
  lastEvent(id: string): Promise<LoggedEvent | undefined>;
  /** Takes the producer's lease if nobody holds it. */
  acquireLease(id: string, token: string, ttlMs: number): Promise<boolean>;
  /** Extends the lease if `token` still holds it. */
  renewLease(id: string, token: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `token` holds it. */
  releaseLease(id: string, token: string): Promise<void>;
  /** Whether some producer holds the lease. */
  leaseHeld(id: string): Promise<boolean>;
  /** Asks whoever produces the run to stop; remembered for `ttlMs`, so a run that starts later stops at once. */
  requestStop(id: string, ttlMs: number): Promise<void>;
  /** Whether a stop of the run was asked for. */
  stopRequested(id: string): Promise<boolean>;
  /** Resolves once a stop of the run was asked for (at once if it already was); never before, unless aborted. */
  watchStop(id: string, signal: AbortSignal): Promise<void>;
  /** Forgets a stop request, for a new attempt. */
  clearStop(id: string): Promise<void>;
}

/** An event to append: its name and its JSON data. */
export interface NewEvent {
  event: string;
  data: string;
}

/** Appends `events` in one step where the store can (`appendEvents`), else one by one: as `appendEvents` answers. */
export async function appendAll(
  store: RunStore,
  id: string,
  events: readonly NewEvent[],
  leaseToken: string,
  ttlMs: number,
  release = false,
): Promise<string[] | null> {
  if (store.appendEvents) return store.appendEvents(id, events, leaseToken, ttlMs, { release });
  const ids: string[] = [];
  for (const { event, data } of events) {
    const appended = await store.appendEvent(id, event, data, leaseToken, ttlMs);
    if (appended === null) return null;
    ids.push(appended);
  }
  return ids;
}

export interface CreateRunOptions {
  ttlMs: number;
  perConversation: number;
  lease: { token: string; ttlMs: number };
}

export interface CreatedRun {
  record: RunRecord;
  created: boolean;
}

/**
 * What a new run is admitted by (a message's rate limits and reply slot), for a store that counts and takes it in the
 * step that creates the run (`createAdmittedRun`).
 */
export interface RunAdmission {
  /** The windows to count one hit in, as `hit` does; past `limit` hits, the run is refused. */
  windows: readonly { key: string; windowMs: number; limit: number }[];
  /** The reply slot to take, as `acquireSlot` does. */
  slot: { key: string; token: string; limit: number; ttlMs: number };
}

/** Why a new run was not admitted: the first window past its limit (its place and when it resets), or no free slot. */
export type RunRefusal = { window: number; resetMs: number } | { slot: true };

export type AdmittedRun = CreatedRun | { refused: RunRefusal };

export interface BackendStore extends RunStore {
  /** Counts one hit on `key` in a fixed window of `windowMs`. */
  hit(key: string, windowMs: number): Promise<WindowHit>;
  /**
   * Takes one of `limit` slots of `key` for `token`, for `ttlMs` unless renewed: a slot whose holder vanished
   * comes back by itself. False when all are taken.
   */
  acquireSlot(key: string, token: string, limit: number, ttlMs: number): Promise<boolean>;
  /** Extends the slot `token` holds; false when it has expired. */
  renewSlot(key: string, token: string, ttlMs: number): Promise<boolean>;
  /** Gives back the slot `token` holds. */
  releaseSlot(key: string, token: string): Promise<void>;
  /**
   * `createRun` with the new run's admission in the same step (for a shared store, one round trip instead of three: the
   * record looked for, the windows and the slot, the run created). A run that exists is answered as `createRun`
   * answers, with nothing counted or taken. Otherwise one hit is counted in each window; past a window's limit, or with
   * no slot free, the run is refused and not created (its hits stay counted, as separate `hit`s would be, and no slot
   * is taken); else the slot is taken and the run created. Optional: without it, a run is admitted, then created.
   */
  createAdmittedRun?(
    id: string,
    record: RunRecord,
    options: CreateRunOptions,
    admission: RunAdmission,
  ): Promise<AdmittedRun>;
  /** Resolves when the store answers; rejects with a StoreUnavailableError when it does not. */
  ping(): Promise<void>;
  /** Lets go of connections; the store is not used afterwards. */
  close(): Promise<void>;
}

/** The store cannot be reached, or failed to answer: what needs it is refused with a 503 until it is back. */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

interface Expiring {
  expiresAt: number;
}

interface MemoryRun extends Expiring {
  record: RunRecord;
  /** The current attempt's events. */
  log: MemoryLog;
}

/** Parses an event id into its two numbers; undefined when it is not one. */
export function parseEventId(id: string): [number, number] | undefined {
  const match = /^(\d{1,15})-(\d{1,15})$/.exec(id);
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

/** Everything in memory, swept lazily; bounded so a flood of keys cannot grow it without end. */
export class MemoryStore implements BackendStore {
  readonly #windows = new Map<string, Expiring & { count: number }>();
  readonly #slots = new Map<string, Map<string, number>>();
  readonly #runs = new Map<string, MemoryRun>();
  readonly #byConversation = new Map<string, Expiring & { ids: string[] }>();
  readonly #leases = new Map<string, Expiring & { token: string }>();
  readonly #stops = new Map<string, Expiring>();
  /** Who waits for what: new events of a run, or a stop of it; each told once, at the next notification. */
  readonly #waiters = new Map<string, Set<() => void>>();
  readonly #maxEntries: number;
  readonly #now: () => number;
  #operations = 0;

  constructor({ maxEntries = 100_000, now = () => Date.now() } = {}) {
    this.#maxEntries = maxEntries;
    this.#now = now;
  }

  async hit(key: string, windowMs: number): Promise<WindowHit> {
    return this.#hit(key, windowMs);
  }

  #hit(key: string, windowMs: number): WindowHit {
    this.#sweep();
    const now = this.#now();
    let entry = this.#windows.get(key);
    if (!entry || entry.expiresAt <= now) {
      entry = { count: 0, expiresAt: now + windowMs };
      this.#windows.set(key, entry);
    }
    entry.count++;
    return { count: entry.count, resetMs: entry.expiresAt - now };
  }

  async acquireSlot(key: string, token: string, limit: number, ttlMs: number): Promise<boolean> {
    return this.#acquireSlot(key, token, limit, ttlMs);
  }

  #acquireSlot(key: string, token: string, limit: number, ttlMs: number): boolean {
    const holders = this.#holders(key);
    if (holders.size >= limit) return false;
    holders.set(token, this.#now() + ttlMs);
    this.#slots.set(key, holders);
    return true;
  }

  async renewSlot(key: string, token: string, ttlMs: number): Promise<boolean> {
    const holders = this.#holders(key);
    if (!holders.has(token)) return false;
    holders.set(token, this.#now() + ttlMs);
    return true;
  }

  async releaseSlot(key: string, token: string): Promise<void> {
    const holders = this.#holders(key);
    holders.delete(token);
    if (!holders.size) this.#slots.delete(key);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  async createRun(id: string, record: RunRecord, options: CreateRunOptions): Promise<CreatedRun> {
    return this.#createRun(id, record, options);
  }

  async createAdmittedRun(
    id: string,
    record: RunRecord,
    options: CreateRunOptions,
    { windows, slot }: RunAdmission,
  ): Promise<AdmittedRun> {
    const existing = this.#run(id);
    if (existing) return { record: { ...existing.record }, created: false };
    const hits = windows.map(({ key, windowMs }) => this.#hit(key, windowMs));
    const past = hits.findIndex((hit, i) => hit.count > windows[i]!.limit);
    if (past >= 0) return { refused: { window: past, resetMs: hits[past]!.resetMs } };
    if (!this.#acquireSlot(slot.key, slot.token, slot.limit, slot.ttlMs)) return { refused: { slot: true } };
    return this.#createRun(id, record, options);
  }

  #createRun(id: string, record: RunRecord, { ttlMs, perConversation, lease }: CreateRunOptions): CreatedRun {
    this.#sweep();
    const existing = this.#run(id);
    if (existing) return { record: { ...existing.record }, created: false };
    const expiresAt = this.#now() + ttlMs;
    this.#runs.set(id, { record: { ...record }, log: new MemoryLog(record.attempt), expiresAt });
    this.#leases.set(id, { token: lease.token, expiresAt: this.#now() + lease.ttlMs });
    // The newest `perConversation` created, as on Redis; `listRuns` leaves out those that expired.
    const list = this.#live(this.#byConversation, record.conversationId)?.ids ?? [];
    const ids = [...list.filter(other => other !== id), id].slice(-perConversation);
    this.#byConversation.set(record.conversationId, { ids, expiresAt });
    return { record: { ...record }, created: true };
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    const run = this.#run(id);
    return run && { ...run.record };
  }

  async listRuns(conversationId: string): Promise<string[]> {
    return (this.#live(this.#byConversation, conversationId)?.ids ?? []).filter(id => this.#run(id));
  }

  async restartRun(id: string, record: RunRecord, leaseToken: string, ttlMs: number): Promise<boolean> {
    const run = this.#run(id);
    if (!run || !this.#holds(id, leaseToken)) return false;
    run.record = { ...record };
    run.log = new MemoryLog(record.attempt);
    run.expiresAt = this.#now() + ttlMs;
    this.#notify(`events:${id}`);
    return true;
  }

  async appendEvent(id: string, event: string, data: string, leaseToken: string, ttlMs: number) {
    const run = this.#run(id);
    if (!run || !this.#holds(id, leaseToken)) return null;
    const logged = run.log.append(event, data);
    // Nothing follows a terminal event in its attempt: the log is packed for the rest of the replay window.
    if (event === 'done' || event === 'error') run.log.seal();
    const expiresAt = this.#now() + ttlMs;
    run.expiresAt = expiresAt;
    const list = this.#byConversation.get(run.record.conversationId);
    if (list) list.expiresAt = Math.max(list.expiresAt, expiresAt);
    this.#notify(`events:${id}`);
    return logged;
  }

  async readEvents(id: string, after: string | null, { waitMs, signal }: { waitMs: number; signal?: AbortSignal }) {
    const found = this.#eventsAfter(id, after);
    if (found.length || waitMs <= 0 || signal?.aborted) return found;
    await this.#wait(`events:${id}`, waitMs, signal);
    return this.#eventsAfter(id, after);
  }

  async lastEvent(id: string): Promise<LoggedEvent | undefined> {
    return this.#run(id)?.log.last();
  }

  async acquireLease(id: string, token: string, ttlMs: number): Promise<boolean> {
    if (this.#live(this.#leases, id)) return false;
    this.#leases.set(id, { token, expiresAt: this.#now() + ttlMs });
    return true;
  }

  async renewLease(id: string, token: string, ttlMs: number): Promise<boolean> {
    if (!this.#holds(id, token)) return false;
    this.#leases.set(id, { token, expiresAt: this.#now() + ttlMs });
    return true;
  }

  async releaseLease(id: string, token: string): Promise<void> {
    if (this.#holds(id, token)) this.#leases.delete(id);
  }

  async leaseHeld(id: string): Promise<boolean> {
    return Boolean(this.#live(this.#leases, id));
  }

  async requestStop(id: string, ttlMs: number): Promise<void> {
    this.#sweep();
    this.#stops.set(id, { expiresAt: this.#now() + ttlMs });
    this.#notify(`stop:${id}`);
  }

  async stopRequested(id: string): Promise<boolean> {
    return Boolean(this.#live(this.#stops, id));
  }

  async watchStop(id: string, signal: AbortSignal): Promise<void> {
    while (!this.#live(this.#stops, id)) {
      signal.throwIfAborted();
      await this.#wait(`stop:${id}`, 0, signal);
    }
  }

  async clearStop(id: string): Promise<void> {
    this.#stops.delete(id);
  }

  /** The unexpired holders of a key's slots. */
  #holders(key: string): Map<string, number> {
    const holders = this.#slots.get(key) ?? new Map<string, number>();
    const now = this.#now();
    for (const [token, expiresAt] of holders) if (expiresAt <= now) holders.delete(token);
    return holders;
  }

  #run(id: string): MemoryRun | undefined {
    return this.#live(this.#runs, id);
  }

  #holds(id: string, token: string) {
    return this.#live(this.#leases, id)?.token === token;
  }

  /** The entry of `key` unless it has expired (then it is dropped). */
  #live<T extends Expiring>(map: Map<string, T>, key: string): T | undefined {
    const entry = map.get(key);
    if (entry && entry.expiresAt <= this.#now()) {
      map.delete(key);
      return undefined;
    }
    return entry;
  }

  /**
   * The log holds the current attempt's events, numbered `<attempt>-1`, `<attempt>-2`… in order: what comes after an
   * id is a slice of it, found without reading the events.
   */
  #eventsAfter(id: string, after: string | null): LoggedEvent[] {
    const run = this.#run(id);
    if (!run) return [];
    const from = after === null ? undefined : parseEventId(after);
    if (!from || from[0] < run.log.attempt) return run.log.after(0);
    if (from[0] > run.log.attempt) return [];
    return run.log.after(from[1]);
  }

  #notify(topic: string) {
    const waiting = this.#waiters.get(topic);
    if (!waiting) return;
    this.#waiters.delete(topic);
    for (const wake of waiting) wake();
  }

  /**
   * Resolves at the next notification of `topic`, after `ms` (0: no time limit), or when `signal` aborts, whichever
   * is first.
   */
  #wait(topic: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise(resolve => {
      let waiting = this.#waiters.get(topic);
      if (!waiting) this.#waiters.set(topic, (waiting = new Set()));
      const list = waiting;
      const done = () => {
        if (timer !== undefined) clearTimeout(timer);
        list.delete(done);
        if (!list.size && this.#waiters.get(topic) === list) this.#waiters.delete(topic);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const timer = ms > 0 ? setTimeout(done, ms) : undefined;
      (timer as { unref?: () => void } | undefined)?.unref?.();
      list.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Every so often, drops what has expired; past the bound, drops the oldest entries. */
  #sweep() {
    const size = this.#windows.size + this.#runs.size + this.#stops.size;
    if (++this.#operations % 1000 !== 0 && size < this.#maxEntries) return;
    const now = this.#now();
    const maps = [this.#windows, this.#runs, this.#byConversation, this.#leases, this.#stops] as Map<
      string,
      Expiring
    >[];
    for (const key of this.#slots.keys()) if (!this.#holders(key).size) this.#slots.delete(key);
    for (const map of maps) {
      for (const [key, entry] of map) if (entry.expiresAt <= now) map.delete(key);
      const excess = map.size - Math.floor(this.#maxEntries / 2);
      if (excess > 0) [...map.keys()].slice(0, excess).forEach(key => map.delete(key));
    }
  }
}
