// TokenLeases on its own, with a host of plain sets: the contract FileStorage relies on.
import { spawnSync } from 'node:child_process';
import fs, { existsSync, readlinkSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { mkdir, readFile, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ProfilerStorageError } from '../../../../lib/profiler/storage/errors.js';
import { TokenLeases, type LeaseHost } from '../../../../lib/profiler/storage/token-leases.js';
import { makeTempDir, simulatedDisk, until, withCapturedIntervals } from './fixtures.js';

interface Fixture {
  leases: TokenLeases;
  host: LeaseHost;
  /** What the host says it stores, per prefix. */
  stored: Map<string, string[]>;
  /** The host's claimed or written tokens. */
  busy: Set<string>;
  reported: unknown[];
  closed: { value: boolean };
}

const test = suite<{ cleanups: Array<() => Promise<void>> }>('TokenLeases', { cleanups: [] });
test.after.each(async (context) => {
  for (const cleanup of context.cleanups.splice(0)) await cleanup();
});

async function fixture(context: { cleanups: Array<() => Promise<void>> }): Promise<Fixture> {
  const { dir, cleanup } = await makeTempDir('token-leases');
  const stored = new Map<string, string[]>();
  const busy = new Set<string>();
  const reported: unknown[] = [];
  const closed = { value: false };
  const host: LeaseHost = {
    dir,
    stored: async (prefix) => stored.get(prefix) ?? [],
    pending: () => busy,
    busy: (token) => busy.has(token),
    closed: () => closed.value,
    now: () => Date.now(),
    discardedFor: () => 60_000,
    report: (error) => reported.push(error),
  };
  const leases = new TokenLeases(host, { holderInfo: true });
  context.cleanups.push(async () => {
    await leases.close();
    await cleanup();
  });
  return { leases, host, stored, busy, reported, closed };
}

test('nothing is drawn before a lease is taken; grow() takes one, and draws stay inside its prefix', async (context) => {
  const { leases, host } = await fixture(context);
  assert.is(leases.draw(6), null, 'no lease held yet');
  await leases.grow(6);
  assert.is(leases.prefixes.length, 1);
  const prefix = leases.prefixes[0]!;
  assert.ok(existsSync(join(host.dir, 'leases', `${prefix}.lease`)), 'the lease file');
  const drawn = new Set<string>();
  for (let i = 0; i < 500; i++) {
    const token = leases.draw(6);
    assert.ok(token !== null);
    assert.match(token, new RegExp(`^${prefix}[0-9a-f]{4}$`));
    assert.not.ok(drawn.has(token), `${token} drawn twice`);
    assert.ok(leases.isDrawn(token));
    drawn.add(token);
  }
});

test('a draw avoids what the host stores (scanned when the lease is taken) and what it is busy with', async (context) => {
  const { leases, host, stored, busy } = await fixture(context);
  // Every prefix but 5e is leased by another holder: grow() can only lease 5e.
  await leaseAllBut(host.dir, '5e');
  const all = Array.from({ length: 16 ** 4 }, (_, i) => `5e${i.toString(16).padStart(4, '0')}`);
  // A quarter stored, a quarter the host's in flight: half full counts as full, nothing to lease.
  stored.set('5e', all.filter((_, i) => i % 4 === 0));
  for (const token of all.filter((_, i) => i % 4 === 2)) busy.add(token);
  const error = await leases.grow(6).then(
    () => null,
    (rejected: unknown) => rejected,
  );
  assert.instance(error, ProfilerStorageError);
  assert.is((error as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_FULL');
  assert.equal(leases.prefixes, []);
  // Then in flight only the tokens ending in 1 (pending when the lease is scanned).
  busy.clear();
  for (const token of all) if (token.endsWith('1')) busy.add(token);
  await leases.grow(6);
  assert.equal(leases.prefixes, ['5e']);
  // Busy since the scan: those ending in f.
  for (const token of all) if (token.endsWith('f')) busy.add(token);
  let draws = 0;
  for (let token = leases.draw(6); token !== null && draws < 2_000; token = leases.draw(6), draws++) {
    assert.ok(parseInt(token.slice(2), 16) % 4 !== 0, `${token} is stored`);
    assert.not.ok(token.endsWith('1') || token.endsWith('f'), `${token} is the host's`);
  }
  assert.is(draws, 2_000);
});

test('claim(): null outside the held prefixes; false when taken or indexed; a claimed token is drawn', async (context) => {
  const { leases } = await fixture(context);
  await leases.grow(6);
  const prefix = leases.prefixes[0]!;
  const other = prefix === 'aa' ? 'bb' : 'aa';
  assert.is(leases.claim(`${other}0001`, () => false), null);
  const drawn = leases.draw(6)!;
  assert.is(leases.claim(drawn, () => false), false, 'drawn already');
  assert.is(leases.claim(`${prefix}0002`, (token) => token === `${prefix}0002`), false, 'indexed');
  const claimed = [`${prefix}0003`, `${prefix}0004`].find((token) => token !== drawn)!;
  assert.is(leases.claim(claimed, () => false), true);
  assert.ok(leases.isDrawn(claimed));
  assert.is(leases.claim(claimed, () => false), false, 'claimed twice');
});

test('settle() keeps a written token taken; release() makes a drawn token drawable again', async (context) => {
  const { leases } = await fixture(context);
  await leases.grow(6);
  const prefix = leases.prefixes[0]!;
  const written = `${prefix}00a1`;
  const given = `${prefix}00a2`;
  assert.is(leases.claim(written, () => false), true);
  assert.is(leases.claim(given, () => false), true);
  leases.settle(written);
  assert.not.ok(leases.isDrawn(written));
  assert.is(leases.claim(written, () => false), false, 'its profile is stored: still taken');
  assert.is(leases.release(given), true);
  assert.not.ok(leases.isDrawn(given));
  assert.is(leases.claim(given, () => false), true, 'given back: free again');
  assert.is(leases.release(`${prefix}00a3`), false, 'never drawn');
  leases.stored(`${prefix}00a4`);
  assert.is(leases.claim(`${prefix}00a4`, () => false), false, 'stored by other means: taken');
});

test('discard() keeps a drawn token taken across the rescans, where settle() without a write frees it', async (context) => {
  const { leases } = await fixture(context);
  // Three-character tokens: 16 per prefix, so eight draws fill a lease and the next grow() rescans it.
  await leases.grow(3);
  const prefix = leases.prefixes[0]!;
  const tokens = Array.from({ length: 8 }, (_, i) => `${prefix}${i.toString(16)}`);
  for (const token of tokens) assert.is(leases.claim(token, () => false), true);
  const [seen, ...rest] = tokens as [string, ...string[]];
  assert.is(leases.discard(seen), true);
  assert.not.ok(leases.isDrawn(seen));
  for (const token of rest) leases.settle(token);
  await leases.grow(3);
  assert.equal(leases.prefixes, [prefix], 'rescanned, not another lease');
  assert.is(leases.claim(seen, () => false), false, 'a client saw it: still taken after the rescan');
  assert.is(leases.claim(rest[0]!, () => false), true, 'settled but never stored: free after the rescan');
  assert.is(leases.discard(`${prefix}f`), false, 'never drawn');
});

test('a storage that drops every profile gives back the leases its discarded tokens fill, rather than holding one more for every few thousand drops', async (context) => {
  // The refresh, which gives full leases back, runs on a 30-second interval: its callback is captured and called by the test.
  const { made, callbacks } = await holdingOneLease(context, 3);
  const { leases } = made;
  // Three-character tokens: 16 per prefix, past the early share (three eighths) at 6 draws, half full at 8.
  // Every token drawn is discarded (its profile dropped: a storage slower than the traffic), which rescans keep
  // taken. grow() after each, as a server's event loop turns between requests, lets the growth a draw begins in
  // the background (past the early share) finish first: it then takes another lease before this one is half full.
  for (let i = 0; i < 200; i++) {
    const token = leases.draw(3);
    assert.ok(token !== null, `draw ${i}`);
    assert.ok(leases.discard(token));
    await leases.grow(3);
  }
  const held = leases.prefixes.length;
  callbacks[0]!();
  await until(async () => leases.prefixes.length <= 2);
  assert.ok(leases.prefixes.length <= 2, `the spent leases are given back: ${leases.prefixes.length} of the ${held} held before the refresh are still held`);
});

test('another holder\'s live lease is seen; close() gives the leases back and forgets the draws', async (context) => {
  const first = await fixture(context);
  await first.leases.grow(6);
  const prefix = first.leases.prefixes[0]!;
  const token = first.leases.draw(6)!;
  const second = new TokenLeases({ ...first.host }, { holderInfo: true, owner: 'second' });
  assert.is(await second.leasedByAnother(prefix), true);
  await first.leases.close();
  assert.equal(await readdir(join(first.host.dir, 'leases')), []);
  assert.not.ok(first.leases.isDrawn(token));
  assert.equal(first.leases.prefixes, []);
  assert.is(await second.leasedByAnother(prefix), false);
  await second.close();
});

/** A fixture holding the lease it took for tokens of `length` characters, with its 30 s refresh captured: `callbacks[0]` runs one. */
function holdingOneLease(context: { cleanups: Array<() => Promise<void>> }, length: number): Promise<{ made: Fixture; callbacks: Array<() => void> }> {
  return withCapturedIntervals(30_000, async () => {
    const ready = await fixture(context);
    await ready.leases.grow(length);
    return ready;
  });
}

/** A fixture whose leases hold prefix `aa` alone (every other leased by nobody's live process), with its 30 s refresh captured: `callbacks[0]` runs one. */
function holdingAaOnly(context: { cleanups: Array<() => Promise<void>> }): Promise<{ made: Fixture; callbacks: Array<() => void> }> {
  return withCapturedIntervals(30_000, async () => {
    const ready = await fixture(context);
    await leaseAllBut(ready.host.dir, 'aa');
    await ready.leases.grow(3);
    return ready;
  });
}

/** Lease files of a live holder (this process, another owner) on every prefix but `except`. */
async function leaseAllBut(dir: string, except: string | readonly string[]): Promise<void> {
  await mkdir(join(dir, 'leases'), { recursive: true });
  const live = JSON.stringify({ pid: process.pid, hostname: hostname(), time: new Date().toISOString(), id: 'someone-else' });
  const free = typeof except === 'string' ? [except] : except;
  for (let i = 0; i < 256; i++) {
    const prefix = i.toString(16).padStart(2, '0');
    if (!free.includes(prefix)) await writeFile(join(dir, 'leases', `${prefix}.lease`), live);
  }
}

test('every 30 s the held leases are kept young; one another holder took over is dropped and reported, and nothing more is drawn in it', async (context) => {
  // The refresh runs on a 30-second interval: its callback is captured and called by the test.
  const { made, callbacks } = await holdingOneLease(context, 6);
  const { leases, host, reported } = made;
  assert.is(callbacks.length, 1, 'one refresh timer for the leases');
  const prefix = leases.prefixes[0]!;
  const path = join(host.dir, 'leases', `${prefix}.lease`);
  const [released, discarded] = [leases.draw(6)!, leases.draw(6)!];
  /** Fires the refresh, then waits until `done` holds: the refresh awaits the file system. */
  const tick = async (done: () => Promise<boolean>) => {
    callbacks[0]!();
    await until(done);
  };
  const young = async () => Date.now() - (await stat(path)).mtimeMs < 10_000;

  const old = new Date(Date.now() - 90_000);
  await utimes(path, old, old);
  assert.not.ok(await young());
  await tick(young);
  assert.ok(await young(), 'refreshed: another process will not take it over as stale');
  assert.equal(leases.prefixes, [prefix]);
  assert.is(reported.length, 0);

  // Another process took the lease over (we were frozen past its staleness): its file names another holder.
  await writeFile(path, JSON.stringify({ pid: 1, hostname: hostname(), time: Date.now() }));
  await tick(async () => reported.length > 0);
  assert.equal(leases.prefixes, [], 'the lease is dropped');
  assert.is(reported.length, 1);
  assert.instance(reported[0], ProfilerStorageError);
  assert.is((reported[0] as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_LOCKED');
  assert.is(leases.draw(6), null, 'nothing is drawn in a prefix no longer held');
  assert.ok(leases.release(released) && leases.discard(discarded), 'tokens drawn before still given back or discarded');
  leases.stored(`${prefix}0000`);
  assert.ok(existsSync(path), 'the other holder\'s lease is left alone');
});

test('a lease not found ours for a minute (the process was frozen) is not drawn from until it is looked at again: still ours, it is drawn from; taken over meanwhile, it is dropped and the draws go to another prefix', async (context) => {
  const { made } = await holdingOneLease(context, 6);
  const { leases, host, reported } = made;
  const [prefix] = leases.prefixes as [string];
  const path = join(host.dir, 'leases', `${prefix}.lease`);
  assert.ok(leases.draw(6)?.startsWith(prefix));
  // The monotonic clock moved on while no refresh ran: the process was frozen (the refresh timer is captured, never fired).
  const realNow = performance.now.bind(performance);
  try {
    performance.now = () => realNow() + 61_000;
    assert.is(leases.draw(6), null, 'not drawn from before it is looked at');
    await leases.grow(6);
    assert.equal(leases.prefixes, [prefix]);
    assert.ok(leases.draw(6)?.startsWith(prefix), 'found ours: drawn from again');
    performance.now = () => realNow() + 122_000;
    // Frozen past the lease's staleness: another holder took it over.
    await writeFile(path, JSON.stringify({ pid: process.pid, hostname: hostname(), time: new Date().toISOString(), id: 'new-holder' }));
    assert.is(leases.draw(6), null, 'no token of a lease that may be taken over is drawn');
    await leases.grow(6);
  } finally {
    performance.now = realNow;
  }
  assert.equal(reported.map((error) => (error as ProfilerStorageError).code), ['HK_PROFILER_STORAGE_LOCKED']);
  assert.is(leases.prefixes.length, 1);
  assert.is.not(leases.prefixes[0], prefix, 'the lease taken over is dropped');
  assert.not.ok(leases.draw(6)?.startsWith(prefix));
});

test('a lease check that fails (EMFILE) or a refresh that fails (EROFS) is reported with its code, not as a takeover, and the lease is kept and drawn from', async (context) => {
  const { made, callbacks } = await holdingOneLease(context, 6);
  const { leases, host, reported } = made;
  const [prefix] = leases.prefixes as [string];
  const path = join(host.dir, 'leases', `${prefix}.lease`);
  /** Fires the refresh with `name` failing on the lease file with `code`, until it reported something. */
  const refreshFailing = async (name: 'readFile' | 'utimes', code: string): Promise<void> => {
    const real = fs.promises[name] as (...args: unknown[]) => Promise<unknown>;
    const before = reported.length;
    (fs.promises as Record<string, unknown>)[name] = (file: unknown, ...rest: unknown[]) => {
      if (file === path) return Promise.reject(Object.assign(new Error(`${code}: simulated, ${name} '${path}'`), { code }));
      return real(file, ...rest);
    };
    syncBuiltinESMExports();
    try {
      callbacks[0]!();
      await until(async () => reported.length > before);
    } finally {
      (fs.promises as Record<string, unknown>)[name] = real;
      syncBuiltinESMExports();
    }
  };
  await refreshFailing('readFile', 'EMFILE');
  assert.is(reported.length, 1, 'the failed check is reported');
  assert.match((reported[0] as Error).message, /EMFILE/);
  assert.not.match((reported[0] as Error).message, /taken over;/);
  assert.equal(leases.prefixes, [prefix], 'not given up for a transient EMFILE');
  assert.ok(leases.draw(6)?.startsWith(prefix));
  await refreshFailing('utimes', 'EROFS');
  assert.is(reported.length, 2, 'the failed refresh is reported');
  assert.match((reported[1] as Error).message, /EROFS/);
  assert.equal(leases.prefixes, [prefix]);
  assert.ok(existsSync(path));
  // The file system answers again: refreshed, and nothing more said.
  const old = new Date(Date.now() - 90_000);
  await utimes(path, old, old);
  callbacks[0]!();
  await until(async () => Date.now() - (await stat(path)).mtimeMs < 10_000);
  assert.ok(Date.now() - (await stat(path)).mtimeMs < 10_000, 'refreshed');
  assert.is(reported.length, 2);
  assert.ok(leases.draw(6)?.startsWith(prefix));
});

test('a closed storage takes no lease', async (context) => {
  const { leases, host, closed } = await fixture(context);
  closed.value = true;
  await leases.grow(6);
  assert.equal(leases.prefixes, []);
  assert.not.ok(existsSync(join(host.dir, 'leases')));
});

test('past three eighths of its lease, a draw starts the next lease in the background; draws then go to the least full lease', async (context) => {
  const { leases } = await fixture(context);
  // Three-character tokens: 16 per prefix, half full at 8, three eighths at 6.
  await leases.grow(3);
  const first = leases.prefixes[0]!;
  for (let i = 0; i < 5; i++) assert.ok(leases.draw(3)?.startsWith(first));
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(leases.prefixes, [first], 'five of 16: no other lease');
  assert.ok(leases.draw(3)?.startsWith(first));
  await until(async () => leases.prefixes.length === 2);
  const second = leases.prefixes.find((prefix) => prefix !== first);
  assert.ok(second !== undefined, 'six of 16: another lease, taken without a grow()');
  assert.ok(leases.draw(3)?.startsWith(second), 'the least full lease');
});

test('a full lease is given back at the next refresh once none of its draws is pending, and is drawn from no more meanwhile', async (context) => {
  const { made, callbacks } = await holdingOneLease(context, 3);
  const { leases, host, stored } = made;
  const full = leases.prefixes[0]!;
  const tokens = Array.from({ length: 8 }, (_, i) => `${full}${i.toString(16)}`);
  for (const token of tokens) assert.is(leases.claim(token, () => false), true);
  const [pending, ...written] = tokens as [string, ...string[]];
  for (const token of written) leases.settle(token);
  stored.set(full, written);
  // Half of its tokens stored or pending: full after its rescan, and another prefix leased.
  await leases.grow(3);
  const other = leases.prefixes.find((prefix) => prefix !== full)!;
  assert.equal(leases.prefixes, [full, other].sort());
  for (let i = 0; i < 4; i++) assert.ok(leases.draw(3)?.startsWith(other), 'drawn from the lease not full');
  const refreshed = async (): Promise<void> => {
    callbacks[0]!();
    // Lease changes run one at a time: a grow() asked for after the refresh ends after it.
    await leases.grow(3);
  };
  await refreshed();
  assert.ok(leases.holds(full), 'a draw of it pending: kept');
  leases.settle(pending);
  await refreshed();
  assert.not.ok(leases.holds(full), 'given back');
  assert.not.ok(existsSync(join(host.dir, 'leases', `${full}.lease`)));
  assert.ok(leases.holds(other));
});

test('a prefix no lease file names is leased before the lease of a holder that is gone is taken over', async (context) => {
  const { leases, host } = await fixture(context);
  const gone = spawnSync(process.execPath, ['-e', '']).pid;
  let pidns: string | null = null;
  try {
    pidns = readlinkSync('/proc/self/ns/pid');
  } catch {
    // No pid namespace to read: the lease files say none either.
  }
  const left = JSON.stringify({ pid: gone, hostname: hostname(), pidns, time: new Date().toISOString(), id: 'gone' });
  await mkdir(join(host.dir, 'leases'), { recursive: true });
  for (let i = 0; i < 256; i++) {
    const prefix = i.toString(16).padStart(2, '0');
    if (prefix !== 'c3') await writeFile(join(host.dir, 'leases', `${prefix}.lease`), left);
  }
  await leases.grow(6);
  assert.equal(leases.prefixes, ['c3']);
});

test('a lease is drawn from up to half of its prefix\'s tokens, then draw() gives null', async (context) => {
  const { leases, host } = await fixture(context);
  await leaseAllBut(host.dir, 'c3');
  await leases.grow(3);
  assert.equal(leases.prefixes, ['c3']);
  const drawn = new Set<string>();
  for (let i = 0; i < 8; i++) drawn.add(leases.draw(3) ?? 'none');
  assert.is(drawn.size, 8);
  assert.not.ok(drawn.has('none'));
  assert.is(leases.draw(3), null, 'half of 16 drawn');
});

test('a background lease that fails is tried again only 10 s later: a storage with no free prefix is not rescanned at every draw', async (context) => {
  const { host } = await fixture(context);
  await leaseAllBut(host.dir, 'c3');
  let clock = Date.now();
  let scans = 0;
  const leases = new TokenLeases({ ...host, now: () => clock, stored: async () => (scans++, []) }, { holderInfo: true });
  context.cleanups.push(() => leases.close());
  // Four-character tokens: 256 per prefix, half full at 128, three eighths at 96.
  await leases.grow(4);
  /** Draws once, and waits for a background lease started by it (it scans the held lease first). */
  const drawAndSettle = async (): Promise<number> => {
    const before = scans;
    assert.ok(leases.draw(4) !== null);
    // Lease changes run one at a time: this grow(), with the lease under half full, ends after it.
    await leases.grow(4);
    return scans - before;
  };
  let early = 0;
  for (let i = 0; i < 95; i++) early += await drawAndSettle();
  assert.is(early, 0, 'under three eighths');
  assert.is(await drawAndSettle(), 1, 'at three eighths: a background lease, which fails');
  clock += 9_999;
  assert.is(await drawAndSettle(), 0, 'within 10 s: not tried again');
  clock += 1;
  assert.is(await drawAndSettle(), 1, '10 s later: tried again');
});


test('a token discarded in a lease given back at a refresh is not drawn again when the prefix is leased anew', async (context) => {
  const { made, callbacks } = await withCapturedIntervals(30_000, async () => {
    const ready = await fixture(context);
    // Only aa and bb free: three-character tokens, 16 per prefix, half full (8 taken) ends a lease.
    await leaseAllBut(ready.host.dir, ['aa', 'bb']);
    await ready.leases.grow(3);
    return ready;
  });
  const { leases } = made;
  const seen = new Set<string>();
  let givenBack = 0;
  let error: unknown = null;
  // Every drawn token is discarded (a client saw it, its profile was dropped); the refresh gives back the full lease,
  // which grow() takes again once the other is full: it may draw nothing a client saw. At most 32 draws fill both.
  for (let i = 0; i < 64 && error === null; i++) {
    const token = leases.draw(3);
    if (token !== null) {
      assert.not.ok(seen.has(token), `${token} drawn again after it was discarded`);
      seen.add(token);
      assert.ok(leases.discard(token));
    }
    const before = leases.prefixes.length;
    callbacks[0]!();
    await leases.grow(3).catch((rejected: unknown) => {
      error = rejected;
    });
    if (leases.prefixes.length < before) givenBack++;
  }
  assert.ok(givenBack > 0, 'a lease was given back and leased again');
  assert.instance(error, ProfilerStorageError);
  assert.is((error as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_FULL');
  assert.ok(seen.size >= 8, `${seen.size} tokens drawn`);
});

test('the tokens a lease discarded are not drawn by the next holder of its prefix, until the max age has passed', async (context) => {
  const { leases, host, reported } = await fixture(context);
  await leaseAllBut(host.dir, 'aa');
  let clock = 1_000_000;
  const timed = (owner: string): TokenLeases => new TokenLeases({ ...host, now: () => clock, discardedFor: () => 60_000 }, { holderInfo: true, owner });
  const first = timed('first');
  await first.grow(3);
  for (const token of ['aa0', 'aa1']) assert.ok(first.claim(token, () => false) && first.discard(token));
  clock += 30_000;
  assert.ok(first.claim('aa2', () => false) && first.discard('aa2'));
  await first.close();
  const path = join(host.dir, 'leases', 'aa.discarded');
  assert.is(await readFile(path, 'utf8'), 'aa0 1000000\naa1 1000000\naa2 1030000\n');
  const second = timed('second');
  await second.grow(3);
  for (const token of ['aa0', 'aa1', 'aa2']) assert.is(second.claim(token, () => false), false, `${token} a client saw, discarded by the last holder`);
  assert.is(second.claim('aa3', () => false), true);
  second.release('aa3');
  await second.close();
  assert.is(await readFile(path, 'utf8'), 'aa0 1000000\naa1 1000000\naa2 1030000\n', 'kept with their times, not appended again');
  // Past the max age of aa0 and aa1 (60 s), not of aa2: the file is rewritten with aa2 alone.
  clock = 1_000_000 + 60_001;
  const third = timed('third');
  await third.grow(3);
  assert.is(third.claim('aa0', () => false), true, 'expired: drawable again');
  assert.is(third.claim('aa2', () => false), false);
  assert.is(await readFile(path, 'utf8'), 'aa2 1030000\n');
  third.release('aa0');
  await third.close();
  clock = 1_030_000 + 60_001;
  const fourth = timed('fourth');
  await fourth.grow(3);
  assert.is(fourth.claim('aa2', () => false), true);
  assert.not.ok(existsSync(path), 'none left: removed');
  await fourth.close();
  assert.equal(reported, []);
  await leases.close();
});

test('a token discarded in a lease held past the max age is drawable again at its next rescan', async (context) => {
  const { host } = await fixture(context);
  let clock = 1_000_000;
  const leases = new TokenLeases({ ...host, now: () => clock, discardedFor: () => 60_000 }, { holderInfo: true });
  await leases.grow(3);
  const prefix = leases.prefixes[0]!;
  const tokens = Array.from({ length: 8 }, (_, i) => `${prefix}${i.toString(16)}`);
  for (const token of tokens) assert.is(leases.claim(token, () => false), true);
  const [seen, other, ...rest] = tokens as [string, string, ...string[]];
  assert.ok(leases.discard(seen));
  clock += 60_001;
  assert.ok(leases.discard(other));
  for (const token of rest) leases.settle(token);
  // Half full: the next grow() rescans it.
  await leases.grow(3);
  assert.equal(leases.prefixes, [prefix]);
  assert.is(leases.claim(seen, () => false), true, 'discarded over 60 s ago');
  assert.is(leases.claim(other, () => false), false, 'discarded a moment ago');
  await leases.close();
});

test('a discarded file cut in its last line (a crash mid-append) keeps its whole lines, and is rewritten before the next append', async (context) => {
  const { leases, host, reported } = await fixture(context);
  await leaseAllBut(host.dir, 'aa');
  const path = join(host.dir, 'leases', 'aa.discarded');
  const now = Date.now();
  // The last line is cut before its newline: it may be cut anywhere, and is skipped.
  await writeFile(path, `aa1 ${now}\naa4 ${now}\naa5 ${now}`);
  await leases.grow(3);
  assert.is(leases.claim('aa1', () => false), false);
  assert.is(leases.claim('aa4', () => false), false);
  assert.is(leases.claim('aa5', () => false), true, 'the cut line is skipped');
  assert.is(await readFile(path, 'utf8'), `aa1 ${now}\naa4 ${now}\n`);
  assert.ok(leases.discard('aa5'));
  await leases.close();
  const lines = (await readFile(path, 'utf8')).split('\n');
  assert.equal(lines.slice(0, 2), [`aa1 ${now}`, `aa4 ${now}`]);
  assert.match(lines[2]!, /^aa5 [0-9]+$/);
  assert.is(lines.length, 4);
  // Lines of another prefix or malformed are skipped, and dropped from the file.
  await writeFile(path, `zz2 ${now}\naa3 x\naa4 ${now}\n`);
  const second = new TokenLeases({ ...host }, { holderInfo: true, owner: 'second' });
  await second.grow(3);
  assert.is(second.claim('aa3', () => false), true);
  assert.is(second.claim('aa4', () => false), false);
  assert.is(await readFile(path, 'utf8'), `aa4 ${now}\n`);
  second.release('aa3');
  await second.close();
  assert.equal(reported, []);
});

test('a discarded file that cannot be read or written is reported, and the lease is taken and given back all the same', async (context) => {
  const { leases, host, reported } = await fixture(context);
  await leaseAllBut(host.dir, 'aa');
  // A directory in its place: reading and appending fail.
  await mkdir(join(host.dir, 'leases', 'aa.discarded'));
  await leases.grow(3);
  assert.equal(leases.prefixes, ['aa']);
  assert.is(reported.length, 1);
  assert.is((reported[0] as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_DISCARDED');
  assert.ok(leases.claim('aa1', () => false) && leases.discard('aa1'));
  await leases.close();
  assert.is(reported.length, 2);
  assert.is((reported[1] as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_DISCARDED');
  assert.match(String((reported[1] as Error).message), /may be drawn again/);
  assert.not.ok(existsSync(join(host.dir, 'leases', 'aa.lease')), 'given back');
});

test('a lease taken over (we were frozen) neither rewrites nor appends to its discarded file: only the holder writes it, whose appends a rewrite would lose; its discarded tokens are handed over in a file of their own', async (context) => {
  const { leases, host, reported } = await fixture(context);
  await leaseAllBut(host.dir, 'aa');
  await leases.grow(3);
  assert.equal(leases.prefixes, ['aa']);
  // Eight of aa's 16 three-character tokens taken: the next grow() rescans aa.
  for (let i = 0; i < 8; i++) assert.ok(leases.claim(`aa${i}`, () => false));
  // Another process took the lease over; its discarded file has an expired line (a rewrite would drop it) and its own.
  // Written at once, before aa0 is discarded: its record runs right after that turn, and an asynchronous write racing it
  // (the thread pool's truncation against the record's read of the lease) let it find the lease still ours under load.
  const leasePath = join(host.dir, 'leases', 'aa.lease');
  const path = join(host.dir, 'leases', 'aa.discarded');
  writeFileSync(leasePath, JSON.stringify({ pid: process.pid, hostname: hostname(), time: new Date().toISOString(), id: 'new-holder' }));
  const text = `aa9 1\naaa ${Date.now()}\n`;
  writeFileSync(path, text);
  assert.ok(leases.discard('aa0'));
  // The record's turn, then a grow() that would rescan aa and rewrite its discarded file were it still ours.
  await new Promise((resolve) => setImmediate(resolve));
  await leases.grow(3).catch(() => {});
  assert.is(await readFile(path, 'utf8'), text, 'not rewritten by a former holder');
  await leases.close();
  assert.is(await readFile(path, 'utf8'), text, 'not appended to by a former holder');
  const handedOver = (await readdir(join(host.dir, 'leases'))).filter((name) => name.startsWith('aa.handed-over.'));
  assert.is(handedOver.length, 1, 'aa0 handed over');
  assert.match(await readFile(join(host.dir, 'leases', handedOver[0]!), 'utf8'), /^aa0 [0-9]+\n$/);
  const codes = reported.map((error) => (error as ProfilerStorageError).code);
  // Found another's as aa0 was recorded, right after the turn that discarded it: dropped then, no rewrite tried.
  assert.equal(codes, ['HK_PROFILER_STORAGE_LOCKED'], 'found taken over');
  assert.ok(existsSync(leasePath), 'the new holder\'s lease is left alone');
  // The new holder is gone without a scan: the next to lease aa takes the hand-over in at its scan, and merges it.
  await rm(leasePath);
  const next = new TokenLeases({ ...host }, { holderInfo: true, owner: 'next' });
  await next.grow(3);
  assert.equal(next.prefixes, ['aa']);
  assert.is(next.claim('aa0', () => false), false, 'handed over');
  assert.match(await readFile(path, 'utf8'), /^aaa [0-9]+\naa0 [0-9]+\n$/);
  assert.equal((await readdir(join(host.dir, 'leases'))).filter((name) => name.startsWith('aa.handed-over.')), [], 'merged, then removed');
  await next.close();
});

test('the discarded tokens of a lease taken over from a frozen holder are handed over when it wakes, those it discards after too: the new holder takes them at its next refresh, and keeps them in its discarded file', async (context) => {
  const { host, reported } = await fixture(context);
  await leaseAllBut(host.dir, 'aa');
  const leaseDir = join(host.dir, 'leases');
  const path = join(leaseDir, 'aa.discarded');
  /** A TokenLeases holding aa, with its refresh to call. */
  const holder = async (owner: string): Promise<{ leases: TokenLeases; refresh: () => void }> => {
    const { made, callbacks } = await withCapturedIntervals(30_000, async () => {
      const leases = new TokenLeases({ ...host }, { holderInfo: true, owner });
      context.cleanups.push(() => leases.close());
      await leases.grow(3);
      return leases;
    });
    assert.equal(made.prefixes, ['aa'], owner);
    return { leases: made, refresh: callbacks[0]! };
  };
  const first = await holder('first');
  assert.ok(first.leases.claim('aa0', () => false) && first.leases.claim('aa1', () => false));
  // aa0's profile is dropped: a client saw it, and first's discarded file says so at once.
  assert.ok(first.leases.discard('aa0'));
  await until(async () => /^aa0 /m.test(await readFile(path, 'utf8').catch(() => '')));
  // first is frozen past the lease's staleness: second takes it over, and scans a discarded file with aa0.
  const old = new Date(Date.now() - 3 * 60_000);
  await utimes(join(leaseDir, 'aa.lease'), old, old);
  const second = await holder('second');
  // first wakes: its refresh finds the lease taken over, and aa1, drawn before, is dropped after.
  first.refresh();
  await until(async () => first.leases.prefixes.length === 0);
  assert.equal(first.leases.prefixes, []);
  assert.ok(first.leases.discard('aa1'));
  await first.leases.close();
  // second's next refresh takes what first handed over, into its discarded file too.
  second.refresh();
  await until(async () => /^aa1 /m.test(await readFile(path, 'utf8').catch(() => '')));
  assert.is(second.leases.claim('aa0', () => false), false, 'aa0, discarded by the frozen holder before the takeover');
  assert.is(second.leases.claim('aa1', () => false), false, 'aa1, discarded by the frozen holder after it');
  await second.leases.close();
  assert.equal((await readFile(path, 'utf8')).split('\n').map((line) => line.split(' ')[0]).sort(), ['', 'aa0', 'aa1']);
  assert.equal((await readdir(leaseDir)).filter((name) => name.startsWith('aa.') && name !== 'aa.discarded'), [], 'nothing else of aa left');
  const third = await holder('third');
  for (const token of ['aa0', 'aa1']) assert.is(third.leases.claim(token, () => false), false, `${token}, for the next holder too`);
  await third.leases.close();
  assert.equal(reported.map((error) => (error as ProfilerStorageError).code), ['HK_PROFILER_STORAGE_LOCKED'], 'first\'s lease taken over, said once');
});

test('a discarded token is written to the discarded file at once, not at the next refresh: a holder frozen right after, its lease taken over, leaves none for the new holder to draw', async (context) => {
  const { made } = await holdingAaOnly(context);
  const { leases, host } = made;
  const leaseDir = join(host.dir, 'leases');
  const path = join(leaseDir, 'aa.discarded');
  assert.ok(leases.claim('aa0', () => false) && leases.claim('aa1', () => false));
  assert.ok(leases.discard('aa0'));
  // No refresh runs (the timer is captured): only the discard itself may write it.
  await until(async () => /^aa0 /m.test(await readFile(path, 'utf8').catch(() => '')));
  // The holder is frozen past the lease's staleness: another takes it over, and scans the prefix.
  const old = new Date(Date.now() - 3 * 60_000);
  await utimes(join(leaseDir, 'aa.lease'), old, old);
  const second = new TokenLeases({ ...host }, { holderInfo: true, owner: 'second' });
  context.cleanups.push(() => second.close());
  await second.grow(3);
  assert.equal(second.prefixes, ['aa']);
  assert.is(second.claim('aa0', () => false), false, 'aa0, whose client saw it, is not drawn by the new holder');
  assert.ok(second.claim('aa2', () => false), 'another token of aa is');
});

test('a held lease appends the tokens it discarded to its discarded file as they are discarded (and at each refresh), not only when given back: a holder frozen (or killed) past its lease loses none discarded before its last refresh', async (context) => {
  const { made, callbacks } = await holdingAaOnly(context);
  const { leases, host, reported } = made;
  const path = join(host.dir, 'leases', 'aa.discarded');
  assert.ok(leases.claim('aa0', () => false) && leases.discard('aa0'));
  callbacks[0]!();
  await until(async () => existsSync(path));
  assert.match(await readFile(path, 'utf8'), /^aa0 [0-9]+\n$/, 'recorded at the refresh');
  // Frozen past the lease's staleness, before a discard of aa1 reaches a refresh: another holder takes aa over.
  assert.ok(leases.claim('aa1', () => false) && leases.discard('aa1'));
  await until(async () => /^aa1 /m.test(await readFile(path, 'utf8')));
  const old = new Date(Date.now() - 3 * 60_000);
  await utimes(join(host.dir, 'leases', 'aa.lease'), old, old);
  const second = new TokenLeases({ ...host }, { holderInfo: true, owner: 'second' });
  await second.grow(3);
  assert.equal(second.prefixes, ['aa']);
  assert.is(second.claim('aa0', () => false), false, 'aa0, recorded before the freeze, is known to the new holder at once');
  assert.is(second.claim('aa1', () => false), false, 'aa1 too, recorded as it was discarded');
  await second.close();
  await leases.close();
  for (const token of ['aa0', 'aa1']) assert.equal((await readFile(path, 'utf8')).split('\n').filter((line) => line.startsWith(`${token} `)).length, 1, `${token} appended once, not again when given back`);
  assert.equal(reported, []);
});

test('a merge of handed-over tokens on a full disk leaves no temp file, at any refresh: the hand-over waits, its tokens taken, and is merged once there is room', async (context) => {
  const { made, callbacks } = await holdingAaOnly(context);
  const { leases, host, reported } = made;
  const leaseDir = join(host.dir, 'leases');
  const handOver = join(leaseDir, 'aa.handed-over.99999-abcd1234');
  // Written beside, and renamed into place once the disk is full: the holder takes a hand-over in as it appears, and merged it at once.
  await writeFile(join(host.dir, 'handed-over'), `aa7 ${Date.now()}\n`);
  const disk = simulatedDisk(host.dir, 0);
  try {
    fs.renameSync(join(host.dir, 'handed-over'), handOver);
    // The take-in as it appears fails too (where the directory can be watched).
    await until(async () => reported.length >= 1);
    const base = reported.length;
    for (let refresh = 1; refresh <= 3; refresh++) {
      callbacks[0]!();
      await until(async () => reported.length >= base + refresh);
      assert.is(reported.length, base + refresh, `refresh ${refresh}`);
      assert.is((reported[base + refresh - 1] as ProfilerStorageError).code, 'HK_PROFILER_STORAGE_DISCARDED');
      assert.equal((await readdir(leaseDir)).filter((name) => name.endsWith('.tmp')), [], `refresh ${refresh}: the failed rewrite's temp file is removed, not left for the sweep`);
    }
  } finally {
    disk.restore();
  }
  assert.ok(existsSync(handOver), 'not merged: kept for the next refresh');
  assert.is(leases.claim('aa7', () => false), false, 'taken all the same');
  callbacks[0]!();
  await until(async () => !existsSync(handOver));
  assert.match(await readFile(join(leaseDir, 'aa.discarded'), 'utf8'), /^aa7 [0-9]+\n$/);
  assert.equal((await readdir(leaseDir)).filter((name) => name.endsWith('.tmp')), []);
});

test('an append to a discarded file cut in its last line (a crash mid-append) whose rewrite failed starts on a line of its own: glued to the cut line, its first token was lost', async (context) => {
  const now = Date.now();
  const { made, callbacks } = await withCapturedIntervals(30_000, async () => {
    const ready = await fixture(context);
    await leaseAllBut(ready.host.dir, 'aa');
    await writeFile(join(ready.host.dir, 'leases', 'aa.discarded'), `aa1 ${now}\naa`);
    // The disk is full as the lease is taken: the rewrite without the cut line fails (its temp file cannot be written); room comes back after.
    const realWriteFile = fs.promises.writeFile;
    fs.promises.writeFile = (async (file: string, ...rest: unknown[]) => {
      if (typeof file === 'string' && file.endsWith('.tmp')) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      return (realWriteFile as (...args: unknown[]) => Promise<void>)(file, ...rest);
    }) as typeof fs.promises.writeFile;
    syncBuiltinESMExports();
    try {
      await ready.leases.grow(3);
    } finally {
      fs.promises.writeFile = realWriteFile;
      syncBuiltinESMExports();
    }
    return ready;
  });
  const { leases, host, reported } = made;
  const path = join(host.dir, 'leases', 'aa.discarded');
  assert.equal(leases.prefixes, ['aa']);
  assert.is(await readFile(path, 'utf8'), `aa1 ${now}\naa`, 'not rewritten');
  assert.ok(leases.claim('aa7', () => false) && leases.discard('aa7'));
  callbacks[0]!();
  await until(async () => /aa7/.test(await readFile(path, 'utf8')));
  await leases.close();
  assert.equal(reported.map((error) => (error as ProfilerStorageError).code), ['HK_PROFILER_STORAGE_DISCARDED'], 'the failed rewrite');
  const next = new TokenLeases({ ...host }, { holderInfo: true, owner: 'next' });
  await next.grow(3);
  assert.is(next.claim('aa7', () => false), false, 'aa7, a client saw it');
  assert.is(next.claim('aa1', () => false), false);
  assert.match(await readFile(path, 'utf8'), new RegExp(`^aa1 ${now}\naa7 [0-9]+\n$`), 'the cut line dropped at the rewrite');
  await next.close();
});

test('tokens a former holder hands over (it woke from a freeze and dropped them) are taken by the holder as the hand-over appears, not only at its next refresh 30 s on, meanwhile drawable', async (context) => {
  const { leases, host } = await fixture(context);
  await leaseAllBut(host.dir, 'aa');
  await leases.grow(6);
  assert.equal(leases.prefixes, ['aa']);
  // Written as #handOver writes it: a temp file renamed into place.
  const handOver = join(host.dir, 'leases', 'aa.handed-over.99999-abcd1234');
  await writeFile(`${handOver}.tmp`, `aa1234 ${Date.now()}\n`);
  await fs.promises.rename(`${handOver}.tmp`, handOver);
  // Bounded: up to a second for the holder to merge it (its refresh is 30 s away).
  await until(async () => !existsSync(handOver));
  assert.not.ok(existsSync(handOver), 'merged into the discarded file, then removed');
  assert.is(leases.claim('aa1234', () => false), false, 'taken: a client of the former holder saw it');
  assert.match(await readFile(join(host.dir, 'leases', 'aa.discarded'), 'utf8'), /^aa1234 [0-9]+\n$/);
});

test('dropped tokens are recorded right after the turn that dropped them, then at most every 250 ms: a storage behind the traffic drops in nearly every turn, and each record is a few synchronous file operations', async (context) => {
  const { made } = await holdingAaOnly(context);
  const { leases, host } = made;
  const path = join(host.dir, 'leases', 'aa.discarded');
  const recorded = async (token: string): Promise<boolean> => existsSync(path) && (await readFile(path, 'utf8')).includes(`${token} `);
  assert.ok(leases.claim('aa0', () => false) && leases.discard('aa0'));
  await until(() => recorded('aa0'));
  const firstSeen = performance.now();
  assert.ok(await recorded('aa0'), 'the first, right after its turn');
  assert.ok(leases.claim('aa1', () => false) && leases.discard('aa1'));
  await new Promise((resolve) => setTimeout(resolve, 30));
  // Under a load that held this test's 30 ms timer for 200 ms, the spacing may have passed: nothing to say then.
  if (performance.now() - firstSeen < 200) assert.not.ok(await recorded('aa1'), 'the next waits for the spacing');
  await until(() => recorded('aa1'));
  assert.ok(await recorded('aa1'), 'then it is recorded');
});

test('a discarded file that cannot be appended to is reported once, not at every turn of the event loop that drops a profile: retried at the next refresh, which reports it again', async (context) => {
  const { made, callbacks } = await holdingAaOnly(context);
  const { leases, host, reported } = made;
  // EISDIR at every append.
  await mkdir(join(host.dir, 'leases', 'aa.discarded'));
  for (let i = 0; i < 5; i++) {
    assert.ok(leases.claim(`aa${i}`, () => false) && leases.discard(`aa${i}`));
    // The next turn records them (and fails): bounded, up to a second.
    await until(async () => reported.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const codes = () => reported.map((error) => (error as ProfilerStorageError).code);
  assert.equal(codes(), ['HK_PROFILER_STORAGE_DISCARDED'], 'once for five turns that dropped one each');
  callbacks[0]!();
  await until(async () => reported.length > 1);
  assert.equal(codes(), ['HK_PROFILER_STORAGE_DISCARDED', 'HK_PROFILER_STORAGE_DISCARDED'], 'tried again, and said again, by the refresh');
  assert.ok(leases.claim('aa5', () => false) && leases.discard('aa5'));
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.is(reported.length, 2, 'still failing at the refresh: not tried at the next turn either');
  for (let i = 0; i < 6; i++) assert.is(leases.claim(`aa${i}`, () => false), false, `aa${i} still taken here`);
  await rm(join(host.dir, 'leases', 'aa.discarded'), { recursive: true });
});

test('a lease found another\'s as its discarded tokens are recorded (right after the turn that dropped them) is dropped and reported there, as a refresh does: it was kept, and drawn from, until the next refresh', async (context) => {
  const { made } = await holdingAaOnly(context);
  const { leases, host, reported } = made;
  await writeFile(join(host.dir, 'leases', 'aa.lease'), JSON.stringify({ pid: process.pid, hostname: hostname(), time: new Date().toISOString(), id: 'new-holder' }));
  assert.ok(leases.claim('aa0', () => false) && leases.discard('aa0'));
  const handOvers = async () => (await readdir(join(host.dir, 'leases'))).filter((name) => name.startsWith('aa.handed-over.'));
  await until(async () => (await handOvers()).length > 0);
  assert.is((await handOvers()).length, 1, 'aa0 handed over');
  assert.not.ok(leases.holds('aa'), 'no longer held');
  assert.is(leases.draw(3), null, 'nothing drawn from it');
  assert.equal(reported.map((error) => (error as ProfilerStorageError).code), ['HK_PROFILER_STORAGE_LOCKED']);
});

test('a discarded file that cannot be read while a hand-over waits is not appended to again at each refresh: the holder still knows what it appended, and the file grew by every discarded token every 30 s', async (context) => {
  const { made, callbacks } = await holdingAaOnly(context);
  const { leases, host } = made;
  const path = join(host.dir, 'leases', 'aa.discarded');
  assert.ok(leases.claim('aa0', () => false) && leases.discard('aa0'));
  await writeFile(join(host.dir, 'leases', 'aa.handed-over.99999-abcd1234'), `aa9 ${Date.now()}\n`);
  const realReadFile = fs.promises.readFile;
  fs.promises.readFile = (async (file: unknown, ...rest: unknown[]) => {
    if (file === path) throw Object.assign(new Error(`EIO: i/o error, open '${path}'`), { code: 'EIO' });
    return (realReadFile as (...args: unknown[]) => Promise<unknown>)(file, ...rest);
  }) as typeof fs.promises.readFile;
  syncBuiltinESMExports();
  try {
    for (let refresh = 1; refresh <= 3; refresh++) {
      const before = made.reported.length;
      callbacks[0]!();
      await until(async () => made.reported.length > before);
    }
  } finally {
    fs.promises.readFile = realReadFile;
    syncBuiltinESMExports();
  }
  assert.equal((await readFile(path, 'utf8')).split('\n').filter((line) => line.startsWith('aa0 ')).length, 1, 'aa0 appended once');
  callbacks[0]!();
  await until(async () => /^aa9 /m.test(await readFile(path, 'utf8')));
  assert.match(await readFile(path, 'utf8'), /^aa0 [0-9]+\naa9 [0-9]+\n$/, 'the hand-over merged once the file reads again');
});

test.run();
