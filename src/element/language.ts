/**
 * @module
 * Which language an element speaks, with nothing to load: the launcher needs it before the chat is loaded (for its
 * label), and the chat to pick its string table; each knows the languages it has words in.
 */
/** The language of a BCP 47 tag (`pt-BR` is `pt`, `iw` is `he`) if it is one of `known`, else English. */
export function languageOf(tag: string, known: readonly string[]): string {
  const base = tag.trim().toLowerCase().split(/[-_]/)[0]!;
  const language = base === 'iw' ? 'he' : base;
  return known.includes(language) ? language : 'en';
}

/** An element's locale: its `lang`, then the nearest `[lang]`, then the document's, then the browser's. */
export const localeOf = (el: Element) =>
  el.closest('[lang]')?.getAttribute('lang') || document.documentElement.lang || navigator.language;

export const isRightToLeft = (language: string) => language === 'ar' || language === 'he';
