#!/usr/bin/env node
/**
 * @module
 * `persona-chat-server`: runs the backend from the command line. Every flag can also be given in the environment
 * as PERSONA_CHAT_ + the flag in upper snake case (PERSONA_CHAT_API_KEY for --api-key), which is how the API key
 * and the token secret should be given in production. Flags win over the environment.
 */
// First, before the backend allocates anything: how much garbage V8 may keep (see heap.ts).
import { heap } from './lean-heap.js';
import { parseArgs } from 'node:util';
import { fail as failWith, stopOnSignals } from '../cli-support.js';
import { createBackend } from './app.js';
import { defaultLimits, envOfFlag, limitFlags, timeoutFlags } from './config.js';
import type { BackendConfig, Limits } from './config.js';
import type { Timeouts } from '../service/client.js';
import { defaultTimeouts } from '../service/client.js';
import { lineWriter } from './log-lines.js';
import { defaultBacklog, serveBackend } from './node.js';

/** What each limit is, for --help (the README's backend section says more). */
const limitHelp: Record<keyof Limits, string> = {
  messageMaxLength: 'longest message, in characters',
  bodyMaxBytes: 'largest request body, in bytes',
  messagesPerUserPerMinute: 'messages one user may send a minute',
  messagesPerIpPerMinute: 'messages one IP address may send a minute',
  sessionsPerIpPerMinute: 'sessions one IP address may start a minute',
  sessionsPerVisitorPerMinute: 'sessions one visitor may start a minute',
  conversationsPerUserPerMinute: 'conversations one user may start a minute',
  conversationReadsPerUserPerMinute: 'reads of a conversation one user may make a minute',
  feedbackPerUserPerMinute: 'feedback one user may give a minute',
  concurrentStreamsPerUser: 'replies one user may have in progress at once',
  replayWindowSeconds: 'how long a reply is kept for re-attaching after its last event',
  eventsPerRun: "most events one reply's log holds (at least 100)",
  bytesPerRun: 'most bytes of text one reply keeps; a longer one ends there',
  runsPerConversation: 'replies each conversation keeps in the replay window',
};

const timeoutHelp: Record<keyof Timeouts, string> = {
  connectMs: "until the service's response headers",
  firstByteMs: "from a stream's headers to its first bytes",
  idleMs: 'the longest pause within a stream',
  totalMs: 'a whole call to the service, body included',
};

/** A flag of a whole number, and on the next line what it is and its default. */
const helpLine = (flag: string, what: string, fallback: number) =>
  `  --${flag} <n>\n                             ${what} (default ${fallback})`;

const limitsHelp = [
  'Limits and timeouts (whole numbers; see the README for what each means):',
  ...Object.entries(limitFlags).map(([name, flag]) =>
    helpLine(flag, limitHelp[name as keyof Limits], defaultLimits[name as keyof Limits]),
  ),
  ...Object.entries(timeoutFlags).map(([name, flag]) =>
    helpLine(flag, timeoutHelp[name as keyof Timeouts], defaultTimeouts[name as keyof Timeouts]),
  ),
  helpLine('ping-interval-ms', '": ping" comments on idle reply streams', 15_000),
].join('\n');

const help = `Usage: persona-chat-server [options]
       persona-chat-server insights [options]   the site owner's report (see insights --help)

Serves the persona-chat backend: the token exchange and the proxy routes <persona-chat> uses.
Every flag can be set in the environment as PERSONA_CHAT_<FLAG> (e.g. PERSONA_CHAT_API_KEY);
repeatable flags take a comma-separated list there.

Options:
  --service-url <url>        the Conversation Service's base URL (required)
  --http2-service-url <url>  the service's HTTP/2 listener, if it has its own
  --api-key <key>            the service's API key (required; prefer PERSONA_CHAT_API_KEY)
  --api-key-header <name>    the header that carries it (default x-svc-api-key)
  --routes <form>            continue paths: auto, chat or continue (default auto)
  --delivery <how>           replies from the service: sse, http2 or json (default sse)
  --persona-id <uuid>        a persona to serve (repeatable; the first is the default)
  --system <name>            the AI system of general conversations (with --model)
  --model <name>             the model of general conversations (with --system)
  --token-secret <secret>    signs tokens and visitor cookies, 32 bytes or more (required)
  --token-ttl <seconds>      token lifetime (default 600)
  --allowed-origin <origin>  an origin whose pages may use the chat (repeatable, required)
  --base-path <path>         where the routes are mounted (default /)
  --cookie-same-site <mode>  the visitor cookie's SameSite: lax (default), strict, or none
                             for a backend on another site than the pages (then also
                             Secure and Partitioned)
  --trust-proxy <n>          proxies in front to trust for X-Forwarded-For: a number,
                             true (1) or false (default false)
  --redis-url <url>          share limits and replies with other instances through this
                             Redis (redis://[user:password@]host[:port][/db]; default: memory)
  --accept-unmarked-end      take a reply stream that ends without a marked end ([DONE], a
                             done event, a finish reason) as complete; only for a service
                             that never marks it, and unsafe behind a proxy that may end a
                             response cleanly in its middle (default: such a reply fails)
  --expose-usage             tell the browser each reply's token counts (usage on the done
                             event and in the JSON reply; default: they stay in the backend)
  --lease-seconds <n>        how soon a reply whose instance died counts as interrupted
                             (default 15)
  --drain-seconds <n>        on SIGTERM or SIGINT, how long replies in progress may go on
                             before they are handed to another instance (default 25); on
                             SIGTERM it keeps listening for at least 5 s of it, refusing
                             new replies, while the load balancer sees /readyz say draining
  --port <n>                 port (default $PERSONA_CHAT_PORT, else $PORT, else 3000; 0
                             picks a free one)
  --host <address>           address to listen on (default 127.0.0.1; 0.0.0.0 for every
                             interface, e.g. in a container)
  --backlog <n>              connections that may wait to be accepted (default ${defaultBacklog}; the
                             kernel lowers it to its net.core.somaxconn)
  -h, --help                 show this help

${limitsHelp}

On start it prints "listening on http://HOST:PORT". A configuration error stops it with
exit code 2 and a message naming the setting. GET <base-path>/healthz answers while the
process runs; GET <base-path>/readyz answers 200 while it should get traffic.`;

const flags = {
  'service-url': { type: 'string' },
  'http2-service-url': { type: 'string' },
  'api-key': { type: 'string' },
  'api-key-header': { type: 'string' },
  routes: { type: 'string' },
  delivery: { type: 'string' },
  'persona-id': { type: 'string', multiple: true },
  system: { type: 'string' },
  model: { type: 'string' },
  'token-secret': { type: 'string' },
  'token-ttl': { type: 'string' },
  'allowed-origin': { type: 'string', multiple: true },
  'base-path': { type: 'string' },
  'cookie-same-site': { type: 'string' },
  'trust-proxy': { type: 'string' },
  'redis-url': { type: 'string' },
  'drain-seconds': { type: 'string' },
  'lease-seconds': { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  backlog: { type: 'string' },
  'accept-unmarked-end': { type: 'boolean' },
  'expose-usage': { type: 'boolean' },
  ...Object.fromEntries(
    [...Object.values(limitFlags), ...Object.values(timeoutFlags), 'ping-interval-ms'].map(flag => [
      flag,
      { type: 'string' } as const,
    ]),
  ),
  help: { type: 'boolean', short: 'h' },
} as const;

type Flag = string;

function fail(message: string): never {
  return failWith('persona-chat-server', message);
}

async function main() {
  let values: Record<Flag, string | string[] | boolean | undefined>;
  try {
    ({ values } = parseArgs({ options: flags, strict: true }));
  } catch (error) {
    fail(`${(error as Error).message} (see --help)`);
  }
  if (values.help) {
    process.stdout.write(`${help}\n`);
    return;
  }
  const env = (flag: Flag) => process.env[envOfFlag(flag)] || undefined;
  const one = (flag: Flag) => (values[flag] as string | undefined) ?? env(flag);
  const many = (flag: Flag) =>
    (values[flag] as string[] | undefined) ??
    env(flag)
      ?.split(',')
      .map(s => s.trim())
      .filter(Boolean);
  const number = (flag: Flag, fallback?: string) => {
    const value = one(flag) ?? (fallback || undefined);
    if (value === undefined) return undefined;
    if (!/^\d+$/.test(value)) fail(`--${flag} must be a whole number`);
    return Number(value);
  };
  const trust = one('trust-proxy');
  let trustProxy: boolean | number = false;
  if (trust === 'true') trustProxy = true;
  else if (trust !== undefined && trust !== 'false') {
    if (!/^\d+$/.test(trust)) fail('--trust-proxy must be a number of proxies, true or false');
    trustProxy = Number(trust);
  }

  const config: BackendConfig = {
    serviceUrl: one('service-url') ?? '',
    http2ServiceUrl: one('http2-service-url'),
    apiKey: one('api-key') ?? '',
    apiKeyHeader: one('api-key-header'),
    routes: one('routes') as BackendConfig['routes'],
    delivery: one('delivery') as BackendConfig['delivery'],
    personaId: many('persona-id'),
    system: one('system'),
    model: one('model'),
    tokenSecret: one('token-secret') ?? '',
    tokenTtlSeconds: number('token-ttl'),
    allowedOrigins: many('allowed-origin') ?? [],
    basePath: one('base-path'),
    cookie: { sameSite: one('cookie-same-site') as 'lax' | undefined },
    limits: Object.fromEntries(
      Object.entries(limitFlags).flatMap(([name, flag]) => {
        const value = number(flag);
        return value === undefined ? [] : [[name, value]];
      }),
    ),
    timeouts: Object.fromEntries(
      Object.entries(timeoutFlags).flatMap(([name, flag]) => {
        const value = number(flag);
        return value === undefined ? [] : [[name, value]];
      }),
    ),
    pingIntervalMs: number('ping-interval-ms'),
    trustProxy,
    leaseSeconds: number('lease-seconds'),
    acceptUnmarkedEnd: values['accept-unmarked-end'] === true || env('accept-unmarked-end') === 'true',
    exposeUsage: values['expose-usage'] === true || env('expose-usage') === 'true',
  };
  // PORT is what hosting platforms set; PERSONA_CHAT_PORT (or --port) wins over it.
  const port = number('port', process.env.PORT) ?? 3000;
  if (port > 65535) fail('--port must be a port number from 0 to 65535');
  const backlog = number('backlog');
  const drainMs = (number('drain-seconds') ?? 25) * 1000;
  const redisUrl = one('redis-url');
  if (redisUrl !== undefined && !/^rediss?:\/\/[^\s]+$/.test(redisUrl)) {
    fail('--redis-url must be a redis:// or rediss:// URL');
  }
  if (redisUrl) {
    const { RedisStore } = await import('./redis-store.js');
    config.store = new RedisStore({ url: redisUrl });
  }
  // The request log, its lines of a moment written together (log-lines.ts); what waits is written at exit.
  const requestLog = lineWriter(text => process.stdout.write(text));
  process.on('exit', () => requestLog.flush());
  config.log = line => requestLog.line(JSON.stringify(line));
  let backend;
  try {
    backend = createBackend(config);
    backend.check();
  } catch (error) {
    fail((error as Error).message.replace(/^persona-chat backend: /, ''));
  }
  let running;
  try {
    running = await serveBackend(backend, { port, host: one('host'), backlog });
  } catch (error) {
    fail(`could not start: ${(error as Error).message}`);
  }
  heap.watch(running.server);
  process.stdout.write(`listening on ${running.url}\n`);
  const store = config.store;
  // SIGTERM comes from an orchestrator, whose load balancer needs a moment to see /readyz say draining; Ctrl+C
  // (SIGINT) comes from someone at a terminal, who does not.
  const settleMs = Math.min(5000, drainMs);
  stopOnSignals(
    async signal => {
      await running.drain(drainMs, { settleMs: signal === 'SIGTERM' ? settleMs : 0 });
      await store?.close();
    },
    drainMs + settleMs + 5000,
  );
}

// `persona-chat-server insights …` is the site owner's report, a program of its own.
if (process.argv[2] === 'insights') await (await import('./insights/cli.js')).main(process.argv.slice(3));
else await main();
