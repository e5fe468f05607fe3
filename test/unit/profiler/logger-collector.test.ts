import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request } from '../../../kernel/index.js';
import { DebugLogBuffer, Logger, createBus } from '../../../lib/log/index.js';
import { LoggerCollector, presentLogger } from '../../../lib/profiler/collectors/logger-collector.js';
import type { CollectContext } from '../../../lib/profiler/data-collector.js';
import { REDACTED, Redactor } from '../../../lib/profiler/redactor.js';

/** The contexts a profile stores for what `log` writes while handling one request. */
function storedContexts(log: (logger: Logger) => void): Array<Record<string, unknown>> {
  const bus = createBus();
  const request = Request.create('/');
  const collector = new LoggerCollector(new DebugLogBuffer(bus), new Redactor());
  log(new Logger({ bus, currentRequest: () => request }));
  const data = JSON.parse(collector.lateCollect({ request } as CollectContext).json) as { logs: Array<{ context: Record<string, unknown> }> };
  return data.logs.map((record) => record.context);
}

test('a profile keeps an error\'s code and own fields in its log context, next to its class and message, secret ones redacted', () => {
  const error = Object.assign(new Error("ENOENT: no such file or directory, open '/x'"), { code: 'ENOENT', errno: -2, syscall: 'open', path: '/x', password: 'hunter2' });
  const [context] = storedContexts((logger) => logger.error('Failed: {error}', { error, list: [Object.assign(new TypeError('bad'), { statusCode: 400 })] }));
  assert.equal(context, {
    error: { class: 'Error', message: "ENOENT: no such file or directory, open '/x'", code: 'ENOENT', errno: -2, syscall: 'open', path: '/x', password: REDACTED },
    list: [{ class: 'TypeError', message: 'bad', statusCode: 400 }],
  });
});

test('the records a request wrote past the 1,000 the buffer keeps are counted as omitted, not dropped silently (20,000 logged showed as 1,000)', () => {
  const bus = createBus();
  const request = Request.create('/');
  const buffer = new DebugLogBuffer(bus);
  const collector = new LoggerCollector(buffer, new Redactor());
  const logger = new Logger({ bus, currentRequest: () => request });
  for (let i = 0; i < 20_000; i++) logger.info('record {i}', { i });
  assert.is(buffer.droppedCount(request), 19_000);
  const data = JSON.parse(collector.lateCollect({ request } as CollectContext).json) as { logs: unknown[]; omitted?: number };
  assert.is(data.logs.length, 1000);
  assert.is(data.omitted, 19_000);
});

/** What the collector stores for what `log` writes while handling one request, as parsed JSON. */
function collect(log: (logger: Logger) => void): { logs: Array<{ message: string }>; omitted?: number } {
  const bus = createBus();
  const request = Request.create('/');
  const collector = new LoggerCollector(new DebugLogBuffer(bus), new Redactor());
  log(new Logger({ bus, currentRequest: () => request }));
  return JSON.parse(collector.lateCollect({ request } as CollectContext).json);
}

test('a log message of 10,000 characters is kept whole; one of 10,001 is cut there, with a note; nothing left out, no `omitted`', () => {
  const data = collect((logger) => {
    logger.info('a'.repeat(10_000));
    logger.info('b'.repeat(10_001));
  });
  assert.equal(data.logs.map((record) => record.message), ['a'.repeat(10_000), `${'b'.repeat(10_000)}… (1 more characters)`]);
  assert.not.ok('omitted' in data);
});

test('records are kept while their JSON is under 1,000,000 characters: once it reaches that exactly, the next is counted, not kept', () => {
  // A record's JSON is its fixed part plus its message (plain letters need no escaping), and a comma between two.
  const fixed = JSON.stringify(collect((logger) => logger.info('')).logs[0]).length;
  const messages: string[] = [];
  let left = 1_000_000;
  while (left > fixed + 10_000) {
    messages.push('x'.repeat(9_000));
    left -= fixed + 9_000 + 1;
  }
  messages.push('y'.repeat(left - fixed));
  const data = collect((logger) => {
    for (const message of messages) logger.info(message);
    logger.info('past the budget');
  });
  assert.is(JSON.stringify(data.logs).length - 2, 1_000_000, 'the records kept are 1,000,000 characters of JSON');
  assert.is(data.logs.length, messages.length);
  assert.is(data.omitted, 1);
});

test('presentLogger names each record\'s level and counts the records by level, errors (ERROR and worse) and warnings apart', () => {
  const record = (level: number) => ({ time: 1, level, channel: 'app', message: `level ${level}`, context: {} });
  const shown = presentLogger({ logs: [record(0), record(3), record(3), record(4), record(5), record(7)] });
  assert.equal(shown.logs.map((r) => r.levelName), ['EMERGENCY', 'ERROR', 'ERROR', 'WARNING', 'NOTICE', 'DEBUG']);
  assert.equal(shown.counts, { EMERGENCY: 1, ERROR: 2, WARNING: 1, NOTICE: 1, DEBUG: 1 });
  assert.is(shown.errorCount, 3);
  assert.is(shown.warningCount, 1);
});

test('presentLogger keeps what it cannot read as stored: no logs, records that are no object or have no numeric level; a level no name has is INFO, as the panel files it', () => {
  assert.equal(presentLogger(null), { counts: {}, errorCount: 0, warningCount: 0, logs: [] });
  assert.equal(presentLogger({ logs: 'none' }), { counts: {}, errorCount: 0, warningCount: 0, logs: [] });
  const odd = { time: 1, level: 'loud', channel: 'app', message: 'm', context: {} };
  const unnamed = { time: 2, level: 42, channel: 'app', message: 'n', context: {} };
  const shown = presentLogger({ logs: [null, 'text', odd, unnamed] });
  assert.equal(shown.logs.slice(0, 3), [null, 'text', odd]);
  assert.not.ok('levelName' in (shown.logs[2] as object));
  assert.is(shown.logs[3]!.levelName, 'INFO');
  // What is no record is not counted.
  assert.equal(presentLogger({ logs: [null, 'text', 7, unnamed] }).counts, { INFO: 1 });
});

test('presentLogger counts a stored level name like an Object.prototype member (constructor, __proto__) as any other name, from zero', () => {
  const named = (levelName: string) => ({ time: 1, level: 6, levelName, channel: 'app', message: 'm', context: {} });
  const counts = presentLogger({ logs: [named('constructor'), named('__proto__'), named('__proto__')] }).counts;
  assert.is(Object.getPrototypeOf(counts), Object.prototype);
  assert.equal(Object.entries(counts), [['constructor', 1], ['__proto__', 2]]);
});

test('records counted, not kept (past the 1,000 a request keeps, or past the budget), are still counted by level: an error after 1,000 debug records is an error', () => {
  const bus = createBus();
  const request = Request.create('/');
  const collector = new LoggerCollector(new DebugLogBuffer(bus), new Redactor());
  const logger = new Logger({ bus, currentRequest: () => request });
  for (let i = 0; i < 1000; i++) logger.debug('step {i}', { i });
  logger.error('payment failed');
  logger.warning('retrying');
  logger.error('payment failed again');
  const shown = presentLogger(JSON.parse(collector.lateCollect({ request } as CollectContext).json));
  assert.is(shown.logs.length, 1000);
  assert.equal(shown.counts, { DEBUG: 1000, ERROR: 2, WARNING: 1 });
  assert.is(shown.errorCount, 2);
  assert.is(shown.warningCount, 1);
  // Past the budget of a million characters: 200 records of 9,000 characters, then a critical one, all kept by the buffer.
  const big = Request.create('/big');
  const bigLogger = new Logger({ bus, currentRequest: () => big });
  for (let i = 0; i < 200; i++) bigLogger.info('x'.repeat(9_000));
  bigLogger.critical('disk full');
  const bigShown = presentLogger(JSON.parse(collector.lateCollect({ request: big } as CollectContext).json));
  assert.ok(bigShown.logs.length < 200);
  assert.equal(bigShown.counts, { INFO: 200, CRITICAL: 1 });
  assert.is(bigShown.errorCount, 1);
});

test('presentLogger adds the omitted records of each level name to the counts, and leaves out what is no level or no count', () => {
  const record = { time: 1, level: 6, channel: 'app', message: 'm', context: {} };
  const shown = presentLogger({ logs: [record], omitted: 11, omittedLevels: { ALERT: 2, WARNING: 3, INFO: 4, DEBUG: 'x', LOUD: 1, toString: 1 } });
  assert.equal(shown.counts, { INFO: 5, ALERT: 2, WARNING: 3 });
  assert.is(shown.errorCount, 2);
  assert.is(shown.warningCount, 3);
  assert.equal(presentLogger({ logs: [record], omittedLevels: null }).counts, { INFO: 1 });
});

test('presentLogger leaves out omitted counts that are no count of records (negative, fractional, infinite: JSON reads 1e999 as Infinity): the toolbar\'s errors and records stay what the records say', () => {
  const record = { time: 1, level: 3, channel: 'app', message: 'm', context: {} };
  for (const count of ['-5', '0.5', '0', '1e999', '-1e999']) {
    const shown = presentLogger(JSON.parse(`{"logs":[${JSON.stringify(record)}],"omitted":1,"omittedLevels":{"ERROR":${count},"WARNING":${count}}}`));
    assert.equal(shown.counts, { ERROR: 1 }, count);
    assert.is(shown.errorCount, 1, count);
    assert.is(shown.warningCount, 0, count);
  }
});

test('records another producer publishes on the bus with a level no name has (a bridged logger\'s 50, a million) are counted as INFO when not kept, as presentLogger names them when kept; the counts by level stay eight', () => {
  const bus = createBus();
  const buffer = new DebugLogBuffer(bus, { maxPerRequest: 2 });
  const collector = new LoggerCollector(buffer, new Redactor());
  const request = Request.create('/');
  const publish = (level: number) => bus.emit('log', { record: { time: 1, level, levelName: 'INFO', channel: 'bridge', message: 'm', context: {} }, request });
  for (const level of [50, 6, 50, 1_000_000, 3]) publish(level);
  assert.ok(buffer.droppedByLevel(request).length <= 8, `${buffer.droppedByLevel(request).length} entries`);
  const shown = presentLogger(JSON.parse(collector.lateCollect({ request } as CollectContext).json));
  assert.is(shown.omitted, 3);
  assert.equal(shown.omittedLevels, { ERROR: 1, INFO: 2 });
  assert.equal(shown.counts, { INFO: 4, ERROR: 1 });
  // Past the budget, a kept-by-the-buffer record of such a level too.
  const bigBus = createBus();
  const bigCollector = new LoggerCollector(new DebugLogBuffer(bigBus), new Redactor());
  const big = Request.create('/big');
  for (let i = 0; i < 120; i++) bigBus.emit('log', { record: { time: 1, level: 50, levelName: 'INFO', channel: 'bridge', message: 'x'.repeat(9_000), context: {} }, request: big });
  const bigShown = presentLogger(JSON.parse(bigCollector.lateCollect({ request: big } as CollectContext).json));
  assert.ok((bigShown.omitted ?? 0) > 0);
  assert.equal(bigShown.counts, { INFO: 120 });
});

test.run();
