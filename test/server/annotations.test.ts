import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { feedbackBounds, feedbackOf, newest, withFeedback } from '../../src/server/annotations.js';
import type { StoredFeedback } from '../../src/server/annotations.js';

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
