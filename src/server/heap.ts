/**
 * @module
 * The V8 setting the `persona-chat-server` CLI runs with. A backend holding thousands of replies open allocates a
 * little for every word of every reply, and some of it outlives a young-generation collection; V8 lets the old
 * generation grow to up to four times what was live at its last full collection before collecting it again, and
 * while GC takes little of the process's time it takes the most. The CLI caps that growth at a quarter more than was
 * live (`--heap-growing-percent`): peak memory then follows what the replies hold, not the garbage they left.
 *
 * A quarter of a small heap is a few MB, though: an instance serving a few replies at a time, with 20 MB live, was
 * collected in full every 250 replies or so, and after each full collection V8 compiled again much of the code of the
 * request's way, on its background threads: a quarter of the process's CPU in all. So the growth allowed is a quarter
 * of what was live or 32 MB, whichever is more, but for a server with many responses open (`busyResponses`), whose
 * memory is what its replies hold: a tenth. V8 reads the setting at each full collection, for the next one; the
 * CLI sets it from inside the process (`v8.setFlagsFromString`), first thing, and again after each collection (see
 * `leanHeap`). A flag given to node itself wins, and then the CLI leaves the old generation alone.
 *
 * The young generation, too, is kept small. V8 lets it grow to 32 MB where objects outlive collections of it, as a
 * request's do while it waits, and it then stays that size: a third of an idle instance's memory, and as much again in
 * a burst. The CLI lets it double only while twice doubled it would still be within `youngGenerationMb`
 * (`--semi-space-growth-factor`, which V8 reads each time it would grow it; its greatest size can only be given to
 * node at its start): V8 may double it again before the CLI hears of the first, as it does when it grows it back
 * after shrinking it. The CPU a message takes did not change. Node's own young-generation flags win here too.
 */
import v8 from 'node:v8';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { constants, PerformanceObserver } from 'node:perf_hooks';

/** How much the old generation may grow past what was live, in percent, once a quarter is more than the least. */
export const heapGrowingPercent = 25;
/**
 * How much the old generation may grow past what was live, in percent, while the server is busy (`busyResponses`):
 * a tenth. A burst of replies held open peaks lower than with a quarter, at a little more CPU for its
 * collections.
 */
export const busyGrowingPercent = 10;
/** The least the old generation may grow past what was live, in MB. */
export const heapGrowingLeastMb = 32;
/** Most growth allowed, in percent, however small the heap: V8's own greatest factor, four times what was live. */
const mostPercent = 300;

const mb = 1024 * 1024;

/** The growth allowed past `liveBytes` live in the old generation, in percent: a quarter, or the least. */
export function growingPercent(liveBytes: number): number {
  const least = Math.ceil((100 * heapGrowingLeastMb * mb) / Math.max(liveBytes, 1));
  return Math.min(mostPercent, Math.max(heapGrowingPercent, least));
}

/** The young generation's greatest size the CLI lets it grow to, in MB: a quarter of V8's own. */
export const youngGenerationMb = 8;

/**
 * How many times over V8 may grow a young generation of `bytes` when it would: twice, while doubling it twice would
 * keep it in bounds.
 */
export function youngGrowth(bytes: number): 1 | 2 {
  return 4 * bytes <= youngGenerationMb * mb ? 2 : 1;
}

/** The flags node was given itself: on its command line, and in `NODE_OPTIONS` (which `execArgv` leaves out). */
const nodeFlags = (): string[] => [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];

/** Whether node was given one of the flags `names` itself (V8 takes `_` for `-` alike). */
const nodeGave = (execArgv: readonly string[], ...names: string[]) =>
  execArgv.some(arg => names.includes(arg.split('=')[0]!.replaceAll('_', '-')));

/** Whether node's own flags size the young generation, which the CLI then leaves alone. */
const youngSized = (execArgv: readonly string[]) =>
  nodeGave(execArgv, '--max-semi-space-size', '--min-semi-space-size', '--semi-space-growth-factor');

/** The V8 flag for a growth of `percent`. */
const growthFlag = (percent: number) => `--heap-growing-percent=${percent}`;

/** The V8 flag for `liveBytes`, or undefined when node's own flags already set it. */
export function heapFlag(liveBytes: number, execArgv: readonly string[] = nodeFlags()): string | undefined {
  if (nodeGave(execArgv, '--heap-growing-percent')) return undefined;
  return growthFlag(growingPercent(liveBytes));
}

/**
 * What is taken to be live in the old generation after a collection that left `oldBytes` there, `live` having been
 * taken before: after a full collection, what it left; after a young one, what the old generation holds less the least
 * growth, once that is more than `live`. The old generation past the least growth is then taken to be live, as it
 * mostly is when replies are opened faster than they end: a heap that grows fast is not let grow by the least growth
 * of the small heap it was.
 */
export function liveAfter(live: number, oldBytes: number, full: boolean): number {
  return full ? oldBytes : Math.max(live, oldBytes - heapGrowingLeastMb * mb);
}

/** A `gc` performance entry: its kind tells a full collection from a young one. */
type GcEntry = PerformanceEntry & { detail?: { kind?: number } };

/**
 * What the old generation holds now, in bytes (every space of the heap but the young generation's and V8's own), and
 * the young generation's size.
 */
function generations(): { old: number; young: number } {
  let old = 0;
  let young = 0;
  for (const space of v8.getHeapSpaceStatistics()) {
    if (space.space_name === 'new_space') young = space.space_size;
    else if (!space.space_name.startsWith('new_') && space.space_name !== 'read_only_space')
      old += space.space_used_size;
  }
  return { old, young };
}

/** The CLI's V8 setting, set again as the heap and the server's load change. */
export interface LeanHeap {
  /**
   * Counts the server's open responses: while `busyResponses` or more are open, the growth is a tenth, whatever the
   * heap's size, until fewer than half as many are.
   */
  watch(server: Server): void;
  /** Sets nothing more. */
  stop(): void;
}

/**
 * Open responses from which the growth is a tenth. A burst of replies opened at once grows the old generation
 * faster than V8 marks it, and a growth set from the small heap before the burst would let its peak run far ahead:
 * the count changes with the first requests of the burst, before any collection tells.
 */
export const busyResponses = 64;

/**
 * Sets the CLI's V8 flags (see `heapFlag` and `youngGrowth`), and sets them again after each collection for what is
 * then taken to be live (see `liveAfter`) and the young generation's size, and as the watched server becomes busy and
 * quiet again. Each flag node was given itself is left as it is.
 */
export function leanHeap(execArgv: readonly string[] = nodeFlags()): LeanHeap {
  let { old: live, young } = generations();
  let open = 0;
  let busy = false;
  let stopped = false;
  let flag = heapFlag(live, execArgv);
  const sizesYoung = !youngSized(execArgv);
  if (!flag && !sizesYoung) return { watch() {}, stop() {} };
  let growth: number | undefined;
  const update = () => {
    if (stopped) return;
    const want = sizesYoung ? youngGrowth(young) : undefined;
    if (want !== growth) {
      growth = want;
      v8.setFlagsFromString(`--semi-space-growth-factor=${want}`);
    }
    if (!flag) return;
    const next = growthFlag(busy ? busyGrowingPercent : growingPercent(live));
    if (next === flag) return;
    flag = next;
    v8.setFlagsFromString(flag);
  };
  if (flag) v8.setFlagsFromString(flag);
  update();
  const observer = new PerformanceObserver(list => {
    const full = list
      .getEntries()
      .some(entry => (entry as GcEntry).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR);
    const now = generations();
    live = liveAfter(live, now.old, full);
    young = now.young;
    update();
  });
  observer.observe({ entryTypes: ['gc'] });
  const ended = () => {
    open--;
    if (busy && open < busyResponses / 2) {
      busy = false;
      update();
    }
  };
  const started = (_request: IncomingMessage, response: ServerResponse) => {
    open++;
    response.once('close', ended);
    if (!busy && open >= busyResponses) {
      busy = true;
      update();
    }
  };
  const watched = new Set<Server>();
  return {
    watch(server) {
      watched.add(server);
      server.on('request', started);
    },
    stop() {
      stopped = true;
      observer.disconnect();
      for (const server of watched) server.off('request', started);
    },
  };
}
