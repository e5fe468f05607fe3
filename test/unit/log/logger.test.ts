import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Request, RequestStack } from '../../../kernel/index.js';
import { DebugLogBuffer, LogLevel, Logger, attachStderrSink, createBus, formatJson, formatLine, interpolate, isLevelName, messageWithSecretsHidden, toLevel, type LogEntry, type LogRecord } from '../../../lib/log/index.js';
import { templateCacheChars } from '../../../lib/log/message-template.js';

const test = suite('Logger');

function collect() {
  const bus = createBus();
  const entries: LogEntry[] = [];
  bus.on('log', (entry) => entries.push(entry));
  return { bus, entries };
}

test('each of the eight syslog levels writes a record with its name and number', () => {
  const { bus, entries } = collect();
  const logger = new Logger({ bus });
  logger.emergency('a');
  logger.alert('b');
  logger.critical('c');
  logger.error('d');
  logger.warning('e');
  logger.notice('f');
  logger.info('g');
  logger.debug('h');
  assert.equal(entries.map((e) => [e.record.level, e.record.levelName]), [
    [0, 'EMERGENCY'], [1, 'ALERT'], [2, 'CRITICAL'], [3, 'ERROR'], [4, 'WARNING'], [5, 'NOTICE'], [6, 'INFO'], [7, 'DEBUG'],
  ]);
});

test('placeholders are interpolated from the context; unknown ones stay', () => {
  assert.is(interpolate('Matched route "{route}" for {n} {missing}', { route: 'home', n: 3 }), 'Matched route "home" for 3 {missing}');
  assert.is(interpolate('{obj}', { obj: { a: 1 } }), '{"a":1}');
  assert.is(interpolate('{a}{a} and {a}!', { a: 'x' }), 'xx and x!', 'a placeholder used several times');
  assert.is(interpolate('{a}', { a: 'first' }) + interpolate('{a}', { a: 'second' }), 'firstsecond', 'a cached template takes each call its own context');
  assert.is(interpolate('{constructor} {toString}', {}), '{constructor} {toString}', 'inherited properties are not context');
  assert.is(interpolate('a { b } {c-d}', { b: 1, 'c-d': 2 }), 'a { b } {c-d}', 'only {name} with name characters');
});

test('a long message built at run time (a request body written into it) is interpolated, and not kept in the template cache', () => {
  const before = templateCacheChars();
  for (let i = 0; i < 20; i++) {
    const body = `{"n": ${i}, "text": "${'x'.repeat(100_000)}"}`;
    assert.is(interpolate(`Invalid payload: ${body} from {ip}`, { ip: '192.0.2.1' }), `Invalid payload: ${body} from 192.0.2.1`);
  }
  assert.ok(templateCacheChars() - before < 20 * 1024, `the cache grew by ${templateCacheChars() - before} characters`);
});

test('the template cache keeps at most 1,024 messages: distinct messages built at run time do not grow it without bound', () => {
  const message = (i: number) => `Request ${String(i).padStart(5, '0')} from {ip}: ${'x'.repeat(80)}`;
  for (let i = 0; i < 3000; i++) assert.is(interpolate(message(i), { ip: '192.0.2.1' }), message(i).replace('{ip}', '192.0.2.1'));
  const chars = templateCacheChars();
  assert.ok(chars >= message(0).length, `the last message is kept: ${chars} characters`);
  assert.ok(chars <= 1024 * message(0).length, `the cache holds ${chars} characters`);
});

test('a short message cut from a large string (a request body cut for the log) does not keep that string alive in the template cache', () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < 50; i++) {
    const body = `{"n": ${i}, "text": "${'x'.repeat(1_000_000)}"}`;
    assert.is(interpolate(body.slice(0, 200), {}), body.slice(0, 200));
  }
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  // 50 MB of bodies were kept alive by their 200-character messages; a copy of each is 10 KB in all.
  assert.ok(grown < 20_000_000, `the heap grew by ${grown} bytes`);
});

test('records less severe than the level are dropped at the source', () => {
  const { bus, entries } = collect();
  const logger = new Logger({ bus, level: 'warning' });
  logger.info('dropped');
  logger.error('kept');
  assert.equal(entries.map((e) => e.record.message), ['kept']);
  assert.not.ok(logger.isEnabled('info'));
  assert.throws(() => new Logger({ bus, level: 'loud' as 'info' }), /Unknown log level/);
});

test('withChannel writes under another channel with the same bus', () => {
  const { bus, entries } = collect();
  new Logger({ bus }).withChannel('request').info('x');
  assert.is(entries[0]!.record.channel, 'request');
});

test('a channel that is empty or no string is a TypeError, from new Logger() and withChannel(), not records under no channel', () => {
  const { bus } = collect();
  const logger = new Logger({ bus });
  for (const channel of ['', 42, null]) {
    assert.throws(() => logger.withChannel(channel as string), (error: unknown) => error instanceof TypeError && /channel is a non-empty string/.test((error as Error).message), String(channel));
    assert.throws(() => new Logger({ bus, channel: channel as string }), TypeError);
  }
});

test('records are attributed to the current request, also across awaits and concurrency', async () => {
  const { bus } = collect();
  const stack = new RequestStack();
  const logger = new Logger({ bus, currentRequest: () => stack.getCurrentRequest() });
  const buffer = new DebugLogBuffer(bus);
  const requests = Array.from({ length: 50 }, (_, i) => Request.create(`/r${i}`));
  await Promise.all(
    requests.map((request, i) =>
      stack.run(request, async () => {
        logger.info('before {i}', { i });
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
        logger.info('after {i}', { i });
      }),
    ),
  );
  logger.info('outside any request');
  requests.forEach((request, i) => assert.equal(buffer.getLogs(request).map((r) => r.message), [`before ${i}`, `after ${i}`]));
  buffer.detach();
});

test('the stderr sink writes JSON lines or Monolog-style lines, from its level up', () => {
  const bus = createBus();
  const lines: string[] = [];
  const detach = attachStderrSink(bus, { level: 'warning', json: true, stream: { write: (chunk: string) => lines.push(chunk) } });
  const logger = new Logger({ bus, channel: 'request' });
  logger.info('quiet');
  logger.error('Loud {what}', { what: 'error' });
  detach();
  logger.error('after detach');
  assert.is(lines.length, 1);
  const parsed = JSON.parse(lines[0]!);
  assert.is(parsed.level, 'error');
  assert.is(parsed.channel, 'request');
  assert.is(parsed.message, 'Loud error');
  assert.match(formatLine({ time: 0, level: 3, levelName: 'ERROR', channel: 'app', message: 'm', context: {} }), /^\[1970-01-01T00:00:00.000Z\] app\.ERROR: m\n$/);
});

test('a placeholder of any value is interpolated without throwing: invalid dates, errors without a constructor, functions, symbols', () => {
  assert.is(interpolate('at {d}', { d: new Date(NaN) }), 'at Invalid Date');
  assert.is(interpolate('at {d}', { d: new Date(0) }), 'at 1970-01-01T00:00:00.000Z');
  const bare = new Error('x');
  Object.defineProperty(bare, 'constructor', { value: undefined });
  assert.is(interpolate('{e}', { e: bare }), 'Error: x');
  assert.is(interpolate('{f} {s}', { f: () => 1, s: Symbol('q') }), '[object Function] Symbol(q)');
  const throwing = { toJSON() { throw new Error('no'); } };
  assert.is(interpolate('{t}', { t: throwing }), '[object Object]');
  const logger = new Logger({ bus: createBus() });
  logger.warning('Expires {at}', { at: new Date('not a date') });
});

test('an Error in a placeholder is written by its name and message, as Symfony\'s Logger writes an exception by its string form, never with its stack', () => {
  assert.is(interpolate('Failed: {error}', { error: new TypeError('x') }), 'Failed: TypeError: x');
  assert.is(interpolate('{e}', { e: new RangeError('') }), 'RangeError', 'no message: the name alone');
  class QuotaError extends Error {
    override name = 'QuotaError';
  }
  assert.is(interpolate('{e}', { e: new QuotaError('over by 3') }), 'QuotaError: over by 3');
  const multiline = new Error('first\nsecond');
  assert.is(interpolate('{e}', { e: multiline }), 'Error: first\nsecond');
  assert.not.match(interpolate('{e}', { e: new Error('x') }), /\n\s+at /);
  assert.is(interpolate('{d}', { d: { id: 1 } }), '{"id":1}', 'other objects as before');
});

test('an Error inside an object or array in a placeholder is written as an Error placeholder is, not as the {} JSON has for it', () => {
  class QuotaError extends Error {}
  assert.is(interpolate('{ctx}', { ctx: { id: 7, error: new TypeError('x') } }), '{"id":7,"error":"TypeError: x"}');
  assert.is(interpolate('{list}', { list: [new QuotaError('over'), 1] }), '["QuotaError: over",1]');
  assert.is(interpolate('{deep}', { deep: { a: { b: new RangeError('') } } }), '{"a":{"b":"RangeError"}}');
  assert.not.match(interpolate('{ctx}', { ctx: { error: new Error('x') } }), /\bat /, 'never its stack');
});

test('an object inside a placeholder that is a Proxy whose getPrototypeOf trap throws is written as JSON has it, not the whole value as [object Object]', () => {
  const hostile = new Proxy({ a: 1 }, { getPrototypeOf: () => { throw new Error('trap'); } });
  assert.is(interpolate('{ctx}', { ctx: { id: 2, hostile } }), '{"id":2,"hostile":{"a":1}}');
  assert.is(interpolate('{list}', { list: [hostile, new TypeError('x')] }), '[{"a":1},"TypeError: x"]');
});

test('an Error placeholder stays its name and message: its own fields (a system error\'s errno, syscall, path) are for the context, not the message', () => {
  const error = Object.assign(new Error("ENOENT: no such file or directory, open '/x'"), { code: 'ENOENT', errno: -2, syscall: 'open', path: '/x' });
  assert.is(interpolate('Failed: {error}', { error }), "Failed: Error: ENOENT: no such file or directory, open '/x'");
  assert.is(interpolate('{ctx}', { ctx: { error } }), `{"error":"Error: ENOENT: no such file or directory, open '/x'"}`);
});

test('an Error of another realm (a vm context\'s, which instanceof Error misses) is written as one of this realm is, not as {}', () => {
  const foreign = runInNewContext('new TypeError("x")') as Error;
  assert.is(interpolate('Failed: {error}', { error: foreign }), 'Failed: TypeError: x');
  assert.is(interpolate('{ctx}', { ctx: { id: 7, error: foreign } }), '{"id":7,"error":"TypeError: x"}');
  assert.is(interpolate('{list}', { list: [runInNewContext('class QuotaError extends Error {}; new QuotaError("over")'), 1] }), '["QuotaError: over",1]');
});

test('an Error of a class that sets no name of its own is written by its class, as Symfony writes an exception and the error pages name it, not as a plain "Error"', () => {
  class QuotaError extends Error {}
  assert.is(interpolate('{e}', { e: new QuotaError('over by 3') }), 'QuotaError: over by 3');
  class LookupError extends TypeError {}
  assert.is(interpolate('{e}', { e: new LookupError('x') }), 'LookupError: x', 'the class, not the TypeError it extends');
  assert.is(interpolate('{e}', { e: new TypeError('x') }), 'TypeError: x');
  const aborted = new DOMException('gone', 'AbortError');
  assert.is(interpolate('{e}', { e: aborted }), 'AbortError: gone', 'a name given is kept');
});

test('an Error whose name, message or toString throw or are no strings is still written, without throwing', () => {
  const thrower = (): never => {
    throw new Error('getter');
  };
  const hostile = new Error('hidden');
  Object.defineProperties(hostile, { name: { get: thrower }, message: { get: thrower }, toString: { get: thrower } });
  assert.is(interpolate('{e}', { e: hostile }), 'Error');
  const odd = new TypeError('x');
  Object.defineProperties(odd, { name: { value: 42 }, message: { value: { toString: thrower } }, toString: { value: thrower } });
  assert.is(interpolate('{e}', { e: odd }), 'TypeError');
  const renamed = new Error('kept');
  Object.defineProperty(renamed, 'name', { value: '' });
  Object.defineProperty(renamed, 'constructor', { get: thrower });
  assert.is(interpolate('{e}', { e: renamed }), 'Error: kept');
  const { bus, entries } = collect();
  new Logger({ bus }).error('Failed: {error}', { error: hostile });
  assert.equal(entries.map((e) => e.record.message), ['Failed: Error']);
});

test('a log call with a Proxy whose traps throw, as a value or as the whole context, does not throw', () => {
  const trap = (): never => {
    throw new Error('trap');
  };
  const hostile = new Proxy({}, { get: trap, has: trap, getPrototypeOf: trap, ownKeys: trap, getOwnPropertyDescriptor: trap });
  const { bus, entries } = collect();
  const logger = new Logger({ bus });
  logger.error('value {p}', { p: hostile });
  logger.error('context {p}', hostile);
  assert.equal(entries.map((e) => e.record.message), ['value [object Object]', 'context {p}']);
  assert.is(interpolate('{n}', { n: { id: 10n } }), '{"id":"10"}', 'a bigint inside an object');
});

function record(context: Record<string, unknown>): LogRecord {
  return { time: 0, level: 3, levelName: 'ERROR', channel: 'app', message: 'm', context };
}

test('the stderr sink writes an object met twice as itself, and only a cycle as [circular]', () => {
  const shared = { id: 7 };
  const cyclic: Record<string, unknown> = { name: 'c' };
  cyclic.self = cyclic;
  const parsed = JSON.parse(formatJson(record({ first: shared, second: shared, list: [shared, shared], cyclic })));
  assert.equal(parsed.context.first, { id: 7 });
  assert.equal(parsed.context.second, { id: 7 });
  assert.equal(parsed.context.list, [{ id: 7 }, { id: 7 }]);
  assert.equal(parsed.context.cyclic, { name: 'c', self: '[circular]' });
  assert.match(formatLine(record({ a: shared, b: shared })), '{"a":{"id":7},"b":{"id":7}}');
});

test('the stderr sink never throws into the code that logs: a context JSON cannot take is written as its message with a note', () => {
  const bus = createBus();
  const lines: string[] = [];
  attachStderrSink(bus, { level: 'debug', json: true, stream: { write: (chunk: string) => lines.push(chunk) } });
  const hostile = new Error('x');
  Object.defineProperty(hostile, 'message', { get() { throw new Error('getter'); } });
  const logger = new Logger({ bus });
  logger.error('one {a}', { a: { toJSON() { throw new Error('toJSON'); } } });
  logger.critical('two', { exception: hostile });
  assert.is(lines.length, 2);
  for (const line of lines) {
    const parsed = JSON.parse(line);
    assert.match(parsed.message, /^(one|two)/);
    assert.match(String(parsed.context), /^\[context that cannot be written as JSON: /);
  }
  assert.match(formatLine(record({ a: { toJSON() { throw new Error('toJSON'); } } })), /\[context that cannot be written as JSON: Error: toJSON\]/);
});

test('a placeholder whose getter throws stays unfilled: the log call itself never throws', () => {
  const context = {
    get name(): string {
      throw new Error('getter threw');
    },
    n: 2,
  };
  assert.is(interpolate('user {name} ({n})', context), 'user {name} (2)');
  const bus = createBus();
  const records: LogRecord[] = [];
  bus.on('log', ({ record }) => records.push(record));
  new Logger({ bus, channel: 'app' }).info('user {name}', context);
  assert.is(records[0]?.message, 'user {name}');
});

test('a level given by name or syslog short name (any case) is that level, and a message that is no string is written as its text', () => {
  const bus = createBus();
  const records: LogRecord[] = [];
  bus.on('log', ({ record }) => records.push(record));
  const logger = new Logger({ bus, channel: 'app', level: 'warning' });
  logger.log('error', 'by name');
  logger.log('INFO', 'filtered by name');
  logger.log('warn', 'warn is warning');
  logger.log('Err' as never, 'err is error');
  logger.log('CRIT', 'crit is critical');
  logger.log('emerg', 'emerg is emergency');
  logger.log(0, 'by number');
  logger.error(undefined as never);
  logger.error(123 as never);
  assert.equal(records.map((record) => [record.level, record.levelName, record.message]), [
    [3, 'ERROR', 'by name'],
    [4, 'WARNING', 'warn is warning'],
    [3, 'ERROR', 'err is error'],
    [2, 'CRITICAL', 'crit is critical'],
    [0, 'EMERGENCY', 'emerg is emergency'],
    [0, 'EMERGENCY', 'by number'],
    [3, 'ERROR', 'undefined'],
    [3, 'ERROR', '123'],
  ]);
  assert.ok(new Logger({ bus, level: 'warn' }).isEnabled('warning'), 'a short name is a threshold too');
  assert.not.ok(new Logger({ bus, level: 'warn' }).isEnabled('notice'));
  // A level as log() takes it, a number too (LogLevel.ERROR); one log() refuses is refused here as well.
  assert.ok(new Logger({ bus, level: 'warn' }).isEnabled(LogLevel.ERROR));
  assert.not.ok(new Logger({ bus, level: 'warn' }).isEnabled(LogLevel.INFO));
  assert.throws(() => new Logger({ bus }).isEnabled(9 as never), TypeError);
});

test('log() refuses an unknown level name or a number out of 0-7 with a TypeError naming the valid levels, even when filtered', () => {
  const bus = createBus();
  const records: LogRecord[] = [];
  bus.on('log', ({ record }) => records.push(record));
  const logger = new Logger({ bus, channel: 'app', level: 'error' });
  for (const level of ['nonsense', 'information', 'fatal', 'trace', 'constructor', '', -1, 8, 99, 2.5, Number.NaN, null, undefined, {}]) {
    assert.throws(
      () => logger.log(level as never, 'refused'),
      (error: unknown) => error instanceof TypeError && /takes a level of 0-7 or emergency, alert, critical, error, warning, notice, info, debug \(or emerg, crit, err, warn\), not /.test(error.message),
      `level ${String(level)}`,
    );
  }
  assert.throws(() => logger.log('loud' as never, 'x'), /not the string "loud"/);
  assert.throws(() => logger.log(9, 'x'), /not number 9/);
  assert.equal(records, []);
});

test('a sink that throws does not make the log call throw; later sinks of that record are skipped, and it is said once', async () => {
  const bus = createBus();
  const warnings: Array<{ message: string; code: unknown }> = [];
  const onWarning = (warning: Error): void => void warnings.push({ message: warning.message, code: (warning as { code?: unknown }).code });
  process.on('warning', onWarning);
  bus.on('log', () => {
    throw new Error('my sink failed');
  });
  const logger = new Logger({ bus, channel: 'app' });
  logger.error('one');
  logger.error('two');
  await new Promise((resolve) => setImmediate(resolve));
  process.off('warning', onWarning);
  assert.equal(warnings.filter(({ message }) => message.includes('my sink failed')).map(({ code }) => code), ['HK_LOG_SINK_FAILED']);
});

test('a record keeps the message as written (template) when placeholders were filled, and only then', () => {
  const bus = createBus();
  const records: LogRecord[] = [];
  bus.on('log', ({ record }) => records.push(record));
  const logger = new Logger({ bus, channel: 'app' });
  logger.info('Login for {user}', { user: 'bob' });
  logger.info('No placeholder');
  assert.is(records[0]!.template, 'Login for {user}');
  assert.is(records[1]!.template, undefined);
});

test('isEnabled() takes each level from 0 to 7 as a number, and a name, short name or number alike', () => {
  const bus = createBus();
  const all = new Logger({ bus });
  for (let level = 0; level <= 7; level++) assert.ok(all.isEnabled(level), `level ${level}`);
  assert.ok(all.isEnabled('warn'));
  const errors = new Logger({ bus, level: 'error' });
  assert.ok(errors.isEnabled(LogLevel.EMERGENCY));
  assert.ok(errors.isEnabled('err'));
  assert.not.ok(errors.isEnabled(LogLevel.DEBUG));
  assert.not.ok(errors.isEnabled('warn'));
  assert.throws(() => all.isEnabled(-1), TypeError, 'a number below 0 is refused, as log() refuses it');
});

test('a placeholder is filled wherever its brace stands, and of undefined, NaN, a bigint, an async function or an object JSON writes nothing as text', () => {
  assert.is(interpolate('x{a}', { a: 1 }), 'x1', 'a brace second in the message');
  assert.is(interpolate('{a} {b}', { a: undefined, b: null }), 'undefined null');
  assert.is(interpolate('{n} {i} {big}', { n: Number.NaN, i: -Infinity, big: 10n }), 'NaN -Infinity 10');
  assert.is(interpolate('{t} {f}', { t: true, f: async () => 1 }), 'true [object Function]');
  class Token {
    toJSON(): undefined {
      return undefined;
    }
  }
  assert.is(interpolate('{t}', { t: new Token() }), '[object Token]', 'a toJSON that returns undefined');
  const nameless = { toJSON: () => undefined, constructor: { name: '' } };
  const numbered = { toJSON: () => undefined, constructor: { name: 5 } };
  assert.is(interpolate('{a} {b}', { a: nameless, b: numbered }), '[object Object] [object Object]', 'a class name that is empty or no string');
});

test('a name an error is given of its own stays, rather than its class\'s', () => {
  class QuotaError extends Error {}
  const error = new QuotaError('over by 3');
  error.name = 'Quota';
  assert.is(interpolate('{e}', { e: error }), 'Quota: over by 3');
});

test('a message whose text cannot be had (no prototype) is written as its type, without throwing', () => {
  const { bus, entries } = collect();
  new Logger({ bus }).error(Object.create(null) as never);
  assert.equal(entries.map((e) => e.record.message), ['[object]']);
});

test('isLevelName() and toLevel() take the names and short names, in any case, and nothing else', () => {
  assert.ok(isLevelName('warn'));
  assert.ok(isLevelName('Critical'));
  assert.not.ok(isLevelName('fatal'));
  assert.not.ok(isLevelName(3));
  assert.is(toLevel('Emerg'), LogLevel.EMERGENCY);
  assert.is(toLevel('debug'), LogLevel.DEBUG);
  for (const level of ['fatal', 3]) {
    assert.throws(
      () => toLevel(level as never),
      (error: unknown) => error instanceof RangeError && error.message === `Unknown log level "${level}"; use one of emergency, alert, critical, error, warning, notice, info, debug (or emerg, crit, err, warn).`,
      `level ${level}`,
    );
  }
});

test('messageWithSecretsHidden() fills a record\'s placeholders again with the secret ones redacted, and leaves a record with none to hide as written', () => {
  const { bus, entries } = collect();
  const logger = new Logger({ bus });
  logger.info('Login for {user} with {password}', { user: 'bob', password: 'hunter2' });
  logger.info('Login for {user}', { user: 'bob', password: 'hunter2' });
  logger.info('Password changed', { password: 'hunter2' });
  const isSecretKey = (key: string): boolean => key === 'password';
  assert.equal(entries.map((e) => messageWithSecretsHidden(e.record, isSecretKey)), ['Login for bob with [redacted]', 'Login for bob', 'Password changed']);
  assert.is(messageWithSecretsHidden(entries[1]!.record, () => false), 'Login for bob', 'no secret key');
});

test('the debug log buffer keeps maxPerRequest records of a request and counts the rest, ignores records of no request, and stops at detach()', () => {
  const bus = createBus();
  const buffer = new DebugLogBuffer(bus, { maxPerRequest: 2 });
  const request = Request.create('/a');
  let current: object | undefined = request;
  const logger = new Logger({ bus, currentRequest: () => current });
  for (const message of ['one', 'two', 'three', 'four']) logger.info(message);
  logger.error('five');
  assert.equal(buffer.getLogs(request).map((r) => r.message), ['one', 'two']);
  assert.is(buffer.droppedCount(request), 3);
  // By level too: the error among them is not lost.
  const byLevel = buffer.droppedByLevel(request);
  assert.equal([byLevel[LogLevel.INFO], byLevel[LogLevel.ERROR], byLevel[LogLevel.DEBUG]], [2, 1, undefined]);
  const other = Request.create('/b');
  assert.equal(buffer.getLogs(other), []);
  assert.is(buffer.droppedCount(other), 0);
  assert.equal(buffer.droppedByLevel(other), []);
  current = { notARequest: true };
  logger.info('of something else');
  assert.equal(buffer.getLogs(current), []);
  assert.is(buffer.droppedCount(current), 0);
  buffer.detach();
  current = other;
  logger.info('after detach');
  assert.equal(buffer.getLogs(other), []);
});

test('the debug log buffer lists the records of a request and its sub-requests in time order', () => {
  const bus = createBus();
  const buffer = new DebugLogBuffer(bus);
  const main = Request.create('/');
  const sub = Request.create('/_error');
  const at = (request: Request, time: number, message: string): void => void bus.emit('log', { record: { time, level: 6, levelName: 'INFO', channel: 'app', message, context: {} }, request });
  at(main, 1, 'main first');
  at(sub, 2, 'sub');
  at(main, 3, 'main last');
  assert.equal(buffer.getLogsOf([main, sub]).map((r) => r.message), ['main first', 'sub', 'main last']);
  assert.equal(buffer.getLogsOf([sub, main]).map((r) => r.message), ['main first', 'sub', 'main last']);
  buffer.detach();
});

test.run();
