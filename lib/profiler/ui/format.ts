/** Formatting of times, durations, sizes and statuses, shared by the profiler's pages and toolbar. */
import { localTimeZoneName } from '../../errors/index.js';

/** The last instant a Date holds, either side of 1970 (ECMA-262: 100,000,000 days). */
const MAX_DATE_MS = 8.64e15;

/**
 * An instant in UTC (`2026-11-21T21:40:54.640Z`) for `<time datetime>`; empty for a time no Date holds
 * (a corrupt index line's `1e16`), where toISOString() throws: that failed the page of every search for good.
 */
export function isoTime(epochMs: number): string {
  return Number.isFinite(epochMs) && Math.abs(epochMs) <= MAX_DATE_MS ? new Date(epochMs).toISOString() : '';
}

/** English month abbreviations, as the pages write dates (`21-Nov-2026`). */
export const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

interface DateParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The calendar parts of an instant, in the server's local time or in the given IANA time zone. */
function dateParts(epochMs: number, timeZone: string | undefined): DateParts | null {
  const date = new Date(epochMs);
  if (!Number.isFinite(epochMs) || Number.isNaN(date.getTime())) return null;
  const millisecond = ((Math.floor(epochMs) % 1000) + 1000) % 1000;
  if (timeZone === undefined) {
    return {
      year: date.getFullYear(),
      month: date.getMonth(),
      day: date.getDate(),
      hour: date.getHours(),
      minute: date.getMinutes(),
      second: date.getSeconds(),
      millisecond,
    };
  }
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  const parts: Record<string, number> = {};
  for (const part of formatter.formatToParts(date)) if (part.type !== 'literal') parts[part.type] = Number(part.value);
  return {
    year: parts['year']!,
    month: parts['month']! - 1,
    day: parts['day']!,
    hour: parts['hour']! % 24,
    minute: parts['minute']!,
    second: parts['second']!,
    millisecond,
  };
}

/**
 * The IANA name of the zone the pages show times in, said on them: the given one, else the server's
 * (`TZ`, else the system's). Without it `21-Nov-2026 21:40:54` is a different instant for a reader
 * whose browser is elsewhere (a server in a container on UTC), and the search reads un-zoned times in it.
 */
export function shownTimeZone(timeZone?: string): string {
  return timeZone ?? localTimeZoneName();
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/**
 * A profile's time as the search results show it: `21-Nov-2026 21:40:54` (24-hour clock),
 * in the server's local time zone unless an IANA `timeZone` is given. Empty for an invalid time.
 */
export function formatProfileTime(epochMs: number, timeZone?: string): string {
  const p = dateParts(epochMs, timeZone);
  if (p === null) return '';
  // At least four digits, as PHP's `Y` in Symfony's `d-M-Y H:i:s`: `01-Jan-800` was no time the search reads back.
  const year = `${p.year < 0 ? '-' : ''}${pad(Math.abs(p.year), 4)}`;
  return `${pad(p.day)}-${MONTHS[p.month]}-${year} ${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}`;
}

/** A log record's time of day with milliseconds: `21:40:54.123`. Empty for an invalid time. */
export function formatClockTime(epochMs: number, timeZone?: string): string {
  const p = dateParts(epochMs, timeZone);
  if (p === null) return '';
  return `${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)}.${pad(p.millisecond, 3)}`;
}

/** A duration in milliseconds for people: `0.42 ms`, `12.3 ms`, `250 ms`, `1.25 s`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '';
  const abs = Math.abs(ms);
  if (abs >= 1000) return `${trim((ms / 1000).toFixed(2))} s`;
  if (abs >= 100) return `${Math.round(ms)} ms`;
  if (abs >= 10) return `${trim(ms.toFixed(1))} ms`;
  return `${trim(ms.toFixed(2))} ms`;
}

/** A size in bytes for people, in binary units: `512 B`, `3.4 KiB`, `24.5 MiB`. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '';
  const sign = bytes < 0 ? '-' : '';
  let value = Math.abs(bytes);
  if (value < 1024) return `${sign}${Math.round(value)} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let unit = -1;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${sign}${trim(value.toFixed(1))} ${units[unit]}`;
}

/** The CSS class of a status code's family: `status-2xx` ... `status-5xx`, or `status-none`. */
export function statusClass(status: number): string {
  if (!Number.isInteger(status) || status < 100 || status > 599) return 'status-none';
  return `status-${Math.floor(status / 100)}xx`;
}

function trim(fixed: string): string {
  return fixed.includes('.') ? fixed.replace(/\.?0+$/, '') : fixed;
}
