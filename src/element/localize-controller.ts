/**
 * @module
 * The element's language, as a reactive controller: the locale from `lang` on the element, then the nearest
 * `[lang]`, then the document's and the browser's (followed as the page changes them), and the string table of its
 * language, loaded when needed; English is shown meanwhile, and if the table cannot be loaded.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { languageOf, localeOf } from './language.js';
import { languages, loadTable } from './locale.js';
import type { Strings } from './strings.js';

export class LocalizeController implements ReactiveController {
  readonly #host: ReactiveControllerHost & HTMLElement;
  /** The language asked for last. */
  #wanted = 'en';
  /** The language whose strings are shown, and its table (undefined for English). */
  shown: { language: string; table: Partial<Strings> | undefined } = { language: 'en', table: undefined };
  readonly #onLanguage = () => this.update();
  readonly #languages = new MutationObserver(this.#onLanguage);

  constructor(host: ReactiveControllerHost & HTMLElement) {
    this.#host = host;
    host.addController(this);
  }

  hostConnected() {
    this.update();
    // A page that changes its language (a `lang` above the element, or the browser's) is followed.
    this.#languages.observe(document.documentElement, { attributeFilter: ['lang'], subtree: true });
    window.addEventListener('languagechange', this.#onLanguage);
  }

  hostDisconnected() {
    this.#languages.disconnect();
    window.removeEventListener('languagechange', this.#onLanguage);
  }

  /** The locale: `lang` on the element, then the nearest `[lang]`, then the document's, then the browser's. */
  get locale(): string {
    return localeOf(this.#host);
  }

  /** Shows the strings of the element's language, loading its table first; call it when `lang` changes. */
  update() {
    const language = languageOf(this.locale, languages);
    if (language === this.#wanted) return;
    this.#wanted = language;
    loadTable(language).then(
      table => {
        if (this.#wanted !== language) return;
        this.shown = { language, table };
        this.#host.requestUpdate();
      },
      error => console.warn(`<persona-chat>: the strings for lang="${language}" could not be loaded.`, error),
    );
  }
}
