import { isUtf8 } from 'node:buffer';
import { IncomingMessage, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import { isIP, type Socket } from 'node:net';
import { TextDecoder } from 'node:util';
import { parse as parseContentType } from 'content-type';
import { parse as parseCookie } from 'cookie';
import { describeValue } from './describe-value.js';
import { hopAddress, stripMapped } from './forwarded-hop.js';
import { addHeaderLine } from './header-lines.js';
import { isValidHost } from './host-syntax.js';
import { ClientClosedError, MalformedRequestError, PayloadTooLargeHttpError, RequestTimeoutHttpError, ResponseTimeoutError, SuspiciousOperationError, UnsupportedMediaTypeHttpError, UntrustedHostError } from './http-errors.js';
import { isNameValueObject, isPlainObject } from './name-value-object.js';
import { requestInternals } from './request-internals.js';
import type { RequestStack } from './request-stack.js';
import { connectionClosedError, serverCut } from './server-cut.js';
import { followSignal, unfollowSignal } from './signal-followers.js';
import { unsupportedTransferCoding } from './transfer-coding.js';

/** The Content-Type of an HTML form's body. */
const FORM_TYPE = 'application/x-www-form-urlencoded';
// application/json and the structured-syntax suffix of RFC 6839 (application/problem+json, application/vnd.api+json).
const JSON_TYPE = /^application\/(?:[^\s/]+\+)?json$/;
/** A text of nothing but JSON's white space (RFC 8259 2), or none. */
const JSON_WHITE_SPACE = /^[ \t\n\r]*$/;
/** Fields a form body may have unless form() is told otherwise. */
const DEFAULT_MAX_FORM_FIELDS = 1000;

/** Decides whether the peer at `address` (hop `index`, 0 = the socket) is a trusted proxy. */
export type TrustProxy = (address: string, index: number) => boolean;

/** Decides whether a host the client named (lower-case, without its port) may be answered for; see compileTrustedHosts. */
export type TrustHost = (host: string) => boolean;

/** Where a request's body comes from. */
export type RequestBodySource = string | Uint8Array | AsyncIterable<Uint8Array | string> | null;

/** How a Request is made; every field is optional. */
export interface RequestInit {
  method?: string;
  headers?: IncomingHttpHeaders | Record<string, string | string[] | undefined>;
  body?: RequestBodySource;
  /** The scheme the client connected with (`https` on a TLS socket). */
  scheme?: 'http' | 'https';
  /** The peer's address as seen on the socket. */
  remoteAddress?: string;
  /** The address and port the request arrived at (used when no Host header is sent). */
  localAddress?: string;
  localPort?: number;
  /** Which peers may set X-Forwarded-*; none by default. */
  trustProxy?: TrustProxy | null;
  /**
   * Which hosts the client may name (in Host, a trusted proxy's X-Forwarded-Host or an absolute-form
   * target); every valid host by default. Reading the host of a request that names another throws
   * SuspiciousOperationError `Untrusted Host "evil.test".` (a 400), so no URL is ever built from it.
   */
  trustHost?: TrustHost | null;
  /** Largest body read, in bytes (default 1 MiB); larger ones are a 413. */
  bodyLimit?: number;
  /**
   * A signal for `request.signal` to follow, as Fetch's RequestInit.signal: aborted with its reason
   * until the request is done (kernel.terminate has run). Without it, only abortRequest() aborts a request made in process.
   */
  signal?: AbortSignal | null;
}

/** How Request.create() makes a request: a RequestInit, or one whose body is `json`. */
export interface RequestCreateInit extends RequestInit {
  /**
   * A body written with JSON.stringify, sent as `application/json` unless `headers` give a Content-Type;
   * instead of `body`. A value JSON writes as nothing (undefined, a function, a symbol) or cannot write
   * (a BigInt, a cycle) is a TypeError at the call.
   */
  json?: unknown;
}

const METHOD_TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** `method` when it is a method name (an RFC 9110 token); else a TypeError, rather than one from deep inside or a method no route can list. */
function checkMethod(method: unknown): string {
  if (typeof method === 'string' && METHOD_TOKEN.test(method)) return method;
  throw new TypeError(`A request method is a token such as GET or POST, not ${describeValue(method)}.`);
}

/** `body` when the request can read it; else a TypeError now, rather than one from deep inside the first read, in a controller. */
function checkBodySource(body: unknown): RequestBodySource {
  if (body === null || typeof body === 'string' || body instanceof Uint8Array) return body;
  if (typeof body === 'object' && typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') return body as AsyncIterable<Uint8Array | string>;
  // Fastify's inject() and supertest's send() write an object as JSON: here the json option does.
  const json = isPlainObject(body) || Array.isArray(body) ? ': give it as json to send it as JSON ({ json: value })' : '';
  throw new TypeError(`A request body is a string, bytes, an async iterable of them (a readable stream) or null, not ${describeValue(body)}${json}.`);
}

/** Spaces and tabs before or after a header value. */
const OWS_AROUND = /^[ \t]+|[ \t]+$/g;

const CREATE_INIT: ReadonlySet<string> = new Set(['headers', 'body', 'json', 'scheme', 'remoteAddress', 'localAddress', 'localPort', 'trustProxy', 'trustHost', 'bodyLimit', 'signal']);

/**
 * Refuses an init Request.create() would misread, silently: a typo (`header`) or a field it has no
 * such option for (`query`) left out, a `Headers` (whichever its class), a Map or a list of pairs read as no
 * headers or as headers named `0`, `1`.
 */
function checkCreateInit(init: unknown, method: string): void {
  if (!isPlainObject(init)) throw new TypeError(`Request.create() takes a plain object of options as its third argument ({ headers, body }), not ${describeValue(init)}.`);
  for (const key of Object.keys(init)) {
    if (!CREATE_INIT.has(key) && key !== 'method') throw new TypeError(`Request.create() has no option "${key}"; its options are ${[...CREATE_INIT].join(', ')}.`);
  }
  const { headers, method: given, scheme, localPort } = init as RequestInit;
  // A RequestInit made for the constructor may carry its method: the same one (in any case) is no conflict.
  if (given !== undefined && (typeof given !== 'string' || given.toUpperCase() !== method.toUpperCase())) {
    throw new TypeError(`Request.create() got the method ${method} as its second argument and ${describeValue(given)} as its option "method": the method is its second argument (leave the option out).`);
  }
  if (headers !== undefined && !isNameValueObject(headers)) {
    throw new TypeError(`The headers given to Request.create() are an object of names and values ({ accept: 'text/html' }), not ${describeValue(headers)}.`);
  }
  // Taken as given, another scheme (`HTTPS`, `ftp`) would be the request's, in its URLs and never secure; a port that is no port, written into them (`localhost:NaN`).
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') throw new TypeError(`Request.create()'s scheme is 'http' or 'https', not ${describeValue(scheme)}.`);
  if (localPort !== undefined && (!Number.isInteger(localPort) || localPort < 1 || localPort > 65_535)) {
    throw new TypeError(`Request.create()'s localPort is a port from 1 to 65535, not ${describeValue(localPort)}.`);
  }
}

/** The body of Request.create()'s `json` option; a TypeError now for a value JSON cannot write, rather than a request without the body meant. */
function jsonBody(json: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(json);
  } catch (error) {
    // A BigInt, a cycle, a toJSON() that throws.
    throw new TypeError(`Request.create() cannot write its json option as JSON: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (text === undefined) throw new TypeError(`Request.create() got ${typeof json === 'symbol' ? 'a symbol' : describeValue(json)} as its json option, which JSON writes as nothing (a toJSON() may give undefined); pass null for a JSON null.`);
  return text;
}

/**
 * Refuses overrides duplicate() would leave out: a sub-request without the `_controller` meant for it
 * (a typo: `attribute`) is routed to the controller that made it, which makes another, without end.
 */
function checkDuplicateOverrides(overrides: unknown): void {
  if (!isPlainObject(overrides)) throw new TypeError(`duplicate() takes a plain object ({ attributes, method }), not ${describeValue(overrides)}.`);
  for (const key of Object.keys(overrides)) {
    if (key !== 'attributes' && key !== 'method') throw new TypeError(`duplicate() has no option "${key}"; its options are attributes, method.`);
  }
  const { attributes, method } = overrides as { attributes?: unknown; method?: unknown };
  if (method !== undefined) checkMethod(method);
  if (attributes !== undefined && !isNameValueObject(attributes)) {
    throw new TypeError(`The attributes of duplicate() are an object of names and values ({ _controller: ... }), not ${describeValue(attributes)}.`);
  }
}

/** Default body limit: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * `limit` when it is a body limit (a whole number of bytes, 0 or more, or Infinity for none); else
 * a TypeError naming `option`. A limit of another type would otherwise be compared as NaN, which
 * lets every body through.
 */
export function checkBodyLimit(limit: unknown, option = 'bodyLimit'): number {
  if (typeof limit === 'number' && (limit === Infinity || (Number.isSafeInteger(limit) && limit >= 0))) return limit;
  throw new TypeError(`${option} is a number of bytes (a whole number, 0 or more, or Infinity for no limit), not ${describeValue(limit)}.`);
}

/** Reads (and with `create`, makes) a request's slot array; set once by Request's static block. */
let slotsOf: (request: Request, create: boolean) => unknown[] | undefined;
/** Aborts a request's signal; set once by Request's static block. */
let abortOwnSignal: (request: Request, reason: unknown) => void;
/** The stacks of the kernels handling a main request (see requestInternals.handledWith); set once by Request's static block. */
let requestStacksOf: (request: Request) => RequestStack | readonly RequestStack[] | undefined;
let slotCount = 0;

/**
 * Per-request state that travels with the request object: the debug tooling's trace, logs and
 * recording. It does what a `WeakMap<Request, T>` does, at a fraction of the cost: a WeakMap
 * entry is an ephemeron the garbage collector must trace on every cycle, and with several per
 * request they took 9 of the 13 us a debug-mode request cost in process. A sub-request
 * (`duplicate()`) starts with empty slots.
 */
export class RequestSlot<T> {
  readonly #index = slotCount++;

  get(request: Request): T | undefined {
    return slotsOf(request, false)?.[this.#index] as T | undefined;
  }

  set(request: Request, value: T): void {
    slotsOf(request, true)![this.#index] = value;
  }

  delete(request: Request): void {
    const slots = slotsOf(request, false);
    if (slots !== undefined) slots[this.#index] = undefined;
  }
}

const NO_TRUST: TrustProxy = () => false;
/** The authority of an absolute-form target, up to its path, query or fragment: the characters the client sent, checked as a Host header is. */
const ABSOLUTE_FORM_AUTHORITY = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i;
const HTTP_URL = /^https?:\/\//i;
/** The userinfo of an absolute-form target's authority, up to its last `@`, after the scheme (group 1). */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i;

/**
 * An HTTP request as the kernel sees it. Cheap to make: the path, query, cookies,
 * host and client IP are worked out on first use, and the body is read on demand.
 */
export class Request {
  /** Upper-case method. */
  readonly method: string;
  /** The request target as received: path and query string, still percent-encoded. */
  readonly url: string;
  /** Lower-case header names. */
  readonly headers: IncomingHttpHeaders;
  /** Values set while handling: `_route`, `_controller`, `_route_params`, `exception`... */
  readonly attributes = new Map<string, unknown>();
  /** The address of the socket's peer. */
  readonly remoteAddress: string;

  readonly #socketScheme: 'http' | 'https';
  readonly #trustProxy: TrustProxy;
  readonly #trustHost: TrustHost | null;
  #localAddress: string | undefined;
  #localPort: number | undefined;
  /** The socket of a node:http request: its local address is read only when needed (no Host header). */
  #socket: Socket | undefined;
  /** The header lines of a node:http request as received: node:http keeps only the first of several Host headers. */
  #rawHeaders: readonly string[] | undefined;
  readonly #bodyLimit: number;
  /** Called once, right before the body is read from its source: where a server sends `100 Continue`. */
  #beforeBodyRead: (() => void) | undefined;
  /** The body stands for bytes a client sent (inject()'s, as one from the socket does): its Transfer-Encoding names their coding. */
  #sentByClient = false;
  #bodySource: RequestBodySource;
  #body: Promise<Buffer> | undefined;
  #bodyRead: Buffer | undefined;
  /** The request a duplicate() was made from: its body and signal are the sub-request's too (the body read once for both). */
  #original: Request | undefined;
  /** How many duplicate() steps away from its main request: the one made by Request.create() or fromIncomingMessage(), or one handled as a main request (0 for those). */
  #duplicateDepth = 0;
  /** The caller's signal (RequestInit.signal) that `signal` follows, until the request is done. */
  #callerSignal: AbortSignal | undefined;
  /** Made on the first read of `signal` (its signal) or abortRequest(). */
  #abort: AbortController | undefined;
  /**
   * The stack of each kernel handling it as a main request, when it tracks the current request (one,
   * or several: an embedder's kernel handing it to an app's): its signal aborts with it current in each.
   */
  #requestStacks: RequestStack | readonly RequestStack[] | undefined;
  /** The node:http response of a request from the socket: `signal` is aborted when its client leaves before it is finished. */
  #response: ServerResponse | undefined;
  #path: string | undefined;
  #targetError: MalformedRequestError | null = null;
  #query: URLSearchParams | undefined;
  #cookies: Record<string, string | undefined> | undefined;
  #httpHost: { host: string; port: number } | undefined;
  #clientIp: string | undefined;
  #slots: unknown[] | undefined;
  /** Who is told of a sub-request's record kept under it once its server has terminated it (see onLateRecords() of response-body.ts). */
  #lateRecords: ((request: Request) => void) | undefined;

  static {
    slotsOf = (request, create) => (create ? (request.#slots ??= []) : request.#slots);
    abortOwnSignal = (request, reason) => {
      let main = request;
      while (main.#original !== undefined) main = main.#original;
      if (main.#abort === undefined) void main.signal;
      main.#abort!.abort(reason);
      // Aborted for good: nothing left to follow.
      requestInternals.endSignalFollowing(main);
    };
    requestStacksOf = (request) => request.#requestStacks;
    requestInternals.handledAsMain = (request) => {
      request.#duplicateDepth = 0;
    };
    requestInternals.duplicateDepth = (request) => request.#duplicateDepth;
    requestInternals.sentAsByClient = (request) => {
      request.#sentByClient = true;
    };
    requestInternals.unreadBody = (request) => request.#bodySource;
    requestInternals.lateRecords = (request) => request.#lateRecords;
    requestInternals.setLateRecords = (request, said) => {
      request.#lateRecords = said;
    };
    requestInternals.duplicatedAt = (request, depth) => {
      let found = request;
      while (found.#duplicateDepth > depth && found.#original !== undefined) found = found.#original;
      return found;
    };
    requestInternals.handledWith = (request, stack) => {
      const known = request.#requestStacks;
      if (known === undefined) request.#requestStacks = stack;
      else if (Array.isArray(known)) {
        if (!known.includes(stack)) request.#requestStacks = [...known, stack];
      } else if (known !== stack) request.#requestStacks = [known as RequestStack, stack];
    };
    requestInternals.endSignalFollowing = (request) => {
      const callerSignal = request.#callerSignal;
      if (callerSignal === undefined) return;
      // A signal first read from now on follows nothing either.
      request.#callerSignal = undefined;
      if (request.#abort !== undefined) unfollowSignal(callerSignal, request.#abort);
    };
  }

  constructor(url: string, init: RequestInit = {}) {
    this.method = init.method === undefined ? 'GET' : init.method.toUpperCase();
    this.url = url;
    this.headers = (init.headers ?? {}) as IncomingHttpHeaders;
    this.remoteAddress = init.remoteAddress ?? '127.0.0.1';
    this.#socketScheme = init.scheme ?? 'http';
    this.#trustProxy = init.trustProxy ?? NO_TRUST;
    this.#trustHost = init.trustHost ?? null;
    this.#localAddress = init.localAddress;
    this.#localPort = init.localPort;
    this.#socket = undefined;
    this.#rawHeaders = undefined;
    this.#bodyLimit = init.bodyLimit === undefined ? DEFAULT_BODY_LIMIT : checkBodyLimit(init.bodyLimit);
    this.#bodySource = init.body ?? null;
    this.#beforeBodyRead = undefined;
    this.#original = undefined;
    this.#callerSignal = init.signal ?? undefined;
    this.#abort = undefined;
    this.#requestStacks = undefined;
    this.#response = undefined;
    this.#slots = undefined;
    this.#lateRecords = undefined;
  }

  /**
   * Makes a request from an absolute URL or a path, for tests and for embedders that
   * run the kernel without a socket (`await kernel.handle(Request.create('/health'))`);
   * `init.json` gives a JSON body (`Request.create('/books', 'POST', { json: { title: 'Dune' } })`).
   */
  static create(uri: string, method = 'GET', init: RequestCreateInit = {}): Request {
    // Checked here, not in the constructor, which every request from a socket goes through: node has checked its method.
    checkMethod(method);
    checkCreateInit(init, method);
    const { json, ...requestInit } = init;
    let body = checkBodySource(init.body ?? null);
    // Each value of a list is a header line, folded as node:http folds a client's (see addHeaderLine); names in any case are one field,
    // their lines in the order given. Set as own properties: assigned, `__proto__` would set the prototype or nothing, and the header be lost.
    const headers: Record<string, string | string[] | undefined> = {};
    const hosts: string[] = [];
    for (const [name, value] of Object.entries(init.headers ?? {}) as Array<[string, string | string[] | undefined]>) {
      const lower = name.toLowerCase();
      for (const given of Array.isArray(value) ? value : [value]) {
        if (given === undefined) continue;
        // A finite number is written as node:http's outgoing headers write one ({ 'content-length': 5 }).
        const line: unknown = typeof given === 'number' && Number.isFinite(given) ? String(given) : given;
        // No client sends another: a number Host failed in the kernel (a 500), a number Expect or Transfer-Encoding in inject().
        if (typeof line !== 'string') throw new TypeError(`The header "${name}" given to Request.create() is a string, a finite number or a list of them (a line each), not ${describeValue(line)}.`);
        // Spaces and tabs around it are no part of the value (RFC 9112 5.1's OWS): node's parser drops them.
        const trimmed = line.replace(OWS_AROUND, '');
        addHeaderLine(headers, lower, trimmed);
        if (lower === 'host') hosts.push(trimmed);
      }
    }
    if (Object.hasOwn(init, 'json')) {
      if (init.body !== undefined) throw new TypeError('Request.create() takes a body or a json option, not both: json is the body, written as JSON.');
      body = jsonBody(json);
      headers['content-type'] ??= 'application/json';
    }
    let target = uri;
    let scheme = init.scheme;
    if (/^https?:\/\//i.test(uri)) {
      if (!URL.canParse(uri)) {
        throw new TypeError(`Request.create()'s target "${withoutUserinfo(uri)}" is no URL (new URL() refuses it: a port past 65535, a host with a space...): give a path ('/books') or an http or https URL.`);
      }
      const parsed = new URL(uri);
      scheme ??= parsed.protocol === 'https:' ? 'https' : 'http';
      // The URL names the host, as an absolute-form target does on the wire (RFC 9112 3.2.2) and as in Symfony's create().
      headers.host = parsed.host;
      // A user or password (even empty: `http://@a.test/`) is kept, as a socket carries it, for the kernel to refuse (see targetError):
      // new URL() leaves it out, and such a request was served where the server answers a 400.
      // As text: inject() passes a URL object on.
      const written = String(uri);
      const fragment = written.indexOf('#');
      target = USERINFO_GIVEN.test(written) ? (fragment === -1 ? written : written.slice(0, fragment)) : `${parsed.pathname}${parsed.search}`;
    } else {
      target = originForm(uri);
    }
    headers.host ??= 'localhost';
    // Not beside a Transfer-Encoding: a client sends one or the other (RFC 9112 6.1), and a server refuses both.
    if (body !== null && headers['content-length'] === undefined && headers['transfer-encoding'] === undefined && (typeof body === 'string' || body instanceof Uint8Array)) {
      headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
    }
    const request = new Request(target, { ...requestInit, method, headers, body, scheme: scheme ?? 'http' });
    // node:http keeps the first of several Host lines, and the host is refused from the raw lines (see assertSingleHost): so are several given, as beside an absolute-form target.
    if (hosts.length > 1) request.#rawHeaders = hosts.flatMap((host) => ['host', host]);
    return request;
  }

  /**
   * Wraps a node:http request; the body streams from it when first read. `beforeBodyRead` runs once
   * before that read starts (not for a body refused by its Content-Length): the node adapter
   * answers `Expect: 100-continue` there, so a client is invited to send only a body that is read.
   * With the `response` it is answered on, `signal` is aborted (a ClientClosedError) when the client
   * leaves before that response is finished.
   */
  static fromIncomingMessage(message: IncomingMessage, options: { trustProxy?: TrustProxy | null; trustHost?: TrustHost | null; bodyLimit?: number; beforeBodyRead?: () => void } = {}, response?: ServerResponse): Request {
    const socket = message.socket;
    // A fragment is no part of a request target (RFC 9112 3.2); some clients send one all the same: dropped, as create() and Symfony drop it.
    const target = message.url ?? '/';
    const hash = target.indexOf('#');
    const request = new Request(hash === -1 ? target : target.slice(0, hash), {
      method: message.method,
      headers: message.headers,
      body: message,
      scheme: (socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
      // A socket already destroyed has no address: '' is no address, so no allowed range or
      // trusted proxy matches it (the default of 127.0.0.1 is for requests made in process).
      remoteAddress: socket.remoteAddress ?? '',
      trustProxy: options.trustProxy ?? null,
      trustHost: options.trustHost ?? null,
      bodyLimit: options.bodyLimit,
    });
    request.#socket = socket;
    request.#rawHeaders = message.rawHeaders;
    request.#beforeBodyRead = options.beforeBodyRead;
    request.#response = response;
    return request;
  }

  /**
   * A copy for a sub-request: same URL, headers (a copy of them), client and scheme, fresh
   * attributes (those given, and the `_format` one unless given), optionally another method. The body is the same, as in Symfony's
   * `duplicate()`: read once, whichever of the two reads it first, and the other gets the same bytes.
   * So is the signal: work for a sub-request stops with its main request's.
   */
  duplicate(overrides: { attributes?: Record<string, unknown>; method?: string } = {}): Request {
    checkDuplicateOverrides(overrides);
    const copy = new Request(this.url, {
      method: overrides.method ?? this.method,
      headers: { ...this.headers },
      scheme: this.#socketScheme,
      remoteAddress: this.remoteAddress,
      localAddress: this.#localAddress,
      localPort: this.#localPort,
      trustProxy: this.#trustProxy,
      trustHost: this.#trustHost,
      bodyLimit: this.#bodyLimit,
    });
    copy.#socket = this.#socket;
    copy.#rawHeaders = this.#rawHeaders;
    copy.#original = this;
    copy.#duplicateDepth = this.#duplicateDepth + 1;
    // The request format goes with it unless given, as Symfony's duplicate() keeps `_format`: an error page's sub-request answers in it.
    const format = this.attributes.get('_format');
    if (format !== undefined) copy.attributes.set('_format', format);
    if (overrides.attributes) for (const [name, value] of Object.entries(overrides.attributes)) copy.attributes.set(name, value);
    return copy;
  }

  /**
   * Aborted when the work for this request should stop: hand it to what a controller waits on
   * (`fetch(url, { signal: request.signal })`, node:timers/promises' `setTimeout(ms, value, { signal })`,
   * a database driver, `pipeline(..., { signal })`). A request from the socket's is aborted with a
   * ClientClosedError when its client leaves before the response is finished (with the RequestTimeoutHttpError
   * of the 408 the server sent when its request timeout cut a body that stalled), and by the server with
   * its ResponseTimeoutError when the response timeout passes; never once the response is finished.
   * A sub-request's is its main request's. Request.create()'s is aborted by abortRequest(), and
   * follows the `signal` given until the request is done (kernel.terminate has run), else is never
   * aborted. Made on first read: a request that never reads it costs no AbortController. Its `abort`
   * listeners run with the request current (when the kernel tracks it), whoever aborts it.
   */
  get signal(): AbortSignal {
    if (this.#original !== undefined) return this.#original.signal;
    if (this.#abort !== undefined) return this.#abort.signal;
    const controller = (this.#abort = new RequestAbortController(this));
    if (this.#response !== undefined) abortWhenClientLeaves(this.#response, controller);
    if (this.#callerSignal !== undefined) followSignal(this.#callerSignal, controller);
    return controller.signal;
  }

  /**
   * The path, still percent-encoded, without the query string (Symfony's pathInfo); `*` for a
   * request about the server itself (`OPTIONS *`, RFC 9110 9.3.7). Never throws: a target the
   * kernel refuses (see targetError) gives the target as sent (`*` for `PATCH *`, `ftp://a.test/x`;
   * a user and password left out), which starts with no `/` and so names no route.
   */
  get path(): string {
    if (this.#path === undefined) {
      const url = this.url;
      if (url.charCodeAt(0) === 47 /* / */) {
        const q = url.indexOf('?');
        this.#path = q === -1 ? url : url.slice(0, q);
      } else {
        const path = nonOriginPath(url, this.method);
        if (typeof path === 'string') this.#path = path;
        else {
          this.#targetError = path;
          // An empty target would be routed as `/`; a user and password are kept out of logs and profiles.
          this.#path = url === '' ? '*' : withoutUserinfo(url);
        }
      }
    }
    return this.#path;
  }

  /**
   * Why the request target is refused, or null: `*` for another method than OPTIONS (RFC 9112 3.2.4),
   * an absolute-form target that is not an http or https URL, or that is no URL, names no host or a user.
   * Thrown on `kernel.request` at 256 (ValidateHostListener) and by `host`: a 400.
   */
  get targetError(): MalformedRequestError | null {
    if (this.#path === undefined) void this.path;
    return this.#targetError;
  }

  /** The raw query string, without `?` ('' when none). */
  get queryString(): string {
    const q = this.url.indexOf('?');
    return q === -1 ? '' : this.url.slice(q + 1);
  }

  /** The decoded query parameters (parsed on first use). */
  get query(): URLSearchParams {
    return (this.#query ??= new URLSearchParams(this.queryString));
  }

  /** The cookies sent (parsed on first use; a malformed header gives no cookies). */
  get cookies(): Readonly<Record<string, string | undefined>> {
    if (this.#cookies === undefined) {
      // An embedder's headers may hold several Cookie values; node:http joins them with '; '.
      const header = this.headers.cookie as string | string[] | undefined;
      // Without prototype, as the cookie package parses them: `cookies.constructor` is a cookie's or none, sent any or not.
      try {
        this.#cookies = header ? parseCookie(typeof header === 'string' ? header : header.join('; ')) : (Object.create(null) as Record<string, string | undefined>);
      } catch {
        this.#cookies = Object.create(null) as Record<string, string | undefined>;
      }
    }
    return this.#cookies;
  }

  /** Whether a trusted proxy sits in front, so X-Forwarded-* may be read. */
  isFromTrustedProxy(): boolean {
    return this.#trustProxy(this.remoteAddress, 0);
  }

  /**
   * `http` or `https`, honouring X-Forwarded-Proto only from a trusted proxy: `https`, or `on`, `ssl`
   * or `1` as Symfony's isSecure() takes them (proxies that copy an HTTPS=on variable), is https.
   */
  get scheme(): 'http' | 'https' {
    if (this.#trustProxy !== NO_TRUST && this.isFromTrustedProxy()) {
      const forwarded = firstForwardedValue(this.headers['x-forwarded-proto'])?.toLowerCase();
      if (forwarded === 'https' || forwarded === 'http') return forwarded;
      if (forwarded === 'on' || forwarded === 'ssl' || forwarded === '1') return 'https';
    }
    return this.#socketScheme;
  }

  isSecure(): boolean {
    return this.scheme === 'https';
  }

  /**
   * The host name, lower-case, without the port. A Host header that is not a valid
   * host name, or not a trusted one (see RequestInit.trustHost), is refused as a suspicious operation (a 400).
   */
  get host(): string {
    return this.#resolveHttpHost().host;
  }

  /** The port the client addressed. */
  get port(): number {
    return this.#resolveHttpHost().port;
  }

  /** `host` or `host:port` when the port is not the scheme's default. */
  get httpHost(): string {
    const { host, port } = this.#resolveHttpHost();
    const scheme = this.scheme;
    return (scheme === 'http' && port === 80) || (scheme === 'https' && port === 443) ? host : `${host}:${port}`;
  }

  /** `scheme://host[:port]`. */
  get schemeAndHttpHost(): string {
    return `${this.scheme}://${this.httpHost}`;
  }

  /** The absolute URL the client asked for, query included; for `OPTIONS *` the server's own (RFC 9112 3.3: an empty path). */
  get uri(): string {
    const path = this.path;
    if (path === '*') return this.schemeAndHttpHost;
    return `${this.schemeAndHttpHost}${path}${this.url.indexOf('?') === -1 ? '' : `?${this.queryString}`}`;
  }

  /** The absolute URL of a path on this host (Symfony's getUriForPath): no query string. */
  uriForPath(path: string): string {
    return `${this.schemeAndHttpHost}${path}`;
  }

  /**
   * The client's IP: the socket peer, or the first untrusted hop of X-Forwarded-For. IPv4-mapped
   * IPv6 shows as IPv4; a hop's port is dropped (`203.0.113.7:4711`, `[2001:db8::1]:443`). A
   * trusted proxy's hop that is no address (`unknown`) is returned as it is, as proxy-addr does.
   */
  get clientIp(): string {
    if (this.#clientIp === undefined) {
      let ip = this.remoteAddress;
      if (this.#trustProxy !== NO_TRUST) {
        // Several X-Forwarded-For headers are one list (node:http joins them): its end is the nearest hop, whom a trusted proxy vouches for.
        const forwarded = this.headers['x-forwarded-for'];
        const hops = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? '')).split(',').map((hop) => hop.trim()).filter(Boolean).reverse();
        for (let i = 0; i < hops.length && this.#trustProxy(ip, i); i++) {
          ip = hopAddress(hops[i]!);
          // A hop that names no address ends the chain as the client: it matches no allowed range,
          // where stopping at the proxy before it would make every client look like that proxy.
          if (isIP(stripMapped(ip)) === 0) break;
        }
      }
      this.#clientIp = stripMapped(ip);
    }
    return this.#clientIp;
  }

  /** Whether the request was made by XMLHttpRequest / fetch wrappers that say so. */
  isXmlHttpRequest(): boolean {
    return this.headers['x-requested-with'] === 'XMLHttpRequest';
  }

  /** The `Content-Type` without parameters, lower-case ('' when none). */
  get contentType(): string {
    // An embedder's headers may hold a list; node:http joins none for Content-Type (a duplicate is dropped).
    const header = firstHeaderValue(this.headers['content-type']);
    if (!header) return '';
    const semi = header.indexOf(';');
    return (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
  }

  /** The body as bytes, read once, up to the body limit (413 beyond it). */
  bytes(): Promise<Buffer> {
    return (this.#body ??= (this.#original === undefined ? this.#readBody() : this.#original.bytes()).then((bytes) => (this.#bodyRead = bytes)));
  }

  /** The body if it has been read already (by a controller or listener, of this request or the one it duplicates); never starts a read. */
  peekBody(): Buffer | undefined {
    return this.#bodyRead ?? this.#original?.peekBody();
  }

  /**
   * The body as text in the `charset` its Content-Type declares, UTF-8 when none; bytes that are no text
   * in it are a 400 (decoding would replace them with U+FFFD unseen), a charset no decoder knows a 415.
   */
  async text(): Promise<string> {
    // RFC 9110 8.4: a body in a content coding (gzip) is no text until decoded, which nothing here does; a 415 says so, not "not UTF-8".
    const coding = firstHeaderValue(this.headers['content-encoding'])?.trim().toLowerCase();
    if (coding && coding !== 'identity') throw new UnsupportedMediaTypeHttpError(`The request body is sent with Content-Encoding "${coding}", which this server does not decode; read it with bytes() and decompress it.`);
    // Read as UTF-8, a body declared latin1 or UTF-16 would be a 400 saying it is no UTF-8, or, when its bytes happen to be, other text.
    const charset = declaredCharset(firstHeaderValue(this.headers['content-type']));
    // Judged from the header, before a byte is read: a client is not made to upload a body no decoder here reads.
    if (charset !== undefined && encodingOf(charset) === undefined) throw unknownCharset(charset);
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return decodeText(await this.bytes(), charset);
    const bytes = await this.bytes();
    if (!isUtf8(bytes)) throw new MalformedRequestError('The request body is not valid UTF-8 text.');
    const text = bytes.toString('utf8');
    // A byte order mark is no part of the text (fetch's text() drops it too; RFC 8259 8.1 lets JSON readers ignore it).
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  /**
   * The body parsed as JSON; invalid JSON is a 400 naming the problem. A body of another declared type
   * (`text/plain`, a form) is a 415 saying which, unread, and so is a body with no Content-Type (its bytes
   * read, so that none at all is the empty body's 400): those are what a page of another site may send without a
   * CORS preflight (a Blob or ArrayBuffer of no type goes without one), so a JSON API that read them
   * would take cross-site requests.
   * `application/json` or a `+json` type (`application/merge-patch+json`) is read.
   */
  async json<T = unknown>(): Promise<T> {
    const type = this.contentType;
    if (type !== '' && !JSON_TYPE.test(type)) {
      const hint = type === FORM_TYPE ? ' Read a form with form().' : '';
      throw new UnsupportedMediaTypeHttpError(`The request body is ${type}, not JSON (application/json).${hint}`);
    }
    // RFC 8259 8.1: JSON is UTF-8. A body declared latin1 is most often UTF-8 mislabelled, which read as windows-1252 would be other text unseen (`Ã©`): a 415, as body-parser answers, unread.
    const charset = declaredCharset(firstHeaderValue(this.headers['content-type']));
    const encoding = charset === undefined ? undefined : encodingOf(charset);
    if (charset !== undefined && encoding === undefined) throw unknownCharset(charset);
    if (encoding !== undefined && !JSON_ENCODINGS.has(encoding)) throw new UnsupportedMediaTypeHttpError(`The request body's charset "${charset}" is not one JSON is sent in; send it as UTF-8 (RFC 8259).`);
    if (type === '') {
      // Its bytes read first, so that no body at all is the empty body's 400 below (an embedder's request may
      // stream one of no declared length); not decoded, so that a body that is no UTF-8 text is this 415 too.
      if ((await this.bytes()).length > 0) throw new UnsupportedMediaTypeHttpError('The request body has no Content-Type; send it as application/json.');
    }
    const text = await this.text();
    // JSON.parse would say "Unexpected end of JSON input", which reads as a body cut short, not as none sent.
    // JSON's white space only (RFC 8259 2): trim() takes a no-break space too, which is a malformed body, not an empty one.
    if (JSON_WHITE_SPACE.test(text)) throw new MalformedRequestError('The request body is empty; JSON was expected.');
    try {
      return JSON.parse(text) as T;
    } catch (error) {
      throw new MalformedRequestError(`Malformed JSON body: ${(error as Error).message}.`, { cause: error });
    }
  }

  /**
   * The body of an HTML form (`application/x-www-form-urlencoded`, or no Content-Type), read as the
   * query is: `+` is a space, `a=1&a=2` gives `getAll('a')`, `a[]=1` is the key `a[]`. A body of
   * another type is a 415 saying which; multipart/form-data needs a multipart parser over bytes().
   * More than `maxFields` fields (default 1000, as node's querystring and PHP's max_input_vars) is a
   * 400: a 1 MiB body of `a&a&...` would otherwise be half a million entries.
   */
  async form(options: { maxFields?: number } = {}): Promise<URLSearchParams> {
    const type = this.contentType;
    if (type !== '' && type !== FORM_TYPE) {
      const hint = type === 'multipart/form-data' ? ' Read a multipart body with bytes() and a multipart parser.' : '';
      throw new UnsupportedMediaTypeHttpError(`The request body is ${type}, not a form (${FORM_TYPE}).${hint}`);
    }
    const text = await this.text();
    const maxFields = options.maxFields ?? DEFAULT_MAX_FORM_FIELDS;
    let fields = text === '' ? 0 : 1;
    for (let at = text.indexOf('&'); at !== -1 && fields <= maxFields; at = text.indexOf('&', at + 1)) fields++;
    if (fields > maxFields) throw new MalformedRequestError(`The form has more than ${maxFields} fields.`);
    // URLSearchParams reads escapes as UTF-8: in a form declared ISO-8859-1 (Apache HttpClient's), `caf%E9` would be `caf\uFFFD` unseen.
    const charset = declaredCharset(firstHeaderValue(this.headers['content-type']));
    if (charset !== undefined && encodingOf(charset) !== 'utf-8') return formInCharset(text, charset);
    return new URLSearchParams(text);
  }

  async #readBody(): Promise<Buffer> {
    const source = this.#bodySource;
    this.#bodySource = null;
    const limit = this.#bodyLimit;
    const declared = Number(firstHeaderValue(this.headers['content-length']) ?? Number.NaN);
    if (declared > limit) throw tooLarge(limit);
    // node:http undoes chunked only: the bytes of another coding (gzip, chunked) would pass for the body.
    // inject()'s request says what a client would have sent, and is answered as the server answers that; a body
    // an embedder gives Request.create() is the body, whatever Transfer-Encoding its headers name.
    const unsupported = this.#sentByClient || source instanceof IncomingMessage ? unsupportedTransferCoding(this.headers['transfer-encoding']) : undefined;
    if (source === null) {
      if (unsupported !== undefined) throw unsupported;
      return Buffer.alloc(0);
    }
    // Aborted (the response timeout, the client gone): what node has done with the body since (drained
    // it unread, once the answer went out) is no body of the client's; the read fails with the reason.
    if (this.#abort?.signal.aborted === true) throw this.#abort.signal.reason;
    if (unsupported !== undefined) throw unsupported;
    this.#beforeBodyRead?.();
    if (typeof source === 'string') return checkSize(Buffer.from(source), limit);
    if (source instanceof Uint8Array) return checkSize(Buffer.from(source.buffer, source.byteOffset, source.byteLength), limit);
    const chunks: Buffer[] = [];
    let size = 0;
    // Destroying a node:http request cuts its socket before the 413 is written: leave it open, the server closes the connection after the answer.
    const fromSocket = source instanceof IncomingMessage;
    // node:http drains a body nobody reads once the response has finished: read first after that, it
    // would come back empty or cut short, silently. Only a body never declared (none, or of length 0) is read as what it is.
    if (fromSocket && this.#response?.writableFinished === true && declaresBody(source)) {
      throw new Error('The request body is read after the response was sent: node:http discards a body nobody reads once the answer is out; read it before answering (await request.bytes(), text() or json()).');
    }
    if (fromSocket) cutBodyWhenConnectionEnds(source, this.#response);
    try {
      for await (const chunk of fromSocket ? source.iterator({ destroyOnReturn: false }) : source) {
        const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        size += buffer.byteLength;
        if (size > limit) {
          if (!fromSocket) (source as { destroy?: () => void }).destroy?.();
          throw tooLarge(limit);
        }
        chunks.push(buffer);
      }
    } catch (error) {
      // The server answered without the body (its response timeout), and ended its reading so.
      if (error instanceof ResponseTimeoutError) throw error;
      if (fromSocket && !source.complete && !(error instanceof PayloadTooLargeHttpError)) {
        // The server cut the body with an answer of its own, and said why on the connection: it took too
        // long (a 408, as node:http answers it), or node's parser refused it (a malformed chunk: a 400).
        const cut = serverCut(source, error);
        if (cut !== undefined) throw cut;
        // Cut when its connection ended after the response (see cutBodyWhenConnectionEnds), by either side.
        if (error instanceof MalformedRequestError) throw error;
        // A client that goes away mid-body made the mistake: a 400, not a server failure.
        throw new MalformedRequestError('The client closed the connection before the whole body was sent.', { cause: error });
      }
      throw error;
    }
    return Buffer.concat(chunks, size);
  }

  /** The address and port the request arrived at. */
  #local(): { address: string | undefined; port: number | undefined } {
    const socket = this.#socket;
    if (socket !== undefined) {
      this.#localAddress = socket.localAddress;
      this.#localPort = socket.localPort;
      this.#socket = undefined;
    }
    return { address: this.#localAddress, port: this.#localPort };
  }

  #resolveHttpHost(): { host: string; port: number } {
    if (this.#httpHost !== undefined) return this.#httpHost;
    if (this.#rawHeaders !== undefined) assertSingleHost(this.#rawHeaders);
    const hostHeader = singleHostHeader(this.headers.host);
    let raw: string | undefined;
    let port: number | undefined;
    if (this.#trustProxy !== NO_TRUST && this.isFromTrustedProxy()) {
      raw = firstForwardedValue(this.headers['x-forwarded-host']);
      const forwarded = firstForwardedValue(this.headers['x-forwarded-port']);
      // One rule for every value that is no port (text, 0, 99999, and what Number() reads as one: 0x1F90, 1e3, +80): ignored, the Host's or the scheme's port counts.
      const forwardedPort = forwarded !== undefined && PORT_DIGITS.test(forwarded) ? Number(forwarded) : 0;
      if (forwardedPort > 0 && forwardedPort <= 65535) port = forwardedPort;
    }
    if (raw === undefined && this.url.charCodeAt(0) !== 47 /* / */) {
      // RFC 9112 (3.2.2): the authority of an absolute-form target is the host, the Host header is ignored
      // (though a bad one is still a 400, 3.2). The scheme stays the connection's: a target cannot make it secure.
      raw = this.#absoluteFormAuthority();
      if (raw !== undefined && hostHeader) parseHost(hostHeader);
    }
    raw ??= hostHeader;
    // The address the request arrived at (no Host: HTTP/1.0) is the server's own, not the client's to choose: never untrusted.
    let named = true;
    if (!raw) {
      const { address = 'localhost', port: localPort } = this.#local();
      raw = ownHost(address);
      port ??= localPort;
      named = false;
    }
    const parsed = parseHost(raw);
    if (named && this.#trustHost !== null && !this.#trustHost(parsed.host)) throw new UntrustedHostError(parsed.host);
    port ??= parsed.port ?? (this.scheme === 'https' ? 443 : 80);
    return (this.#httpHost = { host: parsed.host, port });
  }

  /** `a.test:8080` of `http://a.test:8080/x`, as sent; undefined for `*`. */
  #absoluteFormAuthority(): string | undefined {
    // A refused target names no host to trust: its error, rather than the host's, is what the client gets.
    const targetError = this.targetError;
    if (targetError !== null) throw targetError;
    return ABSOLUTE_FORM_AUTHORITY.exec(this.url)?.[1];
  }
}

/**
 * A request's AbortController, whose `abort` listeners run with the request current whoever aborts
 * it: the client's connection closing or the response timeout (no request's context), or a signal
 * of the caller's aborted while another request was handled, whose context those listeners would
 * otherwise run in, and what they log be written for that other request. Aborted from within the
 * request (a sub-request of it included), the context stays as it is.
 */
class RequestAbortController extends AbortController {
  readonly #request: Request;

  constructor(request: Request) {
    super();
    this.#request = request;
  }

  override abort(reason?: unknown): void {
    const request = this.#request;
    const known = requestStacksOf(request);
    if (known === undefined) return super.abort(reason);
    const stacks: readonly RequestStack[] = Array.isArray(known) ? known : [known as RequestStack];
    // Current in every kernel's stack, not only the first's: an app's logger reads its own.
    const abortFrom = (i: number): void => {
      if (i === stacks.length) return super.abort(reason);
      const stack = stacks[i]!;
      if (stack.getMainRequest() === request) return abortFrom(i + 1);
      // Alone on the stack, as kernel.terminate runs it: the aborting context's requests are no part of it.
      stack.exit(() => stack.run(request, () => abortFrom(i + 1)));
    };
    abortFrom(0);
  }
}

/**
 * Aborts `request.signal` (a sub-request's: its main request's) with `reason`; nothing once it is
 * aborted (by this, the client leaving or the caller's signal it follows: the first reason stays).
 * For servers: the node adapter aborts it with the ResponseTimeoutError it answers when the
 * response timeout passes.
 */
export function abortRequest(request: Request, reason: unknown): void {
  abortOwnSignal(request, reason);
}

/**
 * Aborts `controller` with a ClientClosedError (see connectionClosedError) once the connection of `response` closes before the
 * response is finished (at once when it has already), never after. A response queued behind others
 * on its connection (pipelined) is not told of that close: the connection's own is listened to as well.
 */
function abortWhenClientLeaves(response: ServerResponse, controller: AbortController): void {
  if (response.writableFinished) return;
  const socket = response.req.socket;
  if (response.destroyed || socket.destroyed) return controller.abort(connectionClosedError(response.req));
  const closed = (): void => {
    response.off('close', closed);
    socket.off('close', closed);
    if (!response.writableFinished) controller.abort(connectionClosedError(response.req));
  };
  response.once('close', closed);
  if (response.socket === null) socket.once('close', closed);
}

/** Whether the request says it has a body: a Content-Length above 0, or a Transfer-Encoding. */
function declaresBody(message: IncomingMessage): boolean {
  const length = message.headers['content-length'];
  return message.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > 0);
}

/**
 * node:http ends a request whose connection closes (its body's reader fails) only until its response
 * has finished: a body still being read after that (a controller that answered without awaiting
 * the read), or first read then, would wait for ever once its connection is gone, cut by the client
 * leaving or by the server (Connection: close after the answer, shutdown). From the response's end
 * on, that close fails the read. Without the response, from now on: node's own listener comes first.
 */
function cutBodyWhenConnectionEnds(message: IncomingMessage, response: ServerResponse | undefined): void {
  if (message.complete) return;
  const watch = (): void => {
    // The rest came before the response finished (the usual case): nothing to cut, and no listener for its kept connection.
    if (message.complete || message.destroyed) return;
    const socket = message.socket;
    const cut = (): void => {
      if (!message.complete && !message.destroyed) message.destroy(new MalformedRequestError('The connection closed before the whole body had come, after the response was sent: read the body before answering (await request.bytes(), text() or json()).'));
    };
    if (socket.destroyed) return cut();
    socket.once('close', cut);
    // The rest came after all: a kept connection does not gather one listener per such request.
    message.once('end', () => socket.off('close', cut));
  };
  // Not before: what the server answered without the body (its response timeout, see the node adapter) gives its own reason for the cut.
  if (response === undefined || response.writableFinished) watch();
  else response.once('finish', watch);
}

/** A port as RFC 3986 writes it: digits only (at most five: a longer one is no port either). */
const PORT_DIGITS = /^\d{1,5}$/;

// Nearly every request of a process names the same Host: remember the last one checked.
let lastHost: { raw: string; host: string; port: number | undefined } | undefined;

/** Splits `host[:port]`, lower-cases the name and refuses anything that is not a valid host. */
function parseHost(raw: string): { host: string; port: number | undefined } {
  if (lastHost !== undefined && lastHost.raw === raw) return lastHost;
  let host = raw.trim().toLowerCase();
  let port: number | undefined;
  // Digits at the very end: the colons inside `[::1]`, which ends in `]`, are never taken for a port's.
  const portMatch = /:(\d*)$/.exec(host);
  if (portMatch) {
    host = host.slice(0, portMatch.index);
    if (portMatch[1] !== '') port = Number(portMatch[1]);
  }
  if (!isValidHost(host) || (port !== undefined && (port < 1 || port > 65535))) {
    throw new SuspiciousOperationError(`Invalid Host "${raw}".`);
  }
  lastHost = { raw, host, port };
  return lastHost;
}

/** RFC 9112 (3.2): a request with more than one Host header is a 400, whichever one a proxy in front believed. */
function assertSingleHost(rawHeaders: readonly string[]): void {
  let first: string | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length !== 4 || name.toLowerCase() !== 'host') continue;
    if (first !== undefined) throw severalHosts(first, rawHeaders[i + 1]!);
    first = rawHeaders[i + 1];
  }
}

/** The Host header's value; an embedder's array of several (node:http never makes one) is refused as several headers are. */
function singleHostHeader(value: string | string[] | undefined): string | undefined {
  if (!Array.isArray(value)) return value;
  if (value.length > 1) throw severalHosts(value[0]!, value[1]!);
  return value[0];
}

function severalHosts(first: string, second: string): SuspiciousOperationError {
  return new SuspiciousOperationError(`Several Host headers ("${first}", "${second}"): a request must have exactly one.`);
}

/** The `charset` parameter of a Content-Type, lower-case; undefined when none, or when the header cannot be read (its body is read as UTF-8). */
function declaredCharset(contentType: string | undefined): string | undefined {
  if (contentType === undefined || !/charset/i.test(contentType)) return undefined;
  try {
    return parseContentType(contentType).parameters.charset?.toLowerCase();
  } catch {
    return undefined;
  }
}

/** The WHATWG Encoding standard's name for a charset label (`latin1` is `windows-1252`), or undefined for one it does not know. */
function encodingOf(charset: string): string | undefined {
  // Most bodies that declare a charset declare this one (jQuery's forms, most JSON clients): no decoder made per request for it.
  if (charset === 'utf-8' || charset === 'utf8') return 'utf-8';
  try {
    return new TextDecoder(charset).encoding;
  } catch {
    return undefined;
  }
}

/** The encodings JSON text is sent in (RFC 8259 8.1: UTF-8; UTF-16 as RFC 4627 allowed, and body-parser reads). */
const JSON_ENCODINGS: ReadonlySet<string> = new Set(['utf-8', 'utf-16le', 'utf-16be']);

/** The 415 for a charset the WHATWG Encoding standard does not know (`utf-7`). */
function unknownCharset(charset: string, cause?: unknown): UnsupportedMediaTypeHttpError {
  return new UnsupportedMediaTypeHttpError(`The request body's charset "${charset}" is not one this server can decode; send it as UTF-8.`, cause === undefined ? undefined : { cause });
}

/** Bytes as text in a charset of the WHATWG Encoding standard (`latin1` is windows-1252, as browsers read it); a byte order mark of that charset is left out. */
function decodeText(bytes: Buffer, charset: string): string {
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset, { fatal: true });
  } catch (error) {
    throw unknownCharset(charset, error);
  }
  // node 20.18.3 and 22.13.0 on decode windows-1252 as ISO-8859-1 (nodejs/node#60888): 0x80 would be U+0080, not €.
  if (decoder.encoding === 'windows-1252') return decodeWindows1252(bytes);
  // A UTF-16 body's byte order mark says its byte order (RFC 2781 3.2, as the WHATWG decode algorithm reads it): Java's "UTF-16" is big-endian, where TextDecoder's utf-16 is little-endian.
  if (decoder.encoding === 'utf-16le' || decoder.encoding === 'utf-16be') {
    const marked = bytes[0] === 0xfe && bytes[1] === 0xff ? 'utf-16be' : bytes[0] === 0xff && bytes[1] === 0xfe ? 'utf-16le' : decoder.encoding;
    if (marked !== decoder.encoding) decoder = new TextDecoder(marked, { fatal: true });
  }
  try {
    return decoder.decode(bytes);
  } catch (error) {
    throw new MalformedRequestError(`The request body is not valid ${decoder.encoding} text (its Content-Type says charset=${charset}).`, { cause: error });
  }
}

/** A form's fields, its escapes read as bytes in `charset` (a run of them at once: a character may take several); `+` is a space, as URLSearchParams reads it. */
function formInCharset(text: string, charset: string): URLSearchParams {
  const decode = (part: string): string => part.replace(/\+/g, ' ').replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => decodeText(Buffer.from(run.replace(/%/g, ''), 'hex'), charset));
  const form = new URLSearchParams();
  for (const field of text.split('&')) {
    if (field === '') continue;
    const equals = field.indexOf('=');
    form.append(decode(equals === -1 ? field : field.slice(0, equals)), equals === -1 ? '' : decode(field.slice(equals + 1)));
  }
  return form;
}

/** What windows-1252 has at 0x80-0x9F (the WHATWG index; the five it leaves free are the C1 controls there, as ISO-8859-1's). */
const WINDOWS_1252_C1 = '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

/** Bytes as windows-1252 text: ISO-8859-1 but for 0x80-0x9F. Every byte is a character, so no body is invalid in it. */
function decodeWindows1252(bytes: Buffer): string {
  return bytes.toString('latin1').replace(/[\x80-\x9f]/g, (character) => WINDOWS_1252_C1[character.charCodeAt(0) - 0x80]!);
}

function firstHeaderValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The first value of an X-Forwarded-Proto/-Host/-Port list (`https, http`: each proxy of a chain
 * appends its own, the first is the client's side), trimmed; undefined when empty.
 */
function firstForwardedValue(value: string | string[] | undefined): string | undefined {
  return firstHeaderValue(value)?.split(',')[0]!.trim() || undefined;
}

/**
 * The host a request that names none (HTTP/1.0 without Host) is for: the address it arrived at, the
 * server's own (RFC 9112 3.3), IPv6 in brackets. A link-local one's zone (`fe80::1%eth0`) is left
 * out: it names an interface of this machine, nothing to anyone a URL is written for, and no host
 * has one (RFC 6874's `%25eth0` is read by no browser, nor by WHATWG's URL).
 */
function ownHost(address: string): string {
  const ip = stripMapped(address);
  if (isIP(ip) !== 6) return ip;
  const zone = ip.indexOf('%');
  return `[${zone === -1 ? ip : ip.slice(0, zone)}]`;
}

/** The path of a target that does not start with `/`: `*` (asterisk-form) or a URL (absolute-form, as sent to proxies); why it is refused otherwise. */
function nonOriginPath(target: string, method: string): string | MalformedRequestError {
  if (target === '*') {
    // RFC 9112 3.2.4: the asterisk-form is only used for a server-wide OPTIONS request.
    if (method === 'OPTIONS') return '*';
    return new MalformedRequestError(`Invalid request target "*" for ${method}: "*" (asking about the server itself) is for OPTIONS only; name a path such as "/".`);
  }
  const authority = ABSOLUTE_FORM_AUTHORITY.exec(target);
  // RFC 9110 4.2.4: userinfo in a target is an error (`http://bank.test@evil.test/` passes evil.test
  // off as bank.test), and the message, as every place the refused target is shown, leaves it out.
  if (authority !== null && authority[1].includes('@')) {
    return new MalformedRequestError(`Invalid request target "${withoutUserinfo(target)}": a request target names no user or password (RFC 9110 4.2.4); they are left out here.`);
  }
  // A server is asked for http and https URLs only (RFC 9112 3.2.2); `ws://` or `foo://` would name a host all the same.
  if (authority !== null && !HTTP_URL.test(target)) return new MalformedRequestError(`Invalid request target "${target}": an absolute-form target is an http or https URL.`);
  if (authority === null || !URL.canParse(target)) return new MalformedRequestError(`Invalid request target "${target}".`);
  // RFC 9110 (4.2.1): an http URI with an empty host is invalid; it is not for the Host header to fill in.
  if (authority[1] === '') return new MalformedRequestError(`Invalid request target "${target}": it names no host.`);
  // RFC 9112 3.2.4: OPTIONS on a URL with an empty path and no query (`http://host`, not `http://host/`) is
  // the absolute-form of OPTIONS *, which the last proxy would have forwarded as `*`.
  if (method === 'OPTIONS' && authority[0].length === target.length) return '*';
  // The path as sent, as for an origin-form target: `new URL()` would resolve dot segments (`%2e%2e` too),
  // turn `\` into `/` and re-encode, so one request would name another path than its origin-form twin.
  const rest = target.slice(authority[0].length);
  const end = rest.search(/[?#]/);
  const path = end === -1 ? rest : rest.slice(0, end);
  return path === '' ? '/' : path;
}

/** An http or https URL whose authority has a user or password, or an empty one (`http://@a.test/`). */
const USERINFO_GIVEN = /^https?:\/\/[^/?#]*@/i;

/** `http://a.test/x` of `http://user:password@a.test/x`: a URL without the userinfo of its authority. */
function withoutUserinfo(target: string): string {
  return target.replace(USERINFO, '$1');
}

/**
 * A path given to create() as a client puts it on the wire, as `new URL()` does for an absolute
 * one: a leading slash, no fragment, bytes outside printable ASCII percent-encoded as UTF-8.
 * Anything else (encodings, dot segments) is left as given.
 */
function originForm(uri: string): string {
  const hash = uri.indexOf('#');
  let target = hash === -1 ? uri : uri.slice(0, hash);
  if (target.charCodeAt(0) !== 47 /* / */ && target !== '*') target = `/${target}`;
  return target.replace(/[^\x21-\x7e]+/g, (run) => Array.from(Buffer.from(run), (byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
}

function tooLarge(limit: number): PayloadTooLargeHttpError {
  return new PayloadTooLargeHttpError(`The request body is larger than the limit of ${limit} bytes.`);
}

function checkSize(buffer: Buffer, limit: number): Buffer {
  if (buffer.byteLength > limit) throw tooLarge(limit);
  return buffer;
}
