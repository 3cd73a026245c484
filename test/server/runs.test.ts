import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { StreamEvents } from '../../src/protocol.js';
import { HttpError } from '../../src/server/errors.js';
import { runId } from '../../src/server/run-log.js';
import type { LogEvents } from '../../src/server/run-log.js';
import { Runs } from '../../src/server/runs.js';
import type { RunLimits } from '../../src/server/runs.js';
import { MemoryStore } from '../../src/server/store.js';
import type { StreamChunk } from '../../src/service/types.js';
import { scriptedService as service } from '../support/upstream.js';
import { until } from '../support/until.js';

const limits: RunLimits = {
  replayWindowMs: 60_000,
  eventsPerRun: 4000,
  bytesPerRun: 256 * 1024,
  runsPerConversation: 50,
};

function setup(options: { limits?: Partial<RunLimits>; leaseMs?: number } = {}) {
  const store = new MemoryStore();
  const upstream = service();
  const runs = new Runs({
    store,
    limits: { ...limits, ...options.limits },
    open: upstream.open,
    history: upstream.history,
    leaseMs: options.leaseMs ?? 3000,
  });
  let slots = 0;
  const admit = async () => {
    slots++;
    return { renew: async () => true, release: async () => void slots-- };
  };
  const ref = (key = crypto.randomUUID()) => ({ owner: 'anon_a', conversationId: 'c1', key });
  const read = async (key: string, after: string | null = null) => {
    const record = (await store.getRun(runId({ conversationId: 'c1', key })))!;
    const list = [];
    for await (const event of runs.follow(runId(record), record.attempt, after, new AbortController().signal)) {
      list.push({ id: event.id, event: event.event, data: JSON.parse(event.data) as unknown });
    }
    return list;
  };
  return { store, upstream, runs, admit, ref, read, slots: () => slots };
}

const done = (messageId = 'm1'): StreamChunk => ({ type: 'done', messageId, runId: 'r1', finishReason: 'stop' });

describe('Runs', () => {
  // The store's timers never hold a process open; this one holds the test's open while it waits.
  const keepAlive = setInterval(() => {}, 1000);
  after(() => clearInterval(keepAlive));

  it('produces a reply into the log, with normalized citations, and frees its slot and lease at the end', async () => {
    const { runs, upstream, admit, ref, read, slots, store } = setup();
    const r = ref();
    const { record, accepted } = await runs.send(r, 'Hello', admit);
    await accepted;
    assert.equal(record.attempt, 1);
    upstream.calls[0]!.push(
      { type: 'delta', text: 'Hi ' },
      { type: 'delta', text: 'there [1]' },
      { type: 'citations', citations: [null, { sourceName: { x: 1 }, partitions: 'oops' }] as never },
      done(),
    );
    const list = await read(r.key);
    assert.deepEqual(
      list.map(e => e.event),
      ['delta', 'citations', 'done'],
      'the text that came together is one event',
    );
    assert.deepEqual(list[0]!.data, { text: 'Hi there [1]' });
    assert.deepEqual(list[1]!.data, { citations: [{}, {}] }, 'what does not fit is dropped');
    await until(() => slots() === 0, 'the slot is given back');
    assert.equal(await store.leaseHeld(runId(r)), false);
    const [view] = await runs.views('c1', 'anon_a');
    assert.equal(view!.status, 'done');
    assert.equal(view!.content, 'Hi there [1]');
    assert.equal(view!.messageId, 'm1');
    assert.equal(view!.lastEventId, list.at(-1)!.id);
    assert.deepEqual(await runs.views('c1', 'anon_b'), [], 'nobody else sees it');
  });

  it('attaches a second send of the same key: one call to the service, both readers see every event', async () => {
    const { runs, upstream, admit, ref, read } = setup();
    const r = ref();
    const [a, b] = await Promise.all([runs.send(r, 'Hello', admit), runs.send(r, 'Hello', admit)]);
    await Promise.all([a.accepted, b.accepted]);
    const readers = [read(r.key), read(r.key)];
    upstream.calls[0]!.push({ type: 'delta', text: 'Hi' }, done());
    const [first, second] = await Promise.all(readers);
    assert.deepEqual(first, second);
    assert.equal(upstream.calls.length, 1);
    await assert.rejects(runs.send(r, 'Another message', admit), (e: HttpError) => e.code === 'duplicate_request');
    await assert.rejects(
      runs.send({ ...r, owner: 'anon_b' }, 'Hello', admit),
      (e: HttpError) => e.status === 404,
      'another visitor cannot reach it',
    );
  });

  it("admits a new run in the store's step that creates it, and a run found without admitting it", async () => {
    /** A memory store that notes which of its steps a send takes. */
    class Noting extends MemoryStore {
      readonly steps: string[] = [];
      override async getRun(id: string) {
        this.steps.push('getRun');
        return super.getRun(id);
      }
      override async createRun(...args: Parameters<MemoryStore['createRun']>) {
        this.steps.push('createRun');
        return super.createRun(...args);
      }
      override async createAdmittedRun(...args: Parameters<MemoryStore['createAdmittedRun']>) {
        this.steps.push('createAdmittedRun');
        return super.createAdmittedRun(...args);
      }
    }
    const store = new Noting();
    const upstream = service();
    const runs = new Runs({ store, limits, open: upstream.open, history: upstream.history, leaseMs: 3000 });
    const granted: string[] = [];
    const admit = (perMinute: number) =>
      Object.assign(async () => assert.fail('admitted apart from the creation'), {
        plan: () => {
          const token = crypto.randomUUID();
          return {
            admission: {
              windows: [{ key: 'user', windowMs: 60_000, limit: perMinute }],
              slot: { key: 'slots', token, limit: 5, ttlMs: 60_000 },
            },
            granted: () => {
              granted.push(token);
              return { renew: async () => {}, release: () => store.releaseSlot('slots', token) };
            },
            refusal: () => new HttpError(429, 'rate_limited', 'Refused.'),
          };
        },
      });
    const r = { owner: 'anon_a', conversationId: 'c1', key: 'key-00000001' };
    const first = await runs.send(r, 'Hello', admit(1));
    await first.accepted;
    assert.deepEqual(store.steps, ['createAdmittedRun'], 'one step of the store: nothing looked up first');
    assert.equal(granted.length, 1);
    const again = await runs.send(r, 'Hello', admit(1));
    assert.deepEqual(again.record, first.record, 'the run found');
    assert.equal(granted.length, 1, 'not admitted again');
    await assert.rejects(runs.send(r, 'Another message', admit(1)), (e: HttpError) => e.code === 'duplicate_request');
    await assert.rejects(runs.send({ ...r, owner: 'anon_b' }, 'Hello', admit(1)), (e: HttpError) => e.status === 404);
    await assert.rejects(
      runs.send({ ...r, key: 'key-00000002' }, 'Hello', admit(1)),
      (e: HttpError) => e.status === 429,
      "refused as the plan says: the user's window holds one message, and the run found was not counted",
    );
    assert.deepEqual(await store.listRuns('c1'), [runId(r)], 'the refused run was not created');
    assert.equal(upstream.calls.length, 1, 'the service was asked once');
    upstream.calls[0]!.push({ type: 'delta', text: 'Hi' }, done());
    await until(async () => await store.acquireSlot('slots', 'probe', 1, 60_000), 'its slot to be given back');
    assert.deepEqual(
      store.steps.filter(step => step !== 'createAdmittedRun'),
      [],
      'never looked up apart',
    );
  });

  it('follows live from after an id', async () => {
    const { runs, upstream, admit, ref, read, store } = setup();
    const r = ref();
    await runs.send(r, 'Hello', admit).then(started => started.accepted);
    upstream.calls[0]!.push({ type: 'delta', text: 'one' });
    await store.readEvents(runId(r), null, { waitMs: 1000 });
    const reading = read(r.key, '1-1');
    upstream.calls[0]!.push({ type: 'delta', text: 'two' }, done());
    assert.deepEqual(
      (await reading).map(e => e.data),
      [{ text: 'two' }, { messageId: 'm1', runId: 'r1', finishReason: 'stop', usage: null }],
    );
  });

  it('appends the text of one read from the service as one event, and text that came apart as events apart', async () => {
    const { runs, upstream, admit, ref, read, store } = setup();
    const r = ref();
    await runs.send(r, 'Hello', admit).then(started => started.accepted);
    upstream.calls[0]!.push({ type: 'delta', text: 'one ' }, { type: 'delta', text: 'two ' });
    const first = await store.readEvents(runId(r), null, { waitMs: 1000 });
    assert.deepEqual(
      first.map(e => JSON.parse(e.data) as unknown),
      [{ text: 'one two ' }],
      'appended once the read is over, as one event',
    );
    upstream.calls[0]!.push({ type: 'delta', text: 'three' });
    await store.readEvents(runId(r), first[0]!.id, { waitMs: 1000 });
    upstream.calls[0]!.push(done());
    assert.deepEqual(
      (await read(r.key)).map(e => e.data),
      [{ text: 'one two ' }, { text: 'three' }, { messageId: 'm1', runId: 'r1', finishReason: 'stop', usage: null }],
    );
  });

  it('appends the text it holds before a run ends interrupted: a reader resuming anywhere gets all of it', async () => {
    const { runs, upstream, admit, ref, read, store } = setup();
    const r = ref();
    await runs.send(r, 'Hello', admit).then(started => started.accepted);
    upstream.calls[0]!.push({ type: 'delta', text: 'one ' });
    const [first] = await store.readEvents(runId(r), null, { waitMs: 1000 });
    // Closed while the next text is still waiting for the end of its read.
    upstream.calls[0]!.push({ type: 'delta', text: 'two ' }, { type: 'delta', text: 'three' });
    runs.close();
    const resumed = await read(r.key, first!.id);
    assert.deepEqual(
      resumed.map(e => e.event),
      ['delta', 'error'],
    );
    assert.deepEqual(resumed[0]!.data, { text: 'two three' }, 'the text held is in the log before the end');
    const [view] = await runs.views('c1', 'anon_a');
    assert.equal(view!.content, 'one two three', 'the view has every piece of text');
    assert.equal(view!.status, 'interrupted');
  });

  it('stops a run: the service call is aborted and the log ends with finishReason stopped', async () => {
    const { runs, upstream, admit, ref, read } = setup();
    const r = ref();
    await runs.send(r, 'Hello', admit).then(started => started.accepted);
    upstream.calls[0]!.push({ type: 'delta', text: 'Partial' });
    assert.equal(await runs.stop(r), 'stopping');
    const list = await read(r.key);
    assert.equal(upstream.calls[0]!.signal.aborted, true);
    assert.deepEqual(list.at(-1)!.data, { messageId: null, runId: null, finishReason: 'stopped', usage: null });
    assert.equal(await runs.stop(r), 'finished');
    const [view] = await runs.views('c1', 'anon_a');
    assert.equal(view!.status, 'stopped');
    assert.equal(view!.content, 'Partial');
  });

  it('stops a run whose message arrives after the stop, without calling the service', async () => {
    const { runs, upstream, admit, ref, read } = setup();
    const r = ref();
    assert.equal(await runs.stop(r), 'unknown');
    await runs.send(r, 'Hello', admit).then(started => started.accepted);
    const list = await read(r.key);
    assert.equal(list.at(-1)!.event, 'done');
    assert.equal(upstream.calls.length, 0);
  });

  it('retries a stopped run as a new attempt that asks the service again', async () => {
    const { runs, upstream, admit, ref, read } = setup();
    const r = ref();
    await runs.send(r, 'Hello', admit).then(started => started.accepted);
    await runs.stop(r);
    await read(r.key);
    upstream.setHistory([
      { role: 'user', content: 'Hello', timestamp: new Date().toISOString() },
      { role: 'assistant', content: 'A partial reply the service kept', messageId: 'old' },
    ]);
    const again = await runs.send(r, 'Hello', admit);
    await again.accepted;
    assert.equal(again.record.attempt, 2);
    assert.equal(upstream.calls.length, 2, 'asked on purpose: the history is not used');
    upstream.calls[1]!.push({ type: 'delta', text: 'Whole' }, done('m2'));
    assert.deepEqual(
      (await read(r.key)).map(e => e.id),
      ['2-1', '2-2'],
    );
  });

  it('refuses a message the service refuses: accepted rejects, the log ends in a retryable error, a retry goes again', async () => {
    const { runs, upstream, admit, ref, read } = setup();
    const r = ref();
    upstream.refuseWith(new HttpError(503, 'upstream_unavailable', 'Busy.'));
    const first = await runs.send(r, 'Hello', admit);
    await assert.rejects(first.accepted, (e: HttpError) => e.code === 'upstream_unavailable');
    assert.deepEqual((await read(r.key)).at(-1)!.data, {
      code: 'upstream_unavailable',
      message: 'Busy.',
      retryable: true,
    });
    upstream.refuseWith(undefined);
    const second = await runs.send(r, 'Hello', admit);
    await second.accepted;
    upstream.calls[0]!.push({ type: 'delta', text: 'Now' }, done());
    assert.equal((await read(r.key)).at(-1)!.event, 'done');
  });

  it('ends a run whose producer vanished as interrupted, and a retry takes the reply from the history', async () => {
    const { runs, upstream, admit, store, ref, read } = setup({ leaseMs: 150 });
    const r = ref();
    const id = runId(r);
    // What a producer that died leaves behind: a run, a lease that will not be renewed, and part of a reply.
    const now = Date.now();
    await store.createRun(
      id,
      { ...r, message: 'Hello', createdAt: now, attempt: 1, attemptedAt: now },
      { ttlMs: 60_000, perConversation: 50, lease: { token: 'dead', ttlMs: 150 } },
    );
    await store.appendEvent(id, 'delta', JSON.stringify({ text: 'Half' }), 'dead', 60_000);
    const list = await read(r.key);
    assert.deepEqual(list.at(-1)!.data, {
      code: 'interrupted',
      message: 'The reply was interrupted before it was complete.',
      retryable: true,
    });
    assert.equal((await runs.views('c1', 'anon_a'))[0]!.status, 'interrupted');
    upstream.setHistory([
      { role: 'user', content: 'Earlier', timestamp: new Date(now - 3_600_000).toISOString() },
      { role: 'assistant', content: 'Earlier reply' },
      { role: 'user', content: 'Hello', timestamp: new Date(now + 10).toISOString() },
      { role: 'assistant', content: 'The whole reply', messageId: 'kept', conversationRunId: 'run-kept' },
    ]);
    await runs.send(r, 'Hello', admit).then(started => started.accepted);
    const retried = await read(r.key);
    assert.equal(upstream.calls.length, 0, 'nothing is sent twice');
    assert.deepEqual(
      retried.map(e => e.data),
      [{ text: 'The whole reply' }, { messageId: 'kept', runId: 'run-kept', finishReason: 'stop', usage: null }],
    );
  });

  it('answers a re-sent message the store forgot from the history, and asks the service only for what it lacks', async () => {
    const { runs, upstream, admit, ref, read } = setup();
    const now = Date.now();
    // The service answered while the store was away (a Redis restarted empty): the backend knows no run of the key.
    upstream.setHistory([
      { role: 'user', content: 'Hello', timestamp: new Date(now - 1000).toISOString() },
      { role: 'assistant', content: 'The whole reply', messageId: 'kept', conversationRunId: 'run-kept' },
    ]);
    const r = ref();
    await runs.send(r, 'Hello', admit, undefined, now - 1500).then(started => started.accepted);
    assert.deepEqual(
      (await read(r.key)).map(e => e.data),
      [{ text: 'The whole reply' }, { messageId: 'kept', runId: 'run-kept', finishReason: 'stop', usage: null }],
    );
    assert.equal(upstream.calls.length, 0, 'nothing is sent twice');

    const lost = ref();
    await runs.send(lost, 'Never arrived', admit, undefined, now - 1500).then(started => started.accepted);
    assert.deepEqual(
      upstream.calls.map(call => call.message),
      ['Never arrived'],
      'a message the service lacks is asked once',
    );
    upstream.calls[0]!.push({ type: 'delta', text: 'Now answered' }, done('m2'));
    assert.equal((await read(lost.key)).at(-1)!.event, 'done');

    const reads = upstream.historyReads();
    await runs.send(ref(), 'Hello', admit).then(started => started.accepted);
    assert.equal(upstream.historyReads(), reads, 'a message sent for the first time costs no look at the history');
    assert.equal(upstream.calls.length, 2, 'and goes to the service, even with the text of an answered one');
  });

  it('ends a reply past its bytes with finishReason length, and appends bigger pieces near its event bound', async () => {
    const small = setup({ limits: { bytesPerRun: 10 } });
    const r = small.ref();
    await (
      await small.runs.send(r, 'Hello', small.admit)
    ).accepted;
    small.upstream.calls[0]!.push({ type: 'delta', text: 'Héllo ' }, { type: 'delta', text: 'wörld!' });
    const list = await small.read(r.key);
    assert.equal(list.map(e => (e.event === 'delta' ? (e.data as { text: string }).text : '')).join(''), 'Héllo wö');
    assert.equal((list.at(-1)!.data as StreamEvents['done']).finishReason, 'length');
    assert.equal(small.upstream.calls[0]!.signal.aborted, true);

    const bounded = setup({ limits: { eventsPerRun: 100, bytesPerRun: 6400 } });
    const b = bounded.ref();
    await (
      await bounded.runs.send(b, 'Hello', bounded.admit)
    ).accepted;
    const words = Array.from({ length: 1000 }, (_, i) => `w${i % 10} `);
    bounded.upstream.calls[0]!.push(...words.map(text => ({ type: 'delta' as const, text })), done());
    const events = await bounded.read(b.key);
    assert.ok(events.length <= 100, `${events.length} events`);
    const text = events.map(e => (e.event === 'delta' ? (e.data as { text: string }).text : '')).join('');
    assert.equal(text, words.join(''), 'no text lost');
  });

  it('does not answer a retried message with the reply to an earlier message of the same text', async () => {
    const { runs, upstream, admit, ref, read } = setup();
    upstream.setHistory([
      { role: 'user', content: 'yes', timestamp: new Date(Date.now() - 20_000).toISOString() },
      { role: 'assistant', content: 'Answer to the first yes', messageId: 'first' },
    ]);
    const r = ref();
    await runs.send(r, 'yes', admit).then(started => started.accepted);
    runs.close();
    assert.equal((await read(r.key)).at(-1)!.event, 'error');
    await runs.send(r, 'yes', admit).then(started => started.accepted);
    assert.equal(upstream.calls.length, 2, 'the second "yes" is sent to the service again');
    upstream.calls[1]!.push({ type: 'delta', text: 'Answer to the second yes' }, done('second'));
    assert.equal((await runs.views('c1', 'anon_a'))[0]!.status, 'running');
    await read(r.key);
    assert.equal((await runs.views('c1', 'anon_a'))[0]!.content, 'Answer to the second yes');
  });

  it('never lists a run as done without all of its text', async () => {
    const { runs, store } = setup();
    const id = runId({ conversationId: 'c1', key: 'k-12345678' });
    const now = Date.now();
    await store.createRun(
      id,
      {
        owner: 'o',
        conversationId: 'c1',
        key: 'k-12345678',
        message: 'Hi',
        createdAt: now,
        attempt: 1,
        attemptedAt: now,
      },
      { ttlMs: 60_000, perConversation: 50, lease: { token: 't', ttlMs: 60_000 } },
    );
    await store.appendEvent(id, 'delta', JSON.stringify({ text: 'Hel' }), 't', 60_000);
    // The producer writes the end of the reply just after the view read the log.
    const readEvents = store.readEvents.bind(store);
    store.readEvents = async (...args) => {
      const got = await readEvents(...args);
      store.readEvents = readEvents;
      await store.appendEvent(id, 'delta', JSON.stringify({ text: 'lo' }), 't', 60_000);
      const end: LogEvents['done'] = { messageId: 'm1', runId: 'r', finishReason: 'stop', usage: null };
      await store.appendEvent(id, 'done', JSON.stringify(end), 't', 60_000);
      return got;
    };
    const [view] = await runs.views('c1', 'o');
    assert.ok(view!.status !== 'done' || view!.content === 'Hello', `${view!.status} with "${view!.content}"`);
  });

  it('ends a reader that is already past the end with the end again', async () => {
    const { runs, upstream, admit, ref, read } = setup();
    const r = ref();
    await runs.send(r, 'Hello', admit).then(started => started.accepted);
    upstream.calls[0]!.push({ type: 'delta', text: 'Hi' }, done());
    const all = await read(r.key);
    assert.deepEqual(await read(r.key, all.at(-1)!.id), [all.at(-1)], 'the stream ends');
  });

  it('follows the attempt a concurrent Retry starts, rather than the old ending', async () => {
    const { runs, upstream, admit, ref, read } = setup();
    const r = ref();
    upstream.refuseWith(new HttpError(503, 'upstream_unavailable', 'Busy.'));
    await (await runs.send(r, 'Hello', admit)).accepted.catch(() => {});
    upstream.refuseWith(undefined);
    const [a, b] = await Promise.all([runs.send(r, 'Hello', admit), runs.send(r, 'Hello', admit)]);
    assert.deepEqual([a.record.attempt, b.record.attempt], [2, 2]);
    assert.equal(upstream.calls.length, 1, 'one of them asks the service');
    upstream.calls[0]!.push(done());
    assert.equal((await read(r.key)).at(-1)!.event, 'done');
  });

  it('ends the runs it produces as interrupted when closed', async () => {
    const { runs, admit, ref, read } = setup();
    const r = ref();
    await runs.send(r, 'Hello', admit).then(started => started.accepted);
    runs.close();
    assert.equal((await read(r.key)).at(-1)!.event, 'error');
    assert.equal((await runs.views('c1', 'anon_a'))[0]!.status, 'interrupted');
  });
  it('drains: no new runs; a send on its way is waited for; what outlives the grace hands over as server_restarting', async () => {
    const { runs, upstream, ref, read, store } = setup();
    // A send that is still being admitted when the drain begins.
    let admitted!: () => void;
    const admission = new Promise<void>(resolve => (admitted = resolve));
    const slowAdmit = async () => {
      await admission;
      return { renew: async () => true, release: async () => {} };
    };
    const late = ref();
    const sending = runs.send(late, 'Hello', slowAdmit);
    const running = ref();
    const fast = { renew: async () => true, release: async () => {} };
    await (
      await runs.send(running, 'Hi', async () => fast)
    ).accepted;
    upstream.calls[0]!.push({ type: 'delta', text: 'Part' });
    let drained = false;
    const draining = runs.drain(20).then(() => (drained = true));
    await assert.rejects(
      runs.send(ref(), 'New', async () => fast),
      (e: HttpError) => e.code === 'server_restarting',
    );
    assert.equal((await read(running.key)).at(-1)!.event, 'error', 'the running reply outlived the grace period');
    // Its producer is gone once it let go of its lease; a drain that forgot the send on its way would end then.
    while (await store.leaseHeld(runId(running))) await new Promise(resolve => setImmediate(resolve));
    for (let i = 0; i < 3; i++) await new Promise(resolve => setImmediate(resolve));
    assert.equal(drained, false, 'the send on its way is waited for');
    admitted();
    await assert.rejects(
      (await sending).accepted,
      (e: HttpError) => e.code === 'server_restarting',
      'a producer starting past the grace period hands over at once',
    );
    await draining;
    for (const key of [running.key, late.key]) {
      assert.deepEqual((await read(key)).at(-1)!.data, {
        code: 'server_restarting',
        message: 'This server is restarting. The reply goes on elsewhere.',
        retryable: true,
      });
    }
    assert.equal(upstream.calls.length, 1, 'the late send never reached the service');
  });
});
