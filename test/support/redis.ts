/**
 * A real Redis for the tests: Debian's `redis-server`, started on a free port of 127.0.0.1 without persistence, and
 * stopped when the test process ends. It can be killed and started again on the same port, to test outages.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface RedisServer {
  url: string;
  /** Kills the server (SIGKILL): connections drop at once, and nothing is kept. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  /** Stalls it (SIGSTOP): connections stay open and nothing is answered, until `resume()`. */
  pause(): void;
  /** Lets a paused server go on (SIGCONT). */
  resume(): void;
  stop(): Promise<void>;
  /** The running server's process id. */
  readonly pid: number | undefined;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise(resolve => server.close(resolve));
  return port;
}

const running = new Set<ChildProcess>();
const killAll = () => running.forEach(child => child.kill('SIGKILL'));
process.on('exit', killAll);
// A test run stopped by a signal does not reach 'exit': its servers go with it all the same.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    killAll();
    process.kill(process.pid, signal);
  });
}

async function launch(port: number): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.once('error', error =>
      reject(new Error(`redis-server could not start (${error.message}); install it: apt-get install -y redis-server`)),
    );
    child.once('exit', code => reject(new Error(`redis-server exited with ${code}: ${output}`)));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) resolve();
    });
  });
  child.stdout!.resume();
  return child;
}

export async function startRedis(): Promise<RedisServer> {
  let port = await freePort();
  let child: ChildProcess | undefined;
  for (let tries = 0; !child; tries++) {
    try {
      child = await launch(port);
    } catch (error) {
      // Another process took the port between the probe and the start.
      if (tries >= 3 || !/Address already in use/.test(String(error))) throw error;
      port = await freePort();
    }
  }
  const kill = async () => {
    if (!child || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    kill,
    start: async () => {
      child = await launch(port);
    },
    pause: () => void child?.kill('SIGSTOP'),
    resume: () => void child?.kill('SIGCONT'),
    stop: kill,
    get pid() {
      return child?.pid;
    },
  };
}
