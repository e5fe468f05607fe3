import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Logger, attachStderrSink, createBus, formatJson, formatLine, type LogRecord } from '../../../lib/log/index.js';

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

function record(context: Record<string, unknown>, message = 'm'): LogRecord {
  return { time: 0, level: 3, levelName: 'ERROR', channel: 'app', message, context };
}

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

test('a line stays bounded: strings are cut at 16,384 characters, and a context longer than 256 kB is left out with a note', () => {
  const long = formatJson(record({ body: 'b'.repeat(1_000_000) }, 'm'.repeat(1_000_000)));
  assert.ok(long.length < 40_000, `line ${long.length}`);
  const parsed = JSON.parse(long);
  assert.is(parsed.message, `${'m'.repeat(16_384)}… [983616 more characters]`);
  assert.is(parsed.context.body, `${'b'.repeat(16_384)}… [983616 more characters]`);
  const wide = formatJson(record({ ids: Array.from({ length: 100_000 }, (_, i) => i) }));
  assert.ok(wide.length < 1000, `line ${wide.length}`);
  assert.match(JSON.parse(wide).context, /^\[context of \d+ characters left out: longer than 262144\]$/);
  assert.ok(formatLine(record({ ids: Array.from({ length: 100_000 }, (_, i) => i) })).length < 1000);
});

test.run();
