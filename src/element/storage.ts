/**
 * @module
 * What the element keeps in the browser: the conversation id (a hint; the backend decides whose it is), the
 * citations of recent replies by messageId, which restored messages do not carry, and the visitor's unsent draft
 * (in sessionStorage, per conversation, so it survives a reload of the tab and nothing more). Namespaced by
 * endpoint, persona and the session's user key. Storage that throws (private mode, sandboxed frames) falls back
 * to memory.
 */
import type { Citation } from '../protocol.js';
import { asCitations } from './state.js';

export type StorageKind = 'local' | 'session' | 'none';

/** A store in memory: `storage="none"` gives each element its own, so nothing outlives the page. */
function memoryStore(): Store {
  const map = new Map<string, string>();
  return {
    getItem: key => map.get(key) ?? null,
    setItem: (key, value) => void map.set(key, value),
    removeItem: key => void map.delete(key),
  };
}

/** Where a storage that throws keeps its keys instead: one memory for the page, as the storage would be. */
const fallback = memoryStore();

function backing(kind: StorageKind): Store {
  if (kind === 'none') return memoryStore();
  try {
    const store = kind === 'session' ? window.sessionStorage : window.localStorage;
    const probe = 'persona-chat:probe';
    store.setItem(probe, probe);
    store.removeItem(probe);
    return store;
  } catch {
    return fallback;
  }
}

const maxCitedReplies = 50;

export class ChatStorage {
  /** Where it keeps its keys: a `storage` event from another tab is about another store unless it names this one. */
  readonly store: Store;
  /** The key of the conversation id, also what a `storage` event from another tab names. */
  readonly conversationKey: string;
  readonly #citationsKey: string;
  /** Whether other elements and tabs see the same conversation (not with `storage="none"`). */
  readonly shared: boolean;

  constructor(kind: StorageKind, namespace: string) {
    this.shared = kind !== 'none';
    this.store = backing(kind);
    this.conversationKey = `persona-chat:${namespace}:conversation`;
    this.#citationsKey = `persona-chat:${namespace}:citations`;
  }

  get conversationId(): string | null {
    return read(this.store, this.conversationKey);
  }

  set conversationId(id: string | null) {
    write(this.store, this.conversationKey, id);
  }

  citations(messageId: string): Citation[] {
    return asCitations(this.#citations()[messageId]);
  }

  saveCitations(messageId: string, citations: Citation[]) {
    if (!citations.length) return;
    const all = this.#citations();
    delete all[messageId];
    all[messageId] = citations;
    const ids = Object.keys(all);
    for (const old of ids.slice(0, Math.max(0, ids.length - maxCitedReplies))) delete all[old];
    write(this.store, this.#citationsKey, JSON.stringify(all));
  }

  #citations(): Record<string, Citation[]> {
    const parsed = json(this.store, this.#citationsKey);
    return parsed && typeof parsed === 'object' ? (parsed as Record<string, Citation[]>) : {};
  }
}

/** This load of the page, to tell the messages it is sending from those an earlier load left behind. */
export const pageId = crypto.randomUUID();

/**
 * What this tab keeps while the page reloads (sessionStorage): the unsent draft per conversation, and the messages
 * sent whose reply is not done yet, so that a reload at that moment gives back those the backend had not accepted
 * instead of losing them, and follows the replies of the others. Namespaced by endpoint and persona only: it is
 * needed before the session says who the visitor is.
 */
export class TabStorage {
  readonly #store: Store;
  readonly #prefix: string;

  constructor(kind: StorageKind, namespace: string) {
    this.#store = backing(kind === 'none' ? kind : 'session');
    this.#prefix = `persona-chat:${namespace}`;
  }

  /** The unsent draft of a conversation (or of the one not started yet). */
  draft(conversationId: string | null): string {
    return read(this.#store, `${this.#prefix}:draft:${conversationId ?? 'new'}`) ?? '';
  }

  saveDraft(conversationId: string | null, text: string) {
    write(this.#store, `${this.#prefix}:draft:${conversationId ?? 'new'}`, text || null);
  }

  /** Messages sent whose reply is not done yet, oldest first, with the load of the page that sent them. */
  pending(): Pending[] {
    const parsed = json(this.#store, `${this.#prefix}:pending`);
    return Array.isArray(parsed)
      ? parsed.filter(
          (p): p is Pending => typeof p?.key === 'string' && typeof p?.text === 'string' && typeof p?.page === 'string',
        )
      : [];
  }

  addPending(key: string, text: string, page: string) {
    this.#savePending([...this.pending().filter(p => p.key !== key), { key, text, page }]);
  }

  /** The backend took the message: a reload follows its reply instead of giving its text back. */
  acceptPending(key: string) {
    this.#savePending(this.pending().map(p => (p.key === key ? { ...p, accepted: 1 } : p)));
  }

  removePending(key: string) {
    this.#savePending(this.pending().filter(p => p.key !== key));
  }

  #savePending(list: Pending[]) {
    write(this.#store, `${this.#prefix}:pending`, list.length ? JSON.stringify(list.slice(-20)) : null);
  }
}

type Store = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

interface Pending {
  key: string;
  text: string;
  page: string;
  /** Set once the backend took the message. */
  accepted?: 1;
}

function read(store: Store, key: string): string | null {
  try {
    return store.getItem(key);
  } catch {
    return null;
  }
}

/** The value of a key as JSON; null when there is none, or it is not JSON. */
function json(store: Store, key: string): unknown {
  try {
    return JSON.parse(read(store, key)!);
  } catch {
    return null;
  }
}

function write(store: Store, key: string, value: string | null) {
  try {
    if (value === null) store.removeItem(key);
    else store.setItem(key, value);
  } catch {
    // Full or blocked: it simply is not kept.
  }
}
