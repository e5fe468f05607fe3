// What a crash or kill -9 can leave behind, made by hand, and how the storage copes with it.
import { spawnSync } from 'node:child_process';
import fs, { existsSync, readlinkSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import fsPromises from 'node:fs/promises';
import { hostname } from 'node:os';
import { appendFile, mkdir, open, readFile, rm, stat, truncate, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as assert from 'uvu/assert';
import { ProfilerStorageError } from '../../../../lib/profiler/storage/index.js';
import type { CompactionReport, FileStorage } from '../../../../lib/profiler/storage/file-storage.js';
import type { Profile } from '../../../../lib/profiler/profile.js';
import { BASE_TIME, foundTokens, indexLines as entryLines, listFiles, makeProfile, fileStorageSuite, referencedSegments, rejection, segmentFiles, tokenFor, until, withCapturedIntervals, within } from './fixtures.js';

const { test, env, freshDir, storageIn } = fileStorageSuite('FileStorage after crashes', 'file-storage-crash');

const HOUR_AGO = new Date(Date.now() - 2 * 60 * 60 * 1000);

/** A directory holding `count` profiles, written by a storage that is then closed ("the process died"). */
async function dirWithProfiles(count: number): Promise<string> {
  const storage = storageIn();
  for (let i = 0; i < count; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }));
  await storage.close();
  return storage.dir;
}

function indexLines(dir: string): Promise<string[]> {
  return readFile(join(dir, 'index.ndjson'), 'utf8').then((text) => text.split('\n').filter((line) => line !== ''));
}


/** Writes a fresh lock file (by its mtime) whose holder, a process of this host and pid namespace, is gone. */
async function writeDeadHoldersLock(path: string): Promise<void> {
  const dead = spawnSync(process.execPath, ['-e', '']).pid!;
  let pidns: string | null = null;
  try {
    pidns = readlinkSync('/proc/self/ns/pid');
  } catch {
    // No pid namespace to read (not Linux): the lock records none, as FileLock writes it.
  }
  await writeFile(path, JSON.stringify({ pid: dead, hostname: hostname(), pidns, time: new Date().toISOString(), id: 'killed' }));
}

test('a half-written last index line is skipped; the next appended line is still found', async () => {
  const dir = await dirWithProfiles(3);
  await appendFile(join(dir, 'index.ndjson'), '{"t":"abcdef","ts":17');
  const storage = storageIn(dir);
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(2), tokenFor(1), tokenFor(0)]);
  await storage.write(makeProfile(tokenFor(3), { time: BASE_TIME + 3 }));
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(3), tokenFor(2), tokenFor(1), tokenFor(0)], 'the line glued to the torn one is recovered');
  assert.equal((await storageIn(dir).find()).length, 4, 'also when read from scratch');
});

test('a compaction rewrites the index without torn or garbage lines', async () => {
  const dir = await dirWithProfiles(3);
  await appendFile(join(dir, 'index.ndjson'), 'garbage\n{"t":"abcdef","ts":1\n\u0000\u0000\u0000\n');
  const storage = storageIn(dir);
  await storage.compact();
  const lines = await indexLines(dir);
  assert.is(lines.length, 4);
  assert.match(lines[0] ?? '', /^\{"h":/, 'a header first');
  for (const line of lines) assert.ok(JSON.parse(line), line);
  assert.equal((await storage.find()).length, 3);
});

/**
 * Runs a compaction of `storage` with `before(path)` called ahead of each file the storage reads
 * whole (the sweep reading a segment back), node:fs/promises' readFile patched for its duration.
 */
async function compactWhileReading(storage: { compact(): Promise<CompactionReport | null> }, before: (path: string) => Promise<void> | void): Promise<CompactionReport | null> {
  const realReadFile = fsPromises.readFile;
  fsPromises.readFile = (async (...args: Parameters<typeof realReadFile>) => {
    await before(String(args[0]));
    return realReadFile(...args);
  }) as typeof realReadFile;
  syncBuiltinESMExports();
  try {
    return await storage.compact();
  } finally {
    fsPromises.readFile = realReadFile;
    syncBuiltinESMExports();
  }
}

/** A directory holding six profiles, a millisecond apart, in small segments (a closed writer's). */
async function dirOfSix(): Promise<string> {
  const dir = freshDir();
  const writer = storageIn(dir, { segmentBytes: 1_000 });
  for (let i = 0; i < 6; i++) await writer.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }));
  await writer.close();
  return dir;
}

/** The segment of a writer killed before its index append, gone an hour since: the profiles' records, no index line referring to them. Returns its path. */
async function killedWritersSegment(dir: string, profiles: Profile[], name = 'm0000a-99999-0000dead.ndjson'): Promise<string> {
  const path = join(dir, 'segments', name);
  await mkdir(join(dir, 'segments'), { recursive: true });
  await writeFile(path, profiles.map((profile) => `${JSON.stringify(profile)}\n`).join(''));
  await utimes(path, HOUR_AGO, HOUR_AGO);
  return path;
}

/** A storage bound to 4 profiles that has dropped one dated a day ahead: the newest time it ever dropped is in the future. */
async function storageThatDroppedOneAhead(dir: string): Promise<FileStorage> {
  const storage = storageIn(dir, { bounds: { maxProfiles: 4 } });
  for (let i = 0; i < 5; i++) await storage.write(makeProfile(tokenFor(i), { time: i === 0 ? Date.now() + 86_400_000 : BASE_TIME + i }));
  await storage.compact();
  assert.not.ok((await foundTokens(storage)).includes(tokenFor(0)), 'the one dated ahead went first');
  return storage;
}

/** The ways an index loses its lines, each done to the index file at a path. */
const INDEX_DAMAGES: Record<string, (path: string) => Promise<void>> = {
  deleted: (path) => rm(path),
  'cut to nothing': (path) => truncate(path, 0),
  overwritten: (path) => writeFile(path, 'not an index\n\u0000garbage\n'),
};

/** Dates every segment of `dir` an hour back: their writer is gone (a segment written in the last 5 minutes may be a live writer's). */
async function abandonSegments(dir: string): Promise<void> {
  for (const name of await segmentFiles(dir)) await utimes(join(dir, 'segments', name), HOUR_AGO, HOUR_AGO);
}

test('an index deleted, cut to nothing or overwritten gets its profiles back from the segments at the next sweep, once their writer is gone', async () => {
  for (const [damage, damageIndex] of Object.entries(INDEX_DAMAGES)) {
    const dir = await dirWithProfiles(5);
    const tokens = [0, 1, 2, 3, 4].map((i) => tokenFor(i)).sort();
    // A compaction first, so the index has its header as a running storage's does.
    const first = storageIn(dir);
    await first.compact();
    await first.close();
    await damageIndex(join(dir, 'index.ndjson'));
    const reported: Error[] = [];
    const storage = storageIn(dir, { onError: (error) => void reported.push(error) });
    assert.equal(await foundTokens(storage), [], `${damage}: nothing listed`);
    const early = await storage.compact();
    assert.is(early?.recovered, 0, `${damage}: a segment written in the last minutes may be a live writer's, waiting for its lines`);
    assert.ok((await segmentFiles(dir)).length > 0, `${damage}: and is not deleted`);
    await abandonSegments(dir);
    const report = await storage.compact();
    assert.is(report?.recovered, 5, `${damage}: ${JSON.stringify(report)}`);
    assert.equal(await foundTokens(storage), tokens, `${damage}: listed again`);
    assert.is((await storage.read(tokenFor(3)))?.url, makeProfile(tokenFor(3)).url, `${damage}: and read`);
    assert.equal(await foundTokens(storageIn(dir)), tokens, `${damage}: the index rewritten, for every process`);
    assert.equal(reported.map((error) => (error as Error & { code?: string }).code), ['HK_PROFILER_STORAGE_RECOVERED'], `${damage}: said once`);
    assert.match(reported[0]?.message ?? '', /had lost the lines of 5 profiles \(.*\); they were put back from the segment files\./);
    assert.is((await storage.compact())?.recovered, 0, `${damage}: once`);
  }
});

test('the profiles the bounds dropped are not put back: a segment no line of a compacted index refers to is deleted, unread', async () => {
  const dir = await dirOfSix();
  const storage = storageIn(dir, { bounds: { maxProfiles: 3 } });
  await storage.compact();
  const kept = await foundTokens(storage);
  assert.ok(kept.length <= 3 && !kept.includes(tokenFor(0)), kept.join(', '));
  assert.ok((await segmentFiles(dir)).length > (await referencedSegments(dir)).length, 'segments of dropped profiles are still there, their writer not gone yet');
  await storage.close();
  await abandonSegments(dir);
  // Restarted with the default bounds, which would keep all six.
  const restarted = storageIn(dir);
  const report = await restarted.compact();
  assert.is(report?.recovered, 0, JSON.stringify(report));
  assert.equal(await foundTokens(restarted), kept);
  assert.equal(await segmentFiles(dir), await referencedSegments(dir), 'deleted');
});

test('a directory under the name of a temp file or a segment is left alone, and the compactions that meet it still apply the bounds', async () => {
  const dir = await dirWithProfiles(6);
  const strays = [join(dir, 'left.tmp'), join(dir, 'index.ndjson.99999-abcd.tmp'), join(dir, tokenFor(0).slice(0, 2), 'x.json.gz.1-1.tmp'), join(dir, 'segments', '0-1-0000abcd.ndjson')];
  for (const stray of strays) {
    await mkdir(stray, { recursive: true });
    await writeFile(join(stray, 'file'), '');
    await utimes(stray, HOUR_AGO, HOUR_AGO);
  }
  const storage = storageIn(dir, { bounds: { maxProfiles: 3 } });
  const report = await storage.compact();
  assert.ok(report, 'the compaction ran to its end');
  const kept = await foundTokens(storage);
  assert.ok(kept.length <= 3 && kept.includes(tokenFor(5)) && !kept.includes(tokenFor(0)), `the bounds applied, the oldest gone: ${kept.join(', ')}`);
  for (const stray of strays) assert.ok(existsSync(join(stray, 'file')), `${stray} left as it was`);
  await storage.close();
});

test('temp files left by a crashed writer are ignored by reads and removed by the next compaction', async () => {
  const dir = await dirWithProfiles(2);
  const profileTemp = join(dir, tokenFor(0).slice(0, 2), `${tokenFor(7)}.json.gz.99999-1.tmp`);
  const indexTemp = join(dir, 'index.ndjson.99999-abcd.tmp');
  await writeFile(profileTemp, gzipSync('{"token":'));
  await writeFile(indexTemp, '{"t":"');
  await utimes(profileTemp, HOUR_AGO, HOUR_AGO);
  await utimes(indexTemp, HOUR_AGO, HOUR_AGO);
  const freshTemp = join(dir, tokenFor(0).slice(0, 2), `${tokenFor(8)}.json.gz.99999-2.tmp`);
  await writeFile(freshTemp, 'a write in progress');
  const storage = storageIn(dir);
  assert.is(await storage.read(tokenFor(7)), null);
  assert.equal((await storage.find()).length, 2);
  const report = await storage.compact();
  assert.ok((report?.cleaned ?? 0) >= 2, JSON.stringify(report));
  assert.not.ok(existsSync(profileTemp));
  assert.not.ok(existsSync(indexTemp));
  assert.ok(existsSync(freshTemp), 'a young temp file may belong to a live writer');
});

test('a discarded file\'s rewrite temp left in leases/ by a crash is removed by the next compaction once as old as the index\'s, a young one kept', async () => {
  const dir = await dirWithProfiles(2);
  const leases = join(dir, 'leases');
  await mkdir(leases, { recursive: true });
  const discarded = join(leases, 'aa.discarded');
  const crashed = join(leases, 'aa.discarded.99999-abcd1234.tmp');
  const young = join(leases, 'ab.discarded.99999-abcd1234.tmp');
  await writeFile(discarded, `aa0000 ${Date.now()}\n`);
  await writeFile(crashed, `aa0000 ${Date.now()}\n`);
  await writeFile(young, 'a rewrite in progress');
  await utimes(crashed, HOUR_AGO, HOUR_AGO);
  // Older than a live writer's temp can be (the rule of the index rewrite's, 10 minutes): only the discarded file stays that old.
  await utimes(discarded, HOUR_AGO, HOUR_AGO);
  const storage = storageIn(dir);
  const report = await storage.compact();
  assert.ok((report?.cleaned ?? 0) >= 1, JSON.stringify(report));
  assert.not.ok(existsSync(crashed), 'the crashed rewrite\'s temp is gone');
  assert.ok(existsSync(young), 'a young temp file may belong to a live rewrite');
  assert.ok(existsSync(discarded), 'the discarded file itself is kept');
});

test('a hand-over of discarded tokens for a prefix nobody leases goes at the next compaction once older than maxAge, when every token in it has expired; a younger one waits for the prefix\'s next holder', async () => {
  const dir = await dirWithProfiles(2);
  const leases = join(dir, 'leases');
  await mkdir(leases, { recursive: true });
  const expired = join(leases, 'aa.handed-over.99999-abcd1234');
  const waiting = join(leases, 'ab.handed-over.99999-abcd1234');
  await writeFile(expired, `aa0000 ${HOUR_AGO.getTime()}\n`);
  await writeFile(waiting, `ab0000 ${Date.now() - 20 * 60_000}\n`);
  await utimes(expired, HOUR_AGO, HOUR_AGO);
  // Older than a temp file may be (10 minutes), younger than the max age (1 hour): its token is still taken.
  const twentyMinutesAgo = new Date(Date.now() - 20 * 60_000);
  await utimes(waiting, twentyMinutesAgo, twentyMinutesAgo);
  const storage = storageIn(dir, { bounds: { maxAge: 60 * 60_000 } });
  const report = await storage.compact();
  assert.ok((report?.cleaned ?? 0) >= 1, JSON.stringify(report));
  assert.not.ok(existsSync(expired), 'every token in it expired: nobody would take it in but to drop it');
  assert.ok(existsSync(waiting), 'its token may still be drawn by the next holder of ab, which takes it in');
});

test('a stale lock (its holder was killed) is taken over; a live one makes background upkeep wait, never a write', async () => {
  const dir = await dirWithProfiles(2);
  const lock = join(dir, 'index.lock');
  await writeFile(lock, '12345-deadbeef');
  const storage = storageIn(dir, { bounds: { maxProfiles: 1 } });
  await storage.write(makeProfile(tokenFor(5), { time: BASE_TIME + 5 }));
  assert.equal((await storage.find({ limit: 100 })).length, 3, 'writes and searches go on while another process holds the lock');
  await utimes(lock, HOUR_AGO, HOUR_AGO);
  const report = await within(storage.compact(), 5_000, 'compact with a stale lock');
  assert.is(report?.profiles, 1);
  assert.not.ok(existsSync(lock), 'released after use');
  assert.equal((await listFiles(dir)).filter((file) => file.includes('lock')), [], 'nothing of the stale lock remains');
});

test('an index lock left by a process of this host that is gone, or stamped far ahead (a clock set back), is taken over at once', async () => {
  const dir = await dirWithProfiles(2);
  const lock = join(dir, 'index.lock');
  // Fresh by its mtime: only the holder's pid says it is gone.
  await writeDeadHoldersLock(lock);
  const storage = storageIn(dir, { bounds: { maxProfiles: 1 } });
  const report = await within(storage.compact(), 2_000, 'compact with a dead holder\'s lock');
  assert.is(report?.profiles, 1);
  assert.not.ok(existsSync(lock));
  await storage.close();
  // A lock an hour in the future would never age.
  await writeFile(lock, '12345-deadbeef');
  const ahead = new Date(Date.now() + 60 * 60 * 1000);
  await utimes(lock, ahead, ahead);
  const again = storageIn(dir, { bounds: { maxProfiles: 1 } });
  assert.ok(await within(again.compact(), 2_000, 'compact with a lock from the future'));
  assert.not.ok(existsSync(lock));
});

test('a write does not wait for an index lock left by a process of this host that is gone (killed in a compaction)', async () => {
  const dir = await dirWithProfiles(1);
  // Fresh by its mtime: only the holder's pid says it is gone. A live holder's lock is waited for up to a second.
  await writeDeadHoldersLock(join(dir, 'index.lock'));
  const storage = storageIn(dir);
  await within(storage.write(makeProfile(tokenFor(7), { time: BASE_TIME + 7 })), 600, 'a write beside a dead holder\'s lock');
  assert.ok(await storage.read(tokenFor(7)));
});

test('compact waits for a live lock and gives up with a clear error', async () => {
  const dir = await dirWithProfiles(1);
  await writeFile(join(dir, 'index.lock'), '12345-deadbeef');
  const storage = storageIn(dir);
  const keepAlive = setInterval(() => {
    const now = new Date();
    void utimes(join(dir, 'index.lock'), now, now).catch(() => {});
  }, 1_000);
  try {
    const error = await within(rejection(() => storage.purge()), 10_000, 'purge against a live lock');
    assert.instance(error, ProfilerStorageError);
    assert.is((error as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_LOCKED');
    assert.is(error.message, `The profiler storage lock ${join(dir, 'index.lock')} is held by another process (waited 5000 ms).`);
  } finally {
    clearInterval(keepAlive);
  }
});

test('a batch whose index lines were lost (killed between the segment write and the append) is listed once its segment is stale; a record cut short is not', async () => {
  const dir = await dirWithProfiles(2);
  const orphan = join(dir, 'segments', 'm0000a-99999-0000dead.ndjson');
  await writeFile(orphan, `${JSON.stringify(makeProfile(tokenFor(8)))}\n${JSON.stringify(makeProfile(tokenFor(9))).slice(0, 500)}`);
  const storage = storageIn(dir);
  assert.is(await storage.read(tokenFor(8)), null);
  assert.equal(await foundTokens(storage), [tokenFor(0), tokenFor(1)]);
  await storage.compact();
  assert.ok(existsSync(orphan), 'not before it is stale: its writer may be about to append the lines');
  assert.equal(await foundTokens(storage), [tokenFor(0), tokenFor(1)], 'nor read back');
  await utimes(orphan, HOUR_AGO, HOUR_AGO);
  const report = await storage.compact();
  assert.is(report?.recovered, 1, JSON.stringify(report));
  assert.is(report?.segmentsDeleted, 0);
  assert.equal(await foundTokens(storage), [tokenFor(0), tokenFor(1), tokenFor(8)]);
  assert.is((await storage.read(tokenFor(8)))?.token, tokenFor(8));
  assert.is(await storage.read(tokenFor(9)), null, 'the record cut short');
});

test('a torn segment tail (a killed writer) hurts neither the profiles before it nor later writes', async () => {
  const dir = await dirWithProfiles(3);
  const [segment] = await segmentFiles(dir);
  await appendFile(join(dir, 'segments', segment ?? '-'), '{"token":"abcdef","collectors":{"logger":{"lo');
  const storage = storageIn(dir);
  for (let i = 0; i < 3; i++) assert.is((await storage.read(tokenFor(i)))?.token, tokenFor(i));
  await storage.writeMany([makeProfile(tokenFor(5)), makeProfile(tokenFor(6))]);
  assert.is((await storage.read(tokenFor(6)))?.token, tokenFor(6));
  assert.is(await storage.read('abcdef'), null);
  assert.equal(await foundTokens(storageIn(dir)), [0, 1, 2, 5, 6].map((i) => tokenFor(i)));
});

test('an index line pointing past the end of its segment (torn record) reads as null, and the next sweep stops listing it; the others still read', async () => {
  const dir = await dirWithProfiles(2);
  const [line] = await entryLines(dir);
  await appendFile(join(dir, 'index.ndjson'), `{"t":"${tokenFor(7)}","ts":${BASE_TIME},"s":200,"m":"GET","i":"::1","p":null,"b":100000,"g":"${line?.g}","o":${line?.o},"u":"http://h/"}\n`);
  const storage = storageIn(dir);
  assert.is(await storage.read(tokenFor(7)), null);
  assert.is((await storage.read(tokenFor(0)))?.token, tokenFor(0));
  assert.equal((await foundTokens(storage)).length, 3, 'listed until a sweep looks at the segment');
  const report = await storage.compact();
  assert.is(report?.cleaned, 1);
  assert.equal(await foundTokens(storage), [tokenFor(0), tokenFor(1)]);
  assert.equal(await foundTokens(storageIn(dir)), [tokenFor(0), tokenFor(1)], 'and for good');
});

test('a segment cut short by hand loses only the profiles past its new end, from reads and from the search', async () => {
  const dir = await dirWithProfiles(3);
  const lines = (await entryLines(dir)).sort((a, b) => (a?.o ?? 0) - (b?.o ?? 0));
  const last = lines[lines.length - 1]!;
  await truncate(join(dir, 'segments', last.g!), last.o! + 1);
  const storage = storageIn(dir);
  await storage.compact();
  const left = await foundTokens(storage);
  assert.is(left.length, 2);
  assert.not.ok(left.includes(last.t!), 'the cut one is not listed');
  for (const token of left) assert.is((await storage.read(token))?.token, token);
});

test('an index line whose segment (or old-layout file) is gone is dropped by the next compaction', async () => {
  const dir = await dirWithProfiles(2);
  await appendFile(join(dir, 'index.ndjson'), `{"t":"${tokenFor(7)}","ts":${BASE_TIME},"s":200,"m":"GET","i":"::1","p":null,"b":10,"u":"http://h/"}\n`);
  await appendFile(join(dir, 'index.ndjson'), `{"t":"${tokenFor(8)}","ts":${BASE_TIME},"s":200,"m":"GET","i":"::1","p":null,"b":10,"g":"m0000a-99999-0000dead.ndjson","o":0,"u":"http://h/"}\n`);
  const storage = storageIn(dir);
  assert.equal((await storage.find()).length, 4);
  assert.is(await storage.read(tokenFor(8)), null);
  await storage.compact();
  assert.equal(await foundTokens(storage), [tokenFor(0), tokenFor(1)]);
});

test('an abandoned claim (empty placeholder over an hour old) is removed, and the token can be claimed again', async () => {
  const dir = await dirWithProfiles(1);
  const crashed = storageIn(dir);
  assert.is(await crashed.claim('abcdef'), true);
  assert.is(await crashed.claim('abcdf0'), true);
  const placeholder = join(dir, 'ab', 'abcdef.json.gz');
  await utimes(placeholder, HOUR_AGO, HOUR_AGO);
  const storage = storageIn(dir);
  assert.is(await storage.claim('abcdef'), false);
  await storage.compact();
  assert.not.ok(existsSync(placeholder));
  assert.ok(existsSync(join(dir, 'ab', 'abcdf0.json.gz')), 'a young claim is kept');
  assert.is(await storage.claim('abcdef'), true);
});

test('a live instance keeps its claims young (every 5 minutes), so no sweep of another takes them for abandoned', async () => {
  const dir = await dirWithProfiles(1);
  // The upkeep runs on a 5-minute interval: its callback is captured and called by the test.
  const { made: live, callbacks } = await withCapturedIntervals(5 * 60_000, () => storageIn(dir));
  assert.is(callbacks.length, 1);
  assert.is(await live.claim('abcdef'), true);
  const placeholder = join(dir, 'ab', 'abcdef.json.gz');
  await utimes(placeholder, HOUR_AGO, HOUR_AGO);
  callbacks[0]!();
  const young = async () => Date.now() - (await stat(placeholder)).mtimeMs < 60_000;
  await until(young);
  assert.ok(await young(), 'touched');
  const other = storageIn(dir);
  await other.compact();
  assert.ok(existsSync(placeholder), 'still claimed');
  assert.is(await other.claim('abcdef'), false);
});

test('a corrupt record (or old-layout file) reads as null; its neighbours still read', async () => {
  const dir = await dirWithProfiles(3);
  const lines = await entryLines(dir);
  const target = lines.find((line) => line.t === tokenFor(1));
  const handle = await open(join(dir, 'segments', target?.g ?? '-'), 'r+');
  await handle.write(Buffer.from('#'.repeat(10)), 0, 10, (target?.o ?? 0) + 20);
  await handle.close();
  const storage = storageIn(dir);
  assert.is(await storage.read(tokenFor(1)), null);
  assert.is((await storage.read(tokenFor(0)))?.token, tokenFor(0));
  assert.is((await storage.read(tokenFor(2)))?.token, tokenFor(2));
  await mkdir(join(dir, 'ab'), { recursive: true });
  await writeFile(join(dir, 'ab', 'abcdef.json.gz'), 'not gzip');
  await appendFile(join(dir, 'index.ndjson'), `{"t":"abcdef","ts":${BASE_TIME},"s":200,"m":"GET","i":"::1","p":null,"b":8,"u":"http://h/"}\n`);
  assert.is(await storage.read('abcdef'), null);
});

test('an unwritable directory: write and claim reject with ProfilerStorageError, reads are empty, nothing throws', async () => {
  // Running as root, chmod 0555 does not stop writes; a path under a regular file fails for everyone.
  await writeFile(join(env.root, 'a-file'), '');
  const errors: Error[] = [];
  const storage = storageIn(join(env.root, 'a-file', 'profiler'), { onError: (error) => errors.push(error) });
  const error = await rejection(() => storage.write(makeProfile('abcdef')));
  assert.instance(error, ProfilerStorageError);
  assert.is((error as ProfilerStorageError).code, 'HK_PROFILER_STORAGE');
  assert.match(error.message, /Cannot write profile abcdef in the profiler storage .*a-file\/profiler: ENOTDIR/);
  assert.match((await rejection(() => storage.writeMany([makeProfile('abcdef'), makeProfile('abcde0')]))).message, /^Cannot write 2 profiles in the profiler storage .*a-file\/profiler: ENOTDIR/);
  const claiming = await rejection(() => storage.claim('abcdef'));
  assert.instance(claiming, ProfilerStorageError);
  assert.match(claiming.message, /^Cannot claim a token for profile abcdef in the profiler storage .*a-file\/profiler: ENOTDIR/);
  const drawing = await rejection(() => storage.drawToken());
  assert.instance(drawing, ProfilerStorageError);
  assert.match(drawing.message, /^Cannot lease a token prefix in the profiler storage .*a-file\/profiler: ENOTDIR/);
  assert.is(await storage.read('abcdef'), null);
  assert.equal(await storage.find(), []);
  await storage.purge();
  assert.is(await storage.compact(), null);
  await storage.close();
  assert.equal(errors, [], 'the caller got the errors; nothing was reported twice');
});

test('an index that cannot be read (a directory in its place): read and find reject with ProfilerStorageError saying what failed', async () => {
  const storage = storageIn();
  await mkdir(join(storage.dir, 'index.ndjson'), { recursive: true });
  const reading = await rejection(() => storage.read('abcdef'));
  assert.instance(reading, ProfilerStorageError);
  assert.match(reading.message, /^Cannot read profile abcdef in the profiler storage .*: EISDIR/);
  const searching = await rejection(() => storage.find());
  assert.instance(searching, ProfilerStorageError);
  assert.match(searching.message, /^Cannot search in the profiler storage .*: EISDIR/);
});

test('a compaction whose lock was taken over while it wrote its new index abandons it: the index stays, no temp file is left', async () => {
  const storage = storageIn(undefined, { bounds: { maxProfiles: 2 } });
  await storage.writeMany([1, 2, 3, 4].map((i) => makeProfile(tokenFor(i), { time: BASE_TIME + i })));
  const before = await readFile(join(storage.dir, 'index.ndjson'), 'utf8');
  const lock = join(storage.dir, 'index.lock');
  const realOpenSync = fs.openSync;
  // Another process takes the lock over (this one looked frozen) as the new index is opened.
  fs.openSync = ((path: fs.PathLike, ...rest: unknown[]) => {
    if (typeof path === 'string' && /index\.ndjson\..*\.tmp$/.test(path)) fs.writeFileSync(lock, JSON.stringify({ pid: process.pid, hostname: hostname(), time: new Date().toISOString(), id: 'other' }));
    return (realOpenSync as (...args: unknown[]) => number)(path, ...rest);
  }) as typeof fs.openSync;
  syncBuiltinESMExports();
  let outcome: unknown;
  try {
    outcome = await storage.compact().then(() => null, (error: unknown) => error);
  } finally {
    fs.openSync = realOpenSync;
    syncBuiltinESMExports();
  }
  assert.is((outcome as ProfilerStorageError | null)?.code, 'HK_PROFILER_STORAGE_LOCKED', String(outcome));
  assert.is(await readFile(join(storage.dir, 'index.ndjson'), 'utf8'), before, 'the index is not replaced');
  assert.equal((await listFiles(storage.dir)).filter((file) => file.endsWith('.tmp')), []);
});

test('a missing directory reads as empty and is not created by reads', async () => {
  const storage = storageIn(join(env.root, 'never-made'));
  assert.is(await storage.read('abcdef'), null);
  assert.equal(await storage.find(), []);
  assert.not.ok(existsSync(storage.dir));
});

test('after a compaction, every indexed profile reads back and every segment is referred to', async () => {
  const dir = await dirWithProfiles(5);
  const storage = storageIn(dir);
  await storage.compact();
  const indexed = await foundTokens(storage);
  assert.is(indexed.length, 5);
  for (const token of indexed) assert.is((await storage.read(token))?.token, token);
  assert.equal(await segmentFiles(dir), await referencedSegments(dir));
});

test('after a header of the earlier version (no "k"), the profiles its compactions dropped are not put back by a later sweep', async () => {
  const dir = await dirOfSix();
  const trimmer = storageIn(dir, { bounds: { maxProfiles: 3 } });
  await trimmer.compact();
  await trimmer.close();
  const kept = await foundTokens(storageIn(dir));
  assert.ok(kept.length <= 3 && !kept.includes(tokenFor(0)), kept.join(', '));
  // A process of the earlier version compacts next: nothing over its bounds, so its header says
  // it dropped nothing (`"d":null`), and it knows nothing of "k".
  const path = join(dir, 'index.ndjson');
  const lines = (await readFile(path, 'utf8')).split('\n');
  assert.match(lines[0] ?? '', /^\{"h":1,/);
  await writeFile(path, ['{"h":1,"d":null}', ...lines.slice(1)].join('\n'));
  // This version's first sweep: the dropped profiles' segments not stale yet (their writer may be live).
  const storage = storageIn(dir);
  assert.is((await storage.compact())?.recovered, 0);
  // Their writer gone, the next sweep.
  await abandonSegments(dir);
  const report = await storage.compact();
  assert.is(report?.recovered, 0, JSON.stringify(report));
  assert.equal(await foundTokens(storage), kept);
});

test('a profile written under a lost token while the sweep reads the lost record back is the one listed, not the record read back', async () => {
  const dir = await dirWithProfiles(2);
  const lost = tokenFor(8);
  const orphan = await killedWritersSegment(dir, [makeProfile(lost, { url: '/lost' })]);
  const compactor = storageIn(dir);
  const writer = storageIn(dir);
  // The token is free again (no line holds it): another process writes a new profile under it
  // while the sweep reads the old record, its line appended to the index being compacted.
  let written: Promise<void> | undefined;
  await compactWhileReading(compactor, async (path) => {
    if (written !== undefined || path !== orphan) return;
    written = writer.write(makeProfile(lost, { time: BASE_TIME + 1_000, url: '/newer' }));
    await until(async () => (await readFile(join(dir, 'index.ndjson'), 'utf8')).includes(lost));
  });
  assert.ok(written !== undefined, 'the sweep read the segment');
  await written;
  for (const [who, storage] of [['the compactor', compactor], ['the writer', writer], ['another process', storageIn(dir)]] as const) {
    assert.is((await storage.read(lost))?.url, '/newer', who);
    assert.is((await storage.find()).filter((summary) => summary.token === lost).length, 1, who);
  }
});

test('a profile written under a lost token during the sweep is listed for every process, also when the bounds drop the record read back', async () => {
  const dir = await dirWithProfiles(3);
  const lost = tokenFor(8);
  // The lost record is three days old: the age bound drops it.
  const orphan = await killedWritersSegment(dir, [makeProfile(lost, { time: Date.now() - 3 * 86_400_000, url: '/lost' })]);
  const storage = storageIn(dir);
  // The token is free again (no line holds it): this process writes a new profile under it while
  // its own sweep reads the old record, the new line appended to the index being compacted.
  let written: Promise<void> | undefined;
  const report = await compactWhileReading(storage, async (path) => {
    if (written !== undefined || path !== orphan) return;
    written = storage.write(makeProfile(lost, { time: BASE_TIME + 1_000, url: '/newer' }));
    await written;
  });
  assert.ok(written !== undefined, 'the sweep read the segment');
  assert.is(report?.recovered, 0, JSON.stringify(report));
  assert.is(report?.removed, 1, 'the record read back went by the bounds');
  for (const [who, reader] of [['the compactor', storage], ['another process', storageIn(dir)]] as const) {
    assert.is((await reader.read(lost))?.url, '/newer', who);
    assert.equal(await foundTokens(reader), [0, 1, 2, 8].map((i) => tokenFor(i)).sort(), who);
  }
});

test('a compaction that does not sweep (over the bounds, between sweeps) leaves a segment no line refers to for the sweep to read back', async () => {
  const dir = await dirWithProfiles(1);
  const storage = storageIn(dir, { bounds: { maxProfiles: 8 } });
  // Its first sweep: the next is 10 minutes away.
  assert.is((await storage.compact())?.recovered, 0);
  assert.not.ok((await foundTokens(storage)).includes(tokenFor(40)));
  // A writer killed before its index append, gone since: a segment no line refers to.
  const orphan = await killedWritersSegment(dir, [makeProfile(tokenFor(40), { time: Date.now() })]);
  // Over the bounds: the background check compacts, without sweeping.
  for (let i = 1; i < 12; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }));
  const trimmed = async (): Promise<boolean> => (await foundTokens(storageIn(dir))).length <= 8;
  assert.not.ok(await trimmed());
  await until(trimmed);
  await until(trimmed);
  assert.ok(await trimmed(), 'the bounds were applied');
  assert.ok(existsSync(orphan), 'the segment of the lost line is left to the sweep');
  const report = await storage.compact();
  assert.is(report?.recovered, 1, JSON.stringify(report));
  assert.ok((await foundTokens(storage)).includes(tokenFor(40)));
});

test('an index deleted, cut or overwritten under a running storage: the profiles its compactions dropped stay dropped', async () => {
  for (const [damage, damageIndex] of Object.entries(INDEX_DAMAGES)) {
    const dir = freshDir();
    // Segments of 2 profiles (a quarter of the count bound): the oldest kept one holds a dropped profile too.
    const writer = storageIn(dir, { bounds: { maxProfiles: 8 } });
    for (let i = 0; i < 9; i++) await writer.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }));
    await writer.close();
    await abandonSegments(dir);
    const storage = storageIn(dir, { bounds: { maxProfiles: 8 } });
    await storage.compact();
    assert.equal((await segmentFiles(dir)).length, 4, 'the segment of dropped profiles alone deleted');
    const kept = await foundTokens(storage);
    assert.equal(kept, [3, 4, 5, 6, 7, 8].map((i) => tokenFor(i)));
    await damageIndex(join(dir, 'index.ndjson'));
    await abandonSegments(dir);
    const report = await storage.compact();
    assert.is(report?.recovered, kept.length, `${damage}: ${JSON.stringify(report)}`);
    assert.equal(await foundTokens(storage), kept, damage);
  }
});

test('a token read back is not drawn again, nor read back inside a prefix another live process leases (its draws do not see it)', async () => {
  const dir = freshDir();
  const storage = storageIn(dir);
  const other = storageIn(dir);
  const ours = (await storage.drawToken()).slice(0, 2);
  const theirs = (await other.drawToken()).slice(0, 2);
  assert.is.not(ours, theirs);
  // Lost records in both prefixes, their lines gone (their writer killed before its append).
  const lost = (prefix: string): string[] => Array.from({ length: 64 }, (_, i) => `${prefix}f${i.toString(16).padStart(3, '0')}`);
  // And one claimed by a placeholder (outside any lease), its claimer about to write it.
  const claimed = `${['ab', 'cd', 'ef'].find((prefix) => prefix !== ours && prefix !== theirs) as string}f000`;
  assert.ok(await other.claim(claimed));
  await killedWritersSegment(dir, [...lost(ours), ...lost(theirs), claimed].map((token, i) => makeProfile(token, { time: BASE_TIME + i }, 100)));
  const report = await storage.compact();
  assert.is(report?.recovered, 64, JSON.stringify(report));
  const listed = new Set(await foundTokens(storage));
  assert.ok(lost(ours).every((token) => listed.has(token)), 'ours read back');
  assert.ok(lost(theirs).every((token) => !listed.has(token)), 'not theirs');
  assert.not.ok(listed.has(claimed), 'nor a claimed one');
  // Half the prefix drawn: none of the tokens read back comes again.
  const drawn = await storage.drawTokens(6, 40_000);
  assert.ok(drawn.length > 30_000, String(drawn.length));
  assert.equal(drawn.filter((token) => listed.has(token)), []);
});

test('a segment whose lost records are in a prefix another live process leases is kept, and read back once that process is gone', async () => {
  const dir = freshDir();
  const storage = storageIn(dir);
  const other = storageIn(dir);
  await storage.drawToken();
  const theirs = (await other.drawToken()).slice(0, 2);
  const lost = [0, 1, 2, 3].map((i) => `${theirs}f00${i}`);
  const orphan = await killedWritersSegment(dir, lost.map((token, i) => makeProfile(token, { time: BASE_TIME + i })));
  const early = await storage.compact();
  assert.is(early?.recovered, 0, JSON.stringify(early));
  assert.ok(existsSync(orphan), 'not read back while that process may draw those tokens, nor deleted');
  await other.close();
  const report = await storage.compact();
  assert.is(report?.recovered, 4, JSON.stringify(report));
  assert.equal(await foundTokens(storageIn(dir)), lost);
});

test('a segment that cannot be read back (no read permission) fails no sweep: the bounds are applied, the others read back', async () => {
  const dir = await dirWithProfiles(2);
  const unreadable = await killedWritersSegment(dir, [makeProfile(tokenFor(7))], 'm0000a-99998-0000beef.ndjson');
  await killedWritersSegment(dir, [makeProfile(tokenFor(8))], 'm0000b-99999-0000dead.ndjson');
  const reported: Error[] = [];
  const storage = storageIn(dir, { onError: (error) => void reported.push(error) });
  // Tests may run as root, whom no mode keeps from reading: the read fails as it would for others.
  const report = await compactWhileReading(storage, (path) => {
    if (path === unreadable) throw Object.assign(new Error(`EACCES: permission denied, open '${unreadable}'`), { code: 'EACCES' });
  });
  assert.is(report?.recovered, 1, JSON.stringify(report));
  assert.equal(await foundTokens(storage), [tokenFor(0), tokenFor(1), tokenFor(8)]);
  assert.ok(reported.some((error) => /EACCES/.test(error.message)), reported.map((error) => error.message).join('; '));
});

test('a leases/ directory or a lease file that cannot be read fails no sweep: what it cannot read is skipped, said once, and the rest goes on', async () => {
  const dir = await dirWithProfiles(2);
  const leases = join(dir, 'leases');
  await mkdir(leases, { recursive: true });
  // Lost records in two prefixes; ab's lease file cannot be read (its holder is gone, as a later sweep finds out).
  const abSegment = await killedWritersSegment(dir, [makeProfile('ab0001', { time: BASE_TIME + 10 })], 'm0000a-99998-0000beef.ndjson');
  await killedWritersSegment(dir, [makeProfile('cd0001', { time: BASE_TIME + 11 })], 'm0000b-99999-0000dead.ndjson');
  const abLease = join(leases, 'ab.lease');
  await writeDeadHoldersLock(abLease);
  // A rewrite's temp file left by a crash, which the sweep would remove, in the directory it cannot list.
  const temp = join(leases, 'ef.discarded.1-00000000.tmp');
  await writeFile(temp, 'ef0001 1\n');
  await utimes(temp, HOUR_AGO, HOUR_AGO);
  const reported: Error[] = [];
  const storage = storageIn(dir, { onError: (error) => void reported.push(error) });
  // Tests may run as root, whom no mode keeps from reading: the calls fail as they would for others.
  const denied = (path: string): Error => Object.assign(new Error(`EACCES: permission denied, '${path}'`), { code: 'EACCES' });
  const real = { readdir: fsPromises.readdir, open: fsPromises.open };
  fsPromises.readdir = (async (...args: Parameters<typeof real.readdir>) => {
    if (String(args[0]) === leases) throw denied(leases);
    return (real.readdir as (...rest: unknown[]) => Promise<unknown>)(...args);
  }) as typeof real.readdir;
  fsPromises.open = (async (...args: Parameters<typeof real.open>) => {
    if (String(args[0]) === abLease) throw denied(abLease);
    return real.open(...args);
  }) as typeof real.open;
  syncBuiltinESMExports();
  let report: CompactionReport | null;
  try {
    report = await storage.compact();
  } finally {
    Object.assign(fsPromises, real);
    syncBuiltinESMExports();
  }
  assert.is(report?.recovered, 1, JSON.stringify(report));
  assert.equal(await foundTokens(storage), [tokenFor(0), tokenFor(1), 'cd0001']);
  assert.ok(existsSync(abSegment), 'kept: its lease may be live, and a later sweep reads it back');
  assert.ok(existsSync(temp), 'not seen');
  // The other report: the warning that lost lines were put back.
  assert.equal(reported.filter((error) => /leases/.test(error.message)).map((error) => error.message.replace(/ \/\S+/, ' <dir>')), ['Cannot read the token-prefix leases of the profiler storage <dir> (EACCES): the compaction skipped what it could not read there, and went on.'], 'said once');
  // Readable again: the next sweep does what this one skipped.
  const again = await storage.compact();
  assert.is(again?.recovered, 1, JSON.stringify(again));
  assert.equal(await foundTokens(storage), [tokenFor(0), tokenFor(1), 'ab0001', 'cd0001']);
  assert.not.ok(existsSync(temp));
});

test('after a purge by the earlier version (its header says everything up to the year 275760 was dropped), lost lines are read back again', async () => {
  const dir = freshDir();
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'index.ndjson'), '{"h":1,"d":8640000000000000}\n');
  const storage = storageIn(dir);
  await storage.compact();
  await storage.write(makeProfile(tokenFor(0), { time: Date.now() + 1_000 }));
  // A writer killed before its index append, after the purge and this version's first compaction.
  await killedWritersSegment(dir, [makeProfile(tokenFor(8), { time: Date.now() + 2_000 })]);
  const report = await storage.compact();
  assert.is(report?.recovered, 1, JSON.stringify(report));
  assert.equal(await foundTokens(storage), [tokenFor(0), tokenFor(8)]);
});

test('a purge starts the read-back afresh, whatever the storage dropped before it (a profile dated a day ahead)', async () => {
  const dir = freshDir();
  const storage = await storageThatDroppedOneAhead(dir);
  await storage.purge();
  await killedWritersSegment(dir, [makeProfile(tokenFor(8), { time: Date.now() + 1_000 })]);
  const report = await storage.compact();
  assert.is(report?.recovered, 1, JSON.stringify(report));
});

test('a purge by another process starts the read-back afresh here too, and no compaction here writes back the newest dropped time from before it', async () => {
  const dir = freshDir();
  const storage = await storageThatDroppedOneAhead(dir);
  await storageIn(dir).purge();
  // This process reads the purge's header, then a writer is killed before its index append.
  assert.equal(await foundTokens(storage), []);
  await killedWritersSegment(dir, [makeProfile(tokenFor(8), { time: Date.now() + 1_000 })]);
  const report = await storage.compact();
  assert.is(report?.recovered, 1, JSON.stringify(report));
  const header = (await indexLines(dir))[0] ?? '';
  assert.ok((JSON.parse(header) as { k: number }).k < Date.now() + 60_000, header);
});

test.run();
