// The backend's answers written by a test, for the cases the real backend does not give on demand (a 200 that is not
// a stream, a stream cut mid-way, a run forgotten between two reads): its events, its streams and its error envelope.

/** One server-sent event, as the backend writes it. */
export const frame = (event: string, data: unknown, id?: string) =>
  `event: ${event}\n${id ? `id: ${id}\n` : ''}data: ${JSON.stringify(data)}\n\n`;

/**
 * A response body written by the test: `frames` at once, then whatever the test pushes, until it ends it or cuts it.
 * It fails as a real one does when its request is aborted.
 */
export function body(...frames: string[]) {
  const encoder = new TextEncoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      for (const text of frames) c.enqueue(encoder.encode(text));
    },
  });
  return {
    stream,
    push: (...more: string[]) => more.forEach(text => controller.enqueue(encoder.encode(text))),
    end: () => controller.close(),
    cut: (error: unknown = new TypeError('network error')) => controller.error(error),
  };
}

/** An answer that is an event stream of `stream`. */
export const eventStream = (stream: ReadableStream<Uint8Array>) =>
  new Response(stream, { headers: { 'content-type': 'text/event-stream; charset=utf-8' } });

/** The backend's error envelope, with its status. */
export const envelope = (code: string, status: number, retryable = false) =>
  Response.json({ error: { code, message: 'No.', retryable, requestId: 'r' } }, { status });
