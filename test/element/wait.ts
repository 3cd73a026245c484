import { until } from '../support/until.js';

/**
 * @open-wc/testing's `waitUntil` call, made by the wait of the Node suites (`until`). Theirs fails from a timer of its
 * own, which can fail a wait whose condition came in time: when a loaded machine stalls the page past the deadline,
 * that timer and the look that would have seen the condition come due together, and the timer can go first. `until`
 * fails only on a look made a timer after the deadline passed, once the page's overdue timers have run.
 */
export const waitUntil = (
  predicate: () => unknown,
  message = 'a condition',
  { interval = 50, timeout = 1000 }: { interval?: number; timeout?: number } = {},
): Promise<void> => until(async () => Boolean(await predicate()), message, { withinMs: timeout, everyMs: interval });
