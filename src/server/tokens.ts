/**
 * @module
 * Who the visitor is, and the short-lived token that says so. Tokens are HS256 JWTs (jose, algorithm pinned) whose
 * `sub` is the conversation service's externalUserId; the browser carries them but never chooses what they say.
 * Anonymous visitors are named by a random id, kept in a signed cookie.
 */
import { SignJWT, base64url, errors, jwtVerify } from 'jose';
import { HttpError } from './errors.js';

const encoder = new TextEncoder();

export interface TokenClaims {
  /** The externalUserId. */
  sub: string;
  /** The persona this token may talk to; null when the backend serves general conversations. */
  personaId: string | null;
}

export interface IssuedToken {
  token: string;
  expiresAt: Date;
}

/** HMAC-SHA256 of `text` under `secret`. */
async function hmac(secret: Uint8Array, text: string): Promise<Uint8Array<ArrayBuffer>> {
  const key = await crypto.subtle.importKey('raw', secret as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  return new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(text)));
}

/** A secret of its own for one use, derived from the configured secret, so no two uses share a key. */
export const deriveSecret = (secret: Uint8Array, purpose: string) => hmac(secret, `persona-chat ${purpose} v1`);

export class Tokens {
  readonly #secret: Uint8Array;
  readonly #ttlSeconds: number;
  readonly #audience: string;
  readonly #toleranceSeconds: number;
  /**
   * Tokens already verified, with their claims and until when (epoch ms) they hold without being verified again:
   * a visitor's token is checked once, not on every request it comes with. The key is the whole token, signature
   * included, so only the very token that was verified matches. Oldest first.
   */
  readonly #verified = new Map<string, { claims: TokenClaims; until: number }>();
  readonly #cacheSize: number;

  constructor(
    secret: Uint8Array,
    { ttlSeconds = 600, audience = 'persona-chat', toleranceSeconds = 30, cacheSize = 10_000 } = {},
  ) {
    this.#secret = secret;
    this.#ttlSeconds = ttlSeconds;
    this.#audience = audience;
    this.#toleranceSeconds = toleranceSeconds;
    this.#cacheSize = cacheSize;
  }

  async issue(claims: TokenClaims, now = Date.now()): Promise<IssuedToken> {
    const iat = Math.floor(now / 1000);
    const exp = iat + this.#ttlSeconds;
    const token = await new SignJWT({ pid: claims.personaId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.sub)
      .setAudience(this.#audience)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(crypto.randomUUID())
      .sign(this.#secret);
    return { token, expiresAt: new Date(exp * 1000) };
  }

  /** The claims of a valid token; otherwise a 401 with `token_expired` or `token_invalid`. */
  async verify(token: string, now = Date.now()): Promise<TokenClaims> {
    const known = this.#verified.get(token);
    if (known && now < known.until) return known.claims;
    if (known) this.#verified.delete(token);
    let payload;
    try {
      ({ payload } = await jwtVerify(token, this.#secret, {
        algorithms: ['HS256'],
        audience: this.#audience,
        requiredClaims: ['sub', 'aud', 'iat', 'exp'],
        clockTolerance: this.#toleranceSeconds,
        maxTokenAge: this.#ttlSeconds + this.#toleranceSeconds,
        currentDate: new Date(now),
      }));
    } catch (error) {
      if (error instanceof errors.JWTExpired) {
        throw new HttpError(
          401,
          'token_expired',
          'The session has expired. Get a new token.',
          bearerChallenge('expired'),
        );
      }
      throw new HttpError(401, 'token_invalid', 'The token is not valid.', bearerChallenge('invalid'));
    }
    const { sub, pid } = payload;
    if (typeof sub !== 'string' || !sub || (pid !== null && typeof pid !== 'string')) {
      throw new HttpError(401, 'token_invalid', 'The token is not valid.', bearerChallenge('invalid'));
    }
    const claims: TokenClaims = Object.freeze({ sub, personaId: pid });
    // Kept until it expires or grows too old, without the clock tolerance: past that, it is verified afresh.
    const until = Math.min(payload.exp!, payload.iat! + this.#ttlSeconds) * 1000;
    if (this.#cacheSize > 0 && now < until) {
      this.#verified.set(token, { claims, until });
      if (this.#verified.size > this.#cacheSize) this.#verified.delete(this.#verified.keys().next().value!);
    }
    return claims;
  }
}

function bearerChallenge(kind: 'expired' | 'invalid') {
  const description = kind === 'expired' ? 'The token expired' : 'The token is not valid';
  return {
    retryable: false,
    headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${description}"` },
  };
}

/** A new anonymous visitor id: 128 random bits. */
export const newVisitorId = () => base64url.encode(crypto.getRandomValues(new Uint8Array(16)));

/** A stable, non-reversible key for a user, for namespacing browser storage. */
export async function storageKey(secret: Uint8Array, sub: string): Promise<string> {
  return base64url.encode(await hmac(secret, sub)).slice(0, 22);
}
