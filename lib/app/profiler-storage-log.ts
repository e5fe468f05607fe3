// Internal: how createKernel logs what its profiler storage reports (the storage's onError).
import type { Logger } from '../log/index.js';
import { THREAD_RECOVERED_CODE, isStorageThreadStopped } from '../profiler/index.js';
import { markReported } from '../profiler/storage/reported-errors.js';

/**
 * Background storage errors repeat every upkeep while a disk stays full: each distinct one is
 * logged once. The storage lowering its bounds to what a full disk holds is a warning: it goes on working.
 * A ThreadedFileStorage's thread that stopped, or could not start, is said as that, in the storage's words
 * (`The profiler storage thread for <dir> stopped (exit code 1): <reason>.`): it was "Profiler storage upkeep
 * failed: ...". Each stop is logged, once (the storage reports each once, and spaces the starts of a thread
 * that keeps stopping): the per-message dedupe hid every stop after the first of its kind. The thread working again
 * after a failure that cost profiles is a NOTICE, each time, saying how many were not saved.
 */
export function storageErrorLogger(logger: Logger): (error: Error) => void {
  const once = oncePerKey(
    (error: Error) => error.message,
    (error) => {
      const code = (error as { code?: unknown }).code;
      // What the storage did about a condition, not a failure: the disk full, an index that had lost lines.
      if (code === 'HK_PROFILER_STORAGE_DISK_FULL' || code === 'HK_PROFILER_STORAGE_RECOVERED') logger.warning('{message}', { message: error.message });
      else if (THREAD_FAILURE.test(error.message)) logged(error, () => logger.error('{message}', { message: error.message }));
      else logged(error, () => logger.error('Profiler storage upkeep failed: {message}', { message: error.message }));
    },
  );
  return (error) => {
    if (isStorageThreadStopped(error)) logged(error, () => logger.error('{message}', { message: error.message }));
    else if ((error as { code?: unknown }).code === THREAD_RECOVERED_CODE) logger.notice('{message}', { message: error.message });
    else once(error);
  };
}

/**
 * `error` logged at ERROR here: the profiler's line for a call it fails is then a WARNING (see reported-errors.ts).
 * Marked where the ERROR line is written, not where the storage calls its onError: an onError of one's own that
 * logs nothing, or this log passing over a message it has said before (a start failing again after the storage
 * recovered), left the failure with no ERROR line at all.
 */
function logged(error: Error, log: () => void): void {
  log();
  markReported(error);
}

/** ThreadedFileStorage's message for a thread that could not start, or stopped before it had started. */
const THREAD_FAILURE = /^The profiler storage thread for .* (?:could not start|stopped)\b/s;

/** Runs `act` once per distinct key, for the first 100 keys: a condition that lasts is reported once, not per request or upkeep. */
export function oncePerKey<T>(keyOf: (value: T) => string, act: (value: T) => void): (value: T) => void {
  const seen = new Set<string>();
  return (value) => {
    const key = keyOf(value);
    if (seen.has(key) || seen.size >= 100) return;
    seen.add(key);
    act(value);
  };
}
