import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FileLock, FileLockTimeoutError, type FileLockStep } from '../../../lib/fs/file-lock.js';

const test = suite('FileLock');

let dir = '';
let counter = 0;

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hk-file-lock-'));
});

test.after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection, but the promise resolved');
}

/** As FileLock records it: this process's pid namespace, null where there is none. */
const PID_NAMESPACE = (() => {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return null;
  }
})();

const lockPath = () => join(dir, `lock-${++counter}`);

/** A point one locker waits at until the test lets it on; `reached` resolves when it got there. */
function gate(): { reached: Promise<void>; arrive: () => void; opened: Promise<void>; open: () => void } {
  let arrive = () => {};
  let open = () => {};
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { reached, arrive, opened, open };
}

/** Counts the lockers under takeover (between `took-over` and `giving-up-takeover`), keeping the most seen at once. */
function takeoverCounter(): { count: (step: FileLockStep) => void; most: () => number } {
  let now = 0;
  let most = 0;
  return {
    count: (step) => {
      if (step === 'took-over') most = Math.max(most, ++now);
      if (step === 'giving-up-takeover') now--;
    },
    most: () => most,
  };
}

/** Gives `path` an mtime `ms` in the past. */
async function age(path: string, ms: number): Promise<void> {
  const old = new Date(Date.now() - ms);
  await utimes(path, old, old);
}

test('only one of two lockers on a path holds it until it is released', async () => {
  const path = lockPath();
  const first = new FileLock(path);
  const second = new FileLock(path);
  assert.is(await first.tryAcquire(), true);
  assert.is(await second.tryAcquire(), false);
  assert.is(await first.stillHeld(), true);
  await first.release();
  assert.not.ok(existsSync(path));
  assert.is(await second.tryAcquire(), true);
  await second.release();
});

test('a holder inside this process named dead (deadOwners) is taken over at once; a live one and an unnamed one are not', async () => {
  const path = lockPath();
  const holder = new FileLock(path, 60_000, { holderInfo: true, owner: 'thread-1' });
  assert.is(await holder.tryAcquire(), true);
  assert.is(JSON.parse(await readFile(path, 'utf8')).owner, 'thread-1');
  // Same pid, which is alive: without the owner's death known, the lock is held.
  assert.is(await new FileLock(path, 60_000, { holderInfo: true, owner: 'thread-2' }).tryAcquire(), false);
  assert.is(await new FileLock(path, 60_000, { holderInfo: true, deadOwners: new Set(['thread-3']) }).heldByAnother(), true);
  const next = new FileLock(path, 60_000, { holderInfo: true, owner: 'thread-2', deadOwners: new Set(['thread-1']) });
  assert.is(await next.heldByAnother(), false);
  assert.is(await next.tryAcquire(), true);
  assert.is(JSON.parse(await readFile(path, 'utf8')).owner, 'thread-2');
  assert.is(await holder.stillHeld(), false, 'the dead owner would learn it');
  await next.release();
});

test('mayBeOurs is true from the start of an acquisition to the end of the release (an appender must not wait for its own lock)', async () => {
  const lock = new FileLock(join(dir, `own-${counter++}.lock`));
  const other = new FileLock(lock.path);
  assert.not.ok(lock.mayBeOurs);
  const acquiring = lock.tryAcquire();
  assert.ok(lock.mayBeOurs, 'while the lock file is being created');
  assert.is(await acquiring, true);
  assert.ok(lock.mayBeOurs && lock.held);
  assert.not.ok(other.mayBeOurs, 'another instance on the same path');
  const releasing = lock.release();
  assert.not.ok(lock.held);
  assert.ok(lock.mayBeOurs, 'while the lock file is being removed');
  await releasing;
  assert.not.ok(lock.mayBeOurs);
  assert.not.ok(existsSync(lock.path));
});

test('a lock whose mtime is older than staleMs is taken over; its former holder learns it', async () => {
  const path = lockPath();
  const crashed = new FileLock(path, 1_000);
  assert.is(await crashed.tryAcquire(), true);
  const old = new Date(Date.now() - 5_000);
  await utimes(path, old, old);
  const next = new FileLock(path, 1_000);
  assert.is(await next.tryAcquire(), true);
  assert.is(await crashed.stillHeld(), false);
  await crashed.release();
  assert.ok(existsSync(path), 'the former holder does not remove the new holder\'s lock');
  await next.release();
});

test('a lock held with refreshWhileHeld is kept fresh past staleMs, so another locker waits; after its release the timer touches nothing', async () => {
  const path = lockPath();
  const holder = new FileLock(path, 400, { refreshWhileHeld: true });
  assert.is(await holder.tryAcquire(), true);
  await sleep(1_200); // three times staleMs, twelve refreshes
  const other = new FileLock(path, 400);
  assert.is(await other.heldByAnother(), true);
  assert.is(await other.tryAcquire(), false, 'a live holder that took longer than staleMs keeps its lock');
  assert.is(await holder.stillHeld(), true);
  await holder.release();
  assert.not.ok(existsSync(path));
  // A crashed holder's lock at the same path: the released lock's timer no longer refreshes it.
  await writeFile(path, 'crashed');
  const old = new Date(Date.now() - 60_000);
  await utimes(path, old, old);
  await sleep(400);
  assert.ok(Math.abs((await stat(path)).mtimeMs - old.getTime()) < 1_000, 'the crashed holder\'s mtime is left as it was');
  assert.is(await other.tryAcquire(), true);
  await other.release();
});

test('a lock left by a dead holder and met by four lockers at once is taken by exactly one of them, and left by none', async () => {
  // Moved aside by one locker while another judged it, the new holder's lock was put back only
  // after a third had made its own: two held it (about one round in five).
  for (let round = 0; round < 50; round++) {
    const path = lockPath();
    await writeFile(path, JSON.stringify({ pid: 2 ** 22 + 1, hostname: hostname(), pidns: PID_NAMESPACE, time: new Date().toISOString(), id: 'dead' }));
    const lockers = [1, 2, 3, 4].map(() => new FileLock(path, 60_000, { holderInfo: true }));
    const taken = await Promise.all(lockers.map((lock) => lock.tryAcquire()));
    assert.is(taken.filter(Boolean).length, 1, `round ${round}: ${taken.join(' ')}`);
    const holder = lockers[taken.indexOf(true)]!;
    assert.ok(await holder.stillHeld(), 'the file is the holder\'s');
    await Promise.all(lockers.map((lock) => lock.release()));
    assert.equal(readdirSync(dir).filter((name) => name.startsWith(basename(path))), [], 'no lock or takeover file left');
  }
});

test('a takeover file left by a locker that died during its takeover goes once staleMs old', async () => {
  const path = lockPath();
  await writeFile(path, 'torn');
  await writeFile(`${path}.takeover`, 'dead taker');
  const old = new Date(Date.now() - 5_000);
  await utimes(path, old, old);
  const lock = new FileLock(path, 1_000);
  assert.is(await lock.tryAcquire(), false, 'a takeover under way (its file is young) is waited for');
  await utimes(`${path}.takeover`, old, old);
  assert.is(await lock.tryAcquire(), true);
  assert.not.ok(existsSync(`${path}.takeover`));
  await lock.release();
});

test('two lockers that found the same takeover file abandoned are not under takeover at once: the later one leaves the first one\'s new takeover file alone', async () => {
  // Both judged the crashed taker's file old; B removed it and made its own; C, going by the age
  // of the file it had judged, removed B's and made its own too.
  const path = lockPath();
  await writeFile(path, 'crashed holder');
  await age(path, 5_000);
  await writeFile(`${path}.takeover`, 'crashed taker');
  await age(`${path}.takeover`, 5_000);
  const counter = takeoverCounter();
  const cJudged = gate();
  const bTookOver = gate();
  const c = new FileLock(path, 1_000, {
    onStep: async (step) => {
      counter.count(step);
      if (step !== 'judged-abandoned') return;
      cJudged.arrive();
      await cJudged.opened;
    },
  });
  const b = new FileLock(path, 1_000, {
    onStep: async (step) => {
      counter.count(step);
      if (step !== 'took-over') return;
      bTookOver.arrive();
      await bTookOver.opened;
    },
  });
  const cTaking = c.tryAcquire();
  await cJudged.reached;
  const bTaking = b.tryAcquire();
  await bTookOver.reached;
  cJudged.open();
  const cTook = await cTaking;
  bTookOver.open();
  const bTook = await bTaking;
  assert.is(counter.most(), 1, 'both were under takeover at once');
  assert.equal({ b: bTook, c: cTook }, { b: true, c: false });
  assert.ok(await b.stillHeld());
  await b.release();
  assert.equal(readdirSync(dir).filter((name) => name.startsWith(basename(path))), [], 'no lock or takeover file left');
});

test('a taker frozen past staleMs, whose takeover file was broken as abandoned meanwhile, leaves the new taker\'s file alone when it wakes', async () => {
  // A woke and removed `<lock>.takeover` by its name: B's, made in place of A's, while B was under
  // it; a third locker could then take over beside B.
  const path = lockPath();
  await writeFile(path, 'crashed holder');
  await age(path, 5_000);
  const aTookOver = gate();
  const bTookOver = gate();
  const a = new FileLock(path, 1_000, {
    onStep: async (step) => {
      if (step !== 'took-over') return;
      aTookOver.arrive();
      await aTookOver.opened;
    },
  });
  const b = new FileLock(path, 1_000, {
    onStep: async (step) => {
      if (step !== 'took-over') return;
      bTookOver.arrive();
      await bTookOver.opened;
    },
  });
  const aTaking = a.tryAcquire();
  await aTookOver.reached;
  await age(`${path}.takeover`, 5_000); // A froze for longer than staleMs
  const bTaking = b.tryAcquire();
  await bTookOver.reached;
  const bs = await stat(`${path}.takeover`, { bigint: true });
  aTookOver.open();
  assert.is(await aTaking, true, 'A removed the stale lock and took it');
  const left = await stat(`${path}.takeover`, { bigint: true }).catch(() => null);
  assert.ok(left !== null && left.ino === bs.ino && left.mtimeNs === bs.mtimeNs, 'B\'s takeover file is still there while B is under it');
  bTookOver.open();
  assert.is(await bTaking, false, 'B finds A\'s live lock');
  assert.ok(await a.stillHeld());
  await a.release();
  assert.equal(readdirSync(dir).filter((name) => name.startsWith(basename(path))), [], 'no lock, takeover or breaker file left');
});

/** The breaker file of the file at `path`, as FileLock names it: after the file's device, inode and mtime. */
async function breakerOf(lock: string, path: string): Promise<string> {
  const { dev, ino, mtimeNs } = await stat(path, { bigint: true });
  return `${lock}.takeover.${dev}-${ino}-${mtimeNs}`;
}

test('while one locker breaks an abandoned takeover file, another that judged it abandoned too waits rather than break it as well', async () => {
  const path = lockPath();
  await writeFile(path, 'crashed holder');
  await age(path, 5_000);
  await writeFile(`${path}.takeover`, 'crashed taker');
  await age(`${path}.takeover`, 5_000);
  const cBreaking = gate();
  const c = new FileLock(path, 1_000, {
    onStep: async (step) => {
      if (step !== 'breaking') return;
      cBreaking.arrive();
      await cBreaking.opened;
    },
  });
  const cTaking = c.acquire(2_000);
  await Promise.race([cBreaking.reached, cTaking.then(() => Promise.reject(new Error('took the lock without breaking the takeover file under a breaker file')))]);
  const b = new FileLock(path, 1_000);
  assert.is(await b.tryAcquire(), false, 'its breaker file is young: a break is under way');
  assert.ok(existsSync(`${path}.takeover`), 'the abandoned takeover file is left to the one breaking it');
  cBreaking.open();
  await cTaking;
  assert.ok(await c.stillHeld());
  await c.release();
});

test('a takeover file whose breaker crashed while breaking it is waited for until the breaker file is staleMs old, then both go', async () => {
  const path = lockPath();
  await writeFile(path, 'crashed holder');
  await age(path, 5_000);
  await writeFile(`${path}.takeover`, 'crashed taker');
  await age(`${path}.takeover`, 5_000);
  const breaker = await breakerOf(path, `${path}.takeover`);
  await writeFile(breaker, '');
  const lock = new FileLock(path, 1_000);
  assert.is(await lock.tryAcquire(), false, 'a breaker at work (its file is young) is waited for');
  assert.ok(existsSync(`${path}.takeover`));
  await age(breaker, 5_000);
  await lock.acquire(2_000);
  assert.ok(await lock.stillHeld());
  assert.equal(readdirSync(dir).filter((name) => name.startsWith(basename(path))), [basename(path)], 'no takeover or breaker file left');
  await lock.release();
});

test('a breaker file whose file is gone (its breaker crashed after removing it) is swept by the next takeover of a stale lock; one whose file is there, and other files, stay', async () => {
  const path = lockPath();
  await writeFile(path, 'crashed holder');
  await age(path, 5_000);
  const orphan = `${path}.takeover.1-2-3`;
  await writeFile(orphan, '');
  const breakingOrphan = await breakerOf(path, orphan);
  await writeFile(breakingOrphan, '');
  await writeFile(`${path}.takeover.notes`, 'not ours');
  const lock = new FileLock(path, 1_000);
  assert.is(await lock.tryAcquire(), true);
  assert.not.ok(existsSync(orphan), 'no file has its identity: it guards nothing');
  assert.ok(existsSync(breakingOrphan), 'its file was there when looked at');
  assert.ok(existsSync(`${path}.takeover.notes`));
  await lock.release();
});

test('an empty lock file (holder killed between create and write) goes stale like any other', async () => {
  const path = lockPath();
  await writeFile(path, '');
  const old = new Date(Date.now() - 60_000);
  await utimes(path, old, old);
  const lock = new FileLock(path);
  assert.is(await lock.tryAcquire(), true);
  assert.ok((await readFile(path, 'utf8')).length > 0);
  await lock.release();
});

test('acquire waits for the holder and gives up after its timeout with a FileLockTimeoutError naming the file', async () => {
  const path = lockPath();
  const holder = new FileLock(path);
  await holder.tryAcquire();
  const waiter = new FileLock(path);
  const error = await rejection(waiter.acquire(200));
  assert.instance(error, FileLockTimeoutError);
  assert.is((error as FileLockTimeoutError).code, 'HK_FILE_LOCK_TIMEOUT');
  assert.is(error.message, `${path} is held by another process (waited 200 ms)`);
  assert.not.match(error.message, /profiler/);
  setTimeout(() => void holder.release(), 100);
  await waiter.acquire(2_000);
  assert.is(await waiter.stillHeld(), true);
  await waiter.release();
});

test('acquire counts its timeout on the monotonic clock: a wall clock stepped ahead meanwhile (less than staleMs) does not give up at once', async () => {
  const path = lockPath();
  const holder = new FileLock(path, 60_000);
  await holder.tryAcquire();
  const waiter = new FileLock(path, 60_000);
  let attempts = 0;
  const tryAcquire = waiter.tryAcquire.bind(waiter);
  waiter.tryAcquire = () => (attempts++, tryAcquire());
  const realNow = Date.now;
  let settled = false;
  // Its failure is kept to be asserted on, not left unhandled while the loop below waits.
  const acquiring = waiter.acquire(5_000).then(() => null, (error: unknown) => error).finally(() => (settled = true));
  // NTP steps the clock 10 s ahead as the wait begins: no time has passed, and the holder's mtime is still fresh.
  Date.now = () => realNow() + 10_000;
  try {
    while (attempts < 3 && !settled) await sleep(10);
  } finally {
    Date.now = realNow;
  }
  await holder.release();
  assert.is(await acquiring, null, 'acquired once the holder let go, not timed out');
  assert.ok(attempts >= 3, `${attempts} attempts`);
  assert.is(await waiter.stillHeld(), true);
  await waiter.release();
});

test('a lock file made but not written (the disk full, or no room left under the file size limit) is removed, not left holding the lock for nobody', () => {
  const path = lockPath();
  const moduleUrl = new URL('../../../lib/fs/file-lock.js', import.meta.url).href;
  const script = `import { existsSync, readdirSync, readlinkSync } from 'node:fs';
const { FileLock } = await import(${JSON.stringify(moduleUrl)});
try { await new FileLock(${JSON.stringify(path)}, 10000, { holderInfo: true }).tryAcquire(); console.log('acquired'); }
catch (error) { console.log(error.code, existsSync(${JSON.stringify(path)}) ? 'left' : 'removed'); }`;
  // A file size limit of 0 lets the file be made and fails its first write (EFBIG), as a full disk fails it with ENOSPC.
  const child = spawnSync('/bin/sh', ['-c', `trap '' XFSZ; ulimit -f 0; exec "$0" --input-type=module -e "$1"`, process.execPath, script], { encoding: 'utf8', timeout: 10_000 });
  assert.is(child.stdout.trim(), 'EFBIG removed', child.stderr);
  assert.not.ok(existsSync(path));
});

test.run();
