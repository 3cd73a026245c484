/**
 * Two backend instances, each its own process started by the CLI as a site would run it, behind a round-robin proxy,
 * sharing one real Redis; the emulator serves them over real HTTP. What a visitor must not notice: which instance
 * answers, an instance killed mid-reply, an instance draining on SIGTERM, and Redis going away for a while.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { serve } from '@hono/node-server';
import { createEmulator } from '../../src/emulator/app.js';
import { resendHeader } from '../../src/protocol.js';
import type { HealthReport, StreamEvents } from '../../src/protocol.js';
import { postSession } from '../support/backend.js';
import { startRedis } from '../support/redis.js';
import type { RedisServer } from '../support/redis.js';
import { apiKey, juniper } from '../support/service.js';
import { until } from '../support/until.js';

const site = 'https://shop.example.com';
const base = '/persona-chat';
const cli = fileURLToPath(new URL('../../src/server/cli.ts', import.meta.url));

/** The emulator on a real socket; every continue request is recorded with its signal, to see aborts. */
async function startService() {
  const emulator = createEmulator({ apiKey });
  const continues: { conversationId: string; signal: AbortSignal }[] = [];
  const server = serve({
    fetch: (request, env) => {
      const match = /\/conversations\/([0-9a-f-]{36})\/(chat|continue)/.exec(new URL(request.url).pathname);
      if (match) continues.push({ conversationId: match[1]!, signal: request.signal });
      return emulator.fetch(request, env);
    },
    port: 0,
    hostname: '127.0.0.1',
  });
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    emulator,
    url: `http://127.0.0.1:${port}`,
    continuesOf: (conversationId: string) => continues.filter(c => c.conversationId === conversationId),
    close: () => new Promise(resolve => server.close(resolve)),
  };
}

interface Instance {
  name: string;
  url: string;
  child: ChildProcess;
  stderr: string[];
}

/** `persona-chat-server` in a process of its own, configured from the environment as in production. */
async function startInstance(name: string, serviceUrl: string, redisUrl: string): Promise<Instance> {
  const args = ['--port', '0', '--base-path', base, '--lease-seconds', '3', '--drain-seconds', '2'];
  const child = spawn(process.execPath, ['--import', 'tsx', cli, ...args], {
    env: {
      PATH: process.env.PATH,
      PERSONA_CHAT_SERVICE_URL: serviceUrl,
      PERSONA_CHAT_API_KEY: apiKey,
      PERSONA_CHAT_PERSONA_ID: juniper.personaId,
      PERSONA_CHAT_TOKEN_SECRET: 'a-test-secret-of-more-than-thirty-two-bytes',
      PERSONA_CHAT_ALLOWED_ORIGIN: site,
      PERSONA_CHAT_REDIS_URL: redisUrl,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderr: string[] = [];
  createInterface({ input: child.stderr! }).on('line', line => stderr.push(line));
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on('line', line => {
      if (line.startsWith('listening on ')) resolve(line.slice('listening on '.length));
    });
    child.once('exit', code => reject(new Error(`instance ${name} exited with ${code}: ${stderr.join('\n')}`)));
  });
  return { name, url, child, stderr };
}

/**
 * A load balancer: each request goes to the next instance in turn (or to the one named by `x-route-to`, for tests
 * that need a given instance), and the response says which one served it in `x-served-by`.
 */
async function startProxy(instances: () => Instance[]) {
  let turn = 0;
  const server = createServer((req, res) => {
    const list = instances();
    const pinned = list.find(instance => instance.name === req.headers['x-route-to']);
    const target = pinned ?? list[turn++ % list.length]!;
    const url = new URL(req.url!, target.url);
    const upstream = httpRequest(url, { method: req.method, headers: req.headers, agent: false }, answer => {
      res.writeHead(answer.statusCode!, { ...answer.headers, 'x-served-by': target.name });
      answer.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502, { 'x-served-by': target.name });
      res.end();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${base}`,
    close: () => {
      server.closeAllConnections();
      return new Promise(resolve => server.close(resolve));
    },
  };
}

interface SseEvent {
  id: string | null;
  event: string;
  data: Record<string, unknown>;
}

/** The events of an SSE response as they arrive. */
async function* eventsOf(response: Response): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body!) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      if (!block.trim() || block.startsWith(':')) continue;
      const field = (name: string) =>
        block
          .split('\n')
          .find(line => line.startsWith(`${name}: `))
          ?.slice(name.length + 2) ?? null;
      yield { id: field('id'), event: field('event')!, data: JSON.parse(field('data')!) as Record<string, unknown> };
    }
  }
}

/** Reads events until `stop` says so (the event that made it stop included), or to the end; more can be read after. */
async function readUntil(events: AsyncGenerator<SseEvent>, stop: (event: SseEvent) => boolean) {
  const seen: SseEvent[] = [];
  for (let next = await events.next(); !next.done; next = await events.next()) {
    seen.push(next.value);
    if (stop(next.value)) break;
  }
  return seen;
}

const terminal = (event: SseEvent) => event.event === 'done' || event.event === 'error';
const textOf = (events: SseEvent[]) => events.map(e => (e.event === 'delta' ? String(e.data.text) : '')).join('');

describe('two instances behind a load balancer, one Redis', () => {
  let redis: RedisServer;
  let service: Awaited<ReturnType<typeof startService>>;
  const instances: Instance[] = [];
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  const started = () => instances.filter(instance => instance.child.exitCode === null);

  before(async () => {
    redis = await startRedis();
    service = await startService();
    instances.push(...(await Promise.all(['A', 'B'].map(name => startInstance(name, service.url, redis.url)))));
    proxy = await startProxy(started);
  });

  after(async () => {
    for (const instance of instances) instance.child.kill('SIGKILL');
    await proxy?.close();
    await service?.close();
    await redis?.stop();
  });

  const call = (path: string, init: RequestInit & { to?: string } = {}) => {
    const headers = new Headers(init.headers);
    if (init.to) headers.set('x-route-to', init.to);
    return fetch(`${proxy.url}${path}`, { ...init, headers });
  };

  async function visitor(cookie?: string) {
    const res = await postSession('', site, cookie, (input, init) => call(String(input), init));
    assert.equal(res.status, 200, `session: ${res.status}`);
    const { token } = (await res.json()) as { token: string };
    const auth = { authorization: `Bearer ${token}` };
    const created = await call('/conversations', {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(created.status, 201, `create: ${created.status}`);
    const { id } = (await created.json()) as { id: string };
    const send = (message: string, key: string, to?: string, accept = 'text/event-stream', resentAfterMs?: number) =>
      call(`/conversations/${id}/messages`, {
        method: 'POST',
        headers: {
          ...auth,
          'content-type': 'application/json',
          'idempotency-key': key,
          accept,
          ...(resentAfterMs === undefined ? {} : { [resendHeader]: String(resentAfterMs) }),
        },
        body: JSON.stringify({ message }),
        to,
      });
    const follow = (key: string, lastEventId: string | null, to?: string) =>
      call(`/conversations/${id}/runs/${key}/events`, {
        headers: { ...auth, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
        to,
      });
    const stop = (key: string, to?: string) =>
      call(`/conversations/${id}/runs/${key}/stop`, { method: 'POST', headers: auth, to });
    const history = () => service.emulator.store.get(id)?.chatMessages ?? [];
    return { id, cookie: res.headers.get('set-cookie')?.split(';')[0], send, follow, stop, history };
  }

  /** Slows the emulator's replies down, so that something can happen in the middle of one. */
  const slowReplies = (chunkDelayMs: number) => service.emulator.faults.set({ chunkDelayMs });

  it('sends a message retried on the other instance to the service once, and replays the same reply', async () => {
    service.emulator.faults.reset();
    const chat = await visitor();
    const key = crypto.randomUUID();
    const first = await chat.send('How long does shipping take?', key, 'A');
    assert.equal(first.headers.get('x-served-by'), 'A');
    const original = await readUntil(eventsOf(first), terminal);
    const again = await chat.send('How long does shipping take?', key, 'B');
    assert.equal(again.headers.get('x-served-by'), 'B');
    const replayed = await readUntil(eventsOf(again), terminal);
    assert.ok(textOf(original).length > 0, 'a reply came');
    assert.equal(textOf(replayed), textOf(original));
    assert.equal(replayed.at(-1)!.data.messageId, original.at(-1)!.data.messageId);

    const both = crypto.randomUUID();
    const [a, b] = await Promise.all([chat.send('And returns?', both, 'A'), chat.send('And returns?', both, 'B')]);
    const [fromA, fromB] = await Promise.all([readUntil(eventsOf(a), terminal), readUntil(eventsOf(b), terminal)]);
    assert.equal(textOf(fromA), textOf(fromB), 'one reply, whichever instance answered');
    assert.equal(service.continuesOf(chat.id).length, 2, 'one send to the service per message');
    assert.equal(chat.history().filter(m => m.role === 'user').length, 2);
  });

  it('keeps limits global: sessions per visitor, and replies in progress per user', async () => {
    service.emulator.faults.reset();
    const chat = await visitor();
    const servedBy = new Set<string>();
    for (let i = 1; i < 60; i++) {
      const res = await call('/session', {
        method: 'POST',
        headers: { origin: site, 'x-persona-chat': '1', 'content-type': 'application/json', cookie: chat.cookie! },
        body: '{}',
      });
      assert.equal(res.status, 200, `session ${i + 1} of 60`);
      servedBy.add(res.headers.get('x-served-by')!);
    }
    assert.deepEqual([...servedBy].sort(), ['A', 'B'], 'both instances counted');
    const refused = await call('/session', {
      method: 'POST',
      headers: { origin: site, 'x-persona-chat': '1', 'content-type': 'application/json', cookie: chat.cookie! },
      body: '{}',
    });
    assert.equal(refused.status, 429);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'too_many_sessions');

    slowReplies(100);
    const [one, two, three] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const running = [await chat.send('One', one, 'A'), await chat.send('Two', two, 'B')];
    assert.deepEqual(
      running.map(res => res.status),
      [200, 200],
    );
    const third = await chat.send('Three', three, 'A');
    assert.equal(third.status, 429, 'two replies in progress on two instances fill the slots');
    await third.body?.cancel();
    service.emulator.faults.reset();
    await Promise.all([chat.stop(one), chat.stop(two)]);
    await Promise.all(running.map(res => readUntil(eventsOf(res), terminal)));
  });

  it('resumes on B a reply started on A, from the last event the browser saw', async () => {
    slowReplies(30);
    const chat = await visitor();
    const key = crypto.randomUUID();
    const controller = new AbortController();
    const started = await chat.send('How long does shipping take?', key, 'A');
    const events = eventsOf(started);
    const before = await readUntil(events, event => event.event === 'delta' && Number(event.id?.split('-')[1]) >= 2);
    controller.abort();
    await events.return(undefined);
    const resumed = await chat.follow(key, before.at(-1)!.id, 'B');
    assert.equal(resumed.headers.get('x-served-by'), 'B');
    const rest = await readUntil(eventsOf(resumed), terminal);
    assert.equal(rest.at(-1)!.event, 'done');
    const reply = chat.history().at(-1)!;
    assert.equal(reply.role, 'assistant');
    assert.equal(textOf([...before, ...rest]), reply.content, 'every word once, in order');
    assert.equal(service.continuesOf(chat.id).length, 1);
  });

  it('stops on A a reply whose Stop reached B', async () => {
    slowReplies(100);
    const chat = await visitor();
    const key = crypto.randomUUID();
    const res = await chat.send('Tell me everything about shipping.', key, 'A');
    const events = eventsOf(res);
    await readUntil(events, event => event.event === 'delta');
    const stop = await chat.stop(key, 'B');
    assert.equal(stop.status, 202);
    assert.equal(stop.headers.get('x-served-by'), 'B');
    const rest = await readUntil(events, terminal);
    assert.equal(rest.at(-1)!.event, 'done');
    assert.equal(rest.at(-1)!.data.finishReason, 'stopped');
    const [upstream] = service.continuesOf(chat.id);
    await until(async () => upstream!.signal.aborted, 'the service to see the request end', { withinMs: 20_000 });
  });

  it('ends the replies of a killed instance as interrupted, and a Retry on the other completes them once', async () => {
    slowReplies(100);
    const chat = await visitor();
    const key = crypto.randomUUID();
    const message = 'What is your return policy?';
    const res = await chat.send(message, key, 'A');
    const seen = await readUntil(eventsOf(res), event => event.event === 'delta');
    const a = instances.find(instance => instance.name === 'A')!;
    a.child.kill('SIGKILL');
    await once(a.child, 'exit');
    const followed = await chat.follow(key, seen.at(-1)!.id, 'B');
    const end = (await readUntil(eventsOf(followed), terminal)).at(-1)!;
    assert.equal(end.event, 'error');
    assert.deepEqual(end.data, {
      code: 'interrupted',
      message: 'The reply was interrupted before it was complete.',
      retryable: true,
    });

    service.emulator.faults.reset();
    const retry = await chat.send(message, key, 'B');
    const retried = await readUntil(eventsOf(retry), terminal);
    assert.equal((retried[0]!.data as StreamEvents['meta']).attempt, 2, 'the next attempt of the same run');
    assert.equal(retried.at(-1)!.event, 'done');
    const history = chat.history();
    assert.deepEqual(
      history.map(m => m.role),
      ['user', 'assistant'],
      'exactly one message and its reply in the service',
    );
    assert.equal(history[1]!.content, textOf(retried));
    instances.splice(instances.indexOf(a), 1, await startInstance('A', service.url, redis.url));
  });

  it('drains on SIGTERM: no new replies, running ones handed over, exit 0', async () => {
    slowReplies(150);
    const chat = await visitor();
    const key = crypto.randomUUID();
    const message = 'Tell me about shipping to Canada.';
    const res = await chat.send(message, key, 'B');
    const events = eventsOf(res);
    await readUntil(events, event => event.event === 'delta');
    const b = instances.find(instance => instance.name === 'B')!;
    const exited = once(b.child, 'exit');
    b.child.kill('SIGTERM');
    await until(
      async () => {
        const ready = await call('/readyz', { to: 'B' });
        return ready.status === 503 && ((await ready.json()) as HealthReport).status === 'draining';
      },
      'B to say it is draining',
      { withinMs: 20_000 },
    );
    const refused = await chat.send('Another question', crypto.randomUUID(), 'B', 'application/json');
    assert.equal(refused.status, 503);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, 'server_restarting');
    const end = (await readUntil(events, terminal)).at(-1)!;
    assert.equal(end.event, 'error', 'the reply outlasted the grace period');
    assert.equal(end.data.code, 'server_restarting');
    assert.equal(end.data.retryable, true);
    const [code] = (await exited) as [number];
    assert.equal(code, 0);

    service.emulator.faults.reset();
    const again = await chat.send(message, key, 'A');
    const retried = await readUntil(eventsOf(again), terminal);
    assert.equal(retried.at(-1)!.event, 'done', 'another instance takes the run over');
    assert.deepEqual(
      chat.history().map(m => m.role),
      ['user', 'assistant'],
    );
    instances.splice(instances.indexOf(b), 1, await startInstance('B', service.url, redis.url));
  });

  it('takes a reply from the history when Redis restarted empty before the browser saw its end, never asking twice', async () => {
    slowReplies(40);
    const chat = await visitor();
    const key = crypto.randomUUID();
    const message = 'How long does shipping take?';
    const sentAt = Date.now();
    const res = await chat.send(message, key, 'A');
    const events = eventsOf(res);
    await readUntil(events, event => event.event === 'delta');
    // The browser's network drops; the reply goes on to its end at the service, then Redis restarts empty.
    await events.return(undefined);
    await until(async () => chat.history().length === 2, 'the service to keep the whole reply', { withinMs: 20_000 });
    await redis.kill();
    await redis.start();
    for (const to of ['A', 'B']) {
      await until(async () => (await call('/readyz', { to })).status === 200, `${to} to be ready again`, {
        withinMs: 20_000,
      });
    }
    const followed = await chat.follow(key, null, 'B');
    assert.equal(followed.status, 404, 'the store forgot the run');
    await followed.body?.cancel();

    const again = await chat.send(message, key, 'B', 'text/event-stream', Date.now() - sentAt);
    const replayed = await readUntil(eventsOf(again), terminal);
    assert.equal(replayed.at(-1)!.event, 'done');
    assert.equal(textOf(replayed), chat.history()[1]!.content, 'the reply the service kept');
    assert.equal(service.continuesOf(chat.id).length, 1, 'the message went to the service once');
    assert.deepEqual(
      chat.history().map(m => m.role),
      ['user', 'assistant'],
    );
  });

  it('answers 503 while Redis is down, never crashes, and serves again once it is back', async () => {
    service.emulator.faults.reset();
    const chat = await visitor();
    await redis.kill();
    for (const to of ['A', 'B']) {
      const res = await chat.send('Are you there?', crypto.randomUUID(), to, 'application/json');
      assert.equal(res.status, 503, `a message on ${to}`);
      assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'store_unavailable');
      const ready = await call('/readyz', { to });
      assert.equal(ready.status, 503);
      assert.deepEqual(await ready.json(), { status: 'unavailable', store: 'unavailable', service: 'ok' });
      const health = await call('/healthz', { to });
      assert.equal(health.status, 200, 'alive all the same');
    }
    const session = await call('/session', {
      method: 'POST',
      headers: { origin: site, 'x-persona-chat': '1', 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(session.status, 200, 'sessions go on, limited by each instance alone');
    await redis.start();
    for (const to of ['A', 'B']) {
      await until(async () => (await call('/readyz', { to })).status === 200, `${to} to be ready again`, {
        withinMs: 20_000,
      });
    }
    const res = await chat.send('Are you there?', crypto.randomUUID(), undefined, 'application/json');
    assert.equal(res.status, 200);
    assert.ok(((await res.json()) as { content: string }).content.length > 0, 'a reply');
    assert.ok(
      started().length === 2,
      `both instances still run: ${instances.map(i => `${i.name}: ${i.stderr.join(' | ')}`).join('; ')}`,
    );
  });
});
