/**
 * Waits until `predicate` holds (it may be async), looking every `interval` ms; fails naming `message` when it still
 * does not hold at a look taken once `timeout` ms have passed. The same call as @open-wc/testing's `waitUntil`, whose
 * timer can fail a wait whose condition came in time: when a loaded machine stalls the page past the deadline, that
 * timer and the look that would have seen the condition come due together, and the timer can go first. Here the
 * deadline is only ever read by a look, after it saw the condition still false.
 */
export async function waitUntil(
  predicate: () => unknown,
  message?: string,
  { interval = 50, timeout = 1000 }: { interval?: number; timeout?: number } = {},
): Promise<void> {
  // The caller's stack, for the error: the looks run on timers, which it would not name.
  const { stack } = new Error();
  const deadline = performance.now() + timeout;
  while (!(await predicate())) {
    if (performance.now() >= deadline) {
      const error = new Error(message ? `Timeout: ${message}` : `waitUntil timed out after ${timeout}ms`);
      error.stack = stack;
      throw error;
    }
    await new Promise(resolve => setTimeout(resolve, interval));
  }
}
