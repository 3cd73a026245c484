/**
 * @module
 * The element's events: classes named `persona-chat-<noun>`, bubbling and composed, whose data is in `detail` (and,
 * for convenience, in fields of the event's own with the same names). Only `persona-chat-send` is cancelable, and
 * its `detail.text` may be rewritten by a listener.
 */
import type { Citation } from '../protocol.js';
import type { PersonaChatErrorCode } from './errors.js';

/** An event of the element's, its data in `detail` and, as a copy, in fields of its own. */
export class PersonaChatEvent<Detail extends object = Record<string, never>> extends CustomEvent<Detail> {
  constructor(type: string, detail: Detail, cancelable = false) {
    super(type, { bubbles: true, composed: true, cancelable, detail });
    Object.assign(this, detail);
  }
}

export class PersonaChatReadyEvent extends PersonaChatEvent {
  constructor() {
    super('persona-chat-ready', {});
  }
}

export class PersonaChatOpenEvent extends PersonaChatEvent {
  constructor() {
    super('persona-chat-open', {});
  }
}

export class PersonaChatCloseEvent extends PersonaChatEvent {
  constructor() {
    super('persona-chat-close', {});
  }
}

/** Before a message is sent: cancel it with `preventDefault()`, or change `detail.text`. */
export class PersonaChatSendEvent extends PersonaChatEvent<{ text: string }> {
  constructor(text: string) {
    super('persona-chat-send', { text }, true);
  }
  /** The text to send: `detail.text`. */
  get text() {
    return this.detail.text;
  }
  set text(text: string) {
    this.detail.text = text;
  }
}

export interface MessageDetail {
  messageId: string | null;
  content: string;
  citations: Citation[];
  finishReason: string | null;
}

/** A reply finished: complete, or stopped (`finishReason: 'stopped'`) with what it had. */
export class PersonaChatMessageEvent extends PersonaChatEvent<MessageDetail> {
  declare readonly messageId: string | null;
  declare readonly content: string;
  declare readonly citations: Citation[];
  declare readonly finishReason: string | null;
  constructor(messageId: string | null, content: string, citations: Citation[], finishReason: string | null = null) {
    super('persona-chat-message', { messageId, content, citations, finishReason });
  }
}

/** A conversation started or was restored (the visitor switched to it, or a reload showed it again). */
export class PersonaChatConversationEvent extends PersonaChatEvent<{ conversationId: string; restored: boolean }> {
  declare readonly conversationId: string;
  declare readonly restored: boolean;
  constructor(conversationId: string, restored: boolean) {
    super('persona-chat-conversation', { conversationId, restored });
  }
}

export class PersonaChatErrorEvent extends PersonaChatEvent<{
  code: PersonaChatErrorCode;
  retryable: boolean;
  error: Error;
}> {
  declare readonly code: PersonaChatErrorCode;
  declare readonly retryable: boolean;
  declare readonly error: Error;
  constructor(code: PersonaChatErrorCode, retryable: boolean, error: Error) {
    super('persona-chat-error', { code, retryable, error });
  }
}

/** A visitor opened a source. */
export class PersonaChatCitationEvent extends PersonaChatEvent<{ citation: Citation; footnote: number }> {
  declare readonly citation: Citation;
  declare readonly footnote: number;
  constructor(citation: Citation, footnote: number) {
    super('persona-chat-citation', { citation, footnote });
  }
}

/** Thumbs up or down on a reply, or the vote taken back (`value` null). */
export class PersonaChatFeedbackEvent extends PersonaChatEvent<{
  messageId: string | null;
  value: 'up' | 'down' | null;
}> {
  declare readonly messageId: string | null;
  declare readonly value: 'up' | 'down' | null;
  constructor(messageId: string | null, value: 'up' | 'down' | null) {
    super('persona-chat-feedback', { messageId, value });
  }
}

/** The visitor's text in the message box changed: typed, sent (now empty), or given back. Not for `setDraft()`. */
export class PersonaChatDraftEvent extends PersonaChatEvent<{ text: string }> {
  declare readonly text: string;
  constructor(text: string) {
    super('persona-chat-draft', { text });
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
    'persona-chat-draft': PersonaChatDraftEvent;
  }
}
