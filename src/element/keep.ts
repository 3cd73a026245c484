/**
 * @module
 * A reply as markdown, as its copy button copies it, and the conversation as a markdown file: what
 * `exportTranscript()` returns and the header's download button saves. A chunk of its own, loaded when first used;
 * it imports nothing the chat has (the chat must stand alone), so what it needs of the chat comes as arguments.
 */
import type { Citation } from '../protocol.js';
import type { Entry } from './state.js';
import type { Strings } from './strings.js';

/**
 * The conversation's `entries` (oldest first) as markdown: its title, then each message after who wrote it (`t.you`,
 * or `speaker`) and when, where that is known (the service's time, else `sentAt` of its key: when this page first
 * sent it), in `locale`; each reply with its sources, and how it ended if it did not end well.
 */
export function transcript(
  entries: Entry[],
  sentAt: (key: string) => number | undefined,
  speaker: string,
  t: Strings,
  locale: string,
): string {
  const reply = (text: string, citations: Citation[]) => replyMarkdown(text, citations, t);
  const style = { dateStyle: 'medium', timeStyle: 'short' } as const;
  let when: Intl.DateTimeFormat;
  try {
    when = new Intl.DateTimeFormat(locale, style);
  } catch {
    // Not a language tag (a browser's "C"): the browser's own way.
    when = new Intl.DateTimeFormat(undefined, style);
  }
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

/**
 * A reply as markdown: its text, then its sources under `t.sources`, numbered as its markers number them (`[2]` is
 * the second), each named as the Sources list names it, and a link where it has a web address.
 */
export function replyMarkdown(text: string, citations: Citation[], t: Pick<Strings, 'sources' | 'source'>): string {
  const list = citations.map((c, i) => {
    const url = c.sourceUrl?.match(/^https?:\/\//i) && c.sourceUrl;
    const name = c.sourceName || c.documentId || c.sourceUrl || t.source(i + 1);
    return `${i + 1}. ${url ? `[${name.replace(/[[\]]/g, '\\$&')}](<${url}>)` : name}`;
  });
  return list.length ? `${text}\n\n${t.sources}:\n\n${list.join('\n')}` : text;
}
