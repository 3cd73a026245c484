import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bundleForWorkers, workerBudget } from '../support/worker-bundle.js';

describe('a Workers bundle', () => {
  for (const [name, entry] of [
    ["the README's Worker example (the backend)", 'examples/worker/src/index.ts'],
    ['persona-chat/service', 'src/service/index.ts'],
  ] as const) {
    it(`of ${name} imports no Node module at load; node:http2 only for HTTP/2 delivery, node:http(s) only on Node`, async () => {
      const bundle = await bundleForWorkers(entry);
      assert.deepEqual(
        bundle.nodeImports.filter(i => i.kind !== 'dynamic-import'),
        [],
        'no static import of a Node module',
      );
      assert.deepEqual(
        bundle.nodeImports.map(i => i.path).sort(),
        ['node:http', 'node:http2', 'node:https'],
        'each imported when it runs',
      );
    });
  }

  it(`of the README's Worker example stays within ${workerBudget.bytes / 1024} KiB minified, ${workerBudget.gzipBytes / 1024} KiB gzip`, async () => {
    const { bytes, gzipBytes, byPackage } = await bundleForWorkers('examples/worker/src/index.ts');
    const parts = Object.entries(byPackage)
      .sort((a, b) => b[1] - a[1])
      .map(([name, size]) => `${name} ${(size / 1024).toFixed(1)} KiB`)
      .join(', ');
    assert.ok(bytes <= workerBudget.bytes, `${bytes} bytes minified (${parts})`);
    assert.ok(gzipBytes <= workerBudget.gzipBytes, `${gzipBytes} bytes gzip (${parts})`);
  });
});
