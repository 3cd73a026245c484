/**
 * @module
 * One HTTP error type, and how any failure (of the Conversation Service, the store, a request body) becomes one;
 * `middleware/error-handler.ts` renders it. Upstream bodies never pass through:
 * only our own codes and messages reach the browser.
 */
import { BodyError } from '../json-body.js';
import type { ErrorCode, ErrorEnvelope } from '../protocol.js';
import { ServiceError } from '../service/errors.js';
import { StoreUnavailableError } from './store.js';

export interface HttpErrorOptions {
  retryable?: boolean;
  /** Seconds, sent as Retry-After. */
  retryAfter?: number;
  headers?: Record<string, string>;
  cause?: unknown;
}

export class HttpError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly retryAfter: number | undefined;
  readonly headers: Record<string, string>;

  constructor(status: number, code: ErrorCode, message: string, options: HttpErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.status = status;
    this.code = code;
    this.retryable = options.retryable ?? (status === 429 || status >= 500);
    this.retryAfter = options.retryAfter;
    this.headers = options.headers ?? {};
  }

  envelope(requestId: string): ErrorEnvelope {
    return { error: { code: this.code, message: this.message, retryable: this.retryable, requestId } };
  }
}

/** The status each of our error codes is answered with. */
const statusOfCode: Record<ErrorCode, number> = {
  invalid_request: 400,
  token_missing: 401,
  token_invalid: 401,
  token_expired: 401,
  origin_not_allowed: 403,
  conversation_not_found: 404,
  run_not_found: 404,
  message_not_found: 404,
  not_found: 404,
  duplicate_request: 409,
  run_finished: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  too_many_sessions: 429,
  internal_error: 500,
  upstream_error: 502,
  upstream_unavailable: 503,
  interrupted: 503,
  server_restarting: 503,
  store_unavailable: 503,
  upstream_timeout: 504,
};

/** The error an `error` event of a run stands for, with the status its code is answered with. */
export const errorOfEvent = (event: { code: ErrorCode; message: string; retryable: boolean }) =>
  new HttpError(statusOfCode[event.code] ?? 502, event.code, event.message, { retryable: event.retryable });

/** A reply that ended before it was complete, through no refusal of the service's: it can be asked again. */
export const interrupted = (cause?: unknown) =>
  new HttpError(503, 'interrupted', 'The reply was interrupted before it was complete.', { retryable: true, cause });

export const notFound = () =>
  new HttpError(404, 'conversation_not_found', 'There is no such conversation.', { retryable: false });

/**
 * What a failure to reach or use the service means for the browser: the service's problem, never the visitor's,
 * told without anything the service said. (A 404 on a conversation is handled where ownership is checked.)
 */
export function fromServiceError(error: ServiceError): HttpError {
  if (error.code.endsWith('_timeout')) {
    return new HttpError(504, 'upstream_timeout', 'The conversation service took too long to answer.', {
      cause: error,
    });
  }
  if (error.status === 0 && (error.code === 'stream_error' || error.code === 'incomplete')) {
    // The connection to the service broke, or was ended cleanly, in the middle of the reply: no refusal of the
    // service's, and the service kept nothing of it (the history is looked at before the message is sent again).
    return interrupted(error);
  }
  if (error.status === 0 && error.code === 'network_error') {
    return new HttpError(503, 'upstream_unavailable', 'The conversation service cannot be reached.', { cause: error });
  }
  if (error.status === 429 || error.status === 503) {
    return new HttpError(503, 'upstream_unavailable', 'The conversation service is busy. Try again shortly.', {
      cause: error,
      retryAfter: error.retryAfter,
    });
  }
  return new HttpError(502, 'upstream_error', 'The conversation service failed to answer.', {
    cause: error,
    retryable: error.retryable || error.status >= 500 || error.status === 0,
  });
}

/** Any thrown value as an HttpError; unknown errors become a generic 500. */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof ServiceError) return fromServiceError(error);
  if (error instanceof StoreUnavailableError) {
    return new HttpError(503, 'store_unavailable', 'The chat is briefly unavailable. Try again shortly.', {
      cause: error,
      retryAfter: 2,
    });
  }
  if (error instanceof BodyError) {
    return error.status === 415
      ? new HttpError(415, 'unsupported_media_type', error.message, { retryable: false })
      : new HttpError(400, 'invalid_request', error.message, { retryable: false });
  }
  return new HttpError(500, 'internal_error', 'Something went wrong on our side.', { cause: error, retryable: true });
}

/** This instance is draining: the browser sends the message again, to another instance. */
export const restarting = () =>
  new HttpError(503, 'server_restarting', 'This server is restarting. The reply goes on elsewhere.', {
    retryable: true,
    retryAfter: 1,
  });

export const runNotFound = () => new HttpError(404, 'run_not_found', 'There is no such reply.', { retryable: false });
