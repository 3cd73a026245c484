// `npm run bench`, the element's part: <persona-chat> as built (dist/), beside deep-chat as its package ships it and
// beside floors of plain DOM, in real Chromium, one fresh browser per measurement, the rows of a table interleaved,
// median of 5 (BENCH_RUNS). CPU is the renderer's main-thread CPU time (the ThreadTime of the DevTools protocol's
// Performance.getMetrics) read before and after a step; the heap is V8's used heap after a full GC.
//
// - streaming beside peers: a 40 KB reply in 2,000 deltas, one every 4 ms, into the reply renderer alone (with and
//   without its tail settling), into the element, into deep-chat, and appended to a <pre>: the CPU from the first
//   delta to the final paint, the time from the last delta to that paint, and the longest task meanwhile (a trace).
// - long conversations: 500 restored messages (render to paint, DOM nodes walked and by Chromium's counter, JS heap)
//   beside deep-chat and 500 plain divs; the CPU of a keystroke and of streaming that reply under 500 messages and
//   under none.
// - opening: a click on the launcher of a page that loads dist/browser/persona-chat.js, from the chat chunk's arrival to the
//   panel's first paint; and what such a page fetches when its visitor never touches the chat, as it ships and with
//   `loading="idle"`.
// - large replies: a 195 KB table of 3,000 rows and a 197 KB list restored and streamed, until every row is drawn:
//   the longest task of the main thread meanwhile, from a Chromium trace.
//
// The backend is stood in for in the page (see element-page.ts): the bench measures rendering alone.
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg } from 'node:os';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import type { CDPSession, Page } from 'playwright-core';
import { builtChat } from '../support/built.mjs';
import { chromiumFlags, findChromium } from '../support/chromium.mjs';
import type { ElementBench, Reply, Target } from './element-page.js';
import type { BenchResult } from './markdown-page.js';

const runs = Number(process.env.BENCH_RUNS ?? 5);
/** Keystrokes measured, after a few untimed ones. */
const keystrokes = 100;

type Figures = Record<string, number>;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** A markdown table, as run.ts draws its own (run.ts measures when imported, so it cannot share it). */
function table(rows: Record<string, unknown>[]): string {
  const keys = [...new Set(rows.flatMap(Object.keys))];
  return [
    `| ${keys.join(' | ')} |`,
    `| ${keys.map(() => '---').join(' | ')} |`,
    ...rows.map(r => `| ${keys.map(k => r[k] ?? '').join(' | ')} |`),
  ].join('\n');
}

const load = () =>
  loadavg()
    .map(n => n.toFixed(2))
    .join(' ');

/**
 * Runs every scenario `runs` times, interleaved (one of each, then again), between two readings of the load average
 * (1, 5 and 15 minutes), and gives each scenario's figures as medians.
 */
async function interleaved<K extends string>(scenarios: Record<K, () => Promise<Figures>>) {
  const before = load();
  const all = {} as Record<K, Figures[]>;
  for (let i = 0; i < runs; i++) {
    for (const [name, scenario] of Object.entries(scenarios) as [K, () => Promise<Figures>][]) {
      (all[name] ??= []).push(await scenario());
    }
  }
  const medians = {} as Record<K, Figures>;
  for (const name of Object.keys(all) as K[]) {
    medians[name] = Object.fromEntries(
      Object.keys(all[name][0]!).map(key => [key, median(all[name].map(r => r[key]!))]),
    );
  }
  const loadLine = `Load average (1, 5, 15 min) on ${availableParallelism()} CPUs: ${before} before these runs, ${load()} after.`;
  return { medians, all, loadLine };
}

/** Serves the bench pages, their bundles, deep-chat's bundle and dist/, on 127.0.0.1 at a port picked now. */
async function serve() {
  const bundle = async (entry: string) =>
    (
      await build({
        entryPoints: [entry],
        bundle: true,
        minify: true,
        format: 'esm',
        write: false,
        conditions: ['production'],
        tsconfig: 'tsconfig.json',
      })
    ).outputFiles[0]!.text;
  const scripts: Record<string, string | Buffer> = {
    '/element.js': await bundle('test/bench/element-page.ts'),
    '/renderer.js': await bundle('test/bench/markdown-page.ts'),
    '/deep-chat.js': await readFile('node_modules/deep-chat/dist/deepChat.bundle.js'),
  };
  const page = (body: string) =>
    `<!doctype html><html lang="en"><meta charset="utf-8"><title>bench</title><body style="margin: 0">${body}`;
  const pages: Record<string, string> = {
    '/': page('<div id="stage"></div><script type="module" src="/element.js"></script>'),
    '/renderer': page('<script type="module" src="/renderer.js"></script>'),
    // A page with the launcher: the chat chunk is loaded when the visitor shows intent; and one whose site asks for it
    // when the browser is idle.
    '/opening': page(
      '<persona-chat endpoint="/api"></persona-chat><script type="module" src="/element.js"></script>' +
        '<script type="module" src="/dist/browser/persona-chat.js"></script>',
    ),
    '/opening-idle': page(
      '<persona-chat endpoint="/api" loading="idle"></persona-chat><script type="module" src="/element.js"></script>' +
        '<script type="module" src="/dist/browser/persona-chat.js"></script>',
    ),
  };
  const chunk = await builtChat();
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const js = (body: string | Buffer) => res.writeHead(200, { 'content-type': 'text/javascript' }).end(body);
    if (pages[path]) return res.writeHead(200, { 'content-type': 'text/html' }).end(pages[path]);
    if (scripts[path]) return js(scripts[path]);
    const file = /^\/dist\/browser\/[\w.-]+\.js$/.test(path) && (await readFile(path.slice(1)).catch(() => undefined));
    if (file) return js(file);
    res.writeHead(404).end();
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    chunk: `/dist/browser/${chunk}`,
    close() {
      server.closeAllConnections();
      server.close();
    },
  };
}

type Server = Awaited<ReturnType<typeof serve>>;

/** Calls a function of the element bench page. */
function call<K extends keyof ElementBench>(
  page: Page,
  name: K,
  ...args: ElementBench[K] extends (...a: infer A) => unknown ? A : never
): Promise<ElementBench[K] extends (...a: never[]) => infer R ? Awaited<R> : never> {
  return page.evaluate(
    ([n, a]) => (window as unknown as { bench: Record<string, (...a: unknown[]) => unknown> }).bench[n]!(...a),
    [name, args] as const,
  ) as never;
}

/** The renderer's main-thread CPU time so far, in ms. */
async function cpuMs(cdp: CDPSession) {
  const { metrics } = await cdp.send('Performance.getMetrics');
  return 1000 * metrics.find(m => m.name === 'ThreadTime')!.value;
}

/** V8's used heap after a full garbage collection, in bytes. */
async function heapBytes(cdp: CDPSession) {
  await cdp.send('HeapProfiler.collectGarbage');
  return (await cdp.send('Runtime.getHeapUsage')).usedSize;
}

/**
 * Every host but the bench's own fails to resolve: deep-chat asks Google Fonts for its font, and a run must not
 * depend on whether the machine has a network.
 */
const offline = '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1';

/** Opens `path` in a fresh browser and runs `work` on it. `init` runs in the page before its scripts. */
async function inBrowser(
  server: Server,
  path: string,
  work: (page: Page, cdp: CDPSession) => Promise<Figures>,
  init?: () => void,
): Promise<Figures> {
  const browser = await chromium.launch({
    executablePath: findChromium(),
    args: [...chromiumFlags, offline],
    headless: true,
  });
  try {
    const page = await browser.newPage();
    if (init) await page.addInitScript(init);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    await page.goto(server.url + path);
    await page.waitForFunction(() => 'bench' in window || 'runBench' in window);
    return await work(page, cdp);
  } finally {
    await browser.close();
  }
}

const settle = () => new Promise(resolve => setTimeout(resolve, 500));

/**
 * The CPU of streaming the reply into `target` (after restoring `messages` for the chats), and its timings; with
 * `traced`, the main thread's longest task from the last delta to the final paint, from a trace (which costs a little
 * CPU of its own, the same for every target).
 */
const streaming = (server: Server, target: Target, messages = 0, traced = false) =>
  inBrowser(server, '/', async (page, cdp) => {
    await call(page, 'load', target, messages, server.chunk);
    await call(page, 'restore');
    await settle();
    const before = await cpuMs(cdp);
    if (!traced) {
      const result = await call(page, 'stream');
      return { cpuMs: (await cpuMs(cdp)) - before, ...result };
    }
    const { result, longestTaskMs, mostTaskCpuMs } = await tasksDuring(page, () => call(page, 'stream'), [
      'bench:last-delta',
      'bench:final-paint',
    ]);
    return { cpuMs: (await cpuMs(cdp)) - before, ...result, endTaskMs: longestTaskMs, endTaskCpuMs: mostTaskCpuMs };
  });

/** The same reply into the reply renderer alone (markdown-page.ts), and whether its final DOM is a one-shot render's. */
const rendererStreaming = (server: Server, mode: 'incremental' | 'full') =>
  inBrowser(server, '/renderer', async (page, cdp) => {
    const before = await cpuMs(cdp);
    const result = await page.evaluate(
      m => (window as unknown as { runBench(m: string): Promise<BenchResult> }).runBench(m),
      mode,
    );
    const cpu = (await cpuMs(cdp)) - before;
    const same = await page.evaluate(() =>
      (window as unknown as { finalEqualsOneShot(): boolean }).finalEqualsOneShot(),
    );
    return { cpuMs: cpu, ...result, finalEqualsOneShot: same ? 1 : 0 };
  });

/**
 * The nodes alive in the page, by Chromium's own counter (the DevTools protocol's Performance.getMetrics `Nodes`),
 * after a full garbage collection: every node the renderer holds, in or out of the document.
 */
async function liveNodes(cdp: CDPSession) {
  await cdp.send('HeapProfiler.collectGarbage');
  const { metrics } = await cdp.send('Performance.getMetrics');
  return metrics.find(m => m.name === 'Nodes')!.value;
}

const restoring = (server: Server, target: Target) =>
  inBrowser(server, '/', async (page, cdp) => {
    await call(page, 'load', target, 500, server.chunk);
    const before = await heapBytes(cdp);
    const nodesBefore = await liveNodes(cdp);
    const result = await call(page, 'restore');
    const heap = (await heapBytes(cdp)) - before;
    await settle();
    const liveNodesAdded = (await liveNodes(cdp)) - nodesBefore;
    return { ...result, heapBytes: heap, liveNodes: liveNodesAdded, fromEndPx: await call(page, 'fromEnd') };
  });

const typing = (server: Server, messages: number) =>
  inBrowser(server, '/', async (page, cdp) => {
    await call(page, 'load', 'persona-chat', messages, server.chunk);
    await call(page, 'restore');
    await call(page, 'type', 10);
    await settle();
    const before = await cpuMs(cdp);
    const wallMs = await call(page, 'type', keystrokes);
    return { cpuMs: ((await cpuMs(cdp)) - before) / keystrokes, wallMs };
  });

/**
 * A click on the launcher: `cold`, the chat chunk loads on the click (the pointer coming over it is the first
 * intent); otherwise the chat loaded while the page was idle (`loading="idle"`), before the click. Either way the page
 * settles first: in a browser launched a moment before, the work of its start and of the page's load would share the
 * CPUs with the chunk's parse, the chat's first render and the panel's first paint, and be counted with them. Nothing
 * loads the chunk meanwhile: only intent does.
 */
const opening = (server: Server, cold: boolean) =>
  inBrowser(server, cold ? '/opening' : '/opening-idle', async page => {
    if (!cold) await page.waitForFunction(() => customElements.get('persona-chat'));
    await settle();
    const fetched = () =>
      performance.getEntriesByType('resource').some(entry => entry.name.includes('/persona-chat-define-'));
    if (cold && (await page.evaluate(fetched))) throw new Error('the chat chunk was fetched before the pointer came');
    await call(page, 'armOpening');
    await page.locator('persona-chat .launcher').click();
    return page.evaluate(() => (window as unknown as { bench: ElementBench }).bench.opened!);
  });

/**
 * A page with the launcher whose visitor never comes near it: what it fetched of persona-chat once loaded and idle
 * (two idle callbacks run, then two seconds more), as the number of files and their bytes at gzip level 9.
 */
const untouched = (server: Server, idle: boolean) =>
  inBrowser(server, idle ? '/opening-idle' : '/opening', async page => {
    await page.waitForLoadState('load');
    await page.evaluate(() => new Promise(done => requestIdleCallback(() => requestIdleCallback(done))));
    await new Promise(resolve => setTimeout(resolve, 2000));
    const paths = await page.evaluate(() =>
      performance
        .getEntriesByType('resource')
        .map(entry => new URL(entry.name).pathname)
        .filter(path => path.startsWith('/dist/browser/')),
    );
    const sizes = await Promise.all(paths.map(async path => gzipSync(await readFile(path.slice(1)), { level: 9 })));
    return { files: paths.length, gzipBytes: sizes.reduce((sum, bytes) => sum + bytes.length, 0) };
  });

interface TraceEvent {
  name: string;
  ph: string;
  pid: number;
  tid: number;
  ts: number;
  dur?: number;
  tdur?: number;
  args?: { name?: string };
}

/**
 * The tasks of the page's main thread while `step` runs, from a trace of Chromium's own (the renderer main thread
 * that ran the most): the longest and how many took over 50 ms, in wall time, which is what the page cannot answer
 * input during; and the most CPU time one of them took, which is the page's own work, whatever the machine's load.
 * `between`: only the tasks that end after the first of two marks the page made (`performance.mark`) and start before
 * the second, such as the task the first was made in.
 */
async function tasksDuring<T>(page: Page, step: () => Promise<T>, between?: [string, string]) {
  const browser = page.context().browser()!;
  await browser.startTracing(page, { categories: ['toplevel', 'devtools.timeline', 'blink.user_timing'] });
  const result = await step();
  const { traceEvents } = JSON.parse((await browser.stopTracing()).toString()) as { traceEvents: TraceEvent[] };
  const mains = new Set(
    traceEvents
      .filter(e => e.name === 'thread_name' && e.args?.name === 'CrRendererMain')
      .map(e => `${e.pid}:${e.tid}`),
  );
  const [from, to] = (between ?? []).map(mark => traceEvents.find(e => e.name === mark)?.ts ?? NaN);
  if (between && !(from! <= to!)) throw new Error(`the trace has no marks ${between.join(' and ')}`);
  const byThread = new Map<string, TraceEvent[]>();
  for (const e of traceEvents) {
    const thread = `${e.pid}:${e.tid}`;
    if (e.ph !== 'X' || e.name !== 'ThreadControllerImpl::RunTask' || !mains.has(thread)) continue;
    if (between && (e.ts + e.dur! <= from! || e.ts >= to!)) continue;
    if (!byThread.has(thread)) byThread.set(thread, []);
    byThread.get(thread)!.push(e);
  }
  const total = (tasks: TraceEvent[]) => tasks.reduce((sum, task) => sum + task.dur!, 0);
  const tasks = [...byThread.values()].sort((a, b) => total(b) - total(a))[0] ?? [];
  const most = (of: (task: TraceEvent) => number) => Math.max(0, ...tasks.map(of)) / 1000;
  return {
    result,
    longestTaskMs: most(task => task.dur!),
    mostTaskCpuMs: most(task => task.tdur ?? 0),
    tasksOver50: tasks.filter(task => task.dur! > 50_000).length,
  };
}

/**
 * A conversation whose reply is a long table or list restored (a reload), until every row of it is drawn: the main
 * thread's tasks meanwhile, and the time to the paint of the last row.
 */
const restoringLarge = (server: Server, reply: Reply) =>
  inBrowser(server, '/', async page => {
    await call(page, 'load', 'persona-chat', 0, server.chunk, reply, true);
    const { result, ...tasks } = await tasksDuring(page, async () => {
      await call(page, 'restore');
      return call(page, 'drawn', 'restore');
    });
    return { ...tasks, ...result };
  });

/** A long table or list streamed as a reply, 2,000 deltas 4 ms apart, until it is drawn whole. */
const streamingLarge = (server: Server, reply: Reply) =>
  inBrowser(server, '/', async page => {
    await call(page, 'load', 'persona-chat', 0, server.chunk, reply);
    await call(page, 'restore');
    await settle();
    const { result, ...tasks } = await tasksDuring(page, async () => {
      const streamed = await call(page, 'stream');
      return { ...streamed, ...(await call(page, 'drawn', 'stream')) };
    });
    return { ...tasks, feedMs: result.feedMs, drawnMs: result.drawnMs, rows: result.rows };
  });

const ms = (n: number) => (n < 10 ? n.toFixed(1) : Math.round(n).toLocaleString('en-US'));
const pass = (ok: boolean) => (ok ? 'pass' : '**fail**');

async function streamingBesidePeers(server: Server) {
  const {
    medians: m,
    all,
    loadLine,
  } = await interleaved({
    incremental: () => rendererStreaming(server, 'incremental'),
    full: () => rendererStreaming(server, 'full'),
    element: () => streaming(server, 'persona-chat', 0, true),
    deepChat: () => streaming(server, 'deep-chat', 0, true),
    pre: () => streaming(server, 'pre', 0, true),
  });
  const row = (what: string, r: Figures, renderer?: Figures[]) => ({
    what,
    'main-thread CPU ms': ms(r.cpuMs!),
    'first to last delta s': (r.feedMs! / 1000).toFixed(1),
    'last delta to final paint ms': ms(r.lastDeltaToPaintMs!),
    'tasks > 50 ms': r.tasksOver50,
    'longest task after the last delta ms (its CPU ms)': renderer ? '' : `${ms(r.endTaskMs!)} (${ms(r.endTaskCpuMs!)})`,
    renders: renderer ? r.renders : '',
    'script ms': renderer ? ms(r.scriptMs!) : '',
    'of which lexing and templates ms': renderer ? ms(r.viewMs!) : '',
    'final = one-shot': renderer ? (renderer.every(run => run.finalEqualsOneShot) ? 'yes' : 'no') : '',
  });
  return [
    `## Streaming markdown beside peers: 40 KB reply, 2,000 deltas, one every 4 ms (median of ${runs} interleaved runs)`,
    '',
    loadLine,
    '',
    table([
      row('reply renderer, incremental (at most one render per frame)', m.incremental, all.incremental),
      row('reply renderer, full re-lex every frame', m.full, all.full),
      row('`<persona-chat>` (built element, stand-in backend)', m.element),
      row('deep-chat 2.4 (`connect.handler`, `stream: true`)', m.deepChat),
      row('floor: appending to a `<pre>`', m.pre),
    ]),
    '',
    'Main-thread CPU: from before the first delta to the final paint, the feeding timers included. First to last ' +
      'delta: 8 s when the page keeps pace; a busy main thread delays the timers that feed it. The final paint: ' +
      "`<persona-chat>`'s first frame showing the reply whole with its sources and actions, which the stand-in sends " +
      'after the last delta. The longest task after the last delta: of the main thread, from a trace (the task of the ' +
      'last delta included), in wall time and CPU. Script ms: the renderer calls alone.',
    '',
    table([
      {
        target: 'last delta to final paint ≤ 40 ms',
        figure: `${ms(m.element.lastDeltaToPaintMs!)} ms (\`<pre>\` ${ms(m.pre.lastDeltaToPaintMs!)} ms)`,
        met: pass(m.element.lastDeltaToPaintMs! <= 40),
      },
      {
        target: 'no task over 50 ms after the last delta',
        figure: `longest ${ms(Math.max(...all.element.map(r => r.endTaskMs!)))} ms of ${runs} runs (CPU ${ms(Math.max(...all.element.map(r => r.endTaskCpuMs!)))} ms)`,
        met: pass(all.element.every(r => r.endTaskMs! <= 50)),
      },
      {
        target: 'main-thread CPU ≤ 1.3 × `<pre>`',
        figure: `${(m.element.cpuMs! / m.pre.cpuMs!).toFixed(2)} × (${ms(m.element.cpuMs!)} vs ${ms(m.pre.cpuMs!)} ms)`,
        met: pass(m.element.cpuMs! <= 1.3 * m.pre.cpuMs!),
      },
    ]),
  ].join('\n');
}

async function longConversations(server: Server) {
  const {
    medians: m,
    all,
    loadLine,
  } = await interleaved({
    restoreElement: () => restoring(server, 'persona-chat'),
    restoreDeepChat: () => restoring(server, 'deep-chat'),
    restoreDivs: () => restoring(server, 'divs'),
    typingEmpty: () => typing(server, 0),
    typing500: () => typing(server, 500),
    streamEmpty: () => streaming(server, 'persona-chat', 0),
    stream500: () => streaming(server, 'persona-chat', 500),
  });
  const restoreRow = (what: string, r: Figures) => ({
    what,
    'render to paint ms': ms(r.renderToPaintMs!),
    'DOM nodes added': r.nodes!.toLocaleString('en-US'),
    'nodes per message': (r.nodes! / 500).toFixed(1),
    "Chromium's node counter: added": r.liveNodes!.toLocaleString('en-US'),
    'per message': (r.liveNodes! / 500).toFixed(1),
    'elements added': r.elements!.toLocaleString('en-US'),
    'JS heap added KB': Math.round(r.heapBytes! / 1024).toLocaleString('en-US'),
    'then left above the newest message px': r.fromEndPx!.toLocaleString('en-US'),
  });
  // Each run measures the empty conversation and then the long one, one after the other: the ratio of each run is
  // taken in the same moments, and the median of those is the figure, as a machine's load drifts from run to run.
  const ratioOf = (long: Figures[], empty: Figures[]) => median(long.map((r, i) => r.cpuMs! / empty[i]!.cpuMs!));
  const keyRatio = ratioOf(all.typing500, all.typingEmpty);
  const streamRatio = ratioOf(all.stream500, all.streamEmpty);
  const perMessage = (r: Figures) => r.nodes! / 500;
  const livePerMessage = (r: Figures) => r.liveNodes! / 500;
  return [
    `## Long conversations: 500 restored messages, chats inline at 380 × 600 px (median of ${runs} interleaved runs)`,
    '',
    loadLine,
    '',
    table([
      restoreRow('`<persona-chat>` (built element, stand-in backend)', m.restoreElement),
      restoreRow('deep-chat 2.4 (`history`)', m.restoreDeepChat),
      restoreRow('floor: 500 plain divs', m.restoreDivs),
    ]),
    '',
    'Render to paint: from putting the chat on the page (the floor: from parsing the JSON) to the paint of the first ' +
      'frame showing all 500 messages. DOM nodes: every node (elements, text, comments) in the page, shadow trees ' +
      "included, counted by walking them. Chromium's node counter: the nodes the renderer holds (Performance." +
      'getMetrics `Nodes`, after a full garbage collection), half a second after the paint, less those before the ' +
      'chat was put on the page: out of the document too (templates, a node kept aside). Where the list was left ' +
      'half a second later, from its end.',
    '',
    table([
      {
        '`<persona-chat>`': `CPU per keystroke ms (keystroke to paint ms)`,
        'empty conversation': `${m.typingEmpty.cpuMs!.toFixed(2)} (${ms(m.typingEmpty.wallMs!)})`,
        '500 messages': `${m.typing500.cpuMs!.toFixed(2)} (${ms(m.typing500.wallMs!)})`,
        'ratio (the median of the runs’)': keyRatio.toFixed(2),
      },
      {
        '`<persona-chat>`': 'streaming the 40 KB reply: CPU ms (last delta to final paint ms)',
        'empty conversation': `${ms(m.streamEmpty.cpuMs!)} (${ms(m.streamEmpty.lastDeltaToPaintMs!)})`,
        '500 messages': `${ms(m.stream500.cpuMs!)} (${ms(m.stream500.lastDeltaToPaintMs!)})`,
        'ratio (the median of the runs’)': streamRatio.toFixed(2),
      },
      {
        '`<persona-chat>`': '"New messages" presses to keep the streaming reply in view',
        'empty conversation': m.streamEmpty.jumps,
        '500 messages': m.stream500.jumps,
      },
    ]),
    '',
    table([
      {
        target: 'keystroke CPU, 500 messages / empty ≤ 1.2 (the median of the runs’ ratios)',
        figure: keyRatio.toFixed(2),
        met: pass(keyRatio <= 1.2),
      },
      {
        target: 'streaming CPU, 500 messages / empty ≤ 1.2 (the median of the runs’ ratios)',
        figure: streamRatio.toFixed(2),
        met: pass(streamRatio <= 1.2),
      },
      {
        target: "500-message restore, render to paint ≤ deep-chat's",
        figure: `${ms(m.restoreElement.renderToPaintMs!)} vs ${ms(m.restoreDeepChat.renderToPaintMs!)} ms`,
        met: pass(m.restoreElement.renderToPaintMs! <= m.restoreDeepChat.renderToPaintMs!),
      },
      {
        target: "DOM nodes per message ≤ 2× deep-chat's",
        figure: `${perMessage(m.restoreElement).toFixed(1)} vs 2 × ${perMessage(m.restoreDeepChat).toFixed(1)}`,
        met: pass(perMessage(m.restoreElement) <= 2 * perMessage(m.restoreDeepChat)),
      },
      {
        target: "Chromium's node counter per message ≤ 2× deep-chat's",
        figure: `${livePerMessage(m.restoreElement).toFixed(1)} vs 2 × ${livePerMessage(m.restoreDeepChat).toFixed(1)}`,
        met: pass(livePerMessage(m.restoreElement) <= 2 * livePerMessage(m.restoreDeepChat)),
      },
    ]),
  ].join('\n');
}

async function openingPanel(server: Server) {
  const { medians: m, loadLine } = await interleaved({
    cold: () => opening(server, true),
    warm: () => opening(server, false),
    untouched: () => untouched(server, false),
    untouchedIdle: () => untouched(server, true),
  });
  const kb = (bytes: number) => (bytes / 1024).toFixed(1);
  return [
    `## Opening: a click on the launcher (dist/browser/persona-chat.js) to the panel's first paint (median of ${runs} interleaved runs)`,
    '',
    loadLine,
    '',
    table([
      {
        click: 'the chat chunk loads on the click (on the pointer coming over it, the first intent)',
        'chunk arrived → panel painted ms': ms(m.cold.chunkToPaintMs!),
        'click → panel painted ms': ms(m.cold.clickToPaintMs!),
        target: '< 100 ms from the chunk',
        met: pass(m.cold.chunkToPaintMs! < 100),
      },
      {
        click: 'the chat chunk loaded while the page was idle (`loading="idle"`)',
        'chunk arrived → panel painted ms': '',
        'click → panel painted ms': ms(m.warm.clickToPaintMs!),
      },
    ]),
    '',
    table([
      {
        'a page whose visitor never touches the chat': 'as it ships (`loading="intent"`)',
        'files of persona-chat fetched': m.untouched.files,
        'their gzip KB': kb(m.untouched.gzipBytes!),
        target: '≤ 3 KB',
        met: pass(m.untouched.gzipBytes! <= 3 * 1024),
      },
      {
        'a page whose visitor never touches the chat': 'with `loading="idle"`',
        'files of persona-chat fetched': m.untouchedIdle.files,
        'their gzip KB': kb(m.untouchedIdle.gzipBytes!),
      },
    ]),
    '',
    "Fetched: the files of dist/browser/ in the page's resource entries once it loaded and two idle callbacks ran, " +
      'then two seconds more; their bytes at gzip level 9, as a server compressing them would send them.',
  ].join('\n');
}

async function largeReplies(server: Server) {
  const {
    medians: m,
    all,
    loadLine,
  } = await interleaved({
    tableRestored: () => restoringLarge(server, 'table'),
    tableStreamed: () => streamingLarge(server, 'table'),
    listRestored: () => restoringLarge(server, 'list'),
    listStreamed: () => streamingLarge(server, 'list'),
  });
  const row = (what: string, r: Figures, runs: Figures[]) => ({
    what,
    'longest task ms': ms(r.longestTaskMs!),
    'most CPU in one task ms': ms(r.mostTaskCpuMs!),
    'tasks > 50 ms': r.tasksOver50,
    'to the last row painted ms': ms(r.drawnMs!),
    'rows drawn': runs.every(run => run.rows === 3000) ? '3,000 of 3,000' : `${r.rows} of 3,000`,
  });
  return [
    `## Large replies: a 195 KB table of 3,000 rows and a 197 KB list of 3,000 items (median of ${runs} interleaved runs)`,
    '',
    loadLine,
    '',
    table([
      row('table, restored (a reload)', m.tableRestored!, all.tableRestored),
      row('table, streamed in 2,000 deltas 4 ms apart', m.tableStreamed!, all.tableStreamed),
      row('list, restored', m.listRestored!, all.listRestored),
      row('list, streamed', m.listStreamed!, all.listStreamed),
    ]),
    '',
    'The main thread of the page while the chat restores the conversation, or streams the reply, until every row is ' +
      'painted, from a Chromium trace: its longest task and the tasks over 50 ms (wall time: what the page cannot ' +
      'answer input during, which a loaded machine lengthens), and the most CPU time the page spent in one task. ' +
      'To the last row: from putting the chat on the page, or from the last delta.',
  ].join('\n');
}

const tables = { streaming: streamingBesidePeers, long: longConversations, opening: openingPanel, large: largeReplies };

/**
 * The element's tables, as markdown sections: all of them, or those BENCH_TABLES names (`streaming`, `long`,
 * `opening`, `large`, comma-separated), for a quicker look at one.
 */
export async function elementBench(): Promise<string[]> {
  const names = (process.env.BENCH_TABLES ?? Object.keys(tables).join(',')).split(',') as (keyof typeof tables)[];
  const unknown = names.filter(name => !(name in tables));
  if (unknown.length)
    throw new Error(`BENCH_TABLES: no table ${unknown.join(', ')}; there are ${Object.keys(tables).join(', ')}`);
  const server = await serve();
  try {
    const sections: string[] = [];
    for (const name of names) sections.push(await tables[name](server));
    return sections;
  } finally {
    server.close();
  }
}
