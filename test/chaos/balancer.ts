/**
 * The site the browser sees: a load balancer that sends the backend's routes to the instances in turn, and serves
 * the host page and the built element from dist/ itself. Like a real one, it checks each instance's /readyz every
 * half second and prefers the ready ones; an instance that refuses the connection (it is dead) is skipped and the
 * request goes to the next one. A request whose connection was made is never sent again: its body may have reached
 * the instance. An instance that dies in the middle of a response breaks the browser's connection (no clean end).
 */
import { readFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { endToEnd, readBody } from './http.js';
import type { Instance } from './processes.js';

export interface BalancerOptions {
  instances: Instance[];
  basePath: string;
  /** The host page, served at `/`. */
  page: string;
}

export async function startBalancer({ instances, basePath, page }: BalancerOptions) {
  const ready = new Map<Instance, boolean>();
  /** The instance that took each conversation's newest message, by conversation id. */
  const servedBy = new Map<string, Instance>();
  let turn = 0;

  const probe = (instance: Instance) =>
    new Promise<boolean>(resolve => {
      if (!instance.running) return resolve(false);
      const req = httpRequest(`${instance.url}${basePath}/readyz`, { agent: false, timeout: 1000 }, res => {
        res.resume();
        resolve(res.statusCode === 200);
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(false));
      req.end();
    });
  let probing = true;
  const checks = (async () => {
    while (probing) {
      await Promise.all(instances.map(async instance => ready.set(instance, await probe(instance))));
      await new Promise(resolve => setTimeout(resolve, 500));
    }
  })();

  /** One try at one instance: `refused` when no connection was made, so that the next one can be tried. */
  const attempt = (instance: Instance, req: IncomingMessage, payload: Buffer, res: ServerResponse) =>
    new Promise<'refused' | 'answered'>(resolve => {
      let connected = false;
      const upstream = httpRequest(`${instance.url}${req.url}`, {
        method: req.method,
        headers: endToEnd(req.headers, { 'x-forwarded-for': '127.0.0.1', 'content-length': payload.length }),
        agent: false,
      });
      upstream.on('socket', socket => socket.once('connect', () => (connected = true)));
      upstream.on('response', answer => {
        res.writeHead(answer.statusCode!, endToEnd(answer.headers, { 'x-served-by': instance.name }));
        answer.pipe(res);
        // The instance went away in the middle of its answer: the browser's connection breaks as well.
        answer.on('close', () => answer.complete || res.destroy());
        resolve('answered');
      });
      upstream.on('error', error => {
        if (!connected && (error as NodeJS.ErrnoException).code === 'ECONNREFUSED') return resolve('refused');
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>502 Bad Gateway</h1>');
        else res.destroy();
        resolve('answered');
      });
      res.on('close', () => res.writableFinished || upstream.destroy());
      upstream.end(payload);
    });

  const proxy = async (req: IncomingMessage, res: ServerResponse) => {
    const payload = await readBody(req);
    const start = turn++;
    const inTurn = instances.map((_, i) => instances[(start + i) % instances.length]!);
    const order = [...inTurn.filter(i => ready.get(i)), ...inTurn.filter(i => !ready.get(i))];
    const conversation = /\/conversations\/([^/]+)\/messages$/.exec(req.url ?? '')?.[1];
    for (const instance of order) {
      if (conversation && req.method === 'POST') servedBy.set(conversation, instance);
      if ((await attempt(instance, req, payload, res)) === 'answered') return;
    }
    res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>502 Bad Gateway</h1>');
  };

  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === `${basePath}` || path.startsWith(`${basePath}/`)) {
      proxy(req, res).catch(() => res.destroy());
      return;
    }
    if (/^\/persona-chat[\w.-]*\.js$/.test(path)) {
      readFile(new URL(`../../dist/browser${path}`, import.meta.url)).then(
        file => res.writeHead(200, { 'content-type': 'text/javascript' }).end(file),
        () => res.writeHead(404).end(),
      );
      return;
    }
    if (path === '/favicon.ico') {
      res.writeHead(204).end();
      return;
    }
    if (path === '/') {
      res.writeHead(200, { 'content-type': 'text/html' }).end(page);
      return;
    }
    res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await new Promise(resolve => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    servedBy,
    /** Resolves once every instance said it is ready (or after `timeoutMs`). */
    async allReady(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const results = await Promise.all(instances.map(probe));
        if (results.every(Boolean)) return true;
        await new Promise(resolve => setTimeout(resolve, 100));
      }
      return false;
    },
    async close() {
      probing = false;
      server.closeAllConnections();
      await new Promise(resolve => server.close(resolve));
      await checks;
    },
  };
}
