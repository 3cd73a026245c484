/**
 * @module
 * The V8 setting the `persona-chat-server` CLI runs with. A backend holding thousands of replies open allocates a
 * little for every word of every reply, and some of it outlives a young-generation collection; V8 lets the old
 * generation grow to up to four times what was live at its last full collection before collecting it again, and
 * while GC takes little of the process's time it takes the most. The CLI caps that growth at a quarter more than was
 * live (`--heap-growing-percent`): peak memory then follows what the replies hold, not the garbage they left. It is
 * set from inside the process (`v8.setFlagsFromString`, read by V8 at each full collection), first thing, so the
 * command as shipped runs with it; a flag given to node itself wins.
 */
import v8 from 'node:v8';

/** How much the old generation may grow past what was live, in percent, unless node was given another value. */
export const heapGrowingPercent = 25;

/** The V8 flag the CLI sets, or undefined when node's own flags already set it. */
export function heapFlag(execArgv: readonly string[] = process.execArgv): string | undefined {
  if (execArgv.some(arg => /^--heap[-_]growing[-_]percent(=|$)/.test(arg))) return undefined;
  return `--heap-growing-percent=${heapGrowingPercent}`;
}

/** Sets the CLI's V8 flag (see `heapFlag`). */
export function leanHeap(execArgv: readonly string[] = process.execArgv) {
  const flag = heapFlag(execArgv);
  if (flag) v8.setFlagsFromString(flag);
}
