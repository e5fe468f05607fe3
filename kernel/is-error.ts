import { types } from 'node:util';

/**
 * Whether a value is an Error: one of this realm (`instanceof Error`, a DOMException too) or of
 * another, which instanceof misses (made in a `vm` context); false where asking throws (a Proxy's
 * getPrototypeOf trap), so a log call never fails on it.
 */
export function isError(value: unknown): value is Error {
  try {
    return value instanceof Error || types.isNativeError(value);
  } catch {
    return false;
  }
}
