import { KernelEvents, NotFoundHttpError, type RequestEvent } from '../../kernel/index.js';
import { normalizePercentEncoding } from '../routing/index.js';
import type { DebugAccess } from './debug-access.js';
import { PROFILER_PATHS } from './profiler.js';

/** Hides the profiler's pages from clients that are not allowed: they get a 404, as if there were none. */
export class ProfilerAccessListener {
  constructor(readonly access: DebugAccess) {}

  getSubscribedEvents() {
    // Before everything else in the chain (CORS is 250): nothing about the profiler leaks to others.
    return { [KernelEvents.REQUEST]: ['onKernelRequest', 512] as const };
  }

  onKernelRequest(event: RequestEvent): void {
    const request = event.request;
    if (event.isMainRequest() && isProfilerPath(request.path) && !this.access.isAllowed(request)) {
      throw new NotFoundHttpError(`No route found for "${request.method} ${request.path}"`);
    }
  }
}

/**
 * Whether the router would take `path` for a profiler page: as given, or in another spelling
 * (`/%5fprofiler/`, `/_%70rofiler/`), which RouterListener looks up again normalized on a miss.
 */
function isProfilerPath(path: string): boolean {
  return PROFILER_PATHS.test(path) || (path.indexOf('%') !== -1 && PROFILER_PATHS.test(normalizePercentEncoding(path)));
}
