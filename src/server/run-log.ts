/**
 * @module
 * A run's log, read: pure functions of its events (what they add up to, how the run stands, how the browser sees
 * it) and of reply text (its size in UTF-8, its cut to a size). No store and no clock: runs.ts and producer.ts
 * read and write the log, this module only reads what they give it.
 */
import type { Citation, RunStatus, RunView, StreamEvents, Usage } from '../protocol.js';
import { interrupted } from './errors.js';
import type { LoggedEvent, RunRecord } from './store.js';

/**
 * The data of each event a run's log holds: the reply stream's events, except that `done` keeps the service's token
 * counts (null when it gave none). The browser is told them only when the site turns them on: see `toldDone`.
 */
export type LogEvents = Omit<StreamEvents, 'done'> & {
  done: Omit<StreamEvents['done'], 'usage'> & { usage: Usage | null };
};

/** The store's id of a run: its conversation and its key. */
export const runId = ({ conversationId, key }: Pick<RunRecord, 'conversationId' | 'key'>) =>
  `run:${conversationId}:${key}`;

/** Whether an event ends its attempt: `done` or `error`. */
export const isTerminal = (event: Pick<LoggedEvent, 'event'>) => event.event === 'done' || event.event === 'error';

/**
 * How a run stands, in the one place it is decided: its terminal event says how it ended; without one, it is
 * running while a producer holds its lease, and interrupted once none does.
 */
export function statusOf(last: Pick<LoggedEvent, 'event' | 'data'> | undefined, leaseHeld: boolean): RunStatus {
  if (last && isTerminal(last)) return terminalStatus(last);
  return leaseHeld ? 'running' : 'interrupted';
}

/** How a terminal event ended its run. */
export function terminalStatus(event: Pick<LoggedEvent, 'event' | 'data'>): RunStatus {
  if (event.event === 'done') {
    return (JSON.parse(event.data) as LogEvents['done']).finishReason === 'stopped' ? 'stopped' : 'done';
  }
  return (JSON.parse(event.data) as StreamEvents['error']).code === 'interrupted' ? 'interrupted' : 'failed';
}

/** What a run's events add up to: the text, the citations, and how it ended. */
export function fold(events: LoggedEvent[]) {
  const reply = {
    content: '',
    citations: [] as Citation[],
    done: null as LogEvents['done'] | null,
    error: null as StreamEvents['error'] | null,
  };
  for (const event of events) {
    const data: unknown = JSON.parse(event.data);
    if (event.event === 'delta') reply.content += (data as StreamEvents['delta']).text;
    else if (event.event === 'citations') reply.citations = (data as StreamEvents['citations']).citations;
    else if (event.event === 'done') reply.done = data as LogEvents['done'];
    else if (event.event === 'error') reply.error = data as StreamEvents['error'];
  }
  return reply;
}

/** A run as the browser sees it in a conversation: the message, the text so far and how it ended. */
export function viewOf(record: RunRecord, events: LoggedEvent[], status: RunStatus): RunView {
  const { content, citations, done, error } = fold(events);
  const failure = status === 'interrupted' && !error ? interrupted() : null;
  return {
    key: record.key,
    message: record.message,
    status,
    content,
    citations,
    messageId: done?.messageId ?? null,
    finishReason: done?.finishReason ?? null,
    error: failure ? { code: failure.code, message: failure.message, retryable: true } : error,
    lastEventId: events.at(-1)?.id ?? null,
    attempt: record.attempt,
    createdAt: new Date(record.createdAt).toISOString(),
  };
}

/** A token count as the protocol has it: a number (the service's JSON reply passes its counts on unchecked). */
const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : 0);

/**
 * A run's `done` as the browser is told it: the ids and the finish reason, and the token counts only when the site
 * turned them on (`exposeUsage`) and the service gave them. Built field by field, so that nothing else the log
 * holds leaves the backend.
 */
export function toldDone(done: LogEvents['done'], exposeUsage: boolean): StreamEvents['done'] {
  const told: StreamEvents['done'] = {
    messageId: done.messageId ?? null,
    runId: done.runId ?? null,
    finishReason: done.finishReason ?? null,
  };
  const { usage } = done;
  if (exposeUsage && usage) {
    told.usage = {
      prompt_tokens: count(usage.prompt_tokens),
      completion_tokens: count(usage.completion_tokens),
      total_tokens: count(usage.total_tokens),
    };
  }
  return told;
}

/**
 * Logged events as the browser is told them: each as logged, but `done` through `toldDone`. The other events hold
 * nothing the browser may not see (the producer writes them from the protocol's own shapes), so their data is
 * passed on as it is, unparsed; and `done`, being terminal, can only be the last, so a batch without it (every one
 * but a reply's last) is passed on as it is.
 */
export function toldEvents(events: LoggedEvent[], exposeUsage: boolean): LoggedEvent[] {
  const last = events.at(-1);
  if (last?.event !== 'done') return events;
  const done = JSON.parse(last.data) as LogEvents['done'];
  return [...events.slice(0, -1), { ...last, data: JSON.stringify(toldDone(done, exposeUsage)) }];
}

/** The longest start of `text` that fits in `max` UTF-8 bytes. */
export function cut(text: string, max: number): string {
  let out = '';
  let size = 0;
  for (const char of text) {
    size += utf8Length(char);
    if (size > max) break;
    out += char;
  }
  return out;
}

/** The length of `text` in UTF-8 bytes, without encoding it. */
export function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) continue;
    if (code < 0x800) bytes += 1;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        // A surrogate pair: two UTF-16 units, four bytes.
        bytes += 2;
        i++;
        continue;
      }
      bytes += 2;
    } else bytes += 2;
  }
  return bytes;
}
