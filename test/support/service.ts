import assert from 'node:assert/strict';
import { ServiceClient } from '../../src/service/client.js';
import type { ServiceClientOptions } from '../../src/service/client.js';
import { createEmulator } from '../../src/emulator/app.js';
import type { EmulatorOptions } from '../../src/emulator/app.js';
import { defaultPersonas } from '../../src/emulator/personas.js';
import type { Conversation, StreamChunk } from '../../src/service/types.js';

export const apiKey = 'sk-test-3b9f1c2d7e8a4f60b1c2d3e4f5a6b7c8';
export const ada = defaultPersonas[0]!;
export const juniper = defaultPersonas[1]!;
export const origin = 'http://emulator.test';

export interface Recorded {
  method: string;
  path: string;
}

/**
 * An emulator served in-process (its `fetch` called directly, no socket) and a client wired to it. Every request
 * the emulator receives is recorded, so tests can assert what did or did not reach it.
 */
export function inProcess(options: EmulatorOptions = {}, clientOptions: Partial<ServiceClientOptions> = {}) {
  const emulator = createEmulator({ apiKey, ...options });
  const received: Recorded[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    received.push({ method: request.method, path: url.pathname + url.search });
    return emulator.fetch(request);
  };
  const client = new ServiceClient({ baseUrl: origin, apiKey, fetch, http2Fetch: fetch, ...clientOptions });

  /** A raw request to the emulator, with the API key unless `headers` says otherwise. */
  const request = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    emulator.fetch(
      new Request(origin + path, {
        method,
        headers: {
          'x-svc-api-key': apiKey,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      }),
    );

  return { emulator, client, received, request };
}

type ErrorBody = { error: { code: string; message: string; status: number; requestId: string } };

/** Checks that a response is the emulator's error with this status and code (and message); returns its body. */
export async function expectError(
  response: Response | Promise<Response>,
  status: number,
  code: string,
  message?: RegExp,
) {
  const res = await response;
  assert.equal(res.status, status);
  assert.match(res.headers.get('content-type') ?? '', /application\/json/);
  const body = (await res.json()) as ErrorBody;
  assert.equal(body.error.code, code);
  assert.equal(body.error.status, status);
  assert.ok(body.error.requestId, 'errors carry a request id');
  if (message) assert.match(body.error.message, message);
  return body;
}

/** Creates a persona conversation through a raw request to the emulator. */
export async function createPersona(
  request: ReturnType<typeof inProcess>['request'],
  externalUserId = 'u',
  personaId = juniper.personaId,
) {
  const res = await request('POST', '/conversations/persona', { personaId, externalUserId });
  assert.equal(res.status, 200);
  return (await res.json()) as Conversation;
}

/** The `data:` payloads of an SSE body, in order. */
export async function sseData(response: Response): Promise<string[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter(Boolean)
    .map(frame =>
      frame
        .split('\n')
        .filter(line => line.startsWith('data: '))
        .map(line => line.slice(6))
        .join('\n'),
    );
}

/** Collects an async iterable. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** The text that a stream's deltas add up to. */
export const textOf = (chunks: StreamChunk[]) => chunks.map(c => (c.type === 'delta' ? c.text : '')).join('');
