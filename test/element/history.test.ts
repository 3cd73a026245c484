// The history view: the visitor's conversations with this persona, reopened, renamed and deleted through the
// panel, against the real backend and emulator; and its relative dates.
import { expect, fixture, html } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { relativeTime } from '../../src/element/history.js';
import type { PersonaChat } from '../../src/element/persona-chat.js';
import { Harness, faults, juniper, oneEvent, resetAll, stored } from './harness.js';

const element = async () =>
  new Harness(
    await fixture<PersonaChat>(
      html`<persona-chat endpoint="/persona-chat" mode="inline" storage="local" persona-id=${juniper}></persona-chat>`,
    ),
  );

/** Sends a message and waits for its reply; returns the conversation it went to. */
async function ask(h: Harness, text: string) {
  const replied = oneEvent(h.el, 'persona-chat-message');
  void h.el.send(text).catch(() => {});
  await replied;
  await h.settled();
  return h.el.listConversations().then(list => list.map(c => c.id));
}

/** How long a wait that needs the backend may take: a busy machine runs three browsers and the servers at once. */
const backendWait = { timeout: 5000 };

/** Opens the history view and waits until its list came. */
async function openHistory(h: Harness) {
  h.root.querySelector<HTMLButtonElement>('[part="history-button"]')!.click();
  await waitUntil(() => h.root.querySelector('.history[aria-busy="false"]'), 'the list', backendWait);
  return h.root.querySelector<HTMLElement>('.history')!;
}

const names = (view: HTMLElement) => [...view.querySelectorAll('.conversation .name')].map(n => n.textContent);

describe('<persona-chat> history view', () => {
  beforeEach(resetAll);

  it('switches, renames and deletes conversations, and a reload finds them as left', async () => {
    // A visitor of their own, whose conversations are these alone.
    await fetch('/test-support/forget-visitor');
    const h = await element();
    await ask(h, 'How long does shipping take?');
    const first = (await h.el.listConversations())[0]!.id;
    await h.el.newConversation();
    await ask(h, 'Do you rent tents?');
    const second = (await h.el.listConversations()).find(c => c.id !== first)!.id;

    // A slow list is said to be loading, then what it holds.
    await faults({ latencyMs: 400 });
    const live = h.root.querySelector('[aria-live="polite"]')!;
    const opened = openHistory(h);
    await waitUntil(() => live.textContent === 'Loading conversations…', 'the wait is said');
    let view = await opened;
    await faults({ latencyMs: 0 });
    expect(names(view)).to.deep.equal(['Do you rent tents?', 'How long does shipping take?'], 'newest first');
    expect(live.textContent).to.equal('2 conversations', 'a screen reader hears what the list holds');
    const current = view.querySelector('[aria-current="true"] .name')!.textContent;
    expect(current).to.equal('Do you rent tents?', 'the open one is marked');

    const restored = oneEvent(h.el, 'persona-chat-conversation');
    [...view.querySelectorAll<HTMLButtonElement>('.conversation')]
      .find(b => b.textContent!.includes('shipping'))!
      .click();
    expect((await restored).conversationId).to.equal(first);
    await waitUntil(() => !h.root.querySelector('.history'), 'back to the chat');
    expect(h.userMessages()).to.deep.equal(['How long does shipping take?']);
    await ask(h, 'And the returns?');

    view = await openHistory(h);
    expect(names(view)).to.deep.equal(['How long does shipping take?', 'Do you rent tents?'], 'newest first, again');
    view.querySelector<HTMLButtonElement>('[aria-label="Rename: How long does shipping take?"]')!.click();
    await waitUntil(() => h.root.querySelector('.rename input'), 'the name box');
    const input = h.root.querySelector<HTMLInputElement>('.rename input')!;
    expect(h.root.activeElement).to.equal(input, 'the name box has the focus');
    input.value = '  Shipping questions ';
    h.root.querySelector<HTMLButtonElement>('.rename button[type="submit"]')!.click();
    await waitUntil(() => names(view).includes('Shipping questions'), 'the new name', backendWait);
    await waitUntil(() => h.root.activeElement?.matches(`[data-id="${first}"]`), 'the focus is back on it');
    // A delete asks first; Escape keeps the conversation.
    const remove = () => view.querySelector<HTMLButtonElement>('[aria-label="Delete: Do you rent tents?"]')!;
    remove().click();
    await waitUntil(() => h.root.activeElement?.matches('.confirm [data-cancel]'), 'the focus is on Cancel');
    expect(view.querySelector('.confirm')!.textContent).to.contain('Delete “Do you rent tents?”?');
    h.root.activeElement!.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, composed: true }));
    await waitUntil(() => h.root.activeElement === remove(), 'Escape keeps it, and the focus is back on Delete');
    expect(names(view)).to.have.length(2);
    expect((await stored(second)).conversationStatus).not.to.equal('deleted');
    remove().click();
    await waitUntil(() => view.querySelector('.confirm [data-confirm]'), 'asked again');
    view.querySelector<HTMLButtonElement>('.confirm [data-confirm]')!.click();
    await waitUntil(() => names(view).length === 1, 'the deleted one is gone', backendWait);
    await waitUntil(() => h.root.activeElement?.id === 'history-heading', 'the focus stays in the view');
    expect((await stored(first)).conversationName).to.equal('Shipping questions');
    expect((await stored(second)).conversationStatus).to.equal('deleted');

    h.el.remove();
    const again = await element();
    await waitUntil(() => again.userMessages().length === 2, 'the open conversation is restored', backendWait);
    expect(again.userMessages()).to.deep.equal(['How long does shipping take?', 'And the returns?']);
    view = await openHistory(again);
    expect(names(view)).to.deep.equal(['Shipping questions']);
  });

  it('can be turned off', async () => {
    const h = new Harness(
      await fixture<PersonaChat>(
        html`<persona-chat no-history endpoint="/persona-chat" mode="inline" storage="none" persona-id=${juniper}></persona-chat>`,
      ),
    );
    expect(h.root.querySelector('[part="history-button"]')).to.equal(null);
  });

  it('dates conversations relative to now, in the language shown', () => {
    const now = Date.parse('2026-11-23T12:00:00Z');
    expect(relativeTime('2026-11-23T11:59:30Z', 'en', now)).to.equal('now');
    expect(relativeTime('2026-11-23T09:00:00Z', 'en', now)).to.equal('3 hours ago');
    expect(relativeTime('2026-11-22T12:00:00Z', 'en', now)).to.equal('yesterday');
    expect(relativeTime('2026-11-22T12:00:00Z', 'de', now)).to.equal('gestern');
    expect(relativeTime('2026-10-20T12:00:00Z', 'fr', now)).to.equal('le mois dernier');
    expect(relativeTime(null, 'en', now)).to.equal('');
  });
});
