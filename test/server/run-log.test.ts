import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  cut,
  fold,
  isTerminal,
  runId,
  statusOf,
  terminalStatus,
  toldDone,
  toldEvents,
  utf8Length,
  viewOf,
} from '../../src/server/run-log.js';
import type { LogEvents } from '../../src/server/run-log.js';
import type { LoggedEvent, RunRecord } from '../../src/server/store.js';

let seq = 0;
const event = <E extends keyof LogEvents>(name: E, data: LogEvents[E], attempt = 1): LoggedEvent => ({
  id: `${attempt}-${++seq}`,
  event: name,
  data: JSON.stringify(data),
  attempt,
});
const done = (finishReason = 'stop') => event('done', { messageId: 'm1', runId: 'r1', finishReason, usage: null });
const failed = (code: LogEvents['error']['code'], retryable = true) =>
  event('error', { code, message: 'It failed.', retryable });
const record: RunRecord = {
  key: 'key-0001',
  conversationId: 'c1',
  owner: 'anon_a',
  message: 'Hello',
  createdAt: Date.UTC(2026, 10, 27, 12),
  attempt: 2,
  attemptedAt: Date.UTC(2026, 10, 27, 12, 1),
};

describe('run log', () => {
  it('names a run by its conversation and key', () => {
    assert.equal(runId({ conversationId: 'c1', key: 'key-0001' }), 'run:c1:key-0001');
  });

  it('ends an attempt with done or error only', () => {
    assert.deepEqual(
      [event('delta', { text: 'a' }), event('citations', { citations: [] }), done(), failed('upstream_error')].map(
        isTerminal,
      ),
      [false, false, true, true],
    );
  });

  it('tells how a terminal event ended its run', () => {
    assert.equal(terminalStatus(done()), 'done');
    assert.equal(terminalStatus(done('length')), 'done');
    assert.equal(terminalStatus(done('stopped')), 'stopped');
    assert.equal(terminalStatus(failed('interrupted')), 'interrupted');
    assert.equal(terminalStatus(failed('upstream_error', false)), 'failed');
  });

  it('decides a status from the newest event and the lease, the terminal event first', () => {
    const delta = event('delta', { text: 'a' });
    assert.equal(statusOf(undefined, true), 'running', 'no event yet, a producer holds the lease');
    assert.equal(statusOf(delta, true), 'running');
    assert.equal(statusOf(delta, false), 'interrupted', 'no terminal event and no producer');
    assert.equal(statusOf(undefined, false), 'interrupted');
    assert.equal(statusOf(done(), true), 'done', 'a producer still letting go of its lease has ended');
    assert.equal(statusOf(done('stopped'), false), 'stopped');
  });

  it('adds the events up to the text, the last citations and the end', () => {
    const citations = [{ sourceName: 'Care guide' }];
    const end = done();
    const reply = fold([
      event('delta', { text: 'Hi ' }),
      event('citations', { citations: [{ sourceName: 'old' }] }),
      event('delta', { text: 'there [1]' }),
      event('citations', { citations }),
      end,
    ]);
    assert.deepEqual(reply, {
      content: 'Hi there [1]',
      citations,
      done: JSON.parse(end.data) as LogEvents['done'],
      error: null,
    });
    assert.deepEqual(fold([]), { content: '', citations: [], done: null, error: null });
  });

  it('shows a run as the browser sees it, with an error for one interrupted without its error event', () => {
    const events = [event('delta', { text: 'Half a repl' })];
    assert.deepEqual(viewOf(record, events, 'interrupted'), {
      key: 'key-0001',
      message: 'Hello',
      status: 'interrupted',
      content: 'Half a repl',
      citations: [],
      messageId: null,
      finishReason: null,
      error: { code: 'interrupted', message: 'The reply was interrupted before it was complete.', retryable: true },
      lastEventId: events[0]!.id,
      attempt: 2,
      createdAt: '2026-11-27T12:00:00.000Z',
    });
    const finished = [...events, done()];
    const view = viewOf(record, finished, 'done');
    assert.equal(view.error, null);
    assert.equal(view.messageId, 'm1');
    assert.equal(view.finishReason, 'stop');
    assert.equal(view.lastEventId, finished[1]!.id);
    const refused = failed('upstream_error', false);
    assert.deepEqual(viewOf(record, [refused], 'failed').error, JSON.parse(refused.data));
    assert.equal(viewOf(record, [], 'running').lastEventId, null);
  });

  it("tells the browser a done without the service's token counts, unless the site turns them on", () => {
    const usage = { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 };
    const logged = { messageId: 'm1', runId: 'r1', finishReason: 'stop', usage, moderation: {} } as LogEvents['done'];
    assert.deepEqual(toldDone(logged, false), { messageId: 'm1', runId: 'r1', finishReason: 'stop' });
    assert.deepEqual(toldDone(logged, true), { messageId: 'm1', runId: 'r1', finishReason: 'stop', usage });
    assert.deepEqual(toldDone({ ...logged, usage: null }, true), {
      messageId: 'm1',
      runId: 'r1',
      finishReason: 'stop',
    });
    const loose = { ...usage, completion_tokens: '30', cost: 2 } as unknown as LogEvents['done']['usage'];
    assert.deepEqual(
      toldDone({ ...logged, usage: loose }, true).usage,
      { prompt_tokens: 120, completion_tokens: 0, total_tokens: 150 },
      'three numbers, nothing else',
    );
    const events = [event('delta', { text: 'Hi' }), event('done', logged)];
    const told = toldEvents(events, false);
    assert.equal(told[0], events[0], 'other events pass as logged');
    const deltas = [event('delta', { text: 'Hi' }), event('delta', { text: ' there' })];
    assert.equal(toldEvents(deltas, false), deltas, 'a batch without done passes as it is, not copied');
    assert.deepEqual(
      { ...told[1], data: JSON.parse(told[1]!.data) as unknown },
      {
        ...events[1],
        data: { messageId: 'm1', runId: 'r1', finishReason: 'stop' },
      },
    );
  });

  it('counts UTF-8 bytes without encoding, and cuts text to a size on a character boundary', () => {
    for (const text of ['', 'plain', 'é', '€', '😀', 'a😀b', '\ud83d', 'x\ude00y', 'мир 世界 😀'.repeat(3)]) {
      assert.equal(utf8Length(text), new TextEncoder().encode(text).length, JSON.stringify(text));
    }
    assert.equal(cut('a😀b', 1), 'a');
    assert.equal(cut('a😀b', 4), 'a', 'never half of a character');
    assert.equal(cut('a😀b', 5), 'a😀');
    assert.equal(cut('héllo', 100), 'héllo');
    assert.equal(cut('héllo', 0), '');
  });
});
