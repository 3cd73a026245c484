import assert from 'node:assert/strict';
import http from 'node:http';
import http2 from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { startEmulator } from '../../src/emulator/node.js';
import type { RunningEmulator } from '../../src/emulator/node.js';
import { ServiceClient } from '../../src/service/client.js';
import { ServiceError } from '../../src/service/errors.js';
import { createHttp2Fetch } from '../../src/service/http2.js';
import type { StreamChunk } from '../../src/service/types.js';
import { ada, apiKey, collect, juniper, textOf } from '../support/service.js';

describe('emulator over real sockets', () => {
  let running: RunningEmulator;
  let client: ServiceClient;

  before(async () => {
    running = await startEmulator({ apiKey, port: 0, http2Port: 0 });
    client = new ServiceClient({ baseUrl: running.url, http2BaseUrl: running.http2Url, apiKey });
  });
  after(async () => {
    client.close();
    await running.close();
  });

  it('listens on 127.0.0.1 by default, HTTP/1.1 and HTTP/2 on their own ports', () => {
    assert.match(running.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(running.http2Url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(running.url, running.http2Url);
  });

  it('serves every delivery end to end: JSON and SSE over HTTP/1.1, the stream over HTTP/2', async () => {
    const { conversationId } = await client.createPersonaConversation({
      personaId: juniper.personaId,
      externalUserId: 'v1',
    });
    const whole = await client.continueConversation(conversationId, 'What are your store hours?');
    assert.match(whole.choices[0]!.message!.content!, /9 a\.m\. to 8 p\.m\./);
    const sse = await collect(client.streamSse(conversationId, 'What are your store hours?'));
    const h2 = await collect(client.streamHttp2(conversationId, 'What are your store hours?'));
    assert.equal(textOf(sse), whole.choices[0]!.message!.content);
    assert.equal(textOf(h2), textOf(sse));
    assert.equal(h2.at(-1)?.type, 'done');
    const stored = await client.getConversation(conversationId);
    assert.equal(stored.chatMessagesCount, 6);
  });

  it('streams the HTTP/2 variant only over HTTP/2: a real h2 session works, HTTP/1.1 gets 505', async () => {
    const { conversationId } = await client.createPersonaConversation({
      personaId: ada.personaId,
      externalUserId: 'v2',
    });
    const h1 = await fetch(`${running.url}/conversations/${conversationId}/chat-http2`, {
      method: 'PATCH',
      headers: { 'x-svc-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'hello' }),
    });
    assert.equal(h1.status, 505);
    assert.equal((await h1.json()).error.code, 'http2_required');

    // A raw node:http2 session, to see the protocol itself rather than trust the client.
    const session = http2.connect(running.http2Url);
    try {
      const stream = session.request({
        ':method': 'PATCH',
        ':path': `/conversations/${conversationId}/chat-http2`,
        'x-svc-api-key': apiKey,
        'content-type': 'application/json',
      });
      stream.end(JSON.stringify({ message: 'How do I change the launcher position?' }));
      const [headers, body] = await new Promise<[http2.IncomingHttpHeaders, string]>((resolve, reject) => {
        let h: http2.IncomingHttpHeaders = {};
        let text = '';
        stream.on('response', r => (h = r));
        stream.on('data', (d: Buffer) => (text += d.toString()));
        stream.on('end', () => resolve([h, text]));
        stream.on('error', reject);
      });
      assert.equal(headers[':status'], 200);
      assert.match(String(headers['content-type']), /ndjson/);
      assert.equal(headers['transfer-encoding'], undefined, 'no HTTP/1 connection headers on HTTP/2');
      const lines = body
        .trim()
        .split('\n')
        .map(l => JSON.parse(l));
      assert.equal(lines.at(-1).choices[0].finish_reason, 'stop');
      assert.equal(lines.at(-1).citations[0].documentId, 'attributes');
    } finally {
      session.close();
    }
  });

  for (const delivery of ['sse', 'http2'] as const) {
    it(`drops the run when the client aborts a ${delivery} stream`, async () => {
      running.emulator.faults.set({ chunkDelayMs: 15 });
      try {
        const { conversationId } = await client.createPersonaConversation({
          personaId: juniper.personaId,
          externalUserId: 'v3',
        });
        const controller = new AbortController();
        const stream = delivery === 'sse' ? client.streamSse.bind(client) : client.streamHttp2.bind(client);
        let deltas = 0;
        await assert.rejects(
          async () => {
            for await (const chunk of stream(conversationId, 'returns', { signal: controller.signal })) {
              if (chunk.type === 'delta' && ++deltas === 3) controller.abort();
            }
          },
          { name: 'AbortError' },
        );
        await new Promise(resolve => setTimeout(resolve, 200));
        assert.equal(running.emulator.store.get(conversationId)?.chatMessagesCount, 0);
      } finally {
        running.emulator.faults.reset();
      }
    });

    it(`reports a ${delivery} stream cut on the wire as a retryable ServiceError`, async () => {
      const { conversationId } = await client.createPersonaConversation({
        personaId: juniper.personaId,
        externalUserId: 'v4',
      });
      running.emulator.faults.set({ cut: { afterChunks: 2, count: 1 } });
      const seen: StreamChunk[] = [];
      const stream = delivery === 'sse' ? client.streamSse.bind(client) : client.streamHttp2.bind(client);
      const error = await (async () => {
        for await (const chunk of stream(conversationId, 'returns')) seen.push(chunk);
      })().catch((e: unknown) => e);
      assert.ok(error instanceof ServiceError, String(error));
      assert.equal(error.retryable, true);
      assert.equal(seen.filter(c => c.type === 'delta').length, 2);
      assert.ok(!seen.some(c => c.type === 'done'));
    });
  }

  it('streams concurrent replies over one HTTP/2 session', async () => {
    running.emulator.faults.reset();
    const h2fetch = createHttp2Fetch();
    const shared = new ServiceClient({
      baseUrl: running.url,
      http2BaseUrl: running.http2Url,
      apiKey,
      http2Fetch: h2fetch,
    });
    try {
      const questions = ['What about Trusted Types?', 'How do I theme the widget?', 'How do tokens expire?'];
      const ids = await Promise.all(
        questions.map(
          async () =>
            (await shared.createPersonaConversation({ personaId: ada.personaId, externalUserId: 'v5' })).conversationId,
        ),
      );
      const results = await Promise.all(ids.map((id, i) => collect(shared.streamHttp2(id, questions[i]!))));
      assert.equal(h2fetch.openSessions, 1);
      for (const [i, chunks] of results.entries()) {
        const stored = await shared.getConversation(ids[i]!);
        assert.equal(textOf(chunks), stored.chatMessages![1]!.content, 'each stream carries its own reply');
      }
      assert.equal(new Set(results.map(textOf)).size, 3);
    } finally {
      h2fetch.close();
    }
  });

  it('answers the next request on a kept-alive connection after refusing a body that is too large', async () => {
    // One socket at most: each request goes on the connection the one before it left, unless that one closed.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const big = 'x'.repeat(2 * 1024 * 1024);
    const send = (method: string, body?: string, { chunked = false } = {}) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const headers: http.OutgoingHttpHeaders = { 'x-svc-api-key': apiKey, 'content-type': 'application/json' };
        if (body !== undefined && !chunked) headers['content-length'] = Buffer.byteLength(body);
        const request = http.request(`${running.url}/conversations`, { method, agent, headers }, response => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, body: text }));
          response.on('error', reject);
        });
        request.on('error', reject);
        request.setTimeout(5000, () => request.destroy(new Error(`${method} was not answered in 5 s`)));
        request.end(body);
      });
    try {
      // With a Content-Length, then without one (chunked), twice each.
      for (let round = 0; round < 4; round++) {
        const refused = await send('POST', big, { chunked: round % 2 === 1 });
        assert.equal(refused.status, 413, `round ${round}`);
        assert.equal(JSON.parse(refused.body).error.code, 'payload_too_large');
        const list = await send('GET');
        assert.equal(list.status, 200, `round ${round}`);
        assert.ok(Array.isArray(JSON.parse(list.body).data));
      }
    } finally {
      agent.destroy();
    }
  });
});
