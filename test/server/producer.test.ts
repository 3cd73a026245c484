import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { StreamEvents } from '../../src/protocol.js';
import { Halt, produce } from '../../src/server/producer.js';
import type { ProducerOptions, RunLimits } from '../../src/server/producer.js';
import { MemoryStore } from '../../src/server/store.js';
import type { NewEvent, RunRecord } from '../../src/server/store.js';
import { ServiceError } from '../../src/service/errors.js';
import type { StreamChunk } from '../../src/service/types.js';
import { scriptedService } from '../support/upstream.js';
import { until } from '../support/until.js';

const limits: RunLimits = {
  replayWindowMs: 60_000,
  eventsPerRun: 4000,
  bytesPerRun: 256 * 1024,
  runsPerConversation: 50,
};
const done = (messageId = 'm1'): StreamChunk => ({ type: 'done', messageId, runId: 'r1', finishReason: 'stop' });

/**
 * One producer over a memory store and a service the test scripts: the run is created with the producer's lease, as
 * runs.ts creates it. The test reads the log, the admission, whether the producer said it ended and the lease.
 */
async function start(
  options: {
    limits?: Partial<RunLimits>;
    history?: Parameters<ReturnType<typeof scriptedService>['setHistory']>[0];
    refusal?: Error;
    store?: MemoryStore;
  } = {},
  historyCitations: StreamEvents['citations']['citations'] | null = null,
) {
  const store = options.store ?? new MemoryStore();
  const upstream = scriptedService();
  if (options.history) upstream.setHistory(options.history);
  if (options.refusal) upstream.refuseWith(options.refusal);
  const id = `run:c1:${crypto.randomUUID()}`;
  const record: RunRecord = {
    key: id.slice(7),
    conversationId: 'c1',
    owner: 'anon_a',
    message: 'Hello',
    createdAt: Date.now(),
    attempt: 1,
    attemptedAt: Date.now(),
  };
  const token = crypto.randomUUID();
  await store.createRun(id, record, { ttlMs: 60_000, perConversation: 50, lease: { token, ttlMs: 3000 } });
  const admission = { released: false, renew: async () => true, release: async () => void (admission.released = true) };
  let ended = false;
  const abort = new AbortController();
  const producerOptions: ProducerOptions = {
    store,
    limits: { ...limits, ...options.limits },
    open: upstream.open,
    history: upstream.history,
    leaseMs: 3000,
  };
  const accepted = produce(producerOptions, {
    id,
    record,
    token,
    admission,
    historyCitations,
    background: () => {},
    abort,
    ended: () => void (ended = true),
  });
  const log = async () =>
    (await store.readEvents(id, null, { waitMs: 0 })).map(e => ({
      event: e.event,
      data: JSON.parse(e.data) as unknown,
    }));
  /** Waits for the producer to have ended, then checks that it let go of all it held. */
  const finished = async () => {
    await until(() => ended, 'the producer to end');
    assert.equal(admission.released, true, 'the admission is given back');
    assert.equal(await store.leaseHeld(id), false, 'the lease is given back');
    return log();
  };
  return { store, upstream, id, token, abort, accepted, log, finished };
}

describe('the producer', () => {
  // The store's timers never hold a process open; this one holds the test's open while it waits.
  const keepAlive = setInterval(() => {}, 1000);
  after(() => clearInterval(keepAlive));

  it('appends what one read of the service held as one event, normalized citations, and the end with its ids', async () => {
    const { upstream, accepted, finished } = await start();
    await accepted;
    assert.deepEqual(
      upstream.calls.map(call => call.message),
      ['Hello'],
    );
    upstream.calls[0]!.push(
      { type: 'delta', text: 'Hi ' },
      { type: 'delta', text: 'there [1]' },
      { type: 'citations', citations: [{ sourceName: 'Care guide', partitions: 'oops' }] as never },
      done(),
    );
    assert.deepEqual(await finished(), [
      { event: 'delta', data: { text: 'Hi there [1]' } },
      { event: 'citations', data: { citations: [{ sourceName: 'Care guide' }] } },
      { event: 'done', data: { messageId: 'm1', runId: 'r1', finishReason: 'stop', usage: null } },
    ]);
  });

  it('writes the events of one read in one step of a store that takes batches, the end with the lease given up', async () => {
    /** A memory store that takes batches, and notes them. */
    class Batching extends MemoryStore {
      readonly batches: { events: string[]; release: boolean }[] = [];
      async appendEvents(
        id: string,
        events: readonly NewEvent[],
        token: string,
        ttlMs: number,
        options: { release?: boolean } = {},
      ) {
        this.batches.push({ events: events.map(e => e.event), release: Boolean(options.release) });
        const ids: string[] = [];
        for (const { event, data } of events) {
          const appended = await this.appendEvent(id, event, data, token, ttlMs);
          if (appended === null) return null;
          ids.push(appended);
        }
        return ids;
      }
    }
    const store = new Batching();
    const { upstream, accepted, finished } = await start({ store });
    await accepted;
    upstream.calls[0]!.push({ type: 'delta', text: 'Hi' });
    await until(() => store.batches.length === 1, 'the text to be written');
    upstream.calls[0]!.push({ type: 'delta', text: ' there' }, { type: 'citations', citations: [] }, done());
    assert.equal((await finished()).length, 4);
    assert.deepEqual(store.batches, [
      { events: ['delta'], release: false },
      { events: ['delta', 'citations', 'done'], release: true },
    ]);
  });

  it('ends a reply at the byte budget with finishReason length, on a character boundary, and stops reading', async () => {
    const { upstream, accepted, finished } = await start({ limits: { bytesPerRun: 10 } });
    await accepted;
    upstream.calls[0]!.push({ type: 'delta', text: 'abcdefgh' }, { type: 'delta', text: 'i😀j' });
    assert.deepEqual(await finished(), [
      { event: 'delta', data: { text: 'abcdefghi' } },
      { event: 'done', data: { messageId: null, runId: null, finishReason: 'length', usage: null } },
    ]);
  });

  it('takes the reply from the history when the service already keeps it, without asking again', async () => {
    const now = new Date().toISOString();
    const citations = [{ sourceName: 'Care guide' }];
    const { upstream, accepted, finished } = await start(
      {
        history: [
          { role: 'user', content: 'Hello', timestamp: now },
          { role: 'assistant', content: 'Hi there [1]', messageId: 'm9', conversationRunId: 'r9', timestamp: now },
        ],
      },
      citations,
    );
    await accepted;
    assert.deepEqual(await finished(), [
      { event: 'delta', data: { text: 'Hi there [1]' } },
      { event: 'citations', data: { citations } },
      { event: 'done', data: { messageId: 'm9', runId: 'r9', finishReason: 'stop', usage: null } },
    ]);
    assert.equal(upstream.calls.length, 0, 'the service was not asked');
    assert.equal(upstream.historyReads(), 1);
  });

  it('asks the service when the history lacks the message', async () => {
    const { upstream, accepted, finished } = await start({ history: [] }, []);
    await accepted;
    assert.equal(upstream.historyReads(), 1);
    upstream.calls[0]!.push({ type: 'delta', text: 'Fresh' }, done());
    assert.deepEqual(
      (await finished()).map(e => e.event),
      ['delta', 'done'],
    );
  });

  it('stops on the store’s stop signal: the service call is aborted and the log ends stopped', async () => {
    const { store, id, upstream, accepted, finished } = await start();
    await accepted;
    upstream.calls[0]!.push({ type: 'delta', text: 'Half' });
    await until(async () => (await store.lastEvent(id)) !== undefined, 'the text to be appended');
    await store.requestStop(id, 60_000);
    assert.deepEqual(await finished(), [
      { event: 'delta', data: { text: 'Half' } },
      { event: 'done', data: { messageId: null, runId: null, finishReason: 'stopped', usage: null } },
    ]);
    assert.equal(upstream.calls[0]!.signal.aborted, true);
  });

  it('rejects acceptance with the refusal of the service, after the log says so', async () => {
    const refusal = new ServiceError({ status: 400, code: 'invalid_request', message: 'No.', retryable: false });
    const { accepted, log, finished } = await start({ refusal });
    await assert.rejects(accepted, { code: 'upstream_error' });
    const logged = await log();
    assert.equal(logged.at(-1)!.event, 'error');
    assert.equal((logged.at(-1)!.data as StreamEvents['error']).code, 'upstream_error');
    await finished();
  });

  it('ends a reply whose body ended without an end as interrupted, after its text', async () => {
    const { upstream, accepted, finished } = await start();
    await accepted;
    upstream.calls[0]!.push({ type: 'delta', text: 'Cut sh' });
    upstream.calls[0]!.end();
    assert.deepEqual(await finished(), [
      { event: 'delta', data: { text: 'Cut sh' } },
      {
        event: 'error',
        data: { code: 'interrupted', message: 'The reply was interrupted before it was complete.', retryable: true },
      },
    ]);
  });

  it('ends with server_restarting when its instance drains, and writes nothing once its lease is lost', async () => {
    const draining = await start();
    await draining.accepted;
    draining.abort.abort(new Halt('restarting'));
    const [end] = await draining.finished();
    assert.equal((end!.data as StreamEvents['error']).code, 'server_restarting');
    assert.equal(draining.upstream.calls[0]!.signal.aborted, true);

    const lost = await start();
    await lost.accepted;
    await lost.store.releaseLease(lost.id, lost.token);
    assert.equal(await lost.store.acquireLease(lost.id, 'another producer', 3000), true);
    lost.upstream.calls[0]!.push({ type: 'delta', text: 'Nobody reads this' }, done());
    await until(() => lost.upstream.calls[0]!.signal.aborted, 'the producer to let go of the service');
    assert.deepEqual(await lost.log(), [], 'the producer wrote nothing without the lease');
  });
});
