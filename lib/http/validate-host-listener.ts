import { KernelEvents, type RequestEvent } from '../../kernel/index.js';

/**
 * Checks every main request on `kernel.request` at 256 (Symfony's ValidateRequestListener): a refused
 * target (`PATCH *`, `GET ftp://a.test/x`: Request.targetError) and an invalid or untrusted host are a
 * 400 before the listeners that follow (the router at 32, an application's own; in the design's chain
 * also a CORS listener at 250, when one is registered) answer without ever reading them. The Request
 * keeps the host it read: the router's read costs nothing.
 */
export class ValidateHostListener {
  getSubscribedEvents() {
    return { [KernelEvents.REQUEST]: ['onKernelRequest', 256] as const };
  }

  onKernelRequest(event: RequestEvent): void {
    // A sub-request is the main request's copy, already checked (the error page of a refused request must render).
    // Reading the host throws the target's error first (Request.targetError), then the host's.
    if (event.isMainRequest()) void event.request.host;
  }
}
