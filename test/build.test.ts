import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAst } from 'rolldown/parseAst';
import { shortNames, shorten } from '../build/properties.js';
import { collapse, templateParts } from '../build/templates.js';

/** What the build does to a module: each static part of its html templates collapsed. */
function minified(code: string) {
  let out = code;
  for (const [start, end] of templateParts(parseAst(code) as never).sort((a, b) => b[0] - a[0])) {
    out = out.slice(0, start) + collapse(out.slice(start, end)) + out.slice(end);
  }
  return out;
}

describe('the build’s template minifier', () => {
  it('collapses the line breaks of html templates, nested ones included, and nothing else', () => {
    const code = [
      "const label = 'a\\n  b';",
      'const other = `x',
      '  y`;',
      'const view = html`<div class="a">',
      '    ${open ? html`<span>',
      '      ${label}',
      '    </span>` : `keep',
      '   this`}',
      '  </div>`;',
    ].join('\n');
    assert.equal(
      minified(code),
      [
        "const label = 'a\\n  b';",
        'const other = `x',
        '  y`;',
        'const view = html`<div class="a"> ${open ? html`<span> ${label} </span>` : `keep',
        '   this`} </div>`;',
      ].join('\n'),
    );
  });

  it('keeps text on one line as it is', () => {
    const code = 'const view = html`<p>a  b</p>${x}<i> c </i>`;';
    assert.equal(minified(code), code);
  });
});

describe('the build’s private property names', () => {
  const names = shortNames(':host { --_accent: red; --_on-accent: var(--_accent); --_accent: blue; }');

  it('gives each private property defined a short name, in the order of their definitions', () => {
    assert.deepEqual(
      [...names],
      [
        ['accent', 'a'],
        ['on-accent', 'b'],
      ],
    );
  });

  it('shortens the private properties and nothing else', () => {
    assert.equal(
      shorten('a { color: var(--_on-accent, var(--persona-chat-x)); --_accent: 1; }', names),
      'a { color: var(--_b, var(--persona-chat-x)); --_a: 1; }',
    );
  });

  it('refuses a private property that is not defined', () => {
    assert.throws(() => shorten('a { color: var(--_accent-2); }', names), /--_accent-2 is used but not defined/);
  });
});
