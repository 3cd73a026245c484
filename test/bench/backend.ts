// The backend's cost on the way of a reply, measured against a bare node:http proxy on the same emulator. Each server
// runs as built (dist/) in a process of its own: the proxy and the emulator from serve.mjs, the backend as the shipped
// `persona-chat-server` CLI runs it (dist/server/cli.js, with its flags, its request log on stdout and whatever it
// does to Node's own settings); the clients run in this process, so that a server's CPU time and memory are its own.
//
// - latency: `BENCH_MESSAGES` messages (1,000) one at a time after `BENCH_WARMUP` (2,000), the emulator at pace 0
//   (instant replies), in `BENCH_ROUNDS` (5) rounds that go through the paths in turn: the time to the first delta
//   and to the end, the server's CPU per message and its ratio to the proxy's in each round (the target is judged on
//   the median of those ratios: a machine whose pace drifts moves both sides of a ratio together); then as many 8 at
//   a time, for throughput. The warm-up lets V8 compile each server's hot paths first: measured from a cold start,
//   the backend's CPU is mostly the optimizing compiler's work on its background threads, which a server pays once,
//   not per message. The backend runs with its limits out of the way, on its memory store and on a real Redis.
// - held open: `BENCH_STREAMS` (2,000) streams opened at once, each by a visitor of its own in a conversation of its
//   own on a connection of its own, `BENCH_ATTEMPTS` (3) times in a row on one server process, in front of a second
//   emulator at its default pace (12 words a second) answering with 240 words: every stream is held open about 20 s,
//   as a model's reply is. The requests that failed and how, the first delta's median, how long a stream stayed
//   open, the server's peak RSS (the kernel's high-water mark, reset before each burst) and its ratio to the proxy's
//   in the same burst, the server's CPU, and the CPU share of the emulator, of Redis (on the Redis path) and of this
//   process (none may be the bottleneck).
// - at once (`BENCH_BACKEND=burst`, not run by default: the held-open run says more): the same bursts in front of the
//   emulator at pace 0, each stream over in a moment. `BENCH_BACKEND` names the tables to run, `latency,held` by
//   default.
//
// `BENCH_BEFORE=<dir>` adds the backend of another checkout (its dist/server/cli.js, built) beside this one's, with
// the same clients in the same run: a before-and-after of a change, on its memory store, or on Redis with
// `BENCH_BEFORE_STORE=redis`. `BENCH_NODE_FLAGS` are given to the backend's
// node: a V8 setting tried beside the shipped one, in a run of its own.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { startRedis } from '../support/redis.js';

const messages = Number(process.env.BENCH_MESSAGES ?? 1000);
const roundCount = Number(process.env.BENCH_ROUNDS ?? 5);
const warmUp = Number(process.env.BENCH_WARMUP ?? 2000);
const streams = Number(process.env.BENCH_STREAMS ?? 2000);
const attempts = Number(process.env.BENCH_ATTEMPTS ?? 3);
const tables = new Set((process.env.BENCH_BACKEND ?? 'latency,held').split(','));
const before = process.env.BENCH_BEFORE;
const beforeStore = process.env.BENCH_BEFORE_STORE ?? 'memory';
const concurrency = 8;
/**
 * The held-open bursts wait as long as the proxy does for the service's answer: 2,000 requests at once keep the
 * emulator, on the same 2 CPUs, from answering some for up to 40 s (the proxy's first delta shows it), where the
 * backend's default 10 s would count them as the backend's failures.
 */
const heldFlags = ['--connect-timeout-ms', '120000'];
/** The emulator CLI's default pace, in words per second (src/emulator/cli.ts). */
const defaultPace = 12;
const apiKey = 'bench-key';
const tokenSecret = 'a-bench-secret-of-more-than-thirty-two-bytes';
export const site = 'https://bench.example.com';
export const question = 'How long does shipping take?';
/** The bench persona's question whose answer is 240 words (serve.mjs). */
export const longQuestion = 'Tell me the long answer.';
/** Every limit of the backend out of the way: the bench measures the way of a reply, not the refusals. */
const noLimits = [
  'messages-per-user-per-minute',
  'messages-per-ip-per-minute',
  'sessions-per-ip-per-minute',
  'conversations-per-user-per-minute',
  'concurrent-streams-per-user',
].flatMap(flag => [`--${flag}`, '1000000000']);

interface Server {
  url: string;
  personaId?: string;
  heldPersonaId?: string;
  pid: number;
  /** Lines the server logged at the warn or error level. */
  complaints: string[];
  stop(): void;
}

const children = new Set<ChildProcess>();
process.on('exit', () => children.forEach(child => child.kill('SIGKILL')));

/** Starts a process and waits for its first line on stdout; the lines after it go to `onLine`. */
async function spawnServer(
  name: string,
  args: string[],
  env: Record<string, string> = {},
  onLine: (line: string) => void = () => {},
) {
  const child = spawn(process.execPath, args, {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...env },
  });
  children.add(child);
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    child.once('exit', code => reject(new Error(`${name} exited with ${code}`)));
    lines.once('line', resolve);
  });
  lines.on('line', onLine);
  return {
    first,
    pid: child.pid!,
    stop: () => {
      children.delete(child);
      child.kill('SIGKILL');
    },
  };
}

/** Starts one server of serve.mjs and waits for the line with its URL. */
export async function start(args: string[]): Promise<Server> {
  const { first, pid, stop } = await spawnServer(`serve.mjs ${args[0]!}`, ['test/bench/serve.mjs', ...args]);
  return { ...(JSON.parse(first) as { url: string; personaId?: string }), pid, stop, complaints: [] };
}

/**
 * Starts the backend as `persona-chat-server` runs it (the CLI of the checkout `root`, as built), on a free port,
 * serving `personaId`, on Redis when given its URL, with `extra` flags; its request log is read, and what it logged at
 * the warn or error level is kept.
 */
export async function startBackend(
  root: string,
  serviceUrl: string,
  personaId: string,
  redisUrl?: string,
  extra: string[] = [],
): Promise<Server> {
  const complaints: string[] = [];
  const flags = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const args = [...flags, resolve(root, 'dist/server/cli.js'), '--port', '0', ...noLimits, ...extra];
  if (redisUrl) args.push('--redis-url', redisUrl);
  const env = {
    PERSONA_CHAT_SERVICE_URL: serviceUrl,
    PERSONA_CHAT_API_KEY: apiKey,
    PERSONA_CHAT_PERSONA_ID: personaId,
    PERSONA_CHAT_TOKEN_SECRET: tokenSecret,
    PERSONA_CHAT_ALLOWED_ORIGIN: site,
  };
  const { first, pid, stop } = await spawnServer('persona-chat-server', args, env, line => {
    if (!line.includes('"level":"info"')) complaints.push(line);
    if (process.env.BENCH_LOG && !line.includes('"level":"info"')) console.error(line);
  });
  const url = /^listening on (\S+)$/.exec(first)?.[1];
  if (!url) throw new Error(`persona-chat-server said "${first}"`);
  return { url, pid, stop, complaints };
}

/**
 * The CPU time a process has used, in ms, and its resident memory now and at its peak, in MB. The CPU time is the
 * scheduler's own count in nanoseconds, summed over the process's threads (the `schedstat` of each thread in
 * `/proc/<pid>/task`), where the kernel gives it; else the 10 ms clock ticks of `/proc/<pid>/stat`, too coarse for a
 * round of a few hundred messages of a fraction of a millisecond each.
 */
function usage(pid: number) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { cpuMs: scheduledMs(pid) ?? ticks * 10, rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

function scheduledMs(pid: number): number | undefined {
  try {
    let ns = 0;
    for (const thread of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // The thread ended between the listing and the read: its time is the process's no more.
      }
    }
    return ns / 1e6;
  } catch {
    return undefined;
  }
}

/**
 * Resets the process's peak RSS (VmHWM) to its RSS now, so that the peak read later is this burst's; false where the
 * kernel does not let us (then the peak is sampled).
 */
function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
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
        let tail = '';
        res.setEncoding('utf8');
        res.on('data', (text: string) => {
          if (!first && text.includes('delta')) first = performance.now() - started;
          tail = text;
        });
        res.on('end', () => {
          // A stream that ends without its last event (`done`, or the proxy's `[DONE]`) is a failure too.
          if (!/done|DONE/.test(tail)) {
            reject(Object.assign(new Error(`ended without its end: ${tail.slice(-200)}`), { code: 'cut' }));
          } else resolve([first, performance.now() - started]);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The proxy, with `count` conversations of `personaId` made at the service. Each visitor has a conversation of their
 * own: one conversation of thousands of messages would make every read of it (the backend's, the emulator's) the
 * cost.
 */
async function proxyTarget(server: Server, service: Server, personaId: string, count: number): Promise<Target> {
  const conversations = await eightAtATime(count, async () => {
    const created = await fetch(`${service.url}/conversations/persona`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-api-key': apiKey },
      body: JSON.stringify({ personaId, externalUserId: 'bench' }),
    });
    return ((await created.json()) as { conversationId: string }).conversationId;
  });
  return {
    send: (message, agent, n) =>
      post(`${server.url}/${conversations[n % count]}`, { 'content-type': 'application/json' }, message, agent),
  };
}

/**
 * Visitors of the backend (`visitors`, each with a token of their own) and `count` conversations shared among them in
 * turn; then messages with fresh Idempotency-Keys.
 */
async function backendTarget(server: Server, count: number, visitors = 1): Promise<Target> {
  const base = server.url;
  const tokens = await eightAtATime(visitors, async () => {
    const session = await fetch(`${base}/session`, {
      method: 'POST',
      headers: { origin: site, 'x-persona-chat': '1', 'content-type': 'application/json' },
      body: '{}',
    });
    if (!session.ok) throw new Error(`a session answered ${session.status}: ${await session.text()}`);
    return ((await session.json()) as { token: string }).token;
  });
  const conversations = await eightAtATime(count, async i => {
    const created = await fetch(`${base}/conversations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens[i % visitors]}`, 'content-type': 'application/json' },
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
          authorization: `Bearer ${tokens[(n % count) % visitors]}`,
          'content-type': 'application/json',
          accept: 'text/event-stream',
          'idempotency-key': crypto.randomUUID(),
        },
        message,
        agent,
      ),
  };
}

const median = (values: number[]) => percentile(values, 50);
const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((values.length * p) / 100))] ?? NaN;

/** The figures of one path in the latency table. */
interface Latency {
  firstP50: number;
  firstP99: number;
  wholeP50: number;
  /** The server's CPU per message over every round. */
  cpuPerMessage: number;
  /** The server's CPU per message in each round. */
  rounds: number[];
  perSecond: number;
}

/**
 * Sends `warmUp` messages to each target, then `messages` more one at a time in `rounds` rounds, each round going
 * through the paths in turn: the times to the first delta and to the end, and the server's CPU per message, in every
 * round. A machine's pace drifts (other tenants, its clock): a path measured a minute after another would carry the
 * drift into their ratio, where the rounds put both in the same moments. Then as many messages again, 8 at a time
 * (messages per second).
 */
async function latencies(targets: { server: Server; target: Target }[]): Promise<Latency[]> {
  const agents = targets.map(() => new Agent({ keepAlive: true, maxSockets: concurrency }));
  for (const [t, { target }] of targets.entries())
    for (let i = 0; i < warmUp; i++) await target.send(question, agents[t]!, i);
  const firsts = targets.map((): number[] => []);
  const wholes = targets.map((): number[] => []);
  const rounds = targets.map((): number[] => []);
  const cpu = targets.map(() => 0);
  const perRound = Math.ceil(messages / roundCount);
  for (let round = 0; round < roundCount; round++) {
    for (const [t, { server, target }] of targets.entries()) {
      const before = usage(server.pid).cpuMs;
      for (let i = 0; i < perRound; i++) {
        const [first, whole] = await target.send(question, agents[t]!, round * perRound + i);
        firsts[t]!.push(first);
        wholes[t]!.push(whole);
      }
      const used = usage(server.pid).cpuMs - before;
      cpu[t]! += used;
      rounds[t]!.push(used / perRound);
    }
  }
  const out: Latency[] = [];
  for (const [t, { target }] of targets.entries()) {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < messages; i = next++) await target.send(question, agents[t]!, i);
      }),
    );
    const elapsed = performance.now() - started;
    agents[t]!.destroy();
    out.push({
      firstP50: percentile(firsts[t]!, 50),
      firstP99: percentile(firsts[t]!, 99),
      wholeP50: percentile(wholes[t]!, 50),
      cpuPerMessage: cpu[t]! / (perRound * roundCount),
      rounds: rounds[t]!,
      perSecond: Math.round((messages * 1000) / elapsed),
    });
  }
  return out;
}

/**
 * Opens `streams` streams at once, each on its own connection: what failed, the first delta, how long the streams
 * stayed open, the server's peak RSS and CPU, and the CPU share of the emulator and of this process meanwhile.
 */
async function burst(server: Server, service: Server, target: Target, message: string, redisPid?: number) {
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const exact = resetPeak(server.pid);
  let peak = usage(server.pid).rssMb;
  const sampler = setInterval(() => (peak = Math.max(peak, usage(server.pid).rssMb)), 50);
  const failures = new Map<string, number>();
  const firsts: number[] = [];
  const wholes: number[] = [];
  const serverBefore = usage(server.pid).cpuMs;
  const serviceBefore = usage(service.pid).cpuMs;
  const redisBefore = redisPid ? usage(redisPid).cpuMs : 0;
  const ownBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: streams }, (_, i) =>
      target.send(message, agent, i).then(
        ([first, whole]) => {
          firsts.push(first);
          wholes.push(whole);
        },
        (error: NodeJS.ErrnoException) => {
          const code = error.code ?? error.message;
          failures.set(code, (failures.get(code) ?? 0) + 1);
        },
      ),
    ),
  );
  const elapsed = performance.now() - started;
  clearInterval(sampler);
  const after = usage(server.pid);
  peak = exact ? after.peakMb : Math.max(peak, after.rssMb);
  const own = process.cpuUsage(ownBefore);
  return {
    failed: [...failures.values()].reduce((a, b) => a + b, 0),
    how: [...failures].map(([code, n]) => `${n} ${code}`).join(', '),
    firstP50: percentile(firsts, 50),
    firstMax: firsts.length ? Math.max(...firsts) : NaN,
    wholeP50: percentile(wholes, 50),
    peakMb: peak,
    serverCpuMs: after.cpuMs - serverBefore,
    serviceShare: (usage(service.pid).cpuMs - serviceBefore) / elapsed,
    redisShare: redisPid ? (usage(redisPid).cpuMs - redisBefore) / elapsed : undefined,
    ownShare: (own.user + own.system) / 1000 / elapsed,
    elapsed,
  };
}

const ms = (value: number) => value.toFixed(1);
const percent = (share: number) => `${Math.round(share * 100)}%`;
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const pass = (ok: boolean) => (ok ? 'pass' : '**fail**');

type Row = Record<string, unknown>;

/** A row, also told on stderr as soon as it is measured: a long run shows how it goes. */
const progress = (row: Row) => {
  console.error(JSON.stringify(row));
  return row;
};

export interface BackendTables {
  latency: Row[];
  held: Row[];
  burst: Row[];
  targets: Row[];
}

export async function backendBench(): Promise<BackendTables> {
  const instant = await start(['emulator', '0']);
  const paced = tables.has('held') ? await start(['emulator', String(defaultPace)]) : undefined;
  const out: BackendTables = { latency: [], held: [], burst: [], targets: [] };
  const redis = await startRedis().catch((error: Error) => error);
  /** Each path's figures, for the targets. */
  const cpuPerMessage = new Map<string, { cpu: number; ratio: number }>();
  /** Each path's first delta, p50 and p99, for the targets. */
  const firstDelta = new Map<string, [number, number]>();
  const heldBursts = new Map<string, { failed: number; peakMb: number }[]>();
  try {
    type Begin = (service: Server, personaId: string, flags?: string[]) => Promise<Server>;
    type Make = (
      server: Server,
      service: Server,
      personaId: string,
      count: number,
      visitors: number,
    ) => Promise<Target>;
    const redisPath = 'backend, Redis store';
    const onRedis = (path: string) => path.endsWith('Redis store');
    const ofBackend: Make = (server, _service, _personaId, count, visitors) => backendTarget(server, count, visitors);
    const paths: [string, Begin, Make][] = [
      ['bare node:http proxy', service => start(['proxy', service.url]), proxyTarget],
      [
        'backend, memory store',
        (service, id, flags) => startBackend('.', service.url, id, undefined, flags),
        ofBackend,
      ],
    ];
    if (redis instanceof Error) out.latency.push({ path: `${redisPath}: not measured (${redis.message})` });
    else
      paths.push([redisPath, (service, id, flags) => startBackend('.', service.url, id, redis.url, flags), ofBackend]);
    // The other checkout on one store only (`BENCH_BEFORE_STORE`), beside this one's: both would make the run much
    // longer.
    if (before && beforeStore === 'redis' && !(redis instanceof Error)) {
      const begin: Begin = (service, id, flags) => startBackend(before, service.url, id, redis.url, flags);
      paths.push([`backend before (${before}), Redis store`, begin, ofBackend]);
    } else if (before) {
      const begin: Begin = (service, id, flags) => startBackend(before, service.url, id, undefined, flags);
      paths.splice(2, 0, [`backend before (${before}), memory store`, begin, ofBackend]);
    }

    if (tables.has('latency')) {
      const started: { path: string; server: Server; target: Target }[] = [];
      try {
        for (const [path, begin, targetOf] of paths) {
          const server = await begin(instant, instant.personaId!);
          started.push({ path, server, target: await targetOf(server, instant, instant.personaId!, 20, 1) });
        }
        const average = loadAverage();
        const rows = await latencies(started);
        const floor = rows[0]!;
        for (const [t, { path }] of started.entries()) {
          const row = rows[t]!;
          // The ratio of each round, taken in the same moments as the proxy's; their median.
          const ratio = median(row.rounds.map((cpu, round) => cpu / floor.rounds[round]!));
          cpuPerMessage.set(path, { cpu: row.cpuPerMessage, ratio });
          firstDelta.set(path, [row.firstP50, row.firstP99]);
          out.latency.push(
            progress({
              path,
              'first delta p50 ms': ms(row.firstP50),
              'first delta p99 ms': ms(row.firstP99),
              'added p50 / p99 ms':
                row === floor ? '' : `${ms(row.firstP50 - floor.firstP50)} / ${ms(row.firstP99 - floor.firstP99)}`,
              'whole reply p50 ms': ms(row.wholeP50),
              'server CPU ms per message': row.cpuPerMessage.toFixed(2),
              'each round': row.rounds.map(cpu => cpu.toFixed(2)).join(' '),
              'CPU × proxy, median of the rounds': ratio.toFixed(2),
              'messages per s, 8 at a time': row.perSecond,
              'load average before / after': `${average} / ${loadAverage()}`,
            }),
          );
        }
      } finally {
        for (const { server } of started) server.stop();
      }
    }

    const bursts = async (service: Server, personaId: string, message: string, rows: Row[], held: boolean) => {
      let floor: number[] = [];
      for (const [path, begin, targetOf] of paths) {
        const server = await begin(service, personaId, held ? heldFlags : []);
        try {
          // A visitor of their own for each stream, as 2,000 people in 2,000 pages would be.
          const target = await targetOf(server, service, personaId, streams, streams);
          const idle = usage(server.pid).rssMb;
          const peaks: { failed: number; peakMb: number }[] = [];
          for (let attempt = 1; attempt <= attempts; attempt++) {
            const average = loadAverage();
            const redisPid = onRedis(path) && !(redis instanceof Error) ? redis.pid : undefined;
            const row = await burst(server, service, target, message, redisPid);
            peaks.push(row);
            const ratio = floor.length ? (row.peakMb / floor[attempt - 1]!).toFixed(2) : '';
            rows.push(
              progress({
                path,
                attempt,
                failed: row.failed ? `${row.failed} (${row.how})` : 0,
                'first delta p50 / max ms': `${Math.round(row.firstP50)} / ${Math.round(row.firstMax)}`,
                ...(held ? { 'open p50 s': (row.wholeP50 / 1000).toFixed(1) } : {}),
                'RSS idle / peak MB': `${Math.round(idle)} / ${Math.round(row.peakMb)}`,
                'KB per stream': Math.round(((row.peakMb - idle) * 1024) / streams),
                'peak × proxy': ratio,
                'server CPU s': (row.serverCpuMs / 1000).toFixed(1),
                'emulator / Redis / bench CPU': [row.serviceShare, row.redisShare, row.ownShare]
                  .map(share => (share === undefined ? '–' : percent(share)))
                  .join(' / '),
                'Redis CPU ms per reply':
                  row.redisShare === undefined ? '' : ((row.redisShare * row.elapsed) / streams).toFixed(2),
                'load average': average,
              }),
            );
          }
          if (!floor.length) floor = peaks.map(p => p.peakMb);
          if (held) heldBursts.set(path, peaks);
          if (server.complaints.length) {
            rows.push({ path, attempt: `${server.complaints.length} lines logged at warn or error, the first:` });
            rows.push({ path, attempt: server.complaints[0]!.slice(0, 300).replaceAll('|', '\\|') });
          }
        } finally {
          server.stop();
        }
      }
    };
    if (paced) await bursts(paced, paced.heldPersonaId!, longQuestion, out.held, true);
    if (tables.has('burst')) await bursts(instant, instant.personaId!, question, out.burst, false);

    const proxyCpu = cpuPerMessage.get(paths[0]![0]);
    const proxyPeaks = heldBursts.get(paths[0]![0]);
    for (const [path] of paths.slice(1)) {
      const cpu = cpuPerMessage.get(path);
      const bound = onRedis(path) ? 4 : 2.5;
      if (cpu !== undefined && proxyCpu) {
        out.targets.push({
          target: `${path}: server CPU per message ≤ ${bound} × the proxy's (the median of the rounds' ratios)`,
          figure: `${cpu.cpu.toFixed(2)} / ${proxyCpu.cpu.toFixed(2)} ms; ${cpu.ratio.toFixed(2)}`,
          met: pass(cpu.ratio <= bound),
        });
      }
      const memory = firstDelta.get(paths[1]![0]);
      const own = firstDelta.get(path);
      if (onRedis(path) && memory && own) {
        const [p50, p99] = [own[0] - memory[0], own[1] - memory[1]];
        out.targets.push({
          target: `${path}: first delta within +1 ms p50 / +10 ms p99 of the memory store's`,
          figure: `${p50 >= 0 ? '+' : ''}${ms(p50)} / ${p99 >= 0 ? '+' : ''}${ms(p99)} ms`,
          met: pass(p50 <= 1 && p99 <= 10),
        });
      }
      const peaks = heldBursts.get(path);
      if (peaks && proxyPeaks) {
        const ratios = peaks.map((p, i) => p.peakMb / proxyPeaks[i]!.peakMb);
        const failed = peaks.reduce((n, p) => n + p.failed, 0);
        out.targets.push({
          target: `${path}: ${streams} streams held open, ${attempts} bursts: 0 failed, peak RSS ≤ 2 × the proxy's`,
          figure: `${failed} failed; ${ratios.map(r => r.toFixed(2)).join(', ')}`,
          met: pass(failed === 0 && ratios.every(r => r <= 2)),
        });
      }
    }
  } finally {
    instant.stop();
    paced?.stop();
    if (!(redis instanceof Error)) await redis.stop();
  }
  return out;
}
