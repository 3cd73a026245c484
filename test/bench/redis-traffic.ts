// What one message costs Redis: the commands the backend sends for it (by name, from INFO commandstats, scripts
// counted as one EVALSHA each) and the bytes both ways (INFO stats), over `TRAFFIC_MESSAGES` messages sent through the
// backend as its CLI runs it (dist/server/cli.js) on a real Redis, after `TRAFFIC_WARMUP` others.
//
// - By default the emulator answers at once (pace 0) with a short reply, and the messages (500, after 100) go one at
//   a time: a reply's events come in a read or two, so this is the least a message costs.
// - `TRAFFIC_PACE=12` makes the emulator write 12 words a second, its default pace, answering with 240 words, as a
//   model does; the messages (100, after 10) go `TRAFFIC_AT_ONCE` (50) at a time, each in a conversation of its own.
//   The events of a reply then come a few at a time: this is what a message costs as visitors see it.
//
//   npx tsc -p tsconfig.build.json && npx tsx test/bench/redis-traffic.ts
import { request as httpRequest, Agent } from 'node:http';
import { createClient } from '@redis/client';
import { startRedis } from '../support/redis.js';
import { longQuestion, question as shortQuestion, site, start, startBackend } from './backend.js';

const pace = Number(process.env.TRAFFIC_PACE ?? 0);
const messages = Number(process.env.TRAFFIC_MESSAGES ?? (pace ? 100 : 500));
const warmUp = Number(process.env.TRAFFIC_WARMUP ?? (pace ? 10 : 100));
const atOnce = pace ? Number(process.env.TRAFFIC_AT_ONCE ?? 50) : 1;
/** The bench persona's question whose answer is 240 words, or the emulator's short one. */
const question = pace ? longQuestion : shortQuestion;

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
const service = await start(['emulator', String(pace)]);
const backend = await startBackend('.', service.url, pace ? service.heldPersonaId! : service.personaId!, redis.url);
const agent = new Agent({ keepAlive: true, maxSockets: atOnce });
const session = await fetch(`${backend.url}/session`, {
  method: 'POST',
  headers: { origin: site, 'x-persona-chat': '1', 'content-type': 'application/json' },
  body: '{}',
});
const { token } = (await session.json()) as { token: string };
const conversations: string[] = [];
for (let i = 0; i < Math.max(20, atOnce); i++) {
  const created = await fetch(`${backend.url}/conversations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: '{}',
  });
  conversations.push(((await created.json()) as { id: string }).id);
}
let deltas = 0;
/** Sends the `i`th message; at a time with others, in the conversation of its `slot` of sending. */
const send = async (i: number, slot?: number) => {
  const text = await post(
    `${backend.url}/conversations/${conversations[(slot ?? i) % conversations.length]}/messages`,
    {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'idempotency-key': crypto.randomUUID(),
    },
    JSON.stringify({ message: question }),
    agent,
  );
  deltas += text.split('event: delta').length - 1;
};
/** Sends `count` messages, `atOnce` at a time. */
const sendAll = async (count: number) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: atOnce }, async (_, slot) => {
      for (let i = next++; i < count; i = next++) await send(i, atOnce > 1 ? slot : undefined);
    }),
  );
};
await sendAll(warmUp);

const client = createClient({ url: redis.url });
await client.connect();
const stats = async () => {
  const info = `${await client.info('stats')}\n${await client.info('commandstats')}\n${await client.info('cpu')}`;
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  const commands = new Map<string, number>();
  for (const [, name, calls] of info.matchAll(/^cmdstat_([a-z|_-]+):calls=(\d+)/gm)) {
    commands.set(name!, Number(calls));
  }
  return {
    input: field('total_net_input_bytes'),
    output: field('total_net_output_bytes'),
    // Redis's own CPU, its threads included (getrusage), in seconds.
    cpuS: field('used_cpu_user') + field('used_cpu_sys'),
    commands,
  };
};
const before = await stats();
deltas = 0;
await sendAll(messages);
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
await sendAll(messages);
counting = false;
// This script's own INFO and CONFIG are not the backend's.
const rows = [...after.commands]
  .map(([name, calls]) => [name, calls - (before.commands.get(name) ?? 0)] as const)
  .filter(([name, calls]) => calls > 0 && name !== 'info' && !name.startsWith('config'))
  .sort((a, b) => b[1] - a[1]);
const total = rows.reduce((sum, [, calls]) => sum + calls, 0);
console.log(
  `${messages} messages, ${atOnce} at a time, the emulator at pace ${pace}: ${deltasPerMessage.toFixed(1)} delta events per message as streamed`,
);
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
console.log(
  `Redis CPU per message: ${(((after.cpuS - before.cpuS) * 1000) / messages).toFixed(3)} ms (INFO cpu; this script's INFO calls included)`,
);
await client.quit();
// A connection in MONITOR mode answers no QUIT: it is closed.
monitor.destroy();
agent.destroy();
await redis.stop();
process.exit(0);
