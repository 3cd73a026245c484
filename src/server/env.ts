/**
 * @module
 * The environment of a request, shared by the backend's middleware and routes: the Hono variables a request
 * carries, and helpers that read the request's runtime (its abort signal, the work that outlives the response).
 */
import type { Context } from 'hono';
import type { RequestIdVariables } from 'hono/request-id';
import type { LogLine } from './config.js';
import type { TokenClaims } from './tokens.js';

export type Env = {
  Variables: RequestIdVariables & {
    user: TokenClaims;
    /** For streamed replies: settles with how the stream ended, when it ends. */
    outcome: Promise<LogLine['outcome']> | undefined;
    /** What went wrong, for the log line: our code, and the cause without secrets. */
    failure: { code: string; detail?: string } | undefined;
  };
};

export type Ctx = Context<Env>;

/** The requests that came with an execution context (Workers): the only ones whose work needs `waitUntil`. */
const withExecutionCtx = new WeakSet<Request>();

/** Notes that a request came with an execution context, for `keepAliveOf`. */
export function noteExecutionCtx(request: Request, executionCtx: unknown) {
  if (executionCtx) withExecutionCtx.add(request);
}

const untilDone = () => {};

/**
 * The request's abort signal, for a call that may not need it: it is read only if the call does. Node's adapter
 * makes an AbortController for a request on the first read of its signal, which an ownership check answered from
 * the cache would make for nothing.
 */
export function requestSignal(c: Ctx): { readonly signal: AbortSignal } {
  return {
    get signal() {
      return c.req.raw.signal;
    },
  };
}

/**
 * Hands work that goes on after the response to the runtime: on Workers, `waitUntil`; elsewhere (Node) the process
 * keeps it going by itself. Asks Hono for the execution context only when the request came with one: asking without
 * one throws, at the cost of an error and its stack on every request.
 */
export function keepAliveOf(c: Ctx): (work: Promise<unknown>) => void {
  if (!withExecutionCtx.has(c.req.raw)) return untilDone;
  return work => {
    try {
      c.executionCtx.waitUntil(work);
    } catch {
      // An execution context without waitUntil: the runtime keeps the work going, or cannot.
    }
  };
}
