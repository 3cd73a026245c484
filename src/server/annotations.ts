/**
 * @module
 * What the backend keeps about a conversation's replies where the interface has no place for it: the visitor's
 * feedback on each reply. It lives in the conversation's metadata under our own key, `personaChat`, which any
 * device and any instance of the backend reads; the other keys of the metadata (the browser's `client`, the site's
 * own) are left as they are. Every map is bounded, keeping the newest entries by their `timestamp` (a service may
 * not keep the order of an object's keys). What is read back is checked: the metadata is anyone's to write.
 */
import type { MessageFeedback } from '../protocol.js';
import type { Feedback } from '../service/types.js';

/** The key of the metadata the backend keeps its own maps under. */
export const namespace = 'personaChat';

/** A visitor's feedback on a reply, as kept: the interface's Feedback fields. */
export type StoredFeedback = Required<Pick<Feedback, 'feedbackId' | 'score' | 'tags' | 'timestamp'>> &
  Pick<Feedback, 'comments'>;

/** Feedback is kept for the newest 200 replies that have some, in at most 64 KiB of JSON. */
export const feedbackBounds = { entries: 200, bytes: 64 * 1024 };

const encoder = new TextEncoder();

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Our namespace of a conversation's metadata, and one of its maps. */
function ours(metadata: Record<string, unknown> | undefined, map: string): Record<string, unknown> {
  const kept = isObject(metadata?.[namespace]) ? metadata[namespace] : {};
  return isObject(kept[map]) ? kept[map] : {};
}

/** The metadata with one of our maps replaced, everything else as it was. */
function withMap(metadata: Record<string, unknown> | undefined, map: string, entries: Record<string, unknown>) {
  const kept = isObject(metadata?.[namespace]) ? metadata[namespace] : {};
  return { ...metadata, [namespace]: { ...kept, [map]: entries } };
}

const timeOf = (entry: unknown) => {
  const time = isObject(entry) && typeof entry.timestamp === 'string' ? Date.parse(entry.timestamp) : NaN;
  return Number.isNaN(time) ? 0 : time;
};

/** The newest entries of a map, by their `timestamp`, as many as fit the bounds; the oldest go first. */
export function newest<T>(entries: Record<string, T>, bounds: { entries: number; bytes: number }): Record<string, T> {
  const byAge = Object.entries(entries).sort(([, a], [, b]) => timeOf(b) - timeOf(a));
  const kept: [string, T][] = [];
  let bytes = 2;
  for (const [key, value] of byAge.slice(0, bounds.entries)) {
    bytes += encoder.encode(JSON.stringify({ [key]: value })).byteLength - 1;
    if (bytes > bounds.bytes) break;
    kept.push([key, value]);
  }
  return Object.fromEntries(kept.reverse());
}

/** The metadata with a reply's feedback set (replacing any earlier), bounded. */
export function withFeedback(
  metadata: Record<string, unknown> | undefined,
  messageId: string,
  feedback: StoredFeedback,
): Record<string, unknown> {
  const entries = { ...ours(metadata, 'feedback'), [messageId]: feedback };
  return withMap(metadata, 'feedback', newest(entries, feedbackBounds));
}

/** Feedback as the browser sees it: a score of 1 or -1, or nothing that counts. */
export function feedbackView(entry: unknown): MessageFeedback | null {
  if (!isObject(entry) || (entry.score !== 1 && entry.score !== -1)) return null;
  return {
    score: entry.score,
    comment: typeof entry.comments === 'string' && entry.comments ? entry.comments : null,
    tags: Array.isArray(entry.tags) ? entry.tags.filter((tag): tag is string => typeof tag === 'string') : [],
  };
}

/** The feedback kept on each reply of the conversation, by messageId. */
export function feedbackOf(metadata: Record<string, unknown> | undefined): Map<string, MessageFeedback> {
  const views = new Map<string, MessageFeedback>();
  for (const [messageId, entry] of Object.entries(ours(metadata, 'feedback'))) {
    const view = feedbackView(entry);
    if (view) views.set(messageId, view);
  }
  return views;
}
