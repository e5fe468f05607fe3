// The profiler storages' errors. Each has a stable `code`; none is an HTTP error, since a storage
// failure never reaches a client: the profiler logs it (once) and the request goes on.

/** Options every storage error accepts: the ES2022 `cause` (the underlying fs error, when there is one). */
export interface ProfilerStorageErrorOptions {
  cause?: unknown;
  /** How long, in ms, until the storage may work again, when it knows (see ProfilerStorageError.retryAfterMs). */
  retryAfterMs?: number;
}

/** A storage could not do what was asked (disk full, read-only, permissions, closed). */
export class ProfilerStorageError extends Error {
  /** Stable machine-readable code, `HK_PROFILER_STORAGE*`. */
  readonly code: string;
  /**
   * How long, in ms, until the storage may work again, when it knows: a ThreadedFileStorage whose thread
   * stopped, until it may start another (0: the next call does). The profiler's pages say it as Retry-After.
   */
  readonly retryAfterMs: number | undefined;

  constructor(message: string, code = 'HK_PROFILER_STORAGE', options?: ProfilerStorageErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/** `write` refused because the token already holds another profile (or another writer's claim). */
export class ProfileExistsError extends ProfilerStorageError {
  readonly token: string;

  /** `message`: why, when the storage knows more (another writer took a token drawn here). */
  constructor(token: string, message = `A profile with token "${token}" is already stored; profiles are never overwritten. Claim a new token.`) {
    super(message, 'HK_PROFILER_STORAGE_EXISTS');
    this.token = token;
  }
}

/** `write` was given something that is not a storable profile (bad token, missing summary fields). */
export class InvalidProfileError extends ProfilerStorageError {
  constructor(message: string) {
    super(message, 'HK_PROFILER_STORAGE_INVALID');
  }
}

/** `writeMany` refused more than one profile of a batch (each error in `errors`); it saved the others. */
export class ProfileBatchError extends ProfilerStorageError {
  /** One error per refused profile: ProfileExistsError or InvalidProfileError. */
  readonly errors: readonly ProfilerStorageError[];

  constructor(errors: readonly ProfilerStorageError[]) {
    super(`${errors.length} profiles of the batch were refused, the others saved: ${errors.map((error) => error.message).join(' ')}`.slice(0, 2_000), 'HK_PROFILER_STORAGE_BATCH');
    this.errors = errors;
  }
}

/**
 * Whether the error, or one of its causes, says the process (EMFILE) or the system (ENFILE) is out of file
 * descriptors, a state that passes once connections close; a worker thread that could not make its event
 * loop for that reason says so only in its message (ERR_WORKER_INIT_FAILED).
 */
export function isOutOfDescriptors(error: unknown): boolean {
  for (let cause = error, depth = 0; cause !== undefined && cause !== null && depth < 8; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (code === 'EMFILE' || code === 'ENFILE') return true;
    if (code === 'ERR_WORKER_INIT_FAILED' && /\b(?:EMFILE|ENFILE)\b/.test(String((cause as { message?: unknown }).message))) return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * The code of the error a ThreadedFileStorage call fails with when its worker thread stopped under it (a
 * worker that had started): the next call starts a new one, so trying again soon is worth it.
 */
export const THREAD_STOPPED_CODE = 'HK_PROFILER_STORAGE_THREAD_STOPPED';

/**
 * The code of what a ThreadedFileStorage reports to its onError when its worker thread works again after failing, when the
 * failure cost profiles: not an error, a ProfilerStorageError all the same, as every report is (createKernel logs it at NOTICE).
 */
export const THREAD_RECOVERED_CODE = 'HK_PROFILER_STORAGE_THREAD_RECOVERED';

/** Whether the error says the storage's worker thread stopped during the call, and is started again by the next one. */
export function isStorageThreadStopped(error: unknown): boolean {
  return error instanceof ProfilerStorageError && error.code === THREAD_STOPPED_CODE;
}

/**
 * The code of the error a read fails with when the profile cannot be read whole (see ThreadedFileStorage): one
 * nested too deep or too large to pass between threads, or one whose reading stopped the storage thread twice.
 * Reading it again fails the same way; the other profiles read as before.
 */
export const UNREADABLE_CODE = 'HK_PROFILER_STORAGE_UNREADABLE';
