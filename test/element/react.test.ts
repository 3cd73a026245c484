// `persona-chat/react` rendered by react-dom, against the real backend and emulator of the test server. This file
// imports nothing that registers the tag: the wrapper does.
import { expect } from '@open-wc/testing';
import { waitUntil } from './wait.js';
import { createElement, createRef } from 'react';
import { flushSync } from 'react-dom';
import { createRoot, hydrateRoot } from 'react-dom/client';
import type { Root } from 'react-dom/client';
import type { PersonaChat as PersonaChatElement } from '../../src/element/persona-chat.js';
import { PersonaChat } from '../../src/react/index.js';
import type { PersonaChatConversationEvent, PersonaChatMessageEvent, PersonaChatProps } from '../../src/react/index.js';

const juniper = '3e913ded-bf6d-4591-85bb-a2d9be56efd6';

/** The conversation's metadata as the emulator keeps it (a test-only key: the product never puts one in a browser). */
const storedMetadata = async (conversationId: string) =>
  (
    (await (
      await fetch(`/emulator/conversations/${conversationId}`, { headers: { 'x-svc-api-key': 'browser-test-key' } })
    ).json()) as { metadata: { client?: unknown } }
  ).metadata;

describe('persona-chat/react', () => {
  let container: HTMLElement;
  let root: Root | undefined;

  beforeEach(async () => {
    sessionStorage.clear();
    localStorage.clear();
    await fetch('/test-support/reset', { method: 'POST' });
    container = document.createElement('div');
    document.body.append(container);
  });

  afterEach(() => {
    root?.unmount();
    root = undefined;
    container.remove();
  });

  /** The props of a chat whose message and conversation events are recorded. */
  function recorded(page: string) {
    const replies: PersonaChatMessageEvent[] = [];
    const conversations: PersonaChatConversationEvent[] = [];
    const ref = createRef<PersonaChatElement>();
    const props: PersonaChatProps & { ref: typeof ref } = {
      ref,
      endpoint: '/persona-chat',
      mode: 'inline',
      storage: 'session',
      personaId: juniper,
      metadata: { page },
      onMessage: event => replies.push(event),
      onConversation: event => conversations.push(event),
    };
    return { props, ref, replies, conversations };
  }

  /** Sends a message through the element and waits for the reply's event: the conversation and the reply. */
  async function converse({ ref, replies, conversations }: ReturnType<typeof recorded>) {
    await customElements.whenDefined('persona-chat');
    await waitUntil(() => ref.current, 'the ref gets the element');
    void ref.current!.send('How long does shipping take?');
    await waitUntil(() => replies.length === 1, 'onMessage is called with the reply', { timeout: 10_000 });
    expect(conversations).to.have.length(1);
    return { conversationId: conversations[0]!.detail.conversationId, reply: replies[0]! };
  }

  // First in the file: the page has not registered the tag yet, as when a server-rendered page hydrates.
  it('hydrates the bare tag a server rendered, the element starting with its props, then listens to its events', async () => {
    // What a server renders for the component: the tag alone, its properties and listeners left to the browser.
    container.innerHTML = '<persona-chat></persona-chat>';
    const chat = recorded('/hydrated');
    const ready: { endpoint: string; mode: string }[] = [];
    root = hydrateRoot(
      container,
      createElement(PersonaChat, {
        ...chat.props,
        onReady: event => {
          const el = event.target as PersonaChatElement;
          ready.push({ endpoint: el.endpoint, mode: el.mode });
        },
      }),
      { onRecoverableError: error => expect.fail(`hydration failed: ${String(error)}`) },
    );
    expect(customElements.get('persona-chat'), 'not registered before the props are set').to.equal(undefined);
    await waitUntil(() => ready.length === 1, 'onReady is called once the element is registered and first rendered');
    expect(ready[0], 'its first render had the props').to.include({ endpoint: '/persona-chat', mode: 'inline' });
    const { conversationId, reply } = await converse(chat);
    expect(reply.detail.content).to.contain('3 to 5 business days');
    expect((await storedMetadata(conversationId)).client).to.deep.equal({ page: '/hydrated' });
  });

  it('registers the tag, sets the props as properties, and calls the event props with typed events', async () => {
    const chat = recorded('/react');
    root = createRoot(container);
    flushSync(() => root!.render(createElement(PersonaChat, chat.props)));
    const { conversationId, reply } = await converse(chat);
    const el = container.querySelector('persona-chat')!;
    expect(customElements.get('persona-chat')).to.equal(el.constructor);
    expect(el.mode).to.equal('inline');
    expect(reply.detail.content).to.contain('3 to 5 business days');
    expect(reply.content).to.equal(reply.detail.content);
    expect(el.shadowRoot!.textContent).to.contain('3 to 5 business days');
    expect((await storedMetadata(conversationId)).client).to.deep.equal({ page: '/react' });
  });
});
