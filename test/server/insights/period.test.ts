import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PeriodError, parsePeriod } from '../../../src/server/insights/period.js';

const now = new Date('2026-03-10T12:00:00Z');
const iso = (input: Parameters<typeof parsePeriod>[0]) => {
  const { from, to } = parsePeriod(input, now);
  return [from.toISOString(), to.toISOString()];
};

describe('parsePeriod', () => {
  it('counts back from now in hours, days or weeks; 30 days when nothing is given', () => {
    assert.deepEqual(iso({ since: '7d' }), ['2026-03-03T12:00:00.000Z', now.toISOString()]);
    assert.deepEqual(iso({ since: '12h' }), ['2026-03-10T00:00:00.000Z', now.toISOString()]);
    assert.deepEqual(iso({ since: '2w' }), ['2026-02-24T12:00:00.000Z', now.toISOString()]);
    assert.deepEqual(iso({}), ['2026-02-08T12:00:00.000Z', now.toISOString()]);
  });

  it('takes dates as whole UTC days, --to included, and times with their zone', () => {
    assert.deepEqual(iso({ from: '2026-02-01', to: '2026-02-28' }), [
      '2026-02-01T00:00:00.000Z',
      '2026-03-01T00:00:00.000Z',
    ]);
    assert.deepEqual(iso({ from: '2026-03-01' }), ['2026-03-01T00:00:00.000Z', now.toISOString()]);
    assert.deepEqual(iso({ from: '2026-03-01T10:00:00+02:00', to: '2026-03-01T12:00:00Z' }), [
      '2026-03-01T08:00:00.000Z',
      '2026-03-01T12:00:00.000Z',
    ]);
  });

  it('takes a leap day, and a period of ten years', () => {
    assert.deepEqual(iso({ from: '2024-02-29', to: '2024-02-29' }), [
      '2024-02-29T00:00:00.000Z',
      '2024-03-01T00:00:00.000Z',
    ]);
    assert.deepEqual(iso({ from: '2016-11-29T12:00Z' }), ['2016-11-29T12:00:00.000Z', now.toISOString()]);
  });

  it('names the flag that is wrong', () => {
    const cases: [Parameters<typeof parsePeriod>[0], RegExp][] = [
      [{ since: '7' }, /--since must be/],
      [{ since: '0d' }, /--since must be/],
      [{ since: '7d', from: '2026-01-01' }, /not both/],
      [{ to: '2026-01-01' }, /--to needs --from/],
      [{ from: '01/02/2026' }, /--from must be a date/],
      [{ from: '2026-03-01T10:00:00' }, /--from must be a date/],
      [{ from: '2026-03-05', to: '2026-03-01' }, /must end after it starts/],
      // Dates and times that do not exist, which Date.parse would move to another day.
      [{ from: '2026-02-30' }, /--from must be a date that exists/],
      [{ from: '2026-01-01', to: '2026-11-31' }, /--to must be a date that exists/],
      [{ from: '2026-13-01' }, /--from must be a date that exists/],
      [{ from: '2026-03-01T24:00Z' }, /--from must be a date that exists/],
      [{ from: '2026-03-01T10:60:00Z' }, /--from must be a date that exists/],
      [{ from: '2026-03-01T10:00:00+25:00' }, /--from must be a date that exists/],
      // Longer than ten years: a bar a day would make charts of hundreds of thousands of bars.
      [{ from: '1000-01-01' }, /at most ten years/],
      [{ since: '99999w' }, /at most ten years/],
    ];
    for (const [input, message] of cases)
      assert.throws(
        () => parsePeriod(input, now),
        (e: Error) => e instanceof PeriodError && message.test(e.message),
      );
  });
});
