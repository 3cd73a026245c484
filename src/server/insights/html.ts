/**
 * @module
 * The insights report as one self-contained HTML file: its charts are SVG drawn here, at build time, its styles one
 * inline sheet, and it has no script and loads nothing (its own Content-Security-Policy says so, `default-src
 * 'none'`), so it opens from disk, from a mail or from any server the same. Light or dark as the reader's system
 * prefers; printable. Every text in it, from the service or the visitors, is escaped here.
 */
import type {
  DayFigures,
  Figures,
  Insights,
  PageFigures,
  PersonaInsights,
  RankedQuestion,
  RankedSource,
} from './compute.js';

const escapes: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for HTML content and quoted attribute values alike. */
export const escapeHtml = (value: unknown) => String(value).replace(/[&<>"']/g, c => escapes[c]!);

const integer = new Intl.NumberFormat('en-US');
const percent = new Intl.NumberFormat('en-US', { style: 'percent', maximumFractionDigits: 0 });
const n = (value: number) => integer.format(value);
const ratio = (value: number | null) => (value === null ? '–' : percent.format(value));

/** The largest of the values, 0 for none: a loop, where spreading thousands of days into Math.max nears its limit. */
function largest(values: Iterable<number>): number {
  let most = 0;
  for (const value of values) if (value > most) most = value;
  return most;
}

/**
 * An amount of money: cents, or four significant digits below one cent, so that the cost of a quiet day shows as
 * more than nothing.
 */
function money(value: number | null, currency: string): string {
  if (value === null) return '–';
  const digits = value > 0 && value < 0.01 ? { maximumSignificantDigits: 4 } : { maximumFractionDigits: 2 };
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency, ...digits }).format(value);
  } catch {
    return `${value > 0 && value < 0.01 ? value.toPrecision(4) : value.toFixed(2)} ${currency}`;
  }
}

/** Up to six personas get their own colour; the rest share the last. */
const colour = (i: number) => `c${Math.min(i, 5)}`;

const style = `
:root{color-scheme:light dark;--bg:#fff;--fg:#1b1f24;--muted:#5b6470;--line:#d9dde3;--card:#f5f7f9;--bar:#d9dde3;
--c0:#2f6fde;--c1:#d9730d;--c2:#1a9a6c;--c3:#9b51e0;--c4:#c93c5d;--c5:#6b7785;--up:#1a9a6c;--down:#c93c5d}
@media (prefers-color-scheme:dark){:root{--bg:#111418;--fg:#e6e9ed;--muted:#9aa4b0;--line:#2c333b;--card:#1a1f25;
--bar:#2c333b;--c0:#6ea1ff;--c1:#f5a25d;--c2:#4fd1a1;--c3:#c49bff;--c4:#ff8fa8;--c5:#9aa4b0;--up:#4fd1a1;--down:#ff8fa8}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:1.6rem;margin:0}h2{font-size:1.15rem;margin:0 0 .6rem}h3{font-size:1rem;margin:1rem 0 .4rem}
.sub,.note,caption,.legend{color:var(--muted)}.note{font-size:.85rem}
section{margin:28px 0;break-inside:avoid}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(150px,1fr));gap:10px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 12px}
.card b{display:block;font-size:1.45rem;font-variant-numeric:tabular-nums}.card span{color:var(--muted);font-size:.85rem}
svg{display:block;width:100%;height:auto;overflow:visible}
svg text{fill:var(--muted);font-size:11px}
.grid{stroke:var(--line)}.axis{stroke:var(--muted)}
.c0{fill:var(--c0)}.c1{fill:var(--c1)}.c2{fill:var(--c2)}.c3{fill:var(--c3)}.c4{fill:var(--c4)}.c5{fill:var(--c5)}
.up{fill:var(--up)}.down{fill:var(--down)}.track{fill:var(--bar)}
.legend{display:flex;flex-wrap:wrap;gap:14px;margin:.4rem 0 0;padding:0;list-style:none;font-size:.85rem}
.legend svg{display:inline-block;width:10px;height:10px;margin-inline-end:5px;vertical-align:baseline}
table{width:100%;border-collapse:collapse;font-variant-numeric:tabular-nums}
caption{text-align:start;font-size:.85rem;padding-bottom:4px}
th,td{padding:5px 8px;border-bottom:1px solid var(--line);text-align:start;vertical-align:top}
th{font-weight:600;font-size:.85rem}td.num,th.num{text-align:end;white-space:nowrap}
td.bar{width:110px}td.bar svg{width:100px;height:10px}
.two{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:24px}
article{border-top:2px solid var(--line);padding-top:8px;margin-top:20px}
blockquote{margin:.3rem 0;padding:.2rem .7rem;border-inline-start:3px solid var(--line);white-space:pre-wrap;overflow-wrap:anywhere}
.feedback li{margin-bottom:14px}.feedback{padding-inline-start:1.2rem}.label{color:var(--muted);font-size:.8rem}
a{color:var(--c0)}.wrap{overflow-x:auto}
@media print{:root{--bg:#fff;--fg:#000;--muted:#444;--line:#bbb;--card:#fff}main{max-width:none;padding:0}
section,article,tr{break-inside:avoid}.wrap{overflow:visible}a{color:inherit}}
`;

/** A bar of `value` out of `max`, as a small inline SVG. */
function bar(value: number, max: number, cls = 'c0'): string {
  const width = max > 0 ? Math.max(value > 0 ? 1 : 0, (value / max) * 100) : 0;
  return (
    `<svg viewBox="0 0 100 10" aria-hidden="true" focusable="false"><rect class="track" width="100" height="10" rx="2"/>` +
    `<rect class="${cls}" width="${width.toFixed(2)}" height="10" rx="2"/></svg>`
  );
}

function legend(personas: PersonaInsights[]): string {
  return `<ul class="legend">${personas
    .map(
      (p, i) =>
        `<li><svg viewBox="0 0 10 10" aria-hidden="true"><rect class="${colour(i)}" width="10" height="10" rx="2"/></svg>${escapeHtml(p.name)}</li>`,
    )
    .join('')}</ul>`;
}

/** The top of an axis a little above `max`, whose quarters are round whole numbers. */
function ceiling(max: number): number {
  const quarter = Math.max(1, max / 4);
  const step = 10 ** Math.floor(Math.log10(quarter));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * step >= quarter && Number.isInteger(m * step)) return 4 * m * step;
  return 40 * step;
}

const chart = { width: 760, height: 200, left: 36, right: 8, top: 8, bottom: 24 };

/** The x axis's labels: about one a week. */
function xLabels(days: string[], x: (i: number) => number, y: number): string {
  const every = Math.max(1, Math.ceil(days.length / 8));
  return days
    .map((day, i) =>
      i % every === 0
        ? `<text x="${x(i).toFixed(1)}" y="${y}" text-anchor="middle">${escapeHtml(day.slice(5))}</text>`
        : '',
    )
    .join('');
}

/** Conversations per day, stacked by persona. */
function conversationsChart(insights: Insights): string {
  const { days } = insights.period;
  const index = new Map(insights.personas.map((p, i) => [p.personaId, i]));
  const byDay = new Map<string, DayFigures[]>();
  for (const row of insights.days) byDay.set(row.day, [...(byDay.get(row.day) ?? []), row]);
  const totals = days.map(day => (byDay.get(day) ?? []).reduce((sum, r) => sum + r.conversations, 0));
  const top = ceiling(largest(totals));
  const { width, height, left, right, top: pad, bottom } = chart;
  const plotW = width - left - right;
  const plotH = height - pad - bottom;
  const step = plotW / Math.max(1, days.length);
  const barW = Math.max(1, step * 0.72);
  const x = (i: number) => left + step * i + step / 2;
  const y = (v: number) => pad + plotH - (v / top) * plotH;
  const grid = [0, 0.25, 0.5, 0.75, 1]
    .map(f => {
      const v = top * f;
      return (
        `<line class="grid" x1="${left}" x2="${width - right}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}"/>` +
        `<text x="${left - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${n(v)}</text>`
      );
    })
    .join('');
  const bars = days
    .map((day, i) => {
      const rows = (byDay.get(day) ?? []).filter(r => r.conversations > 0);
      if (!rows.length) return '';
      let base = 0;
      const rects = rows
        .map(r => {
          const from = y(base);
          base += r.conversations;
          const to = y(base);
          return `<rect class="${colour(index.get(r.personaId) ?? 5)}" x="${(x(i) - barW / 2).toFixed(1)}" y="${to.toFixed(1)}" width="${barW.toFixed(1)}" height="${(from - to).toFixed(1)}"/>`;
        })
        .join('');
      const names = rows.map(r => `${insights.personas[index.get(r.personaId) ?? 0]?.name ?? ''} ${r.conversations}`);
      return `<g><title>${escapeHtml(`${day}: ${names.join(', ')}`)}</title>${rects}</g>`;
    })
    .join('');
  const total = totals.reduce((a, b) => a + b, 0);
  return (
    `<svg viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(`Conversations per day: ${n(total)} in ${days.length} days`)}">` +
    `${grid}${bars}<line class="axis" x1="${left}" x2="${width - right}" y1="${y(0)}" y2="${y(0)}"/>` +
    `${xLabels(days, x, height - 6)}</svg>${legend(insights.personas)}`
  );
}

/** Thumbs per day: up above the axis, down below. */
function thumbsChart(insights: Insights): string {
  const { days } = insights.period;
  const up = new Map<string, number>();
  const down = new Map<string, number>();
  for (const row of insights.days) {
    up.set(row.day, (up.get(row.day) ?? 0) + row.thumbsUp);
    down.set(row.day, (down.get(row.day) ?? 0) + row.thumbsDown);
  }
  const top = ceiling(Math.max(largest(up.values()), largest(down.values())));
  const { width, left, right } = chart;
  const height = 170;
  const half = (height - 24) / 2;
  const mid = 4 + half;
  const plotW = width - left - right;
  const step = plotW / Math.max(1, days.length);
  const barW = Math.max(1, step * 0.72);
  const x = (i: number) => left + step * i + step / 2;
  const h = (v: number) => (v / top) * (half - 4);
  const bars = days
    .map((day, i) => {
      const u = up.get(day) ?? 0;
      const d = down.get(day) ?? 0;
      if (!u && !d) return '';
      const bx = (x(i) - barW / 2).toFixed(1);
      return (
        `<g><title>${escapeHtml(`${day}: ${u} up, ${d} down`)}</title>` +
        `<rect class="up" x="${bx}" y="${(mid - h(u)).toFixed(1)}" width="${barW.toFixed(1)}" height="${h(u).toFixed(1)}"/>` +
        `<rect class="down" x="${bx}" y="${mid}" width="${barW.toFixed(1)}" height="${h(d).toFixed(1)}"/></g>`
      );
    })
    .join('');
  const labels =
    `<text x="${left - 6}" y="${(mid - half + 8).toFixed(1)}" text-anchor="end">${n(top)}</text>` +
    `<text x="${left - 6}" y="${(mid + 4).toFixed(1)}" text-anchor="end">0</text>` +
    `<text x="${left - 6}" y="${(mid + half).toFixed(1)}" text-anchor="end">${n(top)}</text>`;
  const { thumbsUp, thumbsDown } = insights.figures;
  return (
    `<svg viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeHtml(`Thumbs per day: ${n(thumbsUp)} up, ${n(thumbsDown)} down`)}">` +
    `${labels}${bars}<line class="axis" x1="${left}" x2="${width - right}" y1="${mid}" y2="${mid}"/>` +
    `${xLabels(days, x, height - 4)}</svg>` +
    `<ul class="legend"><li><svg viewBox="0 0 10 10" aria-hidden="true"><rect class="up" width="10" height="10" rx="2"/></svg>thumbs up</li>` +
    `<li><svg viewBox="0 0 10 10" aria-hidden="true"><rect class="down" width="10" height="10" rx="2"/></svg>thumbs down</li></ul>`
  );
}

function cards(insights: Insights): string {
  const f = insights.figures;
  const currency = insights.price?.currency ?? 'USD';
  const card = (value: string, label: string) =>
    `<div class="card"><b>${value}</b><span>${escapeHtml(label)}</span></div>`;
  return [
    card(n(f.conversations), 'conversations'),
    card(n(f.questions), 'questions'),
    card(n(f.visitors), 'visitors'),
    card(ratio(f.upRatio), `thumbs up (${n(f.thumbsUp)} up, ${n(f.thumbsDown)} down)`),
    card(n(f.stopped + f.failed), `replies stopped (${n(f.stopped)}) or failed (${n(f.failed)})`),
    card(n(insights.unsourced.count), 'replies with no source'),
    card(n(f.totalTokens), 'tokens'),
    card(
      money(f.cost, currency),
      insights.price ? `estimated at ${insights.price.per1K} per 1K tokens` : 'no price given',
    ),
  ].join('');
}

const figureColumns: [keyof Figures, string][] = [
  ['conversations', 'Conversations'],
  ['questions', 'Questions'],
  ['replies', 'Replies'],
  ['visitors', 'Visitors'],
  ['stopped', 'Stopped'],
  ['failed', 'Failed'],
  ['unanswered', 'Unanswered'],
  ['thumbsUp', 'Up'],
  ['thumbsDown', 'Down'],
  ['upRatio', 'Up ratio'],
  ['totalTokens', 'Tokens'],
  ['cost', 'Cost'],
];

function figureCells(f: Figures, currency: string): string {
  return figureColumns
    .map(([key]) => {
      const value = f[key];
      const text = key === 'upRatio' ? ratio(value) : key === 'cost' ? money(value, currency) : n(value ?? 0);
      return `<td class="num">${text}</td>`;
    })
    .join('');
}

const headCells = figureColumns.map(([, label]) => `<th scope="col" class="num">${label}</th>`).join('');

function personaTable(insights: Insights, currency: string): string {
  const rows = insights.personas
    .map(p => `<tr><th scope="row">${escapeHtml(p.name)}</th>${figureCells(p.figures, currency)}</tr>`)
    .join('');
  return (
    `<div class="wrap"><table><thead><tr><th scope="col">Persona</th>${headCells}</tr></thead><tbody>${rows}` +
    `<tr><th scope="row">All</th>${figureCells(insights.figures, currency)}</tr></tbody></table></div>`
  );
}

function dayTable(insights: Insights, currency: string): string {
  const names = new Map(insights.personas.map(p => [p.personaId, p.name]));
  const rows = insights.days
    .map(
      d =>
        `<tr><td>${escapeHtml(d.day)}</td><td>${escapeHtml(names.get(d.personaId) ?? '')}</td>${figureCells(d, currency)}</tr>`,
    )
    .join('');
  return (
    `<div class="wrap"><table><thead><tr><th scope="col">Day (UTC)</th><th scope="col">Persona</th>${headCells}</tr></thead>` +
    `<tbody>${rows || `<tr><td colspan="${figureColumns.length + 2}">No conversations in this period.</td></tr>`}</tbody></table></div>`
  );
}

function questionTable(caption: string, items: RankedQuestion[], includeText: boolean, empty: string): string {
  if (!includeText)
    return `<p class="note">${escapeHtml(caption)}: texts are left out of this report (see --include-text).</p>`;
  if (!items.length) return `<p class="note">${escapeHtml(caption)}: ${escapeHtml(empty)}</p>`;
  const max = items[0]!.count;
  const rows = items
    .map(
      q =>
        `<tr><td>${escapeHtml(q.question)}</td><td class="num">${n(q.count)}</td><td class="bar">${bar(q.count, max)}</td></tr>`,
    )
    .join('');
  return `<table><caption>${escapeHtml(caption)}</caption><thead><tr><th scope="col">Question (normalized)</th><th scope="col" class="num">Asked</th><th scope="col"><span class="label">share</span></th></tr></thead><tbody>${rows}</tbody></table>`;
}

function sourceTable(items: RankedSource[]): string {
  if (!items.length) return '<p class="note">Sources cited most: no reply cited a source.</p>';
  const max = items[0]!.count;
  const rows = items
    .map(s => {
      const url = s.url && /^https?:\/\//i.test(s.url) ? s.url : null;
      const name = url
        ? `<a href="${escapeHtml(url)}" rel="noopener noreferrer">${escapeHtml(s.source)}</a>`
        : escapeHtml(s.source);
      return `<tr><td>${name}</td><td class="num">${n(s.count)}</td><td class="bar">${bar(s.count, max, 'c2')}</td></tr>`;
    })
    .join('');
  return `<table><caption>Sources cited most</caption><thead><tr><th scope="col">Source</th><th scope="col" class="num">Replies</th><th scope="col"><span class="label">share</span></th></tr></thead><tbody>${rows}</tbody></table>`;
}

function pageTable(items: PageFigures[]): string {
  if (!items.length) return '<p class="note">Pages: none.</p>';
  const max = Math.max(...items.map(p => p.conversations));
  const rows = items
    .map(
      p =>
        `<tr><td>${p.page === null ? '<span class="label">no page given</span>' : escapeHtml(p.page)}</td><td class="num">${n(p.conversations)}</td><td class="num">${n(p.questions)}</td><td class="bar">${bar(p.conversations, max, 'c1')}</td></tr>`,
    )
    .join('');
  return `<table><caption>Pages conversations started on</caption><thead><tr><th scope="col">Page</th><th scope="col" class="num">Conversations</th><th scope="col" class="num">Questions</th><th scope="col"><span class="label">share</span></th></tr></thead><tbody>${rows}</tbody></table>`;
}

function personaArticle(p: PersonaInsights, includeText: boolean): string {
  return (
    `<article><h3>${escapeHtml(p.name)}</h3><div class="two">` +
    `<div>${questionTable('Questions asked most', p.topQuestions, includeText, 'none.')}</div>` +
    `<div>${sourceTable(p.topSources)}</div>` +
    `<div>${questionTable(`Questions answered with no source (${n(p.unsourced.count)} replies)`, p.unsourced.questions, includeText, 'every reply cited a source.')}</div>` +
    `<div>${pageTable(p.pages)}</div></div></article>`
  );
}

/** How many replies voted down the page shows. */
const thumbsDownShown = 25;

/** Up to `max` characters (never half of one), with "…" when cut. */
function shorten(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max).join('').trimEnd()}…`;
}

function thumbsDownList(insights: Insights): string {
  const { count, withComment, items } = insights.thumbsDown;
  const names = new Map(insights.personas.map(p => [p.personaId, p.name]));
  const summary = `<p>${n(count)} replies were voted down, ${n(withComment)} with a comment.</p>`;
  if (!insights.includeText) {
    return `${summary}<p class="note">The comments, questions and replies are left out of this report (see --include-text).</p>`;
  }
  if (!items.length) return summary;
  // Those with a comment first, then the newest: the JSON and CSV formats hold every one.
  const shown = items
    .map((item, i) => ({ item, i }))
    .sort((a, b) => Number(b.item.comment !== null) - Number(a.item.comment !== null) || b.i - a.i)
    .slice(0, thumbsDownShown)
    .map(({ item }) => item);
  const more =
    items.length > shown.length
      ? `<p class="note">${n(items.length - shown.length)} more are in the report's JSON and CSV formats.</p>`
      : '';
  const entries = shown
    .map(
      item =>
        `<li><span class="label">${escapeHtml(item.day)} · ${escapeHtml(names.get(item.personaId) ?? '')}${item.tags.length ? ` · ${escapeHtml(item.tags.join(', '))}` : ''}</span>` +
        (item.comment
          ? `<div><span class="label">Comment</span><blockquote>${escapeHtml(item.comment)}</blockquote></div>`
          : '') +
        `<div><span class="label">Question</span><blockquote>${escapeHtml(item.question ?? '')}</blockquote></div>` +
        `<div><span class="label">Reply</span><blockquote>${escapeHtml(shorten(item.reply ?? '', 600))}</blockquote></div></li>`,
    )
    .join('');
  return `${summary}<ol class="feedback">${entries}</ol>${more}`;
}

/** The report as a complete HTML document. */
export function renderHtml(insights: Insights): string {
  const from = insights.period.from.slice(0, 10);
  const last = insights.period.days.at(-1) ?? from;
  const currency = insights.price?.currency ?? 'USD';
  const scope =
    insights.scope.kind === 'organization'
      ? 'the whole organization'
      : `${insights.scope.personaIds.length} persona${insights.scope.personaIds.length === 1 ? '' : 's'}`;
  const title = `Chat insights, ${from} to ${last}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(title)}</title>
<style>${style}</style>
</head>
<body>
<main>
<header><h1>Chat insights</h1>
<p class="sub">${escapeHtml(`${from} to ${last} (UTC) · ${scope} · ${n(insights.read.counted)} conversations of ${n(insights.read.listed)} listed · made ${insights.generatedAt.slice(0, 16).replace('T', ' ')} UTC`)}</p></header>
<section class="cards" aria-label="Totals">${cards(insights)}</section>
<section><h2>Conversations per day</h2>${conversationsChart(insights)}</section>
<section><h2>Thumbs per day</h2>${thumbsChart(insights)}</section>
<section><h2>Personas</h2>${personaTable(insights, currency)}</section>
<section><h2>What visitors asked</h2>${insights.personas.map(p => personaArticle(p, insights.includeText)).join('') || '<p>No conversations in this period.</p>'}</section>
<section><h2>Replies voted down</h2>${thumbsDownList(insights)}</section>
<section><h2>Day by day</h2>${dayTable(insights, currency)}</section>
<footer class="note"><p>Read from the Conversation Service's lists of conversations: each conversation's messages (their times and token
counts) and the metadata the persona-chat backend keeps (the page a conversation started on, the visitor's thumbs and comments, the sources of each
reply, replies stopped or failed). Visitors are counted, never named. Questions are counted in lower case without punctuation. Days are UTC days.
${insights.read.deleted ? `${n(insights.read.deleted)} conversations the visitors deleted are left out.` : ''}
${insights.read.undated ? `${n(insights.read.undated)} messages without a time are left out.` : ''}
${insights.read.inBlob ? `${n(insights.read.inBlob)} conversations keep their messages in a blob the service names, which the report does not read: their messages are not counted.` : ''}</p></footer>
</main>
</body>
</html>
`;
}
