import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { growingPercent, heapFlag, heapGrowingLeastMb, heapGrowingPercent, leanHeap } from '../../src/server/heap.js';

const mb = 1024 * 1024;

describe('growingPercent', () => {
  it('lets the old generation grow by a quarter of what was live, or by the least, whichever is more', () => {
    assert.equal(growingPercent(4 * heapGrowingLeastMb * mb), heapGrowingPercent, 'a quarter is the least');
    assert.equal(growingPercent(400 * mb), heapGrowingPercent);
    assert.equal(growingPercent(heapGrowingLeastMb * mb), 100);
    assert.equal(growingPercent(20 * mb), Math.ceil((100 * heapGrowingLeastMb) / 20));
    assert.equal(growingPercent(mb), 300, 'never past four times what was live');
    assert.equal(growingPercent(0), 300);
  });
});

describe('heapFlag', () => {
  it('sets the growth unless node was given its own value', () => {
    assert.equal(heapFlag(400 * mb, []), `--heap-growing-percent=${heapGrowingPercent}`);
    assert.equal(
      heapFlag(heapGrowingLeastMb * mb, ['--max-semi-space-size=4', '--import', 'tsx']),
      '--heap-growing-percent=100',
    );
    assert.equal(heapFlag(400 * mb, ['--heap-growing-percent=80']), undefined);
    assert.equal(
      heapFlag(mb, ['--heap_growing_percent=0']),
      undefined,
      'V8 takes either spelling; 0 is its own heuristics',
    );
  });
});

describe('leanHeap', () => {
  it('sets the growth again after each full collection, for what it left live', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const set = mock.method(v8, 'setFlagsFromString');
    const flags = () => set.mock.calls.map(call => call.arguments[0]);
    /** Collects in full, and waits for the observer to hear of it. */
    const collect = async () => {
      const heard = set.mock.callCount();
      gc();
      for (let turn = 0; turn < 50 && set.mock.callCount() === heard; turn++)
        await new Promise(resolve => setTimeout(resolve, 10));
    };
    const stop = leanHeap([]);
    try {
      assert.equal(flags().length, 1);
      // Several times the least live: the growth is a quarter.
      let held: number[][] | undefined = Array.from({ length: 160 }, () =>
        Array.from({ length: 100_000 }, (_, i) => i + 0.5),
      );
      await collect();
      assert.equal(flags().at(-1), `--heap-growing-percent=${heapGrowingPercent}`);
      held = undefined;
      await collect();
      assert.match(flags().at(-1)!, /^--heap-growing-percent=(\d+)$/);
      assert.ok(Number(/\d+$/.exec(flags().at(-1)!)![0]) > heapGrowingPercent, 'a small heap grows by the least');
      assert.equal(held, undefined);
    } finally {
      stop();
      set.mock.restore();
      v8.setFlagsFromString('--heap-growing-percent=0');
    }
    const heard = set.mock.callCount();
    gc();
    await new Promise(resolve => setTimeout(resolve, 50));
    assert.equal(set.mock.callCount(), heard, 'stopped, it sets nothing more');
  });
});
