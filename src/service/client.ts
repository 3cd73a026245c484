/**
 * @module
 * A typed client for the whole Conversation Service interface. Web-standard (`fetch`, streams, AbortSignal), so
 * it runs on Node, Workers, Deno, Bun and in browsers; only the HTTP/2 delivery needs Node, and it loads
 * node:http2 lazily, on first use, unless an HTTP/2 fetch is given. On Node itself, with no transport given, it
 * loads a leaner one over node:http the same way (see `node-fetch.ts`).
 *
 * @example
 * ```ts
 * const service = new ServiceClient({ baseUrl: 'http://127.0.0.1:4010', apiKey: process.env.PERSONA_CHAT_API_KEY! });
 * const conversation = await service.createPersonaConversation({ personaId, externalUserId: 'user-1' });
 * for await (const chunk of service.streamSse(conversation.conversationId, 'Hello')) {
 *   if (chunk.type === 'delta') process.stdout.write(chunk.text);
 * }
 * ```
 */
import { normalizeCitations } from './citations.js';
import { ServiceError } from './errors.js';
import { Requests, badResponse, defaultTimeouts } from './request.js';
import type { CallOptions, FetchLike, Started, Timeouts } from './request.js';
import { ndjsonBatchReader, sseBatchReader } from './stream.js';
import type { BatchReader } from './stream.js';
import { Transports } from './transport.js';
import type { ChatResponse, Conversation, ListResponse, StreamChunk } from './types.js';

export { defaultTimeouts } from './request.js';
export type { CallOptions, Timeouts } from './request.js';

/** `chat` is form B (`PATCH …/chat`, `…/chat-sse`, `…/chat-http2`); `continue` is form A (`POST …/continue…`). */
export type RouteForm = 'chat' | 'continue';

export interface ServiceClientOptions {
  /** Where the service is, e.g. `https://api.example.com/v1` or the emulator's `http://127.0.0.1:4010`. */
  baseUrl: string;
  /** The API key. Sent only in the API-key header; never appears in an error, a log line or a thrown object. */
  apiKey: string;
  /** The header that carries the key. Default `x-svc-api-key`. */
  apiKeyHeader?: string;
  /** Which continue paths to use. `auto` (default) tries form B, falls back to form A on 404/405 and remembers. */
  routes?: RouteForm | 'auto';
  /**
   * The transport for everything but the HTTP/2 delivery. Default: on Node, one over node:http(s) with kept-alive
   * connections, made on first use; elsewhere `globalThis.fetch`.
   */
  fetch?: FetchLike;
  /** Where the HTTP/2 listener is, when it differs from `baseUrl`. */
  http2BaseUrl?: string;
  /** The transport for the HTTP/2 delivery. Default: a node:http2 fetch made on first use. */
  http2Fetch?: FetchLike;
  timeouts?: Partial<Timeouts>;
  /**
   * Takes a streamed reply whose body ends without `[DONE]`, a named done event or a finish reason as complete. Only
   * for a service that never marks the end: behind a proxy or load balancer that ends a response cleanly in its
   * middle, a truncated reply then counts as complete. Default false: such a reply fails as `incomplete`
   * (retryable).
   */
  acceptUnmarkedEnd?: boolean;
}

export interface ListOptions extends CallOptions {
  continuationToken?: string | null;
}

/** Which conversations a list asks for: the organization's, one external user's, or one persona's. */
export type ListScope = { externalUserId: string } | { personaId: string } | Record<string, never>;

export type Delivery = 'sse' | 'http2' | 'json';

const continuePaths: Record<RouteForm, Record<Delivery, [method: string, suffix: string]>> = {
  chat: { json: ['PATCH', 'chat'], sse: ['PATCH', 'chat-sse'], http2: ['PATCH', 'chat-http2'] },
  continue: { json: ['POST', 'continue'], sse: ['POST', 'continue-sse'], http2: ['POST', 'continue-stream'] },
};

export class ServiceClient {
  readonly #baseUrl: string;
  readonly #http2BaseUrl: string;
  readonly #requests: Requests;
  readonly #transports: Transports;
  #form: RouteForm | undefined;
  readonly #acceptUnmarkedEnd: boolean;

  constructor(options: ServiceClientOptions) {
    if (!options?.baseUrl) throw new Error('ServiceClient: the "baseUrl" option is required');
    if (!/^https?:\/\//.test(options.baseUrl)) throw new Error('ServiceClient: "baseUrl" must be an http(s) URL');
    if (!options.apiKey) throw new Error('ServiceClient: the "apiKey" option is required');
    const routes = options.routes ?? 'auto';
    if (!['auto', 'chat', 'continue'].includes(routes)) {
      throw new Error('ServiceClient: "routes" must be one of auto, chat, continue');
    }
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#http2BaseUrl = (options.http2BaseUrl ?? options.baseUrl).replace(/\/+$/, '');
    this.#form = routes === 'auto' ? undefined : routes;
    this.#transports = new Transports(options);
    this.#requests = new Requests({
      apiKey: options.apiKey,
      apiKeyHeader: options.apiKeyHeader ?? 'x-svc-api-key',
      timeouts: { ...defaultTimeouts, ...options.timeouts },
    });
    this.#acceptUnmarkedEnd = options.acceptUnmarkedEnd ?? false;
  }

  /** The continue route form in use: the configured one, or the one `auto` settled on (undefined until then). */
  get routeForm(): RouteForm | undefined {
    return this.#form;
  }

  // Creating

  /** `POST /conversations`: a general conversation with a named AI system and model. */
  createConversation(body: { system: string; model: string; externalUserId: string }, options?: CallOptions) {
    return this.#json<Conversation>('POST', '/conversations', body, options);
  }

  /** `POST /conversations/persona`: a conversation with a persona. */
  createPersonaConversation(body: { personaId: string; externalUserId: string }, options?: CallOptions) {
    return this.#json<Conversation>('POST', '/conversations/persona', body, options);
  }

  // Continuing

  /** Sends a user message and returns the whole reply (form B `PATCH …/chat` or form A `POST …/continue`). */
  async continueConversation(conversationId: string, message: string, options?: CallOptions): Promise<ChatResponse> {
    const started = await this.#continue(conversationId, message, 'json', options);
    try {
      return (await this.#requests.readJson(started)) as ChatResponse;
    } finally {
      started.done();
    }
  }

  /** Sends a user message and streams the reply over Server-Sent Events. */
  async *streamSse(conversationId: string, message: string, options?: CallOptions): AsyncGenerator<StreamChunk> {
    yield* await this.openReply(conversationId, message, 'sse', options);
  }

  /** Sends a user message and streams the reply over a real HTTP/2 connection (newline-delimited JSON). */
  async *streamHttp2(conversationId: string, message: string, options?: CallOptions): AsyncGenerator<StreamChunk> {
    yield* await this.openReply(conversationId, message, 'http2', options);
  }

  /** Sends a user message and yields the reply as chunks, whichever delivery is asked for (`json` yields it whole). */
  async *reply(conversationId: string, message: string, delivery: Delivery, options?: CallOptions) {
    yield* await this.openReply(conversationId, message, delivery, options);
  }

  /**
   * Sends a user message and resolves once the service has accepted it (its response has started), with the
   * reply's chunks still to read; rejects with a ServiceError if the service refused it. Read the chunks to the
   * end or call `return()` on them, which ends the request.
   */
  async openReply(
    conversationId: string,
    message: string,
    delivery: Delivery,
    options?: CallOptions,
  ): Promise<AsyncGenerator<StreamChunk>> {
    const batches = await this.openReplyBatches(conversationId, message, delivery, options);
    return (async function* () {
      for await (const batch of batches) yield* batch;
    })();
  }

  /**
   * `openReply`, with the chunks in batches: those of each read from the service together (the whole reply at once
   * for `json`), for a caller that passes them on and would rather take one step per read than one per word.
   */
  async openReplyBatches(
    conversationId: string,
    message: string,
    delivery: Delivery,
    options?: CallOptions,
  ): Promise<AsyncGenerator<StreamChunk[]>> {
    if (delivery === 'json') {
      const response = await this.continueConversation(conversationId, message, options);
      return (async function* () {
        yield [...chunksOfResponse(response)];
      })();
    }
    const started = await this.#continue(conversationId, message, delivery, options);
    return this.#batches(started, delivery);
  }

  // Retrieving

  /** `GET /conversations`: one page (10) of the organization's conversations. */
  listConversations(options?: ListOptions) {
    return this.#list('/conversations', options);
  }

  /** `GET /conversations/user/{externalUserId}`: one page of one external user's conversations. */
  listUserConversations(externalUserId: string, options?: ListOptions) {
    return this.#list(`/conversations/user/${encodeURIComponent(externalUserId)}`, options);
  }

  /** `GET /conversations/persona/{personaId}`: one page of one persona's conversations. */
  listPersonaConversations(personaId: string, options?: ListOptions) {
    return this.#list(`/conversations/persona/${encodeURIComponent(personaId)}`, options);
  }

  /** Every conversation in the scope, page by page, following `continuationToken` until it is absent. */
  async *allConversations(scope: ListScope = {}, options?: CallOptions): AsyncGenerator<Conversation> {
    let continuationToken: string | null | undefined;
    do {
      const page =
        'externalUserId' in scope
          ? await this.listUserConversations(scope.externalUserId, { ...options, continuationToken })
          : 'personaId' in scope
            ? await this.listPersonaConversations(scope.personaId, { ...options, continuationToken })
            : await this.listConversations({ ...options, continuationToken });
      yield* page.data ?? [];
      continuationToken = page.continuationToken;
    } while (continuationToken);
  }

  /** `GET /conversations/{conversationId}`: one conversation with its messages. */
  getConversation(conversationId: string, options?: CallOptions) {
    return this.#json<Conversation>('GET', `/conversations/${encodeURIComponent(conversationId)}`, undefined, options);
  }

  // Managing

  /** `PATCH …/set-active`. */
  setActive(conversationId: string, isActive: boolean, options?: CallOptions) {
    return this.#manage(conversationId, 'set-active', { isActive }, options);
  }

  /** `PATCH …/set-metadata`. */
  setMetadata(conversationId: string, metadata: Record<string, unknown>, options?: CallOptions) {
    return this.#manage(conversationId, 'set-metadata', { metadata }, options);
  }

  /** `PATCH …/set-conversation-name`. */
  setConversationName(conversationId: string, conversationName: string, options?: CallOptions) {
    return this.#manage(conversationId, 'set-conversation-name', { conversationName }, options);
  }

  /** `PATCH …/set-conversation-status`. */
  setConversationStatus(conversationId: string, conversationStatus: string, options?: CallOptions) {
    return this.#manage(conversationId, 'set-conversation-status', { conversationStatus }, options);
  }

  /** Closes the HTTP/2 sessions and the kept-alive connections this client opened. */
  close() {
    this.#transports.close();
  }

  // Internals

  #manage(conversationId: string, operation: string, body: unknown, options?: CallOptions) {
    return this.#json<Conversation>(
      'PATCH',
      `/conversations/${encodeURIComponent(conversationId)}/${operation}`,
      body,
      options,
    );
  }

  async #list(path: string, options: ListOptions = {}): Promise<ListResponse> {
    const query = options.continuationToken
      ? `?continuationToken=${encodeURIComponent(options.continuationToken)}`
      : '';
    return this.#json<ListResponse>('GET', path + query, undefined, options);
  }

  async #json<T>(method: string, path: string, body: unknown, options?: CallOptions): Promise<T> {
    const started = await this.#requests.start(
      this.#transports.fetch,
      this.#baseUrl + path,
      method,
      body,
      'application/json',
      options,
      false,
    );
    try {
      return (await this.#requests.readJson(started)) as T;
    } finally {
      started.done();
    }
  }

  #batches(started: Started, delivery: 'sse' | 'http2'): AsyncGenerator<StreamChunk[]> {
    return new ReplyBatches(started, delivery, this.#requests, this.#acceptUnmarkedEnd);
  }

  /** Sends a continue request in the route form in use, falling back from one form to the other under `auto`. */
  async #continue(
    conversationId: string,
    message: string,
    delivery: Delivery,
    options?: CallOptions,
  ): Promise<Started> {
    const transport = delivery === 'http2' ? await this.#transports.http2() : this.#transports.fetch;
    const base = delivery === 'http2' ? this.#http2BaseUrl : this.#baseUrl;
    const accept =
      delivery === 'sse' ? 'text/event-stream' : delivery === 'http2' ? 'application/x-ndjson' : 'application/json';
    const send = (form: RouteForm) => {
      const [method, suffix] = continuePaths[form][delivery];
      const url = `${base}/conversations/${encodeURIComponent(conversationId)}/${suffix}`;
      return this.#requests.start(transport, url, method, { message }, accept, options, delivery !== 'json');
    };
    if (this.#form) return send(this.#form);
    try {
      const started = await send('chat');
      this.#form = 'chat';
      return started;
    } catch (error) {
      if (!(error instanceof ServiceError) || (error.status !== 404 && error.status !== 405)) throw error;
      const started = await send('continue');
      this.#form = 'continue';
      return started;
    }
  }
}

/**
 * A streamed reply's batches: the chunks of each read of the body together. Written out rather than as an async
 * generator over the stream reader's: a reply is read in hundreds of small reads, and each layer of generators costs
 * every read promises of its own. Ends the request when read to the end, failed, or returned early.
 */
class ReplyBatches implements AsyncGenerator<StreamChunk[], void, unknown> {
  readonly #started: Started;
  readonly #requests: Requests;
  readonly #reader: BatchReader | undefined;
  #over = false;

  constructor(started: Started, delivery: 'sse' | 'http2', requests: Requests, acceptUnmarkedEnd: boolean) {
    this.#started = started;
    this.#requests = requests;
    const body = started.response.body;
    if (!body) return;
    const read = delivery === 'sse' ? sseBatchReader : ndjsonBatchReader;
    this.#reader = read(body, {
      firstByteMs: started.timeouts.firstByteMs,
      idleMs: started.timeouts.idleMs,
      signal: started.signal,
      acceptUnmarkedEnd,
    });
  }

  async next(): Promise<IteratorResult<StreamChunk[], void>> {
    if (this.#over) return { done: true, value: undefined };
    let batch: StreamChunk[] | undefined;
    try {
      if (!this.#reader) throw badResponse(this.#started.response, 'The stream had no body.');
      batch = await this.#reader.next();
    } catch (error) {
      // Told before the request is ended, which aborts its signal with a reason of its own.
      const failure = this.#requests.failureOf(this.#started, 'stream_error', error);
      this.#finish();
      throw failure;
    }
    if (batch) return { done: false, value: batch };
    this.#finish();
    return { done: true, value: undefined };
  }

  async return(): Promise<IteratorResult<StreamChunk[], void>> {
    this.#finish();
    return { done: true, value: undefined };
  }

  async throw(error: unknown): Promise<IteratorResult<StreamChunk[], void>> {
    this.#finish();
    throw error;
  }

  [Symbol.asyncIterator]() {
    return this;
  }

  async [Symbol.asyncDispose]() {
    this.#finish();
  }

  #finish() {
    if (this.#over) return;
    this.#over = true;
    this.#reader?.close();
    this.#started.done();
  }
}

/** The chunks a complete Chat response amounts to, so every delivery can be consumed the same way. */
export function* chunksOfResponse(response: ChatResponse): Generator<StreamChunk> {
  const choice = response.choices?.[0];
  const text = choice?.message?.content ?? '';
  if (text) yield { type: 'delta', text };
  const citations = normalizeCitations(response.citations);
  if (citations.length) yield { type: 'citations', citations };
  yield {
    type: 'done',
    messageId: response.messageId,
    runId: response.runId,
    finishReason: choice?.finish_reason ?? undefined,
    usage: response.usage,
    moderation: choice?.moderation_results ?? response.prompt_moderations,
  };
}
