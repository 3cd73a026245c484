/**
 * @module
 * Following a run for a reply stream. A reader gets the run's events pushed to it: those the log already holds, read
 * from the store once, then each new one as this instance's producer appends it, handed over in the same step (no
 * read of the store, no timer and no promise per event). Only when the run is produced elsewhere, or its producer
 * here has ended without its terminal event, does the reader poll the store as before (waiting for new events, and
 * ending a run whose producer vanished). A reader whose client does not keep up is not handed events: they wait in the
 * log, and it reads them from there once the client takes more. runs.ts opens a channel for each producer it runs
 * and follows runs through here.
 */
import { isTerminal } from './run-log.js';
import type { BackendStore, LoggedEvent } from './store.js';

/** Why a reader's following ended. */
export type FollowEnd =
  /** Its attempt's terminal event was the last it got. */
  | { how: 'terminal'; last: LoggedEvent }
  /** A new attempt began (or the run is gone): the browser follows again. */
  | { how: 'restarted' }
  /** The store failed. */
  | { how: 'error'; error: unknown };

/** Who reads a run: its client, through a reply stream. */
export interface RunReader {
  /** Events of the attempt, in order; the last may be its terminal event. */
  events(batch: LoggedEvent[]): void;
  /** Whether the client takes more now; while it does not, events wait in the log. */
  ready(): boolean;
  /** Told once, when the following ended by itself (not after `close`). */
  ended(end: FollowEnd): void;
}

/** A following under way: `resume` when the client takes more, `close` when it went away. */
export interface Following {
  resume(): void;
  close(): void;
}

/** The events a producer of this instance appends to one attempt of a run, handed to the readers that follow it. */
export class Channel {
  readonly attempt: number;
  readonly #followers = new Set<Follower>();
  #open = true;

  constructor(attempt: number) {
    this.attempt = attempt;
  }

  /** An event the producer appended (with the id the store gave it). */
  publish(event: LoggedEvent) {
    for (const follower of this.#followers) follower.publish(event);
  }

  /** The producer has ended: its readers that did not get a terminal event read the store from now on. */
  close() {
    this.#open = false;
    const followers = [...this.#followers];
    this.#followers.clear();
    for (const follower of followers) follower.producerEnded();
  }

  get open(): boolean {
    return this.#open;
  }

  add(follower: Follower): boolean {
    if (!this.#open) return false;
    this.#followers.add(follower);
    return true;
  }

  delete(follower: Follower) {
    this.#followers.delete(follower);
  }
}

/** What a follower needs of the runs: the store, the channel of a run produced here, and the end of a vanished run. */
export interface FollowContext {
  store: BackendStore;
  /** The lease's length: a poll waits a third of it. */
  leaseMs: number;
  channel(id: string): Channel | undefined;
  /** Ends a run whose producer vanished (`interrupted`). */
  interrupt(id: string): Promise<void>;
}

/** Why a follower's waits end when its reader goes: one value for all, as nothing reads it. */
const readerGone = new DOMException('The reader has gone.', 'AbortError');

/** Follows the run `id`'s attempt `attempt` after the event `after` (from its start when null), for `reader`. */
export function follow(
  context: FollowContext,
  id: string,
  attempt: number,
  after: string | null,
  reader: RunReader,
): Following {
  const follower = new Follower(context, id, attempt, after, reader);
  follower.start();
  return follower;
}

class Follower implements Following {
  readonly #context: FollowContext;
  readonly #id: string;
  readonly #attempt: number;
  readonly #reader: RunReader;
  /** The id of the last event the reader got (or the one it came back with). */
  #cursor: string | null;
  /** The producer's channel, while following one of this instance. */
  #channel: Channel | undefined;
  /** Events published while the log is read, to be given after it without those the read gave already. */
  #buffer: LoggedEvent[] | undefined;
  /** Published events go to the reader at once. */
  #live = false;
  /** The log is being read. */
  #busy = false;
  #ended = false;
  /** How long the next poll waits: not at first for a reader that came back with an id (it may be past the end). */
  #waitMs: number;
  #abort: AbortController | undefined;

  constructor(context: FollowContext, id: string, attempt: number, after: string | null, reader: RunReader) {
    this.#context = context;
    this.#id = id;
    this.#attempt = attempt;
    this.#cursor = after;
    this.#reader = reader;
    this.#waitMs = after === null ? context.leaseMs / 3 : 0;
  }

  start() {
    const channel = this.#context.channel(this.#id);
    if (channel?.attempt === this.#attempt && channel.add(this)) this.#channel = channel;
    void this.#read();
  }

  publish(event: LoggedEvent) {
    if (this.#buffer) this.#buffer.push(event);
    else if (this.#live) {
      // A client that does not keep up reads it from the log later (`resume`).
      if (this.#reader.ready()) this.#deliver([event]);
      else this.#live = false;
    }
  }

  producerEnded() {
    this.#channel = undefined;
    this.#live = false;
    this.#read();
  }

  resume() {
    if (!this.#live) this.#read();
  }

  close() {
    this.#finish();
  }

  /** Reads the log from the cursor, until following live, behind a client that does not keep up, or ended. */
  #read() {
    if (this.#busy || this.#ended) return;
    this.#busy = true;
    this.#reading().then(
      () => (this.#busy = false),
      error => {
        this.#busy = false;
        if (this.#ended) return;
        this.#finish();
        this.#reader.ended({ how: 'error', error });
      },
    );
  }

  async #reading() {
    const { store } = this.#context;
    while (!this.#ended && this.#reader.ready()) {
      const channel = this.#channel;
      if (channel) this.#buffer = [];
      let events: LoggedEvent[];
      let buffered: LoggedEvent[] = [];
      try {
        events = await store.readEvents(this.#id, this.#cursor, {
          waitMs: channel ? 0 : this.#waitMs,
          signal: channel ? undefined : (this.#abort ??= new AbortController()).signal,
        });
      } finally {
        if (channel) {
          buffered = this.#buffer ?? [];
          this.#buffer = undefined;
        }
      }
      if (this.#ended || !this.#deliver(events) || !this.#deliver(this.#after(buffered))) return;
      if (this.#channel) {
        // Following this instance's producer: what it appends from now on comes as it is appended.
        if (this.#reader.ready()) {
          this.#live = true;
          return;
        }
        continue;
      }
      if (channel) continue;
      // Polling: the run is produced elsewhere, or its producer here ended without a terminal event.
      this.#waitMs = this.#context.leaseMs / 3;
      if (events.length) continue;
      const last = await store.lastEvent(this.#id);
      if (this.#ended) return;
      if (last && isTerminal(last)) {
        // The reader is past the end already: it gets the end again, so that its stream ends as streams do.
        if (last.attempt === this.#attempt) this.#deliver([last]);
        else this.#end({ how: 'restarted' });
        return;
      }
      if (!last && !(await store.getRun(this.#id))) return this.#end({ how: 'restarted' });
      if (!(await store.leaseHeld(this.#id))) await this.#context.interrupt(this.#id);
    }
  }

  /**
   * Of the events published while the log was read, those after the cursor. They follow one another, as the log does,
   * and the read gave a start of the log: those it gave too end at the cursor, and when the cursor is not among them,
   * all of them came after the read.
   */
  #after(buffered: LoggedEvent[]): LoggedEvent[] {
    const at = buffered.findIndex(event => event.id === this.#cursor);
    return at < 0 ? buffered : buffered.slice(at + 1);
  }

  /**
   * Gives events to the reader, up to its attempt's end: a terminal event is the last it gets, and an event of
   * another attempt ends it before that event. False once the following has ended.
   */
  #deliver(events: LoggedEvent[]): boolean {
    if (this.#ended) return false;
    if (!events.length) return true;
    let end = -1;
    for (let i = 0; i < events.length; i++) {
      if (events[i]!.attempt !== this.#attempt || isTerminal(events[i]!)) {
        end = i;
        break;
      }
    }
    if (end < 0) {
      this.#reader.events(events);
      this.#cursor = events[events.length - 1]!.id;
      return true;
    }
    const last = events[end]!;
    const mine = last.attempt === this.#attempt;
    const given = mine ? end + 1 : end;
    if (given) this.#reader.events(given === events.length ? events : events.slice(0, given));
    this.#end(mine ? { how: 'terminal', last } : { how: 'restarted' });
    return false;
  }

  #end(end: FollowEnd) {
    if (this.#ended) return;
    this.#finish();
    this.#reader.ended(end);
  }

  #finish() {
    this.#ended = true;
    this.#live = false;
    this.#channel?.delete(this);
    this.#channel = undefined;
    this.#abort?.abort(readerGone);
  }
}
