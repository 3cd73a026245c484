import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEmulator } from '../../src/emulator/app.js';
import type { ChatResponse, Conversation, ListResponse } from '../../src/service/types.js';
import { ada, apiKey, createPersona, expectError, inProcess, origin } from '../support/service.js';

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

  describe('control routes', () => {
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

  describe('options', () => {
    it('serves only the continue paths of the form it is given', async () => {
      for (const [routes, served, missing] of [
        ['chat', ['PATCH', 'chat'], ['POST', 'continue']],
        ['continue', ['POST', 'continue'], ['PATCH', 'chat']],
      ] as const) {
        const { request } = inProcess({ routes });
        const { conversationId } = await createPersona(request);
        const path = (suffix: string) => `/conversations/${conversationId}/${suffix}`;
        assert.equal((await request(served[0], path(served[1]), { message: 'hi' })).status, 200, routes);
        await expectError(request(missing[0], path(missing[1]), { message: 'hi' }), 404, 'not_found');
      }
    });

    it('refuses options it cannot work with, naming the option', () => {
      assert.throws(() => createEmulator({ apiKey: '' }), /"apiKey" must not be empty/);
      assert.throws(() => createEmulator({ pace: -1 }), /"pace" must be a number of words per second/);
      assert.throws(() => createEmulator({ routes: 'form-c' as 'both' }), /"routes" must be both, chat or continue/);
      assert.throws(() => createEmulator({ openai: { baseUrl: 'http://model.test/v1', model: '' } }), /"openai" needs/);
      assert.equal(createEmulator().personas.length, 2, 'every option has a default');
    });
  });

  it('gives a response a request id header, the one its error carries', async () => {
    const { request } = inProcess();
    const listed = await request('GET', '/conversations');
    assert.match(listed.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/);
    const missing = await request('GET', `/conversations/${crypto.randomUUID()}`);
    const id = missing.headers.get('x-request-id');
    const body = await expectError(missing, 404, 'conversation_not_found');
    assert.equal(body.error.requestId, id);
  });

  it('treats a deleted conversation as one that does not exist', async () => {
    const { request, emulator } = inProcess();
    const { conversationId } = await createPersona(request);
    emulator.store.get(conversationId)!.isDeleted = true;
    await expectError(request('GET', `/conversations/${conversationId}`), 404, 'conversation_not_found');
    await expectError(
      request('PATCH', `/conversations/${conversationId}/chat`, { message: 'hi' }),
      404,
      'conversation_not_found',
    );
    assert.deepEqual(((await (await request('GET', '/conversations')).json()) as ListResponse).data, []);
  });
});
