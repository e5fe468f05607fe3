// What a crash or kill -9 can leave behind, made by hand, and how the storage copes with it.
import { existsSync } from 'node:fs';
import { appendFile, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as assert from 'uvu/assert';
import { FileStorage, ProfilerStorageError } from '../../../../lib/profiler/storage/index.js';
import { BASE_TIME, listFiles, makeProfile, fileStorageSuite, profileTokens, rejection, tokenFor, within } from './fixtures.js';

const { test, env, storageIn } = fileStorageSuite('FileStorage after crashes', 'file-storage-crash');

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
  assert.is(lines.length, 3);
  for (const line of lines) assert.ok(JSON.parse(line), line);
  assert.equal((await storage.find()).length, 3);
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
    assert.match(error.message, /held by another process/);
  } finally {
    clearInterval(keepAlive);
  }
});

test('a profile file whose index line was lost (crash between rename and append) is indexed again', async () => {
  const dir = await dirWithProfiles(1);
  const orphan = makeProfile(tokenFor(9), { time: BASE_TIME + 9, status: 503 });
  const path = join(dir, tokenFor(9).slice(0, 2), `${tokenFor(9)}.json.gz`);
  await writeFile(path, gzipSync(JSON.stringify(orphan)));
  await utimes(path, HOUR_AGO, HOUR_AGO);
  const storage = storageIn(dir);
  assert.equal((await storage.find()).length, 1);
  assert.equal(await storage.read(tokenFor(9)), orphan, 'readable by token before it is indexed');
  const report = await storage.compact();
  assert.is(report?.recovered, 1);
  assert.equal((await storage.find({ status: 503 })).map((summary) => summary.token), [tokenFor(9)]);
});

test('an index line whose file is gone is dropped by the next compaction', async () => {
  const dir = await dirWithProfiles(2);
  await appendFile(join(dir, 'index.ndjson'), `{"t":"${tokenFor(7)}","ts":${BASE_TIME},"s":200,"m":"GET","i":"::1","p":null,"b":10,"u":"http://h/"}\n`);
  const storage = storageIn(dir);
  assert.equal((await storage.find()).length, 3);
  await storage.compact();
  assert.equal((await storage.find()).length, 2);
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

test('corrupt profile files read as null', async () => {
  const dir = await dirWithProfiles(1);
  await writeFile(join(dir, tokenFor(0).slice(0, 2), `${tokenFor(0)}.json.gz`), 'not gzip');
  assert.is(await storageIn(dir).read(tokenFor(0)), null);
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
  assert.instance(await rejection(() => storage.claim('abcdef')), ProfilerStorageError);
  assert.is(await storage.read('abcdef'), null);
  assert.equal(await storage.find(), []);
  await storage.purge();
  assert.is(await storage.compact(), null);
  await storage.close();
  assert.equal(errors, [], 'the caller got the errors; nothing was reported twice');
});

test('a missing directory reads as empty and is not created by reads', async () => {
  const storage = storageIn(join(env.root, 'never-made'));
  assert.is(await storage.read('abcdef'), null);
  assert.equal(await storage.find(), []);
  assert.not.ok(existsSync(storage.dir));
});

test('the profile tokens on disk and in the index agree after all of the above', async () => {
  const dir = await dirWithProfiles(5);
  const storage = storageIn(dir);
  await storage.compact();
  const indexed = (await storage.find({ limit: 100 })).map((summary) => summary.token).sort();
  assert.equal(profileTokens(await listFiles(dir)), indexed);
});

test.run();
