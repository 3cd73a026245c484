// `npm run soak`: 200 conversations in one Chromium, each with one random fault, through the built element, the real
// backend and the emulator. It prints what it counted and fails unless each of these is zero:
//
// - duplicate user messages upstream: a message the service was asked more often than once plus its Retries, or
//   stored twice in the service's history;
// - texts lost: a message the visitor typed that the service never received, that is not back in the message box,
//   and that is not shown with Retry;
// - turns without a terminal state 30 s after the fault;
// - composers left unusable: a message box that is read-only, disabled or busy, or does not take typing.
//
// SOAK_CONVERSATIONS (200), SOAK_LANES (4: conversations that run side by side, each lane with its own emulator and
// backend, so that a lane's faults are its own) and SOAK_SEED (printed, to run the same faults again).
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { SignJWT, decodeJwt } from 'jose';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createEmulator } from '../../src/emulator/app.js';
import type { Emulator } from '../../src/emulator/app.js';
import { defaultPersonas } from '../../src/emulator/personas.js';
import { createBackend } from '../../src/server/app.js';
import { chromiumFlags, findChromium } from '../support/chromium.mjs';

const total = Number(process.env.SOAK_CONVERSATIONS ?? 200);
const laneCount = Number(process.env.SOAK_LANES ?? 4);
const seed = Number(process.env.SOAK_SEED ?? Date.now() % 1_000_000);
const apiKey = 'soak-key';
const tokenSecret = 'soak-secret-of-at-least-thirty-two-bytes';
const persona = defaultPersonas.find(p => p.name === 'Juniper')!.personaId;
const terminal = ['done', 'stopped', 'failed', 'interrupted'];

/** A small seeded generator (mulberry32), so a run can be repeated. */
function random(start: number) {
  let state = start >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Lane {
  index: number;
  emulator: Emulator;
  /** The messages the service was asked to answer, in order. */
  asked: string[];
  /** The open reply streams of the lane's page, to cut for a dropped network. */
  sockets: Set<Socket>;
}

function lane(index: number, origin: string): Lane & { listener: ReturnType<typeof getRequestListener> } {
  const emulator = createEmulator({ apiKey, pace: 0 });
  const asked: string[] = [];
  const backend = createBackend({
    serviceUrl: 'http://emulator.internal',
    apiKey,
    personaId: persona,
    tokenSecret,
    allowedOrigins: [origin],
    basePath: `/lane/${index}/persona-chat`,
    limits: {
      messagesPerUserPerMinute: 1000,
      messagesPerIpPerMinute: 10_000,
      sessionsPerIpPerMinute: 10_000,
      conversationsPerUserPerMinute: 10_000,
      conversationReadsPerUserPerMinute: 10_000,
    },
    log: () => {},
    fetch: async (input, init) => {
      const request = new Request(input, init);
      if (/\/(chat|continue)[-\w]*$/.test(new URL(request.url).pathname)) {
        asked.push(((await request.clone().json()) as { message: string }).message);
      }
      return emulator.fetch(request);
    },
  });
  const listener = getRequestListener((request, env) => backend.fetch(request, env));
  return { index, emulator, asked, sockets: new Set(), listener };
}

/** The soak's site: one page per lane, the built element, each lane's backend, and a way to age a token. */
async function site() {
  const lanes: ReturnType<typeof lane>[] = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const match = /^\/lane\/(\d+)(\/.*)$/.exec(url.pathname);
    const current = match ? lanes[Number(match[1])] : undefined;
    // The element's launcher and the chunks beside it.
    if (/^\/persona-chat[\w.-]*\.js$/.test(url.pathname)) {
      const file = await readFile(new URL(`../../dist/browser${url.pathname}`, import.meta.url)).catch(() => undefined);
      return file ? res.writeHead(200, { 'content-type': 'text/javascript' }).end(file) : res.writeHead(404).end();
    }
    if (current && match![2]!.startsWith('/persona-chat')) {
      if (/\/(messages|events)$/.test(url.pathname)) {
        current.sockets.add(req.socket);
        res.once('close', () => current.sockets.delete(req.socket));
      }
      return current.listener(req, res);
    }
    if (current && match![2] === '/expire') {
      // Stands in for time passing: a token for the same visitor whose expiry is behind us.
      const claims = decodeJwt(url.searchParams.get('token') ?? '');
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ pid: claims.pid })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(String(claims.sub))
        .setAudience(String(claims.aud))
        .setIssuedAt(now - 700)
        .setExpirationTime(now - 100)
        .sign(new TextEncoder().encode(tokenSecret));
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ token }));
    }
    if (current && match![2] === '/') {
      return res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Soak</title>` +
            `<script type="module" src="/persona-chat.js"></script></head><body style="height:600px">` +
            `<persona-chat endpoint="/lane/${current.index}/persona-chat" mode="inline" persona-id="${persona}"></persona-chat>` +
            `</body></html>`,
        );
    }
    res.writeHead(404).end();
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (let i = 0; i < laneCount; i++) lanes.push(lane(i, origin));
  return { origin, lanes, close: () => new Promise<void>(resolve => server.close(() => resolve())) };
}

/** What the page shows, read through the element's shadow root. */
const look = (page: Page) =>
  page.evaluate(() => {
    const el = document.querySelector('persona-chat')!;
    const root = el.shadowRoot!;
    const input = root.querySelector('textarea')!;
    return {
      status: el.getAttribute('turn-status'),
      turns: [...root.querySelectorAll<HTMLElement>('.item[data-status]')].map(item => ({
        status: item.dataset.status!,
        text: item.querySelector('.message.user')?.textContent ?? '',
        retry: Boolean(item.querySelector('[part="retry-button"]')),
      })),
      input: input.value,
      usable: !input.readOnly && !input.disabled && input.getAttribute('aria-busy') !== 'true',
    };
  });

type Fault = 'cut' | 'status' | 'token' | 'hidden' | 'offline' | 'stop' | 'retry-after-stop' | 'reload' | 'queued';
const faults: Fault[] = ['cut', 'status', 'token', 'hidden', 'offline', 'stop', 'retry-after-stop', 'reload', 'queued'];

interface Counts {
  conversations: number;
  duplicates: number;
  lost: number;
  unterminated: number;
  unusable: number;
}

async function conversation(browser: Browser, origin: string, current: Lane, n: number, next: () => number) {
  const fault = faults[Math.floor(next() * faults.length)]!;
  const context: BrowserContext = await browser.newContext();
  // tsx keeps function names with a helper that functions sent to the page would miss.
  await context.addInitScript({ content: 'globalThis.__name = f => f;' });
  const page = await context.newPage();
  const typed: string[] = [];
  const retried = new Map<string, number>();
  current.asked.length = 0;
  current.emulator.faults.reset();
  current.emulator.faults.set({ chunkDelayMs: 15 });
  const url = `${origin}/lane/${current.index}/`;
  const questions = ['How do I return a tent?', 'What does membership cost?', 'Do you rent tents?'];
  const ask = async (question: string) => {
    const text = `${question} (${n}-${typed.length})`;
    typed.push(text);
    await page.locator('persona-chat textarea').fill(text);
    await page.locator('persona-chat textarea').press('Enter');
  };
  const status = async (wanted: (s: string | null) => boolean, timeout = 30_000) => {
    await page
      .waitForFunction(
        list => list.includes(document.querySelector('persona-chat')?.getAttribute('turn-status') ?? ''),
        (['idle', 'queued', 'accepting', 'streaming', ...terminal] as string[]).filter(wanted),
        { timeout },
      )
      .catch(() => {});
  };
  const writing = () =>
    page
      .waitForFunction(
        () => {
          const el = document.querySelector('persona-chat');
          return el?.getAttribute('turn-status') === 'streaming' && el.shadowRoot?.querySelector('.markdown');
        },
        undefined,
        { timeout: 15_000 },
      )
      .catch(() => {});
  const retry = async () => {
    const state = await look(page);
    const turn = state.turns.find(t => t.retry);
    if (!turn) return;
    retried.set(turn.text, (retried.get(turn.text) ?? 0) + 1);
    await page.locator('persona-chat [part="retry-button"]').click();
  };
  const settled = (s: string | null) => terminal.includes(s ?? '');

  await page.goto(url);
  await page.waitForFunction(() => document.querySelector('persona-chat')?.shadowRoot?.querySelector('textarea'));
  const question = questions[Math.floor(next() * questions.length)]!;
  switch (fault) {
    case 'cut':
      current.emulator.faults.set({ cut: { afterChunks: Math.floor(next() * 14), count: 1 } });
      await ask(question);
      await status(settled);
      if (next() < 0.7) await retry();
      break;
    case 'status':
      current.emulator.faults.set({ status: { code: next() < 0.5 ? 500 : 503, count: 1, on: 'continue' } });
      await ask(question);
      await status(settled);
      await retry();
      break;
    case 'token':
      await page.evaluate(laneIndex => {
        const el = document.querySelector('persona-chat')!;
        const real = el.fetch;
        let swapped = false;
        el.fetch = async (input, init) => {
          if (!swapped && String(input).endsWith('/messages')) {
            swapped = true;
            const token = String(new Headers(init!.headers).get('authorization')).slice(7);
            const expired = await (await fetch(`/lane/${laneIndex}/expire?token=${token}`)).json();
            init = {
              ...init,
              headers: { ...Object.fromEntries(new Headers(init!.headers)), authorization: `Bearer ${expired.token}` },
            };
          }
          return real(input, init);
        };
      }, current.index);
      await ask(question);
      break;
    case 'hidden':
      await ask(question);
      await writing();
      await page.evaluate(async () => {
        const hidden = Object.getOwnPropertyDescriptor(Document.prototype, 'hidden')!;
        for (const value of [true, false, true, false]) {
          Object.defineProperty(document, 'hidden', { configurable: true, get: () => value });
          document.dispatchEvent(new Event('visibilitychange'));
          await new Promise(resolve => setTimeout(resolve, 40));
        }
        Object.defineProperty(document, 'hidden', hidden);
        delete (document as { hidden?: boolean }).hidden;
      });
      break;
    case 'offline':
      await ask(question);
      await writing();
      await context.setOffline(true);
      for (const socket of current.sockets) socket.destroy();
      await new Promise(resolve => setTimeout(resolve, 1000 + next() * 2000));
      await context.setOffline(false);
      break;
    case 'stop':
    case 'retry-after-stop': {
      current.emulator.faults.set({ chunkDelayMs: 40 });
      await ask(question);
      const stage = next();
      if (stage < 0.33) await status(s => s === 'accepting', 2000);
      else if (stage < 0.66) await status(s => s === 'streaming', 5000);
      else await writing();
      // The reply may have ended before the visitor's click: Stop is only pressed while it shows.
      const stop = page.locator('persona-chat [part="send-button"]', { hasText: 'Stop' });
      await stop.click({ timeout: 1000 }).catch(() => {});
      await status(s => s !== 'accepting' && s !== 'streaming');
      if (fault === 'retry-after-stop') await retry();
      break;
    }
    case 'reload':
      current.emulator.faults.set({ chunkDelayMs: 40 });
      await ask(question);
      await writing();
      await page.reload();
      await page.waitForFunction(() => document.querySelector('persona-chat')?.shadowRoot?.querySelector('textarea'));
      break;
    case 'queued':
      current.emulator.faults.set({ chunkDelayMs: 25 });
      for (const q of questions) await ask(q);
      break;
  }

  // Every turn ends within 30 s of the fault.
  const deadline = Date.now() + 30_000;
  let state = await look(page);
  while (Date.now() < deadline && state.turns.some(t => !terminal.includes(t.status))) {
    await new Promise(resolve => setTimeout(resolve, 100));
    state = await look(page);
  }
  const counts = { duplicates: 0, lost: 0, unterminated: 0, unusable: 0 };
  counts.unterminated = state.turns.filter(t => !terminal.includes(t.status)).length;
  for (const text of typed) {
    const sends = current.asked.filter(m => m === text).length;
    counts.duplicates += Math.max(0, sends - 1 - (retried.get(text) ?? 0));
    const shownWithRetry = state.turns.some(t => t.text === text && t.retry);
    if (!sends && !state.input.includes(text) && !shownWithRetry) counts.lost++;
  }
  for (const conversation of everything(current.emulator)) {
    const users = (conversation.chatMessages ?? []).filter(m => m.role === 'user').map(m => m.content);
    counts.duplicates += users.length - new Set(users).size;
  }
  const probe = 'still usable?';
  if (!state.usable) counts.unusable++;
  else {
    await page.locator('persona-chat textarea').fill(probe);
    if ((await look(page)).input !== probe) counts.unusable++;
  }
  current.emulator.store.clear();
  await context.close();
  return { fault, ...counts };
}

/** Every conversation the lane's emulator keeps, page by page. */
function everything(emulator: Emulator) {
  const all = [];
  let token: string | null = null;
  do {
    const page = emulator.store.list({ kind: 'all' }, token);
    all.push(...page.data);
    token = page.continuationToken;
  } while (token);
  return all;
}

async function main() {
  const { origin, lanes, close } = await site();
  const browser = await chromium.launch({ executablePath: findChromium(), args: chromiumFlags, headless: true });
  const next = random(seed);
  const counts: Counts = { conversations: 0, duplicates: 0, lost: 0, unterminated: 0, unusable: 0 };
  const byFault = new Map<string, number>();
  const problems: string[] = [];
  const started = performance.now();
  let issued = 0;
  console.log(`persona-chat soak: ${total} conversations in ${laneCount} lanes, seed ${seed}`);
  try {
    await Promise.all(
      lanes.map(async current => {
        while (issued < total) {
          const n = issued++;
          const result = await conversation(browser, origin, current, n, next);
          counts.conversations++;
          byFault.set(result.fault, (byFault.get(result.fault) ?? 0) + 1);
          for (const key of ['duplicates', 'lost', 'unterminated', 'unusable'] as const) {
            counts[key] += result[key];
            if (result[key]) problems.push(`conversation ${n} (${result.fault}): ${key} ${result[key]}`);
          }
          if (counts.conversations % 20 === 0) console.log(`  ${counts.conversations} conversations`);
        }
      }),
    );
  } finally {
    await browser.close();
    await close();
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(0);
  console.log(`\nfaults: ${[...byFault].map(([fault, n]) => `${fault} ${n}`).join(', ')}`);
  console.log(`conversations ${counts.conversations} in ${seconds} s`);
  console.log(`duplicate user messages upstream  ${counts.duplicates}`);
  console.log(`texts lost                        ${counts.lost}`);
  console.log(`turns without a terminal state    ${counts.unterminated}`);
  console.log(`composers left unusable           ${counts.unusable}`);
  for (const problem of problems) console.log(`  ${problem}`);
  const clean = counts.duplicates + counts.lost + counts.unterminated + counts.unusable === 0;
  console.log(clean ? '\nsoak: clean' : `\nsoak: FAILED (run again with SOAK_SEED=${seed})`);
  process.exit(clean ? 0 : 1);
}

await main();
