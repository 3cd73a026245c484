/**
 * What the chaos run counts, turn by turn, from three records: what the visitor saw (the driver's), what the service
 * was asked (the fault proxy's), and what the service keeps (each conversation's history, read from the emulator at
 * the end). Each turn is put under every fault it was exposed to: the proxy's break of its own reply, and every
 * process fault that happened between its send and its end; a turn exposed to none is under `none`.
 */
import type { Asked, Break } from './fault-proxy.js';
import type { ConversationRecord, TurnRecord } from './driver.js';

export const faults = [
  'none',
  'kill',
  'drain',
  'redis-restart',
  'redis-stall',
  'cut-clean',
  'cut-reset',
  'stall',
] as const;
export type Fault = (typeof faults)[number];

/** A process fault: when it was made and when everything was back. */
export interface Window {
  fault: Fault;
  at: number;
  until: number;
  detail: string;
}

export interface StoredMessage {
  role: string;
  content: string;
}

export interface Counts {
  turns: number;
  askedTwice: number;
  storedTwice: number;
  lost: number;
  shownDifferently: number;
  sourcesLost: number;
  retries: number;
  hangs: number;
}

const counted = ['askedTwice', 'storedTwice', 'lost', 'shownDifferently', 'sourcesLost', 'retries', 'hangs'] as const;
/**
 * The counts that fail the run. Sources lost is told, not failed on: a reply the service finished while no instance
 * read its end is taken from the service's history, whose messages carry no sources (the interface keeps none).
 */
const failing = counted.filter(key => key !== 'sourcesLost');

/**
 * A reply's text as the page shows it and as the service keeps it, compared without whitespace and without citation
 * markers (drawn as footnote numbers, which the page's text leaves out, or as they are when the reply's sources are
 * unknown: that is counted apart, as sources lost).
 */
const markers = /\[(?:doc)?\d+\]/g;
const plain = (text: string) => text.replace(markers, '').replace(/\s+/g, '');
const drawn = (markdown: string) => plain(markdown.replace(/\*\*/g, ''));

export interface TurnVerdict extends Counts {
  turn: TurnRecord;
  exposures: Fault[];
  asks: Asked[];
  stored: string[];
}

export function judge(
  conversations: ConversationRecord[],
  asked: Asked[],
  applied: Map<string, Break & { at: number }>,
  windows: Window[],
  histories: Map<string, StoredMessage[]>,
): TurnVerdict[] {
  const verdicts: TurnVerdict[] = [];
  for (const conversation of conversations) {
    const ids = new Set(conversation.conversationIds);
    for (const turn of conversation.turns)
      for (const a of asked) if (a.message === turn.text) ids.add(a.conversationId);
    const kept = [...ids].map(id => histories.get(id) ?? []);
    for (const turn of conversation.turns) {
      const exposures = new Set<Fault>();
      const broken = applied.get(turn.text);
      if (broken) exposures.add(broken.mode);
      for (const w of windows) if (w.at <= turn.endedAt && w.until >= turn.sentAt) exposures.add(w.fault);
      const asks = asked.filter(a => a.message === turn.text);
      const stored: string[] = [];
      let storedUsers = 0;
      for (const messages of kept) {
        messages.forEach((m, i) => {
          if (m.role !== 'user' || m.content !== turn.text) return;
          storedUsers++;
          const reply = messages[i + 1];
          if (reply?.role === 'assistant') stored.push(reply.content);
        });
      }
      const done = turn.status === 'done';
      const same = stored.find(reply => drawn(reply) === plain(turn.shown));
      const cites = same !== undefined && /\[(?:doc)?\d+\]/.test(same);
      const neverSent = asks.length === 0 && !turn.inComposer && !turn.retryShown;
      verdicts.push({
        turn,
        exposures: exposures.size ? [...exposures] : ['none'],
        asks,
        stored,
        turns: 1,
        // Asked again after the service had answered whole: a duplicate. Asking again after an ask the service ended
        // without keeping anything (its caller cut or gone) is how a reply is recovered.
        askedTwice: Math.max(0, asks.filter((a, i) => asks.slice(0, i).some(b => b.answered)).length - turn.retries),
        storedTwice: Math.max(0, storedUsers - 1),
        lost: (stored.length > 0 && !done) || neverSent ? 1 : 0,
        shownDifferently: done && same === undefined ? 1 : 0,
        sourcesLost: done && turn.footnotes === 0 && cites ? 1 : 0,
        retries: turn.retries,
        hangs: turn.hung ? 1 : 0,
      });
    }
  }
  return verdicts;
}

const zero = (): Counts & { conversations: Set<number> } => ({
  conversations: new Set(),
  turns: 0,
  askedTwice: 0,
  storedTwice: 0,
  lost: 0,
  shownDifferently: 0,
  sourcesLost: 0,
  retries: 0,
  hangs: 0,
});

/** The table, one row per fault, and whether every count is zero. */
export function table(verdicts: TurnVerdict[]) {
  const rows = new Map(faults.map(fault => [fault, zero()]));
  const total = zero();
  for (const verdict of verdicts) {
    for (const into of [...verdict.exposures.map(f => rows.get(f)!), total]) {
      into.conversations.add(verdict.turn.conversation);
      into.turns++;
      for (const key of counted) into[key] += verdict[key];
    }
  }
  const head = ['fault', 'conversations', 'turns', 'asked twice', 'stored twice', 'lost', 'shown differently'];
  const lines = [[...head, 'sources lost', 'Retry clicks', 'hangs']];
  for (const [fault, row] of [...rows, ['all', total] as const]) {
    lines.push([fault, String(row.conversations.size), String(row.turns), ...counted.map(key => String(row[key]))]);
  }
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map(line => line[i]!.length)));
  const text = lines
    .map((line, r) => {
      const row = line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
      return r === 0
        ? `${row}\n${'-'.repeat(row.length)}`
        : r === lines.length - 1
          ? `${'-'.repeat(row.length)}\n${row}`
          : row;
    })
    .join('\n');
  const clean = failing.every(key => total[key] === 0);
  return { text, clean };
}

const excerpt = (text: string, max = 70) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, 30)} … ${flat.slice(-(max - 33))}` : flat;
};

/** One line per turn with a non-zero count, saying what was seen, asked and kept. */
export function cases(verdicts: TurnVerdict[], started: number) {
  const lines: string[] = [];
  for (const v of verdicts) {
    const problems = counted.filter(key => v[key]).map(key => (v[key] > 1 ? `${key} ${v[key]}` : key));
    if (!problems.length) continue;
    const t = v.turn;
    const when = `${((t.sentAt - started) / 1000).toFixed(1)}–${((t.endedAt - started) / 1000).toFixed(1)} s`;
    lines.push(
      `conversation ${t.conversation} message ${t.index + 1} [${v.exposures.join(', ')}] ${when}: ${problems.join(', ')}`,
      `    asked ${v.asks.length}×, Retry ${t.retries}×, attempts ${t.attempts.join(' → ')}, ` +
        `kept ${v.stored.length} repl${v.stored.length === 1 ? 'y' : 'ies'}; ` +
        `screen: ${t.status ?? 'not shown'}${t.retryShown ? ' with Retry' : ''}${t.inComposer ? ', text in composer' : ''}`,
    );
    const at = (time: number | undefined) => (time === undefined ? '–' : `${((time - started) / 1000).toFixed(1)} s`);
    for (const a of v.asks) {
      const broken = a.broken ? `, ${a.broken.mode} at ${at(a.broken.at)}` : '';
      lines.push(
        `    asked at ${at(a.at)} (${a.path})${broken}: caller left ${at(a.left)}, answered whole ${at(a.answered)}`,
      );
    }
    if (v.shownDifferently || (v.lost && v.stored.length)) {
      lines.push(`    shown: "${excerpt(t.shown)}" (${plain(t.shown).length} chars)`);
      for (const reply of v.stored) lines.push(`    kept:  "${excerpt(reply)}" (${drawn(reply).length} chars)`);
    }
  }
  return lines;
}
