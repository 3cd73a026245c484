import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { base64url } from 'jose';
import { ada, juniper } from '../../support/service.js';
import { afterNoKeyLeaks, expectError, setup, siteOrigin } from '../../support/backend.js';

describe('POST /session, the token exchange', () => {
  afterNoKeyLeaks();

  it('gives a token, its expiry, a storage key and the persona, and sets a signed anonymous cookie', async () => {
    const { request } = setup();
    const res = await request('POST', '/session', {
      body: {},
      headers: { origin: siteOrigin, 'x-persona-chat': '1' },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.equal(res.headers.get('access-control-allow-origin'), siteOrigin);
    assert.equal(res.headers.get('access-control-allow-credentials'), 'true');
    const cookie = res.headers.get('set-cookie')!;
    assert.match(
      cookie,
      /^persona_chat_visitor=[^;]+; Max-Age=2592000; Path=\/persona-chat; HttpOnly; Secure; SameSite=Lax$/,
    );
    const body = await res.json();
    assert.match(body.token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
    const ttl = Date.parse(body.expiresAt) - Date.now();
    assert.ok(ttl > 590_000 && ttl <= 600_000, 'about ten minutes');
    assert.match(body.user.key, /^[\w-]{22}$/);
    assert.deepEqual(body.persona, { personaId: juniper.personaId });
    const claims = JSON.parse(new TextDecoder().decode(base64url.decode(body.token.split('.')[1])));
    assert.match(claims.sub, /^anon_[\w-]{22}$/);
    assert.equal(claims.aud, 'persona-chat');
    assert.equal(claims.exp - claims.iat, 600);
  });

  it("uses the site's identify hook, and never lets the browser choose its user or an unserved persona", async () => {
    const { session, request } = setup({
      backend: { identify: req => (req.headers.get('cookie')?.includes('site_session=alice') ? 'user-alice' : null) },
    });
    const alice = await session({}, { cookie: 'site_session=alice' });
    assert.equal(alice.cookie, undefined, 'no anonymous cookie for a known user');
    const claims = JSON.parse(new TextDecoder().decode(base64url.decode(alice.token.split('.')[1])));
    assert.equal(claims.sub, 'user-alice');
    const chosen = await session({ personaId: ada.personaId }, { cookie: 'site_session=alice' });
    assert.equal(JSON.parse(new TextDecoder().decode(base64url.decode(chosen.token.split('.')[1]))).pid, ada.personaId);
    const headers = { origin: siteOrigin, 'x-persona-chat': '1' };
    await expectError(
      request('POST', '/session', { body: { personaId: crypto.randomUUID() }, headers }),
      400,
      'invalid_request',
    );
    await expectError(
      request('POST', '/session', { body: { externalUserId: 'victim' }, headers }),
      400,
      'invalid_request',
    );
    await expectError(request('POST', '/session', { body: { sub: 'victim' }, headers }), 400, 'invalid_request');
  });

  for (const [name, headers, body, status, code] of [
    ['a foreign Origin', { origin: 'https://evil.example', 'x-persona-chat': '1' }, {}, 403, 'origin_not_allowed'],
    ['no Origin', { 'x-persona-chat': '1' }, {}, 403, 'origin_not_allowed'],
    ['Origin null', { origin: 'null', 'x-persona-chat': '1' }, {}, 403, 'origin_not_allowed'],
    [
      'a look-alike Origin',
      { origin: `${siteOrigin}.evil.example`, 'x-persona-chat': '1' },
      {},
      403,
      'origin_not_allowed',
    ],
    ['no X-Persona-Chat header', { origin: siteOrigin }, {}, 403, 'origin_not_allowed'],
    [
      'a form post',
      { origin: siteOrigin, 'x-persona-chat': '1', 'content-type': 'application/x-www-form-urlencoded' },
      'personaId=x',
      415,
      'unsupported_media_type',
    ],
    [
      'a text/plain body',
      { origin: siteOrigin, 'x-persona-chat': '1', 'content-type': 'text/plain' },
      '{}',
      415,
      'unsupported_media_type',
    ],
  ] as const) {
    it(`refuses a cross-site-shaped request (${name}) with ${status}, and gives no token or cookie`, async () => {
      const { request } = setup();
      const { res, body: envelope } = await expectError(request('POST', '/session', { body, headers }), status, code);
      assert.equal(res.headers.get('set-cookie'), null);
      assert.ok(!JSON.stringify(envelope).includes('token"'));
    });
  }

  it('limits sessions per visitor and per IP, with their own error', async () => {
    const { session, request } = setup({
      backend: { limits: { sessionsPerVisitorPerMinute: 2, sessionsPerIpPerMinute: 4 } },
    });
    const headers = { origin: siteOrigin, 'x-persona-chat': '1' };
    const { cookie } = await session();
    await session({}, { cookie: cookie! });
    const { res } = await expectError(
      request('POST', '/session', { body: {}, headers: { ...headers, cookie: cookie! } }),
      429,
      'too_many_sessions',
    );
    assert.ok(Number(res.headers.get('retry-after')) >= 1, 'says when to come back');
    await session();
    await expectError(request('POST', '/session', { body: {}, headers }), 429, 'too_many_sessions');
  });
});
