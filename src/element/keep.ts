/**
 * @module
 * The conversation as a markdown file: what `exportTranscript()` returns and the header's download button saves.
 * A chunk of its own, loaded when first used; it imports nothing the chat has (the chat must stand alone), so what
 * it needs of the chat comes in `Kept`.
 */
import type { Citation } from '../protocol.js';
import type { Entry } from './state.js';
import type { Strings } from './strings.js';

/** What the transcript is made of, besides the conversation's entries, oldest first. */
export interface Kept {
  /** When the message of a key was first sent from this page (epoch ms), if it was. */
  sentAt(key: string): number | undefined;
  /** Who writes the replies. */
  speaker: string;
  strings: Strings;
  /** The locale times are written in. */
  locale: string;
  /** A reply as markdown, with its sources. */
  reply(text: string, citations: Citation[]): string;
}

/**
 * The conversation as markdown: its title, then each message as shown, oldest first, after who wrote it and when
 * (where that is known), each reply with its sources, and how a reply ended if it did not end well.
 */
export function transcript(entries: Entry[], { sentAt, speaker, strings: t, locale, reply }: Kept): string {
  const when = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' });
  const blocks = [`# ${t.heading}`];
  const say = (who: string, at: string | number | null | undefined, text: string) =>
    blocks.push(`**${who}**${at ? ` (${when.format(new Date(at))})` : ''}`, text);
  for (const entry of entries) {
    if ('item' in entry) {
      const { role, text, citations, createdAt } = entry.item;
      if (role === 'user') say(t.you, createdAt, text);
      else say(speaker, createdAt, reply(text, citations));
      continue;
    }
    const { turn } = entry;
    say(t.you, turn.createdAt ?? sentAt(turn.key), turn.text);
    const ending = {
      stopped: t.stopped,
      failed: turn.reply ? t.incomplete : t.notAnswered,
      interrupted: t.interrupted,
    }[turn.status as string];
    if (turn.reply || ending) {
      say(
        speaker,
        null,
        [turn.reply && reply(turn.reply, turn.citations), ending && `_${ending}_`].filter(Boolean).join('\n\n'),
      );
    }
  }
  return `${blocks.join('\n\n')}\n`;
}

/** Saves `text` as the visitor's file `conversation-<date>.md`. */
export function save(text: string) {
  const link = document.createElement('a');
  link.href = URL.createObjectURL(new Blob([text], { type: 'text/markdown;charset=utf-8' }));
  link.download = `conversation-${new Date().toISOString().slice(0, 10)}.md`;
  link.click();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}
