/**
 * @module
 * The client's request engine: one request to the service with the API key, the caller's signal and the timeouts
 * (until the headers, until the first byte, between pieces of a body, in all), no redirect followed, an HTML page
 * refused; a non-2xx status, a timeout or a network failure thrown as a ServiceError without the key or the
 * service's own words beyond a bounded message. `client.ts` says which requests to make; this module makes them.
 */
import { ServiceError, codeForStatus, redact } from './errors.js';

export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export interface Timeouts {
  /** Until the response headers arrive (for a complete-response continue, `firstByteMs` bounds that wait). */
  connectMs: number;
  /** Streams: from the headers to the first body bytes. Complete-response continue: until the headers. */
  firstByteMs: number;
  /** Streams: the longest pause between two pieces of the body. */
  idleMs: number;
  /** The whole call, body included. */
  totalMs: number;
}

export const defaultTimeouts: Timeouts = { connectMs: 10_000, firstByteMs: 60_000, idleMs: 30_000, totalMs: 300_000 };

export interface CallOptions {
  signal?: AbortSignal;
  timeouts?: Partial<Timeouts>;
}

/** A request that got its response: read its body under `signal`, then call `done`. */
export interface Started {
  response: Response;
  signal: AbortSignal;
  timeouts: Timeouts;
  done(): void;
}

/** Makes the requests of one client: its API key, in its header, and its timeouts. */
export class Requests {
  readonly #apiKey: string;
  readonly #apiKeyHeader: string;
  readonly #timeouts: Timeouts;

  constructor(options: { apiKey: string; apiKeyHeader: string; timeouts: Timeouts }) {
    this.#apiKey = options.apiKey;
    this.#apiKeyHeader = options.apiKeyHeader;
    this.#timeouts = options.timeouts;
  }

  /**
   * Starts a request with the API key, the caller's signal and the timeouts. Throws a ServiceError for a
   * non-2xx status, a timeout or a network failure; an abort by the caller rethrows the caller's reason.
   */
  async start(
    transport: FetchLike,
    url: string,
    method: string,
    body: unknown,
    accept: string,
    options: CallOptions = {},
    streaming: boolean,
  ): Promise<Started> {
    const timeouts = { ...this.#timeouts, ...options.timeouts };
    const controller = new AbortController();
    const userSignal = options.signal;
    userSignal?.throwIfAborted();
    let timedOut: ServiceError | undefined;
    const fail = (code: string, ms: number) => () => {
      timedOut = new ServiceError({
        status: 0,
        code,
        message: `The service did not answer within ${ms} ms.`,
        retryable: true,
      });
      controller.abort(timedOut);
    };
    const onUserAbort = () => controller.abort(userSignal?.reason);
    userSignal?.addEventListener('abort', onUserAbort, { once: true });
    const total = unref(setTimeout(fail('total_timeout', timeouts.totalMs), timeouts.totalMs));
    const headersMs = streaming ? timeouts.connectMs : Math.max(timeouts.connectMs, timeouts.firstByteMs);
    const headersTimer = unref(
      setTimeout(fail(streaming ? 'connect_timeout' : 'first_byte_timeout', headersMs), headersMs),
    );
    const done = () => {
      clearTimeout(total);
      clearTimeout(headersTimer);
      userSignal?.removeEventListener('abort', onUserAbort);
    };
    const headers: Record<string, string> = { accept, [this.#apiKeyHeader]: this.#apiKey };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await transport(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: controller.signal,
        // The service never redirects, and following a redirect would send the API key wherever it points: a
        // redirect is answered as the error it is. With no redirect to follow and no window, fetch also sends the
        // request as it is rather than a copy of it. ('manual', not 'error', which Workers' fetch refuses.)
        redirect: 'manual',
        window: null,
      });
    } catch (error) {
      done();
      if (timedOut) throw timedOut;
      if (userSignal?.aborted) throw userSignal.reason;
      throw this.#networkError(error);
    } finally {
      clearTimeout(headersTimer);
    }
    if (!response.ok) {
      try {
        throw await this.#errorFrom(response);
      } finally {
        done();
      }
    }
    if (/^\s*text\/html\b/i.test(response.headers.get('content-type') ?? '')) {
      // A page from something in front of the service (a proxy, a captive portal), never the service's answer.
      done();
      await response.body?.cancel().catch(() => {});
      throw badResponse(response, 'The service answered with an HTML page.');
    }
    return {
      response,
      signal: controller.signal,
      timeouts,
      done: () => {
        done();
        if (!controller.signal.aborted) controller.abort(callOver);
      },
    };
  }

  /** Runs a read of the body, turning aborts by our own timers and network failures into ServiceErrors. */
  async guard<T>(started: Started, code: string, read: () => Promise<T>): Promise<T> {
    try {
      return await read();
    } catch (error) {
      throw this.failureOf(started, code, error);
    }
  }

  /** What a read of the body that failed with `error` throws: see `guard`. */
  failureOf(started: Started, code: string, error: unknown): unknown {
    const reason: unknown = started.signal.reason;
    if (reason instanceof ServiceError) return reason;
    if (error instanceof ServiceError) return error;
    if (started.signal.aborted) return reason ?? error;
    return this.#networkError(error, code);
  }

  /** The body as a JSON object, which every answer of the service is; anything else is a bad_response. */
  async readJson(started: Started): Promise<unknown> {
    const text = await this.guard(started, 'bad_response', () => started.response.text());
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw badResponse(started.response, 'The service answered with a body that is not JSON.');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw badResponse(started.response, 'The service answered with JSON that is not an object.');
    }
    return parsed;
  }

  #networkError(error: unknown, code = 'network_error'): ServiceError {
    // fetch says only "fetch failed"; what failed (a reset, a refused or timed-out connection) is in its cause.
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : undefined;
    const detail =
      (error instanceof Error ? error.message : String(error)) +
      (cause ? ` (${(cause as { code?: string }).code ?? cause.name}: ${cause.message})` : '');
    return new ServiceError({
      status: 0,
      code,
      message: redact(`The connection to the service failed: ${detail}`, [this.#apiKey]),
      retryable: true,
    });
  }

  async #errorFrom(response: Response): Promise<ServiceError> {
    let code = codeForStatus(response.status);
    let message = `The service answered ${response.status}.`;
    let requestId = response.headers.get('x-request-id') ?? undefined;
    try {
      const text = (await response.text()).slice(0, 4096);
      const parsed: unknown = JSON.parse(text);
      const inner = (parsed as { error?: unknown })?.error ?? parsed;
      if (inner && typeof inner === 'object') {
        const fields = inner as Record<string, unknown>;
        if (typeof fields.code === 'string' && fields.code) code = fields.code;
        if (typeof fields.message === 'string' && fields.message) message = fields.message.slice(0, 500);
        if (typeof fields.requestId === 'string') requestId ??= fields.requestId;
      } else if (typeof inner === 'string' && inner) message = inner.slice(0, 500);
    } catch {
      // A body that is not JSON adds nothing we can trust.
    }
    return new ServiceError({
      status: response.status,
      code,
      message: redact(message, [this.#apiKey]),
      requestId,
      retryAfter: retryAfterSeconds(response.headers.get('retry-after')),
    });
  }
}

/**
 * The seconds a Retry-After asks to wait: it gives them, or the date to wait until (HTTP allows both; a date is in
 * GMT, and ends so). Undefined when it gives neither, none, or a moment already past.
 */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (value === null || !value.trim()) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds > 0 ? seconds : undefined;
  const until = /\bGMT\s*$/.test(value) ? Date.parse(value) : NaN;
  return until > now ? Math.ceil((until - now) / 1000) : undefined;
}

/**
 * An answer that cannot be the service's. Retryable: it says nothing about the request, and asking again may reach
 * the service itself.
 */
export function badResponse(response: Response, message: string): ServiceError {
  return new ServiceError({
    status: response.status,
    code: 'bad_response',
    message,
    requestId: response.headers.get('x-request-id') ?? undefined,
    retryable: true,
  });
}

/** Why a call's request is ended once the call is over: one value for all, as nothing reads it but fetch. */
const callOver = new DOMException('The call is over.', 'AbortError');

/** A timer that does not hold a Node process open by itself (other runtimes have no such notion). */
function unref<T>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}
