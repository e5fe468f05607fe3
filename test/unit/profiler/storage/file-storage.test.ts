import { existsSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as assert from 'uvu/assert';
import { FileStorage, InvalidProfileError, ProfileExistsError } from '../../../../lib/profiler/storage/index.js';
import { BASE_TIME, listFiles, makeProfile, fileStorageSuite, profileTokens, rejection, tokenFor } from './fixtures.js';

const { test, env, storageIn } = fileStorageSuite('FileStorage', 'file-storage');

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

test('a claim is exclusive between two storages sharing a directory', async () => {
  const first = storageIn();
  const second = storageIn(first.dir);
  assert.is(await first.claim('abcdef'), true);
  assert.is(await second.claim('abcdef'), false);
  assert.is(await first.claim('abcdef'), false, 'not twice in one instance either');
  await first.release('abcdef');
  assert.is(await second.claim('abcdef'), true, 'a released token is free again');
});

test('a claimed but unwritten token reads as null', async () => {
  const storage = storageIn();
  await storage.claim('abcdef');
  assert.is(await storage.read('abcdef'), null);
  assert.equal(await storage.find(), []);
});

test('write then read round-trips the profile, stored gzip-compressed under a 2-character shard', async () => {
  const storage = storageIn();
  const profile = makeProfile('abcdef', {}, 20_000);
  assert.is(await storage.claim('abcdef'), true);
  await storage.write(profile);
  assert.equal(await storage.read('abcdef'), profile);
  const file = join(storage.dir, 'ab', 'abcdef.json.gz');
  const size = (await stat(file)).size;
  assert.ok(size < JSON.stringify(profile).length / 3, `compressed to ${size} bytes`);
  assert.equal(await storage.find(), [{ token: 'abcdef', parent: null, ip: '127.0.0.1', method: 'GET', url: profile.url, time: profile.time, status: 200 }]);
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

test('maxProfiles: a compaction keeps the newest and deletes the oldest files', async () => {
  const storage = storageIn(undefined, { bounds: { maxProfiles: 20 } });
  for (let i = 0; i < 30; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }));
  const report = await storage.compact();
  assert.ok(report !== null && report.profiles <= 20 && report.removed >= 10, JSON.stringify(report));
  const tokens = (await storage.find({ limit: 100 })).map((summary) => summary.token);
  assert.equal(tokens, Array.from({ length: tokens.length }, (_, i) => tokenFor(29 - i)), 'the newest are kept');
  assert.equal(profileTokens(await listFiles(storage.dir)), [...tokens].sort(), 'files and index agree');
  assert.is(await storage.read(tokenFor(0)), null);
});

test('maxProfiles is applied automatically while writing', async () => {
  const storage = storageIn(undefined, { bounds: { maxProfiles: 50 } });
  for (let i = 0; i < 400; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }, 200));
  await storage.close();
  const files = profileTokens(await listFiles(storage.dir));
  assert.ok(files.length <= 50 + 32, `${files.length} profiles on disk`);
  assert.ok(files.includes(tokenFor(399)) && !files.includes(tokenFor(0)));
});

test('maxAge with an injected clock: expired profiles leave searches at once and the disk at the next compaction', async () => {
  let now = BASE_TIME;
  const storage = storageIn(undefined, { bounds: { maxAge: 60_000 }, now: () => now });
  await storage.write(makeProfile(tokenFor(1), { time: BASE_TIME }));
  await storage.write(makeProfile(tokenFor(2), { time: BASE_TIME + 50_000 }));
  now = BASE_TIME + 70_000;
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(2)]);
  await storage.compact();
  assert.equal(profileTokens(await listFiles(storage.dir)), [tokenFor(2)]);
});

test('maxBytes counts the files\' bytes and deletes the oldest', async () => {
  const probe = storageIn();
  await probe.write(makeProfile(tokenFor(0), {}, 5_000));
  const size = (await stat(join(probe.dir, tokenFor(0).slice(0, 2), `${tokenFor(0)}.json.gz`))).size;
  const storage = storageIn(undefined, { bounds: { maxBytes: size * 4.5 } });
  for (let i = 0; i < 10; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }, 5_000));
  await storage.compact();
  const tokens = profileTokens(await listFiles(storage.dir));
  assert.ok(tokens.length >= 3 && tokens.length <= 4, `${tokens.length} kept`);
  assert.ok(tokens.includes(tokenFor(9)) && !tokens.includes(tokenFor(5)));
});

test('purge removes every profile and claim; the storage works on afterwards', async () => {
  const storage = storageIn();
  const other = storageIn(storage.dir);
  for (let i = 0; i < 3; i++) await storage.write(makeProfile(tokenFor(i)));
  assert.equal((await other.find()).length, 3);
  await storage.purge();
  assert.equal(await storage.find(), []);
  assert.equal(await other.find(), [], 'other instances see the purge');
  assert.equal(profileTokens(await listFiles(storage.dir)), []);
  await other.write(makeProfile(tokenFor(5)));
  assert.equal((await storage.find()).map((summary) => summary.token), [tokenFor(5)]);
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
  assert.instance(await rejection(() => storage.write(profile)), InvalidProfileError);
  assert.not.ok(existsSync(storage.dir));
  assert.is(await storage.claim('abcdef'), true, 'the token is free again');
});

test.run();
