/**
 * @module
 * Citations as the protocol shapes them, from whatever the service sent. The service's citations are untrusted: a
 * field of the wrong type is dropped, text is bounded, and a citation with nothing left to show is dropped. Used by
 * the client (as citations arrive) and the backend (before a citation is kept or sent). Positions are kept: a marker like `[3]` points at the third citation, so one that is
 * unusable as a whole stays as an empty citation (shown as "Source 3") rather than shifting the others.
 */
import type { Citation, Partition } from '../protocol.js';

const maxCitations = 50;
const maxPartitions = 20;
const maxText = 4000;
const maxField = 2000;
const maxTags = 20;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const text = (value: unknown, max = maxField) => (typeof value === 'string' && value ? value.slice(0, max) : undefined);
const finite = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
const integer = (value: unknown) => (Number.isSafeInteger(value) ? (value as number) : undefined);

/** Tags keep string values and arrays of strings. */
function tags(value: unknown): Record<string, string | string[]> | undefined {
  if (!isObject(value)) return undefined;
  const kept: [string, string | string[]][] = [];
  for (const [name, tag] of Object.entries(value).slice(0, maxTags)) {
    if (typeof tag === 'string') kept.push([name.slice(0, 100), tag.slice(0, 200)]);
    else if (Array.isArray(tag)) {
      const strings = tag.filter((t): t is string => typeof t === 'string').slice(0, maxTags);
      kept.push([name.slice(0, 100), strings.map(t => t.slice(0, 200))]);
    }
  }
  return kept.length ? Object.fromEntries(kept) : undefined;
}

function partition(value: unknown): Partition | undefined {
  if (!isObject(value)) return undefined;
  const body = text(value.text, maxText);
  if (body === undefined) return undefined;
  return prune({
    text: body,
    relevance: finite(value.relevance),
    partitionNumber: integer(value.partitionNumber),
    sectionNumber: integer(value.sectionNumber),
    lastUpdate: text(value.lastUpdate, 64),
    tags: tags(value.tags),
  });
}

function citation(value: unknown): Citation {
  if (!isObject(value)) return {};
  const partitions = Array.isArray(value.partitions)
    ? value.partitions
        .slice(0, maxPartitions)
        .map(partition)
        .filter(p => p !== undefined)
    : [];
  return prune({
    link: text(value.link),
    index: text(value.index, 200),
    documentId: text(value.documentId, 200),
    fileId: text(value.fileId, 200),
    sourceContentType: text(value.sourceContentType, 200),
    sourceName: text(value.sourceName, 500),
    sourceUrl: text(value.sourceUrl),
    partitions: partitions.length ? partitions : undefined,
  });
}

/** The citations in `value` with what fits the protocol's shape, bounded; anything else is dropped. */
export function normalizeCitations(value: unknown): Citation[] {
  return Array.isArray(value) ? value.slice(0, maxCitations).map(citation) : [];
}

function prune<T extends object>(fields: T): T {
  for (const key of Object.keys(fields) as (keyof T)[]) if (fields[key] === undefined) delete fields[key];
  return fields;
}
