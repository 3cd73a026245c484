/**
 * @module
 * Code blocks highlighted: a chunk of its own, loaded when a reply has fenced code with a language (see `render.ts`).
 * A lexer of Prism's kind: each language is a list of rules, a kind and a pattern (and, for a tag, the rules of
 * what is inside it), all tried at each place in one regular expression, the first that matches taking its text;
 * the rest is plain text. The tokens are drawn as Lit templates, a `<span>` of the token's kind's class each, never
 * as HTML. It takes Lit's `html` from the element, so that Lit stays in the element's one file, and adds its styles
 * to the element's (`adopt()`), whose public `--persona-chat-code-*-color` properties set its colours.
 *
 * The model's code can be hostile, so lexing it takes time linear in its length: every pattern that opens something
 * (a string, a comment, a tag) matches up to where it closes or the end, so none is tried again over what it spans,
 * and a pattern that starts at a name starts only where a name does.
 */
import type { html as litHtml } from 'lit';

/** A token's kind: the class of its `<span>`. */
export type Kind = 'keyword' | 'string' | 'comment' | 'number' | 'function';

/** A rule: its kind ('' for tokens whose own rules give the kinds), its pattern, and the rules inside it. */
type Rule = [kind: Kind | '', pattern: RegExp, inside?: Rule[]];

/** Tokens: text, or a kind and its own tokens. */
export type Token = string | [kind: Kind, tokens: Token[]];

const comment = /\/\/[^\n]*|\/\*[\s\S]*?(?:\*\/|$)/;
const hashComment = /(?<!\S)#[^\n]*/;
const quoted = /"(?:\\[\s\S]|[^"\\\n])*"?|'(?:\\[\s\S]|[^'\\\n])*'?/;
const number = /(?<![\w$.])(?:0[xXbBoO][\da-fA-F_]+|\d[\d_]*(?:\.\d+)?(?:[eE][+-]?\d+)?)/;
const call = /(?<![\w$])[A-Za-z_$][\w$]*(?=\s*\()/;
const words = (list: string) => new RegExp(`\\b(?:${list.replace(/ /g, '|')})\\b`);

const script: Rule[] = [
  ['comment', comment],
  ['string', new RegExp(`${quoted.source}|\`(?:\\\\[\\s\\S]|[^\`\\\\])*\`?`)],
  [
    'keyword',
    words(
      'abstract as async await break case catch class const continue debugger declare default delete do else enum export extends false finally for from function get if implements import in instanceof interface keyof let namespace new null of private protected public readonly return satisfies set static super switch this throw true try type typeof undefined var void while with yield',
    ),
  ],
  ['function', call],
  ['number', number],
];

const tag: Rule = [
  '',
  /<\/?[A-Za-z][\w:.-]*(?:\s[^<>]*)?>?/,
  [
    ['keyword', /(?<=^<\/?)[\w:.-]+/],
    ['string', /"[^"]*"?|'[^']*'?/],
    ['function', /[\w:.-]+/],
  ],
];

const markup: Rule[] = [['comment', /<!--[\s\S]*?(?:-->|$)/], tag, ['number', /&#?\w+;/]];

const json: Rule[] = [
  ['function', /"(?:\\[\s\S]|[^"\\\n])*"(?=\s*:)/],
  ['string', quoted],
  ['keyword', words('true false null')],
  ['number', /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/],
  ['comment', comment],
];

const python: Rule[] = [
  ['comment', hashComment],
  ['string', new RegExp(`(?<![\\w])[rRbBfFuU]{0,2}(?:"""[\\s\\S]*?(?:"""|$)|'''[\\s\\S]*?(?:'''|$)|${quoted.source})`)],
  [
    'keyword',
    words(
      'and as assert async await break case class continue def del elif else except False finally for from global if import in is lambda match None nonlocal not or pass raise return self True try while with yield',
    ),
  ],
  ['function', /@[\w.]+|(?<!\w)[A-Za-z_]\w*(?=\s*\()/],
  ['number', number],
];

const shell: Rule[] = [
  ['comment', hashComment],
  ['string', /"(?:\\[\s\S]|[^"\\])*"?|'[^']*'?/],
  ['number', /\$\{[^}\n]*\}?|\$[\w@*#?$!-]/],
  [
    'keyword',
    words('if then else elif fi for while until do done case esac in function return export local readonly unset'),
  ],
  // A command: the first word of a line or after `;`, `&`, `|` or `(`, or after a `$ ` prompt.
  ['function', /(?<=(?:^|[\n;&|(])[ \t]{0,8}(?:\$ )?)[\w./~-]+/],
];

const css: Rule[] = [
  ['comment', /\/\*[\s\S]*?(?:\*\/|$)/],
  ['string', quoted],
  ['keyword', /@[\w-]+|!important|(?<![\w-])[\w-]+(?=\s*:[^:{]*[;})])/],
  ['function', /(?<![\w-])[\w-]+(?=\()/],
  ['number', /#[\da-fA-F]{3,8}\b|(?<![\w-])-?\.?\d[\d.]*(?:%|[a-zA-Z]+)?/],
];

const sql: Rule[] = [
  ['comment', /--[^\n]*|\/\*[\s\S]*?(?:\*\/|$)/],
  ['string', /'(?:''|[^'])*'?|"[^"]*"?|`[^`]*`?/],
  [
    'keyword',
    words(
      'add all alter and as asc begin between by case check commit constraint create cross default delete desc distinct drop else end exists false foreign from full group having if in index inner insert into is join key left like limit not null offset on or order outer primary references returning right rollback select set table then true union unique update values view when where with',
    ),
  ],
  ['function', /(?<!\w)[A-Za-z_]\w*(?=\s*\()/],
  ['number', number],
];

const yaml: Rule[] = [
  ['comment', hashComment],
  ['function', /(?<![^\s-])[\w.-]+(?=[ \t]*:(?:\s|$))/],
  ['string', quoted],
  ['keyword', words('true false null yes no')],
  ['number', number],
];

/** The rules of each language, with the flags of their expression: SQL's words are read in any case. */
const languages: Record<string, [Rule[], string?]> = {
  js: [script],
  jsx: [[tag, ...script]],
  json: [json],
  python: [python],
  shell: [shell],
  html: [markup],
  css: [css],
  sql: [sql, 'i'],
  yaml: [yaml],
};

/** The other names of each language, as the info strings of fences give them. */
const aliases: Record<string, string> = {
  javascript: 'js',
  mjs: 'js',
  cjs: 'js',
  ts: 'js',
  typescript: 'js',
  mts: 'js',
  tsx: 'jsx',
  jsonc: 'json',
  json5: 'json',
  py: 'python',
  python3: 'python',
  bash: 'shell',
  sh: 'shell',
  zsh: 'shell',
  console: 'shell',
  xml: 'html',
  svg: 'html',
  scss: 'css',
  yml: 'yaml',
};

/** Each list of rules as one expression, a group for each rule, made on first use. */
const expressions = new WeakMap<Rule[], RegExp>();

function lex(text: string, rules: Rule[], flags = ''): Token[] {
  let expression = expressions.get(rules);
  if (!expression) {
    expression = new RegExp(rules.map(([, pattern]) => `(${pattern.source})`).join('|'), `g${flags}`);
    expressions.set(rules, expression);
  }
  const tokens: Token[] = [];
  let last = 0;
  for (const match of text.matchAll(expression)) {
    const [kind, , inside] = rules[match.findIndex((group, i) => i && group !== undefined) - 1]!;
    const at = match.index;
    if (at > last) tokens.push(text.slice(last, at));
    const content = inside ? lex(match[0], inside) : [match[0]];
    if (kind) tokens.push([kind, content]);
    else tokens.push(...content);
    last = at + match[0].length;
  }
  if (last < text.length) tokens.push(text.slice(last));
  return tokens;
}

/** The tokens of `text` in the language a fence names, or undefined for a language this does not know. */
export function tokenize(text: string, language: string): Token[] | undefined {
  const name = language.toLowerCase();
  const found = languages[aliases[name] ?? name];
  return found && lex(text, ...found);
}

/** Code drawn highlighted: its text, when its language is not known. */
export function highlight(html: typeof litHtml, text: string, language: string): unknown {
  const draw = (tokens: Token[]): unknown[] =>
    tokens.map(token => (typeof token === 'string' ? token : html`<span class=${token[0]}>${draw(token[1])}</span>`));
  const tokens = tokenize(text, language);
  return tokens ? draw(tokens) : text;
}

/**
 * The colours of the tokens: each kind's public property, or by default a colour that reads on the code's background
 * (`--_bg`), light or dark, at 4.5:1 or more.
 */
const styles =
  ':host{--_code-keyword:var(--persona-chat-code-keyword-color,light-dark(#b3262e,#ff7b72));--_code-string:var(--persona-chat-code-string-color,light-dark(#0a3069,#a5d6ff));--_code-comment:var(--persona-chat-code-comment-color,light-dark(#57606a,#9ca3af));--_code-number:var(--persona-chat-code-number-color,light-dark(#0550ae,#79c0ff));--_code-function:var(--persona-chat-code-function-color,light-dark(#6639ba,#d2a8ff))}pre .keyword{color:var(--_code-keyword)}pre .string{color:var(--_code-string)}pre .comment{color:var(--_code-comment);font-style:italic}pre .number{color:var(--_code-number)}pre .function{color:var(--_code-function)}';

let sheet: CSSStyleSheet | undefined;

/** Adds the colours of the tokens to the styles of `root` (the element's shadow root), once. */
export function adopt(root: unknown) {
  if (!(root instanceof ShadowRoot)) return;
  if (!sheet) {
    sheet = new CSSStyleSheet();
    sheet.replaceSync(styles);
  }
  if (!root.adoptedStyleSheets.includes(sheet)) root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
}
