/**
 * @module
 * The element's language, as a reactive controller: the locale from `lang` on the element, then the nearest
 * `[lang]`, then the document's and the browser's (followed as the page changes them), and the string table of its
 * language, loaded when needed; English is shown meanwhile, and if the table cannot be loaded. It also makes the
 * strings the element shows: that table under the site's overrides.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { languageOf, localeOf } from './language.js';
import { languages, loadTable } from './locale.js';
import { resolveStrings } from './strings.js';
import type { Strings } from './strings.js';

export class LocalizeController implements ReactiveController {
  readonly #host: ReactiveControllerHost & HTMLElement;
  /** The language asked for last. */
  #wanted = 'en';
  /** The language whose strings are shown, and its table (undefined for English). */
  shown: { language: string; table: Partial<Strings> | undefined } = { language: 'en', table: undefined };
  readonly #onLanguage = () => this.update();
  readonly #languages = new MutationObserver(this.#onLanguage);

  readonly #onStrings: (() => void) | undefined;
  #strings: { from: unknown[]; strings: Strings } | undefined;

  /** `onStrings` runs each time the strings shown are made anew. */
  constructor(host: ReactiveControllerHost & HTMLElement, onStrings?: () => void) {
    this.#host = host;
    this.#onStrings = onStrings;
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

  /**
   * The strings shown: the language's table under `overrides`, then `heading` and `placeholder` where set. The same
   * object until one of them changes, so that what was drawn with it can be skipped.
   */
  strings(overrides: Partial<Strings> | undefined, heading: string, placeholder: string): Strings {
    const from = [this.shown.table, overrides, heading, placeholder];
    if (this.#strings?.from.every((value, i) => value === from[i])) return this.#strings.strings;
    const strings = resolveStrings(this.shown.table, overrides);
    if (heading) strings.heading = heading;
    if (placeholder) strings.placeholder = placeholder;
    this.#strings = { from, strings };
    this.#onStrings?.();
    return strings;
  }
}
