/**
 * Collapses the indentation of Lit `html` templates: in their static text, each run of whitespace that holds a
 * line break becomes one space, as HTML draws it anyway (no template of the element writes preformatted text in
 * its static parts). Only the templates' static parts change, found by the parser, never the code between them.
 */
import type { Plugin } from 'vite';

interface Node {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

export const collapse = (text: string) => text.replace(/[ \t]*\n\s*/g, ' ');

/** The ranges of the static parts of every `html`-tagged template in a module's syntax tree. */
export function templateParts(tree: Node): [number, number][] {
  const parts: [number, number][] = [];
  const visit = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object' || typeof (node as Node).type !== 'string') return;
    const { type, tag, quasi } = node as Node & { tag?: Node & { name?: string }; quasi?: { quasis: Node[] } };
    if (type === 'TaggedTemplateExpression' && tag?.type === 'Identifier' && tag.name === 'html') {
      for (const part of quasi!.quasis) parts.push([part.start, part.end]);
    }
    for (const [key, value] of Object.entries(node)) if (key !== 'parent') visit(value);
  };
  visit(tree);
  return parts;
}

export function minifyTemplates(): Plugin {
  return {
    name: 'persona-chat-minify-templates',
    transform(code, id) {
      if (!/\/src\/element\/.*\.ts$/.test(id) || !code.includes('html`')) return undefined;
      const parts = templateParts(this.parse(code) as unknown as Node).sort((a, b) => b[0] - a[0]);
      let out = code;
      for (const [start, end] of parts) {
        // Offsets in characters, between a backtick or an expression's brace and a backtick or `${`.
        if (!'`}'.includes(code[start - 1]!) || !/^(`|\$\{)/.test(code.slice(end))) {
          this.error(`${id}: the parser's offsets of a template do not match its text`);
        }
        out = out.slice(0, start) + collapse(out.slice(start, end)) + out.slice(end);
      }
      return { code: out, map: null };
    },
  };
}
