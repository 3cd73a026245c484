/**
 * @module
 * Reads the conversations an insights report is made from: the organization's list (`GET /conversations`), or the
 * list of each persona (`GET /conversations/persona/{personaId}`), every page of each, following
 * `continuationToken` until the service gives none. A list's pages come one after the other (each token comes with
 * the page before), so what runs side by side, at most `concurrency` at once, is the lists of several personas
 * and the reads of single conversations that a list gave without their messages. A page that is not a list, a
 * conversation without an id or a token that comes back a second time stops the reading with an InsightsError
 * that says which list and which page. A refusal the service says may pass (a 429, a 5xx, a dropped connection) is
 * asked again, a few times, after its Retry-After or a growing pause: one busy moment among hundreds of pages does
 * not lose the report. A refusal that stays, or one that will not pass (a wrong key), is its ServiceError.
 */
import type { ServiceClient } from '../../service/client.js';
import { ServiceError } from '../../service/errors.js';
import type { CallOptions } from '../../service/request.js';
import type { Conversation, ListResponse } from '../../service/types.js';
import { pause } from '../pause.js';

/** The reading went wrong in a way the service did not report as an error: a malformed page or a paging loop. */
export class InsightsError extends Error {
  override readonly name = 'InsightsError';
}

export interface Progress {
  /** Pages of lists read so far. */
  pages: number;
  /** Conversations listed so far. */
  conversations: number;
  /** Conversations listed without their messages, and how many of them were read since. */
  details: { done: number; total: number };
}

export interface CollectOptions extends CallOptions {
  /** The personas whose lists to read; none reads the organization's list. */
  personaIds?: readonly string[];
  /** Requests at once. Default 4. */
  concurrency?: number;
  /** Told after each page and each single conversation read. */
  onProgress?: (progress: Progress) => void;
  /** How many times a request the service refused for a while is asked again. Default 3. */
  retries?: number;
  /**
   * The pause before the first retry, doubled before each next, unless the service gives a Retry-After.
   * Default 1 s; a pause is at most a minute.
   */
  retryDelayMs?: number;
}

/** The longest the reading waits before it asks again, whatever a Retry-After or the doubling says. */
const maxPauseMs = 60_000;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Checks a page of a list; throws an InsightsError naming the list and the page. */
export function checkPage(page: unknown, where: string): ListResponse {
  const malformed = (what: string) => new InsightsError(`The service's ${where} is malformed: ${what}.`);
  if (!isObject(page)) throw malformed('it is not an object');
  if (!Array.isArray(page.data)) throw malformed('its "data" is not an array');
  const token = page.continuationToken;
  if (token !== undefined && token !== null && typeof token !== 'string') {
    throw malformed('its "continuationToken" is not a string');
  }
  for (const [i, item] of page.data.entries()) {
    if (!isObject(item) || typeof item.conversationId !== 'string' || !item.conversationId) {
      throw malformed(`item ${i + 1} of its "data" is not a conversation with a conversationId`);
    }
    if (item.chatMessages !== undefined && item.chatMessages !== null && !Array.isArray(item.chatMessages)) {
      throw malformed(`the "chatMessages" of conversation ${item.conversationId} is not an array`);
    }
  }
  return page as unknown as ListResponse;
}

/** Runs `work` on each item, at most `limit` at once, in no particular order. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Every conversation of the scope, each with its messages, de-duplicated by id. */
export async function collectConversations(
  service: ServiceClient,
  options: CollectOptions = {},
): Promise<Conversation[]> {
  const concurrency = options.concurrency ?? 4;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError('"concurrency" must be a whole number, 1 or more');
  }
  const call: CallOptions = { signal: options.signal, timeouts: options.timeouts };
  const retries = options.retries ?? 3;
  const retryDelayMs = options.retryDelayMs ?? 1000;
  if (!Number.isInteger(retries) || retries < 0) throw new RangeError('"retries" must be a whole number, 0 or more');
  if (!Number.isFinite(retryDelayMs) || retryDelayMs < 0) {
    throw new RangeError('"retryDelayMs" must be a number of milliseconds, 0 or more');
  }
  /** `read`, asked again while the service refuses it for a while. */
  const patiently = async <T>(read: () => Promise<T>): Promise<T> => {
    for (let retry = 0; ; retry++) {
      try {
        return await read();
      } catch (error) {
        if (!(error instanceof ServiceError) || !error.retryable || retry >= retries) throw error;
        const wait = error.retryAfter === undefined ? retryDelayMs * 2 ** retry : error.retryAfter * 1000;
        await pause(Math.min(wait, maxPauseMs), options.signal);
      }
    }
  };
  const progress: Progress = { pages: 0, conversations: 0, details: { done: 0, total: 0 } };
  const tell = () => options.onProgress?.({ ...progress, details: { ...progress.details } });
  const found = new Map<string, Conversation>();

  const readList = async (personaId: string | undefined) => {
    const list = personaId ? `list of persona ${personaId}` : "organization's list";
    const seen = new Set<string>();
    let token: string | undefined;
    for (let page = 1; ; page++) {
      const answer: unknown = await patiently(() =>
        personaId
          ? service.listPersonaConversations(personaId, { ...call, continuationToken: token })
          : service.listConversations({ ...call, continuationToken: token }),
      );
      const checked = checkPage(answer, `page ${page} of the ${list}`);
      for (const conversation of checked.data) found.set(conversation.conversationId, conversation);
      progress.pages++;
      progress.conversations += checked.data.length;
      tell();
      token = checked.continuationToken || undefined;
      if (!token) return;
      if (seen.has(token)) {
        throw new InsightsError(`The service's ${list} gave the same continuationToken twice (after page ${page}).`);
      }
      seen.add(token);
    }
  };
  const personaIds = [...new Set(options.personaIds ?? [])];
  await eachLimited(personaIds.length ? personaIds : [undefined], concurrency, readList);

  // A service may list conversations without their messages: those that have some are read one by one.
  const bare = [...found.values()].filter(
    c => !c.chatMessages?.length && (c.chatMessagesCount === undefined || c.chatMessagesCount > 0),
  );
  progress.details.total = bare.length;
  if (bare.length) tell();
  await eachLimited(bare, concurrency, async conversation => {
    const full: unknown = await patiently(() => service.getConversation(conversation.conversationId, call)).catch(
      error => {
        // Gone since it was listed: it counts as listed.
        if (error instanceof ServiceError && error.status === 404) return conversation;
        throw error;
      },
    );
    if (!isObject(full) || (full.chatMessages != null && !Array.isArray(full.chatMessages))) {
      throw new InsightsError(`The service's conversation ${conversation.conversationId} is malformed.`);
    }
    found.set(conversation.conversationId, { ...conversation, ...(full as Partial<Conversation>) });
    progress.details.done++;
    tell();
  });
  return [...found.values()];
}
