import type { Profile, ProfileSummary, StorableProfile } from '../profile.js';

/** Filters of a profile search; all optional, combined with AND. */
export interface SearchCriteria {
  /** Exact client IP. */
  ip?: string;
  /** Exact method, case-insensitive. */
  method?: string;
  /** Exact status code. */
  status?: number;
  /** Substring of the absolute URL, as it holds it or with non-ASCII characters and spaces written plain (`élève` for `%C3%A9l%C3%A8ve`); an escape's hex in either case. */
  url?: string;
  /** Epoch milliseconds, inclusive. */
  start?: number;
  /** Epoch milliseconds, inclusive. */
  end?: number;
  /** Most results (default 10). */
  limit?: number;
}

/** How much a storage keeps; the oldest profiles go first. */
export interface StorageBounds {
  /** Milliseconds; default 2 days. */
  maxAge: number;
  /** Default 10,000. */
  maxProfiles: number;
  /** Bytes of stored profiles; default 512 MiB. */
  maxBytes: number;
}

/** The bounds used where a storage's options leave one out. */
export const DEFAULT_STORAGE_BOUNDS: Readonly<StorageBounds> = Object.freeze({
  maxAge: 2 * 24 * 60 * 60 * 1000,
  maxProfiles: 10_000,
  maxBytes: 512 * 1024 * 1024,
});

/** Where profiles are kept. Implementations must be safe to share between processes if they say so. */
export interface ProfilerStorage {
  /**
   * Claims a token for a profile to be written later: true when nobody (in any process sharing
   * the storage) holds it, false when it is taken. A claimed token is never handed out again.
   */
  claim(token: string): Promise<boolean>;
  /**
   * Optional: picks and claims a fresh token of `length` characters itself, cheaper than random
   * draws through claim() when the storage can (FileStorage: in memory, inside a token prefix it
   * leases). Same guarantees as a successful claim(); rejects when no token can be had.
   */
  drawToken?(length: number): Promise<string>;
  /**
   * Optional: draws up to `count` tokens at once (at least one unless it rejects), with the
   * guarantees of drawToken: the token pool refills with one call instead of one per token.
   */
  drawTokens?(length: number, count: number): Promise<string[]>;
  /** Gives back a claimed token that will not be written. */
  release(token: string): Promise<void>;
  /**
   * Optional: a claimed token that will not be written, though a client has seen it (its response
   * carried it): unlike release(), the storage should not hand it out again for a while, so that
   * the client's link does not open another request's profile. Without it, the profiler keeps the
   * token claimed and never writes it.
   */
  discard?(token: string): Promise<void>;
  /** Stores a profile under its (claimed) token; never overwrites another profile. Same as `writeMany([profile])`. */
  write(profile: StorableProfile): Promise<void>;
  /**
   * Stores a batch of profiles, each under its (claimed) token, as one unit of work (FileStorage:
   * a few file operations per batch, not per profile). Same rules as write: a profile whose token
   * holds a saved profile (or appears twice in the batch) is refused with ProfileExistsError, one
   * that is not storable with InvalidProfileError, and every other profile of the batch is still
   * saved; the promise then rejects with the refused profile's error, or with ProfileBatchError
   * (its `errors`) when several were refused. A storage failure (disk full, read-only) rejects
   * with ProfilerStorageError, and the batch may then be saved in part or not at all.
   * Profiles may come already serialised (EncodedProfile, see `profileJson()`), their `json` a
   * string, or bytes only for a storage that says it copies them (see copiesProfileBytes).
   */
  writeMany(profiles: readonly StorableProfile[]): Promise<void>;
  /**
   * Optional: true when writeMany() copies the bytes of each encoded profile's `json` before its
   * promise settles, as FileStorage (to its file) and MemoryStorage (to a string) do. The profiler
   * then hands it views into a buffer it reuses for later profiles, which spares the garbage
   * collector a string per profile; without it, `json` is a string the storage may keep.
   */
  readonly copiesProfileBytes?: boolean;
  /** The profile, or null when unknown (also for malformed tokens, without touching the disk). */
  read(token: string): Promise<Profile | null>;
  /** Summaries matching the criteria, newest first. */
  find(criteria?: SearchCriteria): Promise<ProfileSummary[]>;
  /** Removes every profile. */
  purge(): Promise<void>;
  /** Releases resources (timers, handles). */
  close(): Promise<void>;
}
