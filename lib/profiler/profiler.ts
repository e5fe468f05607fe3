import { performance } from 'node:perf_hooks';
import {
  KernelEvents,
  RequestSlot,
  RequestType,
  Response,
  TraceableEventDispatcher,
  isPromiseLike,
  type EventDispatcher,
  type ExceptionEvent,
  type Request,
  type RequestEvent,
  type RequestStack,
  type ResponseEvent,
  type TerminateEvent,
} from '../../kernel/index.js';
import { describeValue } from '../../kernel/describe-value.js';
import { safeUri } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { ByteSlab } from './byte-slab.js';
import { EventsCollector, LoggerCollector, RequestCollector, RouterCollector, TimeCollector } from './collectors/index.js';
import type { CollectContext, DataCollector } from './data-collector.js';
import { setOwn } from './json.js';
import { decodeProfile, encodeProfile, encodeProfileParts, isLeftOutData, type EncodedProfile, type Profile } from './profile.js';
import type { Redactor } from './redactor.js';
import { wasReported } from './storage/reported-errors.js';
import type { ProfilerStorage } from './storage/profiler-storage.js';
import { ProfileBatchError, ProfileExistsError, type ProfilerStorageError } from './storage/errors.js';
import { checkSaveOptions } from './save-options.js';
import { DEFAULT_TOKEN_LENGTH, TokenPool } from './token.js';

/** How the profiler is made. */
export interface ProfilerOptions {
  storage: ProfilerStorage;
  /** Collectors to start with; more with addCollector(). */
  collectors?: readonly DataCollector[];
  requestStack: RequestStack;
  redactor: Redactor;
  logger?: Logger | null;
  /** Token length in hex characters, a whole number from 6 to 32 (another is a TypeError); default 6. */
  tokenLength?: number;
  /** Requests never recorded: the profiler's own pages. */
  excluded?: (request: Request) => boolean;
  /** Whether this client may get the debug headers. */
  showDebug?: (request: Request) => boolean;
  /** The panel's path for a token (for `X-Debug-Token-Link`). */
  panelPath?: (token: string) => string;
  /** Most profiles waiting to be saved, a whole number from 1 (another is a TypeError); beyond it new ones are dropped (default 2,000). */
  maxQueuedProfiles?: number;
  /** Milliseconds profiles gather before a save starts, a whole number from 0 to 2147483647 (another is a TypeError; default SAVE_DELAY_MS); 0 starts it at once. */
  saveDelayMs?: number;
}

/** One request being recorded. */
interface Recording {
  token: string;
  request: Request;
  /** The main request it belongs to (itself for a main request). */
  main: Request;
  parentRequest: Request | undefined;
  requestType: 'main' | 'sub';
  startTime: number;
  startNow: number;
  endNow: number;
  error: unknown;
  /** Whether an error escaped (it may have been `undefined` or `null`). */
  failed: boolean;
  /** Set when the response is ready: from then on the request can be profiled. */
  response: Response | null;
  /** What the collectors with a `collect` step gathered on kernel.response (by collector index), or null when none has one. */
  collected: unknown[] | null;
  /** What a `collect` step threw on kernel.response: the profile is dropped at kernel.terminate, the request goes on. */
  collectError: { error: unknown } | null;
  /**
   * Set at its main request's kernel.terminate, when the profile is taken: what the kernel still
   * dispatches for the request (a controller that answered after the response timeout) changes nothing.
   */
  terminated: boolean;
}

/** At most one "profiles are being dropped" warning per this many milliseconds. */
const DROP_REPORT_INTERVAL = 10_000;

/** Most profiles waiting for their save by default (about 3 KB of JSON each); beyond it new ones are dropped. */
export const DEFAULT_MAX_QUEUED = 2000;

/** Most profiles handed to the storage in one write. */
export const SAVE_BATCH_SIZE = 1024;

/**
 * How long profiles gather before a save starts (when none is under way). A save costs a few
 * system calls whatever its size, so under load this makes batches of hundreds instead of one or
 * two; a profile not saved yet is still served from memory meanwhile.
 */
export const SAVE_DELAY_MS = 20;

/** Profiles kept in memory between the response and their save, for the toolbar. */
const UNSAVED_CAP = 200;

/** How often a failing storage is asked for a token while requests go on unrecorded. */
const CLAIM_RETRY_MS = 5_000;

/** Matches the profiler's own pages, which are never recorded. */
export const PROFILER_PATHS = /^\/(?:_profiler|_wdt)(?:\/|$)/;

/**
 * The built-in collectors' present(): each builds its answer from the profile's stored JSON, which JSON
 * can always write again, so present() does not write it on every page view to check, as it does an
 * embedder's. Known by the function, so a subclass's own present() is checked.
 */
const JSON_SAFE_PRESENTS: ReadonlySet<unknown> = new Set([RequestCollector, LoggerCollector, EventsCollector, TimeCollector, RouterCollector].map((collector) => collector.prototype.present));

/**
 * Records every request and sub-request in debug mode (Symfony's Profiler and
 * ProfilerListener): a token when the request starts, the debug headers when the response is
 * ready, and the collectors' data, serialised and queued for a batched save, once it is sent
 * (kernel.terminate).
 */
export class Profiler {
  readonly storage: ProfilerStorage;
  readonly #collectors: DataCollector[] = [];
  /** Indexes of the collectors with a `collect` step (run on kernel.response). */
  readonly #early: number[] = [];
  /** The collectors' names, in their order. */
  readonly #names: string[] = [];
  /** Whether an object of the collectors' data would list them in the collectors' order (see #encode). */
  #plainNames = true;
  /** Hides secrets before anything is stored. */
  readonly redactor: Redactor;
  readonly #requestStack: RequestStack;
  readonly #logger: Logger | null;
  readonly #pool: TokenPool;
  readonly #excluded: (request: Request) => boolean;
  readonly #showDebug: (request: Request) => boolean;
  readonly #panelPath: (token: string) => string;
  readonly #recordings = new RequestSlot<Recording>();
  /** Main request -> every recording made while handling it (itself first). */
  readonly #trees = new RequestSlot<Recording[]>();
  /** Main request -> the tokens of its tree, which its finalizer gives up (see #abandoned). */
  readonly #treeTokens = new RequestSlot<string[]>();
  /**
   * The tokens of a main request the garbage collector took before kernel.terminate (a
   * `kernel.handle()` never terminated): discarded, or each stayed claimed in the storage for
   * ever, about 50 bytes per request, until a file storage had no token prefix left to lease.
   */
  readonly #abandoned = new FinalizationRegistry<string[]>((tokens) => {
    // Run by the garbage collector: a storage that throws must not make it an uncaught exception.
    for (const token of tokens) {
      try {
        this.#discard(token);
      } catch {}
    }
  });
  /**
   * Profiles not saved yet, for the toolbar and panel meanwhile: the recording until the request
   * terminates (its profile is worked out if someone asks), then its encoded JSON (one flat
   * string: nothing for the garbage collector to trace).
   */
  readonly #unsaved = new Map<string, Recording | EncodedProfile>();
  #storageFailing = false;
  /** When (performance.now()) a token claim last failed. */
  #claimFailedAt = -Infinity;
  readonly #maxQueued: number;
  readonly #queue: EncodedProfile[] = [];
  /** Where profiles are serialised for a storage that copies their bytes (see ProfilerStorage.copiesProfileBytes); strings for others. */
  readonly #slab: ByteSlab | undefined;
  readonly #idle: Array<() => void> = [];
  #writing = false;
  #pumpTimer: NodeJS.Timeout | null = null;
  readonly #saveDelay: number;
  #dropped = 0;
  #recorded = 0;
  /** performance.now() of the last warning that profiles are dropped: by the wall clock, one set back an hour silenced them for that hour. */
  #lastDropReport = -Infinity;

  constructor(options: ProfilerOptions) {
    checkSaveOptions(options, 'new Profiler()\'s ');
    this.storage = options.storage;
    for (const collector of options.collectors ?? []) this.addCollector(collector);
    this.#requestStack = options.requestStack;
    this.#logger = options.logger ?? null;
    this.redactor = options.redactor;
    this.#slab = options.storage.copiesProfileBytes === true ? new ByteSlab() : undefined;
    this.#pool = new TokenPool(options.storage, { length: options.tokenLength ?? DEFAULT_TOKEN_LENGTH });
    this.#excluded = options.excluded ?? isProfilerPage;
    this.#showDebug = options.showDebug ?? (() => true);
    this.#panelPath = options.panelPath ?? ((token) => `/_profiler/${token}`);
    this.#maxQueued = options.maxQueuedProfiles ?? DEFAULT_MAX_QUEUED;
    this.#saveDelay = options.saveDelayMs ?? SAVE_DELAY_MS;
  }

  getSubscribedEvents() {
    return {
      [KernelEvents.REQUEST]: ['onKernelRequest', 1024] as const,
      [KernelEvents.EXCEPTION]: ['onKernelException', 0] as const,
      [KernelEvents.RESPONSE]: ['onKernelResponse', -100] as const,
      [KernelEvents.TERMINATE]: ['onKernelTerminate', -1024] as const,
    };
  }

  /**
   * Adds a collector; its data shows under `collectors[collector.name]`. One without a name (its panel is
   * `?panel=<name>`, which an empty one cannot open), with neither collect() nor lateCollect() (it would
   * record nothing, and its panel never show), or with one of them or present() neither a function nor
   * left out (`collect: null`) is a TypeError.
   */
  addCollector(collector: DataCollector): void {
    const name: unknown = collector?.name;
    if (typeof name !== 'string' || name === '') throw new TypeError(`A collector's name is a non-empty string (its panel is ?panel=<name>), not ${describeValue(name)}.`);
    // Called whenever they are not undefined: a `collect: null` would fail, and drop, every profile.
    for (const method of ['collect', 'lateCollect', 'present'] as const) {
      const value: unknown = collector[method];
      if (value !== undefined && typeof value !== 'function') throw new TypeError(`The ${method} of collector "${name}" is a function or left out, not ${describeValue(value)}.`);
    }
    if (collector.collect === undefined && collector.lateCollect === undefined) {
      throw new TypeError(`Collector "${name}" has neither collect() nor lateCollect(): it would record nothing, and its panel never show.`);
    }
    if (this.#collectors.some((existing) => existing.name === collector.name)) throw new Error(`A collector named "${collector.name}" is already registered.`);
    if (collector.collect !== undefined) this.#early.push(this.#collectors.length);
    this.#collectors.push(collector);
    this.#names.push(collector.name);
    // An array index is listed first by an object: those go through encodeProfile, so a profile lists them as its collectors object does.
    if (/^(?:0|[1-9]\d*)$/.test(collector.name)) this.#plainNames = false;
  }

  /** The collectors, in the order they run. */
  get collectors(): readonly DataCollector[] {
    return this.#collectors;
  }

  /** Resolves once the profiler has its first tokens ready (see TokenPool.ready): await it before serving. */
  ready(): Promise<void> {
    return this.#pool.ready();
  }

  /** The token a request is recorded under, once it has one. */
  tokenOf(request: Request): string | undefined {
    return this.#recordings.get(request)?.token;
  }

  /** A profile that is collected but not saved yet (the toolbar may ask before the save). */
  getUnsaved(token: string): Profile | undefined {
    const unsaved = this.#unsaved.get(token);
    if (unsaved === undefined) return undefined;
    return 'json' in unsaved ? decodeProfile(unsaved) : this.#provisionalProfile(unsaved);
  }

  /**
   * The profile as pages and tools see it: each collector's `present` applied to its data (on a
   * copy); with `only`, just those collectors' (the toolbar needs two, not the router's verdicts).
   * A collector whose `present` throws, or answers what JSON cannot write, is shown as stored, as is
   * data left out as too large (its note, see isLeftOutData), which `present` would take for none.
   */
  present(profile: Profile, only?: readonly string[]): Profile {
    const collectors: Record<string, unknown> = { ...profile.collectors };
    for (const collector of this.#collectors) {
      // Own keys only: a collector named `toString` or `constructor` has no data in a profile that holds none for it.
      if (collector.present === undefined || !Object.hasOwn(collectors, collector.name) || (only !== undefined && !only.includes(collector.name))) continue;
      if (isLeftOutData(collectors[collector.name])) continue;
      try {
        const shown = collector.present(profile.collectors[collector.name], profile);
        // The pages and the JSON endpoint write it as JSON: an answer JSON cannot write (a BigInt, a cycle)
        // or writes as nothing (undefined, a promise's {}) would fail or blank the whole profile, so it goes as a throw does.
        if (JSON_SAFE_PRESENTS.has(collector.present) || (!isPromiseLike(shown) && JSON.stringify(shown) !== undefined)) collectors[collector.name] = shown;
      } catch {
        // A stored shape the collector no longer understands: show the data as stored.
      }
    }
    return { ...profile, collectors };
  }

  /** A profile from memory or storage; null when unknown. */
  async loadProfile(token: string): Promise<Profile | null> {
    return this.getUnsaved(token) ?? (await this.storage.read(token));
  }

  /**
   * Starts recording: takes a token (claimed ahead of time, so usually without waiting). The
   * recording starts where the request's traced dispatches do, when the dispatcher traces them:
   * this listener runs within the first, and a listener before it, or its own call, would
   * otherwise start before the request did on the timeline.
   */
  onKernelRequest(event: RequestEvent, _eventName?: string, dispatcher?: EventDispatcher): void | Promise<void> {
    const request = event.request;
    if (this.#recordings.get(request) !== undefined || this.#excluded(request)) return;
    // The error page of a request terminated already (its controller failed after the response timeout) joins no profile.
    if (event.requestType === RequestType.SUB && this.#recordings.get(this.#requestStack.getMainRequest() ?? request)?.terminated === true) return;
    const now = performance.now();
    const startNow = (dispatcher instanceof TraceableEventDispatcher ? dispatcher.traceStart(request) : undefined) ?? now;
    const startTime = Date.now() - Math.round(now - startNow);
    const token = this.#pool.take();
    if (token !== null) return this.#start(request, event.requestType, token, startTime, startNow);
    // A storage that failed to give a token (a full disk) is asked again at most every
    // CLAIM_RETRY_MS: meanwhile requests go unrecorded rather than each waiting for the failure.
    if (this.#storageFailing && performance.now() - this.#claimFailedAt < CLAIM_RETRY_MS) return;
    return this.#pool.claim().then(
      (claimed) => this.#start(request, event.requestType, claimed, startTime, startNow),
      (error: unknown) => {
        this.#claimFailedAt = performance.now();
        this.#reportStorageError(error);
      },
    );
  }

  /** Remembers the error that escaped, for the exception panel. */
  onKernelException(event: ExceptionEvent): void {
    const recording = this.#recordings.get(event.request);
    if (recording === undefined || recording.terminated) return;
    recording.error = event.error;
    recording.failed = true;
  }

  /**
   * Marks the request as answered and sends the debug headers. Collection waits for
   * kernel.terminate (only collectors with a `collect` step run now): what is gathered there
   * is serialised at once and never outlives the call, whereas data gathered here would stay
   * alive, and be copied by the garbage collector, for as long as the response takes to send.
   */
  onKernelResponse(event: ResponseEvent): void {
    const recording = this.#recordings.get(event.request);
    if (recording === undefined || recording.terminated) return;
    this.#answered(recording, event.request, event.response);
  }

  /**
   * Records the answer to a request whose error escaped `kernel.handle()` (a `kernel.exception`
   * listener that threw): `response` is the page made outside the kernel, `error` the one it shows.
   * No `kernel.response` ran for it, so this does what the profiler's listener does there (the
   * debug headers included); the profile is saved at `kernel.terminate`, as any other. createKernel's
   * listener calls it; a request the profiler is not recording is left alone, and so is one terminated
   * already (its page came past the server's error page grace: the bare 500 that went instead is recorded).
   */
  recordUnhandled(request: Request, response: Response, error: unknown): void {
    const recording = this.#recordings.get(request);
    if (recording === undefined || recording.terminated) return;
    recording.error = error;
    recording.failed = true;
    this.#answered(recording, request, response);
  }

  #answered(recording: Recording, request: Request, response: Response): void {
    recording.endNow = performance.now();
    recording.response = response;
    if (this.#early.length > 0) {
      const context = this.#context(recording);
      const collected: unknown[] = [];
      try {
        for (const i of this.#early) {
          const collector = this.#collectors[i]!;
          collected[i] = synchronous(collector, 'collect', collector.collect!(context));
        }
        recording.collected = collected;
      } catch (error) {
        // A collector's failure costs its profile (dropped and logged at kernel.terminate), never the request.
        recording.collectError = { error };
      }
    }
    this.#remember(recording);

    if (this.#showDebug(request)) {
      const previous = response.headers['x-debug-token'];
      if (typeof previous === 'string' && previous !== recording.token) response.headers['x-previous-debug-token'] = previous;
      response.headers['x-debug-token'] = recording.token;
      // Absolute (tools expect it) or not sent: never a link to an invalid or untrusted host, nor the error sub-request's link left in this one's place.
      const base = schemeAndHttpHost(request);
      if (base === null) delete response.headers['x-debug-token-link'];
      else response.headers['x-debug-token-link'] = `${base}${this.#panelPath(recording.token)}`;
    }
    // A sub-request's response may go on as its parent's (the error page's does), whose listeners
    // then change it: its profile keeps its status and headers as they are now, as Symfony's
    // profiler collects here. A main request's is its own to the end, and is not copied.
    if (recording.requestType === 'sub') recording.response = copyOf(response);
  }

  /** After the response is sent: collection, parent/child links, serialisation, and the queued save. */
  onKernelTerminate(event: TerminateEvent): void {
    this.#terminated(event.request, event.response);
  }

  /**
   * Takes the profile of a main request whose `kernel.terminate` never reached the profiler's own
   * listener (one above it stopped propagation or threw): the client already has its X-Debug-Token.
   * createKernel's kernel calls it once `kernel.terminate` has run; nothing when the listener did.
   */
  takeMissedProfile(request: Request, response: Response): void {
    this.#terminated(request, response);
  }

  #terminated(request: Request, response: Response): void {
    const event = { request, response };
    const tree = this.#trees.get(event.request);
    if (tree === undefined) return;
    this.#trees.delete(event.request);
    this.#abandoned.unregister(event.request);
    for (const recording of tree) recording.terminated = true;
    // The main request is recorded with the response that went out, which kernel.terminate names, its error and
    // logs kept: its kernel.response may have failed on its error page too (the kernel then sends the page
    // unfiltered, and the profiler's own listener never ran), or the server answered its response timeout
    // while the controller's late response was still going through kernel.response, whichever came last.
    const main = tree[0];
    if (main !== undefined && main.request === event.request && main.response !== event.response) this.#answered(main, event.request, event.response);
    // Most trees are one answered request: no copy of the tree is made for them.
    const done = tree.length === 1 && tree[0]!.response !== null ? tree : tree.filter((recording) => recording.response !== null);
    this.#recorded += done.length;
    if (done !== tree) for (const recording of tree) if (recording.response === null) void this.storage.release(recording.token).catch(() => {});
    // A full queue drops the tree before its collection: no CPU spent on what cannot be saved.
    const kept = this.#fitting(done);
    if (kept.length === 0) return;
    for (const recording of kept) this.#enqueue(recording, kept);
    this.#schedulePump();
  }

  /** Requests and sub-requests profiled (answered and terminated), saved or dropped. */
  get recordedProfiles(): number {
    return this.#recorded;
  }

  /** Profiles dropped because the storage could not keep up (see `maxQueuedProfiles`). */
  get droppedProfiles(): number {
    return this.#dropped;
  }

  /** Waits for the queued saves, then gives unused tokens back. */
  async close(): Promise<void> {
    if (this.#pumpTimer !== null) {
      clearTimeout(this.#pumpTimer);
      this.#pumpTimer = null;
      void this.#pump();
    }
    await this.#drained();
    await this.#pool.close();
    // Once, on the way out: what the 10-second warnings said, in total (read by bench/http).
    if (this.#dropped > 0) {
      this.#logger?.warning('{dropped} of {recorded} profiles were dropped in all: the storage could not keep up with the traffic.', { dropped: this.#dropped, recorded: this.#recorded });
    }
  }

  // Saves go through a bounded queue, written in batches, one batch at a time: while a batch is
  // written the next one gathers, so the storage's cost per write (a file append, a lock) is paid
  // once per batch, not per profile. A storage slower than the traffic costs dropped profiles
  // (counted, logged once per burst), never unbounded memory.
  #enqueue(recording: Recording, tree: readonly Recording[]): void {
    const token = recording.token;
    let data: unknown[];
    try {
      data = this.#collect(recording);
    } catch (error) {
      // A collector that throws costs this profile only, as one whose data cannot be serialised.
      this.#drop(token, 'a collector failed ({message}).', error);
      return;
    }
    // Serialised now, and the JSON copied out of the JavaScript heap (see ByteSlab): while it waits
    // for its batch, the queue holds a small view per profile, not an object graph or a string the
    // garbage collector would trace, copy and promote.
    let encoded: EncodedProfile;
    try {
      encoded = this.#encode(recording, tree, data, this.#slab);
    } catch (error) {
      this.#drop(token, 'a collector returned data that is not JSON-serialisable ({message}).', error);
      return;
    }
    this.#queue.push(encoded);
    if (this.#unsaved.has(token)) this.#unsaved.set(token, encoded);
  }

  /** Forgets a profile that cannot be saved, and says why. */
  #drop(token: string, why: string, error: unknown): void {
    this.#discard(token);
    this.#logger?.error(`Profile {token} cannot be saved: ${why}`, { token, message: error instanceof Error ? error.message : String(error) });
  }

  /**
   * Forgets the profile of an answered request, which will not be saved. Its token went out in a
   * response header, so it is discarded, not given back: a client's link must not open another
   * request's profile later (a storage without discard() keeps it claimed).
   */
  #discard(token: string): void {
    this.#unsaved.delete(token);
    if (this.storage.discard !== undefined) void this.storage.discard(token).catch(() => {});
  }

  /**
   * The recordings of a tree (main request first, then its sub-requests as they started) whose profiles
   * go in the save queue: all of them when they fit; else none (dropped, counted, warned about), but for
   * a tree larger than the whole queue (a controller that made thousands of sub-requests), which never
   * fits: its first ones are kept, the main profile whose token the client got among them (and each kept
   * sub-request's parent, which started before it), and the request's log says how many were dropped.
   */
  #fitting(recordings: Recording[]): Recording[] {
    const room = this.#maxQueued - this.#queue.length;
    if (recordings.length <= room) return recordings;
    if (recordings.length > this.#maxQueued && room > 0) {
      const dropped = recordings.slice(room);
      this.#dropped += dropped.length;
      for (const { token } of dropped) this.#discard(token);
      // Written while its request terminates, before its profile is collected: its logger panel shows it.
      const subRequests = recordings.length - 1;
      this.#logger?.warning(`This request made {sub_requests} ${subRequests === 1 ? 'sub-request' : 'sub-requests'}, more profiles than the profiler queues for saving ({max_queued}, maxQueuedProfiles): ${dropped.length === 1 ? 'the last was' : 'the last {dropped} were'} dropped.`, {
        sub_requests: subRequests,
        max_queued: this.#maxQueued,
        dropped: dropped.length,
      });
      return recordings.slice(0, room);
    }
    this.#dropped += recordings.length;
    for (const { token } of recordings) this.#discard(token);
    const now = performance.now();
    if (now - this.#lastDropReport >= DROP_REPORT_INTERVAL) {
      this.#lastDropReport = now;
      // Written while a request terminates, but about the process: no request's record.
      this.#requestStack.exit(this.#reportDropping);
    }
    return [];
  }

  readonly #reportDropping = (): void => {
    this.#logger?.warning('The profiler storage cannot keep up with the traffic: profiles are being dropped ({dropped} so far).', { dropped: this.#dropped });
  };

  #schedulePump(): void {
    if (this.#writing || this.#pumpTimer !== null || this.#queue.length === 0) return;
    // kernel.terminate runs with its request current, but saving is the process's work: what it logs (a failing storage) is no request's.
    this.#requestStack.exit(this.#startPump);
  }

  readonly #startPump = (): void => {
    if (this.#saveDelay <= 0) {
      void this.#pump();
      return;
    }
    this.#pumpTimer = setTimeout(() => {
      this.#pumpTimer = null;
      void this.#pump();
    }, this.#saveDelay);
  };

  async #pump(): Promise<void> {
    this.#writing = true;
    try {
      while (this.#queue.length > 0) await this.#save(this.#queue.splice(0, SAVE_BATCH_SIZE));
    } finally {
      this.#writing = false;
      for (const resolve of this.#idle.splice(0)) resolve();
    }
  }

  #drained(): Promise<void> {
    return !this.#writing && this.#queue.length === 0 ? Promise.resolve() : new Promise((resolve) => this.#idle.push(resolve));
  }

  #start(request: Request, type: number, token: string, startTime: number, startNow: number): void {
    const main = this.#requestStack.getMainRequest() ?? request;
    const recording: Recording = {
      token,
      request,
      main,
      parentRequest: type === RequestType.SUB ? this.#requestStack.getParentRequest() : undefined,
      requestType: type === RequestType.SUB ? 'sub' : 'main',
      startTime,
      startNow,
      endNow: startNow,
      error: null,
      failed: false,
      response: null,
      collected: null,
      collectError: null,
      terminated: false,
    };
    this.#recordings.set(request, recording);
    const tree = this.#trees.get(main);
    if (tree === undefined) {
      const tokens = [token];
      this.#trees.set(main, [recording]);
      this.#treeTokens.set(main, tokens);
      this.#abandoned.register(main, tokens, main);
    } else {
      tree.push(recording);
      this.#treeTokens.get(main)?.push(token);
    }
  }

  #context(recording: Recording): CollectContext {
    return {
      request: recording.request,
      response: recording.response!,
      error: recording.error,
      failed: recording.failed,
      requestType: recording.requestType,
      startTime: recording.startTime,
      startNow: recording.startNow,
      endNow: recording.endNow,
    };
  }

  #remember(recording: Recording): void {
    this.#unsaved.set(recording.token, recording);
    if (this.#unsaved.size > UNSAVED_CAP) this.#unsaved.delete(this.#unsaved.keys().next().value!);
  }

  /**
   * Every collector's data for the recording, in the collectors' order (`lateCollect` given what
   * `collect` gathered). For a `provisional` view of a request not terminated yet, only collectors
   * that say so (`provisional: true`) run their `lateCollect`: the others keep their promise of one
   * call, at kernel.terminate. Throws what a collector threw, or a TypeError for a promise.
   */
  #collect(recording: Recording, provisional = false): unknown[] {
    if (recording.collectError !== null) throw recording.collectError.error;
    const context = this.#context(recording);
    const early = recording.collected;
    const data: unknown[] = [];
    for (let i = 0; i < this.#collectors.length; i++) {
      const collector = this.#collectors[i]!;
      const collected = early === null ? undefined : early[i];
      if (collector.lateCollect === undefined || (provisional && collector.provisional !== true)) data.push(collected);
      else data.push(synchronous(collector, 'lateCollect', collector.lateCollect(context, collected)));
    }
    return data;
  }

  /**
   * The recording's profile, encoded: its summary, the parent and the children among `tree` (the
   * recordings of its main request), and the collectors' data, written as JSON straight from
   * `data` (see encodeProfileParts) unless a collector's name is one an object would not keep in
   * registration order.
   */
  #encode(recording: Recording, tree: readonly Recording[], data: unknown[], slab?: ByteSlab): EncodedProfile {
    const { request, response } = recording;
    const parent = recording.parentRequest === undefined ? undefined : this.#recordings.get(recording.parentRequest);
    const children: string[] = [];
    if (tree.length > 1) for (const other of tree) if (other.parentRequest === request && other !== recording) children.push(other.token);
    const summary = {
      token: recording.token,
      parent: parent !== undefined && parent.response !== null ? parent.token : null,
      ip: request.clientIp,
      method: request.method,
      url: this.redactor.url(safeUri(request)),
      time: recording.startTime,
      status: response!.status,
    };
    if (this.#plainNames) return encodeProfileParts(summary, children, this.#names, data, slab);
    const collectors: Record<string, unknown> = {};
    // setOwn: a collector named `__proto__` would otherwise set the object's prototype, and its data would be lost.
    for (let i = 0; i < data.length; i++) setOwn(collectors, this.#names[i]!, data[i]);
    return encodeProfile({ ...summary, children, collectors }, slab);
  }

  /**
   * The profile of a request answered but not terminated yet (the toolbar may ask that early), or
   * undefined when a collector fails on it: the page is then a 404, which the toolbar's loader asks again.
   */
  #provisionalProfile(recording: Recording): Profile | undefined {
    const tree = (this.#trees.get(recording.main) ?? []).filter((other) => other.response !== null);
    try {
      // Through its JSON, as from the storage: collectors may have written theirs directly (RawJson).
      return decodeProfile(this.#encode(recording, tree, this.#collect(recording, true)));
    } catch {
      return undefined;
    }
  }

  async #save(batch: EncodedProfile[]): Promise<void> {
    try {
      await this.storage.writeMany(batch);
      this.#storageWorks();
    } catch (error) {
      const failure = this.#reportCollisions(batch, error);
      // Only collisions: the storage saved the rest of the batch, it is not failing.
      if (failure === null) this.#storageWorks();
      else this.#reportStorageError(failure);
    } finally {
      for (const profile of batch) {
        this.#unsaved.delete(profile.token);
        // The storage has copied what it keeps (see ProfilerStorage.writeMany).
        if (typeof profile.json !== 'string') this.#slab?.release(profile.json);
      }
    }
  }

  #storageWorks(): void {
    if (!this.#storageFailing) return;
    this.#storageFailing = false;
    this.#logger?.notice('Profiler storage works again.');
  }

  /**
   * Logs each profile of the batch the storage refused as its token holds another profile already
   * (ProfileExistsError: another writer drew the token too, a lease taken over while this process was
   * frozen), one warning each, naming its request; returns what else the rejection says, null when nothing.
   * Such a collision loses one profile, the storage works: logged as the storage failing, it said
   * profiles were not saved until it recovered, then that it worked again.
   */
  #reportCollisions(batch: readonly EncodedProfile[], error: unknown): unknown {
    const refusals: readonly unknown[] = error instanceof ProfileBatchError ? error.errors : [error];
    const others = refusals.filter((refusal) => !(refusal instanceof ProfileExistsError));
    for (const refusal of refusals) {
      if (!(refusal instanceof ProfileExistsError)) continue;
      const profile = batch.find((each) => each.token === refusal.token);
      this.#requestStack.exit(() =>
        this.#logger?.warning('The profile of {method} {url} is not saved: another profile is stored under its token "{token}" (a token collision), which shows that one.', {
          method: profile?.method ?? '?',
          url: profile?.url ?? '?',
          token: refusal.token,
        }),
      );
    }
    if (others.length === 0) return null;
    return error instanceof ProfileBatchError ? (others.length === 1 ? others[0] : new ProfileBatchError(others as ProfilerStorageError[])) : error;
  }

  #reportStorageError(error: unknown): void {
    // Logged once, not per request: a full or read-only disk must not flood the logs or fail requests.
    if (this.#storageFailing) return;
    this.#storageFailing = true;
    // The process's record, not the request's that happened to ask for a token when the storage failed.
    // One the storage gave its onError (a stop of ThreadedFileStorage's thread) is logged there, at ERROR: not twice.
    const level = wasReported(error) ? 'warning' : 'error';
    this.#requestStack.exit(() =>
      this.#logger?.[level]('Profiler storage failed, profiles are not saved until it recovers: {message}', { message: error instanceof Error ? error.message : String(error) }),
    );
  }

}

/** A collector's data, refused when it is a promise: collectors are synchronous, and its rejection would otherwise be unhandled. */
function synchronous(collector: DataCollector, step: 'collect' | 'lateCollect', value: unknown): unknown {
  if (!isPromiseLike(value)) return value;
  value.then(undefined, () => {});
  throw new TypeError(`The collector "${collector.name}" returned a promise from ${step}(): collectors are synchronous (wait for what one needs in a listener, and read it here).`);
}

/**
 * The paths of the profiler's own pages, as its routes have them (profilerRoutes): `/_profiler/`,
 * `/_profiler/search`, `/_profiler/latest`, `/_profiler/<token>` and `/_wdt/<token>`.
 */
const PROFILER_PAGE = /^\/(?:_profiler\/[^/]*|_wdt\/[^/]+)$/;

/**
 * A copy of `response` for a sub-request's profile, its headers as they are: the constructor would
 * check them as given by a controller, and refuse what a listener set by hand and node:http sends
 * (a list of numbers): the profiler never fails a request.
 */
function copyOf(response: Response): Response {
  const copy = new Response(response.body, response.status);
  for (const name in response.headers) {
    const value = response.headers[name]!;
    // setOwn: a header named `__proto__` (which Response keeps as its own) would otherwise set the copy's prototype, or nothing.
    setOwn(copy.headers, name, Array.isArray(value) ? [...value] : value);
  }
  return copy;
}

/**
 * Whether a request is for the profiler's own pages (GET or HEAD on one of their paths, as their
 * routes serve). Anything else under /_profiler/ is recorded: a 404 for `/_profiler/abc/x`, a 405
 * for a POST. One whose target has no readable path is not a page either (its 400 is recorded).
 */
function isProfilerPage(request: Request): boolean {
  const method = request.method;
  return (method === 'GET' || method === 'HEAD') && PROFILER_PAGE.test(request.path);
}

/** `scheme://host[:port]`, or null when the host is invalid or untrusted. */
function schemeAndHttpHost(request: Request): string | null {
  try {
    return request.schemeAndHttpHost;
  } catch {
    return null;
  }
}
