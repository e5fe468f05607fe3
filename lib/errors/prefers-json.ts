import Negotiator from 'negotiator';
import type { Request } from '../../kernel/index.js';
import { PROBLEM_CONTENT_TYPE } from './problem-json.js';

const FORMATS = ['text/html', 'application/json', PROBLEM_CONTENT_TYPE];

/** Whether the client would rather have problem+json than an HTML error page (its Accept ranks JSON first). */
export function prefersJson(request: Request): boolean {
  const accept = request.headers.accept;
  if (!accept) return false;
  const preferred = new Negotiator({ headers: { accept } }).mediaType(FORMATS);
  return preferred === 'application/json' || preferred === PROBLEM_CONTENT_TYPE;
}
