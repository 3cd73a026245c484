/**
 * @module
 * The reply stream the browser reads: the closed vocabulary of the protocol, one JSON object per event. Data is
 * always JSON.stringify output, which has no raw line breaks, so no text from the model can start a frame of its own.
 */
import type { StreamEventName, StreamEvents } from '../protocol.js';

const encoder = new TextEncoder();

export function frame<E extends StreamEventName>(event: E, data: StreamEvents[E]): Uint8Array<ArrayBuffer> {
  return encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/**
 * Events of a run's log with their ids, one after the other, in one piece. The data is the JSON the run logged; ids
 * are digits and a dash.
 */
export function eventFrames(events: readonly { id: string; event: string; data: string }[]): Uint8Array<ArrayBuffer> {
  let text = '';
  for (const { id, event, data } of events) text += `id: ${id}\nevent: ${event}\ndata: ${data}\n\n`;
  return encoder.encode(text);
}

export const ping = () => encoder.encode(': ping\n\n');

export const sseHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
} as const;

/** Where a stream's frames go: a web stream's queue, or a Node response written to directly. */
export interface FrameSink {
  write(frame: Uint8Array): void;
  /** Whether the reader keeps up: false while frames wait to be sent. */
  ready(): boolean;
  /** Ends the stream. */
  close(): void;
}

/** What writes a stream's frames, from the moment it is first read or claimed (never twice). */
export interface FrameSource {
  start(sink: FrameSink): void;
  /** The reader caught up after `ready()` said false. */
  resume(): void;
  /** The reader went away. */
  cancel(): void;
}

/** The sources of streamed responses that a server on Node may write to its socket itself (`claimSource`). */
const claimable = new WeakMap<Response, () => FrameSource | undefined>();

/**
 * A response whose body is the frames of `source`, as a web stream that starts the source when it is first read.
 * Until then a server on Node may claim the source instead and write its frames to the socket itself, which spares
 * every frame a step through a web stream and the adapter that reads it.
 */
export function eventResponse(source: FrameSource, respond: (body: ReadableStream<Uint8Array>) => Response): Response {
  let state: 'waiting' | 'read' | 'claimed' = 'waiting';
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (state === 'read') return source.resume();
        if (state === 'claimed') return;
        state = 'read';
        source.start({
          write: frame => controller.enqueue(frame),
          // With no high-water mark, a frame waits in the queue only while nobody reads: none waiting is ready.
          ready: () => (controller.desiredSize ?? -1) >= 0,
          close: () => controller.close(),
        });
      },
      cancel: () => source.cancel(),
    },
    { highWaterMark: 0 },
  );
  const response = respond(body);
  claimable.set(response, () => {
    if (state !== 'waiting') return undefined;
    state = 'claimed';
    return source;
  });
  return response;
}

/**
 * The source of a response made by `eventResponse`, claimed from its web stream, which then stays unread; undefined
 * for any other response, or one whose stream was read already.
 */
export function claimSource(response: Response): FrameSource | undefined {
  return claimable.get(response)?.();
}
