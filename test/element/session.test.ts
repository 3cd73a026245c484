// The session token against the real backend (mounted at /persona-chat by the test server): shared while it is
// good, replaced when it is stale or about to expire, asked for one request at a time; and the lock that sees to
// the last, with the Web Locks API and without it.
import { expect } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { PersonaChatError } from '../../src/element/errors.js';
import { session, withLock } from '../../src/element/session.js';
import type { FetchLike } from '../../src/element/session.js';
import { ada, juniper } from './harness.js';

/** The third persona the test backend serves, whose documents are hostile. */
const mallory = '0b9c7c0e-5f7a-4c55-8a0e-6d1f3b2a9c41';

/**
 * The browser's fetch, counting the session requests that go through it and noting when each starts and ends.
 * `answer` may change an answer on its way back.
 */
function counted(answer: (response: Response) => Response | Promise<Response> = response => response) {
  const log: string[] = [];
  const fetch: FetchLike = async (input, init) => {
    const { personaId } = JSON.parse(String(init?.body)) as { personaId?: string };
    log.push(`start ${personaId}`);
    const response = await window.fetch(input, init);
    log.push(`end ${personaId}`);
    return answer(response);
  };
  return { fetch, log, requests: () => log.filter(entry => entry.startsWith('start')).length };
}

/** Whether the backend takes a token. */
const accepted = async (token: string) =>
  (await fetch('/persona-chat/conversations', { headers: { authorization: `Bearer ${token}` } })).ok;

/** A promise settled from outside. */
function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>(res => (resolve = res));
  return { promise, resolve };
}

// Each test asks for an endpoint and persona of its own, so that none gets a session another one left.
describe('session', () => {
  it('gets a token for the persona from the backend, and shares it while it has more than a minute left', async () => {
    const { fetch, requests } = counted();
    const [a, b] = await Promise.all([
      session(fetch, '/persona-chat', juniper),
      session(fetch, '/persona-chat', juniper),
    ]);
    expect(requests(), 'one request for both').to.equal(1);
    expect(a).to.equal(b);
    expect(a.userKey).to.be.a('string').and.not.equal('');
    expect(a.expiresAt - Date.now()).to.be.greaterThan(60_000);
    expect(await accepted(a.token)).to.equal(true);
    expect(await session(fetch, '/persona-chat', juniper)).to.equal(a);
    expect(requests(), 'the shared one, later too').to.equal(1);
  });

  it('gets a new token in place of one the backend refused, unless another element already did', async () => {
    const { fetch, requests } = counted();
    const first = await session(fetch, '/persona-chat', ada);
    const renewed = await session(fetch, '/persona-chat', ada, first.token);
    expect(requests()).to.equal(2);
    expect(renewed.token).not.to.equal(first.token);
    expect(renewed.userKey, 'the same visitor').to.equal(first.userKey);
    expect(await accepted(renewed.token)).to.equal(true);
    // Another element that was refused the same token gets the new one.
    expect(await session(fetch, '/persona-chat', ada, first.token)).to.equal(renewed);
    expect(requests()).to.equal(2);
  });

  it('gets a new token once the shared one has less than a minute left', async () => {
    // The first answer is made to expire in half a minute, as a token does ten minutes after it was given.
    let answers = 0;
    const { fetch, requests } = counted(async response => {
      if (answers++) return response;
      const body = (await response.json()) as { expiresAt: string };
      body.expiresAt = new Date(Date.now() + 30_000).toISOString();
      return Response.json(body);
    });
    const expiring = await session(fetch, '/persona-chat', mallory);
    const next = await session(fetch, '/persona-chat', mallory);
    expect(requests()).to.equal(2);
    expect(next.token).not.to.equal(expiring.token);
    expect(next.expiresAt - Date.now()).to.be.greaterThan(60_000);
    expect(await session(fetch, '/persona-chat', mallory)).to.equal(next);
  });

  it('asks for the sessions of two personas one at a time, so that a first visit is one visitor', async () => {
    await fetch('/test-support/forget-visitor', { method: 'POST' });
    const { fetch: counting, log } = counted();
    const endpoint = `${location.origin}/persona-chat`;
    const [a, b] = await Promise.all([session(counting, endpoint, juniper), session(counting, endpoint, ada)]);
    expect(log.length).to.equal(4);
    expect(log[1], 'the first request answered before the second went').to.equal(log[0]!.replace('start', 'end'));
    expect(a.userKey, 'the second went with the cookie the first set').to.equal(b.userKey);
  });

  it('rejects with the error the backend said, and asks again next time', async () => {
    const { fetch, requests } = counted();
    const unknown = crypto.randomUUID();
    for (let attempt = 1; attempt <= 2; attempt++) {
      const error = (await session(fetch, '/persona-chat', unknown).catch((e: unknown) => e)) as PersonaChatError;
      expect(error).to.be.instanceOf(PersonaChatError);
      expect([error.code, error.retryable, error.status]).to.deep.equal(['invalid_request', false, 400]);
      expect(requests()).to.equal(attempt);
    }
  });

  it('rejects with network_error when the backend cannot be reached, and asks again next time', async () => {
    const down: FetchLike = () => Promise.reject(new TypeError('Failed to fetch'));
    const error = (await session(down, '/persona-chat', '').catch((e: unknown) => e)) as PersonaChatError;
    expect(error).to.be.instanceOf(PersonaChatError);
    expect([error.code, error.retryable]).to.deep.equal(['network_error', true]);
    const { fetch, requests } = counted();
    const got = await session(fetch, '/persona-chat', '');
    expect(requests()).to.equal(1);
    expect(await accepted(got.token), 'a token for the backend’s first persona').to.equal(true);
  });
});

for (const [api, hidden] of [
  ['with the Web Locks API', false],
  ['without the Web Locks API', true],
] as const) {
  describe(`withLock, ${api}`, () => {
    before(function () {
      if (!hidden && !navigator.locks) this.skip();
      // Hidden, the lock falls back to a queue within the page.
      if (hidden) Object.defineProperty(navigator, 'locks', { value: undefined, configurable: true });
    });
    after(() => {
      if (hidden) delete (navigator as { locks?: unknown }).locks;
    });

    it('runs work under one name one at a time, in order, and work under another name alongside', async () => {
      expect(Boolean(navigator.locks), 'the API the lock uses').to.equal(!hidden);
      const name = `test ${crypto.randomUUID()}`;
      const log: string[] = [];
      const held = deferred();
      const first = withLock(name, async () => {
        log.push('first starts');
        await held.promise;
        log.push('first ends');
        return 'first';
      });
      const second = withLock(name, async () => {
        log.push('second starts');
        return 'second';
      });
      expect(await withLock(`${name} other`, async () => 'other'), 'another name does not wait').to.equal('other');
      await waitUntil(() => log.includes('first starts'), 'the first work to start');
      expect(log).to.deep.equal(['first starts'], 'the second waits while the first holds the lock');
      held.resolve();
      expect(await Promise.all([first, second])).to.deep.equal(['first', 'second']);
      expect(log).to.deep.equal(['first starts', 'first ends', 'second starts']);
    });

    it('lets the next work run after a failure, which goes to its caller', async () => {
      const name = `test ${crypto.randomUUID()}`;
      const failing = withLock(name, () => Promise.reject(new Error('failed')));
      const next = withLock(name, async () => 'next');
      expect(await failing.catch((error: Error) => error.message)).to.equal('failed');
      expect(await next).to.equal('next');
    });
  });
}
