/**
 * @module
 * Who the visitor is: the site's own user from the `identify` hook, or an anonymous visitor named by a random id
 * in a signed HttpOnly cookie. The result is the service's externalUserId; the browser never chooses it.
 */
import { getSignedCookie, setSignedCookie } from 'hono/cookie';
import type { BackendConfig, ResolvedConfig } from './config.js';
import type { Ctx } from './env.js';
import { HttpError } from './errors.js';
import { deriveSecret, newVisitorId } from './tokens.js';

const sameSiteAttribute = { lax: 'Lax', strict: 'Strict', none: 'None' } as const;

export function visitors(config: BackendConfig, settings: ResolvedConfig) {
  const cookieSecret = deriveSecret(settings.tokenSecret, 'visitor-cookie');

  const requestIsHttps = (c: Ctx) =>
    new URL(c.req.url).protocol === 'https:' ||
    (settings.trustedHops > 0 && c.req.header('x-forwarded-proto')?.split(',')[0]?.trim() === 'https');

  return async function visitor(c: Ctx): Promise<string> {
    const identified = await config.identify?.(c.req.raw);
    if (identified !== undefined && identified !== null) {
      if (typeof identified !== 'string' || identified.length < 1 || identified.length > 256) {
        throw new HttpError(500, 'internal_error', 'The identify hook returned an unusable user id.');
      }
      return identified;
    }
    const secret = await cookieSecret;
    const current = await getSignedCookie(c, secret, settings.cookie.name);
    if (typeof current === 'string' && /^[A-Za-z0-9_-]{22}$/.test(current)) return `anon_${current}`;
    const id = newVisitorId();
    const { sameSite } = settings.cookie;
    // A cross-site cookie must be Secure, and Partitioned where third-party cookies are blocked (browsers take a
    // Secure cookie from http://localhost too).
    const crossSite = sameSite === 'none';
    const secure = crossSite || (settings.cookie.secure === 'auto' ? requestIsHttps(c) : settings.cookie.secure);
    await setSignedCookie(c, settings.cookie.name, id, secret, {
      path: settings.basePath,
      httpOnly: true,
      sameSite: sameSiteAttribute[sameSite],
      secure,
      partitioned: crossSite,
      maxAge: settings.cookie.maxAgeSeconds,
    });
    return `anon_${id}`;
  };
}
