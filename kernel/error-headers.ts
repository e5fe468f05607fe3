/**
 * The headers an error asks its response to carry (HttpError's `headers`: `Allow`, `Retry-After`...),
 * checked and bounded before they reach a response: an error is made anywhere, by any code, and a
 * header node:http refuses to write turns the page into a bare 500, while one written unchecked could
 * split the response.
 */

import { setOwn } from './set-own.js';

/**
 * Most headers of an error kept. The ones errors carry are a handful (`Allow`, `Retry-After`,
 * `WWW-Authenticate`, a `Link` or two); 32 leaves room for any real use.
 */
export const MAX_ERROR_HEADERS = 32;

/**
 * Most bytes the kept headers take on the wire (`name: value\r\n` each). A response's whole head has to
 * fit a proxy's buffer (nginx's proxy_buffer_size is one page, 4 or 8 KiB, then a 502) and a
 * client's limit (undici and node:http: 16 KiB); the page adds its own (CSP, Vary, up to 2 KiB
 * of X-Debug-Exception), so the error's own stay within 4 KiB and the head within 8 KiB.
 */
export const MAX_ERROR_HEADER_BYTES = 4096;

/** How many of the dropped headers a report names; the others are counted. */
const MAX_REPORTED = 10;
/** Of a dropped header's name in a report (a name may be what was wrong: megabytes long). */
const MAX_REPORTED_NAME = 100;

/** A header name node:http writes (an RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value node:http writes: no CR, LF or other control character, nothing beyond Latin-1. */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Headers about a body: an error's response has a body of its own, framed by its own. */
const BODY_HEADERS: ReadonlySet<string> = new Set(['content-length', 'transfer-encoding', 'content-encoding', 'content-type']);

/** Why an error's header was left out. */
export type DroppedHeaderReason = 'invalid name' | 'invalid value' | 'body header' | 'too many' | 'too large' | 'unreadable';

/** One header left out, named as far as it is safe to log (cut to 100 characters). */
export interface DroppedHeader {
  name: string;
  reason: DroppedHeaderReason;
}

/** The headers kept and what was left out. */
export interface ErrorHeaders {
  /** Named as the error names them; one name per header whatever its case. */
  headers: Record<string, string>;
  /** The first 10 headers left out, in order. */
  dropped: DroppedHeader[];
  /** How many were left out in all. */
  droppedCount: number;
}

/**
 * Checks an error's `headers` (an object or a Map; a string value, a number, or strings joined with
 * `, `) and keeps, in order, those with a token name and a value node:http writes, leaving out the
 * ones about the body and those past MAX_ERROR_HEADERS or MAX_ERROR_HEADER_BYTES. A later header of
 * the same name replaces an earlier one, as `Response.setHeader` does. Never throws: a getter or
 * Proxy trap that throws leaves the rest unread.
 */
export function boundErrorHeaders(source: unknown): ErrorHeaders {
  const result: ErrorHeaders = { headers: {}, dropped: [], droppedCount: 0 };
  if (source === null || typeof source !== 'object') return result;
  const drop = (name: string, reason: DroppedHeaderReason): void => {
    if (result.droppedCount++ < MAX_REPORTED) result.dropped.push({ name: name.length > MAX_REPORTED_NAME ? `${name.slice(0, MAX_REPORTED_NAME)}…` : name, reason });
  };
  const headers = result.headers;
  // Lower-case name -> the name as given, kept: a later header of the same name replaces it.
  const given = new Map<string, string>();
  let bytes = 0;
  const keep = (name: string, raw: unknown): void => {
    if (raw === undefined) return;
    if (!TOKEN.test(name)) return drop(name, 'invalid name');
    const lower = name.toLowerCase();
    if (BODY_HEADERS.has(lower)) return drop(name, 'body header');
    const value = valueOf(raw);
    const previous = given.get(lower);
    const freed = previous === undefined ? 0 : lineBytes(previous, headers[previous]!);
    // The length first: the value check is not run on megabytes.
    if (value !== null && lineBytes(name, value) > MAX_ERROR_HEADER_BYTES - bytes + freed) return drop(name, 'too large');
    if (value === null || !FIELD_VALUE.test(value)) return drop(name, 'invalid value');
    if (previous === undefined && given.size === MAX_ERROR_HEADERS) return drop(name, 'too many');
    if (previous !== undefined) delete headers[previous];
    bytes += lineBytes(name, value) - freed;
    given.set(lower, name);
    // setOwn: `__proto__` (in any case) is a token and a header Response sends; assigned, it would set the record's prototype.
    setOwn(headers, name, value);
  };
  try {
    const entries: Iterable<[unknown, unknown]> | string[] = source instanceof Map ? source : Object.keys(source);
    for (const entry of entries) {
      const name = typeof entry === 'string' ? entry : entry[0];
      if (typeof name !== 'string') continue;
      try {
        keep(name, typeof entry === 'string' ? (source as Record<string, unknown>)[name] : entry[1]);
      } catch {
        // A getter, or an array value whose traps throw.
        drop(name, 'unreadable');
      }
    }
  } catch {
    // A Proxy whose ownKeys trap throws: what was read is kept.
    drop('(the rest)', 'unreadable');
  }
  return result;
}

/** What a header takes in a response's head: `name: value` and CRLF (a valid value is Latin-1, a byte per character). */
function lineBytes(name: string, value: string): number {
  return name.length + value.length + 4;
}

/** The header value as text, or null for a value a header cannot have (an object, a boolean...). */
function valueOf(raw: unknown): string | null {
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'number') return Number.isFinite(raw) ? String(raw) : null;
  if (Array.isArray(raw) && raw.every((part) => typeof part === 'string')) return raw.join(', ');
  return null;
}
