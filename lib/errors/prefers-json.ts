import Negotiator from 'negotiator';
import type { Request } from '../../kernel/index.js';
import { PROBLEM_CONTENT_TYPE } from './problem-json.js';

const FORMATS = ['text/html', 'application/json', PROBLEM_CONTENT_TYPE];

/** Whether the client would rather have problem+json than an HTML error page (its Accept ranks JSON first). */
export function prefersJson(request: Request): boolean {
  const accept = request.headers.accept;
  if (!accept) return false;
  const preferred = preferredMediaType(accept, FORMATS);
  return preferred === 'application/json' || preferred === PROBLEM_CONTENT_TYPE;
}

/**
 * Of `types` (media types without parameters), the one `accept` ranks first, or undefined when it
 * accepts none. Each is offered as what it is sent as, UTF-8: a range with parameters matches only
 * an offer that has them too (negotiator), and `application/json; charset=utf-8` is how many clients
 * ask for JSON.
 */
export function preferredMediaType(accept: string, types: readonly string[]): string | undefined {
  const offers = types.map((type) => `${type}; charset=utf-8`);
  const preferred = new Negotiator({ headers: { accept } }).mediaType(offers);
  return preferred === undefined ? undefined : types[offers.indexOf(preferred)];
}
