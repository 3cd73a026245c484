import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { startEmulator } from '../../src/emulator/node.js';
import type { RunningEmulator } from '../../src/emulator/node.js';
import { ServiceClient } from '../../src/service/client.js';
import { apiKey, collect, createPersona, inProcess, juniper, sseData, textOf } from '../support/service.js';

describe('built-in replies', () => {
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
});

describe('emulator with an OpenAI-compatible endpoint', () => {
  const requests: {
    authorization: string | undefined;
    body: { model: string; stream: boolean; messages: { role: string; content: string }[] };
  }[] = [];
  let model: ReturnType<typeof serve>;
  let running: RunningEmulator;

  before(async () => {
    // A small local server that speaks the OpenAI chat.completions streaming format.
    const app = new Hono();
    app.post('/v1/chat/completions', async c => {
      requests.push({ authorization: c.req.header('authorization'), body: await c.req.json() });
      const pieces = ['Standard ', 'shipping ', 'takes ', '3 to 5 ', 'business days [1].'];
      const frames = pieces.map(
        content =>
          `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }] })}\n\n`,
      );
      frames.push(
        `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
        'data: [DONE]\n\n',
      );
      return new Response(frames.join(''), { headers: { 'content-type': 'text/event-stream' } });
    });
    model = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise(resolve => model.once('listening', resolve));
    const port = (model.address() as AddressInfo).port;
    running = await startEmulator({
      apiKey,
      openai: { baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: 'model-key', model: 'tiny-model' },
    });
  });
  after(async () => {
    await running.close();
    await new Promise(resolve => model.close(resolve));
  });

  it('generates the reply there, streaming, grounded on the retrieved passages', async () => {
    const client = new ServiceClient({ baseUrl: running.url, apiKey });
    const { conversationId } = await client.createPersonaConversation({
      personaId: juniper.personaId,
      externalUserId: 'o1',
    });
    const chunks = await collect(client.streamSse(conversationId, 'How long does shipping take?'));
    assert.equal(textOf(chunks), 'Standard shipping takes 3 to 5 business days [1].');
    const citations = chunks.find(c => c.type === 'citations');
    assert.equal(citations?.type === 'citations' && citations.citations[0]?.documentId, 'shipping');
    assert.equal(requests.length, 1);
    const [sent] = requests;
    assert.equal(sent!.authorization, 'Bearer model-key');
    assert.equal(sent!.body.model, 'tiny-model');
    assert.equal(sent!.body.stream, true);
    assert.equal(sent!.body.messages[0]!.role, 'system');
    assert.match(sent!.body.messages[0]!.content, /\[1\] Shipping\nStandard shipping is free on orders over \$75/);
    assert.deepEqual(sent!.body.messages.at(-1), { role: 'user', content: 'How long does shipping take?' });
    const stored = await client.getConversation(conversationId);
    assert.equal(stored.chatMessages![1]!.content, textOf(chunks));
  });

  it('does not call the model for a question the documents do not cover', async () => {
    const client = new ServiceClient({ baseUrl: running.url, apiKey });
    const { conversationId } = await client.createPersonaConversation({
      personaId: juniper.personaId,
      externalUserId: 'o2',
    });
    const before = requests.length;
    const reply = await client.continueConversation(conversationId, 'Who won the chess olympiad?');
    assert.match(reply.choices[0]!.message!.content!, /^I don't know that/);
    assert.deepEqual(reply.citations, []);
    assert.equal(requests.length, before);
  });
});
