import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConversationStore, InvalidContinuationToken, pageSize } from '../../src/emulator/store.js';
import type { Conversation, ListResponse } from '../../src/service/types.js';
import { ada, createPersona, expectError, inProcess, juniper } from '../support/service.js';

describe('conversation lists', () => {
  it('pages 25+ conversations ten at a time, and by-user and by-persona lists never leak', async () => {
    const { request } = inProcess();
    const made: Conversation[] = [];
    for (let i = 0; i < 31; i++) {
      made.push(await createPersona(request, i % 3 === 0 ? 'alice' : 'bob', i % 2 ? ada.personaId : juniper.personaId));
    }
    const walk = async (path: string) => {
      const pages: ListResponse[] = [];
      let token: string | null | undefined;
      do {
        const res = await request('GET', token ? `${path}?continuationToken=${encodeURIComponent(token)}` : path);
        assert.equal(res.status, 200);
        const page = (await res.json()) as ListResponse;
        pages.push(page);
        token = page.continuationToken;
      } while (token);
      return pages;
    };
    const all = await walk('/conversations');
    assert.deepEqual(
      all.map(p => p.data.length),
      [10, 10, 10, 1],
    );
    assert.equal(all.at(-1)!.continuationToken, null);
    assert.deepEqual(
      all.flatMap(p => p.data.map(c => c.conversationId)),
      made.map(c => c.conversationId),
    );

    const alice = (await walk('/conversations/user/alice')).flatMap(p => p.data);
    assert.equal(alice.length, made.filter(c => c.externalUserId === 'alice').length);
    assert.ok(alice.every(c => c.externalUserId === 'alice'));
    const bob = await walk('/conversations/user/bob');
    assert.deepEqual(
      bob.map(p => p.data.length),
      [10, 10],
    );
    assert.ok(bob.flatMap(p => p.data).every(c => c.externalUserId === 'bob'));
    assert.deepEqual((await walk('/conversations/user/carol'))[0]!.data, []);

    const adas = (await walk(`/conversations/persona/${ada.personaId}`)).flatMap(p => p.data);
    assert.equal(adas.length, 15);
    assert.ok(adas.every(c => c.personaId === ada.personaId));

    const bobToken = bob[0]!.continuationToken!;
    await expectError(
      request('GET', `/conversations/user/alice?continuationToken=${bobToken}`),
      400,
      'invalid_request',
      /different list/,
    );
  });

  describe('the store', () => {
    const conversation = (externalUserId: string, personaId: string | null = null): Conversation => ({
      conversationId: crypto.randomUUID(),
      externalUserId,
      personaId,
      isDeleted: false,
      chatMessages: [],
      chatMessagesCount: 0,
      chatStarted: false,
      promptTokens: 0,
      completionTokens: 0,
      totalTokens: 0,
    });

    it('leaves deleted conversations out of every list', () => {
      const store = new ConversationStore();
      const kept = store.add(conversation('alice', juniper.personaId));
      store.add({ ...conversation('alice', juniper.personaId), isDeleted: true });
      for (const scope of [
        { kind: 'all' },
        { kind: 'user', externalUserId: 'alice' },
        { kind: 'persona', personaId: juniper.personaId },
      ] as const) {
        assert.deepEqual(store.list(scope), { data: [kept], continuationToken: null }, scope.kind);
      }
      assert.equal(store.size, 2, 'a deleted conversation is still held');
    });

    it('refuses a token it never issued, one forged for an offset, and one of another list', () => {
      const store = new ConversationStore();
      for (let i = 0; i < pageSize + 1; i++) store.add(conversation('alice'));
      const { continuationToken } = store.list({ kind: 'user', externalUserId: 'alice' });
      assert.ok(continuationToken);
      assert.equal(store.list({ kind: 'user', externalUserId: 'alice' }, continuationToken).data.length, 1);
      const forged = btoa(JSON.stringify({ scope: 'all', offset: -1 }));
      for (const token of ['abc', forged]) {
        assert.throws(() => store.list({ kind: 'all' }, token), {
          message: 'continuationToken is not one this service issued',
        });
      }
      assert.throws(() => store.list({ kind: 'all' }, continuationToken), InvalidContinuationToken);
      assert.throws(() => store.list({ kind: 'user', externalUserId: 'bob' }, continuationToken), /different list/);
    });

    it("adds a finished run's messages to the conversation and their tokens to its totals", () => {
      const store = new ConversationStore();
      const held = store.add(conversation('alice'));
      store.appendRun(held, [
        { role: 'user', content: 'Hi', promptTokens: 1, completionTokens: 0, totalTokens: 1 },
        { role: 'assistant', content: 'Hello!', promptTokens: 30, completionTokens: 2, totalTokens: 32 },
      ]);
      const got = store.get(held.conversationId)!;
      assert.deepEqual(
        [got.chatMessagesCount, got.chatStarted, got.promptTokens, got.completionTokens, got.totalTokens],
        [2, true, 31, 2, 33],
      );
      store.clear();
      assert.equal(store.size, 0);
      assert.equal(store.get(held.conversationId), undefined);
    });
  });
});
