/**
 * @module
 * One attempt's log of a run, as `MemoryStore` keeps it for the replay window: compact, since a process holds the logs
 * of every reply of the last minutes. An event is not kept as an object with strings of its own (about 120 bytes for a
 * word of text) but as its data, joined with the others into one string, with where it ends: a `delta`, whose data is
 * `{"text":"…"}`, keeps only what is between the quotes, and its id is its place in the log. A word then costs its
 * own characters and 4 bytes. Reading builds the events again, exactly as they were appended.
 */

/** An event as the store gives it (store.ts `LoggedEvent`). */
interface LoggedEvent {
  id: string;
  event: string;
  data: string;
  attempt: number;
}

const deltaHead = '{"text":"';
const deltaTail = '"}';
/** Pieces of text joined into one string at a time, while the attempt is under way. */
const joinEvery = 32;

export class MemoryLog {
  /** The attempt whose events these are: an event's id is `<attempt>-<its place, from 1>`. */
  readonly attempt: number;
  /** The text of the events joined so far, and the pieces not yet joined to it. */
  #text = '';
  #pieces: string[] = [];
  /** Where each event's text ends in the whole (`#text` and then the pieces). */
  #ends: number[] | Uint32Array = [];
  #length = 0;
  /** The events whose text is not a delta's: their name and data, by place. */
  #others: Map<number, { event: string; data: string }> | undefined;

  constructor(attempt: number) {
    this.attempt = attempt;
  }

  /** How many events the log holds. */
  get length(): number {
    return this.#length;
  }

  /** Appends an event; returns its id. */
  append(event: string, data: string): string {
    const place = this.#length++;
    let text = '';
    if (event === 'delta' && data.startsWith(deltaHead) && data.endsWith(deltaTail) && data.length >= 11) {
      text = data.slice(deltaHead.length, data.length - deltaTail.length);
    } else (this.#others ??= new Map()).set(place, { event, data });
    const ends = this.#growable();
    ends.push((ends.length ? ends[ends.length - 1]! : 0) + text.length);
    if (text) {
      this.#pieces.push(text);
      if (this.#pieces.length >= joinEvery) this.#join();
    }
    return `${this.attempt}-${place + 1}`;
  }

  /** The events after the first `count`, oldest first. */
  after(count: number): LoggedEvent[] {
    const events: LoggedEvent[] = [];
    if (count >= this.#length) return events;
    this.#join();
    const text = this.#text;
    const ends = this.#ends;
    for (let place = Math.max(0, count); place < this.#length; place++) {
      events.push(this.#event(place, text, ends));
    }
    return events;
  }

  /** The newest event, if any. */
  last(): LoggedEvent | undefined {
    if (!this.#length) return undefined;
    this.#join();
    return this.#event(this.#length - 1, this.#text, this.#ends);
  }

  /**
   * Packs the log once the attempt has ended (no event is appended after its terminal one): the text as one string,
   * the ends in 4 bytes each.
   */
  seal() {
    this.#join();
    if (Array.isArray(this.#ends)) this.#ends = Uint32Array.from(this.#ends);
  }

  #event(place: number, text: string, ends: ArrayLike<number>): LoggedEvent {
    const id = `${this.attempt}-${place + 1}`;
    const other = this.#others?.get(place);
    if (other) return { id, event: other.event, data: other.data, attempt: this.attempt };
    const from = place ? ends[place - 1]! : 0;
    return { id, event: 'delta', data: deltaHead + text.slice(from, ends[place]) + deltaTail, attempt: this.attempt };
  }

  /** The ends, as an array that takes more (a sealed log that is appended to again unpacks them). */
  #growable(): number[] {
    if (!Array.isArray(this.#ends)) this.#ends = Array.from(this.#ends);
    return this.#ends;
  }

  /** Joins the pieces to the text, as one flat string (a string built by `+` is a tree of its parts). */
  #join() {
    if (!this.#pieces.length) return;
    this.#text = [this.#text, ...this.#pieces].join('');
    this.#pieces = [];
  }
}
