// Browser tests: real Chromium, with the real emulator mounted in the test server at /emulator, so browser code
// crosses the real wire. Run through `node --import tsx` (see package.json) so this file can load the TypeScript
// sources of the emulator.
import { esbuildPlugin } from '@web/dev-server-esbuild';
import { chromeLauncher } from '@web/test-runner-chrome';
import { getRequestListener } from '@hono/node-server';
import { createEmulator } from './src/emulator/app.ts';
import { chromiumFlags, findChromium } from './test/support/chromium.mjs';

const executablePath = findChromium();

/** The API key of the emulator the browser tests reach. Test-only: the product never puts a key in a browser. */
export const browserTestApiKey = 'browser-test-key';
const emulator = createEmulator({ apiKey: browserTestApiKey });
const emulatorListener = getRequestListener(request => emulator.fetch(request));

export default {
  files: ['test/element/**/*.test.ts'],
  nodeResolve: { exportConditions: ['development'] },
  plugins: [esbuildPlugin({ ts: true, target: 'es2022', tsconfig: './tsconfig.json' })],
  browsers: [chromeLauncher({ launchOptions: { executablePath, headless: true, args: chromiumFlags } })],
  concurrency: 1,
  testFramework: { config: { timeout: 10_000 } },
  middleware: [
    async function emulatorMiddleware(ctx, next) {
      if (!ctx.path.startsWith('/emulator/')) return next();
      ctx.respond = false;
      ctx.req.url = ctx.req.url.slice('/emulator'.length);
      await emulatorListener(ctx.req, ctx.res);
    },
  ],
};
