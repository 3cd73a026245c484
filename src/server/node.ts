/**
 * @module
 * The backend on Node: a server on node:http, and middleware for Express, Connect or a plain node:http handler.
 */
import { ServerResponse } from 'node:http';
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer, getRequestListener } from '@hono/node-server';
import type { Backend } from './app.js';

export interface ServeOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * How many connections may wait to be accepted. Default 4096 (the kernel lowers it to its own limit,
   * `net.core.somaxconn`). Node's own default, 511, is small for a server whose replies stay open: a burst of new
   * visitors past it has its connections dropped and retried by the client a second or more later, or reset.
   */
  backlog?: number;
}

/** How many connections may wait to be accepted, unless said otherwise. */
export const defaultBacklog = 4096;

export interface RunningBackend {
  backend: Backend;
  /** e.g. `http://127.0.0.1:3000`; the routes are under the backend's base path. */
  url: string;
  /** The node:http server, for what only Node can tell or tune. */
  server: Server;
  /**
   * A graceful stop: drains the backend (see `Backend.drain`) while still listening, for at least `settleMs` (the
   * time a load balancer takes to see `/readyz` say draining; new replies meanwhile are refused with
   * `server_restarting`, which the element sends elsewhere), then stops listening, lets the responses in flight end
   * for a second, and closes what is left.
   */
  drain(graceMs: number, options?: { settleMs?: number }): Promise<void>;
  /** Stops at once: the replies this instance produces end `interrupted`, connections are cut. */
  close(): Promise<void>;
}

/**
 * A response whose headers go out with the first piece of its body. Hono's Node adapter flushes a streamed body's
 * headers before the body, in a write to the socket of their own: about 6% of the backend's CPU for a short reply.
 * The backend streams only replies, and a reply's first event (`meta`) is in its body from the start, so the headers
 * leave as soon as they would have, in one write with it.
 */
class ReplyResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  override flushHeaders() {}
}

/** Serves a backend on node:http. */
export async function serveBackend(backend: Backend, options: ServeOptions = {}): Promise<RunningBackend> {
  const host = options.host ?? '127.0.0.1';
  const server = createAdaptorServer({
    fetch: (request, env) => backend.fetch(request, env),
    hostname: host,
    serverOptions: { ServerResponse: ReplyResponse },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port ?? 0, host, backlog: options.backlog ?? defaultBacklog }, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  /** Stops listening; the open connections get `ms` to end, then are cut. */
  const shut = (ms: number) =>
    new Promise<void>(resolve => {
      const http = server as Server;
      const timer = setTimeout(() => http.closeAllConnections(), ms);
      http.close(() => {
        clearTimeout(timer);
        resolve();
      });
      http.closeIdleConnections();
    });
  return {
    backend,
    server: server as Server,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    drain: async (graceMs, { settleMs = 0 } = {}) => {
      const settled = new Promise(resolve => setTimeout(resolve, settleMs));
      await backend.drain(graceMs);
      await settled;
      await shut(1000);
      backend.close();
    },
    close: () =>
      new Promise<void>(resolve => {
        server.close(() => resolve());
        if ('closeAllConnections' in server) server.closeAllConnections();
        backend.close();
      }),
  };
}

type Next = (error?: unknown) => void;

/**
 * Middleware for Express, Connect or node:http: requests under the backend's base path are answered, others go to
 * `next`. Mount it before any body parser, at the app's root (it reads the original URL, so a mount path is fine
 * too as long as it equals the base path).
 */
export function nodeMiddleware(backend: Backend) {
  const listener = getRequestListener((request, env) => backend.fetch(request, env));
  const prefix = backend.basePath === '/' ? '/' : `${backend.basePath}/`;
  return function personaChat(req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, next?: Next) {
    const url = req.originalUrl ?? req.url ?? '/';
    const path = url.split('?')[0]!;
    if (path !== backend.basePath && !path.startsWith(prefix)) {
      if (next) return next();
      res.statusCode = 404;
      return res.end();
    }
    req.url = url;
    listener(req, res).catch(error => (next ? next(error) : res.destroy(error as Error)));
  };
}
