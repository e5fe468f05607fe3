// What an error page or a profile can still say about a request whose parts may be what failed:
// an absolute-form target that is no URL has no path, an invalid or untrusted Host no absolute URL.
import type { Request } from '../../kernel/index.js';

/** The path, or the raw target when it has none. */
export function safePath(request: Request): string {
  try {
    return request.path;
  } catch {
    return request.url;
  }
}

/**
 * The absolute URL; the path and query when the host is unusable (an absolute-form target's own
 * authority is left out too, so a host the kernel refused never reaches a page or link); the raw target when it has no path.
 */
export function safeUri(request: Request): string {
  try {
    return request.uri;
  } catch {
    const path = safePath(request);
    return path === request.url || request.url.indexOf('?') === -1 ? path : `${path}?${request.queryString}`;
  }
}
