import { Request, type RequestStack } from '../../kernel/index.js';
import type { RequestDescriber, RequestDescription } from '../log/index.js';
import type { Profiler } from '../profiler/index.js';

/** Where a request describer finds what a request does not hold itself. */
export interface RequestDescriberOptions {
  /** The kernel's request stack: a request below the top of it is a sub-request of the first. */
  requestStack?: RequestStack;
  /** The profiler, for the tokens the requests are recorded under. */
  profiler?: Profiler | null;
}

/**
 * Makes the describer the stderr sink writes a record's request with (see `KernelApp.describeRequest`):
 * method, path and query, client IP, and the profiler's token; for a sub-request, `sub` and the main
 * request's token, which is the X-Debug-Token of the response the client got (the profiler moves the
 * sub-request's own to X-Previous-Debug-Token). It reads only what the request already has or works out
 * lazily (never its headers or body), and never throws: a value it cannot read is left out.
 */
export function createRequestDescriber(options: RequestDescriberOptions = {}): RequestDescriber {
  const { requestStack, profiler } = options;
  return (request) => {
    // A Proxy's getPrototypeOf trap may throw.
    if (!attempt(() => request instanceof Request)) return undefined;
    const described = request as Request;
    const description: RequestDescription = {};
    const method = attempt(() => described.method);
    if (typeof method === 'string') description.method = method;
    const path = attempt(() => pathAndQuery(described));
    if (typeof path === 'string') description.path = path;
    const ip = attempt(() => described.clientIp);
    if (typeof ip === 'string') description.ip = ip;
    const token = attempt(() => profiler?.tokenOf(described));
    if (typeof token === 'string') description.token = token;
    // Only the request of a record being written is described, while it is current: the stack is its own.
    const stack = attempt(() => requestStack?.all());
    if (stack !== undefined && stack.length > 1 && stack[0] !== described && stack.includes(described)) {
      description.sub = true;
      const mainToken = attempt(() => profiler?.tokenOf(stack[0]!));
      if (typeof mainToken === 'string') description.mainToken = mainToken;
    }
    return description;
  };
}

/** The path and query string; the raw target when it is refused (see Request.path), which is still worth a line. */
function pathAndQuery(request: Request): string {
  const url = request.url;
  // A Proxy of a Request reaches none of its private fields, so has no path: its raw target is still worth a line.
  const path = attempt(() => request.path);
  if (path === undefined) return url;
  const q = url.indexOf('?');
  return q === -1 || request.targetError !== null ? path : `${path}${url.slice(q)}`;
}

function attempt<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
