import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { claimSource, eventFrames, eventResponse, frame, ping, sseHeaders } from '../../src/server/sse.js';
import type { FrameSink, FrameSource } from '../../src/server/sse.js';

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

  describe('eventResponse', () => {
    /** A source that records what is asked of it, and hands out its sink. */
    function recording() {
      const calls: string[] = [];
      let sink: FrameSink | undefined;
      const source: FrameSource = {
        start: given => {
          calls.push('start');
          sink = given;
        },
        resume: () => calls.push('resume'),
        cancel: () => calls.push('cancel'),
      };
      return { calls, source, sink: () => sink! };
    }
    const encoder = new TextEncoder();
    /** A web stream starts, and pulls, a turn after it is asked to. */
    const turn = () => new Promise(resolve => setImmediate(resolve));

    it('starts its source on the first read, and asks for more once what was written is read', async () => {
      const { calls, source, sink } = recording();
      const response = eventResponse(source, body => new Response(body, { headers: sseHeaders }));
      assert.deepEqual(calls, [], 'nothing is started before a read');
      const reader = response.body!.getReader();
      const first = reader.read();
      await turn();
      assert.deepEqual(calls, ['start']);
      sink().write(encoder.encode('a'));
      assert.equal(new TextDecoder().decode((await first).value), 'a');
      assert.equal(sink().ready(), true, 'nothing waits');
      sink().write(encoder.encode('b'));
      assert.equal(sink().ready(), false, 'a frame waits for its reader');
      assert.equal(new TextDecoder().decode((await reader.read()).value), 'b');
      const third = reader.read();
      await turn();
      assert.deepEqual(calls, ['start', 'resume']);
      sink().close();
      assert.equal((await third).done, true);
      assert.equal(claimSource(response), undefined, 'a stream that was read is not claimed');
    });

    it('tells its source when the reader goes away, started or not', async () => {
      const started = recording();
      const response = eventResponse(started.source, body => new Response(body));
      const reader = response.body!.getReader();
      void reader.read();
      await turn();
      await reader.cancel();
      assert.deepEqual(started.calls, ['start', 'cancel']);
      const unread = recording();
      await eventResponse(unread.source, body => new Response(body)).body!.cancel();
      assert.deepEqual(unread.calls, ['cancel']);
    });

    it('gives its source once to a server that writes the frames itself, and the stream then starts nothing', async () => {
      const { calls, source } = recording();
      const response = eventResponse(source, body => new Response(body));
      assert.equal(claimSource(response), source);
      assert.equal(claimSource(response), undefined, 'only once');
      assert.equal(claimSource(new Response('other')), undefined);
      // Whatever reads the stream by mistake waits on it, rather than starting the source a second time.
      void response.body!.getReader().read();
      await turn();
      assert.deepEqual(calls, []);
    });
  });
});
