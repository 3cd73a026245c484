import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createClient } from '@redis/client';
import { RedisStore } from '../../src/server/redis-store.js';
import { StoreUnavailableError } from '../../src/server/store.js';
import type { CreatedRun } from '../../src/server/store.js';
import { startRedis } from '../support/redis.js';
import { until } from '../support/until.js';
import type { RedisServer } from '../support/redis.js';
import { record, storeSuite, window } from './store-suite.js';

let redis: RedisServer;
let stores = 0;
const statuses: string[] = [];

/** Whether the store answers a ping. */
const answers = (store: RedisStore) =>
  store.ping().then(
    () => true,
    () => false,
  );

/** A store of its own on the shared server: each has its own prefix, so no test sees another's keys. */
async function connected(onStatus = (status: string) => void statuses.push(status), prefix = `t${++stores}:`) {
  const store = new RedisStore({ url: redis.url, prefix, onStatus });
  await until(() => answers(store), 'the store to answer');
  return store;
}

before(async () => {
  redis = await startRedis();
});
after(() => redis.stop());

storeSuite(
  'RedisStore',
  async () => {
    const prefix = `t${++stores}:`;
    return {
      store: await connected(undefined, prefix),
      advance: ms => new Promise(resolve => setTimeout(resolve, ms)),
      twin: () => connected(undefined, prefix),
    };
  },
  60,
);

/**
 * A TCP proxy in front of Redis that can stop forwarding the connections which subscribed: a connection gone
 * half-open (a NAT or load balancer dropping it silently), which TCP notices only minutes later.
 */
async function freezingProxy(target: string) {
  const { hostname, port } = new URL(target);
  const subscribers = new Set<Socket>();
  const frozen = new Set<Socket>();
  const server = createServer(client => {
    const upstream = connect(Number(port), hostname);
    client.on('data', data => {
      if (/subscribe/i.test(data.toString())) subscribers.add(client);
      if (!frozen.has(client)) upstream.write(data);
    });
    upstream.on('data', data => frozen.has(client) || client.write(data));
    const end = () => (client.destroy(), upstream.destroy());
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    freezeSubscribers: () => subscribers.forEach(socket => frozen.add(socket)),
    close: () => {
      server.close();
      for (const socket of subscribers) socket.destroy();
    },
  };
}

describe('RedisStore alone', () => {
  it('gives up on a subscriber that stopped answering, within the command timeout, and carries on with a new one', async () => {
    const proxy = await freezingProxy(redis.url);
    const store = new RedisStore({ url: proxy.url, prefix: 'frozen:', commandTimeoutMs: 300, onStatus: () => {} });
    const other = await connected(undefined, 'frozen:');
    after(() => Promise.all([store.close(), other.close(), proxy.close()]));
    await until(() => answers(store), 'the store to answer');
    // Produced by the other instance: a reader here waits on the run's channel.
    await other.createRun('r', record(), window);
    proxy.freezeSubscribers();

    const controller = new AbortController();
    const reading = store.readEvents('r', null, { waitMs: 60_000, signal: controller.signal });
    await assert.rejects(reading, StoreUnavailableError, 'the wait fails instead of hanging');
    await until(() => answers(store), 'a new subscriber to answer');
    const watching = store.watchStop('r', new AbortController().signal);
    await other.requestStop('r', 60_000);
    await watching;
  });

  it('fails a command a stalled Redis leaves unanswered, within the command timeout, and serves once it goes on', async () => {
    const store = new RedisStore({ url: redis.url, prefix: 'stall:', commandTimeoutMs: 300, onStatus: () => {} });
    after(() => store.close());
    await until(() => answers(store), 'the store to answer');
    redis.pause();
    try {
      const bounded = <T>(work: Promise<T>) =>
        Promise.race([work, new Promise<'hung'>(resolve => setTimeout(() => resolve('hung'), 3000).unref())]);
      await assert.rejects(bounded(store.getRun('r')), StoreUnavailableError);
      await assert.rejects(bounded(store.hit('k', 1000)), StoreUnavailableError);
    } finally {
      redis.resume();
    }
    await until(() => answers(store), 'the store to answer');
    assert.equal((await store.hit('k2', 1000)).count, 1);
  });

  it("counts toward the command timeout no time its own event loop was too busy to read Redis's answer", async () => {
    const store = new RedisStore({ url: redis.url, prefix: 'busy:', commandTimeoutMs: 200, onStatus: () => {} });
    after(() => store.close());
    await until(() => answers(store), 'the store to answer');
    // Commands sent, then the loop busy for three timeouts (a thousand requests at once): the command is sent when
    // the loop is free again, and its timer is due before the loop reads the answer.
    const hit = store.hit('k', 60_000);
    const lease = store.acquireLease('r', 'a', 60_000);
    const busyUntil = performance.now() + 600;
    while (performance.now() < busyUntil);
    assert.equal((await hit).count, 1);
    assert.equal(await lease, true);
  });

  it('fails a command a stalled Redis leaves unanswered after five timeouts in all, however busy its loop is', async () => {
    const store = new RedisStore({ url: redis.url, prefix: 'cap:', commandTimeoutMs: 100, onStatus: () => {} });
    after(() => store.close());
    await until(() => answers(store), 'the store to answer');
    redis.pause();
    // The loop busy for 200 ms at every turn: no quarter of the timeout counts, or hardly.
    const busy = setInterval(() => {
      const until = performance.now() + 200;
      while (performance.now() < until);
    }, 0);
    try {
      const bounded = <T>(work: Promise<T>) =>
        Promise.race([work, new Promise<'hung'>(resolve => setTimeout(() => resolve('hung'), 3000).unref())]);
      await assert.rejects(bounded(store.getRun('r')), StoreUnavailableError);
    } finally {
      clearInterval(busy);
      redis.resume();
    }
  });

  it("sends a reply's first text and its end at once, and the text between with other runs' appends", async () => {
    // A window long enough that what waits in it is told apart from what does not, on any machine.
    const store = new RedisStore({ url: redis.url, prefix: 'window:', appendWindowMs: 2000, onStatus: () => {} });
    after(() => store.close());
    await until(() => answers(store), 'the store to answer');
    const settled = new Set<string>();
    const noted = <T>(name: string, work: Promise<T>) => work.finally(() => settled.add(name));
    await store.createRun('a', record('key-a'), window);
    await store.createRun('b', record('key-b'), window);
    await store.appendEvent('a', 'citations', '{"citations":[]}', 'a', 60_000);
    await store.appendEvent('a', 'delta', '{"text":"first"}', 'a', 60_000);
    const between = noted('a between', store.appendEvent('a', 'delta', '{"text":" then"}', 'a', 60_000));
    assert.ok(await noted('b first', store.appendEvent('b', 'delta', '{"text":"first"}', 'a', 60_000)));
    assert.ok(
      await noted('b end', store.appendEvents('b', [{ event: 'done', data: '{}' }], 'a', 60_000, { release: true })),
    );
    assert.deepEqual([...settled], ['b first', 'b end'], "the text between waits; the other's first and end do not");
    assert.ok(await between);
    assert.deepEqual(
      (await store.readEvents('a', null, { waitMs: 0 })).map(event => event.event),
      ['citations', 'delta', 'delta'],
    );
  });

  it('sends the appends of many runs, after the first of each, together: Redis reads them at once', async () => {
    const store = await connected(undefined, 'together:');
    const admin = createClient({ url: redis.url });
    await admin.connect();
    after(() => Promise.all([store.close(), admin.quit()]));
    const ids = Array.from({ length: 20 }, (_, i) => `r${i}`);
    for (const id of ids) {
      await store.createRun(id, record(`key-${id}`), window);
      await store.appendEvent(id, 'delta', '{"text":"a"}', 'a', 60_000);
    }
    const reads = async () => Number(/total_reads_processed:(\d+)/.exec(await admin.info('stats'))![1]);
    const before = await reads();
    // As the deltas of 20 replies come: each in a turn of the event loop of its own.
    const appends: Promise<string | null>[] = [];
    for (const id of ids) {
      appends.push(store.appendEvent(id, 'delta', '{"text":"b"}', 'a', 60_000));
      await new Promise(resolve => setImmediate(resolve));
    }
    assert.ok((await Promise.all(appends)).every(Boolean), 'every append was made');
    // The INFO that counts is a read too. Sent one by one, the appends would be 20.
    const read = (await reads()) - before - 1;
    assert.ok(read <= 4, `Redis read the 20 appends in ${read} reads`);
    const other = await connected(undefined, 'together:');
    after(() => other.close());
    for (const id of ids) {
      const texts = (await other.readEvents(id, null, { waitMs: 0 })).map(event => event.data);
      assert.deepEqual(texts, ['{"text":"a"}', '{"text":"b"}']);
    }
  });

  it('sends a burst of commands in the next turn of its event loop, however many, while the loop is busy', async () => {
    const store = new RedisStore({ url: redis.url, prefix: 'burst:', commandTimeoutMs: 1000, onStatus: () => {} });
    after(() => store.close());
    await until(() => answers(store), 'the store to answer');
    const ids = Array.from({ length: 2000 }, (_, i) => `r${i}`);
    await Promise.all(ids.map(id => store.createRun(id, record(`key-${id}`), window)));
    // Each turn of the loop busy for 20 ms, as when two thousand visitors' messages and streams come at once.
    let turns = 0;
    let spinning = true;
    const spin = () => {
      turns++;
      const until = performance.now() + 20;
      while (performance.now() < until);
      if (spinning) setImmediate(spin);
    };
    setImmediate(spin);
    const text = JSON.stringify({ text: 'word '.repeat(200) });
    try {
      // Two megabytes of first deltas, sent at once: a hundred and more turns at a socket's default high-water mark,
      // and seconds that count toward the command timeout.
      const appended = await Promise.allSettled(ids.map(id => store.appendEvent(id, 'delta', text, 'a', 60_000)));
      const failed = appended.filter(result => result.status === 'rejected');
      assert.equal(failed.length, 0, `${failed.length} appends failed, the first: ${String(failed[0]?.reason)}`);
      assert.ok(turns <= 20, `the appends took ${turns} turns of the loop`);
    } finally {
      spinning = false;
    }
  });

  it('is unavailable while Redis is down, and serves again by itself when it is back', async () => {
    const seen: string[] = [];
    const store = await connected(status => void seen.push(status), 'outage:');
    // Another instance on the same Redis.
    const other = await connected(undefined, 'outage:');
    after(() => Promise.all([store.close(), other.close()]));
    await store.createRun('r', record(), window);
    await store.appendEvent('r', 'delta', '{"text":"kept?"}', 'a', 60_000);
    const watching = store.watchStop('r2', new AbortController().signal);
    await redis.kill();
    await assert.rejects(store.getRun('r'), StoreUnavailableError);
    await assert.rejects(store.hit('k', 1000), StoreUnavailableError);
    await assert.rejects(store.ping(), StoreUnavailableError);
    await assert.rejects(store.readEvents('r', null, { waitMs: 1000 }), StoreUnavailableError);
    await until(async () => seen.includes('unavailable'), 'the outage to be reported');
    await redis.start();
    await until(() => answers(store), 'the store to answer');
    await until(async () => seen.includes('ready'), 'the recovery to be reported');
    assert.equal(await store.getRun('r'), undefined, 'a Redis without persistence starts empty');
    assert.equal((await store.hit('k', 1000)).count, 1);
    await until(() => answers(other), 'the other store to reconnect');
    await other.requestStop('r2', 60_000);
    await watching;
    assert.deepEqual(seen, ['unavailable', 'ready']);
  });
});

/**
 * What a run costs Redis, counted on a Redis of its own (INFO commandstats counts the commands scripts run too), and
 * how its events and stops reach readers and producers on this instance and on another.
 */
describe('RedisStore, round trips', () => {
  let own: RedisServer;
  let admin: ReturnType<typeof createClient>;
  let prefixes = 0;
  before(async () => {
    own = await startRedis();
    admin = createClient({ url: own.url });
    await admin.connect();
  });
  after(async () => {
    await admin.quit();
    await own.stop();
  });

  /** Two instances of the backend on that Redis: `a` produces, `b` is another instance; `another` makes one more. */
  async function pair() {
    const prefix = `rt${++prefixes}:`;
    const make = async () => {
      const store = new RedisStore({ url: own.url, prefix, onStatus: () => {} });
      after(() => store.close());
      await until(() => answers(store), 'the store to answer');
      return store;
    };
    return { a: await make(), b: await make(), prefix, another: make };
  }

  /** The calls of each command since the last `reset()`, as Redis counts them. */
  async function calls(): Promise<Record<string, number>> {
    const info = await admin.info('commandstats');
    const counted: Record<string, number> = {};
    for (const [, name, n] of info.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm)) counted[name!] = Number(n);
    delete counted.info;
    delete counted['config|resetstat'];
    return counted;
  }
  const reset = () => admin.configResetStat();
  const events = (...names: string[]) => names.map((event, i) => ({ event, data: JSON.stringify({ i }) }));

  it('looks a new run up, counts its windows, takes its slot and creates it in one script', async () => {
    const { a } = await pair();
    await reset();
    const admission = {
      windows: [
        { key: 'message:user:anon_a', windowMs: 60_000, limit: 5 },
        { key: 'message:ip:203.0.113.7', windowMs: 60_000, limit: 5 },
      ],
      slot: { key: 'streams:anon_a', token: 't', limit: 2, ttlMs: 60_000 },
    };
    assert.equal(((await a.createAdmittedRun('r', record(), window, admission)) as CreatedRun).created, true);
    const counted = await calls();
    assert.equal(counted.evalsha, 1, 'one round trip');
    assert.equal(counted.incr, 2, 'both windows counted');
    assert.equal(counted.zadd, 2, 'the slot taken, the run listed in its conversation');
    await reset();
    assert.equal(((await a.createAdmittedRun('r', record(), window, admission)) as CreatedRun).created, false);
    assert.deepEqual(await calls(), { evalsha: 1, get: 1 }, 'a run found: nothing counted or taken');
  });

  it('appends a batch of events in one script, with one wake-up, which a follower on another instance reads in one go', async () => {
    const { a, b, prefix } = await pair();
    await a.createRun('r', record(), window);
    await reset();
    const following = b.readEvents('r', null, { waitMs: 10_000 });
    // The follower subscribes, then reads the stream once, to miss nothing appended meanwhile: both are waited for.
    await until(
      async () =>
        (await admin.pubSubNumSub(`${prefix}events:r`))[`${prefix}events:r`] === 1 && (await calls()).xrange === 1,
      'the follower to subscribe and read',
    );
    await reset();
    const ids = await a.appendEvents('r', events('delta', 'citations', 'done'), 'a', 60_000);
    const read = await following;
    assert.deepEqual(
      read.map(e => [e.id, e.event]),
      ids!.map((id, i) => [id, ['delta', 'citations', 'done'][i]]),
    );
    const counted = await calls();
    assert.equal(counted.evalsha, 1, 'one script for the batch');
    assert.equal(counted.xadd, 3);
    assert.equal(counted.publish, 1, 'one wake-up for the batch');
    assert.equal(counted.xrange, 1, 'the follower read the stream once');
  });

  it('tells a reader on the producer’s instance of its events without asking Redis', async () => {
    const { a } = await pair();
    await a.createRun('r', record(), window);
    const first = await a.appendEvents('r', events('delta'), 'a', 60_000);
    await reset();
    const waiting = a.readEvents('r', first![0]!, { waitMs: 10_000 });
    const ids = await a.appendEvents('r', events('delta', 'done'), 'a', 60_000);
    assert.deepEqual(
      (await waiting).map(e => e.id),
      ids,
    );
    assert.deepEqual(
      (await a.readEvents('r', null, { waitMs: 0 })).map(e => e.id),
      [...first!, ...ids!],
      'replayed from the start',
    );
    assert.equal((await a.lastEvent('r'))!.id, ids![1]);
    const counted = await calls();
    assert.equal(counted.evalsha, 1, 'the append, and nothing else');
    assert.equal(counted.xrange, undefined, 'the stream was not read');
    assert.equal(counted.xrevrange, undefined);
  });

  it('reads a run it produces back from its own memory, from any place, exactly as the stream holds it', async () => {
    const { a, b } = await pair();
    await a.createRun('r', record(), window);
    const appended = [
      { event: 'meta', data: '{"conversationId":"c"}' },
      ...Array.from({ length: 150 }, (_, i) => ({ event: 'delta', data: JSON.stringify({ text: `w${i} "q" \\ ` }) })),
      { event: 'delta', data: '{"text":"a","other":"b"}' },
      { event: 'citations', data: '{"citations":[]}' },
    ];
    const ids: string[] = [];
    for (let i = 0; i < appended.length; i += 10) {
      ids.push(...(await a.appendEvents('r', appended.slice(i, i + 10), 'a', 60_000))!);
    }
    await reset();
    const expected = appended.map((e, i) => ({ id: ids[i]!, ...e, attempt: 1 }));
    const read = (store: RedisStore, after: string | null) => store.readEvents('r', after, { waitMs: 0 });
    assert.deepEqual(await read(a, null), expected, 'from the start');
    assert.deepEqual(await read(a, ids[70]!), expected.slice(71), 'from the middle');
    assert.deepEqual(await read(a, ids.at(-1)!), [], 'at the end');
    assert.equal((await calls()).xrange, undefined, 'the stream was not read');
    assert.deepEqual(await read(b, ids[70]!), expected.slice(71), 'as another instance reads it from the stream');
  });

  it('reads what the stream holds on the producing instance too, after a restart, other appends and another lease', async () => {
    const { a, b, prefix, another } = await pair();
    // Reads the stream: it appends nothing.
    const reader = await another();
    await a.createRun('r', record(), window);
    let n = 0;
    const append = (store: RedisStore, token: string, count: number, release = false) =>
      store.appendEvents(
        'r',
        Array.from({ length: count }, () => ({ event: 'delta', data: JSON.stringify({ text: `w${++n} ` }) })),
        token,
        60_000,
        { release },
      );
    // Each read of `a`, which produces the run, against the same read of the stream by `reader`.
    const same = async (when: string) => {
      const ids = (await reader.readEvents('r', null, { waitMs: 0 })).map(event => event.id);
      for (const after of [null, '1-0', '1-5', '2-0', '2-1', '3-0', '4-0', ...ids]) {
        const read = (store: RedisStore) => store.readEvents('r', after, { waitMs: 0 });
        assert.deepEqual(await read(a), await read(reader), `after ${after}, ${when}`);
      }
      assert.deepEqual(await a.lastEvent('r'), await reader.lastEvent('r'), `the last event, ${when}`);
    };
    await append(a, 'a', 12);
    assert.equal(await a.restartRun('r', { ...record(), attempt: 2 }, 'a', 60_000), true);
    await append(a, 'a', 40);
    await same('restarted');
    // Another instance appends under a lease of its own, then `a` under its own again: a gap in what `a` appended.
    await admin.set(`${prefix}lease:r`, 'b');
    await append(b, 'b', 3);
    await admin.set(`${prefix}lease:r`, 'a');
    await append(a, 'a', 5);
    await same('after a gap');
    // A lease `a` holds under another token, then given up with the last events.
    await admin.set(`${prefix}lease:r`, 'c');
    await append(a, 'c', 2);
    await same('under another token');
    // Another instance begins a new attempt under that lease, and appends to it first.
    assert.equal(await b.restartRun('r', { ...record(), attempt: 3 }, 'c', 60_000), true);
    await append(b, 'c', 2);
    await append(a, 'c', 2);
    await same('in an attempt another instance began');
    await append(a, 'c', 1, true);
    await same('released');
  });

  it('follows a run of another instance on one subscription, however many waits it takes', async () => {
    const { a, b } = await pair();
    await a.createRun('r', record(), window);
    await reset();
    let cursor: string | null = null;
    for (let i = 0; i < 5; i++) {
      const reading = b.readEvents('r', cursor, { waitMs: 10_000 });
      await new Promise(resolve => setTimeout(resolve, 20));
      const [id] = (await a.appendEvents('r', events('delta'), 'a', 60_000))!;
      const read = await reading;
      assert.deepEqual(
        read.map(e => e.id),
        [id],
      );
      cursor = id!;
    }
    assert.equal((await calls()).subscribe, 1);
  });

  it('gives the lease up with the last events when asked, and then releases it without a round trip', async () => {
    const { a, b } = await pair();
    await a.createRun('r', record(), window);
    await a.appendEvents('r', events('done'), 'a', 60_000, { release: true });
    assert.equal(await b.leaseHeld('r'), false);
    await reset();
    await a.releaseLease('r', 'a');
    assert.deepEqual(await calls(), {});
    assert.equal(await b.acquireLease('r', 'b', 60_000), true, 'another may take it at once');
  });

  it('knows a run it produces is not stopped without asking, and hears of a stop asked for on another instance', async () => {
    const { a, b } = await pair();
    await a.createRun('r', record(), window);
    const watching = a.watchStop('r', new AbortController().signal);
    await reset();
    assert.equal(await a.stopRequested('r'), false);
    assert.deepEqual(await calls(), {}, 'no command');
    await b.requestStop('r', 60_000);
    await watching;
    assert.equal(await a.stopRequested('r'), true);
  });

  it('knows a run created after its stop is stopped, and stops its producer at once', async () => {
    const { a, b } = await pair();
    await b.requestStop('r', 60_000);
    await a.createRun('r', record(), window);
    await reset();
    assert.equal(await a.stopRequested('r'), true);
    await a.watchStop('r', new AbortController().signal);
    assert.deepEqual(await calls(), {}, 'no command');
  });

  it('finds a stop whose message was lost, by its look at the stop keys every few seconds', async () => {
    const { a, prefix } = await pair();
    await a.createRun('r', record(), window);
    const watching = a.watchStop('r', new AbortController().signal).then(() => 'stopped');
    // The key without the message: as when the message was published while the subscriber reconnected.
    await admin.set(`${prefix}stop:r`, '1', { PX: 60_000 });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise(resolve => (timer = setTimeout(resolve, 8000, 'late')));
    assert.equal(await Promise.race([watching, late]).finally(() => clearTimeout(timer)), 'stopped');
  });

  it('reads from Redis once its lease went to another instance: a refused append, or a wait that timed out', async () => {
    const { a, b } = await pair();
    await a.createRun('r', record(), { ...window, lease: { token: 'a', ttlMs: 200 } });
    const [first] = (await a.appendEvents('r', events('delta'), 'a', 60_000))!;
    // The lease expires (this instance stalled), another instance takes it and ends the run.
    await until(async () => !(await b.leaseHeld('r')), 'the lease to expire');
    assert.equal(await b.acquireLease('r', 'b', 60_000), true);
    const waiting = a.readEvents('r', first!, { waitMs: 300 });
    const [ended] = (await b.appendEvents('r', events('error'), 'b', 60_000))!;
    assert.deepEqual(
      (await waiting).map(e => e.id),
      [ended],
      'read from the stream after the wait',
    );
    assert.equal(await a.appendEvents('r', events('delta'), 'a', 60_000), null, 'fenced');
    assert.deepEqual(
      (await a.readEvents('r', null, { waitMs: 0 })).map(e => e.id),
      [first, ended],
    );
  });
});
