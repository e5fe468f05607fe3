import { STATUS_CODES } from 'node:http';
import type { Readable } from 'node:stream';
import { isDate } from 'node:util/types';
import { create as contentDisposition } from 'content-disposition';
import { stringifySetCookie } from 'cookie';
import { describeValue } from './describe-value.js';
import { isNameValueObject, isPlainObject } from './name-value-object.js';
import { DISCARDED, DROPPED, HEAD_BODY_LENGTHS, checkResponseBody, destroyBody } from './response-body.js';
import { secureCookies, secureIfHttps } from './secure-cookies.js';
import { setOwn } from './set-own.js';
import type { Request } from './request.js';

/** The statuses Symfony's `Response::isRedirect()` names: the client is sent to the Location. */
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([201, 301, 302, 303, 307, 308]);

/** What a response body may be: text, bytes, a stream, or nothing. */
export type ResponseBody = string | Uint8Array | Readable | null;

/** Header values as given to a Response; numbers are turned into strings. */
export type HeaderInit = Record<string, string | number | readonly string[] | undefined>;

/** Attributes of a cookie set with `Response.setCookie()`; the defaults are those of Symfony's `Cookie::create()`. */
export interface CookieOptions {
  /** Seconds until it expires (`Max-Age`); with neither this nor `expires`, it lasts the browser session. */
  maxAge?: number;
  expires?: Date;
  /** Default `/`. */
  path?: string;
  domain?: string;
  /**
   * Sent only over https. Default: so when the request it answers came over https (decided by
   * `prepare()`, which the kernel's ResponseListener calls), and always with `sameSite: 'none'` or
   * `partitioned`, which browsers accept only on Secure cookies.
   */
  secure?: boolean;
  /** Default true: page scripts cannot read it. */
  httpOnly?: boolean;
  /** Default `lax`. */
  sameSite?: 'lax' | 'strict' | 'none';
  partitioned?: boolean;
  priority?: 'low' | 'medium' | 'high';
}

/**
 * The stream body `prepare()` dropped, destroyed, from a response that carries none (204, 304, 205),
 * or the kernel from a HEAD's answer, or undefined: a server waits for its close before
 * `kernel.terminate`, so that what its clean-up logs is in the profile.
 */
export function discardedBody(response: Response): Readable | undefined {
  return DISCARDED.get(response);
}

/**
 * The stream bodies the kernel dropped and destroyed while handling `request` and its sub-requests (never terminated themselves), never sent
 * (a response a listener replaced, or set before its dispatch failed), for a server of your own to say how they ended (the server and inject()
 * log one that failed at ERROR). A sub-request's main request is known on the request stack, or, without request context, along duplicate()'s steps
 * (a Request.create() sub-request's are named by droppedBodies() of itself, when no server of the package, nor inject(), given a logger drives its kernel).
 */
export function droppedBodies(request: object): readonly Readable[] {
  return DROPPED.get(request) ?? [];
}

/**
 * The byte length of the text or bytes body the kernel took from a main HEAD's answer, or undefined (none, or empty):
 * what its GET's Content-Length is where Transfer-Encoding kept the header off (HTTP/1.1 chunks the
 * GET), for a server that cannot chunk it, which sends that length, as for the GET (HTTP/1.0, RFC 9112 6.1).
 */
export function headBodyLength(response: Response): number | undefined {
  return HEAD_BODY_LENGTHS.get(response);
}

/** An HTTP response. Header names are kept lower-case. */
export class Response {
  #status: number;
  body: ResponseBody;
  /** Lower-case names; `set-cookie` may hold several values. */
  headers: Record<string, string | string[]>;

  constructor(body: ResponseBody = '', status = 200, headers?: HeaderInit) {
    // Refused here, at the line that made it, rather than when the server finds it cannot send it.
    this.body = checkResponseBody(body);
    this.#status = checkStatus(status);
    this.headers = {};
    if (headers !== undefined) {
      checkHeaderInit(headers);
      for (const name in headers) {
        const value = headers[name];
        if (typeof value === 'string') setOwn(this.headers, name.toLowerCase(), value);
        else if (value !== undefined) setOwn(this.headers, name.toLowerCase(), headerValue(name, value));
      }
    }
  }

  /** A JSON response (`application/json`); a value JSON cannot encode (undefined, a function, a symbol) is a TypeError. */
  static json(data: unknown, status = 200, headers?: HeaderInit): Response {
    const text: string | undefined = JSON.stringify(data);
    // JSON.stringify gives undefined for these, which would make a 200 application/json with an empty body.
    if (text === undefined) throw new TypeError(`Response.json() got ${typeof data === 'symbol' ? 'a symbol' : describeValue(data)}, which JSON encodes as nothing (a toJSON() may give undefined); pass null for an empty value.`);
    const response = new Response(text, status, headers);
    response.headers['content-type'] ??= 'application/json';
    return response;
  }

  /**
   * A redirect (302 by default) to `url`, with a status that is one (301, 302, 303, 307, 308, or
   * 201 Created, as Symfony's RedirectResponse allows). What a Location cannot carry is
   * percent-encoded as UTF-8 (`/é` → `/%C3%A9`; an absolute URL's host in another script in punycode);
   * the rest goes as given. A `URL` object is taken as its `href`, as Fetch's `Response.redirect()` takes it.
   */
  static redirect(url: string | URL, status = 302, headers?: HeaderInit): Response {
    if (url instanceof URL) url = url.href;
    if (!REDIRECT_STATUSES.has(status)) throw new RangeError(`A redirect's status is 301, 302, 303, 307, 308 or 201, not ${typeof status === 'number' ? status : describeValue(status)}.`);
    if (typeof url !== 'string' || url === '') throw new TypeError(`A redirect needs a URL to go to, not ${url === '' ? 'an empty one' : describeValue(url)}.`);
    // node:http would refuse such a Location only when the response is sent, far from the call that made it.
    if (CONTROL.test(url)) throw new TypeError(`A redirect's URL has no control characters (CR, LF, tab...), not ${JSON.stringify(url)}.`);
    const response = new Response('', status, headers);
    response.headers.location = asciiLocation(url);
    return response;
  }

  /** The status code: a whole number from 100 to 599 (anything else is a RangeError, as in Symfony's `setStatusCode()`). */
  get status(): number {
    return this.#status;
  }

  set status(status: number) {
    this.#status = checkStatus(status);
  }

  /** The reason phrase of the status (`Not Found`). */
  get statusText(): string {
    return STATUS_CODES[this.status] ?? 'Unknown Status';
  }

  /** Sets a header, replacing any earlier value; a value the constructor would refuse is a TypeError here too. */
  setHeader(name: string, value: string | number | readonly string[]): this {
    setOwn(this.headers, headerName(name), typeof value === 'string' ? value : headerValue(name, value));
    return this;
  }

  /** Adds a value to a header (`set-cookie`, `vary`...); a value that is no string is a TypeError. */
  appendHeader(name: string, value: string): this {
    const key = headerName(name);
    if (typeof value !== 'string') throw new TypeError(`A value appended to header "${name}" is a string, not ${describeValue(value)}.`);
    const current = ownHeader(this.headers, key);
    setOwn(this.headers, key, current === undefined ? value : Array.isArray(current) ? [...current, value] : [current, value]);
    return this;
  }

  /**
   * Adds a `Set-Cookie` header. The value is percent-encoded (the `cookie` package's encoding), and
   * a name that is no token, an invalid domain, path or date is a TypeError. Defaults: `Path=/`,
   * `HttpOnly`, `SameSite=Lax`, and `Secure` when the request came over https (see CookieOptions).
   */
  setCookie(name: string, value: string, options: CookieOptions = {}): this {
    checkCookieOptions(name, options);
    // `None` as the header writes it is `none` too (the cookie package reads it so): it must bring Secure, without which browsers drop the cookie.
    const sameSite = typeof options.sameSite === 'string' ? (options.sameSite.toLowerCase() as CookieOptions['sameSite']) : options.sameSite;
    const secure = options.secure ?? (sameSite === 'none' || options.partitioned === true ? true : undefined);
    const header = stringifySetCookie(name, value, { path: '/', httpOnly: true, ...options, sameSite: sameSite ?? 'lax', secure: secure === true });
    if (secure === undefined) secureIfHttps(this, header);
    return this.appendHeader('set-cookie', header);
  }

  /** Tells the browser to drop a cookie: an empty value that has expired, with the path and domain it was set with. */
  clearCookie(name: string, options: Omit<CookieOptions, 'maxAge' | 'expires'> = {}): this {
    return this.setCookie(name, '', { ...options, maxAge: 0, expires: new Date(0) });
  }

  /**
   * Sets `Content-Disposition` (Symfony's `setContentDisposition()`, Express's `res.attachment()`):
   * `attachment` to have it downloaded, `inline` to have it shown, with the file name a browser saves
   * it under. A name that is not plain ASCII goes as RFC 8187's `filename*` (UTF-8), with an ASCII
   * `filename` beside it for old clients, as node:http cannot send it as given. A name holding `/`, `\`,
   * a control character (a path, a CR/LF from user input) or half a surrogate pair is a TypeError at the call.
   */
  setContentDisposition(disposition: 'attachment' | 'inline', filename?: string): this {
    if (disposition !== 'attachment' && disposition !== 'inline') throw new TypeError(`A Content-Disposition is 'attachment' or 'inline', not ${describeValue(disposition)}.`);
    if (filename !== undefined) {
      if (typeof filename !== 'string' || filename === '') throw new TypeError(`A file name for Content-Disposition is a non-empty string, not ${filename === '' ? 'an empty one' : describeValue(filename)}.`);
      if (/[/\\]/.test(filename) || CONTROL.test(filename)) throw new TypeError(`A file name for Content-Disposition has no "/", "\\" nor control characters (a name, not a path), not ${JSON.stringify(filename)}.`);
      // encodeURIComponent(), which writes filename*, throws a URIError naming no call for half of a surrogate pair.
      if (LONE_SURROGATE.test(filename)) throw new TypeError(`A file name for Content-Disposition is well-formed UTF-16 (no half of a surrogate pair), not ${JSON.stringify(filename)}.`);
    }
    return this.setHeader('content-disposition', contentDisposition(filename, { type: disposition }));
  }

  /** The header's value; several values are joined with `, `. */
  getHeader(name: string): string | undefined {
    const value = ownHeader(this.headers, name.toLowerCase());
    return Array.isArray(value) ? value.join(', ') : value;
  }

  hasHeader(name: string): boolean {
    return ownHeader(this.headers, name.toLowerCase()) !== undefined;
  }

  removeHeader(name: string): this {
    delete this.headers[name.toLowerCase()];
    return this;
  }

  /** A 1xx status: the status is never below 100 (checkStatus()). */
  isInformational(): boolean {
    return this.status < 200;
  }

  isSuccessful(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  /** Any 3xx status (Symfony's `isRedirection()`). */
  isRedirection(): boolean {
    return this.status >= 300 && this.status < 400;
  }

  /**
   * A status that sends the client elsewhere (201, 301, 302, 303, 307, 308: not 300, 304), and,
   * with `location`, to that Location; as Symfony's `isRedirect()`.
   */
  isRedirect(location?: string): boolean {
    if (!REDIRECT_STATUSES.has(this.status)) return false;
    return location === undefined || this.getHeader('location') === location;
  }

  isClientError(): boolean {
    return this.status >= 400 && this.status < 500;
  }

  /** A 5xx status: the status is never above 599 (checkStatus()). */
  isServerError(): boolean {
    return this.status >= 500;
  }

  /** 204 and 304 (and 1xx) responses carry no body. */
  isEmpty(): boolean {
    return this.status === 204 || this.status === 304 || this.isInformational();
  }

  /** Destroys a body the response may not carry; a stream is remembered for discardedBody(). */
  #discardBody(): void {
    const body = this.body;
    if (body !== null && typeof body === 'object' && !(body instanceof Uint8Array)) DISCARDED.set(this, body);
    destroyBody(body);
  }

  /**
   * Makes the response fit the request before it is sent (Symfony's `prepare()`):
   * no body nor framing headers for 1xx/204/304, an empty body for 205, a Content-Type with charset for text,
   * Content-Length for text and bytes unless Transfer-Encoding is set (then none), `Secure` on the
   * cookies setCookie() left to the request's scheme when it is https. A HEAD's answer loses its
   * body in the kernel, once every kernel.response and kernel.finish_request listener has run (its length kept for headBodyLength(), a stream body for discardedBody()).
   */
  prepare(request: Request, charset = 'UTF-8'): this {
    const headers = this.headers;
    if (headers['set-cookie'] !== undefined) secureCookies(this, request);
    if (this.isEmpty()) {
      // A stream dropped here would never be read to its end: its file or socket would stay open.
      this.#discardBody();
      this.body = null;
      delete headers['content-type'];
      delete headers['content-length'];
      delete headers['transfer-encoding'];
      return this;
    }
    if (this.status === 205) {
      // RFC 9110 15.3.6: no content, but a body length (0) unlike 204, so the connection can go on.
      this.#discardBody();
      this.body = null;
      delete headers['content-type'];
      delete headers['transfer-encoding'];
      headers['content-length'] = '0';
      return this;
    }
    // RFC 9112 6.2: never both; the chunked framing wins, as in Symfony.
    if (headers['transfer-encoding'] !== undefined) delete headers['content-length'];
    const body = this.body;
    if (typeof body === 'string') {
      const type = headers['content-type'];
      if (type === undefined) headers['content-type'] = `text/html; charset=${charset}`;
      // Parameter names are case-insensitive (RFC 9110 5.6.6): `Charset=` is a charset too; the regex runs only where one is about to be added.
      else if (typeof type === 'string' && type.startsWith('text/') && !type.includes('charset') && !/charset/i.test(type)) headers['content-type'] = `${type}; charset=${charset}`;
      if (headers['transfer-encoding'] === undefined && !keepsHeadLength(body.length, headers, request)) headers['content-length'] = String(Buffer.byteLength(body));
    } else if (body instanceof Uint8Array) {
      if (headers['transfer-encoding'] === undefined && !keepsHeadLength(body.byteLength, headers, request)) headers['content-length'] = String(body.byteLength);
    } else if (body === null && headers['content-length'] === undefined) {
      headers['content-length'] = '0';
    }
    return this;
  }
}

const COOKIE_OPTIONS: readonly string[] = ['maxAge', 'expires', 'path', 'domain', 'secure', 'httpOnly', 'sameSite', 'partitioned', 'priority'];

/**
 * Refuses cookie options that are no plain object (a Map would be read as none) or hold a key
 * setCookie() does not know: a typo (`httponly: false`, `maxage`) would be dropped without a word,
 * leaving the default on or making a session cookie of one meant to last.
 */
function checkCookieOptions(name: unknown, options: unknown): void {
  if (!isPlainObject(options)) throw new TypeError(`The options of cookie "${String(name)}" are a plain object ({ maxAge: 3600 }), not ${describeValue(options)}.`);
  for (const key of Object.keys(options)) {
    if (!COOKIE_OPTIONS.includes(key)) throw new TypeError(`Cookie "${String(name)}" has no option "${key}"; its options are ${COOKIE_OPTIONS.join(', ')}.`);
  }
  // The cookie package would say only "option maxAge is invalid: 1.5", naming neither the cookie nor what is expected.
  const { maxAge, expires } = options as CookieOptions;
  // A safe integer: one beyond (1e21) is written Max-Age=1e+21, which browsers ignore, making a session cookie of a "forever" one.
  if (maxAge !== undefined && !Number.isSafeInteger(maxAge)) {
    const why = Number.isInteger(maxAge) ? ', too large to be written in digits' : " (Express's res.cookie() counts it in milliseconds)";
    throw new TypeError(`The maxAge of cookie "${String(name)}" is a whole number of seconds, not ${describeValue(maxAge)}${why}.`);
  }
  // A falsy one (0, null) is no Expires, as the cookie package reads it and Express documents 0: a session cookie, as it always was here.
  if (expires && !(isDate(expires) && !Number.isNaN(expires.getTime()))) {
    throw new TypeError(`The expires of cookie "${String(name)}" is a valid Date (new Date(Date.now() + 86_400_000) for a day), not ${isDate(expires) ? 'an invalid Date' : describeValue(expires)}.`);
  }
}

/**
 * Whether an empty body keeps the Content-Length given with it: a HEAD's answer made without its
 * body says the length the GET's would have (as Symfony's prepare() keeps it), not 0.
 */
function keepsHeadLength(length: number, headers: Record<string, string | string[]>, request: Request): boolean {
  return length === 0 && headers['content-length'] !== undefined && request.method === 'HEAD';
}

/** `status` when it is a status code (a whole number from 100 to 599); else a RangeError, before any client sees a status line that is none. */
function checkStatus(status: unknown): number {
  if (typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 599) return status;
  throw new RangeError(`A response status is a whole number from 100 to 599, not ${typeof status === 'number' ? status : describeValue(status)}.`);
}

// A header's value, never a member of Object.prototype (`constructor`, `__proto__`: header names like any other).
function ownHeader(headers: Response['headers'], key: string): string | string[] | undefined {
  return Object.hasOwn(headers, key) ? headers[key] : undefined;
}

/** `name` lower-cased, as headers are stored; a TypeError when it is no string or empty (setHeader(undefined, ...) would set a header named "undefined"). */
function headerName(name: unknown): string {
  if (typeof name !== 'string' || name === '') throw new TypeError(`A header name is a non-empty string, not ${describeValue(name)}.`);
  return name.toLowerCase();
}

/** A header value given as a number or a list, as stored; a TypeError for any other (a string is stored as it is). */
function headerValue(name: string, value: unknown): string | string[] {
  if (typeof value === 'number') return String(value);
  if (!Array.isArray(value)) throw new TypeError(`The value of header "${name}" is a string, a number or a list of strings, not ${describeValue(value)}.`);
  // A loop, not every(): a closure per list-valued header (Set-Cookie, Vary) of every response.
  for (const item of value) {
    if (typeof item !== 'string') throw new TypeError(`The value of header "${name}" is a string, a number or a list of strings, not a list holding ${describeValue(item)}.`);
  }
  return [...(value as string[])];
}

/**
 * Refuses headers the constructor would misread: a `Headers` (its methods read as headers named
 * `append`, `get`...), a Map (no headers), a list of pairs or a string (headers named `0`, `1`...).
 */
function checkHeaderInit(headers: unknown): void {
  if (!isNameValueObject(headers)) {
    throw new TypeError(`The headers of a response are an object of names and values ({ 'content-type': 'text/plain' }), not ${describeValue(headers)}.`);
  }
}

const NOT_ASCII_OR_SPACE = /[ \u0080-\uffff]/;
const CONTROL = /[\u0000-\u001f\u007f]/;
/** Half of a surrogate pair: with the `u` flag a whole pair is one code point, which `\p{Cs}` does not match. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * `url` (without controls: redirect() refuses them, a CR/LF being an error to see, not one to send on
 * encoded) as a Location can carry it (RFC 3986: ASCII). node:http would send `é` as the Latin-1 byte
 * E9, which clients read as U+FFFD, and refuse `€`.
 */
function asciiLocation(url: string): string {
  if (!NOT_ASCII_OR_SPACE.test(url)) return url;
  // Only the URL parser writes a host in punycode (bücher.de → xn--bcher-kva.de).
  if (ABSOLUTE_URL.test(url)) {
    try {
      return new URL(url).href;
    } catch {
      // Not a URL the parser takes: encoded as a relative one.
    }
  }
  return url.replace(/[ \u0080-\uffff]+/g, (run) => Array.from(Buffer.from(run), (byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
}

const ABSOLUTE_URL = /^[a-z][a-z0-9+.-]*:/i;
