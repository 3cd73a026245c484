/**
 * @module
 * The request log of the `persona-chat-server` CLI: one JSON line per request on stdout, the lines of a moment
 * written together. Node writes stdout to a pipe or a file synchronously, a system call each time: one per request
 * was a tenth of what a reply cost the backend in CPU. The lines wait at most `flushMs` (or until `maxChars` of them
 * wait), keep their order, and are written when the process exits.
 */

export interface LineWriter {
  /** Adds one line (without its line break). */
  line(text: string): void;
  /** Writes the lines that wait, now. */
  flush(): void;
}

export function lineWriter(
  write: (text: string) => void,
  { flushMs = 100, maxChars = 64 * 1024 }: { flushMs?: number; maxChars?: number } = {},
): LineWriter {
  let waiting = '';
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (!waiting) return;
    const text = waiting;
    waiting = '';
    write(text);
  };
  return {
    line(text) {
      waiting += `${text}\n`;
      if (waiting.length >= maxChars) return flush();
      if (!timer) {
        timer = setTimeout(flush, flushMs);
        // Waiting lines never hold a process open: its exit writes them.
        timer.unref();
      }
    },
    flush,
  };
}
