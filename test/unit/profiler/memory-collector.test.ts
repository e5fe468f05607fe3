import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MemoryCollector } from '../../../lib/profiler/collectors/index.js';

/** Runs `body` with the wall clock moved by `wallMs` and the monotonic clock by `monotonicMs`, then puts both back. */
function withClocks<T>(wallMs: number, monotonicMs: number, body: () => T): T {
  const realNow = Date.now;
  const realPerformanceNow = performance.now.bind(performance);
  Date.now = () => realNow() + wallMs;
  performance.now = () => realPerformanceNow() + monotonicMs;
  try {
    return body();
  } finally {
    Date.now = realNow;
    delete (performance as { now?: unknown }).now;
  }
}

test('a memory reading is shared for 100 ms of the monotonic clock: a wall clock set back an hour does not keep it for that hour', () => {
  const collector = new MemoryCollector();
  const first = collector.lateCollect();
  assert.is(collector.lateCollect(), first, 'shared by the requests of the next 100 ms');
  // NTP sets the clock back an hour; 200 ms pass.
  const later = withClocks(-3_600_000, 200, () => collector.lateCollect());
  assert.is.not(later, first, 'read again once 100 ms have passed');
});

test('a wall clock set a day ahead does not make a reading taken a moment ago stale', () => {
  const collector = new MemoryCollector();
  const first = collector.lateCollect();
  assert.is(withClocks(86_400_000, 0, () => collector.lateCollect()), first);
});

test('out of file descriptors, the reading keeps the heap and goes without rss rather than failing the profile', () => {
  const realMemoryUsage = process.memoryUsage;
  // What node throws when uv_resident_set_memory cannot open /proc/self/stat (a low ulimit -n, every descriptor taken).
  process.memoryUsage = Object.assign(
    () => {
      throw Object.assign(new Error('EMFILE: too many open files, uv_resident_set_memory'), { code: 'EMFILE' });
    },
    { rss: realMemoryUsage.rss },
  ) as typeof process.memoryUsage;
  try {
    const data = JSON.parse(new MemoryCollector().lateCollect().json) as { heapUsed?: unknown; rss?: unknown };
    assert.type(data.heapUsed, 'number');
    assert.ok((data.heapUsed as number) > 0);
    assert.is(data.rss, undefined);
  } finally {
    process.memoryUsage = realMemoryUsage;
  }
});

test('a reading exactly 100 ms old is still shared; a moment later it is read again', () => {
  let now = 5_000;
  performance.now = () => now;
  try {
    const collector = new MemoryCollector();
    const first = collector.lateCollect();
    now += 100;
    assert.is(collector.lateCollect(), first);
    now += 0.001;
    assert.is.not(collector.lateCollect(), first);
  } finally {
    delete (performance as { now?: unknown }).now;
  }
});

test('the first reading is taken however early in the process it comes (performance.now() under 100 ms)', () => {
  performance.now = () => 20;
  try {
    const data = JSON.parse(new MemoryCollector().lateCollect().json) as { heapUsed?: unknown };
    assert.type(data.heapUsed, 'number');
  } finally {
    delete (performance as { now?: unknown }).now;
  }
});

test.run();
