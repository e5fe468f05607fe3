import type { StorageBounds } from './profiler-storage.js';
import { FUTURE_SLACK_MS } from './validation.js';

/**
 * A bound, once exceeded, is trimmed to this share of itself, so compactions are not back to back:
 * at 0.75 a server saving thousands of profiles a second compacts every 2,500 (at 0.9 the
 * compactions, every 1,000, stalled its saves enough to drop profiles).
 */
export const TRIM_TO = 0.75;

/** What retention needs to know of a stored profile. */
export interface Retained {
  /** When the request began, epoch milliseconds. */
  readonly time: number;
  /** Size of its stored record. */
  readonly bytes: number;
}

/**
 * The range `[first, end)` of `sorted` (oldest first) that the bounds keep at `now`: expired ones
 * go, then, over a bound, those dated more than FUTURE_SLACK_MS ahead of the clock, furthest
 * first (written before it was set back: their age is unknown, and by their time they would
 * outlive everything written since), then the oldest; over the byte bound, the newest also go
 * while one alone is over it. A count or byte bound, once exceeded, is
 * trimmed to TRIM_TO of itself, and never to fewer than one profile.
 */
export function keptRange(sorted: readonly Retained[], bounds: Readonly<StorageBounds>, now: number): [number, number] {
  const { maxAge, maxProfiles, maxBytes } = bounds;
  const cutoff = now - maxAge;
  const future = now + FUTURE_SLACK_MS;
  let first = 0;
  let end = sorted.length;
  while (first < end && (sorted[first] as Retained).time < cutoff) first++;
  if (end - first > maxProfiles) {
    let excess = end - first - Math.max(1, Math.floor(maxProfiles * TRIM_TO));
    for (; excess > 0 && (sorted[end - 1] as Retained).time > future; excess--) end--;
    first += excess;
  }
  let bytes = 0;
  for (let i = first; i < end; i++) bytes += (sorted[i] as Retained).bytes;
  if (bytes > maxBytes) {
    const target = maxBytes * TRIM_TO;
    // When every profile is over the bound alone, the newest stays (a bound never empties the storage).
    let fits = false;
    for (let i = first; i < end && !fits; i++) fits = (sorted[i] as Retained).bytes <= maxBytes;
    while (bytes > target && end - first > 1) {
      const newest = sorted[end - 1] as Retained;
      // Dated ahead, or alone over the whole byte bound (a corrupt line says 2^53 bytes): the newest
      // goes rather than every profile before it.
      if (newest.time > future || (fits && newest.bytes > maxBytes)) {
        end--;
        bytes -= newest.bytes;
      } else {
        bytes -= (sorted[first++] as Retained).bytes;
      }
    }
  }
  return [first, end];
}

/**
 * What keptRange dropped from the newest end of `sorted` (from `end` on), as a rule a writer can
 * apply to its own profiles: those dated at or after `aheadFrom` went for being dated more than
 * FUTURE_SLACK_MS ahead (furthest first), and those of more bytes than `overBytes` (the byte bound)
 * for being alone over it; null when none went so. One the compaction did not read that the rule
 * covers would have gone first too. (The header's droppedThrough speaks of the oldest end only: a
 * writer took the profiles dropped from the newest end for lines lost and appended them again.)
 */
export function droppedNewest(sorted: readonly Retained[], end: number, bounds: Readonly<StorageBounds>, now: number): { aheadFrom: number | null; overBytes: number | null } {
  const future = now + FUTURE_SLACK_MS;
  let aheadFrom: number | null = null;
  let overBytes: number | null = null;
  for (let i = end; i < sorted.length; i++) {
    const { time } = sorted[i] as Retained;
    // Oldest first: the first one dated ahead is the oldest of them.
    if (time > future) aheadFrom ??= time;
    else overBytes = bounds.maxBytes;
  }
  return { aheadFrom, overBytes };
}
