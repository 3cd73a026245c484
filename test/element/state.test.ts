import { expect } from '@open-wc/testing';
import type { RunView } from '../../src/protocol.js';
import {
  TurnStatus,
  activeTurn,
  applyEvent,
  currentTurn,
  initialState,
  nextQueued,
  timeline,
  turnOfRun,
} from '../../src/element/state.js';
import type { ChatEvent, ChatState } from '../../src/element/state.js';

const apply = (...events: ChatEvent[]) => events.reduce(applyEvent, initialState);
const queue = (id: string, text = id): ChatEvent => ({ type: 'queued', id, key: `key-${id}`, text });
const statuses = (state: ChatState) => state.turns.map(turn => `${turn.id}:${turn.status}`);

const run = (fields: Partial<RunView>): RunView => ({
  key: 'k1',
  message: 'Hello',
  status: 'running',
  content: 'Hi',
  citations: [],
  messageId: null,
  finishReason: null,
  error: null,
  lastEventId: '1-2',
  attempt: 1,
  createdAt: '2026-11-23T00:00:00.000Z',
  ...fields,
});

describe('conversation state', () => {
  it('takes a turn from queued through accepting and streaming to done', () => {
    let state = apply(queue('a'), { type: 'accepting', id: 'a' });
    expect(statuses(state)).to.deep.equal(['a:accepting']);
    state = applyEvent(state, { type: 'accepted', id: 'a', attempt: 1 });
    state = applyEvent(state, { type: 'delta', id: 'a', text: 'Hel', eventId: '1-1' });
    state = applyEvent(state, { type: 'delta', id: 'a', text: 'lo', eventId: '1-2' });
    state = applyEvent(state, { type: 'citations', id: 'a', citations: [{ sourceName: 'S' }], eventId: '1-3' });
    state = applyEvent(state, { type: 'done', id: 'a', messageId: 'm', finishReason: 'stop', eventId: '1-4' });
    const [turn] = state.turns;
    expect(turn).to.include({ status: 'done', reply: 'Hello', messageId: 'm', lastEventId: '1-4' });
    expect(turn!.citations).to.deep.equal([{ sourceName: 'S' }]);
  });

  it('applies every event to the turn it names, never to another', () => {
    let state = apply(queue('a'), { type: 'accepting', id: 'a' }, queue('b'));
    state = applyEvent(state, { type: 'delta', id: 'a', text: 'for a', eventId: null });
    state = applyEvent(state, { type: 'delta', id: 'gone', text: 'late', eventId: null });
    state = applyEvent(state, { type: 'done', id: 'gone', messageId: null, finishReason: 'stop', eventId: null });
    expect(state.turns.map(t => t.reply)).to.deep.equal(['for a', '']);
    expect(statuses(state)).to.deep.equal(['a:streaming', 'b:queued']);
  });

  it('sends queued turns in order, one at a time', () => {
    let state = apply(queue('a'), queue('b'), queue('c'));
    expect(nextQueued(state)!.id).to.equal('a');
    state = applyEvent(state, { type: 'accepting', id: 'a' });
    expect(nextQueued(state)).to.equal(undefined, 'a is being answered');
    expect(activeTurn(state)!.id).to.equal('a');
    state = applyEvent(state, { type: 'done', id: 'a', messageId: null, finishReason: 'stop', eventId: null });
    expect(nextQueued(state)!.id).to.equal('b');
  });

  it('never holds the queue behind a failure: a message sent after it goes', () => {
    for (const retryable of [true, false]) {
      let state = apply(queue('a'), { type: 'accepting', id: 'a' });
      state = applyEvent(state, { type: 'failed', id: 'a', code: 'upstream_error', retryable });
      expect(currentTurn(state)!.id).to.equal('a', 'the failure stands for the conversation');
      state = applyEvent(state, queue('b'));
      expect(nextQueued(state)!.id).to.equal('b');
      expect(currentTurn(state)!.id).to.equal('a', 'until the message after it is sent');
    }
  });

  it('marks a turn reconnecting until anything happens to it, keeping what it had in view', () => {
    let state = apply(queue('a'), { type: 'accepting', id: 'a' }, { type: 'accepted', id: 'a', attempt: 1 });
    state = applyEvent(state, { type: 'delta', id: 'a', text: 'Part', eventId: '1-1' });
    state = applyEvent(state, { type: 'reconnecting', id: 'a' });
    expect(state.turns[0]).to.include({ status: 'streaming', reply: 'Part', reconnecting: true });
    state = applyEvent(state, { type: 'accepted', id: 'a', attempt: 1 });
    expect(state.turns[0]).to.include({ reply: '', lastEventId: null, reconnecting: false }, 'sent again: replayed');
    state = applyEvent(state, { type: 'delta', id: 'a', text: 'Part', eventId: '1-1' });
    state = applyEvent(state, { type: 'reconnecting', id: 'a', follow: true });
    expect(state.turns[0]).to.include({ reconnecting: true, attempt: 1 });
    state = applyEvent(state, { type: 'accepted', id: 'a', attempt: 1 });
    expect(state.turns[0]).to.include(
      { reply: 'Part', lastEventId: '1-1', reconnecting: false },
      'followed again: goes on after its last event',
    );
    state = applyEvent(state, { type: 'reconnecting', id: 'a' });
    state = applyEvent(state, { type: 'interrupted', id: 'a', code: 'interrupted' });
    expect(state.turns[0]).to.include({ status: 'interrupted', reconnecting: false });
  });

  it('starts the text afresh when a new attempt of the run is accepted', () => {
    let state = apply(queue('a'), { type: 'accepting', id: 'a' }, { type: 'accepted', id: 'a', attempt: 1 });
    state = applyEvent(state, { type: 'delta', id: 'a', text: 'first try', eventId: '1-1' });
    state = applyEvent(state, { type: 'accepted', id: 'a', attempt: 2 });
    state = applyEvent(state, { type: 'delta', id: 'a', text: 'second', eventId: '2-1' });
    expect(state.turns[0]).to.include({ reply: 'second', attempt: 2 });
  });

  it('keeps a stopped reply as it was, and calls a done with finishReason stopped stopped', () => {
    let state = apply(queue('a'), { type: 'accepting', id: 'a' });
    state = applyEvent(state, { type: 'delta', id: 'a', text: 'Part', eventId: null });
    expect(applyEvent(state, { type: 'stopped', id: 'a' }).turns[0]).to.include({ status: 'stopped', reply: 'Part' });
    const elsewhere = applyEvent(state, {
      type: 'done',
      id: 'a',
      messageId: null,
      finishReason: 'stopped',
      eventId: null,
    });
    expect(elsewhere.turns[0]!.status).to.equal('stopped');
  });

  it('restores the history and the runs of the window as turns, keeping turns not sent yet', () => {
    let state = apply(queue('local'), { type: 'accepting', id: 'local' });
    state = applyEvent(state, {
      type: 'restored',
      conversationId: 'c',
      messages: [
        { id: 'u1', role: 'user', content: 'Q', createdAt: null, runId: null, feedback: null, citations: [] },
        {
          id: 'm1',
          role: 'assistant',
          content: 'A [1]',
          createdAt: null,
          runId: null,
          feedback: { score: -1, comment: 'Vague', tags: [] },
          citations: [],
        },
      ],
      runs: [run({}), run({ key: 'k2', status: 'stopped', content: 'Par' })],
      citations: id => (id === 'm1' ? [{ sourceName: 'Kept' }] : []),
    });
    expect(state.conversationId).to.equal('c');
    expect(state.history.map(m => [m.role, m.text])).to.deep.equal([
      ['user', 'Q'],
      ['assistant', 'A [1]'],
    ]);
    expect(state.history[1]!.citations).to.deep.equal([{ sourceName: 'Kept' }]);
    expect(state.history.map(m => [m.feedback, m.comment])).to.deep.equal(
      [
        [undefined, undefined],
        ['down', 'Vague'],
      ],
      'the kept thumb and its comment',
    );
    const taken = applyEvent(state, { type: 'feedback', id: state.history[1]!.id, value: undefined });
    expect([taken.history[1]!.feedback, taken.history[1]!.comment], 'taken back, with its comment').to.deep.equal([
      undefined,
      undefined,
    ]);
    expect(statuses(state)).to.deep.equal(['run:k1:streaming', 'run:k2:stopped', 'local:accepting']);
  });

  it('writes a retried reply afresh', () => {
    let state = apply(queue('a'), { type: 'accepting', id: 'a' });
    state = applyEvent(state, { type: 'delta', id: 'a', text: 'Half', eventId: '1-1' });
    state = applyEvent(state, { type: 'interrupted', id: 'a', code: 'interrupted' });
    state = applyEvent(state, { type: 'retrying', id: 'a' });
    expect(state.turns[0]).to.include({ status: 'accepting', reply: '', lastEventId: null });
  });

  it("puts listed turns among the history by time, and this page's turns last", () => {
    let state = apply(queue('live'));
    state = applyEvent(state, {
      type: 'restored',
      conversationId: 'c',
      messages: [
        {
          id: 'u2',
          role: 'user',
          content: 'Later',
          createdAt: '2026-11-23T00:00:10.000Z',
          runId: null,
          feedback: null,
          citations: [],
        },
        {
          id: 'm2',
          role: 'assistant',
          content: 'Later reply',
          createdAt: '2026-11-23T00:00:11.000Z',
          runId: null,
          feedback: null,
          citations: [],
        },
      ],
      runs: [run({ key: 'early', status: 'stopped', createdAt: '2026-11-23T00:00:05.000Z' })],
      citations: () => [],
    });
    expect(timeline(state).map(e => ('turn' in e ? e.turn.id : e.item.id))).to.deep.equal([
      'run:early',
      'u2',
      'm2',
      'live',
    ]);
  });

  it('maps every run status to a turn status', () => {
    const map = Object.fromEntries(
      (['running', 'done', 'stopped', 'failed', 'interrupted'] as const).map(status => [
        status,
        turnOfRun(run({ status })).status,
      ]),
    );
    expect(map).to.deep.equal({
      running: TurnStatus.streaming,
      done: TurnStatus.done,
      stopped: TurnStatus.stopped,
      failed: TurnStatus.failed,
      interrupted: TurnStatus.interrupted,
    });
  });

  it('keeps feedback on turns and history items, and resets to nothing', () => {
    let state = apply(queue('a'), { type: 'feedback', id: 'a', value: 'down', comment: 'Vague' });
    expect([state.turns[0]!.feedback, state.turns[0]!.comment]).to.deep.equal(['down', 'Vague']);
    state = applyEvent(state, { type: 'feedback', id: 'a', value: 'up' });
    expect([state.turns[0]!.feedback, state.turns[0]!.comment], 'a new vote, no comment').to.deep.equal([
      'up',
      undefined,
    ]);
    state = applyEvent(state, { type: 'feedback', id: 'a', value: undefined });
    expect(state.turns[0]!.feedback, 'taken back').to.equal(undefined);
    state = applyEvent(state, { type: 'reset' });
    expect(state.turns).to.deep.equal([]);
    expect(currentTurn(state)).to.equal(undefined);
  });
});
