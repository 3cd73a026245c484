/**
 * @module
 * The bearer token every route but the token exchange takes: a missing, malformed, expired or forged token is a
 * 401 with a `WWW-Authenticate` challenge; a valid one names the visitor for the route.
 */
import type { MiddlewareHandler } from 'hono';
import type { Env } from '../env.js';
import { HttpError } from '../errors.js';
import type { Tokens } from '../tokens.js';

export function bearerToken({ tokens }: { tokens: Tokens }): MiddlewareHandler<Env> {
  return async function bearerToken(c, next) {
    if (c.req.method === 'OPTIONS') return next();
    const header = c.req.header('authorization') ?? '';
    if (!header) {
      throw new HttpError(401, 'token_missing', 'A token is required.', {
        retryable: false,
        headers: { 'WWW-Authenticate': 'Bearer' },
      });
    }
    const match = /^Bearer ([A-Za-z0-9_.-]+)$/.exec(header);
    if (!match) {
      throw new HttpError(401, 'token_invalid', 'The token is not valid.', {
        retryable: false,
        headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
      });
    }
    c.set('user', await tokens.verify(match[1]!));
    return next();
  };
}
