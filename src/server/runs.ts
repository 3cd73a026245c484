/**
 * @module
 * Replies are runs. A run is keyed by its message's Idempotency-Key in its conversation and kept by the store: a
 * producer (whichever request started it) reads the service and appends every event of the reply to the run's
 * log, holding a lease while it does; any number of readers replay the log after an event id and then follow it
 * live. The browser going away is not a stop: the producer keeps reading the service, bounded by the upstream
 * timeouts, and the log stays for the replay window. A stop is a signal in the store that reaches the producer
 * wherever it runs. A producer that vanished (its lease expired before the reply ended) leaves its run
 * `interrupted`, and retrying the message first looks in the service's history for it and its reply; so does a
 * message the browser says it sent before (`resentAt`) when the store no longer knows its run.
 */
import { normalizeCitations } from '../service/citations.js';
import type { Citation, RunStatus, RunView, StreamEventName, StreamEvents } from '../protocol.js';
import type { ChatMessage, StreamChunk } from '../service/types.js';
import { HttpError, errorOfEvent, interrupted, toHttpError } from './errors.js';
import type { BackendStore, LoggedEvent, RunRecord } from './store.js';

export interface RunLimits {
  /** How long a run and its log are kept after its last event. */
  replayWindowMs: number;
  /** Most events one attempt's log holds; past a share of it, text is appended in bigger pieces. */
  eventsPerRun: number;
  /** Most bytes of reply text one run keeps; a longer reply ends there with `finishReason: "length"`. */
  bytesPerRun: number;
  /** Runs each conversation keeps listed for the replay window. */
  runsPerConversation: number;
}

export interface RunsOptions {
  store: BackendStore;
  limits: RunLimits;
  /**
   * Sends the message; resolves once the service accepted it, with the reply's chunks still to read, in batches (the
   * chunks of one read from the service together).
   */
  open(conversationId: string, message: string, signal: AbortSignal): Promise<AsyncGenerator<StreamChunk[]>>;
  /** The conversation's messages as the service keeps them. */
  history(conversationId: string, signal: AbortSignal): Promise<ChatMessage[]>;
  /** The producer's lease, renewed every third of it. Default 15 s. */
  leaseMs?: number;
  /** Told about failures of the store while producing, which no request is there to hear. */
  onError?(error: unknown): void;
  /**
   * Told when a producer has written a run's `done` (whatever its finishReason), with the citations the run wrote.
   * Must not throw; work it returns goes on in the background of the run.
   */
  onDone?(record: RunRecord, done: StreamEvents['done'], citations: Citation[]): Promise<unknown> | void;
}

/** Who asks for a run: the visitor, the conversation (already checked to be theirs) and the key. */
export interface RunRef {
  owner: string;
  conversationId: string;
  key: string;
}

export const runId = ({ conversationId, key }: Omit<RunRef, 'owner'>) => `run:${conversationId}:${key}`;

export const isTerminal = (event: Pick<LoggedEvent, 'event'>) => event.event === 'done' || event.event === 'error';

/** What a producer holds while it runs (a reply slot): renewed with its lease, released when it ends. */
export interface Admission {
  renew(): Promise<unknown>;
  release(): Promise<void>;
}

/** Admission for a new producer (rate limits, a reply slot): throws when refused. */
export type Admit = () => Promise<Admission>;

/** Told about a producer's work, for runtimes that end work with the response (Workers' `waitUntil`). */
export type Background = (work: Promise<unknown>) => void;

/** Why a producer stopped before its reply ended. */
class Halt {
  constructor(readonly why: 'stopped' | 'lease-lost' | 'closing' | 'restarting') {}
}

const newToken = () => crypto.randomUUID();
const ready = () => true as const;

/**
 * Resolves once the work already queued has run, the reads of what the service sent so far included: a macrotask
 * later (`setImmediate` where there is one).
 */
const afterReads: () => Promise<void> =
  typeof setImmediate === 'function'
    ? () => new Promise(resolve => setImmediate(resolve))
    : () => new Promise(resolve => setTimeout(resolve, 0));

/** The length of `text` in UTF-8 bytes, without encoding it. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        // A surrogate pair: two UTF-16 units, four bytes.
        bytes += 2;
        i++;
        continue;
      }
      bytes += 2;
    } else bytes += 2;
  }
  return bytes;
}

export class Runs {
  readonly #store: BackendStore;
  readonly #options: RunsOptions;
  readonly #limits: RunLimits;
  readonly #leaseMs: number;
  /** This instance's producers, so that closing can end them. */
  readonly #producers = new Set<AbortController>();
  /** Told when the last producer ends, while draining. */
  readonly #idle = new EventTarget();
  /** Requests on their way to becoming producers (admission, the store), which draining waits for too. */
  #starting = 0;
  #draining = false;
  /** Past the grace period of a drain: a producer that starts now is ended at once. */
  #halting = false;

  constructor(options: RunsOptions) {
    this.#options = options;
    this.#store = options.store;
    this.#limits = options.limits;
    this.#leaseMs = options.leaseMs ?? 15_000;
  }

  /**
   * A message sent with its key: starts its run, restarts it after a failure or a stop, or finds it running or
   * done. `accepted` settles once the service took the message (or the run was found): it rejects with the error
   * the run ended with when the service refused it, so the caller can answer with that error. `resentAt`: the
   * browser sent this key before, first at that time (epoch ms); a run the store does not know then starts by
   * looking for the message and its reply in the service's history, as a retry of a known run does.
   */
  async send(
    ref: RunRef,
    message: string,
    admit: Admit,
    background: Background = () => {},
    resentAt?: number,
  ): Promise<{ record: RunRecord; accepted: Promise<void> }> {
    const id = runId(ref);
    const record = await this.#store.getRun(id);
    if (record && record.owner !== ref.owner) throw runNotFound();
    if (record && record.message !== message) {
      throw new HttpError(409, 'duplicate_request', 'This Idempotency-Key was sent with another message.', {
        retryable: false,
      });
    }
    if (!record) return this.#start(() => this.#create(id, ref, message, admit, background, resentAt));
    return this.#attach(id, record, admit, background);
  }

  /** A run that does not exist yet: created with its producer's lease, or found when another request won. */
  async #create(id: string, ref: RunRef, message: string, admit: Admit, background: Background, resentAt?: number) {
    const admission = await admit();
    const now = Date.now();
    const token = newToken();
    // A message sent before keeps its first time, from which its reply is looked for in the history.
    const createdAt = Math.min(resentAt ?? now, now);
    const fresh: RunRecord = { ...ref, message, createdAt, attempt: 1, attemptedAt: now };
    const created = await this.#store
      .createRun(id, fresh, {
        ttlMs: this.#limits.replayWindowMs,
        perConversation: this.#limits.runsPerConversation,
        lease: { token, ttlMs: this.#leaseMs },
      })
      .catch(async error => {
        await admission.release();
        throw error;
      });
    if (created.created) {
      return {
        record: created.record,
        accepted: this.#produce(id, created.record, token, admission, resentAt === undefined ? null : [], background),
      };
    }
    await admission.release();
    return this.#attach(id, created.record, admit, background);
  }

  /** An existing run: found running or done, refused again, or restarted. */
  async #attach(id: string, record: RunRecord, admit: Admit, background: Background) {
    const { status, last } = await this.#state(id);
    if (status === 'failed' && last && !(JSON.parse(last.data) as StreamEvents['error']).retryable) {
      // Refused for good (the conversation is gone, the message is not allowed): refused the same way again.
      throw errorOfEvent(JSON.parse(last.data) as StreamEvents['error']);
    }
    if (status === 'running' || status === 'done') return { record, accepted: Promise.resolve() };
    return this.#start(() => this.#restart(id, record, status, admit, background));
  }

  /** Counts a request on its way to becoming a producer, so that a drain waits for it; refused while draining. */
  async #start<T>(work: () => Promise<T>): Promise<T> {
    if (this.#draining) throw restarting();
    this.#starting++;
    try {
      return await work();
    } finally {
      this.#starting--;
      this.#whenIdle();
    }
  }

  #whenIdle() {
    if (!this.#producers.size && !this.#starting) this.#idle.dispatchEvent(new Event('idle'));
  }

  /**
   * The next attempt of a failed, stopped or interrupted run. When another request is already starting it (two
   * Retries at once), or its producer is just letting go of the lease, waits a moment and follows that attempt.
   */
  async #restart(id: string, record: RunRecord, status: RunStatus, admit: Admit, background: Background) {
    const token = newToken();
    for (let tries = 0; !(await this.#store.acquireLease(id, token, this.#leaseMs)); tries++) {
      const current = (await this.#store.getRun(id)) ?? record;
      if (current.attempt > record.attempt || tries >= 10) return { record: current, accepted: Promise.resolve() };
      await new Promise(resolve => setTimeout(resolve, 100));
    }
    // Under the lease, nobody else restarts the run: an attempt that began since it was read is the one to follow.
    const current = await this.#store.getRun(id);
    if (current?.attempt !== record.attempt) {
      await this.#store.releaseLease(id, token);
      return { record: current ?? record, accepted: Promise.resolve() };
    }
    let admission: Admission;
    try {
      admission = await admit();
    } catch (error) {
      await this.#store.releaseLease(id, token);
      throw error;
    }
    const previous = fold(await this.#store.readEvents(id, null, { waitMs: 0 }));
    const next: RunRecord = { ...record, attempt: record.attempt + 1, attemptedAt: Date.now() };
    await this.#store.clearStop(id);
    if (!(await this.#store.restartRun(id, next, token, this.#limits.replayWindowMs))) {
      await admission.release();
      await this.#store.releaseLease(id, token);
      return { record: (await this.#store.getRun(id)) ?? record, accepted: Promise.resolve() };
    }
    // A stopped reply is asked again on purpose; any other may have reached the service before it failed.
    const fromHistory = status === 'stopped' ? null : previous.citations;
    return { record: next, accepted: this.#produce(id, next, token, admission, fromHistory, background) };
  }

  /** How a run stands, from its log's newest event and whether a producer holds its lease; and that event. */
  async #state(id: string): Promise<{ status: RunStatus; last: LoggedEvent | undefined }> {
    const last = await this.#store.lastEvent(id);
    if (last && isTerminal(last)) return { status: terminalStatus(last), last };
    if (await this.#store.leaseHeld(id)) return { status: 'running', last };
    // The producer may have just finished: look once more before calling it gone.
    const again = await this.#store.lastEvent(id);
    return { status: again && isTerminal(again) ? terminalStatus(again) : 'interrupted', last: again };
  }

  /**
   * The run's events after `after` (from its start when null), then live ones as they come, until its terminal
   * event, the reader going away (`signal`), or a new attempt starting (the reader then follows that one afresh).
   */
  async *follow(id: string, attempt: number, after: string | null, signal: AbortSignal): AsyncGenerator<LoggedEvent> {
    for await (const events of this.followBatches(id, attempt, after, signal)) yield* events;
  }

  /** `follow`, in the batches the store gives: every event already logged at once, then the new ones as they come. */
  async *followBatches(
    id: string,
    attempt: number,
    after: string | null,
    signal: AbortSignal,
  ): AsyncGenerator<LoggedEvent[]> {
    let cursor = after;
    // A reader that comes back with an id may be past the end already (it saw the terminal event, then lost its
    // connection): it looks before it waits, so that it gets the end again at once rather than a wait later.
    let waitMs = after === null ? this.#leaseMs / 3 : 0;
    while (!signal.aborted) {
      const events = await this.#store.readEvents(id, cursor, { waitMs, signal });
      waitMs = this.#leaseMs / 3;
      const end = events.findIndex(event => event.attempt !== attempt || isTerminal(event));
      if (end >= 0) {
        // A new attempt ends this reader before its first event; a terminal event is the last one it gets.
        const last = events[end]!.attempt === attempt ? end + 1 : end;
        if (last) yield events.slice(0, last);
        return;
      }
      if (events.length) {
        yield events;
        cursor = events.at(-1)!.id;
      }
      if (events.length || signal.aborted) continue;
      const last = await this.#store.lastEvent(id);
      if (last && isTerminal(last)) {
        // The reader is past the end already: it gets the end again, so that its stream ends as streams do.
        if (last.attempt === attempt) yield [last];
        return;
      }
      if (!last && !(await this.#store.getRun(id))) return;
      if (!(await this.#store.leaseHeld(id))) await this.#interrupt(id);
    }
  }

  /** Asks the run to stop. `unknown` runs are remembered as stopped, in case their message is still on its way. */
  async stop(ref: RunRef): Promise<'stopping' | 'finished' | 'unknown'> {
    const id = runId(ref);
    const record = await this.#store.getRun(id);
    if (!record || record.owner !== ref.owner) {
      if (!record) await this.#store.requestStop(id, this.#limits.replayWindowMs);
      return 'unknown';
    }
    if ((await this.#state(id)).status !== 'running') return 'finished';
    await this.#store.requestStop(id, this.#limits.replayWindowMs);
    return 'stopping';
  }

  /** The runs of a conversation in the replay window, as far as they got, oldest first. */
  async views(conversationId: string, owner: string): Promise<RunView[]> {
    const views: RunView[] = [];
    for (const id of await this.#store.listRuns(conversationId)) {
      const record = await this.#store.getRun(id);
      if (record?.owner !== owner) continue;
      // The status comes from the events read, so that a view never says done without all of its text.
      let events = await this.#store.readEvents(id, null, { waitMs: 0 });
      let status: RunStatus;
      if (events.length && isTerminal(events.at(-1)!)) status = terminalStatus(events.at(-1)!);
      else if (await this.#store.leaseHeld(id)) status = 'running';
      else {
        events = await this.#store.readEvents(id, null, { waitMs: 0 });
        status = events.length && isTerminal(events.at(-1)!) ? terminalStatus(events.at(-1)!) : 'interrupted';
      }
      views.push(viewOf(record, events, status));
    }
    return views;
  }

  /** Ends this instance's producers: their runs end `interrupted`, and can be retried. */
  close() {
    for (const producer of this.#producers) producer.abort(new Halt('closing'));
  }

  /**
   * Takes no new runs (a 503 `server_restarting` sends them elsewhere), lets this instance's producers finish for up
   * to `graceMs`, then ends the rest with `server_restarting`, which the browser answers by sending the message
   * again, to another instance. Resolves once every producer has ended.
   */
  async drain(graceMs: number): Promise<void> {
    this.#draining = true;
    const idle = () =>
      new Promise<void>(resolve => {
        if (!this.#producers.size && !this.#starting) return resolve();
        this.#idle.addEventListener('idle', () => resolve(), { once: true });
      });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const grace = new Promise<void>(resolve => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([idle(), grace]);
    clearTimeout(timer);
    this.#halting = true;
    for (const producer of this.#producers) producer.abort(new Halt('restarting'));
    await idle();
  }

  /** Whether the instance is draining: it takes no new runs. */
  get draining() {
    return this.#draining;
  }

  /** Runs the producer in the background; resolves once the service accepted the message. */
  #produce(
    id: string,
    record: RunRecord,
    token: string,
    admission: Admission,
    historyCitations: Citation[] | null,
    background: Background,
  ): Promise<void> {
    const { store } = this.#options;
    const { replayWindowMs, eventsPerRun, bytesPerRun } = this.#limits;
    let accept!: () => void;
    let refuse!: (error: unknown) => void;
    const accepted = new Promise<void>((resolve, reject) => ((accept = resolve), (refuse = reject)));
    accepted.catch(() => {});
    const abort = new AbortController();
    this.#producers.add(abort);
    if (this.#halting) abort.abort(new Halt('restarting'));

    let cited: Citation[] = [];
    const append = async <E extends StreamEventName>(event: E, data: StreamEvents[E]) => {
      const appended = await store.appendEvent(id, event, JSON.stringify(data), token, replayWindowMs);
      if (appended === null) throw new Halt('lease-lost');
      if (event === 'citations') cited = (data as StreamEvents['citations']).citations;
      const after = event === 'done' && this.#options.onDone?.(record, data as StreamEvents['done'], cited);
      if (after) background(after);
    };
    // Text is appended as it comes until the log nears its bound; then in pieces of at least `flushBytes`.
    const coalesceFrom = eventsPerRun - 70;
    const flushBytes = Math.ceil(bytesPerRun / 64);
    let appended = 0;
    let bytes = 0;
    let pending = '';
    const flush = async () => {
      if (!pending) return;
      const text = pending;
      pending = '';
      appended++;
      await append('delta', { text });
    };

    const renew = setInterval(() => {
      store.renewLease(id, token, this.#leaseMs).then(
        held => held || abort.abort(new Halt('lease-lost')),
        () => {},
      );
      admission.renew().catch(() => {});
    }, this.#leaseMs / 3);
    (renew as { unref?: () => void }).unref?.();
    store.watchStop(id, abort.signal).then(
      () => abort.abort(new Halt('stopped')),
      () => {},
    );

    const work = (async () => {
      try {
        if (historyCitations) {
          const found = await this.#fromHistory(id, record, abort.signal);
          if (found) {
            accept();
            if (found.content) await append('delta', { text: found.content });
            if (historyCitations.length) await append('citations', { citations: historyCitations });
            await append('done', { messageId: found.messageId, runId: found.runId, finishReason: 'stop', usage: null });
            return;
          }
        }
        if (await store.stopRequested(id)) abort.abort(new Halt('stopped'));
        abort.signal.throwIfAborted();
        const batches = await this.#options.open(record.conversationId, record.message, abort.signal);
        accept();
        // Text that came in one read from the service is appended as one event: after each batch (one read), the
        // next is awaited until what the service already delivered has been read (`afterReads`), and the text is
        // appended then. A read under way when the producer ends is settled by the abort in `finally`, and not
        // awaited.
        const pull = () => {
          const promise = batches.next();
          promise.catch(() => {});
          return promise;
        };
        let next = pull();
        let read: Promise<false> | undefined;
        for (;;) {
          const result = await next;
          if (result.done) break;
          for (const chunk of result.value) {
            if (chunk.type === 'delta') {
              const size = utf8Length(chunk.text);
              if (bytes + size > bytesPerRun) {
                pending += cut(chunk.text, bytesPerRun - bytes);
                await flush();
                await append('done', { messageId: null, runId: null, finishReason: 'length', usage: null });
                await batches.return(undefined);
                return;
              }
              bytes += size;
              pending += chunk.text;
            } else if (chunk.type === 'citations') {
              await flush();
              await append('citations', { citations: normalizeCitations(chunk.citations) });
            } else {
              await flush();
              await append('done', {
                messageId: typeof chunk.messageId === 'string' ? chunk.messageId : null,
                runId: typeof chunk.runId === 'string' ? chunk.runId : null,
                finishReason: typeof chunk.finishReason === 'string' ? chunk.finishReason : null,
                usage: chunk.usage ?? null,
              });
              await batches.return(undefined);
              return;
            }
          }
          next = pull();
          if (!pending) continue;
          if (pending.length >= flushBytes) await flush();
          else if (appended < coalesceFrom) {
            read ??= afterReads().then(() => ((read = undefined), false as const));
            const more = await Promise.race([next.then(ready, ready), read]);
            if (!more) await flush();
          }
        }
        throw interrupted();
      } catch (error) {
        const halt = abort.signal.reason instanceof Halt ? abort.signal.reason : error instanceof Halt ? error : null;
        if (halt?.why === 'lease-lost') return accept();
        try {
          await flush();
          if (halt?.why === 'stopped') {
            accept();
            await append('done', { messageId: null, runId: null, finishReason: 'stopped', usage: null });
          } else {
            const failure = halt?.why === 'restarting' ? restarting() : halt ? interrupted() : toHttpError(error);
            try {
              await append('error', { code: failure.code, message: failure.message, retryable: failure.retryable });
            } finally {
              // After the log says so, so that a request right after the refusal finds the run failed.
              refuse(failure);
            }
          }
        } catch (appendError) {
          if (!(appendError instanceof Halt)) this.#options.onError?.(appendError);
        }
      } finally {
        clearInterval(renew);
        abort.abort(new Halt('closing'));
        await Promise.allSettled([admission.release(), store.releaseLease(id, token)]);
        this.#producers.delete(abort);
        this.#whenIdle();
      }
    })();
    work.catch(error => this.#options.onError?.(error));
    background(work);
    return accepted;
  }

  /**
   * The reply the service already keeps for this run's message, if an earlier attempt got that far: the newest user
   * message with the same text, sent since the run began (5 s allowed for clocks that differ), followed by an
   * assistant message no other run of the conversation stands for. Without a time, only the newest exchange counts.
   */
  async #fromHistory(id: string, record: RunRecord, signal: AbortSignal) {
    const messages = await this.#options.history(record.conversationId, signal);
    const claimed = new Set<string>();
    for (const other of await this.#store.listRuns(record.conversationId)) {
      const last = other === id ? undefined : await this.#store.lastEvent(other);
      const done = last?.event === 'done' ? (JSON.parse(last.data) as StreamEvents['done']) : undefined;
      if (done?.messageId) claimed.add(done.messageId);
    }
    const since = record.createdAt - 5_000;
    for (let i = messages.length - 2; i >= 0; i--) {
      const [user, reply] = [messages[i]!, messages[i + 1]!];
      const time = user.timestamp ? Date.parse(user.timestamp) : NaN;
      if (time < since) break;
      if (user.role !== 'user' || user.content !== record.message || reply.role !== 'assistant') continue;
      if (reply.messageId && claimed.has(reply.messageId)) continue;
      if (Number.isNaN(time) && i !== messages.length - 2) break;
      return {
        content: reply.content ?? '',
        messageId: reply.messageId ?? null,
        runId: reply.conversationRunId ?? null,
      };
    }
    return undefined;
  }

  /** Ends a run whose producer vanished, under a lease of its own so that only one reader writes the end. */
  async #interrupt(id: string) {
    const token = newToken();
    if (!(await this.#store.acquireLease(id, token, this.#leaseMs))) return;
    try {
      const last = await this.#store.lastEvent(id);
      if (!last || !isTerminal(last)) {
        const failure = interrupted();
        const data: StreamEvents['error'] = { code: failure.code, message: failure.message, retryable: true };
        await this.#store.appendEvent(id, 'error', JSON.stringify(data), token, this.#limits.replayWindowMs);
      }
    } finally {
      await this.#store.releaseLease(id, token);
    }
  }
}

export const restarting = () =>
  new HttpError(503, 'server_restarting', 'This server is restarting. The reply goes on elsewhere.', {
    retryable: true,
    retryAfter: 1,
  });

export const runNotFound = () => new HttpError(404, 'run_not_found', 'There is no such reply.', { retryable: false });

export function terminalStatus(event: Pick<LoggedEvent, 'event' | 'data'>): RunStatus {
  if (event.event === 'done') {
    return (JSON.parse(event.data) as StreamEvents['done']).finishReason === 'stopped' ? 'stopped' : 'done';
  }
  return (JSON.parse(event.data) as StreamEvents['error']).code === 'interrupted' ? 'interrupted' : 'failed';
}

/** What a run's events add up to: the text, the citations, and how it ended. */
export function fold(events: LoggedEvent[]) {
  const reply = {
    content: '',
    citations: [] as Citation[],
    done: null as StreamEvents['done'] | null,
    error: null as StreamEvents['error'] | null,
  };
  for (const event of events) {
    const data: unknown = JSON.parse(event.data);
    if (event.event === 'delta') reply.content += (data as StreamEvents['delta']).text;
    else if (event.event === 'citations') reply.citations = (data as StreamEvents['citations']).citations;
    else if (event.event === 'done') reply.done = data as StreamEvents['done'];
    else if (event.event === 'error') reply.error = data as StreamEvents['error'];
  }
  return reply;
}

/** A run as the browser sees it in a conversation: the message, the text so far and how it ended. */
export function viewOf(record: RunRecord, events: LoggedEvent[], status: RunStatus): RunView {
  const { content, citations, done, error } = fold(events);
  const failure = status === 'interrupted' && !error ? interrupted() : null;
  return {
    key: record.key,
    message: record.message,
    status,
    content,
    citations,
    messageId: done?.messageId ?? null,
    finishReason: done?.finishReason ?? null,
    error: failure ? { code: failure.code, message: failure.message, retryable: true } : error,
    lastEventId: events.at(-1)?.id ?? null,
    attempt: record.attempt,
    createdAt: new Date(record.createdAt).toISOString(),
  };
}

/** The longest start of `text` that fits in `max` UTF-8 bytes. */
function cut(text: string, max: number): string {
  let out = '';
  let size = 0;
  for (const char of text) {
    size += utf8Length(char);
    if (size > max) break;
    out += char;
  }
  return out;
}
