import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RedisStore } from '../../../src/server/redis-store.js';
import { MemoryStore } from '../../../src/server/store.js';
import { startRedis } from '../../support/redis.js';
import { afterNoKeyLeaks, expectError, setup } from '../../support/backend.js';

/** The response, or 'late' when it has not come within `ms` (a hung response is then left behind). */
const within = (response: Promise<Response>, ms: number) => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>(resolve => (timer = setTimeout(resolve, ms, 'late')));
  return Promise.race([response, late]).finally(() => clearTimeout(timer));
};

describe('health checks', () => {
  afterNoKeyLeaks();

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
