import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
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
});
