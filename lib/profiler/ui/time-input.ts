/**
 * The times the search form's From and Until fields take, read as the span of time they name:
 * `2026-11-21` is that whole day, `2026-11-21 21:40` that minute, `21-Nov-2026 21:40:54` (as the
 * pages show times) that second, `2026-11-21T21:40:54.250Z` that millisecond. Without a zone
 * (`Z`, `+01:00`) a time is the server's local time, as on the pages. A date or time that does not
 * exist (`2026-02-30`, `24:00`, a local time a daylight saving change skips) is refused, never rolled
 * over into another one; a local time the clocks going back repeat names both of its occurrences.
 */
import { MONTHS } from './format.js';

/** The first and the last millisecond of the span a written time names, both included. */
export interface TimeSpan {
  first: number;
  last: number;
}

/** The span a text names, or why it names none: a phrase to follow the field's name (`The "end" filter ...`). */
export type TimeSpanResult = { ok: true; span: TimeSpan } | { ok: false; problem: string };

const TIME = String.raw`(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?(?: ?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?))?`;
/** `2026-11-21`, then optionally `T` or spaces and a time. */
const ISO_FORM = new RegExp(String.raw`^(\d{4})-(\d{2})-(\d{2})(?:(?:[Tt]| +)${TIME})?$`);
/** `21-Nov-2026`, then optionally spaces and a time: the pages' own format. */
const SHOWN_FORM = new RegExp(String.raw`^(\d{1,2})-([A-Za-z]{3})-(\d{4})(?: +${TIME})?$`);
/** A time then spaces and an offset's digits: what a URL's query makes of `21:40+01:00`. */
const SPACED_OFFSET = /^(.*\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?) +(\d{2}(?::?\d{2})?)$/;
const MONTH_NUMBERS = new Map(MONTHS.map((name, index) => [name.toLowerCase(), index + 1]));
const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** The last instant a Date holds (ECMA-262 time values: 100,000,000 days either side of 1970). */
const MAX_EPOCH_MS = 8.64e15;
const SKIPPED_DAY = "names a day that does not exist in the server's time zone (a time zone change skipped it: the day after it follows the day before)";
const NOT_A_TIME = 'must be a date (2026-11-21, 2026-11-21 21:40, 2026-11-21T21:40:54.250Z, 21-Nov-2026 21:40:54) or epoch milliseconds';

/** Reads epoch milliseconds (a span of one millisecond) or a date, alone or with a time, in one of the forms above. */
export function readTimeSpan(text: string): TimeSpanResult {
  if (/^\d+$/.test(text)) {
    const epochMs = Number(text);
    // Past it no Date holds the time (nor can any profile have it): a client's mistake, not a search that finds nothing.
    if (epochMs > MAX_EPOCH_MS) return refused(`must be epoch milliseconds from 0 to ${MAX_EPOCH_MS} (the last time a date can hold, in the year 275760)`);
    return { ok: true, span: { first: epochMs, last: epochMs } };
  }
  const iso = ISO_FORM.exec(text);
  if (iso !== null) return spanOf(Number(iso[1]), Number(iso[2]), Number(iso[3]), iso.slice(4));
  const shown = SHOWN_FORM.exec(text);
  if (shown !== null) {
    const month = MONTH_NUMBERS.get(shown[2]!.toLowerCase());
    if (month === undefined) return refused('names a month that does not exist (months are written Jan, Feb, ... Dec)');
    return spanOf(Number(shown[3]), month, Number(shown[1]), shown.slice(4));
  }
  // `?start=2026-11-21T21:40+01:00` typed into a URL: its query reads the + as a space.
  // Short texts only: the pattern backtracks over a long run of digits, and no date with a time and an offset is longer.
  const spaced = text.length <= 64 ? SPACED_OFFSET.exec(text) : null;
  if (spaced !== null && readTimeSpan(`${spaced[1]}+${spaced[2]}`).ok) {
    return refused(`has a space where its offset's + should be (a URL's query reads + as a space): write the + as %2B (2026-11-21T21:40%2B01:00), or give the time in UTC with Z`);
  }
  return refused(NOT_A_TIME);
}

/** The span of a date (month from 1) and the time parts the forms capture, each checked against the calendar and the clock. */
function spanOf(year: number, month: number, day: number, time: (string | undefined)[]): TimeSpanResult {
  const [hour, minute, second, fraction, utc, sign, offsetHours, offsetMinutes] = time;
  if (month < 1 || month > 12) return refused('names a month that does not exist (months go from 01 to 12)');
  const days = daysIn(year, month);
  if (day < 1 || day > days) return refused(`names a day that does not exist (${MONTH_NAMES[month - 1]} ${year} has ${days} days)`);
  if (hour === undefined) {
    const first = localInstant(year, month, day, 0, 0, 0, 0);
    // A day a zone skipped whole (Samoa's 30 Dec 2011, crossing the date line) starts on the next one.
    if (new Date(first).getDate() !== day) return refused(SKIPPED_DAY);
    return { ok: true, span: { first, last: lastLocalInstant([year, month, day, 0, 0, 0, 0], DAY_MS) } };
  }
  if (Number(hour) > 23) return refused('names a time that does not exist (hours go from 00 to 23)');
  if (Number(minute) > 59) return refused('names a time that does not exist (minutes go from 00 to 59)');
  if (Number(second ?? 0) > 59) return refused('names a time that does not exist (seconds go from 00 to 59)');
  if (Number(offsetHours ?? 0) > 23 || Number(offsetMinutes ?? 0) > 59) return refused('names a time zone offset that does not exist (offsets go up to 23:59)');
  const millisecond = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  // What the text is precise to: a minute, a second, or the fraction's last digit (at most a millisecond).
  const length = second === undefined ? 60_000 : fraction === undefined ? 1000 : 10 ** Math.max(0, 3 - fraction.length);
  const parts = [year, month, day, Number(hour), Number(minute), Number(second ?? 0), millisecond] as const;
  const offsetMs = (sign === '-' ? -1 : 1) * (Number(offsetHours ?? 0) * 60 + Number(offsetMinutes ?? 0)) * 60_000;
  const zoned = utc !== undefined || sign !== undefined;
  const first = zoned ? utcInstant(...parts) - offsetMs : localInstant(...parts);
  if (zoned) return { ok: true, span: { first, last: first + length - 1 } };
  // A local time a daylight saving change skips (02:30 on a spring-forward night) reads as an hour later: refused, as 24:00 is.
  // To the text's precision, seconds too: where a zone left its local mean time 52 s ahead (St. John's, 30 Mar 1935), 00:00:05
  // read as 00:00:57; the minute 00:00, partly skipped, starts where it exists.
  const read = new Date(first);
  if (read.getDate() !== day) return refused(SKIPPED_DAY);
  const readLate = first + localOffsetMs(first) - utcInstant(...parts);
  if (readLate < 0 || readLate >= length) {
    return refused(`names a local time that does not exist in the server's time zone (a daylight saving change skips it); add an offset such as +01:00`);
  }
  // One the clocks going back repeat (01:30 on a fall-back night) names both times: a Date reads the first, the span runs to the end of the second, so
  // "until" the time a page shows for a profile of the second includes it.
  return { ok: true, span: { first, last: lastLocalInstant(parts, length) } };
}

const DAY_MS = 86_400_000;

/**
 * The last instant shown as the local time `parts` names to its precision (`length` milliseconds of the
 * clock): the latest occurrence of its last millisecond, as the clocks going back may repeat it (01:59:59.999
 * on a fall-back night; 23:59:59.999 of the day before where they go back across midnight, as St. John's did
 * at 00:01 until 2011), or, when a change skips that millisecond, the one before the next time that exists.
 */
function lastLocalInstant(parts: readonly [number, number, number, number, number, number, number], length: number): number {
  const [year, month, day, hour, minute, second, millisecond] = parts;
  // setHours carries the milliseconds past the second into the clock, so this is the local time `length - 1` later.
  const end = localInstant(year, month, day, hour, minute, second, millisecond + length - 1);
  const endWall = utcInstant(year, month, day, hour, minute, second, millisecond) + length - 1;
  if (end + localOffsetMs(end) !== endWall) return localInstant(year, month, day, hour, minute, second, millisecond + length) - 1;
  return laterOccurrence(end);
}

/** The later instant that reads as the same local time as `instant` (the clocks went back within the day after it), else `instant`. */
function laterOccurrence(instant: number): number {
  const shift = localOffsetMs(instant) - localOffsetMs(instant + DAY_MS);
  if (shift <= 0) return instant;
  const later = instant + shift;
  return later + localOffsetMs(later) === instant + localOffsetMs(instant) ? later : instant;
}

/**
 * How far the server's local time is ahead of UTC at `instant`, to the millisecond: getTimezoneOffset()
 * rounds to whole minutes, and the local mean times zones kept before standard time have seconds
 * (New York's -4:56:02 until 1883), so a shift found with it missed the second occurrence of such a time.
 */
function localOffsetMs(instant: number): number {
  const date = new Date(instant);
  return utcInstant(date.getFullYear(), date.getMonth() + 1, date.getDate(), date.getHours(), date.getMinutes(), date.getSeconds(), date.getMilliseconds()) - instant;
}

function refused(problem: string): TimeSpanResult {
  return { ok: false, problem };
}

function daysIn(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** An instant from local calendar parts; setFullYear, as `new Date(y, ...)` would read years 0-99 as 1900-1999. */
function localInstant(year: number, month: number, day: number, hour: number, minute: number, second: number, millisecond: number): number {
  const date = new Date(2000, 0, 1);
  date.setFullYear(year, month - 1, day);
  date.setHours(hour, minute, second, millisecond);
  return date.getTime();
}

function utcInstant(year: number, month: number, day: number, hour: number, minute: number, second: number, millisecond: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, millisecond);
  return date.getTime();
}
