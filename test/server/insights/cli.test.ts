import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startEmulator } from '../../../src/emulator/node.js';
import { progressBar } from '../../../src/server/insights/cli.js';
import type { RunningEmulator } from '../../../src/emulator/node.js';
import { apiKey, juniper } from '../../support/service.js';

const cli = fileURLToPath(new URL('../../../src/server/cli.ts', import.meta.url));

/** `persona-chat-server insights` with these flags, and what it wrote and how it ended. */
function run(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, 'insights', ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>(resolve =>
    child.once('close', code => resolve({ code, stdout, stderr })),
  );
}

describe('persona-chat-server insights', () => {
  let running: RunningEmulator;
  let env: Record<string, string>;

  before(async () => {
    running = await startEmulator({ apiKey, seed: { conversations: 60, end: '2026-03-01' } });
    env = { PERSONA_CHAT_SERVICE_URL: running.url, PERSONA_CHAT_API_KEY: apiKey };
  });
  after(() => running.close());

  it('writes the report to stdout in the asked format, with nothing on a stderr that is no terminal', async () => {
    const json = await run(['--from', '2026-01-01', '--to', '2026-02-28', '--format', 'json'], env);
    assert.equal(json.code, 0, json.stderr);
    assert.equal(json.stderr, '');
    const report = JSON.parse(json.stdout);
    assert.equal(report.read.listed, [...running.emulator.store.values()].length);
    assert.ok(report.figures.conversations > 50);
    const csv = await run(['--since', '3650d', '--format', 'csv', '--persona-id', juniper.personaId], env);
    assert.equal(csv.code, 0, csv.stderr);
    assert.match(csv.stdout, /^section,day,persona_id,persona,metric,item,url,value,question,reply\r\n/);
    assert.match(csv.stdout, /persona,,3e913ded-bf6d-4591-85bb-a2d9be56efd6,Juniper,conversations,,,\d+/);
  });

  it('writes the HTML report to --out, with the texts when asked and a price', async () => {
    const out = join(await mkdtemp(join(tmpdir(), 'insights-')), 'report.html');
    const done = await run(
      ['--since', '3650d', '--out', out, '--include-text', '--price-per-1k', '0.5', '--currency', 'eur'],
      env,
    );
    assert.equal(done.code, 0, done.stderr);
    assert.equal(done.stdout, '');
    const html = await readFile(out, 'utf8');
    assert.match(html, /^<!DOCTYPE html>/);
    assert.match(html, /€/);
    assert.match(html, /how do i return a tent|how do i install the widget/);
  });

  it('says in one line, with no stack, that the service refused, and ends with code 1', async () => {
    const refused = await run([], { ...env, PERSONA_CHAT_API_KEY: 'not-the-key' });
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr,
      'persona-chat-server insights: reading the conversations failed: the service refused (401 unauthorized): The API key is not valid.\n',
    );
    assert.ok(!refused.stderr.includes('not-the-key'));
    const away = await run(['--retries', '0'], { ...env, PERSONA_CHAT_SERVICE_URL: 'http://127.0.0.1:9' });
    assert.equal(away.code, 1);
    assert.match(
      away.stderr,
      /^persona-chat-server insights: reading the conversations failed: no usable answer from the service \(network_error\): .*\n$/,
    );
  });

  it('asks again, after its Retry-After, when the service is busy for a moment', async () => {
    running.emulator.faults.set({ status: { code: 429, count: 1, on: 'read' } });
    const busy = await run(['--since', '3650d', '--format', 'json'], env);
    assert.equal(busy.code, 0, busy.stderr);
    assert.equal(busy.stderr, '');
    assert.equal(running.emulator.faults.settings.status, null);
    assert.equal(JSON.parse(busy.stdout).read.listed, [...running.emulator.store.values()].length);
  });

  it('names the flag that is wrong, with code 2', async () => {
    const cases: [string[], Record<string, string>, RegExp][] = [
      [[], {}, /--service-url is required/],
      [['--format', 'pdf'], env, /--format must be html, json or csv/],
      [['--since', 'yesterday'], env, /--since must be/],
      [['--price-per-1k', 'free'], env, /--price-per-1k must be an amount/],
      [['--top', '0'], env, /--top must be a whole number, 1 or more/],
      [['--retries', 'many'], env, /--retries must be a whole number, 0 or more/],
      [['--from', '2026-02-30'], env, /--from must be a date that exists/],
      [['--nope'], env, /Unknown option '--nope'/],
    ];
    for (const [args, given, message] of cases) {
      const result = await run(args, given);
      assert.equal(result.code, 2, args.join(' '));
      assert.match(result.stderr, message);
      assert.doesNotMatch(result.stderr, /\n\s+at /);
    }
    const help = await run(['--help']);
    assert.match(help.stdout, /^Usage: persona-chat-server insights/);
  });
});

describe('progressBar', () => {
  it('redraws one line, at most ten times a second, and clears it at the end', () => {
    const written: string[] = [];
    let time = 1000;
    const bar = progressBar({ write: (s: string) => written.push(s) > 0 }, () => time);
    bar.update({ pages: 1, conversations: 10, details: { done: 0, total: 0 } });
    time += 50;
    bar.update({ pages: 2, conversations: 20, details: { done: 0, total: 0 } });
    time += 100;
    bar.update({ pages: 3, conversations: 20, details: { done: 5, total: 20 } });
    bar.end();
    assert.deepEqual(written, [
      '\r\x1b[2Kreading the lists: 1 page, 10 conversations',
      '\r\x1b[2K[######..................] 5/20 conversations read one by one',
      '\r\x1b[2K',
    ]);
  });
});
