import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Citation, ConversationDetail, ConversationList, MessageReply } from '../../../src/protocol.js';
import { afterNoKeyLeaks, events, expectError, setup, transcript } from '../../support/backend.js';
import { ada, apiKey, juniper } from '../../support/service.js';
import type { ConversationSummary } from '../../../src/protocol.js';

/** One visitor with a token for each persona, on a backend that lets them start many conversations. */
async function visitor(options: Parameters<typeof setup>[0] = {}) {
  const parts = setup({
    ...options,
    backend: { limits: { conversationsPerUserPerMinute: 100 }, ...options.backend },
  });
  const first = await parts.session();
  const withAda = await parts.session({ personaId: ada.personaId }, { cookie: first.cookie! });
  return { ...parts, juniperToken: first.token, adaToken: withAda.token };
}

/** Every page of the visitor's list, following `next`, and how many of the service's list pages each one read. */
async function allPages(parts: Awaited<ReturnType<typeof visitor>>, token: string) {
  const pages: { ids: string[]; reads: number }[] = [];
  let cursor: string | null = null;
  do {
    const before = parts.upstream.filter(u => u.path.startsWith('/conversations/user/')).length;
    const query: string = cursor ? `?cursor=${encodeURIComponent(cursor)}` : '';
    const res = await parts.api('GET', `/conversations${query}`, token);
    assert.equal(res.status, 200, 'a page of the list');
    const list = (await res.json()) as ConversationList;
    const reads = parts.upstream.filter(u => u.path.startsWith('/conversations/user/')).length - before;
    pages.push({ ids: list.data.map(c => c.id), reads });
    cursor = list.next;
  } while (cursor);
  return pages;
}

describe('the visitor’s conversations', () => {
  after(() => {
    const leaks = transcript.filter(text => text.includes(apiKey));
    assert.deepEqual(leaks, [], 'the API key appears in no response, header, SSE frame or log line');
  });

  describe('list', () => {
    it('holds only the conversations with the token’s persona, reading on through the service’s pages', async () => {
      const parts = await visitor();
      const made = { juniper: [] as string[], ada: [] as string[] };
      for (let i = 0; i < 24; i++) {
        // The service's pages of 10 each hold five of each persona.
        if (i % 2) made.ada.push(await parts.conversation(parts.adaToken));
        else made.juniper.push(await parts.conversation(parts.juniperToken));
      }
      const stranger = await parts.session();
      await parts.conversation(stranger.token);
      const juniperPages = await allPages(parts, parts.juniperToken);
      assert.deepEqual(
        juniperPages.map(p => p.ids.length),
        [10, 2],
        'a page reads on until it holds 10, then the next goes on from there',
      );
      assert.deepEqual(
        juniperPages.map(p => p.reads),
        [2, 1],
        'the first page read two of the service’s pages',
      );
      assert.deepEqual(
        juniperPages.flatMap(p => p.ids),
        made.juniper,
        'every one of Juniper’s, once, in the service’s order',
      );
      const adaPages = await allPages(parts, parts.adaToken);
      assert.deepEqual(
        adaPages.flatMap(p => p.ids),
        made.ada,
        'every one of Ada’s',
      );
    });

    it('stops after five of the service’s pages, even with nothing to show, and goes on from there', async () => {
      const parts = await visitor();
      for (let i = 0; i < 51; i++) await parts.conversation(parts.adaToken);
      const last = await parts.conversation(parts.juniperToken);
      const pages = await allPages(parts, parts.juniperToken);
      assert.deepEqual(pages, [
        { ids: [], reads: 5 },
        { ids: [last], reads: 1 },
      ]);
    });

    it('lists every conversation of the user on a backend of general conversations', async () => {
      const parts = setup({ backend: { personaId: undefined, system: 'helper', model: 'extractive-1' } });
      const { token } = await parts.session();
      const ids = [await parts.conversation(token), await parts.conversation(token)];
      const list = (await (await parts.api('GET', '/conversations', token)).json()) as ConversationList;
      assert.deepEqual(
        list.data.map(c => c.id),
        ids,
        'both, with no persona to filter by',
      );
    });

    it('dates each conversation by its first and newest messages, and keeps its name', async () => {
      const parts = await visitor();
      const id = await parts.conversation(parts.juniperToken);
      const empty = await parts.conversation(parts.juniperToken);
      for (const message of ['Do you rent tents?', 'And sleeping bags?']) {
        const res = await parts.send(parts.juniperToken, id, message, { accept: 'application/json' });
        assert.equal(res.status, 200, 'a reply');
      }
      // Once the backend has named it from its first message, in the background, the visitor's name replaces that.
      for (let i = 0; i < 200 && !parts.emulator.store.get(id)!.conversationName; i++) {
        await new Promise(resolve => setTimeout(resolve, 5));
      }
      assert.equal(
        parts.emulator.store.get(id)!.conversationName,
        'Do you rent tents?',
        'named from the first message',
      );
      parts.emulator.store.get(id)!.conversationName = 'Tents';
      const list = (await (await parts.api('GET', '/conversations', parts.juniperToken)).json()) as ConversationList;
      const messages = parts.emulator.store.get(id)!.chatMessages!;
      const [dated, undated] = list.data;
      assert.deepEqual(
        { id: dated!.id, name: dated!.name, createdAt: dated!.createdAt, updatedAt: dated!.updatedAt },
        { id, name: 'Tents', createdAt: messages[0]!.timestamp, updatedAt: messages.at(-1)!.timestamp },
      );
      assert.deepEqual(
        { id: undated!.id, createdAt: undated!.createdAt, updatedAt: undated!.updatedAt },
        { id: empty, createdAt: null, updatedAt: null },
        'a conversation without messages has no times',
      );
    });
  });

  describe('delete', () => {
    it('marks it deleted at the service, then hides it and answers 404 for it everywhere', async () => {
      const parts = await visitor();
      const token = parts.juniperToken;
      const id = await parts.conversation(token);
      const kept = await parts.conversation(token);
      const key = crypto.randomUUID();
      const reply = await parts.send(token, id, 'Do you rent tents?', { key, accept: 'application/json' });
      assert.equal(reply.status, 200, 'a reply before the delete');
      const res = await parts.api('DELETE', `/conversations/${id}`, token);
      assert.equal(res.status, 204);
      assert.equal(await res.text(), '', 'no body');
      assert.equal(parts.emulator.store.get(id)!.conversationStatus, 'deleted', 'the reserved status');
      const list = (await (await parts.api('GET', '/conversations', token)).json()) as ConversationList;
      assert.deepEqual(
        list.data.map(c => c.id),
        [kept],
        'hidden from the list',
      );
      const continues = parts.continues().length;
      for (const attempt of [
        parts.api('GET', `/conversations/${id}`, token),
        parts.api('PATCH', `/conversations/${id}`, token, { body: { status: 'open' } }),
        parts.api('DELETE', `/conversations/${id}`, token),
        parts.send(token, id, 'Still there?', { accept: 'application/json' }),
        parts.send(token, id, 'Still there?'),
        parts.send(token, id, 'Do you rent tents?', { key, accept: 'application/json' }),
        parts.api('GET', `/conversations/${id}/runs/${key}/events`, token),
        parts.api('POST', `/conversations/${id}/runs/${key}/stop`, token),
      ]) {
        await expectError(attempt, 404, 'conversation_not_found');
      }
      assert.equal(parts.continues().length, continues, 'the service was never asked to continue it');
      assert.equal(parts.emulator.store.get(id)!.conversationStatus, 'deleted', 'and it stays deleted');
    });

    it('stops a reply being written into the conversation it deletes', async () => {
      const parts = await visitor({ emulator: { faults: { chunkDelayMs: 50 } } });
      const token = parts.juniperToken;
      const id = await parts.conversation(token);
      const res = await parts.send(token, id, 'Tell me everything about shipping.');
      const reading = events(res);
      const upstream = parts.continues().at(-1)!;
      assert.equal((await parts.api('DELETE', `/conversations/${id}`, token)).status, 204);
      const end = (await reading).at(-1)!;
      assert.equal(end.event, 'done');
      assert.equal((end.data as { finishReason: string }).finishReason, 'stopped', 'stopped, not written on');
      assert.equal(upstream.signal.aborted, true, 'the service was told to stop');
    });

    it('does not let a list read before a delete bring the conversation back', async () => {
      let release!: () => void;
      const held = new Promise<void>(resolve => (release = resolve));
      let arrived!: () => void;
      const reached = new Promise<void>(resolve => (arrived = resolve));
      let holdList = false;
      const parts = await visitor({
        backend: {
          fetch: async (input, init) => {
            const request = new Request(input, init);
            const response = await parts.emulator.fetch(request);
            // The service's answer to the list comes back only after the delete finished.
            if (holdList && new URL(request.url).pathname.startsWith('/conversations/user/')) {
              holdList = false;
              arrived();
              await held;
            }
            return response;
          },
        },
      });
      const token = parts.juniperToken;
      const id = await parts.conversation(token);
      holdList = true;
      const listing = parts.api('GET', '/conversations', token);
      await reached;
      assert.equal((await parts.api('DELETE', `/conversations/${id}`, token)).status, 204);
      release();
      await listing;
      await expectError(
        parts.send(token, id, 'Still there?', { accept: 'application/json' }),
        404,
        'conversation_not_found',
      );
    });

    it('refuses to set the reserved status by PATCH, and another visitor’s delete is a 404', async () => {
      const parts = await visitor();
      const id = await parts.conversation(parts.juniperToken);
      const before = parts.upstream.length;
      for (const status of ['deleted', 'Deleted']) {
        await expectError(
          parts.api('PATCH', `/conversations/${id}`, parts.juniperToken, { body: { status } }),
          400,
          'invalid_request',
        );
      }
      assert.equal(parts.upstream.length, before, 'the service never heard of it');
      const stranger = await parts.session();
      await expectError(parts.api('DELETE', `/conversations/${id}`, stranger.token), 404, 'conversation_not_found');
      await expectError(
        parts.api('DELETE', `/conversations/${crypto.randomUUID()}`, stranger.token),
        404,
        'conversation_not_found',
      );
      await expectError(parts.api('DELETE', '/conversations/not-an-id', stranger.token), 400, 'invalid_request');
      assert.equal(parts.emulator.store.get(id)!.conversationStatus, 'open', 'unchanged');
    });

    it('treats a conversation deleted through another instance as missing once it reads it', async () => {
      const parts = await visitor();
      const id = await parts.conversation(parts.juniperToken);
      parts.emulator.store.get(id)!.conversationStatus = 'deleted';
      await expectError(parts.api('GET', `/conversations/${id}`, parts.juniperToken), 404, 'conversation_not_found');
      await expectError(
        parts.send(parts.juniperToken, id, 'Hello?', { accept: 'application/json' }),
        404,
        'conversation_not_found',
      );
      assert.equal(parts.continues().length, 0, 'deleted elsewhere: not continued once this instance saw it');
    });
  });

  describe('names', () => {
    const long = '  How long\n does   shipping take to Alaska and Hawaii when I order a tent and two sleeping bags?  ';
    const names = (parts: Awaited<ReturnType<typeof visitor>>) =>
      parts.upstream.filter(u => u.path.endsWith('/set-conversation-name')).length;

    it('names a conversation from its first message, once, in the background', async () => {
      const parts = await visitor();
      const token = parts.juniperToken;
      const id = await parts.conversation(token);
      assert.equal((await parts.send(token, id, long, { accept: 'application/json' })).status, 200, 'a reply');
      assert.equal((await parts.send(token, id, 'Thanks!', { accept: 'application/json' })).status, 200, 'another');
      await parts.backend.drain(0);
      const name = 'How long does shipping take to Alaska and Hawaii when I…';
      assert.equal(parts.emulator.store.get(id)!.conversationName, name);
      assert.equal(names(parts), 1, 'named once');
      const detail = (await (await parts.api('GET', `/conversations/${id}`, token)).json()) as ConversationDetail;
      assert.equal(detail.name, name);
    });

    it('never overwrites a name the visitor gave before the first message', async () => {
      const parts = await visitor();
      const token = parts.juniperToken;
      const id = await parts.conversation(token);
      const patched = await parts.api('PATCH', `/conversations/${id}`, token, { body: { name: 'Our trip' } });
      assert.equal(patched.status, 200, 'renamed');
      assert.equal((await parts.send(token, id, long, { accept: 'application/json' })).status, 200, 'a reply');
      await parts.backend.drain(0);
      assert.equal(parts.emulator.store.get(id)!.conversationName, 'Our trip');
      assert.equal(names(parts), 1, 'only the visitor’s rename reached the service');
    });

    it('gives the reply all the same when naming fails, and reports the failure', async t => {
      const errors = t.mock.method(console, 'error', () => {});
      const parts = await visitor();
      const token = parts.juniperToken;
      const id = await parts.conversation(token);
      parts.emulator.faults.set({ status: { code: 500, count: 1, on: 'manage' } });
      const res = await parts.send(token, id, 'Do you rent tents?');
      const list = await events(res);
      assert.equal(list.at(-1)!.event, 'done', 'the reply ends as ever');
      await parts.backend.drain(0);
      assert.equal(parts.emulator.store.get(id)!.conversationName, null, 'not named');
      assert.equal(errors.mock.callCount(), 1, 'one report');
      assert.match(String(errors.mock.calls[0]!.arguments[0]), /^persona-chat backend: naming a conversation failed: /);
    });
  });

  describe('citations', () => {
    const question = 'How long does shipping take?';

    /** A visitor's reply with citations, read back through another backend instance of the same service. */
    async function citedReply(options: Parameters<typeof setup>[0] = {}) {
      const parts = await visitor(options);
      const created = await parts.api('POST', '/conversations', parts.juniperToken, {
        body: { metadata: { page: '/shipping' } },
      });
      const id = ((await created.json()) as { id: string }).id;
      const res = await parts.send(parts.juniperToken, id, question, { accept: 'application/json' });
      const reply = (await res.json()) as MessageReply & { messageId: string };
      assert.ok(reply.citations.length > 0 && reply.messageId, 'the reply cites its sources');
      const detailFrom = async (instance: { api: typeof parts.api }) =>
        (await (await instance.api('GET', `/conversations/${id}`, parts.juniperToken)).json()) as ConversationDetail;
      return { ...parts, id, reply, detailFrom };
    }

    it('keeps a reply’s citations in the metadata, so another instance shows them once the run is gone', async () => {
      const parts = await citedReply();
      await parts.backend.drain(0);
      const metadata = parts.emulator.store.get(parts.id)!.metadata!;
      assert.deepEqual(metadata.client, { page: '/shipping' }, 'the browser’s metadata stays');
      const kept = (metadata.personaChat as { citations: Record<string, { citations: Citation[] }> }).citations;
      assert.deepEqual(Object.keys(kept), [parts.reply.messageId]);
      const compact = parts.reply.citations.map(({ documentId, sourceName, sourceUrl, partitions }) => ({
        documentId,
        sourceName,
        sourceUrl,
        partitions: partitions!.map(({ text, relevance }) => ({ text, relevance })),
      }));
      assert.deepEqual(kept[parts.reply.messageId]!.citations, compact, 'compacted');
      // Another instance with a store of its own: the run and its log are not there.
      const other = setup({ service: parts.emulator });
      const detail = await parts.detailFrom(other);
      assert.deepEqual(detail.runs, [], 'no run to take them from');
      assert.deepEqual(
        detail.messages.map(m => m.citations),
        [[], compact],
      );
    });

    it('gives the reply all the same when keeping its citations fails; its run lends them meanwhile', async t => {
      const errors = t.mock.method(console, 'error', () => {});
      const parts = await visitor();
      const id = await parts.conversation(parts.juniperToken);
      const renamed = await parts.api('PATCH', `/conversations/${id}`, parts.juniperToken, { body: { name: 'Post' } });
      assert.equal(renamed.status, 200, 'named, so that only the citations write');
      parts.emulator.faults.set({ status: { code: 500, count: 1, on: 'manage' } });
      const res = await parts.send(parts.juniperToken, id, question, { accept: 'application/json' });
      assert.equal(res.status, 200, 'the reply');
      const reply = (await res.json()) as MessageReply;
      await parts.backend.drain(0);
      assert.equal(parts.emulator.store.get(id)!.metadata!.personaChat, undefined, 'nothing kept');
      assert.equal(errors.mock.callCount(), 1, 'one report');
      assert.match(
        String(errors.mock.calls[0]!.arguments[0]),
        /^persona-chat backend: keeping the citations of a reply failed: /,
      );
      const detail = (await (
        await parts.api('GET', `/conversations/${id}`, parts.juniperToken)
      ).json()) as ConversationDetail;
      assert.deepEqual(detail.messages[1]!.citations, reply.citations, 'from the run of the replay window');
      const other = setup({ service: parts.emulator });
      const elsewhere = (await (
        await other.api('GET', `/conversations/${id}`, parts.juniperToken)
      ).json()) as ConversationDetail;
      assert.deepEqual(elsewhere.messages[1]!.citations, [], 'none where the run is not');
    });
  });
});

describe('conversations through the backend', () => {
  afterNoKeyLeaks();

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

  it('does not count the page the element adds against the limits of the site’s metadata', async () => {
    const { session, api, emulator } = setup();
    const { token } = await session();
    const create = (metadata: Record<string, string>) => api('POST', '/conversations', token, { body: { metadata } });
    // The site's 20 keys and 2 KB are its own: the page beside them fits.
    const twenty = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`key${i}`, 'v']));
    // 2,048 bytes of JSON exactly, in values of at most 500 characters.
    const full = Object.fromEntries(['a', 'b', 'c', 'd'].map(key => [key, 'x'.repeat(400)]));
    full.e = 'x'.repeat(2048 - JSON.stringify({ ...full, e: '' }).length);
    for (const metadata of [twenty, full]) {
      const created = await create({ page: '/tents/2-person', ...metadata });
      assert.equal(created.status, 201);
      const { id } = (await created.json()) as ConversationSummary;
      assert.deepEqual(emulator.store.get(id)!.metadata!.client, { page: '/tents/2-person', ...metadata });
    }
    // A 21st key of the site's own, a byte more or a page that is no metadata value is still refused.
    await expectError(create({ page: '/tents', ...twenty, key20: 'v' }), 400, 'invalid_request');
    await expectError(create({ page: '/tents', ...full, e: `${full.e}x` }), 400, 'invalid_request');
    assert.equal(JSON.stringify(full).length, 2048);
    await expectError(create({ page: `/${'x'.repeat(500)}` }), 400, 'invalid_request');
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
