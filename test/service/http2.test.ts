import assert from 'node:assert/strict';
import { once } from 'node:events';
import { constants, createServer } from 'node:http2';
import type { ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createHttp2Fetch } from '../../src/service/http2.js';
import { until } from '../support/until.js';

describe('the HTTP/2 fetch', () => {
  // A real HTTP/2 listener (prior knowledge, cleartext), as the emulator's; each path answers its own way.
  const server = createServer();
  const sessions: unknown[] = [];
  /** The streams of /held, left open by the server until the test says. */
  const held: ServerHttp2Stream[] = [];
  let origin = '';

  server.on('session', session => sessions.push(session));
  server.on('stream', (stream, headers) => {
    const path = headers[':path'];
    if (path === '/held') {
      held.push(stream);
      stream.respond({ ':status': 200, 'content-type': 'text/plain' });
      stream.write('first piece ');
      return;
    }
    if (path === '/refuse' || path === '/unanswered') {
      stream.on('error', () => {});
      stream.close(path === '/refuse' ? constants.NGHTTP2_REFUSED_STREAM : constants.NGHTTP2_NO_ERROR);
      return;
    }
    if (headers[':method'] === 'HEAD') {
      stream.respond({ ':status': 201 }, { endStream: true });
      return;
    }
    if (path === '/empty') {
      stream.respond({ ':status': 204 });
      stream.end();
      return;
    }
    let body = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => (body += chunk));
    stream.on('end', () => {
      stream.respond({ ':status': 201, 'content-type': 'application/json', 'x-reply': ['a', 'b'] });
      stream.end(
        JSON.stringify({
          method: headers[':method'],
          path,
          scheme: headers[':scheme'],
          authority: headers[':authority'],
          key: headers['x-svc-api-key'],
          body,
        }),
      );
    });
  });

  before(async () => {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise(resolve => server.close(resolve)));

  it('sends the method, path, headers and body, and reads the status, headers and body back', async () => {
    const h2fetch = createHttp2Fetch();
    try {
      const res = await h2fetch(`${origin}/conversations/c1/chat-http2?x=1`, {
        method: 'PATCH',
        headers: { 'x-svc-api-key': 'k', 'content-type': 'application/json' },
        body: '{"message":"hi"}',
      });
      assert.equal(res.status, 201);
      assert.equal(res.headers.get('x-reply'), 'a, b');
      assert.deepEqual(await res.json(), {
        method: 'PATCH',
        path: '/conversations/c1/chat-http2?x=1',
        scheme: 'http',
        authority: new URL(origin).host,
        key: 'k',
        body: '{"message":"hi"}',
      });
    } finally {
      h2fetch.close();
    }
  });

  it('keeps one session per origin for every request, and closes it on close()', async () => {
    const h2fetch = createHttp2Fetch();
    const before = sessions.length;
    try {
      const answers = await Promise.all([1, 2, 3].map(n => h2fetch(`${origin}/n${n}`).then(res => res.json())));
      assert.deepEqual(
        answers.map(a => a.path),
        ['/n1', '/n2', '/n3'],
      );
      assert.equal(h2fetch.openSessions, 1);
      assert.equal(sessions.length - before, 1, 'the server saw one session');
      h2fetch.close();
      assert.equal(h2fetch.openSessions, 0);
      assert.equal((await h2fetch(`${origin}/again`)).status, 201, 'a new session after close()');
      assert.equal(sessions.length - before, 2);
    } finally {
      h2fetch.close();
    }
  });

  it('gives a 204 and a HEAD no body', async () => {
    const h2fetch = createHttp2Fetch();
    try {
      assert.equal((await h2fetch(`${origin}/empty`)).body, null);
      const head = await h2fetch(`${origin}/anything`, { method: 'HEAD' });
      assert.equal(head.status, 201);
      assert.equal(head.body, null);
    } finally {
      h2fetch.close();
    }
  });

  it("stops a request on its signal, failing its body with the caller's reason, and never starts an aborted one", async () => {
    const h2fetch = createHttp2Fetch();
    try {
      const controller = new AbortController();
      const res = await h2fetch(`${origin}/held`, { signal: controller.signal });
      const reader = res.body!.getReader();
      assert.equal(new TextDecoder().decode((await reader.read()).value), 'first piece ');
      const reason = new Error('the caller left');
      controller.abort(reason);
      await assert.rejects(reader.read(), reason);
      const stream = held.at(-1)!;
      await until(() => stream.closed, 'the server’s stream to close');
      assert.equal(stream.rstCode, constants.NGHTTP2_CANCEL);
      await assert.rejects(h2fetch(`${origin}/n`, { signal: controller.signal }), reason);
    } finally {
      h2fetch.close();
    }
  });

  it('fails a request the server resets or ends before it answers, and goes on with the session', async () => {
    const h2fetch = createHttp2Fetch();
    try {
      await assert.rejects(h2fetch(`${origin}/refuse`), /NGHTTP2_REFUSED_STREAM/);
      await assert.rejects(h2fetch(`${origin}/unanswered`, { method: 'POST', body: 'x' }), /closed early/);
      assert.equal((await h2fetch(`${origin}/n`)).status, 201);
      assert.equal(h2fetch.openSessions, 1);
    } finally {
      h2fetch.close();
    }
  });
});
