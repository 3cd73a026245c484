/**
 * @module
 * `RedisStore`: the backend's shared state on one Redis (or a primary with replicas), so that several instances
 * behind a load balancer act as one. Rate-limit windows are counters with an expiry; reply slots are sorted sets of
 * expiring leases, so an instance that dies gives its slots back; a run is a JSON record created with its
 * producer's lease in one script (the idempotency claim), and its log is a Redis Stream whose ids are
 * `<attempt>-<seq>`. Whoever waits for a run's next event or for a stop subscribes to the run's channel, which every
 * append, restart and stop publishes to: one subscriber connection per instance serves every waiting reader.
 *
 * Every write that must be atomic is a Lua script. Scripts read the server's clock, never the instances'.
 * Redis Cluster is not supported (a script touches the keys of a run and of its conversation).
 *
 * When Redis cannot be reached, commands fail at once (no offline queue) with a StoreUnavailableError, which the
 * backend answers as 503 `store_unavailable`; so does a command a stalled Redis leaves unanswered past the command
 * timeout. The client reconnects by itself, and the store serves again as soon as Redis is back.
 */
import { createHash } from 'node:crypto';
import { createClient } from '@redis/client';
import { StoreUnavailableError, parseEventId } from './store.js';
import type { BackendStore, CreateRunOptions, CreatedRun, LoggedEvent, RunRecord, WindowHit } from './store.js';

export interface RedisStoreOptions {
  /** `redis[s]://[[user][:password]@]host[:port][/db]`. */
  url: string;
  /** Put before every key and channel, so that several apps can share one Redis. Default `persona-chat:`. */
  prefix?: string;
  /** How long one command may take before it counts as a failure. Default 2,000 ms. */
  commandTimeoutMs?: number;
  /** Told when Redis goes away and when it is back. Default: a line on stderr. */
  onStatus?(status: 'unavailable' | 'ready', detail: string): void;
}

type Reply = string | number | null | Reply[];
/** The command connection: fails at once while Redis is away, and reconnects by itself. */
const commandClient = (url: string, timeoutMs: number) =>
  createClient({
    url,
    disableOfflineQueue: true,
    commandOptions: { timeout: timeoutMs },
    socket: { connectTimeout: 2000, reconnectStrategy: retries => Math.min(100 * 2 ** retries, 2000) },
  });
type Client = ReturnType<typeof commandClient>;

interface Script {
  lua: string;
  sha: string;
}

const script = (lua: string): Script => ({ lua, sha: createHash('sha1').update(lua).digest('hex') });

/** The server's clock in milliseconds, for scripts. */
const now = `local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;
/** Extends a key's expiry to at least ARGV-given milliseconds, never shortening it. */
const extend = (key: string, ms: string) =>
  `if redis.call('PTTL', ${key}) < tonumber(${ms}) then redis.call('PEXPIRE', ${key}, ${ms}) end`;

const scripts = {
  // KEYS: window. ARGV: windowMs. Returns {count, ms until reset}.
  hit: script(`
    local count = redis.call('INCR', KEYS[1])
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
    return {count, ttl}`),
  // KEYS: slots. ARGV: token, limit, ttlMs.
  acquireSlot: script(`
    ${now}
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
    if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
      return 0
    end
    redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
    ${extend('KEYS[1]', 'ARGV[3]')}
    return 1`),
  // KEYS: slots. ARGV: token, ttlMs.
  renewSlot: script(`
    ${now}
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
    if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
    redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
    ${extend('KEYS[1]', 'ARGV[2]')}
    return 1`),
  // KEYS: record, lease, conversation's runs, log. ARGV: record, ttlMs, token, leaseMs, perConversation, run id.
  // Returns the record that stands when there is one, else nothing (created).
  createRun: script(`
    local existing = redis.call('GET', KEYS[1])
    if existing then return existing end
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
    redis.call('DEL', KEYS[4])
    local t = redis.call('TIME')
    redis.call('ZADD', KEYS[3], tonumber(t[1]) * 1000000 + tonumber(t[2]), ARGV[6])
    redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -(tonumber(ARGV[5]) + 1))
    redis.call('PEXPIRE', KEYS[3], ARGV[2])
    return false`),
  // KEYS: conversation's runs. ARGV: the prefix of record keys. The ids whose record still exists, oldest first.
  listRuns: script(`
    local live = {}
    for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
      if redis.call('EXISTS', ARGV[1] .. id) == 1 then table.insert(live, id) end
    end
    return live`),
  // KEYS: lease, record, log. ARGV: token, record, ttlMs, channel.
  restartRun: script(`
    if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
    redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
    if redis.call('EXISTS', KEYS[3]) == 1 then
      redis.call('XTRIM', KEYS[3], 'MAXLEN', 0)
      redis.call('PEXPIRE', KEYS[3], ARGV[3])
    end
    redis.call('PUBLISH', ARGV[4], 'restart')
    return 1`),
  // KEYS: lease, record, log. ARGV: token, event, data, ttlMs, channel, the prefix of conversation lists.
  // Returns the new event's id, or nothing without the lease.
  appendEvent: script(`
    if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
    local record = redis.call('GET', KEYS[2])
    if not record then return false end
    local run = cjson.decode(record)
    local id = redis.call('XADD', KEYS[3], string.format('%d-*', run.attempt), 'e', ARGV[2], 'd', ARGV[3])
    redis.call('PEXPIRE', KEYS[2], ARGV[4])
    redis.call('PEXPIRE', KEYS[3], ARGV[4])
    local list = ARGV[6] .. run.conversationId
    if redis.call('EXISTS', list) == 1 then ${extend('list', 'ARGV[4]')} end
    redis.call('PUBLISH', ARGV[5], id)
    return id`),
  // KEYS: lease. ARGV: token, ttlMs.
  renewLease: script(`
    if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return 1`),
  // KEYS: lease. ARGV: token.
  releaseLease: script(`
    if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
    return 1`),
  // KEYS: stop. ARGV: ttlMs, channel.
  requestStop: script(`
    redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
    redis.call('PUBLISH', ARGV[2], 'stop')
    return 1`),
};

export class RedisStore implements BackendStore {
  readonly #client;
  /** Subscribed to the channels of the runs this instance waits on; replaced when it stops answering. */
  #subscriber: Client;
  readonly #timeoutMs: number;
  readonly #prefix: string;
  readonly #onStatus: NonNullable<RedisStoreOptions['onStatus']>;
  #down = false;

  constructor(options: RedisStoreOptions) {
    const where = describe(options.url);
    this.#prefix = options.prefix ?? 'persona-chat:';
    this.#onStatus =
      options.onStatus ??
      ((status, detail) => {
        console.error(`persona-chat backend: Redis at ${where} ${status === 'ready' ? 'is back' : 'is unavailable'}`);
        if (detail) console.error(`persona-chat backend: ${detail}`);
      });
    this.#timeoutMs = options.commandTimeoutMs ?? 2000;
    this.#client = this.#connect(commandClient(options.url, this.#timeoutMs));
    this.#subscriber = this.#connect(this.#client.duplicate());
  }

  #connect(client: Client): Client {
    client.on('error', (error: Error) => this.#unavailable(error));
    client.on('ready', () => this.#ready());
    client.connect().catch(() => {
      // Closed before it ever connected; the error was reported.
    });
    return client;
  }

  async hit(key: string, windowMs: number): Promise<WindowHit> {
    const [count, resetMs] = (await this.#run(scripts.hit, [this.#key('hit', key)], [windowMs])) as number[];
    return { count: count!, resetMs: resetMs! };
  }

  async acquireSlot(key: string, token: string, limit: number, ttlMs: number): Promise<boolean> {
    return (await this.#run(scripts.acquireSlot, [this.#key('slots', key)], [token, limit, ttlMs])) === 1;
  }

  async renewSlot(key: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.#run(scripts.renewSlot, [this.#key('slots', key)], [token, ttlMs])) === 1;
  }

  async releaseSlot(key: string, token: string): Promise<void> {
    await this.#command(['ZREM', this.#key('slots', key), token]);
  }

  async createRun(id: string, record: RunRecord, options: CreateRunOptions): Promise<CreatedRun> {
    const { ttlMs, perConversation, lease } = options;
    const existing = await this.#run(
      scripts.createRun,
      [this.#key('run', id), this.#key('lease', id), this.#key('runs', record.conversationId), this.#key('log', id)],
      [JSON.stringify(record), ttlMs, lease.token, lease.ttlMs, perConversation, id],
    );
    if (typeof existing === 'string') return { record: JSON.parse(existing) as RunRecord, created: false };
    return { record: { ...record }, created: true };
  }

  async getRun(id: string): Promise<RunRecord | undefined> {
    const json = await this.#command(['GET', this.#key('run', id)]);
    return typeof json === 'string' ? (JSON.parse(json) as RunRecord) : undefined;
  }

  async listRuns(conversationId: string): Promise<string[]> {
    return (await this.#run(scripts.listRuns, [this.#key('runs', conversationId)], [this.#key('run', '')])) as string[];
  }

  async restartRun(id: string, record: RunRecord, leaseToken: string, ttlMs: number): Promise<boolean> {
    const keys = [this.#key('lease', id), this.#key('run', id), this.#key('log', id)];
    return (
      (await this.#run(scripts.restartRun, keys, [leaseToken, JSON.stringify(record), ttlMs, this.#channel(id)])) === 1
    );
  }

  async appendEvent(id: string, event: string, data: string, leaseToken: string, ttlMs: number) {
    const keys = [this.#key('lease', id), this.#key('run', id), this.#key('log', id)];
    const args = [leaseToken, event, data, ttlMs, this.#channel(id), this.#key('runs', '')];
    const appended = await this.#run(scripts.appendEvent, keys, args);
    return typeof appended === 'string' ? appended : null;
  }

  async readEvents(id: string, after: string | null, { waitMs, signal }: { waitMs: number; signal?: AbortSignal }) {
    let found = await this.#eventsAfter(id, after);
    if (found.length || waitMs <= 0 || signal?.aborted) return found;
    await this.#waitOn(
      this.#channel(id),
      waitMs,
      signal,
      async () => (found = await this.#eventsAfter(id, after)).length > 0,
    );
    return found.length || signal?.aborted ? found : this.#eventsAfter(id, after);
  }

  async lastEvent(id: string): Promise<LoggedEvent | undefined> {
    const entries = (await this.#command(['XREVRANGE', this.#key('log', id), '+', '-', 'COUNT', '1'])) as Reply[];
    return entries.map(toEvent)[0];
  }

  async acquireLease(id: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.#command(['SET', this.#key('lease', id), token, 'NX', 'PX', String(ttlMs)])) === 'OK';
  }

  async renewLease(id: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.#run(scripts.renewLease, [this.#key('lease', id)], [token, ttlMs])) === 1;
  }

  async releaseLease(id: string, token: string): Promise<void> {
    await this.#run(scripts.releaseLease, [this.#key('lease', id)], [token]);
  }

  async leaseHeld(id: string): Promise<boolean> {
    return (await this.#command(['EXISTS', this.#key('lease', id)])) === 1;
  }

  async requestStop(id: string, ttlMs: number): Promise<void> {
    await this.#run(scripts.requestStop, [this.#key('stop', id)], [ttlMs, this.#channel(id)]);
  }

  async stopRequested(id: string): Promise<boolean> {
    return (await this.#command(['EXISTS', this.#key('stop', id)])) === 1;
  }

  /**
   * Waits on the run's channel, and looks at the stop key every few seconds besides, in case a notification was
   * lost while the subscriber reconnected. While Redis is away it keeps trying: a watch ends only with a stop or
   * its signal.
   */
  async watchStop(id: string, signal: AbortSignal): Promise<void> {
    for (;;) {
      signal.throwIfAborted();
      try {
        if (await this.stopRequested(id)) return;
        let stopped = false;
        await this.#waitOn(this.#channel(id), 5000, signal, async () => (stopped = await this.stopRequested(id)));
        if (stopped) return;
      } catch (error) {
        if (!(error instanceof StoreUnavailableError)) throw error;
        await pause(1000, signal);
      }
    }
  }

  async clearStop(id: string): Promise<void> {
    await this.#command(['DEL', this.#key('stop', id)]);
  }

  /** A round trip on both connections: a command, and a subscription (which a stuck subscriber never confirms). */
  async ping(): Promise<void> {
    await this.#command(['PING']);
    await this.#waitOn(`${this.#prefix}ping`, 0, undefined, async () => true);
  }

  async close(): Promise<void> {
    for (const client of [this.#subscriber, this.#client]) {
      try {
        client.removeAllListeners('ready');
        client.destroy();
      } catch {
        // Already closed.
      }
    }
  }

  #key(kind: string, id: string) {
    return `${this.#prefix}${kind}:${id}`;
  }

  #channel(id: string) {
    return `${this.#prefix}events:${id}`;
  }

  async #eventsAfter(id: string, after: string | null): Promise<LoggedEvent[]> {
    const from = after !== null && parseEventId(after) ? `(${after}` : '-';
    const entries = (await this.#command(['XRANGE', this.#key('log', id), from, '+'])) as Reply[];
    return entries.map(toEvent);
  }

  /**
   * Subscribes to `channel`, then resolves once `ready()` says so, a message comes, `ms` pass or `signal` aborts.
   * Subscribing before looking means no message between the look and the wait is missed. A subscription Redis does
   * not confirm within the command timeout (a connection gone half-open) fails the wait, and the subscriber is
   * replaced.
   */
  async #waitOn(channel: string, ms: number, signal: AbortSignal | undefined, ready: () => Promise<boolean>) {
    const subscriber = this.#subscriber;
    let finish!: () => void;
    const finished = new Promise<'finished'>(resolve => (finish = () => resolve('finished')));
    signal?.addEventListener('abort', finish);
    const listener = () => finish();
    try {
      // Bounded below, where a subscription not confirmed in time also replaces the subscriber.
      const subscribing = this.#guard(() => subscriber.subscribe(channel, listener), false);
      subscribing.catch(() => {});
      let stuck!: ReturnType<typeof setTimeout>;
      const late = new Promise<'stuck'>(resolve => (stuck = setTimeout(resolve, this.#timeoutMs, 'stuck')));
      const first = await Promise.race([subscribing.then(() => 'subscribed' as const), late, finished]).finally(() =>
        clearTimeout(stuck),
      );
      if (first === 'stuck') {
        this.#replaceSubscriber(subscriber);
        throw new StoreUnavailableError('Redis: a subscription was not confirmed in time');
      }
      if (first === 'finished') return;
      if (ms <= 0 || (await ready())) return;
      const remaining = setTimeout(finish, ms);
      remaining.unref?.();
      await finished.finally(() => clearTimeout(remaining));
    } finally {
      signal?.removeEventListener('abort', finish);
      subscriber.unsubscribe(channel, listener).catch(() => {});
    }
  }

  /** Drops a subscriber that stopped answering for a new connection, once. */
  #replaceSubscriber(stuck: Client) {
    if (this.#subscriber !== stuck) return;
    this.#subscriber = this.#connect(this.#client.duplicate());
    stuck.removeAllListeners('ready');
    stuck.destroy();
  }

  #command(args: string[]): Promise<Reply> {
    return this.#guard(() => this.#client.sendCommand<Reply>(args));
  }

  /** Runs a script by its hash, sending its text only when Redis does not know it yet (after a restart). */
  async #run(script: Script, keys: string[], args: (string | number)[]): Promise<Reply> {
    const rest = [String(keys.length), ...keys, ...args.map(String)];
    try {
      return await this.#command(['EVALSHA', script.sha, ...rest]);
    } catch (error) {
      if (!/NOSCRIPT/.test(String((error as Error).cause ?? error))) throw error;
      return this.#command(['EVAL', script.lua, ...rest]);
    }
  }

  /**
   * A command's answer, or a StoreUnavailableError: when it failed, and when it was not answered within the command
   * timeout. The client's own timeout covers only the wait to write a command, not the wait for its answer, which a
   * stalled Redis (a paused process, a full disk) leaves unanswered for as long as it stalls. `bounded` false: the
   * caller bounds the wait itself.
   */
  async #guard<T>(work: () => Promise<T>, bounded = true): Promise<T> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const unanswered = new Promise<never>((_, reject) => {
      if (bounded) timer = setTimeout(reject, this.#timeoutMs, new Error(`no answer within ${this.#timeoutMs} ms`));
    });
    try {
      return await Promise.race([work(), unanswered]);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new StoreUnavailableError(`Redis: ${message}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  #unavailable(error: Error) {
    if (this.#down) return;
    this.#down = true;
    this.#onStatus('unavailable', `${error.name}: ${error.message}`);
  }

  #ready() {
    if (!this.#down) return;
    if (!this.#client.isReady || !this.#subscriber.isReady) return;
    this.#down = false;
    this.#onStatus('ready', '');
  }
}

/** A stream entry as a logged event: `[id, [field, value, …]]` with the fields `e` (event) and `d` (data). */
function toEvent(entry: Reply): LoggedEvent {
  const [id, fields] = entry as [string, string[]];
  const value = (name: string) => fields[fields.indexOf(name) + 1] ?? '';
  return { id, event: value('e'), data: value('d'), attempt: parseEventId(id)![0] };
}

/** Where a Redis URL points, without its credentials, for messages. */
function describe(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || 6379}`;
  } catch {
    return 'the configured URL';
  }
}

/** Resolves after `ms`; rejects when `signal` aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', aborted);
    };
    const aborted = () => {
      done();
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    timer.unref?.();
    signal?.addEventListener('abort', aborted);
  });
}
