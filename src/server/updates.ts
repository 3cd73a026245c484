/**
 * @module
 * What the backend writes into conversations besides the visitor's own changes: a name from the first message, and
 * the citations of each reply in the metadata (feedback, `PATCH` and `DELETE` go through `queue` from their routes).
 * The interface has no compare-and-set, so every such write is a read-modify-write of the conversation: within this
 * process, the writes to one conversation take turns (a promise chain per conversation), and each reads the
 * conversation afresh just before it writes. Two instances writing the same conversation at the same instant can
 * still lose one of the two writes. Background writes never fail or delay a reply: their failures are reported, and
 * only so many are under way at once.
 *
 * A reply's citations are not written the moment it ends but a little later, with those of the conversation's other
 * replies that ended meanwhile: one read and one write of the conversation for all of them, out of the way of the
 * replies being streamed. Until then the reply's run, kept for the replay window, lends them to whoever reads the
 * conversation; `settled()` (which a drain awaits) writes them at once.
 */
import type { Citation } from '../protocol.js';
import type { ServiceClient } from '../service/client.js';
import { withCitations, withOutcome } from './annotations.js';
import type { KeptCitations, KeptOutcome } from './annotations.js';
import { isDeleted } from './ownership.js';

export interface UpdatesOptions {
  service: Pick<ServiceClient, 'getConversation' | 'setConversationName' | 'setMetadata'>;
  /** Told about a background write that failed, which no request is there to hear. */
  onError(what: string, error: unknown): void;
  /** Most conversations remembered as needing no name. Default 10,000. */
  capacity?: number;
  /**
   * Most background writes under way at once, over all conversations; the others wait their turn, so that a burst
   * of replies does not bring as many writes to the service at the moment it is answering them. Default 16.
   */
  concurrentWrites?: number;
  /**
   * How long a reply's citations wait to be written, in ms, so that those of the conversation's replies that end
   * meanwhile go in the same write. Default 2,000.
   */
  citationDelayMs?: number;
}

/** The citations of a conversation's replies that wait to be written, and the write they wait for. */
interface Unkept {
  replies: Map<string, KeptCitations>;
  timer: ReturnType<typeof setTimeout>;
  /** Settles once they are written, or failed to be. */
  written: Promise<void>;
  write(): void;
}

/** Longest name made from a message, in characters, before its "…". */
const nameLength = 60;

/**
 * A conversation's name from its first message: trimmed, whitespace collapsed, and cut on a word boundary (within
 * the last half of the length; mid-word when a word is longer) with "…" when longer than 60 characters.
 */
export function nameFrom(message: string): string {
  const chars = [...message.trim().replace(/\s+/g, ' ')];
  if (chars.length <= nameLength) return chars.join('');
  const head = chars.slice(0, nameLength + 1).join('');
  const space = head.lastIndexOf(' ');
  const cut = space >= head.length / 2 ? head.slice(0, space) : chars.slice(0, nameLength).join('');
  return `${cut.trimEnd()}…`;
}

const noop = () => {};

export class ConversationUpdates {
  readonly #options: UpdatesOptions;
  /** Each conversation's newest write, settled, for the next to wait for. */
  readonly #tails = new Map<string, Promise<void>>();
  /** Background writes under way, for `settled()`. */
  readonly #pending = new Set<Promise<void>>();
  /** Conversations that need no name from this process: named, or past their first message. */
  readonly #named = new Set<string>();
  readonly #capacity: number;
  readonly #concurrentWrites: number;
  /** Background writes under way, and those waiting for one of them to end, first come first. */
  #writing = 0;
  readonly #waiting: (() => void)[] = [];
  /** Citations waiting to be written, by conversation. */
  readonly #unkept = new Map<string, Unkept>();
  readonly #citationDelayMs: number;

  constructor(options: UpdatesOptions) {
    this.#options = options;
    this.#capacity = options.capacity ?? 10_000;
    this.#concurrentWrites = options.concurrentWrites ?? 16;
    this.#citationDelayMs = options.citationDelayMs ?? 2000;
  }

  /** Runs `update` once the conversation's earlier writes in this process have ended, whatever their outcome. */
  queue<T>(conversationId: string, update: () => Promise<T>): Promise<T> {
    const result = (this.#tails.get(conversationId) ?? Promise.resolve()).then(update);
    const tail = result.then(noop, noop);
    this.#tails.set(conversationId, tail);
    void tail.then(() => {
      if (this.#tails.get(conversationId) === tail) this.#tails.delete(conversationId);
    });
    return result;
  }

  /**
   * Queues `update` in the background: it fails nothing, and its failure is reported as `what`. Returns the work,
   * which never rejects, for runtimes that end work with the response (`waitUntil`).
   */
  background(conversationId: string, what: string, update: () => Promise<unknown>): Promise<void> {
    const work = this.#turn()
      .then(() => this.queue(conversationId, update).finally(() => this.#next()))
      .then(noop, error => this.#options.onError(what, error));
    this.#pending.add(work);
    void work.then(() => this.#pending.delete(work));
    return work;
  }

  /** Resolves when a background write may start. */
  #turn(): Promise<void> {
    if (this.#writing < this.#concurrentWrites) {
      this.#writing++;
      return Promise.resolve();
    }
    return new Promise(resolve => this.#waiting.push(resolve));
  }

  /** A background write has ended: the next waiting one starts in its place. */
  #next() {
    const waiting = this.#waiting.shift();
    if (waiting) waiting();
    else this.#writing--;
  }

  /**
   * Writes the citations that wait at once, and resolves once the background writes started so far (and any they
   * started) have ended.
   */
  async settled(): Promise<void> {
    for (const unkept of this.#unkept.values()) unkept.write();
    while (this.#pending.size) await Promise.all(this.#pending);
  }

  /**
   * Names the conversation from a message the service accepted, in the background, if it is the conversation's
   * first and the conversation has no name yet: a name the visitor gave is never overwritten.
   */
  nameFromFirstMessage(conversationId: string, message: string): Promise<void> | undefined {
    if (this.#named.has(conversationId)) return undefined;
    // Noted at once: a second message sent while this one is being named would find an earlier message anyway.
    this.#named.add(conversationId);
    if (this.#named.size > this.#capacity) this.#named.delete(this.#named.values().next().value!);
    const { service } = this.#options;
    return this.background(conversationId, 'naming a conversation failed', async () => {
      const conversation = await service.getConversation(conversationId);
      const earlier = (conversation.chatMessages ?? []).some(m => m.role === 'user' && m.content !== message);
      if (!conversation.conversationName && !earlier && !isDeleted(conversation)) {
        await service.setConversationName(conversationId, nameFrom(message));
      }
    });
  }

  /**
   * Keeps a finished reply's citations in the conversation's metadata, in the background, within `citationDelayMs`
   * together with those of the conversation's other replies that end meanwhile. Returns the write, which never
   * rejects.
   */
  keepCitations(conversationId: string, messageId: string, citations: Citation[]): Promise<void> {
    const kept: KeptCitations = { citations, timestamp: new Date().toISOString() };
    const waiting = this.#unkept.get(conversationId);
    if (waiting) {
      waiting.replies.set(messageId, kept);
      return waiting.written;
    }
    const replies = new Map([[messageId, kept]]);
    let written!: (work: Promise<void>) => void;
    const unkept: Unkept = {
      replies,
      written: new Promise(resolve => (written = resolve)),
      timer: setTimeout(() => unkept.write(), this.#citationDelayMs),
      write: () => {
        clearTimeout(unkept.timer);
        if (this.#unkept.get(conversationId) !== unkept) return;
        this.#unkept.delete(conversationId);
        written(
          this.background(conversationId, 'keeping the citations of a reply failed', () =>
            // One read and one write of the conversation, for the citations of several of its replies.
            this.#rewrite(conversationId, metadata => withCitations(metadata, replies)),
          ),
        );
      },
    };
    // Waiting citations never hold a process open by themselves: a drain writes them.
    (unkept.timer as { unref?: () => void }).unref?.();
    this.#unkept.set(conversationId, unkept);
    return unkept.written;
  }

  /**
   * Keeps how a reply that left nothing in the service's history ended (stopped, failed) in the conversation's
   * metadata under its run's key, in the background: the store forgets it after the replay window. Returns the
   * write, which never rejects.
   */
  keepOutcome(conversationId: string, key: string, outcome: Omit<KeptOutcome, 'timestamp'>): Promise<void> {
    const kept: KeptOutcome = { ...outcome, timestamp: new Date().toISOString() };
    return this.background(conversationId, 'keeping how a reply ended failed', () =>
      this.#rewrite(conversationId, metadata => withOutcome(metadata, key, kept)),
    );
  }

  /** One read and one write of the conversation's metadata, unless it was deleted. */
  async #rewrite(
    conversationId: string,
    change: (metadata: Record<string, unknown> | undefined) => Record<string, unknown>,
  ) {
    const { service } = this.#options;
    const conversation = await service.getConversation(conversationId);
    if (isDeleted(conversation)) return;
    await service.setMetadata(conversationId, change(conversation.metadata));
  }
}
