// Runs in Chromium: streams a generated 40 KB markdown reply in 2,000 deltas into the reply renderer, rendering at
// most once per animation frame, and measures the script time of the renders and the longest task.
import { render } from 'lit';
import { MarkdownView, renderMarkdown } from '../../src/element/markdown.js';

const labels = { copyLabel: 'Copy', sourceLabel: (n: number) => `Source ${n}` };

/** A deterministic pseudo-random sequence. */
function random(seed: number) {
  return () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
}

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
  await new Promise<void>(resolve => {
    pieces.forEach((piece, i) => {
      setTimeout(
        () => {
          received += piece;
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

if (typeof window !== 'undefined') Object.assign(window, { runBench: run });
