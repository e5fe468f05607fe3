import { spawn, spawnSync } from 'node:child_process';
import fs, { existsSync, readlinkSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { appendFile, mkdir, readFile, readdir, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gzipSync } from 'node:zlib';
import * as assert from 'uvu/assert';
import { ProfileExistsError, ProfilerStorageError } from '../../../../lib/profiler/storage/index.js';
import { listFiles, makeProfile, fileStorageSuite, rejection, until, withCapturedIntervals } from './fixtures.js';

const { test, env, freshDir, storageIn } = fileStorageSuite('FileStorage prefix leases', 'file-storage-leases', (root) => writeFile(join(root, 'drawer.mjs'), CHILD_SOURCE));

/** As FileLock records it: this process's pid namespace, null where there is none. */
const PIDNS = (() => {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return null;
  }
})();

const STORAGE_MODULE = new URL('../../../../lib/profiler/storage/index.js', import.meta.url).href;

// A drawing process: draws `count` tokens, writes the first `writes`, prints tokens and prefixes; then closes the
// storage, or with hold=1 waits to be killed, or with hold=wait closes once its stdin ends (its leases held until then).
const CHILD_SOURCE = `
const [moduleUrl, dir, count, writes, hold] = process.argv.slice(2);
const { FileStorage } = await import(moduleUrl);
const storage = new FileStorage({ dir, onError: (error) => { process.stderr.write(error.stack + '\\n'); process.exitCode = 1; } });
const tokens = [];
for (let i = 0; i < Number(count); i++) tokens.push(await storage.drawToken(6));
for (const token of tokens.slice(0, Number(writes))) {
  await storage.write({ token, parent: null, children: [], ip: '127.0.0.1', method: 'GET', url: 'http://x/' + token, time: Date.now(), status: 200, collectors: {} });
}
process.stdout.write(JSON.stringify({ tokens, prefixes: storage.leasedPrefixes }) + '\\n');
if (hold === '1') setInterval(() => {}, 1000);
else {
  if (hold === 'wait') await new Promise((resolve) => process.stdin.on('end', resolve).resume());
  await storage.close();
}
`;

/**
 * Runs a drawing process; `result` resolves with its output once it printed it and, when it closes by itself
 * ('close'), exited 0. 'hold' keeps its leases until kill(); 'wait' until finish(), which resolves once it
 * closed its storage and exited 0.
 */
function runDrawer(
  dir: string,
  count: number,
  writes: number,
  mode: 'close' | 'hold' | 'wait' = 'close',
): { result: Promise<{ tokens: string[]; prefixes: string[] }>; kill: () => Promise<void>; finish: () => Promise<void> } {
  const hold = mode !== 'close';
  // stdin piped in every mode (only 'wait' reads it): an unread pipe keeps no process alive.
  const child = spawn(process.execPath, [join(env.root, 'drawer.mjs'), STORAGE_MODULE, dir, String(count), String(writes), mode === 'hold' ? '1' : mode === 'wait' ? 'wait' : '0'], { stdio: 'pipe' });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const result = new Promise<{ tokens: string[]; prefixes: string[] }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`drawer timed out: ${stderr}`)), 60_000);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (!stdout.endsWith('\n')) return;
      const output = JSON.parse(stdout) as { tokens: string[]; prefixes: string[] };
      if (hold) {
        clearTimeout(timer);
        resolve(output);
        return;
      }
      void exited.then((code) => {
        clearTimeout(timer);
        if (code === 0) resolve(output);
        else reject(new Error(`drawer exited with ${code}: ${stderr}`));
      });
    });
    void exited.then((code) => {
      if (!stdout.endsWith('\n')) reject(new Error(`drawer exited with ${code} before printing: ${stderr}`));
    });
  });
  return {
    result,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    finish: async () => {
      child.stdin.end();
      const code = await exited;
      if (code !== 0) throw new Error(`drawer exited with ${code}: ${stderr}`);
    },
  };
}

const PREFIXES = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Lease files for every prefix but `except`, held by this (live) process and fresh. */
async function leaseAllBut(dir: string, except: string | readonly string[]): Promise<void> {
  await mkdir(join(dir, 'leases'), { recursive: true });
  const live = JSON.stringify({ pid: process.pid, hostname: hostname(), time: new Date().toISOString(), id: 'someone-else' });
  const free = typeof except === 'string' ? [except] : except;
  await Promise.all(PREFIXES.filter((prefix) => !free.includes(prefix)).map((prefix) => writeFile(join(dir, 'leases', `${prefix}.lease`), live)));
}

test('two storages on one directory draw disjoint tokens from different prefixes, creating no placeholder', async () => {
  const first = storageIn();
  const second = storageIn(first.dir);
  const a = new Set<string>();
  const b = new Set<string>();
  for (let i = 0; i < 2_000; i++) {
    a.add(await first.drawToken(6));
    b.add(await second.drawToken(6));
  }
  assert.is(a.size, 2_000, 'no token twice within one storage');
  assert.is(b.size, 2_000);
  for (const token of a) assert.not.ok(b.has(token), `${token} drawn by both`);
  for (const token of [...a, ...b]) assert.match(token, /^[0-9a-f]{6}$/);
  assert.is(first.leasedPrefixes.length, 1, 'one prefix is enough for 2,000 tokens');
  assert.is(second.leasedPrefixes.length, 1);
  assert.is.not(first.leasedPrefixes[0], second.leasedPrefixes[0]);
  for (const token of a) assert.ok(token.startsWith(first.leasedPrefixes[0]!));
  const files = await listFiles(first.dir);
  assert.equal(files, [...first.leasedPrefixes, ...second.leasedPrefixes].map((prefix) => `leases/${prefix}.lease`).sort(), 'only the two lease files');
  const lease = JSON.parse(await readFile(join(first.dir, 'leases', `${first.leasedPrefixes[0]}.lease`), 'utf8'));
  assert.is(lease.pid, process.pid);
  assert.is(lease.hostname, hostname());
  assert.type(lease.time, 'string');
});

test('read() of a token another live storage drew waits for its save, as a cluster worker\'s page does for another worker\'s request answered a moment ago', async () => {
  const writer = storageIn();
  const reader = storageIn(writer.dir);
  await reader.find();
  const token = await writer.drawToken(6);
  const reading = reader.read(token);
  // The reader has looked and missed it by then: the profile is saved after the read began.
  await sleep(100);
  await writer.write(makeProfile(token));
  const read = await reading;
  assert.ok(read !== null, 'found once saved, not null');
  assert.is(read!.token, token);
});

test('read() of a token another live storage leases but never saves gives up after a second of the clock, also on an event loop so busy that each 25 ms poll takes far longer', async () => {
  const writer = storageIn();
  const reader = storageIn(writer.dir);
  await reader.find();
  const drawn = await writer.drawToken(6);
  const unknown = drawn.endsWith('0') ? `${drawn.slice(0, -1)}1` : `${drawn.slice(0, -1)}0`;
  // A loaded server: every turn of its event loop takes 100 ms of other work.
  const busy = setInterval(() => {
    const until = Date.now() + 100;
    while (Date.now() < until);
  }, 1);
  const started = Date.now();
  try {
    assert.is(await reader.read(unknown), null);
  } finally {
    clearInterval(busy);
  }
  const took = Date.now() - started;
  assert.ok(took < 2_000, `read() gave up after ${took} ms, not about a second`);
});

test('read() does not wait for a token whose lease cannot be looked at (the leases directory is a file), nor fail', async () => {
  const dir = freshDir();
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'leases'), '');
  const reader = storageIn(dir);
  const started = Date.now();
  assert.is(await reader.read('ab0000'), null);
  const took = Date.now() - started;
  assert.ok(took < 500, `read() took ${took} ms`);
});

test('a fresh lease left by a dead process of this host does not refuse claims in its prefix', async () => {
  const storage = storageIn();
  await mkdir(join(storage.dir, 'leases'), { recursive: true });
  const dead = spawnSync(process.execPath, ['-e', '']).pid;
  await writeFile(join(storage.dir, 'leases', '5d.lease'), JSON.stringify({ pid: dead, hostname: hostname(), pidns: PIDNS, time: new Date().toISOString(), id: 'dead' }));
  await writeFile(join(storage.dir, 'leases', '5e.lease'), JSON.stringify({ pid: process.pid + 0, hostname: `not-${hostname()}`, pidns: PIDNS, time: new Date().toISOString(), id: 'remote' }));
  assert.is(await storage.claim('5d0001'), true, 'the holder is gone');
  assert.is(await storage.claim('5e0001'), false, 'a live-looking lease of another host still counts');
});

test('a token in a prefix leased by another storage is refused by claim and by a write', async () => {
  const first = storageIn();
  const second = storageIn(first.dir);
  const token = await first.drawToken(6);
  assert.is(await second.claim(token), false);
  const other = `${token.slice(0, 2)}${token.slice(2) === '0000' ? '0001' : '0000'}`;
  assert.is(await second.claim(other), false, 'the whole prefix is the lease holder\'s');
  assert.instance(await rejection(() => second.write(makeProfile(other))), ProfileExistsError);
  assert.is(await first.claim(token), false, 'not twice in the holder either');
  assert.is(await first.claim(other), true, 'the holder claims in its prefix in memory');
  await first.write(makeProfile(other));
  assert.ok(await second.read(other));
});

test('a drawn token is written with no placeholder and no temp file left, and found', async () => {
  const storage = storageIn();
  const token = await storage.drawToken(6);
  await storage.write(makeProfile(token, { status: 201 }));
  assert.is((await storage.read(token))?.status, 201);
  assert.equal((await storage.find()).map((summary) => summary.token), [token]);
  const files = await listFiles(storage.dir);
  assert.equal(files.filter((file) => !file.startsWith('segments/') && !file.startsWith('leases/') && file !== 'index.ndjson' && file !== 'index.lock'), [], 'no placeholder, no temp file');
  assert.is(files.filter((file) => file.startsWith('segments/')).length, 1);
  assert.instance(await rejection(() => storage.write(makeProfile(token, { status: 500 }))), ProfileExistsError);
  assert.is((await storage.read(token))?.status, 201);
});

test('a drawn token\'s write never overwrites a profile that appeared in the index under its name, and says so', async () => {
  const errors: Error[] = [];
  const storage = storageIn(undefined, { onError: (error) => errors.push(error) });
  const token = await storage.drawToken(6);
  // E.g. written by a process that knew nothing of leases (here in the old layout): the first line of a token wins.
  const foreign = gzipSync(JSON.stringify(makeProfile(token, { status: 418 })));
  await mkdir(join(storage.dir, token.slice(0, 2)), { recursive: true });
  await writeFile(join(storage.dir, token.slice(0, 2), `${token}.json.gz`), foreign);
  await appendFile(join(storage.dir, 'index.ndjson'), `{"t":"${token}","ts":${Date.now()},"s":418,"m":"GET","i":"::1","p":null,"b":${foreign.length},"u":"http://x/"}\n`);
  const refused = await rejection(() => storage.writeMany([makeProfile(token, { status: 200 })]));
  assert.instance(refused, ProfileExistsError);
  assert.match((refused as Error).message, `"${token}"`);
  assert.is((await storage.read(token))?.status, 418);
  assert.equal((await storage.find()).map((summary) => summary.status), [418], 'no second line');
  assert.is(await storage.claim(token), false);
  // The rejection is its one record (the profiler logs it): reported through onError too, the lost profile was logged twice.
  assert.equal(errors, [], 'not reported through onError as well');
});

test('draws avoid the profiles and claims already in the leased prefix', async () => {
  const writer = storageIn();
  const token = await writer.drawToken(6);
  const prefix = token.slice(0, 2);
  await writer.write(makeProfile(token));
  await writer.close();
  // 1,000 placeholders of other instances' claims: 2,000 blind draws would hit ~30 of them.
  const dir = writer.dir;
  const existing = new Set<string>([token]);
  for (let i = 0; i < 1_000; i++) existing.add(`${prefix}${(i * 61).toString(16).padStart(4, '0')}`);
  await mkdir(join(dir, prefix), { recursive: true });
  await Promise.all([...existing].filter((t) => t !== token).map((t) => writeFile(join(dir, prefix, `${t}.json.gz`), '')));
  await leaseAllBut(dir, prefix);
  const storage = storageIn(dir);
  const drawn = new Set<string>();
  for (let i = 0; i < 2_000; i++) {
    const t = await storage.drawToken(6);
    assert.ok(t.startsWith(prefix));
    assert.not.ok(existing.has(t), `${t} exists already`);
    drawn.add(t);
  }
  assert.is(drawn.size, 2_000);
});

test('a stale lease (old mtime) is taken over', async () => {
  const dir = freshDir();
  await leaseAllBut(dir, 'a5');
  const stale = join(dir, 'leases', 'a5.lease');
  await writeFile(stale, JSON.stringify({ pid: process.pid, hostname: hostname(), time: 'long ago', id: 'frozen' }));
  const old = new Date(Date.now() - 10 * 60_000);
  await utimes(stale, old, old);
  const storage = storageIn(dir);
  assert.match(await storage.drawToken(6), /^a5[0-9a-f]{4}$/);
  assert.equal(storage.leasedPrefixes, ['a5']);
  assert.is(JSON.parse(await readFile(stale, 'utf8')).pid, process.pid);
  assert.is.not(JSON.parse(await readFile(stale, 'utf8')).id, 'frozen');
});

test('a fresh lease of a dead process on this host is taken over at once; all others live: draws reject', async () => {
  const dir = freshDir();
  await leaseAllBut(dir, '3c');
  const dead = spawnSync(process.execPath, ['-e', '']).pid;
  assert.ok(dead > 0);
  await writeFile(join(dir, 'leases', '3c.lease'), JSON.stringify({ pid: dead, hostname: hostname(), pidns: PIDNS, time: new Date().toISOString(), id: 'dead' }));
  const storage = storageIn(dir);
  assert.match(await storage.drawToken(6), /^3c[0-9a-f]{4}$/);
  assert.is(JSON.parse(await readFile(join(dir, 'leases', '3c.lease'), 'utf8')).pid, process.pid);
  // A live holder elsewhere, same mtime age: not taken.
  const dir2 = freshDir();
  await leaseAllBut(dir2, '');
  const blocked = storageIn(dir2);
  const error = await rejection(() => blocked.drawToken(6));
  assert.instance(error, ProfilerStorageError);
  assert.match(error.message, /leased by another process/);
  assert.equal(blocked.leasedPrefixes, []);
  // A dead pid on another host is not ours to judge: only age counts there.
  await writeFile(join(dir2, 'leases', '77.lease'), JSON.stringify({ pid: dead, hostname: `not-${hostname()}`, pidns: PIDNS, time: '', id: 'remote' }));
  assert.instance(await rejection(() => blocked.drawToken(6)), ProfilerStorageError);
  // Nor in another pid namespace (a container sharing the hostname and the directory).
  await writeFile(join(dir2, 'leases', '77.lease'), JSON.stringify({ pid: dead, hostname: hostname(), pidns: 'pid:[1]', time: '', id: 'container' }));
  assert.instance(await rejection(() => blocked.drawToken(6)), ProfilerStorageError);
  assert.equal(blocked.leasedPrefixes, []);
});

test('a free prefix is leased before a dead process\'s lease is taken over: the tokens it drew and never wrote are not drawn again', async () => {
  const dir = freshDir();
  await mkdir(join(dir, 'leases'), { recursive: true });
  const dead = spawnSync(process.execPath, ['-e', '']).pid;
  const left = JSON.stringify({ pid: dead, hostname: hostname(), pidns: PIDNS, time: new Date().toISOString(), id: 'dead' });
  // Every prefix but one leased by a process killed before it wrote its draws: the free one is taken.
  await Promise.all(PREFIXES.filter((prefix) => prefix !== '3c').map((prefix) => writeFile(join(dir, 'leases', `${prefix}.lease`), left)));
  const storage = storageIn(dir);
  assert.match(await storage.drawToken(6), /^3c[0-9a-f]{4}$/);
  assert.equal(storage.leasedPrefixes, ['3c']);
});

test('close() releases the leases; another storage can then lease the prefix', async () => {
  const first = storageIn();
  const token = await first.drawToken(6);
  const prefix = first.leasedPrefixes[0]!;
  assert.ok(existsSync(join(first.dir, 'leases', `${prefix}.lease`)));
  await first.close();
  assert.equal(await readdir(join(first.dir, 'leases')), []);
  const closed = await rejection(() => first.drawToken(6));
  assert.instance(closed, ProfilerStorageError);
  assert.is((closed as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_CLOSED', closed.message);
  await leaseAllBut(first.dir, prefix);
  const second = storageIn(first.dir);
  assert.ok((await second.drawToken(6)).startsWith(prefix));
  assert.is(await second.claim(token), true, 'the unwritten draw of the closed storage is free again');
});

test('release() gives a drawn token back; claim() outside held prefixes still uses a placeholder', async () => {
  const storage = storageIn();
  const token = await storage.drawToken(6);
  await storage.release(token);
  assert.is(await storage.claim(token), true, 'released, then claimed in memory again');
  const outside = PREFIXES.find((prefix) => !storage.leasedPrefixes.includes(prefix))!;
  assert.is(await storage.claim(`${outside}abcd`), true);
  assert.ok(existsSync(join(storage.dir, outside, `${outside}abcd.json.gz`)));
  await storage.write(makeProfile(`${outside}abcd`));
  assert.ok(await storage.read(`${outside}abcd`));
});

test('a drawn token another writer stores in the same moment (its lease taken over while we were frozen) keeps that writer\'s profile, here too: ours is refused and reported', async () => {
  const errors: Error[] = [];
  const storage = storageIn(undefined, { onError: (error) => errors.push(error) });
  const token = await storage.drawToken(6);
  const indexPath = join(storage.dir, 'index.ndjson');
  // The other writer's profile (the old layout: a file and an index line) lands between our check of the index and our append.
  const foreign = gzipSync(JSON.stringify(makeProfile(token, { status: 418 })));
  await mkdir(join(storage.dir, token.slice(0, 2)), { recursive: true });
  await writeFile(join(storage.dir, token.slice(0, 2), `${token}.json.gz`), foreign);
  const foreignLine = `{"t":"${token}","ts":${Date.now()},"s":418,"m":"GET","i":"::1","p":null,"b":${foreign.length},"u":"http://x/"}\n`;
  const realOpenSync = fs.openSync;
  let raced = false;
  fs.openSync = ((...args: Parameters<typeof fs.openSync>) => {
    if (!raced && args[0] === indexPath && args[1] === 'a') {
      raced = true;
      fs.appendFileSync(indexPath, foreignLine);
    }
    return realOpenSync(...args);
  }) as typeof fs.openSync;
  syncBuiltinESMExports();
  let refused: unknown;
  try {
    refused = await rejection(() => storage.writeMany([makeProfile(token, { status: 200 })]));
  } finally {
    fs.openSync = realOpenSync;
    syncBuiltinESMExports();
  }
  assert.ok(raced, 'the other line was appended first');
  assert.instance(refused, ProfileExistsError);
  assert.is((await storage.read(token))?.status, 418, 'the first line\'s profile, as every other reader has it');
  const other = storageIn(storage.dir);
  assert.is((await other.read(token))?.status, 418);
  await storage.compact();
  assert.is((await storage.read(token))?.status, 418, 'still, after a compaction');
  assert.match((refused as Error).message, new RegExp(`another writer.*"${token}"`));
  assert.equal(errors, [], 'the rejection is its one record, not reported through onError as well');
});

test('a lease taken over while held (the process was frozen) is reported through onError, and no longer drawn from', async () => {
  const errors: Error[] = [];
  const { made: storage, callbacks } = await withCapturedIntervals(30_000, async () => {
    const made = storageIn(undefined, { onError: (error) => errors.push(error) });
    await made.drawToken(6);
    return made;
  });
  const [prefix] = storage.leasedPrefixes as [string];
  await writeFile(join(storage.dir, 'leases', `${prefix}.lease`), JSON.stringify({ pid: process.pid, hostname: hostname(), time: new Date().toISOString(), id: 'someone-else' }));
  for (const refresh of callbacks) refresh();
  await until(async () => errors.length > 0);
  assert.is((errors[0] as ProfilerStorageError | undefined)?.code, 'HK_PROFILER_STORAGE_LOCKED', String(errors[0]));
  assert.not.ok(storage.leasedPrefixes.includes(prefix));
});

test('discard() keeps a drawn token taken, a later release() too: a client saw it', async () => {
  const storage = storageIn();
  const token = await storage.drawToken(6);
  await storage.discard(token);
  await storage.release(token);
  assert.is(await storage.claim(token), false);
  assert.not.ok((await storage.drawTokens(6, 1_000)).includes(token), 'nor drawn again');
});

test('the tokens of dropped profiles are not drawn again by the next storage to lease their prefix: the lease gives them back in its discarded file', async () => {
  const first = storageIn();
  const tokens = await first.drawTokens(6, 20);
  const prefix = first.leasedPrefixes[0]!;
  const dropped = tokens.filter((token) => token.startsWith(prefix)).slice(0, 10);
  for (const token of dropped) await first.discard(token);
  await first.close();
  assert.ok(existsSync(join(first.dir, 'leases', `${prefix}.discarded`)));
  await leaseAllBut(first.dir, prefix);
  const second = storageIn(first.dir);
  assert.ok((await second.drawToken(6)).startsWith(prefix));
  for (const token of dropped) assert.is(await second.claim(token), false, `${token}: a client saw it`);
  const kept = tokens.filter((token) => token.startsWith(prefix) && !dropped.includes(token));
  for (const token of kept) assert.is(await second.claim(token), true, `${token}: drawn, never shown, free again`);
});

test('under a maxAge of 1e300 the tokens of dropped profiles are drawable again after a year (the longest maxAge kept), not practically never', async () => {
  const start = Date.now();
  const first = storageIn(undefined, { bounds: { maxAge: 1e300 }, now: () => start });
  const dropped = await first.drawToken(6);
  const prefix = dropped.slice(0, 2);
  await first.discard(dropped);
  await first.close();
  await leaseAllBut(first.dir, prefix);
  const yearOn = start + 365 * 24 * 60 * 60 * 1000;
  const within = storageIn(first.dir, { bounds: { maxAge: 1e300 }, now: () => yearOn - 60_000 });
  assert.ok((await within.drawToken(6)).startsWith(prefix));
  assert.is(await within.claim(dropped), false, 'taken within the year');
  await within.close();
  const after = storageIn(first.dir, { bounds: { maxAge: 1e300 }, now: () => yearOn + 60_000 });
  const drawn = await after.drawToken(6);
  assert.ok(drawn.startsWith(prefix));
  // Drawable again either way: drawn now (1 run in 65,536), or free to claim.
  assert.ok(drawn === dropped || (await after.claim(dropped)) === true, 'expired with the longest maxAge kept');
});

test('three processes on one directory draw disjoint tokens in different prefixes and write without conflict', async () => {
  const dir = freshDir();
  // Three prefixes free for three processes: they contend for the same lease files (with all 256 free, each
  // mostly got its first random pick uncontested).
  const free = ['a0', 'a1', 'a2'];
  await leaseAllBut(dir, free);
  // Each keeps its leases until all three have drawn: left to close by themselves, they mostly ran one after
  // the other (each takes about 100 ms), and one starting late could lease a prefix another had released,
  // with that one's unwritten draws free again.
  const drawers = [0, 1, 2].map(() => runDrawer(dir, 2_000, 100, 'wait'));
  const outputs = await Promise.all(drawers.map((drawer) => drawer.result));
  await Promise.all(drawers.map((drawer) => drawer.finish()));
  const all = outputs.flatMap((output) => output.tokens);
  assert.is(all.length, 6_000);
  const seen = new Set<string>();
  const twice = all.filter((token) => seen.size === seen.add(token).size);
  assert.is(twice.length, 0, `no token drawn twice across processes: ${twice.length} were (${twice.slice(0, 5).join(', ')}…); prefixes held at the end: ${JSON.stringify(outputs.map((output) => output.prefixes))}, first draws: ${JSON.stringify(outputs.map((output) => output.tokens.slice(0, 3)))}`);
  const prefixes = outputs.map((output) => output.prefixes);
  for (const held of prefixes) assert.is(held.length, 1);
  assert.equal(prefixes.flat().sort(), free, 'the three free prefixes, one each');
  const reader = storageIn(dir);
  assert.is((await reader.find({ limit: 1_000 })).length, 300);
  const leases = await readdir(join(dir, 'leases'));
  assert.is(leases.length, PREFIXES.length - free.length);
  assert.ok(free.every((prefix) => !leases.includes(`${prefix}.lease`)), 'every lease released on close');
});

test('the lease of a killed process is taken over at once by the next one', async () => {
  const dir = freshDir();
  const holder = runDrawer(dir, 10, 2, 'hold');
  const { prefixes } = await holder.result;
  assert.is(prefixes.length, 1);
  const prefix = prefixes[0]!;
  const blocked = storageIn(dir);
  await leaseAllBut(dir, prefix);
  // Its lease is fresh and its process alive: not taken.
  assert.is(await blocked.claim(`${prefix}0000`), false);
  assert.instance(await rejection(() => blocked.drawToken(6)), ProfilerStorageError);
  await holder.kill();
  const token = await blocked.drawToken(6);
  assert.ok(token.startsWith(prefix), 'the dead process\'s prefix, without waiting for its lease to age');
});

/** Draws `count` tokens of 6 characters in bulk (in memory while a lease is usable). */
async function drawMany(storage: ReturnType<typeof storageIn>, count: number): Promise<string[]> {
  const tokens: string[] = [];
  while (tokens.length < count) tokens.push(...(await storage.drawTokens(6, Math.min(1_000, count - tokens.length))));
  return tokens;
}

/** Lets the background lease work (a scan, a lease file) run to its end. */
async function settle(): Promise<void> {
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setTimeout(resolve, 2));
}

// A 6-character token's prefix holds 65,536 tokens: the next lease is taken at half of them, and
// made in the background from three eighths on, so that no draw (no request) waits for it.
test('past three eighths of its prefix, the next lease is taken in the background, before any draw has to wait', async () => {
  const storage = storageIn();
  await drawMany(storage, 24_500);
  await settle();
  assert.is(storage.leasedPrefixes.length, 1, 'below three eighths: one lease');
  await drawMany(storage, 100);
  await settle();
  assert.is(storage.leasedPrefixes.length, 2, 'a second lease, taken while the first was still usable');
  await storage.close();
});

test('tokens drawn and written while a background scan runs are never drawn again', async () => {
  // Only one prefix can be leased: the background growth scans the lease (and fails to find another), and draws go on from it.
  const writer = storageIn();
  const prefix = (await writer.drawToken(6)).slice(0, 2);
  await writer.close();
  await leaseAllBut(writer.dir, prefix);
  const storage = storageIn(writer.dir);
  const drawn = await drawMany(storage, 24_570);
  // Across the early share: each batch is written at once, so some are written after the scan has read the index.
  for (let round = 0; round < 20; round++) {
    const batch = await storage.drawTokens(6, 50);
    drawn.push(...batch);
    await storage.writeMany(batch.map((token) => makeProfile(token, {}, 200)));
  }
  await settle();
  // Up to the full share (32,768) from the same lease; the draw after it finds no lease to take and rejects.
  for (;;) {
    const more = await storage.drawTokens(6, 500).catch(() => null);
    if (more === null) break;
    drawn.push(...more);
    if (drawn.length > 40_000) break;
  }
  assert.ok(drawn.every((token) => token.startsWith(prefix)));
  assert.ok(drawn.length >= 32_000, `drew ${drawn.length}`);
  assert.is(new Set(drawn).size, drawn.length, 'a token was drawn twice');
  await storage.close();
});

test('longer tokens are drawn in the leased prefix too', async () => {
  const storage = storageIn();
  const token = await storage.drawToken(16);
  assert.match(token, /^[0-9a-f]{16}$/);
  assert.ok(token.startsWith(storage.leasedPrefixes[0]!));
  assert.match(await storage.drawToken(32), /^[0-9a-f]{32}$/, 'the longest');
  for (const length of [5, 33, 6.5]) {
    const error = await rejection(() => storage.drawToken(length));
    assert.instance(error, RangeError, String(length));
    assert.is(error.message, `A profile token has 6 to 32 characters, not ${length}.`);
  }
});

test.run();
