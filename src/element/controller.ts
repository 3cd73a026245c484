/**
 * @module
 * The element's conversation and its turns, as a reactive controller told its callbacks when it is made. `send()`
 * makes a turn at once, with its own AbortController that every step takes (session, conversation, send, stream,
 * refresh); each step checks that the turn is still live before it touches state, and the turn settles exactly once.
 * Turns are sent one at a time, in order; each one's reply is `reply.ts`'s (a chunk, loaded as soon as a message is
 * queued or a running reply is to be followed, beside the session and conversation requests), and the backend's
 * routes `backend.ts`'s.
 * Stop tells the backend (the browser going away is not a stop); an element removed from the page cancels everything
 * it started and sends nothing more. A message the backend took is told to the site's other elements and tabs of the
 * same visitor (a BroadcastChannel named as the stored conversation); those showing its conversation show it too and
 * follow its run, so the service is asked once.
 */
import type { ReactiveController, ReactiveControllerHost } from 'lit';
import { resendHeader } from '../protocol.js';
import type { ConversationDetail, RunView } from '../protocol.js';
import { Backend, conversationPath } from './backend.js';
import { PersonaChatError, errorFromResponse, networkError } from './errors.js';
import { withLock } from './session.js';
import type { FetchLike } from './session.js';
import {
  TurnStatus,
  asCitations,
  activeTurn,
  applyEvent,
  initialState,
  isSettled,
  nextQueued,
  timeline,
} from './state.js';
import type { ChatEvent, ChatState, Feedback, Turn } from './state.js';
import { ChatStorage, TabStorage, pageId } from './storage.js';
import type { StorageKind } from './storage.js';
import type * as Reply from './reply.js';
import type { Kit, ReplyOptions } from './reply.js';
import { TurnHandle, abortError, isAbort, pauseFor, persist, recoverable, untilAborted } from './turn.js';
import type { ReplyResult } from './turn.js';

export type { ReplyResult } from './turn.js';

/** What the controller needs from its element. */
export interface ChatHost extends ReactiveControllerHost, HTMLElement {
  endpoint: string;
  personaId: string;
  storage: StorageKind;
  metadata: Record<string, string> | undefined;
  fetch: FetchLike;
}

/** What the controller tells its element, as Lit's `Task` is told its callbacks: each is optional. */
export interface ChatCallbacks {
  /** A turn ended with a reply (done, or stopped with what it had); `id` is the turn's. */
  onReply?(result: ReplyResult, id: string): void;
  /** Something failed: a turn (once per turn; `turn` is its id when the transcript shows the failure), or setting up. */
  onError?(error: PersonaChatError, turn?: string): void;
  /** A conversation started, or one was restored. */
  onConversation?(conversationId: string, restored: boolean): void;
  /** Texts that were not sent after all, in order, for the composer. */
  onUnsent?(texts: string[]): void;
  /** The state changed (called at once; renders wait for the next frame). */
  onChange?(): void;
}

/**
 * Conversations being created, per stored conversation key (one per page, whatever the number of elements), or per
 * storage of its own for an element that keeps nothing.
 */
const creations = new Map<string | ChatStorage, Promise<string>>();

const newKey = () => crypto.randomUUID();

/** What the reply chunk is given of the chat's code: its errors must be the chat's own. */
export const replyKit: Kit = {
  Error: PersonaChatError,
  response: errorFromResponse,
  network: networkError,
  abort: abortError,
  isAbort,
  until: untilAborted,
  persist,
  pause: pauseFor,
  recoverable,
  path: conversationPath,
  citations: asCitations,
  resend: resendHeader,
};

/** The reply chunk, loading or loaded, once per page; a load that failed (offline, a new deploy) is tried again. */
let replyChunk: Promise<typeof Reply> | undefined;

/** Loads the reply chunk, given the chat's code; rejects with a network error when it cannot be loaded. */
const loadReply = () =>
  (replyChunk ??= import('./reply.js').then(
    chunk => (chunk.use(replyKit), chunk),
    (error: unknown) => {
      replyChunk = undefined;
      throw networkError(error);
    },
  ));

export class ChatController implements ReactiveController {
  state: ChatState = initialState;

  readonly #host: ChatHost;
  readonly #on: ChatCallbacks;
  #storage: ChatStorage | undefined;
  #tab: TabStorage | undefined;
  readonly #handles = new Map<string, TurnHandle>();
  #started: Promise<void> | undefined;
  #frame = 0;
  /** Bumped when the conversation is left (new conversation, removal): stale work sees it and stops. */
  #generation = 0;
  /** When each message key was first sent (epoch ms): a key sent again says how long ago. */
  readonly #sentAt = new Map<string, number>();
  /** When the message of a key was first sent from this page, or listed by the backend (epoch ms). */
  sentAt = (key: string) => this.#sentAt.get(key);
  /** Where the messages the backend took are told to the visitor's other elements and tabs of the site. */
  #channel: BroadcastChannel | undefined;
  /** Ends the listening of the window's events, while connected. */
  #listening: AbortController | undefined;
  /** The conversation being shown, settled (never rejected) once it is. */
  #loading: Promise<unknown> | undefined;

  /** The backend, reached with the session's token. */
  readonly backend: Backend;

  constructor(host: ChatHost, callbacks: ChatCallbacks = {}) {
    this.#host = host;
    this.#on = callbacks;
    this.backend = new Backend(host);
    host.addController(this);
  }

  hostConnected() {
    const options = { signal: (this.#listening = new AbortController()).signal };
    window.addEventListener('storage', this.#onStorage, options);
    window.addEventListener('online', this.#onLine, options);
    window.addEventListener('offline', this.#onLine, options);
  }

  hostDisconnected() {
    this.#listening?.abort();
    this.#channel?.close();
    this.#channel = undefined;
    this.#leave();
    this.#started = undefined;
    cancelAnimationFrame(this.#frame);
    this.#frame = 0;
  }

  /** What this element's storage is named by: its backend and its persona. */
  get #namespace() {
    return `${this.backend.base}:${this.#host.personaId || 'default'}`;
  }

  /** This tab's storage: drafts and messages not yet accepted. Known before the session is. */
  get tab(): TabStorage {
    this.#tab ??= new TabStorage(this.#host.storage, this.#namespace);
    return this.#tab;
  }

  #apply(event: ChatEvent) {
    this.state = applyEvent(this.state, event);
    this.#on.onChange?.();
    // Renders are coalesced to at most one per animation frame.
    if (!this.#frame) {
      this.#frame = requestAnimationFrame(() => {
        this.#frame = 0;
        this.#host.requestUpdate();
      });
    }
  }

  #turn(id: string): Turn | undefined {
    return this.state.turns.find(turn => turn.id === id);
  }

  /** Gets a session and restores the stored conversation, once; reports a failure as an error. */
  start(): Promise<void> {
    return this.#starting().catch(error => void this.#report(error));
  }

  #starting(): Promise<void> {
    this.#started ??= this.#restore(this.#generation).catch(error => {
      this.#started = undefined;
      throw error;
    });
    return this.#started;
  }

  async #restore(generation: number) {
    const { userKey } = await this.backend.session();
    const storage = (this.#storage ??= new ChatStorage(this.#host.storage, `${this.#namespace}:${userKey}`));
    // Named as the stored conversation (site, persona, visitor), so another visitor of this browser hears nothing.
    if (storage.shared && generation === this.#generation && window.BroadcastChannel) {
      (this.#channel ??= new BroadcastChannel(storage.conversationKey)).onmessage = this.#onTold;
    }
    const id = storage.conversationId;
    const runs = id && generation === this.#generation ? await this.#load(id, storage, generation) : [];
    if (generation !== this.#generation) return;
    // Messages an earlier load of this tab sent but the backend never accepted go back to the composer.
    const pending = this.tab.pending().filter(p => p.page !== pageId);
    for (const p of pending) this.tab.removePending(p.key);
    const unsent = pending.filter(p => !p.accepted && !runs.some(run => run.key === p.key)).map(p => p.text);
    if (unsent.length) this.#on.onUnsent?.(unsent);
  }

  /** Shows a conversation and follows its running replies; returns the runs the backend listed with it. */
  #load(id: string, storage: ChatStorage, generation: number): Promise<RunView[]> {
    const loading = this.#show(id, storage, generation);
    this.#loading = loading.catch(() => {});
    return loading;
  }

  async #show(id: string, storage: ChatStorage, generation: number): Promise<RunView[]> {
    const response = await this.backend.fetch(conversationPath(id));
    if (generation !== this.#generation) return [];
    if (response.status === 404) {
      // A stale or foreign id: quietly start fresh.
      storage.conversationId = null;
      return [];
    }
    if (!response.ok) throw await errorFromResponse(response);
    const detail = (await response.json()) as ConversationDetail;
    if (generation !== this.#generation) return [];
    const runs = (detail.runs ?? []).map(run => ({ ...run, citations: asCitations(run.citations) }));
    for (const run of runs) this.#sentAt.set(run.key, Date.parse(run.createdAt));
    this.#apply({
      type: 'restored',
      conversationId: detail.id,
      messages: detail.messages,
      runs,
      citations: m => storage.citations(m),
    });
    this.#on.onConversation?.(detail.id, true);
    // Replies still being written are followed; the newest exchange, if its reply broke off (its instance died, its
    // store restarted), is asked for again on its own, as it would have been had the page stayed.
    const newest = timeline(this.state).at(-1);
    for (const run of runs) {
      const turn = this.#turn(`run:${run.key}`)!;
      const resume = run.status === 'interrupted' && newest && 'turn' in newest && newest.turn === turn;
      if (run.status !== 'running' && !resume) continue;
      if (resume) {
        this.#apply({ type: 'accepting', id: turn.id });
        this.#apply({ type: 'reconnecting', id: turn.id });
      }
      void this.#follow(turn, detail.id, !resume);
    }
    return runs;
  }

  /**
   * Follows the run of a turn the backend already took (`followOnly`), or sends its message again with its key;
   * resolves when its reply ended, one way or another.
   */
  #follow(turn: Turn, conversationId: string, followOnly = true): Promise<void> {
    const handle = this.#handle(turn.id, turn.key, turn.text);
    handle.sent = handle.accepted = true;
    return this.#replyChunk(handle)
      .then(({ deliver }) => deliver(handle, conversationId, this.#reply(handle), followOnly))
      .catch(error => this.#failed(handle, error));
  }

  /** The browser went offline or came back: what the element shows of its connection changes. */
  #onLine = () => this.#on.onChange?.();

  /**
   * Another tab of the site changed the conversation in the same storage: show the same one, unless this element is
   * sending a message (a reply it only follows, one the backend listed or another tab sent, goes on at the backend).
   */
  #onStorage = (event: StorageEvent) => {
    const storage = this.#storage;
    const active = activeTurn(this.state);
    if (
      !storage ||
      event.storageArea !== storage.store ||
      event.key !== storage.conversationKey ||
      (active && !active.id.startsWith('run:'))
    ) {
      return;
    }
    if (event.newValue === this.state.conversationId) return;
    this.#leave(true);
    if (event.newValue) void this.#load(event.newValue, storage, this.#generation).catch(error => this.#report(error));
  };

  /**
   * Another element or tab of the visitor sent a message that the backend took (or asked for its reply again): when
   * this one shows its conversation (once it is shown, if it is being loaded), it shows the message and follows its
   * run, unless it shows that turn already. A turn the service's history held by the time it was loaded goes again.
   */
  #onTold = async ({ data: { c, k, t } }: MessageEvent<{ c: string; k: string; t: string }>) => {
    await this.#loading;
    const known = this.state.turns.find(turn => turn.key === k);
    if (c !== this.state.conversationId || (known && (this.#handles.has(known.id) || !isSettled(known.status)))) return;
    const id = known?.id ?? `run:${k}`;
    if (known) this.#apply({ type: 'retrying', id });
    else {
      this.#apply({ type: 'queued', id, key: k, text: t });
      this.#apply({ type: 'accepting', id });
    }
    await this.#follow(this.#turn(id)!, c);
    const messageId = this.#turn(id)?.messageId;
    if (messageId && this.state.history.some(item => item.messageId === messageId)) {
      this.#apply({ type: 'removed', ids: [id] });
    }
  };

  /** Sends a message; resolves when its reply is done or stopped. While another is answered, it waits its turn. */
  send(text: string): Promise<ReplyResult> {
    const id = newKey();
    const handle = this.#handle(id, newKey(), text);
    this.tab.addPending(handle.key, text, pageId);
    // Its reply's code loads while the session and the conversation are asked for (a failure is the turn's).
    loadReply().catch(() => {});
    this.#apply({ type: 'queued', id, key: handle.key, text });
    this.#pump();
    return handle.result;
  }

  /** A new control of turn `id`, which its steps find by the turn's id. */
  #handle(id: string, key: string, text: string): TurnHandle {
    const handle = new TurnHandle(id, key, text);
    this.#handles.set(id, handle);
    return handle;
  }

  /** Sends the next queued turn, when nothing is being answered. */
  #pump() {
    const next = nextQueued(this.state);
    const handle = next && this.#handles.get(next.id);
    if (handle) void this.#run(handle);
  }

  /** Asks again for the newest reply that failed, was interrupted or was stopped, with the same key. */
  retry(): Promise<ReplyResult> | undefined {
    const turn = this.retryable();
    if (!turn) return undefined;
    const handle = this.#handle(turn.id, turn.key, turn.text);
    this.#apply({ type: 'retrying', id: turn.id });
    void this.#run(handle);
    return handle.result;
  }

  /** The turn Retry applies to, if any: the newest one sent, when it did not end well and nothing else runs. */
  retryable(): Turn | undefined {
    const last = timeline(this.state).findLast(entry => !('turn' in entry && entry.turn.status === TurnStatus.queued));
    const turn = !activeTurn(this.state) && last && 'turn' in last && last.turn;
    // Nothing runs, so the turn is not active either.
    return turn &&
      turn.status !== TurnStatus.done &&
      !(turn.status === TurnStatus.failed && turn.error?.retryable === false)
      ? turn
      : undefined;
  }

  /** Stops the turn being answered, at whatever stage, and gives the queued texts back. */
  stop() {
    const active = activeTurn(this.state);
    const unsent = this.#dropQueued();
    const handle = active && this.#handles.get(active.id);
    if (handle) {
      handle.abort.abort();
      this.#handles.delete(handle.id);
      if (handle.sent) {
        this.#tellStop(handle);
        // A message the backend may never have received is asked afresh by Retry, under a key of its own: the
        // stop just sent is remembered for its old key.
        this.#apply({ type: 'stopped', id: handle.id, key: handle.accepted ? undefined : newKey() });
        this.#settled(handle, this.#turn(handle.id)!);
      } else {
        this.#unsend(handle, unsent);
        handle.reject(abortError());
      }
    }
    if (unsent.length) this.#on.onUnsent?.(unsent);
  }

  /** Takes the turn of a message the backend never took out: its text goes back first of `unsent`. */
  #unsend(handle: TurnHandle, unsent: string[]) {
    unsent.unshift(handle.text);
    this.tab.removePending(handle.key);
    this.#apply({ type: 'removed', ids: [handle.id] });
  }

  /** Tells the backend to stop the turn's reply, which goes on without a reader until it is told. */
  #tellStop(handle: TurnHandle) {
    const id = this.state.conversationId;
    if (!id) return;
    this.backend.stop(id, handle.key);
  }

  /**
   * Leaves the conversation; the next message starts a new one. Replies being written are stopped (the visitor
   * moved on), and queued texts go back to the composer.
   */
  newConversation() {
    for (const handle of this.#handles.values()) if (handle.sent && !handle.settled) this.#tellStop(handle);
    this.#leave(true);
    if (this.#storage) this.#storage.conversationId = null;
  }

  /**
   * Thumbs up or down on a reply (with a comment, for a thumbs-down), or none (the vote taken back): shown at once,
   * and kept by the backend unless `keep` is false (a thumbs-down waiting for its comment).
   */
  async feedback(
    id: string,
    messageId: string | null,
    value: Feedback | undefined,
    comment?: string,
    keep = true,
    conversationId = this.state.conversationId,
  ) {
    if (conversationId === this.state.conversationId) this.#apply({ type: 'feedback', id, value, comment });
    if (!keep || !messageId || !conversationId) return;
    await this.backend.sendFeedback(conversationId, messageId, value ? (value === 'up' ? 1 : -1) : 0, comment);
  }

  /**
   * Shows another of the visitor's conversations. The replies of the one left go on at the backend (they are not
   * stopped), and a running reply of the one opened is followed.
   */
  async openConversation(id: string): Promise<void> {
    await this.#starting();
    const storage = this.#storage!;
    if (id === this.state.conversationId) return;
    this.#leave(true);
    storage.conversationId = id;
    await this.#load(id, storage, this.#generation);
  }

  /**
   * Cancels every turn this element started; texts never sent go back to the composer. With `reset`, the element
   * then shows no conversation.
   */
  #leave(reset?: boolean) {
    this.#generation++;
    const unsent = this.#dropQueued();
    for (const handle of this.#handles.values()) {
      handle.abort.abort();
      if (!handle.sent) {
        unsent.push(handle.text);
        this.tab.removePending(handle.key);
      }
      handle.reject(abortError());
    }
    this.#handles.clear();
    this.#apply({ type: 'removed', ids: this.state.turns.filter(t => !isSettled(t.status)).map(t => t.id) });
    if (unsent.length) this.#on.onUnsent?.(unsent);
    if (reset) this.#apply({ type: 'reset' });
  }

  /** Takes the queued turns out, settling them as not sent; returns their texts, in order. */
  #dropQueued(): string[] {
    const queued = this.state.turns.filter(turn => turn.status === TurnStatus.queued);
    for (const turn of queued) {
      const handle = this.#handles.get(turn.id);
      this.#handles.delete(turn.id);
      // Nothing of a queued turn has started: there is nothing to abort.
      handle?.reject(abortError());
      this.tab.removePending(turn.key);
    }
    if (queued.length) this.#apply({ type: 'removed', ids: queued.map(turn => turn.id) });
    return queued.map(turn => turn.text);
  }

  /** One turn, from its session to its end. */
  async #run(handle: TurnHandle) {
    const { signal } = handle;
    this.#apply({ type: 'accepting', id: handle.id });
    try {
      // The session and the conversation are asked for again after a failure of the way to the backend, as the
      // message is: an instance that died while answering does not make the visitor press Retry.
      await this.#persist(handle, () => untilAborted(this.#starting(), signal));
      for (let fresh = true; ; fresh = false) {
        const conversationId = await this.#persist(handle, () => untilAborted(this.#conversation(), signal));
        const { deliver } = await this.#replyChunk(handle);
        try {
          await deliver(handle, conversationId, this.#reply(handle));
          return;
        } catch (error) {
          // The stored conversation is gone: start a new one, once.
          if (!(fresh && error instanceof PersonaChatError && error.code === 'conversation_not_found')) throw error;
          if (this.#storage) this.#storage.conversationId = null;
          this.#apply({ type: 'forgotten' });
        }
      }
    } catch (error) {
      if (!signal.aborted) this.#failed(handle, error);
    }
  }

  /** The conversation id, creating the conversation with the first message: one creation across the page and tabs. */
  async #conversation(): Promise<string> {
    if (this.state.conversationId) return this.state.conversationId;
    const storage = this.#storage!;
    const generation = this.#generation;
    const create = () =>
      withLock(`persona-chat create ${storage.conversationKey}`, async () => {
        const existing = storage.shared ? storage.conversationId : null;
        if (existing) return existing;
        // The page it starts on, for the site owner's insights: its path only, as a query may name the visitor (a
        // document with no path of its own, such as an iframe's srcdoc, has none to give). In the metadata, which a
        // backend of any version takes, unless the site's names a page.
        const path = location.pathname;
        const page: Record<string, string> = path[0] === '/' ? { page: path.slice(0, 300) } : {};
        const id = await this.backend.createConversation({ ...page, ...this.#host.metadata });
        storage.conversationId = id;
        return id;
      });
    // Elements that share the stored conversation share its creation; one that keeps nothing has its own.
    const key = storage.shared ? storage.conversationKey : storage;
    let creating = creations.get(key);
    if (!creating) {
      creating = create().finally(() => creations.get(key) === creating && creations.delete(key));
      creations.set(key, creating);
    }
    const id = await creating;
    if (generation === this.#generation && this.state.conversationId !== id) {
      // The draft of the conversation not started yet becomes this one's.
      this.tab.saveDraft(id, this.tab.draft(null));
      this.tab.saveDraft(null, '');
      this.#apply({ type: 'conversation', conversationId: id });
      this.#on.onConversation?.(id, false);
    }
    return id;
  }

  /**
   * Does `work` again after a failure of the way to the backend, as a reply is asked for again (`persist`), while
   * the turn shows it is reconnecting.
   */
  #persist<T>(handle: TurnHandle, work: () => Promise<T>): Promise<T> {
    return persist(handle.signal, () => this.#apply({ type: 'reconnecting', id: handle.id }), work);
  }

  /** The reply chunk, for the turn: its load is tried again as a request of the turn is (`persist`). */
  #replyChunk(handle: TurnHandle) {
    return this.#persist(handle, () => untilAborted(loadReply(), handle.signal));
  }

  /** What the reply to the turn's message needs: the backend, and the turn's state. */
  #reply(handle: TurnHandle): ReplyOptions {
    return {
      fetch: this.backend.fetch,
      sentAt: this.#sentAt,
      lastEventId: () => this.#turn(handle.id)?.lastEventId ?? null,
      accepted: () => {
        this.tab.acceptPending(handle.key);
        this.#channel?.postMessage({ c: this.state.conversationId, k: handle.key, t: handle.text });
      },
      apply: event => {
        this.#apply(event);
        if (event.type !== 'done') return;
        const turn = this.#turn(handle.id)!;
        if (event.messageId) this.#storage?.saveCitations(event.messageId, turn.citations);
        this.#settled(handle, turn);
      },
      failed: error => this.#failed(handle, error),
    };
  }

  /** The turn ended with a reply (done, or stopped with what it had): one message event, one resolution. */
  #settled(handle: TurnHandle, turn: Turn) {
    this.#handles.delete(handle.id);
    this.tab.removePending(handle.key);
    if (handle.settled) return;
    const result = {
      messageId: turn.messageId,
      content: turn.reply,
      citations: turn.citations,
      finishReason: turn.status === TurnStatus.stopped ? 'stopped' : turn.finishReason,
    };
    this.#on.onReply?.(result, turn.id);
    handle.resolve(result);
    this.#pump();
  }

  /**
   * The turn failed, which stops the queue as Stop does: the texts queued behind it go back to the composer, in
   * order, and a message sent after it goes at once. Refused for good before the backend took it (too long, not
   * allowed): the turn is taken out and its text goes back first. Otherwise it stays, with Retry.
   */
  #failed(handle: TurnHandle, error: unknown) {
    this.#handles.delete(handle.id);
    if (handle.settled || isAbort(error)) return;
    const failure = error instanceof PersonaChatError ? error : networkError(error);
    const turn = this.#turn(handle.id);
    const unsent = this.#dropQueued();
    let shown: string | undefined;
    if (turn && !failure.retryable && turn.status === TurnStatus.accepting) this.#unsend(handle, unsent);
    else if (turn) {
      if (handle.accepted) this.tab.removePending(handle.key);
      const { code, retryable } = failure;
      this.#apply({ type: code === 'interrupted' ? code : 'failed', id: (shown = handle.id), code, retryable });
    }
    if (unsent.length) this.#on.onUnsent?.(unsent);
    this.#report(failure, shown);
    handle.reject(failure);
    this.#pump();
  }

  #report(error: unknown, turn?: string) {
    if (isAbort(error)) return;
    this.#on.onError?.(error instanceof PersonaChatError ? error : networkError(error), turn);
    this.#host.requestUpdate();
  }
}
