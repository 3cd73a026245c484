import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { startEmulator } from '../../src/emulator/node.js';
import type { RunningEmulator } from '../../src/emulator/node.js';
import { KnowledgeBase, composeReply, countTokens, words } from '../../src/emulator/engine.js';
import { ModelError, builtinReply, openAiReply, sleep } from '../../src/emulator/replies.js';
import { ServiceClient } from '../../src/service/client.js';
import {
  apiKey,
  collect,
  createPersona,
  expectError,
  inProcess,
  juniper,
  sseData,
  textOf,
} from '../support/service.js';

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

  const kb = new KnowledgeBase(juniper);
  const question = 'How long does shipping take?';
  const reading = (pace = 0, signal = new AbortController().signal) =>
    builtinReply({ kb, history: [], message: question, pace, signal });

  it('writes the composed reply word by word, and counts the persona, its sources, the history and the message', async () => {
    const { text, citations } = composeReply(kb, question);
    const plan = reading();
    const pieces = await collect(plan.pieces);
    assert.deepEqual(pieces, words(text));
    assert.equal(pieces.join(''), text);
    assert.deepEqual(plan.citations, citations);
    const sources = citations.reduce((n, c) => n + countTokens(JSON.stringify(c)), 0);
    assert.equal(plan.promptTokens, countTokens(juniper.description) + sources + countTokens(question));
    const history = [
      { role: 'user', content: 'Do you rent tents?' },
      { role: 'assistant', content: 'Yes, by the weekend.' },
    ];
    const later = builtinReply({ kb, history, message: question, pace: 0, signal: new AbortController().signal });
    assert.equal(
      later.promptTokens - plan.promptTokens,
      countTokens(history[0]!.content) + countTokens(history[1]!.content),
    );
  });

  it('stops a paced reply between two words when its signal aborts', async () => {
    const controller = new AbortController();
    const pieces = reading(1, controller.signal).pieces[Symbol.asyncIterator]();
    assert.equal((await pieces.next()).done, false, 'the first word at once');
    const reason = new Error('the client went away');
    const next = pieces.next();
    controller.abort(reason);
    await assert.rejects(next, reason);
  });

  it('waits, or gives up with the reason as soon as its signal aborts', async () => {
    await sleep(0);
    const controller = new AbortController();
    const reason = new Error('stopped');
    const waiting = sleep(60_000, controller.signal);
    controller.abort(reason);
    await assert.rejects(waiting, reason);
    await assert.rejects(sleep(0, controller.signal), reason, 'an aborted signal gives up at once');
  });
});

describe('replies from a model endpoint, in-process', () => {
  /** An OpenAI-compatible endpoint that answers as the test says, recording what it was asked. */
  function model(answer: () => Promise<Response>) {
    const asked: Request[] = [];
    const fetch = async (input: string | URL | Request, init?: RequestInit) => {
      asked.push(new Request(input, init));
      return answer();
    };
    return { asked, fetch };
  }
  const request = (signal = new AbortController().signal) => ({
    kb: new KnowledgeBase(juniper),
    history: [],
    message: 'How long does shipping take?',
    pace: 0,
    signal,
  });

  it('asks {base}/chat/completions, without an Authorization header when it has no key', async () => {
    const { asked, fetch } = model(async () => new Response('data: [DONE]\n\n'));
    const plan = await openAiReply({ baseUrl: 'http://model.test/v1//', model: 'm', fetch }, request());
    assert.deepEqual(await collect(plan.pieces), []);
    assert.equal(asked[0]!.url, 'http://model.test/v1/chat/completions');
    assert.equal(asked[0]!.headers.get('authorization'), null);
    assert.equal(asked[0]!.headers.get('accept'), 'text/event-stream');
  });

  it('fails as a model error when the endpoint cannot be reached or refuses, which the emulator answers with 502', async () => {
    const unreachable = model(() => Promise.reject(new TypeError('fetch failed')));
    await assert.rejects(
      openAiReply({ baseUrl: 'http://model.test/v1', model: 'm', fetch: unreachable.fetch }, request()),
      {
        constructor: ModelError,
        message: 'The model endpoint could not be reached.',
      },
    );
    const refusing = model(async () => new Response('overloaded', { status: 503 }));
    await assert.rejects(
      openAiReply({ baseUrl: 'http://model.test/v1', model: 'm', fetch: refusing.fetch }, request()),
      {
        constructor: ModelError,
        message: 'The model endpoint answered 503.',
      },
    );
    const { request: raw } = inProcess({
      openai: { baseUrl: 'http://model.test/v1', model: 'm', fetch: refusing.fetch },
    });
    const { conversationId } = await createPersona(raw);
    for (const path of ['chat', 'chat-sse']) {
      await expectError(
        raw('PATCH', `/conversations/${conversationId}/${path}`, { message: 'How long does shipping take?' }),
        502,
        'model_error',
        /answered 503/,
      );
    }
  });

  it("gives the caller's own abort back as it is, not as a model error", async () => {
    const controller = new AbortController();
    const reason = new Error('the client went away');
    const { fetch } = model(() => {
      controller.abort(reason);
      return Promise.reject(reason);
    });
    await assert.rejects(
      openAiReply({ baseUrl: 'http://model.test/v1', model: 'm', fetch }, request(controller.signal)),
      reason,
    );
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
