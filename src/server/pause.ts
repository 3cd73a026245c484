/**
 * @module
 * A pause that an abort ends early.
 */

/**
 * Resolves after `ms`, or rejects with the signal's reason once it aborts. `unref`: the pause does not hold the
 * process open by itself, for a background loop (a store waiting for Redis to come back); a command's own wait (the
 * insights report asking the service again) must hold it.
 */
export function pause(ms: number, signal?: AbortSignal, { unref = false } = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const aborted = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }, ms);
    if (unref) (timer as { unref?: () => void }).unref?.();
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
