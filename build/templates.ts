/**
 * Minifies the static text of Lit `html` templates. Each run of whitespace that holds a line break becomes one space,
 * as HTML draws it anyway (no template of the element writes preformatted text in its static parts). Inside a tag,
 * an attribute value that is a plain word loses its quotes (`type=button`) and whitespace before the `>` goes, as
 * the HTML parser, and Lit's, read them the same. Only the templates' static parts change, found by the parser,
 * never the code between them; the source map sends a changed part to where it started, and the rest of the code to
 * where it was.
 */
import MagicString from 'magic-string';
import type { Plugin } from 'vite';

interface Node {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

export const collapse = (text: string) => text.replace(/[ \t]*\n\s*/g, ' ');

/**
 * The static parts of a template, each collapsed, and with the quotes of plain attribute values and the whitespace
 * before a tag's `>` taken out. Where a part starts (in text, in a tag, in a quoted value) follows from the parts
 * before it.
 */
export function minifyParts(parts: string[]): string[] {
  let state: 'text' | 'tag' | 'comment' | '"' | "'" = 'text';
  return parts.map(part => {
    const text = collapse(part);
    let out = '';
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (state === 'text') {
        if (text.startsWith('<!--', i)) state = 'comment';
        else if (c === '<' && /[a-z/]/i.test(text[i + 1] ?? '')) state = 'tag';
      } else if (state === 'comment') {
        if (text.startsWith('-->', i - 2)) state = 'text';
      } else if (state === 'tag') {
        const plain = /^(["'])([\w-]+)\1(?=[\s>])/.exec(text.slice(i));
        const space = /^\s+(?=>|\/>)/.exec(text.slice(i));
        if (c === '>') state = 'text';
        else if (plain && out.endsWith('=')) {
          out += plain[2];
          i += plain[0].length - 1;
          continue;
        } else if (c === '"' || c === "'") state = c;
        else if (space && (text[i + space[0].length] === '>' || /["']$/.test(out))) {
          i += space[0].length - 1;
          continue;
        }
      } else if (c === state) state = 'tag';
      out += c;
    }
    return out;
  });
}

/** The ranges of the static parts of each `html`-tagged template in a module's syntax tree, nested ones included. */
export function templates(tree: Node): [number, number][][] {
  const found: [number, number][][] = [];
  const visit = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object' || typeof (node as Node).type !== 'string') return;
    const { type, tag, quasi } = node as Node & { tag?: Node & { name?: string }; quasi?: { quasis: Node[] } };
    if (type === 'TaggedTemplateExpression' && tag?.type === 'Identifier' && tag.name === 'html') {
      found.push(quasi!.quasis.map(part => [part.start, part.end]));
    }
    for (const [key, value] of Object.entries(node)) if (key !== 'parent') visit(value);
  };
  visit(tree);
  return found;
}

/** A module's code with the static parts of its templates minified, as a MagicString (its text, and its source map). */
export function minifyCode(code: string, tree: Node): MagicString {
  const out = new MagicString(code);
  for (const parts of templates(tree)) {
    const minified = minifyParts(parts.map(([start, end]) => code.slice(start, end)));
    parts.forEach(([start, end], i) => {
      if (minified[i] !== code.slice(start, end)) out.overwrite(start, end, minified[i]!);
    });
  }
  return out;
}

export function minifyTemplates(): Plugin {
  return {
    name: 'persona-chat-minify-templates',
    transform(code, id) {
      if (!/\/src\/element\/.*\.ts$/.test(id) || !code.includes('html`')) return undefined;
      const tree = this.parse(code) as unknown as Node;
      for (const [start, end] of templates(tree).flat()) {
        // Offsets in characters, between a backtick or an expression's brace and a backtick or `${`.
        if (!'`}'.includes(code[start - 1]!) || !/^(`|\$\{)/.test(code.slice(end))) {
          this.error(`${id}: the parser's offsets of a template do not match its text`);
        }
      }
      const out = minifyCode(code, tree);
      return { code: out.toString(), map: out.generateMap({ hires: true }) };
    },
  };
}
