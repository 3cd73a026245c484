// The reply every streaming bench feeds: about 40 KB of the markdown a grounded answer contains, cut into deltas at
// the same places every time.
import { random } from './hostile.js';

/** About 40 KB of the markdown a grounded answer contains: headings, lists, code, tables, links, citations. */
export function makeReply(bytes = 40_000, seed = 7): string {
  const next = random(seed);
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

/** Cuts `text` into `count` deltas at pseudo-random places, the same every time. */
export function deltas(text: string, count: number): string[] {
  const next = random(11);
  const cuts = new Set<number>();
  while (cuts.size < count - 1) cuts.add(1 + Math.floor(next() * (text.length - 1)));
  const points = [0, ...[...cuts].sort((a, b) => a - b), text.length];
  return points.slice(1).map((end, i) => text.slice(points[i], end));
}

/**
 * A markdown table as a model writes a catalogue: a row a line, four columns, with right-aligned numbers. 3,000 rows
 * (the default) are about 195 KB.
 */
export function makeTable(rows = 3000): string {
  const lines = ['| # | Item | Price | Availability |', '|--:|:--|--:|:--|'];
  for (let i = 1; i <= rows; i++) {
    lines.push(`| ${i} | Trail item #${i} | $${(i * 37) % 500}.00 | in stock, ships in ${i % 9} days |`);
  }
  return `Here is the whole catalogue:\n\n${lines.join('\n')}\n\nAsk about any item.`;
}

/** A long bullet list, an item a line with emphasis and a citation marker. 3,000 items are about 197 KB. */
export function makeList(items = 3000): string {
  const lines = Array.from(
    { length: items },
    (_, i) => `- Item ${i + 1}: **trail gear** that ships in ${i % 9} days from a store [1]`,
  );
  return `Every item:\n\n${lines.join('\n')}\n\nAsk about any of them.`;
}
