/**
 * `custom-elements.json`, as `cem analyze` makes it from the element's JSDoc, against the README's tables of the
 * element's API: each list is the same on both sides, and the manifest describes everything it lists.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = fileURLToPath(new URL('../', import.meta.url));

interface Named {
  name: string;
  kind?: string;
  fieldName?: string;
  attribute?: string;
  type?: { text: string };
  description?: string;
}
interface Declaration {
  tagName?: string;
  attributes: Named[];
  members: Named[];
  events: (Named & { type?: { text: string } })[];
  cssProperties: Named[];
  cssParts: Named[];
}

/**
 * The README's tables of the element's API, in "The element": each as its header's first cell and the names in its
 * first column (the package's entries are in that section too, in the `import` table).
 */
function readmeTables(readme: string) {
  const section = readme.slice(readme.indexOf('\n## The element'), readme.indexOf('\n### Accessibility'));
  const tables = new Map<string, Set<string>>();
  for (const table of section.split('\n\n').filter(block => block.startsWith('|'))) {
    const [header, , ...rows] = table.trim().split('\n');
    const title = header!.split('|')[1]!.trim() + (header!.includes('default (light / dark)') ? ' (css)' : '');
    const names = rows.flatMap(row => {
      const cell = row.split('|')[1]!;
      const [first, ...rest] = [...cell.matchAll(/`([^`]+)`/g)].map(match => match[1]!.replace(/\(.*\)$/, ''));
      // `persona-chat-open` / `-close`
      return [first!, ...rest.map(name => (name.startsWith('-') ? first!.replace(/-[^-]+$/, name) : name))];
    });
    if (title !== 'import') tables.set(title, new Set(names));
  }
  return tables;
}

const sorted = (names: Iterable<string>) => [...names].sort();

/** Whether a field's type is one a page gives as a value, not as text: an array, an object or a function. */
const isValue = (type = '') => /\[\]|[<{(]|\btypeof\b/.test(type);

describe('custom-elements.json', { timeout: 60_000 }, () => {
  let dir: string;
  let element: Declaration;
  let tables: Map<string, Set<string>>;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'persona-chat-manifest-'));
    await promisify(execFile)(join(root, 'node_modules/.bin/cem'), ['analyze', '--outdir', relative(root, dir)], {
      cwd: root,
    });
    const manifest = JSON.parse(await readFile(join(dir, 'custom-elements.json'), 'utf8'));
    element = manifest.modules
      .flatMap((m: { declarations: Declaration[] }) => m.declarations)
      .find((d: Declaration) => d.tagName === 'persona-chat');
    tables = readmeTables(await readFile(join(root, 'README.md'), 'utf8'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it('finds the six tables in the README', () => {
    assert.deepEqual(sorted(tables.keys()), ['attribute', 'event', 'method', 'part', 'property', 'property (css)']);
  });

  it('lists the attributes the README lists', () => {
    assert.deepEqual(sorted(element.attributes.map(a => a.name)), sorted(tables.get('attribute')!));
  });

  it('lists as properties the fields without an attribute and those set as a value, as the README does', () => {
    const fields = element.members.filter(m => m.kind === 'field');
    const values = fields.filter(f => !f.attribute || isValue(f.type?.text)).map(f => f.name);
    assert.deepEqual(
      sorted(tables.get('property')!),
      sorted(values),
      'the property table lists the fields without an attribute and those that are arrays, objects or functions',
    );
  });

  it('lists the methods the README lists', () => {
    const methods = element.members.filter(m => m.kind === 'method').map(m => m.name);
    assert.deepEqual(sorted(methods), sorted(tables.get('method')!));
  });

  it('lists the events the README lists, each with its class', async () => {
    assert.deepEqual(sorted(element.events.map(e => e.name)), sorted(tables.get('event')!));
    const classes = await import('../src/element/events.js');
    for (const event of element.events) {
      assert.ok(event.type && event.type.text in classes, `${event.name} is a ${event.type?.text}`);
    }
  });

  it('describes each attribute, property, method, event, part and CSS custom property', () => {
    for (const [what, entries] of Object.entries({
      attribute: element.attributes,
      member: element.members,
      event: element.events,
      part: element.cssParts,
      'CSS custom property': element.cssProperties,
    })) {
      const bare = entries.filter(entry => !entry.description?.trim()).map(entry => entry.name);
      assert.deepEqual(bare, [], `each ${what} has a description`);
    }
  });

  it('lists the CSS custom properties and the parts the README lists', () => {
    assert.deepEqual(sorted(element.cssProperties.map(p => p.name)), sorted(tables.get('property (css)')!));
    assert.deepEqual(sorted(element.cssParts.map(p => p.name)), sorted(tables.get('part')!));
  });
});
