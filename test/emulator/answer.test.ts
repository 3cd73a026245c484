import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChatResponse, Conversation } from '../../src/service/types.js';
import { createPersona, inProcess, sseData } from '../support/service.js';

describe('answering a continue', () => {
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

  it('streams the text a complete response gives, uncached, as a run of its own', async () => {
    const { request } = inProcess();
    const { conversationId } = await createPersona(request);
    const message = 'How do I return a tent?';
    const whole = await request('PATCH', `/conversations/${conversationId}/chat`, { message });
    const reply = (await whole.json()) as ChatResponse;
    assert.match(reply.httpRequestId!, /^[0-9a-f-]{36}$/);
    const streamed = await request('PATCH', `/conversations/${conversationId}/chat-sse`, { message });
    assert.equal(streamed.headers.get('cache-control'), 'no-cache');
    assert.match(streamed.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/);
    assert.notEqual(streamed.headers.get('x-request-id'), reply.httpRequestId);
    const chunks = (await sseData(streamed)).slice(0, -1).map(d => JSON.parse(d));
    assert.equal(chunks.map(c => c.choices[0].delta.content ?? '').join(''), reply.choices[0]!.message!.content);
    assert.notEqual(chunks.at(-1).runId, reply.runId, 'each continue is a run of its own');
  });

  it('stores nothing of a stream its client cancels, and the whole run of one read to its end', async () => {
    const { request, emulator } = inProcess();
    const { conversationId } = await createPersona(request);
    const cancelled = await request('PATCH', `/conversations/${conversationId}/chat-sse`, { message: 'returns' });
    const reader = cancelled.body!.getReader();
    assert.equal((await reader.read()).done, false, 'the first chunk');
    await reader.cancel();
    assert.equal(emulator.store.get(conversationId)!.chatMessagesCount, 0, 'nothing of the cancelled run');
    await sseData(await request('PATCH', `/conversations/${conversationId}/chat-sse`, { message: 'returns' }));
    assert.deepEqual(
      emulator.store.get(conversationId)!.chatMessages!.map(m => [m.role, m.role === 'user' ? m.content : '']),
      [
        ['user', 'returns'],
        ['assistant', ''],
      ],
    );
  });
});
