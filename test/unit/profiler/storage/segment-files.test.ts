// SegmentFiles on its own: one writer's segments in a temp dir, the index played by a set of names.
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SegmentFiles } from '../../../../lib/profiler/storage/segment-files.js';
import { makeTempDir } from './fixtures.js';

const test = suite('segment files');

let dir = '';
let cleanup: () => Promise<void> = async () => {};
test.before.each(async () => {
  ({ dir, cleanup } = await makeTempDir('segments'));
});
test.after.each(() => cleanup());

const bytes = (text: string): Uint8Array => Buffer.from(text);

/** Runs `fn` with Date.now() reading `ms` (SegmentFiles reads the clock itself), then puts the clock back. */
async function at<T>(ms: number, fn: () => T | Promise<T>): Promise<T> {
  const realNow = Date.now;
  Date.now = () => ms;
  try {
    return await fn();
  } finally {
    Date.now = realNow;
  }
}

/** Sets a file's times to a whole second, so that its mtimeMs is exact, and returns that mtimeMs. */
async function touchAt(path: string, seconds: number): Promise<number> {
  await utimes(path, seconds, seconds);
  return seconds * 1_000;
}

/** Ten minutes ago, in whole seconds: stale for SegmentFiles (five minutes). */
const tenMinutesAgo = (): number => Math.floor(Date.now() / 1_000) - 600;

/** Descriptors this process has open (Linux), or 0 where that cannot be read. */
const openDescriptors = (): number => (process.platform === 'linux' ? readdirSync('/proc/self/fd').length : 0);

test('writes go one after the other into one segment, and read back by offset and length', async () => {
  const segments = new SegmentFiles(dir, 1_000);
  const segment = segments.writable();
  segments.write(segment, [bytes('{"a":1}'), bytes('\n')], 8, 1);
  assert.is(segment.size, 8);
  assert.is(segments.writable(), segment, 'not full: the same segment');
  segments.write(segment, [bytes('{"b":22}\n')], 9, 1);
  assert.is(segment.size, 17);
  assert.is((await segments.read(segment.name, 8, 8))?.toString(), '{"b":22}');
  assert.equal(await segments.list(), [segment.name]);
  assert.is(segments.currentName, segment.name);
});

test('a read past the end of a segment (torn) or of a segment that is gone is undefined', async () => {
  const segments = new SegmentFiles(dir, 1_000);
  const segment = segments.writable();
  segments.write(segment, [bytes('0123456789')], 10, 1);
  assert.is(await segments.read(segment.name, 5, 10), undefined);
  assert.is(await segments.read('lz0abc-1-0123abcd.ndjson', 0, 1), undefined);
});

test('a segment is rolled over once it holds maxRecords records, however few bytes', () => {
  const segments = new SegmentFiles(dir, 1_000_000, 3);
  const first = segments.writable();
  segments.write(first, [bytes('a\n'), bytes('b\n')], 4, 2);
  assert.is(segments.writable().name, first.name, 'two of three');
  segments.write(first, [bytes('c\n')], 2, 1);
  assert.is.not(segments.writable().name, first.name, 'three of three');
});

test('a full segment is rolled over; the rolled-over one is deleted only once no index line refers to it', async () => {
  const segments = new SegmentFiles(dir, 10);
  const first = segments.writable();
  segments.write(first, [bytes('0123456789')], 10, 1);
  const second = segments.writable();
  assert.is.not(second.name, first.name);
  const referred = new Set([first.name]);
  const refersTo = (name: string) => referred.has(name);
  assert.not.ok(segments.hasDeletable(refersTo));
  assert.is(await segments.deleteRetired(refersTo), 0);
  assert.ok(existsSync(segments.path(first.name)), 'still referred to: kept');
  referred.clear();
  assert.ok(segments.hasDeletable(refersTo));
  assert.is(await segments.deleteRetired(refersTo), 1);
  assert.not.ok(existsSync(segments.path(first.name)));
  assert.not.ok(segments.hasDeletable(refersTo), 'deleted once, forgotten');
  assert.ok(existsSync(segments.path(second.name)), 'the current segment is not touched');
});

test('a segment retired empty is deleted at once; retireCurrent closes the one being written', async () => {
  const segments = new SegmentFiles(dir, 1_000);
  const empty = segments.writable();
  segments.retireCurrent();
  assert.not.ok(existsSync(segments.path(empty.name)));
  assert.is(segments.currentName, null);
  const written = segments.writable();
  segments.write(written, [bytes('x')], 1, 1);
  segments.retireCurrent();
  assert.ok(existsSync(segments.path(written.name)), 'with a record: kept until unreferenced');
  assert.is(await segments.deleteRetired(() => false), 1);
});

test('a segment deleted behind the writer (a purge) is noticed, and the next write goes to a new one', async () => {
  const segments = new SegmentFiles(dir, 1_000);
  const segment = segments.writable();
  segments.write(segment, [bytes('abc')], 3, 1);
  await rm(segments.path(segment.name));
  assert.not.ok(segments.isLinked(segment));
  const next = segments.writable();
  assert.is.not(next.name, segment.name);
  assert.ok(segments.isLinked(next));
});

test('a failed write retires the segment: the next batch starts a new one', async () => {
  const segments = new SegmentFiles(dir, 1_000);
  const segment = segments.writable();
  // 3 bytes written where 4 were meant: the short count a full disk gives.
  assert.throws(() => segments.write(segment, [bytes('abc')], 4, 1), /Short write to segment .*is the disk full\?/);
  assert.is(segments.currentName, null);
  assert.is.not(segments.writable().name, segment.name);
});

test('unreferenced segments of other writers are deleted only when stale; referenced and current ones never', async () => {
  const segments = new SegmentFiles(dir, 1_000);
  const own = segments.writable();
  segments.write(own, [bytes('own')], 3, 1);
  const stale = 'lz0aaa-1-0000aaaa.ndjson';
  const fresh = 'lz0bbb-2-0000bbbb.ndjson';
  const referred = 'lz0ccc-3-0000cccc.ndjson';
  for (const name of [stale, fresh, referred]) await writeFile(segments.path(name), 'record\n');
  const old = new Date(Date.now() - 10 * 60_000);
  await utimes(segments.path(stale), old, old);
  await utimes(segments.path(referred), old, old);
  const names = await segments.list();
  assert.equal(names.sort(), [stale, fresh, referred, own.name].sort());
  assert.is(await segments.deleteUnreferenced(names, (name) => name === referred), 1);
  assert.equal((await readdir(join(dir, 'segments'))).sort(), [fresh, referred, own.name].sort());
});

test('for space (a full disk), its own segments go, the current one retired first, and other writers\' only when stale', async () => {
  const segments = new SegmentFiles(dir, 1_000);
  const retired = segments.writable();
  segments.write(retired, [bytes('old')], 3, 1);
  segments.retireCurrent();
  const current = segments.writable();
  segments.write(current, [bytes('new')], 3, 1);
  const stale = 'lz0aaa-1-0000aaaa.ndjson';
  const fresh = 'lz0bbb-2-0000bbbb.ndjson';
  for (const name of [stale, fresh]) await writeFile(segments.path(name), 'record\n');
  const old = new Date(Date.now() - 10 * 60_000);
  await utimes(segments.path(stale), old, old);
  assert.equal(await segments.deleteForSpace([fresh, retired.name], 1), [retired.name], 'a fresh one of another writer stays; at most one');
  assert.equal(await segments.deleteForSpace([fresh, stale, current.name]), [stale, current.name]);
  assert.equal(await readdir(join(dir, 'segments')), [fresh]);
  assert.is(segments.currentName, null, 'the next write goes to a new segment');
  assert.is.not(segments.writable().name, current.name);
});

test('a short write (a full disk) fails with the code ENOSPC', () => {
  const segments = new SegmentFiles(dir, 1_000);
  const error = (() => {
    try {
      segments.write(segments.writable(), [bytes('abc')], 4, 1);
    } catch (thrown) {
      return thrown as Error & { code?: string };
    }
    return null;
  })();
  assert.is(error?.code, 'ENOSPC');
});

test('list() names only segment files; deleteAll() removes every one, of every writer', async () => {
  const segments = new SegmentFiles(dir, 1_000);
  segments.write(segments.writable(), [bytes('a')], 1, 1);
  segments.retireCurrent();
  segments.write(segments.writable(), [bytes('b')], 1, 1);
  await writeFile(segments.path('lz0ddd-4-0000dddd.ndjson'), 'c\n');
  await writeFile(segments.path('notes.txt'), 'not a segment');
  assert.is((await segments.list()).length, 3);
  await segments.deleteAll();
  assert.equal(await readdir(join(dir, 'segments')), ['notes.txt']);
  assert.not.ok(segments.hasDeletable(() => false), 'the rolled-over segment is forgotten with its file');
});

test('a segment is rolled over once 10 minutes old however recently written, and once not written for a minute', async () => {
  const segments = new SegmentFiles(dir, 1_000_000);
  const t0 = Date.now();
  const first = await at(t0, () => segments.writable());
  // Written every 50 s: never idle for a minute.
  for (let t = t0; t < t0 + 600_000; t += 50_000) {
    await at(t, () => {
      assert.is(segments.writable(), first, `${t - t0} ms`);
      segments.write(first, [bytes('x')], 1, 1);
    });
  }
  assert.is(await at(t0 + 599_999, () => segments.writable()), first, 'just under 10 minutes old');
  const second = await at(t0 + 600_000, () => segments.writable());
  assert.is.not(second.name, first.name, '10 minutes old');
  await at(t0 + 600_000, () => segments.write(second, [bytes('y')], 1, 1));
  assert.is(await at(t0 + 659_999, () => segments.writable()), second, 'idle just under a minute');
  assert.is.not((await at(t0 + 660_000, () => segments.writable())).name, second.name, 'idle a minute');
});

test('limit() lowers the bytes and records a segment is rolled over at, from the next batch on', () => {
  const segments = new SegmentFiles(dir, 1_000);
  const first = segments.writable();
  segments.write(first, [bytes('12345')], 5, 1);
  segments.limit(5, Infinity);
  const second = segments.writable();
  assert.is.not(second.name, first.name, 'bytes');
  segments.write(second, [bytes('1')], 1, 1);
  segments.limit(1_000, 1);
  assert.is.not(segments.writable().name, second.name, 'records');
});

test('retiring a segment leaves another one current; an empty one leaves nothing to delete; retireCurrent with none does nothing', () => {
  const segments = new SegmentFiles(dir, 1_000);
  const old = segments.writable();
  segments.write(old, [bytes('a')], 1, 1);
  segments.retireCurrent();
  const current = segments.writable();
  segments.retire(old);
  assert.is(segments.currentName, current.name, 'a retired segment retired again');
  assert.not.ok(segments.isLinked(old), 'closed');

  const fresh = new SegmentFiles(dir, 1_000);
  fresh.writable();
  fresh.retireCurrent();
  assert.not.ok(fresh.hasDeletable(() => false), 'deleted at once, not kept for later');
  fresh.retireCurrent();
  assert.is(fresh.currentName, null);
});

test('deleteUnreferenced keeps the current segment however old, skips names gone, and deletes at exactly 5 minutes unwritten', async () => {
  const segments = new SegmentFiles(dir, 1_000);
  const current = segments.writable();
  segments.write(current, [bytes('a')], 1, 1);
  const other = 'lz0aaa-1-0000aaaa.ndjson';
  await writeFile(segments.path(other), 'record\n');
  await touchAt(segments.path(current.name), tenMinutesAgo());
  assert.is(await segments.deleteUnreferenced([current.name, 'lz0bbb-2-0000bbbb.ndjson'], () => false), 0);
  assert.ok(existsSync(segments.path(current.name)), 'the current segment is kept');
  segments.retireCurrent();
  const refersTo = (name: string): boolean => name === current.name;
  const mtimeMs = await touchAt(segments.path(other), tenMinutesAgo());
  assert.is(await at(mtimeMs + 299_999, () => segments.deleteUnreferenced([other], refersTo)), 0, 'just under 5 minutes');
  assert.is(await at(mtimeMs + 300_000, () => segments.deleteUnreferenced([other], refersTo)), 1, 'with no current segment');
  assert.not.ok(existsSync(segments.path(other)));
});

test('deleteForSpace deletes at most `most`, skips names gone, and takes another writer\'s at exactly 5 minutes unwritten', async () => {
  const segments = new SegmentFiles(dir, 1_000);
  const names = ['lz0aaa-1-0000aaaa.ndjson', 'lz0bbb-2-0000bbbb.ndjson', 'lz0ccc-3-0000cccc.ndjson'];
  await mkdir(join(dir, 'segments'));
  const seconds = tenMinutesAgo();
  let mtimeMs = 0;
  for (const name of names) {
    await writeFile(segments.path(name), 'record\n');
    mtimeMs = await touchAt(segments.path(name), seconds);
  }
  assert.equal(await at(mtimeMs + 299_999, () => segments.deleteForSpace(names)), [], 'just under 5 minutes');
  assert.equal(await at(mtimeMs + 300_000, () => segments.deleteForSpace(['lz0ddd-4-0000dddd.ndjson', ...names], 2)), names.slice(0, 2), 'a name gone skipped; two at most');
  assert.equal(await readdir(join(dir, 'segments')), names.slice(2));
});

test('isAbandoned: only another writer\'s file not written for 5 minutes; never this writer\'s, a name gone or a directory', async () => {
  const segments = new SegmentFiles(dir, 1_000);
  const retired = segments.writable();
  segments.write(retired, [bytes('a')], 1, 1);
  segments.retireCurrent();
  const current = segments.writable();
  segments.write(current, [bytes('b')], 1, 1);
  const [other, directory] = ['lz0aaa-1-0000aaaa.ndjson', 'lz0bbb-2-0000bbbb.ndjson'];
  await writeFile(segments.path(other), 'record\n');
  await mkdir(segments.path(directory));
  const seconds = tenMinutesAgo();
  for (const name of [retired.name, current.name, directory]) await touchAt(segments.path(name), seconds);
  const mtimeMs = await touchAt(segments.path(other), seconds);
  for (const name of [retired.name, current.name, directory, 'lz0ccc-3-0000cccc.ndjson']) assert.not.ok(await segments.isAbandoned(name), name);
  assert.not.ok(await at(mtimeMs + 299_999, () => segments.isAbandoned(other)), 'just under 5 minutes');
  assert.ok(await at(mtimeMs + 300_000, () => segments.isAbandoned(other)), '5 minutes');
  segments.retireCurrent();
  assert.ok(await segments.isAbandoned(other), 'with no current segment');
});

test('a read closes the segment file it opened, whether it read the record or found it torn', async () => {
  const segments = new SegmentFiles(dir, 1_000);
  const segment = segments.writable();
  segments.write(segment, [bytes('0123456789')], 10, 1);
  const before = openDescriptors();
  for (let i = 0; i < 10; i++) {
    assert.is((await segments.read(segment.name, 2, 3))?.toString(), '234');
    assert.is(await segments.read(segment.name, 8, 3), undefined);
  }
  assert.is(openDescriptors(), before);
});

test.run();
