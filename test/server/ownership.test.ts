import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ServiceError } from '../../src/service/errors.js';
import { Ownership } from '../../src/server/ownership.js';
import type { Conversation } from '../../src/service/types.js';

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
