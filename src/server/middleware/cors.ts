/**
 * @module
 * CORS for the routes the browser calls: an allowed Origin is echoed back (never `*`), a preflight is answered at
 * once, and every answer varies on Origin. It does what Hono's `cors` does with the same options, but writes its
 * headers once the route has answered. Written before, they make Hono rebuild the route's response as a copy that
 * carries them; a streamed reply rebuilt that way is no longer one the Node adapter can send as it is, and the
 * adapter then holds its first bytes back for a timer's turn (about a millisecond) to try to size it.
 */
import type { MiddlewareHandler } from 'hono';
import type { Env } from '../env.js';

export interface CorsOptions {
  /** Whether a page of this origin may call the route. */
  allowOrigin(origin: string): boolean;
  /** Say that the browser may send credentials (the route takes a cookie). Default false. */
  credentials?: boolean;
  allowMethods: readonly string[];
  allowHeaders: readonly string[];
  /** Response headers the page may read. */
  exposeHeaders?: readonly string[];
  /** How long a preflight's answer may be kept, in seconds. */
  maxAge: number;
}

export function cors(options: CorsOptions): MiddlewareHandler<Env> {
  const methods = options.allowMethods.join(',');
  const allowHeaders = options.allowHeaders.join(',');
  const exposeHeaders = options.exposeHeaders?.length ? options.exposeHeaders.join(',') : undefined;
  const maxAge = String(options.maxAge);
  /** The headers every answer gets: the origin when allowed, credentials and exposed headers when configured. */
  const common = (origin: string | undefined) => {
    const headers: Record<string, string> = {};
    if (origin && options.allowOrigin(origin)) headers['Access-Control-Allow-Origin'] = origin;
    if (options.credentials) headers['Access-Control-Allow-Credentials'] = 'true';
    if (exposeHeaders) headers['Access-Control-Expose-Headers'] = exposeHeaders;
    return headers;
  };
  return async function cors(c, next) {
    const origin = c.req.header('origin');
    if (c.req.method === 'OPTIONS') {
      return c.body(null, 204, {
        ...common(origin),
        Vary: 'Origin, Access-Control-Request-Headers',
        'Access-Control-Max-Age': maxAge,
        'Access-Control-Allow-Methods': methods,
        'Access-Control-Allow-Headers': allowHeaders,
      });
    }
    await next();
    const headers = c.res.headers;
    for (const [name, value] of Object.entries(common(origin))) headers.set(name, value);
    headers.append('Vary', 'Origin');
  };
}
