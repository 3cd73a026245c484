// One reply stream read on its own. A scripted fetch stands in for the backend here: these cases (a 200 that is not a
// stream, a body that ends before its terminal event, an event that is not JSON, a connection cut mid-stream) are
// ones the real backend does not produce on demand. The element's suites (turns, resume) read the real backend's.
import { expect } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { replyKit } from '../../src/element/controller.js';
import { PersonaChatError } from '../../src/element/errors.js';
import type { FetchLike } from '../../src/element/session.js';
import { readStream, use } from '../../src/element/stream.js';
import { isAbort } from '../../src/element/turn.js';
import { body, eventStream, frame } from './scripted-backend.js';

// The chunk is given the chat's code, as the controller gives it when it loads the chunk.
use(replyKit);

const url = '/persona-chat/conversations/c1/messages';
const init = {
  method: 'POST',
  headers: { 'content-type': 'application/json', authorization: 'Bearer t1' },
  body: JSON.stringify({ message: 'Do you rent tents?' }),
};

/** A fetch that answers every request with `answer`, and records what it was asked. */
function scripted(answer: (signal: AbortSignal) => Response | Promise<Response>) {
  const calls: { url: string; init: RequestInit }[] = [];
  const fetch: FetchLike = async (input, requestInit = {}) => {
    calls.push({ url: String(input), init: requestInit });
    return answer(requestInit.signal!);
  };
  return { fetch, calls };
}

/** Handlers that note what they are called with; `done` and `error` are terminal, as the backend's are. */
function recorder() {
  const log: string[] = [];
  const handlers = {
    open: () => void log.push('open'),
    event(name: string, data: unknown, id: string | null) {
      log.push(`${name} ${JSON.stringify(data)} ${id}`);
      return name === 'done' || name === 'error';
    },
  };
  return { log, handlers };
}

/** Reads a stream to its end: resolves with what readStream resolved with, or with what it threw. */
const settle = (promise: Promise<boolean>) => promise.catch((error: unknown) => error);

describe('readStream', () => {
  it('resolves true for a stream with its terminal event, handing on each named event up to it', async () => {
    const reply = body(
      frame('meta', { conversationId: 'c1', key: 'k1', attempt: 1 }),
      ': keep-alive\n\n',
      frame('delta', { text: 'Yes' }, '1-1'),
      'data: {"unnamed": true}\n\n',
      frame('citations', { citations: [] }, '1-2'),
      frame('done', { messageId: 'm1', runId: 'r1', finishReason: 'stop', usage: null }, '1-3'),
      frame('delta', { text: ' and more' }, '1-4'),
    );
    reply.end();
    const { fetch, calls } = scripted(() => eventStream(reply.stream));
    const { log, handlers } = recorder();
    expect(await readStream(url, init, fetch, new AbortController().signal, handlers)).to.equal(true);
    expect(log).to.deep.equal([
      'open',
      'meta {"conversationId":"c1","key":"k1","attempt":1} null',
      'delta {"text":"Yes"} 1-1',
      'citations {"citations":[]} 1-2',
      'done {"messageId":"m1","runId":"r1","finishReason":"stop","usage":null} 1-3',
    ]);
    expect(calls.length).to.equal(1);
    expect(calls[0]!.url).to.equal(url);
    expect([calls[0]!.init.method, calls[0]!.init.body]).to.deep.equal([init.method, init.body]);
    expect(calls[0]!.init.headers).to.include({ ...init.headers, accept: 'text/event-stream' });
  });

  it('calls open as soon as the stream is open, before any event came', async () => {
    const reply = body();
    const { fetch } = scripted(() => eventStream(reply.stream));
    const { log, handlers } = recorder();
    const reading = readStream(url, init, fetch, new AbortController().signal, handlers);
    await waitUntil(() => log.length > 0, 'the stream to open');
    expect(log).to.deep.equal(['open']);
    reply.push(frame('done', { messageId: 'm1', runId: 'r1', finishReason: 'stop', usage: null }, '1-1'));
    reply.end();
    expect(await reading).to.equal(true);
    expect(log.filter(entry => entry === 'open').length).to.equal(1);
  });

  it('resolves false when the stream ends without its terminal event', async () => {
    const reply = body(
      frame('meta', { conversationId: 'c1', key: 'k1', attempt: 1 }),
      frame('delta', { text: 'Ye' }, '1-1'),
    );
    reply.end();
    const { fetch, calls } = scripted(() => eventStream(reply.stream));
    const { log, handlers } = recorder();
    expect(await readStream(url, init, fetch, new AbortController().signal, handlers)).to.equal(false);
    expect(log.at(-1)).to.equal('delta {"text":"Ye"} 1-1');
    expect(calls.length, 'not asked again').to.equal(1);
  });

  it('rejects with bad_response when a 200 answer is not a stream, and never opens', async () => {
    for (const answer of [
      () => Response.json({ messageId: 'm1', content: 'Yes.' }),
      () => new Response('<html>Welcome</html>', { headers: { 'content-type': 'text/html' } }),
    ]) {
      const { fetch, calls } = scripted(answer);
      const { log, handlers } = recorder();
      const error = (await settle(
        readStream(url, init, fetch, new AbortController().signal, handlers),
      )) as PersonaChatError;
      expect(error).to.be.instanceOf(PersonaChatError);
      expect([error.code, error.retryable]).to.deep.equal(['bad_response', true]);
      expect(log).to.deep.equal([]);
      expect(calls.length, 'not asked again').to.equal(1);
    }
  });

  it('rejects with the error an error status stands for, and never opens', async () => {
    const cases: [() => Response, string, boolean, number][] = [
      [
        () =>
          Response.json(
            { error: { code: 'rate_limited', message: 'Slow down.', retryable: true, requestId: 'r' } },
            { status: 429 },
          ),
        'rate_limited',
        true,
        429,
      ],
      [
        () =>
          Response.json(
            { error: { code: 'conversation_not_found', message: 'No.', retryable: false, requestId: 'r' } },
            { status: 404 },
          ),
        'conversation_not_found',
        false,
        404,
      ],
      [() => new Response('Bad Gateway', { status: 502 }), 'network_error', true, 502],
    ];
    for (const [answer, code, retryable, status] of cases) {
      const { fetch, calls } = scripted(answer);
      const { log, handlers } = recorder();
      const error = (await settle(
        readStream(url, init, fetch, new AbortController().signal, handlers),
      )) as PersonaChatError;
      expect(error).to.be.instanceOf(PersonaChatError);
      expect([error.code, error.retryable, error.status]).to.deep.equal([code, retryable, status]);
      expect(log).to.deep.equal([]);
      expect(calls.length, 'not asked again').to.equal(1);
    }
  });

  it('rejects with bad_response at an event whose data is not JSON, and closes the stream', async () => {
    const { fetch, calls } = scripted(() =>
      eventStream(
        body(
          frame('delta', { text: 'Yes' }, '1-1'),
          'event: delta\nid: 1-2\ndata: {"text": "unfinished\n\n',
          frame('done', { messageId: 'm1', runId: 'r1', finishReason: 'stop', usage: null }, '1-3'),
        ).stream,
      ),
    );
    const { log, handlers } = recorder();
    const error = (await settle(
      readStream(url, init, fetch, new AbortController().signal, handlers),
    )) as PersonaChatError;
    expect(error).to.be.instanceOf(PersonaChatError);
    expect([error.code, error.retryable]).to.deep.equal(['bad_response', true]);
    expect(log).to.deep.equal(['open', 'delta {"text":"Yes"} 1-1']);
    expect(calls[0]!.init.signal!.aborted, 'the request is given up, and its connection with it').to.equal(true);
  });

  it('rejects with network_error when the backend cannot be reached or the stream is cut', async () => {
    const unreachable = scripted(() => Promise.reject(new TypeError('Failed to fetch')));
    const failed = (await settle(
      readStream(url, init, unreachable.fetch, new AbortController().signal, recorder().handlers),
    )) as PersonaChatError;
    expect(failed).to.be.instanceOf(PersonaChatError);
    expect([failed.code, failed.retryable]).to.deep.equal(['network_error', true]);
    expect(unreachable.calls.length, 'not asked again').to.equal(1);

    const reply = body(frame('delta', { text: 'Yes' }, '1-1'));
    const { fetch, calls } = scripted(() => eventStream(reply.stream));
    const { log, handlers } = recorder();
    const reading = settle(readStream(url, init, fetch, new AbortController().signal, handlers));
    await waitUntil(() => log.length === 2, 'the first event');
    reply.cut();
    const cut = (await reading) as PersonaChatError;
    expect([cut.code, cut.retryable]).to.deep.equal(['network_error', true]);
    expect(log).to.deep.equal(['open', 'delta {"text":"Yes"} 1-1']);
    expect(calls.length, 'not asked again').to.equal(1);
  });

  it('rejects with an AbortError when its signal aborts, whenever that is, and asks nothing once aborted', async () => {
    // Aborted before it starts: nothing is asked.
    const idle = scripted(() => eventStream(body().stream));
    expect(isAbort(await settle(readStream(url, init, idle.fetch, AbortSignal.abort(), recorder().handlers)))).to.equal(
      true,
    );
    expect(idle.calls.length).to.equal(0);

    // Aborted while the request waits for an answer: the request is aborted too, and the stream never opens.
    const waiting = new AbortController();
    const slow = scripted(
      signal =>
        new Promise<Response>((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(new DOMException('The request was aborted.', 'AbortError'))),
        ),
    );
    const before = recorder();
    const unanswered = settle(readStream(url, init, slow.fetch, waiting.signal, before.handlers));
    await waitUntil(() => slow.calls.length === 1, 'the request to go out');
    waiting.abort();
    expect(isAbort(await unanswered)).to.equal(true);
    expect(slow.calls[0]!.init.signal!.aborted).to.equal(true);
    expect(before.log).to.deep.equal([]);

    // Aborted while the stream is open: the request is aborted, and no later event is handed on.
    const streaming = new AbortController();
    const reply = body(frame('delta', { text: 'Yes' }, '1-1'));
    const open = scripted(signal => {
      signal.addEventListener('abort', () => reply.cut(new DOMException('The request was aborted.', 'AbortError')));
      return eventStream(reply.stream);
    });
    const during = recorder();
    const reading = settle(readStream(url, init, open.fetch, streaming.signal, during.handlers));
    await waitUntil(() => during.log.length === 2, 'the first event');
    streaming.abort();
    expect(isAbort(await reading)).to.equal(true);
    expect(open.calls[0]!.init.signal!.aborted).to.equal(true);
    expect(during.log).to.deep.equal(['open', 'delta {"text":"Yes"} 1-1']);
  });
});
