import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ServiceClient } from '../../src/service/client.js';
import type { RouteForm } from '../../src/service/client.js';
import { ServiceError } from '../../src/service/errors.js';
import type { StreamChunk } from '../../src/service/types.js';
import { ada, apiKey, collect, inProcess, juniper, origin, textOf } from '../support/service.js';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const doneOf = (chunks: StreamChunk[]) => {
  const done = chunks.at(-1);
  assert.equal(done?.type, 'done', 'a stream ends with done');
  return done as Extract<StreamChunk, { type: 'done' }>;
};

/** Asserts that nothing reachable from an error mentions the API key. */
function assertNoKey(error: unknown) {
  const e = error as ServiceError;
  for (const text of [e.message, String(e), e.stack ?? '', JSON.stringify(e), JSON.stringify(e.toJSON?.())]) {
    assert.ok(!text.includes(apiKey), `the API key leaked into: ${text.slice(0, 200)}`);
  }
}

describe('ServiceClient', () => {
  it('creates general and persona conversations', async () => {
    const { client } = inProcess();
    const general = await client.createConversation({
      system: 'azure-openai',
      model: 'gpt-test',
      externalUserId: 'u1',
    });
    assert.match(general.conversationId, uuidPattern);
    assert.equal(general.aiSystem, 'azure-openai');
    assert.equal(general.model, 'gpt-test');
    assert.equal(general.externalUserId, 'u1');
    const persona = await client.createPersonaConversation({ personaId: juniper.personaId, externalUserId: 'u1' });
    assert.equal(persona.personaId, juniper.personaId);
    assert.equal(persona.personaVersionId, juniper.personaVersionId);
    assert.equal(persona.chatMessagesCount, 0);
  });

  for (const form of ['chat', 'continue'] as RouteForm[]) {
    const paths =
      form === 'chat'
        ? { json: 'PATCH chat', sse: 'PATCH chat-sse', http2: 'PATCH chat-http2' }
        : { json: 'POST continue', sse: 'POST continue-sse', http2: 'POST continue-stream' };

    describe(`with routes: '${form}'`, () => {
      it(`continues with a complete response (${paths.json})`, async () => {
        const { client, received } = inProcess({}, { routes: form });
        const { conversationId } = await client.createPersonaConversation({
          personaId: juniper.personaId,
          externalUserId: 'u',
        });
        const response = await client.continueConversation(conversationId, 'How long does shipping take?');
        const [method, suffix] = paths.json.split(' ');
        assert.deepEqual(received.at(-1), { method, path: `/conversations/${conversationId}/${suffix}` });
        assert.match(response.choices[0]?.message?.content ?? '', /3 to 5 business days/);
        assert.equal(response.citations?.[0]?.documentId, 'shipping');
        assert.match(response.messageId ?? '', uuidPattern);
        assert.equal(
          response.usage?.total_tokens,
          (response.usage?.prompt_tokens ?? 0) + (response.usage?.completion_tokens ?? 0),
        );
      });

      for (const delivery of ['sse', 'http2'] as const) {
        it(`streams a reply over ${delivery} (${paths[delivery]})`, async () => {
          const { client, received } = inProcess({}, { routes: form });
          const { conversationId } = await client.createPersonaConversation({
            personaId: ada.personaId,
            externalUserId: 'u',
          });
          const stream =
            delivery === 'sse'
              ? client.streamSse(conversationId, 'How do I theme the widget?')
              : client.streamHttp2(conversationId, 'How do I theme the widget?');
          const chunks = await collect(stream);
          const [method, suffix] = paths[delivery].split(' ');
          assert.deepEqual(received.at(-1), { method, path: `/conversations/${conversationId}/${suffix}` });
          assert.ok(chunks.filter(c => c.type === 'delta').length > 10, 'the reply arrives word by word');
          const citations = chunks.find(c => c.type === 'citations');
          assert.equal(citations?.type === 'citations' && citations.citations[0]?.documentId, 'theming');
          const done = doneOf(chunks);
          assert.equal(done.finishReason, 'stop');
          assert.deepEqual(
            done.moderation?.categoryResults.map(r => `${r.category} ${r.filtered} ${r.severity}`),
            ['hate false safe', 'self_harm false safe', 'sexual false safe', 'violence false safe'],
            'the moderation results reach the done chunk',
          );
          const stored = await client.getConversation(conversationId);
          assert.equal(stored.chatMessages?.[1]?.content, textOf(chunks));
          assert.equal(stored.chatMessages?.[1]?.messageId, done.messageId);
          assert.equal(stored.chatMessages?.[1]?.conversationRunId, done.runId);
        });
      }
    });
  }

  it("under routes: 'auto', falls back from form B to form A once and remembers", async () => {
    const { client, received } = inProcess({ routes: 'continue' });
    const { conversationId } = await client.createPersonaConversation({
      personaId: juniper.personaId,
      externalUserId: 'u',
    });
    assert.equal(client.routeForm, undefined);
    await collect(client.streamSse(conversationId, 'shipping'));
    assert.deepEqual(
      received.slice(1).map(r => `${r.method} ${r.path.split('/').at(-1)}`),
      ['PATCH chat-sse', 'POST continue-sse'],
    );
    assert.equal(client.routeForm, 'continue');
    await client.continueConversation(conversationId, 'returns');
    assert.deepEqual(
      received.slice(3).map(r => `${r.method} ${r.path.split('/').at(-1)}`),
      ['POST continue'],
    );
  });

  it("under routes: 'auto', uses form B at once when the service has it", async () => {
    const { client, received } = inProcess({ routes: 'chat' });
    const { conversationId } = await client.createPersonaConversation({
      personaId: juniper.personaId,
      externalUserId: 'u',
    });
    await client.continueConversation(conversationId, 'returns');
    assert.deepEqual(
      received.slice(1).map(r => r.method),
      ['PATCH'],
    );
    assert.equal(client.routeForm, 'chat');
  });

  it('yields any delivery as the same chunks through reply()', async () => {
    const { client } = inProcess();
    const { conversationId } = await client.createPersonaConversation({
      personaId: juniper.personaId,
      externalUserId: 'u',
    });
    const texts: string[] = [];
    const moderations: unknown[] = [];
    for (const delivery of ['json', 'sse', 'http2'] as const) {
      const chunks = await collect(client.reply(conversationId, 'What does membership cost?', delivery));
      assert.equal(doneOf(chunks).finishReason, 'stop');
      assert.ok(chunks.some(c => c.type === 'citations'));
      texts.push(textOf(chunks));
      moderations.push(doneOf(chunks).moderation);
    }
    assert.equal(new Set(texts).size, 1, 'every delivery carries the same reply');
    assert.ok(moderations[0], 'a complete response has moderation results');
    assert.deepEqual(moderations.slice(1), [moderations[0], moderations[0]], 'and so does every stream');
  });

  it('lists the organization, one user and one persona, page by page', async () => {
    const { client } = inProcess();
    for (let i = 0; i < 27; i++) {
      await client.createPersonaConversation({
        personaId: i % 3 ? juniper.personaId : ada.personaId,
        externalUserId: `user-${i % 2}`,
      });
    }
    const first = await client.listConversations();
    assert.equal(first.data.length, 10);
    assert.ok(first.continuationToken);
    const second = await client.listConversations({ continuationToken: first.continuationToken });
    assert.notEqual(second.data[0]?.conversationId, first.data[0]?.conversationId);
    const all = await collect(client.allConversations());
    assert.equal(all.length, 27);
    assert.equal(new Set(all.map(c => c.conversationId)).size, 27);
    const user0 = await collect(client.allConversations({ externalUserId: 'user-0' }));
    assert.equal(user0.length, 14);
    assert.ok(user0.every(c => c.externalUserId === 'user-0'));
    const adas = await collect(client.allConversations({ personaId: ada.personaId }));
    assert.equal(adas.length, 9);
    assert.ok(adas.every(c => c.personaId === ada.personaId));
  });

  it('sets active, metadata, name and status, each reflected by a later get', async () => {
    const { client } = inProcess();
    const { conversationId } = await client.createPersonaConversation({
      personaId: ada.personaId,
      externalUserId: 'u',
    });
    assert.equal((await client.setActive(conversationId, false)).isActive, false);
    assert.deepEqual((await client.setMetadata(conversationId, { page: '/pricing' })).metadata, { page: '/pricing' });
    assert.equal(
      (await client.setConversationName(conversationId, 'Pricing questions')).conversationName,
      'Pricing questions',
    );
    assert.equal((await client.setConversationStatus(conversationId, 'closed')).conversationStatus, 'closed');
    const got = await client.getConversation(conversationId);
    assert.equal(got.isActive, false);
    assert.deepEqual(got.metadata, { page: '/pricing' });
    assert.equal(got.conversationName, 'Pricing questions');
    assert.equal(got.conversationStatus, 'closed');
  });

  describe('errors', () => {
    it('gives one ServiceError with status, code and request id, without the API key', async () => {
      const { client } = inProcess({ apiKey: 'another-key' });
      const error = await client.listConversations().catch((e: unknown) => e);
      assert.ok(error instanceof ServiceError);
      assert.equal(error.status, 401);
      assert.equal(error.code, 'unauthorized');
      assert.equal(error.retryable, false);
      assert.match(error.requestId ?? '', uuidPattern);
      assertNoKey(error);
    });

    it('reports a missing conversation as a 404 with its code', async () => {
      const { client } = inProcess();
      const id = crypto.randomUUID();
      await assert.rejects(client.getConversation(id), { status: 404, code: 'conversation_not_found' });
      await assert.rejects(collect(client.streamSse(id, 'hi')), { status: 404, code: 'conversation_not_found' });
    });

    it('marks 429 and 5xx retryable and keeps Retry-After', async () => {
      const { client } = inProcess({ faults: { status: { code: 429, count: 1 } } });
      await assert.rejects(client.listConversations(), { status: 429, retryable: true, retryAfter: 1 });
      const { client: other } = inProcess({ faults: { status: { code: 503, count: 1 } } });
      await assert.rejects(other.listConversations(), { status: 503, code: 'injected_fault', retryable: true });
    });

    it('redacts the API key from a transport failure that repeats it', async () => {
      const client = new ServiceClient({
        baseUrl: origin,
        apiKey,
        fetch: async (_input, init) => {
          throw new TypeError(`socket hang up while sending ${JSON.stringify(init?.headers)}`);
        },
      });
      const error = await client.listConversations().catch((e: unknown) => e);
      assert.ok(error instanceof ServiceError);
      assert.equal(error.code, 'network_error');
      assert.match(error.message, /\[redacted\]/);
      assertNoKey(error);
    });

    it('says what failed under a transport failure that says only "fetch failed", without the key', async () => {
      const client = new ServiceClient({
        baseUrl: origin,
        apiKey,
        fetch: async () => {
          const cause = Object.assign(new Error(`other side closed, key ${apiKey}`), { code: 'UND_ERR_SOCKET' });
          throw new TypeError('fetch failed', { cause });
        },
      });
      const error = await client.listConversations().catch((e: unknown) => e);
      assert.ok(error instanceof ServiceError, 'a ServiceError');
      assert.equal(error.code, 'network_error');
      assert.match(error.message, /fetch failed \(UND_ERR_SOCKET: other side closed, key \[redacted\]\)$/);
      assertNoKey(error);
    });

    it('never follows a redirect, which would send the API key wherever it points', async () => {
      // Real HTTP: a service that redirects, and the place it points at, which must hear nothing.
      const { createServer } = await import('node:http');
      const listen = (server: ReturnType<typeof createServer>) =>
        new Promise<string>(resolve =>
          server.listen(0, '127.0.0.1', () =>
            resolve(`http://127.0.0.1:${(server.address() as { port: number }).port}`),
          ),
        );
      const reached: string[] = [];
      const elsewhere = createServer((req, res) => {
        reached.push(String(req.headers.authorization));
        res.end('{}');
      });
      const target = await listen(elsewhere);
      const service = createServer((_req, res) => res.writeHead(307, { location: `${target}/steal` }).end());
      const baseUrl = await listen(service);
      try {
        const client = new ServiceClient({ baseUrl, apiKey });
        const error = await client.listConversations().catch((e: unknown) => e);
        assert.ok(error instanceof ServiceError, 'a ServiceError');
        assert.equal(error.status, 307);
        assert.deepEqual(reached, [], 'nothing reached where the redirect pointed');
      } finally {
        service.close();
        elsewhere.close();
      }
    });

    it('turns a body that is not JSON into bad_response', async () => {
      const client = new ServiceClient({
        baseUrl: origin,
        apiKey,
        fetch: async () => new Response('<html>oops</html>'),
      });
      await assert.rejects(client.listConversations(), { code: 'bad_response' });
    });

    for (const body of ['null', '"<html>oops</html>"', '[]']) {
      it(`turns JSON that is not an object (${body}) into a retryable bad_response`, async () => {
        const client = new ServiceClient({ baseUrl: origin, apiKey, fetch: async () => new Response(body) });
        for (const call of [client.getConversation('c'), client.continueConversation('c', 'hi')]) {
          await assert.rejects(call, { code: 'bad_response', retryable: true });
        }
      });
    }

    for (const delivery of ['json', 'sse', 'http2'] as const) {
      it(`refuses an HTML page in place of a ${delivery} reply before reading it`, async () => {
        const { client, emulator } = inProcess();
        const { conversationId } = await client.createPersonaConversation({
          personaId: juniper.personaId,
          externalUserId: 'u',
        });
        emulator.faults.set({ html: { count: 1, on: 'continue' } });
        await assert.rejects(client.openReply(conversationId, 'hi', delivery), {
          code: 'bad_response',
          status: 200,
          retryable: true,
        });
      });
    }

    it('rejects bad options with a message naming the option', () => {
      assert.throws(() => new ServiceClient({ baseUrl: '', apiKey }), /"baseUrl"/);
      assert.throws(() => new ServiceClient({ baseUrl: 'ftp://x', apiKey }), /"baseUrl"/);
      assert.throws(() => new ServiceClient({ baseUrl: origin, apiKey: '' }), /"apiKey"/);
      assert.throws(() => new ServiceClient({ baseUrl: origin, apiKey, routes: 'both' as 'auto' }), /"routes"/);
    });

    it('ends a stream cut by the service with a retryable ServiceError', async () => {
      const { client, emulator } = inProcess({ faults: { cut: { afterChunks: 3 } } });
      const { conversationId } = await client.createPersonaConversation({
        personaId: juniper.personaId,
        externalUserId: 'u',
      });
      const seen: StreamChunk[] = [];
      const error = await (async () => {
        for await (const chunk of client.streamSse(conversationId, 'returns')) seen.push(chunk);
      })().catch((e: unknown) => e);
      assert.ok(error instanceof ServiceError, String(error));
      assert.equal(error.code, 'stream_error');
      assert.equal(error.retryable, true);
      assert.equal(seen.filter(c => c.type === 'delta').length, 3);
      assert.ok(!seen.some(c => c.type === 'done'));
      assert.equal(emulator.store.get(conversationId)?.chatMessagesCount, 0, 'a cut run is not stored');
    });
  });

  describe('timeouts and aborts', () => {
    it('times out waiting for the response to start (connect)', async () => {
      const { client, emulator } = inProcess({}, { timeouts: { connectMs: 40 } });
      const { conversationId } = await client.createPersonaConversation({
        personaId: juniper.personaId,
        externalUserId: 'u',
      });
      emulator.faults.set({ latencyMs: 300 });
      await assert.rejects(collect(client.streamSse(conversationId, 'hi')), {
        code: 'connect_timeout',
        status: 0,
        retryable: true,
      });
    });

    it('times out waiting for the first chunk, then between chunks', async () => {
      const { client, emulator } = inProcess();
      const { conversationId } = await client.createPersonaConversation({
        personaId: juniper.personaId,
        externalUserId: 'u',
      });
      emulator.faults.set({ chunkDelayMs: 200 });
      await assert.rejects(collect(client.streamSse(conversationId, 'returns', { timeouts: { firstByteMs: 40 } })), {
        code: 'first_byte_timeout',
      });
      await assert.rejects(
        collect(client.streamHttp2(conversationId, 'returns', { timeouts: { firstByteMs: 5_000, idleMs: 40 } })),
        { code: 'idle_timeout' },
      );
      await assert.rejects(
        collect(
          client.streamSse(conversationId, 'returns', {
            timeouts: { firstByteMs: 5_000, idleMs: 5_000, totalMs: 300 },
          }),
        ),
        { code: 'total_timeout' },
      );
      assert.equal(emulator.store.get(conversationId)?.chatMessagesCount, 0, 'no timed-out run was stored');
    });

    it("stops a stream on the caller's abort, with the caller's reason, and the service drops the run", async () => {
      const { client, emulator } = inProcess({ pace: 200 });
      const { conversationId } = await client.createPersonaConversation({
        personaId: juniper.personaId,
        externalUserId: 'u',
      });
      const controller = new AbortController();
      const reason = new DOMException('The visitor pressed Stop.', 'AbortError');
      let deltas = 0;
      await assert.rejects(
        (async () => {
          for await (const chunk of client.streamSse(conversationId, 'returns', { signal: controller.signal })) {
            if (chunk.type === 'delta' && ++deltas === 2) controller.abort(reason);
          }
        })(),
        (error: unknown) => error === reason,
      );
      assert.equal(deltas, 2);
      assert.equal(emulator.store.get(conversationId)?.chatMessagesCount, 0);
    });

    it('never starts a call whose signal is already aborted', async () => {
      const { client, received } = inProcess();
      await assert.rejects(client.listConversations({ signal: AbortSignal.abort() }), { name: 'AbortError' });
      assert.equal(received.length, 0);
    });
  });
});
