/**
 * @module
 * The insights report as one CSV table in long form, so that a spreadsheet or a script can filter it by its first
 * columns: `section` (total, persona, day, question, source, unsourced, unsourced_question, page, thumbs_down, read),
 * then `day`, `persona_id`, `persona`, `metric`, `item` (a question, a source, a page or a comment), `url` and
 * `value`; `question` and `reply` are filled for the replies voted down. RFC 4180 quoting, CRLF line ends. A text
 * that a spreadsheet would take for a formula (starting with =, +, -, @, a tab or a carriage return) is written
 * with a leading apostrophe, as it is made by visitors.
 */
import type { Figures, Insights, Lists } from './compute.js';

export const csvColumns = [
  'section',
  'day',
  'persona_id',
  'persona',
  'metric',
  'item',
  'url',
  'value',
  'question',
  'reply',
] as const;

type Row = Partial<Record<(typeof csvColumns)[number], string | number | null>>;

/** A text as a cell: never a formula, quoted when it must be. */
export function csvText(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

const cell = (value: string | number | null | undefined) => {
  const text = value === null || value === undefined ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
};

const metrics: (keyof Figures)[] = [
  'conversations',
  'messages',
  'questions',
  'replies',
  'visitors',
  'stopped',
  'failed',
  'unanswered',
  'thumbsUp',
  'thumbsDown',
  'upRatio',
  'promptTokens',
  'completionTokens',
  'totalTokens',
  'cost',
];

/** The report as CSV. */
export function renderCsv(insights: Insights): string {
  const names = new Map(insights.personas.map(p => [p.personaId, p.name]));
  const rows: Row[] = [];
  const figures = (section: string, f: Figures, extra: Row) => {
    for (const metric of metrics) rows.push({ section, metric, value: f[metric], ...extra });
  };
  const lists = (l: Lists, extra: Row) => {
    for (const q of l.topQuestions)
      rows.push({ section: 'question', item: csvText(q.question), value: q.count, ...extra });
    for (const s of l.topSources) {
      rows.push({ section: 'source', item: csvText(s.source), url: s.url && csvText(s.url), value: s.count, ...extra });
    }
    rows.push({ section: 'unsourced', metric: 'replies', value: l.unsourced.count, ...extra });
    for (const q of l.unsourced.questions) {
      rows.push({ section: 'unsourced_question', item: csvText(q.question), value: q.count, ...extra });
    }
    for (const p of l.pages) {
      const item = p.page === null ? '' : csvText(p.page);
      rows.push({ section: 'page', metric: 'conversations', item, value: p.conversations, ...extra });
      rows.push({ section: 'page', metric: 'questions', item, value: p.questions, ...extra });
    }
    rows.push({ section: 'thumbs_down', metric: 'replies', value: l.thumbsDown.count, ...extra });
    rows.push({ section: 'thumbs_down', metric: 'with_comment', value: l.thumbsDown.withComment, ...extra });
  };
  const persona = (id: string | null) => ({ persona_id: id ?? '', persona: csvText(names.get(id) ?? '') });

  figures('total', insights.figures, {});
  lists(insights, {});
  for (const p of insights.personas) {
    figures('persona', p.figures, persona(p.personaId));
    lists(p, persona(p.personaId));
  }
  for (const d of insights.days) figures('day', d, { day: d.day, ...persona(d.personaId) });
  for (const item of insights.thumbsDown.items) {
    rows.push({
      section: 'thumbs_down',
      day: item.day,
      ...persona(item.personaId),
      metric: 'comment',
      item: item.comment === null ? '' : csvText(item.comment),
      value: 1,
      question: item.question === null ? '' : csvText(item.question),
      reply: item.reply === null ? '' : csvText(item.reply),
    });
  }
  for (const [metric, value] of Object.entries(insights.read)) rows.push({ section: 'read', metric, value });
  const lines = [csvColumns.join(','), ...rows.map(row => csvColumns.map(column => cell(row[column])).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}
