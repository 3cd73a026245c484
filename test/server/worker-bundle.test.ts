import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bundleForWorkers } from '../support/worker-bundle.js';

describe('a Workers bundle', () => {
  for (const [name, entry] of [
    ["the README's Worker example (the backend)", 'test/server/examples/worker.ts'],
    ['persona-chat/service', 'src/service/index.ts'],
  ] as const) {
    it(`of ${name} imports no Node module at load; node:http2 only when HTTP/2 delivery runs`, async () => {
      const bundle = await bundleForWorkers(entry);
      assert.deepEqual(
        bundle.nodeImports.filter(i => i.kind !== 'dynamic-import'),
        [],
        'no static import of a Node module',
      );
      assert.deepEqual(bundle.nodeImports, [{ path: 'node:http2', kind: 'dynamic-import' }]);
    });
  }
});
