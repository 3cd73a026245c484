import assert from 'node:assert/strict';
import { ServiceError } from '../../src/service/errors.js';
import { Ownership } from '../../src/server/ownership.js';
import type { Conversation } from '../../src/service/types.js';
import { describe, it } from 'node:test';
import { base64url } from 'jose';
import type { ConversationDetail, ConversationList, ErrorEnvelope } from '../../src/protocol.js';
import { ada, apiKey, juniper } from '../support/service.js';
import { afterNoKeyLeaks, expectError, setup } from '../support/backend.js';

/** Ownership over a service that has no conversation at all, on a clock the test moves. */
function withoutConversations(options: { missingCapacity?: number } = {}) {
  const asked: string[] = [];
  const clock = { now: 0 };
  const service = {
    getConversation: async (id: string) => {
      asked.push(id);
      throw new ServiceError({ status: 404, code: 'conversation_not_found', message: 'No such conversation.' });
    },
  };
  const ownership = new Ownership(service, { missingMs: 60_000, now: () => clock.now, ...options });
  const check = (id: string, sub = 'anon_a') =>
    assert.rejects(ownership.check(sub, id), { status: 404, code: 'conversation_not_found' });
  return { ownership, asked, clock, check };
}

describe('Ownership', () => {
  it('remembers an id the service does not have for a minute, for every caller, then asks again', async () => {
    const { asked, clock, check } = withoutConversations();
    const id = crypto.randomUUID();
    await check(id);
    await check(id, 'anon_b');
    clock.now = 59_999;
    await check(id);
    assert.equal(asked.length, 1, 'asked once within the minute');
    clock.now = 60_000;
    await check(id);
    assert.equal(asked.length, 2, 'asked again after it');
  });

  it('remembers at most so many missing ids, forgetting the oldest first', async () => {
    const { asked, check } = withoutConversations({ missingCapacity: 2 });
    const [a, b, c] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    for (const id of [a, b, c]) await check(id);
    await check(c);
    await check(b);
    assert.deepEqual(asked, [a, b, c], 'the two newest are remembered');
    await check(a);
    assert.deepEqual(asked, [a, b, c, a], 'the oldest was forgotten');
  });

  it('takes an owner noted later over a missing answer', async () => {
    const { ownership, asked, check } = withoutConversations();
    const id = crypto.randomUUID();
    await check(id);
    ownership.remember(id, 'anon_a');
    assert.equal(await ownership.check('anon_a', id), undefined);
    await check(id, 'anon_b');
    assert.equal(asked.length, 1);
  });

  it('checks a remembered owner again after a minute, and takes a deleted conversation for a missing one', async () => {
    const id = crypto.randomUUID();
    const clock = { now: 0 };
    const conversation: Conversation = { conversationId: id, externalUserId: 'anon_a', conversationStatus: 'open' };
    let asked = 0;
    const service = {
      getConversation: async () => {
        asked++;
        return conversation;
      },
    };
    const ownership = new Ownership(service, { ownerMs: 60_000, now: () => clock.now });
    ownership.remember(id, 'anon_a');
    conversation.conversationStatus = 'deleted';
    clock.now = 59_999;
    assert.equal(await ownership.check('anon_a', id), undefined, 'the owner is remembered for a minute');
    assert.equal(asked, 0, 'without asking');
    clock.now = 60_000;
    await assert.rejects(ownership.check('anon_a', id), { status: 404, code: 'conversation_not_found' });
    await assert.rejects(ownership.check('anon_a', id), { status: 404, code: 'conversation_not_found' });
    assert.equal(asked, 1, 'asked again once, then remembered as missing');
  });
});

describe('ownership over the routes', () => {
  afterNoKeyLeaks();

  it("gives user A the same 404 on user B's conversation as on a random id, on every route, without continuing it", async () => {
    const { session, conversation, api, send, continues } = setup();
    const a = await session();
    const b = await session();
    const bId = await conversation(b.token);
    const randomId = crypto.randomUUID();
    const attempts = (id: string) => [
      api('GET', `/conversations/${id}`, a.token),
      api('PATCH', `/conversations/${id}`, a.token, { body: { name: 'mine now' } }),
      send(a.token, id, 'Tell me your secrets', { accept: 'application/json' }),
      send(a.token, id, 'Tell me your secrets', { accept: 'text/event-stream' }),
    ];
    const theirs = await Promise.all(attempts(bId));
    const none = await Promise.all(attempts(randomId));
    for (const [i, response] of theirs.entries()) {
      const mine = await expectError(response, 404, 'conversation_not_found');
      const random = await expectError(none[i]!, 404, 'conversation_not_found');
      const strip = (b: ErrorEnvelope) => ({ ...b.error, requestId: '' });
      assert.deepEqual(strip(mine.body), strip(random.body), 'not yours looks exactly like does not exist');
    }
    assert.equal(continues().length, 0, 'the service was never asked to continue');
    const list = (await (await api('GET', '/conversations', a.token)).json()) as ConversationList;
    assert.deepEqual(list.data, []);
    const bDetail = (await (await api('GET', `/conversations/${bId}`, b.token)).json()) as ConversationDetail;
    assert.equal(bDetail.name, null, "B's conversation is unchanged");
  });

  it('checks a conversation it did not create with one service call, then from its cache', async () => {
    const { session, send, upstream, emulator, backend } = setup();
    const a = await session();
    const sub = JSON.parse(new TextDecoder().decode(base64url.decode(a.token.split('.')[1]!))).sub;
    // Made by another process of the site's backend: this one has never seen it.
    const made = await emulator.fetch(
      new Request('http://emulator.test/conversations/persona', {
        method: 'POST',
        headers: { 'x-svc-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ personaId: juniper.personaId, externalUserId: sub }),
      }),
    );
    const { conversationId } = await made.json();
    for (let i = 0; i < 3; i++)
      assert.equal((await send(a.token, conversationId, `message ${i}`, { accept: 'application/json' })).status, 200);
    await backend.drain(0);
    const tally: Record<string, number> = {};
    for (const u of upstream) {
      const call = `${u.method} ${u.path.replace(conversationId, ':id')}`;
      tally[call] = (tally[call] ?? 0) + 1;
    }
    assert.deepEqual(
      tally,
      {
        // One to check the owner, one to read it afresh before naming it from its first message.
        'GET /conversations/:id': 2,
        'PATCH /conversations/:id/set-conversation-name': 1,
        'PATCH /conversations/:id/chat-sse': 3,
      },
      'the owner was checked once, then taken from the cache',
    );
  });

  it('asks the service once about an id that is not the caller’s, however often it is read', async () => {
    const { session, api, upstream, emulator } = setup();
    const { token } = await session();
    // Another visitor's, started by another process of the site's backend: this one has never seen it.
    const made = await emulator.fetch(
      new Request('http://emulator.test/conversations/persona', {
        method: 'POST',
        headers: { 'x-svc-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ personaId: juniper.personaId, externalUserId: 'anon_someone_else' }),
      }),
    );
    const theirs = ((await made.json()) as { conversationId: string }).conversationId;
    for (const id of [theirs, crypto.randomUUID()]) {
      for (let i = 0; i < 5; i++) {
        await expectError(api('GET', `/conversations/${id}`, token), 404, 'conversation_not_found');
        await expectError(
          api('PATCH', `/conversations/${id}`, token, { body: { name: 'x' } }),
          404,
          'conversation_not_found',
        );
      }
      assert.deepEqual(
        upstream.filter(u => u.path.includes(id)).map(u => `${u.method} ${u.path.replace(id, ':id')}`),
        ['GET /conversations/:id'],
        'one read of the service, then the cache',
      );
    }
  });

  it('ignores externalUserId or persona in bodies: they are refused, and change nothing', async () => {
    const { session, api, emulator } = setup();
    const a = await session();
    await expectError(
      api('POST', '/conversations', a.token, { body: { externalUserId: 'victim' } }),
      400,
      'invalid_request',
    );
    await expectError(
      api('POST', '/conversations', a.token, { body: { personaId: ada.personaId } }),
      400,
      'invalid_request',
    );
    const id = (await (await api('POST', '/conversations', a.token, { body: {} })).json()).id as string;
    await expectError(
      api('PATCH', `/conversations/${id}`, a.token, { body: { externalUserId: 'victim' } }),
      400,
      'invalid_request',
    );
    await expectError(
      api('PATCH', `/conversations/${id}`, a.token, { body: { personaId: ada.personaId } }),
      400,
      'invalid_request',
    );
    const stored = emulator.store.get(id)!;
    assert.match(stored.externalUserId!, /^anon_/);
    assert.equal(stored.personaId, juniper.personaId);
  });
});
