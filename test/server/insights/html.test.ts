import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { computeInsights } from '../../../src/server/insights/compute.js';
import { csvText, renderCsv } from '../../../src/server/insights/csv.js';
import { escapeHtml, renderHtml } from '../../../src/server/insights/html.js';
import { hostileConversation } from './support.js';

const report = (includeText: boolean) =>
  computeInsights([hostileConversation('2026-03-01T10:00:00Z')], {
    from: new Date('2026-03-01T00:00:00Z'),
    to: new Date('2026-03-02T00:00:00Z'),
    includeText,
    now: new Date('2026-03-02T00:00:00Z'),
  });

describe('renderHtml', () => {
  it('escapes every text and names no visitor', () => {
    assert.equal(
      escapeHtml(`<a href="x" title='y'>&</a>`),
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
    const html = renderHtml(report(true));
    assert.doesNotMatch(html, /<(img|iframe|script|i)[\s>]/);
    assert.doesNotMatch(html, /href="javascript/);
    assert.ok(!html.includes('hostile'));
    assert.match(html, /&lt;svg onload=alert\(3\)&gt;/);
  });

  it('holds no script and loads nothing, as its own policy says', () => {
    const html = renderHtml(report(true));
    assert.match(
      html,
      /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'/,
    );
    assert.doesNotMatch(html, /<(script|link|img|iframe|object|embed)\b|<[a-z][^>]*\ssrc=/i);
    const sheet = /<style>([^<]*)<\/style>/.exec(html)![1]!;
    assert.doesNotMatch(sheet, /url\(|@import/);
    assert.equal(html.match(/<style>/g)!.length, 1);
  });

  it('is the same report for the same figures', () => {
    assert.equal(renderHtml(report(false)), renderHtml(report(false)));
  });
});

describe('renderCsv', () => {
  it('writes a text that a spreadsheet would run as a formula as text', () => {
    assert.deepEqual(['=1+1', '+x', '-x', '@x', '\tx', 'x=1'].map(csvText), [
      "'=1+1",
      "'+x",
      "'-x",
      "'@x",
      "'\tx",
      'x=1',
    ]);
  });

  it('quotes cells with commas, quotes and line breaks', () => {
    const csv = renderCsv(report(true));
    assert.ok(csv.endsWith('\r\n'));
    assert.match(
      csv,
      /"<\/blockquote><style>body\{background:url\(https:\/\/tracker\.example\/bg\.png\)\}<\/style><script>alert\(2\)<\/script>"|<\/blockquote>/,
    );
    assert.match(
      csv,
      /thumbs_down,2026-03-01,[^,]*,Ada,comment,"<a href=""https:\/\/tracker\.example\/"">click<\/a> & <svg onload=alert\(3\)>",,1,/,
    );
  });
});
