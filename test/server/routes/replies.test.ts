import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { ConversationDetail, ErrorEnvelope, MessageReply } from '../../../src/protocol.js';
import { outcomesOf } from '../../../src/server/annotations.js';
import { events, parseEvents, setup, textOfEvents, transcript } from '../../support/backend.js';
import type { Event } from '../../support/backend.js';
import { apiKey } from '../../support/service.js';
import { until } from '../../support/until.js';

const question = 'How long does shipping take?';

/** A stand-in for an OpenAI-compatible model, in-process: it streams the pieces given. */
function modelSaying(pieces: string[]) {
  return async () => {
    const frames = pieces.map(
      content => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`,
    );
    return new Response(frames.join('') + 'data: [DONE]\n\n', { headers: { 'content-type': 'text/event-stream' } });
  };
}

/** Reads a stream body until `count` events have arrived, then hands back the reader to go on with. */
async function readEvents(response: Response, count: number) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (parseEvents(text.slice(0, text.lastIndexOf('\n\n') + 2)).length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  return { reader, seen: parseEvents(text.slice(0, text.lastIndexOf('\n\n') + 2)) };
}

/** The frames of an SSE body with their ids, data left as sent; comments are left out. */
const framesOf = (text: string) =>
  text
    .split('\n\n')
    .filter(block => block.trim() && !block.startsWith(':'))
    .map(block => {
      const field = (name: string) => block.match(new RegExp(`^${name}: (.*)$`, 'm'))?.[1] ?? null;
      return { id: field('id'), event: field('event'), data: field('data') };
    });

/** The promise's value, or 'late' when it has not settled within `ms` (it is then left behind). */
const within = <T>(promise: Promise<T>, ms: number) => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>(resolve => (timer = setTimeout(resolve, ms, 'late')));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
};

const normalized = (list: Event[]) =>
  list.map(e =>
    e.event === 'meta'
      ? { event: 'meta' }
      : e.event === 'done'
        ? { event: 'done', finishReason: e.data.finishReason, hasIds: Boolean(e.data.messageId && e.data.runId) }
        : e.event === 'citations'
          ? { event: 'citations', documents: e.data.citations.map(c => c.documentId) }
          : e,
  );

describe('backend replies', () => {
  after(() => {
    assert.deepEqual(
      transcript.filter(text => text.includes(apiKey)),
      [],
      'the API key appears in no response, header, SSE frame or log line',
    );
  });

  it('streams meta at once, then deltas, citations and exactly one done, with no-buffering headers', async () => {
    const { session, conversation, send, emulator } = setup();
    const { token } = await session();
    const id = await conversation(token);
    const res = await send(token, id, question);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'no-cache, no-transform');
    assert.equal(res.headers.get('x-accel-buffering'), 'no');
    assert.equal(res.headers.get('content-encoding'), null);
    assert.match(res.headers.get('x-request-id') ?? '', /^[\w-]+$/, 'the request id, as on every answer');
    assert.deepEqual(res.headers.get('vary')!.split(/,\s*/), ['Origin'], 'Vary: Origin, once');
    const text = await res.text();
    const list = parseEvents(text);
    assert.equal(list[0]!.event, 'meta');
    assert.deepEqual(list[0]!.data, {
      conversationId: id,
      key: list[0]!.event === 'meta' && list[0]!.data.key,
      attempt: 1,
      ping: 15_000,
    });
    const ids = [...text.matchAll(/^id: (.*)$/gm)].map(m => m[1]);
    assert.equal(ids.length, list.length - 1, 'every event but meta has an id');
    assert.equal(new Set(ids).size, ids.length, 'ids are unique');
    // The emulator at full speed sends its reply in one go: the text of each read from it is one delta.
    const deltas = list.filter(e => e.event === 'delta');
    assert.ok(deltas.length >= 1, 'the reply has text');
    assert.ok(
      deltas.every(e => e.event === 'delta' && e.data.text.length > 0),
      'no delta is empty',
    );
    assert.deepEqual(
      list.map(e => e.event).filter((e, i, all) => e !== all[i - 1]),
      ['meta', 'delta', 'citations', 'done'],
    );
    const done = list.at(-1)!;
    assert.equal(done.event, 'done');
    const stored = emulator.store.get(id)!.chatMessages!;
    assert.equal(textOfEvents(list), stored[1]!.content);
    assert.equal(done.event === 'done' && done.data.messageId, stored[1]!.messageId);
    assert.equal(done.event === 'done' && done.data.finishReason, 'stop');
  });

  it('answers Accept: application/json with the whole reply', async () => {
    const { session, conversation, send } = setup();
    const { token } = await session();
    const id = await conversation(token);
    const res = await send(token, id, question, { accept: 'application/json' });
    const reply = (await res.json()) as MessageReply;
    assert.match(reply.content, /3 to 5 business days/);
    assert.equal(reply.finishReason, 'stop');
    assert.equal(reply.citations[0]?.documentId, 'shipping');
    assert.match(reply.messageId!, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      Object.keys(reply).sort(),
      ['citations', 'content', 'finishReason', 'messageId', 'runId'],
      'no token counts',
    );
  });

  it('tells the token counts on done, replayed, and in the JSON reply with exposeUsage', async () => {
    const { session, conversation, send, api, emulator } = setup({ backend: { exposeUsage: true } });
    const { token } = await session();
    const id = await conversation(token);
    const key = crypto.randomUUID();
    const streamed = (await events(await send(token, id, question, { key }))).at(-1)!;
    const replayed = (await events(await api('GET', `/conversations/${id}/runs/${key}/events`, token))).at(-1)!;
    const reply = (await (
      await send(token, id, 'What is your returns policy?', { accept: 'application/json' })
    ).json()) as MessageReply;
    assert.equal(streamed.event, 'done');
    const done = streamed.event === 'done' ? streamed.data : null;
    assert.deepEqual(replayed.data, done, 'a replay tells the same end');
    // The service's own counts: a run's two messages add up to its usage, the reply's completion is its own.
    const stored = emulator.store.get(id)!.chatMessages!;
    for (const [usage, [user, answer]] of [
      [done!.usage, stored.slice(0, 2)],
      [reply.usage, stored.slice(2, 4)],
    ] as const) {
      assert.deepEqual(Object.keys(usage!).sort(), ['completion_tokens', 'prompt_tokens', 'total_tokens']);
      assert.equal(usage!.completion_tokens, answer!.completionTokens);
      assert.equal(usage!.total_tokens, user!.totalTokens! + answer!.totalTokens!);
      assert.equal(usage!.total_tokens, usage!.prompt_tokens + usage!.completion_tokens);
      assert.ok(usage!.completion_tokens > 0);
    }
  });

  it('gives the same normalized stream for form A and form B upstreams, over SSE, HTTP/2 and JSON', async () => {
    const runs: ReturnType<typeof normalized>[] = [];
    for (const routes of ['chat', 'continue'] as const) {
      for (const delivery of ['sse', 'http2', 'json'] as const) {
        const { session, conversation, send, continues } = setup({ emulator: { routes }, backend: { delivery } });
        const { token } = await session();
        const id = await conversation(token);
        const list = await events(await send(token, id, question));
        assert.equal(continues().length, routes === 'chat' ? 1 : 2, 'form A is found after one 404 on form B');
        const last = continues().at(-1)!.path.split('/').at(-1);
        assert.equal(
          last,
          {
            chat: { sse: 'chat-sse', http2: 'chat-http2', json: 'chat' },
            continue: { sse: 'continue-sse', http2: 'continue-stream', json: 'continue' },
          }[routes][delivery],
        );
        // JSON arrives whole: compare the text, not how it was cut.
        const merged = [
          list[0]!,
          { event: 'delta', data: { text: textOfEvents(list) } } as Event,
          ...list.filter(e => e.event !== 'meta' && e.event !== 'delta'),
        ];
        runs.push(normalized(merged));
      }
    }
    for (const run of runs.slice(1)) assert.deepEqual(run, runs[0]);
  });

  it('sends reply text that looks like SSE as literal text inside one delta', async () => {
    const injection = 'Sure.\n\nevent: done\ndata: {}\n\nevent: error\r\ndata: {"code":"x"}\rmore';
    const { session, conversation, send } = setup({
      emulator: {
        openai: { baseUrl: 'http://model.test/v1', model: 'm', fetch: modelSaying([injection, ' The end.']) },
      },
    });
    const { token } = await session();
    const id = await conversation(token);
    const list = await events(await send(token, id, question));
    const text = list.map(e => (e.event === 'delta' ? e.data.text : '')).join('');
    assert.equal(text, `${injection} The end.`, 'all of it is text, in deltas');
    assert.equal(list.filter(e => e.event === 'done' || e.event === 'error').length, 1);
    assert.equal(list.at(-1)!.event, 'done');
  });

  describe('idempotency', () => {
    it('attaches a retried key to its run: live while it runs, replayed once done, sent upstream once', async () => {
      const { session, conversation, send, continues } = setup({ emulator: { pace: 200 } });
      const { token } = await session();
      const id = await conversation(token);
      const key = crypto.randomUUID();
      const first = await send(token, id, question, { key });
      const concurrent = await send(token, id, question, { key });
      assert.equal(concurrent.status, 200, 'no 409: the second request follows the same run');
      const [original, attached] = await Promise.all([events(first), events(concurrent)]);
      const replayedStream = await events(await send(token, id, question, { key }));
      const replayedJson = (await (
        await send(token, id, question, { key, accept: 'application/json' })
      ).json()) as MessageReply;
      assert.equal(continues().length, 1, 'one upstream continue');
      assert.deepEqual(attached, original);
      assert.deepEqual(replayedStream, original);
      assert.equal(replayedJson.content, textOfEvents(original));
      const other = await events(await send(token, id, question));
      assert.equal(other.at(-1)!.event, 'done');
      assert.equal(continues().length, 2, 'a new key is a new message');
    });

    it('refuses a key sent again with another message', async () => {
      const { session, conversation, send } = setup();
      const { token } = await session();
      const id = await conversation(token);
      const key = crypto.randomUUID();
      await events(await send(token, id, question, { key }));
      const other = await send(token, id, 'Something else', { key });
      assert.equal(other.status, 409);
      assert.equal(((await other.json()) as ErrorEnvelope).error.code, 'duplicate_request');
    });

    it('lets a failed message be retried with the same key', async () => {
      const { session, conversation, send, continues, emulator } = setup();
      const { token } = await session();
      const id = await conversation(token);
      emulator.faults.set({ cut: { afterChunks: 3, count: 1 } });
      const key = crypto.randomUUID();
      const failed = await events(await send(token, id, question, { key }));
      assert.equal(failed.at(-1)!.event, 'error');
      const retried = await events(await send(token, id, question, { key }));
      assert.equal(retried.at(-1)!.event, 'done');
      assert.equal(continues().length, 2);
      assert.equal(emulator.store.get(id)!.chatMessagesCount, 2, 'the message is stored once');
    });

    it('scopes keys to the visitor', async () => {
      const { session, conversation, send, continues } = setup();
      const a = await session();
      const b = await session();
      const key = crypto.randomUUID();
      await events(await send(a.token, await conversation(a.token), question, { key }));
      await events(await send(b.token, await conversation(b.token), question, { key }));
      assert.equal(continues().length, 2);
    });
  });

  describe('limits', () => {
    it('limits messages per user a minute, with Retry-After', async () => {
      const { session, conversation, send } = setup({ backend: { limits: { messagesPerUserPerMinute: 2 } } });
      const { token } = await session();
      const id = await conversation(token);
      for (let i = 0; i < 2; i++) await events(await send(token, id, question));
      const refused = await send(token, id, question);
      assert.equal(refused.status, 429);
      assert.equal(((await refused.json()) as ErrorEnvelope).error.code, 'rate_limited');
      const wait = Number(refused.headers.get('retry-after'));
      assert.ok(wait >= 1 && wait <= 60);
      const other = await session();
      const allowed = await send(other.token, await conversation(other.token), question);
      assert.equal(allowed.status, 200, 'another user is not limited');
      await allowed.body!.cancel();
    });

    it('limits messages per IP, reading X-Forwarded-For only through the trusted proxies, and not its forged left end', async () => {
      const { session, conversation, api } = setup({
        backend: { trustProxy: 1, limits: { messagesPerIpPerMinute: 2 } },
      });
      const sendFrom = async (forwardedFor: string) => {
        const { token } = await session();
        const id = await conversation(token);
        return api('POST', `/conversations/${id}/messages`, token, {
          body: { message: question },
          headers: {
            'idempotency-key': crypto.randomUUID(),
            accept: 'application/json',
            'x-forwarded-for': forwardedFor,
          },
        });
      };
      assert.equal((await sendFrom('198.51.100.7')).status, 200);
      assert.equal((await sendFrom('203.0.113.1, 198.51.100.7')).status, 200);
      const third = await sendFrom('203.0.113.99, 198.51.100.7');
      assert.equal(third.status, 429, 'new visitors and a forged left end do not make a fresh bucket');
      assert.equal((await sendFrom('192.0.2.5')).status, 200, 'another address has its own bucket');
    });

    it('limits replies in progress per user, and frees the slot when a reply ends or is stopped', async () => {
      const { session, conversation, send, api } = setup({
        emulator: { pace: 100 },
        backend: { limits: { concurrentStreamsPerUser: 1 } },
      });
      const { token } = await session();
      const id = await conversation(token);
      const key = crypto.randomUUID();
      const controller = new AbortController();
      const first = await send(token, id, question, { key, signal: controller.signal });
      const second = await send(token, id, question);
      assert.equal(second.status, 429);
      assert.equal(second.headers.get('retry-after'), '1');
      const { reader } = await readEvents(first, 3);
      // The browser goes away: the reply goes on, and keeps its slot.
      controller.abort();
      void reader.cancel();
      assert.equal((await send(token, id, 'membership')).status, 429, 'a reply nobody watches still counts');
      const stopped = await api('POST', `/conversations/${id}/runs/${key}/stop`, token);
      assert.equal(stopped.status, 202);
      const followed = await events(await api('GET', `/conversations/${id}/runs/${key}/events`, token));
      const done = followed.at(-1)!;
      assert.equal(done.event === 'done' && done.data.finishReason, 'stopped');
      const third = await send(token, id, 'membership');
      assert.equal(third.status, 200, 'a stopped reply frees its slot');
      await events(third);
      const fourth = await send(token, id, 'membership');
      assert.equal(fourth.status, 200, 'a finished reply frees its slot');
      await events(fourth);
    });
  });

  describe('HEAD on a run’s events', () => {
    it('answers with the stream’s headers alone, at once, while the run goes on', async () => {
      const { session, conversation, send, api, logs } = setup({ emulator: { pace: 100 } });
      const { token } = await session();
      const id = await conversation(token);
      const key = crypto.randomUUID();
      const res = await send(token, id, question, { key });
      const { reader } = await readEvents(res, 2);
      const head = await api('HEAD', `/conversations/${id}/runs/${key}/events`, token);
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(await head.text(), '');
      // Its log line is written as the answer goes, not when the run ends: nothing was left following the run.
      await until(() => logs.some(line => line.method === 'HEAD'), 'the HEAD request’s log line');
      assert.ok(!logs.some(line => line.method === 'POST' && line.path.endsWith('/messages')), 'the reply goes on');
      // The same checks as a GET: a run that is not there, another visitor's, a key that is no key.
      const missing = await api('HEAD', `/conversations/${id}/runs/${crypto.randomUUID()}/events`, token);
      assert.equal(missing.status, 404, 'a run that is not there');
      const stranger = await session();
      const theirs = await api('HEAD', `/conversations/${id}/runs/${key}/events`, stranger.token);
      assert.equal(theirs.status, 404, 'another visitor’s run');
      assert.equal((await api('HEAD', `/conversations/${id}/runs/bad%20key/events`, token)).status, 400, 'a bad key');
      while (!(await reader.read()).done);
      assert.equal(logs.find(line => line.method === 'POST' && line.path.endsWith('/messages'))?.outcome, 'done');
    });
  });

  describe('failures', () => {
    it('keeps reading the service when the browser goes away, so the service keeps the reply', async () => {
      const { session, conversation, send, continues, emulator, api } = setup({ emulator: { pace: 100 } });
      const { token } = await session();
      const id = await conversation(token);
      const controller = new AbortController();
      const key = crypto.randomUUID();
      const res = await send(token, id, question, { key, signal: controller.signal });
      const { reader, seen } = await readEvents(res, 3);
      assert.deepEqual(
        seen.map(e => e.event),
        ['meta', 'delta', 'delta'],
      );
      // The browser goes away: its request is aborted. (Cancelling a tee'd body waits for the other branch.)
      controller.abort();
      void reader.cancel();
      // The upstream request ends once the reply is whole, never before: what the service holds when it ends says.
      const { signal } = continues()[0]!;
      assert.equal(signal.aborted, false, 'the upstream request goes on');
      let heldAtEnd: number | undefined;
      signal.addEventListener('abort', () => (heldAtEnd = emulator.store.get(id)!.chatMessagesCount));
      const rest = await events(await api('GET', `/conversations/${id}/runs/${key}/events`, token));
      assert.equal(rest.at(-1)!.event, 'done');
      assert.ok(heldAtEnd === undefined || heldAtEnd === 2, `the upstream request ended early (${heldAtEnd})`);
      assert.equal(emulator.store.get(id)!.chatMessagesCount, 2, 'the service stored the run');
    });

    it('ends a stream the connection to the service cuts as interrupted, which can be asked again', async () => {
      const { session, conversation, send, emulator } = setup();
      const { token } = await session();
      const id = await conversation(token);
      emulator.faults.set({ cut: { afterChunks: 4 } });
      const list = await events(await send(token, id, question));
      assert.deepEqual(list.at(-1), {
        event: 'error',
        data: { code: 'interrupted', message: 'The reply was interrupted before it was complete.', retryable: true },
      });
      assert.equal(list.filter(e => e.event === 'done' || e.event === 'error').length, 1);
      const textOf = (events: typeof list) => events.map(e => (e.event === 'delta' ? e.data.text : '')).join('');
      const arrived = textOf(list);
      emulator.faults.reset();
      const whole = textOf(await events(await send(token, await conversation(token), question)));
      assert.ok(arrived.length > 0 && whole.startsWith(arrived), 'what arrived stays: the start of the reply');
      assert.ok(arrived.length < whole.length, 'the rest did not arrive');
    });

    it('ends a stream the service leaves idle with a timeout error event', async () => {
      const { session, conversation, send, emulator } = setup({
        backend: { timeouts: { idleMs: 80, firstByteMs: 80 } },
      });
      const { token } = await session();
      const id = await conversation(token);
      emulator.faults.set({ chunkDelayMs: 300 });
      const list = await events(await send(token, id, question));
      assert.deepEqual(list.at(-1), {
        event: 'error',
        data: {
          code: 'upstream_timeout',
          message: 'The conversation service took too long to answer.',
          retryable: true,
        },
      });
    });

    it('answers a service error before the first byte with a 502 envelope, without its body', async () => {
      const { session, conversation, send, emulator, logs } = setup();
      const { token } = await session();
      const id = await conversation(token);
      emulator.faults.set({ status: { code: 500, count: 1, on: 'continue' } });
      const res = await send(token, id, question);
      assert.equal(res.status, 502);
      const body = (await res.json()) as ErrorEnvelope;
      assert.equal(body.error.code, 'upstream_error');
      assert.equal(body.error.retryable, true);
      assert.ok(!JSON.stringify(body).includes('injected'), 'nothing the service said');
      const line = logs.find(l => l.status === 502)!;
      assert.equal(line.code, 'upstream_error');
      assert.match(line.detail!, /^ServiceError: /, 'the log, not the browser, says what the service said');
      assert.equal(logs.filter(l => l.requestId === line.requestId).length, 1, 'one line for the request');
      emulator.faults.set({ status: { code: 503, count: 1, on: 'continue' } });
      const busy = await send(token, id, question, { accept: 'application/json' });
      assert.equal(busy.status, 503);
      assert.equal(((await busy.json()) as ErrorEnvelope).error.code, 'upstream_unavailable');
    });

    for (const delivery of ['json', 'sse', 'http2'] as const) {
      it(`answers a page in place of the service's ${delivery} reply with a 502 envelope, never as the reply`, async () => {
        const { session, conversation, send, emulator, continues } = setup({ backend: { delivery } });
        const { token } = await session();
        const id = await conversation(token);
        emulator.faults.set({ html: { count: 2, on: 'continue' } });
        const key = crypto.randomUUID();
        for (const accept of ['application/json', 'text/event-stream']) {
          const res = await send(token, id, question, { key, accept });
          const text = await res.text();
          assert.equal(res.status, 502, text);
          const body = JSON.parse(text) as ErrorEnvelope;
          assert.equal(body.error.code, 'upstream_error');
          assert.equal(body.error.retryable, true);
          assert.ok(!text.includes('Bad Gateway'), 'nothing of the page reaches the browser');
        }
        assert.equal(continues().length, 2, 'the page came twice');
        const reply = await send(token, id, question, { key, accept: 'application/json' });
        assert.equal(reply.status, 200, 'the same key is answered once the service is');
        assert.match(((await reply.json()) as MessageReply).content, /business days/);
      });
    }

    it('logs a whole reply whose browser went away as client_closed, not as a failure', async () => {
      let reached = () => {};
      const reachedService = new Promise<void>(resolve => (reached = resolve));
      const harness = setup({
        emulator: { faults: { chunkDelayMs: 50 } },
        backend: {
          fetch: (input, init) => {
            const request = new Request(input, init);
            if (new URL(request.url).pathname.endsWith('/chat-sse')) reached();
            return harness.emulator.fetch(request);
          },
        },
      });
      const { session, conversation, send, logs, backend } = harness;
      try {
        const { token } = await session();
        const id = await conversation(token);
        const controller = new AbortController();
        const whole = send(token, id, question, { accept: 'application/json', signal: controller.signal });
        await reachedService;
        controller.abort();
        assert.equal((await whole).status, 499);
        const line = logs.at(-1)!;
        assert.deepEqual(
          { path: line.path, status: line.status, level: line.level, code: line.code, detail: line.detail },
          {
            path: `/persona-chat/conversations/${id}/messages`,
            status: 499,
            level: 'warn',
            code: 'client_closed',
            detail: undefined,
          },
        );
      } finally {
        backend.close();
      }
    });

    it('keeps an idle stream open with : ping comments', async () => {
      const { session, conversation, send, emulator } = setup({ backend: { pingIntervalMs: 20 } });
      const { token } = await session();
      const id = await conversation(token);
      emulator.faults.set({ chunkDelayMs: 30 });
      const text = await (await send(token, id, 'membership')).text();
      assert.ok(text.includes('\n\n: ping\n\n') || text.startsWith(': ping'), 'a ping comment');
      assert.equal(parseEvents(text).at(-1)!.event, 'done');
    });
  });

  describe('runs', () => {
    const detail = async (api: ReturnType<typeof setup>['api'], token: string, id: string) =>
      (await (await api('GET', `/conversations/${id}`, token)).json()) as ConversationDetail;

    it('lists a running reply in its conversation, with the message and the text so far, until the service holds it', async () => {
      const { session, conversation, send, api } = setup({ emulator: { pace: 100 } });
      const { token } = await session();
      const id = await conversation(token);
      const key = crypto.randomUUID();
      const { reader, seen } = await readEvents(await send(token, id, question, { key }), 4);
      void reader.cancel();
      const during = await detail(api, token, id);
      assert.deepEqual(during.messages, []);
      assert.equal(during.runs.length, 1);
      const [run] = during.runs;
      assert.equal(run!.key, key);
      assert.equal(run!.message, question);
      assert.equal(run!.status, 'running');
      assert.ok(run!.content.startsWith(textOfEvents(seen)), 'at least what the browser saw');
      assert.match(run!.lastEventId!, /^\d+-\d+$/);
      const rest = await events(await api('GET', `/conversations/${id}/runs/${key}/events`, token));
      assert.equal(rest.at(-1)!.event, 'done');
      const after = await detail(api, token, id);
      assert.deepEqual(
        after.messages.map(m => m.role),
        ['user', 'assistant'],
      );
      assert.deepEqual(after.runs, [], 'held by the service now');
    });

    it('lists stopped and failed replies, and retries each as its next attempt', async () => {
      const { session, conversation, send, api, emulator, continues } = setup({ emulator: { pace: 100 } });
      const { token } = await session();
      const id = await conversation(token);
      const stoppedKey = crypto.randomUUID();
      const { reader } = await readEvents(await send(token, id, question, { key: stoppedKey }), 3);
      void reader.cancel();
      assert.equal((await api('POST', `/conversations/${id}/runs/${stoppedKey}/stop`, token)).status, 202);
      await events(await api('GET', `/conversations/${id}/runs/${stoppedKey}/events`, token));
      emulator.faults.set({ status: { code: 500, count: 1, on: 'continue' } });
      const failedKey = crypto.randomUUID();
      assert.equal((await send(token, id, 'membership', { key: failedKey })).status, 502);
      const listed = await detail(api, token, id);
      assert.deepEqual(
        listed.runs.map(r => [r.key, r.status, r.error?.code ?? null]),
        [
          [stoppedKey, 'stopped', null],
          [failedKey, 'failed', 'upstream_error'],
        ],
      );
      assert.ok(listed.runs[0]!.content.length > 0, 'what was written before the stop stays');
      // Neither leaves a message at the service: how each ended is kept with the conversation, in the background.
      const kept = () => outcomesOf(emulator.store.get(id)!.metadata);
      await until(() => kept().size === 2, 'both outcomes kept');
      assert.deepEqual(
        [...kept()].map(([key, { status, code }]) => [key, status, code ?? null]).sort(),
        [
          [stoppedKey, 'stopped', null],
          [failedKey, 'failed', 'upstream_error'],
        ].sort(),
      );
      const retried = await events(await send(token, id, 'membership', { key: failedKey }));
      assert.deepEqual(retried[0]!.data, { conversationId: id, key: failedKey, attempt: 2, ping: 15_000 });
      assert.equal(retried.at(-1)!.event, 'done');
      assert.equal(continues().length, 3);
    });

    it('follows a finished run from its terminal event with that event again, at once', async () => {
      const { session, conversation, send, api, emulator } = setup();
      const { token } = await session();
      const id = await conversation(token);
      const doneKey = crypto.randomUUID();
      const done = framesOf(await (await send(token, id, question, { key: doneKey })).text()).at(-1)!;
      emulator.faults.set({ cut: { afterChunks: 2, count: 1 } });
      const failedKey = crypto.randomUUID();
      const failed = framesOf(await (await send(token, id, 'membership', { key: failedKey })).text()).at(-1)!;
      assert.deepEqual([done.event, failed.event], ['done', 'error']);
      for (const [key, terminal] of [
        [doneKey, done],
        [failedKey, failed],
      ] as const) {
        const res = await api('GET', `/conversations/${id}/runs/${key}/events`, token, {
          headers: { 'last-event-id': terminal.id! },
        });
        assert.equal(res.status, 200);
        // The browser saw the end and lost the connection before it closed: it follows again and gets the end again
        // (a stream without one would be a drop, followed again and again), without waiting for more.
        const text = await within(res.text(), 2000);
        assert.notEqual(text, 'late', `the ${terminal.event} run's stream ended within 2 s`);
        const frames = framesOf(text as string);
        assert.deepEqual(
          frames.map(f => f.event),
          ['meta', terminal.event],
        );
        assert.deepEqual(frames[1], terminal, 'the same event, with its id');
      }
    });

    it('answers 404 for a conversation the service no longer has, and keeps the run failed', async () => {
      const { session, conversation, send, emulator } = setup();
      const { token } = await session();
      const id = await conversation(token);
      emulator.store.clear();
      const res = await send(token, id, question);
      assert.equal(res.status, 404);
      assert.equal(((await res.json()) as ErrorEnvelope).error.code, 'conversation_not_found');
    });

    it('answers the key of a message refused for good the same way again, streamed or whole', async () => {
      const { session, conversation, send, emulator } = setup();
      const { token } = await session();
      const id = await conversation(token);
      emulator.store.clear();
      const key = crypto.randomUUID();
      for (const accept of ['application/json', 'application/json', 'text/event-stream']) {
        const res = await send(token, id, question, { key, accept });
        assert.equal(res.status, 404, accept);
        assert.equal(((await res.json()) as ErrorEnvelope).error.code, 'conversation_not_found');
      }
    });

    it('sends citations of the protocol shape, whatever the service sent', async () => {
      const garbage = [null, { sourceName: { x: 1 }, partitions: 'oops' }, { partitions: [null, { text: 'ok' }] }];
      const emulatorFetch = setup().emulator;
      const { session, conversation, send } = setup({
        backend: {
          fetch: async (input, init) => {
            const response = await emulatorFetch.fetch(new Request(input, init));
            if (!response.headers.get('content-type')?.startsWith('text/event-stream')) return response;
            const text = (await response.text()).replace(
              /"citations":\[.*?\](?=,"prompt_moderations)/,
              `"citations":${JSON.stringify(garbage)}`,
            );
            return new Response(text, response);
          },
        },
      });
      const { token } = await session();
      const list = await events(await send(token, await conversation(token), question));
      const citations = list.find(e => e.event === 'citations');
      assert.deepEqual(citations?.data, { citations: [{}, {}, { partitions: [{ text: 'ok' }] }] });
      assert.equal(list.at(-1)!.event, 'done');
    });

    it("answers bad run requests with a clear 4xx, and 404 for anything not the caller's", async () => {
      const { session, conversation, send, api } = setup();
      const a = await session();
      const b = await session();
      const id = await conversation(a.token);
      const other = await conversation(a.token);
      const key = crypto.randomUUID();
      await events(await send(a.token, id, question, { key }));
      const check = async (res: Response, status: number, code: string) => {
        assert.equal(res.status, status);
        assert.equal(((await res.json()) as ErrorEnvelope).error.code, code);
      };
      const eventsOf = (token: string, conversationId: string, runKey: string, lastEventId?: string) =>
        api('GET', `/conversations/${conversationId}/runs/${runKey}/events`, token, {
          headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId },
        });
      await check(await eventsOf(a.token, id, key, 'yesterday'), 400, 'invalid_request');
      const resent = (age: string) =>
        api('POST', `/conversations/${id}/messages`, a.token, {
          body: { message: question },
          headers: { 'idempotency-key': crypto.randomUUID(), 'x-persona-chat-resend': age, accept: 'application/json' },
        });
      await check(await resent('an hour ago'), 400, 'invalid_request');
      await check(await resent('-5'), 400, 'invalid_request');
      await check(await eventsOf(a.token, id, key, '1-1 event: done'), 400, 'invalid_request');
      await check(await eventsOf(a.token, id, 'no'), 400, 'invalid_request');
      await check(await eventsOf(a.token, id, crypto.randomUUID()), 404, 'run_not_found');
      await check(await eventsOf(a.token, other, key), 404, 'run_not_found');
      await check(await eventsOf(b.token, id, key), 404, 'conversation_not_found');
      await check(await api('POST', `/conversations/${id}/runs/${key}/stop`, b.token), 404, 'conversation_not_found');
      await check(await api('POST', `/conversations/${id}/runs/${key}/stop`, a.token), 409, 'run_finished');
      await check(
        await api('POST', `/conversations/${id}/runs/${crypto.randomUUID()}/stop`, a.token),
        404,
        'run_not_found',
      );
      const replay = await eventsOf(a.token, id, key, '1-1');
      assert.equal(replay.status, 200);
      assert.equal((await events(replay)).at(-1)!.event, 'done');
      await check(
        await api('POST', `/conversations/${id}/messages`, a.token, {
          body: { message: question },
          headers: { 'idempotency-key': key, 'last-event-id': 'x' },
        }),
        400,
        'invalid_request',
      );
    });
  });
});
