import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { ErrorEnvelope, MessageReply } from '../../src/protocol.js';
import { startEmulator } from '../../src/emulator/node.js';
import { limitFlags, timeoutFlags } from '../../src/server/config.js';
import { busyGrowingPercent, heapGrowingPercent } from '../../src/server/heap.js';
import { backlogOf, postSession, tokenSecret } from '../support/backend.js';
import { apiKey, juniper } from '../support/service.js';
import { until } from '../support/until.js';

const site = 'https://www.example.com';

describe('persona-chat-server CLI', () => {
  const cli = fileURLToPath(new URL('../../src/server/cli.ts', import.meta.url));
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], {
      encoding: 'utf8',
      timeout: 20_000,
      env: { PATH: process.env.PATH, ...env },
    });
  const good = {
    PERSONA_CHAT_SERVICE_URL: 'http://127.0.0.1:4010',
    PERSONA_CHAT_API_KEY: apiKey,
    PERSONA_CHAT_PERSONA_ID: juniper.personaId,
    PERSONA_CHAT_TOKEN_SECRET: tokenSecret,
    PERSONA_CHAT_ALLOWED_ORIGIN: `${site},https://shop.example.com`,
  };

  /** The CLI with the good settings and `env` over them, once it says where it listens. */
  async function startCli(args: string[], env: Record<string, string>) {
    const child = spawn(process.execPath, ['--import', 'tsx', cli, ...args], {
      env: { PATH: process.env.PATH, ...good, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout! });
    const line = await new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      child.once('exit', code => reject(new Error(`exited with ${code}`)));
    });
    /** The lines it printed after that one. */
    const printed: string[] = [];
    lines.on('line', more => printed.push(more));
    return { child, line, url: line.split(' ')[2]!, printed, closed: once(lines, 'close') };
  }

  it('starts from the environment (the platform’s PORT too), serves the routes, and exits 0 on SIGTERM', async () => {
    const { child, line, url, printed, closed } = await startCli(['--base-path', '/chat'], {
      PORT: '0',
      PERSONA_CHAT_HOST: 'localhost',
      PERSONA_CHAT_DRAIN_SECONDS: '1',
    });
    try {
      assert.match(line, /^listening on http:\/\/localhost:\d+$/);
      const res = await fetch(`${url}/chat/session`, {
        method: 'POST',
        headers: { origin: 'https://shop.example.com', 'x-persona-chat': '1', 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(res.status, 200, 'both listed origins are allowed');
      assert.ok(!(await res.text()).includes(apiKey));
      const anonymous = await fetch(`${url}/chat/conversations`);
      assert.equal(anonymous.status, 401, 'no token');
      const health = await fetch(`${url}/chat/healthz`);
      assert.deepEqual([health.status, await health.json()], [200, { status: 'ok' }]);
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      assert.deepEqual(await exited, [0, null], 'a clean exit');
      await closed;
      // The request log (health checks are not in it), written together at most a moment later: every line is out
      // by the exit, in order.
      const logged = printed.map(text => JSON.parse(text) as { method: string; path: string; status: number });
      assert.deepEqual(
        logged.map(({ method, path, status }) => `${method} ${path} ${status}`),
        ['POST /chat/session 200', 'GET /chat/conversations 401'],
      );
    } finally {
      child.kill('SIGKILL');
    }
  });

  for (const [name, args, env, message] of [
    [
      'no token secret',
      [],
      { PERSONA_CHAT_TOKEN_SECRET: '' },
      /"tokenSecret" \(--token-secret \/ PERSONA_CHAT_TOKEN_SECRET\) is required/,
    ],
    ['a short token secret', ['--token-secret', 'too-short'], {}, /"tokenSecret" .* at least 32 bytes/],
    ['no service URL', [], { PERSONA_CHAT_SERVICE_URL: '' }, /"serviceUrl" \(--service-url .*\) is required/],
    ['a malformed origin', ['--allowed-origin', 'https://www.example.com/'], {}, /"allowedOrigins" .* exact origins/],
    ['a null origin', ['--allowed-origin', 'null'], {}, /"allowedOrigins"/],
    [
      'a wildcard that is not a subdomain pattern',
      ['--allowed-origin', 'https://*'],
      {},
      /"allowedOrigins" .* takes one wildcard form, a subdomain pattern like https:\/\/\*\.example\.com, not "https:\/\/\*"/,
    ],
    ['no persona or model', [], { PERSONA_CHAT_PERSONA_ID: '' }, /"personaId" .* is required \(or system and model\)/],
    ['a bad delivery', ['--delivery', 'carrier-pigeon'], {}, /"delivery" .* must be sse, http2 or json/],
    [
      'a token lifetime the widget would renew at once',
      ['--token-ttl', '60'],
      {},
      /"tokenTtlSeconds" \(--token-ttl \/ PERSONA_CHAT_TOKEN_TTL\) must be a whole number from 120 to 86400/,
    ],
    ['an unknown flag', ['--api-keys', 'x'], {}, /Unknown option '--api-keys'/],
    ['a Redis URL that is not one', ['--redis-url', 'http://cache:6379'], {}, /--redis-url must be a redis:\/\//],
    ['a lease too short', ['--lease-seconds', '1'], {}, /"leaseSeconds" .* from 3 to 300/],
    [
      'a limit of 0',
      [],
      { PERSONA_CHAT_MESSAGES_PER_USER_PER_MINUTE: '0' },
      /"limits.messagesPerUserPerMinute" \(--messages-per-user-per-minute \/ PERSONA_CHAT_MESSAGES_PER_USER_PER_MINUTE\) must be a whole number/,
    ],
    ['a timeout that is not a number', ['--idle-timeout-ms', '30s'], {}, /--idle-timeout-ms must be a whole number/],
    [
      'a timeout of 0',
      ['--connect-timeout-ms', '0'],
      {},
      /"timeouts.connectMs" \(--connect-timeout-ms \/ PERSONA_CHAT_CONNECT_TIMEOUT_MS\) must be a whole number/,
    ],
    [
      'a SameSite that is not one',
      [],
      { PERSONA_CHAT_COOKIE_SAME_SITE: 'relaxed' },
      /"cookie.sameSite" \(--cookie-same-site \/ PERSONA_CHAT_COOKIE_SAME_SITE\) must be lax, strict or none/,
    ],
  ] as const) {
    it(`stops at start on ${name}, naming the setting`, () => {
      const result = run([...args, '--port', '0'], { ...good, ...env });
      assert.equal(result.status, 2, result.stdout + result.stderr);
      assert.match(result.stderr, message);
      assert.ok(!result.stderr.includes(apiKey));
    });
  }

  it('sets limits by flag and by environment variable', async () => {
    const { child, url } = await startCli(['--message-max-length', '5'], {
      PERSONA_CHAT_PORT: '0',
      PERSONA_CHAT_SESSIONS_PER_VISITOR_PER_MINUTE: '1',
    });
    try {
      const session = (cookie?: string) => postSession(url, site, cookie);
      const first = await session();
      assert.equal(first.status, 200);
      const { token } = (await first.json()) as { token: string };
      const cookie = first.headers.get('set-cookie')!.split(';')[0]!;
      assert.equal((await session(cookie)).status, 429, 'one session a minute for this visitor');
      const sent = await fetch(`${url}/conversations/${crypto.randomUUID()}/messages`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'idempotency-key': crypto.randomUUID(),
        },
        body: JSON.stringify({ message: 'longer than five' }),
      });
      assert.equal(sent.status, 400);
      assert.match(((await sent.json()) as ErrorEnvelope).error.message, /at most 5 characters/);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('tells the browser token counts with --expose-usage or its environment variable, and not without', async () => {
    const service = await startEmulator({ apiKey });
    const env = { PERSONA_CHAT_PORT: '0', PERSONA_CHAT_SERVICE_URL: service.url };
    const started = await Promise.all([
      startCli(['--expose-usage'], env),
      startCli([], { ...env, PERSONA_CHAT_EXPOSE_USAGE: 'true' }),
      startCli([], env),
    ]);
    /** A message sent through the CLI at `url`, answered as JSON. */
    const reply = async (url: string) => {
      const { token } = (await (await postSession(url, site)).json()) as { token: string };
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const created = await fetch(`${url}/conversations`, { method: 'POST', headers, body: '{}' });
      const { id } = (await created.json()) as { id: string };
      const sent = await fetch(`${url}/conversations/${id}/messages`, {
        method: 'POST',
        headers: { ...headers, accept: 'application/json', 'idempotency-key': crypto.randomUUID() },
        body: JSON.stringify({ message: 'How long does shipping take?' }),
      });
      assert.equal(sent.status, 200);
      return (await sent.json()) as MessageReply;
    };
    try {
      const [byFlag, byEnv, byDefault] = await Promise.all(started.map(({ url }) => reply(url)));
      assert.ok(byFlag.usage!.total_tokens > 0, 'the flag');
      assert.ok(byEnv.usage!.total_tokens > 0, 'the environment variable');
      assert.equal(byDefault.usage, undefined, 'by default, none');
      assert.match(byDefault.content, /business days/);
    } finally {
      for (const { child } of started) child.kill('SIGKILL');
      await service.close();
    }
  });

  it('listens with the backlog given by flag or environment variable', async t => {
    const byFlag = await startCli(['--backlog', '7'], { PERSONA_CHAT_PORT: '0' });
    const byEnv = await startCli([], { PERSONA_CHAT_PORT: '0', PERSONA_CHAT_BACKLOG: '9' });
    try {
      const seen = backlogOf(Number(new URL(byFlag.url).port));
      if (seen === undefined) return t.skip('ss is not available to read the backlog');
      assert.equal(seen, 7, 'the flag');
      assert.equal(backlogOf(Number(new URL(byEnv.url).port)), 9, 'the environment variable');
    } finally {
      byFlag.child.kill('SIGKILL');
      byEnv.child.kill('SIGKILL');
    }
  });

  for (const [args, message] of [
    [['--trust-proxy', 'some'], /--trust-proxy must be a number of proxies, true or false/],
    [['--port', '70000'], /--port must be a port number from 0 to 65535/],
    [['--token-ttl', '10m'], /--token-ttl must be a whole number/],
  ] as const) {
    it(`stops at start on ${args.join(' ')}, naming the flag`, () => {
      const result = run([...args], good);
      assert.equal(result.status, 2, result.stdout + result.stderr);
      assert.match(result.stderr, message);
      assert.match(result.stderr, /^persona-chat-server: [^\n]+\n$/, 'one line, named by the program');
    });
  }

  it('runs with a capped growth of the old generation and a small young one, unless node was given its own', () => {
    // Tells every V8 flag the process sets for itself, on stderr.
    const hook = `data:text/javascript,${encodeURIComponent(
      "import v8 from 'node:v8'; const set = v8.setFlagsFromString; " +
        "v8.setFlagsFromString = flag => { process.stderr.write('v8 flag ' + flag + '\\n'); set(flag); };",
    )}`;
    const flagged = (nodeFlags: string[], nodeOptions = '') =>
      spawnSync(process.execPath, [...nodeFlags, '--import', hook, '--import', 'tsx', cli, '--help'], {
        encoding: 'utf8',
        timeout: 20_000,
        env: { PATH: process.env.PATH, NODE_OPTIONS: nodeOptions },
      });
    const shipped = flagged([]);
    assert.equal(shipped.status, 0, shipped.stderr);
    // A heap just started is small: it may grow by the least, more than a quarter of it.
    const growth = /^v8 flag --heap-growing-percent=(\d+)$/m.exec(shipped.stderr);
    assert.ok(growth, shipped.stderr);
    assert.ok(Number(growth[1]) > heapGrowingPercent, growth[0]);
    // And how far the young generation may grow (heap.test.ts tests its bounds).
    assert.match(shipped.stderr, /^v8 flag --semi-space-growth-factor=[12]$/m);
    const own = flagged(['--heap-growing-percent=0']);
    assert.equal(own.status, 0, own.stderr);
    assert.doesNotMatch(own.stderr, /v8 flag --heap/);
    assert.match(own.stderr, /v8 flag --semi-space/);
    const both = flagged(['--heap-growing-percent=0', '--max-semi-space-size=16']);
    assert.equal(both.status, 0, both.stderr);
    assert.doesNotMatch(both.stderr, /v8 flag/);
    // NODE_OPTIONS is node's own too (process.execArgv leaves it out).
    const byOptions = flagged([], '--max-semi-space-size=16');
    assert.equal(byOptions.status, 0, byOptions.stderr);
    assert.doesNotMatch(byOptions.stderr, /v8 flag --semi-space/);
    assert.match(byOptions.stderr, /^v8 flag --heap-growing-percent=\d+$/m);
  });

  it('lets its heap grow by a quarter while many responses are open, until few are', async () => {
    // Writes every V8 flag the process sets for itself into a file of the test's.
    const log = join(mkdtempSync(join(tmpdir(), 'persona-chat-flags-')), 'flags');
    writeFileSync(log, '');
    const hook = `data:text/javascript,${encodeURIComponent(
      "import v8 from 'node:v8'; import { appendFileSync } from 'node:fs'; const set = v8.setFlagsFromString; " +
        `v8.setFlagsFromString = flag => { appendFileSync(${JSON.stringify(log)}, flag + '\\n'); set(flag); };`,
    )}`;
    const child = spawn(process.execPath, ['--import', hook, '--import', 'tsx', cli], {
      env: { PATH: process.env.PATH, ...good, PERSONA_CHAT_PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const sockets: Socket[] = [];
    try {
      const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
      const { port } = new URL(line.split(' ')[2]!);
      const growths = () =>
        readFileSync(log, 'utf8')
          .split('\n')
          .filter(flag => flag.startsWith('--heap-growing-percent='))
          .map(flag => Number(flag.split('=')[1]));
      assert.ok(growths().at(-1)! > heapGrowingPercent, 'at rest, its small heap grows by the least');
      // Requests whose body never comes: each response stays open, as a reply's does.
      const open = () =>
        new Promise<Socket>((resolve, reject) => {
          const socket = connect(Number(port), '127.0.0.1', () => {
            socket.write(
              'POST /session HTTP/1.1\r\nhost: 127.0.0.1\r\norigin: https://www.example.com\r\n' +
                'x-persona-chat: 1\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{',
            );
            resolve(socket);
          }).on('error', reject);
        });
      for (let i = 0; i < 64; i++) sockets.push(await open());
      await until(() => growths().at(-1) === busyGrowingPercent, 'a tenth, with 64 responses open');
      for (const socket of sockets.splice(0)) socket.destroy();
      await until(() => growths().at(-1)! > heapGrowingPercent, 'the least again, with none open');
    } finally {
      for (const socket of sockets) socket.destroy();
      child.kill('SIGKILL');
    }
  });

  it('documents every flag in --help', () => {
    const { stdout, status } = run(['--help']);
    assert.equal(status, 0);
    for (const flag of [
      'service-url',
      'http2-service-url',
      'api-key',
      'api-key-header',
      'routes',
      'delivery',
      'persona-id',
      'system',
      'model',
      'token-secret',
      'token-ttl',
      'allowed-origin',
      'base-path',
      'cookie-same-site',
      'trust-proxy',
      'redis-url',
      'expose-usage',
      'lease-seconds',
      'drain-seconds',
      'port',
      'host',
      'backlog',
      ...Object.values(limitFlags),
      ...Object.values(timeoutFlags),
      'ping-interval-ms',
    ]) {
      assert.match(stdout, new RegExp(`--${flag}\\b`));
    }
  });
});
