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
 *
 * This module coordinates: it starts, attaches to, restarts, stops and drains runs, and reads them for routes. The
 * producer's pump is producer.ts; what a log adds up to is run-log.ts.
 */
import type { Citation, RunStatus, RunView, StreamEvents } from '../protocol.js';
import { HttpError, errorOfEvent, interrupted, restarting, runNotFound } from './errors.js';
import { Channel, follow } from './following.js';
import type { FollowContext, Following, RunReader } from './following.js';
import { Halt, produce } from './producer.js';
import type { Admission, Background, ProducerOptions, RunLimits } from './producer.js';
import { fold, isTerminal, runId, statusOf, viewOf } from './run-log.js';
import type { LogEvents } from './run-log.js';
import type { AdmissionPlan } from './limits.js';
import type { BackendStore, CreatedRun, LoggedEvent, RunRecord } from './store.js';

export type { Admission, Background, RunLimits } from './producer.js';

export interface RunsOptions extends Omit<ProducerOptions, 'leaseMs'> {
  /** The producer's lease, renewed every third of it. Default 15 s. */
  leaseMs?: number;
}

/** Who asks for a run: the visitor, the conversation (already checked to be theirs) and the key. */
export interface RunRef {
  owner: string;
  conversationId: string;
  key: string;
}

/**
 * Admission for a new producer (rate limits, a reply slot): throws when refused. `plan`: the same admission, for a
 * store that takes it as it creates the run (`BackendStore.createAdmittedRun`).
 */
export type Admit = (() => Promise<Admission>) & { plan?: () => AdmissionPlan };

const newToken = () => crypto.randomUUID();

export class Runs {
  readonly #store: BackendStore;
  /** What every producer of this instance works with. */
  readonly #producer: ProducerOptions;
  readonly #limits: RunLimits;
  readonly #leaseMs: number;
  /** This instance's producers, so that closing can end them. */
  readonly #producers = new Set<AbortController>();
  /** The channel of each run a producer of this instance is producing, which its readers here follow. */
  readonly #channels = new Map<string, Channel>();
  readonly #following: FollowContext;
  /** Told when the last producer ends, while draining. */
  readonly #idle = new EventTarget();
  /** Requests on their way to becoming producers (admission, the store), which draining waits for too. */
  #starting = 0;
  #draining = false;
  /** Past the grace period of a drain: a producer that starts now is ended at once. */
  #halting = false;

  constructor(options: RunsOptions) {
    this.#store = options.store;
    this.#limits = options.limits;
    this.#leaseMs = options.leaseMs ?? 15_000;
    this.#producer = { ...options, leaseMs: this.#leaseMs };
    this.#following = {
      store: this.#store,
      leaseMs: this.#leaseMs,
      channel: id => this.#channels.get(id),
      interrupt: id => this.#interrupt(id),
    };
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
    if (admit.plan && this.#store.createAdmittedRun && !this.#draining) {
      // Looked for, admitted and created in one step of the store; a run found is answered as below.
      return this.#start(() => this.#create(id, ref, message, admit, background, resentAt));
    }
    const record = await this.#store.getRun(id);
    if (!record) return this.#start(() => this.#create(id, ref, message, admit, background, resentAt));
    return this.#found(id, record, ref, message, admit, background);
  }

  /** A run that exists, for a message sent with its key: the visitor's and the same message, else refused. */
  #found(id: string, record: RunRecord, ref: RunRef, message: string, admit: Admit, background: Background) {
    if (record.owner !== ref.owner) throw runNotFound();
    if (record.message !== message) {
      throw new HttpError(409, 'duplicate_request', 'This Idempotency-Key was sent with another message.', {
        retryable: false,
      });
    }
    return this.#attach(id, record, admit, background);
  }

  /**
   * A run that does not exist yet (as far as `send` knows): admitted and created with its producer's lease, or found
   * when it exists after all (another request won).
   */
  async #create(id: string, ref: RunRef, message: string, admit: Admit, background: Background, resentAt?: number) {
    const now = Date.now();
    const token = newToken();
    // A message sent before keeps its first time, from which its reply is looked for in the history.
    const createdAt = Math.min(resentAt ?? now, now);
    const fresh: RunRecord = { ...ref, message, createdAt, attempt: 1, attemptedAt: now };
    const options = {
      ttlMs: this.#limits.replayWindowMs,
      perConversation: this.#limits.runsPerConversation,
      lease: { token, ttlMs: this.#leaseMs },
    };
    let admission: Admission | undefined;
    let created: CreatedRun;
    const plan = admit.plan && this.#store.createAdmittedRun ? admit.plan() : undefined;
    if (plan) {
      const answer = await this.#store.createAdmittedRun!(id, fresh, options, plan.admission);
      if ('refused' in answer) throw plan.refusal(answer.refused);
      created = answer;
      if (created.created) admission = plan.granted();
    } else {
      admission = await admit();
      const taken = admission;
      created = await this.#store.createRun(id, fresh, options).catch(async error => {
        await taken.release();
        throw error;
      });
    }
    if (created.created) {
      const historyCitations = resentAt === undefined ? null : [];
      return {
        record: created.record,
        accepted: this.#produce(id, created.record, token, admission!, historyCitations, background),
      };
    }
    await admission?.release();
    return this.#found(id, created.record, ref, message, admit, background);
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

  /** How a run stands (run-log.ts `statusOf`), and its newest event. */
  async #state(id: string): Promise<{ status: RunStatus; last: LoggedEvent | undefined }> {
    const { status, read } = await this.#standing(
      id,
      () => this.#store.lastEvent(id),
      last => last,
    );
    return { status, last: read };
  }

  /**
   * How a run stands, from what `read` gives of its log (its newest event, or all its events) and whether a
   * producer holds its lease. Without a terminal event and a lease, the log is read once more: the producer may
   * have just finished, and a run is never called gone, or done without all of its text, by a read from before.
   */
  async #standing<T>(
    id: string,
    read: () => Promise<T>,
    lastOf: (read: T) => LoggedEvent | undefined,
  ): Promise<{ status: RunStatus; read: T }> {
    const first = await read();
    const last = lastOf(first);
    if (last && isTerminal(last)) return { status: statusOf(last, false), read: first };
    if (await this.#store.leaseHeld(id)) return { status: 'running', read: first };
    const again = await read();
    return { status: statusOf(lastOf(again), false), read: again };
  }

  /** The visitor's run of `ref`; `run_not_found` when there is none, or it is someone else's. */
  async find(ref: RunRef): Promise<RunRecord> {
    const record = await this.#store.getRun(runId(ref));
    if (!record || record.owner !== ref.owner) throw runNotFound();
    return record;
  }

  /**
   * The whole reply of the run's attempt, once it ended, as its log holds it (the route decides what of its `done`
   * the browser is told); the error it ended with, thrown.
   */
  async whole(
    record: RunRecord,
    signal: AbortSignal,
  ): Promise<{ content: string; citations: Citation[]; done: LogEvents['done'] }> {
    const events: LoggedEvent[] = [];
    for await (const event of this.follow(runId(record), record.attempt, null, signal)) events.push(event);
    const { content, citations, done, error } = fold(events);
    if (error) throw errorOfEvent(error);
    if (!done) throw interrupted();
    return { content, citations, done };
  }

  /**
   * The run's events after `after` (from its start when null), then live ones as they come, until its terminal
   * event, the reader going away (`signal`), or a new attempt starting (the reader then follows that one afresh).
   */
  async *follow(id: string, attempt: number, after: string | null, signal: AbortSignal): AsyncGenerator<LoggedEvent> {
    for await (const events of this.#batches(id, attempt, after, signal)) yield* events;
  }

  /**
   * `follow` for the run's attempt of `record`, in the batches the store gives: every event already logged at once,
   * then the new ones as they come.
   */
  followBatches(record: RunRecord, after: string | null, signal: AbortSignal): AsyncGenerator<LoggedEvent[]> {
    return this.#batches(runId(record), record.attempt, after, signal);
  }

  /**
   * Follows the run's attempt of `record` after `after` for a reply stream: the events are pushed to `reader`, those
   * already logged at once, then each as it is appended (see following.ts).
   */
  followRun(record: RunRecord, after: string | null, reader: RunReader): Following {
    return follow(this.#following, runId(record), record.attempt, after, reader);
  }

  async *#batches(
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
      const read = () => this.#store.readEvents(id, null, { waitMs: 0 });
      const { status, read: events } = await this.#standing(id, read, events => events.at(-1));
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

  /** Starts a producer (producer.ts) that this instance can end, and counts it until it ended. */
  #produce(
    id: string,
    record: RunRecord,
    token: string,
    admission: Admission,
    historyCitations: Citation[] | null,
    background: Background,
  ): Promise<void> {
    const abort = new AbortController();
    this.#producers.add(abort);
    if (this.#halting) abort.abort(new Halt('restarting'));
    const channel = new Channel(record.attempt);
    this.#channels.get(id)?.close();
    this.#channels.set(id, channel);
    const ended = () => {
      this.#producers.delete(abort);
      if (this.#channels.get(id) === channel) this.#channels.delete(id);
      channel.close();
      this.#whenIdle();
    };
    const publish = (event: LoggedEvent) => channel.publish(event);
    return produce(this.#producer, {
      id,
      record,
      token,
      admission,
      historyCitations,
      background,
      abort,
      ended,
      publish,
    });
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
