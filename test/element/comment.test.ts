// The comment box of a thumbs-down, the chunk loaded on the first one: its field, what sending and Escape give, and
// its styles added to the shadow root it is drawn in.
import { expect } from '@open-wc/testing';
import { html, render } from 'lit';
import { commentForm, style } from '../../src/element/comment.js';
import { resolveStrings } from '../../src/element/strings.js';

describe('the comment box', () => {
  let host: HTMLElement | undefined;
  afterEach(() => host?.remove());

  /** The box drawn in a shadow root of its own, with its styles; what it sends is noted. */
  function drawn() {
    host = document.createElement('div');
    document.body.append(host);
    const root = host.attachShadow({ mode: 'open' });
    style(root);
    const sent: string[] = [];
    render(
      commentForm(html, resolveStrings(), comment => void sent.push(comment)),
      root,
    );
    return { root, sent };
  }

  it('asks what went wrong, follows the direction of its text, and sends it trimmed', async () => {
    const { root, sent } = drawn();
    const box = root.querySelector<HTMLTextAreaElement>('form.comment textarea')!;
    expect([box.getAttribute('aria-label'), box.placeholder, box.maxLength]).to.deep.equal([
      'What went wrong? (optional)',
      'What went wrong? (optional)',
      1000,
    ]);
    expect(getComputedStyle(root.querySelector('form.comment')!).display, 'its styles').to.equal('flex');
    expect(box.dir, 'empty: the panel’s direction').to.equal('');
    box.value = '  The tent was the wrong size.  ';
    box.dispatchEvent(new Event('input'));
    expect(box.dir, 'typed in: the direction of its text').to.equal('auto');
    const send = root.querySelector<HTMLButtonElement>('form.comment [type="submit"]')!;
    expect(send.textContent).to.equal('Send feedback');
    send.click();
    expect(sent).to.deep.equal(['The tent was the wrong size.']);
    await expect(root.querySelector('form')).to.be.accessible();
  });

  it('is left with Escape, which goes no further', () => {
    const { root, sent } = drawn();
    const heard: string[] = [];
    host!.addEventListener('keydown', event => void heard.push(event.key));
    const box = root.querySelector('textarea')!;
    for (const key of ['Escape', 'a']) {
      box.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, composed: true }));
    }
    expect(sent).to.deep.equal(['']);
    expect(heard, 'Escape does not reach the panel, which would close').to.deep.equal(['a']);
  });
});
