/**
 * @module
 * One log line per request, written when the response is complete: for a streamed reply, when its stream ends.
 */
import type { MiddlewareHandler } from 'hono';
import type { LogLine } from '../config.js';
import type { Env } from '../env.js';

export function requestLog({ log }: { log: (line: LogLine) => void }): MiddlewareHandler<Env> {
  return async function requestLog(c, next) {
    const started = performance.now();
    await next();
    const line = (outcome?: LogLine['outcome']): LogLine => ({
      time: new Date().toISOString(),
      level: c.res.status >= 500 || outcome === 'error' ? 'error' : c.res.status >= 400 ? 'warn' : 'info',
      requestId: c.get('requestId'),
      method: c.req.method,
      path: new URL(c.req.url).pathname,
      status: c.res.status,
      durationMs: Math.round(performance.now() - started),
      ...c.get('failure'),
      ...(outcome ? { outcome } : {}),
    });
    const outcome = c.get('outcome');
    if (outcome) void outcome.then(result => log(line(result)));
    else log(line());
  };
}
