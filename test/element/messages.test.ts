// How messages look, drawn with Lit's render() into a container: a turn by its status (streaming, done with its
// sources, ended without an answer and its Retry), a message of the history, the feedback of a reply, and a source
// shown from its footnote.
import { expect } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { render } from 'lit';
import { icon, renderHistoryItem, renderTurn, reveal, showSource, toggleSource } from '../../src/element/messages.js';
import type { RenderContext } from '../../src/element/messages.js';
import type { HistoryItem, Turn } from '../../src/element/state.js';
import fr from '../../src/element/locales/fr.js';
import { resolveStrings } from '../../src/element/strings.js';

const citations = [
  {
    sourceName: 'Returns',
    sourceUrl: 'https://shop.example.com/help/returns',
    partitions: [{ text: 'Returns are free within 30 days.', relevance: 0.9 }],
  },
  {
    sourceName: 'Shipping',
    sourceUrl: 'https://shop.example.com/help/shipping',
    partitions: [{ text: 'Tents ship in 3 days.' }],
  },
  { documentId: 'notes' },
];
const text = 'Tents **ship** in 3 days [2]. Returns are free [1].';

/** A render context whose actions note how they were called. */
function contextOf(fields: Partial<RenderContext> = {}) {
  const calls: unknown[][] = [];
  const context: RenderContext = {
    strings: resolveStrings(),
    speaker: 'Juniper',
    locale: 'en',
    actions: {
      retry: () => void calls.push(['retry']),
      feedback: (...args) => void calls.push(['feedback', ...args]),
    },
    commenting: null,
    thanked: null,
    ...fields,
  };
  return { context, calls };
}

const turn = (fields: Partial<Turn>): Turn => ({
  id: 't1',
  key: 'k1',
  text: 'Do you rent tents?',
  status: 'streaming',
  reply: '',
  citations: [],
  messageId: null,
  finishReason: null,
  lastEventId: null,
  attempt: 1,
  error: null,
  createdAt: null,
  ...fields,
});

const item = (fields: Partial<HistoryItem> = {}): HistoryItem => ({
  id: 'h1',
  role: 'assistant',
  text,
  messageId: 'm1',
  citations,
  createdAt: '2026-11-23T00:00:00.000Z',
  ...fields,
});

const hosts: HTMLElement[] = [];

/** Draws a template into a container of the page. */
function draw(template: unknown) {
  const host = document.createElement('div');
  document.body.append(host);
  hosts.push(host);
  render(template, host);
  return host;
}

/** What a container shows of its messages. */
const reply = (host: Element) => host.querySelector<HTMLElement>('.message.assistant');
const notice = (host: Element) => host.querySelector('[part="error"]');
const retry = (host: Element) => host.querySelector<HTMLButtonElement>('[part="retry-button"]');
const thumbs = (host: Element) =>
  [...host.querySelectorAll<HTMLButtonElement>('.reply-actions button[aria-pressed]')].map(button => [
    button.getAttribute('aria-label'),
    button.getAttribute('aria-pressed'),
  ]);
const sources = (host: Element) =>
  [...host.querySelectorAll('[part="citations"] li')].map(li => li.querySelector('.source-name')!.textContent);

afterEach(() => hosts.splice(0).forEach(host => host.remove()));

describe('renderTurn', () => {
  it('draws the visitor’s message and, while no text came, a busy reply that is typing', () => {
    const { context } = contextOf();
    const host = draw(renderTurn({}, turn({ status: 'accepting' }), true, context));
    const item = host.querySelector<HTMLElement>('.item')!;
    expect([item.dataset.key, item.dataset.status]).to.deep.equal(['t1', 'accepting']);
    const user = host.querySelector('.message.user')!;
    expect([user.getAttribute('role'), user.getAttribute('aria-label'), user.getAttribute('part')]).to.deep.equal([
      'article',
      'You',
      'message user-message',
    ]);
    expect(user.textContent).to.equal('Do you rent tents?');
    const message = reply(host)!;
    expect([
      message.getAttribute('role'),
      message.getAttribute('aria-label'),
      message.getAttribute('aria-busy'),
    ]).to.deep.equal(['article', 'Juniper', 'true']);
    expect(message.getAttribute('part')).to.equal('message assistant-message');
    const typing = message.querySelector('.typing')!;
    expect([typing.getAttribute('role'), typing.getAttribute('aria-label')]).to.deep.equal(['status', 'Typing…']);
    expect([message.querySelector('.markdown'), notice(host), retry(host)]).to.deep.equal([null, null, null]);
    expect(thumbs(host)).to.deep.equal([]);
  });

  it('draws a streaming reply’s markdown as it comes, busy, with footnotes but neither its sources nor actions', () => {
    const { context } = contextOf();
    const host = draw(renderTurn({}, turn({ reply: text.slice(0, 30), citations }), true, context));
    const message = reply(host)!;
    expect(message.getAttribute('aria-busy')).to.equal('true');
    expect(message.querySelector('.typing')).to.equal(null);
    expect(message.querySelector('.markdown strong')!.textContent).to.equal('ship');
    expect(message.querySelector('.markdown')!.textContent).to.contain('Tents ship in 3 days');
    expect(message.querySelector('a[data-cite]')!.getAttribute('aria-label')).to.equal('Source 1');
    expect([host.querySelector('[part="citations"]'), notice(host), retry(host)]).to.deep.equal([null, null, null]);
    expect(thumbs(host)).to.deep.equal([]);
  });

  it('says a streaming reply is reconnecting, after its text or in place of the typing dots', () => {
    const { context } = contextOf();
    for (const written of ['Tents ship', '']) {
      const host = draw(renderTurn({}, turn({ reply: written, reconnecting: true }), true, context));
      expect(host.querySelector('.item')!.hasAttribute('data-reconnecting'), written).to.equal(true);
      const status = reply(host)!.querySelector('.reconnecting')!;
      expect([status.getAttribute('role'), status.textContent]).to.deep.equal(['status', 'Reconnecting…']);
      expect(reply(host)!.querySelector('.typing'), written).to.equal(null);
      expect(reply(host)!.textContent).to.contain(written);
    }
  });

  it('draws a done reply with its footnotes, its sources in footnote order and its thumbs', async () => {
    const { context, calls } = contextOf();
    const done = turn({ status: 'done', reply: text, citations, messageId: 'm1', finishReason: 'stop' });
    const host = draw(renderTurn({}, done, true, context));
    const message = reply(host)!;
    expect(message.getAttribute('aria-busy')).to.equal('false');
    expect(
      [...message.querySelectorAll('a[data-cite]')].map(a => [a.textContent, a.getAttribute('aria-label')]),
    ).to.deep.equal([
      ['1', 'Source 1'],
      ['2', 'Source 2'],
    ]);
    const list = host.querySelector('[part="citations"]')!;
    expect(list.querySelector('h3')!.textContent).to.equal('Sources');
    expect(sources(host)).to.deep.equal(['Shipping', 'Returns', 'notes']);
    expect([...list.querySelectorAll('li')].map(li => li.getAttribute('value'))).to.deep.equal(['1', '2', '3']);
    expect([...list.querySelectorAll('a')].map(a => [a.textContent!.trim(), a.getAttribute('href')])).to.deep.equal([
      ['shop.example.com', 'https://shop.example.com/help/shipping'],
      ['shop.example.com', 'https://shop.example.com/help/returns'],
    ]);
    expect(list.textContent).to.contain('Relevance 90%');
    expect([notice(host), retry(host)]).to.deep.equal([null, null]);
    expect(thumbs(host)).to.deep.equal([
      ['Helpful', 'false'],
      ['Not helpful', 'false'],
    ]);
    const copy = host.querySelector('.reply-actions [part="copy-reply-button"]')!;
    expect([copy.getAttribute('aria-label'), copy.hasAttribute('data-copy-reply')]).to.deep.equal(['Copy reply', true]);
    host.querySelector<HTMLButtonElement>('[aria-label="Helpful"]')!.click();
    expect(calls).to.deep.equal([['feedback', 't1', 'm1', 'up']]);
    await expect(host).to.be.accessible();
  });

  it('shows the feedback given and the comment sent with it, takes a pressed thumb back, and thanks', () => {
    const done = turn({
      status: 'done',
      reply: 'Yes.',
      messageId: 'm1',
      feedback: 'down',
      comment: 'Trop <b>petit</b>',
    });
    const { context, calls } = contextOf({ strings: resolveStrings(fr) });
    const host = draw(renderTurn({}, done, true, context));
    expect(thumbs(host)).to.deep.equal([
      ['Utile', 'false'],
      ['Pas utile', 'true'],
    ]);
    const given = host.querySelector('.given')!;
    const quote = given.querySelector('q')!;
    expect([given.textContent!.replace(/\s+/g, ' ').trim(), quote.getAttribute('dir')]).to.deep.equal([
      'Votre commentaire : Trop <b>petit</b>',
      'auto',
    ]);
    expect(quote.children, 'the visitor’s text, as text').to.have.length(0);
    host.querySelector<HTMLButtonElement>('[aria-label="Pas utile"]')!.click();
    host.querySelector<HTMLButtonElement>('[aria-label="Utile"]')!.click();
    expect(calls).to.deep.equal([
      ['feedback', 't1', 'm1', undefined],
      ['feedback', 't1', 'm1', 'up'],
    ]);

    const withdrawn = draw(renderTurn({}, { ...done, feedback: undefined, comment: undefined }, true, context));
    expect(withdrawn.querySelector('.given'), 'no vote, no comment').to.equal(null);

    const asking = draw(
      renderTurn({}, { ...done, comment: undefined }, true, contextOf({ commenting: 't1', form: 'the box' }).context),
    );
    expect(asking.querySelector('.reply-actions')!.nextElementSibling, 'no comment shown').to.equal(null);
    expect(asking.textContent, 'the box under the thumbs').to.contain('the box');
    const elsewhere = draw(renderTurn({}, done, true, contextOf({ commenting: 't2', form: 'the box' }).context));
    expect(elsewhere.textContent, 'only under its reply').not.to.contain('the box');

    const thanked = draw(renderTurn({}, done, true, contextOf({ thanked: 't1' }).context));
    const thanks = thanked.querySelector('.thanks')!;
    expect([thanks.getAttribute('role'), thanks.textContent]).to.deep.equal(['status', 'Thanks for your feedback.']);
  });

  it('has no thumbs for a reply the service gave no id', () => {
    const host = draw(renderTurn({}, turn({ status: 'done', reply: 'Yes.' }), true, contextOf().context));
    expect(reply(host)!.textContent).to.contain('Yes.');
    expect(thumbs(host)).to.deep.equal([]);
  });

  it('draws a failed reply with what it has, a notice and Retry, which retries', async () => {
    const { context, calls } = contextOf();
    const failed = turn({
      status: 'failed',
      reply: 'Tents ship',
      citations,
      error: { code: 'upstream_error', retryable: true },
    });
    const host = draw(renderTurn({}, failed, true, context));
    const message = reply(host)!;
    expect(message.getAttribute('aria-busy')).to.equal('false');
    expect(message.querySelector('.markdown')!.textContent).to.contain('Tents ship');
    expect(notice(host)!.querySelector('span')!.textContent, 'what became of it, and why').to.equal(
      'This reply is incomplete. Something went wrong. Please try again.',
    );
    expect(retry(host)!.textContent!.trim()).to.equal('Retry');
    expect(host.querySelector('[part="citations"]'), 'the sources of a reply that did not end').to.equal(null);
    expect(thumbs(host)).to.deep.equal([]);
    retry(host)!.click();
    expect(calls).to.deep.equal([['retry']]);
    await expect(host).to.be.accessible();
  });

  it('says how a reply ended without an answer, with Retry only where it may retry', () => {
    const { context } = contextOf();
    const cases: [Partial<Turn>, string][] = [
      [{ status: 'failed' }, 'This message has not been answered.'],
      [{ status: 'stopped', reply: 'Tents' }, 'Stopped.'],
      [{ status: 'interrupted', reply: 'Tents' }, 'This reply was interrupted.'],
    ];
    for (const [fields, said] of cases) {
      for (const canRetry of [true, false]) {
        const host = draw(renderTurn({}, turn(fields), canRetry, context));
        expect(notice(host)!.querySelector('span')!.textContent, said).to.equal(said);
        expect(Boolean(retry(host)), `${said} ${canRetry}`).to.equal(canRetry);
        expect(Boolean(reply(host)!.querySelector('.markdown')), said).to.equal(Boolean(fields.reply));
      }
    }
  });

  it('draws a queued message as queued, with no reply yet', () => {
    const host = draw(renderTurn({}, turn({ status: 'queued' }), true, contextOf().context));
    expect(host.querySelector('.message.user')!.classList.contains('queued')).to.equal(true);
    expect(host.querySelector<HTMLElement>('.item')!.dataset.status).to.equal('queued');
    expect(reply(host)).to.equal(null);
  });
});

describe('renderHistoryItem', () => {
  it('draws a message of the visitor’s as an article named You', () => {
    const host = draw(renderHistoryItem({}, item({ role: 'user', text: 'Do you rent tents?' }), contextOf().context));
    expect(host.querySelector<HTMLElement>('.item')!.dataset.key).to.equal('h1');
    const user = host.querySelector('.message.user')!;
    expect([user.getAttribute('role'), user.getAttribute('aria-label'), user.textContent]).to.deep.equal([
      'article',
      'You',
      'Do you rent tents?',
    ]);
    expect(reply(host)).to.equal(null);
  });

  it('draws a reply with its sources, and its thumbs when it has an id', () => {
    const host = draw(renderHistoryItem({}, item({ feedback: 'up' }), contextOf().context));
    const message = reply(host)!;
    expect([message.getAttribute('aria-label'), message.getAttribute('aria-busy')]).to.deep.equal(['Juniper', 'false']);
    expect(message.querySelector('.markdown strong')!.textContent).to.equal('ship');
    expect(sources(host)).to.deep.equal(['Shipping', 'Returns', 'notes']);
    expect(thumbs(host)).to.deep.equal([
      ['Helpful', 'true'],
      ['Not helpful', 'false'],
    ]);
    const anonymous = draw(renderHistoryItem({}, item({ messageId: null }), contextOf().context));
    expect(thumbs(anonymous)).to.deep.equal([]);
  });
});

describe('a reply of the history, light', () => {
  const icons = (host: Element) => [...host.querySelectorAll('.reply-actions button')].map(b => b.childElementCount);

  it('is drawn in few nodes: no space between tags, no text but its own', () => {
    const host = draw(
      renderHistoryItem({}, item({ text: 'Tents ship in 3 days.', citations: [] }), contextOf().context),
    );
    const texts = [...host.querySelectorAll('*')].flatMap(el => [...el.childNodes].filter(n => n.nodeType === 3));
    expect(texts.map(t => t.textContent)).to.deep.equal(['Tents ship in 3 days.']);
    const comments = document.createTreeWalker(host, NodeFilter.SHOW_COMMENT);
    let count = 0;
    while (comments.nextNode()) count++;
    // The container's, the message's, its text's and actions', the thanks' and the comment's, and one to end.
    expect(count, 'the markers of its few bindings').to.be.at.most(7);
    const user = draw(renderHistoryItem({}, item({ role: 'user', text: 'Do you rent tents?' }), contextOf().context));
    expect(user.querySelector('.message.user')!.childNodes.length, 'its text alone').to.equal(1);
  });

  it('has its actions, their icons drawn once it is hovered or focused; and at once when newest or voted', () => {
    const { context, calls } = contextOf();
    const host = draw(renderHistoryItem({}, item({ citations: [] }), context));
    const buttons = [...host.querySelectorAll<HTMLButtonElement>('.reply-actions button')];
    expect(buttons.map(b => b.getAttribute('aria-label'))).to.deep.equal(['Copy reply', 'Helpful', 'Not helpful']);
    expect(icons(host), 'not yet').to.deep.equal([0, 0, 0]);
    buttons[1]!.click();
    expect(calls, 'and they work without').to.deep.equal([['feedback', 'h1', 'm1', 'up']]);
    host.querySelector('.markdown')!.dispatchEvent(new Event('pointerover', { bubbles: true }));
    expect(icons(host), 'not without a listener').to.deep.equal([0, 0, 0]);
    host.addEventListener('pointerover', reveal);
    host.querySelector('.markdown p')!.dispatchEvent(new Event('pointerover', { bubbles: true }));
    expect(icons(host), 'hovered').to.deep.equal([1, 1, 1]);
    expect([...host.querySelectorAll('.reply-actions button')], 'the same buttons').to.deep.equal(buttons);
    expect(host.querySelector('.reply-actions svg')!.getAttribute('aria-hidden')).to.equal('true');

    expect(icons(draw(renderHistoryItem({}, item({ citations: [] }), context, true))), 'newest').to.deep.equal([
      1, 1, 1,
    ]);
    expect(icons(draw(renderHistoryItem({}, item({ feedback: 'down' }), context))), 'voted').to.deep.equal([1, 1, 1]);
    expect(icons(draw(renderHistoryItem({}, item({ comment: 'Too short' }), context))), 'commented').to.deep.equal([
      1, 1, 1,
    ]);
  });
});

describe('showSource', () => {
  it('opens the source a footnote leads to, focuses it and highlights it for a while', async () => {
    const host = draw(renderHistoryItem({}, item(), contextOf().context));
    const [shipping, , notes] = host.querySelectorAll<HTMLLIElement>('[part="citations"] li');
    const button = shipping!.querySelector('button')!;
    const passages = shipping!.querySelector<HTMLElement>('.passages')!;
    expect([button.getAttribute('aria-expanded'), passages.hidden]).to.deep.equal(['false', true]);
    showSource(shipping!);
    expect([button.getAttribute('aria-expanded'), passages.hidden]).to.deep.equal(['true', false]);
    expect(document.activeElement).to.equal(button);
    expect(shipping!.classList.contains('highlight')).to.equal(true);
    await waitUntil(() => !shipping!.classList.contains('highlight'), 'the highlight to go', { timeout: 10_000 });
    // A source with neither passages nor an address takes the focus itself.
    showSource(notes!);
    expect([document.activeElement, notes!.tabIndex]).to.deep.equal([notes, -1]);
  });

  it('lets a source’s disclosure button show and hide its passages', () => {
    const host = draw(renderHistoryItem({}, item(), contextOf().context));
    const button = host.querySelector<HTMLButtonElement>('[part="citations"] li button')!;
    const passages = document.getElementById(button.getAttribute('aria-controls')!)!;
    toggleSource(button);
    expect([button.getAttribute('aria-expanded'), passages.hidden]).to.deep.equal(['true', false]);
    toggleSource(button, true);
    expect([button.getAttribute('aria-expanded'), passages.hidden]).to.deep.equal(['true', false]);
    toggleSource(button);
    expect([button.getAttribute('aria-expanded'), passages.hidden]).to.deep.equal(['false', true]);
  });
});

describe('icon', () => {
  it('is a path in a 24 × 24 box, hidden from screen readers', () => {
    const svg = draw(icon('M4 12h16')).querySelector('svg')!;
    expect([svg.getAttribute('viewBox'), svg.getAttribute('aria-hidden')]).to.deep.equal(['0 0 24 24', 'true']);
    expect(svg.querySelector('path')!.getAttribute('d')).to.equal('M4 12h16');
  });
});
