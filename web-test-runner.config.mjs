// Browser tests: real Chromium, with the real backend at /persona-chat and the real emulator behind it (and at
// /emulator), so element tests cross the real protocol. Run through `node --import tsx` (see package.json) so this
// file can load the TypeScript sources of the backend and emulator.
import { createServer } from 'node:net';
import { esbuildPlugin } from '@web/dev-server-esbuild';
import { chromeLauncher } from '@web/test-runner-chrome';
import { getRequestListener } from '@hono/node-server';
import { SignJWT, decodeJwt } from 'jose';
import { createEmulator } from './src/emulator/app.ts';
import { defaultPersonas, parsePersonas } from './src/emulator/personas.ts';
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

/** A persona whose documents are hostile, so its replies carry markup and links a model could be tricked into. */
const mallory = parsePersonas({
  personas: [
    {
      personaId: '0b9c7c0e-5f7a-4c55-8a0e-6d1f3b2a9c41',
      personaVersionId: '7e2d9a14-3c5b-4f6e-9a8d-2b1c0f4e5d63',
      name: 'Mallory',
      documents: [
        {
          documentId: 'hostile',
          title: 'Hostile <b onmouseover="window.__xss=1">title</b>',
          url: 'javascript:window.__xss=1',
          passages: [
            'Hostile reply test: <script>window.__xss=1</script> <img src=x onerror="window.__xss=1"> ' +
              '[click](javascript:window.__xss=1) [encoded](&#106;avascript:window.__xss=1) ' +
              '<iframe src="javascript:window.__xss=1"></iframe> <iframe srcdoc="<script>parent.__xss=1</script>"></iframe> ' +
              '![pixel](https://tracker.example/p.png?leak=secret) <a href="javascript:window.__xss=1">raw link</a> ' +
              '[data](data:text/html,<script>window.__xss=1</script>) <details open ontoggle="window.__xss=1">x</details>',
          ],
        },
      ],
    },
  ],
})[0];
const emulator = createEmulator({ apiKey, pace: 60, personas: [...defaultPersonas, mallory] });
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
  personaId: [...defaultPersonas, mallory].map(p => p.personaId),
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
