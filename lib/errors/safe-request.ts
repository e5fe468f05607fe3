// What an error page or a profile can still say about a request whose parts may be what failed:
// an invalid or untrusted Host, or a refused target, leaves no absolute URL.
import type { Request } from '../../kernel/index.js';

/**
 * The absolute URL; the path and query when the host is unusable (an absolute-form target's own
 * authority is left out too, so a host the kernel refused never reaches a page or link); the raw target when it is refused.
 */
export function safeUri(request: Request): string {
  try {
    return request.uri;
  } catch {
    const path = request.path;
    return request.targetError !== null || request.url.indexOf('?') === -1 ? path : `${path}?${request.queryString}`;
  }
}
