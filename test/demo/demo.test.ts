import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** Starts the demo server with PERSONA_CHAT_PORT set and returns the lines it printed up to its address. */
async function startDemo(port: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'demo/server.ts'], {
    cwd: root,
    env: { ...process.env, PERSONA_CHAT_PORT: port },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', line => {
      lines.push(line);
      const match = /^persona-chat demo: (http:\/\/127\.0\.0\.1:\d+\/)$/.exec(line);
      if (match) resolve(match[1]!);
    });
    child.once('exit', code => reject(new Error(`the demo exited with ${code}: ${lines.join(' | ')}`)));
  });
  return { child, url, lines };
}

async function stop(child: ReturnType<typeof spawn>) {
  const exited = new Promise(resolve => child.once('exit', resolve));
  child.kill('SIGINT');
  return exited;
}

describe('the demo', () => {
  it('serves the shop, help centre and playground with a strict CSP, and the backend and emulator behind them', async () => {
    const { child, url } = await startDemo('0');
    try {
      for (const [page, expected] of [
        ['', '<persona-chat'],
        ['help.html', 'mode="inline"'],
        ['playground.html', 'data-fault="cut"'],
      ] as const) {
        const res = await fetch(url + page);
        assert.equal(res.status, 200, page);
        assert.match(
          res.headers.get('content-security-policy')!,
          /script-src 'self';.*require-trusted-types-for 'script'/,
        );
        const html = await res.text();
        assert.ok(html.includes(expected), page);
        assert.ok(html.includes('src="/persona-chat.js"'), `${page} loads the built script-tag file`);
        assert.ok(!/<script>|\son\w+=/.test(html), `${page} has no inline script or handler`);
      }
      const origin = url.slice(0, -1);
      const session = await fetch(`${url}persona-chat/session`, {
        method: 'POST',
        headers: { origin, 'x-persona-chat': '1', 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(session.status, 200);
      const faults = await fetch(`${url}demo-api/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ cut: { afterChunks: 8 } }),
      });
      assert.deepEqual((await faults.json()).cut, { afterChunks: 8, count: 1 });
      assert.equal((await fetch(`${url}../../package.json`)).status, 404);
      assert.equal((await fetch(`${url}%E0%A4%A`)).status, 400, 'a malformed path is refused, not fatal');
      assert.equal((await fetch(url)).status, 200, 'and the demo is still up');
    } finally {
      assert.equal(await stop(child), 0, 'Ctrl+C stops everything');
    }
  });

  it('moves from a busy port to a free one and says so', async () => {
    const blocker = createServer().listen(0, '127.0.0.1');
    await new Promise(resolve => blocker.once('listening', resolve));
    const busy = (blocker.address() as AddressInfo).port;
    const { child, url, lines } = await startDemo(String(busy));
    try {
      assert.ok(lines.includes(`port ${busy} is busy; using a free one`));
      assert.notEqual(url, `http://127.0.0.1:${busy}/`);
    } finally {
      await stop(child);
      blocker.close();
    }
  });
});
