import { setOwn } from '../../kernel/set-own.js';

/**
 * The headers of an error page made from the error's own (flattenError has checked and bounded them:
 * see boundErrorHeaders), with `Vary: Accept`, since the page's format is chosen by Accept and a
 * cache must not reuse one for the other.
 */
export function pageHeaders(errorHeaders: Record<string, string> | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  // setOwn: a header named `__proto__` (which boundErrorHeaders keeps, as Response does) would otherwise set the prototype.
  for (const name in errorHeaders) setOwn(headers, name.toLowerCase(), errorHeaders[name]!);
  headers.vary = headers.vary === undefined || headers.vary.trim() === '' ? 'Accept' : /(^|,)\s*(accept|\*)\s*(,|$)/i.test(headers.vary) ? headers.vary : `${headers.vary}, Accept`;
  return headers;
}
