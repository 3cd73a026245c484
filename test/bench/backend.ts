// The backend's cost on the way of a reply, measured against a bare node:http proxy on the same emulator (pace 0):
// time from sending a message to its first delta and to its end, and the CPU this process spends per message
// (the emulator and the client are in it too, the same for every row, so the differences are the backend's). The
// backend runs with its limits out of the way, once on the memory store and once on a real Redis.
import { createServer, request as httpRequest } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBackend } from '../../src/server/index.js';
import type { BackendStore } from '../../src/server/index.js';
import { serveBackend } from '../../src/server/node.js';
import { RedisStore } from '../../src/server/redis-store.js';
import { startEmulator } from '../../src/emulator/node.js';
import { startRedis } from '../support/redis.js';

const messages = Number(process.env.BENCH_MESSAGES ?? 300);
const concurrency = 8;
const apiKey = 'bench-key';
const site = 'https://bench.example.com';

interface Target {
  /** Sends one message; resolves with the times to the first delta and to the end, in ms. */
  send(message: string): Promise<[number, number]>;
}

/** Reads an SSE body, noting when the first delta arrives. */
async function timed(started: number, response: Response): Promise<[number, number]> {
  if (!response.ok) throw new Error(`answered ${response.status}: ${await response.text()}`);
  let first = 0;
  const decoder = new TextDecoder();
  for await (const chunk of response.body!) {
    if (!first && decoder.decode(chunk as Uint8Array, { stream: true }).includes('delta')) {
      first = performance.now() - started;
    }
  }
  return [first, performance.now() - started];
}

/** The floor: a proxy that adds the API key and pipes the service's stream. */
async function bareProxy(serviceUrl: string, conversationId: string): Promise<Target & { server: Server }> {
  const server = createServer((req, res) => {
    const upstream = httpRequest(
      `${serviceUrl}/conversations/${conversationId}/chat-sse`,
      { method: 'PATCH', headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey } },
      answer => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    server,
    send: async message => {
      const started = performance.now();
      return timed(started, await fetch(url, { method: 'POST', body: JSON.stringify({ message }) }));
    },
  };
}

/** The backend, as a site serves it, on a store. */
async function backend(serviceUrl: string, personaId: string, store?: BackendStore) {
  const running = await serveBackend(
    createBackend({
      serviceUrl,
      apiKey,
      personaId,
      tokenSecret: 'a-bench-secret-of-more-than-thirty-two-bytes',
      allowedOrigins: [site],
      store,
      limits: { messagesPerUserPerMinute: 1e9, messagesPerIpPerMinute: 1e9, concurrentStreamsPerUser: 1e9 },
      log: () => {},
    }),
  );
  const session = await fetch(`${running.url}/session`, {
    method: 'POST',
    headers: { origin: site, 'x-persona-chat': '1', 'content-type': 'application/json' },
    body: '{}',
  });
  const { token } = (await session.json()) as { token: string };
  const auth = { authorization: `Bearer ${token}` };
  const created = await fetch(`${running.url}/conversations`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: '{}',
  });
  const { id } = (await created.json()) as { id: string };
  return {
    running,
    send: async (message: string) => {
      const started = performance.now();
      const response = await fetch(`${running.url}/conversations/${id}/messages`, {
        method: 'POST',
        headers: {
          ...auth,
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'idempotency-key': crypto.randomUUID(),
        },
        body: JSON.stringify({ message }),
      });
      return timed(started, response);
    },
  };
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))]!;

/** Sends `messages` messages, `concurrency` at a time, after a warm-up; the times and the CPU per message. */
async function measure(target: Target) {
  for (let i = 0; i < 20; i++) await target.send('Warm up');
  const firsts: number[] = [];
  const wholes: number[] = [];
  let next = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < messages) {
        const [first, whole] = await target.send('How long does shipping take?');
        firsts.push(first);
        wholes.push(whole);
      }
    }),
  );
  const elapsed = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return {
    'first delta p50 ms': percentile(firsts, 50).toFixed(1),
    'first delta p99 ms': percentile(firsts, 99).toFixed(1),
    'whole reply p50 ms': percentile(wholes, 50).toFixed(1),
    'CPU ms per message': ((used.user + used.system) / 1000 / messages).toFixed(2),
    'messages per s': Math.round((messages * 1000) / elapsed),
  };
}

export async function backendBench(): Promise<Record<string, unknown>[]> {
  const service = await startEmulator({ apiKey, pace: 0 });
  const personaId = service.emulator.personas[1]!.personaId;
  const rows: Record<string, unknown>[] = [];
  try {
    const created = await fetch(`${service.url}/conversations/persona`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey },
      body: JSON.stringify({ personaId, externalUserId: 'bench' }),
    });
    const { conversationId } = (await created.json()) as { conversationId: string };
    const proxy = await bareProxy(service.url, conversationId);
    rows.push({ path: 'bare node:http proxy', ...(await measure(proxy)) });
    proxy.server.close();

    const memory = await backend(service.url, personaId);
    rows.push({ path: 'backend, memory store', ...(await measure(memory)) });
    await memory.running.close();

    let redis;
    try {
      redis = await startRedis();
    } catch (error) {
      rows.push({ path: `backend, Redis store: not measured (${(error as Error).message})` });
    }
    if (redis) {
      const store = new RedisStore({ url: redis.url });
      try {
        for (let tries = 0; ; tries++) {
          try {
            await store.ping();
            break;
          } catch (error) {
            if (tries > 100) throw error;
            await new Promise(resolve => setTimeout(resolve, 20));
          }
        }
        const shared = await backend(service.url, personaId, store);
        rows.push({ path: 'backend, Redis store', ...(await measure(shared)) });
        await shared.running.close();
      } finally {
        await store.close();
        await redis.stop();
      }
    }
  } finally {
    await service.close();
  }
  return rows;
}
