// The backend's cost on the way of a reply, measured against a bare node:http proxy on the same emulator (pace 0).
// Each server runs as built (dist/) in a process of its own (serve.mjs), the emulator in another, the clients in
// this one, so that a server's CPU time and memory are read from its own process.
//
// - latency: `BENCH_MESSAGES` messages (1,000) one at a time after `BENCH_WARMUP` (2,000): the time to the first
//   delta and to the end, the server's CPU per message and its ratio to the proxy's; then as many 8 at a time, for
//   throughput. The warm-up lets V8 compile each server's hot paths first: measured from a cold start, the backend's
//   CPU is mostly the optimizing compiler's work on its background threads, which a server pays once, not per
//   message. Over a thousand messages, the 10 ms clock ticks of /proc are a few percent of the proxy's CPU. The
//   backend runs with its limits out of the way: on the memory store, as Node starts it and with the README's memory
//   setting (a smaller young generation), and on a real Redis.
// - load: `BENCH_STREAMS` (2,000) streams opened at once, `BENCH_ATTEMPTS` (3) times in a row on one server
//   process: the requests that failed and how, the first delta's median, and the server's peak RSS.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { createInterface } from 'node:readline';
import { startRedis } from '../support/redis.js';

const messages = Number(process.env.BENCH_MESSAGES ?? 1000);
const warmUp = Number(process.env.BENCH_WARMUP ?? 2000);
const streams = Number(process.env.BENCH_STREAMS ?? 2000);
const attempts = Number(process.env.BENCH_ATTEMPTS ?? 3);
const concurrency = 8;
/** Node's flag for a young generation of 4 MB semi-spaces rather than its default 16 (64-bit). */
const leanFlag = '--max-semi-space-size=4';
const apiKey = 'bench-key';
const site = 'https://bench.example.com';

interface Server {
  url: string;
  personaId?: string;
  pid: number;
  stop(): void;
}

const children = new Set<ChildProcess>();
process.on('exit', () => children.forEach(child => child.kill('SIGKILL')));

/** Starts one server of serve.mjs, with Node's own flags first, and waits for the line with its URL. */
async function start(args: string[], nodeFlags: string[] = []): Promise<Server> {
  const child = spawn(process.execPath, [...nodeFlags, 'test/bench/serve.mjs', ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.add(child);
  const line = await new Promise<string>((resolve, reject) => {
    child.once('exit', code => reject(new Error(`serve.mjs ${args[0]!} exited with ${code}`)));
    createInterface({ input: child.stdout! }).once('line', resolve);
  });
  const info = JSON.parse(line) as { url: string; personaId?: string };
  return {
    ...info,
    pid: child.pid!,
    stop: () => {
      children.delete(child);
      child.kill('SIGKILL');
    },
  };
}

/** The CPU time a process has used, in ms, and its resident memory now and at its peak, in MB. */
function usage(pid: number) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  // Linux counts CPU in clock ticks of 10 ms.
  return { cpuMs: ticks * 10, rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

interface Target {
  /**
   * Sends one message in the `n`th conversation (of those the target was made with, in turn); resolves with the
   * times to the first delta and to the end, in ms.
   */
  send(message: string, agent: Agent, n: number): Promise<[number, number]>;
}

/** Does `work` for 0 to count - 1, 8 at a time. */
async function eightAtATime<T>(count: number, work: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = next++; i < count; i = next++) out[i] = await work(i);
    }),
  );
  return out;
}

/** POSTs a message and reads the SSE answer, noting when the first delta arrives. */
function post(url: string, headers: Record<string, string>, message: string, agent: Agent): Promise<[number, number]> {
  const started = performance.now();
  const body = JSON.stringify({ message });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      res => {
        if (res.statusCode !== 200) {
          let text = '';
          res.on('data', (piece: Buffer) => (text += piece.toString()));
          res.on('end', () =>
            reject(Object.assign(new Error(`answered ${res.statusCode}: ${text}`), { code: `HTTP ${res.statusCode}` })),
          );
          return;
        }
        let first = 0;
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          if (!first && text.includes('delta')) first = performance.now() - started;
        });
        res.on('end', () => resolve([first, performance.now() - started]));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The proxy, with `count` conversations made at the service. Each visitor has a conversation of their own: one
 * conversation of thousands of messages would make every read of it (the backend's, the emulator's) the cost.
 */
async function proxyTarget(server: Server, service: Server, count: number): Promise<Target> {
  const conversations = await eightAtATime(count, async () => {
    const created = await fetch(`${service.url}/conversations/persona`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey },
      body: JSON.stringify({ personaId: service.personaId, externalUserId: 'bench' }),
    });
    return ((await created.json()) as { conversationId: string }).conversationId;
  });
  return {
    send: (message, agent, n) =>
      post(`${server.url}/${conversations[n % count]}`, { 'content-type': 'application/json' }, message, agent),
  };
}

/** A visitor of the backend: a token and `count` conversations, then messages with fresh Idempotency-Keys. */
async function backendTarget(server: Server, _service: Server, count: number): Promise<Target> {
  const base = server.url;
  const session = await fetch(`${base}/session`, {
    method: 'POST',
    headers: { origin: site, 'x-persona-chat': '1', 'content-type': 'application/json' },
    body: '{}',
  });
  const { token } = (await session.json()) as { token: string };
  const conversations = await eightAtATime(count, async () => {
    const created = await fetch(`${base}/conversations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    if (!created.ok) throw new Error(`making a conversation answered ${created.status}: ${await created.text()}`);
    return ((await created.json()) as { id: string }).id;
  });
  return {
    send: (message, agent, n) =>
      post(
        `${base}/conversations/${conversations[n % count]}/messages`,
        {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'idempotency-key': crypto.randomUUID(),
        },
        message,
        agent,
      ),
  };
}

const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))] ?? NaN;

/**
 * Sends `messages` messages one at a time after `warmUp` others (the times to the first delta and to the end, and the
 * server's CPU per message), then as many again `concurrency` at a time (messages per second).
 */
async function latency(server: Server, target: Target) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  for (let i = 0; i < warmUp; i++) await target.send('How long does shipping take?', agent, i);
  const firsts: number[] = [];
  const wholes: number[] = [];
  const before = usage(server.pid);
  for (let i = 0; i < messages; i++) {
    const [first, whole] = await target.send('How long does shipping take?', agent, i);
    firsts.push(first);
    wholes.push(whole);
  }
  const cpuMs = usage(server.pid).cpuMs - before.cpuMs;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < messages; i = next++) await target.send('How long does shipping take?', agent, i);
    }),
  );
  const elapsed = performance.now() - started;
  agent.destroy();
  return {
    firstP50: percentile(firsts, 50),
    firstP99: percentile(firsts, 99),
    wholeP50: percentile(wholes, 50),
    cpuPerMessage: cpuMs / messages,
    perSecond: Math.round((messages * 1000) / elapsed),
  };
}

/** Opens `streams` streams at once, each on its own connection; what failed, the first delta, the peak RSS. */
async function burst(server: Server, target: Target) {
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  let peak = usage(server.pid).rssMb;
  const sampler = setInterval(() => (peak = Math.max(peak, usage(server.pid).rssMb)), 20);
  const failures = new Map<string, number>();
  const firsts: number[] = [];
  await Promise.all(
    Array.from({ length: streams }, (_, i) =>
      target.send('How long does shipping take?', agent, i).then(
        ([first]) => firsts.push(first),
        (error: NodeJS.ErrnoException) =>
          failures.set(error.code ?? error.message, (failures.get(error.code!) ?? 0) + 1),
      ),
    ),
  );
  clearInterval(sampler);
  peak = Math.max(peak, usage(server.pid).rssMb);
  return {
    failed: [...failures.values()].reduce((a, b) => a + b, 0),
    how: [...failures].map(([code, n]) => `${n} ${code}`).join(', '),
    firstP50: percentile(firsts, 50),
    peakMb: peak,
  };
}

const ms = (value: number) => value.toFixed(1);
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

export async function backendBench(): Promise<{ latency: Record<string, unknown>[]; load: Record<string, unknown>[] }> {
  const service = await start(['emulator']);
  const latencyRows: Record<string, unknown>[] = [];
  const loadRows: Record<string, unknown>[] = [];
  const redis = await startRedis().catch((error: Error) => error);
  try {
    type Make = (server: Server, service: Server, count: number) => Promise<Target>;
    const targets: [string, () => Promise<Server>, Make][] = [
      ['bare node:http proxy', () => start(['proxy', service.url]), proxyTarget],
      ['backend, memory store', () => start(['backend', service.url, service.personaId!]), backendTarget],
      // The README's setting for a process that holds thousands of streams at once: a smaller young generation.
      [
        `backend, memory store, node ${leanFlag}`,
        () => start(['backend', service.url, service.personaId!], [leanFlag]),
        backendTarget,
      ],
    ];
    if (redis instanceof Error) latencyRows.push({ path: `backend, Redis store: not measured (${redis.message})` });
    else {
      const startRedisBackend = () => start(['backend', service.url, service.personaId!, redis.url]);
      targets.push(['backend, Redis store', startRedisBackend, backendTarget]);
    }
    let floor: Awaited<ReturnType<typeof latency>> | undefined;
    for (const [path, begin, targetOf] of targets) {
      const server = await begin();
      try {
        const target = await targetOf(server, service, 20);
        const average = loadAverage();
        const row = await latency(server, target);
        floor ??= row;
        latencyRows.push({
          path,
          'first delta p50 ms': ms(row.firstP50),
          'first delta p99 ms': ms(row.firstP99),
          'added p50 / p99 ms':
            row === floor ? '' : `${ms(row.firstP50 - floor.firstP50)} / ${ms(row.firstP99 - floor.firstP99)}`,
          'whole reply p50 ms': ms(row.wholeP50),
          'server CPU ms per message': row.cpuPerMessage.toFixed(2),
          'CPU × proxy': (row.cpuPerMessage / floor.cpuPerMessage).toFixed(1),
          'messages per s, 8 at a time': row.perSecond,
          'load average': average,
        });
      } finally {
        server.stop();
      }
    }
    // The load test on the proxy and the memory store: Redis adds its own process, not the backend's.
    for (const [path, begin, targetOf] of targets.filter(([name]) => !name.includes('Redis'))) {
      const server = await begin();
      try {
        const target = await targetOf(server, service, streams);
        const idle = usage(server.pid).rssMb;
        for (let attempt = 1; attempt <= attempts; attempt++) {
          const average = loadAverage();
          const row = await burst(server, target);
          loadRows.push({
            path,
            attempt,
            failed: row.failed ? `${row.failed} (${row.how})` : 0,
            'first delta p50 ms': Math.round(row.firstP50),
            'RSS idle / peak MB': `${Math.round(idle)} / ${Math.round(row.peakMb)}`,
            'KB per stream': Math.round(((row.peakMb - idle) * 1024) / streams),
            'load average': average,
          });
        }
      } finally {
        server.stop();
      }
    }
  } finally {
    service.stop();
    if (!(redis instanceof Error)) await redis.stop();
  }
  return { latency: latencyRows, load: loadRows };
}
