// What a streaming reply's end leaves open, closed for display: emphasis, code spans, links and images, never in
// code or raw HTML, never what stays as written in a full render. How a view uses it is in markdown.test.ts.
import { expect } from '@open-wc/testing';
import { close as closeTokens } from '../../src/element/close.js';
import { lex } from '../../src/element/render.js';

const close = (text: string) => closeTokens(text, lex(text));

describe('close', () => {
  const cases: [string, string][] = [
    ['**bold', '**bold**'],
    ['some *em and __strong', 'some *em and __strong__*'],
    ['~~gone', '~~gone~~'],
    ['run `npm i', 'run `npm i`'],
    ['**run ``a ` b', '**run ``a ` b``**'],
    ['[the docs](http://exa', '[the docs]()'],
    ['see **[the docs](http://exa', 'see **[the docs]()**'],
    ['[the do', '[the do]()'],
    ['![a chart', '![a chart]()'],
    ['[*a](http', '[*a*]()'],
    ['**done** and [done](https://x.com) and `done`', '**done** and [done](https://x.com) and `done`'],
    ['**https://example.com/a**', '**https://example.com/a**'],
    ['as noted [1] and', 'as noted [1] and'],
    ['a bracket] alone', 'a bracket] alone'],
    ['2*3 and snake_case and a * b', '2*3 and snake_case and a * b'],
    ['- one **a\n- two', '- one **a\n- two'],
    ['- one\n- two **a', '- one\n- two **a**'],
    ['> quoted _em', '> quoted _em_'],
    ['| a | b |\n|--|--|\n| **x', '| a | b |\n|--|--|\n| **x**'],
    ['# A **title', '# A **title**'],
    ['escaped \\*not', 'escaped \\*not'],
    ['```js\nconst a = **b', '```js\nconst a = **b'],
    ['    indented `code', '    indented `code'],
    ['- item\n\n  ```\n  `x', '- item\n\n  ```\n  `x'],
    ['<div>\n**raw', '<div>\n**raw'],
  ];
  for (const [text, closed] of cases) {
    it(`closes ${JSON.stringify(text)} as ${JSON.stringify(closed)}`, () => {
      expect(close(text)).to.equal(closed);
    });
  }

  it('leaves the lines before the last as they are', () => {
    expect(close('**open\n\nnext *em')).to.equal('**open\n\nnext *em*');
  });
});
