import { expect } from '@open-wc/testing';
import { render } from 'lit';
import { MarkdownView, heal, renderMarkdown, safeUrl } from '../../src/element/markdown.js';

const labels = { copyLabel: 'Copy', sourceLabel: (n: number) => `Source ${n}` };

/** The DOM a set of templates makes, as HTML without Lit's comment markers. */
function dom(parts: unknown): string {
  const host = document.createElement('div');
  render(parts, host);
  return host.innerHTML.replace(/<!--[^>]*-->/g, '');
}

const tricky = [
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

describe('markdown', () => {
  it('allows only http(s) and mailto URLs, after decoding and cleaning', () => {
    expect(safeUrl('https://example.com/a?b=c')).to.equal('https://example.com/a?b=c');
    expect(safeUrl('mailto:help@example.com')).to.equal('mailto:help@example.com');
    for (const bad of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      '&#106;avascript:alert(1)',
      'java\tscript:x',
      '\u0001javascript:x',
      'data:text/html,x',
      'vbscript:x',
      '/relative',
      '',
    ]) {
      expect(safeUrl(bad), bad).to.equal(undefined);
    }
  });

  it('renders hostile markdown and HTML as text, and runs nothing', async () => {
    (window as { __xss?: number }).__xss = 0;
    const host = document.createElement('div');
    document.body.append(host);
    render(renderMarkdown(tricky[5]! + '\n\n' + tricky[4]!, labels).parts, host);
    await new Promise(resolve => setTimeout(resolve, 100));
    for (const el of host.querySelectorAll('*')) {
      el.dispatchEvent(new Event('mouseover'));
      el.dispatchEvent(new Event('toggle'));
    }
    expect((window as { __xss?: number }).__xss).to.equal(0);
    expect(host.querySelectorAll('script, img, iframe, details, object, embed, style, form').length).to.equal(0);
    for (const el of host.querySelectorAll('*')) {
      for (const attr of el.attributes) {
        expect(attr.name.startsWith('on'), `${el.tagName} ${attr.name}`).to.equal(false);
        expect(attr.value).not.to.match(/^\s*(javascript|vbscript|data):/i);
      }
    }
    for (const a of host.querySelectorAll('a[href]:not([data-cite])')) {
      expect(a.getAttribute('href')).to.match(/^(https?|mailto):/);
      expect(a.getAttribute('rel')).to.equal('noopener noreferrer nofollow');
      expect(a.getAttribute('target')).to.equal('_blank');
    }
    expect(host.textContent).to.contain('<script>window.__xss = 1</script>');
    expect(host.querySelector('a.image')!.getAttribute('href')).to.equal('https://tracker.example/?q=secret');
    expect(host.textContent).to.contain('AT&T © j');
    host.remove();
  });

  it('turns citation markers into footnotes numbered by first appearance, but not inside code or links', () => {
    const { parts, footnotes } = renderMarkdown(
      'See [3], then [1] and [doc3] again. `[2]` [link [2]](https://example.com)',
      labels,
    );
    const html = dom(parts);
    const host = document.createElement('div');
    render(parts, host);
    const cites = [...host.querySelectorAll('a[data-cite]')].map(a => [a.getAttribute('data-cite'), a.textContent]);
    expect(cites).to.deep.equal([
      ['2', '1'],
      ['0', '2'],
      ['2', '1'],
    ]);
    expect(footnotes.order()).to.deep.equal([2, 0]);
    expect(html).to.contain('<code>[2]</code>');
    expect(host.querySelector('a[href="https://example.com/"]')!.textContent).to.equal('link [2]');
  });

  it('renders every prefix of tricky documents exactly as a full render of that prefix', () => {
    let comparisons = 0;
    for (const doc of tricky) {
      const view = new MarkdownView(labels);
      for (let end = 1; end <= doc.length; end++) {
        const prefix = doc.slice(0, end);
        const streamed = dom(view.render(prefix, false));
        const whole = dom(renderMarkdown(heal(prefix), labels).parts);
        if (streamed !== whole) expect(streamed, `prefix ${JSON.stringify(prefix)}`).to.equal(whole);
        comparisons++;
      }
      expect(dom(view.render(doc, true))).to.equal(dom(renderMarkdown(doc, labels).parts));
    }
    expect(comparisons).to.be.greaterThan(800);
  });

  it('hides a citation marker being typed only while streaming', () => {
    const view = new MarkdownView(labels);
    expect(dom(view.render('as noted [1', false))).to.equal('<p>as noted </p>');
    expect(dom(view.render('as noted [1', true))).to.equal('<p>as noted [1</p>');
  });

  it('gives code blocks a copy button and tables alignment classes, with no inline styles', () => {
    const html = dom(
      renderMarkdown('```ts\nlet a = 1;\n```\n\n| l | c | r |\n|:-|:-:|-:|\n| 1 | 2 | 3 |', labels).parts,
    );
    expect(html).to.contain('<code data-lang="ts">let a = 1;</code>');
    expect(html).to.contain('data-copy');
    expect(html).to.contain('class="align-center"');
    expect(html).not.to.contain('style=');
  });
});
