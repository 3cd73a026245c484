/**
 * @module
 * Untrusted markdown from the model, rendered as Lit templates as it streams: our lexer (`lexer.ts`) gives tokens,
 * `render.ts` turns them into templates (text bound as text, URLs through `safeUrl()` in `sanitize.ts`, images never
 * fetched, citation markers as footnote links), and this module decides what is lexed and rendered again.
 *
 * While a reply streams, only its unsettled tail is lexed again: a block settles once it ends a line and two more
 * blocks follow it, and a settled block is never rendered again. (Requiring a blank line after it, as streamdown
 * does, would stop settling for good at the first list that follows a paragraph directly, which replies do all
 * the time; the prefix fuzz test checks that the looser rule renders every prefix exactly as a full render of it,
 * closed as below.)
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
import { guard } from 'lit/directives/guard.js';
import { delimiterRow, fence as fenceLine, maxDepth, opensFence } from './lexer.js';
import type { Block } from './lexer.js';
import type { close } from './close.js';
import { Footnotes, citationIndexOf, citationMarker, lex, topBlock } from './render.js';
import type { Part, RenderContext } from './render.js';

export { maxDepth };

/** While streaming, hides a citation marker still being typed at the very end (`[`, `[1`, `[doc`). */
export const heal = (text: string) => text.replace(/\[(?:d(?:o(?:c\d{0,3})?)?|\d{1,3})?$/, '');

/** `close()`, once its chunk has come (see `loadCloser()`). */
let closer: typeof close | undefined;
/** Its chunk, asked for once (again after a load that failed). */
let closing: Promise<void> | undefined;

/**
 * Loads `close()`, which a streaming reply needs and a restored one does not: asked for when a reply's turn is first
 * drawn, while its message is being sent, it has come long before the reply's first words. Until it has, what is
 * open shows as written. Called at every draw of a streaming reply, it asks for the chunk only once.
 */
export const loadCloser = () =>
  (closing ??= import('./close.js').then(
    m => void (closer = m.close),
    () => void (closing = undefined),
  ));

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
      // A closing fence: the opening one's character, at least as many of them (a run that starts with the opening
      // one), and nothing else.
      if (fence?.[2]!.startsWith(fenceLine.exec(this.#fence)![2]!) && !fence[3]!.trim()) this.#fence = '';
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
   * The templates of the text. `final` renders the text as it stands, without healing or closing (see `heal()` and
   * `close()`), and with every block.
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
    const source = reopen + (final ? text.slice(from) : heal(text.slice(from)));
    let tokens = lex(source);
    const closed = final || !closer ? source : closer(source, tokens);
    if (closed !== source) tokens = lex(closed);
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

/** A whole text, rendered at once (a restored reply). */
export function renderMarkdown(text: string, labels: Omit<RenderContext, 'footnotes'>) {
  const view = new MarkdownView(labels);
  const parts = view.render(text, true);
  return { parts, footnotes: view.footnotes };
}
