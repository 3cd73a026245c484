import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RedisStore } from '../../src/server/redis-store.js';
import { StoreUnavailableError } from '../../src/server/store.js';
import { startRedis } from '../support/redis.js';
import type { RedisServer } from '../support/redis.js';
import { record, storeSuite, window } from './store-suite.js';

let redis: RedisServer;
let stores = 0;
const statuses: string[] = [];

/** A store of its own on the shared server: each has its own prefix, so no test sees another's keys. */
async function connected(onStatus = (status: string) => void statuses.push(status), prefix = `t${++stores}:`) {
  const store = new RedisStore({ url: redis.url, prefix, onStatus });
  await until(() =>
    store.ping().then(
      () => true,
      () => false,
    ),
  );
  return store;
}

async function until(check: () => Promise<boolean>, what = 'the store to answer') {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 20));
  }
}

before(async () => {
  redis = await startRedis();
});
after(() => redis.stop());

storeSuite(
  'RedisStore',
  async () => ({
    store: await connected(),
    advance: ms => new Promise(resolve => setTimeout(resolve, ms)),
  }),
  60,
);

describe('RedisStore alone', () => {
  it('is unavailable while Redis is down, and serves again by itself when it is back', async () => {
    const seen: string[] = [];
    const store = await connected(status => void seen.push(status), 'outage:');
    // Another instance on the same Redis.
    const other = await connected(undefined, 'outage:');
    after(() => Promise.all([store.close(), other.close()]));
    await store.createRun('r', record(), window);
    await store.appendEvent('r', 'delta', '{"text":"kept?"}', 'a', 60_000);
    const watching = store.watchStop('r2', new AbortController().signal);
    await redis.kill();
    await assert.rejects(store.getRun('r'), StoreUnavailableError);
    await assert.rejects(store.hit('k', 1000), StoreUnavailableError);
    await assert.rejects(store.ping(), StoreUnavailableError);
    await assert.rejects(store.readEvents('r', null, { waitMs: 1000 }), StoreUnavailableError);
    await until(async () => seen.includes('unavailable'), 'the outage to be reported');
    await redis.start();
    await until(() =>
      store.ping().then(
        () => true,
        () => false,
      ),
    );
    await until(async () => seen.includes('ready'), 'the recovery to be reported');
    assert.equal(await store.getRun('r'), undefined, 'a Redis without persistence starts empty');
    assert.equal((await store.hit('k', 1000)).count, 1);
    await until(
      () =>
        other.ping().then(
          () => true,
          () => false,
        ),
      'the other store to reconnect',
    );
    await other.requestStop('r2', 60_000);
    await watching;
    assert.deepEqual(seen, ['unavailable', 'ready']);
  });
});
