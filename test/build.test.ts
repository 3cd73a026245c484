import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAst } from 'rolldown/parseAst';
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
