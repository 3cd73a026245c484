/**
 * @module
 * The element ⇄ backend wire protocol: request and response bodies, the error envelope and the closed vocabulary of
 * the reply stream. Shared by `src/server/` and `src/element/`; types only, so it costs the browser bundle nothing.
 */
/**
 * A passage of a cited source. The widget's own shape, which the backend fills from whatever the service sent
 * (`src/service/citations.ts`): a change in the service's types does not change it.
 */
export interface Partition {
  text: string;
  relevance?: number;
  partitionNumber?: number;
  sectionNumber?: number;
  lastUpdate?: string;
  tags?: Record<string, string | string[]>;
}

/** A source a reply drew on, numbered by its place in the list. `index` is the name of a search index. */
export interface Citation {
  link?: string;
  index?: string;
  documentId?: string;
  fileId?: string;
  sourceContentType?: string;
  sourceName?: string;
  sourceUrl?: string;
  partitions?: Partition[];
}

/**
 * Token counts of a reply, as the service counted them. Sent to the browser only when the site turns them on (the
 * backend's `exposeUsage`); otherwise they stay in the backend.
 */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/**
 * The longest message, in characters, that the element lets a visitor write and the backend takes by default
 * (`limits.messageMaxLength`): one number, so that the two agree.
 */
export const messageMaxLength = 4000;

/** The header every request to `{endpoint}/session` must carry, with the value `1`. */
export const csrfHeader = 'X-Persona-Chat';

/**
 * Sent with a message whose key was sent before (a Retry, or a re-send after a failure): how long ago it was first
 * sent, in milliseconds (a duration, so that the browser's clock does not matter). The backend then looks for the message and its reply in the service's history before it asks
 * the service again, even when it no longer knows the run (its store restarted empty, the replay window passed).
 * A message sent for the first time goes without it, and pays for no such look.
 */
export const resendHeader = 'X-Persona-Chat-Resend';

export type ErrorCode =
  | 'invalid_request'
  | 'token_missing'
  | 'token_invalid'
  | 'token_expired'
  | 'origin_not_allowed'
  | 'conversation_not_found'
  | 'run_not_found'
  | 'message_not_found'
  | 'not_found'
  | 'duplicate_request'
  | 'run_finished'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'too_many_sessions'
  | 'internal_error'
  | 'upstream_error'
  | 'upstream_unavailable'
  | 'upstream_timeout'
  | 'interrupted'
  | 'server_restarting'
  | 'store_unavailable';

/** Every error the backend answers, whatever the route. */
export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; retryable: boolean; requestId: string };
}

/** `POST {endpoint}/session` body: optionally, one of the personas the backend serves. */
export interface SessionRequest {
  personaId?: string;
}

/** `POST {endpoint}/session` answer. The token goes in `Authorization: Bearer` on every other route. */
export interface SessionResponse {
  token: string;
  /** ISO 8601. Refresh before then. */
  expiresAt: string;
  /** `key` is a non-reversible key of the visitor, for namespacing browser storage. */
  user: { key: string };
  /** The persona this session talks to; null for a backend serving general conversations. */
  persona: { personaId: string | null };
}

/**
 * `POST {endpoint}/conversations` body. `metadata` lands in the conversation's `client` namespace; its `page`, which
 * the element adds, does not count against its limits.
 */
export interface CreateConversationRequest {
  metadata?: Record<string, string>;
}

export interface ConversationSummary {
  id: string;
  name: string | null;
  status: string | null;
  active: boolean;
  personaId: string | null;
  messageCount: number;
  /** The `client` namespace of the conversation's metadata. */
  metadata: Record<string, string>;
  /** ISO 8601: when its first message was sent, as the service's history says; null before any (or without times). */
  createdAt: string | null;
  /** ISO 8601: when its newest message was sent; null before any (or without times). */
  updatedAt: string | null;
}

export interface MessageView {
  id: string | null;
  role: 'user' | 'assistant';
  content: string;
  createdAt: string | null;
  runId: string | null;
  /** The visitor's feedback on this reply; always null on the visitor's own messages. */
  feedback: MessageFeedback | null;
  /**
   * The sources of this reply, as the backend kept them (compacted: each with its document, name, link and the
   * start of at most 5 passages); empty when it kept none, and on the visitor's own messages.
   */
  citations: Citation[];
}

/** The visitor's feedback on a reply, as a conversation's messages show it. */
export interface MessageFeedback {
  /** 1 is thumbs up, -1 thumbs down. */
  score: 1 | -1;
  comment: string | null;
  tags: string[];
}

/**
 * `POST {endpoint}/conversations/:id/messages/:messageId/feedback` body, on a reply (an assistant message) of the
 * visitor's conversation: `comment` up to 1,000 characters, `tags` up to 10 of up to 40 characters. A second POST
 * for the same reply replaces the first; one with `score` 0 (and no comment or tags) takes the feedback back.
 */
export interface FeedbackRequest {
  /** 1 is thumbs up, -1 thumbs down, 0 takes the visitor's feedback on the reply back. */
  score: 1 | -1 | 0;
  comment?: string;
  tags?: string[];
}

/** The answer to a feedback POST (200): the feedback as kept, or with `score` 0 (nothing kept) when taken back. */
export interface FeedbackResponse extends Omit<MessageFeedback, 'score'> {
  score: 1 | -1 | 0;
  /** A new UUID for every POST. */
  id: string;
  messageId: string;
  /** ISO 8601. */
  createdAt: string;
}

/** How a run stands: `interrupted` means its producer went away before the reply ended. */
export type RunStatus = 'running' | 'done' | 'stopped' | 'failed' | 'interrupted';

/** A reply of the replay window, as far as it got. */
export interface RunView {
  /** The Idempotency-Key of the message. */
  key: string;
  /** The visitor's message. */
  message: string;
  status: RunStatus;
  /** What was written so far (all of it once done). */
  content: string;
  citations: Citation[];
  messageId: string | null;
  finishReason: string | null;
  /** Why it failed, for `failed` and `interrupted`. */
  error: { code: ErrorCode; message: string; retryable: boolean } | null;
  /** The id of the newest event so far: give it as `Last-Event-ID` to follow the run from there. */
  lastEventId: string | null;
  /** Which try of the message this is; a retry after a failure or a stop starts the next. */
  attempt: number;
  /** ISO 8601. */
  createdAt: string;
}

export interface ConversationDetail extends ConversationSummary {
  /** The conversation as the service keeps it. */
  messages: MessageView[];
  /** Replies of the replay window that `messages` does not hold: running, stopped, failed, or not yet stored. */
  runs: RunView[];
}

/**
 * `GET {endpoint}/conversations?cursor=` answer: the visitor's conversations with the token's persona (all of theirs
 * with a backend of general conversations), in the service's order. A page usually holds 10 or a few more, but may
 * hold fewer, even none, while `next` is set (the backend reads at most 5 of the service's pages per request):
 * follow `next` until it is null.
 */
export interface ConversationList {
  data: ConversationSummary[];
  /** Pass as `?cursor=` for the next page; null on the last. */
  next: string | null;
}

/**
 * `POST {endpoint}/conversations/:id/messages` body; an `Idempotency-Key` header is required. The key names the
 * run: sending it again attaches to the run (or replays it), and after a failure or a stop starts its next attempt.
 */
export interface SendMessageRequest {
  message: string;
}

/** The whole reply, for `Accept: application/json`. */
export interface MessageReply {
  messageId: string | null;
  runId: string | null;
  content: string;
  finishReason: string | null;
  citations: Citation[];
  /** Only with the backend's `exposeUsage`, and only when the service counted the reply. */
  usage?: Usage;
}

/** `PATCH {endpoint}/conversations/:id` body: at least one field. `status` may not be `deleted`: use `DELETE`. */
export interface UpdateConversationRequest {
  name?: string;
  status?: string;
  active?: boolean;
  metadata?: Record<string, string>;
}

/** `POST {endpoint}/conversations/:id/runs/:key/stop` answer (202): the run will end with `finishReason: "stopped"`. */
export interface StopResponse {
  key: string;
  status: 'stopping';
}

/**
 * The events of a reply stream (`Accept: text/event-stream`), by SSE event name. Every event but `meta` carries an
 * SSE `id:`; `GET {endpoint}/conversations/:id/runs/:key/events` with `Last-Event-ID` goes on after it.
 */
export interface StreamEvents {
  /**
   * First, at once, without an id: the run this stream follows, its attempt (text resets when it changes), and the
   * interval of the stream's `: ping` comments in ms (a stream silent for much longer has stalled).
   */
  meta: { conversationId: string; key: string; attempt: number; ping: number };
  delta: { text: string };
  citations: { citations: Citation[] };
  /**
   * Terminal: the reply is complete, or was stopped (`finishReason: "stopped"`). `usage` only with the backend's
   * `exposeUsage`, and only when the service counted the reply.
   */
  done: { messageId: string | null; runId: string | null; finishReason: string | null; usage?: Usage };
  /** Terminal: the reply failed; what arrived before stays valid but incomplete. */
  error: { code: ErrorCode; message: string; retryable: boolean };
}

export type StreamEventName = keyof StreamEvents;

/** `GET {endpoint}/readyz`: 200 when this backend instance should get traffic, else 503 with what is wrong. */
export interface HealthReport {
  status: 'ready' | 'unavailable' | 'draining';
  store: 'ok' | 'unavailable';
  service: 'ok' | 'unavailable';
}
