// What a profiler storage must do, as a plain list of profiles: the model the model-based tests
// (storage-model.test.ts) run random sequences of operations against. Written from the README and
// the ProfilerStorage interface, not from the storages' code: where they disagree, one is wrong.
import type { Profile, ProfileSummary } from '../../../../lib/profiler/profile.js';
import type { SearchCriteria, StorageBounds } from '../../../../lib/profiler/storage/profiler-storage.js';

/** A profile the model holds: what was written, and what the bounds and the search order need. */
export interface ModelEntry {
  readonly token: string;
  /** The profile as a read gives it back: its JSON, parsed. */
  readonly profile: Profile;
  readonly summary: ProfileSummary;
  readonly time: number;
  /** Its place in the order of all writes: of two profiles of one time, the later written is the newer. */
  readonly seq: number;
  /** Its size as the byte bound counts it. */
  readonly bytes: number;
}

/** How a storage applies its bounds. */
export interface RetentionPolicy {
  readonly bounds: StorageBounds;
  /** Whether the search lists, and matches, a long URL by its first part only (FileStorage's index; README). */
  readonly cutsLongUrls: boolean;
  /**
   * The share of a count or byte bound a storage trims to once over it: 1 for MemoryStorage, which
   * applies the bounds at each write; 0.75 for FileStorage, whose compactions trim in steps (README).
   */
  readonly trimTo: number;
  /**
   * True when the bounds are applied at each operation (MemoryStorage); false when a compaction
   * applies them in the background, at a time the caller does not know (FileStorage): any state
   * before or after such a compaction is then possible, and an explicit compact() settles it.
   */
  readonly eager: boolean;
}

/** A profile dated further than this ahead of the clock was written before the clock was set back (README). */
const FUTURE_SLACK_MS = 60_000;
/** What a search lists when its criteria name no limit (README: "10 by default"). */
const DEFAULT_LIMIT = 10;

/** Oldest first: by time, and of one time, the first written first. */
function older(a: ModelEntry, b: ModelEntry): number {
  return a.time - b.time || a.seq - b.seq;
}

/**
 * What the bounds keep of `entries` at `now`: those older than maxAge go; over the count or byte
 * bound, the storage is trimmed to `trimTo` of it, profiles dated more than a minute ahead of the
 * clock first (furthest ahead first), then the oldest; over the byte bound, a newest profile alone
 * larger than the whole bound goes rather than all those before it; the bounds never empty it.
 */
export function retain(entries: readonly ModelEntry[], policy: RetentionPolicy, now: number): ModelEntry[] {
  const { maxAge, maxProfiles, maxBytes } = policy.bounds;
  const ahead = (entry: ModelEntry): boolean => entry.time > now + FUTURE_SLACK_MS;
  const kept = entries.filter((entry) => now - entry.time <= maxAge).sort(older);
  if (kept.length > maxProfiles) {
    const target = Math.max(1, Math.floor(maxProfiles * policy.trimTo));
    while (kept.length > target) {
      if (ahead(kept[kept.length - 1]!)) kept.pop();
      else kept.shift();
    }
  }
  let bytes = kept.reduce((sum, entry) => sum + entry.bytes, 0);
  if (bytes > maxBytes) {
    const target = maxBytes * policy.trimTo;
    while (bytes > target && kept.length > 1) {
      const newest = kept[kept.length - 1]!;
      const aloneTooLarge = newest.bytes > maxBytes && kept.some((entry) => entry.bytes <= maxBytes);
      const gone = ahead(newest) || aloneTooLarge ? kept.pop()! : kept.shift()!;
      bytes -= gone.bytes;
    }
  }
  return kept;
}

/** A url search's text as a URL may hold it (README): its non-ASCII characters and spaces UTF-8 percent-encoded; null when it cannot be (a lone surrogate). */
function encodedForUrl(text: string): string | null {
  let out = '';
  for (const char of text) {
    if (char === ' ' || char.codePointAt(0)! > 0x7e) {
      if (char.length === 1 && char.charCodeAt(0) >= 0xd800 && char.charCodeAt(0) <= 0xdfff) return null;
      for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    } else {
      out += char;
    }
  }
  return out;
}

/** Whether `url` holds `pattern` (an encoded search text) at `at`: an escape's hex in either case, `%20` also as `+`. */
function holdsAt(url: string, pattern: string, at: number): boolean {
  let u = at;
  for (let p = 0; p < pattern.length; ) {
    const escape = /^%[0-9A-Fa-f]{2}/.exec(pattern.slice(p, p + 3));
    if (escape !== null) {
      if (pattern.slice(p, p + 3).toUpperCase() === '%20' && url[u] === '+') {
        u += 1;
      } else if (url.slice(u, u + 3).toUpperCase() !== pattern.slice(p, p + 3).toUpperCase()) {
        return false;
      } else {
        u += 3;
      }
      p += 3;
      continue;
    }
    if (url[u] !== pattern[p]) return false;
    u++;
    p++;
  }
  return true;
}

/** README: `url` is a substring of the URL, as the URL holds it or as it reads (encoded as browsers send it). */
export function urlMatches(url: string, text: string): boolean {
  if (url.includes(text)) return true;
  const encoded = encodedForUrl(text);
  if (encoded === null) return false;
  for (let at = 0; at <= url.length; at++) if (holdsAt(url, encoded, at)) return true;
  return false;
}

/**
 * The search of `entries` (README, ProfilerStorage.find): every filter ANDed, empty ones ignored,
 * newest first, `limit` of them. `listed` gives the summary a storage lists for an entry.
 */
export function search(entries: readonly ModelEntry[], criteria: SearchCriteria, listed: (entry: ModelEntry) => ProfileSummary = (entry) => entry.summary): ProfileSummary[] {
  const { ip, method, status, url, start, end, limit } = criteria;
  const matching = entries.filter(
    (entry) => {
      const summary = listed(entry);
      return (

      (!ip || summary.ip === ip) &&
      (!method || summary.method.toUpperCase() === method.toUpperCase()) &&
      (status === undefined || summary.status === status) &&
      (!url || urlMatches(summary.url, url)) &&
      (start === undefined || summary.time >= start) &&
      (end === undefined || summary.time <= end)
      );
    },
  );
  const newestFirst = matching.sort(older).reverse();
  return newestFirst.slice(0, limit === undefined ? DEFAULT_LIMIT : Math.floor(limit)).map(listed);
}

/** Past this many UTF-8 bytes a URL may be cut in FileStorage's index (README: a line is at most 2 KiB, about 1,500 bytes of URL). */
const LONG_URL_BYTES = 1_400;
/** What is kept of a long URL at least. */
const KEPT_URL_BYTES = 1_000;

/** What the model is unsure of is narrowed by what the storage answers; nothing left means they disagree. */
export class ModelDisagreement extends Error {}

/**
 * One storage directory (or one MemoryStorage) as the model sees it: the profiles it may hold
 * now. With eager bounds that is one list; with background compactions, each list that some
 * timing of them could have left, narrowed by every answer the storage gives.
 */
export class StorageModel {
  readonly policy: RetentionPolicy;
  /** The clock the storages are given. */
  now: number;
  /** Each possible content, oldest first. */
  #states: ModelEntry[][] = [[]];
  #seq = 0;
  /** The first part of a long URL the storage lists, by entry, once seen: every instance and restart must list the same. */
  readonly #listedUrls = new Map<number, string>();

  constructor(policy: RetentionPolicy, now: number) {
    this.policy = policy;
    this.now = now;
  }

  get states(): readonly (readonly ModelEntry[])[] {
    return this.#states;
  }

  /** Every token some possible content holds. */
  tokens(): string[] {
    return [...new Set(this.#states.flatMap((state) => state.map((entry) => entry.token)))].sort();
  }

  /** The entry of `token` in one possible content, for making a profile that refers to it. */
  entryOf(token: string): ModelEntry | undefined {
    for (const state of this.#states) for (const entry of state) if (entry.token === token) return entry;
    return undefined;
  }

  /** A new entry, numbered in write order. */
  entry(profile: Profile, bytes: number): ModelEntry {
    const stored = JSON.parse(JSON.stringify(profile)) as Profile;
    const { token, parent, ip, method, url, time, status } = stored;
    return { token, profile: stored, summary: { token, parent, ip, method, url, time, status }, time, seq: ++this.#seq, bytes };
  }

  /** Whether `token` may be held (in some possible content), and must be (in all). */
  holds(token: string): { may: boolean; must: boolean } {
    const found = this.#states.map((state) => state.some((entry) => entry.token === token));
    return { may: found.some(Boolean), must: found.every(Boolean) };
  }

  /** Keeps the possible contents for which `agrees` holds; throws when none is left. */
  narrow(agrees: (state: readonly ModelEntry[]) => boolean, observed: string): void {
    const left = this.#states.filter(agrees);
    if (left.length === 0) {
      const shown = this.#states.slice(0, 4).map((state) => `[${state.map((entry) => `${entry.token}@${entry.time - this.now}${this.#expired(entry) ? '(expired)' : ''}/${entry.bytes}B`).join(' ')}]`);
      throw new ModelDisagreement(`${observed}; the model had ${this.#states.length} possible content(s): ${shown.join(' or ')}`);
    }
    this.#states = left;
  }

  /** A profile stored (its token free in the contents left). */
  add(entry: ModelEntry): void {
    this.#states = this.#states.map((state) => [...state, entry].sort(older));
    this.settle();
  }

  /** Applies the bounds as the storage may have by now: at once (eager), or maybe (a background compaction). */
  settle(): void {
    const retained = this.#states.map((state) => retain(state, this.policy, this.now));
    this.#states = dedupe(this.policy.eager ? retained : [...this.#states, ...retained]);
  }

  /** A compaction has run now: the bounds are applied. */
  compacted(): void {
    this.#states = dedupe(this.#states.map((state) => retain(state, this.policy, this.now)));
  }

  purged(): void {
    this.#states = [[]];
  }

  /** What a search may answer in a content: expired profiles are never listed, compacted or not. */
  find(state: readonly ModelEntry[], criteria: SearchCriteria): ProfileSummary[] {
    return search(state.filter((entry) => !this.#expired(entry)), criteria, (entry) => {
      const url = this.#listedUrls.get(entry.seq);
      return url === undefined ? entry.summary : { ...entry.summary, url };
    });
  }

  /** Whether a search may list a long URL whose listed part is not known yet (see learnUrls). */
  unknownUrls(): boolean {
    return this.policy.cutsLongUrls && this.#states.some((state) => state.some((entry) => this.#mayCut(entry) && !this.#listedUrls.has(entry.seq) && !this.#expired(entry)));
  }

  /** Takes what a search listed of long URLs: the start of the URL, at least KEPT_URL_BYTES of it, and from then on always the same. */
  learnUrls(found: readonly ProfileSummary[]): void {
    for (const summary of found) {
      for (const state of this.#states) {
        const entry = state.find((each) => each.token === summary.token && each.time === summary.time);
        if (entry === undefined || !this.#mayCut(entry) || this.#listedUrls.has(entry.seq)) continue;
        const url = entry.summary.url;
        if (!url.startsWith(summary.url) || Buffer.byteLength(summary.url) < KEPT_URL_BYTES) {
          throw new ModelDisagreement(`${summary.token}'s URL of ${Buffer.byteLength(url)} bytes is listed as ${JSON.stringify(summary.url.slice(0, 60))}… (${Buffer.byteLength(summary.url)} bytes), not its first ${KEPT_URL_BYTES} bytes or more`);
        }
        this.#listedUrls.set(entry.seq, summary.url);
      }
    }
  }

  #mayCut(entry: ModelEntry): boolean {
    return this.policy.cutsLongUrls && Buffer.byteLength(entry.summary.url) > LONG_URL_BYTES;
  }

  #expired(entry: ModelEntry): boolean {
    return this.now - entry.time > this.policy.bounds.maxAge;
  }
}

function dedupe(states: ModelEntry[][]): ModelEntry[][] {
  const seen = new Map<string, ModelEntry[]>();
  for (const state of states) {
    const key = state.map((entry) => entry.seq).join(',');
    if (!seen.has(key)) seen.set(key, state);
  }
  return [...seen.values()];
}
