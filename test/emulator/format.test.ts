import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatResponse, deltaChunk, finalChunk, frameFor, streamContentType } from '../../src/emulator/format.js';
import { createPersona, inProcess, sseData } from '../support/service.js';

describe('replies on the wire', () => {
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

  describe('the pieces', () => {
    const ids = { runId: 'r1', messageId: 'm1', requestId: 'q1', created: 1_800_000_000, model: 'extractive-1' };
    const usage = { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 };
    const citations = [{ index: 'shop', documentId: 'returns', partitions: [] }];
    const unfiltered = ['hate', 'self_harm', 'sexual', 'violence'].map(category => ({
      category,
      filtered: false,
      severity: 'safe',
    }));

    it('writes a complete reply as a chat.completion with its ids, usage, citations and unfiltered moderation', () => {
      assert.deepEqual(chatResponse(ids, 'Hello there', usage, citations), {
        id: 'chatcmpl-r1',
        object: 'chat.completion',
        created: 1_800_000_000,
        usage,
        choices: [
          {
            finish_reason: 'stop',
            index: 0,
            message: { role: 'assistant', content: 'Hello there', toolCallId: null, name: null },
            moderation_results: { categoryResults: unfiltered },
          },
        ],
        messageId: 'm1',
        runId: 'r1',
        httpRequestId: 'q1',
        citations,
        prompt_moderations: { categoryResults: unfiltered },
      });
    });

    it('gives the role in the first delta only, and the finish reason, usage, ids and citations in the last chunk', () => {
      const head = {
        id: 'chatcmpl-r1',
        object: 'chat.completion.chunk',
        created: 1_800_000_000,
        model: 'extractive-1',
      };
      assert.deepEqual(deltaChunk(ids, 'Hello ', true), {
        ...head,
        choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello ' }, finish_reason: null }],
      });
      assert.deepEqual(deltaChunk(ids, 'there', false).choices, [
        { index: 0, delta: { content: 'there' }, finish_reason: null },
      ]);
      assert.deepEqual(finalChunk(ids, usage, citations), {
        ...head,
        choices: [{ index: 0, delta: {}, finish_reason: 'stop', moderation_results: { categoryResults: unfiltered } }],
        usage,
        messageId: 'm1',
        runId: 'r1',
        citations,
        prompt_moderations: { categoryResults: unfiltered },
      });
    });

    it('frames a chunk as an SSE data line or a line of JSON, and names the content type of each', () => {
      assert.equal(frameFor('sse')({ a: 1 }), 'data: {"a":1}\n\n');
      assert.equal(frameFor('sse')('[DONE]'), 'data: [DONE]\n\n');
      assert.equal(frameFor('http2')({ a: 1 }), '{"a":1}\n');
      assert.equal(streamContentType('sse'), 'text/event-stream; charset=utf-8');
      assert.equal(streamContentType('http2'), 'application/x-ndjson');
    });
  });
});
