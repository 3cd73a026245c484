// What one message costs Redis: the commands the backend sends for it (by name, from INFO commandstats, scripts
// counted as one EVALSHA each) and the bytes both ways (INFO stats), over `TRAFFIC_MESSAGES` (500) messages sent one
// at a time through the backend as built (dist/) on a real Redis, after `TRAFFIC_WARMUP` (100) others.
//
//   npx tsc -p tsconfig.build.json && npx tsx test/bench/redis-traffic.ts
import { spawn } from 'node:child_process';
import { request as httpRequest, Agent } from 'node:http';
import { createInterface } from 'node:readline';
import { createClient } from '@redis/client';
import { startRedis } from '../support/redis.js';

const messages = Number(process.env.TRAFFIC_MESSAGES ?? 500);
const warmUp = Number(process.env.TRAFFIC_WARMUP ?? 100);
const site = 'https://bench.example.com';

const children: ReturnType<typeof spawn>[] = [];
process.on('exit', () => children.forEach(child => child.kill('SIGKILL')));

async function start(args: string[]): Promise<{ url: string; personaId?: string }> {
  const child = spawn(process.execPath, ['test/bench/serve.mjs', ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  const line = await new Promise<string>(resolve => createInterface({ input: child.stdout! }).once('line', resolve));
  return JSON.parse(line) as { url: string; personaId?: string };
}

function post(url: string, headers: Record<string, string>, body: string, agent: Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) } },
      res => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (piece: string) => (text += piece));
        res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${res.statusCode}: ${text}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const redis = await startRedis();
const service = await start(['emulator']);
const backend = await start(['backend', service.url, service.personaId!, redis.url]);
const agent = new Agent({ keepAlive: true, maxSockets: 1 });
const session = await fetch(`${backend.url}/session`, {
  method: 'POST',
  headers: { origin: site, 'x-persona-chat': '1', 'content-type': 'application/json' },
  body: '{}',
});
const { token } = (await session.json()) as { token: string };
const conversations: string[] = [];
for (let i = 0; i < 20; i++) {
  const created = await fetch(`${backend.url}/conversations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  conversations.push(((await created.json()) as { id: string }).id);
}
let deltas = 0;
const send = async (i: number) => {
  const text = await post(
    `${backend.url}/conversations/${conversations[i % conversations.length]}/messages`,
    {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'idempotency-key': crypto.randomUUID(),
    },
    JSON.stringify({ message: 'How long does shipping take?' }),
    agent,
  );
  deltas += text.split('event: delta').length - 1;
};
for (let i = 0; i < warmUp; i++) await send(i);

const client = createClient({ url: redis.url });
await client.connect();
const stats = async () => {
  const info = `${await client.info('stats')}\n${await client.info('commandstats')}`;
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  const commands = new Map<string, number>();
  for (const [, name, calls] of info.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm)) {
    commands.set(name!, Number(calls));
  }
  return { input: field('total_net_input_bytes'), output: field('total_net_output_bytes'), commands };
};
const before = await stats();
deltas = 0;
for (let i = 0; i < messages; i++) await send(i);
const after = await stats();
const deltasPerMessage = deltas / messages;
// Then as many again under MONITOR, which shows what the backend sends, command by command (and the commands scripts
// run, marked "lua", which are not counted): MONITOR's own output would count in the bytes above.
const monitor = createClient({ url: redis.url });
await monitor.connect();
let counting = true;
const sent = new Map<string, number>();
await monitor.monitor(line => {
  if (!counting || / \[\d+ lua\] /.test(line)) return;
  const name = /"([^"]+)"/.exec(line)?.[1]?.toLowerCase() ?? '?';
  sent.set(name, (sent.get(name) ?? 0) + 1);
});
for (let i = 0; i < messages; i++) await send(i);
counting = false;
// This script's own INFO and CONFIG are not the backend's.
const rows = [...after.commands]
  .map(([name, calls]) => [name, calls - (before.commands.get(name) ?? 0)] as const)
  .filter(([name, calls]) => calls > 0 && name !== 'info' && !name.startsWith('config'))
  .sort((a, b) => b[1] - a[1]);
const total = rows.reduce((sum, [, calls]) => sum + calls, 0);
console.log(`${messages} messages, ${deltasPerMessage.toFixed(1)} delta events per message as streamed`);
const sentRows = [...sent].filter(([name]) => name !== 'info').sort((a, b) => b[1] - a[1]);
console.log('Sent by the backend (round trips, or commands of a pipeline):\n| command | per message |\n| --- | --- |');
for (const [name, calls] of sentRows) console.log(`| ${name} | ${(calls / messages).toFixed(2)} |`);
console.log(`| all | ${(sentRows.reduce((sum, [, calls]) => sum + calls, 0) / messages).toFixed(2)} |`);
console.log(
  '\nRun by Redis (INFO commandstats: scripts and the commands they run):\n| command | per message |\n| --- | --- |',
);
for (const [name, calls] of rows) console.log(`| ${name} | ${(calls / messages).toFixed(2)} |`);
console.log(`| all | ${(total / messages).toFixed(2)} |`);
console.log(
  `bytes per message: into Redis ${Math.round((after.input - before.input) / messages)}, out of Redis ${Math.round(
    (after.output - before.output) / messages,
  )}`,
);
await client.quit();
await monitor.quit().catch(() => {});
agent.destroy();
await redis.stop();
process.exit(0);
