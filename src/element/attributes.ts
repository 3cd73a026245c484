/**
 * @module
 * How the element reads its attributes where a string is not enough: lists, JSON string tables and enumerations.
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

/** `value` if it is one of `allowed`; else `fallback`, with a warning naming the allowed values when it was set. */
export const oneOf = <T extends string>(value: string, allowed: readonly T[], fallback: T, name: string): T => {
  if ((allowed as readonly string[]).includes(value)) return value as T;
  if (value) console.warn(`<persona-chat>: ${name}="${value}" is not one of ${allowed.join(', ')}; using ${fallback}.`);
  return fallback;
};
