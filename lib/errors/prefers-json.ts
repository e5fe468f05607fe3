import { parse } from 'content-type';
import Negotiator from 'negotiator';
import type { Request } from '../../kernel/index.js';
import { PROBLEM_CONTENT_TYPE } from './problem-json.js';

const FORMATS = ['text/html', 'application/json', PROBLEM_CONTENT_TYPE];
/** A media range whose type and subtype are tokens (RFC 9110), `*` included: no other can match an offer. */
const MEDIA_RANGE = /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/i;
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/i;

/**
 * Whether the client gets problem+json rather than an HTML error page: the request's `_format`
 * attribute when it is `json` or `html` (a route's default, a listener's for an API's paths), as
 * Symfony's `getPreferredFormat()` puts the request format first; else whether its Accept ranks JSON first.
 */
export function prefersJson(request: Request): boolean {
  const format = request.attributes.get('_format');
  if (format === 'json') return true;
  if (format === 'html') return false;
  const accept = request.headers.accept;
  if (!accept) return false;
  const preferred = preferredMediaType(accept, FORMATS);
  return preferred === 'application/json' || preferred === PROBLEM_CONTENT_TYPE;
}

/**
 * Of `types` (media types without parameters), the one `accept` ranks first, or undefined when it
 * accepts none. Each is offered as what it is sent as, UTF-8 (`application/json; charset=utf-8`
 * is how many clients ask for JSON, and is the more specific match). A range's other parameters
 * (`application/json; v=2`, `text/html; level=1`) are none the offers have, so they are not held
 * against it: negotiator matches a range with parameters only to an offer that has them all.
 */
export function preferredMediaType(accept: string, types: readonly string[]): string | undefined {
  const offers = types.map((type) => `${type}; charset=utf-8`);
  const preferred = new Negotiator({ headers: { accept: withOnlyQualityAndCharset(accept) } }).mediaType(offers);
  return preferred === undefined ? undefined : types[offers.indexOf(preferred)];
}

/**
 * `accept` with each range's parameters other than q and charset left out. A range no offer
 * could match either way (a type that is no token, a charset that is none) is left out whole.
 * `q` is written back as negotiator reads it (parseFloat; an empty one is none), so ranking and `q=0` are unchanged.
 */
function withOnlyQualityAndCharset(accept: string): string {
  const ranges: string[] = [];
  for (let index = 0; index < accept.length; ) {
    const range = parse(accept, { comma: true, start: index });
    index = range.index + 1;
    const { q, charset } = range.parameters;
    if (!MEDIA_RANGE.test(range.type) || (charset !== undefined && !TOKEN.test(charset))) continue;
    // An empty q (`q=`, `q=""`) is none to negotiator: the range keeps q=1.
    ranges.push(`${range.type}${q ? `;q=${Number.parseFloat(q)}` : ''}${charset === undefined ? '' : `;charset=${charset}`}`);
  }
  return ranges.join(', ');
}
