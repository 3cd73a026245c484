/**
 * @module
 * What the backend keeps about a conversation's replies where the interface has no place for it: the visitor's
 * feedback on each reply, and the citations of each reply (chat messages carry none in the interface, and the
 * backend's store keeps a reply only for its replay window). It lives in the conversation's metadata under our own
 * key, `personaChat`, which any device and any instance of the backend reads; the other keys of the metadata (the
 * browser's `client`, the site's own) are left as they are. Every map is bounded, keeping the newest entries by
 * their `timestamp` (a service may not keep the order of an object's keys). What is read back is checked: the
 * metadata is anyone's to write.
 */
import { normalizeCitations } from '../service/citations.js';
import type { Citation, MessageFeedback, Partition } from '../protocol.js';
import type { Feedback } from '../service/types.js';

/** The key of the metadata the backend keeps its own maps under. */
export const namespace = 'personaChat';

/** A visitor's feedback on a reply, as kept: the interface's Feedback fields. */
export type StoredFeedback = Required<Pick<Feedback, 'feedbackId' | 'score' | 'tags' | 'timestamp'>> &
  Pick<Feedback, 'comments'>;

/** Feedback is kept for the newest 200 replies that have some, in at most 64 KiB of JSON. */
export const feedbackBounds = { entries: 200, bytes: 64 * 1024 };

/**
 * Citations are kept for the newest 50 replies that have some, in at most 48 KiB of JSON: with the feedback's 64 KiB,
 * the backend's keys stay well within what a service keeps in metadata (the emulator takes bodies of 256 KiB).
 */
export const citationBounds = { entries: 50, bytes: 48 * 1024 };

/** Each citation keeps at most 5 passages of at most 300 characters. */
const passages = { count: 5, chars: 300 };

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

/**
 * The newest entries of a map by their `timestamp`, as many as fit the bounds: the oldest go first, and an entry
 * that does not fit beside the newer ones is dropped.
 */
export function newest<T>(entries: Record<string, T>, bounds: { entries: number; bytes: number }): Record<string, T> {
  const byAge = Object.entries(entries).sort(([, a], [, b]) => timeOf(b) - timeOf(a));
  const kept: [string, T][] = [];
  let bytes = 2;
  for (const [key, value] of byAge.slice(0, bounds.entries)) {
    const size = encoder.encode(JSON.stringify({ [key]: value })).byteLength - 1;
    if (bytes + size > bounds.bytes) continue;
    bytes += size;
    kept.push([key, value]);
  }
  return Object.fromEntries(kept.reverse());
}

/** The metadata with a reply's feedback set (replacing any earlier), or taken back when undefined, bounded. */
export function withFeedback(
  metadata: Record<string, unknown> | undefined,
  messageId: string,
  feedback: StoredFeedback | undefined,
): Record<string, unknown> {
  const { [messageId]: _taken, ...entries } = ours(metadata, 'feedback');
  if (feedback) entries[messageId] = feedback;
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

/** Up to `max` characters of `text` (never half a character), with "…" when cut. */
function shorten(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max).join('').trimEnd()}…`;
}

/** What a reply's sources need to be shown again: the document, its name and link, and the start of its passages. */
export function compactCitations(citations: Citation[], withPassages = true): Citation[] {
  return citations.map(({ documentId, sourceName, sourceUrl, partitions }) => {
    const kept: Partition[] = withPassages
      ? (partitions ?? []).slice(0, passages.count).map(({ text, relevance }) => ({
          text: shorten(text, passages.chars),
          ...(relevance === undefined ? {} : { relevance }),
        }))
      : [];
    return {
      ...(documentId === undefined ? {} : { documentId }),
      ...(sourceName === undefined ? {} : { sourceName }),
      ...(sourceUrl === undefined ? {} : { sourceUrl }),
      ...(kept.length ? { partitions: kept } : {}),
    };
  });
}

/** A reply's citations to keep, and when the reply ended. */
export interface KeptCitations {
  citations: Citation[];
  timestamp: string;
}

/**
 * The metadata with the citations of some replies kept (by messageId), compacted and bounded. A reply whose sources
 * would take more than half the bound is kept without their passages.
 */
export function withCitations(
  metadata: Record<string, unknown> | undefined,
  replies: Iterable<[messageId: string, kept: KeptCitations]>,
): Record<string, unknown> {
  const entries = { ...ours(metadata, 'citations') };
  for (const [messageId, { citations, timestamp }] of replies) {
    let entry = { timestamp, citations: compactCitations(citations) };
    if (encoder.encode(JSON.stringify(entry)).byteLength > citationBounds.bytes / 2) {
      entry = { timestamp, citations: compactCitations(citations, false) };
    }
    entries[messageId] = entry;
  }
  return withMap(metadata, 'citations', newest(entries, citationBounds));
}

/** The citations kept for each reply of the conversation, by messageId, in the protocol's shape. */
export function citationsOf(metadata: Record<string, unknown> | undefined): Map<string, Citation[]> {
  const kept = new Map<string, Citation[]>();
  for (const [messageId, entry] of Object.entries(ours(metadata, 'citations'))) {
    if (isObject(entry) && Array.isArray(entry.citations)) kept.set(messageId, normalizeCitations(entry.citations));
  }
  return kept;
}

/** How a reply that left nothing in the service's history ended: stopped by the visitor, or failed. */
export interface KeptOutcome {
  status: 'stopped' | 'failed';
  /** Our error code, for a failed reply. */
  code?: string;
  timestamp: string;
}

/** Outcomes are kept for the newest 100 replies that had one, in at most 8 KiB of JSON. */
export const outcomeBounds = { entries: 100, bytes: 8 * 1024 };

/**
 * The metadata with the outcome of a reply kept under its run's key, bounded: a stopped or failed reply leaves no
 * message in the service's history, and the backend's store forgets it after the replay window, so this is where a
 * report over weeks learns of it.
 */
export function withOutcome(
  metadata: Record<string, unknown> | undefined,
  key: string,
  outcome: KeptOutcome,
): Record<string, unknown> {
  const entries = { ...ours(metadata, 'outcomes'), [key]: outcome };
  return withMap(metadata, 'outcomes', newest(entries, outcomeBounds));
}

/** The outcomes kept in the conversation's metadata, by run key; entries that are not outcomes are left out. */
export function outcomesOf(metadata: Record<string, unknown> | undefined): Map<string, KeptOutcome> {
  const kept = new Map<string, KeptOutcome>();
  for (const [key, entry] of Object.entries(ours(metadata, 'outcomes'))) {
    if (!isObject(entry) || (entry.status !== 'stopped' && entry.status !== 'failed')) continue;
    if (typeof entry.timestamp !== 'string' || Number.isNaN(Date.parse(entry.timestamp))) continue;
    kept.set(key, {
      status: entry.status,
      ...(typeof entry.code === 'string' ? { code: entry.code } : {}),
      timestamp: entry.timestamp,
    });
  }
  return kept;
}
