// The lexer against marked's, on replies like the model's: the fields the renderer reads must agree, but for the
// differences listed below, each made on purpose. And the lexer on hostile text: it finishes, in time linear in the
// text, with nesting and output bounded.
import { expect } from '@open-wc/testing';
import { Lexer } from 'marked';
import { lex, maxDepth } from '../../src/element/lexer.js';
import type { Block, Inline } from '../../src/element/lexer.js';
import { decodeEntities } from '../../src/element/sanitize.js';
import { hostileInputs, lexerInputs } from '../bench/hostile.js';

// Tokens of either lexer, loosely typed: the normal form below reads only what both have.
type Loose = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Inline tokens in a normal form: what the renderer shows of them. Text is decoded, as the renderer decodes it
 * (marked decodes numeric character references in text, the lexer leaves them all to the renderer), escapes are
 * text, neighbouring texts are one, and whitespace counts as one space, none at the ends.
 */
function inlines(tokens: Loose[] = []): unknown[] {
  const out: unknown[] = [];
  for (const t of tokens) {
    let n: unknown;
    switch (t.type) {
      case 'checkbox':
        continue;
      case 'text':
        if (t.tokens) {
          out.push(...inlines(t.tokens));
          continue;
        }
        n = decodeEntities(t.text);
        break;
      case 'escape':
        n = t.text;
        break;
      case 'strong':
      case 'em':
      case 'del':
        n = [t.type, ...inlines(t.tokens)];
        break;
      case 'codespan':
        n = ['code', t.text];
        break;
      case 'br':
        n = ['br'];
        break;
      case 'link':
        n = ['link', t.href, ...inlines(t.tokens)];
        break;
      case 'image':
        n = ['image', t.href, t.text];
        break;
      case 'html':
        n = t.raw;
        break;
      default:
        n = [`unknown ${t.type}`];
    }
    if (typeof n === 'string' && typeof out.at(-1) === 'string') out[out.length - 1] += n;
    else out.push(n);
  }
  return out
    .map((n, i) => {
      if (typeof n !== 'string') return n;
      let s = n.replace(/\s+/g, ' ');
      if (i === 0) s = s.replace(/^ /, '');
      if (i === out.length - 1) s = s.replace(/ $/, '');
      return s;
    })
    .filter(n => n !== '');
}

/**
 * Block tokens in a normal form: what the renderer draws of them. It draws nothing of spaces and definitions, and a
 * task item's box from the item (marked also gives it as a token).
 */
function blocks(tokens: Loose[] = []): unknown[] {
  const out: unknown[] = [];
  for (const t of tokens) {
    switch (t.type) {
      case 'space':
      case 'def':
      case 'checkbox':
        break;
      case 'paragraph':
        out.push(['p', ...inlines(t.tokens)]);
        break;
      case 'text':
        out.push(['text', ...inlines(t.tokens ?? [{ type: 'text', text: t.text }])]);
        break;
      case 'heading':
        out.push([`h${t.depth}`, ...inlines(t.tokens)]);
        break;
      case 'code':
        out.push(['code', (t.lang ?? '').split(/\s/)[0], t.text]);
        break;
      case 'blockquote':
        out.push(['quote', ...blocks(t.tokens)]);
        break;
      case 'list':
        out.push([
          t.ordered ? `ol ${t.start}` : 'ul',
          t.loose ? 'loose' : 'tight',
          ...t.items.map((item: Loose) => [
            'li',
            item.checked === undefined ? '' : item.checked ? '[x]' : '[ ]',
            ...blocks(item.tokens),
          ]),
        ]);
        break;
      case 'table':
        out.push([
          'table',
          t.header.map((cell: Loose) => cell.align).join(),
          t.header.map((cell: Loose) => inlines(cell.tokens)),
          ...t.rows.map((row: Loose[]) => row.map(cell => inlines(cell.tokens))),
        ]);
        break;
      case 'hr':
        out.push(['hr']);
        break;
      case 'html':
        out.push(['html', t.raw.trim()]);
        break;
      default:
        out.push([`unknown ${t.type}`]);
    }
  }
  return out;
}

const ours = (text: string) => blocks(lex(text));
const marked = (text: string) => blocks(Lexer.lex(text, { gfm: true }));

/** Replies as the model writes them. */
const replies: Record<string, string> = {
  'returns policy': `## Returns policy

You can return most items within **30 days** of delivery [1]. A few exceptions apply:

- Opened *sleeping bags* and mattresses, for hygiene reasons [2]
- Custom-made tents
- Gift cards

If your item is eligible, start the return from [your orders page](https://shop.example.com/orders) and print the label.

> Refunds go back to the original payment method within 5–7 business days [doc1].
`,
  'setup steps': `Here's how to pitch the **Ridgeline 2** tent:

1. Lay out the footprint on flat ground.
2. Spread the tent body over it, door facing away from the wind.
3. Assemble the poles:
   - The long pole goes corner to corner.
   - The short *brow* pole clips across the top.
4. Stake out the corners, then the guy lines.

That's it! Setup takes about **10 minutes** once you've done it once.`,
  'comparison table': `| Model | Weight | Capacity | Price |
|:------|-------:|:--------:|------:|
| Ridgeline 2 | 1.8 kg | 2 | $249 |
| Summit 3 | 2.4 kg | 3 | $329 |
| Basecamp 6 | 7.9 kg | 6 | $499 |

The **Summit 3** is the best balance of weight and space for most couples [3].`,
  'code answer':
    'To call the API from Node, use `fetch`:\n\n```ts\nconst res = await fetch(\'https://api.example.com/v1/orders\', {\n  headers: { Authorization: `Bearer ${token}` },\n});\n\nif (!res.ok) throw new Error(res.statusText);\n```\n\nOr with Python:\n\n```python\nimport requests\n\nr = requests.get("https://api.example.com/v1/orders")\nprint(r.json())\n```\n\nBoth return a JSON array of orders.',
  'task list': `### Packing checklist

- [x] Tent and footprint
- [x] Sleeping bag (rated to -5 °C)
- [ ] Stove and fuel
- [ ] Headlamp with spare batteries

Anything unchecked is available in our **Camp Kitchen** range.`,
  'nested and loose': `There are three options:

1. **Standard shipping** — free over $50.

   Arrives in 3–5 business days.

2. **Express** — $12.

   - Next business day in most areas
   - Order by 2 pm

3. **Store pickup** — free, usually ready in 2 hours.
`,
  'links and urls':
    'See https://example.com/help/returns. You can also email support@example.com or visit www.example.com/stores, or read <https://example.com/faq>.\n\nThe [size guide](https://example.com/size "Size guide") has charts, and ![a diagram](https://example.com/d.png) shows it.',
  'emphasis mix':
    'This is *really* important: **do not** store a wet tent. Use ~~bleach~~ mild soap, and ***never*** a washing machine. Snake_case_names stay as written, as do 2*3*4 and a * b.',
  'headings and rules':
    '# Care guide\n\nSome intro.\n\n---\n\nSetext heading\n==============\n\nAnother one\n-----------\n\n#### Small heading ####\n\n***\n\nDone.',
  quotes:
    '> **Note**\n> Always check the forecast before you go.\n\n> Nested:\n> > a quote in a quote\n> back out\n\nAfter.',
  citations:
    'Our tents are rated for 3 seasons [1][2]. The warranty covers seams and zips [doc2], but not UV damage [3].\n\n| Claim | Source |\n|---|---|\n| Waterproof to 3000 mm | [1] |\n| Lifetime warranty | [doc4] |\n',
  'hard breaks and entities':
    'Line one  \nLine two\\\nLine three\n\nAT&amp;T &copy; 2024 &mdash; prices in &euro; and 5 &lt; 6.',
  'inline code':
    'Run `npm install` then `npm start`. Use ``a `tick` inside`` for backticks. A `code [1]` is not a citation.',
  'ordered start': 'Continuing from before:\n\n3. Third step\n4. Fourth step\n\n7) Seventh, with a paren\n8) Eighth',
  'indented code': 'Example config:\n\n    port = 8080\n    host = "0.0.0.0"\n\nThen restart.',
  'html in reply':
    'Press <kbd>Ctrl</kbd>+<kbd>C</kbd> to copy.\n\n<div align="center">\n  <b>Bold</b>\n</div>\n\nDone.',
  'reference links':
    'See the [care guide][care] and [warranty].\n\n[care]: https://example.com/care\n[warranty]: https://example.com/warranty "Warranty"',
  escaped: 'Prices are \\*not\\* final. Use \\[brackets\\] and a backslash \\\\ as is. 1\\. not a list.',
  'table with code and pipes':
    '| Option | Example |\n|--------|---------|\n| pipe | `a \\| b` |\n| bold | **yes** |\n| empty | |\n',
  'list then paragraph': 'Steps:\n- one\n- two\nThat is all.\n\n* star list\n+ plus list',
  'long reply': `# Choosing a sleeping bag

When picking a bag, think about **temperature rating**, *fill*, and **shape** [1].

## Temperature rating

Bags list a *comfort* and a *limit* rating. Pick a comfort rating about 5 °C below the coldest night you expect.

| Rating | Good for |
|:--|:--|
| +5 °C | Summer |
| -5 °C | Three seasons |
| -15 °C | Winter |

## Fill

- **Down**: lighter, packs smaller, loses warmth when wet.
- **Synthetic**: heavier, cheaper, stays warm when damp.

> Tip: a liner adds 2–5 °C and keeps the bag clean.

## Shape

1. *Mummy* — warmest for its weight.
2. *Rectangular* — roomy, good for car camping.

See our [buying guide](https://shop.example.com/guides/sleeping-bags) for more, or ask me anything else!`,
};

/** Constructs replies seldom use, each on its own. */
const constructs: Record<string, string> = {
  'lists of each kind, one after another': 'Steps:\n- one\n- two\n1. three\n2. four\n* five\n+ six\nText right after.',
  'a tight list with a lazy line, then a loose one': '- a\nlazy\n- b\n\n  more\n',
  'nested ordered lists': '1. a\n   1. b\n      1. c',
  'list items indented one more each': '- a\n - b\n  - c\n   - d\n    - e',
  'fenced code in a list item, with a blank line in it': '* a\n\n  ```\n  code\n\n  more\n  ```\n* b',
  'an empty item and a tab': '-\n  foo\n- \n- bar\n- \ttab item',
  'task boxes with and without text': '- [ ] \n- [x]\n- [X] upper\n- [ ]not task\n\n1. [ ] ordered task',
  'a table without outer pipes, and one breaking a paragraph':
    'a | b\n--|--\n1 | 2\n\nHere:\n| a | b |\n|---|---|\n| 1 |\n| 1 | 2 | 3 |',
  'block quotes, nested, lazy and with a list': '> quote\nlazy\n> > nested\n\n> - one\n> - two\n>\n> para\n\n>no space',
  'fences of tildes and of four backticks, and one left open':
    '~~~bash title\necho hi\n~~~\n\n````md\n```\nnested\n```\n````\n\n```js\nlet a = 1;\n',
  'headings of every form': '## Title ##\n### #hash\n#NoSpace\n####### seven\n   # indented\n\nSetext\n===\n\n- a\n---',
  'thematic breaks': '* * *\n- - -\n_ _ _',
  'emphasis that flanks, and that does not':
    '**bold**text *emph*text foo*bar* 5*3 = 15 "*quoted*" «*fr*» __init__ _a_b_ ***x*** **_y_**',
  'emphasis left open': '**unclosed bold and *em*',
  'strikethrough with one tilde and with two':
    'range 20~25 and 30~35, ~~gone~~ and ~one~ and ~~~three~~~ and ~~a **b** c~~',
  'links with titles, angle brackets and parentheses':
    "[a](<https://x.com/a b>) [p](https://x.com/a_(b)_c) [t](https://x 't') [u](https://x (u)) [broken](https://x and",
  'links with images, code and links inside':
    '[a [b](https://b) c](https://a) [![alt *x*](https://i.png)](https://l) [x`]`](https://y)',
  'bare URLs and addresses':
    'See (https://en.wikipedia.org/wiki/Tent_(disambiguation)), https://x.com?q=1. and www.example.com. Write to first.last+tag@mail.example.co.uk or <help@example.com>; not user@localhost.',
  'raw HTML, inline and in blocks':
    'a <span class="x">*b*</span> c <br> Vec<T>\n\n<details>\n<summary>More</summary>\n\nContent **here**\n\n</details>\n\n<!--\nhidden\n\ncomment\n-->\nafter',
  'footnotes as GitHub writes them': 'A note[^1].\n\n[^1]: The note.',
  'line breaks': 'a  \nb   \nc\\\nd\t\ne\\',
  'citations next to text and each other': 'Claims[1], more[2].[3] and [doc12]',
  'a backtick run after an escaped backtick': 'a \\``` b `d`',
  'a tab after a quote marker': '>\tnot code',
  'backticks that open no fence, in a paragraph': 'para\n```a```\nmore',
  'dashes under a row with a pipe': 'a | b\n---\nc',
  'raw HTML in a quote, then a line without a marker': '> <div>x</div>\nafter',
  'URLs after punctuation': 'Link:https://example.com/a and "https://example.com/q" and [https://example.com/b]',
};

/**
 * Where the two lexers differ on purpose, with what each gives and why. The renderer shows the first two the same
 * either way.
 */
const differences: { text: string; marked: unknown[]; ours: unknown[]; why: string }[] = [
  {
    text: '<?php echo 1; ?>',
    marked: [['html', '<?php echo 1; ?>']],
    ours: [['p', '<?php echo 1; ?>']],
    why: 'processing instructions, declarations and CDATA are not HTML blocks: raw HTML shows as text, so it only changes whether markdown inside is read, and the model does not write them',
  },
  {
    text: 'ftp://files.example.com/a',
    marked: [['p', ['link', 'ftp://files.example.com/a', 'ftp://files.example.com/a']]],
    ours: [['p', 'ftp://files.example.com/a']],
    why: 'only http(s) and www. URLs are autolinked: safeUrl() refuses any other scheme, so such a link would show as text anyway',
  },
  {
    text: '*a '.repeat(maxDepth + 2) + 'x' + ' a*'.repeat(maxDepth + 2),
    marked: [['p', ...nestedEm(maxDepth + 2)]],
    ours: [['p', '*a *a ', ...nestedEm(maxDepth, ' a* a*')]],
    why: 'spans nest at most maxDepth deep: the innermost pair first, as CommonMark pairs them, and the markers around those show as text',
  },
  {
    text: `[x](https://example.com/${'a'.repeat(2100)})`,
    marked: [['p', ['link', `https://example.com/${'a'.repeat(2100)}`, 'x']]],
    ours: [
      [
        'p',
        '[x](',
        ['link', `https://example.com/${'a'.repeat(2100)}`, `https://example.com/${'a'.repeat(2100)}`],
        ')',
      ],
    ],
    why: 'a link destination and title are read over at most 2,048 characters, so that a bracket followed by a long text costs a bounded time; a longer URL is still an autolink',
  },
];

/** `depth` emphases nested around `x`, each with an `a` on either side, as the normal form writes them. */
function nestedEm(depth: number, after = ''): unknown[] {
  let inner: unknown[] = ['em', 'a x a'];
  for (let d = 1; d < depth; d++) inner = ['em', 'a ', inner, ' a'];
  return after ? [inner, after] : [inner];
}

describe('the markdown lexer', () => {
  for (const [name, text] of Object.entries({ ...replies, ...constructs })) {
    it(`reads ${name} as marked does`, () => {
      expect(ours(text)).to.deep.equal(marked(text));
    });
  }

  for (const { text, marked: theirs, ours: mine, why } of differences) {
    it(`differs from marked on purpose: ${why.split(':')[0]}`, () => {
      expect(marked(text), 'marked').to.deep.equal(theirs);
      expect(ours(text), why).to.deep.equal(mine);
    });
  }

  it('covers the text with its top-level tokens, in order, so that a streamed reply settles by their lengths', () => {
    for (const text of [...Object.values(replies), ...Object.values(constructs)]) {
      expect(
        lex(text)
          .map(t => t.raw)
          .join(''),
      ).to.equal(text);
    }
  });
});

/** How deep containers and spans nest in tokens. */
function depthOf(tokens: (Block | Inline)[]): { blocks: number; spans: number } {
  let blocks = 0;
  let spans = 0;
  for (const t of tokens) {
    if (t.type === 'blockquote' || t.type === 'list') {
      const inner = t.type === 'list' ? t.items.map(item => depthOf(item.tokens)) : [depthOf(t.tokens)];
      for (const d of inner) {
        blocks = Math.max(blocks, d.blocks + 1);
        spans = Math.max(spans, d.spans);
      }
    } else if (t.type === 'table') {
      for (const cell of [...t.header, ...t.rows.flat()]) spans = Math.max(spans, depthOf(cell.tokens).spans);
    } else if ('tokens' in t && t.tokens) {
      const d = depthOf(t.tokens);
      const span = ['strong', 'em', 'del', 'link'].includes(t.type) ? 1 : 0;
      spans = Math.max(spans, d.spans + span);
      blocks = Math.max(blocks, d.blocks);
    }
  }
  return { blocks, spans };
}

/** How many tokens there are, all told. */
function countOf(tokens: (Block | Inline)[]): number {
  let n = 0;
  for (const t of tokens) {
    n++;
    if (t.type === 'list') for (const item of t.items) n += 1 + countOf(item.tokens);
    else if (t.type === 'table') for (const cell of [...t.header, ...t.rows.flat()]) n += countOf(cell.tokens);
    else if ('tokens' in t && t.tokens) n += countOf(t.tokens);
  }
  return n;
}

describe('TeX in the markdown lexer', () => {
  /** The inline tokens of a one-paragraph text. */
  const inline = (text: string) => (lex(text)[0] as { tokens: Inline[] }).tokens;

  it('reads `$…$` and `$$…$$` as code, as written, without reading escapes or emphasis in it', () => {
    expect(inline('so $\\frac{a_1}{b_2}\\,c$ and $$x * y \\; z^*$$.')).to.deep.equal([
      { type: 'text', text: 'so ' },
      { type: 'codespan', text: '$\\frac{a_1}{b_2}\\,c$' },
      { type: 'text', text: ' and ' },
      { type: 'codespan', text: '$$x * y \\; z^*$$' },
      { type: 'text', text: '.' },
    ]);
  });

  it('reads display TeX over lines as written', () => {
    expect(inline('$$\n\\int_0^1 x\\,dx\n$$')).to.deep.equal([{ type: 'codespan', text: '$$\n\\int_0^1 x\\,dx\n$$' }]);
  });

  for (const text of [
    'It costs $5 and $10 with **tax**.',
    'From $5-$10, or US$5/US$10.',
    'A $ sign and another $.',
    'Open $a but never closed, and $b $ neither.',
    'An escaped \\$x$ is no TeX.',
  ]) {
    it(`reads ${JSON.stringify(text)} as marked does, with no TeX`, () => {
      expect(ours(text)).to.deep.equal(marked(text));
    });
  }

  it('finds the ends of many openers in time linear in the text, and drops no text', () => {
    const text = '$a $'.repeat(20_000) + '$$'.repeat(10_001);
    const tokens = inline(text);
    const shown = tokens.map(t => ('text' in t ? t.text : '')).join('');
    expect(shown).to.equal(text);
  });
});

describe('the markdown lexer on hostile text', () => {
  const inputs = { ...hostileInputs, ...lexerInputs };

  for (const [name, text] of Object.entries(inputs)) {
    // Its time is measured by `npm run bench` (lexing hostile text at once): a few milliseconds where marked's
    // quadratic paths took seconds.
    it(`lexes ${name} with bounded nesting and output, and drops no text`, () => {
      const tokens = lex(text);
      const { blocks, spans } = depthOf(tokens);
      expect(blocks, 'containers').to.be.at.most(maxDepth);
      expect(spans, 'spans').to.be.at.most(maxDepth);
      expect(countOf(tokens), 'tokens').to.be.at.most(2 * text.length + 10);
      expect(tokens.map(t => t.raw).join('')).to.equal(text);
    });
  }
});
