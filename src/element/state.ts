/**
 * @module
 * The conversation as the element shows it, as pure data: `applyEvent(state, event)` returns the next state. No
 * DOM, no network; the controller feeds it what happened. The conversation is the service's history plus turns:
 * each turn is one message of the visitor and its reply, and every event names the turn it belongs to, so nothing
 * that arrives late can land on another reply.
 */
import type { Citation, MessageView, RunView } from '../protocol.js';

/**
 * Citations as they arrived. The backend shapes them, but storage and older backends may hold anything: the
 * renderer draws each from the fields that have the right type, and one that is no object keeps its place (a
 * marker like `[3]` points at the third) as "Source 3".
 */
export const asCitations = (value: unknown): Citation[] =>
  Array.isArray(value) ? value.map(c => (c && typeof c === 'object' ? (c as Citation) : {})) : [];

/** Where a turn is: waiting behind another, being accepted, streaming, or ended one of four ways. */
export const TurnStatus = {
  queued: 'queued',
  accepting: 'accepting',
  streaming: 'streaming',
  done: 'done',
  stopped: 'stopped',
  failed: 'failed',
  interrupted: 'interrupted',
} as const;
export type TurnStatus = (typeof TurnStatus)[keyof typeof TurnStatus];

export type Feedback = 'up' | 'down';

/** A message of the service's history. */
export interface HistoryItem {
  id: string;
  role: 'user' | 'assistant';
  text: string;
  messageId: string | null;
  citations: Citation[];
  /** ISO 8601, as the service gave it. */
  createdAt: string | null;
  feedback?: Feedback;
  /** What the visitor said with a thumbs-down, once sent (or restored); none shows as nothing. */
  comment?: string | null;
}

export interface Turn {
  /** Stable, for rendering. */
  id: string;
  /** The Idempotency-Key of the message: the backend's run. Kept across retries. */
  key: string;
  /** The visitor's message. */
  text: string;
  status: TurnStatus;
  reply: string;
  citations: Citation[];
  messageId: string | null;
  finishReason: string | null;
  /** The id of the newest event applied: following the run again goes on after it. */
  lastEventId: string | null;
  /** The run's attempt the reply belongs to; a new attempt starts the text afresh. */
  attempt: number;
  error: { code: string; retryable: boolean } | null;
  /** The connection to the reply is being made again (after a lost network, a restarted server): no error yet. */
  reconnecting?: boolean;
  /** ISO 8601, for a turn the backend listed (a reload, another tab); null for one this page sent. */
  createdAt: string | null;
  feedback?: Feedback;
  /** What the visitor said with a thumbs-down, once sent; none shows as nothing. */
  comment?: string | null;
}

export interface ChatState {
  conversationId: string | null;
  history: HistoryItem[];
  turns: Turn[];
}

export type ChatEvent =
  | { type: 'reset' }
  | {
      type: 'restored';
      conversationId: string;
      messages: MessageView[];
      runs: RunView[];
      citations: (messageId: string) => Citation[];
    }
  | { type: 'conversation'; conversationId: string }
  /** The conversation is gone (deleted, or not this visitor's): its messages go, the turns in progress stay. */
  | { type: 'forgotten' }
  | { type: 'queued'; id: string; key: string; text: string }
  | { type: 'accepting'; id: string }
  | { type: 'accepted'; id: string; attempt: number }
  | { type: 'delta'; id: string; text: string; eventId: string | null }
  | { type: 'citations'; id: string; citations: Citation[]; eventId: string | null }
  | { type: 'done'; id: string; messageId: string | null; finishReason: string | null; eventId: string | null }
  | { type: 'failed'; id: string; code: string; retryable: boolean }
  | { type: 'interrupted'; id: string; code: string }
  /** `key`: a new key for the turn, whose message may never have reached the backend (Retry sends it afresh). */
  | { type: 'stopped'; id: string; key?: string }
  | { type: 'removed'; ids: string[] }
  | { type: 'retrying'; id: string }
  /** The turn's way to the backend is made again: its message sent again, or (`follow`) its run followed again. */
  | { type: 'reconnecting'; id: string; follow?: boolean }
  /** A vote on reply `id` (undefined takes it back), with the comment of a thumbs-down. */
  | { type: 'feedback'; id: string; value: Feedback | undefined; comment?: string };

export const initialState: ChatState = {
  conversationId: null,
  history: [],
  turns: [],
};

/** Statuses whose turn is still being answered. */
export const isActive = (status: TurnStatus) => status === TurnStatus.accepting || status === TurnStatus.streaming;

/** Statuses a turn ends in, once. */
export const isSettled = (status: TurnStatus) => !isActive(status) && status !== TurnStatus.queued;

/** The turn being answered, if any. */
export const activeTurn = (state: ChatState) => state.turns.find(turn => isActive(turn.status));

/** The turn that stands for the conversation: the one being answered, else the newest sent. */
export function currentTurn(state: ChatState): Turn | undefined {
  return activeTurn(state) ?? state.turns.findLast(t => !isQueued(t));
}

const isQueued = (turn: Turn) => turn.status === TurnStatus.queued;

export type Entry = { item: HistoryItem } | { turn: Turn };

/** The newest timeline made: a render asks for it twice (the messages, and which turn Retry applies to). */
let made: [HistoryItem[], Turn[], Entry[]] | undefined;

/**
 * What the conversation shows, oldest first: the service's messages and the turns the backend listed, by time
 * (a stopped reply before a later exchange stays where it was), then the turns of this page. The same array for the
 * same messages and turns: do not change it.
 */
export function timeline(state: ChatState): Entry[] {
  const { history, turns } = state;
  if (made?.[0] === history && made[1] === turns) return made[2];
  const listed = turns.filter(turn => turn.createdAt !== null);
  const live = turns.filter(turn => turn.createdAt === null);
  const entries: Entry[] = [];
  let next = 0;
  for (const item of history) {
    if (next < listed.length) {
      const at = item.createdAt === null ? NaN : Date.parse(item.createdAt);
      while (next < listed.length && Date.parse(listed[next]!.createdAt!) < at) entries.push({ turn: listed[next++]! });
    }
    entries.push({ item });
  }
  for (const turn of [...listed.slice(next), ...live]) entries.push({ turn });
  made = [history, turns, entries];
  return entries;
}

/** The next queued turn to send, unless a turn is being answered. */
export function nextQueued(state: ChatState): Turn | undefined {
  return activeTurn(state) ? undefined : state.turns.find(isQueued);
}

/** What a turn shows before its reply comes, or comes afresh (shared: a state is never changed in place). */
const unanswered: Pick<Turn, 'reply' | 'citations' | 'messageId' | 'finishReason' | 'lastEventId' | 'error'> = {
  reply: '',
  citations: [],
  messageId: null,
  finishReason: null,
  lastEventId: null,
  error: null,
};

/** A run of the replay window as a turn: what a reload or another tab shows of it. */
export function turnOfRun(run: RunView): Turn {
  return {
    id: `run:${run.key}`,
    key: run.key,
    text: run.message,
    // A run the backend names a status this element does not know stands as interrupted.
    status:
      run.status === 'running'
        ? TurnStatus.streaming
        : ((['done', 'stopped', 'failed'] as const).find(status => status === run.status) ?? TurnStatus.interrupted),
    reply: run.content,
    citations: run.citations,
    messageId: run.messageId,
    finishReason: run.finishReason,
    lastEventId: run.lastEventId,
    attempt: run.attempt,
    error: run.error && { code: run.error.code, retryable: run.error.retryable },
    createdAt: run.createdAt,
  };
}

/** Changes one turn; whatever happens to it ends its reconnecting, unless the change says otherwise. */
function updateTurn(state: ChatState, id: string, change: (turn: Turn) => Partial<Turn>): ChatState {
  let changed = false;
  const turns = state.turns.map(turn => {
    if (turn.id !== id) return turn;
    changed = true;
    return { ...turn, reconnecting: false, ...change(turn) };
  });
  return changed ? { ...state, turns } : state;
}

export function applyEvent(state: ChatState, event: ChatEvent): ChatState {
  switch (event.type) {
    case 'reset':
      return initialState;
    case 'restored':
      return {
        ...state,
        conversationId: event.conversationId,
        history: event.messages.map((m, i) => ({
          id: m.id ?? `restored-${i}`,
          role: m.role,
          text: m.content,
          messageId: m.id,
          // The backend keeps each reply's sources; this browser's own copy serves a backend that does not.
          citations:
            m.role !== 'assistant' || !m.id
              ? []
              : m.citations?.length
                ? asCitations(m.citations)
                : event.citations(m.id),
          createdAt: m.createdAt,
          ...(m.feedback
            ? { feedback: m.feedback.score > 0 ? ('up' as const) : ('down' as const), comment: m.feedback.comment }
            : {}),
        })),
        // Turns of this page that the backend does not list yet (queued, or still being accepted) stay.
        turns: [
          ...event.runs.map(turnOfRun),
          ...state.turns.filter(turn => !event.runs.some(run => run.key === turn.key) && !isSettled(turn.status)),
        ],
      };
    case 'conversation':
      return { ...state, conversationId: event.conversationId };
    case 'forgotten':
      return {
        ...state,
        conversationId: null,
        history: [],
        turns: state.turns.filter(turn => !isSettled(turn.status)),
      };
    case 'queued':
      return {
        ...state,
        turns: [
          ...state.turns,
          {
            id: event.id,
            key: event.key,
            text: event.text,
            status: TurnStatus.queued,
            ...unanswered,
            attempt: 1,
            createdAt: null,
          },
        ],
      };
    case 'accepting': {
      // A turn moves to the end of what was sent: queued turns behind it keep their order.
      const turn = state.turns.find(t => t.id === event.id);
      if (!turn) return state;
      const others = state.turns.filter(t => t.id !== event.id);
      const at = others.findIndex(isQueued);
      const moved = { ...turn, status: TurnStatus.accepting, error: null };
      const turns = at < 0 ? [...others, moved] : [...others.slice(0, at), moved, ...others.slice(at)];
      return { ...state, turns };
    }
    case 'accepted':
      return updateTurn(state, event.id, turn => ({
        status: TurnStatus.streaming,
        // A new attempt of the run writes its reply afresh (so does a message sent again: see `reconnecting`).
        ...(event.attempt !== turn.attempt
          ? { reply: '', citations: [], lastEventId: null, attempt: event.attempt }
          : {}),
      }));
    case 'delta':
      return updateTurn(state, event.id, turn => ({
        status: TurnStatus.streaming,
        reply: turn.reply + event.text,
        lastEventId: event.eventId ?? turn.lastEventId,
      }));
    case 'citations':
      return updateTurn(state, event.id, turn => ({
        citations: event.citations,
        lastEventId: event.eventId ?? turn.lastEventId,
      }));
    case 'done':
      return updateTurn(state, event.id, turn => ({
        status: event.finishReason === 'stopped' ? TurnStatus.stopped : TurnStatus.done,
        messageId: event.messageId,
        finishReason: event.finishReason,
        lastEventId: event.eventId ?? turn.lastEventId,
        error: null,
      }));
    case 'failed':
    case 'interrupted':
      return updateTurn(state, event.id, () => ({
        status: event.type === 'failed' ? TurnStatus.failed : TurnStatus.interrupted,
        error: { code: event.code, retryable: event.type === 'interrupted' || event.retryable },
      }));
    case 'stopped':
      return updateTurn(state, event.id, turn => ({ status: TurnStatus.stopped, key: event.key ?? turn.key }));
    case 'removed':
      return { ...state, turns: state.turns.filter(turn => !event.ids.includes(turn.id)) };
    case 'reconnecting':
      // What was written stays in view; the message sent again is answered from its start (attempt 0 matches none),
      // a run followed again goes on after its last event.
      return updateTurn(state, event.id, () =>
        event.follow ? { reconnecting: true } : { reconnecting: true, attempt: 0 },
      );
    case 'retrying':
      // The reply is written afresh: the backend sends the run again from its start (or its next attempt).
      return updateTurn(state, event.id, () => ({ status: TurnStatus.accepting, ...unanswered }));
    case 'feedback': {
      const vote = { feedback: event.value, comment: event.comment };
      const turned = updateTurn(state, event.id, () => vote);
      if (turned !== state) return turned;
      return {
        ...state,
        history: state.history.map(item => (item.id === event.id ? { ...item, ...vote } : item)),
      };
    }
  }
}
