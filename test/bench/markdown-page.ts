// Runs in Chromium: streams a generated 40 KB markdown reply in 2,000 deltas into the reply renderer, rendering at
// most once per animation frame, and measures the script time of the renders, the longest task and the time from the
// last delta to the final paint (the bench reads the main thread's CPU around it). Also streams hostile inputs in 1
// to 2 KB pieces, one render per piece, and measures the longest render; and lexes hostile text whole.
import { render } from 'lit';
import { lex } from '../../src/element/lexer.js';
import { MarkdownView, renderMarkdown } from '../../src/element/markdown.js';
import { afterPaint, feed, longTasks } from './frames.js';
import { hostileInputs, lexerInputs, pieces } from './hostile.js';
import { deltas, makeReply } from './reply.js';

const labels = {
  copyLabel: 'Copy',
  codeLabel: (language: string) => (language ? `${language} code` : 'Code'),
  sourceLabel: (n: number) => `Source ${n}`,
};

const strip = (html: string) => html.replace(/<!--[^>]*-->/g, '');

export interface BenchResult {
  renders: number;
  scriptMs: number;
  viewMs: number;
  tasksOver50: number;
  feedMs: number;
  lastDeltaToPaintMs: number;
}

/** Where the last run drew its reply. */
let streamed: HTMLElement | undefined;

/** Streams the reply: one delta every 4 ms, renders at most once per frame, one final render, then its paint. */
async function run(mode: 'incremental' | 'full'): Promise<BenchResult> {
  const text = makeReply();
  const host = (streamed = document.createElement('div'));
  document.body.replaceChildren(host);
  const view = new MarkdownView(labels);
  let received = '';
  let scheduled = false;
  let renders = 0;
  let scriptMs = 0;
  let viewMs = 0;
  const draw = (final: boolean) => {
    const start = performance.now();
    // `full` lexes and renders the whole reply every time, as a renderer without tail settling would.
    const parts =
      mode === 'incremental' ? view.render(received, final) : new MarkdownView(labels).render(received, final);
    viewMs += performance.now() - start;
    render(parts, host);
    scriptMs += performance.now() - start;
    renders++;
  };
  const tasks = longTasks();
  const started = performance.now();
  const last = await feed(deltas(text, 2000), piece => {
    received += piece;
    if (!scheduled) {
      scheduled = true;
      requestAnimationFrame(() => {
        scheduled = false;
        draw(false);
      });
    }
  });
  draw(true);
  const painted = await afterPaint();
  return {
    renders,
    scriptMs: Math.round(scriptMs),
    viewMs: Math.round(viewMs),
    tasksOver50: tasks.stop(),
    feedMs: Math.round(last - started),
    lastDeltaToPaintMs: Math.round(painted - last),
  };
}

/** Whether the last run's final DOM equals a one-shot render of the reply (checked after its timing). */
function finalEqualsOneShot(): boolean {
  const oneShot = document.createElement('div');
  render(renderMarkdown(makeReply(), labels).parts, oneShot);
  return strip(streamed?.innerHTML ?? '') === strip(oneShot.innerHTML);
}

export interface HostileResult {
  input: string;
  renders: number;
  longestMs: number;
  totalMs: number;
  oneShotMs: number;
  threw: boolean;
  depth: number;
  finalEqualsOneShot: boolean;
}

/** How deep elements nest under a node. */
function depthOf(node: Element): number {
  let deepest = 0;
  const stack: [Element, number][] = [[node, 0]];
  for (let entry = stack.pop(); entry; entry = stack.pop()) {
    const [el, depth] = entry;
    deepest = Math.max(deepest, depth);
    for (const child of el.children) stack.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * Streams one hostile input in 1 to 2 KB pieces, one render per piece in its own task, then the final render, and
 * renders it once more at once (a restored reply). A small ordinary reply is rendered first, untimed, so that the
 * times are the input's and not the page's first compile of the renderer and Lit.
 */
async function runHostile(input: string): Promise<HostileResult> {
  const text = hostileInputs[input]!;
  render(renderMarkdown(makeReply(2_000), labels).parts, document.createElement('div'));
  const host = document.createElement('div');
  document.body.replaceChildren(host);
  const view = new MarkdownView(labels);
  const times: number[] = [];
  let threw = false;
  let received = '';
  const draw = (final: boolean) => {
    const start = performance.now();
    try {
      render(view.render(received, final), host);
    } catch {
      threw = true;
    }
    times.push(performance.now() - start);
  };
  for (const piece of pieces(text)) {
    received += piece;
    draw(false);
    await new Promise(resolve => setTimeout(resolve));
  }
  draw(true);
  const oneShot = document.createElement('div');
  const start = performance.now();
  try {
    render(renderMarkdown(text, labels).parts, oneShot);
  } catch {
    threw = true;
  }
  const oneShotMs = performance.now() - start;
  const finalEqualsOneShot = !threw && strip(host.innerHTML) === strip(oneShot.innerHTML);
  return {
    input,
    renders: times.length,
    longestMs: Math.round(Math.max(...times)),
    totalMs: Math.round(times.reduce((a, b) => a + b, 0)),
    oneShotMs: Math.round(oneShotMs),
    threw,
    depth: depthOf(host),
    finalEqualsOneShot,
  };
}

/**
 * Lexes each hostile input whole, once to warm up and then `times` times: the milliseconds of each and the tokens it
 * made. One page for all of them, since the lexer keeps no state between calls.
 */
function runLex(times: string): Record<string, { ms: number[]; tokens: number }> {
  const out: Record<string, { ms: number[]; tokens: number }> = {};
  for (const [input, text] of Object.entries({ ...hostileInputs, ...lexerInputs })) {
    const tokens = lex(text).length;
    const ms: number[] = [];
    for (let i = 0; i < Number(times); i++) {
      const start = performance.now();
      lex(text);
      ms.push(performance.now() - start);
    }
    out[input] = { ms, tokens };
  }
  return out;
}

if (typeof window !== 'undefined') Object.assign(window, { runBench: run, finalEqualsOneShot, runHostile, runLex });
