/**
 * @module
 * The one error type of the Conversation Service client.
 */

export type ServiceErrorCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'payload_too_large'
  | 'rate_limited'
  | 'upstream_error'
  | 'upstream_unavailable'
  | 'connect_timeout'
  | 'first_byte_timeout'
  | 'idle_timeout'
  | 'total_timeout'
  | 'network_error'
  | 'stream_error'
  | 'bad_response'
  | (string & {});

export interface ServiceErrorInit {
  status: number;
  code: ServiceErrorCode;
  message: string;
  requestId?: string;
  retryable?: boolean;
  /** Seconds to wait before trying again, from the service's Retry-After. */
  retryAfter?: number;
}

/**
 * Anything that went wrong talking to the service. `status` is the HTTP status, or 0 when no response came
 * (network errors, timeouts). Never carries the API key: messages are redacted where they are made.
 */
export class ServiceError extends Error {
  override readonly name = 'ServiceError';
  readonly status: number;
  readonly code: ServiceErrorCode;
  readonly requestId: string | undefined;
  readonly retryable: boolean;
  readonly retryAfter: number | undefined;

  constructor(init: ServiceErrorInit) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.requestId = init.requestId;
    this.retryable = init.retryable ?? isRetryableStatus(init.status);
    this.retryAfter = init.retryAfter;
  }

  toJSON() {
    const { status, code, message, requestId, retryable, retryAfter } = this;
    return { status, code, message, requestId, retryable, retryAfter };
  }
}

const codeByStatus: Record<number, ServiceErrorCode> = {
  400: 'invalid_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  422: 'invalid_request',
  429: 'rate_limited',
  502: 'upstream_error',
  503: 'upstream_unavailable',
  504: 'upstream_error',
};

export function codeForStatus(status: number): ServiceErrorCode {
  return codeByStatus[status] ?? (status >= 500 ? 'upstream_error' : 'invalid_request');
}

export function isRetryableStatus(status: number): boolean {
  return status === 0 || status === 408 || status === 429 || status >= 500;
}

/** Replaces every occurrence of each secret in `text`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret) out = out.split(secret).join('[redacted]');
  return out;
}
