import { runInNewContext } from 'node:vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { formatBytes, formatClockTime, formatDuration, formatProfileTime } from '../../../../lib/profiler/ui/index.js';
import { prettyJson } from '../../../../lib/profiler/ui/values.js';

const instant = Date.UTC(2026, 10, 21, 21, 40, 54, 123);

test('formatProfileTime writes DD-Mon-YYYY HH:MM:SS in the given time zone', () => {
  assert.is(formatProfileTime(instant, 'UTC'), '21-Nov-2026 21:40:54');
  assert.is(formatProfileTime(instant, 'Asia/Tokyo'), '22-Nov-2026 06:40:54');
  assert.is(formatProfileTime(Date.UTC(2026, 0, 5, 3, 4, 5), 'UTC'), '05-Jan-2026 03:04:05');
});

test('formatProfileTime uses a 24-hour clock, midnight as 00', () => {
  assert.is(formatProfileTime(Date.UTC(2026, 6, 1, 0, 0, 9), 'UTC'), '01-Jul-2026 00:00:09');
  assert.is(formatProfileTime(Date.UTC(2026, 6, 1, 23, 59, 59), 'UTC'), '01-Jul-2026 23:59:59');
});

test('formatProfileTime without a time zone uses the server local time', () => {
  const date = new Date(instant);
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const two = (n: number): string => String(n).padStart(2, '0');
  const expected = `${two(date.getDate())}-${months[date.getMonth()]}-${date.getFullYear()} ${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
  assert.is(formatProfileTime(instant), expected);
  assert.match(formatProfileTime(instant), /^\d{2}-[A-Z][a-z]{2}-\d{4} \d{2}:\d{2}:\d{2}$/);
});

test('formatProfileTime gives an empty string for an invalid time', () => {
  assert.is(formatProfileTime(Number.NaN), '');
});

test('formatClockTime writes HH:MM:SS.mmm', () => {
  assert.is(formatClockTime(instant, 'UTC'), '21:40:54.123');
  assert.is(formatClockTime(Date.UTC(2026, 10, 21, 1, 2, 3, 4), 'UTC'), '01:02:03.004');
});

test('formatDuration picks precision by magnitude and switches to seconds from 1000 ms', () => {
  assert.is(formatDuration(0.05), '0.05 ms');
  assert.is(formatDuration(6.5), '6.5 ms');
  assert.is(formatDuration(12.34), '12.3 ms');
  assert.is(formatDuration(250.4), '250 ms');
  assert.is(formatDuration(1234.5), '1.23 s');
  assert.is(formatDuration(0), '0 ms');
});

test('formatBytes uses binary units', () => {
  assert.is(formatBytes(512), '512 B');
  assert.is(formatBytes(1536), '1.5 KiB');
  assert.is(formatBytes(12.5 * 1024 * 1024), '12.5 MiB');
});

test('prettyJson shows an Error of another realm (a vm context\'s) by name and message, as one of this realm, not as {}', () => {
  assert.equal(JSON.parse(prettyJson({ error: runInNewContext('new TypeError("x")') })), { error: 'TypeError: x' });
});

test.run();
