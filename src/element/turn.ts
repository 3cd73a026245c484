/**
 * @module
 * One turn's control: the AbortController that every step of it takes (session, conversation, send, stream,
 * refresh), and its one settlement. A turn settles exactly once, whatever happens after: a late response of a
 * stopped turn finds it settled and changes nothing. A step that fails on the way to the backend is done again after a
 * short pause (`persist`): each step before the reply, and the reply itself (`reply.ts`, a chunk that is given these).
 */
import type { Citation } from '../protocol.js';
import { PersonaChatError } from './errors.js';

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

/** The pauses before each new try after a failure of the way: long enough for a load balancer to notice an instance
 * is draining or gone (about 11 s in all). */
const pauses = [500, 1000, 2000, 4000, 4000];

/**
 * A failure of the way to the reply rather than a refusal (an instance gone or draining, a store restarted, a cut
 * connection, a lost network): the message is sent again with its key, on its own, and the backend looks in the
 * service's history first. What the service refused, and the visitor's own limits, wait for Retry.
 */
export const recoverable = (error: unknown) =>
  error instanceof PersonaChatError &&
  error.retryable &&
  !/^(upstream_error|upstream_unavailable|rate_limited|too_many_sessions)$/.test(error.code);

/**
 * Does `work` again after a failure of the way to the backend (`recoverable`), after a short pause, telling
 * `reconnecting` first; repeated failures are thrown, and so is an abort of `signal`.
 */
export async function persist<T>(
  signal: AbortSignal,
  reconnecting: () => void,
  work: (tries: number) => Promise<T>,
): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      return await work(tries);
    } catch (error) {
      if (!recoverable(error) || tries >= pauses.length) throw error;
      reconnecting();
      await pauseFor(pauses[tries]!, signal);
    }
  }
}

/**
 * Waits `ms`, or less when the browser comes back online; rejects with an AbortError when `signal` aborts (the
 * pause itself then ends on its own, unseen).
 */
export function pauseFor(ms: number, signal: AbortSignal): Promise<void> {
  const pause = new Promise<void>(resolve => {
    const done = () => {
      clearTimeout(timer);
      window.removeEventListener('online', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    window.addEventListener('online', done);
  });
  return untilAborted(pause, signal);
}
