import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { BadRequestHttpError } from '../../../kernel/index.js';
import { parseCriteria } from '../../../lib/profiler/profiler-controller.js';
import { formatProfileTime } from '../../../lib/profiler/ui/format.js';

const test = suite('parseCriteria: start and end');
let savedTz: string | undefined;

// The search pages show local times: a server whose zone is not UTC is where the filters must agree with them.
test.before(() => {
  savedTz = process.env.TZ;
  process.env.TZ = 'America/New_York';
});
test.after(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

const criteria = (query: string) => parseCriteria(new URLSearchParams(query)).criteria;

test('a date alone is that day in local time, as every time the pages show (not UTC midnight)', () => {
  assert.is(criteria('start=2026-11-21').start, new Date(2026, 10, 21).getTime());
  assert.is(criteria('start=2026-11-21').start, Date.UTC(2026, 10, 21, 5));
});

test('"until" a date includes the whole of that day', () => {
  assert.is(criteria('end=2026-11-21').end, new Date(2026, 10, 22).getTime() - 1);
});

test('"until" the time shown for a profile includes that profile (its milliseconds are not shown)', () => {
  const time = new Date(2026, 10, 21, 21, 40, 54, 640).getTime();
  const shown = formatProfileTime(time);
  assert.is(shown, '21-Nov-2026 21:40:54');
  const { start, end } = criteria(`start=${encodeURIComponent(shown)}&end=${encodeURIComponent(shown)}`);
  assert.ok(start! <= time && time <= end!, `${start} <= ${time} <= ${end}`);
});

test('epoch milliseconds and times with milliseconds are taken exactly', () => {
  assert.is(criteria('end=1795297254000').end, 1795297254000);
  assert.is(criteria('end=2026-11-21T21:40:54.250Z').end, Date.UTC(2026, 10, 21, 21, 40, 54, 250));
});

test('epoch milliseconds past the last time a Date holds are a 400 naming the filter, as a bad limit is; the last one is taken', () => {
  for (const query of ['start=99999999999999999999', 'end=99999999999999999999', 'end=8640000000000001', `start=${'9'.repeat(400)}`]) {
    const name = query.slice(0, query.indexOf('='));
    try {
      criteria(query);
      assert.unreachable(query);
    } catch (error) {
      assert.instance(error, BadRequestHttpError, query);
      assert.is((error as BadRequestHttpError).status, 400, query);
      assert.match((error as Error).message, `The "${name}" filter must be epoch milliseconds from 0 to 8640000000000000`, query);
      assert.match((error as Error).message, `got "${query.slice(name.length + 1, name.length + 21)}`, query);
    }
  }
  assert.is(criteria('end=8640000000000000').end, 8.64e15);
  assert.is(new Date(criteria('end=8640000000000000').end!).getTime(), 8.64e15);
  assert.is(criteria('start=0').start, 0);
});

test('a date that is none is a 400 naming the filter', () => {
  assert.throws(() => criteria('end=2026-13-45'), /"end" filter/);
  assert.throws(() => criteria('start=garbage'), /"start" filter/);
});

test('"until" a time to the minute includes that whole minute; "from" it starts at its first millisecond', () => {
  for (const written of ['2026-11-25 02:13', '2026-11-25T02:13']) {
    const { start, end } = criteria(`start=${encodeURIComponent(written)}&end=${encodeURIComponent(written)}`);
    assert.is(start, new Date(2026, 10, 25, 2, 13).getTime(), written);
    assert.is(end, new Date(2026, 10, 25, 2, 13, 59, 999).getTime(), written);
  }
  assert.is(criteria('end=2026-11-25T02:13Z').end, Date.UTC(2026, 10, 25, 2, 13, 59, 999));
});

test('"until" a time to the second includes that whole second, to a fraction that fraction, to the millisecond that millisecond', () => {
  assert.is(criteria('end=2026-11-25T02:13:37').end, new Date(2026, 10, 25, 2, 13, 37, 999).getTime());
  assert.is(criteria('end=2026-11-25T02:13:37.5').end, new Date(2026, 10, 25, 2, 13, 37, 599).getTime());
  assert.is(criteria('end=2026-11-25T02:13:37.250').end, new Date(2026, 10, 25, 2, 13, 37, 250).getTime());
  assert.is(criteria('end=2026-11-25T02:13:37,250').end, new Date(2026, 10, 25, 2, 13, 37, 250).getTime());
  assert.is(criteria('start=2026-11-25T02:13:37.5').start, new Date(2026, 10, 25, 2, 13, 37, 500).getTime());
});

test('the format the pages show times in is read to its precision: date alone, to the minute, to the second, any case', () => {
  assert.is(criteria('start=25-Nov-2026').start, new Date(2026, 10, 25).getTime());
  assert.is(criteria('end=25-Nov-2026').end, new Date(2026, 10, 26).getTime() - 1);
  assert.is(criteria('end=25-nov-2026').end, new Date(2026, 10, 26).getTime() - 1);
  assert.is(criteria(`start=${encodeURIComponent('25-NOV-2026 02:13')}`).start, new Date(2026, 10, 25, 2, 13).getTime());
  assert.is(criteria(`end=${encodeURIComponent('25-Nov-2026 02:13')}`).end, new Date(2026, 10, 25, 2, 13, 59, 999).getTime());
  assert.is(criteria(`end=${encodeURIComponent('25-Nov-2026 02:13:37')}`).end, new Date(2026, 10, 25, 2, 13, 37, 999).getTime());
  assert.is(criteria(`end=${encodeURIComponent('05-Jan-2026 00:00:00')}`).end, new Date(2026, 0, 5, 0, 0, 0, 999).getTime());
});

test('a whole day ends at the next local midnight, on a day the clocks go back too', () => {
  // 1 Nov 2026 is 25 hours long in New York.
  assert.is(criteria('end=2026-11-01').end! - criteria('start=2026-11-01').start!, 25 * 3_600_000 - 1);
  assert.is(criteria('end=01-Nov-2026').end, new Date(2026, 10, 2).getTime() - 1);
});

test('a local time a daylight saving change skips is a 400 saying so; the hour repeated when the clocks go back is read as its first time', () => {
  // New York springs forward at 02:00 on 8 Mar 2026: 02:00-02:59 do not exist there.
  for (const query of ['start=2026-03-08 02:30', 'end=2026-03-08T02:00:00', 'start=08-Mar-2026 02:59:59']) {
    assert.throws(() => criteria(query), (error: Error) => error instanceof BadRequestHttpError && /does not exist in the server's time zone \(a daylight saving change skips it\)/.test(error.message), query);
  }
  assert.is(criteria('start=2026-03-08 03:00').start, Date.UTC(2026, 2, 8, 7, 0));
  assert.is(criteria('start=2026-03-08T02:30-05:00').start, Date.UTC(2026, 2, 8, 7, 30), 'with an offset it exists');
  assert.is(criteria('start=2026-11-01 01:30').start, Date.UTC(2026, 10, 1, 5, 30));
});

test('in the hour repeated when the clocks go back, "until" a time the pages show includes both of its occurrences, so the profile shown with it', () => {
  // New York falls back at 02:00 EDT on 1 Nov 2026: 01:00-01:59 come twice, first EDT (UTC-4), then EST (UTC-5).
  const secondTime = Date.UTC(2026, 10, 1, 6, 30, 10, 400);
  const shown = formatProfileTime(secondTime);
  assert.is(shown, '01-Nov-2026 01:30:10');
  const { start, end } = criteria(`start=${encodeURIComponent(shown)}&end=${encodeURIComponent(shown)}`);
  assert.ok(start! <= secondTime && secondTime <= end!, `${start} <= ${secondTime} <= ${end}`);
  assert.is(start, Date.UTC(2026, 10, 1, 5, 30, 10), '"from" is its first occurrence');
  assert.is(end, Date.UTC(2026, 10, 1, 6, 30, 10, 999), '"until" is the end of its second');
  assert.is(criteria('end=2026-11-01 01:30').end, Date.UTC(2026, 10, 1, 6, 30, 59, 999));
  // Outside the repeated hour, one occurrence.
  assert.is(criteria('end=2026-11-01 00:59').end, Date.UTC(2026, 10, 1, 4, 59, 59, 999));
  assert.is(criteria('end=2026-11-01 02:00').end, Date.UTC(2026, 10, 1, 7, 0, 59, 999));
  assert.is(criteria('end=2026-10-31 01:30').end, Date.UTC(2026, 9, 31, 5, 30, 59, 999));
});

test('"until" a day includes the local times repeated at its end where the clocks went back across midnight (St. John\'s at 00:01 until 2011)', () => {
  // 25 Oct 1987, 00:01 NDT (UTC-2:30) became 24 Oct 23:01 NST (UTC-3:30): 24 Oct's last hour came twice.
  process.env.TZ = 'America/St_Johns';
  try {
    const secondTime = Date.UTC(1987, 9, 25, 3, 0);
    assert.is(formatProfileTime(secondTime), '24-Oct-1987 23:30:00');
    for (const written of ['1987-10-24', '24-Oct-1987']) assert.is(criteria(`end=${written}`).end, Date.UTC(1987, 9, 25, 3, 30) - 1, written);
    assert.is(criteria('start=1987-10-25').start, Date.UTC(1987, 9, 25, 2, 30), 'the next day still starts at its first midnight');
  } finally {
    process.env.TZ = 'America/New_York';
  }
});

test('"until" a local time the clocks repeated by less than a minute, leaving local mean time, runs to the end of its second occurrence', () => {
  // New York's clocks went from its local mean time (UTC-4:56:02) to EST at noon, 18 Nov 1883: 12:00:00-12:03:57 came twice.
  const secondTime = Date.UTC(1883, 10, 18, 17, 2, 30, 500);
  assert.is(formatProfileTime(secondTime), '18-Nov-1883 12:02:30');
  const { start, end } = criteria(`start=${encodeURIComponent('18-Nov-1883 12:02:30')}&end=${encodeURIComponent('18-Nov-1883 12:02:30')}`);
  assert.is(start, Date.UTC(1883, 10, 18, 16, 58, 32), '"from" is its first occurrence, in local mean time');
  assert.is(end, Date.UTC(1883, 10, 18, 17, 2, 30, 999), '"until" is the end of its second, in EST');
  // The minute 12:03 ends in EST, not 59.999 s after it began in local mean time (a minute shown as 12:00).
  assert.is(criteria('end=1883-11-18 12:03').end, Date.UTC(1883, 10, 18, 17, 3, 59, 999));
});

test('a local second a zone change skipped is a 400, not read as one up to a minute later; the minute it cuts starts where it exists', () => {
  // 30 Mar 1935, St. John's went from UTC-3:30:52 to UTC-3:30 at midnight: 00:00:00-00:00:51 never happened.
  process.env.TZ = 'America/St_Johns';
  try {
    for (const query of ['start=1935-03-30 00:00:05', 'end=30-Mar-1935 00:00:51', 'start=1935-03-30T00:00:05.500']) {
      assert.throws(() => criteria(query), (error: Error) => error instanceof BadRequestHttpError && /does not exist in the server's time zone/.test(error.message), query);
    }
    assert.is(criteria('start=1935-03-30 00:00:52').start, Date.UTC(1935, 2, 30, 3, 30, 52));
    assert.is(criteria('start=1935-03-30 00:00').start, Date.UTC(1935, 2, 30, 3, 30, 52));
    assert.is(criteria('end=1935-03-30 00:00').end, Date.UTC(1935, 2, 30, 3, 30, 59, 999));
  } finally {
    process.env.TZ = 'America/New_York';
  }
});

test('a time in the years 0 to 999 is shown with a four-digit year, which the search reads back', () => {
  for (const year of [0, 5, 800, 999]) {
    const date = new Date(2000, 0, 1, 12, 30, 15, 250);
    date.setFullYear(year);
    const time = date.getTime();
    const shown = formatProfileTime(time);
    assert.is(shown, `01-Jan-${String(year).padStart(4, '0')} 12:30:15`);
    const { start, end } = criteria(`start=${encodeURIComponent(shown)}&end=${encodeURIComponent(shown)}`);
    assert.ok(start! <= time && time <= end!, `${shown}: ${start} <= ${time} <= ${end}`);
  }
});

test('a local day a time zone change skipped whole is a 400 saying so, with or without a time, not read as the next day', () => {
  // Samoa moved across the date line: 30 Dec 2011 never happened in Apia.
  process.env.TZ = 'Pacific/Apia';
  try {
    for (const query of ['start=2011-12-30', 'end=30-Dec-2011', 'start=2011-12-30 10:00', 'end=2011-12-30T23:59:59']) {
      assert.throws(() => criteria(query), (error: Error) => error instanceof BadRequestHttpError && /does not exist in the server's time zone/.test(error.message), query);
    }
    assert.is(criteria('start=2011-12-31').start, Date.UTC(2011, 11, 30, 10));
    assert.is(criteria('end=2011-12-29').end, Date.UTC(2011, 11, 30, 10) - 1);
  } finally {
    process.env.TZ = 'America/New_York';
  }
});

test('a zone or an offset is honoured; without one the time is local', () => {
  assert.is(criteria('start=2026-11-25T02:13:37Z').start, Date.UTC(2026, 10, 25, 2, 13, 37));
  assert.is(criteria('start=2026-11-25T02:13:37%2B01:00').start, Date.UTC(2026, 10, 25, 1, 13, 37));
  assert.is(criteria('start=2026-11-25T02:13:37-0530').start, Date.UTC(2026, 10, 25, 7, 43, 37));
  assert.is(criteria('end=2026-11-25T02:13%2B01:00').end, Date.UTC(2026, 10, 25, 1, 13, 59, 999));
  assert.is(criteria('start=2026-11-25T02:13:37').start, Date.UTC(2026, 10, 25, 7, 13, 37));
});

test('an offset whose + a URL turned into a space is a 400 saying to write it %2B, not only that the text is no date', () => {
  for (const query of ['start=2026-11-25T02:13:37+01:00', 'end=2026-11-25 02:13+0530', 'end=25-Nov-2026 02:13:37.250 +01', 'start=2026-11-25T02:13 +01:00']) {
    const name = query.slice(0, query.indexOf('='));
    assert.throws(() => criteria(query), (error: Error) => error instanceof BadRequestHttpError && error.message.startsWith(`The "${name}" filter has a space where its offset's + should be`) && error.message.includes('%2B'), query);
  }
  assert.is(criteria('start=2026-11-25T02:13:37%2B01:00').start, Date.UTC(2026, 10, 25, 1, 13, 37));
});

test('a date or time that does not exist is a 400 saying so, in every form, not rolled over into the next one', () => {
  const impossible = [
    'start=2026-11-31', 'end=2026-02-30', 'start=2026-02-31T10:00:00Z', 'end=2026-02-29', 'end=2100-02-29 10:00',
    'start=2026-13-45', 'start=2026-00-10', 'end=2026-11-00',
    'end=31-Nov-2026', 'end=30-Feb-2026 10:00', 'end=29-Feb-2026 10:00:00', 'end=32-Nov-2026', 'end=00-Nov-2026', 'end=25-Foo-2026',
    'end=2026-11-25T24:00', 'end=2026-11-25 24:00:00', 'end=2026-11-25 02:60', 'end=2026-11-25T02:13:60', 'end=2026-11-25T02:13:37%2B24:00',
    'end=25-Nov-2026 24:00', 'end=25-Nov-2026 02:60', 'end=25-Nov-2026 02:13:60',
  ];
  for (const query of impossible) {
    const name = query.slice(0, query.indexOf('='));
    let error: unknown;
    try {
      criteria(query);
    } catch (caught) {
      error = caught;
    }
    assert.ok(error instanceof BadRequestHttpError, `${query} is refused`);
    assert.is((error as BadRequestHttpError).status, 400);
    assert.match((error as Error).message, new RegExp(`^The "${name}" filter names a [a-z ]+ that does not exist \\(`), query);
  }
  assert.throws(() => criteria('end=2026-02-30'), /February 2026 has 28 days/);
  assert.throws(() => criteria('start=2026-11-31'), /November 2026 has 30 days/);
  assert.throws(() => criteria('end=2026-11-25T24:00'), /hours go from 00 to 23/);
  assert.throws(() => criteria('end=2026-11-25T02:60'), /minutes go from 00 to 59/);
});

test('leap days of leap years are real days', () => {
  assert.is(criteria('start=2028-02-29').start, new Date(2028, 1, 29).getTime());
  assert.is(criteria('start=29-Feb-2000').start, new Date(2000, 1, 29).getTime());
  assert.is(criteria('end=2026-12-31T23:59:59').end, new Date(2027, 0, 1).getTime() - 1);
});

test('a time to the hour alone, or in another form, is a 400 listing the forms taken', () => {
  for (const query of ['end=2026-11-25T02', 'end=2026/11/25', 'end=Nov%2025%202026', 'end=2026-11', 'end=2026-11-25T2:13']) {
    assert.throws(() => criteria(query), /"end" filter must be a date \(2026-11-21, 2026-11-21 21:40, .*21-Nov-2026 21:40:54\) or epoch milliseconds/, query);
  }
});

const numbers = suite('parseCriteria: status and limit');

numbers('status and limit are plain whole numbers: hex, exponents and signs are a 400, not read as another number', () => {
  for (const query of ['status=0x1F4', 'status=2e2', 'status=%2B404', 'limit=0x10', 'limit=1e2', 'limit=10.5', 'limit=-1']) {
    assert.throws(() => criteria(query), /filter must be/, query);
  }
  assert.is(criteria('status=404').status, 404);
  assert.is(criteria('limit=50').limit, 50);
});

numbers('status is from 100 to 599 and limit from 1 to 1000, both ends included; a 400 outside them, with the no-store headers of the profiler pages', () => {
  assert.is(criteria('status=100').status, 100);
  assert.is(criteria('status=599').status, 599);
  assert.is(criteria('limit=1').limit, 1);
  assert.is(criteria('limit=1000').limit, 1000);
  for (const query of ['status=99', 'status=600', 'limit=0', 'limit=1001']) {
    assert.throws(() => criteria(query), (error: Error) => error instanceof BadRequestHttpError && /filter must be/.test(error.message) && error.headers['cache-control'] === 'no-store', query);
  }
});

const filters = suite('parseCriteria: ip, method and url');

filters('ip, method and url are trimmed, empty ones mean any, the method is compared upper-cased, and the limit is 10 unless given', () => {
  assert.equal(parseCriteria(new URLSearchParams('ip=%2010.0.0.1%20&method=post&url=%20/books%20&status=&start=%20&end=')), {
    criteria: { limit: 10, ip: '10.0.0.1', method: 'POST', url: '/books' },
    raw: { ip: '10.0.0.1', method: 'post', url: '/books' },
  });
  assert.equal(criteria('ip=&method=&url=&status=&limit='), { limit: 10 });
});

filters('start may equal end (one instant); a start after the end is a 400 saying so', () => {
  assert.equal(criteria('start=1795297254000&end=1795297254000'), { limit: 10, start: 1795297254000, end: 1795297254000 });
  assert.equal(criteria('start=1795297254000'), { limit: 10, start: 1795297254000 });
  assert.equal(criteria('end=1795297254000'), { limit: 10, end: 1795297254000 });
  assert.throws(() => criteria('start=1795297254001&end=1795297254000'), (error: Error) => error instanceof BadRequestHttpError && /The "start" filter is after the "end" filter \("1795297254001" after "1795297254000"\)/.test(error.message));
});

test.run();
numbers.run();
filters.run();
