import { expect, fixture, html } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import { Transcript } from '../../src/element/transcript.js';

/** A message with a footnote, a code block (focusable to scroll) and a button, as a reply has. */
const message = (n: number) =>
  `<div role="article" aria-label="Reply ${n}"><p>Text ${n}<a href="#s${n}">1</a></p><pre tabindex="0">code</pre><button>Copy ${n}</button></div>`;

async function transcript(count: number) {
  const host = await fixture<HTMLDivElement>(
    html`<div><button id="before">Before</button><div class="list"></div><textarea id="after"></textarea></div>`,
  );
  const list = host.querySelector<HTMLElement>('.list')!;
  list.innerHTML = Array.from({ length: count }, (_, i) => message(i + 1)).join('');
  const order = new Transcript(list);
  const articles = () => [...list.querySelectorAll<HTMLElement>('[role="article"]')];
  return { host, list, order, articles };
}

/** The elements of `root` that Tab reaches, in document order (no positive tabindex is used here). */
const tabbable = (root: Element) =>
  [...root.querySelectorAll<HTMLElement>('a[href], button, textarea, [tabindex]')]
    .filter(element => element.tabIndex >= 0)
    .map(element => element.getAttribute('aria-label') ?? element.textContent ?? element.id);

describe('Transcript', () => {
  it('puts only the newest message and its controls in the Tab order', async () => {
    const { list, order, articles } = await transcript(3);
    expect(order.current).to.equal(articles()[2]);
    expect(tabbable(list)).to.deep.equal(['Reply 3', '1', 'code', 'Copy 3']);
    order.disconnect();
  });

  it('moves between messages with the arrow keys, Home and End, and Tab goes to that message’s controls', async () => {
    const { host, list, articles, order } = await transcript(4);
    articles()[3]!.focus();
    await sendKeys({ press: 'ArrowUp' });
    expect(document.activeElement).to.equal(articles()[2]);
    expect(tabbable(list)).to.deep.equal(['Reply 3', '1', 'code', 'Copy 3']);
    await sendKeys({ press: 'Home' });
    expect(document.activeElement).to.equal(articles()[0]);
    await sendKeys({ press: 'ArrowUp' });
    expect(document.activeElement, 'nothing above the first').to.equal(articles()[0]);
    await sendKeys({ press: 'Tab' });
    expect(document.activeElement!.textContent).to.equal('1');
    await sendKeys({ press: 'Tab' });
    await sendKeys({ press: 'Tab' });
    expect(document.activeElement!.textContent).to.equal('Copy 1');
    await sendKeys({ press: 'Tab' });
    expect(document.activeElement, 'then out of the transcript').to.equal(host.querySelector('#after'));
    articles()[0]!.focus();
    await sendKeys({ press: 'End' });
    expect(document.activeElement).to.equal(articles()[3]);
    await sendKeys({ press: 'ArrowDown' });
    expect(document.activeElement, 'nothing below the last').to.equal(articles()[3]);
    order.disconnect();
  });

  it('gives back the tabindex a control had', async () => {
    const { list, articles, order } = await transcript(2);
    const firstCode = articles()[0]!.querySelector('pre')!;
    expect(firstCode.tabIndex).to.equal(-1);
    articles()[0]!.focus();
    expect(firstCode.getAttribute('tabindex')).to.equal('0');
    expect(articles()[1]!.querySelector('button')!.tabIndex).to.equal(-1);
    articles()[1]!.querySelector('button')!.focus();
    expect(articles()[1]!.querySelector('button')!.hasAttribute('tabindex'), 'a focused control is current').to.equal(
      false,
    );
    expect(tabbable(list)).to.deep.equal(['Reply 2', '1', 'code', 'Copy 2']);
    order.disconnect();
  });

  it('makes a new message current, unless the visitor is reading another', async () => {
    const { list, articles, order } = await transcript(2);
    list.insertAdjacentHTML('beforeend', message(3));
    await Promise.resolve();
    expect(order.current, 'the newest').to.equal(articles()[2]);
    expect(tabbable(list)).to.deep.equal(['Reply 3', '1', 'code', 'Copy 3']);
    articles()[0]!.focus();
    list.insertAdjacentHTML('beforeend', message(4));
    // A control drawn later into a message that is not current stays out of the order too.
    articles()[1]!.insertAdjacentHTML('beforeend', '<button>Retry</button>');
    await Promise.resolve();
    expect(order.current, 'still the one being read').to.equal(articles()[0]);
    expect(tabbable(list)).to.deep.equal(['Reply 1', '1', 'code', 'Copy 1']);
    order.disconnect();
  });
});
