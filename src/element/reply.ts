/**
 * @module
 * The reply to one turn's message, from the backend's run of it: the message is sent (or a run already going is
 * followed), and the reply's events become the turn's `ChatEvent`s until the reply ends. When the stream drops after
 * the backend took the message, the run is followed again after the last event the turn saw. After a failure of the
 * way to the reply (`recoverable`), the message is sent again with its key after a short pause, while the turn shows
 * it is reconnecting: another instance takes the run over, or the backend finds the reply in the service's history.
 *
 * A chunk of its own, with `stream.ts`, loaded when a reply is first needed (a message is sent, a running reply is
 * followed); what it needs of the chat's own code is given once, when it loads (`use`).
 */
import type { StreamEvents } from '../protocol.js';
import type { PersonaChatError } from './errors.js';
import type { FetchLike } from './session.js';
import type { ChatEvent } from './state.js';
import { k, readStream } from './stream.js';
import type { TurnHandle } from './turn.js';

export { use } from './stream.js';
export type { Kit } from './stream.js';

/** What a reply needs from the turn it answers. */
export interface ReplyOptions {
  /** The backend's fetch, with the session's token, for paths under its endpoint. */
  fetch: FetchLike;
  /** When each message key was first sent (epoch ms): a key sent again says how long ago. */
  sentAt: Map<string, number>;
  /** The id of the last event the turn saw: a follow starts after it. */
  lastEventId(): string | null;
  /** The backend took the message. */
  accepted(): void;
  /** One event of the reply, for the turn's state; `done` is the last. */
  apply(event: ChatEvent): void;
  /** The reply ended with an error that sending the message again would not mend. */
  failed(error: PersonaChatError): void;
}

/** How long a turn follows a dropped stream again without any progress before it gives up (it can be retried). */
const followForMs = 30_000;

/**
 * Sends the turn's message (or, with `followOnly`, follows its run, already going) until its reply ends, sending it
 * again after a failure of the way. Resolves when the reply is done, or ended with an error told to `failed`;
 * rejects with the failure that persisted, or with an AbortError when the turn is aborted.
 */
export function deliver(handle: TurnHandle, conversationId: string, options: ReplyOptions, followOnly = false) {
  return k.persist(
    handle.signal,
    () => options.apply({ type: 'reconnecting', id: handle.id }),
    async tries => {
      try {
        if (followOnly && !tries) await follow(handle, conversationId, options);
        else await send(handle, conversationId, options);
        if (handle.recover) throw handle.recover;
      } finally {
        handle.recover = undefined;
      }
    },
  );
}

/** Sends the turn's message and reads its reply; follows the run again when the stream drops after acceptance. */
async function send(handle: TurnHandle, conversationId: string, options: ReplyOptions) {
  let accepted = false;
  handle.sent = true;
  const headers: Record<string, string> = { 'content-type': 'application/json', 'idempotency-key': handle.key };
  const sentAt = options.sentAt.get(handle.key);
  if (sentAt === undefined) options.sentAt.set(handle.key, Date.now());
  else headers[k.resend] = String(Math.max(0, Date.now() - sentAt));
  let terminal: boolean;
  try {
    terminal = await readStream(
      k.path(conversationId, 'messages'),
      { method: 'POST', headers, body: JSON.stringify({ message: handle.text }) },
      options.fetch,
      handle.signal,
      {
        open: () => {
          accepted = handle.accepted = true;
          options.accepted();
        },
        event: (name, data, id) => event(handle, options, name, data, id),
      },
    );
  } catch (error) {
    if (!accepted || k.isAbort(error) || (error instanceof k.Error && !error.retryable)) throw error;
    terminal = false;
    reconnecting(handle, options);
  }
  if (!terminal) await follow(handle, conversationId, options);
}

/**
 * Follows the turn's run after the last event it saw, until it ends. A drop is followed again at once, then with a
 * growing pause (and at once when the browser is back online), the turn showing it is reconnecting; 30 s without any
 * progress gives up.
 */
async function follow(handle: TurnHandle, conversationId: string, options: ReplyOptions) {
  const { signal } = handle;
  const path = k.path(conversationId, 'runs', handle.key, 'events');
  let pause = 250;
  let deadline = Date.now() + followForMs;
  for (;;) {
    const before = options.lastEventId();
    try {
      const terminal = await readStream(
        path,
        { method: 'GET', headers: before ? { 'last-event-id': before } : {} },
        options.fetch,
        signal,
        { event: (name, data, id) => event(handle, options, name, data, id) },
      );
      if (terminal) return;
    } catch (error) {
      if (error instanceof k.Error && error.code === 'run_not_found') {
        // The backend forgot the run (it restarted without a shared store): it can be asked again.
        throw new k.Error('interrupted', 'The run was forgotten.', true);
      }
      if (k.isAbort(error) || (error instanceof k.Error && !error.retryable)) throw error;
      if (Date.now() > deadline) throw error;
    }
    if (options.lastEventId() !== before) {
      pause = 250;
      deadline = Date.now() + followForMs;
    } else if (Date.now() > deadline) {
      throw new k.Error('interrupted', 'The reply stalled.', true);
    } else reconnecting(handle, options);
    await k.pause(pause, signal);
    pause = Math.min(pause * 2, 4000);
  }
}

/** The turn's stream was cut or stalled: it shows it is reconnecting until its next event. */
const reconnecting = (handle: TurnHandle, options: ReplyOptions) =>
  options.apply({ type: 'reconnecting', id: handle.id, follow: true });

/** One event of the turn's stream; true for its terminal event. */
function event(handle: TurnHandle, options: ReplyOptions, name: string, data: unknown, eventId: string | null) {
  const id = handle.id;
  switch (name as keyof StreamEvents) {
    case 'meta':
      options.apply({ type: 'accepted', id, attempt: Number((data as StreamEvents['meta']).attempt) || 1 });
      break;
    case 'delta':
      options.apply({ type: 'delta', id, text: String((data as StreamEvents['delta']).text ?? ''), eventId });
      break;
    case 'citations': {
      const citations = k.citations((data as StreamEvents['citations']).citations);
      options.apply({ type: 'citations', id, citations, eventId });
      break;
    }
    case 'done': {
      const done = data as StreamEvents['done'];
      const messageId = typeof done.messageId === 'string' ? done.messageId : null;
      const finishReason = typeof done.finishReason === 'string' ? done.finishReason : null;
      options.apply({ type: 'done', id, messageId, finishReason, eventId });
      break;
    }
    case 'error': {
      const e = data as StreamEvents['error'];
      const error = new k.Error(e.code, String(e.message), e.retryable !== false);
      if (k.recoverable(error)) handle.recover = error;
      else options.failed(error);
    }
  }
  return name === 'done' || name === 'error';
}
