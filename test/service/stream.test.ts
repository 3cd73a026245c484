import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { ServiceError } from '../../src/service/errors.js';
import {
  readBody,
  readNdjsonBatches,
  readNdjsonStream,
  readSseBatches,
  readSseStream,
} from '../../src/service/stream.js';
import type { StreamChunk } from '../../src/service/types.js';
import { collect, textOf } from '../support/service.js';

const fixture = (name: string) => readFile(new URL(`./fixtures/${name}`, import.meta.url));

/** A body that delivers `bytes` in pieces of `size` bytes, to show that chunk boundaries do not matter. */
function bodyOf(bytes: Uint8Array, size = bytes.length): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
}

describe('readSseStream', () => {
  it("keeps moderation results: a choice's, or the chunk's own, else the prompt's", async () => {
    const result = (severity: string) => ({ categoryResults: [{ category: 'hate', filtered: false, severity }] });
    const read = async (...events: unknown[]) => {
      const text = events.map(e => `data: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n';
      const last = (await collect(readSseStream(bodyOf(new TextEncoder().encode(text))))).at(-1);
      return last?.type === 'done' ? last : undefined;
    };
    const delta = { choices: [{ delta: { content: 'Hi' } }] };
    const inChoice = { choices: [{ delta: {}, finish_reason: 'stop', moderation_results: result('reply') }] };
    assert.deepEqual(
      (await read(delta, { ...inChoice, prompt_moderations: result('prompt') }))?.moderation,
      result('reply'),
    );
    assert.deepEqual(
      (await read(delta, { choices: [{ delta: {} }], moderation_results: result('beside') }))?.moderation,
      result('beside'),
    );
    assert.deepEqual((await read({ prompt_moderations: result('prompt') }, delta))?.moderation, result('prompt'));
    assert.equal((await read(delta))?.moderation, undefined);
  });

  for (const size of [1, 7, 1 << 20]) {
    it(`reads OpenAI-style chunks and stops at [DONE] (pieces of ${size} bytes)`, async () => {
      const chunks = await collect(readSseStream(bodyOf(await fixture('openai-chunks.sse'), size)));
      assert.equal(textOf(chunks), 'Returns are free within 60 days [1].');
      const citations = chunks.filter(c => c.type === 'citations');
      assert.equal(citations.length, 1);
      assert.equal(citations[0]?.type === 'citations' && citations[0].citations[0]?.documentId, 'returns');
      assert.deepEqual(chunks.at(-1), {
        type: 'done',
        finishReason: 'stop',
        messageId: '6f1c1f2e-4a43-4c69-9d1f-2f7f3c1d9a01',
        runId: '0b7e9a55-1d53-4d5e-a7b9-36c0f1e1d0a2',
        usage: { prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 },
      });
      assert.equal(chunks.filter(c => c.type === 'done').length, 1);
    });
  }

  it('reads cumulative whole Chat responses and a named done event', async () => {
    const chunks = await collect(readSseStream(bodyOf(await fixture('cumulative-chat-responses.sse'), 5)));
    assert.deepEqual(
      chunks.filter(c => c.type === 'delta').map(c => c.type === 'delta' && c.text),
      ['Tents', ' rent from', ' $18 a night.'],
    );
    const done = chunks.at(-1);
    assert.equal(done?.type, 'done');
    assert.equal(done?.type === 'done' && done.messageId, 'm-2');
    assert.equal(done?.type === 'done' && done.finishReason, 'stop');
    assert.equal(done?.type === 'done' && done.usage?.total_tokens, 19);
  });

  it('fails a body that ends without a marked end as incomplete, after the text it had', async () => {
    // What a proxy that ends a response cleanly in the middle of a reply leaves: no [DONE], no finish reason.
    const seen: StreamChunk[] = [];
    await assert.rejects(
      async () => {
        for await (const chunk of readSseStream(bodyOf(await fixture('incremental-chat-responses.sse')))) {
          seen.push(chunk);
        }
      },
      { name: 'ServiceError', code: 'incomplete', retryable: true },
    );
    assert.equal(textOf(seen), 'Boots need breaking in.');
    assert.ok(!seen.some(chunk => chunk.type === 'done'), 'never a done');
  });

  it('takes a finish reason as the end even when no [DONE] follows it', async () => {
    const body = new TextEncoder().encode(
      `data: {"choices":[{"delta":{"content":"Done."},"finish_reason":"stop"}]}\n\n` +
        `data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}\n\n`,
    );
    const chunks = await collect(readSseStream(bodyOf(body, 9)));
    assert.equal(textOf(chunks), 'Done.');
    const done = chunks.at(-1);
    assert.equal(done?.type === 'done' && done.finishReason, 'stop');
    assert.equal(done?.type === 'done' && done.usage?.total_tokens, 3, 'a last chunk after the finish is read');
  });

  it('reads incremental whole Chat responses that end with the body, when told to accept an unmarked end', async () => {
    const body = bodyOf(await fixture('incremental-chat-responses.sse'));
    const chunks = await collect(readSseStream(body, { acceptUnmarkedEnd: true }));
    assert.equal(textOf(chunks), 'Boots need breaking in.');
    assert.deepEqual(
      chunks.map(c => c.type),
      ['delta', 'delta', 'delta', 'citations', 'done'],
    );
    const done = chunks.at(-1);
    assert.equal(done?.type === 'done' && done.messageId, 'm-3');
  });

  it('reads plain-text data lines with CRLF endings, multi-line data and a done event', async () => {
    const chunks = await collect(readSseStream(bodyOf(await fixture('plain-text.sse'), 3)));
    assert.equal(textOf(chunks), 'Plain text lines\nand a second line');
    const done = chunks.at(-1);
    assert.equal(done?.type === 'done' && done.messageId, 'm-4');
    assert.equal(done?.type === 'done' && done.finishReason, 'stop');
  });

  it('reads bare JSON strings, content and text objects, and snake- or camel-case metadata', async () => {
    const chunks = await collect(readSseStream(bodyOf(await fixture('camel-case-end.sse'))));
    assert.equal(textOf(chunks), 'A bare JSON string, then a content object, then a text object.');
    assert.deepEqual(chunks.at(-1), {
      type: 'done',
      messageId: 'm-5',
      runId: 'r-5',
      finishReason: 'length',
      usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    });
  });

  it('turns an error event into a ServiceError after the text before it', async () => {
    const seen: StreamChunk[] = [];
    await assert.rejects(
      async () => {
        for await (const chunk of readSseStream(bodyOf(await fixture('error-event.sse')))) seen.push(chunk);
      },
      (error: unknown) =>
        error instanceof ServiceError &&
        error.code === 'model_overloaded' &&
        error.message === 'The model is overloaded.',
    );
    assert.equal(textOf(seen), 'Partial ');
  });

  it('times out when no byte arrives in time', async () => {
    const silent = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) });
    await assert.rejects(collect(readSseStream(silent, { firstByteMs: 30 })), { code: 'first_byte_timeout' });
  });

  it('times a pause after the first bytes by the idle limit, and never the time the reader takes', async () => {
    const event = new TextEncoder().encode(`data: ${JSON.stringify({ content: 'Hi' })}\n\n`);
    let sent = 0;
    const stalls = new ReadableStream<Uint8Array>({
      pull: controller => (sent++ ? new Promise(() => {}) : controller.enqueue(event)),
    });
    await assert.rejects(collect(readBody(stalls, { firstByteMs: 60_000, idleMs: 30 })), { code: 'idle_timeout' });
    const steady = bodyOf(new TextEncoder().encode('one two three'), 4);
    const pieces: Uint8Array[] = [];
    for await (const piece of readBody(steady, { firstByteMs: 30, idleMs: 30 })) {
      pieces.push(piece);
      // A slow reader: longer than either limit between its reads.
      await new Promise(resolve => setTimeout(resolve, 60));
    }
    assert.equal(pieces.length, 4, 'every piece, no timeout');
  });

  it('ends the read under way with the signal’s reason', async () => {
    const controller = new AbortController();
    const silent = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) });
    const reading = collect(readBody(silent, { firstByteMs: 60_000, signal: controller.signal }));
    controller.abort(new Error('the call is over'));
    await assert.rejects(reading, /the call is over/);
  });
});

describe('readNdjsonStream', () => {
  for (const size of [1, 1 << 20]) {
    it(`reads newline-delimited chunks (pieces of ${size} bytes)`, async () => {
      const chunks = await collect(readNdjsonStream(bodyOf(await fixture('http2.ndjson'), size)));
      assert.equal(textOf(chunks), 'Over HTTP/2 [1].');
      assert.deepEqual(
        chunks.map(c => c.type),
        ['delta', 'delta', 'citations', 'done'],
      );
      const done = chunks.at(-1);
      assert.equal(done?.type === 'done' && done.runId, 'r-6');
    });
  }

  it('fails a body that ends without a marked end as incomplete', async () => {
    const body = new TextEncoder().encode('{"content":"Cut "}\n{"content":"off"}\n');
    await assert.rejects(collect(readNdjsonStream(bodyOf(body, 6))), { code: 'incomplete', retryable: true });
    const accepted = await collect(readNdjsonStream(bodyOf(body, 6), { acceptUnmarkedEnd: true }));
    assert.equal(textOf(accepted), 'Cut off');
    assert.equal(accepted.at(-1)?.type, 'done');
  });

  it('tolerates data: prefixes and a [DONE] line', async () => {
    const body = new TextEncoder().encode('data: {"content":"a"}\n\ndata: {"content":"b"}\n[DONE]\n{"content":"c"}\n');
    const chunks = await collect(readNdjsonStream(bodyOf(body, 4)));
    assert.equal(textOf(chunks), 'ab');
  });

  it('fails on a line that is not JSON, never taking it for reply text', async () => {
    const body = new TextEncoder().encode('{"content":"a"}\n<html><body>Bad Gateway</body></html>\n{"content":"b"}\n');
    const seen: StreamChunk[] = [];
    await assert.rejects(
      async () => {
        for await (const chunk of readNdjsonStream(bodyOf(body, 5))) seen.push(chunk);
      },
      { name: 'ServiceError', code: 'bad_response', retryable: true },
    );
    assert.equal(textOf(seen), 'a', 'what came before the line stays; nothing of the line is text');
  });
});

describe('readSseBatches and readNdjsonBatches', () => {
  /** A body of the given reads, one piece each. */
  const readsOf = (...reads: string[]) => {
    const pieces = reads.map(read => new TextEncoder().encode(read));
    return new ReadableStream<Uint8Array>({
      pull: controller => (pieces.length ? controller.enqueue(pieces.shift()!) : controller.close()),
    });
  };
  const delta = (text: string) => JSON.stringify({ choices: [{ delta: { content: text } }] });
  const kinds = (batches: StreamChunk[][]) =>
    batches.map(batch => batch.map(c => (c.type === 'delta' ? c.text : c.type)));

  it('gives the chunks of each read of an SSE body together, the last batch ending with done', async () => {
    const body = readsOf(
      `data: ${delta('One ')}\n\ndata: ${delta('two ')}\n\ndata: `,
      `${delta('three. ')}\n\n`,
      `data: [DONE]\n\n`,
    );
    assert.deepEqual(kinds(await collect(readSseBatches(body))), [['One ', 'two '], ['three. '], ['done']]);
  });

  it('gives the chunks read before an error in a batch of their own, then throws', async () => {
    const body = readsOf(`data: ${delta('Partial ')}\n\nevent: error\ndata: {"message":"overloaded"}\n\n`);
    const seen: StreamChunk[][] = [];
    await assert.rejects(async () => {
      for await (const batch of readSseBatches(body)) seen.push(batch);
    }, ServiceError);
    assert.deepEqual(kinds(seen), [['Partial ']]);
  });

  it('gives the chunks of each read of a newline-delimited body together', async () => {
    const end = JSON.stringify({ choices: [{ delta: { content: '.' }, finish_reason: 'stop' }] });
    const body = readsOf(`${delta('Over ')}\n${delta('HTTP/2')}\n`, `${end}\n`);
    assert.deepEqual(kinds(await collect(readNdjsonBatches(body))), [['Over ', 'HTTP/2'], ['.'], ['done']]);
  });
});
