/**
 * @module
 * Thumbs up and down on replies, as a reactive controller. Pressing the thumb pressed takes the vote back. A
 * thumbs-down opens a short comment box under its reply (its code, `comment.ts`, a chunk of its own loaded on the
 * first thumbs-down) and is kept once: with the comment when the visitor sends one, or without it when the box is
 * left (Escape, another thumb, another conversation, the element removed, the page hidden or left, or its code
 * that could not be loaded).
 */
import { html } from 'lit';
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type * as commentBox from './comment.js';
import type { PersonaChatError } from './errors.js';
import { PersonaChatFeedbackEvent } from './events.js';
import type { Feedback } from './state.js';
import type { Strings } from './strings.js';

/** What keeps the votes: the chat controller. */
export interface Votes {
  readonly state: { readonly conversationId: string | null };
  /**
   * Shows a vote on reply `id` (none: taken back), and keeps it at the backend if `keep` (for `conversationId`, else
   * the one shown).
   */
  feedback(
    id: string,
    messageId: string | null,
    value: Feedback | undefined,
    comment: string | undefined,
    keep: boolean,
    conversationId?: string | null,
  ): Promise<void>;
}

export interface FeedbackOptions {
  /**
   * Shows the comment box under reply `commenting` (none if null), and thanks reply `thanked` when given (the one
   * thanked stays when undefined).
   */
  show(commenting: string | null, thanked?: string | null): void;
  /** A vote the backend refused. */
  failed(error: PersonaChatError): void;
}

/** The comment box's code. */
type CommentBox = typeof commentBox;

export class FeedbackController implements ReactiveController {
  readonly #host: ReactiveControllerHost & HTMLElement;
  readonly #votes: Votes;
  readonly #options: FeedbackOptions;
  /** The thumbs-down whose comment box is open, kept once the box is done with. */
  #pending: { id: string; messageId: string | null; conversationId: string | null } | undefined;
  /** The comment box's code, being loaded and once loaded. */
  #form: Promise<CommentBox> | undefined;
  #comment: CommentBox | undefined;
  /** Ends the listening of the page's events, while connected. */
  #listening: AbortController | undefined;

  constructor(host: ReactiveControllerHost & HTMLElement, votes: Votes, options: FeedbackOptions) {
    this.#host = host;
    this.#votes = votes;
    this.#options = options;
    host.addController(this);
  }

  hostConnected() {
    const options = { signal: (this.#listening = new AbortController()).signal };
    window.addEventListener('pagehide', () => this.keep(), options);
    document.addEventListener('visibilitychange', () => document.visibilityState === 'hidden' && this.keep(), options);
  }

  hostDisconnected() {
    this.#listening?.abort();
    this.keep();
  }

  /**
   * Thumbs `value` on reply `id` (undefined takes the vote back), or the comment of its thumbs-down. A thumbs-down
   * without a comment opens the comment box and waits; anything else is kept at once. Fires `persona-chat-feedback`
   * for a thumb.
   */
  give(id: string, messageId: string | null, value: Feedback | undefined, comment?: string) {
    const asking = value === 'down' && comment === undefined;
    this.keep(id);
    this.#options.show(null, comment === undefined ? null : id);
    this.#pending = asking ? { id, messageId, conversationId: this.#votes.state.conversationId } : undefined;
    if (asking) {
      this.#form ??= import('./comment.js').then(form => (form.style(this.#host.shadowRoot!), form));
      this.#form.then(
        form => {
          this.#comment = form;
          if (this.#pending?.id === id) this.#options.show(id);
        },
        () => {
          // Its file could not be loaded (offline, a deploy that removed it): the thumbs-down is kept as it is.
          this.#form = undefined;
          this.keep();
        },
      );
    }
    void this.#votes
      .feedback(id, messageId, value, comment, !asking)
      .catch((error: unknown) => this.#options.failed(error as PersonaChatError));
    if (comment === undefined) this.#host.dispatchEvent(new PersonaChatFeedbackEvent(messageId, value ?? null));
  }

  /** The comment box of the thumbs-down waiting for its comment, in `strings`, once its code is loaded. */
  form(strings: Strings) {
    const pending = this.#pending;
    return (
      pending &&
      this.#comment?.commentForm(html, strings, comment => this.give(pending.id, pending.messageId, 'down', comment))
    );
  }

  /** Keeps a thumbs-down whose comment box is left without a comment (unless it is reply `except`'s). */
  keep(except?: string) {
    const pending = this.#pending;
    this.#pending = undefined;
    if (!pending || pending.id === except) return;
    this.#options.show(null);
    void this.#votes
      .feedback(pending.id, pending.messageId, 'down', undefined, true, pending.conversationId)
      .catch(() => {});
  }
}
