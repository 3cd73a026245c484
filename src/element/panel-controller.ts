/**
 * @module
 * The floating panel as a reactive controller: its `<dialog>` shown as the host's `open` says, modal below the
 * narrow breakpoint (the page behind is inert, the focus stays in the panel, Escape closes it) and beside the page
 * above it; and the focus, which goes where the visitor's work goes on when what had it goes away (the panel closed,
 * a comment sent), never to the page's body. The history view moves the focus in it itself.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';

/** Below this, the floating panel covers the page and is modal (the stylesheet's breakpoint too). */
const narrow = '(max-width: 480px)';

/** What the panel needs from its element. */
export interface PanelHost extends ReactiveControllerHost, HTMLElement {
  open: boolean;
  readonly renderRoot: HTMLElement | DocumentFragment;
}

export class PanelController implements ReactiveController {
  readonly #host: PanelHost;
  /** Below this width the floating panel covers the page, and is modal. */
  readonly #narrow = matchMedia(narrow);
  readonly #onNarrow = () => this.#sync();
  /** Whether the launcher script's launcher had the focus when the element took its shadow root over. */
  #launcherFocused = false;

  constructor(host: PanelHost) {
    this.#host = host;
    host.addController(this);
  }

  hostConnected() {
    this.#narrow.addEventListener('change', this.#onNarrow);
  }

  hostDisconnected() {
    this.#narrow.removeEventListener('change', this.#onNarrow);
  }

  hostUpdated() {
    if (this.#launcherFocused) {
      this.#launcherFocused = false;
      this.#find('.launcher')?.focus();
    }
    this.#sync();
  }

  /**
   * Takes a shadow root over: the launcher script may have drawn a launcher in it while the chat loaded, and the
   * element draws its own, with the focus if the first had it.
   */
  adopt(drawn: ShadowRoot | null) {
    if (!drawn) return;
    this.#launcherFocused = Boolean(drawn.activeElement);
    const launcher = drawn.querySelector('.launcher');
    drawn.replaceChildren();
    // A press begun on that launcher and ended on this one is a click the browser does not fire (its halves fell on
    // two buttons): the element's first pointerup, before any pointerdown, opens the panel once the click would have.
    if (!launcher) return;
    const host = this.#host;
    let pressed = true;
    host.addEventListener('pointerdown', () => (pressed = false), { once: true });
    host.addEventListener('pointerup', () => pressed && setTimeout(() => (host.open = true)), { once: true });
  }

  /** Gives the focus back to the launcher, once the panel is closed. */
  async closed() {
    await this.#host.updateComplete;
    this.#find('.launcher')?.focus();
  }

  /**
   * Moves the focus after an update whose `changes` (the properties' values before) touched `commenting`, the reply
   * whose comment box is open: into the box when it opens, back to the thumbs-down that opened it when it closes.
   */
  refocus(changes: Map<PropertyKey, unknown>, commenting: string | null) {
    if (!changes.has('commenting')) return;
    const before = changes.get('commenting') as string | null | undefined;
    if (commenting) this.#find('.comment textarea')?.focus();
    else if (before) this.#find(`.item[data-key="${CSS.escape(before)}"] [aria-pressed="true"]`)?.focus();
  }

  #find(selector: string) {
    return this.#host.renderRoot.querySelector<HTMLElement>(selector) ?? undefined;
  }

  /** Shows the floating panel as the host's `open` says, modal or not by the viewport's width. */
  #sync() {
    // Among the root's few children: a search of the whole tree would cost as much as the conversation is long.
    const dialog = [...this.#host.renderRoot.children].find(child => child instanceof HTMLDialogElement);
    if (!dialog) return;
    if (!this.#host.open) return void (dialog.open && dialog.close());
    // Asked afresh: Firefox updates a kept MediaQueryList's `matches` only when it fires its change event.
    const modal = matchMedia(narrow).matches;
    if (dialog.open && dialog.matches(':modal') === modal) return;
    if (dialog.open) dialog.close();
    if (modal) dialog.showModal();
    else dialog.show();
  }
}
