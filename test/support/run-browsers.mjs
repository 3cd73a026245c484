/**
 * `npm run test:browser`: the web-test-runner suite in each engine of BROWSERS (chromium, firefox and webkit by
 * default), side by side, one web-test-runner process per engine. Each process has its own test server, backend and
 * emulator (web-test-runner.config.mjs), so one engine's tests never see another's conversations, faults or
 * counters. The suite waits on paced replies far more than it computes, so on two cores the three engines side by
 * side take about a quarter longer than Chromium alone, where one after another they would take three times as
 * long. Each line says its engine; the failed tests are printed again at the end, whole, so that a log cut to its
 * last lines still says what failed; the exit code is 1 when any engine failed. Arguments go to web-test-runner
 * (e.g. `npm run test:browser -- --files test/element/smoke.test.ts`). The browser bundle is built first, once, into a
 * folder of the run's own, which every engine's test server serves as sites do (`/built/`).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { pickedEngines } from './browsers.mjs';
import { buildBrowser } from './built.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const engines = pickedEngines();
const width = Math.max(...engines.map(engine => engine.length));

// The browser bundle as built, once for every engine (web-test-runner.config.mjs serves it under /built/).
const out = await mkdtemp(join(tmpdir(), 'persona-chat-built-'));
const built = await buildBrowser(out);

const children = [];
/** The report of each failed test, by engine: its file, its ❌ line and the indented lines under it. */
const failures = new Map(engines.map(engine => [engine, []]));
const reading = new Map();

function noteFailure(engine, raw) {
  // eslint-disable-next-line no-control-regex
  const line = raw.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
  const state = reading.get(engine) ?? { file: '', lines: null };
  reading.set(engine, state);
  const file = /^(test\/\S+):$/.exec(line);
  if (file) state.file = file[1];
  if (line.startsWith(' ❌')) {
    state.lines = [`${state.file}: ${line.trim()}`];
    failures.get(engine).push(state.lines);
  } else if (state.lines && line.startsWith('      ')) state.lines.push(line);
  else state.lines = null;
}
const runs = engines.map(engine => {
  const started = Date.now();
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'node_modules/@web/test-runner/dist/bin.js',
      '--config',
      'web-test-runner.config.mjs',
      // Plain lines, not a progress bar redrawn in place, so that the engines' lines can interleave.
      '--static-logging',
      ...process.argv.slice(2),
    ],
    {
      cwd: root,
      env: { ...process.env, BROWSERS: engine, PERSONA_CHAT_BUILT: built },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  children.push(child);
  const prefix = `${engine.padEnd(width)} | `;
  createInterface({ input: child.stdout }).on('line', line => {
    process.stdout.write(prefix + line + '\n');
    noteFailure(engine, line);
  });
  createInterface({ input: child.stderr }).on('line', line => process.stderr.write(prefix + line + '\n'));
  // 'close', not 'exit': the last lines are out by then.
  return new Promise(resolve =>
    child.once('close', code =>
      resolve({ engine, passed: code === 0, seconds: Math.round((Date.now() - started) / 1000) }),
    ),
  );
});

// Ctrl+C or a kill stops every engine's run as web-test-runner stops on Ctrl+C, closing its pages and browsers.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => children.forEach(child => child.kill('SIGINT')));

const results = await Promise.all(runs);
await rm(out, { recursive: true, force: true });
for (const [engine, failed] of failures) {
  if (failed.length === 0) continue;
  console.log(`\n${engine}: ${failed.length} failed`);
  for (const lines of failed) console.log(lines.join('\n'));
}
console.log('');
for (const { engine, passed, seconds } of results) {
  console.log(`${engine.padEnd(width)}: ${passed ? 'passed' : 'FAILED'} in ${seconds} s`);
}
process.exitCode = results.every(result => result.passed) ? 0 : 1;
