/**
 * @module
 * Every string the element shows, in one table. English is built in; the other languages are tables of their own
 * in `./locales/`, loaded when the element's language calls for one (see `./locale.ts`). A host changes any string
 * through the `strings` property or attribute (and the most common ones through attributes).
 */
/** A count in English: `1 <one>`, else `<n> <many>`. */
const count = (one: string, many: string) => (n: number) =>
  n === 1 ? `1 ${one}` : `${n.toLocaleString('en')} ${many}`;

export const en = {
  heading: 'Chat',
  subheading: '',
  placeholder: 'Type a message…',
  open: 'Open chat',
  close: 'Close chat',
  send: 'Send',
  stop: 'Stop',
  retry: 'Retry',
  newConversation: 'New conversation',
  typing: 'Typing…',
  you: 'You',
  assistant: 'Assistant',
  sources: 'Sources',
  source: (n: number) => `Source ${n}`,
  copy: 'Copy',
  copied: 'Copied',
  /** A finished reply's copy button: its text as markdown, with its sources. */
  copyReply: 'Copy reply',
  /** The header's button that saves the conversation as a markdown file. */
  download: 'Download conversation',
  /** The name of a code block (it scrolls, so it takes the focus), with its language when known ('' when not). */
  code: (language: string) => (language ? `${language} code` : 'Code'),
  incomplete: 'This reply is incomplete.',
  notAnswered: 'This message has not been answered.',
  stopped: 'Stopped.',
  interrupted: 'This reply was interrupted.',
  /** Shown in a reply while the connection to it is being made again (a lost network, a restarted server). */
  reconnecting: 'Reconnecting…',
  /** Shown in a reply being written while the browser is offline. */
  offline: 'Offline: the reply will continue when you are back online.',
  newMessages: 'New messages',
  charactersLeft: count('character left', 'characters left'),
  relevance: (percent: string) => `Relevance ${percent}`,
  helpful: 'Helpful',
  notHelpful: 'Not helpful',
  errorGeneric: 'Something went wrong. Please try again.',
  errorNetwork: 'The chat cannot be reached. Check your connection and try again.',
  errorBusy: 'The assistant is busy. Please try again in a moment.',
  errorRateLimited: 'You are sending messages too quickly. Please wait a moment.',
  errorTooManySessions: 'Too many chats were opened from here in a short while. Please try again in a minute.',
  errorSession: 'The chat could not start here.',
  errorTooLong: 'That message is too long.',
  errorConfig: 'This chat is not set up correctly.',
  errorInterrupted: 'The reply was interrupted. You can try again.',
  conversations: 'Conversations',
  backToChat: 'Back to the chat',
  rename: 'Rename',
  delete: 'Delete',
  save: 'Save',
  cancel: 'Cancel',
  untitled: 'Untitled conversation',
  more: 'Show more',
  noConversations: 'No conversations yet.',
  conversationName: 'Conversation name',
  /** Asked before a conversation is deleted. */
  deleteQuestion: (name: string) => `Delete “${name}”?`,
  /** Said while the history view reads the list, then how many it shows. */
  loadingConversations: 'Loading conversations…',
  conversationCount: count('conversation', 'conversations'),
  feedbackPrompt: 'What went wrong? (optional)',
  feedbackSend: 'Send feedback',
  feedbackThanks: 'Thanks for your feedback.',
  /** Before the comment the visitor sent with a thumbs-down, shown under its reply. */
  yourComment: 'Your comment:',
  /** The label of the suggested first questions of an empty conversation. */
  suggestions: 'Suggested questions',
  /** On the launcher while the panel is closed: replies that finished meanwhile. */
  unread: count('new reply', 'new replies'),
  /** Before a finished reply read out by a screen reader: who wrote it. */
  said: (name: string) => `${name} said:`,
};

export type Strings = typeof en;

/**
 * English, then each table of overrides on top (a language's table, the host's strings); unknown keys and values of
 * the wrong type are ignored. Where English has a function, a string with `{n}` stands for it (for the `strings`
 * attribute, whose JSON holds no functions).
 */
export function resolveStrings(...layers: (Partial<Strings> | undefined)[]): Strings {
  const out = { ...en } as Record<string, unknown>;
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer ?? {})) {
      const english = (en as Record<string, unknown>)[key];
      if (english === undefined) continue;
      if (typeof value === typeof english) out[key] = value;
      else if (typeof english === 'function' && typeof value === 'string') {
        out[key] = (x: unknown) => value.replaceAll('{n}', String(x));
      }
    }
  }
  return out as Strings;
}

/** What the visitor reads for an error, by its code; never the server's own text. */
export function errorText(t: Strings, code: string): string {
  return (
    {
      network_error: t.errorNetwork,
      rate_limited: t.errorRateLimited,
      upstream_unavailable: t.errorBusy,
      server_restarting: t.errorBusy,
      too_many_sessions: t.errorTooManySessions,
      origin_not_allowed: t.errorSession,
      config_error: t.errorConfig,
      invalid_request: t.errorTooLong,
      interrupted: t.errorInterrupted,
    }[code] ?? t.errorGeneric
  );
}
