// Model-based tests of the profiler storages: random sequences of writes, reads, searches, clock
// moves, compactions, purges, restarts and second instances on one directory, each answer checked
// against StorageModel (storage-model.ts), a plain list of what the README says a storage holds.
// fast-check shrinks a failing sequence to a short one and prints it with the seed that replays it
// (FC_SEED=<n>; FC_RUNS=<n> runs more).
import { join } from 'node:path';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Profile, StorableProfile } from '../../../../lib/profiler/profile.js';
import {
  FileStorage,
  InvalidProfileError,
  MemoryStorage,
  ProfileBatchError,
  ProfileExistsError,
  ThreadedFileStorage,
  type ProfilerStorage,
  type SearchCriteria,
  type StorageBounds,
} from '../../../../lib/profiler/storage/index.js';
import { propertyParameters } from '../../../arbitraries.js';
import { makeTempDir } from './fixtures.js';
import { ModelDisagreement, StorageModel, type ModelEntry } from './storage-model.js';

const test = suite('profiler storages against their model');

type Kind = 'memory' | 'file' | 'threaded';
type Storage = ProfilerStorage & { compact?(): Promise<unknown>; leasedPrefixes?: string[] };

/** A token held for a write by one instance (drawn or claimed), not yet written nor released. */
interface Pending {
  instance: number;
  /** Claimed with claim() (a placeholder file, outside the instance's leases): a purge removes those. */
  claimed: boolean;
  /** A purge ran since: another instance may claim or write it now. */
  purged: boolean;
}

interface Model {
  readonly kind: Kind;
  readonly storage: StorageModel;
  readonly pending: Map<string, Pending>;
  /** Every token written, in order (dropped or not): candidates for reads and refused rewrites. */
  readonly written: string[];
  instances: number;
  lastTime: number;
  /** What each command resolved its choices to, for the failure report. */
  readonly log: string[];
}

interface Real {
  readonly kind: Kind;
  readonly dir: string;
  readonly instances: Storage[];
  readonly clock: { now: number };
  /** What the storages reported to onError: none is expected. */
  readonly errors: Error[];
  open(): Storage;
}

type Command = fc.AsyncCommand<Model, Real>;

// ---------------------------------------------------------------- what commands are made of

const IPS = ['127.0.0.1', '::1', '10.0.0.2', '192.168.1.10'];
const METHODS = ['GET', 'POST', 'HEAD', 'DELETE', 'PATCH'];
const STATUSES = [200, 201, 301, 404, 500];
/** URLs as requests bring them (percent-encoded, either case of hex, `+` in a query), as embedders may pass them (raw non-ASCII), and very long ones. */
const URLS = [
  'http://127.0.0.1:8000/',
  'http://127.0.0.1:8000/books/1',
  'http://127.0.0.1:8000/books/12?page=2',
  'http://127.0.0.1:8000/users/%C3%A9l%C3%A8ve',
  'http://127.0.0.1:8000/users/%c3%a9l%c3%a8ve?q=caf%C3%A9+cr%C3%A8me',
  'https://localhost:8443/search?q=caf%C3%A9%20cr%C3%A8me&x=100%25',
  'http://127.0.0.1:8000/%E6%97%A5%E6%9C%AC/%F0%9F%98%80',
  'http://127.0.0.1:8000/raw/élève/日本/😀',
  'http://127.0.0.1:8000/Books/CASE',
  `http://127.0.0.1:8000/long/${'a'.repeat(700)}/${'%C3%A9'.repeat(200)}/end-of-long`,
  `http://127.0.0.1:8000/longer/${'b/'.repeat(1_500)}tail-of-longer?q=${'é'.repeat(300)}`,
];
/** Texts a user types in the search form's URL field, beside slices of the URLs written. */
const URL_TEXTS = ['élève', '/users/élève', 'café crème', '%c3%a9', '%C3%A9L', 'BOOKS', 'books', '日本', '😀', '+', '%20', 'tail-of-longer', 'end-of-long', '\ud800', 'é'];

const tokenKind = fc.constantFrom('pendingHere', 'pendingHere', 'pendingHere', 'pendingHere', 'written', 'pendingElsewhere', 'malformed', 'repeat');
type TokenKind = 'pendingHere' | 'written' | 'pendingElsewhere' | 'malformed' | 'repeat';

const timeKind = fc.constantFrom('now', 'now', 'same', 'same', 'past', 'future', 'expired', 'edge');
type TimeKind = 'now' | 'same' | 'past' | 'future' | 'expired' | 'edge';

interface ProfileSpec {
  token: TokenKind;
  pick: number;
  /** A sub-request of the batch's first profile (its parent lists it among its children). */
  child: boolean;
  time: TimeKind;
  offset: number;
  ip: number;
  method: number;
  url: number;
  status: number;
  /** Bytes of log text, to vary the sizes the byte bound counts (sometimes over the whole bound). */
  padding: number;
  unicode: boolean;
  /** How it is handed over: a Profile, or encoded (its JSON a string, or UTF-8 bytes). */
  form: 'object' | 'string' | 'buffer';
}

const profileSpec: fc.Arbitrary<ProfileSpec> = fc.record({
  token: tokenKind as fc.Arbitrary<TokenKind>,
  pick: fc.nat(),
  child: fc.boolean(),
  time: timeKind as fc.Arbitrary<TimeKind>,
  offset: fc.nat({ max: 1_000 }),
  ip: fc.nat(),
  method: fc.nat(),
  url: fc.nat(),
  status: fc.nat(),
  padding: fc.oneof({ weight: 6, arbitrary: fc.nat({ max: 2_500 }) }, { weight: 1, arbitrary: fc.integer({ min: 12_000, max: 30_000 }) }),
  unicode: fc.boolean(),
  form: fc.constantFrom('object' as const, 'string' as const, 'buffer' as const),
});

interface CriteriaSpec {
  ip?: number;
  method?: { pick: number; lower: boolean };
  status?: number;
  url?: { kind: 'slice'; pick: number; from: number; length: number } | { kind: 'text'; pick: number };
  start?: number;
  end?: number;
  limit?: number;
}

const criteriaSpec: fc.Arbitrary<CriteriaSpec> = fc.record(
  {
    ip: fc.nat(),
    method: fc.record({ pick: fc.nat(), lower: fc.boolean() }),
    status: fc.nat(),
    url: fc.oneof(fc.record({ kind: fc.constant('slice' as const), pick: fc.nat(), from: fc.nat(), length: fc.integer({ min: 1, max: 30 }) }), fc.record({ kind: fc.constant('text' as const), pick: fc.nat() })),
    start: fc.integer({ min: -70_000, max: 5_000 }),
    end: fc.integer({ min: -70_000, max: 5_000 }),
    limit: fc.oneof(fc.constantFrom(0, 1, 2, 1_000), fc.nat({ max: 12 })),
  },
  { requiredKeys: [] },
);

// ---------------------------------------------------------------- helpers

const MAX_AGE = 60_000;
const THREADED_MAX_AGE = 60 * 60_000;

function maxAgeOf(model: Model): number {
  return model.storage.policy.bounds.maxAge;
}

/** The clock the model and the storages read: the injected one, or the real one for the threaded storage (which cannot be given one). */
function syncClock(model: Model, real: Real): void {
  if (model.kind === 'threaded') model.storage.now = Date.now();
  else real.clock.now = model.storage.now;
}

/** A MemoryStorage applies its age bound when a call that looks at its profiles starts (by the clock then). */
function operating(model: Model): void {
  if (model.storage.policy.eager) model.storage.settle();
}

function pendingOf(model: Model, instance: number): string[] {
  return [...model.pending].filter(([, pending]) => pending.instance === instance).map(([token]) => token);
}

function pendingElsewhere(model: Model, instance: number): string[] {
  return [...model.pending].filter(([, pending]) => pending.instance !== instance).map(([token]) => token);
}

function pickFrom<T>(items: readonly T[], pick: number): T | undefined {
  return items.length === 0 ? undefined : items[pick % items.length];
}

/** A profile's size as the byte bound counts it: the UTF-8 bytes of its JSON record (FileStorage), the length of its JSON string (MemoryStorage, as its options say). */
function bytesOf(model: Model, profile: Profile): number {
  const json = JSON.stringify(profile);
  return model.kind === 'memory' ? json.length : Buffer.byteLength(json);
}

function timeFor(model: Model, spec: ProfileSpec): number {
  const now = model.storage.now;
  const maxAge = maxAgeOf(model);
  switch (spec.time) {
    case 'now':
      return now + (spec.offset % 5);
    case 'same':
      return model.lastTime;
    case 'past':
      return now - Math.floor((maxAge * (spec.offset % 900)) / 1_000);
    case 'future':
      return now + 2 * 60_000 + spec.offset * 100;
    case 'expired':
      return now - maxAge - 1 - spec.offset * (model.kind === 'threaded' ? 1_000 : 1);
    case 'edge':
      // Exactly maxAge old: still kept. Not for the threaded storage, whose clock runs on.
      return model.kind === 'threaded' ? now - maxAge / 2 : now - maxAge;
  }
}

function makeProfile(model: Model, spec: ProfileSpec, token: string, time: number): Profile {
  const text = spec.unicode ? 'Élève à 日本 😀 ' : 'Matched route books ';
  const logs: { message: string }[] = [];
  for (let size = 0; size < spec.padding; size += text.length * 4 + 20) logs.push({ message: text.repeat(4) });
  return {
    token,
    parent: null,
    children: [],
    ip: IPS[spec.ip % IPS.length]!,
    method: METHODS[spec.method % METHODS.length]!,
    url: URLS[spec.url % URLS.length]!,
    time,
    status: STATUSES[spec.status % STATUSES.length]!,
    collectors: { request: { method: METHODS[spec.method % METHODS.length], query: { q: spec.unicode ? 'é' : 'e' } }, logger: { logs, counts: { INFO: logs.length } } },
  };
}

function storable(profile: Profile, form: ProfileSpec['form']): StorableProfile {
  if (form === 'object') return profile;
  const { token, parent, ip, method, url, time, status } = profile;
  const json = JSON.stringify(profile);
  return { token, parent, ip, method, url, time, status, json: form === 'string' ? json : Buffer.from(json) };
}

/** The errors a rejected writeMany carries, one per refused profile. */
function refusals(error: unknown): Error[] {
  if (error instanceof ProfileBatchError) return [...error.errors];
  if (error instanceof ProfileExistsError || error instanceof InvalidProfileError) return [error];
  throw error;
}

function describe(criteria: SearchCriteria): string {
  return JSON.stringify(criteria, (key, value: unknown) => (key === 'url' && typeof value === 'string' && value.length > 40 ? `${value.slice(0, 40)}…` : value));
}

function shortToken(token: string): string {
  return token.length > 12 ? `${token.slice(0, 12)}…` : token;
}

/** The instance a read of `token` goes to: another instance leasing its prefix would wait a second for it (README), which only slows the run. */
function readerFor(real: Real, instance: number, token: string): number {
  const prefix = token.slice(0, 2);
  if (real.instances[instance]?.leasedPrefixes?.includes(prefix) !== false) return instance;
  const leaser = real.instances.findIndex((storage) => storage.leasedPrefixes?.includes(prefix));
  return leaser === -1 ? instance : leaser;
}

// ---------------------------------------------------------------- commands

/** Draws tokens as the profiler does: each fresh, none stored, none held by any instance. */
class Draw implements Command {
  constructor(readonly instance: number, readonly count: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const i = this.instance % model.instances;
    const storage = real.instances[i]!;
    operating(model);
    const tokens = await storage.drawTokens!(6, this.count);
    model.log.push(`draw@${i} -> ${tokens.join(',')}`);
    assert.ok(tokens.length >= 1 && tokens.length <= this.count, `drew ${tokens.length} of ${this.count}`);
    assert.is(new Set(tokens).size, tokens.length, 'a token drawn twice in one call');
    for (const token of tokens) {
      assert.ok(/^[0-9a-f]{6}$/.test(token), token);
      assert.not.ok(model.pending.has(token), `drew ${token}, held by instance ${model.pending.get(token)?.instance}`);
      model.storage.narrow((state) => !state.some((entry) => entry.token === token), `drew ${token}, which is stored`);
      model.pending.set(token, { instance: i, claimed: false, purged: false });
    }
  }
  toString = () => `draw(${this.instance}, ${this.count})`;
}

/** claim(): never a stored token nor one another instance holds; a fresh one always in a MemoryStorage (a FileStorage refuses those in another process's leased prefix). */
class Claim implements Command {
  constructor(readonly instance: number, readonly kind: 'fresh' | 'stored' | 'pendingHere' | 'pendingElsewhere' | 'malformed', readonly fresh: string, readonly pick: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const i = this.instance % model.instances;
    const token = this.kind === 'fresh' ? this.fresh : this.kind === 'malformed' ? 'ABCDEF' : this.kind === 'stored' ? pickFrom(model.storage.tokens(), this.pick) : pickFrom(this.kind === 'pendingHere' ? pendingOf(model, i) : pendingElsewhere(model, i), this.pick);
    if (token === undefined) return;
    if (this.kind !== 'malformed') operating(model);
    const claimed = await real.instances[i]!.claim(token);
    model.log.push(`claim@${i} ${token} -> ${claimed}`);
    if (this.kind === 'malformed') return assert.is(claimed, false, 'a malformed token claimed');
    const holder = model.pending.get(token);
    if (claimed) {
      assert.ok(holder === undefined || (holder.instance !== i && holder.purged && holder.claimed), `claimed ${token}, held by instance ${holder?.instance}`);
      model.storage.narrow((state) => !state.some((entry) => entry.token === token), `claimed ${token}, which is stored`);
      // Claimed again after a purge removed the first claim (README): both instances may write it now, the first to do so wins.
      model.pending.set(token, { instance: i, claimed: true, purged: holder !== undefined });
      return;
    }
    if (holder === undefined && model.kind === 'memory') model.storage.narrow((state) => state.some((entry) => entry.token === token), `claim of ${token}, neither stored nor held, refused`);
  }
  toString = () => `claim(${this.instance}, ${this.kind}${this.kind === 'fresh' ? ` ${this.fresh}` : ''}, ${this.pick})`;
}

class Release implements Command {
  constructor(readonly instance: number, readonly pick: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const i = this.instance % model.instances;
    const token = pickFrom(pendingOf(model, i), this.pick);
    if (token === undefined) return;
    await real.instances[i]!.release(token);
    model.pending.delete(token);
    model.log.push(`release@${i} ${token}`);
  }
  toString = () => `release(${this.instance}, ${this.pick})`;
}

/** writeMany(): each profile under a token held here is stored unless the token holds a profile; never an overwrite; the refusals reject afterwards. */
class Write implements Command {
  constructor(readonly instance: number, readonly specs: ProfileSpec[]) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const i = this.instance % model.instances;
    const batch: { spec: ProfileSpec; token: string; profile: Profile; expect: 'invalid' | 'refused' | 'either' | 'repeat' }[] = [];
    const used = new Set<string>();
    for (const spec of this.specs) {
      let token: string | undefined;
      let expect: (typeof batch)[number]['expect'] = 'either';
      switch (spec.token) {
        case 'pendingHere': {
          token = pickFrom(pendingOf(model, i).filter((each) => !used.has(each)), spec.pick);
          if (token !== undefined) break;
          // None held: drawn now, as the profiler draws a request's token before it saves the profile.
          // Left to Draw commands alone, a run stored under one profile on average, and never reached a bound.
          operating(model);
          [token] = (await real.instances[i]!.drawTokens!(6, 1)) as [string];
          model.log.push(`draw@${i} -> ${token}`);
          assert.not.ok(model.pending.has(token), `drew ${token}, held by instance ${model.pending.get(token)?.instance}`);
          model.storage.narrow((state) => !state.some((entry) => entry.token === token), `drew ${token}, which is stored`);
          model.pending.set(token, { instance: i, claimed: false, purged: false });
          break;
        }
        case 'written':
          token = pickFrom(model.written.filter((each) => !used.has(each) && !model.pending.has(each)), spec.pick);
          break;
        case 'pendingElsewhere': {
          token = pickFrom(pendingElsewhere(model, i).filter((each) => !used.has(each)), spec.pick);
          const holder = token === undefined ? undefined : model.pending.get(token);
          // Another instance holds it: refused, unless a purge removed its claim (README: a purge removes every claim).
          if (holder !== undefined && !(holder.purged && holder.claimed)) expect = 'refused';
          break;
        }
        case 'malformed':
          token = spec.pick % 2 === 0 ? 'ABCDEF' : '../../etc';
          expect = 'invalid';
          break;
        case 'repeat':
          token = batch[0]?.token;
          expect = 'repeat';
          break;
      }
      if (token === undefined || (expect === 'repeat' && batch[0]?.expect === 'invalid')) continue;
      used.add(token);
      const time = timeFor(model, spec);
      if (expect !== 'invalid') model.lastTime = time;
      const profile = makeProfile(model, spec, token, time);
      if (spec.child && batch.length > 0 && batch[0]!.expect !== 'invalid') {
        profile.parent = batch[0]!.token;
        batch[0]!.profile.children.push(token);
      }
      batch.push({ spec, token, profile, expect });
    }
    if (batch.length === 0) return;
    const byToken = new Map<string, Error[]>();
    let invalid = 0;
    operating(model);
    try {
      await real.instances[i]!.writeMany(batch.map(({ spec, profile }) => storable(profile, spec.form)));
    } catch (error) {
      for (const refusal of refusals(error)) {
        if (refusal instanceof InvalidProfileError) invalid++;
        else byToken.set((refusal as ProfileExistsError).token, [...(byToken.get((refusal as ProfileExistsError).token) ?? []), refusal]);
      }
    }
    model.log.push(`write@${i} ${batch.map(({ token, profile, expect }) => `${shortToken(token)}@${profile.time - model.storage.now}${profile.parent ? `<${profile.parent}` : ''}:${expect}:${bytesOf(model, profile)}B`).join(' ')} -> refused ${[...byToken.keys()].join(',') || 'none'}`);
    assert.is(invalid, batch.filter(({ expect }) => expect === 'invalid').length, 'InvalidProfileErrors');
    // One profile per token at most is stored (the first of the batch); the others are refused.
    const seen = new Set<string>();
    for (const { spec, token, profile, expect } of batch) {
      if (expect === 'invalid') continue;
      const first = !seen.has(token);
      seen.add(token);
      model.pending.delete(token);
      if (!first) continue;
      const count = batch.filter((each) => each.token === token).length;
      const refused = byToken.get(token)?.length ?? 0;
      assert.ok(refused === count || refused === count - 1, `${token}: ${refused} refusals of ${count} profiles`);
      const stored = refused < count;
      if (expect === 'refused') assert.not.ok(stored, `stored ${token}, which another instance holds`);
      if (stored) {
        model.storage.narrow((state) => !state.some((entry) => entry.token === token), `stored ${token} over a profile stored under it (an overwrite)`);
        model.storage.add(model.storage.entry(profile, bytesOf(model, profile)));
        model.written.push(token);
      } else if (spec.token === 'pendingHere' || (model.kind === 'memory' && expect !== 'refused')) {
        // Held here (drawn or claimed), or any token a MemoryStorage is given: refused only when stored.
        // (A FileStorage may refuse a token it does not hold that is not stored: another process may lease its prefix.)
        model.storage.narrow((state) => state.some((entry) => entry.token === token), `refused ${token}, which is not stored`);
      }
    }
    model.storage.settle();
  }
  toString = () => `write(${this.instance}, ${JSON.stringify(this.specs.map((spec) => `${spec.token}#${spec.pick}${spec.child ? ' child' : ''} ${spec.time}+${spec.offset} ip${spec.ip % IPS.length} m${spec.method % METHODS.length} u${spec.url % URLS.length} s${spec.status % STATUSES.length} ${spec.padding}${spec.unicode ? 'u' : ''} ${spec.form}`))})`;
}

/** read(): the profile as first written under the token, or null when it is not stored (malformed tokens too). */
class Read implements Command {
  constructor(readonly instance: number, readonly kind: 'written' | 'pending' | 'fresh' | 'malformed', readonly pick: number, readonly fresh: string) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const token =
      this.kind === 'written' ? pickFrom(model.written, this.pick) : this.kind === 'pending' ? pickFrom([...model.pending.keys()], this.pick) : this.kind === 'fresh' ? this.fresh : ['ABCDEF', '../x', '', 'abc', 'a'.repeat(33)][this.pick % 5]!;
    if (token === undefined) return;
    const i = readerFor(real, this.instance % model.instances, token);
    if (this.kind !== 'malformed') operating(model);
    const profile = await real.instances[i]!.read(token);
    model.log.push(`read@${i} ${shortToken(token)} -> ${profile === null ? 'null' : `t${profile.time - model.storage.now}`}`);
    if (profile === null) {
      model.storage.narrow((state) => !state.some((entry) => entry.token === token), `read(${token}) null, but it is stored`);
    } else {
      const json = JSON.stringify(profile);
      model.storage.narrow((state) => state.some((entry) => entry.token === token && JSON.stringify(entry.profile) === json), `read(${token}) gave a profile the model does not hold under it (time ${profile.time - model.storage.now}, url ${profile.url.slice(0, 60)})`);
    }
  }
  toString = () => `read(${this.instance}, ${this.kind}, ${this.pick}${this.kind === 'fresh' ? ` ${this.fresh}` : ''})`;
}

/** find(): the stored profiles the criteria match, newest first (of one time, the last written first), at most limit (10 by default). */
class Find implements Command {
  constructor(readonly instance: number, readonly spec: CriteriaSpec) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const criteria = this.criteria(model);
    const i = this.instance % model.instances;
    if (model.storage.unknownUrls()) {
      // What the index keeps of a long URL is the storage's to choose (README: about its first 1,500 bytes): learnt here, then held to.
      const all = await real.instances[i]!.find({ limit: 1_000 });
      model.storage.learnUrls(all);
      const answer = JSON.stringify(all);
      model.storage.narrow((state) => JSON.stringify(model.storage.find(state, { limit: 1_000 })) === answer, `find@${i}({"limit":1000}) answered ${all.map((summary) => summary.token).join(' ') || 'nothing'}`);
    }
    operating(model);
    const found = await real.instances[i]!.find(criteria);
    model.log.push(`find@${i} ${describe(criteria)} -> ${found.map((summary) => summary.token).join(',') || 'none'}`);
    const answer = JSON.stringify(found);
    model.storage.narrow((state) => JSON.stringify(model.storage.find(state, criteria)) === answer, `find@${i}(${describe(criteria)}) answered ${found.map((summary) => `${summary.token}@${summary.time - model.storage.now}${summary.url.length > 200 ? `(url of ${summary.url.length})` : ''}`).join(' ') || 'nothing'}`);
  }
  criteria(model: Model): SearchCriteria {
    const { spec } = this;
    const criteria: SearchCriteria = {};
    if (spec.ip !== undefined) criteria.ip = IPS[spec.ip % IPS.length]!;
    if (spec.method !== undefined) {
      const method = METHODS[spec.method.pick % METHODS.length]!;
      criteria.method = spec.method.lower ? method.toLowerCase() : method;
    }
    if (spec.status !== undefined) criteria.status = STATUSES[spec.status % STATUSES.length]!;
    if (spec.url !== undefined) {
      if (spec.url.kind === 'text') criteria.url = URL_TEXTS[spec.url.pick % URL_TEXTS.length]!;
      else {
        const url = URLS[spec.url.pick % URLS.length]!;
        const from = spec.url.from % url.length;
        criteria.url = url.slice(from, from + spec.url.length);
      }
    }
    const scale = model.kind === 'threaded' ? THREADED_MAX_AGE / MAX_AGE : 1;
    if (spec.start !== undefined) criteria.start = model.storage.now + spec.start * scale;
    if (spec.end !== undefined) criteria.end = model.storage.now + spec.end * scale;
    if (spec.limit !== undefined) criteria.limit = spec.limit;
    return criteria;
  }
  toString = () => `find(${this.instance}, ${JSON.stringify(this.spec)})`;
}

/** Moves the injected clock: forward (profiles age, some past maxAge), or back (those written since are dated in its future). */
class Tick implements Command {
  constructor(readonly delta: number) {}
  check = (model: Readonly<Model>) => model.kind !== 'threaded';
  async run(model: Model): Promise<void> {
    model.storage.now += this.delta;
    model.log.push(`tick ${this.delta}`);
    // A MemoryStorage applies the age bound at its next operation, by the clock then (see clocked()).
    if (!model.storage.policy.eager) model.storage.settle();
  }
  toString = () => `tick(${this.delta})`;
}

/** compact(): the bounds are applied now. */
class Compact implements Command {
  constructor(readonly instance: number) {}
  check = (model: Readonly<Model>) => model.kind !== 'memory';
  async run(model: Model, real: Real): Promise<void> {
    const i = this.instance % model.instances;
    await real.instances[i]!.compact!();
    model.log.push(`compact@${i}`);
    model.storage.compacted();
  }
  toString = () => `compact(${this.instance})`;
}

/** purge(): nothing is stored afterwards, in any instance; claims are gone too. */
class Purge implements Command {
  constructor(readonly instance: number) {}
  check = () => true;
  async run(model: Model, real: Real): Promise<void> {
    const i = this.instance % model.instances;
    await real.instances[i]!.purge();
    model.log.push(`purge@${i}`);
    model.storage.purged();
    for (const pending of model.pending.values()) pending.purged = true;
  }
  toString = () => `purge(${this.instance})`;
}

/** close() and a new instance on the same directory (a restart): everything stored is still there. */
class Reopen implements Command {
  constructor(readonly instance: number) {}
  check = (model: Readonly<Model>) => model.kind !== 'memory';
  async run(model: Model, real: Real): Promise<void> {
    const i = this.instance % model.instances;
    await real.instances[i]!.close();
    real.instances[i] = real.open();
    for (const token of pendingOf(model, i)) model.pending.delete(token);
    model.log.push(`reopen@${i}`);
    model.storage.settle();
  }
  toString = () => `reopen(${this.instance})`;
}

/** A second (third) instance on the same directory, as another process sharing it. */
class OpenAnother implements Command {
  check = (model: Readonly<Model>) => model.kind === 'file' && model.instances < 3;
  async run(model: Model, real: Real): Promise<void> {
    real.instances.push(real.open());
    model.instances++;
    model.log.push(`open -> ${model.instances - 1}`);
  }
  toString = () => 'openAnother()';
}

/** Runs a command with the clocks in step, and the onError reports checked after it. */
function clocked(command: Command): Command {
  return {
    check: (model) => command.check(model),
    async run(model, real) {
      syncClock(model, real);
      // A background compaction may have run since the last command, or run during this one.
      if (!model.storage.policy.eager) model.storage.settle();
      try {
        await command.run(model, real);
      } catch (error) {
        if (error instanceof ModelDisagreement || error instanceof assert.Assertion) {
          error.message += `\n  after: ${model.log.slice(-25).join('\n    ')}`;
        }
        throw error;
      }
      assert.equal(real.errors.map((error) => error.message), [], 'errors reported to onError');
    },
    toString: () => command.toString(),
  };
}

const hexToken = fc.stringMatching(/^[0-9a-f]{6}$/);

function commandsFor(kind: Kind): fc.Arbitrary<Iterable<Command>> {
  const instance = fc.nat({ max: 2 });
  const arbitraries: fc.Arbitrary<Command>[] = [
    fc.tuple(instance, fc.integer({ min: 1, max: 4 })).map(([i, n]) => new Draw(i, n)),
    fc.tuple(instance, fc.constantFrom('fresh' as const, 'stored' as const, 'pendingHere' as const, 'pendingElsewhere' as const, 'malformed' as const), hexToken, fc.nat()).map(([i, k, t, p]) => new Claim(i, k, t, p)),
    fc.tuple(instance, fc.nat()).map(([i, p]) => new Release(i, p)),
    fc.tuple(instance, fc.array(profileSpec, { minLength: 1, maxLength: 4 })).map(([i, specs]) => new Write(i, specs)),
    fc.tuple(instance, fc.array(profileSpec, { minLength: 1, maxLength: 4 })).map(([i, specs]) => new Write(i, specs)),
    fc.tuple(instance, fc.constantFrom('written' as const, 'written' as const, 'pending' as const, 'fresh' as const, 'malformed' as const), fc.nat(), hexToken).map(([i, k, p, t]) => new Read(i, k, p, t)),
    fc.tuple(instance, criteriaSpec).map(([i, spec]) => new Find(i, spec)),
    fc.tuple(instance, criteriaSpec).map(([i, spec]) => new Find(i, spec)),
    fc.constantFrom(1, 500, MAX_AGE / 3, MAX_AGE, MAX_AGE + 1, -90_000).map((delta) => new Tick(delta)),
    instance.map((i) => new Compact(i)),
    fc.constant(null).map(() => new OpenAnother()),
    instance.map((i) => new Reopen(i)),
    instance.map((i) => new Purge(i)),
  ];
  return fc.commands(arbitraries.map((arbitrary) => arbitrary.map(clocked)), { maxCommands: kind === 'threaded' ? 20 : 40, size: 'max' });
}

// ---------------------------------------------------------------- runs

const env = { root: '', cleanup: async () => {} };
let runs = 0;

test.before(async () => {
  ({ dir: env.root, cleanup: env.cleanup } = await makeTempDir('storage-model'));
});
test.after(async () => {
  await env.cleanup();
});

const boundsArbitrary = (maxAge: number): fc.Arbitrary<StorageBounds> => fc.record({ maxAge: fc.constant(maxAge), maxProfiles: fc.integer({ min: 1, max: 8 }), maxBytes: fc.integer({ min: 2_000, max: 40_000 }) });

async function runModel(kind: Kind, bounds: StorageBounds, commands: Iterable<Command>): Promise<void> {
  const start = kind === 'threaded' ? Date.now() : 1_800_000_000_000;
  const policy = { bounds, trimTo: kind === 'memory' ? 1 : 0.75, eager: kind === 'memory', cutsLongUrls: kind !== 'memory' };
  const dir = join(env.root, `run-${++runs}`);
  const errors: Error[] = [];
  const clock = { now: start };
  const open = (): Storage => {
    const onError = (error: Error) => errors.push(error);
    if (kind === 'memory') return new MemoryStorage({ bounds, now: () => clock.now });
    // Small segments: roll-overs, and segments deleted once none of their profiles is kept.
    if (kind === 'file') return new FileStorage({ dir, bounds, now: () => clock.now, segmentBytes: 8 * 1024, onError });
    return new ThreadedFileStorage({ dir, bounds, segmentBytes: 8 * 1024, onError });
  };
  const real: Real = { kind, dir, instances: [], clock, errors, open };
  real.instances.push(open());
  const model: Model = { kind, storage: new StorageModel(policy, start), pending: new Map(), written: [], instances: 1, lastTime: start, log: [] };
  try {
    await fc.asyncModelRun(() => ({ model, real }), commands);
    // Last, everything the storage lists is what the model holds, from every instance.
    for (let i = 0; i < real.instances.length; i++) await clocked(new Find(i, { limit: 1_000 })).run(model, real);
  } finally {
    await Promise.all(real.instances.map((storage) => storage.close()));
  }
}

test('MemoryStorage agrees with the model over random sequences of operations', async () => {
  await fc.assert(
    fc.asyncProperty(boundsArbitrary(MAX_AGE), commandsFor('memory'), (bounds, commands) => runModel('memory', bounds, commands)),
    propertyParameters(300),
  );
});

test('FileStorage agrees with the model, with restarts and several instances on one directory', async () => {
  await fc.assert(
    fc.asyncProperty(boundsArbitrary(MAX_AGE), commandsFor('file'), (bounds, commands) => runModel('file', bounds, commands)),
    propertyParameters(120),
  );
});

test('ThreadedFileStorage agrees with the model', async () => {
  await fc.assert(
    fc.asyncProperty(boundsArbitrary(THREADED_MAX_AGE), commandsFor('threaded'), (bounds, commands) => runModel('threaded', bounds, commands)),
    propertyParameters(10),
  );
});

test.run();
