import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizeCitations } from '../../src/service/citations.js';

describe('normalizeCitations', () => {
  it('keeps citations of the protocol shape as they are', () => {
    const citations = [
      {
        index: 'shop',
        documentId: 'shipping',
        sourceName: 'Shipping',
        sourceUrl: 'https://shop.example.com/help/shipping',
        partitions: [{ text: 'Orders ship in 3 to 5 days.', relevance: 0.82, partitionNumber: 0, tags: { a: ['b'] } }],
      },
    ];
    assert.deepEqual(normalizeCitations(citations), citations);
  });

  it('drops fields of the wrong type and keeps positions', () => {
    assert.deepEqual(
      normalizeCitations([
        null,
        'text',
        { sourceName: { x: 1 }, partitions: 'oops', documentId: 7 },
        { partitions: [null, { text: 'ok', relevance: 'high', partitionNumber: 1.5, tags: { t: 1, u: 'v' } }] },
      ]),
      [{}, {}, {}, { partitions: [{ text: 'ok', tags: { u: 'v' } }] }],
    );
  });

  it('gives the same citations when run again on its own output', () => {
    const once = normalizeCitations([null, { sourceName: 'A', partitions: [{ text: 't', relevance: NaN }] }, {}]);
    assert.deepEqual(normalizeCitations(once), once);
  });

  it('gives an empty list for anything but an array, and bounds what it keeps', () => {
    for (const value of [undefined, null, 'oops', 3, { length: 2 }]) assert.deepEqual(normalizeCitations(value), []);
    const many = normalizeCitations(
      Array.from({ length: 80 }, () => ({ sourceName: 'x'.repeat(5000), partitions: Array(40).fill({ text: 't' }) })),
    );
    assert.equal(many.length, 50);
    assert.equal(many[0]!.sourceName!.length, 500);
    assert.equal(many[0]!.partitions!.length, 20);
  });
});
