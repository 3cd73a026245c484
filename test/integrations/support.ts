// What the integration suite shares: fresh folders with the packed package installed, programs started in them and
// stopped with everything they started, and a visitor in Chromium who sends a message and reloads.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';

/** A program started by the suite, with what it printed so far. */
export interface Program {
  output(): string;
  running(): boolean;
  /** Its exit code once it ended (null when a signal ended it). */
  readonly exited: Promise<number | null>;
  stop(): Promise<void>;
}

/** A port free on 127.0.0.1 right now, for a program that must be told its port. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });

// The colours some tools print whatever NO_COLOR says.
// eslint-disable-next-line no-control-regex
const colours = /\x1b\[[0-9;]*m/g;

/** The last lines a program printed, to explain a failure. */
export const tail = (text: string, lines = 40) =>
  text.replace(colours, '').trimEnd().split('\n').slice(-lines).join('\n');

/**
 * The environment of every program the suite starts: PATH and a home of the folder's own, and nothing of the
 * suite's environment, so that a secret reaches a program only when a test gives it one.
 */
export function cleanEnv(home: string, more: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    TMPDIR: home,
    NEXT_TELEMETRY_DISABLED: '1',
    WRANGLER_SEND_METRICS: 'false',
    CI: '1',
    NO_COLOR: '1',
    ...more,
  };
}

/**
 * Starts a program in its own process group, so that `stop()` ends it and whatever it started (workerd, Next's
 * workers), and nothing else.
 */
export function start(command: string, args: string[], options: { cwd: string; env: Record<string, string> }) {
  let output = '';
  let running = true;
  const child = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', chunk => (output += chunk));
  child.stderr.on('data', chunk => (output += chunk));
  child.once('exit', () => (running = false));
  const exited = new Promise<number | null>(resolve => {
    child.once('error', error => {
      output += String(error);
      resolve(null);
    });
    child.once('close', code => resolve(code));
  });
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // Already gone.
    }
  };
  const program: Program = {
    output: () => output,
    running: () => running,
    exited,
    async stop() {
      if (!running) return;
      signal('SIGTERM');
      const killed = setTimeout(() => signal('SIGKILL'), 5000);
      await exited;
      clearTimeout(killed);
    },
  };
  return program;
}

/** Runs a program to its end: whether it succeeded, and its output. */
export async function run(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs?: number },
) {
  const program = start(command, args, options);
  const timer = setTimeout(() => void program.stop(), options.timeoutMs ?? 600_000);
  const code = await program.exited;
  clearTimeout(timer);
  return { ok: code === 0, output: program.output() };
}

/** Waits until a URL answers (any status), or the program serving it has stopped. */
export async function waitForHttp(url: string, program: Program, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!program.running()) {
      throw new Error(`the program serving ${url} stopped:\n${tail(program.output())}`);
    }
    try {
      await fetch(url, { signal: AbortSignal.timeout(2000) });
      return;
    } catch {
      await new Promise(resolve => setTimeout(resolve, 250));
    }
  }
  throw new Error(`${url} did not answer within ${timeoutMs / 1000} s:\n${tail(program.output())}`);
}

/** Waits for a line the program prints, returning the match. */
export async function waitForOutput(program: Program, pattern: RegExp, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = program.output().match(pattern);
    if (match) return match;
    if (!program.running()) throw new Error(`it stopped before printing ${pattern}:\n${tail(program.output())}`);
    await new Promise(resolve => setTimeout(resolve, 100));
  }
  throw new Error(`nothing printed ${pattern} within ${timeoutMs / 1000} s:\n${tail(program.output())}`);
}

/**
 * A fresh folder holding a copy of `examples/<stack>` (when given), a package.json, and the packed package with
 * `dependencies` installed from the registry through the shared cache. npm runs no install scripts here.
 */
export async function freshFolder(
  work: string,
  name: string,
  options: { example?: string; tarball: string; cache: string; dependencies: string[] },
) {
  const dir = join(work, name);
  await mkdir(join(dir, '.home'), { recursive: true });
  if (options.example) await cp(options.example, dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }, null, 2));
  const npm = await run(
    'npm',
    [
      'install',
      options.tarball,
      ...options.dependencies,
      '--cache',
      options.cache,
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
    ],
    // npm keeps the user's own settings (a registry, a proxy); the cache is the suite's.
    { cwd: dir, env: { ...process.env } as Record<string, string> },
  );
  assert.ok(npm.ok, `npm install failed in ${dir}:\n${tail(npm.output)}`);
  return dir;
}

/** The question every integration asks, and words of Juniper's answer to it. */
export const question = 'How long does shipping take?';
export const answer = '3 to 5 business days';

/** A page in a browser context of its own (no cookies, no storage), whose console errors are kept. */
export async function visitor(browser: Browser) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const log: string[] = [];
  page.on('console', message => {
    if (message.type() === 'error' || message.type() === 'warning') log.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', error => log.push(`page error: ${error.message}`));
  return { page, log, close: () => context.close() };
}

/** The assistant's message holding the answer, inside the element's shadow root. */
export const reply = (page: Page) =>
  page.locator('persona-chat .message.assistant').filter({ hasText: answer }).first();

/** Sends the question in the chat at `url` and waits for the whole reply. */
export async function sendAndSeeReply(page: Page, url: string) {
  await page.goto(url);
  const input = page.locator('persona-chat textarea');
  await input.waitFor({ timeout: 30_000 });
  await input.fill(question);
  await input.press('Enter');
  await reply(page).waitFor({ timeout: 30_000 });
  await page.locator('persona-chat[turn-status="done"]').waitFor({ timeout: 30_000 });
}

/** Reloads the page and waits for the conversation to come back: the reply shown again. */
export async function reloadAndSeeRestored(page: Page) {
  await page.reload();
  await reply(page).waitFor({ timeout: 20_000 });
}
