/**
 * @module
 * `<PersonaChat>`: the element as a React component. Every prop the element has as a property (`metadata`,
 * `endpoint`, `personaId`, `strings`, `fetch`, …) is set as that property, in plain React and after server rendering
 * and hydration alike, and each of the element's events is an `on…` prop whose handler gets the typed event (its data
 * in `detail`). In a browser, the component registers `<persona-chat>` once it has rendered; on a server it registers
 * nothing and touches no DOM, so a server-rendered page holds the bare tag until the browser upgrades it.
 */
import * as React from 'react';
import { createComponent } from '@lit/react';
import type { EventName } from '@lit/react';
import { PersonaChat as PersonaChatElement } from '../element/persona-chat.js';
import type * as Events from '../element/events.js';

/** The element's events, by the name of the prop that listens to each. */
const events = {
  onReady: 'persona-chat-ready' as EventName<Events.PersonaChatReadyEvent>,
  onOpen: 'persona-chat-open' as EventName<Events.PersonaChatOpenEvent>,
  onClose: 'persona-chat-close' as EventName<Events.PersonaChatCloseEvent>,
  onSend: 'persona-chat-send' as EventName<Events.PersonaChatSendEvent>,
  onMessage: 'persona-chat-message' as EventName<Events.PersonaChatMessageEvent>,
  onConversation: 'persona-chat-conversation' as EventName<Events.PersonaChatConversationEvent>,
  onError: 'persona-chat-error' as EventName<Events.PersonaChatErrorEvent>,
  onCitation: 'persona-chat-citation' as EventName<Events.PersonaChatCitationEvent>,
  onFeedback: 'persona-chat-feedback' as EventName<Events.PersonaChatFeedbackEvent>,
  onDraft: 'persona-chat-draft' as EventName<Events.PersonaChatDraftEvent>,
};

const Wrapped = createComponent({
  react: React,
  tagName: 'persona-chat',
  elementClass: PersonaChatElement,
  events,
  displayName: 'PersonaChat',
});

/** Registers the tag, once. Only a browser has a registry: the module is loaded apart, so a server never runs it. */
const define = () => void import('../element/define.js');

/**
 * `<persona-chat>` for React: `<PersonaChat endpoint="/persona-chat" metadata={{ page }} onMessage={e => …} />`.
 * A `ref` gets the element itself, for its methods (`send()`, `show()`, …). The tag is registered after the first
 * render's properties are set, so that an element hydrated from a server's HTML starts with them (its endpoint, its
 * mode) rather than upgraded bare before hydration.
 */
export const PersonaChat = React.forwardRef<PersonaChatElement, React.ComponentProps<typeof Wrapped>>(
  function PersonaChat(props, ref) {
    React.useEffect(define, []);
    return React.createElement(Wrapped, { ...props, ref });
  },
) as typeof Wrapped;

/** The props of `<PersonaChat>`. */
export type PersonaChatProps = React.ComponentProps<typeof Wrapped>;

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
} from '../element/events.js';
