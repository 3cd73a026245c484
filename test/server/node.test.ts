import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import http2 from 'node:http2';
import type { Server } from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import type { ServerType } from '@hono/node-server';
import { createEmulator } from '../../src/emulator/app.js';
import { createBackend } from '../../src/server/app.js';
import type { LogLine } from '../../src/server/config.js';
import { serveBackend } from '../../src/server/node.js';
import { startEmulator } from '../../src/emulator/node.js';
import type { RunningBackend } from '../../src/server/node.js';
import { backlogOf, parseEvents, textOfEvents, tokenSecret } from '../support/backend.js';
import { apiKey, juniper } from '../support/service.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const site = 'https://www.example.com';

function listening(server: ServerType | Server): Promise<number> {
  return new Promise((resolve, reject) => {
    if (server.listening) return resolve((server.address() as AddressInfo).port);
    server.once('error', reject);
    server.once('listening', () => resolve((server.address() as AddressInfo).port));
  });
}

/** An emulator on real HTTP/1.1 and HTTP/2 listeners that records each continue request's signal. */
async function emulatorOnSockets() {
  const emulator = createEmulator({ apiKey, pace: 100 });
  const continues: { path: string; signal: AbortSignal; ended?: number }[] = [];
  const fetch = (request: Request, env: unknown) => {
    const path = new URL(request.url).pathname;
    if (/\/(chat|continue)[-\w]*$/.test(path)) {
      const entry: (typeof continues)[number] = { path, signal: request.signal };
      request.signal.addEventListener('abort', () => (entry.ended = performance.now()));
      continues.push(entry);
    }
    return emulator.fetch(request, env);
  };
  const h1 = serve({ fetch, port: 0, hostname: '127.0.0.1' });
  const h2 = serve({ fetch, port: 0, hostname: '127.0.0.1', createServer: http2.createServer });
  const sessions = new Set<http2.ServerHttp2Session>();
  h2.on('session', (s: http2.ServerHttp2Session) => sessions.add(s));
  const [p1, p2] = await Promise.all([listening(h1), listening(h2)]);
  return {
    emulator,
    continues,
    url: `http://127.0.0.1:${p1}`,
    http2Url: `http://127.0.0.1:${p2}`,
    close: async () => {
      for (const s of sessions) s.destroy();
      await Promise.all([h1, h2].map(s => new Promise(resolve => s.close(resolve))));
    },
  };
}

/** What the widget does: a session from the site's page, a conversation, then a message. */
async function visit(url: string, base = '/persona-chat') {
  const session = await fetch(`${url}${base}/session`, {
    method: 'POST',
    headers: { origin: site, 'x-persona-chat': '1', 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(session.status, 200);
  const { token } = await session.json();
  const auth = { authorization: `Bearer ${token}`, origin: site };
  const created = await fetch(`${url}${base}/conversations`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(created.status, 201);
  const { id } = await created.json();
  const send = (message: string, signal?: AbortSignal, key: string = crypto.randomUUID()) =>
    fetch(`${url}${base}/conversations/${id}/messages`, {
      method: 'POST',
      headers: {
        ...auth,
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'idempotency-key': key,
      },
      body: JSON.stringify({ message }),
      signal,
    });
  const run = (key: string, action: 'events' | 'stop', lastEventId?: string) =>
    fetch(`${url}${base}/conversations/${id}/runs/${key}/${action}`, {
      method: action === 'stop' ? 'POST' : 'GET',
      headers: { ...auth, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    });
  return { token, id, send, run };
}

/** Reads a stream until `count` events arrived, then stops reading; returns their ids and text. */
async function readUntil(response: Response, count: number) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const ids: string[] = [];
  let text = '';
  let events = 0;
  while (events < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (block.startsWith(':')) continue;
      const id = /^id: (.*)$/m.exec(block)?.[1];
      if (id) ids.push(id);
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (/^event: delta$/m.test(block)) text += (JSON.parse(data!) as { text: string }).text;
      events++;
    }
  }
  return { ids, text };
}

describe('backend over real sockets', () => {
  let upstream: Awaited<ReturnType<typeof emulatorOnSockets>>;
  const servers: RunningBackend[] = [];

  before(async () => {
    upstream = await emulatorOnSockets();
    for (const delivery of ['sse', 'http2'] as const) {
      const backend = createBackend({
        serviceUrl: upstream.url,
        http2ServiceUrl: upstream.http2Url,
        delivery,
        apiKey,
        personaId: juniper.personaId,
        tokenSecret,
        allowedOrigins: [site],
        basePath: '/persona-chat',
        log: () => {},
      });
      servers.push(await serveBackend(backend, { port: 0 }));
    }
  });
  after(async () => {
    await Promise.all(servers.map(s => s.close()));
    await upstream.close();
  });

  for (const [i, delivery] of ['sse', 'http2'].entries()) {
    it(`streams a reply from an ${delivery} upstream to the browser as SSE`, async () => {
      const { send, id } = await visit(servers[i]!.url);
      const res = await send('Do you rent tents?');
      assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
      assert.equal(res.headers.get('content-encoding'), null);
      const list = parseEvents(await res.text());
      assert.equal(list[0]!.event, 'meta');
      assert.equal(list.at(-1)!.event, 'done');
      assert.match(textOfEvents(list), /tents from \$18/);
      assert.equal(upstream.continues.at(-1)!.path.split('/').at(-1), delivery === 'sse' ? 'chat-sse' : 'chat-http2');
      assert.equal(upstream.emulator.store.get(id)!.chatMessagesCount, 2);
    });

    it(`keeps reading the ${delivery} upstream when the browser goes away, and follows on after Last-Event-ID`, async () => {
      const { send, run, id } = await visit(servers[i]!.url);
      const controller = new AbortController();
      const key = crypto.randomUUID();
      const res = await send('How do I return a tent?', controller.signal, key);
      const seen = await readUntil(res, 3);
      controller.abort();
      const entry = upstream.continues.at(-1)!;
      // The service request ends once the reply is whole, never before: what the service holds when it ends says.
      assert.equal(entry.ended, undefined, 'the service is still read');
      let heldAtEnd: number | undefined;
      entry.signal.addEventListener('abort', () => (heldAtEnd = upstream.emulator.store.get(id)!.chatMessagesCount));
      const lastId = seen.ids.at(-1)!;
      const rest = await run(key, 'events', lastId);
      assert.equal(rest.status, 200);
      const text = await rest.text();
      assert.ok(heldAtEnd === undefined || heldAtEnd === 2, `the service request ended early (${heldAtEnd})`);
      const list = parseEvents(text);
      assert.deepEqual(list[0], { event: 'meta', data: { conversationId: id, key, attempt: 1, ping: 15_000 } });
      assert.equal(list.at(-1)!.event, 'done');
      const stored = upstream.emulator.store.get(id)!.chatMessages!;
      assert.equal(seen.text + textOfEvents(list), stored[1]!.content, 'no text lost or repeated');
      assert.equal(upstream.continues.filter(c => c.path.includes(id)).length, 1);
    });

    it(`stops a ${delivery} reply from another request, ending the service call`, async () => {
      const { send, run } = await visit(servers[i]!.url);
      const key = crypto.randomUUID();
      const res = await send('How do I return a tent?', undefined, key);
      const reading = res.text();
      const answer = await run(key, 'stop');
      assert.equal(answer.status, 202);
      assert.deepEqual(await answer.json(), { key, status: 'stopping' });
      const entry = upstream.continues.at(-1)!;
      for (let waited = 0; !entry.ended && waited < 10_000; waited += 20) await new Promise(r => setTimeout(r, 20));
      assert.ok(entry.ended, 'the emulator saw its request end');
      const list = parseEvents(await reading);
      const done = list.at(-1)!;
      assert.equal(done.event === 'done' && done.data.finishReason, 'stopped');
      assert.equal((await run(key, 'stop')).status, 409, 'a finished run cannot be stopped again');
    });
  }
  it('writes a reply’s headers to the socket together with its first event', async () => {
    const port = Number(new URL(servers[0]!.url).port);
    const { send } = await visit(servers[0]!.url);
    // What the server hands its sockets, one entry per write: a socket's `_write` and `_writev` are the stream
    // implementation's, each one write to the connection.
    type Chunks = { chunk: Buffer | string }[];
    const socket = net.Socket.prototype as unknown as {
      _write(chunk: Buffer | string, encoding: string, callback: () => void): void;
      _writev(chunks: Chunks, callback: () => void): void;
    };
    const { _write, _writev } = socket;
    const writes: string[] = [];
    const ours = (of: net.Socket) => of.localPort === port;
    socket._write = function (this: net.Socket, chunk, encoding, callback) {
      if (ours(this)) writes.push(String(chunk));
      return _write.call(this, chunk, encoding, callback);
    };
    socket._writev = function (this: net.Socket, chunks, callback) {
      if (ours(this)) writes.push(chunks.map(({ chunk }) => String(chunk)).join(''));
      return _writev.call(this, chunks, callback);
    };
    try {
      const list = parseEvents(await (await send('Do you rent tents?')).text());
      assert.equal(list.at(-1)!.event, 'done');
    } finally {
      Object.assign(socket, { _write, _writev });
    }
    const [head] = writes[0]!.split('\r\n\r\n');
    assert.match(head!, /^HTTP\/1\.1 200 OK\r\n/);
    // The headers the middleware adds go in the same write: the site's origin, the request's id.
    assert.match(head!, /\r\ncontent-type: text\/event-stream; charset=utf-8\r\n/i);
    assert.match(head!, /\r\naccess-control-allow-origin: https:\/\/www\.example\.com\r\n/i);
    assert.match(head!, /\r\nx-request-id: [\w-]+\r\n/i);
    assert.match(head!, /\r\ntransfer-encoding: chunked(\r\n|$)/i);
    assert.match(writes[0]!, /\r\n\r\n[0-9a-f]+\r\nevent: meta\ndata: \{/, 'the headers went out with the meta event');
    assert.match(writes.join(''), /\r\n0\r\n\r\n$/, 'the stream ended as a chunked body ends');
  });

  it('answers every request on a kept-alive connection after refusing a body that is too large', async () => {
    const url = `${servers[0]!.url}/persona-chat`;
    const { token } = await visit(servers[0]!.url);
    const big = 'x'.repeat(2 * 1024 * 1024);
    // Each request goes on the connection the one before it left. A connection reused after a refused body breaks
    // in one round out of two to four, so 30 rounds see it. Odd rounds send the body without a Content-Length.
    for (let round = 0; round < 30; round++) {
      const refused = await fetch(`${url}/session`, {
        method: 'POST',
        headers: { origin: site, 'x-persona-chat': '1', 'content-type': 'application/json' },
        body: round % 2 ? new Blob([big]).stream() : big,
        duplex: 'half',
      } as RequestInit);
      assert.equal(refused.status, 413, `round ${round}`);
      assert.equal((await refused.json()).error.code, 'payload_too_large');
      const list = await fetch(`${url}/conversations`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(list.status, 200, `round ${round}`);
      assert.equal((await list.json()).next, null);
    }
  });
});

/**
 * A reverse proxy in front of `target` that, while `cutAfterBytes` is set, passes that many bytes of a streamed reply
 * and then ends the response cleanly (a final empty chunk, as a proxy or load balancer that closes rather than
 * resets does), ending its own request to the service.
 */
async function cleanlyCuttingProxy(target: string) {
  const state = { cutAfterBytes: 0, cuts: 0 };
  const server = http.createServer((req, res) => {
    const upstream = http.request(new URL(req.url!, target), { method: req.method, headers: req.headers }, answer => {
      res.writeHead(answer.statusCode!, answer.headers);
      const limit = /\/chat-sse$/.test(req.url!) ? state.cutAfterBytes : 0;
      if (!limit) return answer.pipe(res);
      let sent = 0;
      answer.on('data', (piece: Buffer) => {
        if (sent >= limit) return;
        res.write(piece.subarray(0, limit - sent));
        sent += piece.length;
        if (sent < limit) return;
        state.cuts++;
        res.end();
        upstream.destroy();
      });
      answer.on('end', () => res.end());
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  const port = await listening(server);
  return { state, url: `http://127.0.0.1:${port}`, close: () => new Promise(resolve => server.close(resolve)) };
}

describe('a proxy between the backend and the service that ends a reply cleanly in its middle', () => {
  it('ends the reply with a retryable error, never as done, and a Retry asks the service once more', async () => {
    const upstream = await emulatorOnSockets();
    const proxy = await cleanlyCuttingProxy(upstream.url);
    const backend = createBackend({
      serviceUrl: proxy.url,
      apiKey,
      personaId: juniper.personaId,
      tokenSecret,
      allowedOrigins: [site],
      basePath: '/persona-chat',
      log: () => {},
    });
    const server = await serveBackend(backend, { port: 0 });
    try {
      const { send, id } = await visit(server.url);
      const key = crypto.randomUUID();
      proxy.state.cutAfterBytes = 600;
      const cut = parseEvents(await (await send('How do I return a tent?', undefined, key)).text());
      assert.equal(proxy.state.cuts, 1, 'the proxy ended the reply in its middle');
      assert.ok(textOfEvents(cut).length > 0, 'some text came before the end');
      assert.deepEqual(cut.at(-1), {
        event: 'error',
        data: { code: 'interrupted', message: 'The reply was interrupted before it was complete.', retryable: true },
      });
      assert.ok(!cut.some(event => event.event === 'done'), 'never done');

      proxy.state.cutAfterBytes = 0;
      const again = parseEvents(await (await send('How do I return a tent?', undefined, key)).text());
      assert.equal(again.at(-1)!.event, 'done');
      const stored = upstream.emulator.store.get(id)!.chatMessages!;
      assert.deepEqual(
        stored.map(m => m.role),
        ['user', 'assistant'],
        'the service keeps the message once, with its whole reply',
      );
      assert.equal(textOfEvents(again), stored[1]!.content);
      assert.equal(upstream.continues.filter(c => c.path.includes(id)).length, 2);
    } finally {
      await server.close();
      await proxy.close();
      await upstream.close();
    }
  });
});

describe('listening', () => {
  const somaxconn = async () =>
    Number((await readFile('/proc/sys/net/core/somaxconn', 'utf8').catch(() => '4096')).trim());
  const backend = () =>
    createBackend({
      serviceUrl: 'http://127.0.0.1:9',
      apiKey,
      personaId: juniper.personaId,
      tokenSecret,
      allowedOrigins: [site],
      log: () => {},
    });

  it('takes the backlog it is given, and a large one by default, for the backend and the emulator', async t => {
    const given = await serveBackend(backend(), { backlog: 7 });
    const usual = await serveBackend(backend());
    const emulator = await startEmulator({ apiKey, backlog: 9 });
    try {
      const port = (url: string) => Number(new URL(url).port);
      const seen = backlogOf(port(given.url));
      if (seen === undefined) return t.skip('ss is not available to read the backlog');
      assert.equal(seen, 7, 'the backlog given');
      assert.equal(backlogOf(port(usual.url)), Math.min(4096, await somaxconn()), '4096, or the kernel limit below it');
      assert.equal(backlogOf(port(emulator.url)), 9, 'the emulator’s HTTP/1.1 listener');
      assert.equal(backlogOf(port(emulator.http2Url)), 9, 'the emulator’s HTTP/2 listener');
    } finally {
      await Promise.all([given.close(), usual.close(), emulator.close()]);
    }
  });
});

describe('a client that goes away', () => {
  it('is logged as client_closed when it leaves /session mid-request, not as our failure', async () => {
    let reached = () => {};
    const reachedRoute = new Promise<void>(resolve => (reached = resolve));
    let logged: (line: LogLine) => void = () => {};
    const line = new Promise<LogLine>(resolve => (logged = resolve));
    const running = await serveBackend(
      createBackend({
        serviceUrl: 'http://127.0.0.1:9',
        apiKey,
        personaId: juniper.personaId,
        tokenSecret,
        allowedOrigins: [site],
        basePath: '/persona-chat',
        // Asked for by the session route before it reads the body: the request has reached it.
        clientIp: () => {
          reached();
          return '127.0.0.1';
        },
        log: logged,
      }),
    );
    try {
      const request = http.request(`${running.url}/persona-chat/session`, {
        method: 'POST',
        headers: { origin: site, 'x-persona-chat': '1', 'content-type': 'application/json', 'content-length': '100' },
      });
      request.on('error', () => {});
      request.write('{"personaId":');
      await reachedRoute;
      request.destroy();
      const { status, level, code, detail } = await line;
      assert.deepEqual(
        { status, level, code, detail },
        { status: 499, level: 'warn', code: 'client_closed', detail: undefined },
      );
    } finally {
      await running.close();
    }
  });
});

describe('mounting', () => {
  let upstream: Awaited<ReturnType<typeof emulatorOnSockets>>;
  before(async () => {
    upstream = await emulatorOnSockets();
    upstream.emulator.faults.set({});
    Object.assign(process.env, {
      PERSONA_CHAT_SERVICE_URL: upstream.url,
      PERSONA_CHAT_API_KEY: apiKey,
      PERSONA_CHAT_PERSONA_ID: juniper.personaId,
      PERSONA_CHAT_TOKEN_SECRET: tokenSecret,
      PERSONA_CHAT_ALLOWED_ORIGIN: site,
      PORT: '0',
    });
  });
  after(() => upstream.close());

  // The README's other integration examples are in examples/, checked against it by test/examples.test.ts.
  const examples = {
    'node-http': './examples/node-http.js',
    express: '../../examples/express/server.js',
  };

  it('shows the node:http example in the README exactly as it is tested', async () => {
    const readme = await readFile(`${root}README.md`, 'utf8');
    const code = await readFile(new URL('./examples/node-http.ts', import.meta.url), 'utf8');
    assert.ok(readme.includes('```ts\n' + code + '```'), 'README shows examples/node-http.ts');
  });

  for (const name of ['node-http', 'express'] as const) {
    it(`serves the backend from the ${name} example, and leaves the rest of the site alone`, async () => {
      const { default: server } = (await import(examples[name])) as { default: Server };
      try {
        const url = `http://127.0.0.1:${await listening(server)}`;
        const { send } = await visit(url);
        const list = parseEvents(await (await send('membership')).text());
        assert.equal(list.at(-1)!.event, 'done');
        const home = await fetch(`${url}/`);
        assert.equal(home.status, name === 'express' ? 200 : 404);
        assert.equal((await fetch(`${url}/persona-chatter`)).status, 404);
      } finally {
        server.closeAllConnections();
        await new Promise(resolve => server.close(resolve));
      }
    });
  }

  it('answers through the Next.js route handlers and the Workers fetch export', async () => {
    const next = (await import('../../examples/next/app/persona-chat/[...path]/route.js')) as Record<
      string,
      (request: Request) => Promise<Response>
    >;
    const worker = (await import('../../examples/worker/src/index.js')).default;
    const env = {
      PERSONA_CHAT_SERVICE_URL: upstream.url,
      PERSONA_CHAT_API_KEY: apiKey,
      PERSONA_CHAT_PERSONA_ID: juniper.personaId,
      PERSONA_CHAT_TOKEN_SECRET: tokenSecret,
      PERSONA_CHAT_ALLOWED_ORIGIN: site,
    };
    const ctx = { waitUntil: (promise: Promise<unknown>) => void promise.catch(() => {}) };
    const handlers = [
      (request: Request) => next[request.method]!(request),
      (request: Request) => worker.fetch(request, env, ctx),
    ];
    for (const handle of handlers) {
      const session = await handle(
        new Request('https://www.example.com/persona-chat/session', {
          method: 'POST',
          headers: { origin: site, 'x-persona-chat': '1', 'content-type': 'application/json' },
          body: '{}',
        }),
      );
      assert.equal(session.status, 200);
      const { token } = await session.json();
      const preflight = await handle(
        new Request('https://www.example.com/persona-chat/conversations', {
          method: 'OPTIONS',
          headers: { origin: site, 'access-control-request-method': 'POST' },
        }),
      );
      assert.equal(preflight.headers.get('access-control-allow-origin'), site);
      const list = await handle(
        new Request('https://www.example.com/persona-chat/conversations', {
          headers: { authorization: `Bearer ${token}` },
        }),
      );
      assert.deepEqual(await list.json(), { data: [], next: null });
    }
  });
});
