/**
 * @module
 * One error type for everything that goes wrong between the element and its backend, classified once where the
 * response or the stream is read. An abort by the visitor is not an error.
 */
import type { ErrorCode, ErrorEnvelope } from '../protocol.js';

export type PersonaChatErrorCode = ErrorCode | 'network_error' | 'stream_incomplete' | 'config_error' | 'bad_response';

export class PersonaChatError extends Error {
  override readonly name = 'PersonaChatError';
  constructor(
    readonly code: PersonaChatErrorCode,
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
  }
}

/**
 * The error a failed response stands for, from its envelope when it has one. Never shows raw server text. A 5xx
 * without one comes from something in front of the backend (a load balancer with no instance to send to): the
 * backend was not reached.
 */
export async function errorFromResponse(response: Response): Promise<PersonaChatError> {
  const { status } = response;
  const envelope = (await response.json().catch(() => undefined)) as ErrorEnvelope | undefined;
  const code = envelope?.error?.code ?? (status >= 500 ? 'network_error' : 'bad_response');
  const retryable = envelope?.error?.retryable ?? (status >= 500 || status === 429);
  return new PersonaChatError(code, `The chat backend answered ${status} (${code}).`, retryable, status);
}

export const networkError = (cause: unknown) =>
  new PersonaChatError(
    'network_error',
    `The chat backend could not be reached: ${String((cause as Error)?.message ?? cause)}`,
    true,
  );
