// `npm run chaos`: conversations in headless Chromium through the built element, a load balancer, two backend
// instances (processes of their own, sharing one real Redis, with a lease of 3 s) and the emulator (replies at 12
// words a second) behind a fault proxy, while a seeded scheduler breaks things:
//
// - `kill`: SIGKILL the instance that took a reply being written, and start it again on its port a second later;
// - `drain`: SIGTERM it, and start it again once it exited;
// - `redis-restart`: kill Redis and start it again, empty, on its port;
// - `redis-stall`: SIGSTOP Redis for 3 s, then SIGCONT;
// - `cut-clean`, `cut-reset`, `stall`: the fault proxy ends one reply from the service cleanly in the middle, resets
//   its connection, or holds it back longer than the backends' idle timeout (4 s);
// - `none`: nothing.
//
// The run is cut into one phase per fault, in an order drawn from the seed; a phase of a process fault (the first
// four) overlaps no other, so that a turn meets one kind of fault. Each conversation sends one to three messages,
// typed into the composer and sent with the Send button; in a fault's phase one of them is the one broken (a process
// fault is made while its reply is being written, unless one is under way or ended less than 5 s before). The driver
// clicks Retry whenever a turn shows it (three times at most), and goes on. Per fault it prints, and fails unless
// each is zero (sources lost aside):
//
// - asked twice: a message the service was asked again after it had answered it whole (beyond the turn's Retry
//   clicks); asking again after an ask the service ended without keeping anything is how a reply is recovered;
// - stored twice: a message the service keeps more than once in its history;
// - lost: a message whose reply the service keeps but the page does not show as done, or one that never reached the
//   service and is neither back in the composer nor shown with Retry;
// - shown differently: a reply shown as done whose text (as drawn, whitespace and citation markers aside) is not a
//   reply the service keeps for its message;
// - sources lost (told, not failed on): a reply shown as done with the service's text whose citation markers are
//   drawn as plain text, without footnotes or sources: one taken from the service's history, whose messages carry
//   no sources;
// - Retry clicks: no fault here is one the service refused, so none should need one;
// - hangs: a turn without a terminal state 60 s after its send (or its Retry).
//
// A turn counts under each fault it met: its own reply's break, and every process fault between its send and its end
// (other conversations in flight meet those too); a turn that met none counts under `none`, the control: a count
// there is a defect without any fault, or the machine itself (a lease that lapsed on a starved CPU). Under the table,
// one entry per turn with a count says what the page showed, when the service was asked, and what it keeps.
//
// CHAOS_CONVERSATIONS (200), CHAOS_LANES (6: pages side by side), CHAOS_SEED (printed; the same seed makes the same
// conversations, faults and phases), CHAOS_FAULTS (a comma-separated subset of the faults, to run only those),
// CHAOS_UPSTREAM (`abort`, the default: a caller going away ends the reply and nothing of it is kept, as the emulator
// does; `finish`: the service finishes and keeps every reply it started, whoever still listens. Then a reply whose
// connection broke is asked again before the service has kept the first, and the service holds it twice: the
// interface gives no way to ask a service whether it is still answering a message). The servers' logs and a JSON record of every turn go to a directory printed at the end.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Page } from 'playwright-core';
import { defaultPersonas } from '../../src/emulator/personas.js';
import { chromiumFlags, findChromium } from '../support/chromium.mjs';
import { startBalancer } from './balancer.js';
import { converse, streaming } from './driver.js';
import type { ConversationRecord } from './driver.js';
import { startFaultProxy } from './fault-proxy.js';
import type { BreakMode } from './fault-proxy.js';
import { Instance, Redis, killAll, killChildrenOnExit, startEmulator } from './processes.js';
import { cases, faults, judge, table } from './report.js';
import type { Fault, StoredMessage, Window } from './report.js';

const total = Number(process.env.CHAOS_CONVERSATIONS ?? 200);
const laneCount = Number(process.env.CHAOS_LANES ?? 6);
const seed = Number(process.env.CHAOS_SEED ?? Date.now() % 1_000_000);
const upstream = process.env.CHAOS_UPSTREAM === 'finish' ? 'finish' : 'abort';
const chosen = (process.env.CHAOS_FAULTS ?? faults.join(',')).split(',').map(f => f.trim()) as Fault[];
for (const fault of chosen) {
  if (!faults.includes(fault)) throw new Error(`CHAOS_FAULTS: ${fault} is not one of ${faults.join(', ')}`);
}

const apiKey = 'chaos-service-key';
const basePath = '/persona-chat';
const persona = defaultPersonas.find(p => p.name === 'Juniper')!.personaId;
/** The backends give up on a silent stream after this; a stall lasts longer. */
const idleTimeoutMs = 4000;
const stallMs = idleTimeoutMs + 3000;
/** Words per second of the emulator's replies: a reply streams for a few seconds. */
const pace = 12;
/** The whole run's bound (a minute, and 20 s a conversation): past it, the suite stops, and its servers with it. */
const deadlineMs = (60 + total * 20) * 1000;

const questions = [
  'How do I return a tent?',
  'What does membership cost?',
  'Do you rent tents?',
  'How long does shipping take?',
  'Can I ship to Canada?',
  'Is there a warranty on sleeping bags?',
  'How do I care for a down jacket?',
  'Can I repair a torn tent?',
];

/** A small seeded generator (mulberry32), so that a run can be made again. */
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

/**
 * The faults in the order of their phases: the run is cut into one phase per fault, each of as many conversations,
 * and a phase begins once the one before has ended, so that a turn meets one kind of fault at most.
 */
const phases = (() => {
  const next = random(seed);
  const order = [...chosen];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
})();
const phaseOf = (n: number) => Math.floor((n * phases.length) / total);

/** What happens in conversation `n`, from the seed alone (not from the order in which lanes take conversations). */
function planOf(n: number) {
  const next = random(seed * 7919 + n);
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const fault = phases[phaseOf(n)]!;
  const count = 1 + Math.floor(next() * 3);
  const at = Math.floor(next() * count);
  const texts = Array.from({ length: count }, (_, i) => `${pick(questions)} (conversation ${n}, message ${i + 1})`);
  const frames = 1 + Math.floor(next() * 30);
  const bytes = next() < 0.5 ? 0 : Math.floor(next() * 150);
  return { fault, at, texts, frames, bytes };
}

const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

/** How long after a process fault is over the next may come: each is one fault to recover from, not a storm. */
const calmMs = 5000;

const processFaults: readonly Fault[] = ['kill', 'drain', 'redis-restart', 'redis-stall'];
const proxyFaults: readonly Fault[] = ['cut-clean', 'cut-reset', 'stall'];

async function main() {
  const started = Date.now();
  const logDir = mkdtempSync(join(tmpdir(), 'persona-chat-chaos-'));
  killChildrenOnExit(logDir);
  const deadline = setTimeout(() => {
    console.error(`chaos: still running after ${deadlineMs / 1000} s; stopping (CHAOS_SEED=${seed})`);
    killAll();
    process.exit(1);
  }, deadlineMs);
  deadline.unref();
  console.log(
    `persona-chat chaos: ${total} conversations in ${laneCount} pages, seed ${seed}, phases ${phases.join(' ')}, ` +
      `service ${upstream === 'finish' ? 'finishes' : 'aborts'} replies whose caller went away`,
  );

  const redis = await Redis.start(logDir);
  const emulatorUrl = await startEmulator(logDir, apiKey, pace);
  const proxy = await startFaultProxy({ serviceUrl: emulatorUrl, stallMs, upstream });
  const instances: Instance[] = [];
  const balancer = await startBalancer({
    instances,
    basePath,
    page:
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Chaos</title>` +
      `<script type="module" src="/persona-chat.js"></script></head><body style="height:600px">` +
      `<persona-chat endpoint="${basePath}" mode="inline" persona-id="${persona}"></persona-chat></body></html>`,
  });
  const config = {
    serviceUrl: proxy.url,
    redisUrl: redis.url,
    apiKey,
    personaId: persona,
    origin: balancer.url,
    basePath,
    leaseSeconds: 3,
    idleTimeoutMs,
  };
  instances.push(new Instance('A', config, logDir), new Instance('B', config, logDir));
  await Promise.all(instances.map(instance => instance.start()));
  if (!(await balancer.allReady())) throw new Error('the backend instances did not get ready');
  const browser = await chromium.launch({ executablePath: findChromium(), args: chromiumFlags, headless: true });

  const windows: Window[] = [];
  const made = new Map<Fault, number>();
  const conversations: ConversationRecord[] = [];
  /** What went wrong in the suite itself (a page that crashed): the run then fails, and says so apart. */
  const harnessErrors: string[] = [];
  let issued = 0;
  let faulting = false;
  let calmUntil = 0;
  /** Each phase's conversations still to end, and its end. */
  const phaseEnds = phases.map((_, p) => {
    let resolve!: () => void;
    const ended = new Promise<void>(r => (resolve = r));
    let left = Array.from({ length: total }, (_, n) => phaseOf(n)).filter(q => q === p).length;
    if (!left) resolve();
    return { ended, one: () => --left || resolve() };
  });

  /** Makes a process fault and waits until everything is back; its window is what turns are measured against. */
  async function processFault(fault: Fault, conversationId: string | undefined): Promise<void> {
    const at = Date.now();
    let detail = '';
    const instance = (conversationId && balancer.servedBy.get(conversationId)) || instances[0]!;
    switch (fault) {
      case 'kill':
        detail = `instance ${instance.name}`;
        await instance.stop('SIGKILL');
        await sleep(1000);
        await instance.start();
        break;
      case 'drain':
        detail = `instance ${instance.name}`;
        await instance.stop('SIGTERM');
        await instance.start();
        break;
      case 'redis-restart':
        await redis.kill();
        await redis.launch();
        break;
      case 'redis-stall':
        await redis.stall(3000);
        break;
    }
    if (!(await balancer.allReady())) detail += ' (not all ready again within 30 s)';
    windows.push({ fault, at, until: Date.now(), detail });
  }

  const lane = async () => {
    while (issued < total) {
      const n = issued++;
      const plan = planOf(n);
      // A process fault reaches every turn in flight: its phase overlaps no other. Other phases may overlap.
      const phase = phaseOf(n);
      if (processFaults.includes(phases[phase]!)) await Promise.all(phaseEnds.slice(0, phase).map(p => p.ended));
      else if (phase > 0 && processFaults.includes(phases[phase - 1]!)) await phaseEnds[phase - 1]!.ended;
      const record = await converse({
        browser,
        origin: balancer.url,
        n,
        texts: plan.texts,
        beforeSend: index => {
          if (index !== plan.at || !proxyFaults.includes(plan.fault)) return;
          proxy.plan(plan.texts[index]!, { mode: plan.fault as BreakMode, frames: plan.frames, bytes: plan.bytes });
        },
        onSent: (index: number, page: Page, conversationId) => {
          // One process fault at a time, and a pause after each: a turn sent meanwhile meets that one, or none.
          if (index !== plan.at || !processFaults.includes(plan.fault)) return undefined;
          if (faulting || Date.now() < calmUntil) return undefined;
          faulting = true;
          return (async () => {
            try {
              // The fault comes while the reply is being written; a reply that ended first is spared.
              if (await streaming(page, plan.texts[index]!)) {
                await processFault(plan.fault, await conversationId());
                made.set(plan.fault, (made.get(plan.fault) ?? 0) + 1);
              }
            } finally {
              faulting = false;
              calmUntil = Date.now() + calmMs;
            }
          })();
        },
      }).catch(error => {
        harnessErrors.push(`conversation ${n}: ${(error as Error).stack ?? String(error)}`);
        return undefined;
      });
      phaseEnds[phaseOf(n)]!.one();
      if (record) conversations.push(record);
      if (conversations.length % 10 === 0) {
        console.log(`  ${conversations.length} conversations, ${((Date.now() - started) / 1000).toFixed(0)} s`);
      }
    }
  };

  try {
    await Promise.all(Array.from({ length: laneCount }, lane));
    await browser.close();
    // Replies the service is still writing (for callers long gone) are in its history once they end.
    if (!(await proxy.quiet(60_000))) console.log('  the service was still answering after 60 s');
    const histories = new Map<string, StoredMessage[]>();
    const ids = new Set([...conversations.flatMap(c => c.conversationIds), ...proxy.asked.map(a => a.conversationId)]);
    for (const id of ids) {
      const res = await fetch(`${emulatorUrl}/conversations/${id}`, { headers: { 'x-svc-api-key': apiKey } });
      if (res.ok) histories.set(id, ((await res.json()) as { chatMessages?: StoredMessage[] }).chatMessages ?? []);
    }
    for (const [mode, n] of [...proxy.applied.values()].reduce(
      (m, b) => m.set(b.mode, (m.get(b.mode) ?? 0) + 1),
      new Map<string, number>(),
    )) {
      made.set(mode as Fault, n);
    }
    const verdicts = judge(conversations, proxy.asked, proxy.applied, windows, histories);
    const { text, clean } = table(verdicts);
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    console.log(`\nfaults made: ${[...made].map(([fault, n]) => `${fault} ${n}`).join(', ') || 'none'}`);
    const at = (time: number) => ((time - started) / 1000).toFixed(1);
    for (const w of windows)
      console.log(`  ${[w.fault, w.detail].filter(Boolean).join(' ')} at ${at(w.at)}–${at(w.until)} s`);
    console.log(`${conversations.length} conversations in ${seconds} s, seed ${seed}\n`);
    console.log(text);
    const problems = cases(verdicts, started);
    if (problems.length) console.log(`\n${problems.join('\n')}`);
    if (harnessErrors.length) console.log(`\nthe suite itself failed:\n${harnessErrors.join('\n')}`);
    const pageErrors = conversations.flatMap(c => c.pageErrors.map(e => `conversation ${c.n}: ${e}`));
    writeFileSync(
      join(logDir, 'turns.json'),
      JSON.stringify({ seed, windows, verdicts, asked: proxy.asked, pageErrors }, null, 2),
    );
    console.log(`\nlogs and every turn: ${logDir}`);
    console.log(clean ? '\nchaos: clean' : `\nchaos: FAILED (run again with CHAOS_SEED=${seed})`);
    process.exitCode = clean && !harnessErrors.length ? 0 : 1;
  } finally {
    clearTimeout(deadline);
    await browser.close().catch(() => {});
    await balancer.close();
    await proxy.close();
    killAll();
  }
}

await main();
process.exit(process.exitCode ?? 0);
