/**
 * @module
 * One reply stream of the backend: one request, its events read by fetch-event-source's parser. Nothing is ever sent
 * twice: there are no retries here (the reply follower decides what to do after a failure), and none of the
 * reconnects that fetch-event-source's own request loop makes when a tab is hidden or a request fails, since that
 * loop is not used. An abort rejects with the AbortError, so that no code after an abort runs as if the stream had
 * ended. A stream that has stalled (nothing, not even a ping, for two of the intervals its `meta` gives, and 2 s) and
 * a stream open when the browser comes back online are cut, to be followed again on a new connection.
 *
 * With `reply.ts`, a chunk of its own, loaded when a reply is first needed. It imports nothing the chat has (the chat
 * must stand alone): what it needs of the chat's own code is given once, when it loads (`use`), so that its errors
 * are the chat's (told apart with `instanceof`).
 */
import { getBytes, getLines, getMessages } from '@microsoft/fetch-event-source/lib/esm/parse.js';
import type { resendHeader } from '../protocol.js';
import type { conversationPath } from './backend.js';
import type { PersonaChatError, errorFromResponse, networkError } from './errors.js';
import type { FetchLike } from './session.js';
import type { asCitations } from './state.js';
import type { abortError, isAbort, pauseFor, persist, recoverable, untilAborted } from './turn.js';

/** What the reply chunk is given of the chat's code (the names are short: a property's name is not minified). */
export interface Kit {
  Error: typeof PersonaChatError;
  response: typeof errorFromResponse;
  network: typeof networkError;
  abort: typeof abortError;
  isAbort: typeof isAbort;
  until: typeof untilAborted;
  persist: typeof persist;
  pause: typeof pauseFor;
  recoverable: typeof recoverable;
  path: typeof conversationPath;
  citations: typeof asCitations;
  /** The header that tells the backend a message is sent again (`resendHeader`). */
  resend: typeof resendHeader;
}

/** The chat's code, once it is given. */
export let k: Kit;

/** Gives the chunk the chat's code: before anything of it is used. */
export const use = (kit: Kit) => void (k = kit);

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
  if (signal.aborted) throw k.abort();
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
        throw new k.Error('bad_response', 'An event was not JSON.', true);
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
      throw response.ok ? new k.Error('bad_response', 'The reply was not a stream.', true) : await k.response(response);
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
    await k.until(read(), signal);
  } catch (error) {
    if (signal.aborted) throw k.abort();
    throw error instanceof k.Error ? error : k.network(error);
  } finally {
    clearTimeout(timer);
    request.abort();
  }
  return terminal;
}
