/**
 * Parses `spec.schedule`. The CRD declares `format: date-time`, so the API server admits RFC 3339 only
 * (`2019-04-12T10:12:00Z`, `2019-04-12T12:12:00.25+02:00`, lower-case `t`/`z`); all of that parses.
 * Values stored before the schema validated them (the book's CRD had no format) are read leniently
 * where the meaning is unambiguous: a space for `T`, `+0200` offsets, minutes precision, and no zone at
 * all meaning UTC (the book's "UTC time"). Anything else is an invalid schedule.
 *
 * Fractions finer than a millisecond round up, so the command never starts before its schedule.
 * Leap second 60 counts as the next second.
 */

export type ScheduleParse = { ok: true; epochMs: number } | { ok: false; error: string };

const pattern =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$/;

export function parseSchedule(value: unknown): ScheduleParse {
  if (typeof value !== 'string') return { ok: false, error: 'spec.schedule must be a string' };
  const match = pattern.exec(value);
  if (!match)
    return {
      ok: false,
      error: `spec.schedule "${value}" is not an RFC 3339 date-time (e.g. 2019-04-12T10:12:00Z)`,
    };
  const [, y, mo, d, h, mi, s, fraction, , sign, oh, om] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s ?? '0');
  const offsetHours = Number(oh ?? '0');
  const offsetMinutes = Number(om ?? '0');
  const daysInMonth = utc(year, month, 0, 0, 0, 0).getUTCDate();
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysInMonth ||
    hour > 23 ||
    minute > 59 ||
    second > 60 ||
    offsetHours > 23 ||
    offsetMinutes > 59
  ) {
    return { ok: false, error: `spec.schedule "${value}" is out of range` };
  }
  const fractionMs = fraction ? Math.ceil(Number(`0.${fraction}`) * 1000) : 0;
  const offsetMs = (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  return {
    ok: true,
    epochMs: utc(year, month - 1, day, hour, minute, second).getTime() + fractionMs - offsetMs,
  };
}

/** Like Date.UTC, without its mapping of years 0..99 to 1900..1999. Day 0 is the previous month's last. */
function utc(
  year: number,
  monthIndex: number,
  day: number,
  hour: number,
  minute: number,
  second: number,
): Date {
  const date = new Date(0);
  date.setUTCFullYear(year, monthIndex, day);
  date.setUTCHours(hour, minute, second, 0);
  return date;
}
