import { KernelEvents, NotFoundHttpError, type RequestEvent } from '../../kernel/index.js';
import { ResourceNotFoundError, noRouteFoundMessage, normalizePercentEncoding } from '../routing/index.js';
import type { DebugAccess } from './debug-access.js';
import { PROFILER_PATHS } from './profiler.js';

/** Hides the profiler's pages from clients that are not allowed: they get a 404, as if there were none. */
export class ProfilerAccessListener {
  constructor(readonly access: DebugAccess) {}

  getSubscribedEvents() {
    // After only the profiler taking its token (1024), which answers nothing; before the host check (256), the router (32)
    // and, when one is registered, a CORS listener (250 in the design's chain): nothing about the profiler leaks to others.
    return { [KernelEvents.REQUEST]: ['onKernelRequest', 512] as const };
  }

  onKernelRequest(event: RequestEvent): void {
    const request = event.request;
    if (event.isMainRequest() && isProfilerPath(request.path) && !this.access.isAllowed(request)) {
      // The router's own 404, word for word: nothing tells these paths from any other missing one.
      throw new NotFoundHttpError(noRouteFoundMessage(request, request.path), { cause: new ResourceNotFoundError(request.path) });
    }
  }
}

/**
 * Whether a path is one of the profiler's, also when spelt in another percent-encoding
 * (`/%5Fprofiler/`), which the router redirects to the canonical path: a client not allowed
 * should not learn from that redirect that the profiler is there.
 */
function isProfilerPath(path: string): boolean {
  return PROFILER_PATHS.test(path) || (path.indexOf('%') !== -1 && PROFILER_PATHS.test(normalizePercentEncoding(path)));
}
