/**
 * @module
 * A GitHub Flavored Markdown lexer for the model's replies: block tokens with their inline tokens, in the shapes the
 * renderer (`markdown.ts`) reads. It never produces HTML, and it takes time linear in its input, however hostile:
 * - Block quotes and lists nest at most `maxDepth` deep, and so do emphasis, strikethrough and links; markers nested
 *   deeper are text. Each level of nesting reads the lines it holds once, so lexing costs the text's length times at
 *   most `maxDepth`.
 * - Inline text is read once from left to right, and what a link holds once more when it closes (links nest at most
 *   `maxDepth` deep too). A code span finds its closing backtick run from an index of the runs, and TeX its closing
 *   `$` or `$$` from the same index; emphasis pairs its
 *   delimiter runs on a stack, and a closer that found no opener of its kind never looks below that point again
 *   (CommonMark's algorithm); a link's destination and title are read over a bounded number of characters, an HTML
 *   tag no further than the next `<` or `>`, and a bare URL no further than the next space or `<`.
 * Lines are split at `\n` alone: the renderer turns carriage returns into line feeds first.
 */

/** How deep block quotes and lists may nest, and, inside a block, emphasis, strikethrough and links. */
export const maxDepth = 16;

/**
 * Inline tokens carry what the renderer reads of them; only raw HTML keeps its text as written (`raw`), since that is
 * what is shown.
 */
export interface Text {
  type: 'text';
  text: string;
}
export interface Escape {
  type: 'escape';
  text: string;
}
export interface Span {
  type: 'strong' | 'em' | 'del';
  tokens: Inline[];
}
export interface Codespan {
  type: 'codespan';
  text: string;
}
export interface Br {
  type: 'br';
}
/** Raw HTML, inline or a block; the renderer shows it as text. */
export interface Html {
  type: 'html';
  raw: string;
}
export interface Link {
  type: 'link';
  href: string;
  tokens: Inline[];
}
export interface Image {
  type: 'image';
  href: string;
  /** The alternative text as written. */
  text: string;
}
export type Inline = Text | Escape | Span | Codespan | Br | Html | Link | Image;

/** Block tokens have their text as written (`raw`): the top-level ones cover the text, in order. */
export interface Space {
  type: 'space';
  raw: string;
}
export interface Paragraph {
  type: 'paragraph';
  raw: string;
  tokens: Inline[];
}
export interface Heading {
  type: 'heading';
  raw: string;
  depth: number;
  tokens: Inline[];
}
export interface Code {
  type: 'code';
  raw: string;
  /** The info string of fenced code, trimmed; undefined for indented code. */
  lang?: string;
  text: string;
}
export interface Blockquote {
  type: 'blockquote';
  raw: string;
  tokens: Block[];
}
export interface ListItem {
  /** Whether its task box, `[x]` or `[ ]`, which is not in its tokens, is checked; undefined when it has none. */
  checked?: boolean;
  tokens: Block[];
}
export interface List {
  type: 'list';
  raw: string;
  ordered: boolean;
  /** The number of an ordered list's first item; '' for a bullet list. */
  start: number | '';
  /** Whether blank lines separate its items or their blocks: its paragraphs are then paragraphs, else text. */
  loose: boolean;
  items: ListItem[];
}
export type Align = 'left' | 'right' | 'center' | null;
export interface Cell {
  tokens: Inline[];
  align: Align;
}
/** A table: each cell has its column's alignment. */
export interface Table {
  type: 'table';
  raw: string;
  header: Cell[];
  rows: Cell[][];
}
export interface Hr {
  type: 'hr';
  raw: string;
}
/** A link reference definition, `[label]: destination "title"`: the links that use it have its destination. */
export interface Def {
  type: 'def';
  raw: string;
}
/** A list item's paragraph, when its list is tight. */
export interface TextBlock {
  type: 'text';
  raw: string;
  tokens: Inline[];
}
export type Block = Space | Paragraph | Heading | Code | Blockquote | List | Table | Hr | Html | Def | TextBlock;
export type Token = Block | Inline;

/** How many characters a link's destination and title may take. */
const maxTarget = 2_048;

const isBlank = (line: string) => /^[ \t]*$/.test(line);
export const fence = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const atx = /^ {0,3}(#{1,6})(?=[ \t]|$)/;
const hr = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const setext = /^ {0,3}(=+|-+)[ \t]*$/;
const quote = /^ {0,3}>[ \t]?/;
const item = /^( {0,3})([-*+]|(\d{1,9})[.)])(?:([ \t]+)(.*))?$/;
const task = /^\[([ xX])\][ \t]+(?=\S)/;
export const delimiterRow = /^ {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
const def =
  /^ {0,3}\[((?:[^[\]\\]|\\.){1,999})\]:[ \t]*(?:<([^<>]*)>|(\S+))(?:[ \t]+(?:"[^"]*"|'[^']*'|\([^()]*\)))?[ \t]*$/;
/**
 * The start of an HTML block: the kind is the group that matched, and tells where it ends (see `blocks()`). A line
 * that is one tag alone starts a block too, but does not break a paragraph.
 */
const htmlStart =
  /^ {0,3}(?:<(script|pre|style|textarea)(?=[\s>]|$)|(<!--)|<\/?(?:address|article|aside|blockquote|details|dialog|div|dl|dt|dd|fieldset|figure|footer|form|h[1-6]|header|hr|iframe|li|main|nav|ol|p|section|summary|table|tbody|td|th|thead|tr|ul)(?=[\s>]|\/>|$))/i;
/** An HTML tag: what is inside it is shown as written, never read as markdown. */
const tag = /<\/?[a-z][\w-]*(?:\s[^<>]*)?>/iy;
const tagLine = new RegExp(`^ {0,3}${tag.source}[ \\t]*$`, 'i');
const autolink = /<([a-z][\w+.-]{1,31}:[^\s<>]*|[^\s<>@]+@[^\s<>@]+)>/iy;
const punctuation = /[\p{P}\p{S}]/u;
/**
 * The runs that can close a code span or TeX: backticks; `$$`; a `$` after anything but a space or a backslash and
 * before anything but a digit, so that "$5 and $10" is text.
 */
const closers = /`+|\$\$|(?<=[^\s\\])\$(?!\d)/g;
const asciiPunctuation = /[!-/:-@[-`{-~]/;

/** The opening line of fenced code, if `line` is one: the info string of a backtick fence has no backtick. */
export function opensFence(line: string) {
  const m = fence.exec(line);
  return m && !(m[2]![0] === '`' && m[3]!.includes('`')) ? m : null;
}

/**
 * Whether `line` closes fenced code that `opener` opened: as many of its characters or more (a run of them that starts
 * with the opener's), and nothing else.
 */
function closesFence(line: string, opener: string) {
  const m = fence.exec(line);
  return m && m[2]!.startsWith(opener) && isBlank(m[3]!);
}

/** Whether a line starts fenced code, a heading, a thematic break or an HTML block that breaks a paragraph. */
const opensLeaf = (line: string) => opensFence(line) || atx.test(line) || hr.test(line) || htmlStart.test(line);

/**
 * The columns of leading whitespace, a tab reaching the next multiple of four, read until they make `max`, and how
 * many characters they take.
 */
function leading(line: string, max = Infinity): [columns: number, length: number] {
  let columns = 0;
  let at = 0;
  for (; columns < max && (line[at] === ' ' || line[at] === '\t'); at++) {
    columns += line[at] === ' ' ? 1 : 4 - (columns % 4);
  }
  return [columns, at];
}

/** Columns of leading whitespace. */
const indent = (line: string) => leading(line)[0];

/** The line without up to `columns` columns of leading whitespace. */
const outdent = (line: string, columns: number) => line.slice(leading(line, columns)[1]);

/** A link label as definitions are looked up by: case and runs of whitespace do not count. */
const label = (text: string) => text.trim().replace(/\s+/g, ' ').toLowerCase();

const unescape = (text: string) => text.replace(/\\([!-/:-@[-`{-~])/g, '$1');

/** The cells of a table row: split at pipes not escaped, the outer ones dropped. */
function cells(row: string): string[] {
  const parts = row
    .trim()
    .replace(/^\|/, '')
    .split(/(?<!\\)\|/);
  if (parts.length > 1 && !parts.at(-1)!.trim()) parts.pop();
  return parts.map(cell => cell.trim().replace(/\\\|/g, '|'));
}

const alignOf = (cell: string): Align =>
  cell.endsWith(':') ? (cell.startsWith(':') ? 'center' : 'right') : cell.startsWith(':') ? 'left' : null;

/** Lexes a whole text into block tokens with their inline tokens. */
export function lex(src: string): Block[] {
  /** The destinations of link reference definitions, by label; the renderer shows no titles. */
  const defs = new Map<string, string>();
  /** The inline texts to lex once every definition is known, with where their tokens go. */
  const inlines: [string, Inline[]][] = [];
  const inlined = (text: string) => {
    const tokens: Inline[] = [];
    inlines.push([text, tokens]);
    return tokens;
  };

  /** Whether a line starts a block that ends a paragraph before it. */
  const breaks = (line: string, depth: number, m = item.exec(line)) =>
    opensLeaf(line) || (depth < maxDepth && (quote.test(line) || (m?.[5]?.trim() && (!m[3] || m[3] === '1'))));

  function blocks(src: string, depth: number): Block[] {
    const out: Block[] = [];
    const lines = src.split('\n');
    const n = lines.length - (lines.at(-1) ? 0 : 1);
    const raw = (from: number, to: number) => lines.slice(from, to).join('\n') + (to < lines.length ? '\n' : '');
    let i = 0;
    let start = 0;
    /**
     * Whether lines `i` and `i + 1` start a table: a header row and a delimiter row of as many cells (dashes alone
     * underline a heading instead). Past the last line, the pattern reads "undefined": no delimiter row.
     */
    const tableAt = () =>
      lines[i]!.includes('|') &&
      delimiterRow.test(lines[i + 1]!) &&
      !setext.test(lines[i + 1]!) &&
      cells(lines[i]!).length === cells(lines[i + 1]!).length;
    /** Adds the block that starts at `start` and ends before line `to`. */
    const add = (token: object, to = i) => out.push({ ...token, raw: raw(start, to) } as Block);
    while (i < n) {
      start = i;
      const line = lines[i]!;
      let m: RegExpExecArray | null;
      if (isBlank(line)) {
        while (i < n && isBlank(lines[i]!)) i++;
        add({ type: 'space' });
      } else if (indent(line) >= 4) {
        let end = ++i;
        for (; i < n && (isBlank(lines[i]!) || indent(lines[i]!) >= 4); i++) {
          if (!isBlank(lines[i]!)) end = i + 1;
        }
        i = end;
        add({
          type: 'code',
          text: lines
            .slice(start, i)
            .map(l => outdent(l, 4))
            .join('\n'),
        });
      } else if ((m = opensFence(line))) {
        const [, spaces, opener, info] = m as unknown as [string, string, string, string];
        const body: string[] = [];
        for (i++; i < n && !closesFence(lines[i]!, opener); i++) body.push(outdent(lines[i]!, spaces.length));
        if (i < n) i++;
        add({ type: 'code', lang: unescape(info.trim()), text: body.join('\n') });
      } else if ((m = atx.exec(line))) {
        const text = line
          .slice(m[0].length)
          .trim()
          .replace(/(?:^|[ \t]+)#+$/, '');
        add({ type: 'heading', depth: m[1]!.length, tokens: inlined(text) }, ++i);
      } else if (hr.test(line)) {
        add({ type: 'hr' }, ++i);
      } else if (depth < maxDepth && quote.test(line)) {
        // Its lines, without their `>`, and the lazy ones that go on a paragraph in it.
        const body: string[] = [];
        let paragraph = false;
        let fenced = '';
        for (; i < n; i++) {
          const l = lines[i]!;
          const q = quote.exec(l);
          if (!q && !(paragraph && !isBlank(l) && !breaks(l, depth) && !tableAt())) break;
          const content = q ? l.slice(q[0].length) : l;
          body.push(content);
          // Whether the next line may be lazy: this one is text of a paragraph, as far as one line tells.
          const inner = content.replace(/^(?:[ \t]*(?:>|(?:[-*+]|\d{1,9}[.)])(?=[ \t]|$)))*[ \t]*/, '');
          if (fenced) {
            if (closesFence(inner, fenced)) fenced = '';
          } else fenced = opensFence(inner)?.[2] ?? '';
          // A fence that closes here opens one too, as a leaf: that line is no paragraph either.
          paragraph = !fenced && !isBlank(inner) && indent(content) < 4 && !opensLeaf(inner);
        }
        add({ type: 'blockquote', tokens: blocks(body.join('\n'), depth + 1) });
      } else if (depth < maxDepth && (m = item.exec(line))) {
        const kind = m[2]!.at(-1)!;
        const number = m[3];
        const items: ListItem[] = [];
        let loose = false;
        /** The item that starts at line `k`, if it goes on this list: none past the last line, read as "undefined". */
        const itemAt = (k: number) => {
          const it = item.exec(lines[k]!);
          return it && it[2]!.at(-1) === kind && !hr.test(lines[k]!) ? it : null;
        };
        while ((m = itemAt(i))) {
          const from = i;
          const width = m[1]!.length + m[2]!.length;
          const spaces = indent(m[4] ?? '');
          let content = m[5] ?? '';
          let columns: number;
          if (!content.trim()) {
            columns = width + 1;
            content = '';
          } else if (spaces > 4) {
            columns = width + 1;
            content = ' '.repeat(spaces - 1) + content;
          } else columns = width + spaces;
          const body = [content];
          // Whether the last line read is text of a paragraph, which a lazy line can go on.
          let lazy = Boolean(content) && indent(content) < 4 && !breaks(content, depth + 1);
          for (i++; i < n; i++) {
            const l = lines[i]!;
            if (isBlank(l)) {
              // An item that starts with a blank line has no content past a second one.
              if (body.length === 1 && !content) break;
              body.push('');
              lazy = false;
            } else if (indent(l) >= columns) {
              const inner = outdent(l, columns);
              body.push(inner);
              lazy = indent(inner) < 4 && !breaks(inner, depth + 1) && !setext.test(inner);
            } else if (lazy && !item.test(l) && !breaks(l, depth) && !tableAt()) {
              body.push(l);
            } else break;
          }
          let end = i;
          while (end > from + 1 && isBlank(lines[end - 1]!)) end--;
          if (!itemAt(i)) i = end;
          else if (end < i) loose = true;
          let text = body.slice(0, end - from).join('\n');
          const box = task.exec(text);
          if (box) text = text.slice(box[0].length);
          const tokens = blocks(text, depth + 1);
          if (tokens.slice(1, -1).some(t => t.type === 'space')) loose = true;
          items.push({ checked: box ? box[1] !== ' ' : undefined, tokens });
        }
        if (!loose) {
          for (const { tokens } of items)
            for (const t of tokens) if (t.type === 'paragraph') (t as Block).type = 'text';
        }
        add({ type: 'list', ordered: number !== undefined, start: number ? +number : '', loose, items });
      } else if ((m = htmlStart.exec(line)) || tagLine.test(line)) {
        // Raw HTML runs to the end of its kind: the closing tag, the end of the comment, or a blank line.
        const end = m?.[1] ? new RegExp(`</${m[1]}>`, 'i') : m?.[2] ? /-->/ : undefined;
        if (!end) while (i < n && !isBlank(lines[i]!)) i++;
        else {
          while (i < n && !end.test(lines[i]!)) i++;
          if (i < n) i++;
        }
        add({ type: 'html' });
      } else if (tableAt()) {
        const align = cells(lines[i + 1]!).map(alignOf);
        const row = (l: string) => {
          const texts = cells(l);
          return align.map((a, c) => ({ tokens: inlined(texts[c] ?? ''), align: a }));
        };
        const header = row(line);
        const rows: Cell[][] = [];
        for (i += 2; i < n && !isBlank(lines[i]!) && indent(lines[i]!) < 4 && !breaks(lines[i]!, depth); i++) {
          rows.push(row(lines[i]!));
        }
        add({ type: 'table', header, rows });
      } else if ((m = def.exec(line))) {
        const tag = label(m[1]!);
        if (!defs.has(tag)) defs.set(tag, unescape(m[2] ?? m[3]!));
        add({ type: 'def' }, ++i);
      } else {
        // A paragraph: lines up to a blank one, a block that breaks it, or a setext underline that makes it a heading.
        let depthOfHeading = 0;
        for (i++; i < n; i++) {
          const l = lines[i]!;
          if (isBlank(l)) break;
          const s = setext.exec(l);
          if (s) {
            depthOfHeading = s[1]![0] === '=' ? 1 : 2;
            break;
          }
          if (breaks(l, depth) || tableAt()) break;
        }
        const tokens = inlined(
          lines
            .slice(start, i)
            .map(l => l.replace(/^[ \t]+/, ''))
            .join('\n'),
        );
        if (depthOfHeading) add({ type: 'heading', depth: depthOfHeading, tokens }, ++i);
        else add({ type: 'paragraph', tokens });
      }
    }
    return out;
  }

  const tokens = blocks(src, 0);
  for (const [text, into] of inlines) for (const token of inline(text, defs)) into.push(token);
  return tokens;
}

/**
 * A run of `*`, `_` or `~` not yet paired: its character (`d`), what is left of it (`l`), its length (`n`), and
 * whether it can open (`o`) and close (`c`). Short names, as a minifier leaves property names as they are.
 */
interface Delimiter {
  d: string;
  l: number;
  n: number;
  o: boolean;
  c: boolean;
}
/**
 * A `[` or `![` (`b`) that may open a link or an image: where it is in the text (`at`) and in the sequence of items
 * (`i`), and whether it still may (`a`).
 */
interface Bracket {
  b: string;
  at: number;
  i: number;
  a: boolean;
}
type Item = Inline | Delimiter | Bracket;

/** How deep each span and link nests; other items are 0 deep. */
const depths = new WeakMap<Inline, number>();

const isSpace = (c: string | undefined) => !c || /\s/.test(c);
/** Whether `c` is punctuation or a symbol: `undefined`, read as "undefined", is neither. */
const isPunctuation = (c: string | undefined) => punctuation.test(c!);
const text = (text: string): Text => ({ type: 'text', text });
/** Whether a run with `inside` on its inner side and `outside` on the other flanks what is inside. */
const flanking = (inside: string | undefined, outside: string | undefined) =>
  !isSpace(inside) && (!isPunctuation(inside) || isSpace(outside) || isPunctuation(outside));

/** Lexes one block's inline text. */
function inline(src: string, defs: Map<string, string>): Inline[] {
  const items: Item[] = [];
  const brackets: Bracket[] = [];
  /** Where the runs that can close a code span or TeX are, and how many are behind, by run: indexed at the first. */
  let runs: Record<string, number[]> | undefined;
  const passed: Record<string, number> = {};
  const mail = src.includes('@');
  let comment = 0;
  let from = 0;
  let i = 0;
  /** Ends the text before `i`. */
  const flush = () => {
    if (i > from) items.push(text(src.slice(from, i)));
  };
  /** Ends the text before `i` and adds an item that ends at `end`. */
  const add = (token: Item, end: number) => {
    flush();
    items.push(token);
    i = from = end;
  };

  while (i < src.length) {
    const c = src[i]!;
    const before = src[i - 1];
    if (c === '\\') {
      const next = src[i + 1];
      // At the end, \`next\` is undefined, which the pattern reads as "undefined": no punctuation.
      if (next === '\n') add({ type: 'br' }, i + 2);
      else if (asciiPunctuation.test(next)) add({ type: 'escape', text: next }, i + 2);
      else i++;
    } else if (c === '`' || c === '$') {
      // A code span, or TeX (`$…$` or `$$…$$`), code as written, none of it markdown: one `$` opens before anything
      // but a space.
      let end = i;
      while (src[end] === c) end++;
      const run = src.slice(i, end);
      if (!runs) {
        runs = {};
        for (const { 0: closer, index } of src.matchAll(closers)) (runs[closer] ??= []).push(index);
      }
      // A run after an escaped backtick is part of a longer one in the index, and may have no length of its own there.
      const positions = runs[run] ?? [];
      let k = passed[run] ?? 0;
      // Past the last position, `undefined` is not below `i`.
      while (positions[k]! <= i) k++;
      passed[run] = k;
      const close = positions[k];
      if (close === undefined || (run === '$' && isSpace(src[end]))) {
        i = end;
        continue;
      }
      let code = src.slice(end, close).replace(/\n/g, ' ');
      if (code[0] === ' ' && code.at(-1) === ' ' && code.trim()) code = code.slice(1, -1);
      add({ type: 'codespan', text: c === '$' ? src.slice(i, close + end - i) : code }, close + end - i);
    } else if ('*_~'.includes(c)) {
      let end = i;
      while (src[end] === c) end++;
      const after = src[end];
      const left = flanking(after, before);
      const right = flanking(before, after);
      const length = end - i;
      const opens = c === '_' ? left && (!right || isPunctuation(before)) : left;
      const closes = c === '_' ? right && (!left || isPunctuation(after)) : right;
      // A run that can neither open nor close, or of more than two tildes, stays in the text.
      if ((opens || closes) && (c !== '~' || length < 3)) add({ d: c, l: length, n: length, o: opens, c: closes }, end);
      else i = end;
    } else if (c === '[' || src.startsWith('![', i)) {
      const bracket: Bracket = { b: c === '[' ? c : '![', at: i, i: 0, a: true };
      add(bracket, i + bracket.b.length);
      bracket.i = items.length - 1;
      brackets.push(bracket);
    } else if (c === ']') {
      const opener = brackets.pop();
      const target = opener?.a ? linkTarget(src, i + 1, opener, defs) : undefined;
      if (!opener || !target) {
        i++;
        continue;
      }
      flush();
      const [href, end] = target;
      const [tokens, depth] = resolve(items.splice(opener.i).slice(1));
      const token: Inline =
        opener.b === '[' ? { type: 'link', href, tokens } : { type: 'image', href, text: src.slice(opener.at + 2, i) };
      if (token.type === 'link') {
        for (const b of brackets) if (b.b === '[') b.a = false;
        depths.set(token, depth + 1);
      }
      // Nested too deep, the link shows as written, what is inside it as lexed.
      if (depth >= maxDepth) items.push(text(opener.b), ...tokens, text(src.slice(i, end)));
      else items.push(token);
      i = from = end;
    } else if (c === '<') {
      autolink.lastIndex = tag.lastIndex = i;
      const m = autolink.exec(src);
      const h = m ? null : tag.exec(src);
      if (m) {
        const href = m[1]!.includes('@') && !m[1]!.includes(':') ? 'mailto:' + m[1] : m[1]!;
        add({ type: 'link', href, tokens: [text(m[1]!)] }, i + m[0].length);
      } else if (h) add({ type: 'html', raw: h[0] }, i + h[0].length);
      else if (src.startsWith('<!--', i)) {
        // A comment ends at the first `-->` after it; where that is, is looked up once for all comments before it.
        if (comment !== -1 && comment < i + 4) comment = src.indexOf('-->', i + 4);
        if (comment === -1) i++;
        else add({ type: 'html', raw: src.slice(i, comment + 3) }, comment + 3);
      } else i++;
    } else if (c === '\n' && before === ' ' && src[i - 2] === ' ') {
      const end = i + 1;
      while (i > from && src[i - 1] === ' ') i--;
      add({ type: 'br' }, end);
    } else {
      // GitHub's autolinks: a URL not inside a word; `www.` after a space, a delimiter or a parenthesis; an e-mail
      // address.
      const url =
        (c === 'h' ? !/[a-z\d]/i.test(before ?? '') : c === 'w' && (isSpace(before) || '*_~('.includes(before!))) &&
        literalUrl(src, i);
      // An address's pattern asks for a character of its local part here.
      const address = !url && mail && !/[\w.+-]/.test(before ?? '') && literalAddress(src, i);
      const found = url || address;
      if (found) {
        const raw = src.slice(i, found);
        const href = address ? 'mailto:' + raw : c === 'w' ? 'http://' + raw : raw;
        add({ type: 'link', href, tokens: [text(raw)] }, found);
      } else i++;
    }
  }
  flush();
  return resolve(items)[0];
}

/**
 * After the `]` at `at - 1`: a link's destination and title, `(href "title")`, or a reference to a definition
 * (`[label]`, `[]`, or none after a bracketed label); with where the link ends.
 */
function linkTarget(
  src: string,
  at: number,
  opener: Bracket,
  defs: Map<string, string>,
): [href: string, end: number] | undefined {
  const limit = Math.min(src.length, at + maxTarget);
  const skip = (k: number) => {
    while (k < limit && /[ \t\n]/.test(src[k]!)) k++;
    return k;
  };
  if (src[at] === '(') {
    let k = skip(at + 1);
    let href: string;
    if (src[k] === '<') {
      let end = k + 1;
      while (end < limit && !'<>\n'.includes(src[end]!)) end++;
      if (src[end] !== '>') return undefined;
      href = src.slice(k + 1, end);
      k = end + 1;
    } else {
      const start = k;
      for (let open = 0; k < limit; k++) {
        const c = src[k]!;
        // At the end, `src[k + 1]` is undefined, which reads as "undefined": no punctuation.
        if (c === '\\' && asciiPunctuation.test(src[k + 1]!)) k++;
        else if (c <= ' ') break;
        else if (c === '(') {
          if (++open > 32) return undefined;
        } else if (c === ')' && !open--) break;
      }
      href = src.slice(start, k);
    }
    const spaced = skip(k);
    const quote = src[spaced];
    // At the end, `quote` is undefined, which reads as "undefined": no quote.
    if (spaced > k && '"\'('.includes(quote!)) {
      const closing = quote === '(' ? ')' : quote;
      let end = spaced + 1;
      for (; end < limit && src[end] !== closing; end++) if (src[end] === '\\') end++;
      if (end >= limit) return undefined;
      k = skip(end + 1);
    } else k = spaced;
    return src[k] === ')' ? [unescape(href), k + 1] : undefined;
  }
  if (!defs.size) return undefined;
  if (at - opener.at > 1000) return undefined;
  let name = src.slice(opener.at + opener.b.length, at - 1);
  let end = at;
  if (src[at] === '[') {
    const close = src.indexOf(']', at);
    if (close > 0 && close - at <= 1000 && !src.slice(at + 1, close).includes('[')) {
      if (close > at + 1) name = src.slice(at + 1, close);
      end = close + 1;
    }
  }
  const found = defs.get(label(name));
  return found === undefined ? undefined : [found, end];
}

/**
 * A URL: its scheme, or `www.`, its domain (letters, digits, `-` and `_`, in parts parted by dots), and the rest up to
 * a space or `<`.
 */
const urlStart = /(https?:\/\/|www\.)[\w-]+(?:\.[\w-]+)*[^\s<]*/iy;
/** An e-mail address: its local part, and its domain, of at least two parts. */
const address = /[\w.+-]+@([\w-]+(?:\.[\w-]+)+)/y;

/** The end of a GitHub URL autolink starting at `at` (`https://`, `http://` or `www.`), if one does. */
function literalUrl(src: string, at: number): number | undefined {
  urlStart.lastIndex = at;
  const scheme = urlStart.exec(src);
  if (!scheme) return undefined;
  const url = scheme[0];
  let end = at + url.length;
  // Trailing punctuation is not part of it, nor a closing parenthesis that has no opening one in it.
  const open = url.split('(').length;
  let close = url.split(')').length;
  for (;;) {
    const last = src[end - 1]!;
    if ('?!.,:*_~\'"'.includes(last)) end--;
    else if (last === ')' && close > open) {
      close--;
      end--;
    } else break;
  }
  return end > at + scheme[1]!.length ? end : undefined;
}

/** The end of an e-mail address starting at `at`, if one does. */
function literalAddress(src: string, at: number): number | undefined {
  address.lastIndex = at;
  const m = address.exec(src);
  // A domain that ends in `-` or `_` is none; the pattern ends one at a letter, digit, `-` or `_`, never at a dot.
  return m && !/[-_]$/.test(m[1]!) ? at + m[0].length : undefined;
}

/**
 * Pairs the emphasis and strikethrough delimiter runs of a sequence (CommonMark's process of emphasis, with its
 * bounds that keep it linear), and makes the rest text: the tokens, and how deep the deepest of them nests.
 */
function resolve(items: Item[]): [tokens: Inline[], depth: number] {
  const out: Item[] = [];
  /** The indexes in `out` of the runs that can open, and the deepest item between each and the next. */
  const openers: number[] = [];
  const deepest: number[] = [];
  /** By kind of closer: openers below this index never close it. */
  const bottom: Record<string, number> = {};
  let depth = 0;
  /** Notes an item `d` deep at the end of `out`. */
  const note = (d: number) => {
    if (openers.length) deepest[openers.length - 1] = Math.max(deepest.at(-1)!, d);
    else depth = Math.max(depth, d);
  };
  const push = (item: Item, d: number) => {
    out.push(item);
    note(d);
  };
  const truncate = (length: number) => {
    openers.length = deepest.length = length;
    for (const key in bottom) if (bottom[key]! > length) bottom[key] = length;
  };

  for (const item of items) {
    if (!('d' in item)) {
      push(item, depths.get(item as Inline) ?? 0);
      continue;
    }
    const closer = item;
    const { d: char, n: length, o: opens } = closer;
    const tilde = char === '~';
    const key = char + opens + (length % 3);
    while (closer.c && closer.l) {
      let k = openers.length - 1;
      let opener!: Delimiter;
      const floor = bottom[key] ?? 0;
      for (; k >= floor; k--) {
        const o = (opener = out[openers[k]!] as Delimiter);
        if (o.d !== char) continue;
        if (tilde) {
          if (o.l === closer.l) break;
        } else if (!((o.c || opens) && (o.n + length) % 3 === 0 && (o.n % 3 || length % 3))) {
          break;
        }
      }
      if (k < floor) {
        bottom[key] = openers.length;
        break;
      }
      let d = 0;
      for (let j = k; j < deepest.length; j++) d = Math.max(d, deepest[j]!);
      if (d + 1 > maxDepth) {
        // Nested too deep: this opener and the ones above it stay text.
        truncate(k);
        note(d);
        break;
      }
      const use = tilde ? closer.l : opener.l > 1 && closer.l > 1 ? 2 : 1;
      const content = finish(out.splice(openers[k]! + 1));
      truncate(k + 1);
      opener.l -= use;
      closer.l -= use;
      const span: Span = { type: tilde ? 'del' : use === 2 ? 'strong' : 'em', tokens: content };
      depths.set(span, d + 1);
      deepest[k] = 0;
      if (!opener.l) {
        out.pop();
        truncate(k);
      }
      push(span, d + 1);
    }
    if (!closer.l) continue;
    if (opens) {
      openers.push(out.length);
      deepest.push(0);
      out.push(closer);
    } else push(closer, 0);
  }
  for (const d of deepest) depth = Math.max(depth, d);
  return [finish(out), depth];
}

/** The items as tokens: runs and brackets left over are text, and neighbouring texts are one. */
function finish(items: Item[]): Inline[] {
  const tokens: Inline[] = [];
  for (const item of items) {
    const token = 'd' in item ? text(item.d.repeat(item.l)) : 'b' in item ? text(item.b) : item;
    const last = tokens.at(-1);
    // Every text here is one of this sequence's own, made for it: it can take the next one in.
    if (token.type === 'text' && last?.type === 'text') last.text += token.text;
    else tokens.push(token);
  }
  return tokens;
}
