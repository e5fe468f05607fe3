// Internal: when ThreadedFileStorage may start another storage thread after one could not start for
// want of file descriptors, or after threads that started stopped again and again without answering a call.
// Through a long shortage (a flood of connections under a low ulimit -n) each call started a thread that
// failed at once, and one that died at its first call was started again by each: a thread per call, for nothing.

/** The wait after the first thread that could not start: a shortage of a moment costs little. */
export const FIRST_RESTART_DELAY_MS = 100;

/** The longest wait: the profiler asks for tokens every 5 s while its storage fails, and its pages say Retry-After: 5. */
export const MAX_RESTART_DELAY_MS = 5_000;

/**
 * The wait before the next start: none at first, FIRST_RESTART_DELAY_MS after a failed start, twice
 * the last after each further one, up to MAX_RESTART_DELAY_MS, and none again once a thread starts.
 * `now` is a monotonic clock in ms (performance.now(): a wall clock set back would stretch the wait).
 */
export class StartBackoff {
  readonly #now: () => number;
  #delay = 0;
  #notBefore = -Infinity;

  constructor(now: () => number = () => performance.now()) {
    this.#now = now;
  }

  /** Whether a thread may be started now. */
  mayStart(): boolean {
    return this.#now() >= this.#notBefore;
  }

  /** How long, in ms, until a thread may be started: 0 when one may now. */
  remaining(): number {
    return Math.max(0, this.#notBefore - this.#now());
  }

  /** A thread could not start: the next one waits longer than the last did. */
  failed(): void {
    this.#delay = this.#delay === 0 ? FIRST_RESTART_DELAY_MS : Math.min(this.#delay * 2, MAX_RESTART_DELAY_MS);
    this.#notBefore = this.#now() + this.#delay;
  }

  /** A thread answered a call: a later failure waits the first delay again. */
  started(): void {
    this.#delay = 0;
    this.#notBefore = -Infinity;
  }
}
