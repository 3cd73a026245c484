import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  citationBounds,
  citationsOf,
  compactCitations,
  feedbackBounds,
  feedbackOf,
  newest,
  outcomeBounds,
  outcomesOf,
  withCitations,
  withFeedback,
  withOutcome,
} from '../../src/server/annotations.js';
import type { KeptCitations, StoredFeedback } from '../../src/server/annotations.js';

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
const thumbs = (second: number, comments?: string): StoredFeedback => ({
  feedbackId: crypto.randomUUID(),
  score: 1,
  tags: [],
  timestamp: at(second),
  ...(comments ? { comments } : {}),
});

describe('newest', () => {
  it('keeps the newest entries by their timestamp, whatever the order of the keys, oldest first', () => {
    const entries = {
      c: { timestamp: at(3) },
      a: { timestamp: at(1) },
      d: { timestamp: 'never' },
      b: { timestamp: at(2) },
    };
    assert.deepEqual(Object.keys(newest(entries, { entries: 2, bytes: 1024 })), ['b', 'c']);
    assert.deepEqual(
      Object.keys(newest(entries, { entries: 10, bytes: 1024 })),
      ['d', 'a', 'b', 'c'],
      'no time is oldest',
    );
  });

  it('keeps as many as fit the bytes, dropping the oldest', () => {
    const entries = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [`k${i}`, { timestamp: at(i), text: 'x'.repeat(100) }]),
    );
    const size = (value: object) => new TextEncoder().encode(JSON.stringify(value)).byteLength;
    const kept = newest(entries, { entries: 10, bytes: 500 });
    assert.deepEqual(Object.keys(kept), ['k7', 'k8', 'k9']);
    assert.ok(size(kept) <= 500, 'within the bytes');
    assert.ok(size({ k6: entries.k6, ...kept }) > 500, 'one more would not be');
  });
});

describe('feedback in metadata', () => {
  it('keeps the other keys, replaces a reply’s feedback, and keeps the newest 200', () => {
    let metadata: Record<string, unknown> = { client: { page: '/' }, personaChat: { other: { kept: true } } };
    for (let i = 0; i < 205; i++) metadata = withFeedback(metadata, `m${i}`, thumbs(i));
    metadata = withFeedback(metadata, 'm204', { ...thumbs(300, 'Changed my mind'), score: -1 });
    assert.deepEqual(metadata.client, { page: '/' });
    assert.deepEqual((metadata.personaChat as Record<string, unknown>).other, { kept: true });
    const views = feedbackOf(metadata);
    assert.equal(views.size, feedbackBounds.entries);
    assert.ok(!views.has('m4') && views.has('m5'), 'the oldest went first');
    assert.deepEqual(views.get('m204'), { score: -1, comment: 'Changed my mind', tags: [] });
    metadata = withFeedback(metadata, 'm204', undefined);
    assert.ok(!feedbackOf(metadata).has('m204'), 'taken back');
    assert.equal(feedbackOf(metadata).size, feedbackBounds.entries - 1, 'the others stay');
    assert.deepEqual(metadata.client, { page: '/' });
  });

  it('keeps long comments within 64 KiB of JSON', () => {
    let metadata: Record<string, unknown> = {};
    for (let i = 0; i < 200; i++) metadata = withFeedback(metadata, `m${i}`, thumbs(i, 'y'.repeat(1000)));
    const kept = (metadata.personaChat as { feedback: object }).feedback;
    assert.ok(new TextEncoder().encode(JSON.stringify(kept)).byteLength <= feedbackBounds.bytes, 'within the bytes');
    assert.ok(feedbackOf(metadata).has('m199'), 'the newest is kept');
  });

  it('reads back only what counts as feedback, whatever else the metadata holds', () => {
    const metadata = {
      personaChat: {
        feedback: {
          good: { score: -1, comments: 'Wrong size', tags: ['size', 3] },
          five: { score: 5 },
          text: 'thumbs up',
          none: null,
        },
      },
    };
    assert.deepEqual([...feedbackOf(metadata)], [['good', { score: -1, comment: 'Wrong size', tags: ['size'] }]]);
    assert.equal(feedbackOf({ personaChat: 'nothing' }).size, 0);
    assert.equal(feedbackOf(undefined).size, 0);
  });
});

describe('citations in metadata', () => {
  const cited = (passages: number, chars = 50) => [
    {
      link: 'docs/returns/1',
      index: 'docs',
      documentId: 'returns',
      fileId: '1',
      sourceContentType: 'text/markdown',
      sourceName: 'Returns',
      sourceUrl: 'https://shop.example.com/returns',
      partitions: Array.from({ length: passages }, (_, i) => ({
        text: `${i} ${'r'.repeat(chars)}`,
        relevance: 1 - i / 10,
        partitionNumber: i,
        tags: { topic: ['returns'] },
      })),
    },
    {},
  ];

  it('keeps the document, its name and link, and the start of at most 5 passages, in their places', () => {
    const [kept, empty] = compactCitations(cited(7, 400));
    assert.deepEqual(Object.keys(kept!), ['documentId', 'sourceName', 'sourceUrl', 'partitions']);
    assert.equal(kept!.partitions!.length, 5);
    assert.deepEqual(Object.keys(kept!.partitions![0]!), ['text', 'relevance']);
    assert.equal([...kept!.partitions![0]!.text].length, 301, '300 characters and the ellipsis');
    assert.ok(kept!.partitions![0]!.text.endsWith('…'), 'marked as cut');
    assert.deepEqual(empty, {}, 'an empty citation keeps its place, so footnote numbers still match');
  });

  it('keeps the newest 50 replies’ citations within 48 KiB, and a huge one without its passages', () => {
    let metadata: Record<string, unknown> = { client: { page: '/' } };
    for (let i = 0; i < 55; i++)
      metadata = withCitations(metadata, [[`m${i}`, { citations: cited(2), timestamp: at(i) }]]);
    // Several replies at once, as a delayed write keeps them.
    const later = Array.from({ length: 5 }, (_, i): [string, KeptCitations] => [
      `m${55 + i}`,
      { citations: cited(2), timestamp: at(55 + i) },
    ]);
    metadata = withCitations(metadata, later);
    let kept = citationsOf(metadata);
    assert.equal(kept.size, citationBounds.entries);
    assert.ok(!kept.has('m9') && kept.has('m10') && kept.has('m59'), 'the oldest went first');
    const huge = Array.from({ length: 50 }, () => cited(5, 400)[0]!);
    metadata = withCitations(metadata, [['huge', { citations: huge, timestamp: at(100) }]]);
    kept = citationsOf(metadata);
    assert.equal(kept.get('huge')!.length, 50, 'every source, in its place');
    assert.ok(
      kept.get('huge')!.every(c => c.partitions === undefined),
      'without passages',
    );
    const bytes = new TextEncoder().encode(JSON.stringify((metadata.personaChat as { citations: object }).citations));
    assert.ok(bytes.byteLength <= citationBounds.bytes, 'within the bytes');
    assert.deepEqual(metadata.client, { page: '/' }, 'other keys stay');
  });

  it('reads back citations in the protocol’s shape, whatever the metadata holds', () => {
    const metadata = {
      personaChat: {
        citations: {
          good: {
            timestamp: at(1),
            citations: [{ sourceName: 'Returns', partitions: [{ text: 'Thirty days.', relevance: 'high' }] }],
          },
          bad: { citations: 'none' },
          worse: 7,
        },
      },
    };
    assert.deepEqual(
      [...citationsOf(metadata)],
      [['good', [{ sourceName: 'Returns', partitions: [{ text: 'Thirty days.' }] }]]],
    );
  });
});

describe('outcomes', () => {
  it('keeps the outcome of a reply by its run key, beside the other keys of the metadata', () => {
    const metadata = { client: { page: '/tents' }, personaChat: { feedback: { m1: thumbs(1) } } };
    const kept = withOutcome(metadata, 'key-1', { status: 'failed', code: 'upstream_error', timestamp: at(2) });
    assert.deepEqual(kept.client, { page: '/tents' });
    assert.ok((kept.personaChat as { feedback: object }).feedback);
    assert.deepEqual(outcomesOf(kept).get('key-1'), { status: 'failed', code: 'upstream_error', timestamp: at(2) });
  });

  it('keeps the newest within its bounds', () => {
    let metadata: Record<string, unknown> = {};
    for (let i = 0; i < outcomeBounds.entries + 5; i++)
      metadata = withOutcome(metadata, `key-${i}`, { status: 'stopped', timestamp: at(i) });
    const kept = outcomesOf(metadata);
    assert.equal(kept.size, outcomeBounds.entries);
    assert.ok(!kept.has('key-0') && kept.has(`key-${outcomeBounds.entries + 4}`));
  });

  it('reads back only entries that are outcomes', () => {
    const metadata = {
      personaChat: {
        outcomes: {
          a: { status: 'stopped', timestamp: at(1) },
          b: { status: 'done', timestamp: at(1) },
          c: { status: 'failed', timestamp: 'yesterday' },
          d: 'stopped',
        },
      },
    };
    assert.deepEqual([...outcomesOf(metadata).keys()], ['a']);
    assert.equal(outcomesOf(undefined).size, 0);
  });
});
