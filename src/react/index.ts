/**
 * @module
 * `<PersonaChat>`: the element as a React component. Every prop the element has as a property (`metadata`,
 * `endpoint`, `personaId`, `strings`, `fetch`, …) is set as that property, in plain React and after server rendering
 * and hydration alike, and each of the element's events is an `on…` prop whose handler gets the typed event (its data
 * in `detail`). In a browser, importing this module registers `<persona-chat>`; on a server it registers nothing and
 * touches no DOM, so a server-rendered page holds the bare tag until the browser upgrades it.
 */
import * as React from 'react';
import { createComponent } from '@lit/react';
import type { EventName } from '@lit/react';
import { PersonaChat as PersonaChatElement } from '../element/persona-chat.js';
import type {
  PersonaChatCitationEvent,
  PersonaChatCloseEvent,
  PersonaChatConversationEvent,
  PersonaChatErrorEvent,
  PersonaChatFeedbackEvent,
  PersonaChatMessageEvent,
  PersonaChatOpenEvent,
  PersonaChatReadyEvent,
  PersonaChatSendEvent,
} from '../element/events.js';

// Only a browser has a registry to define the tag in; the module is loaded apart so that a server never evaluates it.
if (typeof window !== 'undefined') void import('../element/define.js');

/** The element's events, by the name of the prop that listens to each. */
const events = {
  onReady: 'persona-chat-ready' as EventName<PersonaChatReadyEvent>,
  onOpen: 'persona-chat-open' as EventName<PersonaChatOpenEvent>,
  onClose: 'persona-chat-close' as EventName<PersonaChatCloseEvent>,
  onSend: 'persona-chat-send' as EventName<PersonaChatSendEvent>,
  onMessage: 'persona-chat-message' as EventName<PersonaChatMessageEvent>,
  onConversation: 'persona-chat-conversation' as EventName<PersonaChatConversationEvent>,
  onError: 'persona-chat-error' as EventName<PersonaChatErrorEvent>,
  onCitation: 'persona-chat-citation' as EventName<PersonaChatCitationEvent>,
  onFeedback: 'persona-chat-feedback' as EventName<PersonaChatFeedbackEvent>,
};

/**
 * `<persona-chat>` for React: `<PersonaChat endpoint="/persona-chat" metadata={{ page }} onMessage={e => …} />`.
 * A `ref` gets the element itself, for its methods (`send()`, `show()`, …).
 */
export const PersonaChat = createComponent({
  react: React,
  tagName: 'persona-chat',
  elementClass: PersonaChatElement,
  events,
  displayName: 'PersonaChat',
});

/** The props of `<PersonaChat>`. */
export type PersonaChatProps = React.ComponentProps<typeof PersonaChat>;

export type {
  PersonaChatCitationEvent,
  PersonaChatCloseEvent,
  PersonaChatConversationEvent,
  PersonaChatErrorEvent,
  PersonaChatFeedbackEvent,
  PersonaChatMessageEvent,
  PersonaChatOpenEvent,
  PersonaChatReadyEvent,
  PersonaChatSendEvent,
};
