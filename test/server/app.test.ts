import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { LogEvents } from '../../src/server/run-log.js';
import { runId } from '../../src/server/run-log.js';
import { MemoryStore } from '../../src/server/store.js';
import { apiKey } from '../support/service.js';
import { expectError, parseEvents, setup, siteOrigin, transcript } from '../support/backend.js';

/**
 * Keys that name what stays in the backend: token counts (`usage`, `prompt_tokens`, `promptTokens`, …), the
 * visitor's externalUserId, a conversation's configuration (a persona's `personaName` and `greeting`, a general
 * conversation's `system`), the API key.
 */
const withheld = /usage|tokens|externalUserId|userId|configuration|personaName|greeting|^system$|apiKey|api_key/i;

/** Every key of a JSON value, at any depth. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([key, inner]) => [key, ...keysOf(inner)]);
  }
  return [];
}

describe('backend', () => {
  after(() => {
    const leaks = transcript.filter(text => text.includes(apiKey));
    assert.deepEqual(leaks, [], 'the API key appears in no response, header, SSE frame or log line');
    assert.ok(transcript.length > 100, 'the scan saw the whole run');
  });

  describe('what the browser is told', () => {
    it('answers every route the browser uses without token counts, externalUserId, configuration or API key', async () => {
      const store = new MemoryStore();
      const { request, send, api, emulator } = setup({ backend: { store } });
      /** What each answer told, by route: its status, its body, and the JSON documents in it (every SSE event's data). */
      const told: { route: string; status: number; text: string; documents: unknown[] }[] = [];
      const tell = async (route: string, response: Response | Promise<Response>) => {
        const res = await response;
        const text = await res.text();
        const stream = res.headers.get('content-type')?.startsWith('text/event-stream');
        const documents = !text ? [] : stream ? parseEvents(text).map(e => e.data as unknown) : [JSON.parse(text)];
        told.push({ route, status: res.status, text, documents });
        return documents;
      };
      const question = 'How long does shipping take?';

      const [answer] = await tell(
        'POST /session',
        request('POST', '/session', { body: {}, headers: { origin: siteOrigin, 'x-persona-chat': '1' } }),
      );
      const { token } = answer as { token: string };
      const [created] = await tell(
        'POST /conversations',
        api('POST', '/conversations', token, { body: { metadata: { page: 'checkout' } } }),
      );
      const id = (created as { id: string }).id;

      const key = crypto.randomUUID();
      const streamed = await tell('POST …/messages (SSE)', send(token, id, question, { key }));
      const done = streamed.at(-1) as { messageId: string };
      await tell('POST …/messages (SSE, attached)', send(token, id, question, { key }));
      await tell(
        'POST …/messages (JSON)',
        send(token, id, 'What is your returns policy?', { accept: 'application/json' }),
      );
      await tell('GET /conversations', api('GET', '/conversations', token));
      await tell('GET …/runs/:key/events', api('GET', `/conversations/${id}/runs/${key}/events`, token));
      const firstId = /^id: (.*)$/m.exec(told.at(-1)!.text)![1]!;
      await tell(
        'GET …/runs/:key/events (Last-Event-ID)',
        api('GET', `/conversations/${id}/runs/${key}/events`, token, { headers: { 'last-event-id': firstId } }),
      );

      // A reply stopped while it runs: the service's history lacks it, so the conversation lists it as a run.
      emulator.faults.set({ chunkDelayMs: 200 });
      const stoppedKey = crypto.randomUUID();
      const running = await send(token, id, 'Do you ship abroad?', { key: stoppedKey });
      await tell('POST …/runs/:key/stop', api('POST', `/conversations/${id}/runs/${stoppedKey}/stop`, token));
      await tell('POST …/messages (SSE, stopped)', running);
      emulator.faults.reset();

      await tell(
        'PATCH …/conversations/:id',
        api('PATCH', `/conversations/${id}`, token, { body: { name: 'Shipping' } }),
      );
      await tell(
        'POST …/feedback',
        api('POST', `/conversations/${id}/messages/${done.messageId}/feedback`, token, {
          body: { score: 1, comment: 'Clear.' },
        }),
      );
      const [detail] = await tell('GET …/conversations/:id', api('GET', `/conversations/${id}`, token));
      await tell('DELETE …/conversations/:id', api('DELETE', `/conversations/${id}`, token));

      // The walk reached every route; behind what it read, the service and the run's log hold what is withheld.
      assert.deepEqual(
        told.map(t => [t.route, t.status]),
        [
          ['POST /session', 200],
          ['POST /conversations', 201],
          ['POST …/messages (SSE)', 200],
          ['POST …/messages (SSE, attached)', 200],
          ['POST …/messages (JSON)', 200],
          ['GET /conversations', 200],
          ['GET …/runs/:key/events', 200],
          ['GET …/runs/:key/events (Last-Event-ID)', 200],
          ['POST …/runs/:key/stop', 202],
          ['POST …/messages (SSE, stopped)', 200],
          ['PATCH …/conversations/:id', 200],
          ['POST …/feedback', 200],
          ['GET …/conversations/:id', 200],
          ['DELETE …/conversations/:id', 204],
        ],
      );
      const { messages, runs } = detail as { messages: unknown[]; runs: { key: string; status: string }[] };
      assert.equal(messages.length, 4, 'the two replies the service keeps, with their messages');
      assert.deepEqual(
        runs.map(run => [run.key, run.status]),
        [[stoppedKey, 'stopped']],
      );
      const kept = emulator.store.get(id)!;
      const sub = kept.externalUserId!;
      assert.ok(sub.startsWith('anon_'));
      assert.ok(kept.configuration && kept.chatMessages!.every(m => (m.totalTokens ?? 0) > 0));
      const logged = await store.readEvents(runId({ conversationId: id, key }), null, { waitMs: 0 });
      const usage = (JSON.parse(logged.at(-1)!.data) as LogEvents['done']).usage;
      assert.ok(usage!.total_tokens > 0, "the run's log keeps the service's token counts");

      for (const { route, text, documents } of told) {
        const keys = [...new Set(documents.flatMap(keysOf))];
        assert.deepEqual(
          keys.filter(k => withheld.test(k)),
          [],
          `${route} tells none of ${keys.join(', ')}`,
        );
        assert.ok(!text.includes(sub), `${route} does not tell the externalUserId`);
        assert.ok(!text.includes(apiKey), `${route} does not tell the API key`);
      }
      const streams = told.filter(t => t.text.startsWith('event: meta'));
      assert.equal(streams.length, 5);
      for (const { route, text } of streams) {
        assert.equal([...text.matchAll(/^event: (.*)$/gm)].at(-1)![1], 'done', `${route} was read to its end`);
      }
    });
  });

  describe('validation', () => {
    it('refuses bad input with a 4xx envelope and never calls the service', async () => {
      const { session, conversation, api, request, upstream } = setup({
        backend: { limits: { bodyMaxBytes: 1024, messageMaxLength: 50 } },
      });
      const { token } = await session();
      const id = await conversation(token);
      const before = upstream.length;
      const send = (body: unknown, headers: Record<string, string> = {}) =>
        api('POST', `/conversations/${id}/messages`, token, {
          body,
          headers: { 'idempotency-key': crypto.randomUUID(), ...headers },
        });
      await expectError(send({ message: 'x'.repeat(51) }), 400, 'invalid_request');
      await expectError(send({ message: '   ' }), 400, 'invalid_request');
      await expectError(send({ message: 42 }), 400, 'invalid_request');
      await expectError(send({ message: 'hi', externalUserId: 'victim' }), 400, 'invalid_request');
      await expectError(send({ text: 'hi' }), 400, 'invalid_request');
      await expectError(send('{"message":', { 'content-type': 'application/json' }), 400, 'invalid_request');
      await expectError(
        send('message=hi', { 'content-type': 'application/x-www-form-urlencoded' }),
        415,
        'unsupported_media_type',
      );
      await expectError(
        api('POST', `/conversations/${id}/messages`, token, { body: { message: 'hi' } }),
        400,
        'invalid_request',
      );
      await expectError(send({ message: 'hi' }, { 'idempotency-key': 'short' }), 400, 'invalid_request');
      await expectError(send({ message: 'x'.repeat(2000) }), 413, 'payload_too_large');
      const chunked = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(JSON.stringify({ message: 'x'.repeat(3000) })));
          controller.close();
        },
      });
      await expectError(
        request('POST', `/conversations/${id}/messages`, {
          body: chunked,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'idempotency-key': crypto.randomUUID(),
          },
        }),
        413,
        'payload_too_large',
      );
      for (const bad of ['../admin', '%2F..%2Fadmin', 'x'.repeat(5000), 'ünïcode', '123']) {
        const path = `/conversations/${encodeURIComponent(bad)}`;
        await expectError(api('GET', path, token), 400, 'invalid_request');
        await expectError(api('PATCH', path, token, { body: { name: 'x' } }), 400, 'invalid_request');
        await expectError(
          api('POST', `${path}/messages`, token, {
            body: { message: 'hi' },
            headers: { 'idempotency-key': crypto.randomUUID() },
          }),
          400,
          'invalid_request',
        );
      }
      await expectError(api('PATCH', `/conversations/${id}`, token, { body: {} }), 400, 'invalid_request');
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { name: 'x'.repeat(101) } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { status: 'closed now!' } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { active: 'no' } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { metadata: { nested: { a: 1 } } } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { metadata: { 'bad key!': 'v' } } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { isDeleted: true } }),
        400,
        'invalid_request',
      );
      assert.deepEqual(upstream.slice(before), [], 'no call reached the service');
      await expectError(request('GET', '/elsewhere'), 404, 'not_found');
    });
  });
});
