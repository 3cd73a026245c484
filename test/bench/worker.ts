// The Worker's weight: the README's Worker example bundled as wrangler would (esbuild, minified, neutral platform;
// see test/support/worker-bundle.ts), as rows of the backend table.
import { bundleForWorkers, workerBudget } from '../support/worker-bundle.js';

export async function workerBundleRows(): Promise<Record<string, unknown>[]> {
  const { bytes, gzipBytes, byPackage } = await bundleForWorkers('examples/worker/src/index.ts');
  const kb = (n: number) => (n / 1024).toFixed(1);
  return [
    {
      path: `Worker bundle of the README example (budget ${kb(workerBudget.bytes)} / ${kb(workerBudget.gzipBytes)} KB)`,
      'bundle min KB': kb(bytes),
      'bundle gzip KB': kb(gzipBytes),
    },
    ...Object.entries(byPackage)
      .sort((a, b) => b[1] - a[1])
      .map(([name, size]) => ({ path: `… of which ${name}`, 'bundle min KB': kb(size) })),
  ];
}
