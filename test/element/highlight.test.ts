// The highlighter's lexer, language by language: the kinds of the tokens it finds, that its tokens cover the code,
// and that it finishes on hostile code; and its tokens drawn as spans whose text is the code's.
import { expect } from '@open-wc/testing';
import { html, render } from 'lit';
import { highlight, tokenize } from '../../src/element/highlight.js';
import type { Token } from '../../src/element/highlight.js';

/** The tokens with a kind, as [kind, text], in order; nested ones inside their own. */
function kinds(tokens: Token[] = []): [string, string][] {
  return tokens.flatMap(token => {
    if (typeof token === 'string') return [];
    const inner = kinds(token[1]);
    return inner.length ? inner : [[token[0], text([token])]];
  });
}

const text = (tokens: Token[]): string =>
  tokens.map(token => (typeof token === 'string' ? token : text(token[1]))).join('');

const cases: [language: string, code: string, expected: [string, string][]][] = [
  [
    'js',
    'const n = 0x1f; // count\nconsole.log(`a ${n}`, "b", f(2.5e3));',
    [
      ['keyword', 'const'],
      ['number', '0x1f'],
      ['comment', '// count'],
      ['function', 'log'],
      ['string', '`a ${n}`'],
      ['string', '"b"'],
      ['function', 'f'],
      ['number', '2.5e3'],
    ],
  ],
  [
    'ts',
    'interface A { b: string }\n/* note */ export type C = A;',
    [
      ['keyword', 'interface'],
      ['comment', '/* note */'],
      ['keyword', 'export'],
      ['keyword', 'type'],
    ],
  ],
  [
    'jsx',
    'return <Button kind="primary">Go</Button>;',
    [
      ['keyword', 'return'],
      ['keyword', 'Button'],
      ['function', 'kind'],
      ['string', '"primary"'],
      ['keyword', 'Button'],
    ],
  ],
  [
    'json',
    '{"name": "tent", "size": 2, "ok": true}',
    [
      ['function', '"name"'],
      ['string', '"tent"'],
      ['function', '"size"'],
      ['number', '2'],
      ['function', '"ok"'],
      ['keyword', 'true'],
    ],
  ],
  [
    'python',
    '@cache\ndef area(r):\n    """Area."""\n    return 3.14 * r ** 2  # approx',
    [
      ['function', '@cache'],
      ['keyword', 'def'],
      ['function', 'area'],
      ['string', '"""Area."""'],
      ['keyword', 'return'],
      ['number', '3.14'],
      ['number', '2'],
      ['comment', '# approx'],
    ],
  ],
  [
    'bash',
    'if [ -n "$HOME" ]; then\n  npm install persona-chat # here\nfi',
    [
      ['keyword', 'if'],
      ['string', '"$HOME"'],
      ['keyword', 'then'],
      ['function', 'npm'],
      ['comment', '# here'],
      ['keyword', 'fi'],
    ],
  ],
  [
    'sh',
    '$ echo ${USER}',
    [
      ['function', 'echo'],
      ['number', '${USER}'],
    ],
  ],
  [
    'html',
    '<!-- a --><a href="/x" hidden>Tom &amp; Jo</a>',
    [
      ['comment', '<!-- a -->'],
      ['keyword', 'a'],
      ['function', 'href'],
      ['string', '"/x"'],
      ['function', 'hidden'],
      ['number', '&amp;'],
      ['keyword', 'a'],
    ],
  ],
  [
    'xml',
    '<?xml?><item id="1"/>',
    [
      ['keyword', 'item'],
      ['function', 'id'],
      ['string', '"1"'],
    ],
  ],
  [
    'css',
    '@media (min-width: 40em) { a:hover { color: #fff !important; margin: calc(1px + 2%); } }',
    [
      ['keyword', '@media'],
      ['keyword', 'min-width'],
      ['number', '40em'],
      ['keyword', 'color'],
      ['number', '#fff'],
      ['keyword', '!important'],
      ['keyword', 'margin'],
      ['function', 'calc'],
      ['number', '1px'],
      ['number', '2%'],
    ],
  ],
  [
    'sql',
    "SELECT count(*) FROM orders WHERE name = 'O''Neil' -- all\nlimit 10;",
    [
      ['keyword', 'SELECT'],
      ['function', 'count'],
      ['keyword', 'FROM'],
      ['keyword', 'WHERE'],
      ['string', "'O''Neil'"],
      ['comment', '-- all'],
      ['keyword', 'limit'],
      ['number', '10'],
    ],
  ],
  [
    'yaml',
    'name: tent # ours\nok: true\nsize: 2',
    [
      ['function', 'name'],
      ['comment', '# ours'],
      ['function', 'ok'],
      ['keyword', 'true'],
      ['function', 'size'],
      ['number', '2'],
    ],
  ],
];

describe('highlight', () => {
  for (const [language, code, expected] of cases) {
    it(`finds the tokens of ${language}, and covers the code with them`, () => {
      const tokens = tokenize(code, language)!;
      expect(kinds(tokens)).to.deep.equal(expected);
      expect(text(tokens)).to.equal(code);
    });
  }

  it('reads the names of a language in any case, and knows no other language', () => {
    expect(kinds(tokenize('let a', 'JavaScript'))).to.deep.equal([['keyword', 'let']]);
    expect(tokenize('let a', 'mermaid')).to.equal(undefined);
  });

  it('takes what an unclosed string or comment opens to the end, as code streams in', () => {
    expect(kinds(tokenize('a = "open\nb', 'js'))).to.deep.equal([['string', '"open']]);
    expect(kinds(tokenize('x /* open\nmore', 'css'))).to.deep.equal([['comment', '/* open\nmore']]);
  });

  for (const [name, code] of [
    ['long names', 'a'.repeat(30_000) + ' b'.repeat(5_000)],
    ['unclosed openers', '"\'`/*<!--'.repeat(3_000)],
    ['spaces and colons', ' :'.repeat(20_000) + '{'.repeat(1_000)],
    ['tags without ends', '<a b="c" '.repeat(3_000)],
  ]) {
    it(`lexes ${name} in every language, and drops no text`, () => {
      for (const language of ['js', 'jsx', 'json', 'python', 'sh', 'html', 'css', 'sql', 'yaml']) {
        expect(text(tokenize(code, language)!), language).to.equal(code);
      }
    });
  }

  it('draws the tokens as spans of their kinds, whose text is the code', () => {
    const host = document.createElement('code');
    const code = 'const a = "b"; // c';
    render(highlight(html, code, 'js'), host);
    expect([...host.querySelectorAll('span')].map(span => [span.className, span.textContent])).to.deep.equal([
      ['keyword', 'const'],
      ['string', '"b"'],
      ['comment', '// c'],
    ]);
    expect(host.textContent).to.equal(code);
    expect(highlight(html, code, 'text')).to.equal(code);
  });
});
