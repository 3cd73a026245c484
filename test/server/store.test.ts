import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { MemoryStore, parseEventId } from '../../src/server/store.js';
import type { RunRecord } from '../../src/server/store.js';

/** A store whose clock the test moves. */
function clocked() {
  let now = 1_000_000;
  const store = new MemoryStore({ now: () => now });
  return { store, advance: (ms: number) => (now += ms) };
}

const record = (key = 'key-00000001', conversationId = 'c1'): RunRecord => ({
  key,
  conversationId,
  owner: 'anon_a',
  message: 'Hello',
  createdAt: 1,
  attempt: 1,
  attemptedAt: 1,
});
/** Created with its producer's lease, held by `a`. */
const window = { ttlMs: 60_000, perConversation: 3, lease: { token: 'a', ttlMs: 60_000 } };

describe('MemoryStore', () => {
  // The store's timers never hold a process open; this one holds the test's open while it waits.
  const keepAlive = setInterval(() => {}, 1000);
  after(() => clearInterval(keepAlive));

  it('counts hits in fixed windows', async () => {
    const { store, advance } = clocked();
    assert.deepEqual(await store.hit('k', 1000), { count: 1, resetMs: 1000 });
    advance(400);
    assert.deepEqual(await store.hit('k', 1000), { count: 2, resetMs: 600 });
    advance(600);
    assert.deepEqual(await store.hit('k', 1000), { count: 1, resetMs: 1000 });
  });

  it('hands out slots up to the limit and takes them back', async () => {
    const store = new MemoryStore();
    assert.equal(await store.acquire('s', 2), true);
    assert.equal(await store.acquire('s', 2), true);
    assert.equal(await store.acquire('s', 2), false);
    await store.release('s');
    assert.equal(await store.acquire('s', 2), true);
  });

  it('creates a run once, lists the newest per conversation, and forgets it after its window', async () => {
    const { store, advance } = clocked();
    const first = await store.createRun('r1', record('k1'), window);
    assert.equal(first.created, true);
    const again = await store.createRun('r1', { ...record('k1'), message: 'Other' }, window);
    assert.deepEqual(again, { record: record('k1'), created: false }, 'the first record stands');
    for (const id of ['r2', 'r3', 'r4']) await store.createRun(id, record(id), window);
    await store.createRun('x1', record('x1', 'c2'), window);
    assert.deepEqual(await store.listRuns('c1'), ['r2', 'r3', 'r4'], 'the newest three');
    assert.deepEqual(await store.listRuns('c2'), ['x1']);
    advance(60_001);
    assert.equal(await store.getRun('r1'), undefined);
    assert.deepEqual(await store.listRuns('c1'), []);
  });

  it('appends only for the lease holder, with increasing ids, and reads after an id', async () => {
    const store = new MemoryStore();
    await store.createRun('r', record(), window);
    assert.equal(await store.appendEvent('r', 'delta', '{}', 'nobody', 60_000), null, 'no lease, no append');
    assert.equal(await store.acquireLease('r', 'b', 1000), false, 'the creator holds the lease');
    const ids = [];
    for (const text of ['one', 'two', 'three']) {
      ids.push(await store.appendEvent('r', 'delta', JSON.stringify({ text }), 'a', 60_000));
    }
    assert.equal(await store.appendEvent('r', 'delta', '{}', 'b', 60_000), null, 'fenced');
    assert.deepEqual(ids, ['1-1', '1-2', '1-3']);
    const after = await store.readEvents('r', ids[0]!, { waitMs: 0 });
    assert.deepEqual(
      after.map(e => [e.id, e.event, e.data, e.attempt]),
      [
        ['1-2', 'delta', '{"text":"two"}', 1],
        ['1-3', 'delta', '{"text":"three"}', 1],
      ],
    );
    assert.equal((await store.readEvents('r', null, { waitMs: 0 })).length, 3);
    assert.equal((await store.lastEvent('r'))!.id, '1-3');
  });

  it('wakes a waiting reader at the next event, and gives up at its timeout or abort', async () => {
    const store = new MemoryStore();
    await store.createRun('r', record(), window);
    const waiting = store.readEvents('r', null, { waitMs: 5000 });
    await store.appendEvent('r', 'delta', '{"text":"hi"}', 'a', 60_000);
    assert.equal((await waiting).length, 1);
    const started = performance.now();
    assert.deepEqual(await store.readEvents('r', '1-1', { waitMs: 30 }), []);
    assert.ok(performance.now() - started >= 25, 'waited for its timeout');
    const controller = new AbortController();
    const aborted = store.readEvents('r', '1-1', { waitMs: 60_000, signal: controller.signal });
    controller.abort();
    assert.deepEqual(await aborted, []);
  });

  it('starts a new attempt with an empty log whose ids follow the old ones', async () => {
    const store = new MemoryStore();
    await store.createRun('r', record(), window);
    await store.appendEvent('r', 'delta', '{}', 'a', 60_000);
    await store.appendEvent('r', 'error', '{}', 'a', 60_000);
    assert.equal(await store.restartRun('r', { ...record(), attempt: 2 }, 'b', 60_000), false, 'only for the holder');
    assert.equal(await store.restartRun('r', { ...record(), attempt: 2 }, 'a', 60_000), true);
    assert.equal((await store.getRun('r'))!.attempt, 2);
    assert.deepEqual(await store.readEvents('r', null, { waitMs: 0 }), []);
    const id = (await store.appendEvent('r', 'delta', '{}', 'a', 60_000))!;
    assert.equal(id, '2-1');
    const [a, b] = [parseEventId('1-2')!, parseEventId(id)!];
    assert.ok(b[0] > a[0], 'later than every id of the first attempt');
    assert.deepEqual(
      (await store.readEvents('r', '1-2', { waitMs: 0 })).map(e => e.id),
      ['2-1'],
      'a reader of the old attempt gets the new one from its start',
    );
  });

  it('lets a lease expire unless renewed, and releases it only for its holder', async () => {
    const { store, advance } = clocked();
    await store.acquireLease('r', 'a', 1000);
    advance(800);
    assert.equal(await store.renewLease('r', 'a', 1000), true);
    assert.equal(await store.renewLease('r', 'b', 1000), false);
    advance(800);
    assert.equal(await store.leaseHeld('r'), true, 'renewed');
    await store.releaseLease('r', 'b');
    assert.equal(await store.leaseHeld('r'), true, 'not released by another');
    advance(1000);
    assert.equal(await store.leaseHeld('r'), false, 'expired');
    assert.equal(await store.acquireLease('r', 'b', 1000), true);
    await store.releaseLease('r', 'b');
    assert.equal(await store.leaseHeld('r'), false);
  });

  it('tells a watcher of a stop, at once when it was asked for before, until it is cleared', async () => {
    const store = new MemoryStore();
    const controller = new AbortController();
    let stopped = false;
    const watching = store.watchStop('r', controller.signal).then(() => (stopped = true));
    await new Promise(resolve => setTimeout(resolve, 10));
    assert.equal(stopped, false);
    await store.requestStop('r', 60_000);
    await watching;
    assert.equal(stopped, true);
    await store.watchStop('r', new AbortController().signal);
    await store.clearStop('r');
    const again = new AbortController();
    const pending = store.watchStop('r', again.signal);
    again.abort(new Error('gone'));
    await assert.rejects(pending, /gone/);
  });

  it('keeps its size bounded', async () => {
    const store = new MemoryStore({ maxEntries: 100 });
    for (let i = 0; i < 1000; i++) await store.hit(`k${i}`, 60_000);
    for (let i = 0; i < 1000; i++) await store.createRun(`r${i}`, record(`k${i}`, `c${i}`), window);
    assert.equal(await store.getRun('r0'), undefined, 'the oldest runs went first');
    assert.ok(await store.getRun('r999'));
  });
});
