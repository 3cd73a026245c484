// Runs in Chromium: streams a generated 40 KB markdown reply in 2,000 deltas into the reply renderer, rendering at
// most once per animation frame, and measures the script time of the renders and the longest task. Also streams
// hostile inputs in 1 to 2 KB pieces, one render per piece, and measures the longest render.
import { render } from 'lit';
import { MarkdownView, renderMarkdown } from '../../src/element/markdown.js';
import { hostileInputs, pieces, random } from './hostile.js';

const labels = {
  copyLabel: 'Copy',
  codeLabel: (language: string) => (language ? `${language} code` : 'Code'),
  sourceLabel: (n: number) => `Source ${n}`,
};

/** About 40 KB of the markdown a grounded answer contains: headings, lists, code, tables, links, citations. */
export function makeReply(bytes = 40_000): string {
  const next = random(7);
  const word = () =>
    ['tent', 'returns', 'shipping', 'the', 'gear', 'policy', 'within', 'days', 'member', 'store', 'warranty', 'boots'][
      Math.floor(next() * 12)
    ];
  const sentence = () => {
    const words = Array.from({ length: 8 + Math.floor(next() * 10) }, word).join(' ');
    const cite = next() < 0.4 ? ` [${1 + Math.floor(next() * 5)}]` : '';
    return `${words[0]!.toUpperCase()}${words.slice(1)}${next() < 0.2 ? ' **important**' : ''}${next() < 0.1 ? ' `code()`' : ''}${cite}.`;
  };
  const blocks: string[] = [];
  let length = 0;
  for (let i = 0; length < bytes; i++) {
    const kind = i % 9;
    const block =
      kind === 0
        ? `## Section ${i}`
        : kind === 3
          ? Array.from({ length: 4 }, (_, n) => `${next() < 0.5 ? '-' : `${n + 1}.`} ${sentence()}`).join('\n')
          : kind === 5
            ? '```ts\nconst total = items.reduce((sum, item) => sum + item.price, 0);\nconsole.log(`[1] ${total}`);\n```'
            : kind === 7
              ? '| Item | Price | Notes |\n|:--|--:|:-:|\n| Tent | $18 | per night [2] |\n| Bag | $12 | [see](https://example.com) |'
              : `${sentence()} ${sentence()} See [the guide](https://shop.example.com/help). ${sentence()}`;
    blocks.push(block);
    length += block.length + 2;
  }
  return blocks.join('\n\n');
}

function deltas(text: string, count: number): string[] {
  const next = random(11);
  const cuts = new Set<number>();
  while (cuts.size < count - 1) cuts.add(1 + Math.floor(next() * (text.length - 1)));
  const points = [0, ...[...cuts].sort((a, b) => a - b), text.length];
  return points.slice(1).map((end, i) => text.slice(points[i], end));
}

const strip = (html: string) => html.replace(/<!--[^>]*-->/g, '');

export interface BenchResult {
  mode: string;
  renders: number;
  scriptMs: number;
  viewMs: number;
  tasksOver50: number;
  finalEqualsOneShot: boolean;
}

/** Streams the reply: one delta every 4 ms, renders at most once per frame, one final render. */
async function run(mode: 'incremental' | 'full'): Promise<BenchResult> {
  const text = makeReply();
  const pieces = deltas(text, 2000);
  const host = document.createElement('div');
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
  const tasks: number[] = [];
  const observer = new PerformanceObserver(list => list.getEntries().forEach(e => tasks.push(e.duration)));
  observer.observe({ type: 'longtask', buffered: false });
  const started = performance.now();
  let delivered = 0;
  await new Promise<void>(resolve => {
    pieces.forEach((_, i) => {
      setTimeout(
        () => {
          // Timers due in the same millisecond can fire out of order; deltas are delivered in order all the same.
          while (delivered <= i) received += pieces[delivered++];
          if (!scheduled) {
            scheduled = true;
            requestAnimationFrame(() => {
              scheduled = false;
              draw(false);
            });
          }
          if (i === pieces.length - 1) setTimeout(resolve, 50);
        },
        Math.max(0, i * 4 - (performance.now() - started)),
      );
    });
  });
  draw(true);
  await new Promise(resolve => setTimeout(resolve, 100));
  observer.disconnect();
  const oneShot = document.createElement('div');
  render(renderMarkdown(text, labels).parts, oneShot);
  return {
    mode,
    renders,
    scriptMs: Math.round(scriptMs),
    viewMs: Math.round(viewMs),
    tasksOver50: tasks.filter(t => t > 50).length,
    finalEqualsOneShot: strip(host.innerHTML) === strip(oneShot.innerHTML),
  };
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

if (typeof window !== 'undefined') Object.assign(window, { runBench: run, runHostile });
