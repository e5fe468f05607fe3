import { profileJson, type Profile, type ProfileSummary, type StorableProfile } from '../profile.js';
import type { ProfilerStorage, SearchCriteria, StorageBounds } from './profiler-storage.js';
import { InvalidProfileError, ProfileBatchError, ProfileExistsError, ProfilerStorageError } from './errors.js';
import { compileCriteria, matchesCriteria, toSummary } from './search-criteria.js';
import { TimeOrderedList } from './time-ordered-list.js';
import { generateToken } from '../token.js';
import { FUTURE_SLACK_MS, assertStorableProfile, isStorableToken, resolveBounds } from './validation.js';

/** Options of a MemoryStorage. */
export interface MemoryStorageOptions {
  /** Bounds; bytes are counted as the length of each profile's JSON. */
  bounds?: Partial<StorageBounds>;
  /** The clock profile ages are measured with (epoch ms); tests inject one. */
  now?: () => number;
}

interface StoredProfile extends ProfileSummary {
  /** Kept as JSON so callers can neither change a stored profile nor see one change under them. */
  json: string;
}

/** Profiles in a Map of this process, bounded like the file storage: for tests and embedders. */
export class MemoryStorage implements ProfilerStorage {
  readonly bounds: Readonly<StorageBounds>;
  /** writeMany() copies each profile's bytes before it settles (see ProfilerStorage.copiesProfileBytes). */
  readonly copiesProfileBytes = true;
  readonly #now: () => number;
  readonly #profiles = new Map<string, StoredProfile>();
  readonly #byTime = new TimeOrderedList<StoredProfile>();
  readonly #claims = new Set<string>();
  /** Discarded tokens (see discard()) and when: not drawn again within maxAge, the newest maxProfiles of them. */
  readonly #discarded = new Map<string, number>();
  #bytes = 0;

  constructor(options: MemoryStorageOptions = {}) {
    this.bounds = Object.freeze(resolveBounds(options.bounds));
    this.#now = options.now ?? Date.now;
  }

  async claim(token: string): Promise<boolean> {
    if (!isStorableToken(token)) return false;
    this.#dropExpired();
    if (this.#claims.has(token) || this.#profiles.has(token) || this.#discarded.has(token)) return false;
    this.#claims.add(token);
    return true;
  }

  async release(token: string): Promise<void> {
    this.#claims.delete(token);
  }

  /** A claimed token that a client saw and that will not be written: not handed out again within the bounds. */
  async discard(token: string): Promise<void> {
    if (!this.#claims.delete(token)) return;
    this.#discarded.set(token, this.#now());
    if (this.#discarded.size > this.bounds.maxProfiles) this.#discarded.delete(this.#discarded.keys().next().value as string);
  }

  /** Up to `count` fresh random tokens, claimed (see ProfilerStorage.drawTokens). */
  async drawTokens(length: number, count: number): Promise<string[]> {
    this.#dropExpired();
    const tokens: string[] = [];
    for (let attempt = 0; tokens.length < count && attempt < count * 4 + 100; attempt++) {
      const token = generateToken(length);
      if (this.#claims.has(token) || this.#profiles.has(token) || this.#discarded.has(token)) continue;
      this.#claims.add(token);
      tokens.push(token);
    }
    if (tokens.length === 0) throw new ProfilerStorageError(`Could not draw a free ${length}-character profile token: the storage is full.`, 'HK_PROFILER_STORAGE_FULL');
    return tokens;
  }

  /** Stores one profile: a batch of one (see writeMany). */
  write(profile: StorableProfile): Promise<void> {
    return this.writeMany([profile]);
  }

  /** Stores each profile it can, in order; the refused ones (stored token, unstorable) reject afterwards, as with FileStorage. */
  async writeMany(profiles: readonly StorableProfile[]): Promise<void> {
    this.#dropExpired();
    const refused: ProfilerStorageError[] = [];
    // A token twice in the batch is refused the second time even when the bounds dropped the profile
    // stored under it meanwhile (an old one under maxProfiles): profiles are never overwritten.
    const batchTokens = new Set<string>();
    for (const profile of profiles) {
      try {
        if (batchTokens.has(profile?.token)) throw new ProfileExistsError(profile.token);
        this.#store(profile);
        batchTokens.add(profile.token);
      } catch (error) {
        if (!(error instanceof ProfilerStorageError)) throw error;
        // Refused as stored: a later profile of the batch under it is refused too (the stored one may go meanwhile).
        if (error instanceof ProfileExistsError) batchTokens.add(error.token);
        refused.push(error);
      }
    }
    if (refused.length === 1) throw refused[0];
    if (refused.length > 1) throw new ProfileBatchError(refused);
  }

  async read(token: string): Promise<Profile | null> {
    if (!isStorableToken(token)) return null;
    this.#dropExpired();
    const stored = this.#profiles.get(token);
    if (stored === undefined) return null;
    try {
      return JSON.parse(stored.json) as Profile;
    } catch {
      // A collector's RawJson that is no JSON: unreadable, as FileStorage has it.
      return null;
    }
  }

  async find(criteria?: SearchCriteria): Promise<ProfileSummary[]> {
    const compiled = compileCriteria(criteria);
    this.#dropExpired();
    const results: ProfileSummary[] = [];
    if (compiled.limit === 0) return results;
    for (const stored of this.#byTime.newestFirst()) {
      if (!matchesCriteria(stored, compiled)) continue;
      results.push(toSummary(stored));
      if (results.length >= compiled.limit) break;
    }
    return results;
  }

  async purge(): Promise<void> {
    this.#profiles.clear();
    this.#byTime.clear();
    this.#bytes = 0;
  }

  async close(): Promise<void> {}

  #store(profile: StorableProfile): void {
    assertStorableProfile(profile);
    if (this.#profiles.has(profile.token)) throw new ProfileExistsError(profile.token);
    let json: string;
    try {
      const encoded = profileJson(profile);
      json = typeof encoded === 'string' ? encoded : encoded.toString('utf8');
    } catch (error) {
      throw new InvalidProfileError(`Profile ${profile.token} cannot be serialised to JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
    const stored: StoredProfile = { ...toSummary(profile), json };
    this.#claims.delete(profile.token);
    this.#profiles.set(stored.token, stored);
    this.#byTime.insert(stored);
    this.#bytes += stored.json.length;
    // The age bound first, as FileStorage's compactions apply it: an expired profile (one of the batch,
    // or written before the clock moved on) goes before the count bound takes one it keeps.
    this.#dropExpired();
    // A bound never empties the storage: the last profile stays, even alone over maxBytes.
    while (this.#byTime.size > 1 && (this.#profiles.size > this.bounds.maxProfiles || this.#bytes > this.bounds.maxBytes)) {
      const newest = this.#byTime.newest() as StoredProfile;
      // Dated ahead of the clock (see FUTURE_SLACK_MS): before the oldest. Once within the count bound,
      // alone over the whole byte bound while others fit: it goes rather than all those before it (the
      // count bound first, then the byte bound, as FileStorage's compactions apply them).
      const overCount = this.#profiles.size > this.bounds.maxProfiles;
      if (newest.time > this.#now() + FUTURE_SLACK_MS || (!overCount && newest.json.length > this.bounds.maxBytes && this.#someFits())) this.#forget(this.#byTime.pop());
      else this.#dropOldest();
    }
  }

  /** Whether a stored profile is within maxBytes alone (looked for only once the newest is not). */
  #someFits(): boolean {
    for (const stored of this.#byTime.oldestFirst()) if (stored.json.length <= this.bounds.maxBytes) return true;
    return false;
  }

  #dropExpired(): void {
    const cutoff = this.#now() - this.bounds.maxAge;
    for (let oldest = this.#byTime.oldest(); oldest !== undefined && oldest.time < cutoff; oldest = this.#byTime.oldest()) {
      this.#dropOldest();
    }
    for (const [token, time] of this.#discarded) {
      if (time >= cutoff) break;
      this.#discarded.delete(token);
    }
  }

  #dropOldest(): void {
    this.#forget(this.#byTime.shift());
  }

  #forget(stored: StoredProfile | undefined): void {
    if (stored === undefined) return;
    this.#profiles.delete(stored.token);
    this.#bytes -= stored.json.length;
  }
}
