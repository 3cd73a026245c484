/**
 * @module
 * What a screen reader hears, as a reactive controller: one polite live region, written apart from rendering. It
 * says what it is told, counts the characters left down at a few steps near the limit (not at every keystroke), and
 * reads a finished reply out once it is drawn: who wrote it, then its text as drawn (not its markdown), without
 * footnote numbers or buttons.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { messageMaxLength } from '../protocol.js';
import type { Strings } from './strings.js';

export interface AnnouncerOptions {
  /** The live region. */
  region(): Element | null | undefined;
  /** Where the replies are drawn: items with `data-key`, each reply's text in `.markdown`. */
  list(): Element | null | undefined;
  strings(): Strings;
  /** Who writes the replies. */
  speaker(): string;
}

/** How much of a reply is read out: the rest is read from the reply itself. */
const readMost = 2000;

export class Announcer implements ReactiveController {
  readonly #options: AnnouncerOptions;
  /** The turn whose reply is to be read out once it is drawn. */
  #pending: string | undefined;
  /** The last step of the characters-left count that was said. */
  #counted = Infinity;

  constructor(host: ReactiveControllerHost, options: AnnouncerOptions) {
    this.#options = options;
    host.addController(this);
  }

  hostUpdated() {
    if (this.#pending) this.#read(this.#pending);
  }

  /** Has screen readers say `text` (politely); an empty text clears the region. */
  say(text: string) {
    const region = this.#options.region();
    if (region) region.textContent = text;
  }

  /** Says how many characters are left of a message of `length`, at a few steps near the limit. */
  countDown(length: number) {
    const remaining = Math.max(0, messageMaxLength - length);
    const step = [0, 10, 20, 50, 100, 200].find(step => remaining <= step) ?? Infinity;
    if (step < this.#counted) this.say(this.#options.strings().charactersLeft(remaining));
    this.#counted = step;
  }

  /** Reads the reply of turn `id` out once it is drawn (after the host's next update). */
  announce(id: string) {
    this.#pending = id;
  }

  /**
   * Of a long reply, only its first 2,000 characters or so, and an ellipsis: a table of a thousand rows would cost
   * more to copy and lay out in the live region than a frame has.
   */
  #read(id: string) {
    this.#pending = undefined;
    const drawn = this.#options.list()?.querySelector(`.item[data-key="${CSS.escape(id)}"] .markdown`);
    if (!drawn) return;
    const copy = drawn.cloneNode() as Element;
    for (const node of drawn.childNodes) if (copy.textContent!.length < readMost) copy.append(node.cloneNode(true));
    copy.querySelectorAll('sup.cite, button').forEach(node => node.remove());
    const text = copy.textContent!.replace(/\s+/g, ' ').trim();
    const t = this.#options.strings();
    this.say(`${t.said(this.#options.speaker())} ${text.length > readMost ? text.slice(0, readMost) + '…' : text}`);
  }
}
