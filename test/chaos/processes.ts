/**
 * The chaos suite's servers, each a process of its own: Redis, the emulator and the backend instances. Every one is
 * killed when the suite ends, however it ends: by the suite itself, by its exit handler, and, should the suite be
 * killed outright, by a small watchdog that outlives it by a second and kills what it had started.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, rmSync, writeFileSync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const dist = (path: string) => fileURLToPath(new URL(`../../dist/${path}`, import.meta.url));

const live = new Map<number, ChildProcess>();
let pidFile: string | undefined;

/** Writes the pids of the running children where the watchdog reads them. */
function writePids() {
  if (pidFile) writeFileSync(pidFile, [...live.keys()].join(' '));
}

function track(child: ChildProcess) {
  const pid = child.pid!;
  live.set(pid, child);
  writePids();
  child.once('exit', () => {
    live.delete(pid);
    writePids();
  });
}

/** Kills every child still running (a stopped one too: SIGKILL needs no SIGCONT). */
export function killAll() {
  for (const child of live.values()) child.kill('SIGKILL');
  live.clear();
  writePids();
}

/**
 * Makes sure the children end with the suite: at its exit, on a signal, and (through a watchdog process that polls
 * the suite's pid every second) when the suite itself is killed. `dir` holds the watchdog's list of pids.
 */
export function killChildrenOnExit(dir: string) {
  pidFile = join(dir, 'children.pids');
  writePids();
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; [ -s "$1" ] && kill -9 $(cat "$1") 2>/dev/null; rm -f "$1"`;
  spawn('sh', ['-c', script, 'chaos-watchdog', pidFile], { detached: true, stdio: 'ignore' }).unref();
  process.on('exit', () => {
    killAll();
    if (pidFile) rmSync(pidFile, { force: true });
  });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise(resolve => server.close(resolve));
  return port;
}

/** Starts `command`, logs its output to `log`, and resolves with the first line `ready` accepts (or rejects). */
function launch(command: string, args: string[], env: NodeJS.ProcessEnv, log: WriteStream, ready: RegExp) {
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  track(child);
  const tail: string[] = [];
  const started = new Promise<RegExpExecArray>((resolve, reject) => {
    const onLine = (line: string) => {
      log.write(`${line}\n`);
      tail.push(line);
      if (tail.length > 20) tail.shift();
      const match = ready.exec(line);
      if (match) resolve(match);
    };
    createInterface({ input: child.stdout! }).on('line', onLine);
    createInterface({ input: child.stderr! }).on('line', onLine);
    child.once('error', reject);
    child.once('exit', code => reject(new Error(`${command} exited with ${code}: ${tail.join('\n')}`)));
  });
  return { child, started };
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

/** Debian's redis-server without persistence, on a port of its own that it keeps across restarts. */
export class Redis {
  child: ChildProcess | undefined;
  readonly url: string;
  constructor(
    readonly port: number,
    readonly log: WriteStream,
  ) {
    this.url = `redis://127.0.0.1:${port}`;
  }

  static async start(logDir: string) {
    const redis = new Redis(await freePort(), createWriteStream(join(logDir, 'redis.log')));
    await redis.launch();
    return redis;
  }

  /** Starts it (again) on its port, empty. */
  async launch() {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    for (let tries = 0; ; tries++) {
      const { child, started } = launch('redis-server', args, process.env, this.log, /Ready to accept connections/);
      try {
        await started;
        this.child = child;
        return;
      } catch (error) {
        // Its last incarnation may still hold the port for a moment.
        if (tries >= 20 || !/Address already in use/.test(String(error))) throw error;
        await sleep(100);
      }
    }
  }

  /** SIGKILL: connections drop at once, and nothing is kept. */
  async kill() {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  }

  /** Freezes it (SIGSTOP) for `ms`: connections stay open and nothing answers. */
  async stall(ms: number) {
    this.child!.kill('SIGSTOP');
    await sleep(ms);
    this.child!.kill('SIGCONT');
  }
}

/** The emulator's command-line program, at `pace` words per second. */
export async function startEmulator(logDir: string, apiKey: string, pace: number) {
  const args = [dist('emulator/cli.js'), '--port', '0', '--http2-port', '0', '--api-key', apiKey];
  const log = createWriteStream(join(logDir, 'emulator.log'));
  const { started } = launch(
    process.execPath,
    [...args, '--pace', String(pace)],
    { PATH: process.env.PATH },
    log,
    /^listening on (\S+)/,
  );
  return (await started)[1]!;
}

export interface InstanceConfig {
  serviceUrl: string;
  redisUrl: string;
  apiKey: string;
  personaId: string;
  origin: string;
  basePath: string;
  leaseSeconds: number;
  idleTimeoutMs: number;
}

/** One backend instance: `persona-chat-server` in a process of its own, as a site runs it; restarted on its port. */
export class Instance {
  child: ChildProcess | undefined;
  port = 0;
  readonly log: WriteStream;
  constructor(
    readonly name: string,
    readonly config: InstanceConfig,
    logDir: string,
  ) {
    this.log = createWriteStream(join(logDir, `backend-${name}.log`));
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  get running() {
    return Boolean(this.child && this.child.exitCode === null && this.child.signalCode === null);
  }

  /** Starts it on its port (a free one the first time); resolves once it listens. */
  async start() {
    const { config } = this;
    const args = [
      dist('server/cli.js'),
      ['--port', String(this.port)],
      ['--host', '127.0.0.1'],
      ['--base-path', config.basePath],
      ['--lease-seconds', String(config.leaseSeconds)],
      ['--drain-seconds', '2'],
      ['--idle-timeout-ms', String(config.idleTimeoutMs)],
      // The balancer says who the visitor is in X-Forwarded-For; every visitor here comes from one address, though,
      // so the limits per address would be the suite's own, not a visitor's.
      ['--trust-proxy', '1'],
      ['--messages-per-ip-per-minute', '1000000'],
      ['--sessions-per-ip-per-minute', '1000000'],
    ].flat();
    const env = {
      PATH: process.env.PATH,
      PERSONA_CHAT_SERVICE_URL: config.serviceUrl,
      PERSONA_CHAT_API_KEY: config.apiKey,
      PERSONA_CHAT_PERSONA_ID: config.personaId,
      PERSONA_CHAT_TOKEN_SECRET: 'a-chaos-secret-of-more-than-thirty-two-bytes',
      PERSONA_CHAT_ALLOWED_ORIGIN: config.origin,
      PERSONA_CHAT_REDIS_URL: config.redisUrl,
    };
    this.log.write(`--- start ${new Date().toISOString()}\n`);
    for (let tries = 0; ; tries++) {
      const { child, started } = launch(process.execPath, args, env, this.log, /^listening on http:\/\/[^:]+:(\d+)/);
      try {
        this.port = Number((await started)[1]);
        this.child = child;
        return;
      } catch (error) {
        if (tries >= 20 || !/EADDRINUSE|address already in use/i.test(String(error))) throw error;
        await sleep(100);
      }
    }
  }

  /** Sends `signal` and resolves once the process exited (SIGKILL after `giveUpMs`). */
  async stop(signal: NodeJS.Signals, giveUpMs = 30_000) {
    const child = this.child;
    if (!child || !this.running) return;
    this.log.write(`--- ${signal} ${new Date().toISOString()}\n`);
    const exited = once(child, 'exit');
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), giveUpMs);
    await exited;
    clearTimeout(timer);
  }
}
