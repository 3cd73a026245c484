import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after } from 'node:test';
import { createEmulator } from '../../src/emulator/app.js';
import type { Emulator, EmulatorOptions } from '../../src/emulator/app.js';
import type { ErrorEnvelope, StreamEventName, StreamEvents } from '../../src/protocol.js';
import { createBackend } from '../../src/server/app.js';
import type { BackendConfig, LogLine } from '../../src/server/config.js';
import { ada, apiKey, juniper } from './service.js';

export const siteOrigin = 'https://shop.example.com';
export const tokenSecret = 'a-test-secret-of-more-than-thirty-two-bytes';
export const base = '/persona-chat';

/** Everything the backend said in this process: response heads and bodies, and log lines, to scan for secrets. */
export const transcript: string[] = [];

/**
 * After the tests of a file: the API key appears nowhere in what they saw (responses, headers, SSE frames, log
 * lines), and the scan saw at least `seen` of them.
 */
export function afterNoKeyLeaks(seen = 1) {
  after(() => {
    const leaks = transcript.filter(text => text.includes(apiKey));
    assert.deepEqual(leaks, [], 'the API key appears in no response, header, SSE frame or log line');
    assert.ok(transcript.length >= seen, 'the scan saw the whole run');
  });
}

export interface Upstream {
  method: string;
  path: string;
  /** Aborted when the backend gives up on the request. */
  signal: AbortSignal;
}

export type Event = { [E in StreamEventName]: { event: E; data: StreamEvents[E] } }[StreamEventName];

/**
 * The backend wired to an in-process emulator. Every request the emulator receives is recorded (with its signal,
 * to see aborts), and every response and log line goes into the transcript.
 */
export function setup(
  options: { emulator?: EmulatorOptions; backend?: Partial<BackendConfig>; service?: Emulator } = {},
) {
  // `service`: another backend instance's emulator, shared as instances share the service.
  const emulator = options.service ?? createEmulator({ apiKey, ...options.emulator });
  const upstream: Upstream[] = [];
  const logs: LogLine[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    upstream.push({ method: request.method, path: url.pathname + url.search, signal: request.signal });
    return emulator.fetch(request);
  };
  const backend = createBackend({
    serviceUrl: 'http://emulator.test',
    apiKey,
    personaId: [juniper.personaId, ada.personaId],
    tokenSecret,
    allowedOrigins: [siteOrigin],
    basePath: base,
    fetch,
    http2Fetch: fetch,
    log: line => {
      logs.push(line);
      transcript.push(JSON.stringify(line));
    },
    ...options.backend,
  });

  /** A raw request to the backend; the response is recorded in the transcript as it is read. */
  async function request(
    method: string,
    path: string,
    init: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ) {
    const { body, headers = {}, signal } = init;
    const raw = typeof body === 'string' || body instanceof ReadableStream;
    const response = await backend.fetch(
      new Request(`https://chat.example.com${base}${path}`, {
        method,
        headers: { ...(body !== undefined && !raw ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body === undefined ? undefined : raw ? body : JSON.stringify(body),
        signal,
        duplex: 'half',
      } as RequestInit),
      // What the Node adapter passes: the socket the request came on.
      { incoming: { socket: { remoteAddress: '127.0.0.1' } } },
    );
    const [mine, copy] = response.body ? response.body.tee() : [null, null];
    transcript.push(JSON.stringify([...response.headers]));
    if (copy)
      void new Response(copy).text().then(
        text => transcript.push(text),
        () => {},
      );
    return new Response(mine, { status: response.status, headers: response.headers });
  }

  /** A session as the widget on the site's page gets it. */
  async function session(body: unknown = {}, headers: Record<string, string> = {}) {
    const res = await request('POST', '/session', {
      body,
      headers: { origin: siteOrigin, 'x-persona-chat': '1', ...headers },
    });
    if (res.status !== 200) throw new Error(`session answered ${res.status}: ${await res.text()}`);
    const cookie = res.headers.get('set-cookie')?.split(';')[0];
    const json = (await res.json()) as { token: string; user: { key: string }; expiresAt: string };
    return { ...json, cookie };
  }

  /** A request with a bearer token. */
  const api = (
    method: string,
    path: string,
    token: string,
    init: { body?: unknown; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ) => request(method, path, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } });

  /** Starts a conversation as a visitor and returns its id. */
  async function conversation(token: string) {
    const res = await api('POST', '/conversations', token, { body: {} });
    if (res.status !== 201) throw new Error(`create answered ${res.status}: ${await res.text()}`);
    return ((await res.json()) as { id: string }).id;
  }

  /** Sends a message and returns the response (SSE unless `accept` says otherwise). */
  const send = (
    token: string,
    id: string,
    message: string,
    init: { key?: string; accept?: string; signal?: AbortSignal } = {},
  ) =>
    api('POST', `/conversations/${id}/messages`, token, {
      body: { message },
      headers: { 'idempotency-key': init.key ?? crypto.randomUUID(), accept: init.accept ?? 'text/event-stream' },
      signal: init.signal,
    });

  const continues = () =>
    upstream.filter(u => /\/(chat|chat-sse|chat-http2|continue|continue-sse|continue-stream)$/.test(u.path));

  return { emulator, backend, upstream, logs, request, session, api, conversation, send, continues };
}

/** The events of an SSE body, in order; comments are kept as `{event: 'comment'}` only when asked. */
export async function events(response: Response): Promise<Event[]> {
  const text = await response.text();
  return parseEvents(text);
}

export function parseEvents(text: string): Event[] {
  return text
    .split('\n\n')
    .filter(block => block.trim() && !block.startsWith(':'))
    .map(block => {
      const lines = block.split('\n');
      const event = lines.find(l => l.startsWith('event: '))?.slice(7) as StreamEventName;
      const data = lines
        .filter(l => l.startsWith('data: '))
        .map(l => l.slice(6))
        .join('\n');
      return { event, data: JSON.parse(data) } as Event;
    });
}

export const textOfEvents = (list: Event[]) => list.map(e => (e.event === 'delta' ? e.data.text : '')).join('');

/** Checks that a response is our error envelope with this status and code; returns it to look further. */
export async function expectError(response: Response | Promise<Response>, status: number, code: string) {
  const res = await response;
  const body = (await res.json()) as ErrorEnvelope;
  assert.equal(res.status, status, JSON.stringify(body));
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.equal(typeof body.error.retryable, 'boolean');
  assert.match(body.error.requestId, /^[0-9a-f-]{36}$/);
  return { res, body };
}

/** The backlog of the socket listening on `port`, as the kernel reports it (Linux, with iproute2's ss). */
export function backlogOf(port: number): number | undefined {
  const listed = spawnSync('ss', ['-ltnH', `sport = :${port}`], { encoding: 'utf8' });
  if (listed.status !== 0) return undefined;
  const [, , sendQ] = listed.stdout.trim().split(/\s+/);
  return Number(sendQ);
}

/**
 * `POST {url}/session` over real HTTP, as a page of `origin` asks for one (with the visitor's cookie, when it has
 * one); `fetcher` is the way there (a proxy, a balancer), `fetch` by default.
 */
export function postSession(url: string, origin: string, cookie?: string, fetcher: typeof fetch = fetch) {
  return fetcher(`${url}/session`, {
    method: 'POST',
    headers: {
      origin,
      'x-persona-chat': '1',
      'content-type': 'application/json',
      ...(cookie ? { cookie } : {}),
    },
    body: '{}',
  });
}
