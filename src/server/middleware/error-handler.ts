/**
 * @module
 * The one place errors become responses: every error a route throws is turned into an `HttpError` (errors.ts) and
 * rendered as the envelope with its headers, and noted for the request's log line without secrets.
 */
import type { ErrorHandler, NotFoundHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { redact } from '../../service/errors.js';
import type { Ctx, Env } from '../env.js';
import { HttpError, toHttpError } from '../errors.js';

/** The status a request whose client went away is logged with (as nginx logs it); no client ever reads it. */
const clientClosed = 499 as ContentfulStatusCode;

/** The one place errors become responses: the envelope, its headers, and a note for the request's log line. */
export function errorHandlers(secrets: readonly string[]): {
  onError: ErrorHandler<Env>;
  notFound: NotFoundHandler<Env>;
} {
  const render = (c: Ctx, error: HttpError) => {
    for (const [name, value] of Object.entries(error.headers)) c.header(name, value);
    if (error.retryAfter) c.header('retry-after', String(Math.max(1, Math.ceil(error.retryAfter))));
    return c.json(error.envelope(c.get('requestId') ?? crypto.randomUUID()), error.status as 400);
  };
  return {
    onError: (error, c) => {
      if (c.req.raw.signal.aborted) {
        // The client went away (a closed tab, a cancelled fetch): what failed since failed because of that, no one
        // hears the answer, and it is no failure of ours or of the service's.
        c.set('failure', { code: 'client_closed' });
        return c.body(null, clientClosed);
      }
      const failure = toHttpError(error);
      noteFailure(c, failure, error, secrets);
      return render(c, failure);
    },
    notFound: c => render(c, new HttpError(404, 'not_found', 'No such route.', { retryable: false })),
  };
}

/** Notes a failure for the request's log line; the cause only for our own or the service's failures. */
export function noteFailure(c: Ctx, failure: HttpError, error: unknown, secrets: readonly string[]) {
  const origin = error instanceof HttpError && error.cause !== undefined ? error.cause : error;
  const cause = origin instanceof Error ? `${origin.name}: ${origin.message}` : String(origin);
  c.set('failure', {
    code: failure.code,
    ...(failure.status >= 500 ? { detail: redact(cause, secrets).slice(0, 500) } : {}),
  });
}
