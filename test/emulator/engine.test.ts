import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChatResponse } from '../../src/service/types.js';
import { ada, createPersona, inProcess } from '../support/service.js';

describe('the built-in reply engine', () => {
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
});
