// What startServers (or node's parser, or node:http before any listener) refuses in a request's head, in the order
// the server meets the checks, for inject(), whose request no socket carries: the first refusal is the answer.

import { METHODS, type IncomingHttpHeaders } from 'node:http';
import { CHUNKED_NOT_LAST, CHUNKED_THEN_MORE, transferEncodingRefusal } from '../../kernel/transfer-coding.js';
import { DEFAULT_LIMITS, expectsOnlyContinue, headTooLarge, MAX_HEADER_FIELDS, MISSING_HOST, NO_TUNNEL, ONLY_CONTINUE, targetTooLarge, TOO_MANY_FIELDS } from './listen.js';

/** The methods node's parser reads, as written (upper case): another (`get`, `FOO`) it refuses before any header. */
const PARSED_METHODS: ReadonlySet<string> = new Set(METHODS);
/** node's parser's reason for a method it does not know. */
export const INVALID_METHOD = 'Invalid method encountered.';
/** RTSP's methods, which node's parser reads, then refuses in an HTTP request with a reason of its own. */
const RTSP_METHODS: ReadonlySet<string> = new Set(['DESCRIBE', 'ANNOUNCE', 'SETUP', 'PLAY', 'PAUSE', 'TEARDOWN', 'GET_PARAMETER', 'SET_PARAMETER', 'REDIRECT', 'RECORD', 'FLUSH']);
const RTSP_METHOD = 'Invalid method for HTTP/x.x request.';
/** node's parser's reason for HTTP/2's preface method, PRI, in an HTTP/1.1 request line (inject()'s). */
const PRI_NOT_PREFACE = 'Expected HTTP/2 Connection Preface.';

/**
 * The method a client sends for `method` given to it: upper-cased, as node:http's request() and Fastify's inject() send
 * every method (`get`, `patch` as GET and PATCH; fetch only its six, DELETE, GET, HEAD, OPTIONS, POST and PUT): a test
 * written `{ method: 'patch' }` gets what a node client gets. One node's parser does not know (`FOO`) is its 400 all the same.
 */
export function sentMethod(method: string): string {
  return method.toUpperCase();
}

/** A header name as node's parser reads it (RFC 9110 5.6.2's token); another is its 'Invalid header token.'. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A character node's parser refuses in a header value (controls but HTAB, and DEL): its 'Invalid header value char.'. */
const BAD_VALUE_CHAR = /[\x00-\x08\x0a-\x1f\x7f]/;
/** A Content-Length as node's parser reads it: digits, spaces and tabs before them, spaces after them. */
const LENGTH_DIGITS = /^[ \t]*(\d*) *$/;
/** The largest Content-Length node's parser holds (a 64-bit count). */
const MAX_LENGTH = 2n ** 64n - 1n;
/** node's parser's reasons, by the line it stops at. */
const INVALID_TOKEN = 'Invalid header token.';
const INVALID_VALUE_CHAR = 'Invalid header value char.';
const EMPTY_LENGTH = 'Empty Content-Length.';
const INVALID_LENGTH = 'Invalid character in Content-Length.';
const LENGTH_OVERFLOW = 'Content-Length overflow.';
const DUPLICATE_LENGTH = 'Duplicate Content-Length.';
const CODING_AFTER_LENGTH = 'Transfer-Encoding can\'t be present with Content-Length.';
const LENGTH_AFTER_CODING = 'Content-Length can\'t be present with Transfer-Encoding.';

/**
 * The head limit inject() reads a request against: the server's default (Limits.maxHeaderSize), as inject() knows no server's
 * limits. node's parser counts the target, each field name and each value (from its first byte that is no space nor tab to the
 * end of its line: spaces after it count) against it, and stops where the count reaches it.
 */
const HEAD_LIMIT = DEFAULT_LIMITS.maxHeaderSize;

/** A head refusal: its status, its reason, and whether its answer closes the connection. */
export interface HeadRefusal {
  status: number;
  reason: string;
  closes: boolean;
}

/**
 * The refusal the server answers a request with in its head, or undefined. `method` and `target`: as given; `headers`: the request's, folded as
 * node:http folds them; `lines`: the header lines as given (see headerLines); `framing`: the line a client adds after them to frame the body
 * that Request.create() has no header for (see framingLine). In the server's order: node's parser first (a method
 * it does not know, RTSP's and PRI with reasons of their own, which it reads first, then the first line it cannot read, see parserRefusal), then node:http's, which hands a CONNECT to the
 * server's 'connect' (refused whatever its head) and an HTTP/1.1 request with an Expect to 'checkContinue' or 'checkExpectation' (a 417
 * but for 100-continue alone), then startServers' listener: more fields than node keeps, no or an empty Host, a Transfer-Encoding that does not end with chunked.
 */
export function injectedHeadRefusal(method: string, target: string, headers: IncomingHttpHeaders, lines: ReadonlyArray<readonly [string, string]>, framing?: readonly [string, string]): HeadRefusal | undefined {
  if (!PARSED_METHODS.has(method)) return { status: 400, reason: RTSP_METHODS.has(method) ? RTSP_METHOD : method === 'PRI' ? PRI_NOT_PREFACE : INVALID_METHOD, closes: true };
  const parsed = parserRefusal(target, headers, lines, framing);
  if (parsed !== undefined) return parsed;
  if (method === 'CONNECT') return { status: 400, reason: NO_TUNNEL, closes: true };
  if (headers.expect !== undefined && !expectsOnlyContinue(headers.expect)) return { status: 417, reason: ONLY_CONTINUE, closes: false };
  if (lineCount(headers, lines) + (framing === undefined ? 0 : 1) > MAX_HEADER_FIELDS) return { status: 431, reason: TOO_MANY_FIELDS, closes: true };
  // The Host line given, the first of several as node keeps it, even beside an absolute URL, which names the host only when no Host
  // is given (as a client writes it from the URL): startServers refuses an empty Host whatever the target's form, before the kernel reads the URL's authority.
  // Spaces and tabs alone are empty, as the parser drops them.
  const host = lines.find(([name]) => name.toLowerCase() === 'host')?.[1].replace(/^[ \t]+|[ \t]+$/g, '');
  if (!(host ?? headers.host)) return { status: 400, reason: MISSING_HOST, closes: true };
  // startServers' own check, from the joined value, as listen.ts reads req.headers (the parser's refusals of it are above).
  const notChunked = transferEncodingRefusal(headers['transfer-encoding']);
  if (notChunked !== undefined) return { status: 400, reason: notChunked, closes: true };
  return undefined;
}

/**
 * What node's parser refuses in the target and these header lines, at the first it cannot read, or undefined: a target that alone
 * reaches the head limit (a 414), a head that reaches it (a 431, at the line where the count does), a name that is no token, a control
 * character in a value, a Content-Length that is empty, no number, past 64 bits, a second one or one after a Transfer-Encoding, a
 * Transfer-Encoding after a Content-Length (one with an empty value the parser takes for no coding), or one with chunked before another
 * coding. The reasons are the parser's, as startServers answers them; the order is the lines', so the first wins, as on a socket.
 */
function parserRefusal(target: string, headers: IncomingHttpHeaders, lines: ReadonlyArray<readonly [string, string]>, framing: readonly [string, string] | undefined): HeadRefusal | undefined {
  let counted = target.length;
  if (counted >= HEAD_LIMIT) return { status: 414, reason: targetTooLarge(HEAD_LIMIT), closes: true };
  // The lines Request.create() added, which a client writes too: the Host first (as undici writes it), the others
  // (Content-Length, Content-Type) after those given.
  const given = new Set(lines.map(([name]) => name.toLowerCase()));
  const added = Object.entries(headers).filter(([name, value]) => !given.has(name) && value !== undefined);
  const size = ([name, value]: [string, string | string[] | undefined]): number => (Array.isArray(value) ? value : [value ?? '']).reduce((sum, line) => sum + name.length + line.length, 0);
  for (const line of added) if (line[0] === 'host') counted += size(line);
  const refusalOf = lineReader();
  for (const [name, value] of lines) {
    const refused = refusalOf(name, value);
    if (refused !== undefined) return { status: 400, reason: refused, closes: true };
    // Counted as the line is read, after what the parser refuses in it.
    counted += name.length + value.replace(/^[ \t]+/, '').length;
    if (counted >= HEAD_LIMIT) return { status: 431, reason: headTooLarge(HEAD_LIMIT), closes: true };
  }
  for (const line of added) if (line[0] !== 'host') counted += size(line);
  if (framing !== undefined) counted += framing[0].length + framing[1].length;
  return counted >= HEAD_LIMIT ? { status: 431, reason: headTooLarge(HEAD_LIMIT), closes: true } : undefined;
}

/** What node's parser refuses in each header line, given in order, having read the ones before it (none refused), or undefined. */
function lineReader(): (name: string, value: string) => string | undefined {
  let length = false;
  let coding = false;
  let codings: string | undefined;
  return (name, value) => {
    if (!TOKEN.test(name)) return INVALID_TOKEN;
    const lower = name.toLowerCase();
    if (lower === 'content-length') {
      // Met at its name, before its value is read.
      if (length) return DUPLICATE_LENGTH;
      if (coding) return LENGTH_AFTER_CODING;
      const digits = LENGTH_DIGITS.exec(value)?.[1];
      if (digits === undefined) return INVALID_LENGTH;
      if (digits === '') return EMPTY_LENGTH;
      if (BigInt(digits) > MAX_LENGTH) return LENGTH_OVERFLOW;
      length = true;
    } else if (lower === 'transfer-encoding') {
      // Met at its name, before its value is read.
      if (length) return CODING_AFTER_LENGTH;
      if (BAD_VALUE_CHAR.test(value)) return INVALID_VALUE_CHAR;
      codings = codings === undefined ? value : `${codings}, ${value}`;
      if (CHUNKED_THEN_MORE.test(codings)) return CHUNKED_NOT_LAST;
      if (/[^ \t]/.test(value)) coding = true;
    } else if (BAD_VALUE_CHAR.test(value)) {
      return INVALID_VALUE_CHAR;
    }
    return undefined;
  };
}

/**
 * The line a client adds after the header lines given to frame a stream `body` (an async iterable) that they give no Content-Length
 * nor Transfer-Encoding for: `Transfer-Encoding: chunked`, as undici writes it (node:http too, but for a GET, HEAD, DELETE or OPTIONS).
 * The server counts it against the head limit; Request.create() adds no header for it. Undefined for another body.
 */
export function framingLine(body: unknown, lines: ReadonlyArray<readonly [string, string]>): readonly [string, string] | undefined {
  if (body === null || typeof body !== 'object' || body instanceof Uint8Array) return undefined;
  const framed = lines.some(([name]) => ['content-length', 'transfer-encoding'].includes(name.toLowerCase()));
  return framed ? undefined : ['transfer-encoding', 'chunked'];
}

/**
 * The header lines of inject()'s `headers` as a client writes them: in the order given, a list's values in its place, names as given
 * (in any case one field, as Request.create() folds them; undefined is no line). An object of lower-cased names kept only the last of
 * `Content-Length` and `content-length`, so two such lines were served.
 */
export function headerLines(headers: Readonly<Record<string, string | readonly string[] | undefined>> | undefined): Array<[string, string]> {
  const lines: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(headers ?? {})) {
    // Request.create() has refused a value that is no string, finite number nor a list of them; a number is written as it writes one.
    for (const line of Array.isArray(value) ? value : [value]) if (line !== undefined) lines.push([name, String(line)]);
  }
  return lines;
}

/** How many header lines the request would have on the wire: those given, and those Request.create() added (Host, Content-Length...). */
function lineCount(headers: IncomingHttpHeaders, lines: ReadonlyArray<readonly [string, string]>): number {
  const names = new Set(lines.map(([name]) => name.toLowerCase()));
  let count = lines.length;
  for (const name of Object.keys(headers)) if (!names.has(name)) count += 1;
  return count;
}

/**
 * Lets go of the body of a request refused in its head, which nothing will read (the server's connection closes under it, or, after
 * a 417, node reads it to nowhere): a stream is destroyed, without an error (the caller may have no 'error' listener on it, and one
 * emitted then would end the process), an async iterable of another kind ended with return(), so that the caller's stream neither
 * waits for a reader for ever nor holds what it holds.
 */
export function releaseRefusedBody(body: unknown): void {
  if (body === null || typeof body !== 'object' || body instanceof Uint8Array) return;
  const destroy = (body as { destroy?: unknown }).destroy;
  if (typeof destroy === 'function') {
    (body as { destroy(): void }).destroy();
    return;
  }
  const iterate = (body as Partial<AsyncIterable<unknown>>)[Symbol.asyncIterator];
  if (typeof iterate !== 'function') return;
  // A generator's return() that rejects, or an iterator that throws, is the caller's body failing to clean up, which nobody reads.
  try {
    void Promise.resolve(iterate.call(body).return?.()).catch(() => {});
  } catch {
    // As above.
  }
}
