/**
 * @module
 * Serves the emulator on Node: one HTTP/1.1 listener, and one cleartext HTTP/2 listener (prior knowledge) for the
 * HTTP/2 stream delivery. Both serve the same emulator, so either can be used for every other operation.
 */
import { readFile } from 'node:fs/promises';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { ServerType } from '@hono/node-server';
import { createEmulator } from './app.js';
import type { Emulator, EmulatorOptions } from './app.js';
import { parsePersonas } from './personas.js';
import type { Persona } from './personas.js';

export interface StartEmulatorOptions extends EmulatorOptions {
  /** HTTP/1.1 port; 0 (default) picks a free one. */
  port?: number;
  /** HTTP/2 port; 0 (default) picks a free one. */
  http2Port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * How many connections may wait to be accepted on each listener. Default 4096 (the kernel lowers it to its own
   * limit); Node's 511 drops a burst of streams opened at once.
   */
  backlog?: number;
}

export interface RunningEmulator {
  emulator: Emulator;
  /** The HTTP/1.1 listener, e.g. `http://127.0.0.1:4010`. */
  url: string;
  /** The HTTP/2 listener (h2c, prior knowledge). */
  http2Url: string;
  close(): Promise<void>;
}

function listen(server: ServerType, port: number, host: string, backlog: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, backlog }, () => resolve((server.address() as AddressInfo).port));
  });
}

/** Starts both listeners and resolves once they accept connections. */
export async function startEmulator(options: StartEmulatorOptions = {}): Promise<RunningEmulator> {
  const { port = 0, http2Port = 0, host = '127.0.0.1', backlog = 4096, ...emulatorOptions } = options;
  const emulator = createEmulator(emulatorOptions);
  const fetch = (request: Request, env: unknown) => emulator.fetch(request, env);
  const h1 = createAdaptorServer({ fetch, hostname: host });
  const h1Port = await listen(h1, port, host, backlog);
  const h2 = createAdaptorServer({ fetch, hostname: host, createServer: http2.createServer });
  const h2Sessions = new Set<http2.ServerHttp2Session>();
  h2.on('session', (session: http2.ServerHttp2Session) => {
    h2Sessions.add(session);
    session.on('close', () => h2Sessions.delete(session));
  });
  const h2Port = await listen(h2, http2Port, host, backlog).catch(async error => {
    await close(h1);
    throw error;
  });
  const origin = (p: number) => `http://${host.includes(':') ? `[${host}]` : host}:${p}`;
  return {
    emulator,
    url: origin(h1Port),
    http2Url: origin(h2Port),
    close: async () => {
      await Promise.all([close(h1), close(h2, h2Sessions)]);
    },
  };
}

function close(server: ServerType, sessions?: Set<http2.ServerHttp2Session>): Promise<void> {
  return new Promise(resolve => {
    server.close(() => resolve());
    if ('closeAllConnections' in server) server.closeAllConnections();
    for (const session of sessions ?? []) session.destroy();
  });
}

/** Reads and checks a personas file. */
export async function readPersonasFile(path: string): Promise<Persona[]> {
  const text = await readFile(path, 'utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${path} is not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  return parsePersonas(json);
}
