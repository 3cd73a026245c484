/**
 * What every BackendStore must do, run against each store: MemoryStore with a clock the test moves, RedisStore on a
 * real Redis with the real clock (so its times are short, and `advance` waits them out).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { appendAll, parseEventId } from '../../src/server/store.js';
import type { BackendStore, RunRecord } from '../../src/server/store.js';

export interface StoreUnderTest {
  store: BackendStore;
  /** Moves time on by `ms`. */
  advance(ms: number): Promise<void>;
  /** The same state as another instance of the backend sees it (for a shared store, its own connections). */
  twin(): Promise<BackendStore>;
}

/** What `promise` settled with within `ms`, or 'late': for waits that a notification must end, not a timeout. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'late'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>(resolve => (timer = setTimeout(resolve, ms, 'late')));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

export const record = (key = 'key-00000001', conversationId = 'c1'): RunRecord => ({
  key,
  conversationId,
  owner: 'anon_a',
  message: 'Hello',
  createdAt: 1,
  attempt: 1,
  attemptedAt: 1,
});

/** Created with its producer's lease, held by `a`. */
export const window = { ttlMs: 60_000, perConversation: 3, lease: { token: 'a', ttlMs: 60_000 } };

/**
 * The suite. `make` gives a fresh, empty store for each test; `unit` is the time unit of its expiry tests, long
 * enough for a real store to do the steps between two expiries on a busy machine.
 */
export function storeSuite(name: string, make: () => Promise<StoreUnderTest>, unit: number) {
  describe(name, () => {
    // The stores' timers never hold a process open; this one holds the test's open while it waits.
    const keepAlive = setInterval(() => {}, 1000);
    const made: BackendStore[] = [];
    after(async () => {
      clearInterval(keepAlive);
      await Promise.all(made.map(store => store.close()));
    });
    const fresh = async () => {
      const one = await make();
      made.push(one.store);
      const twin = async () => {
        const other = await one.twin();
        if (other !== one.store) made.push(other);
        return other;
      };
      return { ...one, twin };
    };

    it('counts hits in fixed windows', async () => {
      const { store, advance } = await fresh();
      const first = await store.hit('k', 10 * unit);
      assert.equal(first.count, 1);
      assert.ok(first.resetMs > 9 * unit && first.resetMs <= 10 * unit, `resets in a window: ${first.resetMs}`);
      await advance(4 * unit);
      const second = await store.hit('k', 10 * unit);
      assert.equal(second.count, 2);
      assert.ok(second.resetMs <= 6 * unit, `the same window: ${second.resetMs}`);
      await advance(7 * unit);
      assert.equal((await store.hit('k', 10 * unit)).count, 1, 'a new window');
    });

    it('hands out slots up to the limit, takes them back, and lets an abandoned one expire', async () => {
      const { store, advance } = await fresh();
      assert.equal(await store.acquireSlot('s', 'a', 2, 10 * unit), true);
      assert.equal(await store.acquireSlot('s', 'b', 2, 10 * unit), true);
      assert.equal(await store.acquireSlot('s', 'c', 2, 10 * unit), false, 'all taken');
      await store.releaseSlot('s', 'a');
      assert.equal(await store.acquireSlot('s', 'c', 2, 10 * unit), true, 'given back');
      await advance(6 * unit);
      assert.equal(await store.renewSlot('s', 'c', 10 * unit), true, 'renewed by its holder');
      assert.equal(await store.renewSlot('s', 'x', 10 * unit), false, 'not held by x');
      await advance(6 * unit);
      assert.equal(await store.acquireSlot('s', 'd', 2, 10 * unit), true, "b's slot expired: its holder vanished");
      assert.equal(await store.acquireSlot('s', 'e', 2, 10 * unit), false, 'c renewed its slot');
    });

    it('creates a run once, lists the newest per conversation, and forgets it after its window', async () => {
      const { store, advance } = await fresh();
      const short = { ...window, ttlMs: 10 * unit };
      const first = await store.createRun('r1', record('k1'), short);
      assert.equal(first.created, true);
      const again = await store.createRun('r1', { ...record('k1'), message: 'Other' }, short);
      assert.deepEqual(again, { record: record('k1'), created: false }, 'the first record stands');
      for (const id of ['r2', 'r3', 'r4']) await store.createRun(id, record(id), short);
      await store.createRun('x1', record('x1', 'c2'), short);
      assert.deepEqual(await store.listRuns('c1'), ['r2', 'r3', 'r4'], 'the newest three');
      assert.deepEqual(await store.listRuns('c2'), ['x1']);
      await advance(11 * unit);
      assert.equal(await store.getRun('r1'), undefined);
      assert.deepEqual(await store.listRuns('c1'), []);
    });

    it('lists the runs of a conversation among its newest that have not expired, each once', async () => {
      const { store, advance } = await fresh();
      const short = { ...window, ttlMs: 10 * unit };
      await store.createRun('r1', record('k1'), short);
      await advance(6 * unit);
      await store.createRun('r2', record('k2'), short);
      await advance(5 * unit);
      await store.createRun('r3', record('k3'), short);
      assert.deepEqual(await store.listRuns('c1'), ['r2', 'r3'], 'the expired one is not listed');
      assert.equal((await store.createRun('r3', record('k3'), short)).created, false);
      await store.createRun('r4', record('k4'), short);
      assert.deepEqual(await store.listRuns('c1'), ['r2', 'r3', 'r4'], 'each once, the newest three');
    });

    it("admits a new run as it creates it: counts its windows' hits, takes its slot, or refuses it", async () => {
      const { store } = await fresh();
      const admitted = store.createAdmittedRun!.bind(store);
      const admission = (token: string, ipLimit = 5) => ({
        windows: [
          { key: 'user', windowMs: 10 * unit, limit: 2 },
          { key: 'ip', windowMs: 10 * unit, limit: ipLimit },
        ],
        slot: { key: 's', token, limit: 1, ttlMs: 10 * unit },
      });
      assert.deepEqual(await admitted('r1', record('k1'), window, admission('t1')), {
        record: record('k1'),
        created: true,
      });
      assert.equal(await store.acquireSlot('s', 'other', 1, 10 * unit), false, 'the slot is taken');
      assert.deepEqual(
        await admitted('r1', { ...record('k1'), message: 'Other' }, window, admission('t2')),
        { record: record('k1'), created: false },
        'a run that exists is answered, nothing counted or taken',
      );
      assert.deepEqual(await admitted('r2', record('k2'), window, admission('t3')), { refused: { slot: true } });
      assert.equal(await store.getRun('r2'), undefined, 'not created');
      await store.releaseSlot('s', 't1');
      const refused = await admitted('r3', record('k3'), window, admission('t4'));
      assert.ok('refused' in refused && 'window' in refused.refused, 'past the first window');
      assert.equal(refused.refused.window, 0);
      assert.ok(refused.refused.resetMs > 0 && refused.refused.resetMs <= 10 * unit, `${refused.refused.resetMs}`);
      assert.equal(await store.getRun('r3'), undefined, 'not created');
      assert.equal(await store.acquireSlot('s', 'other', 1, 10 * unit), true, 'no slot was taken for it');
      assert.equal((await store.hit('user', 10 * unit)).count, 4, 'three runs counted, the one found not');
      assert.equal((await store.hit('ip', 10 * unit)).count, 4);
      await store.releaseSlot('s', 'other');
      const second = await admitted('r4', record('k4'), window, {
        ...admission('t5', 4),
        windows: [{ key: 'fresh', windowMs: 10 * unit, limit: 2 }, admission('t5', 4).windows[1]!],
      });
      assert.ok('refused' in second && 'window' in second.refused && second.refused.window === 1, 'past the second');
      assert.deepEqual(await store.listRuns('c1'), ['r1']);
    });

    it('appends only for the lease holder, with increasing ids, and reads after an id', async () => {
      const { store } = await fresh();
      await store.createRun('r', record(), window);
      assert.equal(await store.appendEvent('r', 'delta', '{}', 'nobody', 60_000), null, 'no lease, no append');
      assert.equal(await store.acquireLease('r', 'b', 1000), false, 'the creator holds the lease');
      const ids: string[] = [];
      for (const text of ['one', 'two', 'three']) {
        ids.push((await store.appendEvent('r', 'delta', JSON.stringify({ text }), 'a', 60_000))!);
      }
      assert.equal(await store.appendEvent('r', 'delta', '{}', 'b', 60_000), null, 'fenced');
      const numbers = ids.map(id => parseEventId(id));
      assert.ok(
        numbers.every((n, i) => n && n[0] === 1 && (i === 0 || n[1] > numbers[i - 1]![1])),
        `ids of attempt 1, increasing: ${ids.join()}`,
      );
      const later = await store.readEvents('r', ids[0]!, { waitMs: 0 });
      assert.deepEqual(
        later.map(e => [e.id, e.event, e.data, e.attempt]),
        [
          [ids[1], 'delta', '{"text":"two"}', 1],
          [ids[2], 'delta', '{"text":"three"}', 1],
        ],
      );
      assert.equal((await store.readEvents('r', null, { waitMs: 0 })).length, 3);
      assert.equal((await store.lastEvent('r'))!.id, ids[2]);
      assert.equal(await store.lastEvent('unknown'), undefined);
      assert.deepEqual(await store.readEvents('unknown', null, { waitMs: 0 }), []);
    });

    it('appends a batch in order, in one step where the store can, only for the lease holder', async () => {
      const { store } = await fresh();
      await store.createRun('r', record(), window);
      const batch = ['delta', 'citations', 'done'].map(event => ({ event, data: `{"${event}":1}` }));
      assert.equal(await appendAll(store, 'r', batch, 'b', 60_000), null, 'fenced');
      const ids = (await appendAll(store, 'r', batch, 'a', 60_000))!;
      assert.deepEqual(
        (await store.readEvents('r', null, { waitMs: 0 })).map(e => [e.id, e.event, e.data]),
        batch.map(({ event, data }, i) => [ids[i], event, data]),
      );
    });

    it('wakes a waiting reader at an event appended by another instance, and gives up at its timeout or abort', async () => {
      const { store, twin } = await fresh();
      const other = await twin();
      // The other instance produces the run: it holds the lease.
      await other.createRun('r', record(), window);
      const waiting = store.readEvents('r', null, { waitMs: 60_000 });
      await store.readEvents('r', null, { waitMs: 0 });
      const id = await other.appendEvent('r', 'delta', '{"text":"hi"}', 'a', 60_000);
      const woken = await within(waiting, 10_000);
      assert.ok(woken !== 'late' && woken.length === 1, 'woken by the append, long before its timeout');
      const started = performance.now();
      assert.deepEqual(await store.readEvents('r', id, { waitMs: 30 }), []);
      assert.ok(performance.now() - started >= 25, 'waited for its timeout');
      const controller = new AbortController();
      const aborted = store.readEvents('r', id, { waitMs: 60_000, signal: controller.signal });
      controller.abort();
      assert.deepEqual(await within(aborted, 10_000), [], 'ended by its abort');
    });

    it('starts a new attempt with an empty log whose ids follow the old ones', async () => {
      const { store, twin } = await fresh();
      const other = await twin();
      // The other instance produces the run and restarts it; this one reads.
      await other.createRun('r', record(), window);
      await other.appendEvent('r', 'delta', '{}', 'a', 60_000);
      const last = (await other.appendEvent('r', 'error', '{}', 'a', 60_000))!;
      const waiting = store.readEvents('r', last, { waitMs: 60_000 });
      assert.equal(await other.restartRun('r', { ...record(), attempt: 2 }, 'b', 60_000), false, 'only for the holder');
      assert.equal(await other.restartRun('r', { ...record(), attempt: 2 }, 'a', 60_000), true);
      assert.equal((await store.getRun('r'))!.attempt, 2);
      assert.deepEqual(await store.readEvents('r', null, { waitMs: 0 }), []);
      const id = (await other.appendEvent('r', 'delta', '{}', 'a', 60_000))!;
      const [a, b] = [parseEventId(last)!, parseEventId(id)!];
      assert.ok(b[0] === 2 && b[0] > a[0], `later than every id of the first attempt: ${id}`);
      assert.deepEqual(
        (await store.readEvents('r', last, { waitMs: 0 })).map(e => [e.id, e.attempt]),
        [[id, 2]],
        'a reader of the old attempt gets the new one from its start',
      );
      let timer: ReturnType<typeof setTimeout> | undefined;
      const asleep = new Promise(resolve => (timer = setTimeout(resolve, 10_000, 'asleep')));
      const woken = await Promise.race([waiting, asleep]).finally(() => clearTimeout(timer));
      assert.ok(Array.isArray(woken), 'a reader waiting on the old attempt wakes at the restart');
    });

    it('lets a lease expire unless renewed, and releases it only for its holder', async () => {
      const { store, advance } = await fresh();
      await store.acquireLease('r', 'a', 10 * unit);
      await advance(6 * unit);
      assert.equal(await store.renewLease('r', 'a', 10 * unit), true);
      assert.equal(await store.renewLease('r', 'b', 10 * unit), false);
      await advance(6 * unit);
      assert.equal(await store.leaseHeld('r'), true, 'renewed');
      await store.releaseLease('r', 'b');
      assert.equal(await store.leaseHeld('r'), true, 'not released by another');
      await advance(11 * unit);
      assert.equal(await store.leaseHeld('r'), false, 'expired');
      assert.equal(await store.acquireLease('r', 'b', 10 * unit), true);
      await store.releaseLease('r', 'b');
      assert.equal(await store.leaseHeld('r'), false);
    });

    it('tells a watcher of a stop asked for on another instance, at once when it was asked before, until cleared', async () => {
      const { store, twin } = await fresh();
      const other = await twin();
      const controller = new AbortController();
      const watching = store.watchStop('r', controller.signal).then(() => 'stopped');
      assert.equal(await store.stopRequested('r'), false);
      assert.equal(await within(watching, 50), 'late', 'no stop yet');
      await other.requestStop('r', 60_000);
      // Sooner than a shared store's look at the stop every 5 s: the notification woke it.
      assert.equal(await within(watching, 3000), 'stopped');
      assert.equal(await store.stopRequested('r'), true);
      await store.watchStop('r', new AbortController().signal);
      await store.clearStop('r');
      assert.equal(await store.stopRequested('r'), false);
      const again = new AbortController();
      const pending = store.watchStop('r', again.signal);
      again.abort(new Error('gone'));
      await assert.rejects(pending, /gone/);
    });

    it('answers a ping', async () => {
      const { store } = await fresh();
      await store.ping();
    });
  });
}
