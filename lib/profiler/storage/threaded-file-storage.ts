import { AsyncResource } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import type { Profile, ProfileSummary, StorableProfile } from '../profile.js';
import type { ProfilerStorage, SearchCriteria, StorageBounds } from './profiler-storage.js';
import { InvalidProfileError, ProfileBatchError, ProfileExistsError, ProfilerStorageError, THREAD_RECOVERED_CODE, THREAD_STOPPED_CODE, UNREADABLE_CODE, isOutOfDescriptors, isStorageThreadStopped } from './errors.js';
import type { CompactionReport, FileStorageOptions, StorageErrorHandler } from './file-storage.js';
import { markReported, wasReported } from './reported-errors.js';
import { StartBackoff } from './start-backoff.js';
import { encodeBatch, rebuildError, type StorageCall, type StorageOp, type StorageReply, type StorageThreadData } from './storage-thread-protocol.js';
import { checkSegmentBytes, resolveBounds, storableJson } from './validation.js';

/** Options of a ThreadedFileStorage: FileStorage's, except the clock (a function cannot cross threads). */
export interface ThreadedFileStorageOptions extends Omit<FileStorageOptions, 'now'> {
  /** The worker's V8 heap limits (node:worker_threads); default a 6 MB young generation, V8's defaults otherwise. */
  resourceLimits?: ResourceLimits;
}

/**
 * A small young generation: the worker's garbage is each batch's short-lived bookkeeping, and
 * V8's default (up to 48 MB) would add that much to the process's resident memory under load
 * (and was slower in process: 40-44 against 34-38 µs per request).
 */
const DEFAULT_RESOURCE_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 6 };

/** Tokens whose reads the storage remembers stopping workers (a few damaged profiles, not a list that grows). */
const SUSPECTS_KEPT = 64;

/** The calls whose work may take the worker's heap (a profile or a batch parsed, an index searched or rewritten): see #stopped. */
const HEAVY_OPS: ReadonlySet<StorageOp> = new Set<StorageOp>(['read', 'find', 'writeMany', 'compact', 'purge']);

/** Dead workers whose leases a new worker takes over (leases are refreshed twice a minute: older ones are stale anyway). */
const DEAD_LEASE_OWNERS_KEPT = 16;

/**
 * The storage thread's code: an import of its module, evaluated, so that the thread inherits the process's
 * flags as they are. A Worker run from a file fails under `--input-type` (of `node --input-type=module -e ...`),
 * and one given the flags as `execArgv` refuses V8's and the process's own (`--max-old-space-size`, `--expose-gc`),
 * where an inherited flag is taken as it is. `import()` reads the same in a script and in a module. A module
 * that fails to load is thrown again, uncaught, so the thread fails with its error as a Worker run from the file
 * does: a rejection the process's `--unhandled-rejections=warn` (or `none`) lets pass ended it with code 0 and no cause.
 */
const THREAD_SOURCE = `import(${JSON.stringify(new URL('./file-storage-thread.js', import.meta.url).href)}).catch((error) => process.nextTick(() => { throw error; }))`;

/**
 * The async context the storage's threads and its reports to onError run in: the process's, made with this module,
 * outside any request. A Worker emits its events in the context it was made in, for its whole life, and the next one
 * is started by whatever call comes first, often a request's (a token drawn for it, a profiler page's read): its stop,
 * its upkeep's errors and its working again were logged as that request's, in its profile, and it held the request.
 */
const PROCESS_SCOPE = new AsyncResource('http-kernel:profiler-storage-thread');

interface PendingCall {
  op: StorageOp;
  /** The token a read is for. */
  token?: string;
  /** The number of profiles a writeMany batch holds. */
  profiles?: number;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/**
 * A FileStorage run in a worker thread: the same directory format, bounds, sharing between
 * processes and crash safety, with the index, the file writes and the upkeep off the thread that
 * answers requests. This thread only copies each batch's JSON into one buffer and hands it over
 * (transferred, not cloned) with the summaries in columns (see StorageBatch); the worker appends
 * it as FileStorage does.
 *
 * The worker starts with the first call and does not keep the process alive while idle; a worker
 * that dies (it should not) fails the calls in flight with ProfilerStorageError (a read or search
 * is sent once more, to a new worker, first), is reported to `onError`, and is started again by the
 * next call, unless it never answered (see #stopped; one that could not start for want of file
 * descriptors is started again after a growing wait, see StartBackoff, as is one after two or more workers
 * in a row stopped without answering a call: see #stopsInARow). Errors keep their
 * classes across the thread boundary: ProfileExistsError, InvalidProfileError,
 * ProfileBatchError, ProfilerStorageError.
 */
export class ThreadedFileStorage implements ProfilerStorage {
  readonly dir: string;
  readonly bounds: Readonly<StorageBounds>;
  /** writeMany() copies each profile's bytes before it settles (see ProfilerStorage.copiesProfileBytes). */
  readonly copiesProfileBytes = true;
  readonly #data: Omit<StorageThreadData, 'leaseOwner' | 'deadLeaseOwners'>;
  /**
   * Lease owners of the workers that died: their leases carry this process's pid, which lives on, so
   * each new worker is told to take them over at once rather than after LEASE_STALE_MS; the tokens
   * they drew (a profiler's pool keeps some) are then still written. The latest few are kept.
   */
  readonly #deadLeaseOwners: string[] = [];
  readonly #onError: StorageErrorHandler | undefined;
  readonly #resourceLimits: ResourceLimits;
  #worker: Worker | null = null;
  readonly #calls = new Map<number, PendingCall>();
  #nextId = 1;
  #closed: Promise<void> | null = null;
  /** The worker answered close(): its storage is closed, and the thread ends by our hand, not by dying. */
  #closeAnswered = false;
  /** Why the worker could not start; set once, every later call rejects with it. */
  #broken: ProfilerStorageError | null = null;
  /**
   * Why the last worker could not start for want of file descriptors, or why the last of two or more workers in a
   * row stopped without answering a call between them: the calls before #startBackoff lets another start reject with it.
   */
  #startFailure: ProfilerStorageError | null = null;
  /**
   * The workers that stopped after starting since a worker last answered a call. The first is started again by
   * the next call at once (a read in flight is sent once more); from the second on, one that dies at its first
   * call each time was started again by every call, a thread per request for nothing: #startBackoff spaces them.
   */
  #stopsInARow = 0;
  /**
   * Tokens whose read was in flight when a worker stopped, and how many times: one in flight at two stops is
   * taken for what stops them (a profile beyond the worker's heap), and its reads fail at once (UNREADABLE_CODE)
   * rather than stop a worker, and the batches in flight on it, at each view of its page. A stop counts only when
   * the read was the one call of those that can take the heap in flight (see #stopped); a read of it answered in
   * between clears its count (those stops had another cause). The latest few are kept.
   */
  readonly #suspects = new Map<string, number>();
  readonly #startBackoff: StartBackoff;
  /** The workers that answered: each says so once its module is loaded, before any call (one that dies at its first call did start). */
  readonly #answered = new WeakSet<Worker>();
  /**
   * The workers that may hold a prefix lease or the index lock: sent a call other than a read or a search, or
   * that answered one (its upkeep may have compacted). Only those are remembered as dead lease owners: a worker
   * that died at its first read took neither, and remembered, it would push out one that did.
   */
  readonly #mayHoldLeases = new WeakSet<Worker>();
  /** Profiles of the batches refused while #startBackoff held the next start back, since the storage was made (see refusedProfiles). */
  #refused = 0;
  /** Of those, the ones no report has said yet: the next stop's report says them. */
  #refusedUnsaid = 0;
  /** A stop or a failed start was reported, and no worker has answered a call since: the next answer is the storage working again. */
  #failing = false;
  /** Profiles not saved since the storage began failing (in flight on a worker that stopped, or refused during the backoff): said when it works again. */
  #lostWhileFailing = 0;

  /** `startBackoff` is the tests' (a clock of their own); the storage makes its own. */
  constructor(options: ThreadedFileStorageOptions = {}, startBackoff: StartBackoff = new StartBackoff()) {
    // Checked here, as FileStorage's constructor does, so a bad option fails where it is given.
    this.dir = resolve(options.dir ?? 'var/profiler');
    this.bounds = Object.freeze(resolveBounds(options.bounds));
    const segmentBytes = checkSegmentBytes(options.segmentBytes);
    this.#data = { dir: this.dir, bounds: { ...this.bounds }, segmentBytes };
    this.#onError = options.onError;
    this.#resourceLimits = { ...DEFAULT_RESOURCE_LIMITS, ...options.resourceLimits };
    this.#startBackoff = startBackoff;
  }

  /**
   * Profiles of the batches refused at once, not saved, while the storage waited before starting a thread again
   * (after two or more stopped in a row, or one could not start for want of file descriptors), since it was made.
   */
  get refusedProfiles(): number {
    return this.#refused;
  }

  claim(token: string): Promise<boolean> {
    return this.#call('claim', [token]) as Promise<boolean>;
  }

  drawToken(length = 6): Promise<string> {
    return this.#call('drawToken', [length]) as Promise<string>;
  }

  drawTokens(length = 6, count = 1): Promise<string[]> {
    return this.#call('drawTokens', [length, count]) as Promise<string[]>;
  }

  release(token: string): Promise<void> {
    return this.#call('release', [token]) as Promise<void>;
  }

  discard(token: string): Promise<void> {
    return this.#call('discard', [token]) as Promise<void>;
  }

  write(profile: StorableProfile): Promise<void> {
    return this.writeMany([profile]);
  }

  /**
   * FileStorage's writeMany (same refusals, same errors). The profiles are checked and serialised
   * here, and their JSON copied into one buffer that moves to the worker: the caller's bytes are
   * its own again as soon as this returns its promise.
   */
  async writeMany(profiles: readonly StorableProfile[]): Promise<void> {
    if (this.#closed !== null) throw this.#closedError();
    const refused: ProfilerStorageError[] = [];
    const summaries: ProfileSummary[] = [];
    const jsons: (string | Buffer)[] = [];
    for (const profile of profiles) {
      const json = storableJson(profile);
      if (json instanceof ProfilerStorageError) {
        refused.push(json);
        continue;
      }
      summaries.push(profile);
      jsons.push(json);
    }
    if (summaries.length > 0) {
      const { batch, transfer } = encodeBatch(summaries, jsons);
      try {
        await this.#call('writeMany', [batch], transfer, summaries.length);
      } catch (error) {
        if (error instanceof ProfileBatchError) refused.push(...error.errors);
        else if (error instanceof ProfileExistsError || error instanceof InvalidProfileError) refused.push(error);
        else throw error;
      }
    }
    if (refused.length === 1) throw refused[0];
    if (refused.length > 1) throw new ProfileBatchError(refused);
  }

  read(token: string): Promise<Profile | null> {
    if (this.#closed === null && (this.#suspects.get(token) ?? 0) >= 2) {
      return Promise.reject(
        new ProfilerStorageError(`The profile ${token} cannot be read: its reads stopped the profiler storage thread twice (beyond the thread's memory, say), so it is not read again until the process restarts or the storage is purged.`, UNREADABLE_CODE),
      );
    }
    return this.#readOnly('read', [token]) as Promise<Profile | null>;
  }

  find(criteria?: SearchCriteria): Promise<ProfileSummary[]> {
    return this.#readOnly('find', [criteria]) as Promise<ProfileSummary[]>;
  }

  /** FileStorage's purge(), run in the worker; then no token is refused as one whose reads stopped workers (see #suspects). */
  async purge(): Promise<void> {
    await this.#call('purge', []);
    // Their profiles are gone, and the tokens free to be drawn and written again: refused until restart, a new profile was unreadable.
    this.#suspects.clear();
  }

  /** FileStorage's compact(), run in the worker. */
  compact(): Promise<CompactionReport | null> {
    return this.#call('compact', []) as Promise<CompactionReport | null>;
  }

  /** Closes the worker's FileStorage (its pending writes saved first), then ends the thread. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= this.#close();
    return this.#closed;
  }

  async #close(): Promise<void> {
    const worker = this.#worker;
    if (worker === null) return;
    try {
      await this.#send(worker, 'close', [], []);
    } catch (error) {
      // A thread that never answered could not start (it fails the calls in flight): it opened no storage, and
      // close() has nothing to save; its rejection failed app.close() over a SIGTERM during a descriptor shortage.
      if (this.#answered.has(worker)) throw error;
    } finally {
      await worker.terminate();
    }
  }

  /**
   * A call that changes nothing (read, find): in flight when its worker stopped, it is sent once more, to the
   * worker started for it, as database drivers retry a read once on a lost connection (a profiler page asked
   * for then was a 500). Once only: the call itself may be what stops the worker (a profile beyond its heap).
   */
  async #readOnly(op: StorageOp, args: unknown[]): Promise<unknown> {
    try {
      return await this.#call(op, args);
    } catch (error) {
      if (!isStorageThreadStopped(error)) throw error;
      return this.#call(op, args);
    }
  }

  /** `profiles`: a writeMany batch's, said when its worker stops with it in flight. */
  #call(op: StorageOp, args: unknown[], transfer: ArrayBuffer[] = [], profiles?: number): Promise<unknown> {
    if (this.#closed !== null) return Promise.reject(this.#closedError());
    if (this.#broken !== null) return Promise.reject(this.#broken);
    if (this.#worker === null && this.#startFailure !== null && !this.#startBackoff.mayStart()) {
      // A batch refused here is lost as one in flight at a stop is: counted, and said by the next stop's report and when the storage works again.
      if (profiles !== undefined) {
        this.#refused += profiles;
        this.#refusedUnsaid += profiles;
        this.#lostWhileFailing += profiles;
      }
      return Promise.reject(this.#waiting(this.#startFailure));
    }
    let worker = this.#worker;
    if (worker === null) {
      try {
        worker = this.#start();
      } catch (failure) {
        // new Worker throws when no thread can be made (ERR_WORKER_INIT_FAILED: EAGAIN): a rejection, as
        // every answer of a ProfilerStorage is; callers that `void storage.release(token).catch(...)` catch no throw.
        return Promise.reject(this.#notStarted(failure));
      }
    }
    return this.#send(worker, op, args, transfer, profiles);
  }

  /** new Worker threw: as a worker that never answered (see #stopped), reported, and the reason the call fails. */
  #notStarted(thrown: unknown): ProfilerStorageError {
    const failure = thrown instanceof Error ? thrown : new Error(String(thrown));
    const code = (failure as { code?: unknown }).code;
    const error = new ProfilerStorageError(
      `The profiler storage thread for ${this.dir} could not start${typeof code === 'string' ? ` (${code})` : ''}: ${failure.message}.`,
      'HK_PROFILER_STORAGE',
      { cause: failure },
    );
    this.#neverAnswered(error, failure);
    this.#failing = true;
    this.#report(error);
    return error;
  }

  /** A thread that never answered: storage broken for good, unless it was for want of file descriptors (see #stopped). */
  #neverAnswered(error: ProfilerStorageError, failure: Error | undefined): void {
    if (!isOutOfDescriptors(failure)) this.#broken = error;
    else {
      this.#startFailure = error;
      this.#startBackoff.failed();
    }
  }

  #send(worker: Worker, op: StorageOp, args: unknown[], transfer: ArrayBuffer[], profiles?: number): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      // Calls in flight keep the process alive, as FileStorage's pending file operations would.
      if (this.#calls.size === 0) worker.ref();
      this.#calls.set(id, op === 'read' ? { op, token: args[0] as string, resolve, reject } : profiles === undefined ? { op, resolve, reject } : { op, profiles, resolve, reject });
      if (op !== 'read' && op !== 'find') this.#mayHoldLeases.add(worker);
      worker.postMessage({ id, op, args } satisfies StorageCall, transfer);
    });
  }

  #start(): Worker {
    const leaseOwner = randomUUID();
    const workerData: StorageThreadData = { ...this.#data, leaseOwner, deadLeaseOwners: [...this.#deadLeaseOwners] };
    const worker = PROCESS_SCOPE.runInAsyncScope(
      () => new Worker(THREAD_SOURCE, { eval: true, workerData, name: 'http-kernel profiler storage', resourceLimits: this.#resourceLimits }),
    );
    worker.unref();
    worker.on('message', (reply: StorageReply) => {
      if (!this.#answered.has(worker)) {
        this.#answered.add(worker);
        this.#startFailure = null;
      }
      // A call answered (not the thread saying it started: one that dies at its first call says that each time).
      if (reply.id !== 0) {
        this.#stopsInARow = 0;
        this.#startBackoff.started();
        if (this.#failing) this.#recovered();
      }
      this.#settle(worker, reply);
    });
    let failure: Error | undefined;
    worker.on('error', (error) => {
      failure = error;
    });
    worker.on('exit', (code) => {
      // One that took no lease (it never answered, or died at its first read) is not remembered: it would push
      // out a dead worker that did, as a long descriptor shortage fails a start every few seconds, and a
      // profile beyond the worker's heap stops one at each read of it.
      if (this.#closed === null && this.#answered.has(worker) && this.#mayHoldLeases.has(worker)) {
        this.#deadLeaseOwners.push(leaseOwner);
        if (this.#deadLeaseOwners.length > DEAD_LEASE_OWNERS_KEPT) this.#deadLeaseOwners.shift();
      }
      this.#stopped(worker, failure, code, this.#answered.has(worker));
    });
    this.#worker = worker;
    return worker;
  }

  #settle(worker: Worker, reply: StorageReply): void {
    if (reply.id === 0) {
      if (reply.error !== undefined) this.#report(rebuildError(reply.error));
      return;
    }
    this.#mayHoldLeases.add(worker);
    const call = this.#calls.get(reply.id);
    if (call === undefined) return;
    this.#calls.delete(reply.id);
    if (call.op === 'close') this.#closeAnswered = true;
    if (this.#calls.size === 0) worker.unref();
    // Read whole: a stop it was in flight at before had another cause (see #suspects).
    if (call.token !== undefined && this.#suspects.size > 0) this.#suspects.delete(call.token);
    if (reply.error === undefined) call.resolve(reply.value);
    else call.reject(rebuildError(reply.error));
  }

  /**
   * The worker ended: the calls in flight fail, and the next call starts a new worker, unless
   * this one never answered (it could not start): then every later call fails the same way,
   * rather than starting a thread per call. Not when it could not start for want of file
   * descriptors (a flood of connections holds them all): that passes, and kept as broken, the
   * storage saved no profile again for the life of the process. Nor is a thread started per call
   * meanwhile: the calls before #startBackoff lets the next start fail with this one's error.
   * The calls in flight of a worker that had answered fail with THREAD_STOPPED_CODE (see #readOnly),
   * also while the storage closes, until the worker has answered close(): the batches accepted before it,
   * and close() itself, failed as "closed", and the stop was not reported (a shutdown said only that).
   */
  #stopped(worker: Worker, failure: Error | undefined, code: number, answered: boolean): void {
    if (this.#worker === worker) this.#worker = null;
    if (this.#calls.size === 0 && this.#closed !== null) return;
    // Ended after its storage closed, or one that never started while closing: what is left fails as closed.
    const closedFirst = this.#closed !== null && (this.#closeAnswered || !answered);
    // The batches in flight are gone with the worker (their bytes moved to it): said in the stop's one report, not per batch.
    let batches = 0;
    let profiles = 0;
    for (const call of this.#calls.values()) {
      if (call.profiles === undefined) continue;
      batches++;
      profiles += call.profiles;
    }
    const inFlight = batches === 0 ? '' : ` ${batches === 1 ? '1 batch' : `${batches} batches`} of profiles in flight on it (${profiles} ${profiles === 1 ? 'profile' : 'profiles'}) ${batches === 1 ? 'was' : 'were'} not saved.`;
    // The batches refused during the backoff before this stop: said here, once. Not by a thread that never answered, whose
    // message the storage log says once for all its repeats (a shortage of file descriptors fails each start the same way).
    const refused = this.#refusedUnsaid;
    const sayRefused = answered && !closedFirst && refused > 0;
    const lost = `${inFlight}${sayRefused ? ` ${refused} ${refused === 1 ? 'profile' : 'profiles'} refused since the previous failure, while the storage waited to start a thread again, ${refused === 1 ? 'was' : 'were'} not saved.` : ''}`;
    if (sayRefused) this.#refusedUnsaid = 0;
    const again = answered && this.#closed === null && ++this.#stopsInARow > 1;
    if (again) this.#startBackoff.failed();
    const error = closedFirst
      ? this.#closedError()
      : new ProfilerStorageError(
          `The profiler storage thread for ${this.dir} stopped (exit code ${code})${failure === undefined ? '' : `: ${failure.message}`}.${lost}`,
          answered ? THREAD_STOPPED_CODE : 'HK_PROFILER_STORAGE',
          answered ? { cause: failure, retryAfterMs: this.#startBackoff.remaining() } : { cause: failure },
        );
    if (!answered && this.#closed === null) this.#neverAnswered(error, failure);
    if (again) this.#startFailure = error;
    const calls = [...this.#calls.values()];
    // A read is suspected only when it was the one call in flight that can take the worker's heap: with a batch, a
    // search or another read beside it, that may be what stopped the worker (a healthy profile viewed while batches
    // beyond the heap stopped two workers in a row was refused until restart).
    // Reads of one token are one suspect (a page reloaded, or open twice, while its read is in flight).
    const heavy = new Set(calls.filter((call) => HEAVY_OPS.has(call.op)).map((call) => call.token ?? call));
    const [suspect] = heavy;
    if (answered && this.#closed === null && heavy.size === 1 && typeof suspect === 'string') this.#suspect(suspect);
    this.#calls.clear();
    for (const call of calls) call.reject(error);
    if (!closedFirst) {
      this.#failing = true;
      this.#lostWhileFailing += profiles;
      this.#report(error);
    }
  }

  /**
   * A worker answered a call after a stop or a failed start: the storage works again. Said (THREAD_RECOVERED_CODE)
   * when the failure cost profiles, with how many: the batches refused during the backoff were said nowhere else in all.
   */
  #recovered(): void {
    const lost = this.#lostWhileFailing;
    this.#failing = false;
    this.#lostWhileFailing = 0;
    this.#refusedUnsaid = 0;
    if (lost === 0) return;
    this.#report(
      new ProfilerStorageError(
        `The profiler storage thread for ${this.dir} works again; ${lost} ${lost === 1 ? 'profile was' : 'profiles were'} not saved while it failed (in flight on a thread that stopped, or refused while the storage waited to start one).`,
        THREAD_RECOVERED_CODE,
      ),
    );
  }

  /**
   * The error a call fails with while #startBackoff holds the next start back: a worker's stop, again, saying how
   * long is left of the wait (retryAfterMs: a page's Retry-After); a failed start's, as it is.
   */
  #waiting(failure: ProfilerStorageError): ProfilerStorageError {
    if (failure.code !== THREAD_STOPPED_CODE) return failure;
    const again = new ProfilerStorageError(failure.message, failure.code, { cause: failure.cause, retryAfterMs: this.#startBackoff.remaining() });
    if (wasReported(failure)) markReported(again);
    return again;
  }

  /** A read of `token` was in flight when a worker stopped (see #suspects). */
  #suspect(token: string): void {
    const stops = (this.#suspects.get(token) ?? 0) + 1;
    this.#suspects.delete(token);
    this.#suspects.set(token, stops);
    if (this.#suspects.size > SUSPECTS_KEPT) this.#suspects.delete(this.#suspects.keys().next().value as string);
  }

  #closedError(): ProfilerStorageError {
    return new ProfilerStorageError(`The profiler storage in ${this.dir} is closed.`, 'HK_PROFILER_STORAGE_CLOSED');
  }

  #report(error: Error): void {
    const onError = this.#onError;
    if (onError === undefined) return;
    try {
      // True: the handler logged it at ERROR, and the profiler's line for the calls it fails is a WARNING (see StorageErrorHandler).
      // Outside the caller's request: a thread that could not start is reported by the call that tried to start it.
      if (PROCESS_SCOPE.runInAsyncScope(() => onError(error)) === true) markReported(error);
    } catch {
      // A failing error handler must not become an unhandled rejection.
    }
  }
}
