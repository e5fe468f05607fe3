// What an error page or a profile can still say about a request whose parts may be what failed:
// an absolute-form target that is no URL has no path, an invalid Host header no absolute URL.
import type { Request } from '../../kernel/index.js';

/** The path, or the raw target when it has none. */
export function safePath(request: Request): string {
  try {
    return request.path;
  } catch {
    return request.url;
  }
}

/** The absolute URL, or the raw target when the Host header (or the target) is unusable. */
export function safeUri(request: Request): string {
  try {
    return request.uri;
  } catch {
    return request.url;
  }
}
