/**
 * The demo: the emulator, the backend pointed at it, and a small site that uses the widget exactly as a site owner
 * would (through the built script-tag file), in one process. `npm start` runs it; PERSONA_CHAT_PORT (or PORT, as
 * hosting platforms set it) picks the port (0: any free one; a busy port moves to a free one and says so). Ctrl+C
 * stops everything.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getRequestListener } from '@hono/node-server';
import { SignJWT, decodeJwt } from 'jose';
import { startEmulator } from '../src/emulator/node.js';
import { createBackend } from '../src/server/app.js';
import { stopOnSignals } from '../src/cli-support.js';

const root = fileURLToPath(new URL('.', import.meta.url));
const dist = fileURLToPath(new URL('../dist/browser/', import.meta.url));
const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
};
// The demo pages hold to the strict policy the widget is built for.
const csp =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; trusted-types lit-html";

const apiKey = randomBytes(16).toString('hex');
const tokenSecret = randomBytes(32).toString('base64');
const emulator = await startEmulator({ apiKey, pace: 14, port: 0, http2Port: 0 });
const [ada, juniper] = emulator.emulator.personas;

/** Listens on `port`; a busy port moves to a free one. */
function listen(server: ReturnType<typeof createServer>, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EADDRINUSE' || port === 0) return reject(error);
      console.log(`port ${port} is busy; using a free one`);
      resolve(listen(server, 0));
    });
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

const server = createServer();
const portSetting = process.env.PERSONA_CHAT_PORT || process.env.PORT;
const requested = portSetting === undefined || portSetting === '' ? 8080 : Number(portSetting);
const port = await listen(server, Number.isInteger(requested) && requested >= 0 ? requested : 8080);
const origins = [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
const backend = createBackend({
  serviceUrl: emulator.url,
  apiKey,
  personaId: [juniper!.personaId, ada!.personaId],
  tokenSecret,
  allowedOrigins: origins,
  basePath: '/persona-chat',
  log: () => {},
});
const backendListener = getRequestListener((request, env) => backend.fetch(request, env));

server.on('request', (req, res) => {
  handle(req, res).catch(() => {
    if (!res.headersSent) res.writeHead(400, { 'content-type': 'text/plain' });
    res.end('Bad request');
  });
});

async function handle(req: IncomingMessage, res: ServerResponse) {
  const path = decodeURIComponent(new URL(req.url ?? '/', 'http://demo').pathname);
  if (path === '/persona-chat' || path.startsWith('/persona-chat/')) return backendListener(req, res);
  if (path === '/demo-api/faults' && (req.method === 'POST' || req.method === 'DELETE' || req.method === 'GET')) {
    // The playground's fault controls, passed to the emulator's own control route.
    let body = '';
    for await (const chunk of req) body += chunk;
    const upstream = await fetch(`${emulator.url}/__emulator/faults`, {
      method: req.method,
      headers: { 'content-type': 'application/json' },
      body: req.method === 'POST' ? body : undefined,
    });
    res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
    return;
  }
  if (path === '/demo-api/expired-token') {
    // The playground's "expire the token": a token for the same visitor whose expiry is already past.
    const token = new URL(req.url ?? '/', 'http://demo').searchParams.get('token') ?? '';
    try {
      const claims = decodeJwt(token);
      const now = Math.floor(Date.now() / 1000);
      const expired = await new SignJWT({ pid: claims.pid })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(String(claims.sub))
        .setAudience('persona-chat')
        .setIssuedAt(now - 700)
        .setExpirationTime(now - 100)
        .sign(new TextEncoder().encode(tokenSecret));
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token: expired }));
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{}');
    }
    return;
  }
  const file = path === '/' ? 'index.html' : path.endsWith('/') ? `${path}index.html` : path;
  // The element's script, its classic-script build, and the chunks beside it (the other languages' strings).
  const fromDist = /^\/persona-chat[\w.-]*\.js$/.test(file);
  const full = normalize(join(fromDist ? dist : join(root, 'site'), file));
  if (!full.startsWith(fromDist ? dist : join(root, 'site'))) return res.writeHead(404).end();
  let content: Buffer;
  try {
    content = await readFile(full);
  } catch {
    res.writeHead(404, { 'content-type': 'text/plain' }).end(fromDist ? 'Run npm run build first.' : 'Not found');
    return;
  }
  res.writeHead(200, {
    'content-type': types[extname(full)] ?? 'application/octet-stream',
    'content-security-policy': csp,
  });
  res.end(content);
}

console.log(`persona-chat demo: http://127.0.0.1:${port}/`);
stopOnSignals(async () => {
  await new Promise(resolve => server.close(resolve));
  server.closeAllConnections();
  backend.close();
  await emulator.close();
});
