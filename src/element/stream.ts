/**
 * @module
 * One reply stream of the backend, read with fetch-event-source and set up so that it never sends anything twice:
 * no retries of its own (the controller decides what to do after a failure), and no reconnect when the tab is
 * hidden. The library resolves when its signal aborts; this wrapper rejects with the AbortError instead, so that
 * no code after an abort runs as if the stream had ended.
 */
import { fetchEventSource } from '@microsoft/fetch-event-source';
import { PersonaChatError, errorFromResponse, networkError } from './errors.js';
import type { FetchLike } from './session.js';
import { abortError } from './turn.js';

export interface StreamHandlers {
  /** The backend took the request: the stream is open. */
  open?(): void;
  /** One event; returns true for the terminal one. */
  event(name: string, data: unknown, id: string | null): boolean;
}

/**
 * Reads one stream. Resolves true when its terminal event arrived, false when it ended without one (to be followed
 * again); rejects with a PersonaChatError, or with an AbortError when `signal` aborts.
 */
export async function readStream(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
  fetch: FetchLike,
  signal: AbortSignal,
  handlers: StreamHandlers,
): Promise<boolean> {
  if (signal.aborted) throw abortError();
  let terminal = false;
  try {
    await fetchEventSource(url, {
      ...init,
      signal,
      // Hidden tabs keep their stream: the library would otherwise abort it and send the request again.
      openWhenHidden: true,
      fetch,
      onopen: async response => {
        if (response.ok && response.headers.get('content-type')?.startsWith('text/event-stream')) {
          if (!signal.aborted) handlers.open?.();
          return;
        }
        throw response.ok
          ? new PersonaChatError('bad_response', 'The reply was not a stream.', true)
          : await errorFromResponse(response);
      },
      onmessage: message => {
        if (signal.aborted || terminal || !message.event) return;
        let data: unknown;
        try {
          data = JSON.parse(message.data || '{}');
        } catch {
          throw new PersonaChatError('bad_response', 'A reply event was not JSON.', true);
        }
        terminal = handlers.event(message.event, data, message.id || null);
      },
      onerror: error => {
        // Rethrowing stops the library's retry loop.
        throw error;
      },
    });
  } catch (error) {
    if (signal.aborted) throw abortError();
    throw error instanceof PersonaChatError ? error : networkError(error);
  }
  if (signal.aborted) throw abortError();
  return terminal;
}
