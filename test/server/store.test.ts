import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryStore } from '../../src/server/store.js';
import { record, storeSuite, window } from './store-suite.js';

/** A store whose clock the test moves. */
function clocked() {
  let now = 1_000_000;
  const store = new MemoryStore({ now: () => now });
  return { store, advance: async (ms: number) => void (now += ms), twin: async () => store };
}

storeSuite('MemoryStore', async () => clocked(), 100);

describe('MemoryStore alone', () => {
  it('keeps its size bounded', async () => {
    const store = new MemoryStore({ maxEntries: 100 });
    for (let i = 0; i < 1000; i++) await store.hit(`k${i}`, 60_000);
    for (let i = 0; i < 1000; i++) await store.createRun(`r${i}`, record(`k${i}`, `c${i}`), window);
    assert.equal(await store.getRun('r0'), undefined, 'the oldest runs went first');
    assert.ok(await store.getRun('r999'), 'the newest run is kept');
  });
});
