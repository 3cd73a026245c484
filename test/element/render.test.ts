// The model's markdown tokens as templates: text bound as text, raw HTML shown as text, URLs through the sanitizer,
// images as links, citation markers as footnotes, code blocks and tables as the element styles them, and a block
// that fails to render shown as its text.
import { expect } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { sendKeys } from '@web/test-runner-commands';
import { render } from 'lit';
import { renderMarkdown } from '../../src/element/markdown.js';
import { Footnotes, heading } from '../../src/element/render.js';
import { dom, labels, styled, tricky } from './markdown-support.js';

describe('render', () => {
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

  it('gives code blocks a copy button and tables alignment classes, with no inline styles', () => {
    const html = dom(
      renderMarkdown('```ts\nlet a = 1;\n```\n\n| l | c | r |\n|:-|:-:|-:|\n| 1 | 2 | 3 |', labels).parts,
    );
    expect(html).to.contain('<code data-lang="ts">let a = 1;</code>');
    expect(html).to.contain('data-copy');
    expect(html).to.contain('class="align-center"');
    expect(html).not.to.contain('style=');
  });

  it('puts the copy button of a code block in a bar above the code, never over it', () => {
    const code = '```ts\nconst line = "' + 'x'.repeat(200) + '";\nconst next = 2;\n```';
    const { host, root } = styled(renderMarkdown(code, labels).parts);
    const button = root.querySelector<HTMLButtonElement>('[part="copy-button"]')!;
    expect(button.textContent).to.equal('Copy');
    const a = button.getBoundingClientRect();
    const b = root.querySelector('pre')!.getBoundingClientRect();
    expect(a.width).to.be.greaterThan(0);
    const overlaps = a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    expect(overlaps, 'the button overlaps the code').to.equal(false);
    host.remove();
  });

  it('lets the keyboard reach and scroll a code block, which is named by its language and shows its focus', async () => {
    const code = '```ts\nconst line = "' + 'x'.repeat(300) + '";\n```\n\n```\nplain\n```';
    const { host, root } = styled(renderMarkdown(code, labels).parts);
    const [pre, plain] = root.querySelectorAll('pre');
    expect([pre!.getAttribute('aria-label'), plain!.getAttribute('aria-label')]).to.deep.equal(['ts code', 'Code']);
    expect(pre!.scrollWidth, 'the code overflows').to.be.greaterThan(pre!.clientWidth);
    root.querySelector<HTMLButtonElement>('[part="copy-button"]')!.focus();
    await sendKeys({ press: 'Tab' });
    expect(root.activeElement).to.equal(pre);
    const { outlineStyle, outlineWidth } = getComputedStyle(pre!);
    expect([outlineStyle, outlineWidth]).to.deep.equal(['solid', '2px']);
    await sendKeys({ press: 'ArrowRight' });
    await waitUntil(() => pre!.scrollLeft > 0, 'the code scrolls');
    await expect(host).to.be.accessible();
    host.remove();
  });

  it('aligns a header cell as its column, and an unaligned column at the start', () => {
    const { host, root } = styled(renderMarkdown('| l | c | r | n |\n|:-|:-:|-:|-|\n| 1 | 2 | 3 | 4 |', labels).parts);
    const aligned = (cell: string) => [...root.querySelectorAll(cell)].map(el => getComputedStyle(el).textAlign);
    expect(aligned('th')).to.deep.equal(['start', 'center', 'end', 'start']);
    expect(aligned('td')).to.deep.equal(['start', 'center', 'end', 'start']);
    host.remove();
  });

  it('draws a task as a disabled checkbox labelled by its text, without its marker', () => {
    const tight = '- [x] Pack the **tent**\n- [ ] Book a site [1]\n  - [X] Call ahead\n';
    const loose = '- [x] Pack the **tent**\n\n- [ ] Book a site [1]\n\n  - [X] Call ahead\n';
    for (const text of [tight, loose]) {
      const host = document.createElement('div');
      document.body.append(host);
      render(renderMarkdown(text, labels).parts, host);
      const boxes = [...host.querySelectorAll('input')];
      expect(
        boxes.map(box => [box.type, box.disabled, box.checked]),
        text,
      ).to.deep.equal([
        ['checkbox', true, true],
        ['checkbox', true, false],
        ['checkbox', true, true],
      ]);
      expect(boxes.map(box => [...box.labels!].map(label => label.textContent!.trim()))).to.deep.equal([
        ['Pack the tent'],
        ['Book a site 1'],
        ['Call ahead'],
      ]);
      expect(host.querySelector('label strong')!.textContent).to.equal('tent');
      expect(host.querySelector('label a[data-cite]')!.getAttribute('aria-label')).to.equal('Source 1');
      expect(host.textContent).not.to.match(/\[[ xX]\]/);
      host.remove();
    }
  });

  it('shows a block whose lexing or rendering throws as its text, and renders the rest', () => {
    // The lexer reads each line with regular expressions: its rule for headings throws on this one.
    const exec = RegExp.prototype.exec;
    RegExp.prototype.exec = function (text) {
      if (text === '# boom' && this.source.includes('#{1,6}')) throw new Error('boom');
      return exec.call(this, text);
    };
    try {
      const host = document.createElement('div');
      render(renderMarkdown('Before **this**.\n\n# boom\n\nAfter *that*.', labels).parts, host);
      expect(host.querySelector('strong')!.textContent).to.equal('this');
      expect(host.querySelector('em')!.textContent).to.equal('that');
      expect(host.querySelector('h3')).to.equal(null);
      expect(host.textContent).to.contain('# boom');
    } finally {
      RegExp.prototype.exec = exec;
    }
    const number = Footnotes.prototype.number;
    Footnotes.prototype.number = () => {
      throw new Error('boom');
    };
    try {
      const host = document.createElement('div');
      render(renderMarkdown('A claim [1].\n\n- **one**\n- two', labels).parts, host);
      expect(host.querySelector('p')!.textContent).to.equal('A claim [1].');
      expect(host.querySelector('li strong')!.textContent).to.equal('one');
    } finally {
      Footnotes.prototype.number = number;
    }
  });

  it('draws a heading at the level it is given, kept between 1 and 6', () => {
    const tags = [0, 1, 3, 6, 9].map(level => {
      const host = document.createElement('div');
      render(heading(level, 'Sources'), host);
      return `${host.firstElementChild!.tagName} ${host.textContent}`;
    });
    expect(tags).to.deep.equal(['H1 Sources', 'H1 Sources', 'H3 Sources', 'H6 Sources', 'H6 Sources']);
  });
});
