import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChatResponse, Conversation } from '../../src/service/types.js';
import { createPersona, inProcess } from '../support/service.js';

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
});
