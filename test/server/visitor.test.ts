import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BackendConfig } from '../../src/server/config.js';
import { afterNoKeyLeaks, base, expectError, setup, siteOrigin } from '../support/backend.js';

describe('the visitor', () => {
  afterNoKeyLeaks();

  it('sets the cookie SameSite=Lax by default, Strict or None when asked; None is also Secure and Partitioned', async () => {
    const cookieOf = async (cookie: BackendConfig['cookie'], url = `http://chat.example.com${base}/session`) => {
      const { backend } = setup({ backend: { cookie } });
      const res = await backend.fetch(
        new Request(url, {
          method: 'POST',
          headers: { origin: siteOrigin, 'x-persona-chat': '1', 'content-type': 'application/json' },
          body: '{}',
        }),
      );
      assert.equal(res.status, 200);
      return res.headers.get('set-cookie')!.replace(/^persona_chat_visitor=[^;]+; /, '');
    };
    // Over plain HTTP (a backend on http://localhost, say), Secure only where the browser needs it.
    assert.equal(await cookieOf(undefined), 'Max-Age=2592000; Path=/persona-chat; HttpOnly; SameSite=Lax');
    assert.equal(
      await cookieOf({ sameSite: 'strict' }),
      'Max-Age=2592000; Path=/persona-chat; HttpOnly; SameSite=Strict',
    );
    assert.equal(
      await cookieOf({ sameSite: 'none' }),
      'Max-Age=2592000; Path=/persona-chat; HttpOnly; Secure; SameSite=None; Partitioned',
    );
    assert.equal(
      await cookieOf({ sameSite: 'none' }, `https://chat.example.com${base}/session`),
      'Max-Age=2592000; Path=/persona-chat; HttpOnly; Secure; SameSite=None; Partitioned',
    );
    assert.throws(() => setup({ backend: { cookie: { sameSite: 'None' as 'none' } } }).backend.check(), {
      name: 'ConfigError',
      message: /"cookie.sameSite" \(--cookie-same-site \/ PERSONA_CHAT_COOKIE_SAME_SITE\) must be lax, strict or none/,
    });
    assert.throws(() => setup({ backend: { cookie: { sameSite: 'none', secure: false } } }).backend.check(), {
      name: 'ConfigError',
      setting: 'cookie.secure',
    });
  });

  it('keeps the visitor across sessions by the cookie, and gives a tampered cookie a fresh id', async () => {
    const { session } = setup();
    const first = await session();
    const again = await session({}, { cookie: first.cookie! });
    assert.equal(again.cookie, undefined, 'a valid cookie is not replaced');
    assert.equal(again.user.key, first.user.key);
    const [name, value] = first.cookie!.split('=');
    const tampered = `${name}=${decodeURIComponent(value!).replace(/^./, c => (c === 'A' ? 'B' : 'A'))}`;
    const fresh = await session({}, { cookie: tampered });
    assert.ok(fresh.cookie);
    assert.notEqual(fresh.user.key, first.user.key);
  });

  /** The Set-Cookie of a session asked for at `url`, with these settings and headers. */
  async function setCookieOf(backend: Partial<BackendConfig>, url: string, headers: Record<string, string> = {}) {
    const res = await setup({ backend }).backend.fetch(
      new Request(url, {
        method: 'POST',
        headers: { origin: siteOrigin, 'x-persona-chat': '1', 'content-type': 'application/json', ...headers },
        body: '{}',
      }),
    );
    assert.equal(res.status, 200);
    return res.headers.get('set-cookie')!;
  }
  const overHttp = `http://chat.example.com${base}/session`;
  const overHttps = `https://chat.example.com${base}/session`;

  it('marks the cookie Secure over plain HTTP only where a trusted proxy says the request came over HTTPS', async () => {
    const proto = { 'x-forwarded-proto': 'https, http' };
    assert.match(await setCookieOf({ trustProxy: 1 }, overHttp, proto), /; Secure;/);
    assert.doesNotMatch(await setCookieOf({}, overHttp, proto), /Secure/, 'an untrusted header counts for nothing');
    assert.match(await setCookieOf({ cookie: { secure: true } }, overHttp), /; Secure;/);
    assert.doesNotMatch(await setCookieOf({ cookie: { secure: false } }, overHttps), /Secure/);
  });

  it('takes the name and lifetime the site gives the cookie', async () => {
    const cookie = await setCookieOf({ cookie: { name: 'chat_visitor', maxAgeSeconds: 3600 } }, overHttps);
    assert.match(cookie, /^chat_visitor=[^;]+; Max-Age=3600; Path=\/persona-chat;/);
  });

  it("names a visitor the site's identify hook does not know by the cookie, as one without the hook", async () => {
    const { session } = setup({ backend: { identify: () => undefined } });
    const first = await session();
    assert.ok(first.cookie, 'an anonymous cookie');
    const again = await session({}, { cookie: first.cookie });
    assert.equal(again.user.key, first.user.key);
  });

  it('refuses a user id from the identify hook that it cannot use, and gives no token or cookie', async () => {
    for (const id of ['', 'x'.repeat(257), 42]) {
      const { request } = setup({ backend: { identify: () => id as string } });
      const { res, body } = await expectError(
        request('POST', '/session', { body: {}, headers: { origin: siteOrigin, 'x-persona-chat': '1' } }),
        500,
        'internal_error',
      );
      assert.equal(res.headers.get('set-cookie'), null, String(id));
      assert.equal(body.error.message, 'The identify hook returned an unusable user id.');
    }
  });
});
