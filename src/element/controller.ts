/**
 * @module
 * Everything the element does over the network: the session token (in memory only, refreshed before it expires
 * and once on `token_expired`), the conversation (created on the first message, restored from its stored id),
 * and replies streamed with fetch-event-source, set up so that a message is never sent twice by accident.
 * One AbortController per reply; stale work is dropped by a turn counter; everything stops when the host leaves.
 */
import { fetchEventSource } from '@microsoft/fetch-event-source';
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { csrfHeader } from '../protocol.js';
import type { Citation, ConversationDetail, SessionResponse, StreamEvents } from '../protocol.js';
import { PersonaChatError, errorFromResponse, networkError } from './errors.js';
import { applyEvent, activeReply, initialState } from './state.js';
import type { ChatEvent, ChatItem, ChatState } from './state.js';
import { ChatStorage } from './storage.js';
import type { StorageKind } from './storage.js';

type FetchLike = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

/** What the controller needs from its element. */
export interface ChatHost extends ReactiveControllerHost, HTMLElement {
  endpoint: string;
  personaId: string;
  storage: StorageKind;
  metadata: Record<string, string> | undefined;
  fetch: FetchLike;
}

export interface ReplyResult {
  messageId: string | null;
  content: string;
  citations: Citation[];
}

interface Session {
  token: string;
  expiresAt: number;
  userKey: string;
}

/** Refresh a token this long before it expires. */
const refreshMarginMs = 60_000;

const newKey = () => crypto.randomUUID();

export class ChatController implements ReactiveController {
  state: ChatState = initialState;
  /** Called with every reply that finished, failed or stopped, and with every failure. */
  onReply: (result: ReplyResult) => void = () => {};
  onError: (error: PersonaChatError) => void = () => {};
  onConversation: (conversationId: string, restored: boolean) => void = () => {};

  readonly #host: ChatHost;
  #session: Session | undefined;
  #sessionRequest: Promise<Session> | undefined;
  #storage: ChatStorage | undefined;
  #abort: AbortController | undefined;
  #turn = 0;
  #frame = 0;
  #started: Promise<void> | undefined;
  #queue: { key: string; text: string; resolve: (r: ReplyResult) => void; reject: (e: unknown) => void }[] = [];

  constructor(host: ChatHost) {
    this.#host = host;
    host.addController(this);
  }

  hostConnected() {
    window.addEventListener('storage', this.#onStorage);
  }

  hostDisconnected() {
    window.removeEventListener('storage', this.#onStorage);
    this.#turn++;
    this.#abort?.abort();
    cancelAnimationFrame(this.#frame);
  }

  get #base() {
    return this.#host.endpoint.replace(/\/+$/, '');
  }

  #apply(event: ChatEvent) {
    this.state = applyEvent(this.state, event);
    // Renders are coalesced to at most one per animation frame.
    if (!this.#frame) {
      this.#frame = requestAnimationFrame(() => {
        this.#frame = 0;
        this.#host.requestUpdate();
      });
    }
  }

  /** Gets a session and restores the stored conversation, once. */
  start(): Promise<void> {
    this.#started ??= this.#restore().catch(error => {
      this.#started = undefined;
      this.#fail(error);
    });
    return this.#started;
  }

  async #restore() {
    this.#apply({ type: 'connecting' });
    const session = await this.#ensureSession();
    const storage = this.#storageFor(session);
    const id = storage.conversationId;
    if (id) await this.#load(id, storage);
    this.#apply({ type: 'ready' });
  }

  async #load(id: string, storage: ChatStorage) {
    const turn = this.#turn;
    const response = await this.#request('GET', `/conversations/${encodeURIComponent(id)}`);
    if (turn !== this.#turn) return;
    if (response.status === 404) {
      // A stale or foreign id: quietly start fresh.
      storage.conversationId = null;
      return;
    }
    if (!response.ok) throw await errorFromResponse(response);
    const detail = (await response.json()) as ConversationDetail;
    this.#apply({
      type: 'restored',
      conversationId: detail.id,
      messages: detail.messages,
      citations: m => storage.citations(m),
    });
    this.onConversation(detail.id, true);
  }

  #storageFor(session: Session): ChatStorage {
    this.#storage ??= new ChatStorage(
      this.#host.storage,
      `${this.#base}:${this.#host.personaId || 'default'}:${session.userKey}`,
    );
    return this.#storage;
  }

  /** Another tab of the site changed the conversation: show the same one. */
  #onStorage = (event: StorageEvent) => {
    const storage = this.#storage;
    if (!storage || event.key !== storage.conversationKey || activeReply(this.state)) return;
    this.#turn++;
    if (event.newValue) void this.#load(event.newValue, storage).catch(error => this.#fail(error));
    else this.#apply({ type: 'reset' });
  };

  async #ensureSession(force = false): Promise<Session> {
    if (!force && this.#session && this.#session.expiresAt - Date.now() > refreshMarginMs) return this.#session;
    this.#sessionRequest ??= this.#newSession().finally(() => (this.#sessionRequest = undefined));
    return this.#sessionRequest;
  }

  async #newSession(): Promise<Session> {
    if (!this.#host.endpoint) throw new PersonaChatError('config_error', 'The endpoint attribute is required.', false);
    let response: Response;
    try {
      response = await this.#host.fetch(`${this.#base}/session`, {
        method: 'POST',
        credentials: 'include',
        headers: { 'content-type': 'application/json', [csrfHeader]: '1' },
        body: JSON.stringify(this.#host.personaId ? { personaId: this.#host.personaId } : {}),
      });
    } catch (error) {
      throw networkError(error);
    }
    if (!response.ok) throw await errorFromResponse(response);
    const body = (await response.json()) as SessionResponse;
    this.#session = { token: body.token, expiresAt: Date.parse(body.expiresAt), userKey: body.user.key };
    return this.#session;
  }

  /** A bearer request; on `token_expired` it refreshes the token once and repeats the same request. */
  async #request(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
    signal?: AbortSignal,
  ) {
    const send = async (session: Session) => {
      try {
        return await this.#host.fetch(`${this.#base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${session.token}`,
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...headers,
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal,
        });
      } catch (error) {
        if (signal?.aborted) throw error;
        throw networkError(error);
      }
    };
    const response = await send(await this.#ensureSession());
    if (response.status !== 401) return response;
    const copy = response.clone();
    const code = await response
      .json()
      .then((e: { error?: { code?: string } }) => e.error?.code)
      .catch(() => undefined);
    if (code !== 'token_expired') return copy;
    return send(await this.#ensureSession(true));
  }

  /** Sends a message; resolves when its reply is done. While a reply streams, the message waits its turn. */
  send(text: string): Promise<ReplyResult> {
    const key = newKey();
    return new Promise((resolve, reject) => {
      if (activeReply(this.state) || this.#queue.length) {
        this.#queue.push({ key, text, resolve, reject });
        this.#apply({ type: 'queued', key, text });
        return;
      }
      this.#run(key, text, newKey()).then(resolve, reject);
    });
  }

  /** Asks again for a failed or stopped reply, with the same idempotency key. */
  retry(): Promise<ReplyResult> | undefined {
    const reply = this.state.items.findLast(item => item.role === 'assistant');
    if (!reply || (reply.status !== 'error' && reply.status !== 'stopped') || !reply.requestKey || !reply.question)
      return undefined;
    this.#apply({ type: 'retrying', key: reply.key });
    return this.#stream(reply.question, reply.requestKey);
  }

  stop() {
    const active = activeReply(this.state);
    if (!active) return;
    this.#turn++;
    this.#abort?.abort();
    const id = this.state.conversationId;
    if (id && active.requestKey) {
      // The reply goes on without a reader until it is told to stop.
      const path = `/conversations/${encodeURIComponent(id)}/runs/${encodeURIComponent(active.requestKey)}/stop`;
      void this.#request('POST', path).catch(() => {});
    }
    this.#apply({ type: 'stopped' });
    const reply = this.state.items.findLast(item => item.role === 'assistant')!;
    this.onReply({ messageId: null, content: reply.text, citations: reply.citations });
    this.#next();
  }

  newConversation() {
    this.#turn++;
    this.#abort?.abort();
    for (const queued of this.#queue.splice(0))
      queued.reject(new DOMException('A new conversation started.', 'AbortError'));
    if (this.#storage) this.#storage.conversationId = null;
    this.#apply({ type: 'reset' });
  }

  feedback(item: ChatItem, value: 'up' | 'down') {
    this.#apply({ type: 'feedback', key: item.key, value });
  }

  async #run(key: string, text: string, requestKey: string): Promise<ReplyResult> {
    this.#apply({ type: 'sending', key, text, requestKey });
    try {
      await this.start();
      if (!this.state.conversationId) await this.#create();
    } catch (error) {
      this.#apply({ type: 'unsent' });
      throw this.#fail(error, text);
    }
    return this.#stream(text, requestKey);
  }

  async #create() {
    const response = await this.#request(
      'POST',
      '/conversations',
      this.#host.metadata ? { metadata: this.#host.metadata } : {},
    );
    if (!response.ok) throw await errorFromResponse(response);
    const { id } = (await response.json()) as { id: string };
    this.#storage!.conversationId = id;
    this.#apply({ type: 'conversation', conversationId: id });
    this.onConversation(id, false);
  }

  /** Streams one reply. Never re-sends on its own: errors end the stream, and only Retry asks again. */
  async #stream(text: string, requestKey: string, refreshed = false): Promise<ReplyResult> {
    const turn = ++this.#turn;
    const abort = new AbortController();
    this.#abort = abort;
    const id = this.state.conversationId!;
    let terminal = false;
    let accepted = false;
    try {
      const session = await this.#ensureSession(refreshed);
      await fetchEventSource(`${this.#base}/conversations/${encodeURIComponent(id)}/messages`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${session.token}`,
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'idempotency-key': requestKey,
        },
        body: JSON.stringify({ message: text }),
        signal: abort.signal,
        // Hidden tabs keep their stream: the library would otherwise abort and POST again on every tab switch.
        openWhenHidden: true,
        fetch: (input, init) => this.#host.fetch(input, init),
        onopen: async response => {
          if (response.ok && response.headers.get('content-type')?.startsWith('text/event-stream')) {
            accepted = true;
            if (turn === this.#turn) this.#apply({ type: 'accepted' });
            return;
          }
          throw response.ok
            ? new PersonaChatError('bad_response', 'The reply was not a stream.', true)
            : await errorFromResponse(response);
        },
        onmessage: message => {
          if (turn !== this.#turn || terminal) return;
          const data = message.data ? JSON.parse(message.data) : {};
          switch (message.event as keyof StreamEvents) {
            case 'delta':
              this.#apply({ type: 'delta', text: (data as StreamEvents['delta']).text });
              break;
            case 'citations':
              this.#apply({ type: 'citations', citations: (data as StreamEvents['citations']).citations });
              break;
            case 'done':
              terminal = true;
              this.#apply({ type: 'done', messageId: (data as StreamEvents['done']).messageId });
              break;
            case 'error': {
              terminal = true;
              const e = data as StreamEvents['error'];
              throw new PersonaChatError(e.code, e.message, e.retryable);
            }
          }
        },
        onclose: () => {
          if (!terminal)
            throw new PersonaChatError('stream_incomplete', 'The reply stopped before it was complete.', true);
        },
        onerror: error => {
          // Rethrowing stops the library's retry loop: a message is never re-sent by accident.
          throw error;
        },
      });
    } catch (error) {
      if (turn !== this.#turn || abort.signal.aborted) throw new DOMException('The reply was stopped.', 'AbortError');
      if (error instanceof PersonaChatError && error.code === 'token_expired' && !refreshed) {
        return this.#stream(text, requestKey, true);
      }
      if (!accepted && error instanceof PersonaChatError && !error.retryable) {
        // Refused before it was accepted (too long, limits): the text goes back to the composer.
        this.#apply({ type: 'unsent' });
        throw this.#fail(error, text);
      }
      this.#apply({ type: 'failed', code: (error as PersonaChatError).code ?? 'network_error', retryable: true });
      throw this.#fail(error);
    }
    const reply = this.state.items.findLast(item => item.role === 'assistant')!;
    if (reply.messageId) this.#storage?.saveCitations(reply.messageId, reply.citations);
    const result = { messageId: reply.messageId, content: reply.text, citations: reply.citations };
    this.onReply(result);
    this.#next();
    return result;
  }

  #next() {
    const queued = this.#queue.shift();
    if (queued) this.#run(queued.key, queued.text, newKey()).then(queued.resolve, queued.reject);
  }

  /** Text of a message that could not be sent, for the element to put back in the composer. */
  unsentText: string | undefined;

  #fail(error: unknown, unsent?: string): PersonaChatError {
    const failure =
      error instanceof PersonaChatError
        ? error
        : error instanceof Error && error.name === 'AbortError'
          ? undefined
          : networkError(error);
    if (!failure) return error as PersonaChatError;
    if (unsent !== undefined) this.unsentText = unsent;
    if (this.state.status !== 'error' && !activeReply(this.state)) this.#apply({ type: 'ready' });
    this.onError(failure);
    this.#host.requestUpdate();
    return failure;
  }
}
