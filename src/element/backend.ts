/**
 * @module
 * The backend as the element reaches it: its routes' paths, and requests that carry the session's token (a token
 * the backend says has expired is replaced once and the same request repeated). No DOM and no conversation state:
 * the controller decides what to ask, this module asks it.
 */
import type { ConversationList } from '../protocol.js';
import { PersonaChatError, errorFromResponse, networkError } from './errors.js';
import { session } from './session.js';
import type { FetchLike, Session } from './session.js';
import { abortError } from './turn.js';

/** How long a request that is not a stream (session, conversation, restore, stop) may take. */
export const requestTimeoutMs = 20_000;

/** The path of a conversation, or of something in it: `/conversations/<id>/runs/<key>/stop`, each part encoded. */
export const conversationPath = (...parts: string[]) => `/conversations/${parts.map(encodeURIComponent).join('/')}`;

/**
 * Where the backend is and how to reach it, read at each request: the element itself, whose attributes and `fetch`
 * property may change.
 */
export interface BackendOptions {
  readonly endpoint: string;
  readonly personaId: string;
  /** The transport. */
  readonly fetch: FetchLike;
}

export class Backend {
  readonly #options: BackendOptions;

  constructor(options: BackendOptions) {
    this.#options = options;
  }

  /** The endpoint without a trailing slash. */
  get base(): string {
    return this.#options.endpoint.replace(/\/+$/, '');
  }

  /** The session; `stale` is a token the backend refused as expired. */
  session(stale?: string): Promise<Session> {
    if (!this.#options.endpoint) {
      return Promise.reject(new PersonaChatError('config_error', 'No endpoint.', false));
    }
    return session(this.#options.fetch, this.base, this.#options.personaId, stale);
  }

  /**
   * A request to the backend with the session's token; on `token_expired` it gets a new token once and repeats
   * the same request (same Idempotency-Key). Network failures become a `network_error`. A request without a signal
   * of its own (all but the streams) times out after `requestTimeoutMs`.
   */
  fetch = async (path: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = `${this.base}${path as string}`;
    const signal = init.signal ?? AbortSignal.timeout(requestTimeoutMs);
    // Headers come as an object, from the controller and from the stream reader alike.
    const send = async (token: string) => {
      try {
        return await this.#options.fetch(url, {
          ...init,
          signal,
          headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` },
        });
      } catch (error) {
        // A request given up on by its caller is an abort; one that timed out is a failure to reach the backend.
        if (signal.aborted && (signal.reason as Error | undefined)?.name !== 'TimeoutError') {
          throw abortError();
        }
        throw networkError(error);
      }
    };
    const { token } = await this.session();
    const response = await send(token);
    if (response.status !== 401) return response;
    const code = await response
      .clone()
      .json()
      .then((e: { error?: { code?: string } }) => e.error?.code)
      .catch(() => undefined);
    if (code !== 'token_expired') return response;
    return send((await this.session(token)).token);
  };

  /** A request that is not a stream: answered, or thrown as the error the backend said. */
  async request(path: string, init: RequestInit = {}): Promise<Response> {
    const response = await this.fetch(path, init);
    if (!response.ok) throw await errorFromResponse(response);
    return response;
  }

  /** Starts a conversation; its id. */
  async createConversation(metadata: Record<string, string> | undefined): Promise<string> {
    const response = await this.request('/conversations', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      // JSON leaves out what is undefined.
      body: JSON.stringify({ metadata: metadata || undefined }),
    });
    return ((await response.json()) as { id: string }).id;
  }

  /**
   * The visitor's conversations with this persona from `cursor` on, reading the backend's pages until about `atLeast`
   * came (a page may be short, or empty, while more follow); `next` goes on where the reading stopped.
   */
  async listConversations(cursor?: string | null, atLeast = 100): Promise<ConversationList> {
    const data: ConversationList['data'] = [];
    let next = cursor ?? null;
    for (let read = 0; read < atLeast;) {
      const query = next ? `?cursor=${encodeURIComponent(next)}` : '';
      const page = (await (await this.request(`/conversations${query}`)).json()) as ConversationList;
      data.push(...page.data);
      read += page.data.length || 10;
      if (!(next = page.next)) break;
    }
    return { data, next };
  }

  /**
   * Keeps a thumbs up (1) or down (-1) on a reply, with an optional comment, or takes it back (0); sent even when the
   * page is closing.
   */
  async sendFeedback(conversationId: string, messageId: string, score: 1 | -1 | 0, comment?: string): Promise<void> {
    await this.request(conversationPath(conversationId, 'messages', messageId, 'feedback'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ score, comment: comment || undefined }),
      keepalive: true,
    });
  }

  /** Tells the backend to stop a reply, which goes on without a reader until it is told; nothing is awaited. */
  stop(conversationId: string, key: string): void {
    void this.fetch(conversationPath(conversationId, 'runs', key, 'stop'), { method: 'POST', keepalive: true }).catch(
      () => {},
    );
  }
}
