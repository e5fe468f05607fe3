import { closeSync, existsSync, openSync, readdirSync, statSync } from 'node:fs';
import { open, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  MAX_INDEX_LINE_BYTES,
  appendIndexLines,
  decodeIndexHeader,
  decodeIndexLine,
  encodeIndexHeader,
  encodeIndexLine,
  indexEntryOf,
  isCurrentFile,
  leadingToken,
  readIndexLines,
  recordLines,
  waitWhileLocked,
  writeIndexFile,
  type IndexEntry,
} from '../../../../lib/profiler/storage/index-file.js';
import { FileLock } from '../../../../lib/fs/file-lock.js';
import { BASE_TIME, makeTempDir, within } from './fixtures.js';

const test = suite('index file');

let dir = '';
let cleanup: () => Promise<void> = async () => {};

test.before(async () => {
  ({ dir, cleanup } = await makeTempDir('index-file'));
});

test.after(async () => {
  await cleanup();
});

const SEGMENT = 'm1abcd-1234-0123abcd.ndjson';

function entry(token: string, overrides: Partial<IndexEntry> = {}): IndexEntry {
  return { token, parent: null, ip: '::1', method: 'GET', url: 'http://h/a?b="c"\n', time: BASE_TIME, status: 200, bytes: 1234, segment: SEGMENT, offset: 5678, ...overrides };
}

/** The entry part of a decoded record (without its line). */
function entryOf(line: string): IndexEntry | null {
  const record = decodeIndexLine(line);
  if (record === null) return null;
  const { line: _line, ...rest } = record;
  return rest;
}

test('a line decodes to the entry it encodes (segment, offset, length), quotes and newlines in the URL included', () => {
  const original = entry('abcdef', { parent: '123456', method: 'PATCH' });
  const line = encodeIndexLine(original);
  assert.ok(line.endsWith('\n') && line.indexOf('\n') === line.length - 1, 'one line');
  assert.equal(entryOf(line.slice(0, -1)), original);
  assert.is(decodeIndexLine(line.slice(0, -1))?.line, line.slice(0, -1), 'the record keeps its line');
  assert.is(leadingToken(line), 'abcdef');
});

test('the first line a process makes decodes with an empty URL too (a fresh module: nothing shared yet)', async () => {
  // A query makes a module instance of its own, as a new process or storage thread has.
  const fresh = (await import(`../../../../lib/profiler/storage/index-file.js?first-line-${Date.now()}`)) as typeof import('../../../../lib/profiler/storage/index-file.js');
  const first = entry('abcdef', { url: '' });
  assert.equal(entryOf(fresh.encodeIndexLine(first).slice(0, -1)), first);
});

test('a line of the old layout (no segment) decodes with a null segment', () => {
  const old = '{"t":"abcdef","ts":1700000000000,"s":200,"m":"GET","i":"::1","p":null,"b":99,"u":"http://h/"}';
  assert.equal(entryOf(old), { token: 'abcdef', parent: null, ip: '::1', method: 'GET', url: 'http://h/', time: 1700000000000, status: 200, bytes: 99, segment: null, offset: 0 });
  assert.equal(entryOf(encodeIndexLine(entry('abcdef', { segment: null, offset: 0 })).slice(0, -1))?.segment, null);
});

test('segment names are validated before they become paths', () => {
  const line = encodeIndexLine(entry('abcdef')).slice(0, -1);
  for (const bad of ['../../etc/passwd', 'x/../../y.ndjson', '../m1abcd-1234-0123abcd.ndjson', 'M1ABCD-1234-0123abcd.ndjson', '', 'm1abcd-1234-0123abcd.ndjson/..']) {
    assert.is(decodeIndexLine(line.replace(SEGMENT, bad.replace(/"/g, ''))), null, bad);
  }
  assert.is(decodeIndexLine(line.replace('"o":5678', '"o":-1')), null, 'negative offset');
  assert.is(decodeIndexLine(line.replace('"b":1234', '"b":1.5')), null, 'fractional length');
});

test('a line never exceeds MAX_INDEX_LINE_BYTES: long URLs are cut, multi-byte ones too', () => {
  for (const url of ['http://h/' + 'a'.repeat(50_000), 'http://h/' + '€'.repeat(20_000), 'http://h/' + '\u0001'.repeat(5_000)]) {
    const line = encodeIndexLine(entry('abcdef', { url, ip: 'x'.repeat(500), method: 'M'.repeat(500) }));
    assert.ok(Buffer.byteLength(line) <= MAX_INDEX_LINE_BYTES, `${Buffer.byteLength(line)} bytes`);
    assert.ok(url.startsWith(decodeIndexLine(line.slice(0, -1))?.url ?? '-'));
  }
});

test('a torn line is not an entry, but a whole line glued after it is recovered', () => {
  const whole = encodeIndexLine(entry('abcdef')).slice(0, -1);
  assert.is(decodeIndexLine(whole.slice(0, 30)), null);
  const glued = decodeIndexLine(whole.slice(0, 30) + whole);
  assert.is(glued?.token, 'abcdef');
  assert.is(glued?.line, whole, 'the record keeps the whole line only');
  assert.is(decodeIndexLine('{"t":"ABCDEF","ts":1}'), null, 'fields are validated');
  assert.is(decodeIndexLine('{"t":"../etc","ts":1,"s":200,"m":"GET","i":"","p":null,"b":1,"u":""}'), null, 'tokens are validated');
});

test('the header line says up to which time a compaction dropped profiles, what it dropped from the newest end, and the newest time ever dropped, and is never an entry', () => {
  const none = { aheadFrom: null, overBytes: null };
  assert.equal(decodeIndexHeader(encodeIndexHeader(1234, 5678).slice(0, -1)), { droppedThrough: 1234, droppedEver: 5678, ...none });
  assert.equal(decodeIndexHeader(encodeIndexHeader(1234, 9999, { aheadFrom: 9999, overBytes: 2_000 }).slice(0, -1)), { droppedThrough: 1234, droppedEver: 9999, aheadFrom: 9999, overBytes: 2_000 });
  assert.equal(decodeIndexHeader(encodeIndexHeader(null, null).slice(0, -1)), { droppedThrough: null, droppedEver: null, ...none });
  assert.equal(decodeIndexHeader('{"h":1,"d":1234}'), { droppedThrough: 1234, droppedEver: undefined, ...none }, 'a header of an earlier version: not known');
  assert.equal(decodeIndexHeader('{"h":1,"d":1234,"k":5678}'), { droppedThrough: 1234, droppedEver: 5678, ...none }, 'nor of the newest end');
  assert.equal(decodeIndexHeader('{"h":1,"d":1e999,"k":"5678","a":true,"x":-1e999}'), { droppedThrough: null, droppedEver: null, ...none }, 'a time that is no finite number is none');
  // What earlier versions read of it: "d" and "k", the rest ignored.
  const { d, k } = JSON.parse(encodeIndexHeader(1234, 9999, { aheadFrom: 9999, overBytes: 2_000 })) as { d: unknown; k: unknown };
  assert.equal([d, k], [1234, 9999]);
  assert.is(decodeIndexLine(encodeIndexHeader(1234, 1234).slice(0, -1)), null);
  assert.is(decodeIndexHeader(encodeIndexLine(entry('abcdef')).slice(0, -1)), undefined);
});

test('reading stops before a partial last line and resumes from there', async () => {
  const path = join(dir, 'partial.ndjson');
  const first = encodeIndexLine(entry('aaaaaa'));
  const second = encodeIndexLine(entry('bbbbbb'));
  await writeFile(path, first + second.slice(0, 20));
  const handle = await open(path, 'r');
  try {
    const chunk = await readIndexLines(handle, 0);
    assert.equal(chunk.lines, [first.slice(0, -1)]);
    assert.is(chunk.end, Buffer.byteLength(first));
    await writeFile(path, first + second);
    const rest = await readIndexLines(handle, chunk.end);
    assert.equal(rest.lines, [second.slice(0, -1)]);
  } finally {
    await handle.close();
  }
});

test('appendIndexLines appends whole batches of lines, creates the file and names the file written to', async () => {
  const path = join(dir, 'append.ndjson');
  const batch = (i: number) => Buffer.from(Array.from({ length: 20 }, (_, j) => encodeIndexLine(entry((0x100000 + i * 20 + j).toString(16)))).join(''));
  const identities = await Promise.all(Array.from({ length: 50 }, (_, i) => appendIndexLines(path, batch(i))));
  const lines = (await readFile(path, 'utf8')).split('\n').filter(Boolean);
  assert.is(lines.length, 1_000);
  assert.ok(lines.every((line) => decodeIndexLine(line) !== null));
  assert.is(new Set(lines).size, 1_000);
  assert.is(new Set(identities.map((identity) => `${identity.dev}:${identity.ino}`)).size, 1);
});

test('recordLines: one text of the batch\'s lines, each record keeping its own line, which decodes to its entry', () => {
  const entries = [entry('aaaaaa'), entry('bbbbbb', { url: 'http://h/€"\n', parent: 'aaaaaa' }), entry('cccccc', { url: 'http://h/' + 'x'.repeat(5_000) })];
  const { records, lines } = recordLines(entries);
  assert.is(lines, entries.map(encodeIndexLine).join(''));
  assert.is(records.length, 3);
  records.forEach((record, i) => {
    assert.is(record.line, encodeIndexLine(entries[i] as IndexEntry).slice(0, -1));
    assert.equal(entryOf(record.line), entryOf(encodeIndexLine(entries[i] as IndexEntry).slice(0, -1)));
    assert.is(record.token, (entries[i] as IndexEntry).token);
  });
  assert.equal(recordLines([]), { records: [], lines: '' });
});

test('recordLines: a record whose line cut its URL holds the URL as cut, as a process reading the line back has it', () => {
  const { records } = recordLines([entry('aaaaaa', { url: 'http://h/' + 'x'.repeat(5_000) }), entry('bbbbbb', { url: 'http://h/short' })]);
  for (const record of records) assert.is(record.url, decodeIndexLine(record.line)?.url);
  assert.ok((records[0]?.url.length ?? 0) < 2_048, 'cut');
});

test('consecutive lines that differ in any one field each decode to their own entry (shared pieces are not reused stale)', () => {
  const variants: Partial<IndexEntry>[] = [
    {},
    { status: 404 },
    { method: 'POST' },
    { ip: '10.0.0.1' },
    { parent: 'abcdef' },
    { parent: null },
    { segment: 'm1abce-1234-0123abce.ndjson' },
    { segment: null, offset: 0 },
    { url: 'http://h/other' },
    { url: 'http://h/\u0000"' },
    { time: BASE_TIME + 1, bytes: 1 },
    { segment: SEGMENT, offset: 2 },
    {},
  ];
  let previous: IndexEntry = entry('100000');
  variants.forEach((overrides, i) => {
    const next = { ...previous, token: (0x100001 + i).toString(16), ...overrides };
    assert.equal(entryOf(encodeIndexLine(next).slice(0, -1)), next, `variant ${i}`);
    assert.equal(entryOf((recordLines([next]).records[0] as { line: string }).line), next, `variant ${i}`);
    previous = next;
  });
});

test('writeIndexFile writes the header and every line in chunks, and returns the bytes written', async () => {
  const path = join(dir, 'rewrite.ndjson');
  // About 200 KB of lines, multi-byte characters included: several chunks.
  const { records } = recordLines(Array.from({ length: 600 }, (_, i) => entry((0x200000 + i).toString(16), { url: `http://h/${'é'.repeat(i % 7)}${'p'.repeat(300)}` })));
  await writeFile(path, 'x'.repeat(1_000_000));
  const fd = openSync(path, 'w');
  let bytes: number;
  try {
    bytes = writeIndexFile(fd, encodeIndexHeader(42, 42), records);
  } finally {
    closeSync(fd);
  }
  const content = await readFile(path, 'utf8');
  assert.is(content, encodeIndexHeader(42, 42) + records.map((record) => `${record.line}\n`).join(''));
  assert.is(bytes, Buffer.byteLength(content));
  assert.ok(bytes > 128 * 1024, `${bytes} bytes: more than one chunk`);
});

test('indexEntryOf keeps the summary\'s fields, ip and method cut to 64 characters, and where the record is', () => {
  const summary = { token: 'abcdef', parent: '123456', ip: 'i'.repeat(100), method: 'M'.repeat(100), url: 'http://h/', time: BASE_TIME, status: 201, children: [], collectors: {} };
  assert.equal(indexEntryOf(summary, 42, SEGMENT, 7), { token: 'abcdef', parent: '123456', ip: 'i'.repeat(64), method: 'M'.repeat(64), url: 'http://h/', time: BASE_TIME, status: 201, bytes: 42, segment: SEGMENT, offset: 7 });
});

test('a line keeps 64 characters of ip and method, whether its URL is cut or not', () => {
  for (const url of ['http://h/short', 'http://h/' + 'x'.repeat(5_000)]) {
    const decoded = decodeIndexLine(encodeIndexLine(entry('abcdef', { url, ip: 'i'.repeat(100), method: 'M'.repeat(100) })).slice(0, -1));
    assert.is(decoded?.ip, 'i'.repeat(64), String(url.length));
    assert.is(decoded?.method, 'M'.repeat(64), String(url.length));
  }
});

test('a line whose URL is cut keeps its segment and offset (offset 0 included), or its old layout', () => {
  const url = 'http://h/' + 'x'.repeat(5_000);
  for (const where of [{ segment: SEGMENT, offset: 0 }, { segment: SEGMENT, offset: 5678 }, { segment: null, offset: 0 }]) {
    const decoded = entryOf(encodeIndexLine(entry('abcdef', { url, ...where })).slice(0, -1));
    assert.equal([decoded?.segment, decoded?.offset], [where.segment, where.offset], String(where.segment));
    assert.ok(decoded !== null && decoded.url.length < url.length, 'cut');
  }
});

test('a line of exactly MAX_INDEX_LINE_BYTES keeps its whole URL; one byte more and the URL is cut', () => {
  const base = Buffer.byteLength(encodeIndexLine(entry('abcdef', { url: 'http://h/' })));
  const fitting = 'http://h/' + 'a'.repeat(MAX_INDEX_LINE_BYTES - base);
  const line = encodeIndexLine(entry('abcdef', { url: fitting }));
  assert.is(Buffer.byteLength(line), MAX_INDEX_LINE_BYTES);
  assert.is(decodeIndexLine(line.slice(0, -1))?.url, fitting);
  const over = encodeIndexLine(entry('abcdef', { url: `${fitting}a` }));
  assert.ok(Buffer.byteLength(over) < MAX_INDEX_LINE_BYTES, `${Buffer.byteLength(over)} bytes`);
  assert.ok(fitting.startsWith(decodeIndexLine(over.slice(0, -1))?.url ?? '-'));
});

test('every field of a line is checked: a line of the wrong types, or no object, is no entry', () => {
  const fields = JSON.parse(encodeIndexLine(entry('abcdef')).slice(0, -1)) as Record<string, unknown>;
  const line = (changes: Record<string, unknown>): string => JSON.stringify({ ...fields, ...changes });
  const bad: Record<string, unknown>[] = [{ m: 5 }, { i: 5 }, { p: '../etc' }, { p: 5 }, { b: -1 }, { u: 5 }, { u: null }, { g: [SEGMENT] }, { g: undefined }, { o: '5' }];
  for (const changes of bad) assert.is(decodeIndexLine(line(changes)), null, JSON.stringify(changes));
  assert.equal(entryOf(line({ b: 0, o: 0, p: '123456' })), { ...entry('abcdef'), bytes: 0, offset: 0, parent: '123456' }, 'a record of no bytes at offset 0, with a parent');
  for (const other of ['null', '5', '"x"', '[]', 'true']) assert.is(decodeIndexLine(other), null, other);
});

test('leadingToken reads the token of an entry line only, and none of a line cut inside it', () => {
  assert.is(leadingToken('{"t":"abcdef"'), 'abcdef');
  assert.is(leadingToken('{"t":"abcd'), undefined);
  assert.is(leadingToken(encodeIndexHeader(1, 1)), undefined);
  assert.is(leadingToken(`x${encodeIndexLine(entry('abcdef'))}`), undefined);
});

test('readIndexLines reads through a descriptor, from any offset, up to the size it is given, skipping blank lines', async () => {
  const path = join(dir, 'descriptor.ndjson');
  const [first, second, third] = ['aaaaaa', 'bbbbbb', 'cccccc'].map((token) => encodeIndexLine(entry(token))) as [string, string, string];
  const size = Buffer.byteLength(first + second + third);
  await writeFile(path, first + second + third);
  const fd = openSync(path, 'r');
  try {
    assert.equal(readIndexLines(fd, 0), { lines: [first, second, third].map((line) => line.slice(0, -1)), end: size });
    const secondAt = Buffer.byteLength(first);
    assert.equal(readIndexLines(fd, secondAt, secondAt + Buffer.byteLength(second)), { lines: [second.slice(0, -1)], end: secondAt + Buffer.byteLength(second) }, 'up to the size given');
    assert.equal(readIndexLines(fd, 0, size + 100), { lines: [first, second, third].map((line) => line.slice(0, -1)), end: size }, 'the file cut since its size was taken');
    assert.equal(readIndexLines(fd, size), { lines: [], end: size }, 'at the end');
    assert.equal(readIndexLines(fd, size + 10), { lines: [], end: size + 10 }, 'past the end');
  } finally {
    closeSync(fd);
  }
  await writeFile(path, `\n${first}\n\n${second}${third.slice(0, 10)}`);
  const handle = await open(path, 'r');
  try {
    assert.equal(readIndexLines(handle, 0), { lines: [first, second].map((line) => line.slice(0, -1)), end: Buffer.byteLength(`\n${first}\n\n${second}`) }, 'blank lines left out');
    await writeFile(path, third.slice(0, 10));
    assert.equal(readIndexLines(handle, 0), { lines: [], end: 0 }, 'no whole line');
    await writeFile(path, `\n${third.slice(0, 10)}`);
    assert.equal(readIndexLines(handle, 0), { lines: [], end: 1 }, 'a blank line read past');
  } finally {
    await handle.close();
  }
});

test('appendIndexLines names the file it wrote to and its size, and leaves no descriptor open', async () => {
  const path = join(dir, 'identity.ndjson');
  const openDescriptors = (): number => (process.platform === 'linux' ? readdirSync('/proc/self/fd').length : 0);
  const before = openDescriptors();
  let identity = appendIndexLines(path, Buffer.from(encodeIndexLine(entry('aaaaaa'))));
  for (let i = 0; i < 20; i++) identity = appendIndexLines(path, Buffer.from(encodeIndexLine(entry('bbbbbb'))));
  assert.is(openDescriptors(), before);
  const { dev, ino, size } = statSync(path);
  assert.equal(identity, { dev, ino, size });
});

test('isCurrentFile: true while the path names the file, false once it is replaced or gone, or for a file of another device', async () => {
  const path = join(dir, 'current.ndjson');
  const identity = appendIndexLines(path, Buffer.from(encodeIndexLine(entry('aaaaaa'))));
  assert.ok(isCurrentFile(path, identity));
  assert.not.ok(isCurrentFile(path, { dev: identity.dev + 1, ino: identity.ino }), 'same inode number, another device');
  assert.not.ok(isCurrentFile(path, { dev: identity.dev, ino: identity.ino + 1 }), 'same device, another inode');
  await writeFile(`${path}.new`, encodeIndexLine(entry('aaaaaa')));
  await rename(`${path}.new`, path);
  assert.not.ok(isCurrentFile(path, identity), 'replaced (a compaction)');
  await rm(path);
  assert.not.ok(isCurrentFile(path, identity), 'gone');
});

test('waitWhileLocked: returns at once with no lock, a stale one or one whose holder is gone; waits while another holds it, a second at most', async () => {
  const path = join(dir, 'wait.lock');
  await waitWhileLocked(new FileLock(path, 60_000));
  assert.not.ok(existsSync(path));

  const holder = new FileLock(path, 60_000, { holderInfo: true, owner: 'thread-1' });
  assert.ok(await holder.tryAcquire());
  let waited = false;
  const waiting = waitWhileLocked(new FileLock(path, 60_000)).then(() => (waited = true));
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.not.ok(waited, 'held by another: waits');
  await holder.release();
  await within(waiting, 1_000, 'the wait once the lock was released');

  assert.ok(await holder.tryAcquire());
  let started = performance.now();
  await waitWhileLocked(new FileLock(path, 60_000, { holderInfo: true, deadOwners: new Set(['thread-1']) }));
  assert.ok(performance.now() - started < 500, 'its holder is gone: no wait');
  const old = new Date(Date.now() - 120_000);
  await utimes(path, old, old);
  started = performance.now();
  await waitWhileLocked(new FileLock(path, 60_000));
  assert.ok(performance.now() - started < 500, 'stale: no wait');

  await utimes(path, new Date(), new Date());
  started = performance.now();
  await within(waitWhileLocked(new FileLock(path, 60_000)), 3_000, 'the wait for a holder that keeps the lock');
  const elapsed = performance.now() - started;
  assert.ok(elapsed >= 950, `${elapsed} ms: waited the second`);
  await holder.release();
});

test.run();
