/**
 * @module
 * One attempt's log of a run, as `MemoryStore` keeps it for the replay window, and as `RedisStore` keeps the events
 * its instance appends to the runs it produces: compact, since a process holds the logs of every reply of the last
 * minutes, or of every reply it streams. An event is not kept as an object with strings of its own (about 120 bytes
 * for a word of text) but as its data: a `delta`, whose data is `{"text":"…"}`, keeps only what is between the quotes,
 * and the deltas' texts are joined into one string, a line break between two (`JSON.stringify` never writes a raw line
 * break, so none is inside one). An event's id is its place in the log, counted from `first`. A word then costs its
 * own characters and one more. Reading builds the events again, exactly as they were appended.
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
/** Texts joined into one string at a time, while the attempt is under way. */
const joinEvery = 32;

export class MemoryLog {
  /** The attempt whose events these are: an event's id is `<attempt>-<its place, from first>`. */
  readonly attempt: number;
  /** The number in the first event's id: 1 for a log of the whole attempt, as `MemoryStore` numbers them. */
  readonly first: number;
  /** The deltas' texts: strings of several joined, then the latest ones, not yet joined. */
  #joined: string[] = [];
  #pieces: string[] = [];
  #deltas = 0;
  #length = 0;
  /** The events that are not kept as a delta's text: their name and data, by place. */
  #others: Map<number, { event: string; data: string }> | undefined;

  constructor(attempt: number, first = 1) {
    this.attempt = attempt;
    this.first = first;
  }

  /** How many events the log holds. */
  get length(): number {
    return this.#length;
  }

  /** Appends an event; returns its id. */
  append(event: string, data: string): string {
    const place = this.#length++;
    if (
      event === 'delta' &&
      data.length >= deltaHead.length + deltaTail.length &&
      data.startsWith(deltaHead) &&
      data.endsWith(deltaTail) &&
      !data.includes('\n')
    ) {
      this.#deltas++;
      // Joined before the next one comes, so that the latest text is always a piece of its own.
      if (this.#pieces.length >= joinEvery) {
        this.#joined.push(this.#pieces.join('\n'));
        this.#pieces = [];
      }
      this.#pieces.push(data.slice(deltaHead.length, data.length - deltaTail.length));
    } else (this.#others ??= new Map()).set(place, { event, data });
    return `${this.attempt}-${this.first + place}`;
  }

  /** The events after the first `count`, oldest first. */
  after(count: number): LoggedEvent[] {
    const events: LoggedEvent[] = [];
    const from = Math.max(0, count);
    if (from >= this.#length) return events;
    // The deltas' texts from the first one after `from` on: from the latest pieces, not yet joined, when they hold
    // them all, as they do for a reader that keeps up with the reply; else from all of them, split again. A reader
    // that reads each event as it comes then costs the same at the thousandth word as at the first.
    let delta = from - this.#othersBefore(from);
    const joined = this.#deltas - this.#pieces.length;
    const recent = delta >= joined;
    const texts = recent ? this.#pieces : this.#texts();
    if (recent) delta -= joined;
    for (let place = from; place < this.#length; place++) {
      const id = `${this.attempt}-${this.first + place}`;
      const other = this.#others?.get(place);
      if (other) events.push({ id, event: other.event, data: other.data, attempt: this.attempt });
      else events.push({ id, event: 'delta', data: deltaHead + texts[delta++]! + deltaTail, attempt: this.attempt });
    }
    return events;
  }

  /** The newest event, if any. */
  last(): LoggedEvent | undefined {
    return this.after(this.#length - 1)[0];
  }

  /** Packs the log once the attempt has ended (no event is appended after its terminal one): one string of text. */
  seal() {
    if (!this.#deltas) return;
    this.#joined = [this.#all()];
    this.#pieces = [];
  }

  /** Every delta's text, in order. */
  #texts(): string[] {
    return this.#deltas ? this.#all().split('\n') : [];
  }

  #all(): string {
    return this.#joined.length === 1 && !this.#pieces.length
      ? this.#joined[0]!
      : [...this.#joined, ...this.#pieces].join('\n');
  }

  #othersBefore(place: number): number {
    let count = 0;
    for (const other of this.#others?.keys() ?? []) if (other < place) count++;
    return count;
  }
}
