/**
 * @module
 * The period of an insights report, from what the owner typed: `--since 7d` (hours, days or weeks back from now),
 * or `--from` and `--to` (dates, which are whole UTC days, `--to` included; or times with a zone). Pure: `now` is
 * given.
 */

export interface PeriodInput {
  since?: string;
  from?: string;
  to?: string;
}

export interface Period {
  /** Inclusive. */
  from: Date;
  /** Exclusive. */
  to: Date;
}

/** An error in what the owner typed; its message names the flag. */
export class PeriodError extends Error {
  override readonly name = 'PeriodError';
}

const units: Record<string, number> = { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };
/** The longest period a report covers: ten years, a bar of its charts for each day. */
export const maxPeriodDays = 3653;
const dateOnly = /^\d{4}-\d{2}-\d{2}$/;
const dateTime = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-](\d{2}):(\d{2}))$/;

/** A calendar date that exists: Date.parse takes 2026-02-30 for March 2. */
const realDate = (date: string) => {
  const ms = Date.parse(`${date}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === date;
};

/** A time whose hours, minutes, seconds and zone are in range. */
const realTime = (match: RegExpExecArray) => {
  const [, date, hours, minutes, seconds = '0', , , zoneHours = '0', zoneMinutes = '0'] = match;
  return (
    realDate(date!) &&
    Number(hours) < 24 &&
    Number(minutes) < 60 &&
    Number(seconds) < 60 &&
    Number(zoneHours) < 24 &&
    Number(zoneMinutes) < 60
  );
};

function instant(flag: string, value: string, endOfDay: boolean): Date {
  const time = dateTime.exec(value);
  const ms = dateOnly.test(value)
    ? realDate(value)
      ? Date.parse(`${value}T00:00:00Z`)
      : NaN
    : time && realTime(time)
      ? Date.parse(value)
      : NaN;
  if (Number.isNaN(ms)) {
    throw new PeriodError(`--${flag} must be a date that exists (2026-03-01) or a time with a zone`);
  }
  // A date as --to means the whole of that day.
  return new Date(endOfDay && dateOnly.test(value) ? ms + units.d! : ms);
}

/** The period the input names; 30 days back from `now` when it names none. */
export function parsePeriod(input: PeriodInput, now: Date): Period {
  if (input.since !== undefined && (input.from !== undefined || input.to !== undefined)) {
    throw new PeriodError('give --since, or --from and --to, not both');
  }
  let period: Period;
  if (input.from !== undefined || input.to !== undefined) {
    if (input.from === undefined) throw new PeriodError('--to needs --from');
    period = {
      from: instant('from', input.from, false),
      to: input.to === undefined ? now : instant('to', input.to, true),
    };
  } else {
    const since = input.since ?? '30d';
    const match = /^(\d{1,5})([hdw])$/.exec(since);
    if (!match || Number(match[1]) === 0) throw new PeriodError('--since must be a number and h, d or w, e.g. 7d');
    period = { from: new Date(now.getTime() - Number(match[1]) * units[match[2]!]!), to: now };
  }
  if (!(period.from < period.to)) throw new PeriodError('the period must end after it starts');
  if (period.to.getTime() - period.from.getTime() > maxPeriodDays * units.d!) {
    throw new PeriodError(`the period must be at most ten years (${maxPeriodDays} days)`);
  }
  return period;
}
