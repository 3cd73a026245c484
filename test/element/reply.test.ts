// The reply to one turn on its own, against a scripted backend written here: what is sent, what the reply's events
// become, and what happens when the stream drops or fails. A script stands in for the backend because these cuts
// (a stream ended in the middle, a run forgotten between two reads) cannot be had from the real one on demand; the
// element's suites (turns, resume) cross the real backend.
import { expect } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { replyKit } from '../../src/element/controller.js';
import { deliver, use } from '../../src/element/reply.js';
import type { ReplyOptions } from '../../src/element/reply.js';
import type { ChatEvent } from '../../src/element/state.js';
import { TurnHandle, isAbort } from '../../src/element/turn.js';
import { PersonaChatError } from '../../src/element/errors.js';
import { body, envelope, eventStream, frame } from './scripted-backend.js';

// The chunk is given the chat's code, as the controller gives it when it loads the chunk.
use(replyKit);

interface Seen {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A stream of `frames`; it stays open after them unless `end`. */
function stream(frames: string[], end = true) {
  const written = body(...frames);
  if (end) written.end();
  return eventStream(written.stream);
}

const meta = (attempt = 1) => frame('meta', { conversationId: 'c1', key: 'k1', attempt });
const done = (id: string) => frame('done', { messageId: 'm1', runId: 'r1', finishReason: 'stop', usage: null }, id);

/** A turn answered by `script`, one answer per request in order; records what is sent and what the turn is told. */
function turn(...script: ((seen: Seen) => Response)[]) {
  const seen: Seen[] = [];
  const events: ChatEvent[] = [];
  const failures: PersonaChatError[] = [];
  let accepted = 0;
  let lastEventId: string | null = null;
  const handle = new TurnHandle('t1', 'k1', 'Hello?');
  const options: ReplyOptions = {
    fetch: async (input, init = {}) => {
      const request: Seen = {
        method: init.method ?? 'GET',
        path: String(input),
        // A copy, as the request had them.
        headers: { ...(init.headers as Record<string, string>) },
        body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
      };
      seen.push(request);
      const answer = script[seen.length - 1];
      if (!answer) throw new Error(`no answer scripted for request ${seen.length}`);
      return answer(request);
    },
    sentAt: new Map(),
    lastEventId: () => lastEventId,
    accepted: () => void accepted++,
    apply: event => {
      events.push(event);
      if ('eventId' in event && event.eventId) lastEventId = event.eventId;
    },
    failed: error => void failures.push(error),
  };
  return { handle, options, seen, events, failures, accepted: () => accepted };
}

describe('the reply to a turn', () => {
  it("sends the message under its key and makes the reply's events the turn's", async () => {
    const t = turn(() =>
      stream([
        meta(),
        frame('delta', { text: 'Hi' }, '1-0'),
        frame('citations', { citations: [{ title: 'A', url: 'https://example.com/a' }] }, '2-0'),
        done('3-0'),
      ]),
    );
    await deliver(t.handle, 'c1', t.options);
    expect(t.seen.map(s => [s.method, s.path])).to.deep.equal([['POST', '/conversations/c1/messages']]);
    expect(t.seen[0]!.headers['idempotency-key']).to.equal('k1');
    expect(t.seen[0]!.headers['X-Persona-Chat-Resend'], 'a first send').to.equal(undefined);
    expect(t.seen[0]!.body).to.deep.equal({ message: 'Hello?' });
    expect(t.accepted()).to.equal(1);
    expect(t.handle.sent && t.handle.accepted).to.equal(true);
    expect(t.events.map(event => event.type)).to.deep.equal(['accepted', 'delta', 'citations', 'done']);
    expect(t.events[1]).to.deep.equal({ type: 'delta', id: 't1', text: 'Hi', eventId: '1-0' });
    expect(t.events[3]).to.deep.equal({
      type: 'done',
      id: 't1',
      messageId: 'm1',
      finishReason: 'stop',
      eventId: '3-0',
    });
    expect(t.failures).to.deep.equal([]);
  });

  it('follows the run after the last event it saw when the stream ends without its end', async () => {
    const t = turn(
      () => stream([meta(), frame('delta', { text: 'Hi' }, '5-0')]),
      () => stream([frame('delta', { text: ' there' }, '6-0'), done('7-0')]),
    );
    await deliver(t.handle, 'c1', t.options);
    expect(t.seen.map(s => [s.method, s.path, s.headers['last-event-id']])).to.deep.equal([
      ['POST', '/conversations/c1/messages', undefined],
      ['GET', '/conversations/c1/runs/k1/events', '5-0'],
    ]);
    expect(t.events.map(event => event.type)).to.deep.equal(['accepted', 'delta', 'delta', 'done']);
  });

  it('sends the message again under its key after a failure of the way, saying how long ago it was first sent', async () => {
    const t = turn(
      () => envelope('server_restarting', 503, true),
      () => stream([meta(2), done('1-0')]),
    );
    const delivered = deliver(t.handle, 'c1', t.options);
    await waitUntil(() => t.events.some(event => event.type === 'reconnecting'), 'the turn shows it reconnects');
    // The pause before the next try ends at once when the browser says it is back online.
    window.dispatchEvent(new Event('online'));
    await delivered;
    expect(t.seen.map(s => [s.method, s.headers['idempotency-key']])).to.deep.equal([
      ['POST', 'k1'],
      ['POST', 'k1'],
    ]);
    expect(t.seen[1]!.headers['X-Persona-Chat-Resend']).to.match(/^\d+$/);
    expect(t.events.map(event => event.type)).to.deep.equal(['reconnecting', 'accepted', 'done']);
  });

  it('ends on an error the service gave, tells it once, and sends nothing again', async () => {
    const t = turn(() =>
      stream([meta(), frame('error', { code: 'upstream_error', message: 'Refused.', retryable: true })]),
    );
    await deliver(t.handle, 'c1', t.options);
    expect(t.failures.map(error => [error.code, error.retryable])).to.deep.equal([['upstream_error', true]]);
    expect(t.seen).to.have.length(1);
    expect(t.events.map(event => event.type)).to.deep.equal(['accepted']);
  });

  it('throws a refusal that came before the backend took the message, without sending it again', async () => {
    const t = turn(() => envelope('invalid_request', 400, false));
    const error = await deliver(t.handle, 'c1', t.options).catch((e: unknown) => e);
    expect(error).to.be.instanceOf(PersonaChatError);
    expect((error as PersonaChatError).code).to.equal('invalid_request');
    expect(t.seen).to.have.length(1);
    expect(t.accepted()).to.equal(0);
  });

  it('sends the message again when the run it follows was forgotten by the backend', async () => {
    const t = turn(
      () => envelope('run_not_found', 404, false),
      () => stream([meta(), done('1-0')]),
    );
    const delivered = deliver(t.handle, 'c1', t.options, true);
    await waitUntil(() => t.events.some(event => event.type === 'reconnecting'), 'the turn shows it reconnects');
    window.dispatchEvent(new Event('online'));
    await delivered;
    expect(t.seen.map(s => [s.method, s.path])).to.deep.equal([
      ['GET', '/conversations/c1/runs/k1/events'],
      ['POST', '/conversations/c1/messages'],
    ]);
  });

  it('rejects with an AbortError when the turn is aborted, and sends nothing more', async () => {
    const t = turn(() => stream([meta(), frame('delta', { text: 'Hi' }, '1-0')], false));
    const delivered = deliver(t.handle, 'c1', t.options).catch((e: unknown) => e);
    await waitUntil(() => t.events.some(event => event.type === 'delta'), 'the reply has begun');
    t.handle.abort.abort();
    expect(isAbort(await delivered)).to.equal(true);
    expect(t.seen).to.have.length(1);
  });
});
