/**
 * @module
 * The producer of a run: the one request, on whichever instance, that reads the service for the run's message and
 * appends what it says to the run's log, holding the run's lease while it does and renewing it. It coalesces text
 * as the log nears its bound, ends a reply at the byte budget, answers a stop signal from the store, and ends a
 * reply the service already keeps (an attempt before may have got that far) from the service's history instead of
 * asking again. runs.ts decides when a producer starts; run-log.ts reads what it wrote.
 */
import type { Citation, StreamEventName } from '../protocol.js';
import { normalizeCitations } from '../service/citations.js';
import type { ChatMessage, StreamChunk } from '../service/types.js';
import { interrupted, restarting, toHttpError } from './errors.js';
import { cut, isTerminal, terminalStatus, utf8Length } from './run-log.js';
import type { LogEvents } from './run-log.js';
import { appendAll } from './store.js';
import type { BackendStore, LoggedEvent, NewEvent, RunRecord } from './store.js';

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

/** What a producer holds while it runs (a reply slot): renewed with its lease, released when it ends. */
export interface Admission {
  renew(): Promise<unknown>;
  release(): Promise<void>;
}

/** Told about a producer's work, for runtimes that end work with the response (Workers' `waitUntil`). */
export type Background = (work: Promise<unknown>) => void;

/** What a producer works with: the store, the limits, the service, and who hears how it went. */
export interface ProducerOptions {
  store: BackendStore;
  limits: RunLimits;
  /**
   * Sends the message; resolves once the service accepted it, with the reply's chunks still to read, in batches (the
   * chunks of one read from the service together).
   */
  open(conversationId: string, message: string, signal: AbortSignal): Promise<AsyncGenerator<StreamChunk[]>>;
  /** The conversation's messages as the service keeps them. */
  history(conversationId: string, signal: AbortSignal): Promise<ChatMessage[]>;
  /** The producer's lease, renewed every third of it. */
  leaseMs: number;
  /** Told about failures of the store while producing, which no request is there to hear. */
  onError?(error: unknown): void;
  /**
   * Told when a producer has written a run's `done` (whatever its finishReason), as logged (token counts included),
   * with the citations the run wrote. Must not throw; work it returns goes on in the background of the run.
   */
  onDone?(record: RunRecord, done: LogEvents['done'], citations: Citation[]): Promise<unknown> | void;
  /**
   * Told when a producer has written a run's end that leaves no reply in the service's history: stopped, or failed
   * (not a restart, whose message is sent again). Must not throw; work it returns goes on in the background.
   */
  onOutcome?(record: RunRecord, outcome: { status: 'stopped' | 'failed'; code?: string }): Promise<unknown> | void;
}

/** Why a producer stopped before its reply ended. */
export class Halt {
  constructor(readonly why: 'stopped' | 'lease-lost' | 'closing' | 'restarting') {}
}

/** One producer's work: its run and attempt, the lease it holds, and how it is ended and tells that it ended. */
export interface Job {
  id: string;
  record: RunRecord;
  /** The lease the producer holds. */
  token: string;
  admission: Admission;
  /** Null: ask the service. Else: look for the reply in the history first, and cite these with it. */
  historyCitations: Citation[] | null;
  background: Background;
  /** Ends the producer, with a `Halt` as its reason. */
  abort: AbortController;
  /** Told once, when the producer has ended and let go of its lease. */
  ended(): void;
  /** Told each event the producer appended, with the id the store gave it, for the readers of this instance. */
  publish?(event: LoggedEvent): void;
}

const ready = () => true as const;

/**
 * Resolves once the work already queued has run, the reads of what the service sent so far included: a macrotask
 * later (`setImmediate` where there is one).
 */
const afterReads = (): Promise<void> =>
  (nextTurn ??= new Promise(resolve => {
    const turn = () => {
      nextTurn = undefined;
      resolve();
    };
    if (typeof setImmediate === 'function') setImmediate(turn);
    else setTimeout(turn, 0);
  }));
/** The turn every producer waiting for `afterReads` waits for: one for all of them, not one each. */
let nextTurn: Promise<void> | undefined;

/**
 * Runs a producer in the background: reads the service for the run's message and appends what it says to the run's
 * log, under the run's lease, until the reply ends, is stopped, or the producer is ended (`job.abort`). Resolves once
 * the service accepted the message; rejects with the error the run ended with when it refused it.
 */
export function produce(options: ProducerOptions, job: Job): Promise<void> {
  const { store, leaseMs } = options;
  const { replayWindowMs, eventsPerRun, bytesPerRun } = options.limits;
  const { id, record, token, admission, historyCitations, background, abort } = job;
  let accept!: () => void;
  let refuse!: (error: unknown) => void;
  const accepted = new Promise<void>((resolve, reject) => ((accept = resolve), (refuse = reject)));
  accepted.catch(() => {});

  let cited: Citation[] = [];
  // The slot is given back with the reply's end, or when the producer ends: once.
  let slotReleased: Promise<void> | undefined;
  const releaseSlot = () => (slotReleased ??= admission.release());
  // Events are queued by `append` and written together by `commit`: one step of the store for those of one read.
  let queued: (NewEvent & { value: unknown })[] = [];
  const append = async <E extends StreamEventName>(event: E, data: LogEvents[E]) => {
    queued.push({ event, data: JSON.stringify(data), value: data });
  };
  const commit = async () => {
    if (!queued.length) return;
    const batch = queued;
    queued = [];
    // The reply's end gives its slot back in the same write to the store, and its lease in the same step.
    const ending = isTerminal(batch.at(-1)!);
    if (ending) releaseSlot().catch(() => {});
    const ids = await appendAll(store, id, batch, token, replayWindowMs, ending);
    if (ids === null) throw new Halt('lease-lost');
    batch.forEach(({ event, data, value }, i) => {
      // This instance's readers of the run are given the event at once, without asking the store.
      job.publish?.({ id: ids[i]!, event, data, attempt: record.attempt });
      if (event === 'citations') cited = (value as LogEvents['citations']).citations;
      const after = event === 'done' && options.onDone?.(record, value as LogEvents['done'], cited);
      if (after) background(after);
      const status = isTerminal({ event }) && terminalStatus({ event, data });
      const code = event === 'error' ? (value as LogEvents['error']).code : undefined;
      if ((status === 'stopped' || status === 'failed') && code !== 'server_restarting') {
        const kept = options.onOutcome?.(record, code ? { status, code } : { status });
        if (kept) background(kept);
      }
    });
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
    store.renewLease(id, token, leaseMs).then(
      held => held || abort.abort(new Halt('lease-lost')),
      () => {},
    );
    admission.renew().catch(() => {});
  }, leaseMs / 3);
  (renew as { unref?: () => void }).unref?.();
  store.watchStop(id, abort.signal).then(
    () => abort.abort(new Halt('stopped')),
    () => {},
  );

  const work = (async () => {
    try {
      if (historyCitations) {
        const found = await fromHistory(options, id, record, abort.signal);
        if (found) {
          accept();
          if (found.content) await append('delta', { text: found.content });
          if (historyCitations.length) await append('citations', { citations: historyCitations });
          await append('done', { messageId: found.messageId, runId: found.runId, finishReason: 'stop', usage: null });
          await commit();
          return;
        }
      }
      if (await store.stopRequested(id)) abort.abort(new Halt('stopped'));
      abort.signal.throwIfAborted();
      const batches = await options.open(record.conversationId, record.message, abort.signal);
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
              await commit();
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
            await commit();
            await batches.return(undefined);
            return;
          }
        }
        next = pull();
        if (pending.length >= flushBytes) await flush();
        else if (pending && appended < coalesceFrom) {
          read ??= afterReads().then(() => ((read = undefined), false as const));
          const more = await Promise.race([next.then(ready, ready), read]);
          if (!more) await flush();
        }
        await commit();
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
          await commit();
        } else {
          const failure = halt?.why === 'restarting' ? restarting() : halt ? interrupted() : toHttpError(error);
          try {
            await append('error', { code: failure.code, message: failure.message, retryable: failure.retryable });
            await commit();
          } finally {
            // After the log says so, so that a request right after the refusal finds the run failed.
            refuse(failure);
          }
        }
      } catch (appendError) {
        if (!(appendError instanceof Halt)) options.onError?.(appendError);
      }
    } finally {
      clearInterval(renew);
      abort.abort(new Halt('closing'));
      await Promise.allSettled([releaseSlot(), store.releaseLease(id, token)]);
      job.ended();
    }
  })();
  work.catch(error => options.onError?.(error));
  background(work);
  return accepted;
}

/**
 * The reply the service already keeps for this run's message, if an earlier attempt got that far: the newest user
 * message with the same text, sent since the run began (5 s allowed for clocks that differ), followed by an
 * assistant message no other run of the conversation stands for. Without a time, only the newest exchange counts.
 */
async function fromHistory(options: ProducerOptions, id: string, record: RunRecord, signal: AbortSignal) {
  const { store } = options;
  const messages = await options.history(record.conversationId, signal);
  const claimed = new Set<string>();
  for (const other of await store.listRuns(record.conversationId)) {
    const last = other === id ? undefined : await store.lastEvent(other);
    const done = last?.event === 'done' ? (JSON.parse(last.data) as LogEvents['done']) : undefined;
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
