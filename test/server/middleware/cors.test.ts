import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { afterNoKeyLeaks, setup, siteOrigin } from '../../support/backend.js';

describe('CORS', () => {
  afterNoKeyLeaks();

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
      assert.equal(res.headers.get('access-control-allow-credentials'), null, 'bearer routes never allow credentials');
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
    assert.equal(list.headers.get('access-control-expose-headers'), 'Retry-After,X-Request-Id', 'readable by the page');
    const denied = await api('GET', '/conversations', 'bad', { headers: { origin: siteOrigin } });
    assert.equal(denied.status, 401);
    assert.equal(denied.headers.get('access-control-allow-origin'), siteOrigin, 'errors are readable by the page too');
    const foreign = await api('GET', '/conversations', token, { headers: { origin: 'https://evil.example' } });
    assert.equal(foreign.headers.get('access-control-allow-origin'), null);
  });
});
