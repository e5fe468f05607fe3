import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync, utimesSync, type BigIntStats } from 'node:fs';
import { open, readdir, readFile, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorCode } from './error-code.js';

/** A lock not refreshed for this long belongs to a crashed or frozen holder and is taken over. */
export const DEFAULT_LOCK_STALE_MS = 10_000;

/** Thrown by FileLock.acquire when the lock stayed held by another process for the whole wait. */
export class FileLockTimeoutError extends Error {
  readonly code = 'HK_FILE_LOCK_TIMEOUT';
  override readonly name = 'FileLockTimeoutError';

  constructor(
    readonly path: string,
    readonly waitedMs: number,
  ) {
    super(`${path} is held by another process (waited ${waitedMs} ms)`);
  }
}

/** How a FileLock records and judges its holders. */
export interface FileLockOptions {
  /** Record the holder's pid, hostname and pid namespace: a lock of a dead process on this host is taken over at once. */
  holderInfo?: boolean;
  /** With holderInfo: who inside this process holds it (a thread, say), recorded with the pid. */
  owner?: string;
  /** With holderInfo: owners inside this process that are gone; their locks are taken over at once. */
  deadOwners?: ReadonlySet<string>;
  /**
   * Refresh the lock every staleMs / 4 while it is held (an unref'd timer, stopped on release), so
   * work that outlasts staleMs keeps it: only a crashed holder's (or a blocked event loop's) goes stale.
   */
  refreshWhileHeld?: boolean;
  /**
   * @internal For tests: awaited between the file system steps of a takeover (never on a free lock's
   * path), so a test can interleave lockers as no run would by chance.
   */
  onStep?: (step: FileLockStep, path: string) => Promise<void> | void;
}

/**
 * @internal Where a takeover calls `onStep`: `took-over` once `<lock>.takeover` is made (`path`), `giving-up-takeover`
 * before it is removed, `judged-abandoned` once a file left by a crash in a takeover (`path`) was found old enough to remove,
 * `breaking` once a breaker file is made (for such a file, or for its own takeover file as it gives it up).
 */
export type FileLockStep = 'took-over' | 'giving-up-takeover' | 'judged-abandoned' | 'breaking';

/**
 * A cross-process lock: a file created with `open(path, 'wx')`, so exactly one process creates it.
 * The holder refreshes its mtime while working; one left by a crashed holder is taken over once
 * its mtime is `staleMs` old. The file holds the holder's id, so a holder can check before it
 * commits that nobody took the lock over in the meantime.
 */
export class FileLock {
  readonly path: string;
  readonly staleMs: number;
  readonly #id = `${process.pid}-${randomBytes(6).toString('hex')}`;
  readonly #holderInfo: boolean;
  readonly #owner: string | undefined;
  readonly #deadOwners: ReadonlySet<string>;
  readonly #refreshWhileHeld: boolean;
  readonly #onStep: FileLockOptions['onStep'];
  /** The refreshWhileHeld timer, while the lock is held. */
  #refresher: NodeJS.Timeout | undefined;
  /** What the file holds while we hold it: the id, or (holderInfo) JSON of pid, hostname, time and id. */
  #content: string;
  #held = false;
  /** Acquisitions and releases under way (see mayBeOurs). */
  #changing = 0;

  /**
   * With `holderInfo`, the file records the holder's pid and hostname, and a lock whose holder
   * ran on this host and is no longer alive (`process.kill(pid, 0)` fails with ESRCH) is taken
   * over at once, without waiting for its mtime to age.
   */
  constructor(path: string, staleMs = DEFAULT_LOCK_STALE_MS, options: FileLockOptions = {}) {
    this.path = path;
    this.staleMs = staleMs;
    this.#holderInfo = options.holderInfo ?? false;
    this.#owner = options.owner;
    this.#deadOwners = options.deadOwners ?? new Set();
    this.#refreshWhileHeld = options.refreshWhileHeld ?? false;
    this.#onStep = options.onStep;
    this.#content = this.#id;
  }

  get held(): boolean {
    return this.#held;
  }

  /**
   * True while the lock file may be this instance's: held, or being taken or given up (the file
   * exists a few loop turns before `held` turns true, and after it turns false). Who waits for
   * the lock's holder must not wait for itself.
   */
  get mayBeOurs(): boolean {
    return this.#held || this.#changing > 0;
  }

  /** Takes the lock if it is free or stale; false when a live holder has it. */
  async tryAcquire(): Promise<boolean> {
    if (this.#held) return true;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (this.#holderInfo) {
        this.#content = JSON.stringify({ pid: process.pid, hostname: hostname(), pidns: PID_NAMESPACE, time: new Date().toISOString(), id: this.#id, ...(this.#owner === undefined ? {} : { owner: this.#owner }) });
      }
      this.#changing++;
      try {
        await writeFile(this.path, this.#content, { flag: 'wx' });
        this.#held = true;
        if (this.#refreshWhileHeld) this.#startRefreshing();
        return true;
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') {
          // Made but not written (a full disk: ENOSPC): left there, the empty file would hold the lock
          // for nobody until it went stale. It is ours (wx), and too young for anyone to take over.
          await unlink(this.path).catch(() => {});
          throw error;
        }
      } finally {
        this.#changing--;
      }
      if (!(await this.#removeIfStale())) return false;
    }
    return false;
  }

  /** Waits (polling) until the lock is taken; rejects with a FileLockTimeoutError after `timeoutMs`. */
  async acquire(timeoutMs: number): Promise<void> {
    // The monotonic clock: a wall clock NTP steps ahead meanwhile gave up at once, one set back waited the jump too.
    const deadline = performance.now() + timeoutMs;
    while (!(await this.tryAcquire())) {
      if (performance.now() >= deadline) throw new FileLockTimeoutError(this.path, timeoutMs);
      await sleep(20 + Math.random() * 30);
    }
  }

  /**
   * Marks the lock as alive, so long work is not mistaken for a crash. `strict`: a failure (EROFS,
   * EMFILE, a file gone) is thrown, for a holder that must know that others may soon take the lock over.
   */
  async refresh(strict = false): Promise<void> {
    if (!this.#held) return;
    const now = new Date();
    await utimes(this.path, now, now).catch((error: unknown) => {
      if (strict) throw error;
    });
  }

  /**
   * refresh() and stillHeld() in one go, synchronously: for a critical section that must not yield to the event loop.
   * `strict`: false only when the file is gone or another's; a failure to look (EMFILE, EACCES, EIO) or to refresh it is thrown.
   */
  refreshedAndStillHeldSync(strict = false): boolean {
    if (!this.#held) return false;
    try {
      if (readFileSync(this.path, 'utf8') !== this.#content) return false;
      const now = new Date();
      utimesSync(this.path, now, now);
      return true;
    } catch (error) {
      if (strict && !isGone(error)) throw error;
      return false;
    }
  }

  /**
   * Whether the lock file is still ours (nobody took it over as stale). `strict`: false only when the
   * file is gone or another's; a failure to read it (EMFILE, EACCES, EIO) is thrown, as it says nothing of who holds it.
   */
  async stillHeld(strict = false): Promise<boolean> {
    if (!this.#held) return false;
    try {
      return (await readFile(this.path, 'utf8')) === this.#content;
    } catch (error) {
      if (strict && !isGone(error)) throw error;
      return false;
    }
  }

  async release(): Promise<void> {
    if (!this.#held) return;
    this.#held = false;
    clearInterval(this.#refresher);
    this.#refresher = undefined;
    this.#changing++;
    try {
      if (await this.#isOurs()) await unlink(this.path).catch(() => {});
    } finally {
      this.#changing--;
    }
  }

  #startRefreshing(): void {
    const timer = setInterval(() => void this.#refreshIfStillHeld(timer), Math.max(1, Math.floor(this.staleMs / 4)));
    timer.unref();
    this.#refresher = timer;
  }

  /**
   * The timer's refresh: a lock taken over meanwhile is the new holder's, not to be kept alive by us.
   * Stops its own `timer`: released and taken again while the check was read, the lock has another.
   */
  async #refreshIfStillHeld(timer: NodeJS.Timeout): Promise<void> {
    if (await this.stillHeld()) await this.refresh();
    else clearInterval(timer);
  }

  async #isOurs(): Promise<boolean> {
    try {
      return (await readFile(this.path, 'utf8')) === this.#content;
    } catch {
      return false;
    }
  }

  /**
   * Removes a stale lock; true when the caller should try to create it again. Takers remove it one at
   * a time, under a second file made with O_EXCL (`<path>.takeover`, held for a few system calls), and
   * judge it again under that: no other taker can have replaced it meanwhile, so the file removed is
   * the stale one. (Moving the lock aside and putting it back when it proved live left it missing
   * for a moment: a third locker made its own then, and two held the lock.) A takeover file left by
   * a crash goes once staleMs old (#removeAbandoned), so the taker removes its own only while it is still
   * its own (#removeIfStill); under it, breaker files left by crashes are swept.
   */
  async #removeIfStale(): Promise<boolean> {
    const seen = await this.#judge(this.path);
    if (seen === null) return true;
    if (!seen.stale) return false;
    const takeover = `${this.path}.takeover`;
    let handle;
    try {
      handle = await open(takeover, 'wx');
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
      return this.#removeAbandoned(takeover);
    }
    // Its identity, to remove it only while it is still ours (see #removeIfStill).
    let ours: string;
    try {
      await handle.writeFile(this.#id);
      ours = identityOf(await handle.stat({ bigint: true }));
    } catch (error) {
      await unlink(takeover).catch(() => {}); // made but not written (a full disk): ours, as in tryAcquire
      throw error;
    } finally {
      await handle.close();
    }
    try {
      await this.#onStep?.('took-over', takeover);
      const judged = await this.#judge(this.path);
      if (judged === null) return true;
      if (!judged.stale) return false;
      // Only its holder, waking after staleMs, could have removed it since (and another made one): then it stays.
      // A file made right after an unlink often gets the same inode back: its time tells it apart.
      const current = await stat(this.path).catch(() => null);
      if (current === null || (current.ino === judged.ino && current.dev === judged.dev && current.mtimeMs === judged.mtimeMs)) await unlink(this.path).catch(() => {});
      await this.#sweepBreakers(takeover);
      return true;
    } finally {
      await this.#onStep?.('giving-up-takeover', takeover);
      // Frozen for staleMs, we may have had it broken as abandoned, and another taker's is there now: that one stays.
      // Unmade, the breaker leaves ours to go once staleMs old, as a crashed taker's does.
      await this.#removeIfStill(takeover, ours).catch(() => {});
    }
  }

  /**
   * Removes a file left by a crash in a takeover (`<path>.takeover`, or a breaker file below) once it
   * is staleMs old; true when it is gone. Two lockers may judge the same file old: the first to remove
   * it makes its own in its place, which the second, going by the age it saw, must not remove. So a
   * file is removed only under a breaker file named after its identity (device, inode and mtime),
   * made with O_EXCL, and only while it still has that identity: whoever made a new one meanwhile
   * keeps it. A breaker left by a crash is broken in turn, under one named after its own identity.
   */
  async #removeAbandoned(file: string): Promise<boolean> {
    const seen = await identify(file);
    if (seen === null) return true;
    if (Math.abs(Date.now() - seen.mtimeMs) < this.staleMs) return false;
    await this.#onStep?.('judged-abandoned', file);
    return (await this.#removeIfStill(file, seen.id)) || this.#removeAbandoned(`${this.path}${BREAKER_INFIX}${seen.id}`);
  }

  /**
   * Removes `file` if it still has the identity `id`, under a breaker file named after it (O_EXCL): whoever
   * removed it since (its maker, or a breaker of it) and made a new one in its place keeps that one. False,
   * leaving it, when the breaker is there already: another is removing it, or crashed doing so.
   */
  async #removeIfStill(file: string, id: string): Promise<boolean> {
    const breaker = `${this.path}${BREAKER_INFIX}${id}`;
    try {
      await (await open(breaker, 'wx')).close();
    } catch (error) {
      if (errorCode(error) !== 'EEXIST') throw error;
      return false;
    }
    try {
      await this.#onStep?.('breaking', file);
      if ((await identify(file))?.id === id) await unlink(file).catch(throwUnlessMissing);
      return true;
    } finally {
      await unlink(breaker).catch(() => {});
    }
  }

  /**
   * Removes breaker files whose file is gone: left by a breaker that crashed after removing the file
   * it broke, and met by no one after it. A gone identity never comes back (a new file gets a new
   * mtime), so such a breaker guards nothing: whoever makes its name again finds no file with that
   * identity and removes nothing, and removing the name under them is harmless. Housekeeping: on an
   * error it gives up, leaving them.
   */
  async #sweepBreakers(takeover: string): Promise<void> {
    const dir = dirname(this.path);
    const prefix = `${basename(this.path)}${BREAKER_INFIX}`;
    const breakersIn = async (): Promise<string[]> => (await readdir(dir)).filter((name) => name.startsWith(prefix) && IDENTITY.test(name.slice(prefix.length)));
    try {
      const breakers = await breakersIn();
      if (breakers.length === 0) return;
      // Listed again: a breaker's file was made before it, so before this listing began, and a file
      // there all through a listing is in it (one made during a listing may be left out).
      const present = new Set<string>();
      for (const file of [takeover, ...(await breakersIn()).map((name) => join(dir, name))]) {
        const seen = await identify(file);
        if (seen !== null) present.add(seen.id);
      }
      for (const name of breakers) if (!present.has(name.slice(prefix.length))) await unlink(join(dir, name)).catch(() => {});
    } catch {
      // Left for the next takeover's sweep.
    }
  }

  /** Whether someone else holds the lock now: the file is there, and neither stale nor left by a dead holder. */
  async heldByAnother(): Promise<boolean> {
    if (this.#held) return false;
    const judged = await this.#judge(this.path);
    return judged !== null && !judged.stale;
  }

  /** The lock file at `path`, its mtime and holder read from one open file: which file it is, and whether it is stale; null when there is none. */
  async #judge(path: string): Promise<{ ino: number; dev: number; mtimeMs: number; stale: boolean } | null> {
    let handle;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return null;
      throw error;
    }
    try {
      const { ino, dev, mtimeMs } = await handle.stat();
      // A time further ahead than staleMs is no refresh either: the clock was set back since (or the file's was forged), and it would never age.
      if (Math.abs(Date.now() - mtimeMs) >= this.staleMs) return { ino, dev, mtimeMs, stale: true };
      if (!this.#holderInfo) return { ino, dev, mtimeMs, stale: false };
      const content = await handle.readFile('utf8').catch(() => '');
      return { ino, dev, mtimeMs, stale: this.#holderIsGone(content) };
    } finally {
      await handle.close();
    }
  }

  /** (holderInfo) Whether the holder the file records ran in this host's pid namespace and is gone. */
  #holderIsGone(content: string): boolean {
    let holder: { pid?: unknown; hostname?: unknown; pidns?: unknown; owner?: unknown };
    try {
      holder = JSON.parse(content) as typeof holder;
    } catch {
      return false; // Torn by a crash right after its creation: only its age counts.
    }
    // Same host and same pid namespace (containers may share a hostname and the directory), else the pid means nothing here.
    if (typeof holder !== 'object' || holder === null || holder.hostname !== hostname() || (holder.pidns ?? null) !== PID_NAMESPACE) return false;
    // A holder inside this process known to be gone (a storage thread that died): its pid lives on.
    if (holder.pid === process.pid && typeof holder.owner === 'string' && this.#deadOwners.has(holder.owner)) return true;
    return typeof holder.pid === 'number' && !isAlive(holder.pid);
  }
}

/** Between a lock's path and a breaker file's identity: `<path>.takeover.<dev>-<ino>-<mtimeNs>`. */
const BREAKER_INFIX = '.takeover.';
const IDENTITY = /^\d+-\d+-\d+$/;

/** Which file is at `path` (its device, inode and mtime, as one string) and its mtime; null when there is none. */
async function identify(path: string): Promise<{ id: string; mtimeMs: number } | null> {
  try {
    const stats = await stat(path, { bigint: true });
    return { id: identityOf(stats), mtimeMs: Number(stats.mtimeMs) };
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return null;
    throw error;
  }
}

/** A file's device, inode and mtime, as one string: see BREAKER_INFIX. */
function identityOf({ dev, ino, mtimeNs }: BigIntStats): string {
  return `${dev}-${ino}-${mtimeNs}`;
}

/** Whether the error says the file (or a directory above it) is not there. */
function isGone(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** For `unlink(...).catch`: a file already gone is what was wanted. */
function throwUnlessMissing(error: unknown): void {
  if (errorCode(error) !== 'ENOENT') throw error;
}

/** This process's pid namespace (Linux: `pid:[4026531836]`), null where there is none to read. */
const PID_NAMESPACE: string | null = (() => {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return null;
  }
})();

/** Whether a process of this host has the pid (EPERM: it exists, owned by someone else). */
export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return errorCode(error) !== 'ESRCH';
  }
}
