/**
 * @module
 * The figures of the insights report, computed from conversations as the service lists them and as the backend
 * annotated them (see `../annotations.ts`). Pure: conversations in, figures out, the same figures for the same
 * conversations. What counts where:
 *
 * - A message counts on the UTC day of its `timestamp`, when that day is in the period; a message without a time is
 *   left out (and counted as undated).
 * - A conversation counts once, on the day of its first message or kept outcome in the period. Conversations the
 *   visitor deleted (the backend's status `deleted`, or the service's `isDeleted`) are left out entirely.
 * - Visitors are distinct `externalUserId`s, counted and never kept.
 * - Stopped and failed replies are the outcomes the backend keeps (such a reply leaves nothing in the history);
 *   unanswered questions are questions the history holds with no reply after them.
 * - Thumbs are those on replies of the period: the backend's feedback (score 1 or -1) and the service's own
 *   `feedbacks` (a positive or negative score), each feedback once.
 * - A reply's sources are the citations the backend kept for it; a reply with none is a question answered with no
 *   source.
 * - Texts (questions, replies, comments) are kept only when asked for; every count is there either way.
 */
import { citationsOf, feedbackView, outcomesOf } from '../annotations.js';
import type { Conversation } from '../../service/types.js';

/** The figures of one day, one persona, or the whole report. */
export interface Figures {
  conversations: number;
  /** Every message: the visitors' questions and the replies. */
  messages: number;
  questions: number;
  replies: number;
  visitors: number;
  stopped: number;
  failed: number;
  unanswered: number;
  thumbsUp: number;
  thumbsDown: number;
  /** Thumbs up over all thumbs; null with no thumbs. */
  upRatio: number | null;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** `totalTokens` at the given price per 1,000 tokens; null with no price. */
  cost: number | null;
}

export interface DayFigures extends Figures {
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  personaId: string | null;
}

/** A question, normalized, and how often it was asked. */
export interface RankedQuestion {
  question: string;
  count: number;
}

/** A source, and how many replies cited it. */
export interface RankedSource {
  source: string;
  url: string | null;
  count: number;
}

export interface PageFigures {
  /** The page the conversation started on, without its query and fragment; null when none was kept. */
  page: string | null;
  conversations: number;
  questions: number;
}

/** A reply voted down. The texts are there only when they were asked for. */
export interface ThumbsDownItem {
  day: string;
  personaId: string | null;
  tags: string[];
  comment: string | null;
  question: string | null;
  reply: string | null;
}

/** The lists of a persona, or of the whole report. */
export interface Lists {
  /** Empty unless texts were asked for. */
  topQuestions: RankedQuestion[];
  topSources: RankedSource[];
  /** Replies with no source; `questions` holds their questions when texts were asked for. */
  unsourced: { count: number; questions: RankedQuestion[] };
  pages: PageFigures[];
  thumbsDown: { count: number; withComment: number; items: ThumbsDownItem[] };
}

export interface PersonaInsights extends Lists {
  personaId: string | null;
  name: string;
  figures: Figures;
}

export interface Insights extends Lists {
  generatedAt: string;
  period: { from: string; to: string; days: string[] };
  scope: { kind: 'organization' } | { kind: 'personas'; personaIds: string[] };
  includeText: boolean;
  price: { per1K: number; currency: string } | null;
  top: number;
  figures: Figures;
  personas: PersonaInsights[];
  /** Per day and persona, for the days a persona had any. */
  days: DayFigures[];
  /**
   * What was read: conversations listed, counted in the period, left out as deleted, messages with no time, and
   * conversations whose messages the service keeps in a blob (`chatMessagesBlobUri`), which the report cannot read.
   */
  read: { listed: number; counted: number; deleted: number; undated: number; inBlob: number };
}

export interface ComputeOptions {
  /** Start of the period, inclusive. */
  from: Date;
  /** End of the period, exclusive. */
  to: Date;
  scope?: Insights['scope'];
  /** How many questions, sources and pages each list keeps. Default 10. */
  top?: number;
  includeText?: boolean;
  /** Price per 1,000 tokens, for the estimated cost. */
  pricePer1K?: number;
  /** Default USD. */
  currency?: string;
  /** Persona names by id, where the conversations do not name them. */
  personaNames?: Record<string, string>;
  /** When the report was made. Default now. */
  now?: Date;
}

const dayMs = 86_400_000;

/** `YYYY-MM-DD` (UTC) of a time in ms. */
export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Every day of the period, `YYYY-MM-DD`. */
export function daysOf(from: Date, to: Date): string[] {
  const days: string[] = [];
  for (let ms = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate()); ms < to.getTime(); ms += dayMs)
    days.push(dayOf(ms));
  return days;
}

/** A question as it is counted: one Unicode form, lower case, no punctuation or symbols, single spaces. */
export function normalizeQuestion(text: string): string {
  const normalized = text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\p{P}\p{S}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = [...normalized];
  return chars.length > 200 ? `${chars.slice(0, 200).join('')}…` : normalized;
}

/** A page as it is counted: its query and fragment dropped, as they may name a visitor or carry a token. */
export function normalizePage(page: unknown): string | null {
  if (typeof page !== 'string' || !page.trim()) return null;
  return (
    page
      .trim()
      .replace(/[?#].*$/s, '')
      .slice(0, 300) || '/'
  );
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const tokens = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/** Figures being counted: visitors as a set until the end. */
class Tally {
  conversations = 0;
  questions = 0;
  replies = 0;
  visitors = new Set<string>();
  stopped = 0;
  failed = 0;
  unanswered = 0;
  thumbsUp = 0;
  thumbsDown = 0;
  promptTokens = 0;
  completionTokens = 0;
  totalTokens = 0;

  figures(pricePer1K: number | undefined): Figures {
    const thumbs = this.thumbsUp + this.thumbsDown;
    return {
      conversations: this.conversations,
      messages: this.questions + this.replies,
      questions: this.questions,
      replies: this.replies,
      visitors: this.visitors.size,
      stopped: this.stopped,
      failed: this.failed,
      unanswered: this.unanswered,
      thumbsUp: this.thumbsUp,
      thumbsDown: this.thumbsDown,
      upRatio: thumbs ? this.thumbsUp / thumbs : null,
      promptTokens: this.promptTokens,
      completionTokens: this.completionTokens,
      totalTokens: this.totalTokens,
      cost: pricePer1K === undefined ? null : (this.totalTokens / 1000) * pricePer1K,
    };
  }
}

/** The lists being counted. */
class Counts {
  questions = new Map<string, number>();
  sources = new Map<string, RankedSource>();
  unsourced = 0;
  unsourcedQuestions = new Map<string, number>();
  pages = new Map<string | null, PageFigures>();
  thumbsDown: ThumbsDownItem[] = [];

  lists(top: number, includeText: boolean): Lists {
    const ranked = (counts: Map<string, number>) =>
      [...counts]
        .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : a > b ? 1 : 0))
        .slice(0, top)
        .map(([question, count]) => ({ question, count }));
    const byCount = <T extends { count: number }>(items: T[], key: (item: T) => string) =>
      items.sort((a, b) => b.count - a.count || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)).slice(0, top);
    return {
      topQuestions: includeText ? ranked(this.questions) : [],
      topSources: byCount([...this.sources.values()], s => s.source),
      unsourced: { count: this.unsourced, questions: includeText ? ranked(this.unsourcedQuestions) : [] },
      pages: [...this.pages.values()]
        .sort((a, b) => b.conversations - a.conversations || b.questions - a.questions || order(a.page, b.page))
        .slice(0, top),
      thumbsDown: {
        count: this.thumbsDown.length,
        withComment: this.thumbsDown.filter(item => item.comment !== null).length,
        items: includeText ? this.thumbsDown.toSorted((a, b) => order(a.day, b.day)) : [],
      },
    };
  }
}

/** Nulls last, then in code-point order. */
const order = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1);

const add = <K>(map: Map<K, number>, key: K) => map.set(key, (map.get(key) ?? 0) + 1);

/** The report's figures over the conversations, for the period. */
export function computeInsights(conversations: Iterable<Conversation>, options: ComputeOptions): Insights {
  const from = options.from.getTime();
  const to = options.to.getTime();
  if (!(from < to)) throw new RangeError('The period must end after it starts.');
  const top = options.top ?? 10;
  const includeText = options.includeText ?? false;
  const price = options.pricePer1K;
  const inPeriod = (ms: number) => ms >= from && ms < to;

  const total = new Tally();
  const overall = new Counts();
  const personas = new Map<string, { name: string; tally: Tally; counts: Counts }>();
  const days = new Map<string, { day: string; personaId: string | null; tally: Tally }>();
  const read = { listed: 0, counted: 0, deleted: 0, undated: 0, inBlob: 0 };

  for (const conversation of conversations) {
    read.listed++;
    if (conversation.isDeleted || conversation.conversationStatus === 'deleted') {
      read.deleted++;
      continue;
    }
    const personaId = conversation.personaId ?? null;
    const personaKey = personaId ?? '';
    let persona = personas.get(personaKey);
    if (!persona) {
      const named = conversation.configuration?.personaName;
      const name =
        (personaId && options.personaNames?.[personaId]) ||
        (typeof named === 'string' && named) ||
        (personaId ? `Persona ${personaId.slice(0, 8)}` : 'General');
      persona = { name, tally: new Tally(), counts: new Counts() };
      personas.set(personaKey, persona);
    }
    const dayTally = (day: string) => {
      const key = `${day}\n${personaKey}`;
      let entry = days.get(key);
      if (!entry) days.set(key, (entry = { day, personaId, tally: new Tally() }));
      return entry.tally;
    };
    const visitor = conversation.externalUserId || undefined;
    const metadata = isObject(conversation.metadata) ? conversation.metadata : undefined;
    const kept = isObject(metadata?.personaChat) ? metadata.personaChat : {};
    const feedback = isObject(kept.feedback) ? kept.feedback : {};
    const citations = citationsOf(metadata);
    const page = normalizePage(isObject(metadata?.client) ? metadata.client.page : undefined);
    const tallies = (day: string) => [total, persona.tally, dayTally(day)];
    const lists = [overall, persona.counts];
    let first: number | undefined;
    let questions = 0;

    const messages = Array.isArray(conversation.chatMessages) ? conversation.chatMessages : [];
    if ((conversation.areChatMessagesInBlob || conversation.chatMessagesBlobUri) && !messages.length) read.inBlob++;
    for (const [i, message] of messages.entries()) {
      if (!isObject(message)) continue;
      const time = typeof message.timestamp === 'string' ? Date.parse(message.timestamp) : NaN;
      if (Number.isNaN(time)) {
        read.undated++;
        continue;
      }
      if (!inPeriod(time)) continue;
      if (first === undefined || time < first) first = time;
      const day = dayOf(time);
      const counted = tallies(day);
      const content = typeof message.content === 'string' ? message.content : '';
      for (const tally of counted) {
        if (visitor) tally.visitors.add(visitor);
        tally.promptTokens += tokens(message.promptTokens);
        tally.completionTokens += tokens(message.completionTokens);
        tally.totalTokens += tokens(message.totalTokens);
      }
      if (message.role === 'user') {
        questions++;
        const answered = messages[i + 1]?.role === 'assistant';
        for (const tally of counted) {
          tally.questions++;
          if (!answered) tally.unanswered++;
        }
        if (includeText) for (const list of lists) add(list.questions, normalizeQuestion(content));
        continue;
      }
      if (message.role !== 'assistant') continue;
      for (const tally of counted) tally.replies++;
      const previous = messages[i - 1];
      const question = previous?.role === 'user' && typeof previous.content === 'string' ? previous.content : '';

      // Its sources, each once.
      const cited = new Map<string, RankedSource>();
      for (const citation of (message.messageId && citations.get(message.messageId)) || []) {
        const key = citation.sourceUrl ?? citation.documentId ?? citation.sourceName;
        if (!key) continue;
        cited.set(key, {
          source: citation.sourceName ?? citation.documentId ?? citation.sourceUrl!,
          url: citation.sourceUrl ?? null,
          count: 0,
        });
      }
      for (const list of lists) {
        if (!cited.size) {
          list.unsourced++;
          if (includeText && question) add(list.unsourcedQuestions, normalizeQuestion(question));
        }
        for (const [key, source] of cited) {
          const entry = list.sources.get(key) ?? { ...source };
          entry.count++;
          list.sources.set(key, entry);
        }
      }

      // Its thumbs: the backend's, and the service's own, each feedback once.
      const votes: { id: string | undefined; score: 1 | -1; comment: string | null; tags: string[] }[] = [];
      const ours = message.messageId ? feedback[message.messageId] : undefined;
      const view = feedbackView(ours);
      if (view) votes.push({ id: isObject(ours) ? (ours.feedbackId as string) : undefined, ...view });
      for (const given of Array.isArray(message.feedbacks) ? message.feedbacks : []) {
        if (!isObject(given) || typeof given.score !== 'number' || !given.score) continue;
        if (given.feedbackId !== undefined && votes.some(v => v.id === given.feedbackId)) continue;
        votes.push({
          id: typeof given.feedbackId === 'string' ? given.feedbackId : undefined,
          score: given.score > 0 ? 1 : -1,
          comment: typeof given.comments === 'string' && given.comments ? given.comments : null,
          tags: Array.isArray(given.tags) ? given.tags.filter((t): t is string => typeof t === 'string') : [],
        });
      }
      for (const vote of votes) {
        for (const tally of counted) {
          if (vote.score > 0) tally.thumbsUp++;
          else tally.thumbsDown++;
        }
        if (vote.score > 0) continue;
        const item: ThumbsDownItem = {
          day,
          personaId,
          tags: vote.tags,
          comment: includeText ? vote.comment : vote.comment === null ? null : '',
          question: includeText ? question || null : null,
          reply: includeText ? content : null,
        };
        for (const list of lists) list.thumbsDown.push(item);
      }
    }

    for (const outcome of outcomesOf(metadata).values()) {
      const time = Date.parse(outcome.timestamp);
      if (!inPeriod(time)) continue;
      if (first === undefined || time < first) first = time;
      for (const tally of tallies(dayOf(time))) {
        if (visitor) tally.visitors.add(visitor);
        if (outcome.status === 'stopped') tally.stopped++;
        else tally.failed++;
      }
    }

    if (first === undefined) continue;
    read.counted++;
    for (const tally of tallies(dayOf(first))) tally.conversations++;
    for (const list of lists) {
      const entry = list.pages.get(page) ?? { page, conversations: 0, questions: 0 };
      entry.conversations++;
      entry.questions += questions;
      list.pages.set(page, entry);
    }
  }

  const personaList = [...personas.entries()]
    .filter(([, p]) => p.tally.conversations > 0)
    .map(([key, p]) => ({
      personaId: key || null,
      name: p.name,
      figures: p.tally.figures(price),
      ...p.counts.lists(top, includeText),
    }))
    .sort((a, b) => b.figures.conversations - a.figures.conversations || order(a.name, b.name));
  const rank = new Map(personaList.map((p, i) => [p.personaId, i]));
  return {
    generatedAt: (options.now ?? new Date()).toISOString(),
    period: { from: options.from.toISOString(), to: options.to.toISOString(), days: daysOf(options.from, options.to) },
    scope: options.scope ?? { kind: 'organization' },
    includeText,
    price: price === undefined ? null : { per1K: price, currency: options.currency ?? 'USD' },
    top,
    figures: total.figures(price),
    personas: personaList,
    days: [...days.values()]
      .map(({ day, personaId, tally }) => ({ day, personaId, ...tally.figures(price) }))
      .sort((a, b) => order(a.day, b.day) || (rank.get(a.personaId) ?? 0) - (rank.get(b.personaId) ?? 0)),
    ...overall.lists(top, includeText),
    read,
  };
}
