/**
 * Waits until `check` holds (it may be async), looking every `everyMs`; throws naming `what` once `withinMs` passed.
 * The one wait on state of the suites, the browser's too (through test/element/wait.ts): never a sleep for a fixed
 * time.
 *
 * A look that finds the deadline passed is not the last: one more comes a timer later. A loaded machine can stall the
 * process past the deadline; when it wakes, the look due first runs before the timers due after it that would have
 * made the condition hold in time, and the next look, queued behind them, sees what they did.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  { withinMs = 10_000, everyMs = 20 }: { withinMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + withinMs;
  let late = false;
  while (!(await check())) {
    if (late) throw new Error(`timed out waiting for ${what}`);
    late = Date.now() > deadline;
    await new Promise(resolve => setTimeout(resolve, everyMs));
  }
}
