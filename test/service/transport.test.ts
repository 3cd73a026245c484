import assert from 'node:assert/strict';
import { createServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { Transports } from '../../src/service/transport.js';

describe('the client’s transports', () => {
  it('uses the fetch it is given, and makes none of its own', async () => {
    const calls: string[] = [];
    const transports = new Transports({ fetch: async url => (calls.push(String(url)), new Response('ok')) });
    assert.equal(await (await transports.fetch('http://service.test/a')).text(), 'ok');
    assert.deepEqual(calls, ['http://service.test/a']);
    transports.close();
  });

  it('makes a kept-alive Node transport on Node when given none, and an HTTP/2 one on first use', async () => {
    // A real HTTP/2 listener (prior knowledge, cleartext), as the emulator's.
    const server = createServer((req, res) => res.end(`h2 ${req.url}`));
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const transports = new Transports({});
    try {
      const http2 = await transports.http2();
      assert.equal(await (await http2(`http://127.0.0.1:${port}/b`)).text(), 'h2 /b');
      assert.equal(await transports.http2(), http2, 'made once');
    } finally {
      transports.close();
      server.close();
    }
  });
});
