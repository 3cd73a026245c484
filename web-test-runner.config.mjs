// Browser tests: real Chromium, with the real backend at /persona-chat and the real emulator behind it (and at
// /emulator), so element tests cross the real protocol. Run through `node --import tsx` (see package.json) so this
// file can load the TypeScript sources of the backend and emulator.
import { createServer } from 'node:net';
import { esbuildPlugin } from '@web/dev-server-esbuild';
import { chromeLauncher } from '@web/test-runner-chrome';
import { getRequestListener } from '@hono/node-server';
import { SignJWT, decodeJwt } from 'jose';
import { createEmulator } from './src/emulator/app.ts';
import { defaultPersonas } from './src/emulator/personas.ts';
import { createBackend } from './src/server/app.ts';
import { chromiumFlags, findChromium } from './test/support/chromium.mjs';

const executablePath = findChromium();

/** A free port for the test server, so the backend can allow its exact origin. */
const port = await new Promise(resolve => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address();
    probe.close(() => resolve(port));
  });
});
const origin = `http://127.0.0.1:${port}`;

// Test-only keys: the product never puts an API key in a browser. The emulator's key is used by the service
// client smoke test, which talks to the emulator directly.
const apiKey = 'browser-test-key';
const tokenSecret = 'browser-test-secret-of-at-least-32-bytes';

const emulator = createEmulator({ apiKey, pace: 60 });
/** Every continue request the emulator received, and whether it was aborted: what tests assert on. */
const continues = [];
const upstream = async (input, init) => {
  const request = new Request(input, init);
  const path = new URL(request.url).pathname;
  if (/\/(chat|continue)[-\w]*$/.test(path)) {
    // `aborted`: the backend gave up on the request before the emulator finished answering it.
    const entry = { path, aborted: false, completed: false };
    request.signal.addEventListener('abort', () => (entry.aborted ||= !entry.completed));
    continues.push(entry);
    const response = await emulator.fetch(request);
    const body = response.body?.pipeThrough(new TransformStream({ flush: () => void (entry.completed = true) }));
    return new Response(body, response);
  }
  return emulator.fetch(request);
};
const backend = createBackend({
  serviceUrl: 'http://emulator.internal',
  fetch: upstream,
  http2Fetch: upstream,
  apiKey,
  personaId: defaultPersonas.map(p => p.personaId),
  tokenSecret,
  allowedOrigins: [origin],
  basePath: '/persona-chat',
  limits: { messagesPerUserPerMinute: 1000, messagesPerIpPerMinute: 1000, sessionsPerIpPerMinute: 1000 },
  log: () => {},
});

const emulatorListener = getRequestListener(request => emulator.fetch(request));
const backendListener = getRequestListener((request, env) => backend.fetch(request, env));

/** Routes only the tests use, to observe and steer the emulator. */
async function testSupport(ctx) {
  ctx.type = 'application/json';
  if (ctx.path === '/test-support/continues') ctx.body = JSON.stringify(continues);
  else if (ctx.path === '/test-support/reset') {
    continues.length = 0;
    emulator.faults.reset();
    ctx.body = '{}';
  } else if (ctx.path === '/test-support/expire') {
    // Stands in for time passing: a token for the same visitor whose expiry is already behind us.
    const claims = decodeJwt(ctx.query.token);
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ pid: claims.pid })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.sub)
      .setAudience(claims.aud)
      .setIssuedAt(now - 700)
      .setExpirationTime(now - 100)
      .sign(new TextEncoder().encode(tokenSecret));
    ctx.body = JSON.stringify({ token });
  } else if (ctx.path === '/test-support/csp.html') {
    // A host page with a strict policy: scripts from this origin only, no inline code, no eval, Trusted Types
    // required with only Lit's policy allowed.
    ctx.type = 'text/html';
    ctx.set(
      'Content-Security-Policy',
      "default-src 'self'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
        "object-src 'none'; base-uri 'none'; require-trusted-types-for 'script'; trusted-types lit-html",
    );
    ctx.body =
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Strict CSP host</title>' +
      '<script type="module" src="/test/element/csp-page.ts"></script></head>' +
      `<body><persona-chat endpoint="/persona-chat" mode="inline" storage="none" persona-id="${defaultPersonas[1].personaId}"></persona-chat></body></html>`;
  } else ctx.status = 404;
}

export default {
  files: ['test/element/**/*.test.ts'],
  hostname: '127.0.0.1',
  port,
  nodeResolve: { exportConditions: ['development'] },
  plugins: [esbuildPlugin({ ts: true, target: 'es2022', tsconfig: './tsconfig.json' })],
  browsers: [chromeLauncher({ launchOptions: { executablePath, headless: true, args: chromiumFlags } })],
  concurrency: 1,
  testFramework: { config: { timeout: 15_000 } },
  middleware: [
    async function mounts(ctx, next) {
      if (ctx.path.startsWith('/test-support/')) return testSupport(ctx);
      if (ctx.path.startsWith('/persona-chat')) {
        ctx.respond = false;
        return backendListener(ctx.req, ctx.res);
      }
      if (ctx.path.startsWith('/emulator/')) {
        ctx.respond = false;
        ctx.req.url = ctx.req.url.slice('/emulator'.length);
        return emulatorListener(ctx.req, ctx.res);
      }
      return next();
    },
  ],
};
