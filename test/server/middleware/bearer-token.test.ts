import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hono } from 'hono';
import type { ErrorEnvelope } from '../../../src/protocol.js';
import type { Env } from '../../../src/server/env.js';
import { bearerToken } from '../../../src/server/middleware/bearer-token.js';
import { errorHandlers } from '../../../src/server/middleware/error-handler.js';
import { Tokens } from '../../../src/server/tokens.js';

const tokens = new Tokens(new TextEncoder().encode('a-token-secret-of-more-than-thirty-two-bytes'), {
  ttlSeconds: 600,
});

/** The middleware in front of one route that answers with the visitor it was given, errors rendered as the backend's. */
function app() {
  const handlers = errorHandlers([]);
  return new Hono<Env>()
    .onError(handlers.onError)
    .use(bearerToken({ tokens }))
    .on(['GET', 'OPTIONS'], '/', c => c.json(c.req.method === 'OPTIONS' ? { preflight: true } : c.get('user')));
}

const get = (authorization?: string, method = 'GET') =>
  app().fetch(new Request('http://backend.test/', { method, headers: authorization ? { authorization } : {} }));

async function refusal(response: Response) {
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    code: ((await response.json()) as ErrorEnvelope).error.code,
  };
}

describe('bearerToken', () => {
  it('names the visitor of a valid token for the route', async () => {
    const { token } = await tokens.issue({ sub: 'anon_a', personaId: 'p1' });
    const response = await get(`Bearer ${token}`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { sub: 'anon_a', personaId: 'p1' });
  });

  it('refuses a missing token with a Bearer challenge, and a malformed one as invalid', async () => {
    assert.deepEqual(await refusal(await get()), { status: 401, challenge: 'Bearer', code: 'token_missing' });
    for (const header of ['Basic YTpi', 'Bearer', 'Bearer a b', 'bearer abc', `Bearer ${'x'.repeat(10)}"`]) {
      assert.deepEqual(
        await refusal(await get(header)),
        { status: 401, challenge: 'Bearer error="invalid_token"', code: 'token_invalid' },
        header,
      );
    }
  });

  it('refuses a forged or expired token as the token check says', async () => {
    const { token } = await tokens.issue({ sub: 'anon_a', personaId: 'p1' }, Date.now() - 3_600_000);
    assert.equal((await refusal(await get(`Bearer ${token}`))).code, 'token_expired');
    const forged = await new Tokens(new TextEncoder().encode('another-secret-of-more-than-thirty-two-bytes')).issue({
      sub: 'anon_a',
      personaId: 'p1',
    });
    assert.equal((await refusal(await get(`Bearer ${forged.token}`))).code, 'token_invalid');
  });

  it('lets a preflight through without a token', async () => {
    const response = await get(undefined, 'OPTIONS');
    assert.deepEqual(await response.json(), { preflight: true });
  });
});
