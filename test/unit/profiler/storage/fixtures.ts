// Shared by the storage tests: profiles of realistic shape, temp dirs, bounded waits.
import fs from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Profile } from '../../../../lib/profiler/profile.js';
import type { ProfilerStorage } from '../../../../lib/profiler/storage/profiler-storage.js';
import { FileStorage } from '../../../../lib/profiler/storage/index.js';

/** A minute ago, so default age bounds keep the test profiles whatever the date. */
export const BASE_TIME = Date.now() - 60_000;

/** The i-th of a series of distinct 6-character tokens. */
export function tokenFor(i: number, prefix = 1): string {
  return (prefix * 0x100000 + i).toString(16).padStart(6, '0');
}

/** A profile with a few collectors; `size` pads the logger so its JSON is roughly that many bytes. */
export function makeProfile(token: string, overrides: Partial<Profile> = {}, size = 2_000): Profile {
  const logs = [];
  for (let i = 0; logs.length * 200 < size; i++) {
    logs.push({ time: BASE_TIME + i, level: 6, levelName: 'INFO', channel: 'request', message: `Matched route "book_${i}" for GET /books/${i}?page=${i % 7}`, context: { route: `book_${i}`, params: { id: String(i) } } });
  }
  return {
    token,
    parent: null,
    children: [],
    ip: '127.0.0.1',
    method: 'GET',
    url: `http://127.0.0.1:8000/books/${token}`,
    time: BASE_TIME,
    status: 200,
    collectors: {
      request: { method: 'GET', requestHeaders: { host: '127.0.0.1:8000', accept: 'text/html' }, query: {}, cookies: {}, body: null },
      logger: { logs, counts: { INFO: logs.length }, errorCount: 0, warningCount: 0 },
    },
    ...overrides,
  };
}

/** A fresh temp dir, removed by `cleanup`. */
export async function makeTempDir(prefix: string): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), `hk-${prefix}-`));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Rejects instead of hanging when `promise` takes longer than `ms`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Every file under `dir`, relative paths, sorted. */
export async function listFiles(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) found.push(join(entry.parentPath ?? entry.path, entry.name).slice(dir.length + 1));
  }
  return found.sort();
}

/** Tokens of the non-empty profile files of the old layout (`<aa>/<token>.json.gz`) under `dir`. */
export function profileTokens(files: string[]): string[] {
  return files.map((file) => /^[0-9a-f]{2}\/([0-9a-f]+)\.json\.gz$/.exec(file)?.[1]).filter((token): token is string => token !== undefined).sort();
}

/** An entry line of `index.ndjson` as written: token, time, segment, offset, length. */
export interface IndexLine {
  t: string;
  ts: number;
  g?: string;
  o?: number;
  b: number;
}

/** The entry lines of the index file of `dir` (the header and unparseable lines left out), in file order. */
export async function indexLines(dir: string): Promise<IndexLine[]> {
  const text = await readFile(join(dir, 'index.ndjson'), 'utf8').catch(() => '');
  const lines: IndexLine[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{"t":"')) continue;
    try {
      lines.push(JSON.parse(line) as IndexLine);
    } catch {
      // Torn: skipped, as readers do.
    }
  }
  return lines;
}

/** Names of the segment files of `dir`, sorted. */
export async function segmentFiles(dir: string): Promise<string[]> {
  return (await readdir(join(dir, 'segments')).catch(() => [] as string[])).sort();
}

/** Names of the segments the index of `dir` refers to, sorted. */
export async function referencedSegments(dir: string): Promise<string[]> {
  return [...new Set((await indexLines(dir)).map((line) => line.g).filter((name): name is string => name !== undefined))].sort();
}

/** The tokens `storage` finds (any number), sorted. */
export async function foundTokens(storage: { find(criteria: { limit: number }): Promise<Array<{ token: string }>> }): Promise<string[]> {
  return (await storage.find({ limit: 1_000_000 })).map((summary) => summary.token).sort();
}

/** The error `fn` rejects with; fails the test when it resolves. */
export async function rejection(fn: () => Promise<unknown>): Promise<Error> {
  try {
    await fn();
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`rejected with a non-Error: ${String(error)}`);
  }
  throw new Error('expected a rejection, but the promise resolved');
}

/** A FileStorage test suite: a temp root made before the tests and removed after, and storages closed after each test. */
export function fileStorageSuite(name: string, tempPrefix: string, setup?: (root: string) => Promise<void>) {
  const test = suite(name);
  const env = { root: '' };
  let cleanup: () => Promise<void> = async () => {};
  let counter = 0;
  const open: FileStorage[] = [];

  test.before(async () => {
    ({ dir: env.root, cleanup } = await makeTempDir(tempPrefix));
    await setup?.(env.root);
  });
  test.after.each(async () => {
    await Promise.all(open.splice(0).map((storage) => storage.close()));
  });
  test.after(async () => {
    await cleanup();
  });

  /** A directory of its own under the suite's root (not made yet). */
  function freshDir(): string {
    return join(env.root, `case-${++counter}`);
  }

  /** A storage on a fresh directory (or on `dir`), closed after the test. */
  function storageIn(dir = freshDir(), options: ConstructorParameters<typeof FileStorage>[0] = {}): FileStorage {
    const storage = new FileStorage({ dir, ...options });
    open.push(storage);
    return storage;
  }

  return { test, env, freshDir, storageIn };
}

/**
 * Runs `make` with setInterval replaced, and returns what it made and the callbacks of the intervals
 * of `ms` it set (never started: the test calls them). For the storage's minutes-long timers.
 */
export async function withCapturedIntervals<T>(ms: number, make: () => Promise<T> | T): Promise<{ made: T; callbacks: Array<() => void> }> {
  const real = globalThis.setInterval;
  const callbacks: Array<() => void> = [];
  globalThis.setInterval = ((callback: () => void, delay?: number) => {
    if (delay === ms) callbacks.push(callback);
    return { unref() {}, ref() {}, hasRef: () => false, refresh() {}, [Symbol.toPrimitive]: () => 0 } as unknown as NodeJS.Timeout;
  }) as typeof setInterval;
  try {
    return { made: await make(), callbacks };
  } finally {
    globalThis.setInterval = real;
  }
}

/** Polls `done` every 10 ms, for at most a second: for what a fired timer does through the file system. */
export async function until(done: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100 && !(await done()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** A disk simulated under a directory (see simulatedDisk). */
export interface SimulatedDisk {
  /** Bytes it holds; null: no limit. Set it to `used()` to fill the disk as it is. */
  capacity: number | null;
  /** Bytes of the files under the directory now. */
  used(): number;
  /** Puts node:fs back. */
  restore(): void;
}

/** What a test run by withSimulatedDisk gets. */
export interface SimulatedDiskCase {
  /** The directory the disk is under, made. */
  dir: string;
  disk: SimulatedDisk;
  /** What was given to `onError`, in order: a storage's background errors, when the test passes it on. */
  errors: Error[];
  onError(error: Error): void;
  /** The errors that say the disk was found full and the bounds lowered (HK_PROFILER_STORAGE_DISK_FULL). */
  diskFullWarnings(): Error[];
}

/**
 * Runs `test` on `dir` (made) under a simulated disk of `capacity` bytes (default none: no limit until
 * the test sets one), and puts node:fs back however it ends: the set-up of every full-disk test.
 */
export function withSimulatedDisk<T>(dir: string, test: (on: SimulatedDiskCase) => Promise<T>): Promise<T>;
export function withSimulatedDisk<T>(dir: string, options: { capacity: number | null }, test: (on: SimulatedDiskCase) => Promise<T>): Promise<T>;
export async function withSimulatedDisk<T>(
  dir: string,
  ...args: [test: (on: SimulatedDiskCase) => Promise<T>] | [options: { capacity: number | null }, test: (on: SimulatedDiskCase) => Promise<T>]
): Promise<T> {
  const [{ capacity }, test] = args.length === 1 ? [{ capacity: null }, args[0]] : args;
  await mkdir(dir, { recursive: true });
  const disk = simulatedDisk(dir, capacity);
  const errors: Error[] = [];
  try {
    return await test({
      dir,
      disk,
      errors,
      onError: (error) => void errors.push(error),
      diskFullWarnings: () => errors.filter((error) => (error as { code?: unknown }).code === 'HK_PROFILER_STORAGE_DISK_FULL'),
    });
  } finally {
    disk.restore();
  }
}

/**
 * A disk of `capacity` bytes under `dir` (null: no limit), for what a full disk does without a
 * small filesystem to mount: node:fs's writes (writeSync, writevSync, promises.writeFile) to files
 * under `dir` fail with ENOSPC when the sizes of its files and the write's bytes would pass it, as
 * a full disk's do (writeFile makes its file first, then fails). `restore()` puts node:fs back.
 */
export function simulatedDisk(dir: string, capacity: number | null = null): SimulatedDisk {
  const real = { writeSync: fs.writeSync, writevSync: fs.writevSync, writeFile: fs.promises.writeFile };
  const disk = { capacity, used: () => usedBytes(dir), restore };
  const full = (bytes: number): Error | null => {
    if (disk.capacity === null || usedBytes(dir) + bytes <= disk.capacity) return null;
    return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
  };
  const underDir = (fd: number): boolean => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(`${dir}/`);
    } catch {
      return false;
    }
  };
  const lengthOf = (data: unknown, rest: unknown[]): number => {
    if (typeof data === 'string') return Buffer.byteLength(data);
    const view = data as ArrayBufferView;
    return typeof rest[1] === 'number' ? rest[1] : view.byteLength - (typeof rest[0] === 'number' ? rest[0] : 0);
  };
  fs.writeSync = ((fd: number, data: unknown, ...rest: unknown[]) => {
    const error = underDir(fd) ? full(lengthOf(data, rest)) : null;
    if (error !== null) throw error;
    return (real.writeSync as (...args: unknown[]) => number)(fd, data, ...rest);
  }) as typeof fs.writeSync;
  fs.writevSync = ((fd: number, buffers: readonly NodeJS.ArrayBufferView[], position?: number) => {
    const error = underDir(fd) ? full(buffers.reduce((sum, buffer) => sum + buffer.byteLength, 0)) : null;
    if (error !== null) throw error;
    return real.writevSync(fd, buffers, position);
  }) as typeof fs.writevSync;
  fs.promises.writeFile = (async (path: string, data: string | Uint8Array, options?: { flag?: string }) => {
    if (typeof path === 'string' && path.startsWith(`${dir}/`)) {
      const error = full(typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength);
      if (error !== null) {
        await (await fs.promises.open(path, options?.flag ?? 'w')).close();
        throw error;
      }
    }
    return real.writeFile(path, data, options as never);
  }) as typeof fs.promises.writeFile;
  syncBuiltinESMExports();
  function restore(): void {
    fs.writeSync = real.writeSync;
    fs.writevSync = real.writevSync;
    fs.promises.writeFile = real.writeFile;
    syncBuiltinESMExports();
  }
  return disk;
}

/** Bytes of the files under `dir`. */
function usedBytes(dir: string): number {
  let bytes = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    try {
      bytes += fs.statSync(join(entry.parentPath ?? entry.path, entry.name)).size;
    } catch {
      // Deleted meanwhile.
    }
  }
  return bytes;
}

/** A url search, in either storage, finds a non-ASCII path typed as it reads (`élève`) or as the URL holds it (`%C3%A9l%C3%A8ve`). */
export async function checkNonAsciiUrlSearch(storage: ProfilerStorage): Promise<void> {
  await storage.write(makeProfile(tokenFor(1), { time: BASE_TIME + 1, url: 'http://h/users/%C3%A9l%C3%A8ve?q=caf%C3%A9%20cr%C3%A8me' }));
  await storage.write(makeProfile(tokenFor(2), { time: BASE_TIME + 2, url: 'http://h/users/eleve' }));
  const tokens = async (url: string) => (await storage.find({ url })).map((summary) => summary.token);
  assert.equal(await tokens('/users/élève'), [tokenFor(1)], 'decoded');
  assert.equal(await tokens('%C3%A9l%C3%A8ve'), [tokenFor(1)], 'encoded');
  assert.equal(await tokens('café crème'), [tokenFor(1)], 'a space as the URL holds it, %20');
  assert.equal(await tokens('\ud800'), [], 'a lone surrogate, which no URL holds: no match, no error');
  assert.equal(await tokens('eleve'), [tokenFor(2)]);
}
