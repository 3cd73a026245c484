/**
 * @module
 * One turn's control: the AbortController that every step of it takes (session, conversation, send, stream,
 * refresh), and its one settlement. A turn settles exactly once, whatever happens after: a late response of a
 * stopped turn finds it settled and changes nothing.
 */
import type { Citation } from '../protocol.js';

export interface ReplyResult {
  messageId: string | null;
  content: string;
  citations: Citation[];
  /** `stop` (or the service's own reason) when complete, `stopped` when the visitor stopped it. */
  finishReason: string | null;
}

export const abortError = (message = 'The message was not sent.') => new DOMException(message, 'AbortError');

export const isAbort = (error: unknown) => error instanceof DOMException && error.name === 'AbortError';

export class TurnHandle {
  readonly abort = new AbortController();
  readonly signal = this.abort.signal;
  /** Set once the message may have reached the backend: stopping the turn then tells the backend too. */
  sent = false;
  /** Set once the backend answered that it took the message. */
  accepted = false;
  /**
   * Set when the reply's stream ended with a failure of the way to it (an instance shutting down or gone, a store
   * restarted, a cut connection): the message is to be sent again.
   */
  recover: Error | undefined;
  /** Resolves with the reply once the turn is done or stopped; rejects with the failure, or an AbortError. */
  readonly result: Promise<ReplyResult>;
  /** Set once the turn settled: a promise settles once, and later calls of `resolve` and `reject` change nothing. */
  settled = false;
  /** Settles the turn: with its reply, or with why it has none. */
  resolve!: (result: ReplyResult) => void;
  reject!: (error: unknown) => void;

  constructor(
    readonly id: string,
    readonly key: string,
    readonly text: string,
  ) {
    const settling =
      <T>(settle: (value: T) => void) =>
      (value: T) => {
        this.settled = true;
        settle(value);
      };
    this.result = new Promise((resolve, reject) => {
      this.resolve = settling(resolve);
      this.reject = settling(reject);
    });
    // A turn nobody awaits (one restored from the backend) must not report an unhandled rejection.
    this.result.catch(() => {});
  }
}

/** Waits for `promise`, or rejects with an AbortError as soon as `signal` aborts (the work itself goes on). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError());
  return new Promise((resolve, reject) => {
    const abort = () => reject(abortError());
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
