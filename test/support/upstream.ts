// A Conversation Service for the run tests, scripted by the test: what the backend's runs and producers see of the
// service (`open` and `history`), without HTTP. The HTTP paths are tested against the emulator.
import type { ChatMessage, StreamChunk } from '../../src/service/types.js';

/**
 * A service whose replies the test writes chunk by chunk, the chunks of one `push` as one read; `end` ends the body
 * (with or without a `done` chunk before it), `fail` breaks it. Each call records its message and signal.
 */
export function scriptedService() {
  const calls: {
    message: string;
    signal: AbortSignal;
    push(...chunks: StreamChunk[]): void;
    fail(e: Error): void;
    end(): void;
  }[] = [];
  let history: ChatMessage[] = [];
  let historyReads = 0;
  let refuse: Error | undefined;
  const open = async (_conversationId: string, message: string, signal: AbortSignal) => {
    signal.throwIfAborted();
    if (refuse) throw refuse;
    const queue: StreamChunk[] = [];
    let failure: Error | undefined;
    let ended = false;
    let wake = () => {};
    calls.push({
      message,
      signal,
      push: (...chunks) => (queue.push(...chunks), wake()),
      fail: error => ((failure = error), wake()),
      end: () => ((ended = true), wake()),
    });
    return (async function* () {
      for (;;) {
        if (queue.length) {
          yield queue.splice(0);
          continue;
        }
        if (failure) throw failure;
        if (ended) return;
        signal.throwIfAborted();
        await new Promise<void>((resolve, reject) => {
          wake = resolve;
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        });
      }
    })();
  };
  return {
    calls,
    open,
    history: async () => (historyReads++, history),
    historyReads: () => historyReads,
    setHistory: (messages: ChatMessage[]) => (history = messages),
    refuseWith: (error: Error | undefined) => (refuse = error),
  };
}
