import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SignJWT, base64url } from 'jose';
import { Tokens } from '../../src/server/tokens.js';
import { afterNoKeyLeaks, expectError, setup, tokenSecret } from '../support/backend.js';
import { juniper } from '../support/service.js';

const secret = new TextEncoder().encode('a-token-secret-of-more-than-thirty-two-bytes');

describe('Tokens', () => {
  it('verifies a token once and then knows it, until it expires', async () => {
    const tokens = new Tokens(secret, { ttlSeconds: 600, toleranceSeconds: 30 });
    const now = Date.now();
    const { token } = await tokens.issue({ sub: 'anon_a', personaId: 'p1' }, now);
    assert.deepEqual(await tokens.verify(token, now), { sub: 'anon_a', personaId: 'p1' });
    const again = await tokens.verify(token, now + 1000);
    assert.deepEqual(again, { sub: 'anon_a', personaId: 'p1' });
    assert.ok(Object.isFrozen(again), 'the claims one request gets cannot be changed for the next');
    await assert.rejects(tokens.verify(token, now + 700_000), { code: 'token_expired' });
  });

  it('refuses a token that differs from a known one in its signature or its payload', async () => {
    const tokens = new Tokens(secret);
    const now = Date.now();
    const { token } = await tokens.issue({ sub: 'anon_a', personaId: null }, now);
    await tokens.verify(token, now);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const flip = (text: string) => text.slice(0, -2) + (text.at(-2) === 'A' ? 'B' : 'A') + text.at(-1);
    await assert.rejects(tokens.verify(`${header}.${payload}.${flip(signature)}`, now), { code: 'token_invalid' });
    const other = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'anon_b' }),
    );
    await assert.rejects(tokens.verify(`${header}.${other.toString('base64url')}.${signature}`, now), {
      code: 'token_invalid',
    });
  });

  it('works the same without remembering tokens', async () => {
    const tokens = new Tokens(secret, { cacheSize: 0 });
    const now = Date.now();
    const { token } = await tokens.issue({ sub: 'anon_a', personaId: null }, now);
    assert.deepEqual(await tokens.verify(token, now), { sub: 'anon_a', personaId: null });
    assert.deepEqual(await tokens.verify(token, now + 1000), { sub: 'anon_a', personaId: null });
    await assert.rejects(tokens.verify(token, now + 700_000), { code: 'token_expired' });
  });
});

/** The backend's own token secret, as the test backends are given it. */
const backendSecret = new TextEncoder().encode(tokenSecret);

/** A token signed with our secret (or another), with the claims given. */
async function forge(claims: Record<string, unknown>, { alg = 'HS256', key = backendSecret } = {}) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ pid: juniper.personaId, ...claims })
    .setProtectedHeader({ alg, typ: 'JWT' })
    .setSubject((claims.sub as string) ?? 'anon_victim')
    .setAudience((claims.aud as string) ?? 'persona-chat')
    .setIssuedAt((claims.iat as number) ?? now)
    .setExpirationTime((claims.exp as number) ?? now + 600)
    .sign(key);
}

describe('tokens through the backend', () => {
  afterNoKeyLeaks();

  const now = Math.floor(Date.now() / 1000);
  const cases: [string, () => Promise<Record<string, string>>, string][] = [
    ['no token', async () => ({}), 'token_missing'],
    ['a malformed header', async () => ({ authorization: 'Token abc' }), 'token_invalid'],
    ['a malformed token', async () => ({ authorization: 'Bearer not.a.jwt' }), 'token_invalid'],
    [
      'alg: none',
      async () => {
        const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT' }));
        const payload = base64url.encode(
          JSON.stringify({ sub: 'anon_x', aud: 'persona-chat', iat: now, exp: now + 600, pid: juniper.personaId }),
        );
        return { authorization: `Bearer ${header}.${payload}.` };
      },
      'token_invalid',
    ],
    [
      'another algorithm (HS512)',
      async () => ({ authorization: `Bearer ${await forge({}, { alg: 'HS512' })}` }),
      'token_invalid',
    ],
    [
      'another key',
      async () => ({ authorization: `Bearer ${await forge({}, { key: new TextEncoder().encode('x'.repeat(40)) })}` }),
      'token_invalid',
    ],
    [
      'a tampered payload',
      async () => {
        const [h, , s] = (await forge({ sub: 'anon_me' })).split('.');
        const payload = base64url.encode(
          JSON.stringify({
            sub: 'anon_victim',
            aud: 'persona-chat',
            iat: now,
            exp: now + 600,
            pid: juniper.personaId,
          }),
        );
        return { authorization: `Bearer ${h}.${payload}.${s}` };
      },
      'token_invalid',
    ],
    [
      'an expired token',
      async () => ({ authorization: `Bearer ${await forge({ iat: now - 700, exp: now - 100 })}` }),
      'token_expired',
    ],
    [
      'another audience',
      async () => ({ authorization: `Bearer ${await forge({ aud: 'another-service' })}` }),
      'token_invalid',
    ],
    [
      'an iat far in the future',
      async () => ({ authorization: `Bearer ${await forge({ iat: now + 600, exp: now + 1200 })}` }),
      'token_invalid',
    ],
  ];
  for (const [name, headers, code] of cases) {
    it(`answers ${name} with 401 ${code}, and never calls the service`, async () => {
      const { request, upstream } = setup();
      const h = await headers();
      for (const [method, path, body] of [
        ['POST', '/conversations', {}],
        ['GET', '/conversations', undefined],
        ['GET', `/conversations/${crypto.randomUUID()}`, undefined],
        ['PATCH', `/conversations/${crypto.randomUUID()}`, { name: 'x' }],
        ['POST', `/conversations/${crypto.randomUUID()}/messages`, { message: 'hi' }],
      ] as const) {
        const { res } = await expectError(
          request(method, path, { body, headers: { ...h, 'idempotency-key': 'key-12345678' } }),
          401,
          code,
        );
        assert.match(res.headers.get('www-authenticate') ?? '', /^Bearer/);
      }
      assert.equal(upstream.length, 0);
    });
  }

  it('accepts a token whose clock runs a little ahead', async () => {
    const { api } = setup();
    const token = await forge({ sub: 'anon_clock', iat: now + 20, exp: now + 620 });
    assert.equal((await api('GET', '/conversations', token)).status, 200);
  });
});
