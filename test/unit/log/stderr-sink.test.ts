import { execFileSync, spawn } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { Writable } from 'node:stream';
import { closeSync, constants, createWriteStream, existsSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { runInNewContext } from 'node:vm';

const require = createRequire(import.meta.url);
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Logger, attachStderrSink, createBus, formatJson, formatLine, type LogRecord, type RequestDescription } from '../../../lib/log/index.js';
import { Redactor } from '../../../lib/profiler/redactor.js';

const test = suite('stderr sink');

const logModule = new URL('../../../lib/log/index.js', import.meta.url).href;

test('a closed stderr (EPIPE: `serve 2>&1 | head -1`) does not end the process; records are dropped', async () => {
  // The child logs to its real stderr, a pipe the parent has closed, then says it is still alive.
  const script = `
    const { Logger, attachStderrSink, createBus } = await import(${JSON.stringify(logModule)});
    const bus = createBus();
    attachStderrSink(bus, { json: true });
    const logger = new Logger({ bus });
    const pause = () => new Promise((resolve) => setTimeout(resolve, 50));
    for (let i = 0; i < 5; i++) { logger.error('record {i} ' + 'x'.repeat(70000), { i }); await pause(); }
    process.stdout.write('alive');
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stderr!.destroy();
  let stdout = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.is(stdout, 'alive');
  assert.is(code, 0);
});

/** A stream whose reader has stalled: nothing is written until `release()`. */
function stalledStream() {
  const written: string[] = [];
  let pending: Array<() => void> = [];
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string, _encoding, callback) {
      written.push(chunk);
      pending.push(callback);
    },
  });
  const release = (): void => {
    const callbacks = pending;
    pending = [];
    for (const callback of callbacks) callback();
  };
  return { stream, written, release };
}

test('a stalled stderr holds a bounded backlog: later records are dropped and counted, and the count is written once it drains', async () => {
  const { stream, written, release } = stalledStream();
  const bus = createBus();
  attachStderrSink(bus, { json: true, stream, maxBuffered: 100_000 });
  const logger = new Logger({ bus });
  for (let i = 0; i < 10_000; i++) logger.error('record {i} {pad}', { i, pad: 'x'.repeat(1000) });
  assert.ok(stream.writableLength < 100_000 + 2000, `backlog ${stream.writableLength}`);
  // Written out one chunk at a time, until the stream says it has drained.
  while (stream.writableLength > 0) {
    release();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const kept = written.length - 1;
  assert.ok(kept > 0 && kept < 200, `kept ${kept}`);
  assert.equal(written.slice(0, kept).map((line) => JSON.parse(line).context.i), [...Array(kept).keys()], 'the first records, in order');
  const note = JSON.parse(written.at(-1)!);
  assert.is(note.level, 'warning');
  assert.is(note.channel, 'log');
  assert.is(note.message, `stderr could not keep up: ${10_000 - kept} log records were dropped`);
  logger.error('after');
  assert.is(JSON.parse(written.at(-1)!).message, 'after');
});

test('a maxBuffered that is no whole number of characters, 0 or more, is a TypeError naming it, not a backlog never bounded (NaN) or every record dropped (-1)', () => {
  for (const maxBuffered of [Number.NaN, -1, 1.5, Infinity, '1mb']) {
    const { stream } = stalledStream();
    assert.throws(
      () => attachStderrSink(createBus(), { stream, maxBuffered: maxBuffered as number }),
      (error: unknown) => error instanceof TypeError && error.message === `maxBuffered is a whole number of characters, 0 or more, not ${typeof maxBuffered === 'string' ? `the string "${maxBuffered}"` : `number ${maxBuffered}`}.`,
      String(maxBuffered),
    );
  }
  const { stream } = stalledStream();
  attachStderrSink(createBus(), { stream, maxBuffered: 0 })();
});

function record(context: Record<string, unknown>, message = 'm'): LogRecord {
  return { time: 0, level: 3, levelName: 'ERROR', channel: 'app', message, context };
}

test('a text line\'s message cannot forge a line: its control characters and line breaks are percent-encoded (a 404 message quotes the path)', () => {
  const line = formatLine(record({}, 'No route found for "GET /x\r\n[2026-01-01T00:00:00.000Z] app.CRITICAL: forged\u2028\u001b[2J"'));
  assert.is(line.split('\n').length, 2);
  assert.not.match(line, /[\r\u2028\u001b]/);
  assert.match(line, /GET \/x%0D%0A\[2026-01-01T00:00:00\.000Z\] app\.CRITICAL: forged%E2%80%A8%1B\[2J"\n$/);
});

test('an error in a JSON line keeps its class, message, code, stack and cause chain (a cycle cut), on one line', () => {
  const root = new RangeError('root');
  const error = Object.assign(new TypeError('boom', { cause: root }), { code: 'E_BOOM' });
  root.cause = error;
  const line = formatJson(record({ exception: error, many: new AggregateError([new Error('one')], 'all') }));
  assert.is(line.indexOf('\n'), line.length - 1);
  const { exception, many } = JSON.parse(line).context;
  assert.is(exception.class, 'TypeError');
  assert.is(exception.message, 'boom');
  assert.is(exception.code, 'E_BOOM');
  assert.is(exception.stack, error.stack);
  assert.equal(exception.cause.class, 'RangeError');
  assert.is(exception.cause.stack, root.stack);
  assert.is(exception.cause.cause, '[circular]');
  assert.is(many.errors[0].message, 'one');
  assert.match(formatLine(record({ exception: error })), /"stack":"TypeError: boom\\n    at /);
});

/** The error reading a file that is not there throws: a system error, with its own code, errno, syscall and path. */
function missingFileError(): Error {
  try {
    readFileSync('/nonexistent/http-kernel-test');
  } catch (error) {
    return error as Error;
  }
  throw new Error('the file exists');
}

test('an error in a JSON line keeps its own fields next to its class and message: a system error\'s errno, syscall and path, a library\'s statusCode, secret ones redacted', () => {
  class QuotaError extends Error {
    constructor(message: string, readonly limit: number) {
      super(message);
      this.name = 'QuotaError';
    }
  }
  const library = Object.assign(new Error('Not Found'), { statusCode: 404, name: 'HTTPError', password: 'hunter2', detail: { retry: false } });
  const line = formatJson(record({ error: missingFileError(), library, quota: new QuotaError('over', 3) }), undefined, new Redactor());
  const { error, quota, library: written } = JSON.parse(line).context;
  assert.equal({ ...error, stack: undefined }, { class: 'Error', message: "ENOENT: no such file or directory, open '/nonexistent/http-kernel-test'", code: 'ENOENT', errno: -2, syscall: 'open', path: '/nonexistent/http-kernel-test', stack: undefined });
  assert.equal({ ...written, stack: undefined }, { class: 'Error', message: 'Not Found', statusCode: 404, name: 'HTTPError', password: '[redacted]', detail: { retry: false }, stack: undefined });
  assert.equal(Object.keys(quota), ['class', 'message', 'limit', 'stack'], 'a name that repeats the class is not written twice');
  assert.match(formatLine(record({ error: missingFileError() })), /"code":"ENOENT","errno":-2,"syscall":"open","path":"\/nonexistent\/http-kernel-test","stack":/);
});

test('an error\'s own fields stay bounded and never fail the line: a cycle, a getter that throws, a Proxy whose ownKeys trap throws, a huge field', () => {
  const looped = Object.assign(new Error('looped'), { info: {} as Record<string, unknown> });
  looped.info.error = looped;
  const throwing = new Error('throwing');
  Object.defineProperty(throwing, 'broken', { enumerable: true, get: () => { throw new Error('getter'); } });
  Object.assign(throwing, { kept: 1 });
  const hidden = new Proxy(new TypeError('hidden'), { ownKeys: () => { throw new Error('trap'); } });
  const { context } = JSON.parse(formatJson(record({ looped, throwing, hidden })));
  assert.equal(context.looped.info, { error: '[circular]' });
  assert.is(context.throwing.kept, 1);
  assert.not.ok('broken' in context.throwing);
  assert.is(context.hidden.message, 'hidden');
  const huge = formatJson(record({ error: Object.assign(new Error('huge'), { body: 'b'.repeat(1_000_000), ids: Array.from({ length: 100_000 }, (_, i) => i) }) }));
  assert.ok(huge.length < 100_000, `line ${huge.length}`);
});

test('an error whose own fields are huge (a client library\'s response, a list of 40,000 items) keeps its class, message and stack and the rest of the context in its line: the fields past 64 KiB are a note', () => {
  const upstream = Object.assign(new Error('upstream failed'), { status: 502, items: Array.from({ length: 40_000 }, (_, id) => ({ id, name: `item ${id}` })), after: 'kept?' });
  const { context } = JSON.parse(formatJson(record({ error: upstream, route: 'home' })));
  assert.is(context.route, 'home');
  assert.is(context.error.class, 'Error');
  assert.is(context.error.message, 'upstream failed');
  assert.is(context.error.status, 502);
  assert.is(context.error.items, "[left out: the error's fields pass 65536 characters]");
  assert.is(context.error.after, 'kept?', 'a small field after the huge one still fits');
  assert.is(context.error.stack, upstream.stack);
  const fields = { ...context.error, stack: undefined };
  assert.ok(JSON.stringify(fields).length < 70_000);
});

test('an error whose constructor cannot be read (a throwing getter), is undefined or is an anonymous class is written as class Error, as in profiles, and the rest of the context with it', () => {
  const throwing = Object.defineProperty(new Error('throwing'), 'constructor', { get: () => { throw new Error('no constructor'); } });
  const anonymous = new (class extends Error {})('anonymous');
  const { context } = JSON.parse(formatJson(record({ throwing, anonymous, route: 'home' })));
  assert.is(context.route, 'home');
  assert.equal([context.throwing.class, context.throwing.message], ['Error', 'throwing']);
  assert.equal([context.anonymous.class, context.anonymous.message], ['Error', 'anonymous']);
});

test('an error of another realm (a vm context\'s) in a JSON line keeps its class, message, stack and causes, as one of this realm does, not {}', () => {
  const foreign = runInNewContext('const e = new TypeError("x", { cause: new RangeError("root") }); e.code = "E_X"; e') as Error;
  const many = runInNewContext('new AggregateError([new Error("one")], "all")') as Error;
  const { exception, all } = JSON.parse(formatJson(record({ exception: foreign, all: many }))).context;
  assert.is(exception.class, 'TypeError');
  assert.is(exception.message, 'x');
  assert.is(exception.code, 'E_X');
  assert.is(exception.stack, foreign.stack);
  assert.is(exception.cause.class, 'RangeError');
  assert.is(all.errors[0].message, 'one');
  assert.match(formatLine(record({ exception: foreign })), /"class":"TypeError","message":"x"/);
});

test('a line stays bounded: strings are cut at 16,384 characters, and a context longer than 256 kB is left out with a note', () => {
  const long = formatJson(record({ body: 'b'.repeat(1_000_000) }, 'm'.repeat(1_000_000)));
  assert.ok(long.length < 40_000, `line ${long.length}`);
  const parsed = JSON.parse(long);
  assert.is(parsed.message, `${'m'.repeat(16_384)}… [983616 more characters]`);
  assert.is(parsed.context.body, `${'b'.repeat(16_384)}… [983616 more characters]`);
  const wide = formatJson(record({ ids: Array.from({ length: 100_000 }, (_, i) => i) }));
  assert.ok(wide.length < 1000, `line ${wide.length}`);
  assert.match(JSON.parse(wide).context, /^\[context of at least \d+ characters left out: longer than 262144\]$/);
  assert.ok(formatLine(record({ ids: Array.from({ length: 100_000 }, (_, i) => i) })).length < 1000);
});

test('a huge context is written only up to the 256 kB cap: a 10 MiB Buffer never goes through its toJSON, a huge array is read no further than the cap', () => {
  const toJSON = Buffer.prototype.toJSON;
  let toJSONCalls = 0;
  Buffer.prototype.toJSON = function (this: Buffer) {
    toJSONCalls++;
    return toJSON.call(this);
  };
  try {
    const big = Buffer.alloc(10 * 1024 * 1024, 7);
    for (const line of [formatJson(record({ upload: big })), formatLine(record({ upload: big }))]) {
      assert.ok(line.length < 1000, `line ${line.length}`);
      assert.match(line, /\[context of at least \d+ characters left out: longer than 262144\]/);
    }
    assert.is(toJSONCalls, 0, 'the 10 MiB are not copied into an array of numbers first');
    // A small Buffer and a typed array are written as JSON.stringify has them.
    assert.equal(JSON.parse(formatJson(record({ small: Buffer.from([1, 2, 3]), typed: new Uint16Array([4, 5]) }))).context, { small: { type: 'Buffer', data: [1, 2, 3] }, typed: { 0: 4, 1: 5 } });
  } finally {
    Buffer.prototype.toJSON = toJSON;
  }
  let reads = 0;
  const items = new Proxy(Array.from({ length: 5_000_000 }, () => 1), {
    get(target, key, receiver) {
      if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  assert.match(JSON.parse(formatJson(record({ items }))).context, /^\[context of at least \d+ characters left out: longer than 262144\]$/);
  assert.ok(reads <= 262_144 / 2 + 1, `${reads} items read`);
});

test('a string cut in the middle of a surrogate pair keeps the whole pair out: no lone surrogate (U+FFFD for readers) ends the cut', () => {
  // An emoji (two UTF-16 units) across the limit: 16,383 characters, then the pair at 16,383 and 16,384.
  const text = `${'a'.repeat(16_383)}\u{1F600}${'z'.repeat(10)}`;
  const parsed = JSON.parse(formatJson(record({ body: text }, text)));
  for (const cutText of [parsed.message, parsed.context.body] as string[]) {
    assert.is(cutText, `${'a'.repeat(16_383)}… [12 more characters]`);
    assert.not.match(cutText, /[\ud800-\udfff]/);
  }
  // A pair that ends exactly at the limit is kept whole.
  const fits = `${'a'.repeat(16_382)}\u{1F600}${'z'.repeat(10)}`;
  assert.is(JSON.parse(formatJson(record({}, fits))).message, `${'a'.repeat(16_382)}\u{1F600}… [10 more characters]`);
});

const described: RequestDescription = { method: 'GET', path: '/orders/42?page=2', ip: '203.0.113.7', token: 'abc123' };

test('a JSON line says which request wrote it: method, path and query, client IP and profiler token, before the context', () => {
  const line = formatJson(record({ id: 42 }), described);
  assert.is(line.indexOf('\n'), line.length - 1);
  const parsed = JSON.parse(line);
  assert.equal(parsed.request, { method: 'GET', path: '/orders/42?page=2', ip: '203.0.113.7', token: 'abc123' });
  assert.equal(Object.keys(parsed), ['time', 'level', 'channel', 'message', 'request', 'context']);
  assert.equal(parsed.context, { id: 42 });
});

test('a text line ends with the request: [GET /path token=abc123]; a sub-request says so and names its main request\'s token', () => {
  assert.is(formatLine(record({}, 'Uncaught error'), described), '[1970-01-01T00:00:00.000Z] app.ERROR: Uncaught error [GET /orders/42?page=2 token=abc123]\n');
  assert.is(formatLine(record({ id: 42 }), { method: 'GET', path: '/p' }), '[1970-01-01T00:00:00.000Z] app.ERROR: m {"id":42} [GET /p]\n');
  const sub = { method: 'GET', path: '/p', token: 'def456', sub: true, mainToken: 'abc123' };
  assert.match(formatLine(record({}), sub), / \[GET \/p sub-request token=def456 main=abc123\]\n$/);
  assert.equal(JSON.parse(formatJson(record({}), sub)).request, sub);
});

test('a record without a request (start-up, the storage worker) is written as before: no request field, no suffix', () => {
  for (const none of [undefined, {}, { method: 1, path: null, sub: 'yes' } as unknown as RequestDescription]) {
    assert.is(formatJson(record({ a: 1 }), none), formatJson(record({ a: 1 })));
    assert.is(formatLine(record({ a: 1 }), none), formatLine(record({ a: 1 })));
  }
  assert.is(JSON.parse(formatJson(record({ a: 1 }))).request, undefined);
  assert.is(formatLine(record({ a: 1 })), '[1970-01-01T00:00:00.000Z] app.ERROR: m {"a":1}\n');
});

test('a long path is cut at 2,048 characters, with how many were left out, in both formats', () => {
  const path = `/${'a'.repeat(9999)}`;
  const json = JSON.parse(formatJson(record({}), { method: 'GET', path })).request.path;
  assert.is(json, `${path.slice(0, 2048)}… [7952 more characters]`);
  const line = formatLine(record({}), { method: 'GET', path, token: 'abc123' });
  assert.ok(line.length < 2200, `line ${line.length}`);
  assert.ok(line.endsWith(`${path.slice(0, 2048)}… [7952 more characters] token=abc123]\n`));
});

test('a path cannot forge a log line: CR LF, escape sequences and Unicode line breaks are percent-encoded in text and escaped in JSON', () => {
  const path = '/x\r\n[2026-01-01T00:00:00.000Z] app.CRITICAL: forged\u001b[2J\u0000\u0085\u2028\u2029\t?q=%0d%0a';
  const hostile = { method: 'GET\n', path, ip: '10.0.0.1\r', token: 'abc123' };
  const line = formatLine(record({}), hostile);
  assert.is(line.indexOf('\n'), line.length - 1);
  assert.not.match(line, /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
  assert.ok(line.endsWith(' [GET%0A /x%0D%0A[2026-01-01T00:00:00.000Z] app.CRITICAL: forged%1B[2J%00%85%E2%80%A8%E2%80%A9%09?q=%0d%0a token=abc123]\n'), line);
  const json = formatJson(record({}), hostile);
  assert.is(json.indexOf('\n'), json.length - 1);
  assert.not.match(json.slice(0, -1), /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/, 'no raw control or line-break character');
  assert.is(json.split(/\r\n|[\n\r\u000b\u000c\u001c-\u001e\u0085\u2028\u2029]/).length, 2, 'one line for every reader (Python splitlines too)');
  assert.equal(JSON.parse(json).request, { method: 'GET\n', path, ip: '10.0.0.1\r', token: 'abc123' });
});

test('a JSON line stays one line for every reader when its message or context holds NEL, C1 controls, U+2028 or U+2029', () => {
  // A header value may carry 0x85 (NEL): node keeps Latin-1 in header values, and a context may log it.
  const message = 'Rejected header X-Note: a\u0085b\u2028c';
  const context = { note: 'one\u2029two\u009bthree', nested: { list: ['\u2028'] } };
  const json = formatJson(record(context, message), { method: 'GET', path: '/p' });
  assert.is(json.indexOf('\n'), json.length - 1);
  assert.not.match(json.slice(0, -1), /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/, 'no raw control or line-break character');
  assert.is(json.split(/\r\n|[\n\r\u000b\u000c\u001c-\u001e\u0085\u2028\u2029]/).length, 2, 'one line for Python splitlines too');
  const parsed = JSON.parse(json);
  assert.is(parsed.message, message, 'the escapes read back as the characters');
  assert.equal(parsed.context, context);
});

/** A stream that keeps what is written. */
function memoryStream(isTTY = false) {
  const written: string[] = [];
  return { written, stream: { isTTY, write: (chunk: string) => written.push(chunk) } };
}

test('the sink describes the request of each record it writes, and only those: not records below its level, nor records without a request', () => {
  const { written, stream } = memoryStream();
  const bus = createBus();
  const asked: object[] = [];
  const request = { url: '/r' };
  attachStderrSink(bus, { stream, describeRequest: (r) => (asked.push(r), { method: 'POST', path: '/r', token: 'fedcba' }) });
  const logger = new Logger({ bus, currentRequest: () => request });
  logger.info('below the level');
  logger.error('written');
  new Logger({ bus }).warning('no request');
  assert.equal(asked, [request]);
  assert.is(written.length, 2);
  assert.equal(JSON.parse(written[0]!).request, { method: 'POST', path: '/r', token: 'fedcba' });
  assert.is(JSON.parse(written[1]!).request, undefined);
});

test('a describer that throws, or returns getters that throw, costs the line its request, not the record', () => {
  const { written, stream } = memoryStream(true);
  const bus = createBus();
  let calls = 0;
  const describers = [
    () => {
      throw new Error('describer failed');
    },
    () => ({ get method(): string { throw new Error('getter failed'); } }),
    () => new Proxy({}, { get() { throw new Error('trap'); }, ownKeys() { throw new Error('trap'); } }),
    () => 'GET /' as unknown as RequestDescription,
  ];
  for (const describe of describers) {
    const detach = attachStderrSink(bus, { stream, describeRequest: () => (calls++, describe()) });
    new Logger({ bus, currentRequest: () => ({}) }).error('kept {n}', { n: calls });
    detach();
  }
  assert.is(calls, 4);
  assert.equal(written.map((line) => line.replace(/^\[[^\]]+\] /, '')), ['app.ERROR: kept 0 {"n":0}\n', 'app.ERROR: kept 1 {"n":1}\n', 'app.ERROR: kept 2 {"n":2}\n', 'app.ERROR: kept 3 {"n":3}\n']);
});

test('a text line escapes C1 controls and the line separators in the context as in the message: a terminal acts on them', () => {
  const line = formatLine({ time: 0, level: 6, levelName: 'INFO', channel: 'app', message: 'm\u009b31m', context: { k: 'x\u0085y\u009b31m\u2028z' } });
  assert.not.match(line, /[\u0085\u009b\u2028]/);
  assert.match(line, /x%85y%9B31m%E2%80%A8z/);
});

test('a file stderr that failed once (ENOSPC: a full disk) is written again, to its descriptor: the line the failure cut is ended first', async () => {
  const { mkdtempSync, openSync, readFileSync, closeSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const file = join(mkdtempSync(join(tmpdir(), 'sink-')), 'stderr.log');
  const fd = openSync(file, 'w');
  // As node's stderr on a file: a write that fails leaves the stream failed for good, every later write failing too.
  const errors: ((error: Error) => void)[] = [];
  const stream = {
    fd,
    writableLength: 0,
    write(chunk: string, callback?: (error?: Error | null) => void) {
      if (chunk.includes('first')) {
        require('node:fs').writeSync(fd, chunk.slice(0, 10)); // a short write, then ENOSPC
      }
      process.nextTick(() => callback?.(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })));
      process.nextTick(() => errors.forEach((listener) => listener(Object.assign(new Error('no space'), { code: 'ENOSPC' }))));
      return false;
    },
    on(_event: string, listener: (error: Error) => void) {
      errors.push(listener);
    },
  };
  const bus = createBus();
  attachStderrSink(bus, { json: true, stream });
  const logger = new Logger({ bus });
  logger.error('first');
  await new Promise((resolve) => setImmediate(resolve));
  logger.error('second');
  closeSync(fd);
  const lines = readFileSync(file, 'utf8').split('\n');
  assert.is(lines.length, 4, 'the cut line, the first record again, the second, and the end');
  assert.is(lines[0], '{"time":"2');
  assert.is(JSON.parse(lines[1]!).message, 'first');
  assert.is(JSON.parse(lines[2]!).message, 'second');
});

test('a backlog that crosses its bound many times before it drains waits for the drain with one listener', () => {
  const listeners: (() => void)[] = [];
  const stream = {
    writableLength: 0,
    write(chunk: string) {
      this.writableLength += chunk.length;
      return false;
    },
    once(_event: 'drain', listener: () => void) {
      listeners.push(listener);
    },
  };
  const bus = createBus();
  attachStderrSink(bus, { json: true, stream, maxBuffered: 1000 });
  const logger = new Logger({ bus });
  for (let round = 0; round < 50; round++) {
    for (let i = 0; i < 20; i++) logger.error('x'.repeat(200));
    stream.writableLength = Math.max(1, stream.writableLength - 900); // read in part, never empty
  }
  assert.is(listeners.length, 1);
});

test('a text line is written for a context that is no object or whose keys cannot be listed (a JavaScript caller\'s null, a Proxy)', () => {
  const written: string[] = [];
  const bus = createBus();
  attachStderrSink(bus, { json: false, stream: { write: (chunk: string) => written.push(chunk) } });
  const logger = new Logger({ bus });
  logger.error('null context', null as never);
  logger.error('proxy context', new Proxy({}, { ownKeys() { throw new Error('trap'); } }));
  assert.is(written.length, 2);
  assert.match(written[0]!, /app\.ERROR: null context null\n$/);
  assert.match(written[1]!, /app\.ERROR: proxy context \[context that cannot be written as JSON: Error: trap\]\n$/);
});

/** A stream whose backlog the test sets, and that says `drain` when told to. */
function backlogStream() {
  const events = new EventEmitter();
  const written: string[] = [];
  const stream = {
    writableLength: 0,
    write: (chunk: string): void => void written.push(chunk),
    on: (event: 'error' | 'drain', listener: () => void) => events.on(event, listener),
    once: (event: 'drain', listener: () => void) => events.once(event, listener),
    off: (event: 'error' | 'drain', listener: () => void) => events.off(event, listener),
  };
  return { stream, written, events };
}

test('a backlog of exactly maxBuffered is still written; the count of records dropped past it, in its context, comes before the next record written, and not again at the drain', () => {
  const { stream, written, events } = backlogStream();
  const bus = createBus();
  attachStderrSink(bus, { json: true, stream, maxBuffered: 10 });
  const logger = new Logger({ bus });
  stream.writableLength = 10;
  logger.error('at the bound');
  stream.writableLength = 11;
  logger.error('dropped');
  logger.error('dropped too');
  stream.writableLength = 0;
  logger.error('next');
  events.emit('drain');
  assert.equal(written.map((line) => [JSON.parse(line).message, JSON.parse(line).context]), [
    ['at the bound', {}],
    ['stderr could not keep up: 2 log records were dropped', { dropped: 2 }],
    ['next', {}],
  ]);
});

test('a backlog that drains, then crosses its bound again, has its count written at each drain', () => {
  const { stream, written, events } = backlogStream();
  const bus = createBus();
  attachStderrSink(bus, { json: true, stream, maxBuffered: 10 });
  const logger = new Logger({ bus });
  for (let round = 1; round <= 2; round++) {
    stream.writableLength = 11;
    logger.error('dropped');
    stream.writableLength = 0;
    events.emit('drain');
  }
  assert.equal(written.map((line) => JSON.parse(line).message), ['stderr could not keep up: 1 log records were dropped', 'stderr could not keep up: 1 log records were dropped']);
});

test('detaching lets go of the stream\'s error and drain listeners, but for records still to count: then at the drain, once their count is written', () => {
  const { stream, written, events } = backlogStream();
  const bus = createBus();
  const logger = new Logger({ bus });
  const detachIdle = attachStderrSink(bus, { json: true, stream, maxBuffered: 10 });
  stream.writableLength = 11;
  logger.error('dropped');
  stream.writableLength = 0;
  logger.error('next, after the count');
  detachIdle();
  assert.equal([events.listenerCount('error'), events.listenerCount('drain')], [0, 0], 'nothing left to count');
  const detachBusy = attachStderrSink(bus, { json: true, stream, maxBuffered: 10 });
  stream.writableLength = 11;
  logger.error('dropped');
  detachBusy();
  assert.equal([events.listenerCount('error'), events.listenerCount('drain')], [1, 2], 'a count to write at the drain');
  stream.writableLength = 0;
  events.emit('drain');
  assert.equal([events.listenerCount('error'), events.listenerCount('drain')], [0, 0]);
  assert.is(JSON.parse(written.at(-1)!).message, 'stderr could not keep up: 1 log records were dropped');
});

test('a stream error saying the reader is gone (EPIPE, ERR_STREAM_DESTROYED) stops the sink, also on a stream with a descriptor', async () => {
  const { mkdtempSync, openSync, readFileSync, closeSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  for (const code of ['EPIPE', 'ERR_STREAM_DESTROYED']) {
    const file = join(mkdtempSync(join(tmpdir(), 'sink-')), 'stderr.log');
    const fd = openSync(file, 'w');
    const { stream, written, events } = backlogStream();
    const bus = createBus();
    attachStderrSink(bus, { json: true, stream: { ...stream, fd } });
    const logger = new Logger({ bus });
    logger.error('before');
    events.emit('error', Object.assign(new Error('gone'), { code }));
    logger.error('after');
    closeSync(fd);
    assert.equal(written.map((line) => JSON.parse(line).message), ['before'], code);
    assert.is(readFileSync(file, 'utf8'), '', `${code}: nothing written to the descriptor`);
  }
});

test('a stream that calls back each write with no argument, as a SinkStream may, goes on being written', async () => {
  const written: string[] = [];
  const stream = {
    write(chunk: string, callback?: (error?: Error | null) => void): void {
      written.push(chunk);
      process.nextTick(() => callback?.());
    },
  };
  const bus = createBus();
  attachStderrSink(bus, { json: true, stream });
  const logger = new Logger({ bus });
  logger.error('one');
  await new Promise((resolve) => setImmediate(resolve));
  logger.error('two');
  assert.equal(written.map((line) => JSON.parse(line).message), ['one', 'two']);
});

/** A FIFO of a fresh directory, opened without blocking at both ends, its buffer filled: a write to it fails with EAGAIN until it is read. */
function fullFifo() {
  const dir = mkdtempSync(join(tmpdir(), 'sink-'));
  const path = join(dir, 'fifo');
  execFileSync('mkfifo', [path]);
  const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  try {
    for (;;) writeSync(writer, Buffer.alloc(4096));
  } catch (error) {
    if ((error as { code?: string }).code !== 'EAGAIN') throw error;
  }
  return { dir, path, reader, writer };
}

/** A JSON sink on a full FIFO whose stream has failed on its first record ('lost'): from then on it writes to the descriptor. */
async function sinkFailedOnFullFifo() {
  const { dir, reader, writer } = fullFifo();
  const stream = createWriteStream('', { fd: writer, autoClose: false });
  const bus = createBus();
  attachStderrSink(bus, { json: true, stream });
  const logger = new Logger({ bus });
  logger.error('lost');
  await once(stream, 'error');
  return { dir, reader, writer, logger };
}

/** What a descriptor opened without blocking holds now, read until it has no more. */
function readWaiting(fd: number): string {
  const chunks: Buffer[] = [];
  const buffer = Buffer.alloc(65536);
  try {
    for (let n; (n = readSync(fd, buffer)) > 0; ) chunks.push(Buffer.from(buffer.subarray(0, n)));
  } catch (error) {
    if ((error as { code?: string }).code !== 'EAGAIN') throw error;
  }
  return Buffer.concat(chunks).toString();
}

/** Opens `path` until the descriptor given is `fd` (the lowest free number is given first); returns every descriptor opened. */
function openUnder(fd: number, path: string): number[] {
  const opened: number[] = [];
  while (opened.at(-1) !== fd && opened.length < 100) opened.push(openSync(path, 'w'));
  assert.is(opened.at(-1), fd, 'a file opened under the number');
  return opened;
}

test('stderr on a full disk (/dev/full, ENOSPC) loses records without ending the process; once it has room (fd 2 reopened on a file), a WARNING of the log channel counts them and says why, before the next record', async () => {
  if (!existsSync('/dev/full')) return;
  const dir = mkdtempSync(join(tmpdir(), 'sink-'));
  const file = join(dir, 'stderr.log');
  // The child's stderr is /dev/full, whose writes all fail; then its fd 2 is closed and opened again on a file.
  const script = `
    const { closeSync, openSync } = await import('node:fs');
    const { Logger, attachStderrSink, createBus } = await import(${JSON.stringify(logModule)});
    const bus = createBus();
    attachStderrSink(bus, { json: true });
    const logger = new Logger({ bus });
    const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
    logger.error('lost one');
    await pause();
    logger.error('lost two');
    await pause();
    closeSync(2);
    const fd = openSync(${JSON.stringify(file)}, 'w');
    logger.error('written');
    process.stdout.write('alive on fd ' + fd);
  `;
  const full = openSync('/dev/full', 'w');
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', full] });
  closeSync(full);
  let stdout = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  assert.is(stdout, 'alive on fd 2');
  assert.is(code, 0);
  const lines = readFileSync(file, 'utf8').split('\n');
  rmSync(dir, { recursive: true });
  assert.is(lines.length, 4, 'the newline ending a line a failure may have cut, the count, the record, and the end');
  assert.is(lines[0], '');
  const note = JSON.parse(lines[1]!);
  assert.equal([note.level, note.channel, note.message, note.context], ['warning', 'log', 'stderr could not be written (ENOSPC): 2 log records were lost', { lost: 2, reason: 'ENOSPC' }]);
  assert.is(JSON.parse(lines[2]!).message, 'written');
  assert.is(lines[3], '');
});

test('a stream whose file failed and whose reader then goes (EPIPE on its descriptor) stops the sink: a reader that comes back gets nothing', async () => {
  const { dir, path, reader, writer } = fullFifo();
  // A file stream that keeps its descriptor (as stderr's does) fails with EAGAIN on the full FIFO: the sink goes on to the descriptor.
  const stream = createWriteStream('', { fd: writer, autoClose: false });
  const bus = createBus();
  attachStderrSink(bus, { json: true, stream });
  const logger = new Logger({ bus });
  logger.error('lost to EAGAIN');
  await once(stream, 'error');
  closeSync(reader);
  logger.error('lost to EPIPE');
  const again = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  readWaiting(again);
  logger.error('after');
  assert.is(readWaiting(again), '');
  closeSync(again);
  closeSync(writer);
  rmSync(dir, { recursive: true });
});

test('a stream whose descriptor was closed under it (EBADF) stops the sink: a file opened later under that number gets none of its lines', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sink-'));
  const fd = openSync(join(dir, 'stderr.log'), 'w');
  const stream = createWriteStream('', { fd, autoClose: false });
  const bus = createBus();
  attachStderrSink(bus, { json: true, stream });
  const logger = new Logger({ bus });
  closeSync(fd);
  logger.error('lost to EBADF');
  await once(stream, 'error');
  const other = join(dir, 'other.log');
  const opened = openUnder(fd, other);
  logger.error('after');
  opened.forEach((descriptor) => closeSync(descriptor));
  assert.is(readFileSync(other, 'utf8'), '');
  rmSync(dir, { recursive: true });
});

test('a stream that closes its file when a write fails (fs.createWriteStream on a full FIFO) stops the sink: a file opened later under its descriptor\'s number gets none of its lines', async () => {
  const { dir, reader, writer } = fullFifo();
  const stream = createWriteStream('', { fd: writer });
  const bus = createBus();
  attachStderrSink(bus, { json: true, stream });
  const logger = new Logger({ bus });
  logger.error('lost to EAGAIN');
  // once() would reject at the 'error' that comes first.
  await new Promise<void>((resolve) => stream.on('close', () => resolve()));
  const other = join(dir, 'other.log');
  const opened = openUnder(writer, other);
  logger.error('after');
  opened.forEach((descriptor) => closeSync(descriptor));
  closeSync(reader);
  assert.is(readFileSync(other, 'utf8'), '');
  rmSync(dir, { recursive: true });
});

test('a count of lost records written whole before its record was cut is not counted again: the next count starts from the cut record', async () => {
  const { dir, reader, writer, logger } = await sinkFailedOnFullFifo();
  // Room for the count, not for the record after it (its context string is cut at 16,384 characters, longer than the room).
  readSync(reader, Buffer.alloc(4096));
  logger.error('cut', { pad: 'x'.repeat(20_000) });
  const partly = readWaiting(reader).replace(/^\0+/, '').split('\n');
  assert.is(JSON.parse(partly[1]!).message, 'stderr could not be written (EAGAIN): 1 log records were lost');
  assert.match(partly[2]!, /^\{"time":".*"message":"cut"/);
  logger.error('next');
  const lines = readWaiting(reader).split('\n');
  closeSync(reader);
  closeSync(writer);
  rmSync(dir, { recursive: true });
  assert.is(lines.length, 4, 'the newline ending the cut record, the count, the record, and the end');
  assert.equal(JSON.parse(lines[1]!).context, { lost: 1, reason: 'EAGAIN' });
  assert.is(JSON.parse(lines[2]!).message, 'next');
});

test('the sink hides what profiles hide: a secret key\'s placeholder and value, secret pairs in the message and the context\'s strings, a secret query parameter; a secret key without a value is left out, as JSON has it', () => {
  const { written, stream } = memoryStream();
  const bus = createBus();
  attachStderrSink(bus, { stream, redaction: new Redactor(), describeRequest: () => ({ method: 'GET', path: '/p?access_token=abc&page=2' }) });
  new Logger({ bus, currentRequest: () => ({}) }).error('login {password} failed for api_key=xyz', { password: 'hunter2', note: 'retry with token=abc123', secret: undefined, page: 2 });
  const line = JSON.parse(written[0]!);
  assert.is(line.message, 'login [redacted] failed for api_key=[redacted]');
  assert.equal(line.context, { password: '[redacted]', note: 'retry with token=[redacted]', page: 2 });
  assert.is(line.request.path, '/p?access_token=%5Bredacted%5D&page=2');
});

test('a text line writes a context a JavaScript caller gave as a number or a string, and none for undefined', () => {
  assert.is(formatLine(record(5 as never)), '[1970-01-01T00:00:00.000Z] app.ERROR: m 5\n');
  assert.is(formatLine(record('text' as never)), '[1970-01-01T00:00:00.000Z] app.ERROR: m "text"\n');
  assert.is(formatLine(record(undefined as never)), '[1970-01-01T00:00:00.000Z] app.ERROR: m\n');
});

test('a request description\'s field that is no string is left out, the others kept; a text line names only what there is, and nothing for a client IP alone', () => {
  assert.equal(JSON.parse(formatJson(record({}), { method: 1, path: '/p', ip: 2, token: 'abc', sub: 'yes', mainToken: 3 } as unknown as RequestDescription)).request, { path: '/p', token: 'abc' });
  assert.equal(JSON.parse(formatJson(record({}), { method: 'GET', path: 5, token: 'abc' } as unknown as RequestDescription)).request, { method: 'GET', token: 'abc' });
  assert.is(formatLine(record({}), { path: '/p', token: 'abc' }), '[1970-01-01T00:00:00.000Z] app.ERROR: m [/p token=abc]\n');
  assert.is(formatLine(record({}), { method: 'GET', token: 'abc' }), '[1970-01-01T00:00:00.000Z] app.ERROR: m [GET token=abc]\n');
  assert.is(formatLine(record({}), { ip: '203.0.113.7' }), '[1970-01-01T00:00:00.000Z] app.ERROR: m\n');
});

test('a context is written by JSON.stringify\'s rules: toJSON with its key (a Date, an invalid one null), non-finite numbers null, booleans, null, bigints as text, boxed primitives as their value, undefined, functions and symbols left out (null in an array)', () => {
  const keyed = { toJSON: (key: string) => `under "${key}"` };
  const context = {
    at: new Date(0), invalid: new Date(Number.NaN), keyed, list: [keyed, undefined, () => 1, Symbol('s')],
    nan: Number.NaN, inf: -Infinity, no: false, yes: true, big: 10n, none: null, absent: undefined, f() {}, s: Symbol('s'),
    boxed: [new Number(1), new String('s'), new Boolean(false), Object(2n)],
  };
  assert.equal(JSON.parse(formatJson(record(context))).context, {
    at: '1970-01-01T00:00:00.000Z', invalid: null, keyed: 'under "keyed"', list: ['under "0"', null, null, null],
    nan: null, inf: null, no: false, yes: true, big: '10', none: null, boxed: [1, 's', false, '2'],
  });
  // The context's own toJSON is called with the empty key, as JSON.stringify calls it on the value it is given.
  assert.equal(JSON.parse(formatJson(record({ toJSON: (key: string) => ({ key }) }))).context, { key: '' });
  assert.is(JSON.parse(formatJson(record({ toJSON: () => undefined }))).context, null, 'a toJSON that returns undefined leaves null');
});

test('an object met twice in a context, not inside itself, is written both times', () => {
  const shared = { a: 1 };
  assert.equal(JSON.parse(formatJson(record({ x: shared, y: [shared] }))).context, { x: { a: 1 }, y: [{ a: 1 }] });
});

test('a typed array is written item by item as JSON.stringify has it, a BigInt64Array\'s items as text, a non-finite float as null', () => {
  const context = { big: new BigInt64Array([1n, -2n]), float: new Float64Array([Number.NaN, 1.5]) };
  assert.equal(JSON.parse(formatJson(record(context))).context, { big: { 0: '1', 1: '-2' }, float: { 0: null, 1: 1.5 } });
});

test('a string of exactly 16,384 characters is written whole; a cut before the first or the last high surrogate keeps the pair out', () => {
  const exact = 'a'.repeat(16_384);
  assert.is(JSON.parse(formatJson(record({}, exact))).message, exact);
  for (const pair of ['\u{10000}', '\u{10FC00}']) {
    assert.is(JSON.parse(formatJson(record({}, `${'a'.repeat(16_383)}${pair}z`))).message, `${'a'.repeat(16_383)}… [3 more characters]`, pair.charCodeAt(0).toString(16));
  }
});

test('a context of exactly 262,144 characters of JSON is written; one longer is left out with a note of at least how long it was, past the cap also for a key too long', () => {
  const ids = [10, ...Array.from({ length: 131_066 }, () => 1)];
  assert.is(JSON.stringify({ ids }).length, 262_144);
  assert.equal(JSON.parse(formatJson(record({ ids }))).context, { ids });
  // Written a character at a time, the digits are left out at the first past the cap.
  assert.is(JSON.parse(formatJson(record({ ids: Array.from({ length: 200_000 }, () => 1) }))).context, '[context of at least 262145 characters left out: longer than 262144]');
  const note = JSON.parse(formatJson(record({ ['k'.repeat(300_000)]: 1 }))).context as string;
  const [, length] = /^\[context of at least (\d+) characters left out: longer than 262144\]$/.exec(note)!;
  assert.ok(Number(length) > 262_144, note);
});

test('an error\'s own fields share 64 KiB between them: a second field past it is a note, a field that is undefined or a function is left out, a stack that is no string too', () => {
  const error = Object.assign(new Error('two'), { a: Array.from({ length: 20_000 }, () => 1), b: Array.from({ length: 20_000 }, () => 1), absent: undefined, f() {} });
  error.stack = 42 as never;
  const written = JSON.parse(formatJson(record({ error }))).context.error;
  assert.equal(Object.keys(written), ['class', 'message', 'a', 'b']);
  assert.is(written.a.length, 20_000);
  assert.is(written.b, "[left out: the error's fields pass 65536 characters]");
});

test('an error\'s field that passes the context\'s 256 KiB, not its fields\' share, leaves the context out; one whose toJSON throws makes the context a note, as any value\'s does', () => {
  const error = Object.assign(new Error('late'), { list: Array.from({ length: 20_000 }, () => 1) });
  const late = JSON.parse(formatJson(record({ pad: Array.from({ length: 120_000 }, () => 1), error }))).context;
  assert.match(late, /^\[context of at least \d+ characters left out: longer than 262144\]$/);
  const throwing = Object.assign(new Error('throwing'), { when: { toJSON() { throw new Error('bad toJSON'); } } });
  assert.is(JSON.parse(formatJson(record({ throwing }))).context, '[context that cannot be written as JSON: Error: bad toJSON]');
});

test('a context whose toJSON throws what cannot be made a string is a note saying the reason is unknown', () => {
  const context = { value: { toJSON() { throw Object.create(null); } } };
  assert.is(JSON.parse(formatJson(record(context))).context, '[context that cannot be written as JSON: unknown error]');
});

test('a failure right after a count written whole leaves no line cut: the next write starts no empty line', async () => {
  const { dir, reader, writer, logger } = await sinkFailedOnFullFifo();
  // One page read; a page of its own holds all but room for the newline and the count (a pipe merges a write's first
  // length % 4096 bytes into its last page when they fit): a record of 4096 bytes after them then finds the pipe full.
  readSync(reader, Buffer.alloc(4096));
  const head = `\n${formatJson({ time: Date.now(), level: 4, levelName: 'WARNING', channel: 'log', message: 'stderr could not be written (EAGAIN): 1 log records were lost', context: { lost: 1, reason: 'EAGAIN' } })}`;
  writeSync(writer, Buffer.alloc(4096 - Buffer.byteLength(head)));
  const record = (message: string): LogRecord => ({ time: Date.now(), level: 3, levelName: 'ERROR', channel: 'app', message, context: {} });
  const padding = 4096 - Buffer.byteLength(formatJson(record('')));
  logger.error('x'.repeat(padding));
  const partly = readWaiting(reader).replace(/^\0+/, '');
  const untimed = (text: string) => text.replace(/"time":"[^"]*"/g, '"time":""');
  assert.is(untimed(partly), untimed(head), 'the count, whole, and none of the record');
  logger.error('next');
  const lines = readWaiting(reader).split('\n');
  closeSync(reader);
  closeSync(writer);
  rmSync(dir, { recursive: true });
  assert.is(JSON.parse(lines[0]!).context.lost, 1, 'the count of the record lost, on the first line');
  assert.is(JSON.parse(lines[1]!).message, 'next');
  assert.is(lines.length, 3);
});

test.run();
