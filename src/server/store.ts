/**
 * @module
 * The backend's short-lived state behind one small interface: rate-limit windows, concurrent-stream slots and
 * idempotency records. `MemoryStore` keeps them in the process; a shared store (Redis, a database) can implement
 * the same interface for several instances.
 */

export interface WindowHit {
  /** Hits in the current window, this one included. */
  count: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

export type IdempotencyState = { state: 'new' } | { state: 'running' } | { state: 'done'; value: string };

export interface BackendStore {
  /** Counts one hit on `key` in a fixed window of `windowMs`. */
  hit(key: string, windowMs: number): Promise<WindowHit>;
  /** Takes one of `limit` slots of `key`; false when all are taken. */
  acquire(key: string, limit: number): Promise<boolean>;
  /** Gives back a slot taken by `acquire`. */
  release(key: string): Promise<void>;
  /** Claims an idempotency key: `new` (now running, for `ttlMs`), `running` elsewhere, or `done` with its value. */
  claim(key: string, ttlMs: number): Promise<IdempotencyState>;
  /** Records the result of a claimed key, replayed to later claims for `ttlMs`. */
  complete(key: string, value: string, ttlMs: number): Promise<void>;
  /** Forgets a claimed key whose work failed, so it can be tried again. */
  abandon(key: string): Promise<void>;
}

interface Expiring {
  expiresAt: number;
}

/** Everything in memory, swept lazily; bounded so a flood of keys cannot grow it without end. */
export class MemoryStore implements BackendStore {
  readonly #windows = new Map<string, Expiring & { count: number }>();
  readonly #slots = new Map<string, number>();
  readonly #claims = new Map<string, Expiring & ({ state: 'running' } | { state: 'done'; value: string })>();
  readonly #maxEntries: number;
  readonly #now: () => number;
  #operations = 0;

  constructor({ maxEntries = 100_000, now = () => Date.now() } = {}) {
    this.#maxEntries = maxEntries;
    this.#now = now;
  }

  async hit(key: string, windowMs: number): Promise<WindowHit> {
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

  async acquire(key: string, limit: number): Promise<boolean> {
    const taken = this.#slots.get(key) ?? 0;
    if (taken >= limit) return false;
    this.#slots.set(key, taken + 1);
    return true;
  }

  async release(key: string): Promise<void> {
    const taken = (this.#slots.get(key) ?? 0) - 1;
    if (taken > 0) this.#slots.set(key, taken);
    else this.#slots.delete(key);
  }

  async claim(key: string, ttlMs: number): Promise<IdempotencyState> {
    this.#sweep();
    const now = this.#now();
    const entry = this.#claims.get(key);
    if (entry && entry.expiresAt > now)
      return entry.state === 'done' ? { state: 'done', value: entry.value } : { state: 'running' };
    this.#claims.set(key, { state: 'running', expiresAt: now + ttlMs });
    return { state: 'new' };
  }

  async complete(key: string, value: string, ttlMs: number): Promise<void> {
    this.#claims.set(key, { state: 'done', value, expiresAt: this.#now() + ttlMs });
  }

  async abandon(key: string): Promise<void> {
    this.#claims.delete(key);
  }

  /** Every so often, drops what has expired; past the bound, drops the oldest entries. */
  #sweep() {
    if (++this.#operations % 1000 !== 0 && this.#windows.size + this.#claims.size < this.#maxEntries) return;
    const now = this.#now();
    for (const map of [this.#windows, this.#claims] as Map<string, Expiring>[]) {
      for (const [key, entry] of map) if (entry.expiresAt <= now) map.delete(key);
      const excess = map.size - Math.floor(this.#maxEntries / 2);
      if (excess > 0) [...map.keys()].slice(0, excess).forEach(key => map.delete(key));
    }
  }
}
