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
