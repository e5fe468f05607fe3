import { describeValue } from '../../kernel/describe-value.js';

/** The longest delay setTimeout takes as given: it reads a longer one, a negative one or NaN as 1 ms (with a warning for the longer). */
export const MAX_SAVE_DELAY_MS = 2 ** 31 - 1;

/**
 * Refuses a save-queue bound or save delay the profiler would misread: a maxQueuedProfiles of NaN
 * never compares above the queue (no bound: memory grows with a slow storage), 0 or less drops
 * every profile while responses still link to them; a saveDelayMs past setTimeout's range fires at
 * once. `prefix` goes before each option's name in the message (`profiler.` for createKernel's).
 */
export function checkSaveOptions(options: { maxQueuedProfiles?: unknown; saveDelayMs?: unknown }, prefix: string): void {
  const { maxQueuedProfiles, saveDelayMs } = options;
  if (maxQueuedProfiles !== undefined && !(Number.isSafeInteger(maxQueuedProfiles) && (maxQueuedProfiles as number) >= 1)) {
    throw new TypeError(`${prefix}maxQueuedProfiles is a whole number of profiles, 1 or more (profiler: false records none), not ${describeValue(maxQueuedProfiles)}.`);
  }
  if (saveDelayMs !== undefined && !(Number.isInteger(saveDelayMs) && (saveDelayMs as number) >= 0 && (saveDelayMs as number) <= MAX_SAVE_DELAY_MS)) {
    throw new TypeError(`${prefix}saveDelayMs is a whole number of milliseconds from 0 to ${MAX_SAVE_DELAY_MS}, not ${describeValue(saveDelayMs)}.`);
  }
}
