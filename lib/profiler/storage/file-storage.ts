import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { gunzip as gunzipCallback, gzip as gzipCallback } from 'node:zlib';
import type { Profile, ProfileSummary } from '../profile.js';
import type { ProfilerStorage, SearchCriteria, StorageBounds } from './profiler-storage.js';
import { InvalidProfileError, ProfileExistsError, ProfilerStorageError } from './errors.js';
import { FileLock } from './file-lock.js';
import { errorCode, ignoreMissing, isMissing, removeFile } from './fs-errors.js';
import { appendIndexLine, encodeIndexLine, indexEntryOf, readIndexFrom, type IndexEntry } from './index-file.js';
import { ProfileIndex } from './profile-index.js';
import { compileCriteria, matchesCriteria, toSummary } from './search-criteria.js';
import { assertStorableProfile, isStorableToken, resolveBounds } from './validation.js';

const gzip = promisify(gzipCallback);
const gunzip = promisify(gunzipCallback);

/** Options of a FileStorage. */
export interface FileStorageOptions {
  /** The directory of profiles, created on the first write; default `var/profiler` (from the working directory). */
  dir?: string;
  /** Bounds; bytes are counted as the size of the (gzip'd) profile files. */
  bounds?: Partial<StorageBounds>;
  /** The clock profile ages are measured with (epoch ms); tests inject one. File staleness uses real mtimes. */
  now?: () => number;
  /** Receives errors of the background upkeep (bounds, crash clean-up), which have no caller to reject. */
  onError?: (error: Error) => void;
}

/** A token prefix this instance holds the lease of. */
interface Lease {
  readonly prefix: string;
  readonly lock: FileLock;
  /** Tokens of the prefix not to draw: files and index entries at the last scan, and this instance's draws since. */
  taken: Set<string>;
  /** Still over the share after a scan: no more draws from it; given back once no drawn token of it is pending. */
  full: boolean;
}

/** What one compaction did. */
export interface CompactionReport {
  /** Profiles indexed after it. */
  profiles: number;
  /** Profiles removed by the bounds (age, count, bytes). */
  removed: number;
  /** Profiles found on disk without an index line (a crash between rename and append) and indexed again. */
  recovered: number;
  /** Crash leftovers removed: temp files, abandoned claims, index lines without a file, stale lock files. */
  cleaned: number;
}

const DEFAULT_DIR = 'var/profiler';
const INDEX_FILE = 'index.ndjson';
const LOCK_FILE = 'index.lock';
const PROFILE_SUFFIX = '.json.gz';
const PROFILE_FILE = /^([0-9a-f]{6,32})\.json\.gz$/;
const SHARD_DIR = /^[0-9a-f]{2}$/;
const LEASE_DIR = 'leases';
const LEASE_SUFFIX = '.lease';
/** A lease not refreshed for this long belongs to a crashed or frozen process and is taken over. */
const LEASE_STALE_MS = 2 * 60_000;
/** Held leases are refreshed (mtime) this often. */
const LEASE_REFRESH_MS = 30_000;
/** A lease covers the tokens starting with its prefix: the shard's 2 characters. */
const LEASE_PREFIX_LENGTH = 2;
/** Another lease is taken once the held ones are this full (index entries, files, draws). */
const LEASE_FULL_SHARE = 0.5;
/** Random draws inside one lease before it is looked at again (at most half full: a miss is < 1/2). */
const DRAWS_PER_LEASE = 48;
/** Codes of `link` on filesystems without hard links: writes then fall back to a placeholder + rename. */
const NO_LINK_CODES = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EMLINK']);
/** A bound check runs after this many writes of this process, or when a second has passed since the last. */
const CHECK_EVERY_WRITES = 32;
const CHECK_EVERY_MS = 1_000;
/** Idle upkeep: bound checks, claim keep-alive. */
const TIMER_MS = 5 * 60_000;
/** Crash leftovers are looked for this often (and at the first upkeep of each instance). */
const SWEEP_EVERY_MS = 10 * 60_000;
/** An empty placeholder not touched for this long was left by a crashed claimer (live claimers touch theirs). */
const ABANDONED_CLAIM_MS = 60 * 60_000;
/** A temp file this old was left by a crashed writer (a write takes milliseconds). */
const ABANDONED_TEMP_MS = 10 * 60_000;
/** A profile file without an index line is indexed again only once its writer had time to append the line. */
const ORPHAN_GRACE_MS = 60_000;
/** A bound, once exceeded, is trimmed to this share of itself, so compactions are not back to back. */
const TRIM_TO = 0.9;
/** Expired profiles wait for a compaction until this share of maxAge has passed beyond it. */
const AGE_SLACK = 0.05;
/** Unparseable lines (torn by crashes) tolerated before the index is rewritten without them. */
const MAX_SKIPPED_LINES = 100;
const PURGE_LOCK_TIMEOUT_MS = 5_000;
const COMPACT_LOCK_TIMEOUT_MS = 15_000;
/** The lock's mtime is refreshed after this many file operations of a long compaction. */
const LOCK_REFRESH_EVERY = 256;

/**
 * The embedded default storage, safe to share between the processes of one machine.
 *
 * Layout of `dir`:
 *   index.ndjson                    one JSON line per profile (summary + file size), appended
 *   index.lock                      present while one process compacts the index
 *   <aa>/<token>.json.gz            a profile (gzip'd JSON), or an empty placeholder: a claim
 *   leases/<aa>.lease               the lease of token prefix <aa>: JSON of holder pid, hostname, time
 *   <aa>/<token>.json.gz.<pid>-<n>.tmp, index.ndjson.<pid>-<hex>.tmp   writes in progress
 * where <aa> is the token's first two characters.
 *
 * A process draws its tokens inside the prefixes it leases (a lease file created with `wx`,
 * refreshed every 30 s, taken over when 2 minutes old or when its holder's pid is dead on this
 * host), in memory: no file per claim. Such a token is written to a temp file hard-linked to its
 * name, which fails rather than replace a file there. Claims of tokens outside the held prefixes
 * are placeholder files created with `wx` (refused inside a prefix another live process leases);
 * such a profile is written to a temp file renamed over its placeholder. Its index line is appended with one O_APPEND write. Only a compaction, under the
 * lock, rewrites the index (temp file + rename) and deletes profiles; appenders do not take the
 * lock (see appendIndexLine for why no line is lost). The index is a cache of the files: a
 * periodic sweep re-indexes profile files whose line a crash lost and drops lines whose file is
 * gone, so the worst a crash can do is delay a profile's appearance in searches.
 */
export class FileStorage implements ProfilerStorage {
  readonly dir: string;
  readonly bounds: Readonly<StorageBounds>;
  readonly #now: () => number;
  readonly #onError: ((error: Error) => void) | undefined;
  readonly #indexPath: string;
  readonly #index: ProfileIndex;
  readonly #lock: FileLock;
  /** Placeholders this instance created and has neither written nor released. */
  readonly #claims = new Set<string>();
  readonly #writing = new Set<string>();
  readonly #shards = new Set<string>();
  /** Prefix leases held, by prefix. */
  readonly #leases = new Map<string, Lease>();
  /** Tokens drawn from a lease (no placeholder file) and neither written nor released. */
  readonly #drawn = new Set<string>();
  /** Lease changes (acquire, scan, refresh, release) run one at a time. */
  #leasing: Promise<unknown> = Promise.resolve();
  #leaseTimer: NodeJS.Timeout | null = null;
  readonly #timer: NodeJS.Timeout;
  /** Compactions and purges of this instance run one at a time (they share the lock). */
  #exclusive: Promise<unknown> = Promise.resolve();
  #upkeep: Promise<void> | null = null;
  #upkeepAgain = false;
  #writesSinceCheck = 0;
  #lastCheckAt = 0;
  #nextSweepAt = 0;
  #tempCounter = 0;
  #closed = false;

  constructor(options: FileStorageOptions = {}) {
    this.dir = resolve(options.dir ?? DEFAULT_DIR);
    this.bounds = Object.freeze(resolveBounds(options.bounds));
    this.#now = options.now ?? Date.now;
    this.#onError = options.onError;
    this.#indexPath = join(this.dir, INDEX_FILE);
    this.#index = new ProfileIndex(this.#indexPath);
    this.#lock = new FileLock(join(this.dir, LOCK_FILE));
    this.#timer = setInterval(() => this.#tick(), TIMER_MS);
    this.#timer.unref();
  }

  /**
   * A fresh token of `length` characters, claimed without touching the disk in the common case:
   * it is drawn at random inside a token prefix this instance leases (`leases/<aa>.lease`, made
   * with `wx`, so one process at a time), avoiding the prefix's files and index entries and this
   * instance's own draws. A lease is acquired when none is held or the held ones are half full.
   */
  async drawToken(length = 6): Promise<string> {
    if (!Number.isInteger(length) || length < 6 || length > 32) throw new RangeError(`A profile token has 6 to 32 characters, not ${length}.`);
    for (let round = 0; round < 4; round++) {
      if (this.#closed) throw new ProfilerStorageError(`The profiler storage in ${this.dir} is closed.`, 'HK_PROFILER_STORAGE_CLOSED');
      const token = this.#drawFromLeases(length);
      if (token !== null) return token;
      try {
        await this.#serialLeases(() => this.#growLeases(length));
      } catch (error) {
        throw this.#failure('lease a token prefix for', null, error);
      }
    }
    throw new ProfilerStorageError(`Could not draw a free ${length}-character profile token in ${this.dir}.`, 'HK_PROFILER_STORAGE_FULL');
  }

  /**
   * Claims a token: in a prefix this instance leases, in memory; elsewhere by creating the empty
   * placeholder `<token>.json.gz` with `wx` (exactly one claimer, in any process, succeeds),
   * unless another live instance leases the prefix (its draws are in its memory only).
   */
  async claim(token: string): Promise<boolean> {
    if (!isStorableToken(token)) return false;
    if (this.#claims.has(token) || this.#writing.has(token) || this.#drawn.has(token)) return false;
    const lease = this.#leases.get(token.slice(0, LEASE_PREFIX_LENGTH));
    if (lease !== undefined) {
      if (lease.taken.has(token)) return false;
      lease.taken.add(token);
      this.#drawn.add(token);
      return true;
    }
    try {
      if (await this.#leasedByAnother(token.slice(0, LEASE_PREFIX_LENGTH))) return false;
      if (!(await this.#inShard(token, () => this.#createPlaceholder(token)))) return false;
    } catch (error) {
      throw this.#failure('claim a token for', token, error);
    }
    this.#claims.add(token);
    return true;
  }

  /** Removes this instance's placeholder, if it is still an empty placeholder. */
  async release(token: string): Promise<void> {
    if (!isStorableToken(token)) return;
    if (this.#drawn.delete(token)) {
      this.#leases.get(token.slice(0, LEASE_PREFIX_LENGTH))?.taken.delete(token);
      return;
    }
    if (!this.#claims.delete(token)) return;
    await this.#removePlaceholder(token).catch((error: unknown) => this.#report(error));
  }

  /**
   * Writes the profile to a temp file, then renames it over the placeholder this instance owns,
   * or, for a token drawn from a lease, hard-links it to its name, which fails when the name
   * exists (claiming the token first when it did neither). Rejects with ProfileExistsError when the token
   * holds another profile, ProfilerStorageError when the disk fails; nothing escapes otherwise.
   */
  async write(profile: Profile): Promise<void> {
    assertStorableProfile(profile);
    if (this.#closed) throw new ProfilerStorageError(`The profiler storage in ${this.dir} is closed.`, 'HK_PROFILER_STORAGE_CLOSED');
    const token = profile.token;
    if (this.#writing.has(token)) throw new ProfileExistsError(token);
    this.#writing.add(token);
    try {
      let json: string;
      try {
        json = JSON.stringify(profile);
      } catch (error) {
        throw new InvalidProfileError(`Profile ${token} cannot be serialised to JSON: ${error instanceof Error ? error.message : String(error)}`);
      }
      const data = await gzip(json);
      await this.#inShard(token, () => this.#putProfile(token, data));
      this.#claims.delete(token);
      this.#drawn.delete(token);
      await appendIndexLine(this.#indexPath, encodeIndexLine(indexEntryOf(profile, data.length)), {
        lockPath: this.#lock.path,
        lockStaleMs: this.#lock.staleMs,
        profilePath: this.#profilePath(token),
      });
    } catch (error) {
      throw this.#failure('write', token, error);
    } finally {
      this.#writing.delete(token);
    }
    this.#writesSinceCheck++;
    if (this.#writesSinceCheck >= CHECK_EVERY_WRITES || Date.now() - this.#lastCheckAt >= CHECK_EVERY_MS) this.#scheduleUpkeep();
  }

  /** The profile, or null when the token is malformed, unknown, only claimed, or its file is unreadable. */
  async read(token: string): Promise<Profile | null> {
    if (!isStorableToken(token)) return null;
    let data: Buffer;
    try {
      data = await readFile(this.#profilePath(token));
    } catch (error) {
      if (isMissing(error)) return null;
      throw this.#failure('read', token, error);
    }
    return data.length === 0 ? null : decodeProfile(data, token);
  }

  /** Searches this process's copy of the index, first caught up with the file; never opens a profile. */
  async find(criteria?: SearchCriteria): Promise<ProfileSummary[]> {
    const compiled = compileCriteria(criteria);
    try {
      await this.#index.refresh();
    } catch (error) {
      throw this.#failure('search', null, error);
    }
    const results: ProfileSummary[] = [];
    if (compiled.limit === 0) return results;
    const cutoff = this.#now() - this.bounds.maxAge;
    for (const entry of this.#index.newestFirst()) {
      if (entry.time < cutoff || !matchesCriteria(entry, compiled)) continue;
      results.push(toSummary(entry));
      if (results.length >= compiled.limit) break;
    }
    return results;
  }

  /** Removes every profile and claim of every process (under the lock); writers racing it start afresh. */
  async purge(): Promise<void> {
    await this.#runExclusive(async () => {
      try {
        await this.#lock.acquire(PURGE_LOCK_TIMEOUT_MS);
      } catch (error) {
        if (isMissing(error)) return;
        throw error instanceof ProfilerStorageError ? error : this.#failure('purge', null, error);
      }
      try {
        const empty = await this.#replaceIndex('');
        this.#index.replace([], 0, empty);
        for (const name of (await ignoreMissing(readdir(this.dir))) ?? []) {
          if (SHARD_DIR.test(name)) await rm(join(this.dir, name), { recursive: true, force: true });
        }
        this.#shards.clear();
      } catch (error) {
        throw this.#failure('purge', null, error);
      } finally {
        await this.#lock.release();
      }
    });
  }

  /**
   * Applies the bounds and removes crash leftovers now, waiting for the lock. It also runs by
   * itself in the background (after writes and every few minutes); this is for tests and tools.
   */
  async compact(): Promise<CompactionReport | null> {
    return this.#runExclusive(() => this.#compact(true, true));
  }

  /** Stops the background upkeep, waits for a running one, and removes this instance's unused placeholders. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    if (this.#leaseTimer !== null) clearInterval(this.#leaseTimer);
    await this.#upkeep;
    await this.#exclusive;
    await Promise.all([...this.#claims].map((token) => this.release(token)));
    await this.#serialLeases(async () => {
      this.#drawn.clear();
      const leases = [...this.#leases.values()];
      this.#leases.clear();
      await Promise.all(leases.map((lease) => lease.lock.release()));
    });
  }

  /** The prefixes this instance leases now (for tests and tools). */
  get leasedPrefixes(): string[] {
    return [...this.#leases.keys()].sort();
  }

  /** A drawn token from the least full held lease, or null when a lease must be scanned or acquired. */
  #drawFromLeases(length: number): string | null {
    const limit = 16 ** (length - LEASE_PREFIX_LENGTH) * LEASE_FULL_SHARE;
    let best: Lease | undefined;
    for (const lease of this.#leases.values()) {
      if (!lease.full && lease.taken.size < limit && (best === undefined || lease.taken.size < best.taken.size)) best = lease;
    }
    if (best === undefined) return null;
    for (let attempt = 0; attempt < DRAWS_PER_LEASE; attempt++) {
      const token = best.prefix + generateHex(length - LEASE_PREFIX_LENGTH);
      if (best.taken.has(token) || this.#claims.has(token) || this.#writing.has(token) || this.#drawn.has(token)) continue;
      best.taken.add(token);
      this.#drawn.add(token);
      return token;
    }
    return null;
  }

  /** Scans the held leases over the share; when all still are, acquires a lease on another prefix. */
  async #growLeases(length: number): Promise<void> {
    if (this.#closed) return;
    const limit = 16 ** (length - LEASE_PREFIX_LENGTH) * LEASE_FULL_SHARE;
    const usable = (): boolean => [...this.#leases.values()].some((lease) => !lease.full && lease.taken.size < limit);
    if (usable()) return;
    for (const lease of this.#leases.values()) {
      if (lease.full) continue;
      await this.#scan(lease);
      if (lease.taken.size >= limit) lease.full = true;
    }
    if (usable()) return;
    await mkdir(join(this.dir, LEASE_DIR), { recursive: true });
    const prefixes = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0')).filter((prefix) => !this.#leases.has(prefix));
    shuffle(prefixes);
    for (const prefix of prefixes) {
      const lock = new FileLock(this.#leasePath(prefix), LEASE_STALE_MS, { holderInfo: true });
      if (!(await lock.tryAcquire())) continue;
      const lease: Lease = { prefix, lock, taken: new Set(), full: false };
      await this.#scan(lease);
      if (lease.taken.size >= limit) {
        await lock.release();
        continue;
      }
      this.#leases.set(prefix, lease);
      if (this.#leaseTimer === null) {
        this.#leaseTimer = setInterval(() => {
          void this.#serialLeases(() => this.#refreshLeases()).catch((error: unknown) => this.#report(error));
        }, LEASE_REFRESH_MS);
        this.#leaseTimer.unref();
      }
      return;
    }
    throw new ProfilerStorageError(`Every token prefix of the profiler storage ${this.dir} is leased by another process or half full.`, 'HK_PROFILER_STORAGE_FULL');
  }

  /** Rebuilds a lease's taken set: the shard's files (profiles, placeholders), the index's entries, our pending draws. */
  async #scan(lease: Lease): Promise<void> {
    const { prefix } = lease;
    const taken = new Set<string>();
    const addPending = (): void => {
      for (const set of [this.#drawn, this.#writing, this.#claims]) for (const token of set) if (token.startsWith(prefix)) taken.add(token);
    };
    // Before the awaits too: a write finishing meanwhile leaves #drawn before its file shows in an earlier readdir.
    addPending();
    await this.#index.refresh();
    for (const name of (await ignoreMissing(readdir(join(this.dir, prefix)))) ?? []) {
      const token = PROFILE_FILE.exec(name)?.[1];
      if (token !== undefined) taken.add(token);
    }
    for (const entry of this.#index.newestFirst()) if (entry.token.startsWith(prefix)) taken.add(entry.token);
    addPending();
    lease.taken = taken;
  }

  /** Keeps the held leases young; drops the ones taken over (we were frozen), gives back full ones without pending draws. */
  async #refreshLeases(): Promise<void> {
    for (const lease of [...this.#leases.values()]) {
      if (!(await lease.lock.stillHeld())) {
        this.#leases.delete(lease.prefix);
        this.#report(new ProfilerStorageError(`The profiler storage lease ${lease.lock.path} was taken over; its pending tokens are still written exclusively.`, 'HK_PROFILER_STORAGE_LOCKED'));
        continue;
      }
      if (lease.full && ![...this.#drawn].some((token) => token.startsWith(lease.prefix))) {
        this.#leases.delete(lease.prefix);
        await lease.lock.release();
        continue;
      }
      await lease.lock.refresh();
    }
  }

  /** Whether a live lease of another instance covers the prefix. */
  async #leasedByAnother(prefix: string): Promise<boolean> {
    const stats = await ignoreMissing(stat(this.#leasePath(prefix)));
    return stats !== undefined && Date.now() - stats.mtimeMs < LEASE_STALE_MS;
  }

  #leasePath(prefix: string): string {
    return join(this.dir, LEASE_DIR, `${prefix}${LEASE_SUFFIX}`);
  }

  #serialLeases<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#leasing.then(fn, fn);
    this.#leasing = run.catch(() => {});
    return run;
  }

  #profilePath(token: string): string {
    return join(this.dir, token.slice(0, 2), `${token}${PROFILE_SUFFIX}`);
  }

  /** Runs `fn` with the token's shard directory made; once more if a purge removed it meanwhile. */
  async #inShard<T>(token: string, fn: () => Promise<T>): Promise<T> {
    const shard = join(this.dir, token.slice(0, 2));
    if (!this.#shards.has(shard)) {
      await mkdir(shard, { recursive: true });
      this.#shards.add(shard);
    }
    try {
      return await fn();
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
      await mkdir(shard, { recursive: true });
      return fn();
    }
  }

  /** True when this call created the placeholder, false when the file exists. */
  async #createPlaceholder(token: string): Promise<boolean> {
    try {
      await (await open(this.#profilePath(token), 'wx')).close();
      return true;
    } catch (error) {
      if (errorCode(error) === 'EEXIST') return false;
      throw error;
    }
  }

  async #removePlaceholder(token: string): Promise<void> {
    const path = this.#profilePath(token);
    const stats = await ignoreMissing(stat(path));
    if (stats !== undefined && stats.size === 0) await removeFile(path);
  }

  /**
   * A drawn token: temp file, then `link` to the final name, which fails (EEXIST) rather than
   * replace anything there. Otherwise: temp file, then rename over our placeholder. Either way
   * readers see no file, a placeholder, or the whole profile.
   */
  async #putProfile(token: string, data: Buffer): Promise<void> {
    if (!this.#claims.has(token) && !this.#drawn.has(token)) {
      const lease = this.#leases.get(token.slice(0, LEASE_PREFIX_LENGTH));
      if (lease !== undefined) {
        if (!(await this.claim(token))) throw new ProfileExistsError(token);
      } else if (await this.#leasedByAnother(token.slice(0, LEASE_PREFIX_LENGTH))) {
        throw new ProfileExistsError(token);
      }
    }
    if (this.#drawn.has(token)) {
      const linked = await this.#linkProfile(token, data);
      if (linked) return;
      // No hard links on this filesystem: claim with a placeholder, as for tokens outside leases.
      if (!(await this.#createPlaceholder(token))) {
        this.#drawn.delete(token);
        throw new ProfileExistsError(token);
      }
      this.#drawn.delete(token);
      this.#claims.add(token);
    }
    const path = this.#profilePath(token);
    let ownPlaceholder = this.#claims.has(token);
    let createdHere = false;
    if (ownPlaceholder) {
      const stats = await ignoreMissing(stat(path));
      // Gone: a purge removed it; not empty: never ours to overwrite.
      if (stats !== undefined && stats.size > 0) throw new ProfileExistsError(token);
      ownPlaceholder = stats !== undefined;
    }
    if (!ownPlaceholder) {
      if (!(await this.#createPlaceholder(token))) throw new ProfileExistsError(token);
      createdHere = true;
    }
    const temp = `${path}.${process.pid}-${++this.#tempCounter}.tmp`;
    try {
      await writeFile(temp, data, { flag: 'wx' });
      await rename(temp, path);
    } catch (error) {
      await removeFile(temp).catch(() => {});
      if (createdHere) await this.#removePlaceholder(token).catch(() => {});
      throw error;
    }
  }

  /** True when written, false when the filesystem has no hard links; ProfileExistsError when the name exists. */
  async #linkProfile(token: string, data: Buffer): Promise<boolean> {
    const path = this.#profilePath(token);
    const temp = `${path}.${process.pid}-${++this.#tempCounter}.tmp`;
    try {
      await writeFile(temp, data, { flag: 'wx' });
      await link(temp, path);
      return true;
    } catch (error) {
      const code = errorCode(error);
      if (code === 'EEXIST') {
        this.#drawn.delete(token);
        throw new ProfileExistsError(token);
      }
      if (code !== undefined && NO_LINK_CODES.has(code)) return false;
      throw error;
    } finally {
      await removeFile(temp).catch(() => {});
    }
  }

  /** Writes `content` as the new index via temp file + rename; returns the new file's identity. */
  async #replaceIndex(content: string): Promise<{ dev: number; ino: number }> {
    const temp = `${this.#indexPath}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    const handle = await open(temp, 'wx');
    let identity;
    try {
      await handle.writeFile(content);
      identity = await handle.stat();
    } finally {
      await handle.close();
    }
    try {
      await this.#lock.refresh();
      if (!(await this.#lock.stillHeld())) {
        throw new ProfilerStorageError(`The profiler storage lock ${this.#lock.path} was taken over; the index rewrite was abandoned.`, 'HK_PROFILER_STORAGE_LOCKED');
      }
      await rename(temp, this.#indexPath);
    } catch (error) {
      await removeFile(temp).catch(() => {});
      throw error;
    }
    return { dev: identity.dev, ino: identity.ino };
  }

  #runExclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#exclusive.then(fn, fn);
    this.#exclusive = run.catch(() => {});
    return run;
  }

  #tick(): void {
    void this.#touchClaims();
    this.#scheduleUpkeep();
  }

  /** Keeps this instance's placeholders young, so no sweep mistakes a live claim for an abandoned one. */
  async #touchClaims(): Promise<void> {
    const now = new Date();
    await Promise.all([...this.#claims].map((token) => utimes(this.#profilePath(token), now, now).catch(() => {})));
  }

  /** Runs a bound check in the background, never more than one at a time. */
  #scheduleUpkeep(): void {
    if (this.#closed) return;
    if (this.#upkeep !== null) {
      this.#upkeepAgain = true;
      return;
    }
    this.#writesSinceCheck = 0;
    this.#lastCheckAt = Date.now();
    this.#upkeep = this.#checkBounds()
      .catch((error: unknown) => this.#report(error))
      .finally(() => {
        this.#upkeep = null;
        if (this.#upkeepAgain) {
          this.#upkeepAgain = false;
          this.#scheduleUpkeep();
        }
      });
  }

  async #checkBounds(): Promise<void> {
    await this.#index.refresh();
    const sweepDue = Date.now() >= this.#nextSweepAt;
    if (!sweepDue && !this.#overBounds()) return;
    // Another process holding the lock is compacting already: skip, the next check will see its result.
    await this.#runExclusive(() => this.#compact(sweepDue, false));
  }

  #overBounds(): boolean {
    const { maxAge, maxProfiles, maxBytes } = this.bounds;
    const oldest = this.#index.oldest();
    return (
      this.#index.size > maxProfiles ||
      this.#index.bytes > maxBytes ||
      (oldest !== undefined && oldest.time < this.#now() - maxAge * (1 + AGE_SLACK)) ||
      this.#index.skippedLines > MAX_SKIPPED_LINES
    );
  }

  /**
   * Under the lock: read the index, (sweep,) keep what the bounds allow, write the kept lines to a
   * temp file and rename it over the index, then copy over the lines other processes appended to
   * the old file meanwhile (appenders check after writing whether the file was replaced, and
   * append again if so), and last delete the dropped profiles. A crash at any point leaves either
   * the old or the new index, plus at worst unindexed or dropped files that the next sweep handles.
   */
  async #compact(sweep: boolean, wait: boolean): Promise<CompactionReport | null> {
    try {
      if (wait) await this.#lock.acquire(COMPACT_LOCK_TIMEOUT_MS);
      else if (!(await this.#lock.tryAcquire())) return null;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error instanceof ProfilerStorageError ? error : this.#failure('lock', null, error);
    }
    let old;
    try {
      old = await ignoreMissing(open(this.#indexPath, 'r'));
      const read = old === undefined ? { entries: [], end: 0, skipped: 0 } : await readIndexFrom(old, 0);
      const byToken = new Map<string, IndexEntry>();
      for (const entry of read.entries) if (!byToken.has(entry.token)) byToken.set(entry.token, entry);
      const report: CompactionReport = { profiles: 0, removed: 0, recovered: 0, cleaned: 0 };
      if (sweep) {
        await this.#sweep(byToken, report);
        this.#nextSweepAt = Date.now() + SWEEP_EVERY_MS;
      }
      const sorted = [...byToken.values()].sort((a, b) => a.time - b.time);
      const firstKept = this.#firstKept(sorted);
      const kept = sorted.slice(firstKept);
      const dropped = sorted.slice(0, firstKept);
      const content = kept.map(encodeIndexLine).join('');
      const file = await this.#replaceIndex(content);
      if (old !== undefined) {
        const droppedTokens = new Set(dropped.map((entry) => entry.token));
        const tail = await readIndexFrom(old, read.end);
        for (const entry of tail.entries) {
          if (!droppedTokens.has(entry.token)) await appendIndexLine(this.#indexPath, encodeIndexLine(entry));
        }
      }
      this.#index.replace(kept, Buffer.byteLength(content), file);
      for (let i = 0; i < dropped.length; i++) {
        if (i % LOCK_REFRESH_EVERY === 0) await this.#lock.refresh();
        await removeFile(this.#profilePath((dropped[i] as IndexEntry).token));
      }
      report.profiles = kept.length;
      report.removed = dropped.length;
      return report;
    } catch (error) {
      throw error instanceof ProfilerStorageError ? error : this.#failure('compact', null, error);
    } finally {
      await old?.close();
      await this.#lock.release();
    }
  }

  /** Index of the first entry to keep in `sorted` (oldest first): expired ones go, then the oldest over a bound. */
  #firstKept(sorted: IndexEntry[]): number {
    const { maxAge, maxProfiles, maxBytes } = this.bounds;
    const cutoff = this.#now() - maxAge;
    let first = 0;
    while (first < sorted.length && (sorted[first] as IndexEntry).time < cutoff) first++;
    if (sorted.length - first > maxProfiles) first = sorted.length - Math.max(1, Math.floor(maxProfiles * TRIM_TO));
    let bytes = 0;
    for (let i = first; i < sorted.length; i++) bytes += (sorted[i] as IndexEntry).bytes;
    if (bytes > maxBytes) {
      const target = maxBytes * TRIM_TO;
      while (bytes > target && sorted.length - first > 1) bytes -= (sorted[first++] as IndexEntry).bytes;
    }
    return first;
  }

  /**
   * Reconciles the index with the files (under the lock): index lines without a file go, profile
   * files without a line are indexed again (or deleted when expired or unreadable), and temp
   * files, abandoned placeholders and moved-aside stale locks left by crashes are removed.
   */
  async #sweep(byToken: Map<string, IndexEntry>, report: CompactionReport): Promise<void> {
    const present = new Set<string>();
    const now = Date.now();
    const cutoff = this.#now() - this.bounds.maxAge;
    let operations = 0;
    const removeIfOlder = async (path: string, ageMs: number): Promise<void> => {
      const stats = await ignoreMissing(stat(path));
      if (stats !== undefined && now - stats.mtimeMs > ageMs && (await removeFile(path))) report.cleaned++;
    };
    for (const name of (await ignoreMissing(readdir(this.dir))) ?? []) {
      if (name.endsWith('.tmp') || name.startsWith(`${LOCK_FILE}.stale-`)) await removeIfOlder(join(this.dir, name), ABANDONED_TEMP_MS);
      if (!SHARD_DIR.test(name)) continue;
      const shard = join(this.dir, name);
      for (const file of (await ignoreMissing(readdir(shard))) ?? []) {
        if (++operations % LOCK_REFRESH_EVERY === 0) await this.#lock.refresh();
        const path = join(shard, file);
        if (file.endsWith('.tmp')) {
          await removeIfOlder(path, ABANDONED_TEMP_MS);
          continue;
        }
        const token = PROFILE_FILE.exec(file)?.[1];
        if (token === undefined || !token.startsWith(name)) continue;
        if (byToken.has(token) || this.#claims.has(token) || this.#writing.has(token)) {
          present.add(token);
          continue;
        }
        const stats = await ignoreMissing(stat(path));
        if (stats === undefined) continue;
        if (stats.size === 0) {
          await removeIfOlder(path, ABANDONED_CLAIM_MS);
          continue;
        }
        if (now - stats.mtimeMs < ORPHAN_GRACE_MS) continue;
        const data = await ignoreMissing(readFile(path));
        const profile = data === undefined ? null : await decodeProfile(data, token);
        if (profile === null || !isStorable(profile) || profile.time < cutoff) {
          if (await removeFile(path)) report.cleaned++;
          continue;
        }
        byToken.set(token, indexEntryOf(profile, stats.size));
        present.add(token);
        report.recovered++;
      }
    }
    for (const token of byToken.keys()) {
      if (present.has(token)) continue;
      byToken.delete(token);
      report.cleaned++;
    }
  }

  #failure(action: string, token: string | null, error: unknown): ProfilerStorageError {
    if (error instanceof ProfilerStorageError) return error;
    const reason = error instanceof Error ? error.message : String(error);
    const what = token === null ? '' : ` profile ${token}`;
    return new ProfilerStorageError(`Cannot ${action}${what} in the profiler storage ${this.dir}: ${reason}`, 'HK_PROFILER_STORAGE', { cause: error });
  }

  #report(error: unknown): void {
    if (this.#onError === undefined) return;
    try {
      this.#onError(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // A failing error handler must not turn background upkeep into an unhandled rejection.
    }
  }
}

/** Random bytes fetched 4 KiB at a time: one randomBytes call per draw would be most of a draw's cost. */
let randomPool = Buffer.alloc(0);
let randomOffset = 0;

function generateHex(length: number): string {
  const bytes = Math.ceil(length / 2);
  if (randomOffset + bytes > randomPool.length) {
    randomPool = randomBytes(4096);
    randomOffset = 0;
  }
  const hex = randomPool.toString('hex', randomOffset, randomOffset + bytes);
  randomOffset += bytes;
  return hex.slice(0, length);
}

function shuffle<T>(items: T[]): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
}

function isStorable(profile: Profile): boolean {
  try {
    assertStorableProfile(profile);
    return true;
  } catch {
    return false;
  }
}

/** The profile in a (gzip'd JSON) file, or null when the file is corrupt or holds another token. */
async function decodeProfile(data: Buffer, token: string): Promise<Profile | null> {
  try {
    const profile = JSON.parse((await gunzip(data)).toString('utf8')) as Profile;
    return typeof profile === 'object' && profile !== null && profile.token === token ? profile : null;
  } catch {
    return null;
  }
}
