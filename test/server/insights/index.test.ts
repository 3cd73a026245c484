import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startEmulator } from '../../../src/emulator/node.js';
import type { RunningEmulator } from '../../../src/emulator/node.js';
import { formatInsights, insights } from '../../../src/server/insights/index.js';
import type { Figures, Insights, Lists } from '../../../src/server/insights/index.js';
import { ServiceClient } from '../../../src/service/client.js';
import type { Conversation } from '../../../src/service/types.js';
import { ada, apiKey, juniper } from '../../support/service.js';
import { hostileConversation } from './support.js';

const from = new Date('2026-02-08T00:00:00Z');
const to = new Date('2026-03-01T00:00:00Z');
const price = 0.002;

/** The ten largest counts of a map, largest first. */
const top = <K>(map: Map<K, number>) => [...map.values()].sort((a, b) => b - a).slice(0, 10);

type Obj = Record<string, Record<string, Record<string, unknown>>>;

/**
 * The report's figures counted again, plainly, from the emulator's own store: one pass per figure over every
 * message of every conversation that was not deleted.
 */
function expected(conversations: Conversation[], personaId?: string, start = from, end = to) {
  const inPeriod = (t?: string) => t !== undefined && Date.parse(t) >= start.getTime() && Date.parse(t) < end.getTime();
  const live = conversations.filter(
    c => !c.isDeleted && c.conversationStatus !== 'deleted' && (!personaId || c.personaId === personaId),
  );
  const outcomes = (c: Conversation) =>
    Object.values(
      ((c.metadata as Obj | undefined)?.personaChat?.outcomes ?? {}) as Record<
        string,
        { status: string; timestamp: string }
      >,
    );
  const messages = live.flatMap(c =>
    (c.chatMessages ?? []).map((m, i) => ({ c, m, i })).filter(x => inPeriod(x.m.timestamp)),
  );
  const counted = live.filter(c => messages.some(x => x.c === c) || outcomes(c).some(o => inPeriod(o.timestamp)));
  const replies = messages.filter(x => x.m.role === 'assistant');
  // The backend's thumbs, kept in the metadata, and those in the service's own `feedbacks`.
  const votes = replies.flatMap(x => [
    (x.c.metadata as Obj).personaChat?.feedback?.[x.m.messageId!] as { score: number; comments?: string } | undefined,
    ...(x.m.feedbacks ?? []).map(f => ({ score: Math.sign(f.score ?? 0), comments: f.comments })),
  ]);
  const up = votes.filter(v => v?.score === 1).length;
  const down = votes.filter(v => v?.score === -1).length;
  const sum = (key: 'promptTokens' | 'completionTokens' | 'totalTokens') =>
    messages.reduce((n, x) => n + (x.m[key] ?? 0), 0);
  const normal = (text: string) =>
    text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s]+/gu, ' ')
      .replace(/\s+/g, ' ')
      .trim();
  const questionCounts = new Map<string, number>();
  for (const x of messages)
    if (x.m.role === 'user')
      questionCounts.set(normal(x.m.content), (questionCounts.get(normal(x.m.content)) ?? 0) + 1);
  const cites = (x: (typeof replies)[number]) =>
    (
      (x.c.metadata as Obj).personaChat?.citations?.[x.m.messageId!] as
        { citations: { sourceUrl?: string; sourceName?: string }[] } | undefined
    )?.citations ?? [];
  const sources = new Map<string, number>();
  for (const x of replies)
    for (const url of new Set(cites(x).map(c => c.sourceUrl!))) sources.set(url, (sources.get(url) ?? 0) + 1);
  const unsourcedQuestions = new Map<string, number>();
  for (const x of replies) {
    const question = x.c.chatMessages![x.i - 1];
    if (cites(x).length === 0 && question?.role === 'user') {
      unsourcedQuestions.set(normal(question.content), (unsourcedQuestions.get(normal(question.content)) ?? 0) + 1);
    }
  }
  const pages = new Map<string | null, number>();
  const pageQuestions = new Map<string | null, number>();
  for (const c of counted) {
    const page = ((c.metadata as Obj).client?.page as unknown as string | undefined) ?? null;
    pages.set(page, (pages.get(page) ?? 0) + 1);
    const questions = messages.filter(x => x.c === c && x.m.role === 'user').length;
    pageQuestions.set(page, (pageQuestions.get(page) ?? 0) + questions);
  }
  const outcomesIn = live.flatMap(c => outcomes(c).filter(o => inPeriod(o.timestamp)));
  return {
    figures: {
      conversations: counted.length,
      messages: messages.length,
      questions: messages.filter(x => x.m.role === 'user').length,
      replies: replies.length,
      visitors: new Set([
        ...messages.map(x => x.c.externalUserId),
        ...live.filter(c => outcomes(c).some(o => inPeriod(o.timestamp))).map(c => c.externalUserId),
      ]).size,
      stopped: outcomesIn.filter(o => o.status === 'stopped').length,
      failed: outcomesIn.filter(o => o.status === 'failed').length,
      unanswered: messages.filter(x => x.m.role === 'user' && x.c.chatMessages![x.i + 1]?.role !== 'assistant').length,
      thumbsUp: up,
      thumbsDown: down,
      upRatio: up + down ? up / (up + down) : null,
      promptTokens: sum('promptTokens'),
      completionTokens: sum('completionTokens'),
      totalTokens: sum('totalTokens'),
      cost: (sum('totalTokens') / 1000) * price,
    },
    questionCounts,
    topQuestionCounts: top(questionCounts),
    sources,
    unsourced: replies.filter(x => cites(x).length === 0).length,
    unsourcedQuestions,
    pages,
    pageQuestions,
    withComment: votes.filter(v => v?.score === -1 && v.comments).length,
  };
}

describe('insights over a seeded emulator', () => {
  let running: RunningEmulator;
  let client: ServiceClient;
  let report: Insights;
  let stored: Conversation[];

  before(async () => {
    running = await startEmulator({ apiKey, seed: { conversations: 400, end: '2026-03-01' } });
    running.emulator.store.add(hostileConversation('2026-02-20T09:00:00Z'));
    stored = structuredClone([...running.emulator.store.values()]);
    client = new ServiceClient({ baseUrl: running.url, apiKey });
    report = await insights({ service: client, from, to, includeText: true, pricePer1K: price });
  });
  after(async () => {
    client.close();
    await running.close();
  });

  it('has every total the store has', () => {
    const want = expected(stored);
    assert.deepEqual(report.figures, want.figures);
    const f = want.figures;
    assert.ok(f.stopped > 0 && f.failed > 0 && f.thumbsDown > 0 && f.unanswered > 0, 'the seed has them all');
    assert.ok(
      stored.some(c => c.chatMessages?.some(m => m.feedbacks?.length)),
      "the seed has thumbs in the service's own feedbacks",
    );
    assert.equal(report.read.listed, stored.filter(c => !c.isDeleted).length);
  });

  it('has every total of each persona and each of its days, and its days add up to it', () => {
    for (const persona of [ada, juniper]) {
      const mine = report.personas.find(p => p.personaId === persona.personaId)!;
      assert.equal(mine.name, persona.name);
      assert.deepEqual(mine.figures, expected(stored, persona.personaId).figures);
      const days = report.days.filter(d => d.personaId === persona.personaId);
      for (const { day, personaId: _, conversations: __, ...figures } of days) {
        // A conversation counts on one day of the period; every other figure is the day's own.
        const start = new Date(`${day}T00:00:00Z`);
        const { conversations: ___, ...want } = expected(
          stored,
          persona.personaId,
          start,
          new Date(start.getTime() + 86_400_000),
        ).figures;
        assert.deepEqual(figures, want, day);
      }
      for (const key of [
        'conversations',
        'messages',
        'stopped',
        'failed',
        'thumbsUp',
        'thumbsDown',
        'totalTokens',
      ] as const) {
        assert.equal(
          days.reduce((n, d) => n + d[key], 0),
          mine.figures[key],
          key,
        );
      }
      assert.ok(days.every(d => d.day >= '2026-02-08' && d.day <= '2026-02-28'));
    }
  });

  it('ranks the questions, sources and pages as the store counts them, overall and for each persona', () => {
    const check = (lists: Lists, want: ReturnType<typeof expected>, who: string) => {
      assert.deepEqual(
        lists.topQuestions.map(q => q.count),
        want.topQuestionCounts,
        who,
      );
      for (const q of lists.topQuestions) assert.equal(q.count, want.questionCounts.get(q.question), q.question);
      assert.deepEqual(
        lists.topSources.map(s => s.count),
        top(want.sources),
        who,
      );
      for (const s of lists.topSources) assert.equal(s.count, want.sources.get(s.url!), s.source);
      assert.equal(lists.unsourced.count, want.unsourced, who);
      assert.deepEqual(
        lists.unsourced.questions.map(q => q.count),
        top(want.unsourcedQuestions),
        who,
      );
      for (const q of lists.unsourced.questions) {
        assert.equal(q.count, want.unsourcedQuestions.get(q.question), q.question);
      }
      assert.deepEqual(
        lists.pages.map(p => p.conversations),
        top(want.pages),
        who,
      );
      for (const p of lists.pages) {
        assert.equal(p.conversations, want.pages.get(p.page), String(p.page));
        assert.equal(p.questions, want.pageQuestions.get(p.page), String(p.page));
      }
      assert.equal(lists.thumbsDown.count, want.figures.thumbsDown, who);
      assert.equal(lists.thumbsDown.withComment, want.withComment, who);
    };
    check(report, expected(stored), 'all');
    for (const persona of [ada, juniper]) {
      check(
        report.personas.find(p => p.personaId === persona.personaId)!,
        expected(stored, persona.personaId),
        persona.name,
      );
    }
    assert.equal(report.topQuestions[0]!.question, 'how do i install the widget', 'two spellings count as one');
    assert.ok(report.unsourced.questions.length > 0, 'the seed has questions answered with no source');
  });

  it('says the same in JSON and CSV', () => {
    assert.deepEqual(JSON.parse(formatInsights(report, 'json')), JSON.parse(JSON.stringify(report)));
    const rows = parseCsv(formatInsights(report, 'csv'));
    const [head, ...body] = rows;
    const at = (name: string) => head!.indexOf(name);
    const value = (section: string, metric: string, personaId = '', day = '') =>
      body.find(
        r =>
          r[at('section')] === section &&
          r[at('metric')] === metric &&
          r[at('persona_id')] === personaId &&
          r[at('day')] === day,
      )?.[at('value')];
    for (const [metric, v] of Object.entries(report.figures))
      assert.equal(value('total', metric), v === null ? '' : String(v), metric);
    for (const p of report.personas) {
      for (const [metric, v] of Object.entries(p.figures))
        assert.equal(value('persona', metric, p.personaId!), String(v), metric);
    }
    for (const d of report.days) {
      for (const [metric, v] of Object.entries(d)) {
        if (metric !== 'day' && metric !== 'personaId') {
          assert.equal(value('day', metric, d.personaId!, d.day), v === null ? '' : String(v), `${d.day} ${metric}`);
        }
      }
    }
    // Every list, overall and for each persona, item by item.
    const list = (section: string, personaId: string, metric?: string) =>
      body
        .filter(
          r =>
            r[at('section')] === section &&
            r[at('persona_id')] === personaId &&
            r[at('day')] === '' &&
            (metric === undefined || r[at('metric')] === metric),
        )
        .map(r => [r[at('item')], r[at('url')], Number(r[at('value')])]);
    for (const [lists, personaId] of [[report, ''] as const, ...report.personas.map(p => [p, p.personaId!] as const)]) {
      assert.deepEqual(
        list('question', personaId),
        lists.topQuestions.map(q => [q.question, '', q.count]),
      );
      assert.deepEqual(
        list('source', personaId),
        lists.topSources.map(s => [s.source, s.url ?? '', s.count]),
      );
      assert.deepEqual(list('unsourced', personaId), [['', '', lists.unsourced.count]]);
      assert.deepEqual(
        list('unsourced_question', personaId),
        lists.unsourced.questions.map(q => [q.question, '', q.count]),
      );
      for (const metric of ['conversations', 'questions'] as const) {
        assert.deepEqual(
          list('page', personaId, metric),
          lists.pages.map(p => [p.page ?? '', '', p[metric]]),
        );
      }
      assert.deepEqual(list('thumbs_down', personaId, 'replies'), [['', '', lists.thumbsDown.count]]);
      assert.deepEqual(list('thumbs_down', personaId, 'with_comment'), [['', '', lists.thumbsDown.withComment]]);
    }
    for (const [metric, v] of Object.entries(report.read)) assert.equal(value('read', metric), String(v), metric);
    const thumbsDown = body.filter(r => r[at('section')] === 'thumbs_down' && r[at('metric')] === 'comment');
    assert.equal(thumbsDown.length, report.thumbsDown.count);
    assert.ok(
      thumbsDown.some(r => r[at('question')] === '<img src=https://tracker.example/pixel.gif onerror=alert(1)>'),
    );
  });

  it('says the same in HTML, and escapes what visitors wrote', () => {
    const html = formatInsights(report, 'html');
    const text = html
      .replace(/<[^>]*>/g, ' ')
      .replace(/&amp;/g, '&')
      .replace(/&#39;/g, "'")
      .replace(/&quot;/g, '"');
    const number = (n: number) => n.toLocaleString('en-US');
    assert.match(text, new RegExp(`${number(report.figures.conversations)}\\s+conversations`));
    assert.match(text, new RegExp(`${number(report.figures.questions)}\\s+questions`));
    assert.match(text, new RegExp(`${number(report.figures.visitors)}\\s+visitors`));
    assert.match(
      text,
      new RegExp(
        `${Math.round(report.figures.upRatio! * 100)}%\\s+thumbs up \\(${report.figures.thumbsUp} up, ${report.figures.thumbsDown} down\\)`,
      ),
    );
    assert.match(text, new RegExp(`${number(report.figures.totalTokens)}\\s+tokens`));
    assert.match(text, new RegExp(`\\$${report.figures.cost!.toFixed(2)}`));
    // The persona table and the day table, cell by cell.
    const cells = (f: Figures) => [
      number(f.conversations),
      number(f.questions),
      number(f.replies),
      number(f.visitors),
      number(f.stopped),
      number(f.failed),
      number(f.unanswered),
      number(f.thumbsUp),
      number(f.thumbsDown),
      f.upRatio === null ? '–' : `${Math.round(f.upRatio * 100)}%`,
      number(f.totalTokens),
      // Cents; below a cent, four significant digits.
      f.cost! > 0 && f.cost! < 0.01 ? `$${Number(f.cost!.toPrecision(4))}` : `$${f.cost!.toFixed(2)}`,
    ];
    const rows = tableRows(html);
    for (const p of report.personas) assert.ok(has(rows, [p.name, ...cells(p.figures)]), p.name);
    assert.ok(has(rows, ['All', ...cells(report.figures)]));
    const names = new Map(report.personas.map(p => [p.personaId, p.name]));
    for (const d of report.days) assert.ok(has(rows, [d.day, names.get(d.personaId)!, ...cells(d)]), d.day);
    // Each persona's lists.
    for (const p of report.personas) {
      for (const q of p.topQuestions) assert.ok(has(rows, [q.question, number(q.count), '']), q.question);
      for (const q of p.unsourced.questions) assert.ok(has(rows, [q.question, number(q.count), '']), q.question);
      for (const s of p.topSources) assert.ok(has(rows, [s.source, number(s.count), '']), s.source);
      for (const pg of p.pages) {
        const page = pg.page ?? 'no page given';
        assert.ok(has(rows, [page, number(pg.conversations), number(pg.questions), '']), page);
      }
      assert.match(text, new RegExp(`answered with no source \\(${number(p.unsourced.count)} replies\\)`));
    }
    assert.match(
      text,
      new RegExp(
        `${number(report.thumbsDown.count)} replies were voted down, ${number(report.thumbsDown.withComment)} with a comment`,
      ),
    );
    assert.doesNotMatch(html, /<(img|iframe|script|svg onload|a href="javascript)/i);
    assert.match(html, /&lt;img src=https:\/\/tracker\.example\/pixel\.gif onerror=alert\(1\)&gt;/);
    assert.ok(!html.includes('visitor-') && !html.includes('anon_'), 'no visitor is named');
  });

  it('leaves every text out unless asked, and names no visitor in any format', async () => {
    const counts = await insights({ service: client, from, to });
    assert.deepEqual(counts.figures, { ...report.figures, cost: null });
    assert.deepEqual([counts.topQuestions, counts.unsourced.questions, counts.thumbsDown.items], [[], [], []]);
    for (const format of ['html', 'json', 'csv'] as const) {
      const out = formatInsights(counts, format);
      assert.ok(!out.includes('install the widget') && !out.includes('tracker.example/pixel'), format);
      assert.ok(!/anon_|visitor-/.test(out), format);
    }
  });

  it('reads one persona, or several, from their own lists', async () => {
    const one = await insights({ service: client, from, to, personaIds: [juniper.personaId] });
    assert.deepEqual(
      one.personas.map(p => p.personaId),
      [juniper.personaId],
    );
    assert.deepEqual(one.figures, { ...expected(stored, juniper.personaId).figures, cost: null });
    const both = await insights({
      service: client,
      from,
      to,
      personaIds: [ada.personaId, juniper.personaId],
      pricePer1K: price,
    });
    assert.deepEqual(both.figures, report.figures);
  });
});

/** The text of each cell of each row of the HTML's tables, unescaped. */
function tableRows(html: string): string[][] {
  const unescape = (text: string) =>
    text
      .replace(/<[^>]*>/g, '')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&')
      .trim();
  return [...html.matchAll(/<tr>(.*?)<\/tr>/gs)].map(([, row]) =>
    [...row!.matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/gs)].map(([, cell]) => unescape(cell!)),
  );
}

/** Whether one of the rows is exactly this one. */
const has = (rows: string[][], row: string[]) =>
  rows.some(r => r.length === row.length && r.every((c, i) => c === row[i]));

/** RFC 4180, as the report writes it. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += c;
  }
  return rows;
}
