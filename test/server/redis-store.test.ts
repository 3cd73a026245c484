import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { RedisStore } from '../../src/server/redis-store.js';
import { StoreUnavailableError } from '../../src/server/store.js';
import { startRedis } from '../support/redis.js';
import { until } from '../support/until.js';
import type { RedisServer } from '../support/redis.js';
import { record, storeSuite, window } from './store-suite.js';

let redis: RedisServer;
let stores = 0;
const statuses: string[] = [];

/** Whether the store answers a ping. */
const answers = (store: RedisStore) =>
  store.ping().then(
    () => true,
    () => false,
  );

/** A store of its own on the shared server: each has its own prefix, so no test sees another's keys. */
async function connected(onStatus = (status: string) => void statuses.push(status), prefix = `t${++stores}:`) {
  const store = new RedisStore({ url: redis.url, prefix, onStatus });
  await until(() => answers(store), 'the store to answer');
  return store;
}

before(async () => {
  redis = await startRedis();
});
after(() => redis.stop());

storeSuite(
  'RedisStore',
  async () => {
    const prefix = `t${++stores}:`;
    return {
      store: await connected(undefined, prefix),
      advance: ms => new Promise(resolve => setTimeout(resolve, ms)),
      twin: () => connected(undefined, prefix),
    };
  },
  60,
);

/**
 * A TCP proxy in front of Redis that can stop forwarding the connections which subscribed: a connection gone
 * half-open (a NAT or load balancer dropping it silently), which TCP notices only minutes later.
 */
async function freezingProxy(target: string) {
  const { hostname, port } = new URL(target);
  const subscribers = new Set<Socket>();
  const frozen = new Set<Socket>();
  const server = createServer(client => {
    const upstream = connect(Number(port), hostname);
    client.on('data', data => {
      if (/subscribe/i.test(data.toString())) subscribers.add(client);
      if (!frozen.has(client)) upstream.write(data);
    });
    upstream.on('data', data => frozen.has(client) || client.write(data));
    const end = () => (client.destroy(), upstream.destroy());
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
    freezeSubscribers: () => subscribers.forEach(socket => frozen.add(socket)),
    close: () => {
      server.close();
      for (const socket of subscribers) socket.destroy();
    },
  };
}

describe('RedisStore alone', () => {
  it('gives up on a subscriber that stopped answering, within the command timeout, and carries on with a new one', async () => {
    const proxy = await freezingProxy(redis.url);
    const store = new RedisStore({ url: proxy.url, prefix: 'frozen:', commandTimeoutMs: 300, onStatus: () => {} });
    const other = await connected(undefined, 'frozen:');
    after(() => Promise.all([store.close(), other.close(), proxy.close()]));
    await until(() => answers(store), 'the store to answer');
    await store.createRun('r', record(), window);
    proxy.freezeSubscribers();

    const controller = new AbortController();
    const reading = store.readEvents('r', null, { waitMs: 60_000, signal: controller.signal });
    await assert.rejects(reading, StoreUnavailableError, 'the wait fails instead of hanging');
    await until(() => answers(store), 'a new subscriber to answer');
    const watching = store.watchStop('r', new AbortController().signal);
    await other.requestStop('r', 60_000);
    await watching;
  });

  it('fails a command a stalled Redis leaves unanswered, within the command timeout, and serves once it goes on', async () => {
    const store = new RedisStore({ url: redis.url, prefix: 'stall:', commandTimeoutMs: 300, onStatus: () => {} });
    after(() => store.close());
    await until(() => answers(store), 'the store to answer');
    redis.pause();
    try {
      const bounded = <T>(work: Promise<T>) =>
        Promise.race([work, new Promise<'hung'>(resolve => setTimeout(() => resolve('hung'), 3000).unref())]);
      await assert.rejects(bounded(store.getRun('r')), StoreUnavailableError);
      await assert.rejects(bounded(store.hit('k', 1000)), StoreUnavailableError);
    } finally {
      redis.resume();
    }
    await until(() => answers(store), 'the store to answer');
    assert.equal((await store.hit('k2', 1000)).count, 1);
  });

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
    await until(() => answers(store), 'the store to answer');
    await until(async () => seen.includes('ready'), 'the recovery to be reported');
    assert.equal(await store.getRun('r'), undefined, 'a Redis without persistence starts empty');
    assert.equal((await store.hit('k', 1000)).count, 1);
    await until(() => answers(other), 'the other store to reconnect');
    await other.requestStop('r2', 60_000);
    await watching;
    assert.deepEqual(seen, ['unavailable', 'ready']);
  });
});
