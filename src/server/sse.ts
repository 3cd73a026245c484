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
