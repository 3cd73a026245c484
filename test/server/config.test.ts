import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createBackend } from '../../src/server/app.js';
import type { LogLine } from '../../src/server/config.js';
import { juniper } from '../support/service.js';
import { afterNoKeyLeaks, expectError, setup } from '../support/backend.js';

describe('the backend’s configuration', () => {
  afterNoKeyLeaks();

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
        message: /"tokenTtlSeconds" \(--token-ttl \/ PERSONA_CHAT_TOKEN_TTL\) must be a whole number from 120 to 86400/,
      });
    }
  });

  it('gives tokens of a 120 s lifetime', async () => {
    const { session } = setup({ backend: { tokenTtlSeconds: 120 } });
    const ttl = Date.parse((await session()).expiresAt) - Date.now();
    assert.ok(ttl > 110_000 && ttl <= 120_000, `about two minutes, not ${ttl} ms`);
  });
});
