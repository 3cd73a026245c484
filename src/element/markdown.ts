/**
 * @module
 * Untrusted markdown from the model, rendered as Lit templates: marked's lexer gives tokens (never its HTML), and
 * this renderer turns them into templates. Text is always bound as text, raw HTML shows as text, every URL goes
 * through `safeUrl()`, images become links and are never fetched, and citation markers like `[1]` or `[doc1]`
 * become footnote links.
 *
 * While a reply streams, only its unsettled tail is lexed again: a block settles once it ends a line and two more
 * blocks follow it, and a settled block is never rendered again. (Requiring a blank line after it, as streamdown
 * does, would stop settling for good at the first list that follows a paragraph directly, which replies do all
 * the time; the prefix fuzz test checks that the looser rule renders every prefix exactly as a full render.)
 */
import { html, nothing } from 'lit';
import type { TemplateResult } from 'lit';
import { guard } from 'lit/directives/guard.js';
import { Lexer } from 'marked';
import type { Token, Tokens } from 'marked';

type Part = TemplateResult | string | typeof nothing;

/** Allows http(s) and mailto only, after decoding entities and dropping control characters and whitespace. */
export function safeUrl(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  // eslint-disable-next-line no-control-regex
  const cleaned = decodeEntities(url).replace(/[\u0000-\u0020\u007f-\u009f]/g, '');
  let parsed: URL;
  try {
    parsed = new URL(cleaned);
  } catch {
    return undefined;
  }
  return ['http:', 'https:', 'mailto:'].includes(parsed.protocol) ? parsed.href : undefined;
}

const named: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  copy: '©',
  reg: '®',
  trade: '™',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  ldquo: '“',
  rdquo: '”',
  laquo: '«',
  raquo: '»',
  middot: '·',
  bull: '•',
  deg: '°',
  plusmn: '±',
  times: '×',
  divide: '÷',
  euro: '€',
  pound: '£',
  yen: '¥',
  cent: '¢',
  sect: '§',
  para: '¶',
  larr: '←',
  rarr: '→',
  uarr: '↑',
  darr: '↓',
  harr: '↔',
  check: '✓',
  tab: '\t',
  newline: '\n',
  colon: ':',
  sol: '/',
  lpar: '(',
  rpar: ')',
  num: '#',
  excl: '!',
  quest: '?',
  equals: '=',
};

/** Decodes numeric character references and common named entities; anything else stays as written. */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,8});?/gi, (whole, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return code > 0 && code <= 0x10ffff && !(code >= 0xd800 && code <= 0xdfff)
        ? String.fromCodePoint(code)
        : '\ufffd';
    }
    return named[body.toLowerCase()] ?? whole;
  });
}

/** Citation markers: `[1]` to `[999]` and `[doc1]` to `[doc999]`. */
const citationMarker = /\[(\d{1,3}|doc\d{1,3})\]/g;

/** The citation a marker points at: `[3]` and `[doc3]` both mean the third citation (index 2). */
export const citationIndexOf = (marker: string) => Number(marker.replace(/^doc/, '')) - 1;

/** Numbers footnotes in order of first appearance. */
export class Footnotes {
  readonly #numbers: Map<number, number>;
  constructor(from?: Footnotes) {
    this.#numbers = new Map(from ? from.#numbers : undefined);
  }
  /** The footnote number of a citation index, given at first sight. */
  number(index: number): number {
    let n = this.#numbers.get(index);
    if (n === undefined) this.#numbers.set(index, (n = this.#numbers.size + 1));
    return n;
  }
  /** Citation indexes in footnote order. */
  order(): number[] {
    return [...this.#numbers.keys()];
  }
}

export interface RenderContext {
  footnotes: Footnotes;
  /** Label of the copy button of code blocks. */
  copyLabel: string;
  /** Accessible label of a footnote link, e.g. "Source 2". */
  sourceLabel: (n: number) => string;
}

/** A text node with its citation markers turned into footnote links. */
function textWithCitations(text: string, ctx: RenderContext): Part[] {
  const decoded = decodeEntities(text);
  if (!decoded.includes('[')) return [decoded];
  const parts: Part[] = [];
  let last = 0;
  for (const match of decoded.matchAll(citationMarker)) {
    const index = citationIndexOf(match[1]!);
    if (index < 0) continue;
    parts.push(decoded.slice(last, match.index));
    const n = ctx.footnotes.number(index);
    parts.push(html`<sup class="cite"><a href="#" data-cite=${index} aria-label=${ctx.sourceLabel(n)}>${n}</a></sup>`);
    last = match.index + match[0].length;
  }
  parts.push(decoded.slice(last));
  return parts;
}

function inline(tokens: Token[] | undefined, ctx: RenderContext, inLink = false): Part[] {
  return (tokens ?? []).map(token => inlineToken(token, ctx, inLink));
}

function inlineToken(token: Token, ctx: RenderContext, inLink: boolean): Part {
  switch (token.type) {
    case 'text': {
      const t = token as Tokens.Text;
      if (t.tokens?.length) return html`${inline(t.tokens, ctx, inLink)}`;
      return inLink ? decodeEntities(t.text) : html`${textWithCitations(t.text, ctx)}`;
    }
    case 'escape':
      return (token as Tokens.Escape).text;
    case 'strong':
      return html`<strong>${inline((token as Tokens.Strong).tokens, ctx, inLink)}</strong>`;
    case 'em':
      return html`<em>${inline((token as Tokens.Em).tokens, ctx, inLink)}</em>`;
    case 'del':
      return html`<del>${inline((token as Tokens.Del).tokens, ctx, inLink)}</del>`;
    case 'codespan':
      return html`<code>${decodeEntities((token as Tokens.Codespan).text)}</code>`;
    case 'br':
      return html`<br />`;
    case 'link': {
      const link = token as Tokens.Link;
      const href = safeUrl(link.href);
      const content = inline(link.tokens, ctx, true);
      return href && !inLink
        ? html`<a href=${href} target="_blank" rel="noopener noreferrer nofollow">${content}</a>`
        : html`${content}`;
    }
    case 'image': {
      // Never fetched: a loaded image can leak data without a click. Shown as a link to it instead.
      const image = token as Tokens.Image;
      const href = safeUrl(image.href);
      const label = decodeEntities(image.text) || image.href;
      return href && !inLink
        ? html`<a class="image" href=${href} target="_blank" rel="noopener noreferrer nofollow">${label}</a>`
        : label;
    }
    case 'html':
      return (token as Tokens.HTML).raw;
    default:
      return 'raw' in token ? String(token.raw) : nothing;
  }
}

const headings = [
  (c: Part[]) => html`<h3>${c}</h3>`,
  (c: Part[]) => html`<h4>${c}</h4>`,
  (c: Part[]) => html`<h5>${c}</h5>`,
  (c: Part[]) => html`<h6>${c}</h6>`,
];

const alignClass = (align: string | null) => (align ? `align-${align}` : '');

function block(token: Token, ctx: RenderContext): Part {
  switch (token.type) {
    case 'space':
    case 'def':
      return nothing;
    case 'paragraph':
      return html`<p>${inline((token as Tokens.Paragraph).tokens, ctx)}</p>`;
    case 'heading': {
      const heading = token as Tokens.Heading;
      return headings[Math.min(heading.depth, 4) - 1]!(inline(heading.tokens, ctx));
    }
    case 'code': {
      const code = token as Tokens.Code;
      const lang = (code.lang ?? '').match(/^[\w+#.-]{1,20}/)?.[0] ?? '';
      return html`<div class="code" part="code-block">
        <pre><code data-lang=${lang || nothing}>${code.text}</code></pre>
        <button type="button" class="copy" part="copy-button" data-copy>${ctx.copyLabel}</button>
      </div>`;
    }
    case 'blockquote':
      return html`<blockquote>${blocks((token as Tokens.Blockquote).tokens, ctx)}</blockquote>`;
    case 'list': {
      const list = token as Tokens.List;
      const items = list.items.map(
        item =>
          html`<li>
            ${item.task ? html`<input type="checkbox" disabled .checked=${Boolean(item.checked)} />` : nothing}
            ${blocks(item.tokens, ctx, !list.loose)}
          </li>`,
      );
      return list.ordered
        ? html`<ol start=${list.start === 1 || list.start === '' ? nothing : Number(list.start)}>
            ${items}
          </ol>`
        : html`<ul>
            ${items}
          </ul>`;
    }
    case 'table': {
      const table = token as Tokens.Table;
      return html`<div class="table">
        <table>
          <thead>
            <tr>
              ${table.header.map(cell => html`<th class=${alignClass(cell.align)}>${inline(cell.tokens, ctx)}</th>`)}
            </tr>
          </thead>
          <tbody>
            ${table.rows.map(
              row =>
                html`<tr>
                  ${row.map(cell => html`<td class=${alignClass(cell.align)}>${inline(cell.tokens, ctx)}</td>`)}
                </tr>`,
            )}
          </tbody>
        </table>
      </div>`;
    }
    case 'hr':
      return html`<hr />`;
    case 'html':
      return html`<p>${(token as Tokens.HTML).raw.trim()}</p>`;
    case 'text': {
      const text = token as Tokens.Text;
      return text.tokens ? html`${inline(text.tokens, ctx)}` : html`${textWithCitations(text.text, ctx)}`;
    }
    default:
      return 'raw' in token ? html`<p>${String(token.raw)}</p>` : nothing;
  }
}

function blocks(tokens: Token[] | undefined, ctx: RenderContext, tight = false): Part[] {
  return (tokens ?? []).map(token =>
    tight && token.type === 'text' ? inlineToken(token, ctx, false) : block(token, ctx),
  );
}

const lex = (text: string) => Lexer.lex(text, { gfm: true, breaks: false });

/** While streaming, hides a citation marker still being typed at the very end (`[`, `[1`, `[doc`). */
export const heal = (text: string) => text.replace(/\[(?:d(?:o(?:c\d{0,3})?)?|\d{1,3})?$/, '');

const hasReferenceDefinition = /^ {0,3}\[[^\]\n]+\]:/m;

/**
 * Renders one reply's markdown. Feed it the text so far on every update; it lexes only the unsettled tail, and
 * resets when the text is not a continuation of what it saw.
 */
export class MarkdownView {
  #text = '';
  #settledLength = 0;
  #settled: Part[] = [];
  #settledFootnotes = new Footnotes();
  #generation = 0;
  readonly #labels: Omit<RenderContext, 'footnotes'>;

  constructor(labels: Omit<RenderContext, 'footnotes'>) {
    this.#labels = labels;
  }

  /** The footnotes of the last render: citation indexes in the order their markers first appear. */
  footnotes = new Footnotes();

  /** The templates of the text. `final` renders the text as it stands, without healing and with every block. */
  render(text: string, final: boolean): Part[] {
    if (!text.startsWith(this.#text) || (final && hasReferenceDefinition.test(text))) this.#reset();
    this.#text = text;
    const tail = text.slice(this.#settledLength);
    const tokens = lex(final ? tail : heal(tail));
    const remaining = final ? tokens : tokens.slice(this.#settle(tokens));
    const ctx: RenderContext = { ...this.#labels, footnotes: new Footnotes(this.#settledFootnotes) };
    const parts = [...this.#settled, ...remaining.map(token => block(token, ctx))];
    this.footnotes = ctx.footnotes;
    return parts;
  }

  /** Moves the blocks that can no longer change into the settled list, rendered once, for good; returns how many. */
  #settle(tokens: Token[]): number {
    const starts: number[] = [];
    tokens.forEach((token, i) => token.type !== 'space' && starts.push(i));
    let count = 0;
    for (let b = 0; b + 2 < starts.length; b++) {
      const end = starts[b + 1]!;
      const raw = tokens
        .slice(starts[b], end)
        .map(t => t.raw)
        .join('');
      // A block that runs into the next one without a line break is still being written.
      if (!raw.endsWith('\n')) break;
      count = end;
    }
    if (count === 0) return 0;
    const ctx: RenderContext = { ...this.#labels, footnotes: this.#settledFootnotes };
    for (const token of tokens.slice(0, count)) {
      const key = [this.#generation, this.#settled.length];
      const rendered = block(token, ctx);
      this.#settled.push(guard(key, () => rendered) as unknown as Part);
      this.#settledLength += token.raw.length;
    }
    return count;
  }

  #reset() {
    this.#text = '';
    this.#settledLength = 0;
    this.#settled = [];
    this.#settledFootnotes = new Footnotes();
    this.#generation++;
  }
}

/** A whole text, rendered at once (a restored reply). */
export function renderMarkdown(text: string, labels: Omit<RenderContext, 'footnotes'>) {
  const view = new MarkdownView(labels);
  const parts = view.render(text, true);
  return { parts, footnotes: view.footnotes };
}
