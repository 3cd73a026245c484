/**
 * @module
 * The conversation as the element shows it, as pure data: `applyEvent(state, event)` returns the next state.
 * No DOM, no network; the controller feeds it what happened.
 */
import type { Citation, MessageView } from '../protocol.js';

export const Status = {
  idle: 'idle',
  connecting: 'connecting',
  streaming: 'streaming',
  error: 'error',
} as const;
export type Status = (typeof Status)[keyof typeof Status];

export interface ChatItem {
  /** Stable key for rendering. */
  key: string;
  role: 'user' | 'assistant';
  text: string;
  /** `queued` user messages wait for the reply in progress; `sending` means not yet accepted. */
  status: 'queued' | 'sending' | 'streaming' | 'done' | 'error' | 'stopped';
  messageId: string | null;
  citations: Citation[];
  /** Assistant replies: the idempotency key of the request that asked for them, reused by Retry. */
  requestKey?: string;
  /** Assistant replies: the user message they answer. */
  question?: string;
  errorCode?: string;
  retryable?: boolean;
  feedback?: 'up' | 'down';
}

export interface ChatState {
  status: Status;
  conversationId: string | null;
  items: ChatItem[];
}

export type ChatEvent =
  | { type: 'reset' }
  | { type: 'connecting' }
  | { type: 'ready' }
  | { type: 'restored'; conversationId: string; messages: MessageView[]; citations: (messageId: string) => Citation[] }
  | { type: 'conversation'; conversationId: string }
  | { type: 'queued'; key: string; text: string }
  | { type: 'sending'; key: string; text: string; requestKey: string }
  | { type: 'accepted' }
  | { type: 'unsent' }
  | { type: 'delta'; text: string }
  | { type: 'citations'; citations: Citation[] }
  | { type: 'done'; messageId: string | null }
  | { type: 'failed'; code: string; retryable: boolean }
  | { type: 'stopped' }
  | { type: 'retrying'; key: string }
  | { type: 'feedback'; key: string; value: 'up' | 'down' };

export const initialState: ChatState = { status: Status.idle, conversationId: null, items: [] };

/** The reply being written, if any: the last assistant item while sending or streaming. */
export function activeReply(state: ChatState): ChatItem | undefined {
  const last = state.items.findLast(item => item.role === 'assistant');
  return last && (last.status === 'sending' || last.status === 'streaming') ? last : undefined;
}

const replaceLastReply = (state: ChatState, change: (item: ChatItem) => ChatItem): ChatItem[] => {
  const index = state.items.findLastIndex(item => item.role === 'assistant');
  return index < 0 ? state.items : state.items.map((item, i) => (i === index ? change(item) : item));
};

export function applyEvent(state: ChatState, event: ChatEvent): ChatState {
  switch (event.type) {
    case 'reset':
      return initialState;
    case 'connecting':
      return { ...state, status: Status.connecting };
    case 'ready':
      return { ...state, status: activeReply(state) ? Status.streaming : Status.idle };
    case 'restored':
      return {
        status: Status.idle,
        conversationId: event.conversationId,
        items: event.messages.map((m, i) => ({
          key: m.id ?? `restored-${i}`,
          role: m.role,
          text: m.content,
          status: 'done',
          messageId: m.id,
          citations: m.role === 'assistant' && m.id ? event.citations(m.id) : [],
        })),
      };
    case 'conversation':
      return { ...state, conversationId: event.conversationId };
    case 'queued':
      return {
        ...state,
        items: [
          ...state.items,
          { key: event.key, role: 'user', text: event.text, status: 'queued', messageId: null, citations: [] },
        ],
      };
    case 'sending': {
      const items = state.items.filter(item => item.key !== event.key);
      return {
        ...state,
        status: Status.streaming,
        items: [
          ...items,
          { key: event.key, role: 'user', text: event.text, status: 'sending', messageId: null, citations: [] },
          {
            key: `${event.key}-reply`,
            role: 'assistant',
            text: '',
            status: 'sending',
            messageId: null,
            citations: [],
            requestKey: event.requestKey,
            question: event.text,
          },
        ],
      };
    }
    case 'accepted':
      return {
        ...state,
        items: state.items.map(item =>
          item.status === 'sending' ? { ...item, status: item.role === 'user' ? 'done' : 'streaming' } : item,
        ),
      };
    case 'unsent': {
      // The message never reached the backend: take it back out (its text returns to the composer).
      const items = state.items.filter(item => item.status !== 'sending');
      return { ...state, status: Status.idle, items };
    }
    case 'delta':
      return {
        ...state,
        items: replaceLastReply(state, item => ({ ...item, status: 'streaming', text: item.text + event.text })),
      };
    case 'citations':
      return { ...state, items: replaceLastReply(state, item => ({ ...item, citations: event.citations })) };
    case 'done':
      return {
        ...state,
        status: Status.idle,
        items: replaceLastReply(state, item => ({
          ...item,
          status: 'done',
          messageId: event.messageId,
          errorCode: undefined,
        })),
      };
    case 'failed':
      return {
        ...state,
        status: Status.error,
        items: replaceLastReply(state, item => ({
          ...item,
          status: 'error',
          errorCode: event.code,
          retryable: event.retryable,
        })),
      };
    case 'stopped':
      return {
        ...state,
        status: Status.idle,
        items: replaceLastReply(state, item => ({ ...item, status: 'stopped' })),
      };
    case 'retrying':
      return {
        ...state,
        status: Status.streaming,
        items: state.items.map(item =>
          item.key === event.key ? { ...item, text: '', citations: [], status: 'sending', errorCode: undefined } : item,
        ),
      };
    case 'feedback':
      return {
        ...state,
        items: state.items.map(item => (item.key === event.key ? { ...item, feedback: event.value } : item)),
      };
  }
}
