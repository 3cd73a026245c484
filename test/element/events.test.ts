// The element's events as a host page receives them: their names, that they leave the element's shadow root and
// bubble to the document, their data in `detail` and in fields of their own, and that only a send can be cancelled
// or changed.
import { expect, fixture, html } from '@open-wc/testing';
import {
  PersonaChatCitationEvent,
  PersonaChatCloseEvent,
  PersonaChatConversationEvent,
  PersonaChatDraftEvent,
  PersonaChatErrorEvent,
  PersonaChatFeedbackEvent,
  PersonaChatMessageEvent,
  PersonaChatOpenEvent,
  PersonaChatReadyEvent,
  PersonaChatSendEvent,
} from '../../src/element/events.js';
import type { PersonaChatEvent } from '../../src/element/events.js';
import { PersonaChatError } from '../../src/element/errors.js';

const citation = { sourceName: 'Returns', sourceUrl: 'https://shop.example.com/help/returns' };
const error = new PersonaChatError('rate_limited', 'The chat backend answered 429 (rate_limited).', true, 429);

/** Each event, with its name and the data it carries. */
const events: [PersonaChatEvent<object>, string, Record<string, unknown>][] = [
  [new PersonaChatReadyEvent(), 'persona-chat-ready', {}],
  [new PersonaChatOpenEvent(), 'persona-chat-open', {}],
  [new PersonaChatCloseEvent(), 'persona-chat-close', {}],
  [new PersonaChatSendEvent('Do you rent tents?'), 'persona-chat-send', { text: 'Do you rent tents?' }],
  [
    new PersonaChatMessageEvent('m1', 'Yes [1].', [citation], 'stop'),
    'persona-chat-message',
    { messageId: 'm1', content: 'Yes [1].', citations: [citation], finishReason: 'stop' },
  ],
  [new PersonaChatConversationEvent('c1', true), 'persona-chat-conversation', { conversationId: 'c1', restored: true }],
  [
    new PersonaChatErrorEvent('rate_limited', true, error),
    'persona-chat-error',
    { code: 'rate_limited', retryable: true, error },
  ],
  [new PersonaChatCitationEvent(citation, 2), 'persona-chat-citation', { citation, footnote: 2 }],
  [new PersonaChatFeedbackEvent('m1', 'down'), 'persona-chat-feedback', { messageId: 'm1', value: 'down' }],
  [new PersonaChatDraftEvent('Do you'), 'persona-chat-draft', { text: 'Do you' }],
];

/** A host page's view of an event: dispatched inside a shadow root, received on the document. */
async function received(event: Event) {
  const host = await fixture<HTMLDivElement>(html`<div></div>`);
  const inner = host.attachShadow({ mode: 'open' }).appendChild(document.createElement('button'));
  let seen: Event | undefined;
  let target: EventTarget | null = null;
  const listen = (e: Event) => ((seen = e), (target = e.target));
  document.addEventListener(event.type, listen);
  try {
    const notCancelled = inner.dispatchEvent(event);
    return { seen, target, host, notCancelled };
  } finally {
    document.removeEventListener(event.type, listen);
  }
}

describe('the element’s events', () => {
  for (const [event, type, detail] of events) {
    it(`${type}: leaves the shadow root and bubbles, its data in detail and in fields of its own`, async () => {
      expect(event).to.be.instanceOf(CustomEvent);
      expect([event.type, event.bubbles, event.composed]).to.deep.equal([type, true, true]);
      expect(event.cancelable, 'only a send is cancelable').to.equal(type === 'persona-chat-send');
      expect(event.detail).to.deep.equal(detail);
      for (const [key, value] of Object.entries(detail)) {
        expect((event as unknown as Record<string, unknown>)[key], key).to.deep.equal(value);
      }
      const { seen, target, host } = await received(event);
      expect(seen).to.equal(event);
      expect(target, 'the shadow root’s host, as the document sees it').to.equal(host);
    });
  }

  it('ends a message with no finish reason unless given one', () => {
    const event = new PersonaChatMessageEvent(null, 'Partial', []);
    expect([event.messageId, event.finishReason]).to.deep.equal([null, null]);
    expect(event.detail.finishReason).to.equal(null);
  });

  it('lets a listener cancel a send, but no other event', async () => {
    const cancel = (e: Event) => e.preventDefault();
    for (const [event] of events) document.addEventListener(event.type, cancel);
    try {
      for (const [fresh, type] of [
        [new PersonaChatSendEvent('Hi'), 'persona-chat-send'],
        [new PersonaChatOpenEvent(), 'persona-chat-open'],
        [new PersonaChatMessageEvent('m1', 'Hello', []), 'persona-chat-message'],
        [new PersonaChatFeedbackEvent('m1', 'up'), 'persona-chat-feedback'],
      ] as const) {
        const { notCancelled } = await received(fresh);
        const sent = type === 'persona-chat-send';
        expect([notCancelled, fresh.defaultPrevented], type).to.deep.equal([!sent, sent]);
      }
    } finally {
      for (const [event] of events) document.removeEventListener(event.type, cancel);
    }
  });

  it('lets a listener rewrite the text of a send, through detail.text or the event’s text', async () => {
    const event = new PersonaChatSendEvent('do you rent tents');
    const capitalise = (e: PersonaChatSendEvent) => (e.detail.text = e.detail.text[0]!.toUpperCase() + e.text.slice(1));
    const ask = (e: PersonaChatSendEvent) => (e.text += '?');
    document.addEventListener('persona-chat-send', capitalise);
    document.addEventListener('persona-chat-send', ask);
    try {
      const { notCancelled } = await received(event);
      expect(notCancelled).to.equal(true);
    } finally {
      document.removeEventListener('persona-chat-send', capitalise);
      document.removeEventListener('persona-chat-send', ask);
    }
    expect([event.text, event.detail.text]).to.deep.equal(['Do you rent tents?', 'Do you rent tents?']);
  });
});
