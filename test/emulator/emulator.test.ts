import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEmulator } from '../../src/emulator/app.js';
import { parsePersonas } from '../../src/emulator/personas.js';
import type { ChatResponse, Conversation, ListResponse } from '../../src/service/types.js';
import { ada, apiKey, inProcess, juniper, origin, sseData } from '../support/service.js';

type ErrorBody = { error: { code: string; message: string; status: number; requestId: string } };

async function expectError(response: Response | Promise<Response>, status: number, code: string, message?: RegExp) {
  const res = await response;
  assert.equal(res.status, status);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const body = (await res.json()) as ErrorBody;
  assert.equal(body.error.code, code);
  assert.equal(body.error.status, status);
  assert.ok(body.error.requestId, 'errors carry a request id');
  if (message) assert.match(body.error.message, message);
  return body;
}

async function createPersona(
  request: ReturnType<typeof inProcess>['request'],
  externalUserId = 'u',
  personaId = juniper.personaId,
) {
  const res = await request('POST', '/conversations/persona', { personaId, externalUserId });
  assert.equal(res.status, 200);
  return (await res.json()) as Conversation;
}

describe('emulator', () => {
  describe('API key', () => {
    const { request } = inProcess();
    const id = crypto.randomUUID();
    const routes: [string, string, unknown?][] = [
      ['POST', '/conversations', { system: 's', model: 'm', externalUserId: 'u' }],
      ['POST', '/conversations/persona', { personaId: ada.personaId, externalUserId: 'u' }],
      ['GET', '/conversations'],
      ['GET', '/conversations/user/u'],
      ['GET', `/conversations/persona/${ada.personaId}`],
      ['GET', `/conversations/${id}`],
      ['POST', `/conversations/${id}/continue`, { message: 'hi' }],
      ['POST', `/conversations/${id}/continue-sse`, { message: 'hi' }],
      ['POST', `/conversations/${id}/continue-stream`, { message: 'hi' }],
      ['PATCH', `/conversations/${id}/chat`, { message: 'hi' }],
      ['PATCH', `/conversations/${id}/chat-sse`, { message: 'hi' }],
      ['PATCH', `/conversations/${id}/chat-http2`, { message: 'hi' }],
      ['PATCH', `/conversations/${id}/set-active`, { isActive: true }],
      ['PATCH', `/conversations/${id}/set-metadata`, { metadata: {} }],
      ['PATCH', `/conversations/${id}/set-conversation-name`, { conversationName: 'n' }],
      ['PATCH', `/conversations/${id}/set-conversation-status`, { conversationStatus: 's' }],
    ];
    for (const [method, path, body] of routes) {
      it(`is required on ${method} ${path.replace(id, ':id')}`, async () => {
        await expectError(request(method, path, body, { 'x-svc-api-key': '' }), 401, 'unauthorized', /missing/);
        await expectError(request(method, path, body, { 'x-svc-api-key': 'wrong' }), 401, 'unauthorized', /not valid/);
      });
    }

    it('is read from the configured header', async () => {
      const emulator = createEmulator({ apiKey, apiKeyHeader: 'X-Vendor-Key' });
      const get = (headers: Record<string, string>) =>
        emulator.fetch(new Request(`${origin}/conversations`, { headers }));
      assert.equal((await get({ 'x-vendor-key': apiKey })).status, 200);
      await expectError(get({ 'x-svc-api-key': apiKey }), 401, 'unauthorized');
    });
  });

  describe('validation', () => {
    const { request } = inProcess();
    const cases: [string, string, string, unknown, number, string, RegExp][] = [
      [
        'create general without model',
        'POST',
        '/conversations',
        { system: 's', externalUserId: 'u' },
        400,
        'invalid_request',
        /model/,
      ],
      [
        'create general without system',
        'POST',
        '/conversations',
        { model: 'm', externalUserId: 'u' },
        400,
        'invalid_request',
        /system/,
      ],
      [
        'create general without user',
        'POST',
        '/conversations',
        { system: 's', model: 'm' },
        400,
        'invalid_request',
        /externalUserId/,
      ],
      [
        'create persona with a bad id',
        'POST',
        '/conversations/persona',
        { personaId: 'ada', externalUserId: 'u' },
        400,
        'invalid_request',
        /personaId/,
      ],
      [
        'create persona without user',
        'POST',
        '/conversations/persona',
        { personaId: ada.personaId },
        400,
        'invalid_request',
        /externalUserId/,
      ],
      [
        'create persona that does not exist',
        'POST',
        '/conversations/persona',
        { personaId: crypto.randomUUID(), externalUserId: 'u' },
        404,
        'persona_not_found',
        /persona/,
      ],
      ['a body that is not JSON', 'POST', '/conversations', 'system=s', 400, 'invalid_request', /JSON/],
      ['a JSON array body', 'POST', '/conversations', '[]', 400, 'invalid_request', /object/],
      ['an empty body', 'POST', '/conversations/persona', '', 400, 'invalid_request', /JSON/],
      [
        'a persona list with a bad id',
        'GET',
        '/conversations/persona/nope',
        undefined,
        400,
        'invalid_request',
        /personaId/,
      ],
      ['a conversation id that is not a UUID', 'GET', '/conversations/123', undefined, 400, 'invalid_request', /UUID/],
      [
        'a continuation token we never issued',
        'GET',
        '/conversations?continuationToken=abc',
        undefined,
        400,
        'invalid_request',
        /continuationToken/,
      ],
      ['an unknown route', 'GET', '/conversation', undefined, 404, 'not_found', /route/],
    ];
    for (const [name, method, path, body, status, code, message] of cases) {
      it(`answers ${status} ${code} to ${name}`, async () => {
        await expectError(request(method, path, body), status, code, message);
      });
    }

    it('validates every body of an existing conversation', async () => {
      const { conversationId } = await createPersona(request);
      const base = `/conversations/${conversationId}`;
      await expectError(
        request('PATCH', `${base}/chat`, { message: '' }),
        400,
        'invalid_request',
        /at least one character/,
      );
      await expectError(request('POST', `${base}/continue-sse`, {}), 400, 'invalid_request', /message/);
      await expectError(request('PATCH', `${base}/chat-http2`, { message: 42 }), 400, 'invalid_request', /message/);
      await expectError(
        request('PATCH', `${base}/set-active`, { isActive: 'yes' }),
        400,
        'invalid_request',
        /isActive/,
      );
      await expectError(
        request('PATCH', `${base}/set-metadata`, { metadata: 'x' }),
        400,
        'invalid_request',
        /metadata/,
      );
      await expectError(
        request('PATCH', `${base}/set-conversation-name`, { conversationName: 'x'.repeat(201) }),
        400,
        'invalid_request',
        /conversationName/,
      );
      await expectError(
        request('PATCH', `${base}/set-conversation-status`, { conversationStatus: '' }),
        400,
        'invalid_request',
        /conversationStatus/,
      );
      await expectError(request('GET', `/conversations/${crypto.randomUUID()}`), 404, 'conversation_not_found');
      const unchanged = (await (await request('GET', base)).json()) as Conversation;
      assert.equal(unchanged.chatMessagesCount, 0, 'a refused message is not stored');
    });

    it('refuses a body over the limit with 413, even without a Content-Length', async () => {
      const { emulator } = inProcess({ maxBodyBytes: 1024 });
      const big = JSON.stringify({ system: 's', model: 'm', externalUserId: 'x'.repeat(2000) });
      const chunked = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(big));
          controller.close();
        },
      });
      for (const body of [big, chunked]) {
        const res = await emulator.fetch(
          new Request(`${origin}/conversations`, {
            method: 'POST',
            headers: { 'x-svc-api-key': apiKey, 'content-type': 'application/json' },
            body,
            duplex: 'half',
          } as RequestInit),
        );
        await expectError(res, 413, 'payload_too_large');
      }
      assert.equal(emulator.store.size, 0);
    });
  });

  describe('conversations', () => {
    it('keeps the system and model of a general conversation', async () => {
      const { request } = inProcess();
      const res = await request('POST', '/conversations', {
        system: 'acme-ai',
        model: 'acme-large-2',
        externalUserId: 'u',
      });
      const conversation = (await res.json()) as Conversation;
      assert.equal(conversation.aiSystem, 'acme-ai');
      assert.equal(conversation.model, 'acme-large-2');
      assert.equal(conversation.personaId, null);
      const reply = (await (
        await request('PATCH', `/conversations/${conversation.conversationId}/chat`, {
          message: 'How do I return gear?',
        })
      ).json()) as ChatResponse;
      assert.equal(
        reply.citations?.[0]?.documentId,
        'returns',
        "a general conversation answers from every persona's documents",
      );
    });

    it('gives messages ids, timestamps, runs and token counts that add up', async () => {
      const { request } = inProcess();
      const { conversationId } = await createPersona(request);
      const replies: ChatResponse[] = [];
      for (const message of ['How do I return a tent?', 'What does membership cost?']) {
        replies.push(
          (await (await request('PATCH', `/conversations/${conversationId}/chat`, { message })).json()) as ChatResponse,
        );
      }
      const conversation = (await (await request('GET', `/conversations/${conversationId}`)).json()) as Conversation;
      const messages = conversation.chatMessages!;
      assert.deepEqual(
        messages.map(m => m.role),
        ['user', 'assistant', 'user', 'assistant'],
      );
      assert.equal(conversation.chatMessagesCount, 4);
      assert.equal(conversation.chatStarted, true);
      assert.equal(new Set(messages.map(m => m.messageId)).size, 4);
      for (const m of messages) assert.ok(!Number.isNaN(Date.parse(m.timestamp!)), 'ISO timestamps');
      for (const [i, reply] of replies.entries()) {
        const [user, assistant] = messages.slice(i * 2, i * 2 + 2);
        assert.equal(user!.conversationRunId, reply.runId);
        assert.equal(assistant!.conversationRunId, reply.runId);
        assert.equal(assistant!.messageId, reply.messageId);
        assert.equal(
          user!.totalTokens! + assistant!.totalTokens!,
          reply.usage!.total_tokens,
          "a run's messages add up to its usage",
        );
        assert.equal(user!.promptTokens! + assistant!.promptTokens!, reply.usage!.prompt_tokens);
      }
      const sum = (field: 'promptTokens' | 'completionTokens' | 'totalTokens') =>
        messages.reduce((n, m) => n + m[field]!, 0);
      assert.equal(conversation.promptTokens, sum('promptTokens'));
      assert.equal(conversation.completionTokens, sum('completionTokens'));
      assert.equal(conversation.totalTokens, sum('totalTokens'));
      assert.equal(conversation.totalTokens, conversation.promptTokens! + conversation.completionTokens!);
      assert.ok(
        replies[1]!.usage!.prompt_tokens > replies[0]!.usage!.prompt_tokens - 200,
        'history counts in the prompt',
      );
    });

    it('pages 25+ conversations ten at a time, and by-user and by-persona lists never leak', async () => {
      const { request } = inProcess();
      const made: Conversation[] = [];
      for (let i = 0; i < 31; i++) {
        made.push(
          await createPersona(request, i % 3 === 0 ? 'alice' : 'bob', i % 2 ? ada.personaId : juniper.personaId),
        );
      }
      const walk = async (path: string) => {
        const pages: ListResponse[] = [];
        let token: string | null | undefined;
        do {
          const res = await request('GET', token ? `${path}?continuationToken=${encodeURIComponent(token)}` : path);
          assert.equal(res.status, 200);
          const page = (await res.json()) as ListResponse;
          pages.push(page);
          token = page.continuationToken;
        } while (token);
        return pages;
      };
      const all = await walk('/conversations');
      assert.deepEqual(
        all.map(p => p.data.length),
        [10, 10, 10, 1],
      );
      assert.equal(all.at(-1)!.continuationToken, null);
      assert.deepEqual(
        all.flatMap(p => p.data.map(c => c.conversationId)),
        made.map(c => c.conversationId),
      );

      const alice = (await walk('/conversations/user/alice')).flatMap(p => p.data);
      assert.equal(alice.length, made.filter(c => c.externalUserId === 'alice').length);
      assert.ok(alice.every(c => c.externalUserId === 'alice'));
      const bob = await walk('/conversations/user/bob');
      assert.deepEqual(
        bob.map(p => p.data.length),
        [10, 10],
      );
      assert.ok(bob.flatMap(p => p.data).every(c => c.externalUserId === 'bob'));
      assert.deepEqual((await walk('/conversations/user/carol'))[0]!.data, []);

      const adas = (await walk(`/conversations/persona/${ada.personaId}`)).flatMap(p => p.data);
      assert.equal(adas.length, 15);
      assert.ok(adas.every(c => c.personaId === ada.personaId));

      const bobToken = bob[0]!.continuationToken!;
      await expectError(
        request('GET', `/conversations/user/alice?continuationToken=${bobToken}`),
        400,
        'invalid_request',
        /different list/,
      );
    });

    it('applies each set-* operation, with its aliases, and a later get shows it', async () => {
      const { request } = inProcess();
      const { conversationId } = await createPersona(request);
      const base = `/conversations/${conversationId}`;
      const patch = async (op: string, body: unknown) => {
        const res = await request('PATCH', `${base}/${op}`, body);
        assert.equal(res.status, 200);
        return (await res.json()) as Conversation;
      };
      assert.equal((await patch('set-active', { isActive: false })).isActive, false);
      assert.equal((await patch('set-active', { active: true })).isActive, true);
      assert.deepEqual((await patch('set-metadata', { metadata: { a: '1' } })).metadata, { a: '1' });
      assert.deepEqual((await patch('set-metadata', { b: 2 })).metadata, { b: 2 });
      assert.equal((await patch('set-conversation-name', { conversationName: 'Trip' })).conversationName, 'Trip');
      assert.equal((await patch('set-conversation-name', { name: 'Trip 2' })).conversationName, 'Trip 2');
      assert.equal(
        (await patch('set-conversation-status', { conversationStatus: 'resolved' })).conversationStatus,
        'resolved',
      );
      await patch('set-conversation-status', { status: 'archived' });
      await patch('set-active', { isActive: false });
      const got = (await (await request('GET', base)).json()) as Conversation;
      assert.equal(got.isActive, false);
      assert.deepEqual(got.metadata, { b: 2 });
      assert.equal(got.conversationName, 'Trip 2');
      assert.equal(got.conversationStatus, 'archived');
    });
  });

  describe('replies', () => {
    it('streams OpenAI-style SSE chunks, the last with finish_reason, usage, ids and citations, then [DONE]', async () => {
      const { request } = inProcess();
      const { conversationId } = await createPersona(request);
      const res = await request('POST', `/conversations/${conversationId}/continue-sse`, {
        message: 'How long does shipping take?',
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type')!, /^text\/event-stream/);
      const data = await sseData(res);
      assert.equal(data.at(-1), '[DONE]');
      const chunks = data.slice(0, -1).map(d => JSON.parse(d));
      assert.ok(chunks.every(c => c.object === 'chat.completion.chunk'));
      const last = chunks.at(-1);
      assert.equal(last.choices[0].finish_reason, 'stop');
      assert.match(last.messageId, /^[0-9a-f-]{36}$/);
      assert.match(last.runId, /^[0-9a-f-]{36}$/);
      assert.ok(last.usage.total_tokens > 0);
      const text = chunks
        .slice(0, -1)
        .map(c => c.choices[0].delta.content)
        .join('');
      assert.match(text, /\*\*Shipping:\*\* .*3 to 5 business days.* \[1\]/);
      const [citation] = last.citations;
      assert.equal(citation.index, 'trailhead-outfitters');
      assert.equal(citation.documentId, 'shipping');
      assert.equal(citation.sourceName, 'Shipping');
      assert.equal(citation.sourceUrl, 'https://shop.example.com/help/shipping');
      const [partition] = citation.partitions;
      assert.equal(partition.relevance, 1);
      assert.equal(typeof partition.partitionNumber, 'number');
      assert.equal(typeof partition.sectionNumber, 'number');
      assert.ok(!Number.isNaN(Date.parse(partition.lastUpdate)));
      assert.deepEqual(partition.tags, { topic: ['orders'] });
      assert.match(partition.text, /3 to 5 business days/);
    });

    it('streams the HTTP/2 variant as newline-delimited JSON chunks', async () => {
      const { request } = inProcess();
      const { conversationId } = await createPersona(request);
      const res = await request('PATCH', `/conversations/${conversationId}/chat-http2`, {
        message: 'Do you rent tents?',
      });
      assert.match(res.headers.get('content-type')!, /ndjson/);
      const lines = (await res.text())
        .trim()
        .split('\n')
        .map(l => JSON.parse(l));
      assert.ok(lines.length > 5);
      assert.equal(lines.at(-1).choices[0].finish_reason, 'stop');
      assert.equal(lines.at(-1).citations[0].documentId, 'rentals');
    });

    it('numbers citations in order of first appearance, one per document', async () => {
      const { request } = inProcess();
      const { conversationId } = await createPersona(request, 'u', ada.personaId);
      const res = await request('PATCH', `/conversations/${conversationId}/chat`, {
        message: 'How do tokens and the backend keep the API key safe?',
      });
      const reply = (await res.json()) as ChatResponse;
      const text = reply.choices[0]!.message!.content!;
      const markers = [...text.matchAll(/\[(\d+)\]/g)].map(m => Number(m[1]));
      assert.deepEqual(
        markers,
        reply.citations!.map((_, i) => i + 1),
      );
      assert.equal(new Set(reply.citations!.map(c => c.documentId)).size, reply.citations!.length);
    });

    it('answers an uncovered question honestly, without citations', async () => {
      const { request } = inProcess();
      const { conversationId } = await createPersona(request);
      const reply = (await (
        await request('PATCH', `/conversations/${conversationId}/chat`, { message: 'What is the capital of Peru?' })
      ).json()) as ChatResponse;
      assert.match(reply.choices[0]!.message!.content!, /^I don't know that/);
      assert.deepEqual(reply.citations, []);
    });

    it('streams at the configured pace', async () => {
      const { request } = inProcess({ pace: 100 });
      const { conversationId } = await createPersona(request);
      const started = performance.now();
      const data = await sseData(
        await request('PATCH', `/conversations/${conversationId}/chat-sse`, { message: 'membership' }),
      );
      const words = data.length - 2;
      assert.ok(performance.now() - started >= (words - 1) * 10 - 5, 'no faster than 100 words per second');
    });

    it('loads personas from a file and names the first bad field', () => {
      assert.throws(() => parsePersonas({ personas: [{ ...ada, personaId: 'not-a-uuid' }] }), /personas\.0\.personaId/);
      assert.throws(() => parsePersonas({ personas: [ada, ada] }), /appears twice/);
      assert.throws(() => parsePersonas({ personas: [] }), /personas/);
      const [one] = parsePersonas({
        personas: [{ personaId: ada.personaId, personaVersionId: ada.personaVersionId, name: 'Solo' }],
      });
      assert.equal(one!.name, 'Solo');
      assert.deepEqual(one!.documents, []);
    });
  });

  describe('faults', () => {
    it('fails the next N matching requests with the status, then recovers', async () => {
      const { request } = inProcess();
      const { conversationId } = await createPersona(request);
      const set = await request('POST', '/__emulator/faults', { status: { code: 500, count: 2, on: 'continue' } });
      assert.equal(set.status, 200);
      assert.equal((await request('GET', '/conversations')).status, 200, 'a read is not a continue');
      for (let i = 0; i < 2; i++) {
        await expectError(
          request('PATCH', `/conversations/${conversationId}/chat`, { message: 'hi' }),
          500,
          'injected_fault',
        );
      }
      assert.equal((await request('PATCH', `/conversations/${conversationId}/chat`, { message: 'hi' })).status, 200);
      const settings = await (await request('GET', '/__emulator/faults')).json();
      assert.equal(settings.status, null);
    });

    it('answers the next N matching requests with an HTML page and status 200, then recovers', async () => {
      const { request, emulator } = inProcess();
      const { conversationId } = await createPersona(request);
      await request('POST', '/__emulator/faults', { html: { count: 1, on: 'continue' } });
      assert.equal((await request('GET', `/conversations/${conversationId}`)).status, 200, 'a read is not a continue');
      const page = await request('PATCH', `/conversations/${conversationId}/chat`, { message: 'hi' });
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
      assert.match(await page.text(), /^<!DOCTYPE html>.*Bad Gateway/s);
      assert.equal(emulator.store.get(conversationId)!.chatMessagesCount, 0, 'the message never reached the service');
      const next = await request('PATCH', `/conversations/${conversationId}/chat`, { message: 'hi' });
      assert.equal(((await next.json()) as { object: string }).object, 'chat.completion');
      assert.equal((await (await request('GET', '/__emulator/faults')).json()).html, null);
    });

    it('cuts a stream after N chunks, without a terminal chunk, and stores nothing', async () => {
      const { request, emulator } = inProcess();
      const { conversationId } = await createPersona(request);
      await request('POST', '/__emulator/faults', { cut: { afterChunks: 4 } });
      const res = await request('PATCH', `/conversations/${conversationId}/chat-sse`, { message: 'returns' });
      const reader = res.body!.getReader();
      let text = '';
      const decoder = new TextDecoder();
      await assert.rejects(async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          text += decoder.decode(value);
        }
      }, /cut/);
      assert.equal(text.split('\n\n').filter(Boolean).length, 4);
      assert.ok(!text.includes('finish_reason":"stop') && !text.includes('[DONE]'));
      assert.equal(emulator.store.get(conversationId)!.chatMessagesCount, 0);
      const next = await sseData(
        await request('PATCH', `/conversations/${conversationId}/chat-sse`, { message: 'returns' }),
      );
      assert.equal(next.at(-1), '[DONE]', 'a cut with count 1 applies once');
    });

    it('delays the response by the latency and every chunk by the chunk delay', async () => {
      const { request } = inProcess({ faults: { latencyMs: 120 } });
      let started = performance.now();
      await request('GET', '/conversations');
      // Sleeps make time pass at least as long as asked (a timer may fire up to a millisecond early): only lower
      // bounds, which a busy machine cannot break.
      assert.ok(performance.now() - started >= 119, 'the latency was applied');
      await request('DELETE', '/__emulator/faults');
      const { conversationId } = await createPersona(request);
      await request('POST', '/__emulator/faults', { chunkDelayMs: 20 });
      started = performance.now();
      const data = await sseData(
        await request('PATCH', `/conversations/${conversationId}/chat-sse`, { message: 'membership' }),
      );
      const deltas = data.length - 2; // the last chunk and [DONE] come without a delay
      assert.ok(performance.now() - started >= deltas * 19, 'every chunk was delayed');
    });

    it('rejects fault settings it does not know, and resets', async () => {
      const { request } = inProcess();
      await expectError(request('POST', '/__emulator/faults', { latency: 5 }), 400, 'invalid_request');
      await expectError(
        request('POST', '/__emulator/faults', { status: { code: 200 } }),
        400,
        'invalid_request',
        /status/,
      );
      await request('POST', '/__emulator/faults', { latencyMs: 5, cut: { afterChunks: 1, count: null } });
      assert.deepEqual(await (await request('DELETE', '/__emulator/faults')).json(), {
        latencyMs: 0,
        chunkDelayMs: 0,
        status: null,
        html: null,
        cut: null,
      });
    });

    it('lists its personas and resets its store', async () => {
      const { request, emulator } = inProcess();
      await createPersona(request);
      const personas = await (await request('GET', '/__emulator/personas')).json();
      assert.deepEqual(
        personas.data.map((p: { name: string }) => p.name),
        ['Ada', 'Juniper'],
      );
      await request('POST', '/__emulator/reset');
      assert.equal(emulator.store.size, 0);
    });
  });
});
