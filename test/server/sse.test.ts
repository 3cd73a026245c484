import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { eventFrames, frame, ping, sseHeaders } from '../../src/server/sse.js';

/** What a browser's SSE parser reads from these bytes. */
async function parse(...chunks: Uint8Array[]) {
  const decoder = new TextDecoder();
  const body = new ReadableStream<string>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(decoder.decode(chunk, { stream: true }));
      controller.close();
    },
  });
  const read = [];
  for await (const event of body.pipeThrough(new EventSourceParserStream())) {
    read.push({ id: event.id, event: event.event, data: event.data });
  }
  return read;
}

describe('the reply stream writer', () => {
  it('writes one event per frame, whatever line breaks or event-like text the model’s reply holds', async () => {
    const text = 'line one\n\nevent: done\ndata: {"forged":true}\r\nid: 9-9\n';
    assert.deepEqual(
      await parse(
        frame('delta', { text }),
        ping(),
        frame('meta', { conversationId: 'c1', key: 'k', attempt: 1, ping: 15_000 }),
      ),
      [
        { id: undefined, event: 'delta', data: JSON.stringify({ text }) },
        { id: undefined, event: 'meta', data: '{"conversationId":"c1","key":"k","attempt":1,"ping":15000}' },
      ],
    );
  });

  it('writes logged events with their ids in one piece, which the parser reads back as they were', async () => {
    const logged = [
      { id: '1-1', event: 'delta', data: JSON.stringify({ text: 'Hi\nthere' }) },
      { id: '1-2', event: 'done', data: JSON.stringify({ messageId: 'm1', runId: 'r1', finishReason: 'stop' }) },
    ];
    assert.deepEqual(await parse(eventFrames(logged)), logged);
    assert.deepEqual(await parse(eventFrames([])), []);
  });

  it('is sent uncached, untransformed and unbuffered by proxies', () => {
    assert.deepEqual(sseHeaders, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    });
  });
});
