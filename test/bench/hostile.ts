// Model output built to hurt a markdown renderer: deep nesting that overflows the stack, and tails that are slow to
// lex again on every streaming frame. Shared by the renderer's tests and `npm run bench`.

export const hostileInputs: Record<string, string> = {
  /** 1,000 nested list items in 2 KB. */
  'list markers': '- '.repeat(1000) + 'x',
  /** 5,000 nested block quotes. */
  'quote markers': '>'.repeat(5000),
  /** 1,500 nested strong emphases around one letter. */
  'emphasis runs': '*'.repeat(3000) + 'x' + '*'.repeat(3000),
  /** A 40 KB paragraph of underscores between letters, which a backtracking inline lexer takes quadratic time over. */
  underscores: '_a'.repeat(20_000),
  /** A list indented 300 levels deep, one level per line. */
  'indented list': Array.from({ length: 300 }, (_, i) => ' '.repeat(i * 2) + '- item').join('\n'),
  /** 6,000 empty fenced code blocks in 48 KB. */
  fences: '```\n'.repeat(12_000),
};

/** Text built to be slow for a markdown lexer read whole: open brackets, runs and tables a backtracking lexer takes
 * quadratic time over. The lexer's tests check its output on them; `npm run bench` times them. */
export const lexerInputs: Record<string, string> = {
  'nested list items': Array.from({ length: 2000 }, (_, i) => ' '.repeat(i % 200) + '- x').join('\n'),
  'stars alone': '*'.repeat(50_000),
  'opening brackets': '['.repeat(50_000),
  'brackets opened and closed': '['.repeat(25_000) + ']'.repeat(25_000),
  'links left open': '[a]('.repeat(12_000),
  'link titles left open': '['.repeat(10_000) + '](x "'.repeat(10_000),
  'underscores before letters': '_a'.repeat(25_000),
  'at signs': 'a@'.repeat(25_000),
  'backtick runs': '`'.repeat(50_000) + ' ' + Array.from({ length: 300 }, (_, i) => '`'.repeat(i + 1) + 'a').join(''),
  'angle brackets': '<'.repeat(25_000) + '<a x="'.repeat(5_000),
  'comments left open': '<!--'.repeat(12_000),
  'URLs in parentheses': '(http://'.repeat(6_000),
  'quotes and lazy lines': '> a\nb\n'.repeat(5_000),
  'emphasis of two kinds': '*a _b '.repeat(5_000) + ' c* d_'.repeat(5_000),
  'a huge table': '| a | b |\n|---|---|\n' + '| 1 | *2* |\n'.repeat(5_000),
  'a row of pipes': '|'.repeat(20_000) + '\n' + '|-'.repeat(10_000),
};

/** A deterministic pseudo-random sequence. */
export function random(seed: number) {
  return () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
}

/** Cuts a text into pieces of `min` to `min + spread` characters (1 to 2 KB), the same way every time. */
export function pieces(text: string, seed = 5, min = 1024, spread = 1024): string[] {
  const next = random(seed);
  const out: string[] = [];
  for (let at = 0; at < text.length;) {
    const end = Math.min(text.length, at + min + Math.floor(next() * spread));
    out.push(text.slice(at, end));
    at = end;
  }
  return out;
}
