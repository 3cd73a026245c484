import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { SignJWT, base64url } from 'jose';
import type { ConversationDetail, ConversationList, ConversationSummary, ErrorEnvelope } from '../../src/protocol.js';
import { createBackend } from '../../src/server/app.js';
import type { BackendConfig, LogLine } from '../../src/server/config.js';
import { RedisStore } from '../../src/server/redis-store.js';
import { MemoryStore } from '../../src/server/store.js';
import { startRedis } from '../support/redis.js';
import { ada, apiKey, juniper } from '../support/service.js';
import { base, expectError, setup, siteOrigin, tokenSecret, transcript } from '../support/backend.js';

const secret = new TextEncoder().encode(tokenSecret);

/** The response, or 'late' when it has not come within `ms` (a hung response is then left behind). */
const within = (response: Promise<Response>, ms: number) => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>(resolve => (timer = setTimeout(resolve, ms, 'late')));
  return Promise.race([response, late]).finally(() => clearTimeout(timer));
};

/** A token signed with our secret (or another), with the claims given. */
async function forge(claims: Record<string, unknown>, { alg = 'HS256', key = secret } = {}) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ pid: juniper.personaId, ...claims })
    .setProtectedHeader({ alg, typ: 'JWT' })
    .setSubject((claims.sub as string) ?? 'anon_victim')
    .setAudience((claims.aud as string) ?? 'persona-chat')
    .setIssuedAt((claims.iat as number) ?? now)
    .setExpirationTime((claims.exp as number) ?? now + 600)
    .sign(key);
}

describe('backend', () => {
  after(() => {
    const leaks = transcript.filter(text => text.includes(apiKey));
    assert.deepEqual(leaks, [], 'the API key appears in no response, header, SSE frame or log line');
    assert.ok(transcript.length > 100, 'the scan saw the whole run');
  });

  describe('session', () => {
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
        message:
          /"cookie.sameSite" \(--cookie-same-site \/ PERSONA_CHAT_COOKIE_SAME_SITE\) must be lax, strict or none/,
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

    it("uses the site's identify hook, and never lets the browser choose its user or an unserved persona", async () => {
      const { session, request } = setup({
        backend: { identify: req => (req.headers.get('cookie')?.includes('site_session=alice') ? 'user-alice' : null) },
      });
      const alice = await session({}, { cookie: 'site_session=alice' });
      assert.equal(alice.cookie, undefined, 'no anonymous cookie for a known user');
      const claims = JSON.parse(new TextDecoder().decode(base64url.decode(alice.token.split('.')[1])));
      assert.equal(claims.sub, 'user-alice');
      const chosen = await session({ personaId: ada.personaId }, { cookie: 'site_session=alice' });
      assert.equal(
        JSON.parse(new TextDecoder().decode(base64url.decode(chosen.token.split('.')[1]))).pid,
        ada.personaId,
      );
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

    it('warns once when a proxy forwards addresses that no setting trusts', async t => {
      const warn = t.mock.method(console, 'warn', () => {});
      const { session } = setup();
      await session({}, { 'x-forwarded-for': '203.0.113.7' });
      await session({}, { 'x-forwarded-for': '203.0.113.8' });
      assert.equal(warn.mock.callCount(), 1);
      assert.match(String(warn.mock.calls[0]!.arguments[0]), /X-Forwarded-For.*--trust-proxy/s);
    });
  });

  describe('configuration', () => {
    it('is read on the first request, not when the backend is made: a build imports it without secrets', async t => {
      const stderr = t.mock.method(console, 'error', () => {});
      const logs: LogLine[] = [];
      // What a route handler's module makes at build time, when the environment holds no secrets.
      const backend = createBackend({
        serviceUrl: process.env.PERSONA_CHAT_TEST_UNSET!,
        apiKey: process.env.PERSONA_CHAT_TEST_UNSET!,
        tokenSecret: process.env.PERSONA_CHAT_TEST_UNSET!,
        allowedOrigins: ['https://www.example.com'],
        personaId: juniper.personaId,
        basePath: '/persona-chat',
        log: line => logs.push(line),
      });
      assert.equal(backend.basePath, '/persona-chat');
      for (let i = 0; i < 2; i++) {
        const { body } = await expectError(
          backend.fetch(new Request('https://chat.example.com/persona-chat/healthz')),
          500,
          'internal_error',
        );
        assert.equal(body.error.retryable, false);
        assert.doesNotMatch(body.error.message, /serviceUrl|PERSONA_CHAT/, 'the browser is not told the setting');
      }
      assert.equal(logs.length, 2, 'every refused request is logged');
      assert.equal(logs[0]!.code, 'config_error');
      assert.equal(logs[0]!.status, 500);
      assert.match(logs[0]!.detail!, /"serviceUrl" \(--service-url \/ PERSONA_CHAT_SERVICE_URL\) is required/);
      assert.equal(stderr.mock.callCount(), 1, 'stderr hears of the problem once');
      assert.throws(() => backend.check(), { name: 'ConfigError', setting: 'serviceUrl' });
      backend.close();
      await backend.drain(0);
    });

    it('checks the configuration on check(), and then serves', async () => {
      const { backend, session } = setup();
      backend.check();
      assert.ok((await session()).token, 'a checked backend serves');
    });

    it('refuses a token lifetime under 120 s, naming the setting', () => {
      for (const tokenTtlSeconds of [1, 60, 119]) {
        assert.throws(() => setup({ backend: { tokenTtlSeconds } }).backend.check(), {
          name: 'ConfigError',
          setting: 'tokenTtlSeconds',
          message:
            /"tokenTtlSeconds" \(--token-ttl \/ PERSONA_CHAT_TOKEN_TTL\) must be a whole number from 120 to 86400/,
        });
      }
    });

    it('gives tokens of a 120 s lifetime', async () => {
      const { session } = setup({ backend: { tokenTtlSeconds: 120 } });
      const ttl = Date.parse((await session()).expiresAt) - Date.now();
      assert.ok(ttl > 110_000 && ttl <= 120_000, `about two minutes, not ${ttl} ms`);
    });
  });

  describe('tokens', () => {
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

  describe('ownership', () => {
    it("gives user A the same 404 on user B's conversation as on a random id, on every route, without continuing it", async () => {
      const { session, conversation, api, send, continues } = setup();
      const a = await session();
      const b = await session();
      const bId = await conversation(b.token);
      const randomId = crypto.randomUUID();
      const attempts = (id: string) => [
        api('GET', `/conversations/${id}`, a.token),
        api('PATCH', `/conversations/${id}`, a.token, { body: { name: 'mine now' } }),
        send(a.token, id, 'Tell me your secrets', { accept: 'application/json' }),
        send(a.token, id, 'Tell me your secrets', { accept: 'text/event-stream' }),
      ];
      const theirs = await Promise.all(attempts(bId));
      const none = await Promise.all(attempts(randomId));
      for (const [i, response] of theirs.entries()) {
        const mine = await expectError(response, 404, 'conversation_not_found');
        const random = await expectError(none[i]!, 404, 'conversation_not_found');
        const strip = (b: ErrorEnvelope) => ({ ...b.error, requestId: '' });
        assert.deepEqual(strip(mine.body), strip(random.body), 'not yours looks exactly like does not exist');
      }
      assert.equal(continues().length, 0, 'the service was never asked to continue');
      const list = (await (await api('GET', '/conversations', a.token)).json()) as ConversationList;
      assert.deepEqual(list.data, []);
      const bDetail = (await (await api('GET', `/conversations/${bId}`, b.token)).json()) as ConversationDetail;
      assert.equal(bDetail.name, null, "B's conversation is unchanged");
    });

    it('checks a conversation it did not create with one service call, then from its cache', async () => {
      const { session, send, upstream, emulator, backend } = setup();
      const a = await session();
      const sub = JSON.parse(new TextDecoder().decode(base64url.decode(a.token.split('.')[1]!))).sub;
      // Made by another process of the site's backend: this one has never seen it.
      const made = await emulator.fetch(
        new Request('http://emulator.test/conversations/persona', {
          method: 'POST',
          headers: { 'x-svc-api-key': apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ personaId: juniper.personaId, externalUserId: sub }),
        }),
      );
      const { conversationId } = await made.json();
      for (let i = 0; i < 3; i++)
        assert.equal((await send(a.token, conversationId, `message ${i}`, { accept: 'application/json' })).status, 200);
      await backend.drain(0);
      const tally: Record<string, number> = {};
      for (const u of upstream) {
        const call = `${u.method} ${u.path.replace(conversationId, ':id')}`;
        tally[call] = (tally[call] ?? 0) + 1;
      }
      assert.deepEqual(
        tally,
        {
          // One to check the owner, one to read it afresh before naming it from its first message.
          'GET /conversations/:id': 2,
          'PATCH /conversations/:id/set-conversation-name': 1,
          'PATCH /conversations/:id/chat-sse': 3,
        },
        'the owner was checked once, then taken from the cache',
      );
    });

    it('asks the service once about an id that is not the caller’s, however often it is read', async () => {
      const { session, api, upstream, emulator } = setup();
      const { token } = await session();
      // Another visitor's, started by another process of the site's backend: this one has never seen it.
      const made = await emulator.fetch(
        new Request('http://emulator.test/conversations/persona', {
          method: 'POST',
          headers: { 'x-svc-api-key': apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ personaId: juniper.personaId, externalUserId: 'anon_someone_else' }),
        }),
      );
      const theirs = ((await made.json()) as { conversationId: string }).conversationId;
      for (const id of [theirs, crypto.randomUUID()]) {
        for (let i = 0; i < 5; i++) {
          await expectError(api('GET', `/conversations/${id}`, token), 404, 'conversation_not_found');
          await expectError(
            api('PATCH', `/conversations/${id}`, token, { body: { name: 'x' } }),
            404,
            'conversation_not_found',
          );
        }
        assert.deepEqual(
          upstream.filter(u => u.path.includes(id)).map(u => `${u.method} ${u.path.replace(id, ':id')}`),
          ['GET /conversations/:id'],
          'one read of the service, then the cache',
        );
      }
    });

    it('ignores externalUserId or persona in bodies: they are refused, and change nothing', async () => {
      const { session, api, emulator } = setup();
      const a = await session();
      await expectError(
        api('POST', '/conversations', a.token, { body: { externalUserId: 'victim' } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('POST', '/conversations', a.token, { body: { personaId: ada.personaId } }),
        400,
        'invalid_request',
      );
      const id = (await (await api('POST', '/conversations', a.token, { body: {} })).json()).id as string;
      await expectError(
        api('PATCH', `/conversations/${id}`, a.token, { body: { externalUserId: 'victim' } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, a.token, { body: { personaId: ada.personaId } }),
        400,
        'invalid_request',
      );
      const stored = emulator.store.get(id)!;
      assert.match(stored.externalUserId!, /^anon_/);
      assert.equal(stored.personaId, juniper.personaId);
    });
  });

  describe('conversations', () => {
    it('creates, lists, reads and updates a conversation, showing only what the browser needs', async () => {
      const { session, api, send, emulator, backend } = setup();
      const { token } = await session();
      const created = await api('POST', '/conversations', token, {
        body: { metadata: { page: '/tents', lang: 'en' } },
      });
      assert.equal(created.status, 201);
      const summary = (await created.json()) as ConversationSummary;
      assert.deepEqual(summary, {
        id: summary.id,
        name: null,
        status: 'open',
        active: true,
        personaId: juniper.personaId,
        messageCount: 0,
        metadata: { page: '/tents', lang: 'en' },
        createdAt: null,
        updatedAt: null,
      });
      assert.deepEqual(emulator.store.get(summary.id)!.metadata, { client: { page: '/tents', lang: 'en' } });
      await (await send(token, summary.id, 'Do you rent tents?', { accept: 'application/json' })).json();
      const detail = (await (await api('GET', `/conversations/${summary.id}`, token)).json()) as ConversationDetail;
      assert.deepEqual(
        detail.messages.map(m => m.role),
        ['user', 'assistant'],
      );
      assert.equal(detail.messages[0]!.content, 'Do you rent tents?');
      assert.ok(!('externalUserId' in detail) && !('configuration' in detail));
      const patched = await api('PATCH', `/conversations/${summary.id}`, token, {
        body: { name: 'Tent rental', status: 'resolved', active: false, metadata: { page: '/rentals' } },
      });
      assert.equal(patched.status, 200);
      assert.deepEqual(await patched.json(), {
        ...summary,
        name: 'Tent rental',
        status: 'resolved',
        active: false,
        messageCount: 2,
        metadata: { page: '/rentals' },
        createdAt: emulator.store.get(summary.id)!.chatMessages![0]!.timestamp,
        updatedAt: emulator.store.get(summary.id)!.chatMessages![1]!.timestamp,
      });
      emulator.store.get(summary.id)!.metadata!.site = { plan: 'gold' };
      await api('PATCH', `/conversations/${summary.id}`, token, { body: { metadata: { page: '/faq' } } });
      // The reply's citations are written a moment after it ends, or at once when the backend drains.
      await backend.drain(0);
      const { site, client, ...ours } = emulator.store.get(summary.id)!.metadata!;
      assert.deepEqual({ site, client }, { site: { plan: 'gold' }, client: { page: '/faq' } }, 'other namespaces stay');
      assert.deepEqual(Object.keys(ours), ['personaChat'], 'beside the citations the backend keeps');
    });

    it('pages the visitor’s own conversations with a cursor', async () => {
      const { session, api, conversation } = setup({ backend: { limits: { conversationsPerUserPerMinute: 20 } } });
      const { token } = await session();
      const other = await session();
      for (let i = 0; i < 3; i++) await conversation(other.token);
      const mine = new Set<string>();
      for (let i = 0; i < 12; i++) mine.add(await conversation(token));
      const first = (await (await api('GET', '/conversations', token)).json()) as ConversationList;
      assert.equal(first.data.length, 10);
      assert.ok(first.next);
      const second = (await (
        await api('GET', `/conversations?cursor=${encodeURIComponent(first.next!)}`, token)
      ).json()) as ConversationList;
      assert.equal(second.data.length, 2);
      assert.equal(second.next, null);
      assert.deepEqual(new Set([...first.data, ...second.data].map(c => c.id)), mine);
      await expectError(api('GET', '/conversations?cursor=%3Cscript%3E', token), 400, 'invalid_request');
    });

    it('answers a cursor the service refuses, forged or from another list, as the caller’s bad input', async () => {
      const { session, api, conversation, upstream, logs } = setup({
        backend: { limits: { conversationsPerUserPerMinute: 20 } },
      });
      const { token } = await session();
      const other = await session();
      for (let i = 0; i < 11; i++) await conversation(other.token);
      const theirs = ((await (await api('GET', '/conversations', other.token)).json()) as ConversationList).next!;
      for (const cursor of [theirs, 'bm90LWEtY3Vyc29y']) {
        const asked = upstream.length;
        const { res } = await expectError(
          api('GET', `/conversations?cursor=${encodeURIComponent(cursor)}`, token),
          400,
          'invalid_request',
        );
        assert.equal(upstream.length, asked + 1, 'the service judged the cursor');
        const line = logs.find(l => l.requestId === res.headers.get('x-request-id'))!;
        assert.deepEqual({ level: line.level, code: line.code }, { level: 'warn', code: 'invalid_request' });
      }
    });

    it('limits the conversations a user starts to 10 a minute, before the service hears of the 11th', async () => {
      const { session, api, conversation, upstream } = setup();
      const { token } = await session();
      for (let i = 0; i < 10; i++) await conversation(token);
      const { res } = await expectError(api('POST', '/conversations', token, { body: {} }), 429, 'rate_limited');
      const wait = Number(res.headers.get('retry-after'));
      assert.ok(wait >= 1 && wait <= 60, `Retry-After ${wait}`);
      const creates = () => upstream.filter(u => u.method === 'POST' && u.path === '/conversations/persona').length;
      assert.equal(creates(), 10, 'the service saw 10 creates');
      const other = await session();
      await conversation(other.token);
      assert.equal(creates(), 11, 'another user is not limited');
    });

    it('limits the reads of conversations a user makes to 120 a minute', async () => {
      const { session, api, conversation, upstream } = setup();
      const { token } = await session();
      const id = await conversation(token);
      for (let i = 0; i < 120; i++) assert.equal((await api('GET', `/conversations/${id}`, token)).status, 200);
      const reads = upstream.length;
      const { res } = await expectError(api('GET', `/conversations/${id}`, token), 429, 'rate_limited');
      assert.ok(Number(res.headers.get('retry-after')) >= 1, 'Retry-After');
      assert.equal(upstream.length, reads, 'the refused read did not reach the service');
      const other = await session();
      assert.equal((await api('GET', `/conversations/${await conversation(other.token)}`, other.token)).status, 200);
    });
  });

  describe('health', () => {
    it('says it is alive and ready, then draining: new replies go elsewhere', async () => {
      const { backend, request, session, conversation, send } = setup();
      const health = await request('GET', '/healthz');
      assert.deepEqual([health.status, await health.json()], [200, { status: 'ok' }]);
      const ready = await request('GET', '/readyz');
      assert.deepEqual([ready.status, await ready.json()], [200, { status: 'ready', store: 'ok', service: 'ok' }]);
      const { token } = await session();
      const id = await conversation(token);
      await backend.drain(0);
      const draining = await request('GET', '/readyz');
      assert.equal(draining.status, 503);
      assert.equal(((await draining.json()) as { status: string }).status, 'draining');
      const { res } = await expectError(send(token, id, 'Hello'), 503, 'server_restarting');
      assert.equal(res.headers.get('retry-after'), '1');
    });

    it('is not ready while the service cannot be reached', async () => {
      const { request } = setup({ backend: { fetch: () => Promise.reject(new TypeError('fetch failed')) } });
      const ready = await request('GET', '/readyz');
      assert.deepEqual(
        [ready.status, await ready.json()],
        [503, { status: 'unavailable', store: 'ok', service: 'unavailable' }],
      );
    });

    it('is not ready, and says so in time, while the store does not answer', async () => {
      class StalledStore extends MemoryStore {
        override ping() {
          return new Promise<void>(() => {});
        }
      }
      const { request } = setup({ backend: { store: new StalledStore() } });
      const ready = await within(request('GET', '/readyz'), 2000);
      assert.ok(ready instanceof Response, '/readyz answered within 2 s');
      assert.deepEqual(
        [ready.status, await ready.json()],
        [503, { status: 'unavailable', store: 'unavailable', service: 'ok' }],
      );
    });

    it('is not ready, and says so in time, while Redis is stalled; ready again once it goes on', async () => {
      const redis = await startRedis();
      const store = new RedisStore({ url: redis.url, onStatus: () => {} });
      try {
        const { request } = setup({ backend: { store } });
        const deadline = Date.now() + 10_000;
        while ((await request('GET', '/readyz')).status !== 200) {
          assert.ok(Date.now() < deadline, 'ready once Redis answers');
          await new Promise(resolve => setTimeout(resolve, 20));
        }
        // A paused process keeps its connections open and answers nothing: a ping sent to it waits.
        redis.pause();
        const ready = await within(request('GET', '/readyz'), 2000);
        assert.ok(ready instanceof Response, '/readyz answered within 2 s');
        assert.deepEqual(
          [ready.status, await ready.json()],
          [503, { status: 'unavailable', store: 'unavailable', service: 'ok' }],
        );
        redis.resume();
        const again = await within(request('GET', '/readyz'), 2000);
        assert.ok(again instanceof Response && again.status === 200, 'ready again');
      } finally {
        redis.resume();
        await store.close();
        await redis.stop();
      }
    });
  });

  describe('CORS', () => {
    const preflight = (request: ReturnType<typeof setup>['request'], path: string, origin: string, method = 'POST') =>
      request('OPTIONS', path, {
        headers: {
          origin,
          'access-control-request-method': method,
          'access-control-request-headers': 'authorization,content-type',
        },
      });

    for (const origin of ['https://evil.example', 'null', `${siteOrigin}:8443`, siteOrigin.replace('https', 'http')]) {
      it(`does not allow a preflight from ${origin}`, async () => {
        const { request } = setup();
        for (const path of ['/session', '/conversations', `/conversations/${crypto.randomUUID()}/messages`]) {
          const res = await preflight(request, path, origin);
          assert.equal(res.headers.get('access-control-allow-origin'), null, path);
        }
      });
    }

    it('echoes exactly a listed origin, with Vary: Origin, and credentials only on the session route', async () => {
      const { request, session, api } = setup();
      const sessionPreflight = await preflight(request, '/session', siteOrigin);
      assert.equal(sessionPreflight.headers.get('access-control-allow-origin'), siteOrigin);
      assert.equal(sessionPreflight.headers.get('access-control-allow-credentials'), 'true');
      assert.match(sessionPreflight.headers.get('access-control-allow-headers')!, /X-Persona-Chat/i);
      assert.match(sessionPreflight.headers.get('vary')!, /Origin/);
      for (const path of [
        '/conversations',
        `/conversations/${crypto.randomUUID()}`,
        `/conversations/${crypto.randomUUID()}/messages`,
      ]) {
        const res = await preflight(request, path, siteOrigin, 'PATCH');
        assert.equal(res.headers.get('access-control-allow-origin'), siteOrigin);
        assert.equal(
          res.headers.get('access-control-allow-credentials'),
          null,
          'bearer routes never allow credentials',
        );
        assert.match(res.headers.get('access-control-allow-headers')!, /Idempotency-Key/i);
        assert.match(res.headers.get('access-control-allow-headers')!, /X-Persona-Chat-Resend/i);
        assert.equal(res.headers.get('access-control-allow-methods'), 'GET,POST,PATCH,DELETE');
        assert.equal(res.headers.get('access-control-max-age'), '600');
        assert.equal(res.status, 204);
        assert.match(res.headers.get('vary')!, /Origin/);
      }
      const { token } = await session();
      const list = await api('GET', '/conversations', token, { headers: { origin: siteOrigin } });
      assert.equal(list.headers.get('access-control-allow-origin'), siteOrigin);
      assert.equal(list.headers.get('access-control-allow-credentials'), null);
      assert.deepEqual(list.headers.get('vary')!.split(/,\s*/), ['Origin'], 'said once');
      assert.equal(
        list.headers.get('access-control-expose-headers'),
        'Retry-After,X-Request-Id',
        'readable by the page',
      );
      const denied = await api('GET', '/conversations', 'bad', { headers: { origin: siteOrigin } });
      assert.equal(denied.status, 401);
      assert.equal(
        denied.headers.get('access-control-allow-origin'),
        siteOrigin,
        'errors are readable by the page too',
      );
      const foreign = await api('GET', '/conversations', token, { headers: { origin: 'https://evil.example' } });
      assert.equal(foreign.headers.get('access-control-allow-origin'), null);
    });
  });

  describe('validation', () => {
    it('refuses bad input with a 4xx envelope and never calls the service', async () => {
      const { session, conversation, api, request, upstream } = setup({
        backend: { limits: { bodyMaxBytes: 1024, messageMaxLength: 50 } },
      });
      const { token } = await session();
      const id = await conversation(token);
      const before = upstream.length;
      const send = (body: unknown, headers: Record<string, string> = {}) =>
        api('POST', `/conversations/${id}/messages`, token, {
          body,
          headers: { 'idempotency-key': crypto.randomUUID(), ...headers },
        });
      await expectError(send({ message: 'x'.repeat(51) }), 400, 'invalid_request');
      await expectError(send({ message: '   ' }), 400, 'invalid_request');
      await expectError(send({ message: 42 }), 400, 'invalid_request');
      await expectError(send({ message: 'hi', externalUserId: 'victim' }), 400, 'invalid_request');
      await expectError(send({ text: 'hi' }), 400, 'invalid_request');
      await expectError(send('{"message":', { 'content-type': 'application/json' }), 400, 'invalid_request');
      await expectError(
        send('message=hi', { 'content-type': 'application/x-www-form-urlencoded' }),
        415,
        'unsupported_media_type',
      );
      await expectError(
        api('POST', `/conversations/${id}/messages`, token, { body: { message: 'hi' } }),
        400,
        'invalid_request',
      );
      await expectError(send({ message: 'hi' }, { 'idempotency-key': 'short' }), 400, 'invalid_request');
      await expectError(send({ message: 'x'.repeat(2000) }), 413, 'payload_too_large');
      const chunked = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(JSON.stringify({ message: 'x'.repeat(3000) })));
          controller.close();
        },
      });
      await expectError(
        request('POST', `/conversations/${id}/messages`, {
          body: chunked,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'idempotency-key': crypto.randomUUID(),
          },
        }),
        413,
        'payload_too_large',
      );
      for (const bad of ['../admin', '%2F..%2Fadmin', 'x'.repeat(5000), 'ünïcode', '123']) {
        const path = `/conversations/${encodeURIComponent(bad)}`;
        await expectError(api('GET', path, token), 400, 'invalid_request');
        await expectError(api('PATCH', path, token, { body: { name: 'x' } }), 400, 'invalid_request');
        await expectError(
          api('POST', `${path}/messages`, token, {
            body: { message: 'hi' },
            headers: { 'idempotency-key': crypto.randomUUID() },
          }),
          400,
          'invalid_request',
        );
      }
      await expectError(api('PATCH', `/conversations/${id}`, token, { body: {} }), 400, 'invalid_request');
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { name: 'x'.repeat(101) } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { status: 'closed now!' } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { active: 'no' } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { metadata: { nested: { a: 1 } } } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { metadata: { 'bad key!': 'v' } } }),
        400,
        'invalid_request',
      );
      await expectError(
        api('PATCH', `/conversations/${id}`, token, { body: { isDeleted: true } }),
        400,
        'invalid_request',
      );
      assert.deepEqual(upstream.slice(before), [], 'no call reached the service');
      await expectError(request('GET', '/elsewhere'), 404, 'not_found');
    });
  });
});
