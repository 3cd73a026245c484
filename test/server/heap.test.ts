import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Agent, createServer, request } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, mock } from 'node:test';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  busyGrowingPercent,
  busyResponses,
  growingPercent,
  heapFlag,
  heapGrowingLeastMb,
  heapGrowingPercent,
  leanHeap,
  liveAfter,
  youngGenerationMb,
  youngGrowth,
} from '../../src/server/heap.js';

const mb = 1024 * 1024;
/** Node's own flag for the young generation: the tests of the old generation's growth leave the young one alone. */
const ownYoung = ['--semi-space-growth-factor=2'];

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

describe('liveAfter', () => {
  it('takes what a full collection left as live', () => {
    assert.equal(liveAfter(200 * mb, 30 * mb, true), 30 * mb);
    assert.equal(liveAfter(20 * mb, 300 * mb, true), 300 * mb);
  });

  it('after a young collection, takes the old generation past the least growth as live', () => {
    const least = heapGrowingLeastMb * mb;
    assert.equal(liveAfter(20 * mb, 20 * mb + least / 2, false), 20 * mb, 'within the least growth: as it was');
    assert.equal(liveAfter(20 * mb, 200 * mb, false), 200 * mb - least);
    assert.equal(liveAfter(200 * mb, 100 * mb, false), 200 * mb, 'never less than before');
  });
});

describe('youngGrowth', () => {
  it('lets the young generation double while doubling it twice keeps it in bounds', () => {
    assert.equal(youngGrowth(mb), 2);
    assert.equal(youngGrowth((youngGenerationMb / 4) * mb), 2);
    assert.equal(youngGrowth((youngGenerationMb / 4) * mb + 1), 1);
    assert.equal(youngGrowth((youngGenerationMb / 2) * mb), 1);
    assert.equal(youngGrowth(youngGenerationMb * mb), 1);
    assert.equal(youngGrowth(4 * youngGenerationMb * mb), 1, 'past its bounds, as V8 may leave it: not grown more');
  });
});

describe('leanHeap', () => {
  it('sets the growth again after each collection, for what is live', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;
    const set = mock.method(v8, 'setFlagsFromString');
    const flags = () => set.mock.calls.map(call => call.arguments[0]);
    const percent = () => Number(/^--heap-growing-percent=(\d+)$/.exec(flags().at(-1)!)![1]);
    /** Collects, and waits for the observer to hear of it. */
    const collect = async (type: 'minor' | 'major') => {
      const heard = set.mock.callCount();
      // A full collection as gc() makes it: on Node 20, gc({ type: 'major' }) left the arrays below once let go.
      if (type === 'minor') gc({ type });
      else gc();
      for (let turn = 0; turn < 50 && set.mock.callCount() === heard; turn++)
        await new Promise(resolve => setTimeout(resolve, 10));
    };
    const heap = leanHeap(ownYoung);
    let held: number[][] | undefined;
    try {
      assert.equal(flags().length, 1);
      await collect('major');
      assert.ok(percent() > heapGrowingPercent, 'a small heap grows by the least');
      // The old generation grows past what was live by more than the least, before any full collection.
      held = Array.from({ length: 240 }, () => new Array<number>(100_000).fill(0.5));
      await collect('minor');
      assert.equal(percent(), heapGrowingPercent, 'a heap that grows fast grows by a quarter');
      await collect('major');
      assert.equal(percent(), heapGrowingPercent, 'several times the least live: a quarter');
      assert.equal(held.length, 240);
      held = undefined;
      await collect('major');
      assert.ok(percent() > heapGrowingPercent, 'small again, it grows by the least again');
    } finally {
      heap.stop();
      set.mock.restore();
      v8.setFlagsFromString('--heap-growing-percent=0');
    }
    const heard = set.mock.callCount();
    gc();
    await new Promise(resolve => setTimeout(resolve, 50));
    assert.equal(set.mock.callCount(), heard, 'stopped, it sets nothing more');
    assert.equal(held, undefined);
  });

  it('lets a busy server’s heap grow by a tenth, however small, until it is quiet again', async () => {
    const set = mock.method(v8, 'setFlagsFromString');
    const percent = () => Number(/^--heap-growing-percent=(\d+)$/.exec(set.mock.calls.at(-1)!.arguments[0])![1]);
    const heap = leanHeap(ownYoung);
    // Responses held open until told, as replies are.
    const held: ServerResponse[] = [];
    const server = createServer((_request, response) => {
      response.writeHead(200).write('open');
      held.push(response);
    });
    const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
    try {
      await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      heap.watch(server);
      assert.ok(percent() > heapGrowingPercent, 'the heap of a test is small');
      const open = (count: number) =>
        Promise.all(
          Array.from(
            { length: count },
            () =>
              new Promise<IncomingMessage>((resolve, reject) =>
                request({ port, host: '127.0.0.1', agent }, resolve).on('error', reject).end(),
              ),
          ),
        );
      const first = await open(busyResponses - 1);
      assert.ok(percent() > heapGrowingPercent, 'one short of busy');
      const last = await open(1);
      assert.equal(percent(), busyGrowingPercent, 'busy');
      // Quiet again once fewer than half as many are open.
      const closing = (count: number) =>
        Promise.all(
          held.splice(0, count).map(response => new Promise(resolve => response.once('close', resolve).end())),
        );
      await closing(busyResponses / 2);
      assert.equal(percent(), busyGrowingPercent, 'half as many open: still busy');
      await closing(1);
      assert.ok(percent() > heapGrowingPercent, 'quiet');
      for (const message of [...first, ...last]) message.resume();
    } finally {
      for (const response of held) response.end();
      heap.stop();
      set.mock.restore();
      v8.setFlagsFromString('--heap-growing-percent=0');
      agent.destroy();
      server.closeAllConnections();
      await new Promise(resolve => server.close(resolve));
    }
  });

  it('keeps the young generation within its bounds, unless node was given its own size', () => {
    // A process of its own, whose young generation nothing else has grown: it keeps many objects for a while, as
    // requests waiting for the service do, which V8 answers by growing the young generation.
    const script = `
      const v8 = await import('node:v8');
      const { leanHeap } = await import(${JSON.stringify(new URL('../../src/server/heap.ts', import.meta.url).href)});
      leanHeap();
      const young = () => v8.getHeapSpaceStatistics().find(space => space.space_name === 'new_space').space_size;
      let kept = [];
      let most = 0;
      for (let round = 0; round < 200; round++) {
        for (let i = 0; i < 20000; i++) kept.push({ i, text: 'text ' + i });
        if (kept.length > 200000) kept = kept.slice(100000);
        most = Math.max(most, young());
        await new Promise(resolve => setImmediate(resolve));
      }
      process.stdout.write(String(most));`;
    const most = (nodeFlags: string[]) => {
      const result = spawnSync(
        process.execPath,
        [...nodeFlags, '--import', 'tsx', '--input-type=module', '--eval', script],
        { encoding: 'utf8', timeout: 60_000 },
      );
      assert.equal(result.status, 0, result.stderr);
      return Number(result.stdout) / mb;
    };
    const kept = most([]);
    assert.ok(kept <= youngGenerationMb, `${kept} MB`);
    const own = most(ownYoung);
    assert.ok(own > 2 * youngGenerationMb, `node's own flag: V8 grows it as it would (${own} MB)`);
  });
});
