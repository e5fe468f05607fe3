import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { TokenPool, generateToken, isValidToken } from '../../../lib/profiler/token.js';
import type { ProfilerStorage } from '../../../lib/profiler/storage/profiler-storage.js';
import { FileStorage, MemoryStorage } from '../../../lib/profiler/storage/index.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const test = suite('tokens');

/** A storage that only claims, remembering what it handed out. */
function claimingStorage(taken: Set<string>): ProfilerStorage {
  return {
    claim: async (token) => (taken.has(token) ? false : (taken.add(token), true)),
    release: async (token) => void taken.delete(token),
    write: async () => {},
    writeMany: async () => {},
    read: async () => null,
    find: async () => [],
    purge: async () => {},
    close: async () => {},
  };
}

test('a pool is refused a token length no storage can keep or page can open (not a whole number from 6 to 32), with the range named', async () => {
  for (const length of [0, 5, 33, 6.5, Number.NaN]) {
    assert.throws(() => new TokenPool(claimingStorage(new Set()), { length }), (error: unknown) => error instanceof TypeError && /from 6 to 32/.test(error.message), String(length));
  }
  for (const length of [6, 32]) await new TokenPool(claimingStorage(new Set()), { length }).close();
  // What was given is described, a string as one: "not 8" would read as a number refused.
  assert.throws(() => new TokenPool(claimingStorage(new Set()), { length: '8' as unknown as number }), (error: unknown) => error instanceof TypeError && error.message.endsWith('from 6 to 32, not the string "8".'));
});

test('a pool is refused a size that is no whole number from 0 to 65,536 (Infinity refilled without end and blocked the thread), with the range named', async () => {
  for (const size of [Number.NaN, -1, 1.5, Infinity, 65_537, '8']) {
    assert.throws(
      () => new TokenPool(claimingStorage(new Set()), { size: size as number }),
      (error: unknown) => error instanceof TypeError && /^A token pool's size is a whole number of tokens from 0 \(none kept ahead\) to 65536, not /.test(error.message),
      String(size),
    );
  }
  assert.throws(() => new TokenPool(claimingStorage(new Set()), { size: Infinity }), (error: unknown) => error instanceof Error && error.message.endsWith(', not number Infinity.'));
  for (const size of [0, 1, 65_536]) await new TokenPool(claimingStorage(new Set()), { size }).close();
});

test('tokens are 6 lowercase hex characters by default, configurable', () => {
  for (let i = 0; i < 200; i++) assert.match(generateToken(), /^[0-9a-f]{6}$/);
  assert.match(generateToken(12), /^[0-9a-f]{12}$/);
});

test('tokens of odd length are cut to it, and every hex digit shows in every position', () => {
  assert.match(generateToken(7), /^[0-9a-f]{7}$/);
  const seen = Array.from({ length: 6 }, () => new Set<string>());
  for (let i = 0; i < 4000; i++) [...generateToken()].forEach((digit, position) => seen[position]!.add(digit));
  for (const digits of seen) assert.is(digits.size, 16);
});

test('malformed tokens are refused by shape', () => {
  for (const bad of ['', 'abc', 'ABCDEF', '../../etc', 'abcdeg', 'a'.repeat(33), 'abc def']) assert.not.ok(isValidToken(bad), bad);
  assert.ok(isValidToken('0a1b2c'));
});

test('claim() draws again when a token is taken, never reusing one', async () => {
  const taken = new Set<string>();
  let calls = 0;
  const storage = claimingStorage(taken);
  const pool = new TokenPool({ ...storage, claim: async (token) => (++calls <= 3 ? false : storage.claim(token)) }, { size: 0 });
  const token = await pool.claim();
  assert.ok(calls >= 4, 'collisions were drawn again');
  assert.ok(taken.has(token));
});

test('the pool hands out distinct pre-claimed tokens and gives unused ones back on close', async () => {
  const taken = new Set<string>();
  const pool = new TokenPool(claimingStorage(taken), { size: 8 });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const handed = new Set<string>();
  for (let i = 0; i < 6; i++) {
    const token = pool.take();
    assert.ok(token !== null);
    handed.add(token!);
  }
  assert.is(handed.size, 6);
  await pool.close();
  assert.equal([...taken].sort(), [...handed].sort(), 'only the handed-out tokens stay claimed');
});

test('a failing storage makes claim() reject after bounded draws', async () => {
  const pool = new TokenPool({ ...claimingStorage(new Set()), claim: async () => false }, { size: 0 });
  await pool.claim().then(
    () => assert.unreachable(),
    (error: Error) => assert.match(error.message, /Could not claim/),
  );
});

test('the pool prefers the storage\'s drawToken over random claims', async () => {
  const drawn: string[] = [];
  let claims = 0;
  const storage: ProfilerStorage = {
    ...claimingStorage(new Set()),
    claim: async () => (++claims, true),
    drawToken: async (length) => {
      const token = (drawn.length + 1).toString(16).padStart(length, '0');
      drawn.push(token);
      return token;
    },
  };
  const pool = new TokenPool(storage, { size: 16, length: 8 });
  await new Promise((resolve) => setTimeout(resolve, 20));
  const token = pool.take();
  assert.ok(token !== null && drawn.includes(token));
  assert.match(token!, /^[0-9a-f]{8}$/);
  assert.ok(drawn.includes(await pool.claim()));
  assert.is(claims, 0, 'claim() was never called');
  await pool.close();
});

test('claims on an empty pool wait for the bulk draw instead of drawing one each; a failed bulk draw lets them draw their own', async () => {
  let next = 0;
  let bulkCalls = 0;
  let singleCalls = 0;
  let failBulk = false;
  const token = (): string => (++next).toString(16).padStart(6, '0');
  const storage: ProfilerStorage = {
    ...claimingStorage(new Set()),
    // A slow round trip, as to a ThreadedFileStorage's worker under load.
    drawTokens: async (_length, count) => {
      bulkCalls++;
      await new Promise((resolve) => setTimeout(resolve, 30));
      if (failBulk) throw new Error('storage down');
      return Array.from({ length: count }, token);
    },
    drawToken: async () => (singleCalls++, token()),
  };
  const pool = new TokenPool(storage, { size: 4 });
  await new Promise((resolve) => setTimeout(resolve, 60));
  while (pool.take() !== null);
  const before = bulkCalls;
  const claimed = await Promise.all(Array.from({ length: 20 }, () => pool.claim()));
  assert.is(new Set(claimed).size, 20, 'distinct tokens');
  assert.is(singleCalls, 0, 'no claim drew its own token');
  assert.ok(bulkCalls - before <= 2, `${bulkCalls - before} bulk draws for 20 waiting claims`);

  failBulk = true;
  while (pool.take() !== null);
  await new Promise((resolve) => setTimeout(resolve, 60));
  const fallback = await Promise.all([pool.claim(), pool.claim()]);
  assert.is(new Set(fallback).size, 2);
  assert.is(singleCalls, 2, 'each drew its own after the bulk draw failed');
  await pool.close();
});

test('drawTokens: distinct claimed tokens in one call, from memory and file storages; the pool uses it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'http-kernel-draw-'));
  const file = new FileStorage({ dir });
  try {
    for (const storage of [new MemoryStorage(), file]) {
      const tokens = await storage.drawTokens(6, 50);
      assert.is(tokens.length, 50);
      assert.is(new Set(tokens).size, 50, 'distinct');
      assert.ok(tokens.every(isValidToken));
      for (const token of tokens.slice(0, 5)) assert.not.ok(await storage.claim(token), `${token} is taken`);
      let calls = 0;
      const counting: ProfilerStorage = {
        claim: (token) => storage.claim(token),
        release: (token) => storage.release(token),
        write: (profile) => storage.write(profile),
        writeMany: (profiles) => storage.writeMany(profiles),
        read: (token) => storage.read(token),
        find: (criteria) => storage.find(criteria),
        purge: () => storage.purge(),
        close: async () => {},
        drawTokens: (length, count) => {
          calls++;
          return storage.drawTokens(length, count);
        },
      };
      const pool = new TokenPool(counting, { size: 64 });
      for (let i = 0; i < 100 && pool.take() === null; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      assert.ok(calls >= 1 && calls <= 3, `refilled in ${calls} call(s)`);
      await pool.close();
    }
  } finally {
    await file.close();
    rmSync(dir, { recursive: true, force: true });
  }
});


test('once ready(), the pool hands out only distinct valid tokens, refilled in the background as they are taken, with and without bulk draws', async () => {
  for (const storage of [claimingStorage(new Set()), new MemoryStorage()]) {
    const pool = new TokenPool(storage, { size: 4 });
    await pool.ready();
    const handed = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const token = pool.take();
      assert.ok(token !== null && isValidToken(token) && token.length === 6, `take ${i}: ${token}`);
      handed.add(token);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    assert.is(handed.size, 20);
    await pool.close();
  }
});

test('a storage that failed to give tokens is not asked again by every take() (a full disk), only claim() draws then', async () => {
  let claims = 0;
  const pool = new TokenPool({ ...claimingStorage(new Set()), claim: async () => (claims++, Promise.reject(new Error('disk full'))) }, { size: 4 });
  await pool.ready();
  const failed = claims;
  assert.ok(failed > 0);
  for (let i = 0; i < 50; i++) {
    assert.is(pool.take(), null);
    await new Promise((resolve) => setImmediate(resolve));
  }
  assert.is(claims, failed, 'no refill within 5 s of the failed one');
  await pool.close();
});

test('a pooled token drawn over a minute ago (the process was frozen past its lease) is given back, not handed out: another process may have taken its lease over and drawn it since', async () => {
  const realNow = performance.now;
  let skew = 0;
  performance.now = () => realNow.call(performance) + skew;
  try {
    const taken = new Set<string>();
    const released: string[] = [];
    const storage: ProfilerStorage = { ...claimingStorage(taken), release: async (token) => void (released.push(token), taken.delete(token)) };
    const pool = new TokenPool(storage, { size: 4 });
    await pool.ready();
    const before = new Set(taken);
    const fresh = pool.take();
    assert.ok(fresh !== null && before.has(fresh), 'a token drawn a moment ago is handed out');
    // Frozen for three minutes (SIGSTOP): the monotonic clock went on.
    skew = 3 * 60_000;
    const token = pool.take();
    assert.ok(token === null || !before.has(token), `${token}: drawn before the freeze`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(new Set(released), new Set([...before].filter((each) => each !== fresh)), 'the others given back');
    await pool.close();
  } finally {
    performance.now = realNow;
  }
});

test('claim() after close() still gives a token, from a storage that draws in bulk too (a request in flight at shutdown)', async () => {
  const storage = new MemoryStorage();
  const pool = new TokenPool(storage, { size: 2 });
  await pool.ready();
  await pool.close();
  const token = await Promise.race([pool.claim(), new Promise<string>((resolve) => setTimeout(() => resolve('timed out'), 1_000))]);
  assert.ok(isValidToken(token), token);
});

test.run();
