/**
 * @module
 * One reply stream of the backend: one request, its events read by fetch-event-source's parser. Nothing is ever sent
 * twice: there are no retries here (the reply follower decides what to do after a failure), and none of the
 * reconnects that fetch-event-source's own request loop makes when a tab is hidden or a request fails, since that
 * loop is not used. An abort rejects with the AbortError, so that no code after an abort runs as if the stream had
 * ended. A stream that has stalled (nothing, not even a ping, for two of the intervals its `meta` gives, and 2 s) and
 * a stream open when the browser comes back online are cut, to be followed again on a new connection.
 */
import { getBytes, getLines, getMessages } from '@microsoft/fetch-event-source/lib/esm/parse.js';
import { PersonaChatError, errorFromResponse, networkError } from './errors.js';
import type { FetchLike } from './session.js';
import { abortError, untilAborted } from './turn.js';

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
  let stall = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const onMessage = getMessages(
    () => {},
    () => {},
    message => {
      if (signal.aborted || terminal || !message.event) return;
      let data: unknown;
      try {
        data = JSON.parse(message.data || '{}');
      } catch {
        throw new PersonaChatError('bad_response', 'An event was not JSON.', true);
      }
      if (message.event === 'meta') stall = 2 * (data as { ping: number }).ping + 2000 || 0;
      terminal = handlers.event(message.event, data, message.id || null);
    },
  );
  // The request's own signal, aborted once the reading is over however it ended (an abort, an event that was not
  // JSON), so that the connection closes.
  const request = new AbortController();
  const read = async () => {
    const headers = { accept: 'text/event-stream', ...init.headers };
    const response = await fetch(url, { ...init, headers, signal: request.signal });
    if (!response.ok || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
      throw response.ok
        ? new PersonaChatError('bad_response', 'The reply was not a stream.', true)
        : await errorFromResponse(response);
    }
    if (!signal.aborted) handlers.open?.();
    const lines = getLines(onMessage);
    await getBytes(response.body!, chunk => {
      clearTimeout(timer);
      if (stall) timer = setTimeout(() => request.abort(), stall);
      lines(chunk);
    });
  };
  window.addEventListener('online', () => request.abort(), { signal: request.signal });
  try {
    // An abort ends the reading at once, even through a transport that does not pass the signal on.
    await untilAborted(read(), signal);
  } catch (error) {
    if (signal.aborted) throw abortError();
    throw error instanceof PersonaChatError ? error : networkError(error);
  } finally {
    clearTimeout(timer);
    request.abort();
  }
  return terminal;
}
