import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { computeInsights, daysOf, normalizePage, normalizeQuestion } from '../../../src/server/insights/compute.js';
import { formatInsights } from '../../../src/server/insights/index.js';
import type { ChatMessage, Conversation } from '../../../src/service/types.js';

const from = new Date('2026-03-01T00:00:00Z');
const to = new Date('2026-03-03T00:00:00Z');
const message = (
  role: string,
  content: string,
  timestamp: string | undefined,
  extra: Partial<ChatMessage> = {},
): ChatMessage => ({
  role,
  content,
  messageId: crypto.randomUUID(),
  ...(timestamp ? { timestamp } : {}),
  ...extra,
});
const conversation = (chatMessages: ChatMessage[], fields: Partial<Conversation> = {}): Conversation => ({
  conversationId: crypto.randomUUID(),
  personaId: 'p-1',
  externalUserId: 'visitor-1',
  chatMessages,
  ...fields,
});

describe('normalizeQuestion and normalizePage', () => {
  it('counts spellings of one question as one', () => {
    assert.equal(normalizeQuestion('  How do I  RETURN a tent?! '), 'how do i return a tent');
    assert.equal(normalizeQuestion('ｈｏｗ\tdo i return a tent'), 'how do i return a tent');
    assert.equal([...normalizeQuestion('a'.repeat(500))].length, 201);
  });

  it('drops the query and fragment of a page, which may name a visitor', () => {
    assert.equal(normalizePage('/checkout?email=a@example.com#step2'), '/checkout');
    assert.equal(normalizePage('https://shop.example.com/?ref=x'), 'https://shop.example.com/');
    assert.equal(normalizePage('?only=query'), '/');
    assert.equal(normalizePage(''), null);
    assert.equal(normalizePage(42), null);
  });

  it('lists every UTC day of the period', () => {
    assert.deepEqual(daysOf(new Date('2026-02-27T18:00:00Z'), new Date('2026-03-01T06:00:00Z')), [
      '2026-02-27',
      '2026-02-28',
      '2026-03-01',
    ]);
  });
});

describe('computeInsights', () => {
  it('counts a conversation once, on the day of its first message in the period', () => {
    const report = computeInsights(
      [
        conversation([
          message('user', 'before', '2026-02-28T23:59:00Z'),
          message('assistant', 'still before', '2026-02-28T23:59:59Z'),
          message('user', 'q1', '2026-03-01T10:00:00Z'),
          message('assistant', 'a1', '2026-03-01T10:00:05Z'),
          message('user', 'q2', '2026-03-02T09:00:00Z'),
          message('user', 'no time', undefined),
        ]),
      ],
      { from, to },
    );
    assert.equal(report.figures.conversations, 1);
    assert.deepEqual(
      report.days.map(d => [d.day, d.conversations, d.questions, d.replies, d.unanswered]),
      [
        ['2026-03-01', 1, 1, 1, 0],
        ['2026-03-02', 0, 1, 0, 1],
      ],
    );
    assert.equal(report.read.undated, 1);
  });

  it("counts the backend's thumbs and the service's own, each feedback once, and no deleted conversation", () => {
    const reply = message('assistant', 'a', '2026-03-01T10:00:05Z', {
      feedbacks: [
        { feedbackId: 'f-1', score: -1 },
        { feedbackId: 'f-2', score: 5 },
        { feedbackId: 'f-3', score: 0 },
      ],
    });
    const metadata = {
      personaChat: {
        feedback: {
          [reply.messageId!]: {
            feedbackId: 'f-1',
            score: -1,
            tags: [],
            timestamp: '2026-03-01T10:01:00Z',
            comments: 'no',
          },
        },
      },
    };
    const report = computeInsights(
      [
        conversation([message('user', 'q', '2026-03-01T10:00:00Z'), reply], { metadata }),
        conversation([message('user', 'q', '2026-03-01T10:00:00Z')], { conversationStatus: 'deleted' }),
        conversation([message('user', 'q', '2026-03-01T10:00:00Z')], { isDeleted: true }),
      ],
      { from, to, includeText: true },
    );
    assert.deepEqual([report.figures.thumbsUp, report.figures.thumbsDown, report.figures.upRatio], [1, 1, 0.5]);
    assert.deepEqual(
      report.thumbsDown.items.map(i => [i.comment, i.question, i.reply]),
      [['no', 'q', 'a']],
    );
    assert.deepEqual([report.figures.conversations, report.read.deleted], [1, 2]);
  });

  it('reads metadata that is not what the backend writes as nothing', () => {
    const report = computeInsights(
      [
        conversation(
          [message('user', 'q', '2026-03-01T10:00:00Z'), message('assistant', 'a', '2026-03-01T10:00:01Z')],
          {
            metadata: {
              client: 'page',
              personaChat: { feedback: [1], citations: 'x', outcomes: { k: { status: 'stopped' } } },
            },
          },
        ),
      ],
      { from, to },
    );
    assert.deepEqual([report.figures.thumbsUp, report.figures.stopped, report.unsourced.count], [0, 0, 1]);
    assert.deepEqual(report.pages, [{ page: null, conversations: 1, questions: 1 }]);
  });

  it('prices the tokens only when given a price', () => {
    const messages = [
      message('user', 'q', '2026-03-01T10:00:00Z', { promptTokens: 10, totalTokens: 10 }),
      message('assistant', 'a', '2026-03-01T10:00:01Z', { promptTokens: 400, completionTokens: 90, totalTokens: 490 }),
    ];
    assert.equal(computeInsights([conversation(messages)], { from, to }).figures.cost, null);
    const priced = computeInsights([conversation(messages)], { from, to, pricePer1K: 0.5, currency: 'EUR' });
    assert.deepEqual(
      [priced.figures.totalTokens, priced.figures.cost, priced.price],
      [500, 0.25, { per1K: 0.5, currency: 'EUR' }],
    );
    assert.throws(() => computeInsights([], { from: to, to: from }), RangeError);
  });

  it('counts the conversations whose messages the service keeps in a blob, which it cannot read', () => {
    const report = computeInsights(
      [
        conversation([], { areChatMessagesInBlob: true, chatMessagesBlobUri: 'https://blobs.example/c1' }),
        conversation([message('user', 'q', '2026-03-01T10:00:00Z')], { areChatMessagesInBlob: false }),
      ],
      { from, to },
    );
    assert.deepEqual(report.read, { listed: 2, counted: 1, deleted: 0, undated: 0, inBlob: 1 });
    assert.match(formatInsights(report, 'html'), /1 conversations keep their messages in a blob/);
    assert.match(formatInsights(report, 'csv'), /\r\nread,,,,inBlob,,,1,,\r\n/);
  });
});
