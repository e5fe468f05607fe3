import fs, { existsSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { hostname } from 'node:os';
import { appendFile, chmod, mkdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as assert from 'uvu/assert';
import { FileLock } from '../../../../lib/fs/file-lock.js';
import { InvalidProfileError, ProfileBatchError, ProfileExistsError } from '../../../../lib/profiler/storage/index.js';
import { BASE_TIME, checkNonAsciiUrlSearch, fileStorageSuite, foundTokens, indexLines, makeProfile, referencedSegments, rejection, segmentFiles, tokenFor, until, within, type IndexLine } from './fixtures.js';

const { test, env, freshDir, storageIn } = fileStorageSuite('FileStorage', 'file-storage');

test('malformed tokens never reach the filesystem: claim false, read null, write rejects', async () => {
  const storage = storageIn();
  // A real profile where a path built from the token would land, outside the storage directory.
  await writeFile(join(env.root, 'evil.json.gz'), gzipSync(JSON.stringify(makeProfile('abcdef', { token: '../evil' } as never))));
  for (const token of ['../../etc', '../evil', '..%2f..%2fetc', 'ABCDEF', 'abc', 'abcde', 'abcdef/../x', 'a'.repeat(33), '']) {
    assert.is(await storage.claim(token), false, token);
    assert.is(await storage.read(token), null, token);
  }
  assert.instance(await rejection(() => storage.write(makeProfile('../../etc'))), InvalidProfileError);
  assert.not.ok(existsSync(storage.dir), 'the storage directory was not even created');
  assert.is(await storage.claim('abcdef'), true);
  assert.ok(existsSync(storage.dir), 'a valid claim does create it');
});

/** Permission bits of every directory under `dir` (itself included), by path relative to the suite's root. */
function directoryModes(dir: string): Record<string, number> {
  const modes: Record<string, number> = { [dir.slice(env.root.length)]: statSync(dir).mode & 0o777 };
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) Object.assign(modes, directoryModes(join(dir, entry.name)));
  }
  return modes;
}

test('the directories the storage makes (its own, missing parents, leases, segments, shards) are its owner\'s alone; one that exists keeps its mode', async () => {
  const parent = freshDir();
  const storage = storageIn(join(parent, 'nested', 'profiler'));
  const tokens = await storage.drawTokens(6, 2);
  await storage.writeMany([makeProfile(tokens[0]!)]);
  assert.is(await storage.claim('abcdef'), true);
  const made = directoryModes(parent);
  assert.ok(Object.keys(made).length >= 5, `parent, nested, profiler, leases, segments: ${Object.keys(made).join(', ')}`);
  for (const [path, mode] of Object.entries(made)) assert.is(mode.toString(8), '700', path);

  const shared = freshDir();
  await mkdir(shared);
  await chmod(shared, 0o755);
  const sharing = storageIn(shared);
  await sharing.writeMany([makeProfile((await sharing.drawTokens(6, 1))[0]!)]);
  assert.is((statSync(shared).mode & 0o777).toString(8), '755', 'an existing directory is left as it was');
  assert.is((statSync(join(shared, 'segments')).mode & 0o777).toString(8), '700');
});

test('a claim is exclusive between two storages sharing a directory', async () => {
  const first = storageIn();
  const second = storageIn(first.dir);
  assert.is(await first.claim('abcdef'), true);
  assert.is(await second.claim('abcdef'), false);
  assert.is(await first.claim('abcdef'), false, 'not twice in one instance either');
  await second.release('abcdef');
  assert.ok(existsSync(join(first.dir, 'ab', 'abcdef.json.gz')), 'a release by a storage that did not claim it leaves the claim');
  assert.is(await second.claim('abcdef'), false);
  await first.release('abcdef');
  assert.is(await second.claim('abcdef'), true, 'a released token is free again');
});

test('a token whose write is under way is not claimed meanwhile, and the write goes on', async () => {
  const storage = storageIn();
  // The second token waits in the batch while the first one's placeholder is made: a claim then came first.
  const writing = storage.writeMany([makeProfile('abcdef'), makeProfile('123456')]).then(() => null, (error: unknown) => error);
  assert.is(await storage.claim('123456'), false);
  assert.is(await writing, null, 'the write was not refused');
  assert.is((await storage.read('123456'))?.token, '123456');
});

test('writeMany holds no reference to the bytes it was given once it settles (copiesProfileBytes): the caller reuses them at once', async () => {
  const storage = storageIn();
  assert.is(storage.copiesProfileBytes, true);
  const profile = makeProfile('abcdef');
  const json = Buffer.from(JSON.stringify(profile));
  const { token, parent, ip, method, url, time, status } = profile;
  await storage.writeMany([{ token, parent, ip, method, url, time, status, json }]);
  json.fill(0x20);
  assert.equal(await storage.read('abcdef'), profile);
});

test('a batch is saved in a turn or two of the event loop, not one per file operation (under load each turn is long)', async () => {
  const storage = storageIn();
  const tokens = await storage.drawTokens(6, 300);
  await storage.writeMany([makeProfile(tokens.pop()!)]);
  // The first save starts the storage's upkeep (a bounds check with asynchronous steps): let it finish.
  await new Promise((resolve) => setTimeout(resolve, 500));
  let turns = 0;
  let spinning = true;
  const spin = (): void => {
    if (!spinning) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  await storage.writeMany(tokens.map((token) => makeProfile(token)));
  spinning = false;
  assert.ok(turns <= 2, `the save took ${turns} turns of the event loop`);
  assert.is((await storage.find({ limit: 1000 })).length, 300);
});

test('a claimed but unwritten token reads as null', async () => {
  const storage = storageIn();
  await storage.claim('abcdef');
  assert.is(await storage.read('abcdef'), null);
  assert.equal(await storage.find(), []);
});

test('write then read round-trips the profile, stored as plain JSON in a segment at the offset and length its index line gives', async () => {
  const storage = storageIn();
  const profile = makeProfile('abcdef', {}, 20_000);
  assert.is(await storage.claim('abcdef'), true);
  await storage.write(profile);
  assert.equal(await storage.read('abcdef'), profile);
  const [line] = await indexLines(storage.dir);
  assert.equal(await segmentFiles(storage.dir), [line?.g], 'one segment, the one the line names');
  const segment = await readFile(join(storage.dir, 'segments', line?.g ?? '-'));
  assert.is(segment.toString('utf8', line?.o, (line?.o ?? 0) + (line?.b ?? 0)), JSON.stringify(profile));
  assert.equal(await storage.find(), [{ token: 'abcdef', parent: null, ip: '127.0.0.1', method: 'GET', url: profile.url, time: profile.time, status: 200 }]);
  assert.not.ok(existsSync(join(storage.dir, 'ab', 'abcdef.json.gz')), 'the placeholder of the claim is gone once the profile is indexed');
});

test('writeMany saves a batch with one segment write and one index append, readable and findable profile by profile', async () => {
  const storage = storageIn();
  const profiles = Array.from({ length: 50 }, (_, i) => makeProfile(tokenFor(i), { time: BASE_TIME + i, status: 200 + i }, 1_000 + i * 40));
  for (const profile of profiles) assert.is(await storage.claim(profile.token), true);
  await storage.writeMany(profiles);
  for (const profile of profiles) assert.equal(await storage.read(profile.token), profile);
  assert.equal(await foundTokens(storage), profiles.map((profile) => profile.token).sort());
  const lines = await indexLines(storage.dir);
  assert.is(lines.length, 50);
  assert.is(new Set(lines.map((line) => line.g)).size, 1, 'one segment for the batch');
  const offsets = lines.map((line) => line.o ?? -1);
  assert.equal(offsets, [...offsets].sort((a, b) => a - b), 'records follow one another');
  assert.is((lines[1]?.o ?? 0) - (lines[0]?.o ?? 0), (lines[0]?.b ?? 0) + 1, 'each record is its JSON and a newline');
  await storage.writeMany([]);
});

test('a batch of more records than one vectored write takes (1,500 encoded profiles: Buffer, ASCII and UTF-8 strings) is saved whole', async () => {
  const storage = storageIn();
  const profiles = Array.from({ length: 1_500 }, (_, i) => {
    const profile = makeProfile(tokenFor(i), { time: BASE_TIME + i, url: `http://h/${i % 3 === 2 ? 'é€' : 'e'}/${i}` }, 200 + (i % 50));
    const json = JSON.stringify(profile);
    const { token, parent, ip, method, url, time, status } = profile;
    return { profile, encoded: { token, parent, ip, method, url, time, status, json: i % 3 === 0 ? Buffer.from(json) : json } };
  });
  await storage.writeMany(profiles.map(({ encoded }) => encoded));
  for (const { profile } of profiles) assert.equal(await storage.read(profile.token), profile);
  const lines = await indexLines(storage.dir);
  assert.is(lines.length, 1_500);
  for (let i = 1; i < lines.length; i++) assert.is((lines[i]?.o ?? 0) - (lines[i - 1]?.o ?? 0), (lines[i - 1]?.b ?? 0) + 1, 'records follow one another');
});

test('writeMany with a token stored already, or twice in the batch: those are refused, every other profile is saved', async () => {
  const storage = storageIn();
  await storage.write(makeProfile(tokenFor(1), { status: 201 }));
  const batch = [makeProfile(tokenFor(2)), makeProfile(tokenFor(1), { status: 500 }), makeProfile(tokenFor(3)), makeProfile(tokenFor(3), { status: 500 }), makeProfile(tokenFor(4))];
  const error = await rejection(() => storage.writeMany(batch));
  assert.instance(error, ProfileBatchError);
  const refusals = (error as ProfileBatchError).errors;
  assert.is(refusals.length, 2);
  for (const refusal of refusals) assert.instance(refusal, ProfileExistsError);
  assert.equal(refusals.map((refusal) => (refusal as ProfileExistsError).token).sort(), [tokenFor(1), tokenFor(3)]);
  assert.is((await storage.read(tokenFor(1)))?.status, 201, 'the stored one is not overwritten');
  assert.is((await storage.read(tokenFor(3)))?.status, 200, 'the first of the batch wins');
  assert.equal(await foundTokens(storage), [tokenFor(1), tokenFor(2), tokenFor(3), tokenFor(4)]);
  const single = await rejection(() => storage.writeMany([makeProfile(tokenFor(5)), makeProfile(tokenFor(2))]));
  assert.instance(single, ProfileExistsError, 'one refusal rejects with its own error');
  assert.ok(await storage.read(tokenFor(5)), 'the rest of that batch is saved');
  const invalid = await rejection(() => storage.writeMany([makeProfile(tokenFor(6)), makeProfile('nope')]));
  assert.instance(invalid, InvalidProfileError);
  assert.ok(await storage.read(tokenFor(6)));
  assert.is((await indexLines(storage.dir)).length, 6, 'no line for a refused profile');
});

test('profiles across many segments and roll-overs read back, also from a new instance', async () => {
  const writer = storageIn(undefined, { segmentBytes: 10_000 });
  const profiles = Array.from({ length: 60 }, (_, i) => makeProfile(tokenFor(i), { time: BASE_TIME + i }, 2_000 + (i % 7) * 300));
  for (let i = 0; i < profiles.length; i += 12) await writer.writeMany(profiles.slice(i, i + 12));
  const segments = await segmentFiles(writer.dir);
  assert.ok(segments.length >= 5, `${segments.length} segments`);
  assert.equal(await referencedSegments(writer.dir), segments);
  for (const profile of profiles) assert.equal(await writer.read(profile.token), profile);
  await writer.close();
  const reader = storageIn(writer.dir);
  for (const profile of profiles) assert.equal(await reader.read(profile.token), profile);
  assert.is(await reader.read(tokenFor(999)), null);
});

test('profiles of the old layout (a gzip\'d file and an index line without a segment) are still read, and go with the bounds', async () => {
  const storage = storageIn(undefined, { bounds: { maxProfiles: 3 } });
  const old = makeProfile(tokenFor(1), { time: BASE_TIME - 1_000, status: 203 });
  const data = gzipSync(JSON.stringify(old));
  await mkdir(join(storage.dir, tokenFor(1).slice(0, 2)), { recursive: true });
  const file = join(storage.dir, tokenFor(1).slice(0, 2), `${tokenFor(1)}.json.gz`);
  await writeFile(file, data);
  await appendFile(join(storage.dir, 'index.ndjson'), `{"t":"${tokenFor(1)}","ts":${old.time},"s":203,"m":"GET","i":"127.0.0.1","p":null,"b":${data.length},"u":"${old.url}"}\n`);
  assert.equal(await storage.read(tokenFor(1)), old);
  assert.equal((await storage.find({ status: 203 })).map((summary) => summary.token), [tokenFor(1)]);
  assert.is(await storage.claim(tokenFor(1)), false, 'its token is taken');
  await storage.writeMany([2, 3, 4, 5].map((i) => makeProfile(tokenFor(i), { time: BASE_TIME + i })));
  await storage.compact();
  assert.is(await storage.read(tokenFor(1)), null);
  assert.not.ok(existsSync(file), 'its file is deleted with it');
});

test('write without a prior claim claims the token itself', async () => {
  const storage = storageIn();
  await storage.write(makeProfile('abcdef'));
  assert.ok(await storage.read('abcdef'));
  assert.is(await storage.claim('abcdef'), false);
});

test('never overwrites another profile or another storage\'s claim', async () => {
  const first = storageIn();
  const second = storageIn(first.dir);
  await first.write(makeProfile('abcdef', { status: 200 }));
  assert.instance(await rejection(() => second.write(makeProfile('abcdef', { status: 500 }))), ProfileExistsError);
  assert.instance(await rejection(() => first.write(makeProfile('abcdef', { status: 500 }))), ProfileExistsError);
  assert.is((await first.read('abcdef'))?.status, 200);
  assert.is(await second.claim('123456'), true);
  assert.instance(await rejection(() => first.write(makeProfile('123456'))), ProfileExistsError);
  await second.write(makeProfile('123456'));
  assert.ok(await first.read('123456'), 'the claimer writes it');
  assert.equal((await first.find()).length, 2, 'the refused writes left no index line');
});

test('two concurrent writes of one token in one process: exactly one succeeds', async () => {
  const storage = storageIn();
  const results = await Promise.allSettled([storage.write(makeProfile('abcdef', { status: 201 })), storage.write(makeProfile('abcdef', { status: 202 }))]);
  assert.equal(results.map((result) => result.status).sort(), ['fulfilled', 'rejected']);
  assert.equal((await storage.find()).length, 1);
});

test('find filters by ip, method (any case), status, url substring, start and end; newest first; limit', async () => {
  const storage = storageIn();
  await storage.write(makeProfile(tokenFor(1), { time: BASE_TIME + 1, method: 'POST', status: 201, ip: '10.0.0.1', url: 'http://h/books' }));
  await storage.write(makeProfile(tokenFor(3), { time: BASE_TIME + 3, method: 'GET', status: 404, ip: '10.0.0.2', url: 'http://h/missing', parent: tokenFor(1) }));
  await storage.write(makeProfile(tokenFor(2), { time: BASE_TIME + 2, method: 'GET', status: 200, ip: '10.0.0.1', url: 'http://h/books/1' }));
  const tokens = async (criteria: object) => (await storage.find(criteria)).map((summary) => summary.token);
  assert.equal(await tokens({}), [tokenFor(3), tokenFor(2), tokenFor(1)], 'newest first, though written out of order');
  assert.equal(await tokens({ method: 'post' }), [tokenFor(1)]);
  assert.equal(await tokens({ ip: '10.0.0.1' }), [tokenFor(2), tokenFor(1)]);
  assert.equal(await tokens({ ip: '10.0.0' }), [], 'ip is exact');
  assert.equal(await tokens({ status: 404 }), [tokenFor(3)]);
  assert.equal(await tokens({ url: '/books' }), [tokenFor(2), tokenFor(1)]);
  assert.equal(await tokens({ start: BASE_TIME + 2 }), [tokenFor(3), tokenFor(2)], 'start is inclusive');
  assert.equal(await tokens({ end: BASE_TIME + 2 }), [tokenFor(2), tokenFor(1)], 'end is inclusive');
  assert.equal(await tokens({ limit: 2 }), [tokenFor(3), tokenFor(2)]);
  assert.equal(await tokens({ limit: 0 }), []);
  assert.is((await storage.find({ status: 404 }))[0]?.parent, tokenFor(1));
});

test('searches made while a compaction replaces the index never miss a profile already written', async () => {
  // The first bound check of an instance sweeps, which compacts: with writes and searches racing
  // it, a search used to see the new file before the lines appended meanwhile were copied over.
  for (let round = 0; round < 30; round++) {
    const storage = storageIn();
    const pending: Array<Promise<unknown>> = [];
    for (let i = 0; i < 6; i++) {
      pending.push(storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i })));
      pending.push(storage.find({ limit: 100 }));
      if (i % 2 === 1) await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(pending);
    for (let check = 0; check < 4; check++) {
      assert.is((await storage.find({ limit: 100 })).length, 6, `round ${round}, search ${check}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
});

test('a url search finds a non-ASCII path written as the user reads it (`élève`) or as the URL holds it (`%C3%A9l%C3%A8ve`)', () => checkNonAsciiUrlSearch(storageIn()));

test('find defaults to the latest 10', async () => {
  const storage = storageIn();
  for (let i = 0; i < 12; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }));
  assert.equal((await storage.find()).map((summary) => summary.token), Array.from({ length: 10 }, (_, i) => tokenFor(11 - i)));
});

test('a profile written by one storage is at once readable and findable from another on the same directory', async () => {
  const writer = storageIn();
  const reader = storageIn(writer.dir);
  assert.equal(await reader.find(), []);
  await writer.write(makeProfile(tokenFor(1)));
  assert.equal((await reader.find()).map((summary) => summary.token), [tokenFor(1)]);
  await writer.write(makeProfile(tokenFor(2), { time: BASE_TIME + 1 }));
  assert.equal((await reader.find()).map((summary) => summary.token), [tokenFor(2), tokenFor(1)], 'only the new bytes are read');
  assert.ok(await reader.read(tokenFor(2)));
});

test('a process reads the index whole after others replaced it twice, also when the new file got the inode number of the one it had read', async () => {
  const dir = freshDir();
  const reader = storageIn(dir, { bounds: { maxProfiles: 1 } });
  const writer = storageIn(dir, { bounds: { maxProfiles: 1 } });
  // Each round the reader reads the index, then the writer's two compactions replace it: the first
  // file's inode is freed and the second may get its number. Each round's URL is longer, so that new
  // file is larger than the one read, and read from the old offset it was garbage. (On a filesystem
  // that never reuses inode numbers this passes either way; on tmpfs and ext4 they are reused at once.)
  for (let round = 1; round <= 60; round++) {
    const token = tokenFor(round);
    await writer.write(makeProfile(token, { time: BASE_TIME + round, url: `http://h/${'x'.repeat(round * 10)}` }, 100));
    await writer.compact();
    await writer.compact();
    assert.equal(await foundTokens(reader), [token], `round ${round}`);
  }
});

test('a compaction whose new index cannot be held open at once (EMFILE) still completes, and searches list what it kept', async () => {
  const storage = storageIn(undefined, { bounds: { maxProfiles: 4 } });
  for (let i = 0; i < 6; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }, 200));
  // Read, so the copy holds the index open; then the next open of it fails once, as when the process is out of descriptors.
  assert.is((await foundTokens(storage)).length, 6);
  const index = join(storage.dir, 'index.ndjson');
  const realOpenSync = fs.openSync;
  let failed = 0;
  fs.openSync = ((path: fs.PathLike, ...rest: unknown[]) => {
    if (path === index && failed === 0) {
      failed++;
      throw Object.assign(new Error(`EMFILE: too many open files, open '${index}'`), { code: 'EMFILE', errno: -24, syscall: 'open', path: index });
    }
    return (realOpenSync as (...args: unknown[]) => number)(path, ...rest);
  }) as typeof fs.openSync;
  syncBuiltinESMExports();
  let report;
  try {
    report = await storage.compact();
  } finally {
    fs.openSync = realOpenSync;
    syncBuiltinESMExports();
  }
  assert.is(failed, 1, 'the open after the rename failed');
  assert.is(report?.profiles, 3, 'the compaction is done: it renamed its index, and holding it open is only an optimisation');
  assert.equal(await foundTokens(storage), [tokenFor(3), tokenFor(4), tokenFor(5)], 'read from the new index, not through the old one still held');
});

test('profiles survive a restart: a new instance on the directory reads and finds them', async () => {
  const before = storageIn();
  for (let i = 0; i < 3; i++) await before.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }));
  await before.close();
  const after = storageIn(before.dir);
  assert.equal((await after.find()).map((summary) => summary.token), [tokenFor(2), tokenFor(1), tokenFor(0)]);
  assert.is((await after.read(tokenFor(1)))?.token, tokenFor(1));
});

test('a very long URL is cut in the index line only; the profile keeps it whole', async () => {
  const storage = storageIn();
  const url = `http://h/${'x'.repeat(10_000)}`;
  await storage.write(makeProfile('abcdef', { url }));
  const line = await readFile(join(storage.dir, 'index.ndjson'), 'utf8');
  assert.ok(Buffer.byteLength(line) <= 2048, `index line of ${Buffer.byteLength(line)} bytes`);
  assert.ok(url.startsWith((await storage.find())[0]?.url ?? '-'));
  assert.is((await storage.read('abcdef'))?.url, url);
});

test('a very long URL is listed and searched the same by the instance that wrote it, another one and after a restart', async () => {
  const dir = freshDir();
  const writer = storageIn(dir);
  const url = `http://h/${'x'.repeat(3_000)}/the-end`;
  await writer.write(makeProfile('abcdef', { url }));
  const other = storageIn(dir);
  const listed = (await writer.find())[0]?.url;
  assert.ok(listed !== undefined && url.startsWith(listed) && listed.length < url.length, 'cut in the index');
  assert.is((await other.find())[0]?.url, listed);
  assert.is((await writer.find({ url: 'the-end' })).length, (await other.find({ url: 'the-end' })).length);
  await writer.close();
  const restarted = storageIn(dir);
  assert.is((await restarted.find())[0]?.url, listed);
  assert.is((await restarted.read('abcdef'))?.url, url, 'the profile keeps it whole');
});

test('maxProfiles: a compaction keeps the newest and deletes the segments only dropped profiles were in', async () => {
  const storage = storageIn(undefined, { bounds: { maxProfiles: 20 }, segmentBytes: 5_000 });
  for (let i = 0; i < 30; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }));
  const before = await segmentFiles(storage.dir);
  const report = await storage.compact();
  assert.ok(report !== null && report.profiles <= 20 && report.removed >= 10 && report.segmentsDeleted >= 3, JSON.stringify(report));
  const tokens = (await storage.find({ limit: 100 })).map((summary) => summary.token);
  assert.equal(tokens, Array.from({ length: tokens.length }, (_, i) => tokenFor(29 - i)), 'the newest are kept');
  assert.is(await storage.read(tokenFor(0)), null);
  const after = await segmentFiles(storage.dir);
  assert.ok(after.length < before.length, `${before.length} segments before, ${after.length} after`);
  assert.equal(after, await referencedSegments(storage.dir), 'segments and index agree');
  for (const token of tokens) assert.ok(await storage.read(token), token);
});

test('a dropped profile reads as null from every process at once, even while its segment is kept for newer profiles', async () => {
  const storage = storageIn(undefined, { bounds: { maxProfiles: 10 } });
  const other = storageIn(storage.dir);
  await storage.writeMany(Array.from({ length: 12 }, (_, i) => makeProfile(tokenFor(i), { time: BASE_TIME + i })));
  assert.ok(await other.read(tokenFor(0)));
  await storage.compact();
  assert.is((await segmentFiles(storage.dir)).length, 1, 'the segment holds kept profiles too');
  assert.is(await storage.read(tokenFor(0)), null);
  assert.is(await other.read(tokenFor(0)), null, 'another instance sees the compaction');
  assert.ok(await other.read(tokenFor(11)));
});

test('maxProfiles is applied automatically while writing', async () => {
  const storage = storageIn(undefined, { bounds: { maxProfiles: 50 }, segmentBytes: 4_000 });
  for (let i = 0; i < 400; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }, 200));
  // close() checks the bounds for the writes the last background check did not see.
  await storage.close();
  const tokens = await foundTokens(storageIn(storage.dir));
  assert.ok(tokens.length <= 50, `${tokens.length} profiles indexed`);
  assert.ok(tokens.includes(tokenFor(399)) && !tokens.includes(tokenFor(0)));
  const segments = await segmentFiles(storage.dir);
  assert.equal(segments, await referencedSegments(storage.dir), 'no segment left that no line refers to');
  assert.ok(segments.length <= 30, `${segments.length} segments`);
});

/**
 * Holds the compactions of the storage in `dir` once they have read the index (lock held, the new
 * index not written yet: at their listing of the segments) until `release()`; `reached` settles
 * once one is held there.
 */
function holdCompactions(dir: string): { reached: Promise<void>; release(): void } {
  const segments = join(dir, 'segments');
  const realReaddir = fs.promises.readdir;
  let reach!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  fs.promises.readdir = (async (path: fs.PathLike, ...rest: unknown[]) => {
    if (path === segments) {
      reach();
      await released;
    }
    return (realReaddir as (...args: unknown[]) => Promise<unknown>)(path, ...rest);
  }) as typeof fs.promises.readdir;
  syncBuiltinESMExports();
  return {
    reached,
    release() {
      fs.promises.readdir = realReaddir;
      syncBuiltinESMExports();
      release();
    },
  };
}

/** Writes `count` profiles while the background compaction of the first write is held, then closes; returns the index lines left. */
async function closeAfterWritesDuringCompaction(count: number): Promise<IndexLine[]> {
  const storage = storageIn(undefined, { bounds: { maxProfiles: 8 } });
  const held = holdCompactions(storage.dir);
  let closing: Promise<void> | undefined;
  try {
    // The first write checks the bounds at once (with a sweep: a compaction), which is held.
    await storage.write(makeProfile(tokenFor(0), { time: BASE_TIME }));
    await within(held.reached, 5_000, 'the first compaction');
    await storage.writeMany(Array.from({ length: count }, (_, i) => makeProfile(tokenFor(i + 1), { time: BASE_TIME + i + 1 }, 200)));
    closing = storage.close();
  } finally {
    held.release();
  }
  await within(closing, 10_000, 'close');
  return indexLines(storage.dir);
}

test('close applies the bounds to the writes made while the last bound check ran (a check queued behind it)', async () => {
  // 40 profiles: over the 32 that call for a check at once, which waits for the running one.
  const lines = await closeAfterWritesDuringCompaction(40);
  assert.ok(lines.length <= 8, `${lines.length} index lines after close, over maxProfiles 8`);
  assert.ok(lines.some((line) => line.t === tokenFor(40)), 'the newest is kept');
});

test('close applies the bounds to writes waiting for the second after the last bound check', async () => {
  // 10 profiles: fewer than 32, so they wait for the check due a second after the last (or, on a
  // machine slow enough that the second is up already, for one queued behind the running check).
  const lines = await closeAfterWritesDuringCompaction(10);
  assert.ok(lines.length <= 8, `${lines.length} index lines after close, over maxProfiles 8`);
  assert.ok(lines.some((line) => line.t === tokenFor(10)), 'the newest is kept');
});

test('close waits for another process\'s compaction to end, then applies the bounds to what it wrote while that one held the lock', async () => {
  const storage = storageIn(undefined, { bounds: { maxProfiles: 8 } });
  await mkdir(storage.dir, { recursive: true });
  const lockPath = join(storage.dir, 'index.lock');
  const other = new FileLock(lockPath, undefined, { holderInfo: true });
  assert.ok(await other.tryAcquire());
  const realWriteFile = fs.promises.writeFile;
  let refused = 0;
  let closing = false;
  let released: Promise<void> | undefined;
  fs.promises.writeFile = (async (path: string, ...rest: unknown[]) => {
    try {
      return await (realWriteFile as (...args: unknown[]) => Promise<void>)(path, ...rest);
    } catch (error) {
      if (path !== lockPath) throw error;
      refused++;
      // The other process is done a moment after close first found the lock held: longer than one take of it.
      if (closing) released ??= new Promise((resolve) => setTimeout(resolve, 100)).then(() => other.release());
      throw error;
    }
  }) as typeof fs.promises.writeFile;
  syncBuiltinESMExports();
  try {
    await storage.writeMany(Array.from({ length: 20 }, (_, i) => makeProfile(tokenFor(i), { time: BASE_TIME + i }, 200)));
    // Its background bound check found the lock held and skipped: the batch is left over the bound.
    await until(async () => refused > 0);
    assert.is(refused, 1, 'the background check found the lock held');
    closing = true;
    await within(storage.close(), 10_000, 'close');
  } finally {
    fs.promises.writeFile = realWriteFile;
    syncBuiltinESMExports();
    await other.release();
  }
  assert.ok(released !== undefined, 'close found the lock held');
  const lines = await indexLines(storage.dir);
  assert.ok(lines.length <= 8, `${lines.length} index lines after close, over maxProfiles 8`);
  assert.ok(lines.some((line) => line.t === tokenFor(19)), 'the newest is kept');
});

test('close waits for a batch still claiming its tokens: it is saved before close resolves, within the bounds, and nothing is written after', async () => {
  const storage = storageIn(undefined, { bounds: { maxProfiles: 8 } });
  // Tokens neither drawn nor claimed: the batch claims each with a placeholder file first, awaiting the disk.
  let settledBy = 'none';
  const writing = storage.writeMany(Array.from({ length: 20 }, (_, i) => makeProfile(tokenFor(i), { time: BASE_TIME + i }, 200))).then(
    () => (settledBy = 'saved'),
    (error: unknown) => (settledBy = `rejected: ${(error as Error).message}`),
  );
  await within(storage.close(), 10_000, 'close');
  assert.is(settledBy, 'saved', 'the batch was settled, and saved, by the time close resolved');
  const lines = await indexLines(storage.dir);
  const segments = await segmentFiles(storage.dir);
  await writing;
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.ok(lines.length <= 8, `${lines.length} index lines after close, over maxProfiles 8`);
  assert.ok(lines.some((line) => line.t === tokenFor(19)), 'the newest is kept');
  assert.equal(await indexLines(storage.dir), lines, 'no index line appended after close');
  assert.equal(await segmentFiles(storage.dir), segments, 'no segment made after close');
  assert.match((await rejection(() => storage.writeMany([makeProfile(tokenFor(30))]))).message, /closed/, 'a batch after close is refused');
});

test('close waits for a claim under way and refuses later ones: no placeholder is made after close', async () => {
  const storage = storageIn();
  // A token outside the storage's leases: claimed with a placeholder file, awaiting the disk.
  let settledBy = 'none';
  const claiming = storage.claim('abcdef').then(
    (claimed) => (settledBy = String(claimed)),
    (error: unknown) => (settledBy = `rejected: ${(error as Error).message}`),
  );
  await within(storage.close(), 10_000, 'close');
  assert.is(settledBy, 'true', 'the claim was settled by the time close resolved');
  await claiming;
  assert.match((await rejection(() => storage.claim('abcdee'))).message, /closed/, 'a claim after close is refused');
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.not.ok(existsSync(join(storage.dir, 'ab', 'abcdef.json.gz')), 'close removed the placeholder: none was made after it');
  assert.not.ok(existsSync(join(storage.dir, 'ab', 'abcdee.json.gz')), 'nor by the claim refused');
});

test('close gives up the bounds after 5 s of another process holding the lock, reporting it, and keeps the profiles', async () => {
  const errors: Error[] = [];
  const storage = storageIn(undefined, { bounds: { maxProfiles: 8 }, onError: (error) => errors.push(error) });
  await mkdir(storage.dir, { recursive: true });
  const other = new FileLock(join(storage.dir, 'index.lock'), undefined, { holderInfo: true });
  assert.ok(await other.tryAcquire());
  try {
    await storage.writeMany(Array.from({ length: 20 }, (_, i) => makeProfile(tokenFor(i), { time: BASE_TIME + i }, 200)));
    const start = performance.now();
    await within(storage.close(), 10_000, 'close');
    assert.ok(performance.now() - start >= 4_900, 'it waited for the lock');
  } finally {
    await other.release();
  }
  assert.equal(errors.map((error) => (error as { code?: string }).code), ['HK_PROFILER_STORAGE_LOCKED']);
  assert.match(errors[0]!.message, /is held by another process \(waited 5000 ms\)\.$/);
  assert.is((await indexLines(storage.dir)).length, 20, 'every profile is still indexed');
});

test('under a small count bound the segments hold about the kept profiles, not every record written since (a small disk would fill with dropped ones)', async () => {
  const storage = storageIn(undefined, { bounds: { maxProfiles: 20 } });
  for (let i = 0; i < 200; i++) await storage.writeMany([makeProfile(tokenFor(2 * i), { time: BASE_TIME + 2 * i }), makeProfile(tokenFor(2 * i + 1), { time: BASE_TIME + 2 * i + 1 })]);
  await storage.compact();
  const kept = await foundTokens(storage);
  assert.ok(kept.length <= 20 && kept.includes(tokenFor(399)), `${kept.length} kept`);
  let records = 0;
  for (const name of await segmentFiles(storage.dir)) records += statSync(join(storage.dir, 'segments', name)).size / JSON.stringify(makeProfile(tokenFor(0))).length;
  assert.ok(records <= 2 * 20, `about ${Math.round(records)} records on disk for ${kept.length} profiles kept`);
});

test('maxProfiles is applied within about a second of a burst of writes that then goes quiet, not at the idle timer', async () => {
  const storage = storageIn(undefined, { bounds: { maxProfiles: 8 } });
  // The first write checks the bounds at once; the next ones, fewer than 32 and within a second, wait for a check.
  for (let i = 0; i < 30; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }));
  assert.ok((await storage.find({ limit: 100 })).length > 8, 'over the bound right after the burst');
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const found = await storage.find({ limit: 100 });
  assert.ok(found.length <= 8, `${found.length} profiles a second and a half after the last write`);
  assert.ok(found.some((profile) => profile.token === tokenFor(29)), 'the newest is kept');
  await storage.close();
});

test('a burst that starts late in the second after a bound check is bounded when that second is up, not a second after the burst', async () => {
  const storage = storageIn(undefined, { bounds: { maxProfiles: 8 } });
  const start = performance.now();
  // The first write checks the bounds at once; the burst 600 ms later waits for the check due 400 ms after it.
  await storage.write(makeProfile(tokenFor(0), { time: BASE_TIME }));
  await new Promise((resolve) => setTimeout(resolve, 600 - (performance.now() - start)));
  for (let i = 1; i < 20; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }));
  let found = await storage.find({ limit: 100 });
  while (found.length > 8 && performance.now() - start < 1_600) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    found = await storage.find({ limit: 100 });
  }
  assert.ok(found.length <= 8, `${found.length} profiles ${Math.round(performance.now() - start)} ms after the first write`);
});

test('maxProfiles is applied within about a second of a burst also when the wall clock was set back an hour during it', async () => {
  const storage = storageIn(undefined, { bounds: { maxProfiles: 8 } });
  await storage.write(makeProfile(tokenFor(0), { time: BASE_TIME }));
  // NTP sets the clock back an hour after the first write's check (the bounds are measured by the injected clock, not this one).
  const realNow = Date.now;
  Date.now = () => realNow() - 3_600_000;
  try {
    for (let i = 1; i < 30; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }));
  } finally {
    Date.now = realNow;
  }
  assert.ok((await storage.find({ limit: 100 })).length > 8, 'over the bound right after the burst');
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const found = await storage.find({ limit: 100 });
  assert.ok(found.length <= 8, `${found.length} profiles a second and a half after the last write`);
  await storage.close();
});

test('maxAge with an injected clock: expired profiles leave searches at once and the disk at the next compaction', async () => {
  let now = BASE_TIME;
  const storage = storageIn(undefined, { bounds: { maxAge: 60_000 }, now: () => now, segmentBytes: 1_000 });
  await storage.write(makeProfile(tokenFor(1), { time: BASE_TIME }));
  await storage.write(makeProfile(tokenFor(2), { time: BASE_TIME + 50_000 }));
  assert.is((await segmentFiles(storage.dir)).length, 2);
  now = BASE_TIME + 70_000;
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(2)]);
  await storage.compact();
  assert.equal(await foundTokens(storage), [tokenFor(2)]);
  assert.is(await storage.read(tokenFor(1)), null);
  assert.equal(await segmentFiles(storage.dir), await referencedSegments(storage.dir));
  assert.is((await segmentFiles(storage.dir)).length, 1);
});

test('a search lists a profile exactly maxAge old, and not one a millisecond older', async () => {
  let now = BASE_TIME + 1_000;
  const storage = storageIn(undefined, { bounds: { maxAge: 1_000 }, now: () => now });
  await storage.write(makeProfile(tokenFor(1), { time: BASE_TIME }));
  assert.equal(await foundTokens(storage), [tokenFor(1)]);
  now += 1;
  assert.equal(await foundTokens(storage), []);
});

test('close deletes the segment it wrote whose profiles the bounds all dropped meanwhile', async () => {
  let now = BASE_TIME;
  const storage = storageIn(undefined, { bounds: { maxAge: 60_000 }, now: () => now });
  await storage.write(makeProfile(tokenFor(1), { time: BASE_TIME }));
  now += 10 * 60_000;
  await storage.compact();
  assert.equal(await indexLines(storage.dir), []);
  assert.is((await segmentFiles(storage.dir)).length, 1, 'kept while its writer may append to it');
  await storage.close();
  assert.equal(await segmentFiles(storage.dir), []);
});

test('after the clock is set back, profiles dated in its future go first over a bound, not the ones written since', async () => {
  let now = BASE_TIME + 3_600_000;
  const storage = storageIn(undefined, { bounds: { maxProfiles: 20 }, now: () => now });
  // Written while the clock ran an hour ahead.
  await storage.writeMany(Array.from({ length: 20 }, (_, i) => makeProfile(tokenFor(i), { time: now + i }, 200)));
  now = BASE_TIME;
  const fresh = Array.from({ length: 5 }, (_, i) => makeProfile(tokenFor(i, 2), { time: now + i }, 200));
  await storage.writeMany(fresh);
  const report = await storage.compact();
  assert.ok(report !== null && report.profiles <= 20, JSON.stringify(report));
  for (const profile of fresh) assert.ok(await storage.read(profile.token), `${profile.token}, written after the clock was set back, is kept`);
  assert.ok(await storage.read(tokenFor(0)), 'the oldest of the future-dated ones is kept while the bound allows');
});

/**
 * Writes an index lock held, as its file says, by `ghost` inside this process: a storage given
 * `deadLeaseOwners: ['ghost']` takes it over at once, any other waits for it (up to a second).
 */
async function writeGhostLock(dir: string): Promise<void> {
  let pidns: string | null = null;
  try {
    pidns = readlinkSync('/proc/self/ns/pid');
  } catch {
    // Not Linux: the lock records none, as FileLock writes it.
  }
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'index.lock'), JSON.stringify({ pid: process.pid, hostname: hostname(), pidns, time: new Date().toISOString(), id: 'ghost', owner: 'ghost' }));
}

test('a writer does not put back the profiles another process\'s compaction dropped from the newest end of its batch (dated ahead, or alone over the byte bound)', async () => {
  const clock = () => BASE_TIME;
  // Each round: the writer appends its batch while a lock holder makes it wait, and the compactor
  // takes that lock over and compacts, reading the batch. The writer then finds the index
  // replaced and appends again what the new one lacks; the header's droppedThrough alone spoke of
  // the oldest end, and the dropped profile came back. (Rounds: between the old holder's lock and
  // the compactor's, the writer may look in and go before the compaction, which the test cannot see.)
  for (let round = 0; round < 8; round++) {
    const overBytes = round % 2 === 1;
    const dir = freshDir();
    // Roomy bounds: the writer's own compactions drop nothing.
    const writer = storageIn(dir, { now: clock });
    const compactor = storageIn(dir, { now: clock, bounds: overBytes ? { maxBytes: 20_000 } : { maxProfiles: 1 }, deadLeaseOwners: ['ghost'] });
    const [dropped, kept] = (await writer.drawTokens(6, 2)) as [string, string];
    await writeGhostLock(dir);
    const writing = writer.writeMany([
      overBytes ? makeProfile(dropped, { time: BASE_TIME + 1 }, 30_000) : makeProfile(dropped, { time: BASE_TIME + 10 * 60_000 }),
      makeProfile(kept),
    ]);
    await until(async () => (await indexLines(dir)).length === 2);
    await compactor.compact();
    await writing;
    const what = `round ${round}, ${overBytes ? 'alone over the byte bound' : 'dated ahead'}`;
    assert.equal(await foundTokens(compactor), [kept], what);
    assert.equal(await foundTokens(writer), [kept], what);
    assert.is(await writer.read(dropped), null, what);
  }
});

test('a writer appends its lines again when the index it appended to was replaced by a compaction that read it before them', async () => {
  const dir = freshDir();
  const writer = storageIn(dir);
  const [token] = (await writer.drawTokens(6, 1)) as [string];
  // A compaction in another process holds the lock: the writer appends its line, then waits for the lock to go.
  await writeGhostLock(dir);
  const writing = writer.writeMany([makeProfile(token)]).then(() => null, (error: unknown) => error);
  await until(async () => (await indexLines(dir)).length === 1);
  // The compaction renames the index it wrote from what it read before that line, and is gone without copying it over.
  await writeFile(join(dir, 'index.ndjson.compacted.tmp'), '');
  fs.renameSync(join(dir, 'index.ndjson.compacted.tmp'), join(dir, 'index.ndjson'));
  fs.rmSync(join(dir, 'index.lock'));
  assert.is(await writing, null, 'the write succeeded');
  assert.equal((await indexLines(dir)).map((line) => line.t), [token], 'its line is in the new index');
  assert.equal(await foundTokens(storageIn(dir)), [token]);
});

test('maxBytes counts the records\' bytes and deletes the oldest', async () => {
  const size = JSON.stringify(makeProfile(tokenFor(0), {}, 5_000)).length;
  const storage = storageIn(undefined, { bounds: { maxBytes: size * 4.5 } });
  for (let i = 0; i < 10; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }, 5_000));
  await storage.compact();
  const tokens = await foundTokens(storage);
  assert.ok(tokens.length >= 3 && tokens.length <= 4, `${tokens.length} kept`);
  assert.ok(tokens.includes(tokenFor(9)) && !tokens.includes(tokenFor(5)));
  assert.ok((await indexLines(storage.dir)).every((line) => line.b === size));
});

test('a segment no line refers to is deleted when its writer is done: another process\'s once stale, never a fresh one', async () => {
  const storage = storageIn();
  await storage.write(makeProfile(tokenFor(1)));
  const stale = join(storage.dir, 'segments', 'm0000a-99999-0000beef.ndjson');
  const fresh = join(storage.dir, 'segments', 'm0000b-99999-0000cafe.ndjson');
  // A record cut short: nothing in it to read back (a whole one is, see the crash tests' lost index lines).
  await writeFile(stale, `${JSON.stringify(makeProfile(tokenFor(7))).slice(0, 300)}\n`);
  await writeFile(fresh, `${JSON.stringify(makeProfile(tokenFor(8)))}\n`);
  const old = new Date(Date.now() - 10 * 60_000);
  await utimes(stale, old, old);
  await storage.compact();
  assert.not.ok(existsSync(stale));
  assert.ok(existsSync(fresh), 'it may belong to a live writer about to append its index lines');
  assert.ok(await storage.read(tokenFor(1)), 'the segment in use is kept');
});

test('purge removes every profile, segment and claim; the storage works on afterwards', async () => {
  const storage = storageIn();
  const other = storageIn(storage.dir);
  for (let i = 0; i < 3; i++) await storage.write(makeProfile(tokenFor(i)));
  await other.write(makeProfile(tokenFor(3)));
  assert.is(await other.claim('abcdef'), true);
  assert.equal((await other.find()).length, 4);
  await storage.purge();
  assert.equal(await storage.find(), []);
  assert.equal(await other.find(), [], 'other instances see the purge');
  assert.is(await other.read(tokenFor(3)), null);
  assert.equal(await segmentFiles(storage.dir), []);
  assert.not.ok(existsSync(join(storage.dir, 'ab')), 'the shard of the claim is gone');
  assert.is(await storageIn(storage.dir).claim('abcdef'), true, 'its token is free');
  assert.not.ok(existsSync(join(storage.dir, 'index.lock')), 'the lock is released');
  await other.write(makeProfile(tokenFor(5)));
  await storage.write(makeProfile(tokenFor(6)));
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(6), tokenFor(5)]);
  assert.ok(await storage.read(tokenFor(5)), 'a writer whose segment was deleted starts a new one');
  assert.is((await segmentFiles(storage.dir)).length, 2);
});

test('a placeholder a save made goes when its token was indexed by another writer while the rest of the batch was claimed', async () => {
  const storage = storageIn();
  const [first, second] = ['abcdef', 'abcdf0'];
  const index = join(storage.dir, 'index.ndjson');
  const realOpen = fs.promises.open;
  // Another writer indexes the first token after its placeholder was made, as the second's is made.
  fs.promises.open = (async (path: fs.PathLike, ...rest: unknown[]) => {
    if (String(path).endsWith(`${second}.json.gz`)) fs.appendFileSync(index, `{"t":"${first}","ts":${Date.now()},"s":418,"m":"GET","i":"::1","p":null,"b":10,"u":"http://x/"}\n`);
    return (realOpen as (...args: unknown[]) => Promise<fs.promises.FileHandle>)(path, ...rest);
  }) as typeof fs.promises.open;
  syncBuiltinESMExports();
  let refusal;
  try {
    refusal = await rejection(() => storage.writeMany([makeProfile(first), makeProfile(second)]));
  } finally {
    fs.promises.open = realOpen;
    syncBuiltinESMExports();
  }
  assert.instance(refusal, ProfileExistsError);
  assert.is((refusal as ProfileExistsError).token, first);
  assert.not.ok(existsSync(join(storage.dir, 'ab', `${first}.json.gz`)), 'no placeholder left for the refused token');
  assert.is((await storage.read(second))?.token, second, 'the rest of the batch is saved');
});

test('close removes the placeholders of unused claims', async () => {
  const storage = storageIn();
  await storage.claim('abcdef');
  await storage.close();
  assert.not.ok(existsSync(join(storage.dir, 'ab', 'abcdef.json.gz')));
  assert.match((await rejection(() => storage.write(makeProfile('abcdef')))).message, /closed/);
});

test('a profile that cannot be serialised rejects with InvalidProfileError before touching the disk', async () => {
  const storage = storageIn();
  const profile = makeProfile('abcdef');
  (profile.collectors as Record<string, unknown>).self = profile;
  const error = await rejection(() => storage.write(profile));
  assert.instance(error, InvalidProfileError);
  assert.match(error.message, /^Profile abcdef cannot be serialised to JSON: .*circular/i, 'it says why');
  assert.not.ok(existsSync(storage.dir));
  assert.is(await storage.claim('abcdef'), true, 'the token is free again');
});

test.run();
