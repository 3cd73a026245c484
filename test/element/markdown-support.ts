// What the tests of a reply's markdown share (markdown, render, sanitize, clipboard): the labels of a view, the DOM
// templates make, templates drawn with the element's styles, and documents that trip up a renderer.
import { adoptStyles, html, render } from 'lit';
import { styles } from '../../src/element/persona-chat.styles.js';

/** The labels of a markdown view, as the element's English strings give them. */
export const labels = {
  copyLabel: 'Copy',
  codeLabel: (language: string) => (language ? `${language} code` : 'Code'),
  sourceLabel: (n: number) => `Source ${n}`,
};

/** A DOM as HTML without Lit's comment markers. */
export const markup = (host: Element) => host.innerHTML.replace(/<!--[^>]*-->/g, '');

/** The DOM a set of templates makes, as HTML without Lit's comment markers. */
export function dom(parts: unknown): string {
  const host = document.createElement('div');
  render(parts, host);
  return markup(host);
}

/** Templates drawn as the element draws a reply: in a shadow root with the element's styles, in `.markdown`. */
export function styled(parts: unknown, width = 320) {
  const host = document.createElement('div');
  host.style.inlineSize = `${width}px`;
  document.body.append(host);
  const root = host.attachShadow({ mode: 'open' });
  adoptStyles(root, styles);
  render(html`<div class="markdown">${parts}</div>`, root);
  return { host, root };
}

/**
 * Documents with every kind of block, written the ways that trip up a renderer: lists and headings without blank
 * lines, setext headings, tables, task items, citation markers in code; links and images, some of them unsafe; raw
 * HTML with scripts and handlers.
 */
export const tricky = [
  'Here are the options:\n- one\n- two\n1. three\n2. four\n* five\nText right after.\n# Heading\nPara\n===\n| a | b |\n|--|--|\n| 1 | 2 |\nafter table\n> quote\nlazy\n```\ncode\n```\n- [ ] task\n  continued\n\n2) paren\n3) list\npara\n    not code\n\n    code\n',
  'Intro paragraph [1].\n\n- one\n- two [2]\n\n2. second\n3. third\n\n```js\nconst x = "[3]";\n```\n\nAfter the code [doc3].\n',
  '# Title\n\nSome **bold** and *em* and `code [1]` and ~~gone~~.\n\n> quote\n> more [2]\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n| [1] | x |\n\nEnd.',
  'para\n#x\n\n1. a\n\n2. b\n\n   nested para\n\n- [ ] task\n- [x] done\n\n***\n\nsetext\n===\n\n    indented code\n\nlast',
  'Links: [site](https://example.com "t"), <https://auto.example>, www.example.com, [bad](javascript:alert(1)).\n\n' +
    '![img](https://tracker.example/?q=secret) and [![nested](https://x.example/i.png)](https://example.com)\n\nAT&amp;T &copy; &#106;',
  '<script>window.__xss = 1</script>\n\n<img src=x onerror="window.__xss=1">\n\n<iframe src="javascript:alert(1)"></iframe>\n\n' +
    '[click](JAVASCRIPT:alert(1)) [c2](&#106;avascript:alert(1)) [c3](java\tscript:alert(1)) [c4](data:text/html,<script>x</script>) ' +
    '<details open ontoggle="window.__xss=1">x</details> <a href="javascript:alert(1)">raw</a>',
];

/** Documents whose prefixes leave things open for a while: emphasis, code spans, links, images and fences. */
export const unfinished = [
  'Shipping is **free over $50**, and *returns* take ~~30~~ 14 days.\n\nRun `npm install`, then see [the guide](https://example.com/guide "Guide") or ![a chart](https://example.com/c.png).\n\n- **one** and [two [1]](https://example.com/2)\n- three `x` [1]\n\n```js\nconst a = **b**;\n```\n\n> quoted _em_ and __strong__\n',
];
