/**
 * @module
 * The element's events: classes named `persona-chat-<noun>`, bubbling and composed. Only `persona-chat-send` is
 * cancelable, and its `text` may be rewritten by a listener.
 */
import type { Citation } from '../protocol.js';
import type { PersonaChatErrorCode } from './errors.js';

const init = { bubbles: true, composed: true };

export class PersonaChatReadyEvent extends Event {
  constructor() {
    super('persona-chat-ready', init);
  }
}

export class PersonaChatOpenEvent extends Event {
  constructor() {
    super('persona-chat-open', init);
  }
}

export class PersonaChatCloseEvent extends Event {
  constructor() {
    super('persona-chat-close', init);
  }
}

/** Before a message is sent: cancel it with `preventDefault()`, or change `text`. */
export class PersonaChatSendEvent extends Event {
  constructor(public text: string) {
    super('persona-chat-send', { ...init, cancelable: true });
  }
}

/** A reply finished: complete, or stopped (`finishReason: 'stopped'`) with what it had. */
export class PersonaChatMessageEvent extends Event {
  constructor(
    readonly messageId: string | null,
    readonly content: string,
    readonly citations: Citation[],
    readonly finishReason: string | null = null,
  ) {
    super('persona-chat-message', init);
  }
}

/** A conversation started or was restored. */
export class PersonaChatConversationEvent extends Event {
  constructor(
    readonly conversationId: string,
    readonly restored: boolean,
  ) {
    super('persona-chat-conversation', init);
  }
}

export class PersonaChatErrorEvent extends Event {
  constructor(
    readonly code: PersonaChatErrorCode,
    readonly retryable: boolean,
    readonly error: Error,
  ) {
    super('persona-chat-error', init);
  }
}

/** A visitor opened a source. */
export class PersonaChatCitationEvent extends Event {
  constructor(
    readonly citation: Citation,
    readonly footnote: number,
  ) {
    super('persona-chat-citation', init);
  }
}

/** Thumbs up or down on a reply. */
export class PersonaChatFeedbackEvent extends Event {
  constructor(
    readonly messageId: string | null,
    readonly value: 'up' | 'down',
  ) {
    super('persona-chat-feedback', init);
  }
}

declare global {
  interface GlobalEventHandlersEventMap {
    'persona-chat-ready': PersonaChatReadyEvent;
    'persona-chat-open': PersonaChatOpenEvent;
    'persona-chat-close': PersonaChatCloseEvent;
    'persona-chat-send': PersonaChatSendEvent;
    'persona-chat-message': PersonaChatMessageEvent;
    'persona-chat-conversation': PersonaChatConversationEvent;
    'persona-chat-error': PersonaChatErrorEvent;
    'persona-chat-citation': PersonaChatCitationEvent;
    'persona-chat-feedback': PersonaChatFeedbackEvent;
  }
}
