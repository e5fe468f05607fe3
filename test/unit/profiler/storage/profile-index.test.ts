import { readdirSync, statSync } from 'node:fs';
import { appendFile, open, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PURGED_THROUGH, encodeIndexHeader, recordLines, type IndexEntry, type IndexRecord } from '../../../../lib/profiler/storage/index-file.js';
import { ProfileIndex } from '../../../../lib/profiler/storage/profile-index.js';
import { BASE_TIME, makeTempDir } from './fixtures.js';

const test = suite('profile index');

let dir = '';
let cleanup: () => Promise<void> = async () => {};
test.before.each(async () => {
  ({ dir, cleanup } = await makeTempDir('profile-index'));
});
test.after.each(() => cleanup());

const FILE = { dev: 1, ino: 1 };

function records(from: number, count: number, segment: string | null, time = (i: number) => BASE_TIME + i): IndexRecord[] {
  const entries: IndexEntry[] = [];
  for (let i = from; i < from + count; i++) {
    entries.push({ token: (0x100000 + i).toString(16), parent: null, ip: '::1', method: 'GET', url: 'http://h/', time: time(i), status: 200, bytes: 10, segment, offset: segment === null ? 0 : i * 10 });
  }
  return recordLines(entries).records;
}

test('addAll counts entries, bytes and segments; a token already held keeps its first record', () => {
  const index = new ProfileIndex('/nonexistent/index.ndjson');
  const first = records(0, 5, 'a1-1-00000000.ndjson');
  index.addAll(first);
  index.addAll([...records(5, 3, 'a2-1-00000000.ndjson'), ...records(8, 2, null), ...records(0, 1, 'a3-1-00000000.ndjson')]);
  assert.is(index.size, 10);
  assert.is(index.bytes, 100);
  assert.is(index.get(first[0]!.token), first[0]);
  assert.ok(index.refersTo('a1-1-00000000.ndjson') && index.refersTo('a2-1-00000000.ndjson'));
  assert.not.ok(index.refersTo('a3-1-00000000.ndjson'), 'the duplicate did not count for its segment');
});

test('compacted drops the removed records (oldest or not, in any order) and forgets segments no entry refers to', () => {
  const index = new ProfileIndex('/nonexistent/index.ndjson');
  const old = records(0, 4, 'a1-1-00000000.ndjson');
  const mixed = records(4, 4, 'a2-1-00000000.ndjson');
  const young = records(8, 4, 'a3-1-00000000.ndjson');
  index.addAll([...old, ...mixed, ...young]);
  index.compacted([...old], 0, FILE, BASE_TIME + 3, BASE_TIME + 3);
  assert.is(index.size, 8);
  assert.not.ok(index.refersTo('a1-1-00000000.ndjson'));
  assert.is(index.oldest(), mixed[0]);
  // Out of time order, and a record the index does not hold (another copy of a held token): only held ones go.
  const stranger = records(9, 1, 'a3-1-00000000.ndjson')[0]!;
  index.compacted([young[2]!, mixed[1]!, stranger, mixed[3]!], 0, FILE, null, BASE_TIME + 3);
  assert.equal([...index.oldestFirst()].map((record) => record.token), [mixed[0]!, mixed[2]!, young[0]!, young[1]!, young[3]!].map((record) => record.token));
  assert.is(index.bytes, 50);
  assert.ok(index.refersTo('a2-1-00000000.ndjson') && index.refersTo('a3-1-00000000.ndjson'));
  index.compacted([mixed[0]!, mixed[2]!], 0, FILE, null, BASE_TIME + 3);
  assert.not.ok(index.refersTo('a2-1-00000000.ndjson'));
  assert.ok(index.get(stranger.token) !== undefined, 'the held record of that token stays');
});

const SEGMENT_A = 'a1-1-00000000.ndjson';
const SEGMENT_B = 'a2-1-00000000.ndjson';

/** The records' lines, newlines included, as another process appends them. */
const text = (list: readonly IndexRecord[]): string => list.map((record) => `${record.line}\n`).join('');
const tokens = (index: ProfileIndex): string[] => [...index.oldestFirst()].map((record) => record.token);
const tokensOf = (list: readonly IndexRecord[]): string[] => list.map((record) => record.token);

/** Writes `content` beside `path` and renames it over, as a compaction of another process does. */
async function replace(path: string, content: string): Promise<{ dev: number; ino: number; size: number }> {
  await writeFile(`${path}.new`, content);
  await rename(`${path}.new`, path);
  const { dev, ino, size } = statSync(path);
  return { dev, ino, size };
}

/** Descriptors this process has open (Linux), or 0 where that cannot be read. */
const openDescriptors = (): number => (process.platform === 'linux' ? readdirSync('/proc/self/fd').length : 0);

test('refresh reads the lines other processes append, only the new ones each time, and a partial last line once it is whole', async () => {
  const path = join(dir, 'index.ndjson');
  const index = new ProfileIndex(path);
  await index.refresh();
  assert.is(index.size, 0, 'no file yet');
  const list = [...records(0, 2, SEGMENT_A), ...records(2, 2, SEGMENT_B)];
  await writeFile(path, text(list.slice(0, 2)));
  await index.refresh();
  assert.equal(tokens(index), tokensOf(list.slice(0, 2)));
  const first = index.get(list[0]!.token);
  const last = text(list.slice(3));
  await appendFile(path, text(list.slice(2, 3)) + last.slice(0, 20));
  await index.refresh();
  assert.equal(tokens(index), tokensOf(list.slice(0, 3)), 'the partial line waits');
  await appendFile(path, last.slice(20));
  await index.refresh();
  assert.equal(tokens(index), tokensOf(list));
  assert.equal([...index.newestFirst()].map((record) => record.token), tokensOf(list).reverse());
  assert.is(index.get(list[0]!.token), first, 'lines read before are not read again');
  assert.ok(list.every((record) => index.has(record.token)));
  assert.not.ok(index.has((0x100000 + 9).toString(16)));
  assert.is(index.bytes, 40);
  assert.ok(index.refersTo(SEGMENT_A) && index.refersTo(SEGMENT_B));
  assert.is(index.skippedLines, 0);
});

test('a line that is no entry is skipped and counted, a whole line glued after a torn one is read, and the first line of a token wins', async () => {
  const path = join(dir, 'index.ndjson');
  const list = records(0, 3, SEGMENT_A);
  const again = records(0, 1, SEGMENT_B, () => BASE_TIME + 100)[0]!;
  await writeFile(path, `${list[0]!.line}\nnot an entry\n${list[1]!.line.slice(0, 30)}${list[1]!.line}\n${again.line}\n${list[2]!.line}\n`);
  const index = new ProfileIndex(path);
  await index.refresh();
  assert.equal(tokens(index), tokensOf(list));
  assert.is(index.skippedLines, 1);
  assert.is(index.get(list[0]!.token)?.segment, SEGMENT_A, 'the first line of the token');
  assert.not.ok(index.refersTo(SEGMENT_B));
  assert.is(index.bytes, 30);
});

test('the header gives what a compaction dropped; droppedEverSeen keeps the newest, but for a purge\'s; no header, nothing dropped', async () => {
  const path = join(dir, 'index.ndjson');
  const list = records(0, 2, SEGMENT_A);
  const index = new ProfileIndex(path);
  await writeFile(path, text(list));
  await index.refresh();
  assert.equal([index.droppedThrough, index.droppedEver, index.droppedEverSeen, index.droppedNewest], [null, null, null, { aheadFrom: null, overBytes: null }], 'never compacted');
  const seen = async (header: string): Promise<unknown[]> => {
    await replace(path, header + text(list));
    await index.refresh();
    assert.equal(tokens(index), tokensOf(list));
    return [index.droppedThrough, index.droppedEver, index.droppedEverSeen];
  };
  assert.equal(await seen(encodeIndexHeader(100, 200, { aheadFrom: 300, overBytes: 400 })), [100, 200, 200]);
  assert.equal(index.droppedNewest, { aheadFrom: 300, overBytes: 400 });
  assert.equal(await seen(encodeIndexHeader(50, 150)), [50, 150, 200], 'an older droppedEver: the newest seen is kept');
  assert.equal(index.droppedNewest, { aheadFrom: null, overBytes: null });
  assert.equal(await seen(encodeIndexHeader(60, 250)), [60, 250, 250]);
  assert.equal(await seen('{"h":1,"d":70}\n'), [70, undefined, 250], 'a header of an earlier version');
  assert.equal(await seen(''), [null, null, 250], 'the header lost');
  assert.equal(await seen(encodeIndexHeader(PURGED_THROUGH, 10)), [PURGED_THROUGH, 10, 10], 'a purge: what was dropped before no longer matters');
  assert.equal(await seen(encodeIndexHeader(PURGED_THROUGH, null)), [PURGED_THROUGH, null, null]);
  const earlier = new ProfileIndex(path);
  await replace(path, '{"h":1,"d":70}\n');
  await earlier.refresh();
  assert.equal([earlier.droppedEver, earlier.droppedEverSeen], [undefined, null], 'a header of an earlier version, read first');
});

test('a file replaced by another process is read again whole: records it no longer lists go, those it keeps are the ones held', async () => {
  const path = join(dir, 'index.ndjson');
  const list = [...records(0, 2, SEGMENT_A), ...records(2, 3, SEGMENT_B)];
  await writeFile(path, text(list.slice(0, 4)));
  const index = new ProfileIndex(path);
  await index.refresh();
  const kept = index.get(list[2]!.token);
  await replace(path, encodeIndexHeader(BASE_TIME + 1, BASE_TIME + 1) + text(list.slice(2)));
  await index.refresh();
  assert.equal(tokens(index), tokensOf(list.slice(2)));
  assert.is(index.get(list[2]!.token), kept, 'a known line is not parsed again');
  assert.not.ok(index.refersTo(SEGMENT_A));
  assert.is(index.bytes, 30);
  // Of the same size as the file read: the size alone does not tell.
  await replace(path, text([...list.slice(0, 2), list[4]!, list[3]!].slice(0, 3)));
  await index.refresh();
  assert.equal(tokens(index), tokensOf([list[0]!, list[1]!, list[4]!]));
  // A token written again after its profile was dropped: its new line says where the new record is.
  const rewritten = records(4, 1, SEGMENT_A, () => BASE_TIME + 50)[0]!;
  await replace(path, text([list[0]!, rewritten]));
  await index.refresh();
  assert.equal([index.get(rewritten.token)?.segment, index.get(rewritten.token)?.offset, index.get(rewritten.token)?.time], [SEGMENT_A, 40, BASE_TIME + 50]);
  assert.ok(index.refersTo(SEGMENT_A) && !index.refersTo(SEGMENT_B));
});

test('a file cut shorter in place is read again from its start; a file deleted empties the index', async () => {
  const path = join(dir, 'index.ndjson');
  const list = records(0, 4, SEGMENT_A);
  await writeFile(path, text(list));
  const index = new ProfileIndex(path);
  await index.refresh();
  const handle = await open(path, 'r+');
  try {
    await handle.truncate(0);
    await handle.write(text([list[3]!]), 0);
  } finally {
    await handle.close();
  }
  await index.refresh();
  assert.equal(tokens(index), [list[3]!.token], 'cut');
  await rm(path);
  await index.refresh();
  assert.equal([index.size, index.bytes, index.refersTo(SEGMENT_A), tokens(index)], [0, 0, false, []]);
});

test('appended(): the next refresh starts after this process\'s own lines, unless another process appended before them', async () => {
  const path = join(dir, 'index.ndjson');
  const list = records(0, 3, SEGMENT_A);
  await writeFile(path, text(list.slice(0, 1)));
  const index = new ProfileIndex(path);
  await index.refresh();
  // Our "own" lines here are no entries: read back, they would count as skipped.
  const own = 'x'.repeat(20) + '\n';
  const append = async (data: string): Promise<{ dev: number; ino: number; size: number }> => {
    await appendFile(path, data);
    const { dev, ino, size } = statSync(path);
    return { dev, ino, size };
  };
  index.appended(await append(own), own.length);
  await index.refresh();
  assert.is(index.skippedLines, 0, 'the file as first read');
  // Replaced, as by another process's compaction: the file read again whole is the one held.
  await replace(path, text(list.slice(0, 1)));
  await index.refresh();
  index.appended(await append(own), own.length);
  await appendFile(path, text(list.slice(1, 2)));
  await index.refresh();
  assert.equal([tokens(index), index.skippedLines], [tokensOf(list.slice(0, 2)), 0], 'own lines not read back');
  await appendFile(path, text(list.slice(2, 3)));
  index.appended(await append(own), own.length);
  await index.refresh();
  assert.equal([tokens(index), index.skippedLines], [tokensOf(list), 1], 'another process appended first: read from where this copy was');
  const other = join(dir, 'other.ndjson');
  await writeFile(other, own);
  const { dev, ino } = statSync(other);
  const here = statSync(path);
  index.appended({ dev, ino, size: here.size + own.length }, own.length);
  index.appended({ dev: here.dev + 1, ino: here.ino, size: here.size + own.length }, own.length);
  await appendFile(path, own);
  await index.refresh();
  assert.is(index.skippedLines, 2, 'appended to another file (or one of another device): this one is read');
});

test('reload() forgets the records the file does not list; the first refresh keeps those this process added before it', async () => {
  const path = join(dir, 'index.ndjson');
  const list = records(0, 3, SEGMENT_A);
  await writeFile(path, text(list.slice(0, 2)));
  const index = new ProfileIndex(path);
  index.addAll(list.slice(2));
  await index.refresh();
  assert.equal(tokens(index), tokensOf(list), 'added before the first read: kept');
  await index.reload();
  assert.equal(tokens(index), tokensOf(list.slice(0, 2)));
  assert.is(index.bytes, 20);
});

test('refresh() asked for while one is queued shares it; catchUp() and hold() wait their turn', async () => {
  const path = join(dir, 'index.ndjson');
  const list = [...records(0, 2, SEGMENT_B), ...records(2, 1, SEGMENT_A)];
  await writeFile(path, text(list.slice(0, 1)));
  const index = new ProfileIndex(path);
  const first = index.refresh();
  assert.is(index.refresh(), first);
  await first;
  assert.is.not(index.refresh(), first, 'once started, a new one');
  let release = (): void => {};
  const held = index.hold(() => new Promise<void>((resolve) => (release = resolve)));
  await appendFile(path, text(list.slice(1)));
  const refreshed = index.refresh();
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.is(index.size, 1, 'held: not read yet');
  release();
  await Promise.all([held, refreshed]);
  assert.is(index.size, 3);
  await appendFile(path, text(records(3, 1, SEGMENT_A)));
  const handle = await open(path, 'r');
  try {
    const caught = await index.catchUp(handle);
    assert.equal(tokensOf(caught.records), [...tokensOf(list), (0x100000 + 3).toString(16)]);
    assert.equal(caught.segments.sort(), [SEGMENT_A, SEGMENT_B]);
    assert.is(caught.end, statSync(path).size);
  } finally {
    await handle.close();
  }
});

test('catchUp() as the first read, of a file with old-layout lines: no segment for them, and later refreshes read the file after the handle is closed', async () => {
  const path = join(dir, 'index.ndjson');
  const list = [...records(0, 1, null), ...records(1, 1, SEGMENT_A), ...records(2, 2, null)];
  await writeFile(path, text(list.slice(0, 3)));
  const index = new ProfileIndex(path);
  const handle = await open(path, 'r');
  try {
    const caught = await index.catchUp(handle);
    assert.equal([tokensOf(caught.records), caught.segments], [tokensOf(list.slice(0, 3)), [SEGMENT_A]]);
  } finally {
    await handle.close();
  }
  await appendFile(path, text(list.slice(3)));
  await index.refresh();
  assert.equal(tokens(index), tokensOf(list));
});

test('a path that cannot be read for another reason than its absence (a symlink loop) fails the refresh, and empties nothing', async () => {
  const path = join(dir, 'index.ndjson');
  const list = records(0, 2, SEGMENT_A);
  await writeFile(path, text(list));
  const index = new ProfileIndex(path);
  await index.refresh();
  await rm(path);
  await symlink(path, path);
  const failure = await index.refresh().then(() => null, (error: unknown) => error as NodeJS.ErrnoException);
  assert.is(failure?.code, 'ELOOP');
  assert.equal(tokens(index), tokensOf(list));
});

test('compacted() takes the new file as read up to `end` with its header\'s values; the next refresh reads its tail', async () => {
  const path = join(dir, 'index.ndjson');
  const list = records(0, 5, SEGMENT_A);
  await writeFile(path, `${text(list.slice(0, 4))}torn\n`);
  const index = new ProfileIndex(path);
  await index.refresh();
  assert.is(index.skippedLines, 1);
  // The kept part holds a line that is no entry: read again, it would be counted.
  const head = `${encodeIndexHeader(BASE_TIME + 1, BASE_TIME + 1)}${text(list.slice(2, 4))}torn\n`;
  const file = await replace(path, head);
  await appendFile(path, text(list.slice(4)));
  index.compacted(list.slice(0, 2).map((record) => index.get(record.token)!), file.size, file, BASE_TIME + 1, BASE_TIME + 2, { aheadFrom: 7, overBytes: 8 });
  assert.equal([index.skippedLines, index.droppedThrough, index.droppedEver, index.droppedEverSeen, index.droppedNewest], [0, BASE_TIME + 1, BASE_TIME + 2, BASE_TIME + 2, { aheadFrom: 7, overBytes: 8 }]);
  await index.refresh();
  assert.equal([tokens(index), index.skippedLines], [tokensOf(list.slice(2)), 0]);
});

test('compacted() forgets each segment whose records all went, over several segments, and may drop every record', async () => {
  const index = new ProfileIndex(join(dir, 'index.ndjson'));
  const a = records(0, 3, SEGMENT_A);
  const b = records(3, 3, SEGMENT_B);
  index.addAll([...a, ...b]);
  index.compacted([...a, b[0]!], 0, FILE, null, null);
  assert.equal([index.refersTo(SEGMENT_A), index.refersTo(SEGMENT_B), tokens(index)], [false, true, tokensOf(b.slice(1))]);
  index.compacted(b.slice(1), 0, FILE, null, null);
  assert.equal([index.size, index.bytes, index.refersTo(SEGMENT_B), index.oldest()], [0, 0, false, undefined]);
  index.addAll(records(6, 1, SEGMENT_A));
  assert.equal(tokens(index), [(0x100000 + 6).toString(16)]);
});

test('compacted() naming a file the path no longer names holds no descriptor, of that one or the one there', async () => {
  const path = join(dir, 'index.ndjson');
  await writeFile(path, text(records(0, 2, SEGMENT_A)));
  const index = new ProfileIndex(path);
  await index.refresh();
  index.close();
  const reopened = new ProfileIndex(path);
  const before = openDescriptors();
  const { dev, ino, size } = statSync(path);
  for (const file of [{ dev, ino: ino + 1 }, { dev: dev + 1, ino }]) {
    reopened.compacted([], size, file, null, null);
    assert.is(openDescriptors(), before, JSON.stringify(file));
  }
  reopened.compacted([], size, { dev, ino }, null, null);
  if (process.platform === 'linux') assert.is(openDescriptors(), before + 1, 'the file there: held');
  reopened.close();
});

test('emptied() takes a purged file: no record, the purge\'s header values, and what was dropped before it forgotten', async () => {
  const path = join(dir, 'index.ndjson');
  await writeFile(path, encodeIndexHeader(5, 500) + text(records(0, 2, SEGMENT_A)));
  const index = new ProfileIndex(path);
  await index.refresh();
  assert.is(index.droppedEverSeen, 500);
  const header = encodeIndexHeader(PURGED_THROUGH, 20);
  const file = await replace(path, header);
  index.emptied(file.size, file, PURGED_THROUGH, 20);
  assert.equal([index.size, index.bytes, index.refersTo(SEGMENT_A), index.droppedThrough, index.droppedEver, index.droppedEverSeen], [0, 0, false, PURGED_THROUGH, 20, 20]);
  await appendFile(path, text(records(2, 1, SEGMENT_B)));
  await index.refresh();
  assert.equal(tokens(index), [(0x100000 + 2).toString(16)]);
});

test('the index holds one descriptor of the file it read, none once the file is gone or the index closed', async () => {
  const path = join(dir, 'index.ndjson');
  await writeFile(path, text(records(0, 2, SEGMENT_A)));
  const index = new ProfileIndex(path);
  const before = openDescriptors();
  await index.refresh();
  await appendFile(path, text(records(2, 1, SEGMENT_A)));
  await index.refresh();
  await replace(path, text(records(0, 1, SEGMENT_A)));
  await index.refresh();
  await index.reload();
  if (process.platform === 'linux') assert.is(openDescriptors(), before + 1, 'one, of the file read last');
  index.close();
  assert.is(openDescriptors(), before, 'closed');
  await appendFile(path, text(records(3, 1, SEGMENT_A)));
  await index.refresh();
  assert.is(openDescriptors(), before, 'read after close: none held');
  assert.is(index.size, 2);
  await rm(path);
  const other = new ProfileIndex(path);
  await writeFile(path, text(records(0, 1, SEGMENT_A)));
  await other.refresh();
  await rm(path);
  await other.refresh();
  assert.is(openDescriptors(), before, 'the file gone: let go');
});

test.run();
