/**
 * @module
 * What a streaming reply's end leaves open, closed for display: loaded when a reply's turn is first drawn (see
 * `loadCloser()` in `markdown.ts`), and never used on a reply's final text.
 */
import type { Block } from './lexer.js';

/**
 * What may open or close something on a line (see `close()`): an escape, a run of backticks, of emphasis or of
 * tildes, a bracket that may open a link or an image, and one that may close it.
 */
const marks = /\\.|(`+)|(\*+|_+|~~)|(!?\[)|(\]\(?)/g;

/** What closes a link's text and gives it no destination: a link that shows its text alone. */
const noTarget = ']()';

/**
 * While streaming, closes for display what the text leaves open on its last line, so that no marker shows while it
 * waits for its pair: emphasis and strikethrough (`**bold` as `**bold**`), a code span, a link or an image, whose
 * text shows without a destination until its own is complete (`[text](http://exa` as `[text]()`). Fenced code left
 * open renders open as it is, and nothing is closed in code or raw HTML. A run of `*` or `_` opens only after a
 * space, punctuation or nothing, so that `2*3` and `snake_case` stay as written. The final render never closes
 * anything. `tokens`: the text's, lexed (the chunk imports nothing from the element's file).
 */
export function close(text: string, tokens: Block[]): string {
  let leaf: Block | undefined = tokens.at(-1);
  while (leaf?.type === 'list' || leaf?.type === 'blockquote') {
    leaf = (leaf.type === 'list' ? leaf.items.at(-1)?.tokens : leaf.tokens)?.at(-1);
  }
  if (leaf?.type === 'code' || leaf?.type === 'html') return text;
  /** What closes each thing open, innermost last. */
  const open: string[] = [];
  /** Where the brackets still open are in `open`. */
  const links: number[] = [];
  const closers = () => open.reverse().join('');
  marks.lastIndex = text.lastIndexOf('\n') + 1;
  for (let m: RegExpExecArray | null; (m = marks.exec(text));) {
    const [, code, run, bracket, end] = m;
    if (code) {
      const at = text.indexOf(code, marks.lastIndex);
      if (at < 0) return text + code + closers();
      marks.lastIndex = at + code.length;
    } else if (run) {
      const before = text[m.index - 1] ?? ' ';
      if (open.at(-1) === run && /\S/.test(before)) open.pop();
      else if (/\S/.test(text[marks.lastIndex] ?? ' ') && !/\w/.test(before)) open.push(run);
    } else if (bracket) links.push(open.push(noTarget) - 1);
    else if (end && links.length) {
      // A link whose destination has not come yet shows its text alone.
      const at = end[1] ? text.indexOf(')', marks.lastIndex) : 0;
      if (at < 0) return text.slice(0, m.index) + closers();
      open.length = links.pop()!;
      if (at) marks.lastIndex = at + 1;
    }
  }
  return text + closers();
}
