// The rules a request's Transfer-Encoding is held to, in one place: startServers refuses one that does
// not end with chunked in its head, the body's reader one with another coding before chunked, and
// inject() both, and the Transfer-Encoding node's parser refuses in the head (see lib/server/injected-head-refusal.ts), with the same answers. For the kernel, servers and inject() (not in index.ts).

import { BadRequestHttpError } from './http-errors.js';

/** What a request is told whose Transfer-Encoding does not end with chunked. */
export const TRANSFER_ENCODING_NOT_CHUNKED = 'The request\'s Transfer-Encoding does not end with chunked, so the length of its body cannot be determined (RFC 9112 6.3).';

/**
 * A chunked coding that a comma follows, after spaces alone (`chunked, gzip`, `chunked,`, or another Transfer-Encoding field after it,
 * joined by node): chunked is applied once, and last (RFC 9112 7), and node's parser refuses the head with the reason below.
 */
export const CHUNKED_THEN_MORE = /(?:^|,)[ \t]*chunked *,/i;

/** node's parser's reason for such a head, which startServers' answer gives as the parser's others (see CHUNKED_THEN_MORE). */
export const CHUNKED_NOT_LAST = 'Invalid `Transfer-Encoding` header value.';

/**
 * The last coding when it is chunked, in any case, with spaces and tabs around it only, as node's parser reads it: trim() would take a
 * no-break space (the obs-text byte 0xA0) too, and `chunked\xa0`, which the parser takes for no chunked, be served, then refused.
 */
const LAST_CHUNKED = /^[ \t]*chunked[ \t]*$/i;

/**
 * The reason a request with this Transfer-Encoding (node joins its fields with commas; a list of
 * them as given to Request.create()) is refused in its head, before any listener runs: one that does
 * not end with chunked, in any case and with no parameters, frames no body a proxy and this server
 * are sure to read alike (RFC 9112 6.3); one with chunked before another coding or an empty element,
 * node's parser's reason. Undefined when it ends with chunked, or there is none.
 */
export function transferEncodingRefusal(value: string | readonly string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const codings = joined(value);
  // node's parser refuses these itself, before startServers' check: inject() gives its answer.
  if (CHUNKED_THEN_MORE.test(codings)) return CHUNKED_NOT_LAST;
  return LAST_CHUNKED.test(codings.slice(codings.lastIndexOf(',') + 1)) ? undefined : TRANSFER_ENCODING_NOT_CHUNKED;
}

/**
 * A Transfer-Encoding of chunked alone (RFC 9112 7: the coding names are case-insensitive), after
 * any empty list elements (`, chunked`: fields merged, one of them empty), which RFC 9110 5.6.1 ignores.
 */
const ONLY_CHUNKED = /^(?:[ \t]*,)*[ \t]*chunked[ \t]*$/i;

/**
 * The error reading a body sent with this Transfer-Encoding fails with, or undefined for chunked
 * alone (or none): node:http undoes chunked only, and the bytes of another coding before it (`gzip,
 * chunked`) would pass for the body. A 400 with the code HK_UNSUPPORTED_TRANSFER_CODING, not RFC
 * 9112's 501: the coding is the client's choice, no server failure, so it is logged at ERROR as
 * any refusal of what a client sent, and its message, which says what to send instead, is shown outside debug mode too.
 */
export function unsupportedTransferCoding(value: string | readonly string[] | undefined): BadRequestHttpError | undefined {
  if (value === undefined || ONLY_CHUNKED.test(joined(value))) return undefined;
  return new BadRequestHttpError(`The request body is sent with Transfer-Encoding "${joined(value)}"; this server decodes chunked only (a compressed body goes with Content-Encoding).`, { code: 'HK_UNSUPPORTED_TRANSFER_CODING' });
}

function joined(value: string | readonly string[]): string {
  return typeof value === 'string' ? value : value.join(', ');
}
