import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BackendConfig } from '../../src/server/config.js';
import { afterNoKeyLeaks, base, setup, siteOrigin } from '../support/backend.js';

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
});
