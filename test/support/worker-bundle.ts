/**
 * @module
 * Bundles an entry as a Workers build would (esbuild, the neutral platform, the `workerd` / `worker` / `browser`
 * conditions, minified), with node:http2, node:http and node:https the only Node modules left out of the bundle: any
 * other Node import fails the build, as it would fail on Workers, Deno or Bun without Node compatibility. Used by a test and by the bench.
 */
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

/**
 * Node modules the backend and the client may import, dynamically and only when a setting asks for them (HTTP/2
 * delivery) or on Node itself (the transport over node:http).
 */
export const optionalNodeModules = ['node:http2', 'node:http', 'node:https'];

/**
 * What the README's Worker example may weigh, bundled: measured at 144.8 KiB minified and 51 KiB gzip (zod/mini 22 KiB,
 * hono 24, jose 18, the project's own 77), with room to grow a little. Under classic zod it was 549 KiB and 129 KiB.
 */
export const workerBudget = { bytes: 146 * 1024, gzipBytes: 52 * 1024 };

export interface WorkerBundle {
  code: string;
  /** Minified bytes. */
  bytes: number;
  gzipBytes: number;
  /** Node modules the bundle imports, and how: `import-statement` (at load) or `dynamic-import` (when run). */
  nodeImports: { path: string; kind: string }[];
  /** Minified bytes in the bundle per package (`persona-chat` for the project's own files). */
  byPackage: Record<string, number>;
}

export async function bundleForWorkers(entry: string): Promise<WorkerBundle> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'neutral',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['module', 'main'],
    external: optionalNodeModules,
    tsconfig: 'tsconfig.json',
    metafile: true,
    write: false,
    outfile: 'worker.js',
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]!.text;
  const output = Object.values(result.metafile.outputs)[0]!;
  const byPackage: Record<string, number> = {};
  for (const [path, input] of Object.entries(output.inputs)) {
    const inside = path.split('node_modules/').at(-1)!;
    const name = path.includes('node_modules/')
      ? inside
          .split('/')
          .slice(0, inside.startsWith('@') ? 2 : 1)
          .join('/')
      : 'persona-chat';
    byPackage[name] = (byPackage[name] ?? 0) + input.bytesInOutput;
  }
  return {
    code,
    bytes: Buffer.byteLength(code),
    gzipBytes: gzipSync(code, { level: 9 }).length,
    nodeImports: output.imports.filter(i => i.path.startsWith('node:')).map(({ path, kind }) => ({ path, kind })),
    byPackage,
  };
}
