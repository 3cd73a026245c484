// The incremental markdown view: what a reply shows while it streams and once it ends, its blocks settled and cut
// in chunks, nesting bounded on hostile text; and the Sources and pieces of a reply as the messages draw them.
import { expect, fixture, html } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { render } from 'lit';
import { Lexer } from 'marked';
import type { Token, Tokens } from 'marked';
import { close } from '../../src/element/close.js';
import { lex } from '../../src/element/render.js';
import { MarkdownView, heal, loadCloser, maxDepth, renderMarkdown } from '../../src/element/markdown.js';
import { forgetViews, renderHistoryItem, renderTurn } from '../../src/element/messages.js';
import type { RenderContext } from '../../src/element/messages.js';
import type { HistoryItem, Turn, TurnStatus } from '../../src/element/state.js';
import { resolveStrings } from '../../src/element/strings.js';
import { hostileInputs, pieces } from '../bench/hostile.js';
import { makeList, makeTable } from '../bench/reply.js';
import type { PersonaChat } from '../../src/element/persona-chat.js';
import { Harness, resetAll } from './harness.js';
import { dom, labels, markup, styled, tricky, unfinished } from './markdown-support.js';

/** A text cut in pieces of 1 to 300 characters, the same way every time. */
const randomPieces = (text: string, seed: number) => pieces(text, seed, 1, 300);

// First in the file: no code has been drawn in this page before it, so the highlighter has not been loaded.
describe('<persona-chat> drawing replies', () => {
  /** The element on the hostile stack, whose stand-in model a test's message steers (one about shipping). */
  const open = async (style = '') =>
    new Harness(
      await fixture<PersonaChat>(
        html`<persona-chat endpoint="/hostile-chat" mode="inline" storage="none" style=${style}></persona-chat>`,
      ),
    );
  /** Whether the page asked for the highlighter's code. */
  const highlighterRequested = () =>
    performance.getEntriesByType('resource').some(entry => /\/highlight\b/.test(entry.name));

  beforeEach(resetAll);

  it('never loads the highlighter for a reply without code', async () => {
    const h = await open();
    void h.el.send('How long does shipping take?').catch(() => {});
    await h.settled();
    expect(h.lastReply()!.textContent).to.contain('A plain answer');
    expect(highlighterRequested()).to.equal(false);
  });

  it('shows open emphasis closed while a reply streams, and the final text as it is drawn at once', async () => {
    const h = await open();
    const id = Math.random().toString(36).slice(2);
    void h.el.send(`How long does shipping take? held ${id}`).catch(() => {});
    await waitUntil(() => h.lastReply()?.querySelector('.markdown strong'), 'the open emphasis drawn closed');
    const reply = h.lastReply()!;
    expect(h.el.getAttribute('turn-status')).to.equal('streaming');
    expect(reply.querySelector('strong')!.textContent).to.equal('free');
    expect(reply.textContent).not.to.contain('*');
    await fetch(`/test-support/release?id=${id}`, { method: 'POST' });
    await h.settled();
    const text = 'Shipping is **free over $50** and returns take `30 days`.';
    expect(markup(h.lastReply()!.querySelector('.markdown')!)).to.equal(dom(renderMarkdown(text, labels).parts));
  });

  it('highlights code with a language once the highlighter has come, in the colours the page sets', async () => {
    const h = await open('--persona-chat-code-keyword-color: rgb(1, 2, 3)');
    void h.el.send('How long does shipping take?').catch(() => {});
    await h.settled();
    const plain = h.lastReply()!.querySelector('.markdown')!;
    void h.el.send('How long does shipping take, in javascript?').catch(() => {});
    await h.settled();
    await waitUntil(() => h.lastReply()!.querySelector('pre .keyword'), 'a highlighted keyword');
    // Only the replies with code are drawn again: the one before is the same DOM (a selection in it stays).
    expect(h.el.shadowRoot!.querySelector('.message.assistant .markdown')).to.equal(plain);
    const keyword = h.lastReply()!.querySelector('pre .keyword')!;
    expect(highlighterRequested()).to.equal(true);
    expect(keyword.textContent).to.equal('const');
    expect(getComputedStyle(keyword).color).to.equal('rgb(1, 2, 3)');
    const comment = h.lastReply()!.querySelector('pre .comment')!;
    expect(getComputedStyle(comment).color).not.to.equal(getComputedStyle(comment.parentElement!).color);
    // What the copy button copies: the code as written.
    expect(h.lastReply()!.querySelector('pre code')!.textContent).to.equal('const size = 2; // people');
    expect(h.lastReply()!.querySelector('[part="copy-button"]')).to.not.equal(null);
  });
});

describe('markdown', () => {
  // A streaming reply closes what it leaves open once `close()` has come, which a sent message asks for.
  before(() => loadCloser());

  it('leaves a marker with no source as plain text once the sources are known, and draws again when they come', () => {
    const text = 'Shipping takes 3 days [1]. Returns are free [2].\n\nMore [1].\n\nAnd more.\n\nEnd.\n';
    const view = new MarkdownView(labels);
    const host = document.createElement('div');
    const cites = () => [...host.querySelectorAll('a[data-cite]')].map(a => a.getAttribute('data-cite'));
    render(view.render(text, false), host);
    expect(cites()).to.deep.equal(['0', '1', '0'], 'while streaming, before its sources, every marker is a footnote');
    view.setCitationCount(1);
    render(view.render(text, true), host);
    expect(cites()).to.deep.equal(['0', '0'], 'settled blocks drawn again');
    expect(host.textContent).to.contain('Returns are free [2].');
    view.setCitationCount(0);
    render(view.render(text, true), host);
    expect(cites()).to.deep.equal([]);
    expect(host.textContent).to.contain('Shipping takes 3 days [1].');
  });

  it('renders every prefix of tricky documents exactly as a full render of that prefix, healed and closed', () => {
    let comparisons = 0;
    for (const doc of [...tricky, ...unfinished]) {
      const view = new MarkdownView(labels);
      for (let end = 1; end <= doc.length; end++) {
        const prefix = doc.slice(0, end);
        const streamed = dom(view.render(prefix, false));
        const healed = heal(prefix);
        const whole = dom(renderMarkdown(close(healed, lex(healed)), labels).parts);
        if (streamed !== whole) expect(streamed, `prefix ${JSON.stringify(prefix)}`).to.equal(whole);
        comparisons++;
      }
      expect(dom(view.render(doc, true))).to.equal(dom(renderMarkdown(doc, labels).parts));
    }
    expect(comparisons).to.be.greaterThan(800);
  });

  it('shows what the end of a streamed text leaves open closed, and the final text as written', () => {
    const view = new MarkdownView(labels);
    expect(dom(view.render('Shipping is **free', false))).to.equal('<p>Shipping is <strong>free</strong></p>');
    expect(dom(view.render('Shipping is **free', true))).to.equal('<p>Shipping is **free</p>');
    expect(dom(view.render('See [the guide](https://exa', false))).to.equal('<p>See the guide</p>');
    expect(dom(view.render('See [the guide](https://example.com)', false))).to.match(
      /^<p>See <a [^>]*href="https:\/\/example.com\/"[^>]*>the guide<\/a><\/p>$/,
    );
  });

  it('hides a citation marker being typed only while streaming', () => {
    const view = new MarkdownView(labels);
    expect(dom(view.render('as noted [1', false))).to.equal('<p>as noted </p>');
    expect(dom(view.render('as noted [1', true))).to.equal('<p>as noted [1</p>');
  });

  it('renders another view in the same place with its own blocks', () => {
    const host = document.createElement('div');
    const first = new MarkdownView(labels);
    render(first.render('First one.\n\nFirst two.\n\nFirst three.\n\nFirst four.', false), host);
    const second = new MarkdownView(labels);
    render(second.render('Second one.\n\nSecond two.\n\nSecond three.\n\nSecond four.', false), host);
    expect(host.textContent).not.to.contain('First');
  });

  it('reads carriage returns as line breaks', () => {
    const text = 'Intro\r\n\r\n- one\r\n- two\r\n\r\nEnd **bold**\r\n';
    expect(markup(stream(text, randomPieces(text, 8)))).to.equal(
      dom(renderMarkdown(text.replace(/\r\n/g, '\n'), labels).parts),
    );
  });
});

describe('the Sources of a reply', () => {
  const context: RenderContext = {
    strings: resolveStrings(),
    speaker: 'Juniper',
    locale: 'en',
    actions: { retry: () => {}, feedback: () => {} },
    commenting: null,
    thanked: null,
  };
  const reply = (id: string): HistoryItem => ({
    id,
    role: 'assistant',
    text: 'Tents ship in 3 days [2]. Returns are free [1].',
    messageId: null,
    createdAt: null,
    citations: [
      {
        sourceName: 'Returns',
        sourceUrl: 'https://shop.example.com/help/returns',
        partitions: [{ text: 'Returns are free within 30 days.', relevance: 0.9 }],
      },
      {
        sourceName: 'Shipping',
        sourceUrl: 'https://shop.example.com/help/shipping',
        partitions: [{ text: '3 days.' }],
      },
      { documentId: 'notes' },
    ],
  });

  it('puts the Sources heading one below the panel’s title, level with the reply’s own top headings', () => {
    const item = { ...reply('a'), text: '# Plan\n\n## Steps\n\nReturns are free [1].' };
    const headings = (context: RenderContext) => {
      const host = document.createElement('div');
      render(renderHistoryItem({}, item, context), host);
      return [...host.querySelectorAll('h1, h2, h3, h4, h5, h6')].map(h => `${h.tagName} ${h.textContent}`);
    };
    expect(headings(context)).to.deep.equal(['H3 Plan', 'H4 Steps', 'H3 Sources']);
    expect(headings({ ...context, headingLevel: 4 }), 'from one level').to.deep.equal([
      'H4 Plan',
      'H5 Steps',
      'H4 Sources',
    ]);
  });

  it('gives each source a disclosure button for its passages and a link beside it, never inside it', async () => {
    const owner = {};
    const { host, root } = styled([
      renderHistoryItem(owner, reply('a'), context),
      renderHistoryItem(owner, reply('b'), context),
    ]);
    const sources = [...root.querySelectorAll<HTMLLIElement>('.item:first-child [part="citations"] li')];
    expect(sources.map(li => li.querySelector('.source-name')!.textContent)).to.deep.equal([
      'Shipping',
      'Returns',
      'notes',
    ]);
    expect(root.querySelectorAll('summary, details, button a, a button').length, 'nested interactive').to.equal(0);
    const [shipping] = sources;
    const button = shipping!.querySelector('button')!;
    const passages = root.getElementById(button.getAttribute('aria-controls')!)!;
    expect(passages.closest('li')).to.equal(shipping);
    expect(passages.textContent).to.contain('3 days.');
    expect(shipping!.querySelector('a')!.getAttribute('href')).to.equal('https://shop.example.com/help/shipping');
    expect(shipping!.querySelector('a')!.textContent).to.equal('shop.example.com');
    expect([button.getAttribute('aria-expanded'), passages.checkVisibility()]).to.deep.equal(['false', false]);
    button.click();
    expect([button.getAttribute('aria-expanded'), passages.checkVisibility()]).to.deep.equal(['true', true]);
    button.click();
    expect([button.getAttribute('aria-expanded'), passages.checkVisibility()]).to.deep.equal(['false', false]);
    expect(sources[2]!.querySelector('button, a'), 'no passages and no address: its name alone').to.equal(null);
    const ids = [...root.querySelectorAll('[aria-controls]')].map(el => el.getAttribute('aria-controls'));
    expect(new Set(ids).size).to.equal(4, 'every disclosure controls passages of its own');
    button.click();
    // The muted grey of the Sources heading and passages on a reply's grey is being changed apart from this.
    await expect(host).to.be.accessible({ ignoredRules: ['color-contrast'] });
    host.remove();
  });
});

/** How deep elements nest under a node (its children are at depth 1). */
function depthOf(node: Element): number {
  let deepest = 0;
  for (const child of node.children) deepest = Math.max(deepest, 1 + depthOf(child));
  return deepest;
}

/** The text a DOM shows, without the copy buttons of code blocks. */
function shownText(host: Element): string {
  const copy = host.cloneNode(true) as Element;
  copy.querySelectorAll('button').forEach(button => button.remove());
  return copy.textContent ?? '';
}

const count = (text: string, char: string) => text.split(char).length - 1;

/** How deep elements matching a selector nest in one another. */
function nesting(host: Element, selector: string): number {
  let deepest = 0;
  for (const el of host.querySelectorAll(selector)) {
    let depth = 0;
    for (let at: Element | null = el; at && at !== host; at = at.parentElement) if (at.matches(selector)) depth++;
    deepest = Math.max(deepest, depth);
  }
  return deepest;
}

/**
 * Elements a nesting limit allows: two per container (`ul` and `li`), one per span, and a paragraph, a link and a
 * footnote's `sup` around them.
 */
const depthBound = 3 * maxDepth + 3;

/** Streams a text into a fresh host, rendering after every piece, then renders it final. */
function stream(text: string, parts: string[] = pieces(text)) {
  const host = document.createElement('div');
  const view = new MarkdownView(labels);
  let received = '';
  for (const piece of parts) {
    received += piece;
    render(view.render(received, false), host);
  }
  render(view.render(text, true), host);
  return host;
}

describe('markdown from a hostile model', () => {
  for (const [name, text] of Object.entries(hostileInputs)) {
    it(`streams ${name} with all its text and bounded nesting, as it renders at once`, () => {
      const host = stream(text);
      const shown = shownText(host);
      // Letters are never markup: every one of them shows.
      for (const letter of new Set(text.match(/[a-z]/g))) {
        expect(count(shown, letter), letter).to.equal(count(text, letter));
      }
      expect(depthOf(host)).to.be.at.most(depthBound);
      expect(markup(host)).to.equal(dom(renderMarkdown(text, labels).parts));
    });
  }

  it('keeps the markers of containers nested too deep as text', () => {
    const lists = stream(hostileInputs['list markers']!);
    expect(nesting(lists, 'ul')).to.equal(maxDepth);
    expect(count(shownText(lists), '-')).to.equal(1000 - maxDepth);
    const quotes = stream(hostileInputs['quote markers']!);
    expect(nesting(quotes, 'blockquote')).to.equal(maxDepth);
    expect(count(shownText(quotes), '>')).to.equal(5000 - maxDepth);
    const indented = stream(hostileInputs['indented list']!);
    expect(nesting(indented, 'ul')).to.equal(maxDepth);
    expect(count(shownText(indented), 'item')).to.equal(300);
    const mixed = stream('> - 1. '.repeat(100) + 'x');
    expect(nesting(mixed, 'blockquote, ul, ol')).to.equal(maxDepth);
    expect(depthOf(mixed)).to.be.at.most(depthBound);
  });

  it('keeps spans nested too deep as text', () => {
    const text = '*a '.repeat(40) + 'x' + ' a*'.repeat(40);
    const host = stream(text);
    expect(nesting(host, 'em')).to.equal(maxDepth);
    expect(count(shownText(host), '*')).to.equal(2 * (40 - maxDepth));
    expect(count(shownText(host), 'a')).to.equal(80);
    expect(depthOf(host)).to.be.at.most(maxDepth + 1);
    const mixed = stream('**_~~['.repeat(30) + 'x' + '](https://example.com)~~_**'.repeat(30));
    expect(depthOf(mixed)).to.be.at.most(depthBound);
    expect(shownText(mixed)).to.contain('x');
  });

  it('pairs long delimiter runs only so deep, and shows the rest as written', () => {
    const host = stream(hostileInputs['emphasis runs']!);
    expect(nesting(host, 'strong')).to.equal(maxDepth);
    expect(host.querySelectorAll('em').length).to.equal(0);
    expect(count(shownText(host), '*')).to.equal(6000 - 4 * maxDepth);
    expect(shownText(stream(hostileInputs.underscores!)).replace(/\s/g, '')).to.equal(hostileInputs.underscores);
  });

  it('renders every empty fenced code block', () => {
    expect(stream(hostileInputs.fences!).querySelectorAll('pre code').length).to.equal(6000);
  });

  it('lexes many block quotes, with lazy lines and quotes inside, as marked does', () => {
    const text =
      Array.from({ length: 300 }, (_, i) => `> quote ${i}\nlazy ${i}\n> > nested ${i}\n\npara ${i}\n`).join('\n') +
      '\n' +
      '> a long quote\n'.repeat(30);
    const host = stream(text);
    const quotes = [...host.querySelectorAll(':scope > blockquote')];
    expect(quotes.length).to.equal(301);
    expect(quotes.slice(0, 300).map(quote => quote.querySelector('p')!.textContent)).to.deep.equal(
      Array.from({ length: 300 }, (_, i) => `quote ${i}\nlazy ${i}`),
    );
    expect(host.querySelectorAll('blockquote blockquote').length).to.equal(300);
    expect(count(quotes[300]!.textContent!, 'a long quote')).to.equal(30);
    const tokens = (list: Token[]): number =>
      list.reduce((n, t) => n + (t.type === 'blockquote' ? 1 + tokens((t as Tokens.Blockquote).tokens) : 0), 0);
    expect(host.querySelectorAll('blockquote').length).to.equal(tokens(Lexer.lex(text, { gfm: true })));
  });
});

describe('markdown in chunks', () => {
  /** Sections with blocks of every kind, about 400 characters each. */
  const sections = (from: number, to: number) =>
    Array.from(
      { length: to - from },
      (_, n) =>
        `## Section ${from + n}\n\nSome **bold** and [a link](https://example.com/${n}) [${(n % 5) + 1}].\n\n` +
        `- one\n- two\n\n\`\`\`ts\nconst a = [${n}];\n\n# not a heading\n\`\`\`\n\n> quote\n\n| a | b |\n|---|---|\n| 1 | *2* |\n`,
    ).join('\n');

  it('cuts only where the cut changes nothing, and streams as it renders at once', () => {
    const text = sections(0, 200);
    const host = stream(text, randomPieces(text, 3));
    expect(host.querySelectorAll('h4').length).to.equal(200);
    expect(host.querySelectorAll('strong').length).to.equal(200);
    expect(host.querySelectorAll('a[href^="https://example.com/"]').length).to.equal(200);
    expect(host.querySelectorAll('sup.cite').length).to.equal(200);
    expect(host.querySelectorAll('ul > li').length).to.equal(400);
    expect(host.querySelectorAll('pre code').length).to.equal(200);
    for (const code of host.querySelectorAll('pre code')) expect(code.textContent).to.contain('# not a heading');
    expect(host.querySelectorAll('blockquote').length).to.equal(200);
    expect(host.querySelectorAll('tbody tr').length).to.equal(200);
    expect(markup(host)).to.equal(dom(renderMarkdown(text, labels).parts));
  });

  it('opens long code and tables again after a cut, and streams them as it renders at once', () => {
    const lines = Array.from({ length: 1500 }, (_, i) => `line ${i}`);
    const code = '```js\n' + lines.join('\n\n') + '\n```\n\nafter';
    const codeHost = stream(code, randomPieces(code, 5));
    const blocks = [...codeHost.querySelectorAll('pre code')];
    expect(blocks.length).to.be.greaterThan(1);
    expect(blocks.every(block => block.getAttribute('data-lang') === 'js')).to.equal(true);
    // Every line, in order; a cut may fall on a blank line.
    expect(blocks.flatMap(block => block.textContent!.split(/\n+/).filter(Boolean))).to.deep.equal(lines);
    expect(markup(codeHost)).to.equal(dom(renderMarkdown(code, labels).parts));

    const table = '| n | square |\n|--:|:--|\n' + lines.map((_, i) => `| ${i} | ${i * i} |`).join('\n') + '\n\nafter';
    const tableHost = stream(table, randomPieces(table, 6));
    expect(tableHost.querySelectorAll('table').length).to.be.greaterThan(1);
    expect(tableHost.querySelectorAll('tbody tr').length).to.equal(1500);
    expect(tableHost.querySelectorAll('td.align-right').length).to.equal(1500);
    expect(markup(tableHost)).to.equal(dom(renderMarkdown(table, labels).parts));
  });

  it('applies a link reference definition to the blocks before it in its chunk', () => {
    // The paragraph that uses a definition settles before it comes, as more than a piece comes between them: once
    // in a chunk that is cut later, once in the last chunk. (A chunk can be cut before an unindented paragraph or
    // definition, which then applies to the chunks after it only; an indent keeps it in the chunk of its use.)
    const uses = (label: string) =>
      `See [the docs][${label}].\n\n${' A paragraph that is long enough.\n\n'.repeat(12)} [${label}]: https://${label}.example.com\n\n`;
    const text = sections(0, 40) + uses('early') + sections(40, 80) + uses('late');
    const host = stream(text, randomPieces(text, 7));
    expect(host.querySelectorAll('a[href="https://early.example.com/"]').length).to.equal(1);
    expect(host.querySelectorAll('a[href="https://late.example.com/"]').length).to.equal(1);
    expect(markup(host)).to.equal(dom(renderMarkdown(text, labels).parts));
  });
});

describe('a long reply', () => {
  const strings = resolveStrings();
  const context: RenderContext = {
    strings,
    speaker: 'Juniper',
    locale: 'en',
    actions: { retry: () => {}, feedback: () => {} },
    commenting: null,
    thanked: null,
  };
  /** The labels the element's views have. */
  const viewLabels = { copyLabel: strings.copy, codeLabel: strings.code, sourceLabel: strings.source };
  const citations = [{ sourceName: 'Catalogue', sourceUrl: 'https://shop.example.com/catalogue' }];
  const table = makeTable(3000);
  const list = makeList(3000);
  /** The rows of the table, cell by cell, as the text has them. */
  const rows = table
    .split('\n')
    .filter(line => /^\| \d/.test(line))
    .map(line => line.slice(2, -2).split(' | '));
  const cells = (host: Element) =>
    [...host.querySelectorAll('tbody tr')].map(tr => [...tr.children].map(cell => cell.textContent));
  const reply = (text: string): HistoryItem => ({
    id: 'long',
    role: 'assistant',
    text,
    messageId: null,
    createdAt: null,
    citations,
  });
  const turn = (status: TurnStatus, text: string): Turn => ({
    id: 'turn',
    key: 'key',
    text: 'Everything?',
    status,
    reply: text,
    citations: [],
    messageId: null,
    finishReason: null,
    lastEventId: null,
    attempt: 1,
    error: null,
    createdAt: null,
  });
  /** The markup of the text rendered at once, with `count` sources. */
  const atOnce = (text: string, count: number) =>
    dom(renderMarkdown(text, { ...viewLabels, citationCount: count }).parts);

  it('renders a final text in pieces of whole chunks, each render giving the parts before too', () => {
    const view = new MarkdownView(labels);
    const sizes: number[] = [];
    let parts = view.render(table, true, 6_144);
    for (; view.more; parts = view.render(table, true, 6_144)) sizes.push(parts.length);
    expect(sizes.length, 'pieces before the last').to.be.greaterThan(20);
    expect(
      sizes.every((size, i) => size > (sizes[i - 1] ?? 0)),
      'each piece adds parts',
    ).to.equal(true);
    expect(dom(parts)).to.equal(dom(renderMarkdown(table, labels).parts));
    expect(view.render(table, true, 6_144), 'a render of the same text again').to.equal(parts);
  });

  for (const [name, text] of [
    ['a table of 3,000 rows', table],
    ['a list of 3,000 items', list],
  ] as const) {
    it(`draws ${name} a piece per task, busy until the last, then as at once`, async () => {
      const host = document.createElement('div');
      render(renderHistoryItem({}, reply(text), context), host);
      const markdown = host.querySelector('.markdown')!;
      const shown = () => markdown.querySelectorAll('tbody tr, li').length;
      expect(markdown.getAttribute('aria-busy'), 'busy while pieces are to come').to.equal('true');
      expect(shown()).to.be.greaterThan(0).and.lessThan(3000);
      expect(host.querySelector('[part="citations"]'), 'the sources come after the text').to.equal(null);
      // While partial, every table is whole: its head, and rows of as many cells.
      for (const table of markdown.querySelectorAll('table')) {
        const columns = table.querySelectorAll('thead th').length;
        expect(columns).to.equal(4);
        for (const row of table.querySelectorAll('tbody tr')) expect(row.children.length).to.equal(columns);
      }
      await waitUntil(() => !markdown.hasAttribute('aria-busy'), 'every piece drawn', { timeout: 30_000 });
      expect(shown()).to.equal(3000);
      if (text === table) expect(cells(markdown)).to.deep.equal(rows);
      expect(markup(markdown)).to.equal(atOnce(text, citations.length));
      expect(markdown.nextElementSibling?.getAttribute('part')).to.equal('citations');
    }).timeout(40_000);
  }

  it('stops drawing the pieces of a reply that is drawn anew, and draws the new one whole', async () => {
    const owner = {};
    const host = document.createElement('div');
    render(renderHistoryItem(owner, reply(table), context), host);
    const before = host.querySelector('.markdown')!;
    forgetViews(owner);
    render(renderHistoryItem(owner, reply(list), context), host);
    const markdown = host.querySelector('.markdown')!;
    await waitUntil(() => !markdown.hasAttribute('aria-busy'), 'every piece drawn', { timeout: 30_000 });
    expect(host.contains(before)).to.equal(false);
    expect(before.getAttribute('aria-busy'), 'the reply drawn before drew no more').to.equal('true');
    expect(markup(markdown)).to.equal(atOnce(list, citations.length));
  }).timeout(40_000);

  it('ends a streamed reply in the DOM it streamed into, however long', () => {
    const owner = {};
    const host = document.createElement('div');
    let received = '';
    for (const piece of pieces(table, 1, 1500, 1)) {
      received += piece;
      render(renderTurn(owner, turn('streaming', received), false, context), host);
    }
    const markdown = host.querySelector('.markdown')!;
    const firstRow = markdown.querySelector('tbody tr')!;
    render(renderTurn(owner, turn('done', table), false, context), host);
    expect(host.querySelector('.markdown'), 'the same element').to.equal(markdown);
    expect(markdown.contains(firstRow), 'its rows drawn while it streamed').to.equal(true);
    expect(markdown.hasAttribute('aria-busy')).to.equal(false);
    expect(cells(markdown)).to.deep.equal(rows);
    expect(markup(markdown)).to.equal(atOnce(table, 0));
  });

  it('draws a streamed reply anew, in pieces, when much of it came while nothing was drawn', async () => {
    const owner = {};
    const host = document.createElement('div');
    render(renderTurn(owner, turn('streaming', table.slice(0, 20_000)), false, context), host);
    render(renderTurn(owner, turn('done', table), false, context), host);
    const markdown = host.querySelector('.markdown')!;
    expect(markdown.getAttribute('aria-busy')).to.equal('true');
    await waitUntil(() => !markdown.hasAttribute('aria-busy'), 'every piece drawn', { timeout: 30_000 });
    expect(cells(markdown)).to.deep.equal(rows);
    expect(markup(markdown)).to.equal(atOnce(table, 0));
  }).timeout(40_000);
});
