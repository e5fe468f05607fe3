import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { open, readFile, readdir, rm, stat, utimes, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { gunzip as gunzipCallback } from 'node:zlib';
import type { Profile, ProfileSummary, StorableProfile } from '../profile.js';
import type { ProfilerStorage, SearchCriteria, StorageBounds } from './profiler-storage.js';
import { ProfileBatchError, ProfileExistsError, ProfilerStorageError } from './errors.js';
import { markReported } from './reported-errors.js';
import { FileLock, FileLockTimeoutError } from '../../fs/file-lock.js';
import { errorCode, ignoreMissing, isDiskFull, isMissing, removeFile } from './fs-errors.js';
import {
  appendIndexLines,
  decodeIndexLine,
  encodeIndexHeader,
  indexEntryOf,
  isCurrentFile,
  leadingToken,
  PURGED_THROUGH,
  readIndexLines,
  recordLines,
  waitWhileLocked,
  writeIndexFile,
  type IndexEntry,
  type IndexRecord,
} from './index-file.js';
import { ProfileIndex } from './profile-index.js';
import { TRIM_TO, droppedNewest, keptRange } from './retention.js';
import { SegmentFiles, type Segment } from './segment-files.js';
import { LEASE_DIR, LEASE_PREFIX_LENGTH, TokenLeases, isHandOver } from './token-leases.js';
import { compileCriteria, matchesCriteria, toSummary } from './search-criteria.js';
import { assertStorableProfile, checkSegmentBytes, isStorableToken, resolveBounds, storableJson } from './validation.js';
import { MAX_TOKEN_LENGTH, MIN_TOKEN_LENGTH } from '../token.js';
import { PRIVATE_DIRECTORY, makeDirectory } from '../../fs/make-directory.js';

const gunzip = promisify(gunzipCallback);
/**
 * How long read() waits for a token another live process leases to be saved: its profile is saved
 * saveDelayMs (20 ms) after its request ends, in a batch; a page of another cluster worker asked for
 * it at once (the link in X-Debug-Token-Link, a tool reading it after the response) found nothing.
 */
const PENDING_ELSEWHERE_WAIT_MS = 1_000;
/** How often the index is read again meanwhile. */
const PENDING_ELSEWHERE_POLL_MS = 25;

/**
 * A storage's onError. One that logs the error at ERROR itself returns true: the profiler's own line for the saves and
 * tokens it fails (a ThreadedFileStorage's thread that stopped) is then a WARNING, as with createKernel's log, not a
 * second ERROR. Anything else (nothing, a number) leaves that line an ERROR: no failure goes without one.
 */
export type StorageErrorHandler = ((error: Error) => void) | ((error: Error) => boolean);

/** Options of a FileStorage. */
export interface FileStorageOptions {
  /** The directory of profiles, created on the first write; default `var/profiler` (from the working directory). */
  dir?: string;
  /** Bounds; bytes are counted as the size of the profiles' JSON records. */
  bounds?: Partial<StorageBounds>;
  /** A segment file is rolled over once it holds this many bytes; default 4 MiB (less under small bounds, see SEGMENT_SHARE). */
  segmentBytes?: number;
  /** The clock profile ages are measured with (epoch ms); tests inject one. File staleness uses real mtimes. */
  now?: () => number;
  /** Receives errors of the background upkeep (bounds, crash clean-up), which have no caller to reject; see StorageErrorHandler. */
  onError?: StorageErrorHandler;
  /**
   * Who holds this instance's prefix leases inside the process, recorded in them (ThreadedFileStorage
   * names each of its worker threads); with `deadLeaseOwners`, the owners known to be gone, whose
   * leases are taken over at once although their pid, this process's, is alive.
   */
  leaseOwner?: string;
  deadLeaseOwners?: readonly string[];
}

/** A profile of a batch, serialised, its token held in #writing. */
interface PendingWrite {
  readonly profile: StorableProfile;
  readonly token: string;
  readonly json: string | Buffer;
  /** This write made a placeholder to claim the token (it had been neither claimed nor drawn). */
  placeholder: boolean;
}

/** What one compaction did. */
export interface CompactionReport {
  /** Profiles indexed after it. */
  profiles: number;
  /** Profiles removed by the bounds (age, count, bytes). */
  removed: number;
  /** Crash leftovers removed: temp files, abandoned claims, index lines whose segment or file is gone, stale lock files. */
  cleaned: number;
  /** Segment files deleted: no index line referred to them any more, and their writer was done with them. */
  segmentsDeleted: number;
  /** Profiles put back into an index that had lost their lines (deleted, cut to nothing, overwritten), from their records in the segments. */
  recovered: number;
}

const DEFAULT_DIR = 'var/profiler';
const INDEX_FILE = 'index.ndjson';
const LOCK_FILE = 'index.lock';
const DEFAULT_SEGMENT_BYTES = 4 * 1024 * 1024;
/**
 * A segment is also rolled over once it holds this share of the count or byte bound: it is
 * deleted only once all its profiles are dropped, and under a small bound (50 profiles) a 4 MiB
 * segment kept the records of thousands of dropped ones, enough to fill a small disk for good.
 */
const SEGMENT_SHARE = 0.25;
const PROFILE_SUFFIX = '.json.gz';
const PROFILE_FILE = new RegExp(`^([0-9a-f]{${MIN_TOKEN_LENGTH},${MAX_TOKEN_LENGTH}})\\.json\\.gz$`);
const SHARD_DIR = /^[0-9a-f]{2}$/;
/**
 * A bound check runs after this many profiles written by this instance, or when a second has
 * passed since the last; after every batch once the disk was found full (the profiles written
 * between two checks would fill it again).
 */
const CHECK_EVERY_WRITES = 32;
/** The fewest profiles a full disk lowers the count bound to (see #freeSpace), unless it is lower. */
const FULL_DISK_MIN_PROFILES = 10;
const CHECK_EVERY_MS = 1_000;
/** Idle upkeep: bound checks, claim keep-alive. */
const TIMER_MS = 5 * 60_000;
/** Crash leftovers are looked for this often (and at the first upkeep of each instance). */
const SWEEP_EVERY_MS = 10 * 60_000;
/** An empty placeholder not touched for this long was left by a crashed claimer (live claimers touch theirs). */
const ABANDONED_CLAIM_MS = 60 * 60_000;
/** A temp file this old was left by a crashed writer (a write takes milliseconds). */
const ABANDONED_TEMP_MS = 10 * 60_000;
/** An old-layout profile file without an index line is deleted once this old. */
const ORPHAN_GRACE_MS = 60_000;
/** Expired profiles wait for a compaction until this share of maxAge has passed beyond it. */
const AGE_SLACK = 0.05;
/** Unparseable lines (torn by crashes) tolerated before the index is rewritten without them. */
const MAX_SKIPPED_LINES = 100;
/** Appends retried this many times when compactions keep replacing the index under us. */
const APPEND_ATTEMPTS = 5;
const PURGE_LOCK_TIMEOUT_MS = 5_000;
const COMPACT_LOCK_TIMEOUT_MS = 15_000;
/** close() waits this long for another process's compaction before its own last bound check: a shutdown is not held for a stuck one. */
const CLOSE_LOCK_TIMEOUT_MS = 5_000;
/** The lock's mtime is refreshed after this many file operations of a long compaction. */
const LOCK_REFRESH_EVERY = 256;
/** The newline after each record of a segment, written from this one buffer. */
const NEWLINE_BYTE = new Uint8Array([0x0a]);

/**
 * The embedded default storage, safe to share between the processes of one machine.
 *
 * Layout of `dir`:
 *   segments/<time>-<pid>-<hex>.ndjson   profiles, one JSON record a line, appended in batches by
 *                                        one writer (a FileStorage instance) only; rolled over at
 *                                        `segmentBytes` (4 MiB) or a quarter of the count or byte
 *                                        bound, 10 minutes of age or 1 of idleness (SegmentFiles)
 *   index.ndjson                    one JSON line per profile: summary, segment, byte offset and
 *                                   length of its record; a compacted index starts with a header line
 *   index.lock                      present while one process compacts the index
 *   leases/<aa>.lease               the lease of token prefix <aa>: JSON of holder pid, hostname, time
 *   leases/<aa>.discarded           tokens of <aa> shown to clients whose profiles were dropped, a line
 *                                   `<token> <epoch ms>` each, appended by the holder of <aa> as they are dropped, and at each refresh and give-back
 *   <aa>/<token>.json.gz            an empty placeholder: a claim of a token outside the held leases
 *   index.ndjson.<pid>-<hex>.tmp    an index rewrite in progress
 *   leases/<aa>.discarded.<pid>-<hex>.tmp   a discarded file's rewrite in progress
 *   leases/<aa>.handed-over.<pid>-<hex>     discarded tokens of <aa> a former holder, frozen while its lease
 *                                   was taken over, hands over to the holder, which merges them into the discarded file
 *                                   (the sweep removes one older than maxAge: nobody may lease <aa> again)
 * where <aa> is the token's first two characters. Profiles of the layout before segments
 * (gzip'd `<aa>/<token>.json.gz` files, index lines without a segment) are still read, and
 * deleted by the bounds like the others; no new ones are written.
 *
 * Writing a batch is O(1) file operations: one positional write of all its records at the end of
 * this instance's segment, then one O_APPEND write of all their index lines. A read looks the
 * token up in this process's copy of the index (refreshed from the file) and reads just that byte
 * range. A crash between the two writes leaves records no line refers to (that batch is lost, no
 * other); a crash mid-append leaves a torn line, which readers skip.
 *
 * Tokens: a process draws its tokens inside the prefixes it leases (TokenLeases: a lease file
 * created with `wx`, refreshed every 30 s, taken over when 2 minutes old or when its holder's pid
 * is dead on this host), in memory: no file per claim. Claims of tokens outside the held
 * prefixes are placeholder files created with `wx` (refused inside a prefix another live process
 * leases), kept until the profile's index line is written. Either way a write also refuses a token the index
 * already holds: the first index line of a token is its profile, and later ones are ignored, so
 * no profile is ever overwritten; a write whose line came second (two writers at once: a lease
 * taken over from a frozen holder) is refused and reported, its writer's copy of the index too
 * keeping the first.
 *
 * Only a compaction, under the lock, rewrites the index (temp file + rename) and deletes segments;
 * appenders do not take the lock (see #appendRecords for why no line is lost). It drops the
 * oldest profiles over the bounds, and lines whose segment is gone; a segment file is deleted
 * once no line refers to it and its writer is done with it (rolled over, closed, or not written
 * for 5 minutes: dead). A periodic sweep removes the other crash leftovers. The one exception: on
 * a full disk, where no compaction can write its lock and new index, whole segments of profiles
 * being dropped are deleted first, without the lock (see #freeSpace).
 */
export class FileStorage implements ProfilerStorage {
  readonly dir: string;
  /** The bounds as configured (see effectiveBounds). */
  readonly bounds: Readonly<StorageBounds>;
  /** writeMany() copies each profile's bytes before it settles (see ProfilerStorage.copiesProfileBytes). */
  readonly copiesProfileBytes = true;
  readonly #now: () => number;
  readonly #onError: StorageErrorHandler | undefined;
  readonly #indexPath: string;
  readonly #index: ProfileIndex;
  readonly #lock: FileLock;
  /** Whether this process's copy of the index refers to a segment (caught up with the file by the caller). */
  readonly #refersTo = (name: string): boolean => this.#index.refersTo(name);
  /** Placeholders this instance created and has neither written nor released. */
  readonly #claims = new Set<string>();
  readonly #writing = new Set<string>();
  readonly #shards = new Set<string>();
  /** The token prefixes this instance draws its tokens in, and the tokens drawn. */
  readonly #leases: TokenLeases;
  /** The segment this instance appends its batches to, and those it rolled over. */
  readonly #segments: SegmentFiles;
  /** Batches are appended one at a time (one segment, one offset). */
  #appending: Promise<unknown> = Promise.resolve();
  /** The writeMany() and claim() calls under way, settled or not (never rejecting): close() waits for them. */
  readonly #underWay = new Set<Promise<void>>();
  readonly #timer: NodeJS.Timeout;
  /** Compactions and purges of this instance run one at a time (they share the lock). */
  #exclusive: Promise<unknown> = Promise.resolve();
  #upkeep: Promise<void> | null = null;
  #upkeepAgain = false;
  #writesSinceCheck = 0;
  /** This instance saved a profile: close() checks the bounds. */
  #savedAny = false;
  /**
   * performance.now() of the last bound check, and when the next sweep is due: intervals of this process, on
   * the monotonic clock (a wall clock set back an hour held the check after a burst, and the sweep, for that
   * hour). What other processes judge by a file's mtime stays on the wall clock, as the mtime is.
   */
  #lastCheckAt = -Infinity;
  /** The bound check due for writes made since the last one, when no further write brings it. */
  #pendingCheck: NodeJS.Timeout | null = null;
  #nextSweepAt = 0;
  #closed = false;
  /** The bounds kept: the configured ones, lowered while the disk is full (see #freeSpace). */
  #effective: StorageBounds;
  readonly #segmentBytes: number;
  /** A #freeSpace is scheduled or running. */
  #freeing = false;
  /** The disk was found full: the bounds kept may be lowered, and are checked after every batch. */
  #diskFilled = false;

  constructor(options: FileStorageOptions = {}) {
    this.dir = resolve(options.dir ?? DEFAULT_DIR);
    this.bounds = Object.freeze(resolveBounds(options.bounds));
    const segmentBytes = checkSegmentBytes(options.segmentBytes) ?? DEFAULT_SEGMENT_BYTES;
    this.#effective = { ...this.bounds };
    this.#segmentBytes = segmentBytes;
    this.#segments = new SegmentFiles(this.dir, ...this.#segmentLimits());
    this.#now = options.now ?? Date.now;
    this.#onError = options.onError;
    this.#indexPath = join(this.dir, INDEX_FILE);
    this.#index = new ProfileIndex(this.#indexPath);
    // Who holds a lock is recorded: one left by a process of this host that is gone (kill -9 in the
    // middle of a compaction) is taken over at once, not after DEFAULT_LOCK_STALE_MS of batches waiting.
    const lockOptions = { holderInfo: true, owner: options.leaseOwner, deadOwners: new Set(options.deadLeaseOwners) };
    this.#lock = new FileLock(join(this.dir, LOCK_FILE), undefined, lockOptions);
    this.#leases = new TokenLeases(
      {
        dir: this.dir,
        stored: (prefix) => this.#storedTokens(prefix),
        pending: () => [...this.#writing, ...this.#claims],
        busy: (token) => this.#claims.has(token) || this.#writing.has(token),
        closed: () => this.#closed,
        now: () => this.#now(),
        discardedFor: () => this.bounds.maxAge,
        report: (error) => this.#report(error),
      },
      lockOptions,
    );
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
      if (this.#closed) throw this.#closedError();
      const token = this.#leases.draw(length);
      if (token !== null) return token;
      try {
        await this.#leases.grow(length);
      } catch (error) {
        throw this.#failure('lease a token prefix', null, error);
      }
    }
    throw new ProfilerStorageError(`Could not draw a free ${length}-character profile token in ${this.dir}.`, 'HK_PROFILER_STORAGE_FULL');
  }

  /** Up to `count` fresh tokens in one call (see drawToken): in memory, with at most a lease taken on the way. */
  async drawTokens(length = 6, count = 1): Promise<string[]> {
    const tokens = [await this.drawToken(length)];
    while (tokens.length < count) {
      const token = this.#leases.draw(length);
      if (token === null) break;
      tokens.push(token);
    }
    return tokens;
  }

  /**
   * Claims a token: in a prefix this instance leases, in memory; elsewhere by creating the empty
   * placeholder `<aa>/<token>.json.gz` with `wx` (exactly one claimer, in any process, succeeds),
   * unless another live instance leases the prefix (its draws are in its memory only). A token
   * the index holds is never claimed.
   */
  claim(token: string): Promise<boolean> {
    if (this.#closed) return Promise.reject(this.#closedError());
    // Tracked, as a batch is: a claim under way when close() began made its placeholder after close had removed the others.
    return this.#tracked(this.#claim(token));
  }

  async #claim(token: string): Promise<boolean> {
    if (!isStorableToken(token)) return false;
    if (this.#claims.has(token) || this.#writing.has(token) || this.#leases.isDrawn(token)) return false;
    try {
      return (await this.#claimToken(token)) !== false;
    } catch (error) {
      throw this.#failure('claim a token for', `profile ${token}`, error);
    }
  }

  /** Removes this instance's placeholder, if it is still an empty placeholder. */
  async release(token: string): Promise<void> {
    if (!isStorableToken(token)) return;
    if (this.#leases.release(token)) return;
    if (!this.#claims.delete(token)) return;
    await this.#removePlaceholder(token).catch((error: unknown) => this.#report(error));
  }

  /**
   * A claimed token a client saw, whose profile will not be written: a drawn token stays taken
   * while this instance holds its prefix's lease; a claimed one keeps its placeholder until close().
   */
  async discard(token: string): Promise<void> {
    if (!isStorableToken(token)) return;
    this.#leases.discard(token);
  }

  /** Stores one profile: a batch of one (see writeMany). */
  write(profile: StorableProfile): Promise<void> {
    return this.writeMany([profile]);
  }

  /**
   * Appends the batch's records to this instance's segment with one write, then their index lines
   * with one O_APPEND write. Tokens neither claimed nor drawn here are claimed first (as claim()
   * would). A profile whose token the index (or another writer's claim) holds is refused with
   * ProfileExistsError, an unstorable one with InvalidProfileError, and the others are saved
   * regardless; the refusals reject the promise afterwards (ProfileBatchError when several).
   * ProfilerStorageError when the disk fails; nothing escapes otherwise.
   */
  writeMany(profiles: readonly StorableProfile[]): Promise<void> {
    if (this.#closed) return Promise.reject(this.#closedError());
    // Tracked from the start: a batch still claiming its tokens when close() begins would otherwise
    // append (and make a segment) after close's bound check, and after close resolved.
    return this.#tracked(this.#writeBatch(profiles));
  }

  /** `work`, which close() waits for until it settles. */
  #tracked<T>(work: Promise<T>): Promise<T> {
    const settled = work.then(
      () => {},
      () => {},
    );
    this.#underWay.add(settled);
    void settled.then(() => this.#underWay.delete(settled));
    return work;
  }

  /** writeMany()'s work: claims, refusals, the append, and the bound check it calls for. */
  async #writeBatch(profiles: readonly StorableProfile[]): Promise<void> {
    const refused: ProfilerStorageError[] = [];
    const batch: PendingWrite[] = [];
    for (const profile of profiles) {
      const pending = this.#prepare(profile);
      if (pending instanceof ProfilerStorageError) refused.push(pending);
      else batch.push(pending);
    }
    let saved = 0;
    try {
      saved = await this.#save(batch, refused);
    } finally {
      for (const pending of batch) this.#writing.delete(pending.token);
    }
    this.#writesSinceCheck += saved;
    if (saved > 0) {
      this.#savedAny = true;
      const since = performance.now() - this.#lastCheckAt;
      if (this.#writesSinceCheck >= (this.#diskFilled ? 1 : CHECK_EVERY_WRITES) || since >= CHECK_EVERY_MS) this.#scheduleUpkeep();
      // Writes that wait for no check: once the second is up, one runs anyway, so a burst that then
      // goes quiet does not leave the storage over its bounds until the idle timer's five minutes.
      else this.#pendingCheck ??= setTimeout(() => {
        this.#pendingCheck = null;
        if (this.#writesSinceCheck > 0) this.#scheduleUpkeep();
      }, CHECK_EVERY_MS - since).unref();
    }
    if (refused.length === 1) throw refused[0];
    if (refused.length > 1) throw new ProfileBatchError(refused);
  }

  /**
   * The profile, or null when the token is malformed, unknown, only claimed, or its bytes are unreadable.
   * A token unknown here in a prefix another live process leases is waited for, up to
   * PENDING_ELSEWHERE_WAIT_MS: that process may have answered its request a moment ago and not saved it yet.
   */
  async read(token: string): Promise<Profile | null> {
    if (!isStorableToken(token)) return null;
    let data: Buffer | undefined;
    let entry: IndexRecord | undefined;
    try {
      await this.#index.refresh();
      entry = this.#index.get(token) ?? (await this.#savedElsewhere(token));
      if (entry === undefined) return null;
      data = entry.segment === null ? await ignoreMissing(readFile(this.#profilePath(token))) : await this.#segments.read(entry.segment, entry.offset, entry.bytes);
    } catch (error) {
      throw this.#failure('read', `profile ${token}`, error);
    }
    if (data === undefined || data.length === 0) return null;
    return decodeProfile(data, token, entry.segment === null);
  }

  /**
   * The index entry of a token another live process may be about to save (its prefix is that process's
   * lease: a worker of the same cluster, whose page link another worker answers), once it is saved;
   * undefined when it is not within PENDING_ELSEWHERE_WAIT_MS, or no other process draws its prefix.
   */
  async #savedElsewhere(token: string): Promise<IndexRecord | undefined> {
    const prefix = token.slice(0, LEASE_PREFIX_LENGTH);
    // A lease that cannot be looked at (a directory gone or unreadable) is no reason to wait, nor to fail the read.
    if (this.#leases.holds(prefix) || !(await this.#leases.leasedByAnother(prefix).catch(() => false))) return undefined;
    // By the clock, not by counting polls: on a busy event loop each 25 ms delay and refresh takes far longer (8 s for 40 of them).
    const deadline = performance.now() + PENDING_ELSEWHERE_WAIT_MS;
    while (!this.#closed && performance.now() < deadline) {
      await delay(PENDING_ELSEWHERE_POLL_MS);
      await this.#index.refresh();
      const entry = this.#index.get(token);
      if (entry !== undefined) return entry;
    }
    return undefined;
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

  /**
   * Removes every profile, segment and claim of every process (under the lock); writers racing it
   * start afresh (a writer whose segment was deleted rolls over to a new one).
   */
  async purge(): Promise<void> {
    await this.#runExclusive(async () => {
      try {
        await this.#acquireLock(PURGE_LOCK_TIMEOUT_MS);
      } catch (error) {
        if (isMissing(error)) return;
        throw error instanceof ProfilerStorageError ? error : this.#failure('purge', null, error);
      }
      try {
        await this.#serialAppend(() => this.#index.hold(async () => {
          // Everything written before now is gone, with its segment: nothing of it to read back.
          const purgedAt = Date.now();
          const { file, bytes } = this.#replaceIndex(encodeIndexHeader(PURGED_THROUGH, purgedAt), []);
          this.#index.emptied(bytes, file, PURGED_THROUGH, purgedAt);
        }));
        for (const name of (await ignoreMissing(readdir(this.dir))) ?? []) {
          if (SHARD_DIR.test(name)) await rm(join(this.dir, name), { recursive: true, force: true });
        }
        await this.#segments.deleteAll();
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
    return this.#runExclusive(() => this.#compact(true, COMPACT_LOCK_TIMEOUT_MS));
  }

  /**
   * Refuses new batches and claims, stops the background upkeep, waits for running work (the batches
   * and claims under way first), applies the bounds to what this instance wrote since its last bound check,
   * closes the segment (deleting this instance's segments no index line refers to), removes this
   * instance's unused placeholders and lets go of the index file it holds open.
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    if (this.#pendingCheck !== null) clearTimeout(this.#pendingCheck);
    this.#pendingCheck = null;
    // Batches accepted before close are saved, and bounded below, not appended after it; claims made, and released below.
    await Promise.all(this.#underWay);
    await this.#upkeep;
    await this.#exclusive;
    await this.#appending;
    // The check the last writes waited for (queued behind a running one, or due at the end of its
    // second) will not run now, and one skipped as another process held the lock left that
    // process's compaction to copy them over unbounded: without this, the directory stayed over
    // its bounds after a shutdown, until the next process to write there compacted it.
    if (this.#savedAny) await this.#lastBoundCheck().catch((error: unknown) => this.#report(error));
    this.#segments.retireCurrent();
    try {
      await this.#deleteRetiredUnderLock();
    } catch (error) {
      this.#report(error);
    }
    await Promise.all([...this.#claims].map((token) => this.release(token)));
    await this.#leases.close();
    this.#index.close();
  }

  /** Validates and serialises a profile and takes its token in #writing; the error that refuses it otherwise. */
  #prepare(profile: StorableProfile): PendingWrite | ProfilerStorageError {
    const json = storableJson(profile);
    if (json instanceof ProfilerStorageError) return json;
    const token = profile.token;
    if (this.#writing.has(token)) return new ProfileExistsError(token);
    this.#writing.add(token);
    return { profile, token, json, placeholder: false };
  }

  /** Claims what needs it, refuses tokens the index holds, appends the rest; returns how many were saved. */
  async #save(batch: PendingWrite[], refused: ProfilerStorageError[]): Promise<number> {
    if (batch.length === 0) return 0;
    let fresh: PendingWrite[] = [];
    let lost = new Set<string>();
    try {
      const owned: PendingWrite[] = [];
      for (const pending of batch) {
        if (this.#claims.has(pending.token) || this.#leases.isDrawn(pending.token)) {
          owned.push(pending);
          continue;
        }
        const claimed = await this.#claimToken(pending.token);
        if (claimed === false) {
          refused.push(new ProfileExistsError(pending.token));
          continue;
        }
        pending.placeholder = claimed === 'placeholder';
        owned.push(pending);
      }
      // Drawn and claimed tokens are ours, but a profile may be stored under one already (a lease
      // taken over from a frozen holder, a hand-made line): the first index line of a token wins.
      await this.#index.refresh();
      for (const pending of owned) {
        if (!this.#index.has(pending.token)) {
          fresh.push(pending);
          continue;
        }
        // Drawn or claimed here, and shown to a client: its profile is lost, and the token shows another.
        // The refusal is its one record (the profiler logs it): reported through onError too, it was logged twice.
        refused.push(tokenTakenError(pending.token));
        this.#leases.settle(pending.token);
        if (pending.placeholder) await this.#dropPlaceholder(pending.token);
      }
      if (fresh.length > 0) lost = await this.#serialAppend(() => this.#appendBatch(fresh));
    } catch (error) {
      for (const pending of batch) if (pending.placeholder) await this.#dropPlaceholder(pending.token).catch(() => {});
      throw this.#failure('write', batch.length === 1 ? `profile ${(batch[0] as PendingWrite).token}` : `${batch.length} profiles`, error);
    }
    for (const pending of fresh) {
      this.#leases.settle(pending.token);
      // The index line holds the token now: the placeholder has done its job.
      if (this.#claims.delete(pending.token)) await this.#removePlaceholder(pending.token).catch((error: unknown) => this.#report(error));
      if (!lost.has(pending.token)) continue;
      // Another writer's line for the token came first (see #appendBatch): readers keep that profile, ours is not stored.
      refused.push(tokenTakenError(pending.token));
    }
    return fresh.length - lost.size;
  }

  /**
   * Claims a token for this instance: 'lease' in a prefix it leases (in memory), 'placeholder'
   * elsewhere, false when taken (indexed, claimed, or in another live instance's lease).
   * File-system errors are thrown as they are.
   */
  async #claimToken(token: string): Promise<'lease' | 'placeholder' | false> {
    const leased = this.#leases.claim(token, (candidate) => this.#index.has(candidate));
    if (leased !== null) return leased && 'lease';
    if (await this.#leases.leasedByAnother(token.slice(0, LEASE_PREFIX_LENGTH))) return false;
    if (!(await this.#inShard(token, () => this.#createPlaceholder(token)))) return false;
    this.#claims.add(token);
    // After the placeholder: a writer removes its placeholder only once the token's index line is written.
    try {
      await this.#index.refresh();
    } catch (error) {
      await this.#dropPlaceholder(token).catch(() => {});
      throw error;
    }
    if (!this.#index.has(token)) return 'placeholder';
    await this.#dropPlaceholder(token);
    return false;
  }

  async #dropPlaceholder(token: string): Promise<void> {
    if (this.#claims.delete(token)) await this.#removePlaceholder(token);
  }

  #serialAppend<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#appending.then(fn, fn);
    this.#appending = run.catch(() => {});
    return run;
  }

  /** One positional write of the batch's records (JSON + newline) to the segment, then one append of their index lines. */
  async #appendBatch(batch: PendingWrite[]): Promise<Set<string>> {
    const segment = this.#segments.writable();
    // The records go to the file straight from their buffers (the caller's until the promise
    // settles): no copy of the batch into one buffer of hundreds of KB, allocated per batch.
    const parts: Uint8Array[] = [];
    const entries: IndexEntry[] = [];
    let size = 0;
    for (const { profile, json } of batch) {
      // Most profiles are ASCII (as long in bytes as in characters): a latin1 encoding of those is a plain copy.
      const bytes = typeof json !== 'string' ? json : Buffer.from(json, Buffer.byteLength(json) === json.length ? 'latin1' : 'utf8');
      parts.push(bytes, NEWLINE_BYTE);
      entries.push(indexEntryOf(profile, bytes.length, segment.name, segment.size + size));
      size += bytes.length + 1;
    }
    const { records, lines } = recordLines(entries);
    // Synchronous, as the index append below and the index refresh (see SegmentFiles.write).
    this.#segments.write(segment, parts, size, batch.length);
    await this.#appendRecords(records, Buffer.from(lines), segment);
    // The first line of a token is its profile: one that names another record was appended first.
    const lost = new Set<string>();
    for (const record of records) {
      const first = this.#index.get(record.token);
      if (first !== undefined && (first.segment !== record.segment || first.offset !== record.offset)) lost.add(record.token);
    }
    return lost;
  }

  /**
   * Appends the records' lines, and returns once they are in the current index (or were dropped
   * by a compaction's bounds). A compaction (another process, under the lock) reads the file,
   * renames a rewritten one over it, then copies over the lines appended to the old file
   * meanwhile; its header says what it dropped: up to which profile time from the oldest end, and
   * from which time (dated ahead) and over which size (alone over the byte bound) from the newest.
   * So after writing: while the lock is held by a live holder, wait (a little); then, if the path
   * no longer names the file written to, read the new file, and append again the lines missing
   * from it that are none of those (a duplicate line is harmless: readers keep the first). A
   * compaction that takes the lock after our check reads the file after our write, lines included.
   */
  async #appendRecords(records: IndexRecord[], data: Buffer, segment: Segment): Promise<void> {
    let pending = records;
    let payload = data;
    for (let attempt = 1; ; attempt++) {
      const file = appendIndexLines(this.#indexPath, payload);
      // Nothing else appended since this copy's last read: our lines are the file's tail, added
      // without reading them back. Otherwise another process's lines may come before ours, one of
      // them for a token of ours (its lease taken over from us while we were frozen): the file is
      // read, so that this copy keeps the first line of each token, as every reader and compaction
      // does; added first, ours stayed this process's profile until its next reload, then turned
      // into the other request's.
      if (this.#index.appended(file, payload.length)) this.#index.addAll(pending);
      else {
        try {
          await this.#index.refresh();
        } catch {
          // Read again by the next refresh; meanwhile this copy has the lines just written.
          this.#index.addAll(pending);
        }
      }
      // Held by this instance: its compaction does not replace the file during an append (see #compact).
      if (!this.#lock.mayBeOurs) await waitWhileLocked(this.#lock);
      if (isCurrentFile(this.#indexPath, file)) return;
      await this.#index.reload();
      const droppedThrough = this.#index.droppedThrough;
      // Dropped from the newest end too: judged by droppedThrough alone, a profile dated ahead, or
      // alone over the byte bound, was put back until the next compaction.
      const { aheadFrom, overBytes } = this.#index.droppedNewest;
      pending = pending.filter(
        (record) =>
          !this.#index.has(record.token) &&
          (droppedThrough === null || record.time > droppedThrough) &&
          (aheadFrom === null || record.time < aheadFrom) &&
          (overBytes === null || record.bytes <= overBytes),
      );
      // A purge deleted the segment: there is nothing left to index.
      if (pending.length === 0 || !this.#segments.isLinked(segment)) return;
      if (attempt >= APPEND_ATTEMPTS) throw new Error(`The profiler index ${this.#indexPath} was replaced ${APPEND_ATTEMPTS} times while appending to it.`);
      payload = Buffer.from(pending.map((record) => `${record.line}\n`).join(''));
    }
  }

  /**
   * Deletes this instance's rolled-over segments that no index line refers to, holding the index
   * lock (skipped, for a later check, while another process holds it): a compaction renames its
   * new index before it copies over the lines appended meanwhile, and a refresh between the two
   * misses lines that still refer to our segments. Our own appends wait too (one retrying after
   * a compaction may re-append lines for a segment it still has).
   */
  async #deleteRetiredUnderLock(): Promise<void> {
    // Only a segment that this copy of the index no longer refers to may be deletable (checked
    // again under the lock): most checks end here, without taking the lock.
    if (!this.#segments.hasDeletable(this.#refersTo)) return;
    await this.#runExclusive(async () => {
      try {
        if (!(await this.#lock.tryAcquire())) return;
      } catch (error) {
        if (isMissing(error)) return; // the directory is gone (purged by hand): nothing to delete
        throw error;
      }
      try {
        await this.#serialAppend(async () => {
          await this.#index.refresh();
          await this.#segments.deleteRetired(this.#refersTo);
        });
      } finally {
        await this.#lock.release();
      }
    });
  }

  /**
   * The bounds this instance keeps: the configured ones, or lower once the disk filled up (see
   * #freeSpace), until the instance is made again (a restart).
   */
  get effectiveBounds(): Readonly<StorageBounds> {
    return { ...this.#effective };
  }

  /** The prefixes this instance leases now (for tests and tools). */
  get leasedPrefixes(): string[] {
    return this.#leases.prefixes;
  }

  /** The tokens of a prefix this storage holds: its index entries (caught up with the file) and its shard's files. */
  async #storedTokens(prefix: string): Promise<string[]> {
    await this.#index.refresh();
    const tokens: string[] = [];
    for (const name of (await ignoreMissing(readdir(join(this.dir, prefix)))) ?? []) {
      const token = PROFILE_FILE.exec(name)?.[1];
      if (token !== undefined) tokens.push(token);
    }
    // After the awaits: what a write added to the index meanwhile is in.
    for (const entry of this.#index.newestFirst()) if (entry.token.startsWith(prefix)) tokens.push(entry.token);
    return tokens;
  }

  #profilePath(token: string): string {
    return join(this.dir, token.slice(0, 2), `${token}${PROFILE_SUFFIX}`);
  }

  /** Runs `fn` with the token's shard directory made; once more if a purge removed it meanwhile. */
  async #inShard<T>(token: string, fn: () => Promise<T>): Promise<T> {
    const shard = join(this.dir, token.slice(0, 2));
    if (!this.#shards.has(shard)) {
      await makeDirectory(shard, PRIVATE_DIRECTORY);
      this.#shards.add(shard);
    }
    try {
      return await fn();
    } catch (error) {
      if (errorCode(error) !== 'ENOENT') throw error;
      await makeDirectory(shard, PRIVATE_DIRECTORY);
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
   * Writes the new index (the header, then the records' lines) beside the old one and renames it
   * over; returns the new file's identity and size. Synchronous (a write of a few
   * hundred KB to the page cache): this instance's saves and index reads wait for it, and each
   * awaited step would cost them a turn of a busy event loop.
   */
  #replaceIndex(header: string, records: readonly IndexRecord[]): { file: { dev: number; ino: number }; bytes: number } {
    const temp = `${this.#indexPath}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
    const fd = openSync(temp, 'wx');
    let identity;
    let bytes;
    try {
      bytes = writeIndexFile(fd, header, records);
      identity = fstatSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      if (!this.#lock.refreshedAndStillHeldSync()) {
        throw new ProfilerStorageError(`The profiler storage lock ${this.#lock.path} was taken over; the index rewrite was abandoned.`, 'HK_PROFILER_STORAGE_LOCKED');
      }
      renameSync(temp, this.#indexPath);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
    return { file: { dev: identity.dev, ino: identity.ino }, bytes };
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
    this.#lastCheckAt = performance.now();
    this.#upkeep = this.#checkBounds()
      .catch((error: unknown) => {
        this.#report(error);
        this.#whenDiskFull(error);
      })
      .finally(() => {
        this.#upkeep = null;
        if (this.#upkeepAgain) {
          this.#upkeepAgain = false;
          this.#scheduleUpkeep();
        }
      });
  }

  /**
   * close()'s bound check: waits (up to CLOSE_LOCK_TIMEOUT_MS) for another process's compaction,
   * which copies the lines appended during it without applying the bounds to them.
   */
  async #lastBoundCheck(): Promise<void> {
    await this.#index.refresh();
    if (this.#overBounds()) await this.#runExclusive(() => this.#compact(false, CLOSE_LOCK_TIMEOUT_MS));
  }

  async #checkBounds(): Promise<void> {
    await this.#deleteRetiredUnderLock();
    await this.#index.refresh();
    const sweepDue = performance.now() >= this.#nextSweepAt;
    if (!sweepDue && !this.#overBounds()) return;
    // Another process holding the lock is compacting already: skip, the next check will see its result.
    await this.#runExclusive(() => this.#compact(sweepDue, 0));
  }

  #overBounds(): boolean {
    const { maxAge, maxProfiles, maxBytes } = this.#effective;
    const oldest = this.#index.oldest();
    return (
      this.#index.size > maxProfiles ||
      this.#index.bytes > maxBytes ||
      (oldest !== undefined && oldest.time < this.#now() - maxAge * (1 + AGE_SLACK)) ||
      this.#index.skippedLines > MAX_SKIPPED_LINES
    );
  }

  /**
   * Under the lock: catch this process's copy of the index up with the file, drop the lines whose
   * segment is gone, (sweep,) keep what the bounds allow, write a header and the kept lines to a
   * temp file and rename it over the index, then copy over the lines other processes appended to
   * the old file meanwhile (appenders check after writing whether the file was replaced, and
   * append again if so), and last delete the segments and old-layout files no line refers to.
   * A crash at any point leaves either the old or the new index, plus at worst files that a later
   * compaction deletes. `lockWaitMs`: how long another holder of the lock is waited for; 0, not at
   * all (its compaction is the one that runs).
   */
  async #compact(sweep: boolean, lockWaitMs: number): Promise<CompactionReport | null> {
    try {
      if (lockWaitMs > 0) await this.#acquireLock(lockWaitMs);
      else if (!(await this.#lock.tryAcquire())) return null;
    } catch (error) {
      if (isMissing(error)) return null;
      throw error instanceof ProfilerStorageError ? error : this.#failure('lock', null, error);
    }
    let old: FileHandle | undefined;
    try {
      old = await ignoreMissing(open(this.#indexPath, 'r'));
      const { records, segments: referred, end } = old === undefined ? { records: [], segments: [], end: 0 } : await this.#index.catchUp(old);
      const report: CompactionReport = { profiles: 0, removed: 0, cleaned: 0, segmentsDeleted: 0, recovered: 0 };
      // Listed after the catch-up: a segment is made before any line refers to it.
      const segments = await this.#segments.list();
      const present = new Set(segments);
      // Usually every segment referred to is there: then no pass over the records.
      let live = referred.every((segment) => present.has(segment)) ? records : records.filter((record) => record.segment === null || present.has(record.segment));
      report.cleaned += records.length - live.length;
      // No index file at all (deleted while this process ran) has lost its lines: what was dropped
      // from it is known only to the processes that read its header, this one among them maybe
      // (so is it when the file was cut or overwritten).
      const header = old === undefined ? null : this.#index.droppedEver;
      const seen = this.#index.droppedEverSeen;
      const droppedEver = header === undefined ? undefined : header === null ? seen : seen === null ? header : Math.max(header, seen);
      let recovered: IndexRecord[] = [];
      /** Segments holding lost records not put back yet (their token may be written now): kept for a later sweep. */
      let deferred: ReadonlySet<string> = new Set();
      if (sweep) {
        // What cannot be read in leases/ (EACCES on the directory, a lease file) is skipped, and said once per compaction.
        let leasesSkipped = false;
        const skipLeases = (error: unknown): void => {
          if (leasesSkipped) return;
          leasesSkipped = true;
          const reason = errorCode(error) ?? (error instanceof Error ? error.message : String(error));
          this.#report(new ProfilerStorageError(`Cannot read the token-prefix leases of the profiler storage ${this.dir} (${reason}): the compaction skipped what it could not read there, and went on.`, 'HK_PROFILER_STORAGE', { cause: error }));
        };
        live = await this.#sweep(live, report, skipLeases);
        // Not knowing what was dropped (a header of an earlier version), nothing is read back.
        if (droppedEver !== undefined) {
          ({ records: recovered, deferred } = await this.#unlistedRecords(segments, referred, live, droppedEver, skipLeases));
          // In time order, as the bounds read them; the lost ones go through the bounds as any other.
          if (recovered.length > 0) live = [...live, ...recovered].sort((a, b) => a.time - b.time);
        }
        this.#nextSweepAt = performance.now() + SWEEP_EVERY_MS;
      }
      const now = this.#now();
      const [firstKept, endKept] = keptRange(live, this.#effective, now);
      const kept = live.slice(firstKept, endKept);
      const droppedThrough = firstKept > 0 ? (live[firstKept - 1] as IndexRecord).time : null;
      const newest = droppedNewest(live, endKept, this.#effective, now);
      // Carried from header to header: the newest dropped, by the bounds (dated ahead, too) or with its segment gone.
      // After a header of an earlier version, what its compactions dropped is unknown (its "d" is the
      // last one's alone, null when that one dropped nothing): any profile up to now, or up to the
      // newest listed, may have been, so none of them is read back later. A purge's "d" (PURGED_THROUGH,
      // all time) dropped nothing after it, which was before now: kept, it would stop every read-back for good.
      const earlierDropped = this.#index.droppedThrough;
      let newestDropped = droppedEver === undefined ? Math.max(earlierDropped === null || earlierDropped >= PURGED_THROUGH ? -Infinity : earlierDropped, this.#now(), live.length > 0 ? (live[live.length - 1] as IndexRecord).time : -Infinity) : droppedEver;
      const removed = live.slice(0, firstKept);
      if (endKept < live.length) removed.push(...live.slice(endKept));
      if (live.length !== records.length) {
        const liveTokens = new Set(live.map((record) => record.token));
        for (const record of records) if (!liveTokens.has(record.token)) removed.push(record);
      }
      for (const record of removed) if (newestDropped === null || record.time > newestDropped) newestDropped = record.time;
      // This instance's own batches wait meanwhile: none is appended to the old file after its tail
      // was copied. Its reads of the index wait too (hold): one between the rename and compacted()
      // would take the new file, tail not copied yet, for the whole index, and searches and reads
      // would miss the profiles appended during the compaction until the next refresh.
      const recoveredSet = new Set(recovered);
      let relisted: IndexRecord[] = [];
      await this.#serialAppend(() => this.#index.hold(async () => {
        const listed = recovered.length === 0 ? kept : kept.filter((record) => !recoveredSet.has(record));
        const { file, bytes } = this.#replaceIndex(encodeIndexHeader(droppedThrough, newestDropped, newest), listed);
        // A record read back and dropped by the bounds never had a line here: a tail line of its
        // token is a profile written under it since, and is copied.
        const removedListed = recovered.length === 0 ? removed : removed.filter((record) => !recoveredSet.has(record));
        const tail = old === undefined ? [] : this.#tailToCopy(readIndexLines(old, end).lines, removedListed);
        // The records read back go after the tail, unless a line of it holds their token: their
        // token was free once their line was lost, and a profile written under it meanwhile (its
        // line appended during this compaction) is the one to list, readers keeping the first line.
        if (recovered.length > 0) {
          const tailTokens = new Set(tail.map((record) => record.token));
          relisted = kept.filter((record) => recoveredSet.has(record) && !tailTokens.has(record.token));
        }
        const lines = [...tail, ...relisted].map((record) => record.line);
        if (lines.length > 0) appendIndexLines(this.#indexPath, Buffer.from(`${lines.join('\n')}\n`));
        // The copied and read-back lines are read by the next refresh, as any appended by another process.
        this.#index.compacted(removed, bytes, file, droppedThrough, newestDropped, newest);
      }));
      // A record read back whose token a newer line holds is not listed.
      report.profiles = kept.length - (recovered.length === 0 ? 0 : kept.filter((record) => recoveredSet.has(record)).length - relisted.length);
      report.removed = firstKept + live.length - endKept;
      if (recovered.length > 0) {
        report.recovered = relisted.length;
        if (report.recovered > 0) {
          this.#report(new ProfilerStorageError(`The profiler index in ${this.dir} had lost the lines of ${report.recovered === 1 ? 'one profile' : `${report.recovered} profiles`} (a writer killed before it appended them, or the file deleted, cut or overwritten); they were put back from the segment files.`, 'HK_PROFILER_STORAGE_RECOVERED'));
        }
      }
      for (let i = 0; i < removed.length; i++) {
        const record = removed[i] as IndexRecord;
        if (record.segment !== null) continue;
        if (i % LOCK_REFRESH_EVERY === 0) await this.#lock.refresh();
        await removeFile(this.#profilePath(record.token));
      }
      // Read back the tail just copied and the lines appended since, before judging which segments are referred to.
      await this.#index.refresh();
      // A segment no line referred to before this compaction either may hold lost lines: only a
      // sweep, which read back what it could first, deletes it. One that does not sweep (over the
      // bounds, between sweeps) deletes those whose lines it dropped, and this writer's own.
      report.segmentsDeleted = await this.#segments.deleteUnreferenced(sweep ? segments.filter((name) => !deferred.has(name)) : referred, this.#refersTo);
      return report;
    } catch (error) {
      throw error instanceof ProfilerStorageError ? error : this.#failure('compact', null, error);
    } finally {
      await old?.close();
      await this.#lock.release();
    }
  }

  /**
   * The lines appended to the old index during a compaction that go on in the new one: the valid
   * entries not of a removed profile. Lines this process knows (its own appends, mostly) are
   * recognised without parsing, as a refresh does.
   */
  #tailToCopy(lines: string[], removed: readonly IndexRecord[]): IndexRecord[] {
    let removedTokens: Set<string> | undefined;
    const copied: IndexRecord[] = [];
    for (const line of lines) {
      const token = leadingToken(line);
      const known = token === undefined ? undefined : this.#index.get(token);
      const record = known !== undefined && known.line === line ? known : decodeIndexLine(line);
      if (record === null) continue;
      removedTokens ??= new Set(removed.map((entry) => entry.token));
      if (!removedTokens.has(record.token)) copied.push(record);
    }
    return copied;
  }

  /**
   * Removes crash leftovers (under the lock): temp files (leases/'s too), expired hand-overs, abandoned placeholders, moved-aside stale
   * locks, old-layout profile files without a line; returns the records without the old-layout
   * ones whose file is gone.
   */
  async #sweep(records: IndexRecord[], report: CompactionReport, skipLeases: (error: unknown) => void): Promise<IndexRecord[]> {
    const oldLayout = new Set(records.filter((record) => record.segment === null).map((record) => record.token));
    const present = new Set<string>();
    const now = Date.now();
    let operations = 0;
    const removeIfOlder = async (path: string, ageMs: number): Promise<void> => {
      const stats = await ignoreMissing(stat(path));
      if (stats !== undefined && now - stats.mtimeMs > ageMs && (await removeFile(path))) report.cleaned++;
    };
    // A rewrite's temp file (`<file>.<pid>-<hex>.tmp`, renamed over its file within milliseconds) left by a crash.
    const isTemp = (name: string): boolean => name.endsWith('.tmp');
    for (const name of (await ignoreMissing(readdir(this.dir))) ?? []) {
      // `index.lock.stale-*`: a lock moved aside by an earlier version's takeover (FileLock now takes over under `.takeover`).
      if (isTemp(name) || name.startsWith(`${LOCK_FILE}.stale-`)) await removeIfOlder(join(this.dir, name), ABANDONED_TEMP_MS);
      if (!SHARD_DIR.test(name)) continue;
      const shard = join(this.dir, name);
      for (const file of (await ignoreMissing(readdir(shard))) ?? []) {
        if (++operations % LOCK_REFRESH_EVERY === 0) await this.#lock.refresh();
        const path = join(shard, file);
        if (isTemp(file)) {
          await removeIfOlder(path, ABANDONED_TEMP_MS);
          continue;
        }
        const token = PROFILE_FILE.exec(file)?.[1];
        if (token === undefined || !token.startsWith(name)) continue;
        if (oldLayout.has(token)) {
          present.add(token);
          continue;
        }
        if (this.#claims.has(token) || this.#writing.has(token)) continue;
        const stats = await ignoreMissing(stat(path));
        if (stats === undefined) continue;
        // Empty: a claim, abandoned once old; otherwise an old-layout profile no line refers to.
        await removeIfOlder(path, stats.size === 0 ? ABANDONED_CLAIM_MS : ORPHAN_GRACE_MS);
      }
    }
    // A discarded file's rewrite (TokenLeases) makes its temp file in leases/, by the same rule. A hand-over
    // waits for the next holder of its prefix, which may never come: once older than maxAge, every token in
    // it is older still (none is dropped after its file is written), and that holder would only drop them.
    let leaseNames: string[] = [];
    try {
      leaseNames = (await ignoreMissing(readdir(join(this.dir, LEASE_DIR)))) ?? [];
    } catch (error) {
      skipLeases(error);
    }
    for (const name of leaseNames) {
      try {
        if (isTemp(name)) await removeIfOlder(join(this.dir, LEASE_DIR, name), ABANDONED_TEMP_MS);
        else if (isHandOver(name)) await removeIfOlder(join(this.dir, LEASE_DIR, name), this.bounds.maxAge);
      } catch (error) {
        skipLeases(error);
      }
    }
    // A record past the end of its segment was lost (the segment cut, or its bytes never reached
    // the disk before a power cut while its index line did): no longer listed. Segments only grow,
    // and a record is appended before its index line, so no record being written looks lost.
    const sizes = new Map<string, number>();
    for (const record of records) {
      if (record.segment === null || sizes.has(record.segment)) continue;
      sizes.set(record.segment, (await ignoreMissing(stat(this.#segments.path(record.segment))))?.size ?? 0);
    }
    const kept = records.filter((record) => (record.segment === null ? present.has(record.token) : record.offset + record.bytes <= (sizes.get(record.segment) as number)));
    report.cleaned += records.length - kept.length;
    return kept;
  }

  /**
   * The records in segments no index line refers to that no compaction dropped (newer than
   * `droppedEver`, see ProfileIndex.droppedEver), as index records: their lines were lost (the
   * index deleted, cut to nothing or overwritten), and the compaction would otherwise delete their
   * segments as no longer referred to. Only segments no writer has written for SEGMENT_STALE_MS
   * are read: a live writer's records may be waiting for their lines. A record cut short (the last,
   * by a crash) or no profile is skipped, and so is a token the index lists. A record's time is
   * read first (the first `"time":` of a profile's JSON is its own): a dropped one is not parsed.
   * `deferred`: the segments of records not put back because their token may be written now
   * (see #mayReadBack), which a later sweep reads again rather than this one deleting them.
   */
  async #unlistedRecords(
    present: readonly string[],
    referred: readonly string[],
    live: readonly IndexRecord[],
    droppedEver: number | null,
    skipLeases: (error: unknown) => void,
  ): Promise<{ records: IndexRecord[]; deferred: Set<string> }> {
    const listed = new Set(referred);
    const entries: IndexEntry[] = [];
    const deferred = new Set<string>();
    const tokens = new Set(live.map((record) => record.token));
    const leasedByAnother = new Map<string, boolean>();
    for (const name of present) {
      if (listed.has(name)) continue;
      let data: Buffer | undefined;
      try {
        if (!(await this.#segments.isAbandoned(name))) continue;
        await this.#lock.refresh();
        data = await ignoreMissing(readFile(this.#segments.path(name)));
      } catch (error) {
        if (error instanceof ProfilerStorageError) throw error;
        // One segment that cannot be read (no permission, a symlink loop, over 2 GiB) is not read
        // back; failing the compaction would fail every sweep after it, and the bounds with it.
        this.#report(this.#failure('read back the profiles of segment', name, error));
        continue;
      }
      if (data === undefined) continue;
      for (let offset = 0, end = data.indexOf(NEWLINE); end !== -1; offset = end + 1, end = data.indexOf(NEWLINE, offset)) {
        if (droppedEver !== null && !(recordTime(data, offset, end) > droppedEver)) continue;
        const summary = recordSummary(data, offset, end);
        if (summary === null || tokens.has(summary.token) || (droppedEver !== null && summary.time <= droppedEver)) continue;
        tokens.add(summary.token);
        if (!(await this.#mayReadBack(summary.token, leasedByAnother, skipLeases))) {
          // One the age bound would drop anyway is not worth keeping its segment for.
          if (summary.time >= this.#now() - this.#effective.maxAge) deferred.add(name);
          continue;
        }
        this.#leases.stored(summary.token);
        entries.push(indexEntryOf(summary, end - offset, name, offset));
      }
    }
    return { records: recordLines(entries).records, deferred };
  }

  /**
   * Whether a lost token may be listed again: not while someone may be writing a new profile
   * under it, free since its line was lost. A prefix another live process leases is its own to
   * draw from, unseen (its draws avoid what the index held when it scanned the prefix); a token
   * drawn or claimed here, or claimed by a placeholder elsewhere, is about to be written.
   */
  async #mayReadBack(token: string, leasedByAnother: Map<string, boolean>, skipLeases: (error: unknown) => void): Promise<boolean> {
    const prefix = token.slice(0, LEASE_PREFIX_LENGTH);
    if (!this.#leases.holds(prefix)) {
      let leased = leasedByAnother.get(prefix);
      if (leased === undefined) {
        try {
          leased = await this.#leases.leasedByAnother(prefix);
        } catch (error) {
          // A lease that cannot be read may be live: its prefix's records wait for a later sweep, their segment kept.
          skipLeases(error);
          leased = true;
        }
        leasedByAnother.set(prefix, leased);
      }
      if (leased) return false;
    }
    if (this.#claims.has(token) || this.#writing.has(token) || this.#leases.isDrawn(token)) return false;
    return (await ignoreMissing(stat(this.#profilePath(token)))) === undefined;
  }

  /** Segment sizes for the bounds kept: a segment is deleted only once all its profiles are dropped (see SEGMENT_SHARE). */
  #segmentLimits(): [maxBytes: number, maxRecords: number] {
    const { maxProfiles, maxBytes } = this.#effective;
    return [Math.min(this.#segmentBytes, maxBytes * SEGMENT_SHARE), Math.max(1, Math.floor(maxProfiles * SEGMENT_SHARE))];
  }

  /** Frees space in the background (#freeSpace) when `error` says the disk is full; once at a time. */
  #whenDiskFull(error: unknown): void {
    if (this.#freeing || this.#closed || !isDiskFull(error)) return;
    this.#freeing = true;
    this.#diskFilled = true;
    void this.#runExclusive(async () => {
      // Under #serialAppend: no batch of ours is being appended to a segment deleted here.
      if ((await this.#serialAppend(() => this.#freeSpace())) > 0) await this.#compact(false, 0);
    })
      .catch((failure: unknown) => this.#report(failure))
      .finally(() => {
        this.#freeing = false;
      });
  }

  /**
   * The disk is full: a save, a lease or a compaction failed with ENOSPC or EDQUOT. A compaction
   * cannot free anything then (the lock file and the new index need room first), so this deletes
   * whole segment files, which needs no write and no lock: those all of whose profiles the bounds
   * drop, the bounds first lowered to TRIM_TO of what the storage holds, never below room for
   * FULL_DISK_MIN_PROFILES of their size (so the next burst does
   * not fill the disk again; logged as a warning; kept until a restart, as the space the disk
   * has is not known). Deletable are this writer's segments and other writers' that are stale
   * (see SegmentFiles.deleteForSpace). When no segment holds only dropped profiles (one holds
   * them all: bounds far above what the disk holds), the one whose newest profile is the oldest
   * goes, if it may: never a newer one in its place (its writer, live, frees its own when its
   * saves fail). The index lines of a deleted segment are dropped by the compaction that follows
   * (reads of them find nothing meanwhile); a crash in between leaves them to the next one.
   * Returns how many segments were deleted.
   */
  async #freeSpace(): Promise<number> {
    // Judged on a copy of the index read while no compaction of another process was between its
    // rename and the copy of the tail (that copy lacks the newest lines, and a segment holding
    // them would look dropped): the lock free before, and the same file after.
    if (await this.#lock.heldByAnother()) return 0;
    const before = fileIdentity(this.#indexPath);
    await this.#index.refresh();
    const after = fileIdentity(this.#indexPath);
    if (before === null || after === null || before.ino !== after.ino || before.dev !== after.dev) return 0;
    const records = [...this.#index.oldestFirst()];
    if (records.length === 0) return 0;
    // Never below room for FULL_DISK_MIN_PROFILES of the size held: a storage holding a handful (just
    // started) would otherwise keep one profile until restarted after one moment of a disk filled by
    // another program. A disk that holds fewer still gets its room: the oldest segment goes (below).
    const floor = Math.min(FULL_DISK_MIN_PROFILES, this.bounds.maxProfiles);
    const maxProfiles = Math.max(floor, Math.floor(records.length * TRIM_TO));
    const maxBytes = Math.max(Math.ceil(this.#index.bytes / records.length) * floor, Math.floor(this.#index.bytes * TRIM_TO));
    if (maxProfiles < this.#effective.maxProfiles || maxBytes < this.#effective.maxBytes) {
      this.#effective.maxProfiles = Math.min(maxProfiles, this.#effective.maxProfiles);
      this.#effective.maxBytes = Math.min(maxBytes, this.#effective.maxBytes);
      this.#segments.limit(...this.#segmentLimits());
      const { maxProfiles: kept, maxBytes: bytes } = this.#effective;
      this.#report(new ProfilerStorageError(`The disk is full: the profiler keeps at most ${kept} profiles (${formatBytes(bytes)}) in ${this.dir} until restarted, dropping the oldest.`, 'HK_PROFILER_STORAGE_DISK_FULL'));
    }
    const [first, end] = keptRange(records, this.#effective, this.#now());
    const kept = new Set<string | null>();
    for (let i = first; i < end; i++) kept.add((records[i] as IndexRecord).segment);
    // Each segment once, in the order of their newest profiles, oldest first (a segment is moved to the end at each of its records).
    const newest = new Map<string, number>();
    records.forEach((record, i) => {
      if (record.segment === null) return;
      newest.delete(record.segment);
      newest.set(record.segment, i);
    });
    const byAge = [...newest.keys()];
    const deleted = await this.#segments.deleteForSpace(byAge.filter((name) => !kept.has(name)));
    if (deleted.length > 0) return deleted.length;
    // The oldest segment still there (one deleted before may have lines left), and none past it when it may not go
    // (another writer's, live): those further on hold profiles the bounds keep, the newest among them.
    for (const name of byAge) {
      if ((await ignoreMissing(stat(this.#segments.path(name)))) === undefined) continue;
      return (await this.#segments.deleteForSpace([name])).length;
    }
    return 0;
  }

  #closedError(): ProfilerStorageError {
    return new ProfilerStorageError(`The profiler storage in ${this.dir} is closed.`, 'HK_PROFILER_STORAGE_CLOSED');
  }

  /** The lock's acquire, with the storage's own error when another process held the lock for the whole wait. */
  async #acquireLock(timeoutMs: number): Promise<void> {
    try {
      await this.#lock.acquire(timeoutMs);
    } catch (error) {
      if (!(error instanceof FileLockTimeoutError)) throw error;
      throw new ProfilerStorageError(`The profiler storage lock ${error.path} is held by another process (waited ${error.waitedMs} ms).`, 'HK_PROFILER_STORAGE_LOCKED', { cause: error });
    }
  }

  #failure(action: string, subject: string | null, error: unknown): ProfilerStorageError {
    this.#whenDiskFull(error);
    if (error instanceof ProfilerStorageError) return error;
    const reason = error instanceof Error ? error.message : String(error);
    const what = subject === null ? '' : ` ${subject}`;
    return new ProfilerStorageError(`Cannot ${action}${what} in the profiler storage ${this.dir}: ${reason}`, 'HK_PROFILER_STORAGE', { cause: error });
  }

  #report(error: unknown): void {
    if (this.#onError === undefined) return;
    try {
      const failure = error instanceof Error ? error : new Error(String(error));
      if (this.#onError(failure) === true) markReported(failure);
    } catch {
      // A failing error handler must not turn background upkeep into an unhandled rejection.
    }
  }
}

/**
 * The refusal of a profile written under a drawn or claimed token another writer's index line took
 * first: another process drew it too, from the token's prefix that it took over as stale while this
 * one was frozen (or a line was made by hand). Readers keep the first line, so this profile is not
 * stored, and the client this request's response gave the token to is shown the other profile.
 */
function tokenTakenError(token: string): ProfileExistsError {
  return new ProfileExistsError(
    token,
    `The profile is not stored: another writer stored a profile under its token "${token}" first (its token prefix's lease was taken over while this process was frozen?), which the token shows.`,
  );
}


/** The identity of the file at `path`, null when there is none. */
function fileIdentity(path: string): { dev: number; ino: number } | null {
  try {
    const { dev, ino } = statSync(path);
    return { dev, ino };
  } catch {
    return null;
  }
}

/** Bytes as KiB or MiB, for a log message. */
function formatBytes(bytes: number): string {
  return bytes < 1024 * 1024 ? `${Math.ceil(bytes / 1024)} KiB` : `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** The profile in a record (JSON) or old-layout file (gzip'd JSON), or null when corrupt or of another token. */
async function decodeProfile(data: Buffer, token: string, gzipped: boolean): Promise<Profile | null> {
  try {
    const profile = JSON.parse((gzipped ? await gunzip(data) : data).toString('utf8')) as Profile;
    return typeof profile === 'object' && profile !== null && profile.token === token ? profile : null;
  } catch {
    return null;
  }
}

const NEWLINE = 0x0a;
const TIME_KEY = Buffer.from('"time":');
/** How far into a record its time is looked for (token, parent, children, ip, method and URL come first). */
const TIME_KEY_WITHIN = 16 * 1024;

/** The time a segment's record gives, NaN when not found where a profile has it. */
function recordTime(data: Buffer, start: number, end: number): number {
  const at = data.subarray(start, Math.min(end, start + TIME_KEY_WITHIN)).indexOf(TIME_KEY);
  if (at === -1) return Number.NaN;
  const from = start + at + TIME_KEY.length;
  let to = from;
  while (to < end && ((data[to] as number) === 0x2d || ((data[to] as number) >= 0x30 && (data[to] as number) <= 0x39) || (data[to] as number) === 0x2e)) to++;
  return to === from ? Number.NaN : Number(data.toString('latin1', from, to));
}

/** The summary of a segment's record (the profile's JSON from `start` to `end`), or null when it is none (torn, garbage). */
function recordSummary(data: Buffer, start: number, end: number): ProfileSummary | null {
  let profile: unknown;
  try {
    profile = JSON.parse(data.toString('utf8', start, end));
    assertStorableProfile(profile as StorableProfile);
  } catch {
    return null;
  }
  const { token, parent, ip, method, url, time, status } = profile as ProfileSummary;
  return { token, parent, ip, method, url, time, status };
}
