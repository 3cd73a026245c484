import assert from 'node:assert/strict';
import { getEventListeners, once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ServiceClient } from '../../src/service/client.js';
import { createNodeFetch } from '../../src/service/node-fetch.js';

/** A server whose routes are the tests' own; it notes each request's headers, body and client port. */
function serve(routes: Record<string, (req: IncomingMessage, res: ServerResponse, body: string) => void>) {
  const seen: { path: string; headers: IncomingMessage['headers']; body: string; port: number }[] = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const piece of req) body += String(piece);
    seen.push({ path: req.url!, headers: req.headers, body, port: req.socket.remotePort! });
    const route =
      routes[req.url!] ?? ((_req, res) => res.writeHead(404, { 'content-type': 'application/json' }).end('{}'));
    route(req, res, body);
  });
  return {
    seen,
    server,
    url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  };
}

describe('the Node transport', () => {
  let release: () => void = () => {};
  const site = serve({
    '/echo': (req, res, body) => {
      res.writeHead(201, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'], 'x-request-id': 'r1' });
      res.end(JSON.stringify({ method: req.method, body }));
    },
    '/stream': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      release = () => res.end('data: two\n\n');
    },
    '/pieces': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Three HTTP chunks in one write of the socket.
      res.socket!.cork();
      for (const word of ['One ', 'two ', 'three.']) res.write(word);
      res.socket!.uncork();
      release = () => res.end();
    },
    '/hang': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('part');
    },
    '/cut': (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '100' });
      res.write('not all of it', () => res.socket!.destroy());
    },
    '/moved': (_req, res) => res.writeHead(302, { location: 'https://elsewhere.example/' }).end('moved'),
    '/empty': (_req, res) => res.writeHead(204).end(),
    // Answers nothing until the client gives up.
    '/silent': () => {},
  });
  const nodeFetch = createNodeFetch();

  before(async () => {
    site.server.listen(0, '127.0.0.1');
    await once(site.server, 'listening');
  });
  after(() => {
    nodeFetch.close();
    site.server.closeAllConnections();
    site.server.close();
  });

  it('sends the body with its length and gives the status, headers and body back', async () => {
    const res = await nodeFetch(`${site.url()}/echo`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', 'x-svc-api-key': 'k' },
      body: JSON.stringify({ message: 'héllo' }),
    });
    assert.equal(res.status, 201);
    assert.equal(res.ok, true);
    assert.equal(res.headers.get('x-request-id'), 'r1');
    assert.deepEqual(res.headers.getSetCookie(), ['a=1', 'b=2'], 'every value of a repeated header');
    assert.deepEqual(await res.json(), { method: 'PATCH', body: '{"message":"héllo"}' });
    const request = site.seen.at(-1)!;
    assert.equal(request.headers['content-length'], String(Buffer.byteLength('{"message":"héllo"}')));
    assert.equal(request.headers['x-svc-api-key'], 'k');
  });

  it('keeps the connection for the next request', async () => {
    await (await nodeFetch(`${site.url()}/echo`)).text();
    await (await nodeFetch(`${site.url()}/echo`)).text();
    const [a, b] = site.seen.slice(-2);
    assert.equal(a!.port, b!.port, 'the same client port: the same connection');
  });

  it('hands on the body as it comes', async () => {
    const res = await nodeFetch(`${site.url()}/stream`);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    assert.equal(decoder.decode((await reader.read()).value), 'data: one\n\n', 'before the response ends');
    release();
    let rest = '';
    for (let next = await reader.read(); !next.done; next = await reader.read()) rest += decoder.decode(next.value);
    assert.equal(rest, 'data: two\n\n');
  });

  it('hands on the pieces that came in one read as one', async () => {
    const res = await nodeFetch(`${site.url()}/pieces`);
    const reader = res.body!.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), 'One two three.');
    release();
    assert.equal((await reader.read()).done, true);
  });

  it('ends the body with the signal’s reason when the caller aborts, and rejects when aborted before', async () => {
    const controller = new AbortController();
    const res = await nodeFetch(`${site.url()}/hang`, { signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort(new Error('the call is over'));
    await assert.rejects(reader.read(), /the call is over/);
    await assert.rejects(
      nodeFetch(`${site.url()}/echo`, { signal: AbortSignal.abort(new Error('too late')) }),
      /too late/,
    );
  });

  it('rejects with the signal’s reason when the caller aborts before the answer', async () => {
    const controller = new AbortController();
    const answer = nodeFetch(`${site.url()}/silent`, { signal: controller.signal });
    while (site.seen.at(-1)?.path !== '/silent') await new Promise(resolve => setImmediate(resolve));
    controller.abort(new Error('no answer needed'));
    await assert.rejects(answer, /no answer needed/);
  });

  it('takes its listener off the signal once the response is over', async () => {
    const controller = new AbortController();
    const res = await nodeFetch(`${site.url()}/echo`, { signal: controller.signal });
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1, 'watched while the body is read');
    await res.text();
    while (getEventListeners(controller.signal, 'abort').length) await new Promise(resolve => setImmediate(resolve));
  });

  it('answers with the runtime’s own Response when a framework put a stand-in in its place', async () => {
    const own = globalThis.Response;
    class StandIn extends own {}
    globalThis.Response = StandIn;
    try {
      const res = await nodeFetch(`${site.url()}/echo`);
      assert.equal(Object.getPrototypeOf(res), own.prototype);
      assert.equal((await res.json()).method, 'GET');
    } finally {
      globalThis.Response = own;
    }
  });

  it('fails the body that the connection cuts short', async () => {
    const res = await nodeFetch(`${site.url()}/cut`);
    await assert.rejects(res.text());
  });

  it('answers a redirect as it is, and an empty response with no body', async () => {
    const moved = await nodeFetch(`${site.url()}/moved`);
    assert.equal(moved.status, 302);
    assert.equal(moved.headers.get('location'), 'https://elsewhere.example/');
    await moved.body?.cancel();
    const empty = await nodeFetch(`${site.url()}/empty`);
    assert.equal(empty.status, 204);
    assert.equal(empty.body, null);
  });

  it('rejects when the service cannot be reached', async () => {
    const closed = createServer();
    closed.listen(0, '127.0.0.1');
    await once(closed, 'listening');
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/`;
    closed.close();
    await assert.rejects(nodeFetch(url), (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED');
  });

  it('is what the client uses on Node when it is given no transport', async () => {
    const client = new ServiceClient({ baseUrl: site.url(), apiKey: 'k' });
    try {
      await assert.rejects(client.getConversation('c1'), { status: 404 });
      const request = site.seen.at(-1)!;
      assert.equal(request.headers['x-svc-api-key'], 'k');
      // Node's fetch adds headers of its own (sec-fetch-mode, user-agent, accept-language): this sends only ours.
      assert.deepEqual(Object.keys(request.headers).sort(), ['accept', 'connection', 'host', 'x-svc-api-key']);
    } finally {
      client.close();
    }
  });
});
