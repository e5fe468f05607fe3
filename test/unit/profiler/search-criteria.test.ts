import { suite } from 'uvu';
import * as assert from 'uvu/assert';
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

test('a date that is none is a 400 naming the filter', () => {
  assert.throws(() => criteria('end=2026-13-45'), /"end" filter/);
  assert.throws(() => criteria('start=garbage'), /"start" filter/);
});

const numbers = suite('parseCriteria: status and limit');

numbers('status and limit are plain whole numbers: hex, exponents and signs are a 400, not read as another number', () => {
  for (const query of ['status=0x1F4', 'status=2e2', 'status=%2B404', 'limit=0x10', 'limit=1e2', 'limit=10.5', 'limit=-1']) {
    assert.throws(() => criteria(query), /filter must be/, query);
  }
  assert.is(criteria('status=404').status, 404);
  assert.is(criteria('limit=50').limit, 50);
});

test.run();
numbers.run();
