import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { heapFlag, heapGrowingPercent } from '../../src/server/heap.js';

describe('heapFlag', () => {
  it('caps the old generation’s growth unless node was given its own value', () => {
    assert.equal(heapFlag([]), `--heap-growing-percent=${heapGrowingPercent}`);
    assert.equal(
      heapFlag(['--max-semi-space-size=4', '--import', 'tsx']),
      `--heap-growing-percent=${heapGrowingPercent}`,
    );
    assert.equal(heapFlag(['--heap-growing-percent=80']), undefined);
    assert.equal(
      heapFlag(['--heap_growing_percent=0']),
      undefined,
      'V8 takes either spelling; 0 is its own heuristics',
    );
  });
});
