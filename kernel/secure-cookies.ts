import type { Request } from './request.js';
import type { Response } from './response.js';

// For the kernel's own files (not in index.ts): called out of turn, with another request or before
// the last cookie is set, secureCookies() would drop the Secure a cookie is owed.

/** Set-Cookie values whose Secure attribute follows the request's scheme, by response (see Response.prepare()). */
const SECURE_IF_HTTPS = new WeakMap<Response, Set<string>>();

/** Remembers a Set-Cookie value setCookie() wrote without Secure, for secureCookies() to add it over https. */
export function secureIfHttps(response: Response, header: string): void {
  let values = SECURE_IF_HTTPS.get(response);
  if (values === undefined) SECURE_IF_HTTPS.set(response, (values = new Set()));
  values.add(header);
}

/**
 * Adds `Secure` to the cookies setCookie() left to the request's scheme, when it is https; once for each.
 * prepare() calls it, and the kernel again once every kernel.response and kernel.finish_request listener has run on a main
 * request's answer, for the cookies set after ResponseListener's prepare() (a session listener's, at -1000, or one of finish_request).
 */
export function secureCookies(response: Response, request: Request): void {
  const values = SECURE_IF_HTTPS.get(response);
  if (values === undefined) return;
  SECURE_IF_HTTPS.delete(response);
  if (!request.isSecure()) return;
  const current = response.headers['set-cookie']!;
  const secured = (value: string): string => (values.has(value) ? `${value}; Secure` : value);
  response.headers['set-cookie'] = Array.isArray(current) ? current.map(secured) : secured(current);
}
