/**
 * Waits until `check` holds (it may be async), looking every `everyMs`; throws naming `what` once `withinMs` passed.
 * The one wait on state of the suites, the browser's too (through test/element/wait.ts): never a sleep for a fixed
 * time.
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  { withinMs = 10_000, everyMs = 20 }: { withinMs?: number; everyMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, everyMs));
  }
}
