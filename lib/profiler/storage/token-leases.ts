import { randomBytes } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, renameSync, rmSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PRIVATE_DIRECTORY, makeDirectory } from '../../fs/make-directory.js';
import { ProfilerStorageError } from './errors.js';
import { FileLock, type FileLockOptions } from '../../fs/file-lock.js';
import { TakenTokens } from './taken-tokens.js';
import { errorCode } from '../../fs/error-code.js';

/** What TokenLeases needs of the storage it draws tokens for. */
export interface LeaseHost {
  /** The storage directory; leases are the files `leases/<aa>.lease` in it. */
  readonly dir: string;
  /** The tokens of `prefix` the storage holds (index entries, files), read from disk. */
  stored(prefix: string): Promise<Iterable<string>>;
  /** The storage's own tokens in flight, claimed or being written (not the drawn ones). */
  pending(): Iterable<string>;
  /** Whether the storage has claimed a token or is writing it (not drawn ones). */
  busy(token: string): boolean;
  /** Whether the storage has been closed: no more leases are taken or refreshed. */
  closed(): boolean;
  /** The storage's clock (epoch ms). */
  now(): number;
  /** How long (ms) a discarded token stays taken after its lease is given back: the storage's max age, past which its profile would be gone anyway. */
  discardedFor(): number;
  /** Receives the errors of the background refresh, which has no caller to reject. */
  report(error: unknown): void;
}

/** A token prefix held. */
interface Lease {
  readonly prefix: string;
  readonly lock: FileLock;
  /** Tokens of the prefix not to draw: files and index entries at the last scan, and the draws since. */
  taken: TakenTokens;
  /** performance.now() before the lease was last found ours and refreshed: drawn from only while younger than LEASE_TRUST_MS. */
  confirmedAt: number;
  /** Over half full after a scan, or still over the share a growth wanted once another lease is taken: no more draws from it; given back once no drawn token of it is pending. */
  full: boolean;
  /**
   * Tokens shown to a client whose profile was not written (discard()), with when (epoch ms): kept
   * taken across scans while the lease is held, and appended to `leases/<aa>.discarded` right after the turn of the event loop that discarded them, at most every 250 ms (#recordSoon), at each refresh and when it is given back.
   */
  readonly discarded: Map<string, number>;
  /** The discarded tokens `leases/<aa>.discarded` held at the last scan, and those appended or handed over since: not written again. */
  recorded: Set<string>;
}

/** The directory of the lease files and discarded files, in the storage's. */
export const LEASE_DIR = 'leases';
const LEASE_SUFFIX = '.lease';
/** The tokens of dropped profiles of a prefix, a line `<token> <epoch ms>` each, appended by its holders and read by their scans. */
const DISCARDED_SUFFIX = '.discarded';
/**
 * Between a prefix and a hand-over's own name: `<aa>.handed-over.<pid>-<hex>`, the discarded tokens of a
 * lease taken over from us (we were frozen) that its discarded file lacked, for its holder to take in.
 */
const HANDED_OVER_INFIX = '.handed-over.';
/** A whole line of a discarded file (a line cut by a crash mid-append does not match). */
const DISCARDED_LINE = /^([0-9a-f]+) ([0-9]+)$/;
/** A lease not refreshed for this long belongs to a crashed or frozen process and is taken over. */
const LEASE_STALE_MS = 2 * 60_000;
/** Held leases are refreshed (mtime) this often. */
const LEASE_REFRESH_MS = 30_000;
/**
 * A lease not found ours and refreshed for this long (the process was frozen, or its refreshes
 * fail) is not drawn from until it is again: past LEASE_STALE_MS another process may take it over,
 * and draw the same tokens. A process woken from a freeze (SIGSTOP) drew from a lease already taken
 * over for as long as its refresh took to run and read the file, while its requests came in.
 */
const LEASE_TRUST_MS = LEASE_STALE_MS / 2;
/**
 * Discarded tokens are recorded at most this often (ms): tokens are dropped when the storage falls
 * behind the traffic, in nearly every turn of a busy event loop, and each record is a few synchronous
 * file operations (look at the lease, refresh it, append), which a storage on the request thread
 * (one CPU) paid per turn, slowing it further while it was already behind.
 */
const RECORD_SPACING_MS = 250;
/** A lease covers the tokens starting with its prefix: the shard's 2 characters. */
export const LEASE_PREFIX_LENGTH = 2;
/** Another lease is taken once the held ones are this full (index entries, files, draws). */
const LEASE_FULL_SHARE = 0.5;
/**
 * Once the least full held lease is this full, the next scan (or lease) starts in the background,
 * while draws go on: waited for at LEASE_FULL_SHARE, it held every request that needed a token
 * (up to the 1,000 in flight of a pipelined bench, for a second or more: several file operations,
 * each a turn of a busy event loop).
 */
const LEASE_EARLY_SHARE = 0.375;
/** After a background growth failed, the next waits this long (the blocking growth still runs when needed). */
const EARLY_GROWTH_RETRY_MS = 10_000;
/** Random draws inside one lease before it is looked at again (at most half full: a miss is < 1/2). */
const DRAWS_PER_LEASE = 48;

/**
 * The token prefixes one FileStorage instance leases, and the tokens it has drawn from them.
 *
 * A lease is the file `leases/<aa>.lease`, created with `wx` (one holder at a time, in any
 * process), refreshed every 30 s and taken over when 2 minutes old or when its holder's pid is
 * dead on this host. Inside a held prefix, tokens are drawn at random in memory, avoiding what
 * the storage holds (scanned when the lease is taken) and the draws since: no file per token.
 * Another prefix is leased once the held ones are half full; the scan or lease that makes room
 * starts in the background at three eighths, so that no draw waits for it.
 *
 * A drawn token stays drawn until the storage has written its profile or given it back
 * (`settle`, `release`).
 */
export class TokenLeases {
  readonly #host: LeaseHost;
  readonly #lockOptions: FileLockOptions;
  /** Prefix leases held, by prefix. */
  readonly #leases = new Map<string, Lease>();
  /**
   * Leases another holder took over (we were frozen), by prefix, while a drawn token of them may still be
   * discarded or their discarded tokens are not handed over yet: those are the new holder's to keep taken.
   */
  readonly #lost = new Map<string, Lease>();
  /** Tokens drawn from a lease and neither written nor released. */
  readonly #drawn = new Set<string>();
  /** Whether a token may not be drawn: drawn already, or the storage's. */
  readonly #busy = (token: string): boolean => this.#drawn.has(token) || this.#host.busy(token);
  /** Lease changes (acquire, scan, refresh, release) run one at a time. */
  #changing: Promise<unknown> = Promise.resolve();
  /** The background growth started by a draw from a lease past LEASE_EARLY_SHARE, while it runs. */
  #growingEarly: Promise<void> | null = null;
  /** No background growth before this time (ms): the last one failed (every other prefix leased, say). */
  #earlyRetryAt = 0;
  #timer: NodeJS.Timeout | null = null;
  /** A #recordSoon() is scheduled. */
  #recording = false;
  /** performance.now() when the last #recordSoon() ran (see RECORD_SPACING_MS). */
  #recordedAt = -Infinity;
  /** The last #recordSoon() failed (and reported it): the next refresh tries again, not every turn that discards. */
  #recordFailed = false;
  /** Watches `leases/` for hand-overs of held prefixes (see #watchHandOvers); null before the first lease, or when it cannot. */
  #watcher: FSWatcher | null = null;
  /** Held prefixes a hand-over appeared for, to take in (#takeInSoon). */
  readonly #handedOver = new Set<string>();
  /** The names of the hand-overs this instance wrote while it watched, not to take in (a lease of ours it found another's): removed as the watch sees them. */
  readonly #ownHandOvers = new Set<string>();

  /** `lockOptions`: how the lease files record and judge their holders (see FileLockOptions). */
  constructor(host: LeaseHost, lockOptions: FileLockOptions) {
    this.#host = host;
    this.#lockOptions = lockOptions;
  }

  /** The prefixes leased now, sorted. */
  get prefixes(): string[] {
    return [...this.#leases.keys()].sort();
  }

  /** Whether the token was drawn here and is neither written nor released. */
  isDrawn(token: string): boolean {
    return this.#drawn.has(token);
  }

  /** A token drawn from the least full held lease, or null when a lease must be scanned or acquired first (grow()). */
  draw(length: number): string | null {
    const limit = 16 ** (length - LEASE_PREFIX_LENGTH) * LEASE_FULL_SHARE;
    let best: Lease | undefined;
    const trustedSince = performance.now() - LEASE_TRUST_MS;
    for (const lease of this.#leases.values()) {
      if (!lease.full && lease.confirmedAt >= trustedSince && lease.taken.size < limit && (best === undefined || lease.taken.size < best.taken.size)) best = lease;
    }
    if (best === undefined) return null;
    const token = best.taken.draw(length, DRAWS_PER_LEASE, this.#busy);
    if (token !== null) this.#drawn.add(token);
    // Past the early share: the scan or the next lease is made now, in the background, so that no draw waits for it.
    if (best.taken.size >= limit * (LEASE_EARLY_SHARE / LEASE_FULL_SHARE) && this.#growingEarly === null && !this.#host.closed() && this.#host.now() >= this.#earlyRetryAt) {
      this.#growingEarly = this.#serial(() => this.#grow(length, LEASE_EARLY_SHARE))
        .catch(() => {
          // Only a head start: the draw that finds no usable lease grows the leases itself, and reports what fails then.
          this.#earlyRetryAt = this.#host.now() + EARLY_GROWTH_RETRY_MS;
        })
        .finally(() => {
          this.#growingEarly = null;
        });
    }
    return token;
  }

  /** Makes room for draw(): rescans the held leases, or leases another prefix. Throws when every prefix is taken or half full. */
  grow(length: number): Promise<void> {
    return this.#serial(() => this.#grow(length, LEASE_FULL_SHARE));
  }

  /**
   * Claims a token of a held prefix for the storage, as drawn: false when it is taken (drawn, in
   * the lease's scan, or `indexed`), null when no held lease covers it.
   */
  claim(token: string, indexed: (token: string) => boolean): boolean | null {
    const lease = this.#leases.get(token.slice(0, LEASE_PREFIX_LENGTH));
    if (lease === undefined) return null;
    if (lease.taken.has(token) || indexed(token)) return false;
    lease.taken.add(token);
    this.#drawn.add(token);
    return true;
  }

  /** The profile of a drawn token is stored (or refused): it is no longer in flight. Its prefix keeps it taken. */
  settle(token: string): void {
    this.#drawn.delete(token);
  }

  /**
   * A drawn token whose profile will not be written, though a client was given it: it is not
   * drawn again while its prefix's lease is held (rescans keep it), nor after it is given back, by
   * any process, for the storage's max age (`leases/<aa>.discarded`). False when it was not drawn here.
   */
  discard(token: string): boolean {
    if (!this.#drawn.delete(token)) return false;
    const prefix = token.slice(0, LEASE_PREFIX_LENGTH);
    // A lease taken over from us: handed over to its holder.
    const lease = this.#leases.get(prefix) ?? this.#lost.get(prefix);
    if (lease === undefined) return true;
    lease.discarded.set(token, this.#host.now());
    this.#recordSoon();
    return true;
  }

  /**
   * Records the discarded tokens (#record, #handOver) once the current turn's discards are in: left to
   * the next refresh (up to 30 s), those of a holder frozen meanwhile were in its memory alone when
   * its lease was taken over, and the new holder could draw them until it woke and handed them over.
   */
  #recordSoon(): void {
    // Failing (a full disk, EACCES): reported once, and tried again by the refresh, not at every turn that drops a profile.
    if (this.#recording || this.#recordFailed || this.#host.closed()) return;
    this.#recording = true;
    const record = (): void => {
      this.#recording = false;
      if (this.#host.closed()) return;
      this.#recordedAt = performance.now();
      void this.#serial(async () => {
        let recorded = true;
        for (const lease of [...this.#leases.values()]) recorded = (await this.#record(lease)) && recorded;
        for (const lease of [...this.#lost.values()]) recorded = (await this.#handOver(lease)) && recorded;
        if (!recorded) this.#recordFailed = true;
      }).catch((error: unknown) => this.#host.report(error));
    };
    // Right after this turn, or once RECORD_SPACING_MS has passed since the last; not holding the process
    // open meanwhile (giving the lease back at close() records what is left).
    const wait = this.#recordedAt + RECORD_SPACING_MS - performance.now();
    if (wait > 0) setTimeout(record, wait).unref();
    else setImmediate(record);
  }

  /**
   * Takes in a hand-over of a held prefix as it appears (renamed into place by a former holder woken
   * from a freeze; see #handOver), not only at the next refresh: meanwhile, up to 30 s, this holder
   * could draw those tokens, which that holder's clients saw. One watch of the directory, no I/O per
   * draw; where it cannot watch (a network filesystem, no inotify left), the refresh still does it.
   */
  #watchHandOvers(dir: string): void {
    if (this.#watcher !== null || this.#host.closed()) return;
    try {
      this.#watcher = watch(dir, { persistent: false }, (_event, file) => {
        if (file === null || !isHandOver(file) || this.#ownHandOvers.delete(file)) return;
        const prefix = file.slice(0, LEASE_PREFIX_LENGTH);
        if (!this.#leases.has(prefix)) return;
        this.#handedOver.add(prefix);
        if (this.#handedOver.size === 1) setImmediate(() => void this.#serial(() => this.#takeInHandOvers()).catch((error: unknown) => this.#host.report(error)));
      });
      this.#watcher.on('error', () => this.#unwatch());
    } catch {
      this.#watcher = null;
    }
  }

  #unwatch(): void {
    this.#watcher?.close();
    this.#watcher = null;
  }

  /** Takes in the hand-overs that appeared for held prefixes (see #watchHandOvers), as a refresh does. */
  async #takeInHandOvers(): Promise<void> {
    const prefixes = [...this.#handedOver];
    this.#handedOver.clear();
    for (const prefix of prefixes) {
      const lease = this.#leases.get(prefix);
      if (lease === undefined || this.#host.closed()) continue;
      await this.#readDiscarded(lease);
      for (const token of lease.discarded.keys()) lease.taken.add(token);
    }
  }

  /** Gives a drawn token back, drawable again; false when it was not drawn here. */
  release(token: string): boolean {
    if (!this.#drawn.delete(token)) return false;
    this.#leases.get(token.slice(0, LEASE_PREFIX_LENGTH))?.taken.delete(token);
    return true;
  }

  /** Whether this instance leases the prefix now. */
  holds(prefix: string): boolean {
    return this.#leases.has(prefix);
  }

  /** A token stored by other means than a draw (a profile read back into the index): not drawn while its prefix is held. */
  stored(token: string): void {
    this.#leases.get(token.slice(0, LEASE_PREFIX_LENGTH))?.taken.add(token);
  }

  /** A live lease of another holder on the prefix: fresh, and not left by a process of this host that is gone. */
  leasedByAnother(prefix: string): Promise<boolean> {
    return this.#lock(prefix).heldByAnother();
  }

  /** Gives every lease back, after the lease changes under way, and hands over what is left of those taken over; the drawn tokens are forgotten. */
  async close(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    await this.#serial(async () => {
      // In the queue: a lease taken by a growth queued before close() starts the watch.
      this.#unwatch();
      this.#drawn.clear();
      const leases = [...this.#leases.values()];
      const lost = [...this.#lost.values()];
      this.#leases.clear();
      this.#lost.clear();
      await Promise.all([...leases.map((lease) => this.#giveBack(lease)), ...lost.map((lease) => this.#handOver(lease))]);
    });
  }

  /**
   * Scans the held leases over `share` (of their prefix's tokens); when all still are, acquires a
   * lease on another prefix. A lease still over LEASE_FULL_SHARE after its scan is full.
   */
  async #grow(length: number, share: number): Promise<void> {
    const host = this.#host;
    if (host.closed()) return;
    const space = 16 ** (length - LEASE_PREFIX_LENGTH);
    const limit = space * LEASE_FULL_SHARE;
    const wanted = space * share;
    const usable = (): boolean => [...this.#leases.values()].some((lease) => !lease.full && lease.confirmedAt >= performance.now() - LEASE_TRUST_MS && lease.taken.size < wanted);
    // Leases not found ours for long are looked at first (see LEASE_TRUST_MS): drawn from again, or dropped as taken over.
    for (const lease of [...this.#leases.values()]) {
      if (lease.confirmedAt < performance.now() - LEASE_TRUST_MS) await this.#confirm(lease);
    }
    if (usable()) return;
    /** Leases still over `wanted` after their scan, retired once another lease is taken (see below). */
    const spent: Lease[] = [];
    for (const lease of [...this.#leases.values()]) {
      if (lease.full) continue;
      await this.#scan(lease);
      if (lease.taken.size >= limit) lease.full = true;
      else if (lease.taken.size >= wanted) spent.push(lease);
      if (host.closed()) return;
    }
    if (usable()) return;
    const leaseDir = join(host.dir, LEASE_DIR);
    await makeDirectory(leaseDir, PRIVATE_DIRECTORY);
    const prefixes = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0')).filter((prefix) => !this.#leases.has(prefix));
    shuffle(prefixes);
    // Prefixes without a lease file first: a lease left by a dead process (kill -9) is taken over
    // only when none is free, as the tokens it drew and never wrote (shown to clients, their
    // profiles lost with it) are known to nobody, and would be drawn again for other requests.
    const leased = new Set(await readdir(leaseDir));
    prefixes.sort((a, b) => Number(leased.has(`${a}${LEASE_SUFFIX}`)) - Number(leased.has(`${b}${LEASE_SUFFIX}`)));
    for (const prefix of prefixes) {
      const lock = this.#lock(prefix);
      if (!(await lock.tryAcquire())) continue;
      const lease: Lease = { prefix, lock, taken: new TakenTokens(prefix), confirmedAt: performance.now(), full: false, discarded: new Map(), recorded: new Set() };
      await this.#scan(lease);
      if (lease.taken.size >= wanted) {
        await this.#giveBack(lease);
        continue;
      }
      this.#leases.set(prefix, lease);
      this.#watchHandOvers(leaseDir);
      // Left usable, one between `wanted` and half full was never drawn from again (the new lease is always
      // less full) nor given back: a storage that kept dropping profiles held its discarded tokens, rescans
      // keep, and one more lease for each 25,000 or so of them, until every prefix was leased.
      for (const old of spent) old.full = true;
      if (this.#timer === null) {
        this.#timer = setInterval(() => {
          if (!host.closed()) void this.#serial(() => this.#refresh()).catch((error: unknown) => host.report(error));
        }, LEASE_REFRESH_MS);
        this.#timer.unref();
      }
      return;
    }
    throw new ProfilerStorageError(`Every token prefix of the profiler storage ${host.dir} is leased by another process or half full.`, 'HK_PROFILER_STORAGE_FULL');
  }

  /**
   * Rebuilds a lease's taken set: what the storage holds, its tokens in flight, the draws and the
   * discarded ones, this holder's and those the prefix's earlier holders wrote to its discarded file.
   */
  async #scan(lease: Lease): Promise<void> {
    const { prefix } = lease;
    await this.#readDiscarded(lease);
    const taken = new TakenTokens(prefix);
    const addPending = (): void => {
      for (const token of lease.discarded.keys()) taken.add(token);
      for (const token of this.#drawn) if (token.startsWith(prefix)) taken.add(token);
      for (const token of this.#host.pending()) if (token.startsWith(prefix)) taken.add(token);
    };
    // Before the awaits too: a write finishing meanwhile leaves the drawn tokens before its file shows in an earlier listing.
    addPending();
    // Read after its awaits: a held lease is drawn from while it is scanned in the background, and a
    // token drawn and written meanwhile is in the storage's index (a write adds its lines there
    // before the token is settled), or still pending.
    for (const token of await this.#host.stored(prefix)) taken.add(token);
    addPending();
    lease.taken = taken;
  }

  /**
   * Keeps the held leases young, and takes in the discarded tokens former holders handed over; drops
   * the ones taken over (we were frozen), handing over their discarded tokens; gives back full ones
   * without pending draws.
   */
  async #refresh(): Promise<void> {
    let recorded = true;
    const handedOver = await this.#handedOverPrefixes();
    for (const lease of [...this.#leases.values()]) {
      if (lease.full && !this.#drawsPending(lease.prefix) && (await lease.lock.stillHeld())) {
        this.#leases.delete(lease.prefix);
        await this.#giveBack(lease);
        continue;
      }
      if (!(await this.#confirm(lease))) continue;
      recorded = (await this.#record(lease)) && recorded;
      if (handedOver.has(lease.prefix)) {
        // Tokens a client of the former holder saw: taken from now on, not only from the next scan.
        await this.#readDiscarded(lease);
        for (const token of lease.discarded.keys()) lease.taken.add(token);
      }
    }
    for (const lease of [...this.#lost.values()]) {
      recorded = (await this.#handOver(lease)) && recorded;
      if (!this.#drawsPending(lease.prefix) && unrecordedLines(lease).length === 0) this.#lost.delete(lease.prefix);
    }
    // Still failing: the turns that drop profiles leave it to the next refresh.
    this.#recordFailed = !recorded;
  }

  /**
   * Whether a held lease is still ours: refreshed then, and drawn from for LEASE_TRUST_MS more; one
   * another holder took over (we were frozen) is dropped, reported, and kept in #lost.
   */
  async #confirm(lease: Lease): Promise<boolean> {
    const at = performance.now();
    let held: boolean;
    try {
      held = await lease.lock.stillHeld(true);
    } catch (error) {
      // EMFILE, EACCES, EIO: nothing said about who holds it. Kept, and drawn from no more once LEASE_TRUST_MS old.
      this.#host.report(new ProfilerStorageError(`Could not check the profiler storage lease ${lease.lock.path} (${describe(error)}): it is kept, and not drawn from once a minute passes without a check.`, 'HK_PROFILER_STORAGE', { cause: error }));
      return false;
    }
    if (!held) {
      this.#lose(lease);
      return false;
    }
    try {
      await lease.lock.refresh(true);
    } catch (error) {
      // EROFS, EACCES: not refreshed, it goes stale, and another process may take it over in 2 minutes.
      this.#host.report(new ProfilerStorageError(`Could not refresh the profiler storage lease ${lease.lock.path} (${describe(error)}): it is kept, and not drawn from once a minute passes without a refresh, as other processes take it over after two.`, 'HK_PROFILER_STORAGE', { cause: error }));
      return false;
    }
    lease.confirmedAt = at;
    return true;
  }

  /** A held lease found another's (we were frozen): dropped, reported, and kept in #lost for its hand-overs. */
  #lose(lease: Lease): void {
    if (this.#leases.get(lease.prefix) !== lease) return;
    this.#leases.delete(lease.prefix);
    this.#lost.set(lease.prefix, lease);
    this.#host.report(new ProfilerStorageError(`The profiler storage lease ${lease.lock.path} was taken over; its pending tokens are still written exclusively, and its discarded ones handed over.`, 'HK_PROFILER_STORAGE_LOCKED'));
  }

  /** Whether a token drawn from the prefix is neither written nor released. */
  #drawsPending(prefix: string): boolean {
    for (const token of this.#drawn) if (token.startsWith(prefix)) return true;
    return false;
  }

  /** The prefixes with discarded tokens handed over by former holders (see #handOver); none when the directory cannot be read. */
  async #handedOverPrefixes(): Promise<Set<string>> {
    const prefixes = new Set<string>();
    let names: string[];
    try {
      names = await readdir(join(this.#host.dir, LEASE_DIR));
    } catch {
      return prefixes; // Looked for again at the next refresh; a scan reports what it cannot read.
    }
    for (const name of names) if (isHandOver(name)) prefixes.add(name.slice(0, LEASE_PREFIX_LENGTH));
    return prefixes;
  }

  /** Releases a held lease, its discarded tokens not yet in its discarded file recorded first (#record). */
  async #giveBack(lease: Lease): Promise<void> {
    await this.#record(lease);
    await lease.lock.release();
  }

  /**
   * Appends the lease's discarded tokens not yet in its discarded file there: as they are discarded (#recordSoon), at each refresh and
   * when it is given back, so that a holder frozen or killed loses none discarded before its last
   * refresh (one synchronous append: a crash loses at most a cut last line, which the next scan
   * skips). A failed append is reported, and tried again at the next refresh or give-back.
   */
  async #record(lease: Lease): Promise<boolean> {
    const tokens = [...lease.discarded.keys()].filter((token) => !lease.recorded.has(token));
    if (tokens.length === 0) return true;
    // Only the holder writes the file: a lease taken over (we were frozen) has another, whose rewrite could lose our lines; they are handed over to it.
    let held: boolean;
    try {
      held = lease.lock.refreshedAndStillHeldSync(true);
    } catch (error) {
      // Not known to be taken over: tried again at the next refresh, or when the lease is given back.
      this.#host.report(new ProfilerStorageError(`Could not check the profiler storage lease ${lease.lock.path} (${describe(error)}) to record its discarded tokens: tried again at the next refresh.`, 'HK_PROFILER_STORAGE_DISCARDED', { cause: error }));
      return false;
    }
    if (!held) {
      // Found another's here (right after a turn that dropped a profile): no longer drawn from, as a refresh would find.
      this.#lose(lease);
      return this.#handOver(lease);
    }
    try {
      appendLines(this.#discardedPath(lease.prefix), unrecordedLines(lease).join(''));
    } catch (error) {
      this.#host.report(new ProfilerStorageError(`Could not record the discarded tokens of the profiler storage lease ${lease.lock.path}: they may be drawn again.`, 'HK_PROFILER_STORAGE_DISCARDED', { cause: error }));
      return false;
    }
    for (const token of tokens) lease.recorded.add(token);
    return true;
  }

  /**
   * Hands the discarded tokens of a lease taken over from us, not in its discarded file, over to its
   * holder: a file of their lines of its own (`<aa>.handed-over.<pid>-<hex>`, complete once renamed
   * into place), which the holder takes in at its next refresh or scan, merges into the discarded
   * file and removes. Nobody else writes such a file, so no rewrite can lose it. A failure is
   * reported, and tried again at the next refresh.
   */
  async #handOver(lease: Lease): Promise<boolean> {
    const tokens = [...lease.discarded.keys()].filter((token) => !lease.recorded.has(token));
    if (tokens.length === 0) return true;
    const lines = unrecordedLines(lease);
    const name = `${lease.prefix}${HANDED_OVER_INFIX}${process.pid}-${randomBytes(4).toString('hex')}`;
    const path = join(this.#host.dir, LEASE_DIR, name);
    const temp = `${path}.tmp`;
    try {
      try {
        await writeFile(temp, lines.join(''), { mode: 0o600, flag: 'wx' });
        if (this.#watcher !== null) this.#ownHandOvers.add(name);
        renameSync(temp, path);
      } catch (error) {
        rmSync(temp, { force: true });
        throw error;
      }
    } catch (error) {
      this.#host.report(new ProfilerStorageError(`Could not hand over the discarded tokens of the profiler storage lease ${lease.lock.path}, taken over by another holder: they may be drawn again.`, 'HK_PROFILER_STORAGE_DISCARDED', { cause: error }));
      return false;
    }
    for (const token of tokens) lease.recorded.add(token);
    return true;
  }

  /**
   * Adds the tokens of the lease's discarded file, and of the files former holders handed over (see
   * #handOver), younger than the host's max age to its discarded ones; rewrites the file without the
   * expired and cut lines and with those handed over (or removes it) when there are any, then removes
   * the hand-overs it took in. Failures are reported: the scan goes on with what was read, and a
   * hand-over not merged stays for the next.
   */
  async #readDiscarded(lease: Lease): Promise<void> {
    const path = this.#discardedPath(lease.prefix);
    const cutoff = this.#host.now() - this.#host.discardedFor();
    // This holder's own expire too: a lease held for long does not keep them for ever.
    for (const [token, time] of lease.discarded) if (time < cutoff) lease.discarded.delete(token);
    let text = '';
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.#host.report(new ProfilerStorageError(`Could not read the discarded tokens ${path}: they may be drawn again.`, 'HK_PROFILER_STORAGE_DISCARDED', { cause: error }));
        // `recorded` is left as it is: only the holder writes the file, so what it read or appended is still there.
        // Emptied, every refresh while a hand-over waited appended every discarded token again.
        return;
      }
    }
    const kept: string[] = [];
    const recorded = new Set<string>();
    let dropped = false;
    /** Takes in the whole lines of `content`; false when it had others (expired, cut, of another prefix, again). */
    const takeIn = (content: string): boolean => {
      let clean = true;
      const lines = content.split('\n');
      // The text after the last newline is empty, or a line cut by a crash mid-append.
      if (lines.pop() !== '') clean = false;
      for (const line of lines) {
        const match = DISCARDED_LINE.exec(line);
        const token = match?.[1];
        const time = Number(match?.[2]);
        if (token === undefined || !token.startsWith(lease.prefix) || token.length <= LEASE_PREFIX_LENGTH || time < cutoff || recorded.has(token)) {
          clean = false;
          continue;
        }
        recorded.add(token);
        kept.push(`${line}\n`);
        if (!lease.discarded.has(token)) lease.discarded.set(token, time);
      }
      return clean;
    };
    if (!takeIn(text)) dropped = true;
    const handOvers = await this.#readHandOvers(lease.prefix);
    for (const handOver of handOvers) takeIn(handOver.text);
    lease.recorded = recorded;
    if (!dropped && handOvers.length === 0) return;
    try {
      // Only the holder rewrites the file (checked with the rename, synchronously): another holder's appends would be lost.
      if (kept.length === 0) {
        if (!lease.lock.refreshedAndStillHeldSync(true)) throw new Error('the lease was taken over by another holder');
        rmSync(path, { force: true });
      } else {
        // Its own name, as the index rewrite's: two storages of one process (threads) may rewrite at once.
        const temp = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
        try {
          // Inside the try: a full disk fails the write after making the file, and a hand-over waiting retries at each refresh, a new temp each time.
          await writeFile(temp, kept.join(''), { mode: 0o600 });
          if (!lease.lock.refreshedAndStillHeldSync(true)) throw new Error('the lease was taken over by another holder');
          renameSync(temp, path);
        } catch (error) {
          rmSync(temp, { force: true });
          throw error;
        }
      }
      // In the discarded file now (or expired): a crash before this leaves them to be merged again, their lines once.
      for (const handOver of handOvers) rmSync(handOver.path, { force: true });
    } catch (error) {
      this.#host.report(new ProfilerStorageError(`Could not rewrite the discarded tokens ${path} without their expired lines (${describe(error)}).`, 'HK_PROFILER_STORAGE_DISCARDED', { cause: error }));
    }
  }

  /** The discarded tokens former holders of the prefix handed over (see #handOver), each file's path and text; one that cannot be read is reported and left. */
  async #readHandOvers(prefix: string): Promise<Array<{ path: string; text: string }>> {
    const dir = join(this.#host.dir, LEASE_DIR);
    let names: string[];
    try {
      names = await readdir(dir);
    } catch (error) {
      this.#host.report(new ProfilerStorageError(`Could not look for discarded tokens handed over in ${dir}: they may be drawn again.`, 'HK_PROFILER_STORAGE_DISCARDED', { cause: error }));
      return [];
    }
    const handOvers: Array<{ path: string; text: string }> = [];
    for (const name of names) {
      if (!isHandOver(name) || !name.startsWith(`${prefix}${HANDED_OVER_INFIX}`)) continue;
      const path = join(dir, name);
      try {
        handOvers.push({ path, text: await readFile(path, 'utf8') });
      } catch (error) {
        // Merged and removed by another holder meanwhile: in the discarded file already.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        this.#host.report(new ProfilerStorageError(`Could not read the discarded tokens handed over in ${path}: they may be drawn again.`, 'HK_PROFILER_STORAGE_DISCARDED', { cause: error }));
      }
    }
    return handOvers;
  }

  #discardedPath(prefix: string): string {
    return join(this.#host.dir, LEASE_DIR, `${prefix}${DISCARDED_SUFFIX}`);
  }

  #lock(prefix: string): FileLock {
    return new FileLock(join(this.#host.dir, LEASE_DIR, `${prefix}${LEASE_SUFFIX}`), LEASE_STALE_MS, this.#lockOptions);
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#changing.then(fn, fn);
    this.#changing = run.catch(() => {});
    return run;
  }
}

/** The lines `<token> <epoch ms>` of the lease's discarded tokens not in its discarded file. */
function unrecordedLines(lease: Lease): string[] {
  const lines: string[] = [];
  for (const [token, time] of lease.discarded) if (!lease.recorded.has(token)) lines.push(`${token} ${time}\n`);
  return lines;
}

/**
 * Appends whole lines to a discarded file, on a line of their own: after a line cut by a crash
 * mid-append or a short write (a full disk), left when the rewrite that drops it failed, the first
 * of them was glued to it, and lost as one malformed line.
 */
function appendLines(path: string, text: string): void {
  const fd = openSync(path, 'a+', 0o600);
  try {
    const { size } = fstatSync(fd);
    const last = Buffer.alloc(1);
    const cut = size > 0 && readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== 0x0a;
    writeFileSync(fd, cut ? `\n${text}` : text);
  } finally {
    closeSync(fd);
  }
}

/** Whether a name in the leases directory is a hand-over of discarded tokens (not its temp file): the sweep removes one whose every token has expired. */
export function isHandOver(name: string): boolean {
  return name.slice(LEASE_PREFIX_LENGTH).startsWith(HANDED_OVER_INFIX) && !name.endsWith('.tmp');
}

/** An error's code (EMFILE, EROFS) or message, for a report. */
function describe(error: unknown): string {
  return errorCode(error) ?? (error instanceof Error ? error.message : String(error));
}

function shuffle<T>(items: T[]): void {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
}
