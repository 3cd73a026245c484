/**
 * @module
 * The element ⇄ backend wire protocol: request and response bodies, the error envelope and the closed vocabulary of
 * the reply stream. Shared by `src/server/` and `src/element/`; types only, so it costs the browser bundle nothing.
 */
import type { Citation, Usage } from './service/types.js';

export type { Citation, Partition, Usage } from './service/types.js';

/** The header every request to `{endpoint}/session` must carry, with the value `1`. */
export const csrfHeader = 'X-Persona-Chat';

export type ErrorCode =
  | 'invalid_request'
  | 'token_missing'
  | 'token_invalid'
  | 'token_expired'
  | 'origin_not_allowed'
  | 'conversation_not_found'
  | 'not_found'
  | 'duplicate_request'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'internal_error'
  | 'upstream_error'
  | 'upstream_unavailable'
  | 'upstream_timeout';

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

/** `POST {endpoint}/conversations` body. `metadata` lands in the conversation's `client` namespace. */
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
}

export interface MessageView {
  id: string | null;
  role: 'user' | 'assistant';
  content: string;
  createdAt: string | null;
  runId: string | null;
}

export interface ConversationDetail extends ConversationSummary {
  messages: MessageView[];
}

/** `GET {endpoint}/conversations?cursor=` answer. */
export interface ConversationList {
  data: ConversationSummary[];
  /** Pass as `?cursor=` for the next page; null on the last. */
  next: string | null;
}

/** `POST {endpoint}/conversations/:id/messages` body; an `Idempotency-Key` header is required. */
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
  usage: Usage | null;
}

/** `PATCH {endpoint}/conversations/:id` body: at least one field. */
export interface UpdateConversationRequest {
  name?: string;
  status?: string;
  active?: boolean;
  metadata?: Record<string, string>;
}

/** The events of a reply stream (`Accept: text/event-stream`), by SSE event name. */
export interface StreamEvents {
  /** First, at once. */
  meta: { conversationId: string; messageId?: string };
  delta: { text: string };
  citations: { citations: Citation[] };
  /** Terminal: the reply is complete. */
  done: { messageId: string | null; runId: string | null; finishReason: string | null; usage: Usage | null };
  /** Terminal: the reply failed; what arrived before stays valid but incomplete. */
  error: { code: ErrorCode; message: string; retryable: boolean };
}

export type StreamEventName = keyof StreamEvents;
