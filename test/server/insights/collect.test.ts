import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InsightsError, checkPage, collectConversations } from '../../../src/server/insights/collect.js';
import type { Progress } from '../../../src/server/insights/collect.js';
import { ServiceError } from '../../../src/service/errors.js';
import type { Conversation, ListResponse } from '../../../src/service/types.js';
import { ada, inProcess, juniper } from '../../support/service.js';

const seed = { conversations: 45, end: '2026-03-01' };

/**
 * The emulator behind a client whose transport can rewrite the emulator's answers, as a service that answers
 * otherwise would, and that counts the requests in flight.
 */
function service(rewrite?: (path: string, body: ListResponse & Record<string, unknown>) => unknown) {
  let inFlight = 0;
  const stats = { most: 0 };
  const setup = inProcess({ seed });
  const { emulator } = setup;
  const { client, received } = inProcess(
    {},
    {
      fetch: async (input, init) => {
        inFlight++;
        stats.most = Math.max(stats.most, inFlight);
        try {
          const request = new Request(input, init);
          received.push({ method: request.method, path: new URL(request.url).pathname + new URL(request.url).search });
          const response = await emulator.fetch(request);
          if (!rewrite || !response.ok) return response;
          const path = new URL(request.url).pathname + new URL(request.url).search;
          return Response.json(rewrite(path, (await response.json()) as ListResponse & Record<string, unknown>));
        } finally {
          inFlight--;
        }
      },
    },
  );
  return { emulator, client, received, stats };
}

describe('collectConversations', () => {
  it("pages through every continuationToken of the organization's list, telling its progress", async () => {
    const { client, received, emulator } = service();
    const progress: Progress[] = [];
    const conversations = await collectConversations(client, { onProgress: p => progress.push(p) });
    const live = [...emulator.store.values()].filter(c => !c.isDeleted);
    assert.deepEqual(
      conversations.map(c => c.conversationId),
      live.map(c => c.conversationId),
    );
    const pages = Math.ceil(live.length / 10);
    assert.equal(received.length, pages);
    assert.ok(received.every(r => r.method === 'GET' && r.path.startsWith('/conversations')));
    assert.ok(received.slice(1).every(r => r.path.includes('continuationToken=')));
    assert.deepEqual(progress.at(-1), { pages, conversations: live.length, details: { done: 0, total: 0 } });
  });

  it("reads each persona's own list, at most `concurrency` requests at once", async () => {
    for (const concurrency of [1, 2]) {
      const { client, received, stats } = service();
      const conversations = await collectConversations(client, {
        personaIds: [ada.personaId, juniper.personaId, ada.personaId],
        concurrency,
      });
      assert.equal(conversations.length, 45);
      assert.ok(received.every(r => r.path.startsWith('/conversations/persona/')));
      assert.ok(stats.most <= concurrency, `${stats.most} at once`);
    }
  });

  it('reads one by one the conversations a list gave without their messages', async () => {
    const { client, received, stats } = service((path, body) =>
      path.startsWith('/conversations/persona/') || path === '/conversations' || path.startsWith('/conversations?')
        ? { ...body, data: body.data.map(({ chatMessages: _, chatMessagesCount: __, ...rest }) => rest) }
        : body,
    );
    const progress: Progress[] = [];
    const conversations = await collectConversations(client, { concurrency: 3, onProgress: p => progress.push(p) });
    assert.ok(conversations.every(c => c.chatMessages?.length));
    assert.equal(received.filter(r => /^\/conversations\/[0-9a-f-]{36}$/.test(r.path)).length, 45);
    assert.ok(stats.most <= 3);
    assert.deepEqual(progress.at(-1)!.details, { done: 45, total: 45 });
  });

  it('stops at a malformed page, naming the list and the page', async () => {
    const second = (path: string) => path.includes('continuationToken=') && !path.includes('page3');
    const cases: [(body: ListResponse & Record<string, unknown>) => unknown, RegExp][] = [
      [
        body => ({ ...body, data: 'none' }),
        /page 2 of the organization's list is malformed: its "data" is not an array/,
      ],
      [body => ({ ...body, data: [{ name: 'no id' }] }), /item 1 of its "data" is not a conversation/],
      [body => ({ ...body, continuationToken: 42 }), /"continuationToken" is not a string/],
      [body => ({ items: body.data }), /its "data" is not an array/],
    ];
    for (const [rewrite, message] of cases) {
      let seen = 0;
      const { client } = service((path, body) => (second(path) && seen++ === 0 ? rewrite(body) : body));
      await assert.rejects(collectConversations(client), (error: Error) => {
        assert.ok(error instanceof InsightsError);
        assert.match(error.message, message);
        return true;
      });
    }
  });

  it('stops when the service gives the same continuationToken again', async () => {
    let first: string | undefined;
    const { client } = service((path, body) => {
      if (!path.includes('continuationToken=')) first = body.continuationToken ?? undefined;
      return path.includes('continuationToken=') ? { ...body, continuationToken: first } : body;
    });
    await assert.rejects(collectConversations(client), /gave the same continuationToken twice \(after page 2\)/);
  });

  it('asks again while the service refuses for a while, and passes on a refusal that stays as its ServiceError', async () => {
    const { client, emulator, received } = service();
    const live = [...emulator.store.values()].filter(c => !c.isDeleted).length;
    // Two busy answers, then the service answers: every page is read.
    emulator.faults.set({ status: { code: 503, count: 2, on: 'read' } });
    const read = await collectConversations(client, { retryDelayMs: 5 });
    assert.equal(read.length, live);
    assert.equal(received.length, Math.ceil(live / 10) + 2);

    // Busy until cleared: three retries, then its error.
    received.length = 0;
    emulator.faults.set({ status: { code: 503, count: null, on: 'read' } });
    await assert.rejects(collectConversations(client, { retryDelayMs: 5 }), (error: ServiceError) => {
      assert.ok(error instanceof ServiceError);
      assert.equal(error.status, 503);
      return true;
    });
    assert.equal(received.length, 4);
    emulator.faults.reset();

    // A 429's Retry-After (1 s, from the emulator) is waited for, not the far shorter pause.
    received.length = 0;
    emulator.faults.set({ status: { code: 429, count: 1, on: 'read' } });
    const started = performance.now();
    assert.equal((await collectConversations(client, { retryDelayMs: 5 })).length, live);
    assert.ok(performance.now() - started >= 950, 'waited for the Retry-After');
    assert.equal(received.length, Math.ceil(live / 10) + 1);

    for (const options of [{ retries: -1 }, { retries: 1.5 }, { retries: NaN }, { retryDelayMs: -1 }]) {
      await assert.rejects(collectConversations(client, options), RangeError);
    }

    // A refusal that will not pass is not asked again.
    const { client: wrongKey, received: asked } = inProcess({}, { apiKey: 'not-the-key' });
    await assert.rejects(collectConversations(wrongKey, { retryDelayMs: 5 }), { name: 'ServiceError', status: 401 });
    assert.equal(asked.length, 1);
  });
});

describe('checkPage', () => {
  it('takes a last page with a null, absent or empty token', () => {
    const conversation = { conversationId: 'c1' } as Conversation;
    for (const continuationToken of [null, undefined, '']) {
      assert.deepEqual(checkPage({ data: [conversation], continuationToken }, 'page').data, [conversation]);
    }
    assert.throws(() => checkPage({ data: [{ conversationId: 'c', chatMessages: {} }] }, 'page 1'), /chatMessages/);
    assert.throws(() => checkPage([], 'page 1'), /page 1 is malformed: it is not an object/);
  });
});
