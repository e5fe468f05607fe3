// How node:http's IncomingMessage folds a request's header lines into its `headers` (node 20's
// lib/_http_incoming.js, matchKnownFields and _addHeaderLine, without the server's joinDuplicateHeaders):
// Request.create() builds its headers so, and a request made in a test is the one the server would make.

import { setOwn } from './set-own.js';

/** Fields of which node keeps the first line and drops the others: their values cannot be joined into a list. */
const FIRST_ONLY: ReadonlySet<string> = new Set([
  'age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from', 'host', 'if-modified-since', 'if-unmodified-since',
  'last-modified', 'location', 'max-forwards', 'proxy-authorization', 'referer', 'retry-after', 'server', 'user-agent',
]);

/**
 * Adds the line `name: value` (`name` lower-case) to `headers` as node:http adds it: Set-Cookie is always a list, Cookie lines are
 * joined with `; `, a field of FIRST_ONLY keeps its first line, and any other field's lines are joined with `, `.
 */
export function addHeaderLine(headers: Record<string, string | string[] | undefined>, name: string, value: string): void {
  const current = Object.hasOwn(headers, name) ? headers[name] : undefined;
  if (name === 'set-cookie') {
    if (Array.isArray(current)) current.push(value);
    else setOwn(headers, name, [value]);
  } else if (current === undefined) {
    setOwn(headers, name, value);
  } else if (!FIRST_ONLY.has(name)) {
    setOwn(headers, name, `${String(current)}${name === 'cookie' ? '; ' : ', '}${value}`);
  }
}
