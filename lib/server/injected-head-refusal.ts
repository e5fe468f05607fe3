// What startServers (or node's parser, or node:http before any listener) refuses in a request's head, in the order
// the server meets the checks, for inject(), whose request no socket carries: the first refusal is the answer.

import { METHODS, type IncomingHttpHeaders } from 'node:http';
import { framingRefusal, TRANSFER_ENCODING_NOT_CHUNKED } from '../../kernel/transfer-coding.js';
import { expectsOnlyContinue, MAX_HEADER_FIELDS, MISSING_HOST, NO_TUNNEL, ONLY_CONTINUE, TOO_MANY_FIELDS } from './listen.js';

/** The methods node's parser reads, as written (upper case): another (`get`, `FOO`) it refuses before any header. */
const PARSED_METHODS: ReadonlySet<string> = new Set(METHODS);
/** node's parser's reason for a method it does not know. */
export const INVALID_METHOD = 'Invalid method encountered.';

/** A head refusal: its status, its reason, and whether its answer closes the connection. */
export interface HeadRefusal {
  status: number;
  reason: string;
  closes: boolean;
}

/**
 * The refusal the server answers a request with in its head, or undefined. `method`: as given; `headers`: the request's, folded as
 * node:http folds them; `given`: the header lines as given (see givenLines). In the server's
 * order: node's parser first (a method it does not know, which it reads first, then a framing it cannot read), then node:http's, which hands a CONNECT to the server's 'connect' (refused
 * whatever its head) and an HTTP/1.1 request with an Expect to 'checkContinue' or 'checkExpectation' (a 417 but for 100-continue alone),
 * then startServers' listener: more fields than node keeps, no or an empty Host, a Transfer-Encoding that does not end with chunked.
 */
export function injectedHeadRefusal(method: string, headers: IncomingHttpHeaders, given: Readonly<Record<string, readonly string[]>>): HeadRefusal | undefined {
  if (!PARSED_METHODS.has(method)) return { status: 400, reason: INVALID_METHOD, closes: true };
  const framing = framingRefusal(given);
  if (framing !== undefined && framing !== TRANSFER_ENCODING_NOT_CHUNKED) return { status: 400, reason: framing, closes: true };
  if (method === 'CONNECT') return { status: 400, reason: NO_TUNNEL, closes: true };
  if (headers.expect !== undefined && !expectsOnlyContinue(headers.expect)) return { status: 417, reason: ONLY_CONTINUE, closes: false };
  if (lineCount(headers, given) > MAX_HEADER_FIELDS) return { status: 431, reason: TOO_MANY_FIELDS, closes: true };
  // The Host line given, the first of several as node keeps it, even beside an absolute URL, which names the host only when no Host
  // is given (as a client writes it from the URL): startServers refuses an empty Host whatever the target's form, before the kernel reads the URL's authority.
  if (!(given.host?.[0] ?? headers.host)) return { status: 400, reason: MISSING_HOST, closes: true };
  if (framing !== undefined) return { status: 400, reason: framing, closes: true };
  return undefined;
}

/**
 * The header lines of inject()'s `headers` as the parser would meet them: by lower-case name, in the order each name first comes,
 * a list of its lines (names in any case one field, as Request.create() folds them; undefined is no line, a name with none left out).
 * Object.fromEntries of the lower-cased names kept only the last of `Content-Length` and `content-length`: two such lines were served.
 */
export function givenLines(headers: Readonly<Record<string, string | readonly string[] | undefined>> | undefined): Record<string, string[]> {
  const lines: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const [name, value] of Object.entries(headers ?? {})) {
    // Request.create() has refused a value that is no string nor a list of strings.
    const values = (Array.isArray(value) ? value : [value]).filter((line): line is string => line !== undefined);
    if (values.length === 0) continue;
    const lower = name.toLowerCase();
    (lines[lower] ??= []).push(...values);
  }
  return lines;
}

/** How many header lines the request would have on the wire: those given (a list, one per value), and those Request.create() added (Host, Content-Length...). */
function lineCount(headers: IncomingHttpHeaders, given: Readonly<Record<string, readonly string[]>>): number {
  let lines = 0;
  for (const value of Object.values(given)) lines += value.length;
  for (const name of Object.keys(headers)) if (!Object.hasOwn(given, name)) lines += 1;
  return lines;
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
