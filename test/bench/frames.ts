// In-page helpers of the bench pages: when a frame has painted, and a reply fed at a fixed pace.

/**
 * Resolves with the time just after the next frame is painted: a task posted from an animation frame callback runs
 * once that frame's rendering (style, layout, paint) is done.
 */
export function afterPaint(): Promise<number> {
  return new Promise(resolve =>
    requestAnimationFrame(() => {
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve(performance.now());
      channel.port2.postMessage(null);
    }),
  );
}

/** Checks `ready()` once a frame; resolves with the time just after the first frame in which it held is painted. */
export function paintedWhen(ready: () => boolean): Promise<number> {
  return new Promise(resolve => {
    const check = () => {
      if (!ready()) return void requestAnimationFrame(check);
      const channel = new MessageChannel();
      channel.port1.onmessage = () => resolve(performance.now());
      channel.port2.postMessage(null);
    };
    requestAnimationFrame(check);
  });
}

/**
 * Delivers the pieces in order, one every `every` ms from now (timers due in the same millisecond can fire out of
 * order; the pieces are delivered in order all the same). Resolves with the time the last one was delivered.
 */
export function feed(pieces: string[], deliver: (piece: string, index: number) => void, every = 4): Promise<number> {
  const started = performance.now();
  let delivered = 0;
  return new Promise(resolve => {
    pieces.forEach((_, i) => {
      setTimeout(
        () => {
          while (delivered <= i) deliver(pieces[delivered]!, delivered++);
          if (i === pieces.length - 1) resolve(performance.now());
        },
        Math.max(0, i * every - (performance.now() - started)),
      );
    });
  });
}

/** Counts the main thread's tasks over 50 ms from now until `stop()`. */
export function longTasks(): { stop(): number } {
  const tasks: number[] = [];
  const observer = new PerformanceObserver(list => list.getEntries().forEach(e => tasks.push(e.duration)));
  observer.observe({ type: 'longtask', buffered: false });
  return {
    stop() {
      observer.takeRecords().forEach(e => tasks.push(e.duration));
      observer.disconnect();
      return tasks.filter(duration => duration > 50).length;
    },
  };
}
