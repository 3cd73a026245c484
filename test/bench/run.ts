// `npm run bench`: measures in real Chromium, prints a table and writes it to test-results/bench.md.
//
// - the element (see element.ts): a 40 KB reply in 2,000 deltas (one every 4 ms) into the renderer alone (with its
//   tail settling, and with a full re-lex every frame), into the element, into deep-chat and into a <pre>; 500
//   restored messages, keystrokes and streaming under them; opening the panel from the launcher; a table of 3,000
//   rows and a list of 3,000 items restored and streamed (the main thread's longest task).
// - hostile markdown: inputs built to overflow the stack or to be slow to lex, each streamed in 1 to 2 KB pieces
//   with one render per piece (lexing, templates and Lit's DOM update): the longest render and the total; the same
//   text rendered at once (a restored reply, compared with the streamed DOM); the DOM's depth.
// - size: the gzip size of the script-tag file and where its bytes come from.
// - backend: the time a message takes to its first delta and its end through the backend (on the memory store and on
//   Redis) and through a bare proxy, and the CPU per message (see backend.ts); and the size of the README's Worker
//   example, bundled (see worker.ts).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import { builtChat } from '../support/built.mjs';
import { chromiumFlags, findChromium } from '../support/chromium.mjs';
import { backendBench } from './backend.js';
import { elementBench } from './element.js';
import { hostileInputs, lexerInputs } from './hostile.js';
import { workerBundleRows } from './worker.js';
import type { HostileResult } from './markdown-page.js';

const repeats = Number(process.env.BENCH_REPEATS ?? 3);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Serves the bench page and calls one of its functions in a fresh browser per call. */
async function benchPage() {
  const bundle = await build({
    entryPoints: ['test/bench/markdown-page.ts'],
    bundle: true,
    minify: true,
    format: 'esm',
    write: false,
    conditions: ['production'],
    tsconfig: 'tsconfig.json',
  });
  const script = bundle.outputFiles[0]!.text;
  const server = createServer((req, res) => {
    if (req.url === '/bench.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><script type="module" src="/bench.js"></script>');
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    async call<T>(name: 'runHostile' | 'runLex', arg: string): Promise<T> {
      const browser = await chromium.launch({ executablePath: findChromium(), args: chromiumFlags, headless: true });
      try {
        const page = await browser.newPage();
        await page.goto(url);
        await page.waitForFunction(() => 'runHostile' in window);
        return await page.evaluate(
          ([n, a]) => (window as unknown as Record<string, (a: string) => Promise<T>>)[n]!(a),
          [name, arg] as const,
        );
      } finally {
        await browser.close();
      }
    },
    close: () => server.close(),
  };
}

type Page = Awaited<ReturnType<typeof benchPage>>;

async function hostile(page: Page) {
  const rows: Record<string, unknown>[] = [];
  for (const input of Object.keys(hostileInputs)) {
    const results: HostileResult[] = [];
    for (let i = 0; i < repeats; i++) results.push(await page.call<HostileResult>('runHostile', input));
    rows.push({
      input: `${input} (${(hostileInputs[input]!.length / 1024).toFixed(0)} KB)`,
      renders: results[0]!.renders,
      'longest render ms': median(results.map(r => r.longestMs)),
      'total ms': median(results.map(r => r.totalMs)),
      'at once ms': median(results.map(r => r.oneShotMs)),
      threw: results.some(r => r.threw) ? 'yes' : 'no',
      'DOM depth': Math.max(...results.map(r => r.depth)),
      'final = one-shot': results.every(r => r.finalEqualsOneShot) ? 'yes' : 'no',
    });
  }
  return rows;
}

/** Each hostile input lexed whole: linear time, where a backtracking lexer takes seconds. */
async function lexing(page: Page) {
  const results = await page.call<Record<string, { ms: number[]; tokens: number }>>('runLex', String(repeats));
  return Object.entries({ ...hostileInputs, ...lexerInputs }).map(([input, text]) => ({
    input: `${input} (${(text.length / 1024).toFixed(0)} KB)`,
    'top-level blocks': results[input]!.tokens,
    'lex ms': median(results[input]!.ms).toFixed(1),
  }));
}

async function size() {
  const rows: Record<string, unknown>[] = [];
  // What a page loads before the chat is opened (the launcher), then the chat it loads on intent.
  const launcher = await readFile('dist/browser/persona-chat.js').catch(() => undefined);
  const chatName = await builtChat().catch(() => undefined);
  const chat = chatName && (await readFile(`dist/browser/${chatName}`));
  for (const [part, file] of [
    ['dist/browser/persona-chat.js (the launcher: all a page loads before the chat is used)', launcher],
    [`dist/browser/${chatName} (the chat, loaded on intent)`, chat],
  ] as const) {
    if (!file) continue;
    rows.push({
      part,
      'min KB': (file.length / 1024).toFixed(1),
      'gzip KB': (gzipSync(file, { level: 9 }).length / 1024).toFixed(1),
    });
  }
  const result = await build({
    entryPoints: ['src/element/define.ts'],
    bundle: true,
    minify: true,
    format: 'esm',
    write: false,
    metafile: true,
    conditions: ['production'],
  });
  const inputs = Object.values(result.metafile.outputs)[0]!.inputs;
  const byPart = new Map<string, string[]>();
  for (const [path, { bytesInOutput }] of Object.entries(inputs)) {
    if (!bytesInOutput) continue;
    const parts = path.split('/');
    const name = path.startsWith('node_modules/')
      ? parts[1]!.startsWith('@')
        ? `${parts[1]}/${parts[2]}`
        : parts[1]!
      : 'persona-chat (src)';
    byPart.set(name, [...(byPart.get(name) ?? []), path]);
  }
  const total = Object.values(inputs).reduce((n, i) => n + i.bytesInOutput, 0);
  const sized = [...byPart].map(
    ([name, paths]) => [name, paths.reduce((n, p) => n + inputs[p]!.bytesInOutput, 0)] as const,
  );
  for (const [name, bytes] of sized.sort((a, b) => b[1] - a[1])) {
    rows.push({ part: name, 'min KB': (bytes / 1024).toFixed(1), share: `${Math.round((100 * bytes) / total)}%` });
  }
  return rows;
}

function table(rows: Record<string, unknown>[]): string {
  const keys = [...new Set(rows.flatMap(Object.keys))];
  return [
    `| ${keys.join(' | ')} |`,
    `| ${keys.map(() => '---').join(' | ')} |`,
    ...rows.map(r => `| ${keys.map(k => r[k] ?? '').join(' | ')} |`),
  ].join('\n');
}

/** The browser's part: the element, hostile markdown and the size of the script-tag file. */
async function browserSections(): Promise<string[]> {
  const elementSections = await elementBench();
  const page = await benchPage();
  let hostileRows: Record<string, unknown>[];
  let lexRows: Record<string, unknown>[];
  try {
    hostileRows = await hostile(page);
    lexRows = await lexing(page);
  } finally {
    page.close();
  }
  return [
    ...elementSections.flatMap(section => [section, '']),
    '## Hostile markdown: streamed in 1 to 2 KB pieces, one render per piece, then the final render; then at once',
    '',
    table(hostileRows),
    '',
    '## Hostile markdown lexed whole (the lexer alone)',
    '',
    table(lexRows),
    '',
    '## Size of the script-tag file',
    '',
    table(await size()),
    '',
  ];
}

/** The backend's part: latency and CPU beside a bare proxy, then many streams at once, held open and not. */
async function backendSections(): Promise<string[]> {
  const { latency, held, burst, targets } = await backendBench();
  const streams = process.env.BENCH_STREAMS ?? 2000;
  const section = (title: string, rows: Record<string, unknown>[]) => (rows.length ? [title, '', table(rows), ''] : []);
  return [
    ...section(
      `## Backend: ${process.env.BENCH_MESSAGES ?? 1000} messages one at a time after ${process.env.BENCH_WARMUP ?? 2000} to warm up, in ${process.env.BENCH_ROUNDS ?? 5} rounds through the paths in turn, then 8 at a time; emulator at pace 0, limits off`,
      latency,
    ),
    ...section(
      `## Backend: ${streams} streams held open, opened at once, each by its own visitor on its own connection; emulator at its default pace (12 words a second), a reply of 240 words`,
      held,
    ),
    ...section(`## Backend: ${streams} streams opened at once; emulator at pace 0`, burst),
    ...section('## Backend: targets', targets),
    "## Backend: the Worker bundle (the README's Worker example, bundled by esbuild for a neutral platform, minified)",
    '',
    table(await workerBundleRows()),
    '',
  ];
}

/**
 * Every target the tables below check, in one table: the rows of each table that has a `target` and a `met` column,
 * with the section they are in. The figures are the tables' own, deep-chat's and the floors' beside them.
 */
function targetSummary(sections: string[]): string[] {
  const rows: Record<string, unknown>[] = [];
  let section = '';
  let columns: string[] | undefined;
  const cells = (line: string) =>
    line
      .slice(1, -1)
      .split(' | ')
      .map(cell => cell.trim());
  for (const line of sections.join('\n').split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3).split(/[:(]/)[0]!.trim();
    if (!line.startsWith('|')) {
      columns = undefined;
      continue;
    }
    if (!columns) {
      const header = cells(line);
      columns = header.includes('target') && header.includes('met') ? header : [];
      continue;
    }
    const row = cells(line);
    if (!columns.length || row.every(cell => /^-+$/.test(cell))) continue;
    const of = (name: string) => row[columns!.indexOf(name)] ?? '';
    if (!of('met')) continue;
    const figure = columns
      .filter(name => name !== 'target' && name !== 'met')
      .map(name => (name === 'figure' ? of(name) : of(name) && `${name}: ${of(name)}`))
      .filter(Boolean)
      .join('; ');
    rows.push({ table: section, target: of('target'), figure, met: of('met') });
  }
  if (!rows.length) return [];
  const met = rows.filter(row => row.met === 'pass').length;
  return [`## Targets: ${met} of ${rows.length} met in this run`, '', table(rows), ''];
}

// BENCH_ONLY=backend (or browser) runs one part alone.
const only = process.env.BENCH_ONLY;
if (only && only !== 'backend' && only !== 'browser') throw new Error('BENCH_ONLY must be backend or browser');
const sections = [
  ...(only === 'backend' ? [] : await browserSections()),
  ...(only === 'browser' ? [] : await backendSections()),
];
const report = [
  `# persona-chat benchmarks (${new Date().toISOString().slice(0, 10)}, median of ${repeats} unless said)`,
  '',
  ...targetSummary(sections),
  ...sections,
].join('\n');
await mkdir('test-results', { recursive: true });
await writeFile(only ? `test-results/bench-${only}.md` : 'test-results/bench.md', report);
console.log(report);
