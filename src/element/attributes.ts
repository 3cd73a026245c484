/**
 * @module
 * How the element reads its attributes where a string is not enough: lists, JSON string tables, a few allowed values and
 * heading levels.
 * Pure, and forgiving: a bad value never throws; it falls back, with one warning naming what was expected.
 */
import type { Strings } from './strings.js';

/** The `starters` attribute: a JSON array of strings, or strings separated by `|`. */
export function parseList(value: string | null): string[] {
  if (!value) return [];
  try {
    const parsed: unknown = JSON.parse(value);
    if (Array.isArray(parsed)) return parsed.filter((item): item is string => typeof item === 'string' && !!item);
  } catch {
    // Not JSON: a list separated by `|`.
  }
  return value
    .split('|')
    .map(item => item.trim())
    .filter(Boolean);
}

/** The `strings` attribute: JSON of strings; anything else is ignored with a warning. */
export function parseStrings(value: string | null): Partial<Strings> | undefined {
  if (!value) return undefined;
  try {
    const parsed: unknown = JSON.parse(value);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Partial<Strings>;
  } catch {
    // Warned about below.
  }
  console.warn('<persona-chat>: the strings attribute must be a JSON object of strings; it is ignored.');
  return undefined;
}

/** The attributes that take one of a few values, the first being the default. */
const choices = {
  mode: ['launcher', 'inline'],
  position: ['bottom-right', 'bottom-left'],
  theme: ['auto', 'light', 'dark'],
  storage: ['local', 'session', 'none'],
  loading: ['intent', 'idle', 'eager'],
};

/** `level` if it is a heading level, 1 to 6; else 2. */
export const headingLevel = (level: number) => (Number.isInteger(level) && level >= 1 && level <= 6 ? level : 2);

/**
 * Warns once for each attribute whose value the element does not know, naming what it uses instead: one of a few
 * values (the default is used), or a heading level (2 is used).
 */
export function warnUnknown(element: Record<keyof typeof choices, string> & { headingLevel: number }) {
  for (const [name, allowed] of Object.entries(choices)) {
    const value = element[name as keyof typeof choices];
    if (value && !allowed.includes(value)) {
      console.warn(`<persona-chat>: ${name}="${value}" is not one of ${allowed.join(', ')}; using ${allowed[0]}.`);
    }
  }
  const level = element.headingLevel;
  if (headingLevel(level) !== level)
    console.warn(`<persona-chat>: heading-level="${level}" is not a level from 1 to 6; using 2.`);
}
