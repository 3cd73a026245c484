/**
 * The browser build: its plugins (`build/`) by their own behaviour and their source maps, and a real `vite build` of
 * both bundles, which prints no warning.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type MagicString from 'magic-string';
import { parseAst } from 'rolldown/parseAst';
import { shortNames, shorten } from '../build/properties.js';
import { minifyCode } from '../build/templates.js';

const root = fileURLToPath(new URL('../', import.meta.url));

/** What the build does to a module: the static parts of its html templates minified. */
const minified = (code: string) => minifyCode(code, parseAst(code) as never).toString();

/** The line and column (from 0) where `text` first occurs in `code`. */
function place(code: string, text: string): [number, number] {
  const lines = code.slice(0, code.indexOf(text)).split('\n');
  return [lines.length - 1, lines.at(-1)!.length];
}

/** Where the source map of a transform sends `text` of its output: a line and column of its input. */
function mapped(out: MagicString, text: string): [number, number] | undefined {
  const [line, column] = place(out.toString(), text);
  const segment = out.generateDecodedMap({ hires: true }).mappings[line]?.find(([at]) => at === column);
  return segment && [segment[2]!, segment[3]!];
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
        'const view = html`<div class=a> ${open ? html`<span> ${label} </span>` : `keep',
        '   this`} </div>`;',
      ].join('\n'),
    );
  });

  it('keeps text on one line as it is', () => {
    const code = 'const view = html`<p>a  b</p>${x}<i> c </i>`;';
    assert.equal(minified(code), code);
  });

  it('takes the quotes off plain attribute values, and the whitespace before the end of a tag', () => {
    assert.equal(
      minified('html`<button type="button" class="a b" data-x=\'y\' >x="y" </button><br /><i d="1"/>`'),
      'html`<button type=button class="a b" data-x=y>x="y" </button><br /><i d="1"/>`',
    );
  });

  it('follows tags and quoted values across the expressions of a template', () => {
    assert.equal(
      minified('html`<p class="a ${b} c" title="d" @click=${e} >"f" ${g} <input ?h=${i} />`'),
      'html`<p class="a ${b} c" title=d @click=${e}>"f" ${g} <input ?h=${i} />`',
    );
  });

  it('leaves comments as they are', () => {
    const code = 'html`<!-- <a href="b" > --><c d="e">`';
    assert.equal(minified(code), 'html`<!-- <a href="b" > --><c d=e>`');
  });

  it('maps the code after a template to where it was, lines collapsed before it', () => {
    const code = ['const view = html`<p class="a">', '    ${b}', '  </p>`;', 'const after = 1;'].join('\n');
    const out = minifyCode(code, parseAst(code) as never);
    assert.equal(out.toString(), 'const view = html`<p class=a> ${b} </p>`;\nconst after = 1;');
    assert.deepEqual(mapped(out, 'b}'), place(code, 'b}'));
    assert.deepEqual(mapped(out, 'after'), place(code, 'after'));
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
      shorten('a { color: var(--_on-accent, var(--persona-chat-x)); --_accent: 1; }', names).toString(),
      'a { color: var(--_b, var(--persona-chat-x)); --_a: 1; }',
    );
  });

  it('maps the code after a shortened name to where it was', () => {
    const code = 'const sheet = css`a { color: var(--_on-accent); }`, after = 1;';
    const out = shorten(code, names);
    assert.deepEqual(mapped(out, 'after'), place(code, 'after'));
    assert.deepEqual(mapped(out, '); }'), place(code, '); }'));
  });

  it('refuses a private property that is not defined', () => {
    assert.throws(() => shorten('a { color: var(--_accent-2); }', names), /--_accent-2 is used but not defined/);
  });
});

/**
 * `vite build` and `vite build --mode classic`, as `npm run build` runs them, in a folder of their own: it links to
 * everything in the repository but `dist`, so the bundles are written beside the links, and a build running at the
 * same time (the packed package's) neither sees these files nor has its own removed. At `--logLevel warn` a build
 * prints only warnings and errors.
 */
describe('the browser build', { timeout: 120_000 }, () => {
  /** Where the builds write (PERSONA_CHAT_OUT), apart from `dist/`, which another suite may be building. */
  let out: string;

  before(async () => {
    out = await mkdtemp(join(tmpdir(), 'persona-chat-build-'));
  });
  after(() => rm(out, { recursive: true, force: true }));

  // In their order: the launcher names the chat built before it.
  for (const [bundle, args] of [
    ['the chat and its chunks', ['--mode', 'chat']],
    ['the launcher', []],
    ['the classic script', ['--mode', 'classic']],
  ] as const) {
    it(`builds ${bundle} without a warning`, async () => {
      const { stdout, stderr } = await promisify(execFile)(
        join(root, 'node_modules/.bin/vite'),
        ['build', '--logLevel', 'warn', ...args],
        { cwd: root, env: { ...process.env, PERSONA_CHAT_OUT: out }, maxBuffer: 1 << 24 },
      );
      assert.equal(stdout + stderr, '', 'the build printed something');
    });
  }

  it('maps the bundles to every stylesheet', async () => {
    const debug = join(out, 'browser-debug');
    const maps = (await readdir(debug)).filter(name => name.endsWith('.js.map'));
    const sources = new Set<string>();
    for (const map of maps) {
      for (const source of JSON.parse(await readFile(join(debug, map), 'utf8')).sources as string[]) {
        sources.add(source.replace(/^.*\/src\//, 'src/'));
      }
    }
    const sheets = (await readdir(join(root, 'src/element'))).filter(name => name.endsWith('.styles.ts'));
    assert.ok(sheets.length > 0);
    for (const sheet of sheets) assert.ok(sources.has(`src/element/${sheet}`), `a map holds ${sheet}`);
  });
});
