/**
 * Shortens the element's private custom properties (`--_accent`, `--_launcher-size`) to a letter or two each
 * (`--_a`): they are read in every rule of the stylesheets, and their names are for whoever reads the source. Only
 * the private ones, which the `:host` rules of the launcher's, the element's and the highlighter's sheets define, change: the public
 * `--persona-chat-*` ones are the API. Every file of the element gets the same names, so the launcher and the chunks
 * loaded later agree. Only the names change, so the source map sends everything else to where it was.
 */
import { readFile } from 'node:fs/promises';
import MagicString from 'magic-string';
import type { Plugin } from 'vite';

/** A private custom property, as defined or used; its name is all the word characters and dashes after `--_`. */
const property = /--_([\w-]+)/g;

/** The short name of each private property defined in `sheet`, by its long one, in the order of their definitions. */
export function shortNames(sheet: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const [, name] of sheet.matchAll(/--_([\w-]+)\s*:/g)) {
    if (!names.has(name!)) names.set(name!, (names.size + 10).toString(36));
  }
  return names;
}

/**
 * The code with each private property's short name, as a MagicString (its text, and its source map); throws at one
 * that is not defined, which would read as unset.
 */
export function shorten(code: string, names: Map<string, string>): MagicString {
  const out = new MagicString(code);
  for (const match of code.matchAll(property)) {
    const name = match[1]!;
    const short = names.get(name);
    if (!short) throw new Error(`--_${name} is used but not defined`);
    const start = match.index + '--_'.length;
    out.overwrite(start, start + name.length, short);
  }
  return out;
}

export function shortenProperties(
  definitions = ['src/element/launcher.styles.ts', 'src/element/persona-chat.styles.ts', 'src/element/highlight.ts'],
): Plugin {
  let names = new Map<string, string>();
  return {
    name: 'persona-chat-shorten-properties',
    async buildStart() {
      names = shortNames((await Promise.all(definitions.map(file => readFile(file, 'utf8')))).join('\n'));
    },
    transform(code, id) {
      if (!/\/src\/element\/.*\.ts$/.test(id) || !code.includes('--_')) return undefined;
      try {
        const out = shorten(code, names);
        return { code: out.toString(), map: out.generateMap({ hires: true }) };
      } catch (error) {
        return this.error(`${id}: ${(error as Error).message}`);
      }
    },
  };
}
