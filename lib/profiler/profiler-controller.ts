import { getHeapStatistics } from 'node:v8';
import { BadRequestHttpError, NotFoundHttpError, Response, type Request } from '../../kernel/index.js';
import { createCspNonce, htmlSafeJson, preferredMediaType, type FileLinker } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { ExceptionData, LoggerData, MemoryData, Profile, ProfileSummary, RequestData, TimeData } from './profile.js';
import type { Profiler } from './profiler.js';
import { ProfilerStorageError, UNREADABLE_CODE, isOutOfDescriptors, isStorageThreadStopped } from './storage/index.js';
import type { SearchCriteria } from './storage/profiler-storage.js';
import { isValidToken } from './token.js';
import {
  PROFILER_PANELS,
  TOOLBAR_POLICY,
  defaultPanel,
  extraPanels,
  profilerPagePolicy,
  readTimeSpan,
  renderProfilePage,
  renderSearchPage,
  renderTokenNotFoundPage,
  renderUnavailablePage,
  renderToolbar,
  SHOWN_CHILDREN,
  type ProfilerUrls,
} from './ui/index.js';

/** The profiler's URLs, relative to the host. */
/**
 * A token as one path segment: percent-encoded, and `.` or `..` as `%2E` (as Symfony's UrlGenerator writes
 * them), which a browser would otherwise resolve (`/_profiler/..` is `/`): search?token= takes any text.
 */
function tokenSegment(token: string): string {
  return token === '.' || token === '..' ? token.replaceAll('.', '%2E') : encodeURIComponent(token);
}

export const profilerUrls: ProfilerUrls = {
  panel: (token, panel) => `/_profiler/${tokenSegment(token)}${panel ? `?panel=${encodeURIComponent(panel)}` : ''}`,
  search: (criteria) => {
    const query = new URLSearchParams(criteria ?? {}).toString();
    return `/_profiler/search${query ? `?${query}` : ''}`;
  },
  latest: () => '/_profiler/latest',
  toolbar: (token) => `/_wdt/${tokenSegment(token)}`,
};

const HTML = 'text/html; charset=UTF-8';
const SEARCH_KEYS = ['ip', 'method', 'status', 'url', 'start', 'end', 'limit'] as const;
/** Most parents /_profiler/latest walks up to find a sub-request's main request (a cycle in a bad storage stops too). */
const MAX_SUB_REQUEST_DEPTH = 16;
/** Seconds a client is told to wait (Retry-After) while the process is out of file descriptors: a shortage lasts until connections close. */
const OUT_OF_DESCRIPTORS_RETRY_AFTER = 5;
const OUT_OF_DESCRIPTORS_MESSAGE = 'The server is out of file descriptors for now, so the profiler cannot read its storage. Try again in a few seconds.';
const THREAD_STOPPED_MESSAGE =
  "The profiler's storage thread stopped while reading for this page (the read is tried once more on a new thread), or stopped before it and is started again after a wait (it stopped again and again). Try again in a moment.";

/** The profiler's pages (Symfony's ProfilerController): search, one profile's panels, the toolbar. HTML, or JSON on request. */
export class ProfilerController {
  readonly #fileLink: FileLinker | null;
  readonly #logger: Logger | null;
  /** Whether the pages' 503 for a shortage of file descriptors was logged, since the storage was last read. */
  #shortageLogged = false;
  /** The messages of the profiles that cannot be read (UNREADABLE_CODE) logged so far: each once, for the first 100. */
  readonly #unreadableLogged = new Set<string>();

  /**
   * `fileLink` links the exception panel's frames to the developer's editor (see createFileLinker); `logger`
   * gets the one warning that the pages answer 503 while the process is out of file descriptors.
   */
  constructor(
    readonly profiler: Profiler,
    options: { fileLink?: FileLinker | null; logger?: Logger | null } = {},
  ) {
    this.#fileLink = options.fileLink ?? null;
    this.#logger = options.logger ?? null;
  }

  /** `/_profiler/`: the latest 10 profiles. */
  home(request: Request): Promise<Response> {
    return this.#readingStorage(request, false, () => this.#home(request));
  }

  async #home(request: Request): Promise<Response> {
    return this.#results(request, { limit: 10 }, {});
  }

  /**
   * `/_profiler/search?ip=&method=&status=&url=&start=&end=&limit=`; with a `token`, a redirect
   * to that profile (a token not found there is that page's 404), as Symfony's search does. Text that
   * is no token gets that 404 here: a link to it could lead out of the profiler (a browser resolves
   * `/_profiler/..` to `/`, written `%2E%2E` too). `latest` goes to /_profiler/latest, as in Symfony.
   */
  search(request: Request): Promise<Response> {
    return this.#readingStorage(request, false, () => this.#search(request));
  }

  async #search(request: Request): Promise<Response> {
    const token = request.query.get('token')?.trim();
    if (token && token !== 'latest' && !isValidToken(token)) return this.#tokenNotFound(request, token);
    if (token) return Response.redirect(profilerUrls.panel(token), 302, PRIVATE);
    const { criteria, raw } = parseCriteria(request.query);
    return this.#results(request, criteria, raw);
  }

  /**
   * `/_profiler/latest`: a redirect to the newest request's profile, or the empty search. A
   * sub-request starts after its parent, so the newest profile is often one (the error page's):
   * its main request is the one to show, as Symfony's profiler does. A `panel` is kept
   * (`?panel=logger`), as Symfony keeps the query; one that profile does not have is a 404, as on its page.
   */
  latest(request: Request): Promise<Response> {
    return this.#readingStorage(request, false, () => this.#latest(request));
  }

  async #latest(request: Request): Promise<Response> {
    const [newest] = await this.profiler.storage.find({ limit: 1 });
    if (newest === undefined) return this.#results(request, { limit: 10 }, {});
    let shown: ProfileSummary = newest;
    for (let depth = 0; shown.parent !== null && depth < MAX_SUB_REQUEST_DEPTH; depth++) {
      const parent = await this.#summary(shown.parent);
      if (parent === null) break;
      shown = parent;
    }
    const panel = request.query.get('panel') ?? undefined;
    if (panel !== undefined && !(await this.#hasPanel(shown.token, panel))) throw panelNotFound(panel, shown.token);
    return Response.redirect(profilerUrls.panel(shown.token, panel), 302, PRIVATE);
  }

  /** `/_profiler/<token>?panel=...`: one profile; a panel it does not have is a 404, as in Symfony's panelAction. */
  panel(request: Request, params: { token: string }): Promise<Response> {
    return this.#readingStorage(request, false, () => this.#panel(request, params));
  }

  async #panel(request: Request, params: { token: string }): Promise<Response> {
    const token = String(params.token);
    const stored = isValidToken(token) ? await this.profiler.loadProfile(token) : null;
    if (stored === null) return this.#tokenNotFound(request, token);
    const requested = request.query.get('panel');
    if (requested !== null && !isPanelOf(stored, requested)) throw panelNotFound(requested, token);
    const profile = this.profiler.present(stored);
    if (wantsJson(request)) return json(profile, 200);
    const panel = requested ?? defaultPanel(profile);
    const [parent, children] = await Promise.all([
      profile.parent === null ? null : this.#summary(profile.parent),
      // Only those the page lists (SHOWN_CHILDREN): a profile may have thousands.
      Promise.all(profile.children.slice(0, SHOWN_CHILDREN).map((child) => this.#summary(child))),
    ]);
    const nonce = createCspNonce();
    const page = renderProfilePage({ profile, panel, parent, children: children.filter((child): child is ProfileSummary => child !== null), urls: profilerUrls, nonce, fileLink: this.#fileLink });
    return htmlPage(page, 200, nonce);
  }

  /** `/_wdt/<token>`: the toolbar's HTML, also for a profile not saved yet. */
  toolbar(request: Request, params: { token: string }): Promise<Response> {
    return this.#readingStorage(request, true, () => this.#toolbar(request, params));
  }

  async #toolbar(request: Request, params: { token: string }): Promise<Response> {
    const token = String(params.token);
    const stored = isValidToken(token) ? await this.profiler.loadProfile(token) : null;
    if (stored === null) return new Response('', 404, { 'content-type': HTML, ...PRIVATE, 'content-security-policy': TOOLBAR_POLICY });
    const profile = this.profiler.present(stored, ['request', 'logger']);
    const data = profile.collectors;
    const requestData = dataOf<RequestData>(data.request);
    const logger = dataOf<LoggerData>(data.logger);
    const bar = renderToolbar({
      token,
      status: profile.status,
      route: requestData.route ?? null,
      method: profile.method,
      durationMs: dataOf<TimeData>(data.time).duration ?? 0,
      // V8's own count, read without a file descriptor: process.memoryUsage() opens /proc for the RSS, and fails (EMFILE) when the process has none left.
      memoryBytes: dataOf<MemoryData>(data.memory).heapUsed ?? getHeapStatistics().used_heap_size,
      logCount: Object.values(logger.counts ?? {}).reduce((sum, n) => sum + n, 0),
      errorCount: logger.errorCount ?? 0,
      warningCount: logger.warningCount ?? 0,
      exceptionClass: dataOf<ExceptionData>(data.exception).exceptions?.[0]?.class ?? null,
      urls: profilerUrls,
    });
    return new Response(bar, 200, { 'content-type': HTML, ...PRIVATE, 'content-security-policy': TOOLBAR_POLICY });
  }

  /**
   * A page that reads the storage. While the process (or the system) is out of file descriptors, a state
   * of the server that passes once connections close, it is a 503 with Retry-After, logged once for the
   * shortage as a WARNING rather than as a 500 logged CRITICAL per request; the toolbar's stays empty, so
   * its loader shows the link it falls back to. So is it when the storage's thread stopped during the
   * page's call and again during the one retry (see ThreadedFileStorage): the next call starts a new one,
   * and the storage reported the stop. Other failures go on as they are.
   */
  async #readingStorage(request: Request, toolbar: boolean, page: () => Promise<Response>): Promise<Response> {
    let response: Response;
    try {
      response = await page();
    } catch (error) {
      if (isStorageThreadStopped(error)) return this.#unavailable(request, toolbar, THREAD_STOPPED_MESSAGE, threadRestartSeconds(error));
      if (error instanceof ProfilerStorageError && error.code === UNREADABLE_CODE) return this.#unreadable(request, toolbar, error);
      if (!isOutOfDescriptors(error)) throw error;
      if (!this.#shortageLogged) {
        this.#shortageLogged = true;
        this.#logger?.warning('Profiler pages answer 503 while the process is out of file descriptors: {message}', { message: error instanceof Error ? error.message : String(error) });
      }
      return this.#unavailable(request, toolbar, OUT_OF_DESCRIPTORS_MESSAGE, OUT_OF_DESCRIPTORS_RETRY_AFTER);
    }
    this.#shortageLogged = false;
    return response;
  }

  /**
   * The 500 of a page whose profile the storage cannot read (nested too deep to pass between threads, or its reads
   * stopped the storage thread twice): it fails the same way each time, so no Retry-After, and it is the stored
   * profile's fault, not the server's: logged at ERROR once, not CRITICAL per view with the error page's trace.
   */
  #unreadable(request: Request, toolbar: boolean, error: ProfilerStorageError): Response {
    if (!this.#unreadableLogged.has(error.message) && this.#unreadableLogged.size < 100) {
      this.#unreadableLogged.add(error.message);
      this.#logger?.error('{message}', { message: error.message });
    }
    if (toolbar) return new Response('', 500, { 'content-type': HTML, ...PRIVATE, 'content-security-policy': TOOLBAR_POLICY });
    if (wantsJson(request)) return json({ error: error.message }, 500);
    const nonce = createCspNonce();
    return htmlPage(renderUnavailablePage(error.message, null, profilerUrls, nonce), 500, nonce);
  }

  /** The 503 of a page whose storage cannot be read for now: `message`, and Retry-After `seconds`; the toolbar's empty. */
  #unavailable(request: Request, toolbar: boolean, message: string, seconds: number): Response {
    const retryAfter = { 'retry-after': String(seconds) };
    if (toolbar) return new Response('', 503, { 'content-type': HTML, ...PRIVATE, ...retryAfter, 'content-security-policy': TOOLBAR_POLICY });
    if (wantsJson(request)) return json({ error: message, retryAfter: seconds }, 503, retryAfter);
    const nonce = createCspNonce();
    return htmlPage(renderUnavailablePage(message, seconds, profilerUrls, nonce), 503, nonce, retryAfter);
  }

  async #results(request: Request, criteria: SearchCriteria, raw: Record<string, string>): Promise<Response> {
    const results = await this.profiler.storage.find(criteria);
    if (wantsJson(request)) return json({ count: results.length, results }, 200);
    const nonce = createCspNonce();
    return htmlPage(renderSearchPage({ results, criteria: raw, urls: profilerUrls, nonce }), 200, nonce);
  }

  /** Whether the profile of `token` has the panel `name` (see isPanelOf); loaded only for a name that is no built-in panel. */
  async #hasPanel(token: string, name: string): Promise<boolean> {
    if (PROFILER_PANELS.includes(name)) return true;
    const profile = await this.profiler.loadProfile(token);
    return profile !== null && isPanelOf(profile, name);
  }

  async #summary(token: string): Promise<ProfileSummary | null> {
    const profile = await this.profiler.loadProfile(token);
    if (profile === null) return null;
    const { collectors: _collectors, children: _children, ...summary } = profile;
    return summary;
  }

  #tokenNotFound(request: Request, token: string): Response {
    if (wantsJson(request)) return json({ error: 'Token not found', token }, 404);
    const nonce = createCspNonce();
    return htmlPage(renderTokenNotFoundPage(token, profilerUrls, nonce), 404, nonce);
  }
}

/** Whether a profile page shows the panel `name`: a built-in one, or one per collector an embedder added. */
function isPanelOf(profile: Profile, name: string): boolean {
  return PROFILER_PANELS.includes(name) || extraPanels(profile).includes(name);
}

/**
 * Symfony's 404 for a panel the profile does not have, with the headers of every profiler answer.
 * The name is the client's text: the error pages escape it, as they escape every message.
 */
function panelNotFound(panel: string, token: string): NotFoundHttpError {
  return new NotFoundHttpError(`Panel "${panel}" is not available for token "${token}".`, { headers: { ...PRIVATE } });
}

/** Reads and checks the search criteria; a bad value is a 400 saying what to fix. */
export function parseCriteria(query: URLSearchParams): { criteria: SearchCriteria; raw: Record<string, string> } {
  const raw: Record<string, string> = {};
  for (const key of SEARCH_KEYS) {
    const value = query.get(key)?.trim();
    if (value) raw[key] = value;
  }
  const criteria: SearchCriteria = { limit: 10 };
  if (raw.ip) criteria.ip = raw.ip;
  if (raw.method) criteria.method = raw.method.toUpperCase();
  if (raw.url) criteria.url = raw.url;
  if (raw.status) {
    const status = wholeNumber(raw.status);
    if (!Number.isInteger(status) || status < 100 || status > 599) throw badFilter(`The "status" filter must be an HTTP status code from 100 to 599, got "${raw.status}".`);
    criteria.status = status;
  }
  if (raw.limit) {
    const limit = wholeNumber(raw.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw badFilter(`The "limit" filter must be a whole number from 1 to 1000, got "${raw.limit}".`);
    criteria.limit = limit;
  }
  if (raw.start) criteria.start = parseTime('start', raw.start);
  if (raw.end) criteria.end = parseTime('end', raw.end);
  if (criteria.start !== undefined && criteria.end !== undefined && criteria.start > criteria.end) throw badFilter(`The "start" filter is after the "end" filter ("${raw.start}" after "${raw.end}"): no profile could match.`);
  return { criteria, raw };
}

/** A 400 for a search filter, with the headers of every profiler answer (its error page keeps them). */
function badFilter(message: string): BadRequestHttpError {
  return new BadRequestHttpError(message, { headers: { ...PRIVATE } });
}

/** Digits only, as the messages ask; NaN for anything Number() would read otherwise (`0x1F4`, `2e2`, `+404`). */
function wholeNumber(value: string): number {
  return /^\d+$/.test(value) ? Number(value) : Number.NaN;
}

/**
 * Epoch milliseconds as given, or a date read in the server's local time zone, as the pages show
 * times (see readTimeSpan for the forms). A `start` is the beginning of what it names, an `end`
 * includes all of it to its precision: a date is its whole day, a time to the minute its whole
 * minute, to the second its whole second (so "until" the time a profile shows includes that
 * profile). A date or time that does not exist is a 400, not the one it would roll over into.
 */
function parseTime(name: 'start' | 'end', value: string): number {
  const read = readTimeSpan(value);
  if (!read.ok) throw badFilter(`The "${name}" filter ${read.problem}, got "${value}".`);
  return name === 'start' ? read.span.first : read.span.last;
}

function wantsJson(request: Request): boolean {
  const accept = request.headers.accept;
  if (!accept) return false;
  return preferredMediaType(accept, ['text/html', 'application/json']) === 'application/json';
}

/**
 * Headers of every profiler answer: never cached (profiles hold what clients sent), never
 * sniffed as another type than the one given, never framed by another page, and no Referer to
 * other origins (a panel links to the URLs clients asked for, whose host is the client's text:
 * a click would hand that host the page's URL, token and all). The policy allows nothing: right
 * for JSON, redirects and empty answers; an HTML page replaces it with its own.
 */
const PRIVATE = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
} as const;

/**
 * Headers of an answer that is HTML or JSON by Accept (see wantsJson): `no-store` keeps it out of
 * caches that honour it, but a browser's back-forward cache, or a cache that ignores no-store,
 * must still not hand the one format to a client that asked for the other.
 */
const NEGOTIATED = { ...PRIVATE, vary: 'Accept' } as const;

/** An HTML page of the profiler, with the policy that lets only its own nonce'd script and style run. */
function htmlPage(page: string, status: number, nonce: string, headers: Record<string, string> = {}): Response {
  return new Response(page, status, { 'content-type': HTML, ...NEGOTIATED, ...headers, 'content-security-policy': profilerPagePolicy(nonce) });
}

/**
 * A JSON answer (for a client that asked for it: see wantsJson) with `<`, `>` and `&` escaped: profiles hold URLs, headers and bodies as clients
 * sent them, and the token of a miss is the client's own text. Inert in a browser either way
 * (application/json, nosniff), and still so if a tool pastes it into a page.
 */
function json(value: unknown, status: number, headers: Record<string, string> = {}): Response {
  return new Response(htmlSafeJson(value), status, { 'content-type': 'application/json', ...NEGOTIATED, ...headers });
}

/**
 * The longest Retry-After of a page whose storage's thread stopped. ThreadedFileStorage waits 5 s at most; a storage
 * of one's own may say any wait, and one of hours told a client to come back then, one of 1e300 ms wrote `1e+297`.
 */
const MAX_THREAD_RESTART_SECONDS = 60;

/**
 * Seconds a client is told to wait (Retry-After) after the storage's thread stopped: until the storage may start
 * another (ProfilerStorageError.retryAfterMs, from its backoff), in whole seconds, at least 1 (0: the next call
 * starts one), at most MAX_THREAD_RESTART_SECONDS. A fixed 1 s had a page whose storage waits 5 s before its next
 * start reloaded to fail again.
 */
function threadRestartSeconds(error: unknown): number {
  const ms = error instanceof ProfilerStorageError ? error.retryAfterMs : undefined;
  return typeof ms === 'number' && Number.isFinite(ms) && ms > 0 ? Math.min(MAX_THREAD_RESTART_SECONDS, Math.max(1, Math.ceil(ms / 1_000))) : 1;
}

/** A collector's data as an object, or none: the note of data left out as too large (see isLeftOutData) is a string. */
function dataOf<T>(data: unknown): Partial<T> {
  return data !== null && typeof data === 'object' ? (data as Partial<T>) : {};
}
