// A disk that fills up (simulated: see withSimulatedDisk): the storage frees its own oldest profiles and works on.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { Request } from '../../../../kernel/index.js';
import { createApp } from '../../../../lib/app/index.js';
import type { LogRecord } from '../../../../lib/log/index.js';
import { FileLock } from '../../../../lib/fs/file-lock.js';
import type { FileStorage } from '../../../../lib/profiler/storage/index.js';
import { BASE_TIME, foundTokens, makeProfile, fileStorageSuite, referencedSegments, segmentFiles, tokenFor, until, withSimulatedDisk, within } from './fixtures.js';

const { test, freshDir, storageIn } = fileStorageSuite('FileStorage on a full disk', 'file-storage-disk-full');

/** Writes one profile at a time from `next`, every 10 ms, until one is saved (true) or `attempts` failed. */
async function saveAgain(storage: FileStorage, next: () => number, attempts = 300): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    const n = next();
    try {
      await storage.write(makeProfile(tokenFor(n), { time: BASE_TIME + n }));
      return true;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  return false;
}

test('a disk that fills while the storage is over its count bound is freed of the oldest profiles, and saves work again', () =>
  withSimulatedDisk(freshDir(), async ({ dir, disk, errors, onError, diskFullWarnings }) => {
    const storage = storageIn(dir, { bounds: { maxProfiles: 20 }, onError });
    // Another holder of the index lock keeps compactions off: 30 profiles, over the bound of 20,
    // in 3 segments (rolled over at a quarter of the bound: 5 records).
    const other = new FileLock(join(dir, 'index.lock'), undefined, { holderInfo: true });
    assert.ok(await other.tryAcquire());
    for (let batch = 0; batch < 3; batch++) {
      await storage.writeMany(Array.from({ length: 10 }, (_, i) => makeProfile(tokenFor(10 * batch + i), { time: BASE_TIME + 10 * batch + i })));
    }
    assert.is((await foundTokens(storage)).length, 30);
    // The disk is full now: the lock file and a new index, which a compaction writes, do not fit.
    disk.capacity = disk.used();
    await other.release();
    let n = 30;
    assert.ok(await saveAgain(storage, () => n++), `saves work again (${n - 30} tried; errors: ${errors.map((error) => error.message).join(' | ')})`);
    await storage.compact();
    const kept = await foundTokens(storage);
    assert.ok(kept.length > 0 && kept.length <= 20, `${kept.length} profiles kept`);
    assert.ok(kept.includes(tokenFor(n - 1)), 'the newest is kept');
    assert.not.ok(kept.includes(tokenFor(0)), 'the oldest went');
    for (const token of kept) assert.ok((await storage.read(token)) !== null, `${token} listed and readable`);
    assert.equal(await segmentFiles(dir), await referencedSegments(dir), 'no segment left that no line refers to');
    const warnings = diskFullWarnings();
    assert.is(warnings.length, 1, 'the lowered bound is reported once');
    assert.match(warnings[0]!.message, /^The disk is full: the profiler keeps at most \d+ profiles \(\d+ KiB\) in .* until restarted, dropping the oldest\.$/);
    // 30 held: the count bound stays at 20 (under 75% of 30), the byte bound goes down to 75% of what they take.
    assert.ok(storage.effectiveBounds.maxBytes < storage.bounds.maxBytes && storage.effectiveBounds.maxProfiles === 20, 'the bounds kept are lowered, the configured ones are not');
  }));

test('a disk smaller than the bounds: once full, the storage keeps what fits, dropping its oldest profiles, and saves go on', () =>
  // About 40 profiles of 2 KB, with their index lines: far below the default bounds (10,000 profiles, 512 MiB).
  withSimulatedDisk(freshDir(), { capacity: 100_000 }, async ({ dir, onError, diskFullWarnings }) => {
    const storage = storageIn(dir, { onError });
    let failed = 0;
    let failedInSecondHalf = 0;
    for (let i = 0; i < 200; i++) {
      try {
        await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }));
      } catch {
        failed++;
        if (i >= 100) failedInSecondHalf++;
        // The storage frees space in the background.
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    assert.ok(failed > 0, 'the disk did fill');
    assert.ok(failedInSecondHalf <= 10, `${failedInSecondHalf} of the last 100 saves failed (${failed} in all)`);
    await storage.compact();
    const kept = await foundTokens(storage);
    assert.ok(kept.length >= 10, `${kept.length} profiles kept`);
    assert.ok(kept.includes(tokenFor(199)), 'the newest is kept');
    for (const token of kept) assert.ok((await storage.read(token)) !== null, `${token} listed and readable`);
    assert.ok(diskFullWarnings().length > 0, 'the lowered bound is reported');
  }));

test("the newest profiles stay when those the bounds drop are another live writer's: a full disk deletes none of the kept ones", () =>
  withSimulatedDisk(freshDir(), async ({ dir, disk, onError, diskFullWarnings }) => {
    // Another holder of the index lock keeps compactions off while the two writers save.
    const other = new FileLock(join(dir, 'index.lock'), undefined, { holderInfo: true });
    assert.ok(await other.tryAcquire());
    // The oldest 30 profiles in a live writer's segments (5 records each: a quarter of the bound)...
    const older = storageIn(dir, { bounds: { maxProfiles: 20 } });
    for (let batch = 0; batch < 3; batch++) {
      await older.writeMany(Array.from({ length: 10 }, (_, i) => makeProfile(tokenFor(10 * batch + i), { time: BASE_TIME + 10 * batch + i })));
    }
    // ...the newest 5 in this writer's one segment: kept by any bound of 5 profiles or more.
    const newer = storageIn(dir, { bounds: { maxProfiles: 20 }, onError });
    const newest = Array.from({ length: 5 }, (_, i) => tokenFor(i, 2));
    await newer.writeMany(newest.map((token, i) => makeProfile(token, { time: BASE_TIME + 100 + i })));
    disk.capacity = disk.used();
    await other.release();
    // The save fails on the full disk; the writer frees space in the background.
    await newer.write(makeProfile(tokenFor(5, 2), { time: BASE_TIME + 105 })).catch(() => {});
    await until(async () => diskFullWarnings().length > 0);
    assert.ok(diskFullWarnings().length > 0, 'the disk was found full');
    // Whatever it deletes goes within a few file operations of that warning.
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const token of newest) assert.ok((await newer.read(token)) !== null, `${token}, among the newest, is still readable`);
  }));

test('a claimed token whose save failed on a full disk stays claimed, for a retry; a placeholder the save made itself goes', () =>
  withSimulatedDisk(freshDir(), async ({ dir, disk }) => {
    const storage = storageIn(dir);
    const other = storageIn(dir);
    assert.is(await storage.claim('abcdef'), true);
    disk.capacity = disk.used();
    assert.ok(await storage.writeMany([makeProfile('abcdef'), makeProfile('cdcdcd')]).then(() => false, () => true), 'the save failed');
    assert.ok(existsSync(join(dir, 'ab', 'abcdef.json.gz')), 'the claim is kept');
    assert.is(await other.claim('abcdef'), false);
    assert.not.ok(existsSync(join(dir, 'cd', 'cdcdcd.json.gz')), 'the placeholder of the unclaimed token is removed');
    disk.capacity = null;
    await storage.write(makeProfile('abcdef'));
    assert.is((await other.read('abcdef'))?.token, 'abcdef');
  }));

test('a purge that cannot write its lock on a full disk rejects saying so, keeps the profiles and leaves no lock file', () =>
  withSimulatedDisk(freshDir(), async ({ dir, disk }) => {
    const storage = storageIn(dir);
    await storage.write(makeProfile(tokenFor(1)));
    disk.capacity = disk.used();
    const failed = await storage.purge().then(() => null, (error: Error) => error);
    assert.match(failed?.message ?? 'resolved', /^Cannot purge in the profiler storage .*: ENOSPC/);
    assert.equal(await foundTokens(storage), [tokenFor(1)]);
    // A background upkeep's attempt at the lock meets the full disk too, and removes the empty file it made a moment later.
    await until(async () => !existsSync(join(dir, 'index.lock')));
    assert.not.ok(existsSync(join(dir, 'index.lock')), 'no empty lock file holds the lock for nobody');
  }));

test('close on a full disk resolves at once, reporting that its bound check could not take the lock, and leaves no lock file', () =>
  withSimulatedDisk(freshDir(), async ({ dir, disk, errors, onError }) => {
    const storage = storageIn(dir, { bounds: { maxProfiles: 8 }, onError });
    // Another holder of the index lock keeps the background checks off: 20 profiles, over the bound of 8.
    const other = new FileLock(join(dir, 'index.lock'), undefined, { holderInfo: true });
    assert.ok(await other.tryAcquire());
    await storage.writeMany(Array.from({ length: 20 }, (_, i) => makeProfile(tokenFor(i), { time: BASE_TIME + i })));
    await other.release();
    disk.capacity = disk.used();
    await within(storage.close(), 2_000, 'close');
    assert.ok(errors.some((error) => /ENOSPC/.test(error.message)), `the failed check is reported (${errors.map((error) => error.message).join(' | ')})`);
    assert.not.ok(existsSync(join(dir, 'index.lock')), 'no empty lock file holds the lock for nobody');
    assert.is((await foundTokens(storageIn(dir))).length, 20, 'the profiles are kept');
  }));

test('a disk full for a moment while the storage holds a handful lowers its bounds to no fewer than 10 profiles, not to one', () =>
  withSimulatedDisk(freshDir(), async ({ dir, disk, onError, diskFullWarnings }) => {
    const storage = storageIn(dir, { onError });
    await storage.writeMany([0, 1].map((i) => makeProfile(tokenFor(i), { time: BASE_TIME + i })));
    // Another program fills the disk for a moment: one save fails.
    disk.capacity = disk.used();
    await storage.write(makeProfile(tokenFor(2), { time: BASE_TIME + 2 })).catch(() => {});
    await until(async () => diskFullWarnings().length > 0);
    await new Promise((resolve) => setTimeout(resolve, 200));
    disk.capacity = null;
    const bounds = storage.effectiveBounds;
    assert.ok(bounds.maxProfiles >= 10, `a count bound of ${bounds.maxProfiles}`);
    for (let i = 3; i < 40; i++) await storage.write(makeProfile(tokenFor(i), { time: BASE_TIME + i }));
    await storage.compact();
    const kept = await foundTokens(storage);
    // A bound of 10, once exceeded, is trimmed to 75% of itself.
    assert.ok(kept.length >= 7, `${kept.length} profiles kept`);
    assert.ok(kept.includes(tokenFor(39)), 'the newest is kept');
  }));

test('the app logs the lowered bounds of a full disk once, as a warning of the profiler channel, not as a failure', async () => {
  const records: LogRecord[] = [];
  await withSimulatedDisk(freshDir(), { capacity: 60_000 }, async ({ dir }) => {
    const app = createApp({ profiler: { dir, thread: false }, stderrLogLevel: false });
    app.bus.on('log', ({ record }) => records.push(record));
    try {
      for (let i = 0; i < 150; i++) {
        const request = Request.create(`/?i=${i}`);
        await app.kernel.terminate(request, await app.kernel.handle(request));
        // Profiles are saved in batches, 20 ms after the first waits.
        if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await app.close();
    }
  });
  const diskFull = records.filter((record) => record.message.includes('The disk is full'));
  assert.ok(diskFull.length >= 1, `logged: ${records.map((record) => record.message).join(' | ')}`);
  for (const record of diskFull) {
    assert.is(record.levelName, 'WARNING');
    assert.is(record.channel, 'profiler');
    assert.match(record.message, /^The disk is full: the profiler keeps at most \d+ profiles/);
  }
  assert.is(new Set(diskFull.map((record) => record.message)).size, diskFull.length, 'each once');
});

test.run();
