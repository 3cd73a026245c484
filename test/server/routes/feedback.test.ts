import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConversationDetail, FeedbackResponse, MessageReply } from '../../../src/protocol.js';
import type { FeedbackEvent, StoredFeedback } from '../../../src/server/index.js';
import { afterNoKeyLeaks, expectError, setup } from '../../support/backend.js';
import { juniper } from '../../support/service.js';

describe('feedback on a reply', () => {
  afterNoKeyLeaks();

  /** A visitor's conversation with one reply, its metadata set by the browser and by the site. */
  async function withReply(options: Parameters<typeof setup>[0] = {}) {
    const parts = setup(options);
    const { token } = await parts.session();
    const created = await parts.api('POST', '/conversations', token, { body: { metadata: { page: '/tents' } } });
    const id = ((await created.json()) as { id: string }).id;
    const res = await parts.send(token, id, 'Hello!', { accept: 'application/json' });
    const { messageId, citations } = (await res.json()) as MessageReply;
    // A reply without sources: nothing but the feedback is written to its metadata in the background.
    assert.deepEqual(citations, [], 'a greeting cites nothing');
    parts.emulator.store.get(id)!.metadata!.site = { plan: 'gold' };
    const question = parts.emulator.store.get(id)!.chatMessages![0]!.messageId!;
    const feedback = (body: unknown, on = messageId!, as = token) =>
      parts.api('POST', `/conversations/${id}/messages/${on}/feedback`, as, { body });
    /** The feedback kept in the emulator's copy of the conversation's metadata. */
    const kept = () =>
      (parts.emulator.store.get(id)!.metadata!.personaChat as { feedback: Record<string, StoredFeedback> }).feedback;
    return { ...parts, token, id, messageId: messageId!, question, feedback, kept };
  }

  it('keeps feedback in the metadata beside the other keys, tells the hook once, and shows it', async () => {
    const calls: FeedbackEvent[] = [];
    const parts = await withReply({ backend: { onFeedback: event => void calls.push(event) } });
    const res = await parts.feedback({ score: 1, comment: ' Just right ', tags: ['clear', 'clear', ' quick '] });
    assert.equal(res.status, 200);
    const answer = (await res.json()) as FeedbackResponse;
    const metadata = parts.emulator.store.get(parts.id)!.metadata!;
    const kept = parts.kept();
    assert.deepEqual(kept, {
      [parts.messageId]: {
        feedbackId: answer.id,
        score: 1,
        comments: 'Just right',
        tags: ['clear', 'quick'],
        timestamp: answer.createdAt,
      },
    });
    assert.match(answer.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      { ...answer, id: '', createdAt: '' },
      {
        id: '',
        createdAt: '',
        messageId: parts.messageId,
        score: 1,
        comment: 'Just right',
        tags: ['clear', 'quick'],
      },
    );
    assert.deepEqual(metadata.client, { page: '/tents' }, 'the browser’s metadata stays');
    assert.deepEqual(metadata.site, { plan: 'gold' }, 'the site’s metadata stays');
    assert.deepEqual(calls, [
      {
        conversationId: parts.id,
        messageId: parts.messageId,
        userId: parts.emulator.store.get(parts.id)!.externalUserId,
        personaId: juniper.personaId,
        feedback: kept[parts.messageId],
      },
    ]);
    const again = await parts.feedback({ score: -1 });
    assert.equal(again.status, 200, 'a second feedback');
    const now = parts.kept();
    assert.deepEqual(Object.keys(now), [parts.messageId], 'one entry for the reply');
    assert.equal(now[parts.messageId]!.score, -1, 'the second replaced the first');
    assert.equal(calls.length, 2, 'the hook heard of each');
    const detail = (await (
      await parts.api('GET', `/conversations/${parts.id}`, parts.token)
    ).json()) as ConversationDetail;
    assert.deepEqual(
      detail.messages.map(m => m.feedback),
      [null, { score: -1, comment: null, tags: [] }],
    );
  });

  it('changes a vote, and takes one back: the entry goes, the hook is told with score 0, and a reload shows none', async () => {
    const calls: FeedbackEvent[] = [];
    const parts = await withReply({ backend: { onFeedback: event => void calls.push(event) } });
    const shown = async () =>
      ((await (await parts.api('GET', `/conversations/${parts.id}`, parts.token)).json()) as ConversationDetail)
        .messages[1]!.feedback;
    assert.equal((await parts.feedback({ score: 1 })).status, 200);
    assert.equal((await parts.feedback({ score: -1, comment: 'Too short' })).status, 200, 'changed to down');
    assert.deepEqual(await shown(), { score: -1, comment: 'Too short', tags: [] }, 'the change is what a reload shows');

    const res = await parts.feedback({ score: 0 });
    assert.equal(res.status, 200);
    const answer = (await res.json()) as FeedbackResponse;
    assert.deepEqual(
      { ...answer, id: '', createdAt: '' },
      { id: '', createdAt: '', messageId: parts.messageId, score: 0, comment: null, tags: [] },
    );
    assert.deepEqual(parts.kept(), {}, 'nothing is kept for the reply');
    const metadata = parts.emulator.store.get(parts.id)!.metadata!;
    assert.deepEqual([metadata.client, metadata.site], [{ page: '/tents' }, { plan: 'gold' }], 'the other keys stay');
    assert.equal(await shown(), null, 'a reload, or another device, shows no vote');
    assert.deepEqual(
      calls.map(call => [call.messageId, call.feedback.score, call.feedback.comments ?? null]),
      [
        [parts.messageId, 1, null],
        [parts.messageId, -1, 'Too short'],
        [parts.messageId, 0, null],
      ],
      'the hook hears of the withdrawal as score 0',
    );
    assert.equal(calls[2]!.feedback.feedbackId, answer.id);

    const writes = parts.upstream.filter(u => u.path.endsWith('/set-metadata')).length;
    assert.equal((await parts.feedback({ score: 0 })).status, 200, 'taken back again');
    assert.equal(parts.upstream.filter(u => u.path.endsWith('/set-metadata')).length, writes, 'nothing is written');
    assert.equal(calls.length, 3, 'nor is the hook told');
    await expectError(parts.feedback({ score: 0 }, parts.question), 404, 'message_not_found');
    const stranger = await parts.session();
    await expectError(parts.feedback({ score: 0 }, parts.messageId, stranger.token), 404, 'conversation_not_found');
  });

  it('refuses what is not a reply of the caller’s conversation, or not well formed, and keeps nothing', async () => {
    const calls: FeedbackEvent[] = [];
    const parts = await withReply({ backend: { onFeedback: event => void calls.push(event) } });
    const before = structuredClone(parts.emulator.store.get(parts.id)!.metadata);
    const stranger = await parts.session();
    await expectError(parts.feedback({ score: 1 }, parts.messageId, stranger.token), 404, 'conversation_not_found');
    await expectError(parts.feedback({ score: 1 }, parts.question), 404, 'message_not_found');
    await expectError(parts.feedback({ score: 1 }, crypto.randomUUID()), 404, 'message_not_found');
    for (const body of [
      { score: 1, comment: 'x'.repeat(10 * 1024) },
      { score: 1, rating: 'great' },
      { score: 5 },
      { score: '1' },
      { score: null },
      { score: 0, comment: 'Never mind' },
      { score: 0, tags: ['clear'] },
      {},
      { score: 1, tags: Array.from({ length: 11 }, (_, i) => `tag${i}`) },
      { score: 1, tags: ['x'.repeat(41)] },
      { score: 1, tags: [''] },
      { score: 1, tags: 'clear' },
      { score: 1, comment: 42 },
    ]) {
      await expectError(parts.feedback(body), 400, 'invalid_request');
    }
    await expectError(parts.feedback({ score: 1, comment: 'x'.repeat(40 * 1024) }), 413, 'payload_too_large');
    await expectError(parts.feedback({ score: 1 }, '__proto__'), 400, 'invalid_request');
    const path = `/conversations/${parts.id}/messages/${parts.messageId}/feedback`;
    for (const [body, type, status, code] of [
      ['{"score":', 'application/json', 400, 'invalid_request'],
      ['score=1', 'application/x-www-form-urlencoded', 415, 'unsupported_media_type'],
    ] as const) {
      await expectError(
        parts.api('POST', path, parts.token, { body, headers: { 'content-type': type } }),
        status,
        code,
      );
    }
    await expectError(parts.request('POST', path, { body: { score: 1 } }), 401, 'token_missing');
    assert.deepEqual(parts.emulator.store.get(parts.id)!.metadata, before, 'the metadata is as it was');
    assert.equal(
      parts.upstream.filter(u => u.path.endsWith('/set-metadata')).length,
      1,
      'only the browser’s metadata at creation was ever written',
    );
    assert.deepEqual(calls, [], 'the hook heard of nothing');
    await parts.api('DELETE', `/conversations/${parts.id}`, parts.token);
    await expectError(parts.feedback({ score: 1 }), 404, 'conversation_not_found');
  });

  it('answers all the same when the hook throws or rejects, and reports it', async t => {
    let reported!: (line: unknown) => void;
    const errors = t.mock.method(console, 'error', (line: unknown) => reported(line));
    const hooks = [
      () => {
        throw new Error('the hook broke');
      },
      () => Promise.reject(new Error('the hook broke later')),
    ];
    const parts = await withReply({ backend: { onFeedback: () => hooks.shift()!() } });
    for (const cause of ['the hook broke', 'the hook broke later']) {
      const line = new Promise(resolve => (reported = resolve));
      assert.equal((await parts.feedback({ score: 1 })).status, 200, 'kept and answered');
      assert.match(
        String(await line),
        new RegExp(`^persona-chat backend: the onFeedback hook failed: Error: ${cause}$`),
      );
    }
    assert.equal(errors.mock.callCount(), 2, 'each reported once');
  });

  it('limits the feedback a user gives to 30 a minute', async () => {
    const parts = await withReply({ backend: { limits: { feedbackPerUserPerMinute: 2 } } });
    for (const score of [1, -1]) assert.equal((await parts.feedback({ score })).status, 200, 'within the limit');
    const writes = parts.upstream.length;
    await expectError(parts.feedback({ score: 1 }), 429, 'rate_limited');
    assert.equal(parts.upstream.length, writes, 'the service never heard of the third');
  });
});
