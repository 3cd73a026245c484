/**
 * @module
 * The emulator's conversations, in memory. Lists page in creation order behind an opaque continuation token that
 * is bound to the list it came from.
 */
import type { ChatMessage, Conversation } from '../service/types.js';

export const pageSize = 10;

export type ListScope =
  { kind: 'all' } | { kind: 'user'; externalUserId: string } | { kind: 'persona'; personaId: string };

export class InvalidContinuationToken extends Error {}

interface TokenBody {
  scope: string;
  offset: number;
}

const scopeKey = (scope: ListScope) =>
  scope.kind === 'all' ? 'all' : scope.kind === 'user' ? `user:${scope.externalUserId}` : `persona:${scope.personaId}`;

const encodeToken = (body: TokenBody) =>
  btoa(JSON.stringify(body)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

function decodeToken(token: string): TokenBody {
  try {
    const body = JSON.parse(atob(token.replace(/-/g, '+').replace(/_/g, '/'))) as TokenBody;
    if (typeof body.scope === 'string' && Number.isInteger(body.offset) && body.offset >= 0) return body;
  } catch {
    // fall through
  }
  throw new InvalidContinuationToken('continuationToken is not one this service issued');
}

export class ConversationStore {
  readonly #conversations = new Map<string, Conversation>();

  get size() {
    return this.#conversations.size;
  }

  add(conversation: Conversation): Conversation {
    this.#conversations.set(conversation.conversationId, conversation);
    return conversation;
  }

  get(conversationId: string): Conversation | undefined {
    return this.#conversations.get(conversationId);
  }

  /** Every conversation, deleted ones too, in the order they were added. */
  values(): IterableIterator<Conversation> {
    return this.#conversations.values();
  }

  /** One page of the scope's conversations and the token for the next page (null on the last). */
  list(
    scope: ListScope,
    continuationToken?: string | null,
  ): { data: Conversation[]; continuationToken: string | null } {
    const key = scopeKey(scope);
    let offset = 0;
    if (continuationToken) {
      const body = decodeToken(continuationToken);
      if (body.scope !== key) throw new InvalidContinuationToken('continuationToken belongs to a different list');
      offset = body.offset;
    }
    const matching = [...this.#conversations.values()].filter(
      c =>
        !c.isDeleted &&
        (scope.kind === 'all' ||
          (scope.kind === 'user' ? c.externalUserId === scope.externalUserId : c.personaId === scope.personaId)),
    );
    const data = matching.slice(offset, offset + pageSize);
    const next = offset + pageSize < matching.length ? encodeToken({ scope: key, offset: offset + pageSize }) : null;
    return { data, continuationToken: next };
  }

  /** Appends a finished run (the user's message and the reply) and adds its tokens to the conversation's totals. */
  appendRun(conversation: Conversation, messages: ChatMessage[]) {
    conversation.chatMessages!.push(...messages);
    conversation.chatMessagesCount = conversation.chatMessages!.length;
    conversation.chatStarted = true;
    for (const message of messages) {
      conversation.promptTokens! += message.promptTokens ?? 0;
      conversation.completionTokens! += message.completionTokens ?? 0;
      conversation.totalTokens! += message.totalTokens ?? 0;
    }
  }

  clear() {
    this.#conversations.clear();
  }
}
