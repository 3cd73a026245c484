/**
 * @module
 * The transcript as one Tab stop. One message at a time is the current one (the newest, until the visitor moves):
 * it is in the Tab order, and so are its controls (footnotes, sources, code blocks, copy, feedback, Retry); every
 * other message and its controls are not, though a click, a screen reader or a script still reaches them. The
 * arrow keys, Home and End move from message to message. So the message box is a few Tab presses from the
 * header however long the conversation, and the controls of the message being read are right after it.
 */

const messages = '[role="article"]';
const controls = 'a[href], button, input, textarea, select, [tabindex]';
/** The tabindex of each control out of the Tab order, as it had it before (null for none). */
const kept = new WeakMap<Element, string | null>();

const moves: Record<string, (at: number, last: number) => number> = {
  ArrowUp: at => at - 1,
  ArrowDown: at => at + 1,
  Home: () => 0,
  End: (_, last) => last,
};

export class Transcript {
  readonly list: HTMLElement;
  #current: Element | null = null;
  #observer = new MutationObserver(records => this.#added(records));

  /** `list` should have `tabindex="-1"`: Firefox would otherwise make the scrolling box a Tab stop of its own. */
  constructor(list: HTMLElement) {
    this.list = list;
    list.addEventListener('focusin', this.#focused);
    list.addEventListener('keydown', this.#keydown);
    this.#observer.observe(list, { childList: true, subtree: true });
    this.#current = this.#newest();
    this.#sort(list);
  }

  disconnect() {
    this.#observer.disconnect();
    this.list.removeEventListener('focusin', this.#focused);
    this.list.removeEventListener('keydown', this.#keydown);
  }

  /** The message in the Tab order. */
  get current() {
    return this.#current;
  }

  #newest() {
    const all = this.list.querySelectorAll(messages);
    return all[all.length - 1] ?? null;
  }

  /** Puts `node`, its messages and their controls in the Tab order or out of it, by whether they are current. */
  #sort(node: Element) {
    const within = node.querySelectorAll(`${messages}, ${controls}`);
    for (const element of [node, ...within]) {
      const message = element.closest(messages);
      if (!message) continue;
      if (element === message) element.setAttribute('tabindex', message === this.#current ? '0' : '-1');
      else if (element.matches(controls)) reach(element, message === this.#current);
    }
  }

  #move(to: Element | null) {
    const from = this.#current;
    if (to === from) return;
    this.#current = to;
    if (from?.isConnected) this.#sort(from);
    if (to) this.#sort(to);
  }

  /** New messages and controls join the order they belong to; a new message becomes current unless the visitor is reading. */
  #added(records: MutationRecord[]) {
    const added = records.flatMap(record =>
      [...record.addedNodes].filter((node): node is Element => node.nodeType === Node.ELEMENT_NODE),
    );
    if (added.some(node => node.matches(messages) || node.querySelector(messages))) {
      const active = (this.list.getRootNode() as Document | ShadowRoot).activeElement;
      const reading = active !== null && this.list.contains(active) && this.#current?.isConnected;
      if (!reading) this.#move(this.#newest());
    }
    for (const node of added) this.#sort(node);
  }

  #focused = (event: FocusEvent) => {
    const message = (event.target as Element).closest(messages);
    if (message) this.#move(message);
  };

  #keydown = (event: KeyboardEvent) => {
    const message = event.target as HTMLElement;
    const move = moves[event.key];
    if (!move || !message.matches(messages) || event.altKey || event.ctrlKey || event.metaKey) return;
    const all = [...this.list.querySelectorAll<HTMLElement>(messages)];
    const next = all[move(all.indexOf(message), all.length - 1)];
    if (!next) return;
    event.preventDefault();
    this.#move(next);
    next.focus();
  };
}

/** Puts a control in the Tab order (with the tabindex it had) or takes it out, keeping that tabindex. */
function reach(control: Element, reachable: boolean) {
  if (reachable) {
    if (!kept.has(control)) return;
    const own = kept.get(control)!;
    kept.delete(control);
    if (own === null) control.removeAttribute('tabindex');
    else control.setAttribute('tabindex', own);
  } else if (!kept.has(control)) {
    kept.set(control, control.getAttribute('tabindex'));
    control.setAttribute('tabindex', '-1');
  }
}
