/**
 * @module
 * The history view's place in the element, as a reactive controller: whether the view is shown and what its list
 * holds; the view's code (`history.ts`, a chunk of its own), loaded the first time the visitor opens it; and the
 * focus, which follows the visitor's work in the view: into a rename or a delete, back to the conversation after one,
 * to the list's heading when a conversation went, to the message box when the view closes.
 */
import { html, nothing } from 'lit';
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import type { Conversations, HistoryHost, HistoryList, HistoryView } from './history.js';
import type { Strings } from './strings.js';

/** What the view needs of the element, and what the element does when the view's code cannot be loaded. */
export type HistoryOptions = Pick<HistoryHost, 'open' | 'strings' | 'say'> & { failed(): void };

export class HistoryController implements ReactiveController, HistoryHost {
  /** The view's list, while the view is shown. */
  list: HistoryList | undefined;
  /** The list when the host last updated, which the focus follows from. */
  #before: HistoryList | undefined;
  #view: Promise<HistoryView> | undefined;
  #shown: HistoryView | undefined;
  readonly #host: ReactiveControllerHost & HTMLElement;
  readonly #chat: Conversations;
  // Set from the options.
  declare readonly open: HistoryOptions['open'];
  declare readonly strings: HistoryOptions['strings'];
  declare readonly say: HistoryOptions['say'];
  declare readonly failed: HistoryOptions['failed'];

  constructor(host: ReactiveControllerHost & HTMLElement, chat: Conversations, options: HistoryOptions) {
    Object.assign(this, options);
    this.#host = host;
    this.#chat = chat;
    host.addController(this);
  }

  get root() {
    return this.#host.shadowRoot!;
  }

  /** Shows `list` in the view; undefined leaves it. */
  show(list: HistoryList | undefined) {
    this.list = list;
    this.#host.requestUpdate();
  }

  /** Shows or leaves the view; its code is loaded the first time. */
  async toggle() {
    if (this.list) return this.show(undefined);
    this.#view ??= import('./history.js').then(({ HistoryView }) => new HistoryView(this, this.#chat));
    try {
      await (this.#shown = await this.#view).show();
    } catch {
      // Its file could not be loaded (offline, a deploy that removed it): the next press tries again.
      this.#view = undefined;
      this.failed();
    }
  }

  /** The view, while it is shown, in `language`, its title a heading of `level`. */
  render(strings: Strings, language: string, level: number) {
    const { list } = this;
    return (
      list && this.#shown?.render({ html, nothing }, list, this.#chat.state.conversationId, strings, language, level)
    );
  }

  hostUpdated() {
    const list = this.list;
    const before = this.#before;
    this.#before = list;
    if (list === before) return;
    if (list?.renaming && list.renaming !== before?.renaming) this.#focus('.rename input');
    else if (list?.deleting && list.deleting !== before?.deleting) this.#focus('.confirm [data-cancel]');
    else if (list && before && list.items.length < before.items.length) this.#focus('#history-heading');
    else if (list && before?.renaming && !list.renaming) {
      this.#focus(`.conversation[data-id="${CSS.escape(before.renaming)}"]`);
    } else if (list && before?.deleting && !list.deleting)
      this.#focus(`[data-delete="${CSS.escape(before.deleting)}"]`);
    else if (!list && before) this.#focus('textarea');
  }

  #focus(selector: string) {
    this.root.querySelector<HTMLElement>(selector)?.focus();
  }
}
