/**
 * @module
 * `RedisStore`: the backend's shared state on one Redis (or a primary with replicas), so that several instances
 * behind a load balancer act as one. Rate-limit windows are counters with an expiry; reply slots are sorted sets of
 * expiring leases, so an instance that dies gives its slots back; a run is a JSON record created with its
 * producer's lease in one script (the idempotency claim), and its log is a Redis Stream whose ids are
 * `<attempt>-<seq>`.
 *
 * A producer appends the events of one read from the service in one script, one round trip, which publishes one
 * wake-up on the run's channel for the whole batch; between a reply's first text and its end, the appends of every
 * run an instance produces go to Redis together, every few milliseconds (`appendWindowMs`). Readers on the
 * producer's own instance need neither: the store keeps the events its producers appended, compact (memory-log.ts;
 * consecutive in the log, and its newest while the lease is held), and wakes them in the process. A reader on another
 * instance subscribes to the run's channel while it follows (one subscriber connection per instance serves every such
 * reader) and reads the stream itself when woken. A stop is a key and a message on one channel per prefix that every
 * instance listens to; a producer's instance knows from the script that created its run whether a stop was already
 * asked for, so that looking costs no round trip, and a look at the stop keys of every producer it holds, in one
 * command every few seconds, makes up for a message lost.
 *
 * Every write that must be atomic is a Lua script. Scripts read the server's clock, never the instances'.
 * Redis Cluster is not supported (a script touches the keys of a run and of its conversation).
 *
 * When Redis cannot be reached, commands fail at once (no offline queue) with a StoreUnavailableError, which the
 * backend answers as 503 `store_unavailable`; so does a command a stalled Redis leaves unanswered past the command
 * timeout. The client reconnects by itself, and the store serves again as soon as Redis is back; what the instance
 * knew of its runs is forgotten when the connection drops, and read from Redis again.
 */
import { createHash } from 'node:crypto';
import { createClient } from '@redis/client';
import { MemoryLog } from './memory-log.js';
import { pause } from './pause.js';
import { StoreUnavailableError, parseEventId } from './store.js';
import type {
  AdmittedRun,
  BackendStore,
  CreateRunOptions,
  CreatedRun,
  LoggedEvent,
  NewEvent,
  RunAdmission,
  RunRecord,
  WindowHit,
} from './store.js';

export interface RedisStoreOptions {
  /** `redis[s]://[[user][:password]@]host[:port][/db]`. */
  url: string;
  /** Put before every key and channel, so that several apps can share one Redis. Default `persona-chat:`. */
  prefix?: string;
  /**
   * How long one command may take before it counts as a failure. Default 2,000 ms. A moment the instance's own event
   * loop was too busy to read the answer does not count, up to five times this in all.
   */
  commandTimeoutMs?: number;
  /**
   * How long a reply's appends of text after its first wait for those of the other replies this instance streams, to
   * go to Redis with them in one write. Default 5 ms.
   */
  appendWindowMs?: number;
  /** Told when Redis goes away and when it is back. Default: a line on stderr. */
  onStatus?(status: 'unavailable' | 'ready', detail: string): void;
}

type Reply = string | number | null | Reply[];
/**
 * The socket's high-water mark. node-redis writes the commands waiting to go out in one turn of the event loop until
 * the socket holds this much, and the rest waits for a later turn. At the socket's default (16 KB), a burst of two
 * thousand messages, whose commands and appends come to a few megabytes, went out over a hundred turns: with each
 * turn of a busy backend taking tens of milliseconds, commands waited seconds to be sent at all, and failed with the
 * command timeout while Redis sat idle. What Redis has not read yet is held here either way, in the socket's buffer
 * or in node-redis's queue.
 */
const sendAtOnce = { writableHighWaterMark: 64 * 1024 * 1024 };

/**
 * The command connection: fails at once while Redis is away, and reconnects by itself. Commands are bounded by the
 * store's own timer (`#guard`), from when they are sent to their answer: the client's `timeout` (by default 5 s),
 * which covers only the wait to write, is turned off, for it costs an AbortSignal and a timer of its own per command
 * (the timer fires whether or not the command was answered). The subscriber is a duplicate, with the same options.
 */
const commandClient = (url: string) =>
  createClient({
    url,
    disableOfflineQueue: true,
    commandOptions: { timeout: 0 },
    socket: { connectTimeout: 2000, reconnectStrategy: retries => Math.min(100 * 2 ** retries, 2000), ...sendAtOnce },
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

/** Counts one hit in the window `key` of `ms`: sets `count`, and `ttl` (ms until the window resets). */
const countHit = (key: string, ms: string) => `
    local count = redis.call('INCR', ${key})
    local ttl = redis.call('PTTL', ${key})
    if ttl < 0 then redis.call('PEXPIRE', ${key}, ${ms}); ttl = tonumber(${ms}) end`;
/** Takes one of `limit` slots of `key` for `token` for `ms`, or returns `full` when all are taken. */
const takeSlot = (key: string, token: string, limit: string, ms: string, full: string) => `
    ${now}
    redis.call('ZREMRANGEBYSCORE', ${key}, '-inf', now)
    if not redis.call('ZSCORE', ${key}, ${token}) and redis.call('ZCARD', ${key}) >= tonumber(${limit}) then
      return ${full}
    end
    redis.call('ZADD', ${key}, now + tonumber(${ms}), ${token})
    ${extend(key, ms)}`;
/**
 * Creates a run unless its record exists (then returns it). KEYS 1 to 5: record, lease, conversation's runs, log,
 * stop. ARGV 1 to 6: record, ttlMs, token, leaseMs, perConversation, run id. Once created, returns whether a stop was
 * asked for, 1 or 0. `admit` runs between the look and the creation.
 */
const createRunLua = (admit = '') => `
    local existing = redis.call('GET', KEYS[1])
    if existing then return existing end
    ${admit}
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
    redis.call('DEL', KEYS[4])
    local t = redis.call('TIME')
    redis.call('ZADD', KEYS[3], tonumber(t[1]) * 1000000 + tonumber(t[2]), ARGV[6])
    redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -(tonumber(ARGV[5]) + 1))
    redis.call('PEXPIRE', KEYS[3], ARGV[2])
    return redis.call('EXISTS', KEYS[5])`;

const scripts = {
  // KEYS: window. ARGV: windowMs. Returns {count, ms until reset}.
  hit: script(`
    ${countHit('KEYS[1]', 'ARGV[1]')}
    return {count, ttl}`),
  // KEYS: slots. ARGV: token, limit, ttlMs.
  acquireSlot: script(`
    ${takeSlot('KEYS[1]', 'ARGV[1]', 'ARGV[2]', 'ARGV[3]', '0')}
    return 1`),
  // KEYS: slots. ARGV: token, ttlMs.
  renewSlot: script(`
    ${now}
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
    if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
    redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
    ${extend('KEYS[1]', 'ARGV[2]')}
    return 1`),
  // See createRunLua.
  createRun: script(createRunLua()),
  // createRun's KEYS and ARGV, then KEYS: slots, and a window each; ARGV: the slot's token, limit and ttlMs, then each
  // window's windowMs and limit. A run not created yet is refused with {'window', place from 0, ms until it resets}
  // past a window's limit, or {'slot'} when no slot is free.
  createAdmittedRun: script(
    createRunLua(`
    local refused = false
    for i = 7, #KEYS do
      local at = 10 + (i - 7) * 2
      ${countHit('KEYS[i]', 'ARGV[at]')}
      if not refused and count > tonumber(ARGV[at + 1]) then refused = {'window', i - 7, ttl} end
    end
    if refused then return refused end
    ${takeSlot('KEYS[6]', 'ARGV[7]', 'ARGV[8]', 'ARGV[9]', "{'slot'}")}`),
  ),
  // KEYS: conversation's runs. ARGV: the prefix of record keys. The ids whose record still exists, oldest first.
  listRuns: script(`
    local live = {}
    for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
      if redis.call('EXISTS', ARGV[1] .. id) == 1 then table.insert(live, id) end
    end
    return live`),
  // KEYS: lease, record, log, stop. ARGV: token, record, ttlMs, channel. 0 without the lease; else 1, or 2 when a
  // stop was asked for.
  restartRun: script(`
    if redis.call('GET', KEYS[1]) ~= ARGV[1] or redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
    redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
    if redis.call('EXISTS', KEYS[3]) == 1 then
      redis.call('XTRIM', KEYS[3], 'MAXLEN', 0)
      redis.call('PEXPIRE', KEYS[3], ARGV[3])
    end
    redis.call('PUBLISH', ARGV[4], 'restart')
    return 1 + redis.call('EXISTS', KEYS[4])`),
  // KEYS: lease, record, log. ARGV: token, ttlMs, channel, the prefix of conversation lists, 1 to give the lease up
  // (else 0), then the name and the data of each event. Returns the new events' ids, or nothing without the lease.
  // One wake-up for them all.
  appendEvents: script(`
    if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
    local record = redis.call('GET', KEYS[2])
    if not record then return false end
    local run = cjson.decode(record)
    local at = string.format('%d-*', run.attempt)
    local ids = {}
    for i = 6, #ARGV, 2 do
      ids[#ids + 1] = redis.call('XADD', KEYS[3], at, 'e', ARGV[i], 'd', ARGV[i + 1])
    end
    if ARGV[5] == '1' then redis.call('DEL', KEYS[1]) end
    redis.call('PEXPIRE', KEYS[2], ARGV[2])
    redis.call('PEXPIRE', KEYS[3], ARGV[2])
    local list = ARGV[4] .. run.conversationId
    if redis.call('EXISTS', list) == 1 then ${extend('list', 'ARGV[2]')} end
    redis.call('PUBLISH', ARGV[3], ids[#ids])
    return ids`),
  // KEYS: lease. ARGV: token, ttlMs.
  renewLease: script(`
    if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return 1`),
  // KEYS: lease. ARGV: token.
  releaseLease: script(`
    if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
    return 1`),
  // KEYS: stop. ARGV: ttlMs, the stop channel, run id.
  requestStop: script(`
    redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
    redis.call('PUBLISH', ARGV[2], ARGV[3])
    return 1`),
};

/** What this instance knows of a run whose lease it holds (one of its producers, or a reader ending the run). */
interface LocalRun {
  token: string;
  /** Whether the lease is held, as far as this instance knows; false once released (the entry goes soon after). */
  leased: boolean;
  /** Whether this instance gave the lease up (with the run's last events, or by `releaseLease`). */
  released?: boolean;
  /** The attempt of `log`; 0 when not known yet (a lease taken without the record). */
  attempt: number;
  /**
   * The events of the attempt this instance appended, compact (memory-log.ts): consecutive in the log, and while the
   * lease is held, its newest. None yet: undefined.
   */
  log: MemoryLog | undefined;
  /** Whether the log holds the attempt from its first event: this instance began the attempt. */
  fromStart: boolean;
  /** Whether this instance appended text of the attempt: its next appends, but its end, wait for other runs'. */
  texted?: boolean;
  /** Whether a stop was asked for, as the run's script and the stop channel since told; undefined: ask Redis. */
  stop: boolean | undefined;
  /** The stop channel's epoch that `stop` holds for (-1: none). */
  epoch: number;
}

/** A run's channel that the subscriber listens on for the readers of this instance that wait on the run. */
interface Channel {
  subscriber: Client;
  /** Settles once Redis confirmed the subscription. */
  subscribed: Promise<void>;
  confirmed: boolean;
  /** Readers using it; at 0, it is let go of after `followGraceMs`, unless a reader comes back. */
  users: number;
  idle: ReturnType<typeof setTimeout> | undefined;
}

/** Told when what it waits for may have happened; `wait` resolves true then (at once if it already was). */
interface Listener {
  wait(ms: number, signal?: AbortSignal): Promise<boolean>;
  stop(): void;
}

/** How long a run's channel stays subscribed after its last reader, for the next wait of a reader that follows. */
const followGraceMs = 2000;
/** How often the stop keys of the runs this instance produces are looked at, in case a stop message was lost. */
const stopSweepMs = 5000;
/**
 * `appendWindowMs` unless told otherwise. Redis spends a read and a write of its socket on each write it is sent,
 * several times what the script of an append costs it: with hundreds of replies streaming, appends sent one by one as
 * their deltas come take most of its CPU.
 */
const defaultAppendWindowMs = 5;

export class RedisStore implements BackendStore {
  readonly #client;
  /** Subscribed to the stop channel, and to the channels of the runs this instance's readers follow from elsewhere. */
  #subscriber: Client;
  readonly #timeoutMs: number;
  /** Times the commands in flight against the command timeout. */
  readonly #clock: RedisClock;
  readonly #appendWindowMs: number;
  readonly #prefix: string;
  readonly #onStatus: NonNullable<RedisStoreOptions['onStatus']>;
  #down = false;
  /** The runs whose lease this instance holds. */
  readonly #local = new Map<string, LocalRun>();
  /** Readers waiting for a run's next events, and watchers of a run's stop, by run id. */
  readonly #readers = new Map<string, Set<() => void>>();
  readonly #stopWatchers = new Map<string, Set<() => void>>();
  readonly #channels = new Map<string, Channel>();
  /** Counts the times the stop channel may have missed messages (a subscriber connection lost or replaced). */
  #stopEpoch = 0;
  /** Whether the stop channel is subscribed on the subscriber as it is now, so that its messages arrive. */
  #stopsLive = false;
  /** Counts the stop messages received: what a script said of a stop holds only when none came while it ran. */
  #stopMessages = 0;
  /** Resolves when the appends waiting now are to be sent, all at once (`appendWindowMs`). */
  #appendWindow: Promise<void> | undefined;
  readonly #stopSweep: ReturnType<typeof setInterval>;

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
    this.#clock = new RedisClock(this.#timeoutMs);
    this.#appendWindowMs = options.appendWindowMs ?? defaultAppendWindowMs;
    this.#client = this.#connect(commandClient(options.url));
    // A connection lost may have lost writes, leases and stops: what this instance knew is read from Redis again.
    this.#client.on('error', () => this.#forgetLocal());
    this.#subscriber = this.#connectSubscriber();
    this.#stopSweep = setInterval(() => void this.#sweepStops(), stopSweepMs);
    this.#stopSweep.unref?.();
  }

  #connect(client: Client): Client {
    client.on('error', (error: Error) => this.#unavailable(error));
    client.on('ready', () => this.#ready());
    client.connect().catch(() => {
      // Closed before it ever connected; the error was reported.
    });
    return client;
  }

  /** The subscriber: listens on the stop channel from each time it is ready (node-redis subscribes again itself). */
  #connectSubscriber(): Client {
    const subscriber = this.#connect(this.#client.duplicate());
    const lost = () => {
      if (subscriber !== this.#subscriber) return;
      this.#stopsLive = false;
      this.#stopEpoch++;
    };
    subscriber.on('error', lost);
    subscriber.on('reconnecting', lost);
    subscriber.on('ready', () => {
      if (subscriber !== this.#subscriber) return;
      this.#stopEpoch++;
      subscriber.subscribe(this.#stopChannel, this.#onStop).then(
        () => {
          if (subscriber !== this.#subscriber || !subscriber.isReady) return;
          this.#stopsLive = true;
          // Messages may have been missed while the subscriber was away: every wait looks again.
          this.#wakeAll();
        },
        () => {},
      );
    });
    return subscriber;
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
    return (await this.#createRun(scripts.createRun, id, record, options)) as CreatedRun;
  }

  async createAdmittedRun(
    id: string,
    record: RunRecord,
    options: CreateRunOptions,
    { windows, slot }: RunAdmission,
  ): Promise<AdmittedRun> {
    return this.#createRun(
      scripts.createAdmittedRun,
      id,
      record,
      options,
      [this.#key('slots', slot.key), ...windows.map(({ key }) => this.#key('hit', key))],
      [slot.token, slot.limit, slot.ttlMs, ...windows.flatMap(({ windowMs, limit }) => [windowMs, limit])],
    );
  }

  async #createRun(
    how: Script,
    id: string,
    record: RunRecord,
    { ttlMs, perConversation, lease }: CreateRunOptions,
    keys: string[] = [],
    args: (string | number)[] = [],
  ): Promise<AdmittedRun> {
    const runKeys = [
      this.#key('run', id),
      this.#key('lease', id),
      this.#key('runs', record.conversationId),
      this.#key('log', id),
      this.#key('stop', id),
    ];
    const before = this.#stopState();
    const answer = await this.#run(
      how,
      [...runKeys, ...keys],
      [JSON.stringify(record), ttlMs, lease.token, lease.ttlMs, perConversation, id, ...args],
    );
    if (typeof answer === 'string') return { record: JSON.parse(answer) as RunRecord, created: false };
    if (Array.isArray(answer)) {
      const [by, place, resetMs] = answer as [string, number?, number?];
      return { refused: by === 'slot' ? { slot: true } : { window: place!, resetMs: resetMs! } };
    }
    this.#hold(id, lease.token, record.attempt, { ...before, stop: answer === 1 });
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
    const keys = [this.#key('lease', id), this.#key('run', id), this.#key('log', id), this.#key('stop', id)];
    const before = this.#stopState();
    const answer = await this.#run(scripts.restartRun, keys, [
      leaseToken,
      JSON.stringify(record),
      ttlMs,
      this.#channel(id),
    ]);
    if (answer === 0) return false;
    this.#hold(id, leaseToken, record.attempt, { ...before, stop: answer === 2 });
    this.#wake(this.#readers, id);
    return true;
  }

  async appendEvent(id: string, event: string, data: string, leaseToken: string, ttlMs: number) {
    return (await this.appendEvents(id, [{ event, data }], leaseToken, ttlMs))?.[0] ?? null;
  }

  /** One script for all of them: one round trip, one wake-up on the run's channel. */
  async appendEvents(
    id: string,
    events: readonly NewEvent[],
    leaseToken: string,
    ttlMs: number,
    { release = false }: { release?: boolean } = {},
  ) {
    if (!events.length) return [];
    const keys = [this.#key('lease', id), this.#key('run', id), this.#key('log', id)];
    const args: (string | number)[] = [leaseToken, ttlMs, this.#channel(id), this.#key('runs', ''), release ? 1 : 0];
    for (const { event, data } of events) args.push(event, data);
    // A reply's first text and its end go at once, for the visitor waits for them; the text between goes with the
    // appends of the other runs.
    const known = this.#local.get(id);
    if (!release && known?.token === leaseToken && known.texted) {
      await (this.#appendWindow ??= new Promise(resolve =>
        setTimeout(() => {
          this.#appendWindow = undefined;
          resolve();
        }, this.#appendWindowMs),
      ));
    }
    let appended: Reply;
    try {
      appended = await this.#run(scripts.appendEvents, keys, args);
    } catch (error) {
      // Whether they were appended is not known (a stalled Redis may still run the script): the log is read again.
      this.#drop(id);
      throw error;
    }
    if (!Array.isArray(appended)) {
      this.#drop(id, leaseToken);
      return null;
    }
    const ids = appended as string[];
    const [attempt, first] = parseEventId(ids[0]!)!;
    let run = this.#local.get(id);
    if (run?.token !== leaseToken) {
      // A lease this instance held without knowing of it any more (its connection dropped meanwhile).
      run = { token: leaseToken, leased: true, attempt, log: undefined, fromStart: false, stop: undefined, epoch: -1 };
      this.#local.set(id, run);
    }
    if (run.attempt !== attempt) Object.assign(run, { attempt, log: undefined, fromStart: false, texted: false });
    run.texted ||= events.some(({ event }) => event === 'delta');
    run.leased = true;
    run.released = false;
    if (run.log && run.log.first + run.log.length !== first) {
      // Not what follows the log (it cannot be while the lease is held): what came between is not known.
      Object.assign(run, { log: undefined, fromStart: false });
    }
    run.log ??= new MemoryLog(attempt, first);
    for (const { event, data } of events) run.log.append(event, data);
    if (release) this.#released(id, run);
    this.#wake(this.#readers, id);
    return ids;
  }

  /**
   * The events after `after`, from the log this instance keeps when it produces the run, else from the stream. A
   * wait listens from before it looks, so that nothing appended while it looks is missed: in the process for a run
   * this instance produces, on the run's channel for another.
   */
  async readEvents(id: string, after: string | null, { waitMs, signal }: { waitMs: number; signal?: AbortSignal }) {
    const cached = this.#cached(id, after);
    if (cached?.length || waitMs <= 0 || signal?.aborted) return cached ?? this.#eventsAfter(id, after);
    let release: (() => void) | undefined;
    if (!this.#local.get(id)?.leased) {
      release = await this.#follow(id, signal);
      if (signal?.aborted) {
        release();
        return [];
      }
    }
    const listener = this.#listen(this.#readers, id);
    try {
      const found = cached ?? (await this.#eventsAfter(id, after));
      if (found.length) return found;
      const woken = await listener.wait(waitMs, signal);
      if (signal?.aborted) return [];
      // After a timeout, from the stream: the log is not trusted for longer than it takes to hear of a change.
      return (woken ? this.#cached(id, after) : undefined) ?? (await this.#eventsAfter(id, after));
    } finally {
      listener.stop();
      release?.();
    }
  }

  async lastEvent(id: string): Promise<LoggedEvent | undefined> {
    const run = this.#local.get(id);
    if (run?.leased && run.attempt && this.#client.isReady) {
      if (run.log?.length) return run.log.last();
      if (run.fromStart) return undefined;
    }
    const entries = (await this.#command(['XREVRANGE', this.#key('log', id), '+', '-', 'COUNT', '1'])) as Reply[];
    return entries.map(toEvent)[0];
  }

  async acquireLease(id: string, token: string, ttlMs: number): Promise<boolean> {
    const taken = (await this.#command(['SET', this.#key('lease', id), token, 'NX', 'PX', String(ttlMs)])) === 'OK';
    if (taken) this.#hold(id, token, 0);
    return taken;
  }

  async renewLease(id: string, token: string, ttlMs: number): Promise<boolean> {
    const held = (await this.#run(scripts.renewLease, [this.#key('lease', id)], [token, ttlMs])) === 1;
    if (!held) this.#drop(id, token);
    return held;
  }

  async releaseLease(id: string, token: string): Promise<void> {
    const run = this.#local.get(id);
    if (run?.token === token) {
      // Given up already, with the run's last events.
      if (run.released) return;
      this.#released(id, run);
      this.#wake(this.#readers, id);
    }
    await this.#run(scripts.releaseLease, [this.#key('lease', id)], [token]);
  }

  async leaseHeld(id: string): Promise<boolean> {
    return (await this.#command(['EXISTS', this.#key('lease', id)])) === 1;
  }

  async requestStop(id: string, ttlMs: number): Promise<void> {
    await this.#run(scripts.requestStop, [this.#key('stop', id)], [ttlMs, this.#stopChannel, id]);
    this.#onStop(id);
  }

  async stopRequested(id: string): Promise<boolean> {
    return this.#stopAsked(id, false);
  }

  /**
   * Waits for a message on the stop channel, a new subscriber (messages may have been lost) or the sweep of the stop
   * keys, and looks at the stop key each time. While Redis is away it keeps trying: a watch ends only with a stop or
   * its signal.
   */
  async watchStop(id: string, signal: AbortSignal): Promise<void> {
    const listener = this.#listen(this.#stopWatchers, id);
    try {
      for (let fresh = false; ; fresh = true) {
        signal.throwIfAborted();
        try {
          if (await this.#stopAsked(id, fresh)) return;
        } catch (error) {
          if (!(error instanceof StoreUnavailableError)) throw error;
          await pause(1000, signal, { unref: true });
          continue;
        }
        await listener.wait(0, signal);
      }
    } finally {
      listener.stop();
    }
  }

  async clearStop(id: string): Promise<void> {
    const run = this.#local.get(id);
    if (run) run.stop = undefined;
    await this.#command(['DEL', this.#key('stop', id)]);
  }

  /** A round trip on both connections: a command, and a subscription (which a stuck subscriber never confirms). */
  async ping(): Promise<void> {
    await this.#command(['PING']);
    const subscriber = this.#subscriber;
    const channel = `${this.#prefix}ping`;
    const listener = () => {};
    try {
      await this.#confirm(subscriber, () => subscriber.subscribe(channel, listener));
    } finally {
      subscriber.unsubscribe(channel, listener).catch(() => {});
    }
  }

  async close(): Promise<void> {
    clearInterval(this.#stopSweep);
    for (const channel of this.#channels.values()) clearTimeout(channel.idle);
    this.#channels.clear();
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

  get #stopChannel() {
    return `${this.#prefix}stop`;
  }

  /** A message on a run's channel: its readers here look. */
  readonly #onEvents = (_message: string, channel: string) => {
    this.#wake(this.#readers, channel.slice(this.#channel('').length));
  };

  /** A message on the stop channel (its run's id), or a stop asked for here: the run's watchers look. */
  readonly #onStop = (id: string) => {
    this.#stopMessages++;
    const run = this.#local.get(id);
    if (run) run.stop = undefined;
    this.#wake(this.#stopWatchers, id);
  };

  /** What a script that reads the stop key is to be checked against: see `#hold`. */
  #stopState() {
    return { epoch: this.#stopsLive ? this.#stopEpoch : -1, messages: this.#stopMessages };
  }

  /**
   * Notes the lease of a run as held here. `stop`: what its script found of the stop key, `before` the stop channel's
   * state from before the script was sent (`#stopState`). A stop found stands; none found stands until a stop message
   * comes, but only when the stop channel listened throughout and no stop message came while the script ran (that
   * message may have been of this run, and come before the run was noted here).
   */
  #hold(id: string, token: string, attempt: number, found?: { stop: boolean; epoch: number; messages: number }) {
    let stop: boolean | undefined;
    if (found?.stop) stop = true;
    else if (found && found.epoch !== -1 && found.messages === this.#stopMessages) stop = false;
    this.#local.set(id, {
      token,
      leased: true,
      attempt,
      log: undefined,
      fromStart: attempt > 0,
      stop,
      epoch: found?.epoch ?? -1,
    });
  }

  /**
   * Notes the run's lease as given up. The run is kept a moment, for the readers about to read its last events, but
   * its log is not trusted to be the newest any more.
   */
  #released(id: string, run: LocalRun) {
    run.leased = false;
    run.released = true;
    const forget = setTimeout(() => this.#local.get(id) === run && this.#local.delete(id), 1000);
    forget.unref?.();
  }

  /** Forgets that this instance holds the run's lease (held by `token`, when given), and wakes its readers. */
  #drop(id: string, token?: string) {
    const run = this.#local.get(id);
    if (!run || (token !== undefined && run.token !== token)) return;
    this.#local.delete(id);
    this.#wake(this.#readers, id);
  }

  #forgetLocal() {
    if (!this.#local.size) return;
    this.#local.clear();
    this.#wakeAll();
  }

  /**
   * The events after `after` as the log of a run this instance produces holds them (none when the reader is at its
   * end and the lease is held); undefined when the log cannot tell, and the stream is read.
   */
  #cached(id: string, after: string | null): LoggedEvent[] | undefined {
    const run = this.#local.get(id);
    if (!run?.attempt || !this.#client.isReady) return undefined;
    const { log } = run;
    const from = after === null ? undefined : parseEventId(after);
    // How many of the log's events the reader has.
    let count: number;
    if (!from || from[0] < run.attempt) {
      // From the attempt's start.
      if (!run.fromStart) return undefined;
      count = 0;
    } else if (from[0] > run.attempt) return undefined;
    else {
      // The ids of an attempt follow one another: a reader at the event before the log's first reads all of it.
      count = log ? from[1] - log.first + 1 : 0;
      if (!log || count < 0 || count > log.length) return undefined;
    }
    if (log && count < log.length) return log.after(count);
    return run.leased ? [] : undefined;
  }

  /** Whether a stop of the run was asked for: as this instance knows it while that holds (`#hold`), else Redis. */
  async #stopAsked(id: string, fresh: boolean): Promise<boolean> {
    const run = this.#local.get(id);
    const known =
      !fresh &&
      run?.leased &&
      run.stop !== undefined &&
      (run.stop || (run.epoch === this.#stopEpoch && this.#stopsLive)) &&
      this.#client.isReady;
    if (known) return run.stop!;
    return (await this.#command(['EXISTS', this.#key('stop', id)])) === 1;
  }

  /** Looks at the stop keys of every run watched here, in one command: a stop message lost is found this way. */
  async #sweepStops() {
    const ids = [...this.#stopWatchers.keys()];
    if (!ids.length || !this.#client.isReady) return;
    try {
      const values = (await this.#command(['MGET', ...ids.map(id => this.#key('stop', id))])) as Reply[];
      values.forEach((value, i) => value !== null && this.#onStop(ids[i]!));
    } catch {
      // Redis is away: the watchers try again themselves.
    }
  }

  async #eventsAfter(id: string, after: string | null): Promise<LoggedEvent[]> {
    const from = after !== null && parseEventId(after) ? `(${after}` : '-';
    const entries = (await this.#command(['XRANGE', this.#key('log', id), from, '+'])) as Reply[];
    return entries.map(toEvent);
  }

  /**
   * Subscribes to the run's channel for a reader, unless it is already, and resolves once Redis confirmed it; gives
   * back what lets go of it. A subscription Redis does not confirm within the command timeout (a connection gone
   * half-open) fails the wait, and the subscriber is replaced.
   */
  async #follow(id: string, signal?: AbortSignal): Promise<() => void> {
    const name = this.#channel(id);
    let channel = this.#channels.get(name);
    if (!channel) {
      const subscriber = this.#subscriber;
      const subscribed = this.#confirm(subscriber, () => subscriber.subscribe(name, this.#onEvents));
      const made: Channel = { subscriber, subscribed, confirmed: false, users: 0, idle: undefined };
      subscribed.then(
        () => (made.confirmed = true),
        () => this.#channels.get(name) === made && this.#channels.delete(name),
      );
      this.#channels.set(name, (channel = made));
    }
    const used = channel;
    clearTimeout(used.idle);
    used.users++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      if (--used.users > 0) return;
      used.idle = setTimeout(() => {
        if (used.users > 0) return;
        if (this.#channels.get(name) === used) this.#channels.delete(name);
        used.subscriber.unsubscribe(name, this.#onEvents).catch(() => {});
      }, followGraceMs);
      used.idle.unref?.();
    };
    if (used.confirmed) return release;
    try {
      await untilSettledOrAborted(used.subscribed, signal);
    } catch (error) {
      release();
      throw error;
    }
    return release;
  }

  /** Subscribes with `subscribe`; a StoreUnavailableError when Redis does not confirm it in time (see `#follow`). */
  async #confirm(subscriber: Client, subscribe: () => Promise<unknown>) {
    // Bounded below, where a subscription not confirmed in time also replaces the subscriber.
    const subscribing = this.#guard(subscribe, false);
    subscribing.catch(() => {});
    let cancel!: () => void;
    const late = new Promise<'stuck'>(resolve => (cancel = this.#clock.time(() => resolve('stuck'))));
    const first = await Promise.race([subscribing.then(() => 'subscribed' as const), late]).finally(() => cancel());
    if (first === 'stuck') {
      this.#replaceSubscriber(subscriber);
      throw new StoreUnavailableError('Redis: a subscription was not confirmed in time');
    }
  }

  /** Drops a subscriber that stopped answering for a new connection, once; every wait looks again. */
  #replaceSubscriber(stuck: Client) {
    if (this.#subscriber !== stuck) return;
    for (const channel of this.#channels.values()) clearTimeout(channel.idle);
    this.#channels.clear();
    this.#stopsLive = false;
    this.#stopEpoch++;
    this.#subscriber = this.#connectSubscriber();
    stuck.removeAllListeners('ready');
    stuck.destroy();
    this.#wakeAll();
  }

  /** Listens for wake-ups of `id` in `waiters` until stopped. */
  #listen(waiters: Map<string, Set<() => void>>, id: string): Listener {
    let woken = false;
    let resolve: ((woken: boolean) => void) | undefined;
    const wake = () => {
      if (resolve) resolve(true);
      else woken = true;
    };
    let set = waiters.get(id);
    if (!set) waiters.set(id, (set = new Set()));
    set.add(wake);
    const list = set;
    return {
      wait(ms, signal) {
        if (woken || signal?.aborted) {
          const was = woken;
          woken = false;
          return Promise.resolve(was);
        }
        return new Promise(done => {
          let timer: ReturnType<typeof setTimeout> | undefined;
          const finish = (how: boolean) => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', aborted);
            resolve = undefined;
            done(how);
          };
          const aborted = () => finish(false);
          resolve = finish;
          if (ms > 0) {
            timer = setTimeout(finish, ms, false);
            timer.unref?.();
          }
          signal?.addEventListener('abort', aborted, { once: true });
        });
      },
      stop() {
        list.delete(wake);
        if (!list.size && waiters.get(id) === list) waiters.delete(id);
      },
    };
  }

  #wake(waiters: Map<string, Set<() => void>>, id: string) {
    const set = waiters.get(id);
    if (set) for (const wake of set) wake();
  }

  /** Every reader and stop watcher looks again. */
  #wakeAll() {
    for (const waiters of [this.#readers, this.#stopWatchers]) {
      for (const set of waiters.values()) for (const wake of set) wake();
    }
  }

  #command(args: string[]): Promise<Reply> {
    return this.#guard(() => this.#client.sendCommand<Reply>(args));
  }

  /** Runs a script by its hash, sending its text only when Redis does not know it yet (after a restart). */
  async #run(script: Script, keys: string[], args: (string | number)[]): Promise<Reply> {
    const command = ['EVALSHA', script.sha, String(keys.length), ...keys];
    for (const arg of args) command.push(String(arg));
    try {
      return await this.#command(command);
    } catch (error) {
      if (!/NOSCRIPT/.test(String((error as Error).cause ?? error))) throw error;
      return this.#command(['EVAL', script.lua, ...command.slice(2)]);
    }
  }

  /**
   * A command's answer, or a StoreUnavailableError: when it failed, and when it was not answered within the command
   * timeout, which a stalled Redis (a paused process, a full disk) leaves unanswered for as long as it stalls.
   * `bounded` false: the caller bounds the wait itself.
   * A moment the event loop was too busy to read the answer does not count (`RedisClock`).
   */
  #guard<T>(work: () => Promise<T>, bounded = true): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const cancel = bounded
        ? this.#clock.time(() => reject(new StoreUnavailableError(`Redis: no answer within ${this.#timeoutMs} ms`)))
        : undefined;
      const failed = (error: unknown) => {
        cancel?.();
        const message = error instanceof Error ? error.message : String(error);
        reject(new StoreUnavailableError(`Redis: ${message}`, { cause: error }));
      };
      try {
        work().then(answer => {
          cancel?.();
          resolve(answer);
        }, failed);
      } catch (error) {
        failed(error);
      }
    });
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

/** A command the clock times: since when, how much of its time counted, and what it calls when that is up. */
interface Timed {
  since: number;
  waited: number;
  cap: number;
  expire: () => void;
  cancelled: boolean;
}

/**
 * Calls a command's `expire` once `ms` have passed that the event loop was free to read Redis's answer, or five times
 * `ms` in all, unless what `time` returns is called first. A busy event loop (a thousand requests come at once) sends a
 * command late and reads its answer late, and its timers run before it reads: that time is not Redis's. So the time is
 * counted in quarters, each less as much as its timer ran late beyond a timer's usual slack (the loop was busy
 * meanwhile), and `expire` is called only once the loop has read what came after the last (`setImmediate`). A command
 * sent during a quarter counts its share of it. One timer serves every command in flight: a command costs an entry in
 * a set, not a timer of its own.
 */
class RedisClock {
  readonly #ms: number;
  readonly #quarter: number;
  readonly #slack: number;
  readonly #timed = new Set<Timed>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the quarter under way began, and when its timer is due. */
  #from = 0;
  #due = 0;

  constructor(ms: number) {
    this.#ms = ms;
    this.#quarter = ms / 4;
    this.#slack = Math.min(10, this.#quarter / 10);
  }

  time(expire: () => void): () => void {
    const now = performance.now();
    const timed: Timed = { since: now, waited: 0, cap: now + 5 * this.#ms, expire, cancelled: false };
    this.#timed.add(timed);
    if (!this.#timer) this.#next(now);
    return () => {
      timed.cancelled = true;
      this.#timed.delete(timed);
    };
  }

  #next(now: number) {
    this.#from = now;
    this.#due = now + this.#quarter;
    this.#timer = setTimeout(this.#tick, this.#quarter);
    // A command in flight keeps its connection open, and the process with it: the clock need not.
    this.#timer.unref?.();
  }

  readonly #tick = () => {
    const now = performance.now();
    const late = now - this.#due;
    const counted = late > this.#slack ? Math.max(0, this.#quarter - late) : this.#quarter;
    const span = now - this.#from;
    const expired: Timed[] = [];
    for (const timed of this.#timed) {
      timed.waited += timed.since > this.#from ? counted * ((now - timed.since) / span) : counted;
      if (timed.waited >= this.#ms || now >= timed.cap) {
        this.#timed.delete(timed);
        expired.push(timed);
      }
    }
    this.#timer = undefined;
    if (this.#timed.size) this.#next(now);
    if (expired.length) {
      setImmediate(() => {
        for (const timed of expired) if (!timed.cancelled) timed.expire();
      });
    }
  };
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

/** Settles as `promise` does, or resolves when `signal` aborts first. */
function untilSettledOrAborted(promise: Promise<unknown>, signal?: AbortSignal): Promise<unknown> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.resolve();
  let aborted!: () => void;
  const abort = new Promise<void>(resolve => (aborted = resolve));
  signal.addEventListener('abort', aborted, { once: true });
  return Promise.race([promise, abort]).finally(() => signal.removeEventListener('abort', aborted));
}
