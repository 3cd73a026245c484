/**
 * @module
 * Which visitor owns which conversation. The service checks only the API key, so this is the one place that keeps
 * visitors apart: every route that names a conversation asks here first. Owners are cached per process for a minute,
 * so a conversation costs at most one extra call to the service a minute; an id the service does not have, or a
 * deleted conversation, is remembered as missing for a minute, so asking for it again and again does not reach the
 * service either. A conversation deleted through another instance is refused here once its owner's minute is over.
 */
import type { ConversationDetail, ConversationSummary, MessageView } from '../protocol.js';
import type { ServiceClient } from '../service/client.js';
import { ServiceError } from '../service/errors.js';
import type { ChatMessage, Conversation } from '../service/types.js';
import { citationsOf, feedbackOf } from './annotations.js';
import { notFound } from './errors.js';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isConversationId = (id: string) => uuid.test(id);

/**
 * The status that marks a conversation deleted. The interface has no delete: the backend sets this status, and a
 * conversation with it (or with the service's own `isDeleted`) is one that does not exist.
 */
export const deletedStatus = 'deleted';

export const isDeleted = (conversation: Conversation) =>
  conversation.isDeleted === true || conversation.conversationStatus === deletedStatus;

export interface OwnershipOptions {
  /** Most owners remembered; the least recently noted go first. Default 50,000. */
  capacity?: number;
  /** How long an owner is remembered, in ms: how soon a conversation deleted elsewhere is refused. Default 60 s. */
  ownerMs?: number;
  /** Most ids remembered as missing; the oldest go first. Default 10,000. */
  missingCapacity?: number;
  /** How long an id the service does not have is remembered as missing, in ms. Default 60 s. */
  missingMs?: number;
  /** The clock, in ms. Default `Date.now`. */
  now?: () => number;
}

export class Ownership {
  /** Owners, with when they are to be checked again; in the order they were noted. */
  readonly #owners = new Map<string, { owner: string; until: number }>();
  /** Ids the service answered 404 for, with when that answer expires; in the order they were noted. */
  readonly #missing = new Map<string, number>();
  readonly #service: Pick<ServiceClient, 'getConversation'>;
  readonly #capacity: number;
  readonly #ownerMs: number;
  readonly #missingCapacity: number;
  readonly #missingMs: number;
  readonly #now: () => number;

  constructor(service: Pick<ServiceClient, 'getConversation'>, options: OwnershipOptions = {}) {
    this.#service = service;
    this.#capacity = options.capacity ?? 50_000;
    this.#ownerMs = options.ownerMs ?? 60_000;
    this.#missingCapacity = options.missingCapacity ?? 10_000;
    this.#missingMs = options.missingMs ?? 60_000;
    this.#now = options.now ?? Date.now;
  }

  /** Notes the owner of a conversation the backend created, or a list showed. */
  /**
   * Notes the owner of a conversation a list of the service's showed, unless it is known to be gone: the list may
   * have been read before a delete that has finished since.
   */
  rememberListed(conversationId: string, owner: string) {
    if (!this.#isMissing(conversationId)) this.remember(conversationId, owner);
  }

  remember(conversationId: string, owner: string) {
    this.#missing.delete(conversationId);
    this.#owners.delete(conversationId);
    this.#owners.set(conversationId, { owner, until: this.#now() + this.#ownerMs });
    if (this.#owners.size > this.#capacity) this.#owners.delete(this.#owners.keys().next().value!);
  }

  /** Notes that a conversation was deleted: from now on it is missing, for every caller. */
  forget(conversationId: string) {
    this.#owners.delete(conversationId);
    this.#noteMissing(conversationId);
  }

  /**
   * Resolves when `sub` owns the conversation; otherwise throws the same 404 a conversation that does not exist
   * gets. Uses the cache when it can; `fetch: true` always reads the conversation and returns it.
   */
  async check(sub: string, conversationId: string, options: { signal?: AbortSignal; fetch?: boolean } = {}) {
    if (!isConversationId(conversationId)) throw notFound();
    const cached = this.#ownerOf(conversationId);
    if (cached !== undefined && cached !== sub) throw notFound();
    if (cached === sub && !options.fetch) return undefined;
    if (cached === undefined && this.#isMissing(conversationId)) throw notFound();
    let conversation: Conversation;
    try {
      conversation = await this.#service.getConversation(conversationId, { signal: options.signal });
    } catch (error) {
      if (error instanceof ServiceError && error.status === 404) {
        this.#noteMissing(conversationId);
        throw notFound();
      }
      throw error;
    }
    if (isDeleted(conversation)) {
      this.forget(conversationId);
      throw notFound();
    }
    const owner = conversation.externalUserId ?? '';
    this.remember(conversationId, owner);
    if (owner !== sub) throw notFound();
    return conversation;
  }

  #ownerOf(conversationId: string): string | undefined {
    const entry = this.#owners.get(conversationId);
    if (entry === undefined || entry.until > this.#now()) return entry?.owner;
    this.#owners.delete(conversationId);
    return undefined;
  }

  #isMissing(conversationId: string): boolean {
    const until = this.#missing.get(conversationId);
    if (until === undefined) return false;
    if (until > this.#now()) return true;
    this.#missing.delete(conversationId);
    return false;
  }

  #noteMissing(conversationId: string) {
    const now = this.#now();
    this.#missing.delete(conversationId);
    // Every entry lives as long, so the oldest come first: drop the expired ones, then any past the capacity.
    for (const [id, until] of this.#missing) {
      if (until > now && this.#missing.size < this.#missingCapacity) break;
      this.#missing.delete(id);
    }
    this.#missing.set(conversationId, now + this.#missingMs);
  }
}

/** The `client` namespace of a conversation's metadata, keeping string values only. */
export function clientMetadata(conversation: Conversation): Record<string, string> {
  const client = conversation.metadata?.client;
  if (!client || typeof client !== 'object' || Array.isArray(client)) return {};
  return Object.fromEntries(
    Object.entries(client).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

/** A message's time as ISO 8601, or null when it has none the clock can read. */
function timeOf(message: ChatMessage | undefined): string | null {
  const time = message?.timestamp ? Date.parse(message.timestamp) : NaN;
  return Number.isNaN(time) ? null : new Date(time).toISOString();
}

/**
 * What the browser may see of a conversation: never its externalUserId, configuration or token counts. The interface
 * gives a conversation no times of its own, so its first and newest messages date it.
 */
export function summaryOf(conversation: Conversation): ConversationSummary {
  const messages = conversation.chatMessages ?? [];
  return {
    id: conversation.conversationId,
    name: conversation.conversationName ?? null,
    status: conversation.conversationStatus ?? null,
    active: conversation.isActive ?? true,
    personaId: conversation.personaId ?? null,
    messageCount: conversation.chatMessagesCount ?? messages.length,
    metadata: clientMetadata(conversation),
    createdAt: timeOf(messages[0]),
    updatedAt: timeOf(messages.at(-1)),
  };
}

/** The conversation with its messages, and the feedback and citations the backend keeps for its replies. */
export function detailOf(conversation: Conversation): Omit<ConversationDetail, 'runs'> {
  const feedback = feedbackOf(conversation.metadata);
  const citations = citationsOf(conversation.metadata);
  const messages: MessageView[] = (conversation.chatMessages ?? [])
    .filter(m => m.role === 'user' || m.role === 'assistant')
    .map(m => ({
      id: m.messageId ?? null,
      role: m.role as 'user' | 'assistant',
      content: m.content ?? '',
      createdAt: m.timestamp ?? null,
      runId: m.conversationRunId ?? null,
      feedback: (m.role === 'assistant' && m.messageId && feedback.get(m.messageId)) || null,
      citations: (m.role === 'assistant' && m.messageId && citations.get(m.messageId)) || [],
    }));
  return { ...summaryOf(conversation), messages };
}
