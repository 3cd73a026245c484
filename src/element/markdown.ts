/**
 * @module
 * Untrusted markdown from the model, rendered as Lit templates: our lexer (`lexer.ts`) gives tokens, and this renderer
 * turns them into templates. Text is always bound as text, raw HTML shows as text, every URL goes through
 * `safeUrl()`, images become links and are never fetched, and citation markers like `[1]` or `[doc1]` become footnote
 * links.
 *
 * While a reply streams, only its unsettled tail is lexed again: a block settles once it ends a line and two more
 * blocks follow it, and a settled block is never rendered again. (Requiring a blank line after it, as streamdown
 * does, would stop settling for good at the first list that follows a paragraph directly, which replies do all
 * the time; the prefix fuzz test checks that the looser rule renders every prefix exactly as a full render.)
 *
 * The model's output can be hostile, so rendering it never throws and its cost is bounded:
 * - Nesting: block quotes and lists nest at most `maxDepth` (16) deep, and so do emphasis, strikethrough and links
 *   within a block; markers nested deeper show as text (the lexer sees to it).
 * - Work: the lexer takes time linear in its input, and the text is lexed in chunks of a few KB (see `Chunk`), so
 *   that a render lexes at most about 6 KB more than the text that came since the last one, however long one block
 *   grows; and a long text rendered at once can be rendered a piece of whole chunks at a time (see `render()`).
 * - Failure: a block whose lexing or rendering throws all the same shows as its text, and the rest renders.
 * None of this drops any of the model's text, and all of it depends on the text alone, so a streamed reply still
 * ends exactly as the same text rendered at once.
 */
import { html, nothing } from 'lit';
import type { TemplateResult } from 'lit';
import { guard } from 'lit/directives/guard.js';
import { delimiterRow, fence as fenceLine, lex as lexTokens, maxDepth, opensFence } from './lexer.js';
import type { Block, Inline, ListItem } from './lexer.js';

export { maxDepth };

type Part = TemplateResult | string | typeof nothing | Part[];

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

/** Named entities: each name, then the character it stands for. */
const entities =
  'amp&lt<gt>quot"apos\'nbsp\u00a0copy©reg®trade™hellip…mdash—ndash–lsquo‘rsquo’ldquo“rdquo”laquo«raquo»' +
  'middot·bull•deg°plusmn±times×divide÷euro€pound£yen¥cent¢sect§para¶larr←rarr→uarr↑darr↓harr↔check✓' +
  'tab\tnewline\ncolon:sol/lpar(rpar)num#excl!quest?equals=';
const named: Record<string, string> = Object.fromEntries(
  [...entities.matchAll(/([a-z]+)([^a-z])/g)].map(([, name, char]) => [name, char]),
);

/** Decodes numeric character references and common named entities; anything else stays as written. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,8});?/gi, (whole, body: string) => {
    if (body[0] === '#') {
      // `0x…` reads as hexadecimal, `0…` as decimal.
      const code = Number('0' + body.slice(1));
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

/**
 * The level of a reply's `#` headings and of its Sources heading: one below the panel's title, an `<h2>`. The one
 * place it is decided, unless a render context says otherwise.
 */
export const defaultHeadingLevel = 3;

export interface RenderContext {
  footnotes: Footnotes;
  /** The level of `#` headings (`##` one below, and so on); `defaultHeadingLevel` unless given. */
  headingLevel?: number;
  /** Label of the copy button of code blocks. */
  copyLabel: string;
  /** Accessible name of a code block, from its language ('' when unknown), e.g. "ts code". */
  codeLabel: (language: string) => string;
  /** Accessible label of a footnote link, e.g. "Source 2". */
  sourceLabel: (n: number) => string;
  /**
   * How many sources the reply has, once known: a marker past them stays plain text, never a footnote that points
   * at nothing. Unknown (while a reply streams before its sources came), every marker is a footnote.
   */
  citationCount?: number;
}

/** A text node with its citation markers turned into footnote links. */
function textWithCitations(text: string, ctx: RenderContext): Part[] {
  const decoded = decodeEntities(text);
  const parts: Part[] = [];
  let last = 0;
  for (const match of decoded.matchAll(citationMarker)) {
    const index = citationIndexOf(match[1]!);
    if (index < 0 || index >= (ctx.citationCount ?? Infinity)) continue;
    parts.push(decoded.slice(last, match.index));
    const n = ctx.footnotes.number(index);
    parts.push(html`<sup class="cite"><a href="#" data-cite=${index} aria-label=${ctx.sourceLabel(n)}>${n}</a></sup>`);
    last = match.index + match[0].length;
  }
  parts.push(decoded.slice(last));
  return parts;
}

/**
 * Inline tokens as few parts as can be: neighbouring texts are one string, and one part is not in a list. Lit marks
 * each part in a list with two comments, which a reply of ordinary length would have by the hundred.
 */
function inline(tokens: Inline[], ctx: RenderContext, inLink = false): Part {
  const parts: Part[] = [];
  for (const token of tokens) {
    const made = inlineToken(token, ctx, inLink);
    for (const part of Array.isArray(made) ? made : [made]) {
      const last = parts.length - 1;
      if (typeof part === 'string' && typeof parts[last] === 'string') parts[last] += part;
      else parts.push(part as Part);
    }
  }
  return parts.length === 1 ? parts[0]! : parts;
}

function inlineToken(token: Inline, ctx: RenderContext, inLink = false): Part {
  const inner = (tokens: Inline[], link = inLink) => inline(tokens, ctx, link);
  switch (token.type) {
    case 'text':
      return inLink ? decodeEntities(token.text) : textWithCitations(token.text, ctx);
    case 'escape':
      return token.text;
    case 'strong':
      return html`<strong>${inner(token.tokens)}</strong>`;
    case 'em':
      return html`<em>${inner(token.tokens)}</em>`;
    case 'del':
      return html`<del>${inner(token.tokens)}</del>`;
    case 'codespan':
      return html`<code>${decodeEntities(token.text)}</code>`;
    case 'br':
      return html`<br />`;
    case 'link': {
      const href = safeUrl(token.href);
      const content = inner(token.tokens, true);
      return href && !inLink
        ? html`<a href=${href} target="_blank" rel="noopener noreferrer nofollow">${content}</a>`
        : content;
    }
    case 'image': {
      // Never fetched: a loaded image can leak data without a click. Shown as a link to it instead.
      const href = safeUrl(token.href);
      const label = decodeEntities(token.text) || token.href;
      return href && !inLink
        ? html`<a class="image" href=${href} target="_blank" rel="noopener noreferrer nofollow">${label}</a>`
        : label;
    }
    default:
      return token.raw;
  }
}

const headings = [
  (c: unknown) => html`<h1>${c}</h1>`,
  (c: unknown) => html`<h2>${c}</h2>`,
  (c: unknown) => html`<h3>${c}</h3>`,
  (c: unknown) => html`<h4>${c}</h4>`,
  (c: unknown) => html`<h5>${c}</h5>`,
  (c: unknown) => html`<h6>${c}</h6>`,
];

/** A heading of `level`, kept within h1 to h6. */
export const heading = (level: number, content: unknown) => headings[Math.min(Math.max(level, 1), 6) - 1]!(content);

const alignClass = (align: string | null) => (align ? `align-${align}` : '');

function block(token: Block, ctx: RenderContext): Part {
  switch (token.type) {
    case 'space':
    case 'def':
      return nothing;
    case 'paragraph':
      return html`<p>${inline(token.tokens, ctx)}</p>`;
    case 'heading':
      return heading((ctx.headingLevel ?? defaultHeadingLevel) + token.depth - 1, inline(token.tokens, ctx));
    case 'code': {
      // The copy button has a bar of its own above the code, so it never covers any; its status tells screen
      // readers when it copied (see `copyCode()`). The code may scroll sideways, so it takes the focus, to be
      // scrolled by keyboard too, and has a name.
      const lang = /^[\w+#.-]{0,20}/.exec(token.lang ?? '')![0];
      return html`<div class="code" part="code-block">
        <div class="code-bar">
          <button type="button" class="copy" part="copy-button" data-copy>${ctx.copyLabel}</button>
          <span class="sr-only" role="status"></span>
        </div>
        <pre tabindex="0" aria-label=${ctx.codeLabel(lang)}><code data-lang=${lang || nothing}>${token.text}</code></pre>
      </div>`;
    }
    case 'blockquote':
      return html`<blockquote>${blocks(token.tokens, ctx)}</blockquote>`;
    case 'list': {
      const items = token.items.map(item => html`<li>${listItem(item, ctx)}</li>`);
      return token.ordered
        ? html`<ol start=${token.start === 1 ? nothing : token.start}>
            ${items}
          </ol>`
        : html`<ul>
            ${items}
          </ul>`;
    }
    case 'table':
      return html`<div class="table">
        <table>
          <thead>
            <tr>
              ${token.header.map(cell => html`<th class=${alignClass(cell.align)}>${inline(cell.tokens, ctx)}</th>`)}
            </tr>
          </thead>
          <tbody>
            ${token.rows.map(
              row =>
                html`<tr>
                  ${row.map(cell => html`<td class=${alignClass(cell.align)}>${inline(cell.tokens, ctx)}</td>`)}
                </tr>`,
            )}
          </tbody>
        </table>
      </div>`;
    case 'hr':
      return html`<hr />`;
    case 'html':
      return html`<p>${token.raw.trim()}</p>`;
    case 'text':
      return inline(token.tokens, ctx);
  }
}

/**
 * A list item's blocks. A task item's box (`[x]` or `[ ]`, which the lexer takes out of its text) is drawn as a
 * disabled checkbox before its first paragraph, labelled by that paragraph's text.
 */
function listItem(item: ListItem, ctx: RenderContext): Part[] {
  const [first, ...rest] = item.tokens;
  if (item.checked === undefined || (first?.type !== 'text' && first?.type !== 'paragraph')) {
    return blocks(item.tokens, ctx);
  }
  const label = html`<label><input type="checkbox" disabled ?checked=${item.checked} /> ${inline(first.tokens, ctx)}</label>`;
  return [first.type === 'paragraph' ? html`<p>${label}</p>` : label, ...blocks(rest, ctx)];
}

/** Blocks; the paragraphs of a tight list's items are text tokens, drawn without a `<p>`. */
function blocks(tokens: Block[], ctx: RenderContext): Part[] {
  return tokens.map(token => block(token, ctx));
}

/** A top-level block; one whose rendering fails shows as its text, and the rest still renders. */
function topBlock(token: Block, ctx: RenderContext): Part {
  try {
    return block(token, ctx);
  } catch {
    return html`<p>${token.raw.trim()}</p>`;
  }
}

/**
 * Block tokens with their inline tokens. If lexing throws anyway, each paragraph (text up to a blank line) is lexed on
 * its own, and one that still throws shows as its text.
 */
function lex(markdown: string, split = true): Block[] {
  try {
    return lexTokens(markdown);
  } catch {
    if (!split) return [{ type: 'paragraph', raw: markdown, tokens: [{ type: 'text', text: markdown }] }];
    return markdown.split(/(?<=\n[ \t]*\n)/).flatMap(paragraph => lex(paragraph, false));
  }
}

/** While streaming, hides a citation marker still being typed at the very end (`[`, `[1`, `[doc`). */
export const heal = (text: string) => text.replace(/\[(?:d(?:o(?:c\d{0,3})?)?|\d{1,3})?$/, '');

const hasReferenceDefinition = /^ {0,3}\[[^\]\n]+\]:/m;

/** How far a chunk of the text grows before it is cut (see `Chunk.end()`). */
const chunkSize = 2_048;

/** A line that can start a chunk at a break: not indented, and not a list item, block quote or table row. */
const breakStart = /^[^\s>|*+\-\d]/;

/**
 * A piece of the text that is lexed as a document of its own, so that the unsettled tail a render lexes again is at
 * most a few chunk sizes long, however long one block grows: lexing is linear, but lexing a growing block whole on
 * every render would make streaming it quadratic. A chunk ends at its first
 * - break at least `chunkSize` in: a line after a blank line, outside fenced code, that starts a block nothing
 *   before it can continue (see `breakStart`), so that the cut changes nothing;
 * - unindented line at least twice `chunkSize` in, which may split a list, a quote or a paragraph in two; fenced
 *   code or a table cut there goes on in the next chunk, which opens it again;
 * - character three times `chunkSize` in.
 * Where it ends depends only on the text before and the first character after, so it is the same whether the text
 * streams in or comes at once. Even a break changes two rare things: a link reference definition applies in its own
 * chunk only, and raw HTML that runs over blank lines (a comment, a `<pre>`) is cut as well.
 */
class Chunk {
  /** What to lex before the chunk's text: the opening line of the fenced code, or the head of the table, it is in. */
  readonly reopen: string;
  /** Reading: the first line not read yet, the line before it and whether it is blank, and the code or table open. */
  #at: number;
  #previous = '';
  #blank = false;
  #fence: string;
  #table: string;

  constructor(
    /** Where the chunk starts in the text. */
    readonly start: number,
    /** How many settled parts come before it, and the footnotes they numbered. */
    readonly parts: number,
    readonly footnotes: Footnotes,
    fence = '',
    table = '',
  ) {
    this.#at = start;
    this.#fence = fence;
    this.#table = table;
    this.reopen = fence || table ? `${fence || table}\n` : '';
  }

  /** Where the chunk ends, or undefined while the text so far cannot tell. Reads each complete line once. */
  end(text: string): number | undefined {
    const { start } = this;
    const limit = start + 3 * chunkSize;
    while (this.#at < text.length) {
      const at = this.#at;
      const first = text.charAt(at);
      if (at >= start + chunkSize && this.#blank && !this.#fence && breakStart.test(first)) return at;
      if (at >= start + 2 * chunkSize && !/\s/.test(first)) return at;
      const newline = text.indexOf('\n', at);
      if (newline === -1 || newline >= limit) {
        if (text.length < limit) return undefined;
        // Not between the two halves of a surrogate pair.
        return limit - (/[\ud800-\udbff]/.test(text.charAt(limit - 1)) ? 1 : 0);
      }
      this.#read(text.slice(at, newline));
      this.#at = newline + 1;
    }
    return undefined;
  }

  /** The chunk after this one, which starts where `end()` said. */
  next(end: number, parts: number, footnotes: Footnotes): Chunk {
    return new Chunk(end, parts, footnotes, this.#fence, this.#table);
  }

  /** Follows fenced code blocks and tables, roughly as the lexer sees them, from one complete line to the next. */
  #read(line: string) {
    let fence = fenceLine.exec(line);
    if (this.#fence) {
      // A closing fence: the opening one's character, at least as many of them, and nothing else.
      const opener = fenceLine.exec(this.#fence)![2]!;
      if (fence && fence[2]![0] === opener[0] && fence[2]!.length >= opener.length && !fence[3]!.trim()) {
        this.#fence = '';
      }
    } else if ((fence = opensFence(line))) {
      this.#fence = fence[1]! + fence[2]! + (/^\s*(\S{0,40})/.exec(fence[3]!)?.[1] ?? '');
      this.#table = '';
    } else if (this.#table) {
      if (!line.includes('|')) this.#table = '';
    } else if (line.includes('|') && delimiterRow.test(line) && this.#previous.includes('|') && !this.#blank) {
      this.#table = `${this.#previous}\n${line}`;
    }
    this.#blank = !line.trim();
    this.#previous = line.length < 512 ? line : '';
  }
}

/**
 * Renders one reply's markdown. Feed it the text so far on every update; it lexes only the unsettled tail of the
 * last chunk, and resets when the text is not a continuation of what it saw.
 */
export class MarkdownView {
  // What `#reset()` sets.
  #text!: string;
  #settledLength!: number;
  #settled!: Part[];
  #settledFootnotes!: Footnotes;
  #chunk!: Chunk;
  #final = false;
  #parts: Part[] = [];
  #serial = 0;
  #labels: Omit<RenderContext, 'footnotes'>;

  constructor(labels: Omit<RenderContext, 'footnotes'>) {
    this.#labels = labels;
    this.#reset();
  }

  /**
   * Says how many sources the reply has. When that changes what a marker of the text so far is (a footnote or text),
   * the next render starts over, and this returns true.
   */
  setCitationCount(count: number | undefined): boolean {
    const before = this.#labels.citationCount;
    if (count === before) return false;
    this.#labels = { ...this.#labels, citationCount: count };
    const changed = [...this.#text.matchAll(citationMarker)].some(
      ([, marker]) =>
        citationIndexOf(marker!) < (before ?? Infinity) !== citationIndexOf(marker!) < (count ?? Infinity),
    );
    if (changed) this.#reset();
    return changed;
  }

  /** Whether the last render left text to render (see `render()`). */
  more = false;

  /** The length of the text of the last render. */
  get length() {
    return this.#text.length;
  }

  /** The footnotes of the last render: citation indexes in the order their markers first appear. */
  footnotes = new Footnotes();

  /**
   * The templates of the text. `final` renders the text as it stands, without healing and with every block.
   * `piece`: how much more of the text to render at most, in characters, and at least one chunk; when that leaves
   * some, the templates are those of the text rendered so far, `more` is true, and the next render of the same text
   * renders the next piece. A long reply drawn at once is drawn this way, a piece per task, each of bounded cost.
   */
  render(text: string, final: boolean, piece = Infinity): Part[] {
    // A carriage return is a line break, and the lexer reads only line feeds: token lengths add up to the text's.
    text = text.replace(/\r\n?/g, '\n');
    // The element renders a finished reply again whenever it updates for another reason.
    if (text === this.#text && final === this.#final && !this.more) return this.#parts;
    if (!text.startsWith(this.#text)) this.#reset();
    this.#text = text;
    this.#final = final;
    const start = this.#settledLength;
    // The chunks the text has gone past are settled whole.
    for (let end = this.#chunk.end(text); ; end = this.#chunk.end(text)) {
      if ((this.more = this.#settledLength > start && (end ?? text.length) - start > piece))
        return this.#settled.slice();
      if (end === undefined) break;
      this.#settleChunk(text.slice(0, end));
      this.#chunk = this.#chunk.next(end, this.#settled.length, new Footnotes(this.#settledFootnotes));
    }
    const chunk = this.#chunk;
    // A link reference definition can change blocks before it, so a chunk with one is lexed whole at the end.
    const whole = final && this.#settledLength > chunk.start && hasReferenceDefinition.test(text.slice(chunk.start));
    const from = whole ? chunk.start : this.#settledLength;
    const reopen = this.#reopen(from);
    const tokens = lex(reopen + (final ? text.slice(from) : heal(text.slice(from))));
    const remaining = final ? tokens : tokens.slice(this.#settle(tokens, reopen.length));
    const ctx: RenderContext = {
      ...this.#labels,
      footnotes: new Footnotes(whole ? chunk.footnotes : this.#settledFootnotes),
    };
    const parts = [...this.#settled.slice(0, whole ? chunk.parts : undefined), ...remaining.map(t => topBlock(t, ctx))];
    this.footnotes = ctx.footnotes;
    return (this.#parts = parts);
  }

  /** What to lex before the text from `from`: what the current chunk opens again, if it starts there. */
  #reopen(from: number): string {
    return from === this.#chunk.start ? this.#chunk.reopen : '';
  }

  /** Settles the rest of the current chunk, which `text` ends. */
  #settleChunk(text: string) {
    const chunk = this.#chunk;
    if (this.#settledLength > chunk.start && hasReferenceDefinition.test(text.slice(chunk.start))) {
      // A link reference definition can change blocks before it: the chunk is lexed again, whole.
      this.#settled.length = chunk.parts;
      this.#settledFootnotes = new Footnotes(chunk.footnotes);
      this.#settledLength = chunk.start;
    }
    this.#keep(lex(this.#reopen(this.#settledLength) + text.slice(this.#settledLength)));
    this.#settledLength = text.length;
  }

  /**
   * Settles the blocks that can no longer change: each ends a line and has two more blocks after it. Returns how
   * many tokens it settled; `reopened` is the length of what was lexed before the text (see `Chunk.reopen`).
   */
  #settle(tokens: Block[], reopened: number): number {
    const starts: number[] = [];
    tokens.forEach((token, i) => token.type === 'space' || starts.push(i));
    let count = 0;
    for (let b = 0; b + 2 < starts.length; b++) {
      const end = starts[b + 1]!;
      // A block that runs into the next one without a line break is still being written.
      if (!tokens[end - 1]!.raw.endsWith('\n')) break;
      count = end;
    }
    const settled = tokens.slice(0, count);
    this.#keep(settled);
    if (count) this.#settledLength += settled.reduce((length, token) => length + token.raw.length, 0) - reopened;
    return count;
  }

  /**
   * Renders blocks once, for good, at the end of the settled list. Lit renders each again only when its key changes:
   * the view and a number it never gives twice, since the element can render another reply's view in the same place.
   */
  #keep(tokens: Block[]) {
    const ctx: RenderContext = { ...this.#labels, footnotes: this.#settledFootnotes };
    for (const token of tokens) {
      const rendered = topBlock(token, ctx);
      this.#settled.push(guard([this, this.#serial++], () => rendered) as unknown as Part);
    }
  }

  #reset() {
    this.#text = '';
    this.#settledLength = 0;
    this.#settled = [];
    this.#settledFootnotes = new Footnotes();
    this.#chunk = new Chunk(0, 0, new Footnotes());
  }
}

/** The buttons saying "Copied", with the label each had before and the timer that gives it back. */
const copiedButtons = new WeakMap<Element, { label: string; timer: ReturnType<typeof setTimeout> }>();

/**
 * Copies the code of the code block whose copy button is `button`, then says so for `ms`: the button reads
 * `copied`, and so does the block's status, which screen readers read out. Only the data of the button's text node
 * changes, so Lit goes on rendering the button as before. Rejects when the clipboard refuses.
 */
export async function copyCode(button: Element, copied: string, ms = 1500) {
  const block = button.closest('.code');
  const { clipboard } = navigator;
  if (!block || !clipboard) return;
  await clipboard.writeText(block.querySelector('code')?.textContent ?? '');
  const text = [...button.childNodes].find((node): node is Text => node.nodeType === 3 /* a text node */);
  const status = block.querySelector('[role="status"]');
  const shown = copiedButtons.get(button);
  clearTimeout(shown?.timer);
  const label = shown?.label ?? text?.data ?? '';
  const show = (buttonText: string, statusText: string) => {
    if (text) text.data = buttonText;
    if (status) status.textContent = statusText;
  };
  show(copied, copied);
  const timer = setTimeout(() => {
    copiedButtons.delete(button);
    show(label, '');
  }, ms);
  copiedButtons.set(button, { label, timer });
}

/** A whole text, rendered at once (a restored reply). */
export function renderMarkdown(text: string, labels: Omit<RenderContext, 'footnotes'>) {
  const view = new MarkdownView(labels);
  const parts = view.render(text, true);
  return { parts, footnotes: view.footnotes };
}
