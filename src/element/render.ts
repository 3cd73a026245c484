/**
 * @module
 * The model's markdown tokens (`lexer.ts`) as Lit templates: text is always bound as text, raw HTML shows as text,
 * every URL goes through `safeUrl()`, images become links and are never fetched, and citation markers like `[1]` or
 * `[doc1]` become footnote links numbered in order of first appearance. A block whose lexing or rendering throws all
 * the same shows as its text, and the rest renders. `markdown.ts` decides what to render when.
 */
import { html, nothing } from 'lit';
import type { TemplateResult } from 'lit';
import { lex as lexTokens } from './lexer.js';
import type { Block, Inline, ListItem } from './lexer.js';
import { decodeEntities, safeUrl } from './sanitize.js';
import type * as Highlighter from './highlight.js';

type Highlighter = typeof Highlighter;

export type Part = TemplateResult | string | typeof nothing | Part[];

/** Citation markers: `[1]` to `[999]` and `[doc1]` to `[doc999]`. */
export const citationMarker = /\[(\d{1,3}|doc\d{1,3})\]/g;

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

/** Code drawn highlighted, once the highlighter's chunk has come (see `block()`): what is drawn depends on it. */
export let highlight: ((text: string, language: string) => unknown) | undefined;
let highlighter: Promise<Highlighter | void> | undefined;

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
  /**
   * Told when the highlighter's chunk has come, with it, after a code block was drawn without it: it adds its
   * styles and draws the code again.
   */
  highlighted?: (chunk: Highlighter) => void;
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
      // Code with a language is drawn highlighted by a chunk of its own, loaded when some first is (or plain, if it
      // cannot load). A reply without any never loads it.
      const lang = /^[\w+#.-]{0,20}/.exec(token.lang ?? '')![0];
      if (lang && !highlight) {
        (highlighter ??= import('./highlight.js').then(
          chunk => ((highlight = (text, language) => chunk.highlight(html, text, language)), chunk),
          () => {},
        )).then(chunk => chunk && ctx.highlighted?.(chunk));
      }
      return html`<div class="code" part="code-block">
        <div class="code-bar">
          <button type="button" class="copy" part="copy-button" data-copy>${ctx.copyLabel}</button>
          <span class="sr-only" role="status"></span>
        </div>
        <pre tabindex="0" aria-label=${ctx.codeLabel(lang)}><code data-lang=${lang || nothing}>${lang && highlight ? highlight(token.text, lang) : token.text}</code></pre>
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
export function topBlock(token: Block, ctx: RenderContext): Part {
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
export function lex(markdown: string, split = true): Block[] {
  try {
    return lexTokens(markdown);
  } catch {
    if (!split) return [{ type: 'paragraph', raw: markdown, tokens: [{ type: 'text', text: markdown }] }];
    return markdown.split(/(?<=\n[ \t]*\n)/).flatMap(paragraph => lex(paragraph, false));
  }
}
