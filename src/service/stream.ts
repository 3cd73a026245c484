/**
 * @module
 * A tolerant reader for streamed replies. The interface does not say what a streamed event looks like or how a
 * stream ends, so this accepts the plausible formats and turns each into the same chunks:
 *
 * - OpenAI-style `chat.completion.chunk` objects (`choices[].delta.content`);
 * - whole Chat responses (`choices[].message.content`), each carrying either the text so far or just the new part;
 * - bare JSON strings, `{content}` / `{text}` objects, and plain-text `data:` lines;
 * - an end marked by `data: [DONE]`, a named `done` / `end` / `complete` event, or a chunk with a finish reason.
 *
 * A body that ends without any of these is an incomplete reply, a retryable `incomplete` ServiceError, never a finished
 * one: something between us and the service (a proxy, a load balancer, a sidecar) may end a response cleanly in its
 * middle. `acceptUnmarkedEnd` takes the end of the body as the reply's end instead, for a service that never marks
 * it; behind such an intermediary that shows a truncated reply as complete.
 *
 * SSE bodies go through eventsource-parser; HTTP/2 bodies are newline-delimited JSON (a `data:` prefix is tolerated;
 * a line that is not JSON fails the stream).
 */
import { createParser } from 'eventsource-parser';
import { normalizeCitations } from './citations.js';
import { ServiceError } from './errors.js';
import type { DoneChunk, ModerationResult, StreamChunk, Usage } from './types.js';

const terminalEvents = new Set(['done', 'end', 'complete', 'completed', 'finish', 'finished']);

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/**
 * Turns upstream events into normalized chunks. Keeps the text seen so far (to tell cumulative whole responses
 * from incremental ones) and the metadata that the terminal `done` chunk reports.
 */
export class ChunkNormalizer {
  readonly #jsonOnly: boolean;
  /**
   * The text so far: strings of pieces joined, then the latest pieces. A string built with `+=` piece by piece is a
   * tree that holds every piece until it is read whole; a reply held open for its whole length would keep hundreds.
   */
  #joined: string[] = [];
  #pieces: string[] = [];
  #citations = '';
  #ended = false;
  #complete = false;
  readonly #done: DoneChunk = { type: 'done' };
  /** The reply's moderation results (a choice's, or the chunk's own), and the prompt's, kept apart until the end. */
  #moderation: { reply?: ModerationResult; prompt?: ModerationResult } = {};

  /** `jsonOnly`: every event is JSON (or `[DONE]`); anything else is a bad_response, never reply text. */
  constructor(options: { jsonOnly?: boolean } = {}) {
    this.#jsonOnly = options.jsonOnly ?? false;
  }

  /** True once a terminal marker (`[DONE]` or a named done event) was seen: nothing after it is read. */
  get ended(): boolean {
    return this.#ended;
  }

  /**
   * True once the service marked the reply complete: a terminal marker, or a finish reason (after which a last chunk,
   * such as one with the usage, may still come).
   */
  get complete(): boolean {
    return this.#ended || this.#complete;
  }

  /** The whole reply text so far. */
  get text(): string {
    const text = [...this.#joined, ...this.#pieces].join('');
    this.#joined = [text];
    this.#pieces = [];
    return text;
  }

  /** One event: its name (SSE `event:`, if any) and its data. Returns the chunks it produced. */
  accept(data: string, event?: string): StreamChunk[] {
    if (this.#ended) return [];
    const name = event?.toLowerCase();
    if (name === 'error') throw streamError(data);
    if (data.trim() === '[DONE]') {
      this.#ended = true;
      return [];
    }
    const out: StreamChunk[] = [];
    let payload: unknown = data;
    if (this.#jsonOnly || /^\s*[[{"]/.test(data)) {
      try {
        payload = JSON.parse(data);
      } catch {
        if (this.#jsonOnly) {
          throw new ServiceError({
            status: 0,
            code: 'bad_response',
            message: 'The stream sent something that is not JSON.',
          });
        }
        payload = data;
      }
    }
    if (typeof payload === 'string') {
      if (name && terminalEvents.has(name)) this.#ended = true;
      else this.#delta(payload, out);
      return out;
    }
    if (isObject(payload)) this.#object(payload, out);
    if (name && terminalEvents.has(name)) this.#ended = true;
    return out;
  }

  /** The terminal chunk, with whatever metadata the stream carried. */
  finish(): DoneChunk {
    this.#ended = true;
    // As in a complete response: the reply's results, or else the prompt's.
    const moderation = this.#moderation.reply ?? this.#moderation.prompt;
    return moderation ? { ...this.#done, moderation } : { ...this.#done };
  }

  #delta(text: string, out: StreamChunk[]) {
    if (!text) return;
    if (this.#pieces.push(text) >= 32) {
      this.#joined.push(this.#pieces.join(''));
      this.#pieces = [];
    }
    out.push({ type: 'delta', text });
  }

  #object(obj: Json, out: StreamChunk[]) {
    if (isObject(obj.error) || (typeof obj.error === 'string' && obj.error)) {
      throw streamError(JSON.stringify(obj.error));
    }
    const choices = Array.isArray(obj.choices) ? obj.choices : [];
    const choice = choices.find(isObject);
    if (choice) {
      const delta = isObject(choice.delta) ? str(choice.delta.content) : undefined;
      const whole = isObject(choice.message) ? str(choice.message.content) : undefined;
      if (delta !== undefined) this.#delta(delta, out);
      else if (whole !== undefined) this.#whole(whole, out);
      const finish = str(choice.finish_reason) ?? str(choice.finishReason);
      if (finish) this.#finished(finish);
      if (isObject(choice.moderation_results)) this.#moderation.reply = moderationOf(choice.moderation_results);
    } else {
      const text = str(obj.content) ?? str(obj.text) ?? str(obj.delta);
      if (text !== undefined) this.#delta(text, out);
      const finish = str(obj.finish_reason) ?? str(obj.finishReason);
      if (finish) this.#finished(finish);
    }
    const messageId = str(obj.messageId) ?? str(obj.message_id);
    if (messageId) this.#done.messageId = messageId;
    const runId = str(obj.runId) ?? str(obj.run_id) ?? str(obj.conversationRunId);
    if (runId) this.#done.runId = runId;
    if (isObject(obj.usage)) this.#done.usage = normalizeUsage(obj.usage);
    if (isObject(obj.moderation_results)) this.#moderation.reply ??= moderationOf(obj.moderation_results);
    if (isObject(obj.prompt_moderations)) this.#moderation.prompt = moderationOf(obj.prompt_moderations);
    if (Array.isArray(obj.citations) && obj.citations.length > 0) {
      const citations = normalizeCitations(obj.citations);
      const key = JSON.stringify(citations);
      if (key !== this.#citations) {
        this.#citations = key;
        out.push({ type: 'citations', citations });
      }
    }
  }

  #finished(reason: string) {
    this.#done.finishReason = reason;
    this.#complete = true;
  }

  /** A whole Chat response: either everything so far (cumulative) or just the next part. */
  #whole(content: string, out: StreamChunk[]) {
    const text = this.text;
    if (text && content.startsWith(text)) this.#delta(content.slice(text.length), out);
    else this.#delta(content, out);
  }
}

const moderationOf = (value: Json) => value as unknown as ModerationResult;

function normalizeUsage(usage: Json): Usage {
  const num = (...values: unknown[]) => Number(values.find(v => typeof v === 'number') ?? 0);
  const prompt = num(usage.prompt_tokens, usage.promptTokens);
  const completion = num(usage.completion_tokens, usage.completionTokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: num(usage.total_tokens, usage.totalTokens, prompt + completion),
  };
}

function streamError(data: string): ServiceError {
  let message = 'The service reported an error in the stream.';
  let code = 'service_error';
  try {
    const parsed: unknown = JSON.parse(data);
    const inner = isObject(parsed) && isObject(parsed.error) ? parsed.error : parsed;
    if (isObject(inner)) {
      message = str(inner.message) ?? message;
      code = str(inner.code) ?? code;
    } else if (typeof inner === 'string' && inner) message = inner;
  } catch {
    if (data.trim()) message = data.trim();
  }
  return new ServiceError({ status: 0, code, message: message.slice(0, 300), retryable: true });
}

export interface ReadOptions {
  /** Longest wait for the first body bytes, in ms. */
  firstByteMs?: number;
  /** Longest wait between two reads of the body, in ms. */
  idleMs?: number;
  signal?: AbortSignal;
  /**
   * Takes a body that ends without a terminal marker or a finish reason as a complete reply. Only for a service that
   * never marks the end: behind a proxy that ends a response cleanly in its middle, a truncated reply then counts as
   * complete. Default false: such a body is a retryable `incomplete` ServiceError.
   */
  acceptUnmarkedEnd?: boolean;
}

/**
 * Reads a body with first-byte and idle timeouts that cancel it and fail the read with a ServiceError. A reply comes
 * in many small reads, so a read costs no timer, promise or listener of its own: one abort listener serves the whole
 * body, and one timer at a time watches the read under way (a timer that fires early, its read having ended since,
 * waits on for the rest of the current read's time). A timeout or an abort cancels the body, which ends the read
 * under way, and is thrown in its place.
 */
export class BodyReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #options: ReadOptions;
  #failure: unknown;
  #first = true;
  /** When the read under way must have ended (epoch ms), with its limit and code; 0 between reads. */
  #deadline = 0;
  #limit = 0;
  #code = '';
  /** The timer, and when it fires. */
  #timer: ReturnType<typeof setTimeout> | undefined;
  #firesAt = 0;
  readonly #onAbort = () => this.#fail(this.#options.signal?.reason ?? new DOMException('Aborted', 'AbortError'));
  readonly #check = () => {
    this.#timer = undefined;
    if (!this.#deadline) return;
    if (this.#deadline > Date.now()) return this.#watch(this.#deadline);
    this.#fail(
      new ServiceError({
        status: 0,
        code: this.#code,
        message: `No data from the service within ${this.#limit} ms.`,
        retryable: true,
      }),
    );
  };

  constructor(body: ReadableStream<Uint8Array>, options: ReadOptions = {}) {
    this.#reader = body.getReader();
    this.#options = options;
    options.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** The next piece of the body; undefined at its end. */
  async read(): Promise<Uint8Array | undefined> {
    this.#options.signal?.throwIfAborted();
    if (this.#failure) throw this.#failure;
    const ms = (this.#first ? this.#options.firstByteMs : this.#options.idleMs) ?? 0;
    if (ms > 0) {
      this.#deadline = Date.now() + ms;
      this.#limit = ms;
      this.#code = this.#first ? 'first_byte_timeout' : 'idle_timeout';
      if (!this.#timer || this.#firesAt > this.#deadline) this.#watch(this.#deadline);
    }
    const result = await this.#reader.read();
    this.#deadline = 0;
    if (this.#failure) throw this.#failure;
    if (result.done) return undefined;
    this.#first = false;
    return result.value;
  }

  /** Stops reading: the timer, the abort listener and the body go. */
  close() {
    this.#deadline = 0;
    clearTimeout(this.#timer);
    this.#options.signal?.removeEventListener('abort', this.#onAbort);
    this.#reader.cancel().catch(() => {});
  }

  #fail(error: unknown) {
    this.#failure ??= error;
    this.#reader.cancel(this.#failure).catch(() => {});
  }

  #watch(at: number) {
    clearTimeout(this.#timer);
    this.#firesAt = at;
    this.#timer = setTimeout(this.#check, Math.max(0, at - Date.now()));
  }
}

/** The body's bytes, piece by piece, with the timeouts of `BodyReader`. */
export async function* readBody(body: ReadableStream<Uint8Array>, options: ReadOptions = {}) {
  const reader = new BodyReader(body, options);
  try {
    for (let piece = await reader.read(); piece; piece = await reader.read()) yield piece;
  } finally {
    reader.close();
  }
}

/** The chunks of what was read so far, and the failure that ended them, if any. */
interface Read {
  batch: StreamChunk[];
  failure: unknown;
}

/**
 * The batches of a body, one per read of it: `read` takes the text of each read (then, `final`, what the decoder still
 * held) and gives the chunks it made. Reading stops at the normalizer's end; the last batch ends with exactly one
 * `done`, or the failure is thrown after the chunks read before it (a body that ends unmarked fails `incomplete`).
 * One promise per read: no generator between the body and the caller.
 */
export class BatchReader {
  readonly #body: BodyReader;
  readonly #options: ReadOptions;
  readonly #normalizer: ChunkNormalizer;
  readonly #read: (text: string, final: boolean) => Read;
  readonly #decoder = new TextDecoder();
  /** The failure to throw once the chunks read before it were given; `true` once the last batch was given. */
  #over: { failure: unknown } | boolean = false;

  constructor(
    body: ReadableStream<Uint8Array>,
    options: ReadOptions,
    normalizer: ChunkNormalizer,
    read: (text: string, final: boolean) => Read,
  ) {
    this.#body = new BodyReader(body, options);
    this.#options = options;
    this.#normalizer = normalizer;
    this.#read = read;
  }

  /** The next batch (never empty); undefined after the last. */
  async next(): Promise<StreamChunk[] | undefined> {
    for (;;) {
      const over = this.#over;
      if (over) {
        if (over === true) return undefined;
        this.#over = true;
        throw over.failure;
      }
      let bytes: Uint8Array | undefined;
      try {
        bytes = this.#normalizer.ended ? undefined : await this.#body.read();
      } catch (error) {
        this.close();
        throw error;
      }
      if (bytes) {
        const { batch, failure } = this.#read(this.#decoder.decode(bytes, { stream: true }), false);
        if (failure) this.#over = { failure };
        if (batch.length) return batch;
        continue;
      }
      this.#body.close();
      const { batch, failure: readFailure } = this.#read(this.#decoder.decode(), true);
      const unmarked = this.#normalizer.complete || this.#options.acceptUnmarkedEnd ? undefined : incomplete();
      const failure = readFailure ?? unmarked;
      if (failure) {
        this.#over = { failure };
        if (batch.length) return batch;
        continue;
      }
      this.#over = true;
      batch.push(this.#normalizer.finish());
      return batch;
    }
  }

  /** Stops reading the body. */
  close() {
    this.#over = true;
    this.#body.close();
  }
}

/** The batches of a `BatchReader`, as a generator. */
async function* readBatches(reader: BatchReader): AsyncGenerator<StreamChunk[]> {
  try {
    for (let batch = await reader.next(); batch; batch = await reader.next()) yield batch;
  } finally {
    reader.close();
  }
}

/** A body that ended before the service said the reply was complete. */
const incomplete = () =>
  new ServiceError({
    status: 0,
    code: 'incomplete',
    message: 'The reply ended before the service marked it complete.',
    retryable: true,
  });

/**
 * Reads a Server-Sent Events body into normalized chunks, in batches: the chunks of each read of the body together,
 * which is how a proxy wants them (one step through its pipeline per read, not per word); the last batch ends with
 * exactly one `done`.
 */
export function readSseBatches(
  body: ReadableStream<Uint8Array>,
  options: ReadOptions = {},
): AsyncGenerator<StreamChunk[]> {
  return readBatches(sseBatchReader(body, options));
}

/** A `BatchReader` of a Server-Sent Events body. */
export function sseBatchReader(body: ReadableStream<Uint8Array>, options: ReadOptions = {}): BatchReader {
  const normalizer = new ChunkNormalizer();
  let batch: StreamChunk[] = [];
  let failure: unknown;
  const parser = createParser({
    onEvent(message) {
      if (failure) return;
      try {
        const chunks = normalizer.accept(message.data, message.event);
        for (let i = 0; i < chunks.length; i++) batch.push(chunks[i]!);
      } catch (error) {
        failure = error;
      }
    },
  });
  return new BatchReader(body, options, normalizer, text => {
    parser.feed(text);
    const read = { batch, failure };
    batch = [];
    return read;
  });
}

/** Reads a Server-Sent Events body into normalized chunks, one by one, ending with exactly one `done`. */
export async function* readSseStream(body: ReadableStream<Uint8Array>, options: ReadOptions = {}) {
  for await (const batch of readSseBatches(body, options)) yield* batch;
}

/**
 * Reads a newline-delimited JSON body (the HTTP/2 delivery) into normalized chunks, in batches of one read each; the
 * last batch ends with one `done`.
 */
export function readNdjsonBatches(
  body: ReadableStream<Uint8Array>,
  options: ReadOptions = {},
): AsyncGenerator<StreamChunk[]> {
  return readBatches(ndjsonBatchReader(body, options));
}

/** A `BatchReader` of a newline-delimited JSON body (the HTTP/2 delivery). */
export function ndjsonBatchReader(body: ReadableStream<Uint8Array>, options: ReadOptions = {}): BatchReader {
  const normalizer = new ChunkNormalizer({ jsonOnly: true });
  let buffer = '';
  return new BatchReader(body, options, normalizer, (text, final) => {
    buffer += text;
    const batch: StreamChunk[] = [];
    // Past the end, what is left is not read.
    if (final && normalizer.ended) return { batch, failure: undefined };
    const lines = buffer.split(/\r?\n/);
    buffer = final ? '' : (lines.pop() ?? '');
    try {
      for (const raw of lines) {
        const line = raw.replace(/^data:\s?/, '');
        if (line.trim()) batch.push(...normalizer.accept(line));
      }
    } catch (error) {
      return { batch, failure: error };
    }
    return { batch, failure: undefined };
  });
}

/** Reads a newline-delimited JSON body (the HTTP/2 delivery) into normalized chunks, ending with one `done`. */
export async function* readNdjsonStream(body: ReadableStream<Uint8Array>, options: ReadOptions = {}) {
  for await (const batch of readNdjsonBatches(body, options)) yield* batch;
}
