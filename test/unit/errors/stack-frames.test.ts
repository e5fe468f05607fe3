import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EventEmitter } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  clearSourceCache,
  MAX_SOURCE_BYTES,
  parseFrame,
  parseStack,
  readSourceExcerpt,
  SOURCE_CACHE_FILES,
  sourceCacheSize,
} from '../../../lib/errors/stack-frames.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const thisSource = join(root, 'test/unit/errors/stack-frames.test.ts');

function lineOf(marker: string): number {
  const lines = readFileSync(thisSource, 'utf8').split('\n');
  const index = lines.findIndex((line) => line.includes(marker) && !line.includes('lineOf('));
  if (index < 0) throw new Error(`marker ${marker} not found`);
  return index + 1;
}

function makeError(): Error {
  return new Error('made here'); // MARKER-MAKE-ERROR
}

let dir = '';
test.before(() => {
  dir = mkdtempSync(join(tmpdir(), 'http-kernel-frames-'));
});
test.after(() => {
  rmSync(dir, { recursive: true, force: true });
  clearSourceCache();
});

test('parses a real stack down to the .ts source line through source maps', () => {
  const frames = parseStack(makeError().stack!);
  const first = frames[0]!;
  assert.is(first.function, 'makeError');
  assert.is(first.file, thisSource);
  assert.is(first.line, lineOf('MARKER-MAKE-ERROR'));
  assert.type(first.column, 'number');
  assert.is(first.internal, false);
  assert.is(first.native, false);
});

test('marks frames of node: modules as internal', () => {
  let error: Error | undefined;
  const emitter = new EventEmitter();
  emitter.on('go', () => {
    error = new Error('in listener');
  });
  emitter.emit('go');
  const frames = parseStack(error!.stack!);
  assert.is(frames[0]!.file, thisSource);
  assert.is(frames[0]!.internal, false);
  const emit = frames.find((frame) => frame.file === 'node:events');
  assert.ok(emit, 'a node:events frame');
  assert.is(emit!.internal, true);
  assert.ok(emit!.function!.endsWith('emit'));
});

test('parses a frame with a function and a location', () => {
  assert.equal(parseFrame('Foo.bar (/app/lib/foo.ts:12:7)'), {
    function: 'Foo.bar',
    file: '/app/lib/foo.ts',
    line: 12,
    column: 7,
    native: false,
    internal: false,
  });
});

test('parses a frame without a function name', () => {
  const frame = parseFrame('/app/lib/foo.ts:3:1');
  assert.is(frame.function, null);
  assert.is(frame.file, '/app/lib/foo.ts');
  assert.is(frame.line, 3);
});

test('turns file URLs into paths', () => {
  const frame = parseFrame('handle (file:///app/dist/a%20b.js:5:34)');
  assert.is(frame.file, '/app/dist/a b.js');
  assert.is(frame.line, 5);
  assert.is(frame.column, 34);
});

test('keeps constructor, async and alias prefixes in the function name', () => {
  assert.is(parseFrame('new Router (/app/r.ts:1:1)').function, 'new Router');
  assert.is(parseFrame('async handle (/app/k.ts:2:3)').function, 'async handle');
  assert.is(parseFrame('Object.run [as handler] (/app/k.ts:2:3)').function, 'Object.run [as handler]');
});

test('reads anonymous functions as null', () => {
  assert.is(parseFrame('<anonymous> (/app/a.ts:4:42)').function, null);
});

test('marks node_modules, native and location-less frames as internal', () => {
  assert.is(parseFrame('x (/app/node_modules/mitt/index.js:1:2)').internal, true);
  assert.is(parseFrame('x (C:\\app\\node_modules\\mitt\\index.js:1:2)').internal, true);
  const native = parseFrame('Array.map (native)');
  assert.is(native.native, true);
  assert.is(native.internal, true);
  const builtin = parseFrame('Array.map (<anonymous>)');
  assert.is(builtin.file, null);
  assert.is(builtin.internal, true);
  const all = parseFrame('async Promise.all (index 0)');
  assert.is(all.function, 'async Promise.all');
  assert.is(all.file, null);
  assert.is(all.line, null);
});

test('points eval frames at the file that called eval', () => {
  const frame = parseFrame('eval (eval at run (/app/a.js:3:9), <anonymous>:1:1)');
  assert.is(frame.function, 'eval');
  assert.is(frame.file, '/app/a.js');
  assert.is(frame.line, 3);
});

test('keeps Windows drive letters in file paths', () => {
  const frame = parseFrame('f (C:\\app\\lib\\a.ts:10:2)');
  assert.is(frame.file, 'C:\\app\\lib\\a.ts');
  assert.is(frame.line, 10);
  assert.is(frame.column, 2);
});

test('does not read message lines as frames when the header is known', () => {
  const header = 'Error: bad input\n    at fake (/etc/passwd:1:1)';
  const stack = `${header}\n    at real (/app/a.ts:1:1)`;
  const frames = parseStack(stack, header);
  assert.is(frames.length, 1);
  assert.is(frames[0]!.function, 'real');
});

test('parses a frame line full of " (" in linear time (a message changed after the stack was made may end in one)', () => {
  const error = new Error(`from the client:\n    at ${' ('.repeat(100_000)}`);
  const stack = error.stack!; // V8 writes the stack on first read: the message changed after it is not in it.
  error.message = `wrapped: ${error.message}`;
  const started = performance.now();
  const frames = parseStack(stack, `Error: ${error.message}`);
  assert.ok(performance.now() - started < 1000, `${Math.round(performance.now() - started)} ms`);
  assert.match(frames[1]!.file!, /stack-frames\.test\.[jt]s$/);
  assert.equal(parseFrame('fn (eval at outer (eval at inner (/app/x.js:1:2), <anonymous>:1:1))'), parseFrame('fn (/app/x.js:1:2)'));
});

test('takes frames only from the trailing block of "at" lines without a header', () => {
  const stack = 'Error: first\n    at fake (/x.ts:1:1)\nmore message\n    at real (/app/a.ts:1:1)\n    at next (/app/b.ts:2:2)';
  assert.equal(
    parseStack(stack).map((frame) => frame.function),
    ['real', 'next'],
  );
});

function writeLines(name: string, count: number): string {
  const file = join(dir, name);
  writeFileSync(file, Array.from({ length: count }, (_, i) => `line ${i + 1}`).join('\n'));
  return file;
}

test('reads the lines around a line and names the highlighted one', () => {
  const file = writeLines('middle.ts', 30);
  const excerpt = readSourceExcerpt(file, 15, 3);
  assert.equal(excerpt, {
    start: 12,
    lines: ['line 12', 'line 13', 'line 14', 'line 15', 'line 16', 'line 17', 'line 18'],
    highlight: 15,
    modifiedMs: statSync(file).mtimeMs,
  });
});

test('tells when the file was last modified, as it is when read', () => {
  const file = writeLines('edited.ts', 3);
  utimesSync(file, 1_700_000_000, 1_700_000_000);
  assert.is(readSourceExcerpt(file, 2, 0)!.modifiedMs, 1_700_000_000_000);
  utimesSync(file, 1_800_000_000, 1_800_000_000);
  assert.is(readSourceExcerpt(file, 2, 0)!.modifiedMs, 1_800_000_000_000);
});

test('clamps the excerpt at the start and end of the file', () => {
  const file = writeLines('short.ts', 6);
  const top = readSourceExcerpt(file, 1, 5)!;
  assert.is(top.start, 1);
  assert.is(top.lines.length, 6);
  const bottom = readSourceExcerpt(file, 6, 2)!;
  assert.is(bottom.start, 4);
  assert.equal(bottom.lines, ['line 4', 'line 5', 'line 6']);
});

test('reads excerpts through file URLs', () => {
  const file = writeLines('url.ts', 3);
  assert.is(readSourceExcerpt(pathToFileURL(file).href, 2, 0)!.lines[0], 'line 2');
});

test('reads the marked line of a real stack frame from disk', () => {
  const frame = parseStack(makeError().stack!)[0]!;
  const excerpt = readSourceExcerpt(frame.file!, frame.line!, 1)!;
  const highlighted = excerpt.lines[excerpt.highlight - excerpt.start]!;
  assert.ok(highlighted.includes('MARKER-MAKE-ERROR'));
});

test('gives no excerpt for relative, missing, directory or node: paths', () => {
  // package.json exists relative to the working directory (the repository root), yet is refused.
  assert.is(readSourceExcerpt('package.json', 1), null);
  assert.is(readSourceExcerpt(join(dir, 'missing.ts'), 1), null);
  mkdirSync(join(dir, 'sub'));
  assert.is(readSourceExcerpt(join(dir, 'sub'), 1), null);
  assert.is(readSourceExcerpt('node:events', 1), null);
});

test('reads excerpts of source files only: a forged stack naming a secret, a key or /etc/passwd gets none', () => {
  for (const name of ['.env', 'secret.txt', 'id_rsa', 'config.json', 'notes.ts.bak']) {
    const file = join(dir, name);
    writeFileSync(file, 'API_KEY=hunter2\nsecond line');
    assert.is(readSourceExcerpt(file, 1), null, name);
    const forged = new Error('forged');
    forged.stack = `Error: forged\n    at leak (${file}:1:1)`;
    assert.is(readSourceExcerpt(parseStack(forged.stack)[0]!.file!, 1), null, `${name} named by a stack frame`);
  }
  for (const name of ['a.js', 'a.mjs', 'a.cjs', 'a.jsx', 'a.ts', 'a.mts', 'a.cts', 'a.tsx']) assert.ok(readSourceExcerpt(writeLines(name, 2), 1), name);
});

test('gives no excerpt for a line outside the file', () => {
  const file = writeLines('bounds.ts', 4);
  assert.is(readSourceExcerpt(file, 5), null);
  assert.is(readSourceExcerpt(file, 0), null);
  assert.is(readSourceExcerpt(file, -1), null);
  assert.is(readSourceExcerpt(file, 1.5), null);
});

test('skips files over 1 MB and binary files', () => {
  const big = join(dir, 'big.js');
  writeFileSync(big, `const a = 1;\n${'x'.repeat(MAX_SOURCE_BYTES)}`);
  assert.is(readSourceExcerpt(big, 1), null);
  const binary = join(dir, 'binary.js');
  writeFileSync(binary, Buffer.from([0x61, 0x00, 0x62, 0x0a, 0x63]));
  assert.is(readSourceExcerpt(binary, 1), null);
});

test('cuts very long lines in excerpts', () => {
  const file = join(dir, 'minified.js');
  writeFileSync(file, 'y'.repeat(5000));
  const line = readSourceExcerpt(file, 1)!.lines[0]!;
  assert.ok(line.length < 1000);
  assert.ok(line.endsWith('…'));
});

test('keeps at most the bounded number of files in the cache', () => {
  clearSourceCache();
  for (let i = 0; i < SOURCE_CACHE_FILES + 10; i++) assert.ok(readSourceExcerpt(writeLines(`many-${i}.ts`, 2), 1));
  assert.is(sourceCacheSize(), SOURCE_CACHE_FILES);
});

test('reads a file again after it changed on disk', () => {
  const file = writeLines('changing.ts', 3);
  assert.is(readSourceExcerpt(file, 2, 0)!.lines[0], 'line 2');
  writeFileSync(file, 'a\nchanged\nc');
  const later = new Date(Date.now() + 5000);
  utimesSync(file, later, later);
  assert.is(readSourceExcerpt(file, 2, 0)!.lines[0], 'changed');
});

test('parseStack parses at most `limit` frames, the first ones', () => {
  const stack = `Error: deep\n${Array.from({ length: 1000 }, (_, i) => `    at f${i} (/app/x.js:${i + 1}:1)`).join('\n')}`;
  assert.equal(parseStack(stack, 'Error: deep', 3).map((frame) => frame.function), ['f0', 'f1', 'f2']);
  assert.is(parseStack(stack, 'Error: deep').length, 1000);
});

test.run();
