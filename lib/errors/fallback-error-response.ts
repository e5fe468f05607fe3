import { Response, type Request } from '../../kernel/index.js';
import { createCspNonce } from './csp-nonce.js';
import { flattenError, type FlatError } from './flatten-error.js';
import { pageHeaders } from './page-headers.js';
import { plainPagePolicy, renderPlainPage } from './plain-page.js';
import { prefersJson } from './prefers-json.js';
import { PROBLEM_CONTENT_TYPE, renderProblem, serializeProblem } from './problem-json.js';

/**
 * The error page sent when the error page itself failed (the error controller threw, or answered no
 * Response): the plain page, or problem+json for a client that prefers JSON, with the error's own
 * status and headers and never a debug detail, even in debug mode (what failed may be the debug
 * page). Made here rather than in a sub-request, so that it cannot fail the same way; it never throws.
 */
export function fallbackErrorResponse(error: unknown, request: Request, charset = 'UTF-8'): Response {
  try {
    return plainResponse(error, request, charset);
  } catch {
    // Only what cannot fail is left: a 500 without the error's headers.
    return plainResponse(undefined, null, charset);
  }
}

function plainResponse(error: unknown, request: Request | null, charset: string): Response {
  const flat: FlatError | undefined = flattenError(error)[0];
  const status = flat?.status ?? 500;
  const headers = pageHeaders(flat?.headers);
  if (request !== null && prefersJson(request)) {
    const problem = renderProblem({ errors: flat === undefined ? [] : [flat], status, debug: false, instance: request.path });
    return new Response(serializeProblem(problem), status, { ...headers, 'content-type': PROBLEM_CONTENT_TYPE });
  }
  const nonce = createCspNonce();
  return new Response(renderPlainPage(status, charset, nonce), status, { ...headers, 'content-type': `text/html; charset=${charset}`, 'content-security-policy': plainPagePolicy(nonce) });
}
