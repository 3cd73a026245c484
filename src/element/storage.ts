/**
 * @module
 * What the element keeps in the browser: the conversation id (a hint; the backend decides whose it is) and the
 * citations of recent replies by messageId, which restored messages do not carry. Namespaced by endpoint, persona
 * and the session's user key. Storage that throws (private mode, sandboxed frames) falls back to memory.
 */
import type { Citation } from '../protocol.js';

export type StorageKind = 'local' | 'session' | 'none';

const memory = new Map<string, string>();

const memoryStore: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> = {
  getItem: key => memory.get(key) ?? null,
  setItem: (key, value) => void memory.set(key, value),
  removeItem: key => void memory.delete(key),
};

function backing(kind: StorageKind): Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> {
  if (kind === 'none') return memoryStore;
  try {
    const store = kind === 'session' ? window.sessionStorage : window.localStorage;
    const probe = '__persona_chat_probe__';
    store.setItem(probe, probe);
    store.removeItem(probe);
    return store;
  } catch {
    return memoryStore;
  }
}

const maxCitedReplies = 50;

export class ChatStorage {
  readonly #store: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
  /** The key of the conversation id, also what a `storage` event from another tab names. */
  readonly conversationKey: string;
  readonly #citationsKey: string;

  constructor(kind: StorageKind, namespace: string) {
    this.#store = kind === 'none' ? memoryStoreFor() : backing(kind);
    this.conversationKey = `persona-chat:${namespace}:conversation`;
    this.#citationsKey = `persona-chat:${namespace}:citations`;
  }

  get conversationId(): string | null {
    return this.#read(this.conversationKey);
  }

  set conversationId(id: string | null) {
    this.#write(this.conversationKey, id);
  }

  citations(messageId: string): Citation[] {
    return this.#citations()[messageId] ?? [];
  }

  saveCitations(messageId: string, citations: Citation[]) {
    if (!citations.length) return;
    const all = this.#citations();
    delete all[messageId];
    all[messageId] = citations;
    const ids = Object.keys(all);
    for (const old of ids.slice(0, Math.max(0, ids.length - maxCitedReplies))) delete all[old];
    this.#write(this.#citationsKey, JSON.stringify(all));
  }

  #citations(): Record<string, Citation[]> {
    try {
      const parsed: unknown = JSON.parse(this.#read(this.#citationsKey) ?? '{}');
      return parsed && typeof parsed === 'object' ? (parsed as Record<string, Citation[]>) : {};
    } catch {
      return {};
    }
  }

  #read(key: string): string | null {
    try {
      return this.#store.getItem(key);
    } catch {
      return null;
    }
  }

  #write(key: string, value: string | null) {
    try {
      if (value === null) this.#store.removeItem(key);
      else this.#store.setItem(key, value);
    } catch {
      // Full or blocked: the conversation simply is not kept.
    }
  }
}

/** `storage="none"`: a private memory per element, so nothing outlives the page. */
function memoryStoreFor(): Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> {
  const map = new Map<string, string>();
  return {
    getItem: key => map.get(key) ?? null,
    setItem: (key, value) => void map.set(key, value),
    removeItem: key => void map.delete(key),
  };
}
