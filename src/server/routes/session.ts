/**
 * @module
 * `POST /session`, the token exchange. It is authenticated by a cookie (the site's own, through `identify`, or the
 * anonymous visitor's), so it defends against cross-site requests: an exact Origin, a custom header that a plain
 * form cannot send, and JSON only.
 */
import { Hono } from 'hono';
import * as z from 'zod/mini';
import { readJsonBody } from '../../json-body.js';
import { csrfHeader } from '../../protocol.js';
import type { SessionResponse } from '../../protocol.js';
import type { Env } from '../env.js';
import type { Parts } from '../parts.js';
import { HttpError } from '../errors.js';
import { deriveSecret, storageKey } from '../tokens.js';
import { visitors } from '../visitor.js';

const sessionSchema = z.strictObject({ personaId: z.optional(z.string({ error: 'personaId must be a string' })) });

const tooManySessions = (retryAfter: number) =>
  new HttpError(429, 'too_many_sessions', 'Too many chat sessions were started from here. Try again shortly.', {
    retryAfter,
  });

export function sessionRoutes({ config, settings, tokens, limiter, allowsOrigin }: Parts) {
  const app = new Hono<Env>();
  const userKeySecret = deriveSecret(settings.tokenSecret, 'user-key');
  const visitor = visitors(config, settings);

  const choosePersona = (requested: string | undefined): string | null => {
    if (settings.general) {
      if (requested) throw new HttpError(400, 'invalid_request', 'This chat serves no personas.', { retryable: false });
      return null;
    }
    if (requested === undefined) return settings.personaIds[0]!;
    if (!settings.personaIds.includes(requested)) {
      throw new HttpError(400, 'invalid_request', 'This chat does not serve that persona.', { retryable: false });
    }
    return requested;
  };

  app.post('/session', async c => {
    if (!allowsOrigin(c.req.header('origin'))) {
      throw new HttpError(403, 'origin_not_allowed', 'This page is not allowed to use this chat.', {
        retryable: false,
      });
    }
    if (c.req.header(csrfHeader) !== '1') {
      throw new HttpError(403, 'origin_not_allowed', `The ${csrfHeader} header is required.`, { retryable: false });
    }
    await limiter.perIp('session', settings.limits.sessionsPerIpPerMinute, c, tooManySessions);
    const body = await readJsonBody(c, sessionSchema, { allowEmpty: true });
    const personaId = choosePersona(body.personaId);
    const sub = await visitor(c);
    await limiter.perMinute(`session:visitor:${sub}`, settings.limits.sessionsPerVisitorPerMinute, tooManySessions);
    const { token, expiresAt } = await tokens.issue({ sub, personaId });
    const response: SessionResponse = {
      token,
      expiresAt: expiresAt.toISOString(),
      user: { key: await storageKey(await userKeySecret, sub) },
      persona: { personaId },
    };
    c.header('cache-control', 'no-store');
    return c.json(response);
  });

  return app;
}
