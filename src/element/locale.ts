/**
 * @module
 * The element's language: its string table, loaded only when a page needs it (each is a small file beside the
 * element's script; English is built in), and its writing direction.
 */
import type { Strings } from './strings.js';

type Table = Promise<{ default: Partial<Strings> }>;

const tables: Record<string, () => Table> = {
  ar: () => import('./locales/ar.js'),
  de: () => import('./locales/de.js'),
  es: () => import('./locales/es.js'),
  fr: () => import('./locales/fr.js'),
  he: () => import('./locales/he.js'),
  it: () => import('./locales/it.js'),
  ja: () => import('./locales/ja.js'),
  ko: () => import('./locales/ko.js'),
  nl: () => import('./locales/nl.js'),
  pl: () => import('./locales/pl.js'),
  pt: () => import('./locales/pt.js'),
  zh: () => import('./locales/zh.js'),
};

/** The languages with a string table, English (built in) first. */
export const languages = ['en', ...Object.keys(tables)];

/** The language's table; undefined for English. Rejects when the file cannot be loaded. */
export async function loadTable(language: string): Promise<Partial<Strings> | undefined> {
  return (await tables[language]?.())?.default;
}
