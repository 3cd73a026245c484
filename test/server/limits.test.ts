import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Hono } from 'hono';
import { resolveConfig } from '../../src/server/config.js';
import type { BackendConfig } from '../../src/server/config.js';
import type { Env } from '../../src/server/env.js';
import { HttpError } from '../../src/server/errors.js';
import { Limiter } from '../../src/server/limits.js';
import { MemoryStore, StoreUnavailableError } from '../../src/server/store.js';
import { afterNoKeyLeaks, setup, siteOrigin, tokenSecret } from '../support/backend.js';
import { apiKey, juniper } from '../support/service.js';

describe('limits', () => {
  afterNoKeyLeaks();

  it('warns once when a proxy forwards addresses that no setting trusts', async t => {
    const warn = t.mock.method(console, 'warn', () => {});
    const { session } = setup();
    await session({}, { 'x-forwarded-for': '203.0.113.7' });
    await session({}, { 'x-forwarded-for': '203.0.113.8' });
    assert.equal(warn.mock.callCount(), 1);
    assert.match(String(warn.mock.calls[0]!.arguments[0]), /X-Forwarded-For.*--trust-proxy/s);
  });

  describe('the limiter', () => {
    const settings = (config: Partial<BackendConfig> = {}) =>
      resolveConfig({
        serviceUrl: 'http://emulator.test',
        apiKey,
        personaId: juniper.personaId,
        tokenSecret,
        allowedOrigins: [siteOrigin],
        ...config,
      });
    const refused = (code: string) => (error: unknown) =>
      error instanceof HttpError && error.status === 429 && error.code === code;

    it('counts the requests of a minute on a key, and refuses past the limit with the seconds left', async () => {
      const limiter = new Limiter(new MemoryStore(), settings(), undefined);
      await limiter.perMinute('messages:user:a', 2);
      await limiter.perMinute('messages:user:a', 2);
      const error = await limiter.perMinute('messages:user:a', 2).catch((e: unknown) => e);
      assert.ok(refused('rate_limited')(error), String(error));
      const { retryAfter } = error as HttpError;
      assert.ok(retryAfter! > 0 && retryAfter! <= 60, `${retryAfter} seconds`);
      await limiter.perMinute('messages:user:b', 2);
      const mine = (seconds: number) => new HttpError(429, 'too_many_sessions', 'Too many.', { retryAfter: seconds });
      await assert.rejects(limiter.perMinute('messages:user:a', 2, mine), refused('too_many_sessions'));
    });

    it('goes on counting on its own while the shared store is away', async () => {
      class Away extends MemoryStore {
        override async hit(): Promise<never> {
          throw new StoreUnavailableError('the store is away');
        }
      }
      const limiter = new Limiter(new Away(), settings(), undefined);
      await limiter.perMinute('k', 1);
      await assert.rejects(limiter.perMinute('k', 1), refused('rate_limited'));
      class Broken extends MemoryStore {
        override async hit(): Promise<never> {
          throw new Error('a bug');
        }
      }
      await assert.rejects(new Limiter(new Broken(), settings(), undefined).perMinute('k', 1), /a bug/);
    });

    it("takes one of a user's reply slots, refuses one past the limit, and frees it on release", async () => {
      const limiter = new Limiter(new MemoryStore(), settings({ limits: { concurrentStreamsPerUser: 1 } }), undefined);
      const slot = await limiter.replySlot('anon_a');
      const error = await limiter.replySlot('anon_a').catch((e: unknown) => e);
      assert.ok(refused('rate_limited')(error), String(error));
      assert.equal((error as HttpError).retryAfter, 1);
      await (await limiter.replySlot('anon_b')).release();
      await slot.release();
      await slot.release();
      await (await limiter.replySlot('anon_a')).release();
    });

    it('takes a slot back on renewal when the store lost it, so that its reply still counts', async () => {
      class Recording extends MemoryStore {
        readonly tokens: string[] = [];
        override acquireSlot(key: string, token: string, limit: number, ttlMs: number) {
          this.tokens.push(token);
          return super.acquireSlot(key, token, limit, ttlMs);
        }
      }
      const store = new Recording();
      const limiter = new Limiter(store, settings({ limits: { concurrentStreamsPerUser: 1 } }), undefined);
      const slot = await limiter.replySlot('anon_a');
      await store.releaseSlot('streams:anon_a', store.tokens[0]!);
      await slot.renew();
      await assert.rejects(limiter.replySlot('anon_a'), refused('rate_limited'));
      await slot.release();
    });

    it("admits a message apart from its run's creation in the windows and the slot of its plan", async () => {
      class Recording extends MemoryStore {
        readonly hits: string[] = [];
        override hit(key: string, windowMs: number) {
          this.hits.push(key);
          return super.hit(key, windowMs);
        }
      }
      const store = new Recording();
      const limits = { messagesPerUserPerMinute: 2, messagesPerIpPerMinute: 3, concurrentStreamsPerUser: 1 };
      const limiter = new Limiter(store, settings({ limits }), undefined);
      let plan: ReturnType<Limiter['messageAdmission']> | undefined;
      const admit = async (sub: string) => {
        let admitted: Promise<{ release(): Promise<void> }> | undefined;
        const app = new Hono<Env>().get('/', c => {
          plan = limiter.messageAdmission(sub, c);
          admitted = limiter.message(sub, c);
          admitted.catch(() => {});
          return c.text('ok');
        });
        await app.fetch(new Request('http://backend.test/'), {
          incoming: { socket: { remoteAddress: '203.0.113.7' } },
        });
        return admitted!;
      };
      const first = await admit('anon_a');
      assert.deepEqual(store.hits, ['message:user:anon_a', 'message:ip:203.0.113.7']);
      assert.deepEqual(
        plan!.admission.windows.map(({ key, limit }) => [key, limit]),
        [
          ['message:user:anon_a', 2],
          ['message:ip:203.0.113.7', 3],
        ],
        "the plan's windows are the ones counted",
      );
      assert.equal(plan!.admission.slot.key, 'streams:anon_a');
      const busy = await admit('anon_a').catch((e: unknown) => e);
      assert.ok(refused('rate_limited')(busy) && (busy as HttpError).retryAfter === 1, 'its one slot is taken');
      await first.release();
      const past = await admit('anon_a').catch((e: unknown) => e);
      assert.ok(refused('rate_limited')(past) && (past as HttpError).retryAfter! > 1, "past the user's window");
      await (await limiter.replySlot('anon_a')).release();
      await assert.rejects(admit('anon_b'), refused('rate_limited'), "past the address's window");
    });

    describe("the client's address", () => {
      /** The limiter's view of one request's address, from a socket at `socket` (none on Workers). */
      async function addressOf(limiter: Limiter, headers: Record<string, string>, socket?: string) {
        let seen: string | undefined;
        const app = new Hono<Env>().get('/', c => ((seen = limiter.clientIp(c)), c.text('ok')));
        await app.fetch(
          new Request('http://backend.test/', { headers }),
          socket ? { incoming: { socket: { remoteAddress: socket } } } : undefined,
        );
        return seen;
      }

      it('is the socket’s when no proxy is trusted, whatever X-Forwarded-For says', async t => {
        t.mock.method(console, 'warn', () => {});
        const limiter = new Limiter(new MemoryStore(), settings(), undefined);
        assert.equal(await addressOf(limiter, { 'x-forwarded-for': '203.0.113.9' }, '10.0.0.1'), '10.0.0.1');
        assert.equal(await addressOf(limiter, {}), undefined, 'unknown without a socket');
      });

      it('is the one the trusted proxies recorded, never the left end a client may forge', async () => {
        const limiter = new Limiter(new MemoryStore(), settings({ trustProxy: 2 }), undefined);
        const forwarded = { 'x-forwarded-for': '198.51.100.66, 203.0.113.9, 10.0.0.2' };
        assert.equal(await addressOf(limiter, forwarded, '10.0.0.1'), '203.0.113.9');
        assert.equal(await addressOf(limiter, { 'x-forwarded-for': '10.0.0.2' }, '10.0.0.1'), '10.0.0.2');
        assert.equal(await addressOf(limiter, {}, '10.0.0.1'), '10.0.0.1', 'no header: the socket');
      });

      it("is the hook's when the site gives one", async () => {
        const limiter = new Limiter(new MemoryStore(), settings({ trustProxy: 1 }), request =>
          request.headers.get('cf-connecting-ip'),
        );
        assert.equal(await addressOf(limiter, { 'cf-connecting-ip': '192.0.2.7' }, '10.0.0.1'), '192.0.2.7');
        assert.equal(await addressOf(limiter, { 'x-forwarded-for': '192.0.2.8' }, '10.0.0.1'), undefined);
      });

      it('limits per address only when the address is known', async () => {
        const limiter = new Limiter(new MemoryStore(), settings(), undefined);
        let outcome = '';
        const app = new Hono<Env>().get('/', async c => {
          outcome = await limiter.perIp('session', 1, c).then(
            () => 'counted',
            (error: HttpError) => error.code,
          );
          return c.text(outcome);
        });
        const from = (socket?: string) =>
          app.fetch(
            new Request('http://backend.test/'),
            socket ? { incoming: { socket: { remoteAddress: socket } } } : undefined,
          );
        for (const socket of [undefined, undefined, '10.0.0.1']) {
          await from(socket);
          assert.equal(outcome, 'counted', String(socket));
        }
        await from('10.0.0.1');
        assert.equal(outcome, 'rate_limited');
      });
    });
  });
});
