/**
 * @module
 * Every string the element shows, in one table. English is built in; a host changes any of them through the
 * `strings` property (and the most common ones through attributes).
 */
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
  incomplete: 'This reply is incomplete.',
  notAnswered: 'This message has not been answered.',
  stopped: 'Stopped.',
  interrupted: 'This reply was interrupted.',
  newMessages: 'New messages',
  charactersLeft: (n: number) => `${n} characters left`,
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
};

export type Strings = typeof en;

/** English with the host's overrides on top; unknown keys and wrong types are ignored. */
export function resolveStrings(overrides: Partial<Strings> | undefined): Strings {
  const out = { ...en } as Record<string, unknown>;
  for (const [key, value] of Object.entries(overrides ?? {})) {
    if (key in en && typeof value === typeof (en as Record<string, unknown>)[key]) out[key] = value;
  }
  return out as Strings;
}
