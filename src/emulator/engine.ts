/**
 * @module
 * The built-in reply engine: a full-text index (MiniSearch) over each persona's passages, and a short extractive
 * answer that cites what it used. A message the documents do not cover gets the persona's honest "I don't know".
 */
import MiniSearch from 'minisearch';
import type { Citation } from '../service/types.js';
import type { Persona } from './personas.js';

export interface Passage {
  id: string;
  documentId: string;
  fileId: string;
  title: string;
  url: string | undefined;
  contentType: string;
  lastUpdate: string;
  tags: Record<string, unknown>;
  text: string;
  partitionNumber: number;
}

export interface Retrieved {
  passage: Passage;
  /** The score relative to the best match, 0 to 1. */
  relevance: number;
}

export interface ComposedReply {
  text: string;
  citations: Citation[];
}

const stopwords = new Set(
  (
    'a about above after again all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers him his ' +
    'how i if in into is it its just me more most my no nor not of off on once only or other our ours out over own ' +
    'same she should so some such than that the their theirs them then there these they this those through to too ' +
    'under until up very was we were what when where which while who whom why will with would you your yours ' +
    'tell please know want need get got go use using there thanks thank hi hello hey ok okay'
  ).split(' '),
);

/** Lower-cases, drops stopwords and strips common English endings, so "returns" finds "return". */
export function processTerm(term: string): string | null {
  const word = term
    .toLowerCase()
    .replace(/['’]s$/, '')
    .replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
  if (word.length < 2 || stopwords.has(word)) return null;
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith('ies')) return word.slice(0, -3) + 'y';
  if (word.length > 4 && word.endsWith('es') && /(ch|sh|x|ss)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  if (word.length > 4 && word.endsWith('ed')) return word.slice(0, -2);
  return word;
}

/** Every word of a text, processed as the index processes them. */
export function terms(text: string): string[] {
  return text
    .split(/[\s/]+/)
    .map(processTerm)
    .filter((t): t is string => Boolean(t));
}

/** A persona's documents, split into passages and indexed. */
export class KnowledgeBase {
  readonly #search: MiniSearch<Passage>;
  readonly #passages = new Map<string, Passage>();

  constructor(readonly persona: Persona) {
    this.#search = new MiniSearch<Passage>({
      fields: ['title', 'text'],
      storeFields: [],
      processTerm,
      searchOptions: {
        boost: { title: 1.5 },
        prefix: term => term.length >= 4,
        combineWith: 'OR',
      },
    });
    const fallbackDate = new Date(Date.UTC(2026, 0, 1)).toISOString();
    for (const doc of persona.documents) {
      doc.passages.forEach((text, partitionNumber) => {
        const passage: Passage = {
          id: `${doc.documentId}#${partitionNumber}`,
          documentId: doc.documentId,
          fileId: doc.fileId ?? `${doc.documentId}.md`,
          title: doc.title,
          url: doc.url,
          contentType: doc.contentType,
          lastUpdate: doc.lastUpdate ?? fallbackDate,
          tags: doc.tags,
          text,
          partitionNumber,
        };
        this.#passages.set(passage.id, passage);
      });
    }
    this.#search.addAll([...this.#passages.values()]);
  }

  /** The passages that best answer `query`, best first; empty when nothing in the documents matches. */
  retrieve(query: string, limit = 3): Retrieved[] {
    if (terms(query).length === 0) return [];
    const results = this.#search.search(query);
    const top = results[0]?.score ?? 0;
    if (top <= 0) return [];
    return results
      .filter(result => result.score >= top * 0.35)
      .slice(0, limit)
      .map(result => ({
        passage: this.#passages.get(String(result.id))!,
        relevance: Math.round((result.score / top) * 1000) / 1000,
      }));
  }
}

/** Sentences end at . ! or ? before a capital letter, so abbreviations such as "a.m. to" stay whole. */
const splitSentences = (text: string) => text.split(/(?<=[.!?])\s+(?=[A-Z"'(])/).map(s => s.trim());

/** The `count` sentences of a passage that share the most words with the question, in their own order. */
function bestSentences(text: string, query: string[], count: number): string {
  const sentences = splitSentences(text);
  if (sentences.length <= count) return sentences.join(' ');
  const wanted = new Set(query);
  const scored = sentences.map((sentence, i) => ({
    i,
    score: terms(sentence).filter(t => wanted.has(t) || [...wanted].some(w => w.length >= 4 && t.startsWith(w))).length,
  }));
  const picked = scored
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .slice(0, count)
    .sort((a, b) => a.i - b.i);
  return picked.map(p => sentences[p.i]).join(' ');
}

/** Groups retrieved passages by document (two at most each), in order of first appearance, as Citations. */
export function citationsFor(persona: Persona, retrieved: Retrieved[]): Citation[] {
  const byDocument = new Map<string, Citation>();
  for (const { passage, relevance } of retrieved) {
    let citation = byDocument.get(passage.documentId);
    if (!citation) {
      citation = {
        link: `${persona.index}/${passage.documentId}/${passage.fileId}`,
        index: persona.index,
        documentId: passage.documentId,
        fileId: passage.fileId,
        sourceContentType: passage.contentType,
        sourceName: passage.title,
        sourceUrl: passage.url,
        partitions: [],
      };
      byDocument.set(passage.documentId, citation);
    }
    if (citation.partitions!.length >= 2) continue;
    citation.partitions!.push({
      text: passage.text,
      relevance,
      partitionNumber: passage.partitionNumber,
      sectionNumber: passage.partitionNumber + 1,
      lastUpdate: passage.lastUpdate,
      tags: passage.tags,
    });
  }
  return [...byDocument.values()];
}

const greeting = /^\s*(hi|hello|hey|good (morning|afternoon|evening)|thanks|thank you)\b[\s!.,]*$/i;

/** A short extractive answer to `message` from the persona's documents, with `[n]` markers and its Citations. */
export function composeReply(kb: KnowledgeBase, message: string): ComposedReply {
  const { persona } = kb;
  if (greeting.test(message)) {
    return { text: persona.greeting || `Hello! I'm ${persona.name}. What would you like to know?`, citations: [] };
  }
  const retrieved = kb.retrieve(message);
  if (retrieved.length === 0) return { text: persona.style.unknown, citations: [] };
  const citations = citationsFor(persona, retrieved);
  const query = terms(message);
  const paragraphs = citations.map((citation, i) => {
    const partitions = citation.partitions!;
    const body = partitions.map(p => bestSentences(p.text, query, partitions.length === 1 ? 2 : 1)).join(' ');
    return `**${citation.sourceName}:** ${body} [${i + 1}]`;
  });
  const leads = persona.style.lead;
  const lead = leads.length ? leads[hash(message) % leads.length] : '';
  return { text: [lead, ...paragraphs].filter(Boolean).join('\n\n'), citations };
}

/** A rough token count (about four characters a token), the same for every message the emulator counts. */
export function countTokens(text: string): number {
  return text ? Math.ceil(text.length / 4) : 0;
}

/** Splits text into words that keep their trailing whitespace, so the pieces join back to the exact text. */
export function words(text: string): string[] {
  return text.split(/(?<=\s)(?=\S)/).filter(Boolean);
}

function hash(text: string): number {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (h * 31 + text.charCodeAt(i)) >>> 0;
  return h;
}
