import { describeValue } from '../../../kernel/describe-value.js';
import { profileJson, type StorableProfile } from '../profile.js';
import { DEFAULT_STORAGE_BOUNDS, type StorageBounds } from './profiler-storage.js';
import { InvalidProfileError, ProfilerStorageError } from './errors.js';
import { MAX_TOKEN_LENGTH, MIN_TOKEN_LENGTH } from '../token.js';

const TOKEN_PATTERN = new RegExp(`^[0-9a-f]{${MIN_TOKEN_LENGTH},${MAX_TOKEN_LENGTH}}$`);

/**
 * A profile dated this far ahead of the clock was written before the clock was set back: over a
 * bound it goes first (furthest ahead first), since its age is unknown and by its time it would
 * outlive every profile written since.
 */
export const FUTURE_SLACK_MS = 60_000;

/** Whether `token` may name a stored profile; checked before any path is built from it. */
export function isStorableToken(token: unknown): token is string {
  return typeof token === 'string' && TOKEN_PATTERN.test(token);
}

/**
 * The longest maxAge kept: a larger one (finite, 1e300) is lowered to this. Discarded tokens (the
 * tokens of dropped profiles, which clients saw) stay taken in their prefix for maxAge, with no cap
 * of their own: past this, a storage that kept dropping profiles filled its prefixes practically
 * for ever, and went unrecorded once none was left. A year, far past any useful profile's age.
 */
export const MAX_STORAGE_AGE_MS = 365 * 24 * 60 * 60 * 1000;

/** What each bound counts, as its error says. */
const BOUND_UNITS: Readonly<Record<keyof StorageBounds, string>> = { maxAge: 'milliseconds', maxProfiles: 'profiles', maxBytes: 'bytes' };

/**
 * The bounds with defaults filled in; a bound that is not a finite number above 0 is a programming
 * error. Infinity is refused as NaN is, a bound never reached: a maxAge of Infinity also kept the
 * tokens of dropped profiles taken for ever (TokenLeases), until every token prefix was full and
 * requests went unrecorded. A maxAge over MAX_STORAGE_AGE_MS is lowered to it, for the same reason.
 */
export function resolveBounds(bounds: Partial<StorageBounds> = {}): StorageBounds {
  const resolved: StorageBounds = { ...DEFAULT_STORAGE_BOUNDS };
  for (const key of ['maxAge', 'maxProfiles', 'maxBytes'] as const) {
    const value = bounds[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || !(value > 0)) {
      throw new RangeError(`Profiler storage bound ${key} must be a finite number of ${BOUND_UNITS[key]} above 0, got ${describeValue(value)}.`);
    }
    resolved[key] = key === 'maxAge' ? Math.min(value, MAX_STORAGE_AGE_MS) : value;
  }
  return resolved;
}

/**
 * The size at which a FileStorage starts a new segment file, refused unless a number above 0: a
 * string or `true` compares above 0 and would be read as a size (`true`, one byte: a file a record).
 */
export function checkSegmentBytes(segmentBytes: unknown): number | undefined {
  if (segmentBytes !== undefined && (typeof segmentBytes !== 'number' || !(segmentBytes > 0))) {
    throw new RangeError(`FileStorage segmentBytes must be a positive number, got ${describeValue(segmentBytes)}.`);
  }
  return segmentBytes;
}

/** Throws InvalidProfileError unless the profile has a valid token and summary fields. */
export function assertStorableProfile(profile: StorableProfile): void {
  if (profile === null || typeof profile !== 'object') throw new InvalidProfileError('A profile must be an object.');
  if (!isStorableToken(profile.token)) {
    throw new InvalidProfileError(`Profile token must be 6 to 32 lowercase hex characters, got ${JSON.stringify(String(profile.token)).slice(0, 80)}.`);
  }
  const problems: string[] = [];
  if (profile.parent !== null && !isStorableToken(profile.parent)) problems.push('parent must be null or a token');
  if (typeof profile.ip !== 'string') problems.push('ip must be a string');
  if (typeof profile.method !== 'string') problems.push('method must be a string');
  if (typeof profile.url !== 'string') problems.push('url must be a string');
  if (typeof profile.time !== 'number' || !Number.isFinite(profile.time)) problems.push('time must be epoch milliseconds');
  if (!Number.isInteger(profile.status)) problems.push('status must be an integer');
  if (problems.length > 0) throw new InvalidProfileError(`Profile ${profile.token} cannot be stored: ${problems.join(', ')}.`);
}

/** The profile's JSON (serialised unless it is already), or the InvalidProfileError that refuses it. */
export function storableJson(profile: StorableProfile): string | Buffer | ProfilerStorageError {
  try {
    assertStorableProfile(profile);
  } catch (error) {
    if (error instanceof ProfilerStorageError) return error;
    throw error;
  }
  try {
    return profileJson(profile);
  } catch (error) {
    return new InvalidProfileError(`Profile ${profile.token} cannot be serialised to JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}
