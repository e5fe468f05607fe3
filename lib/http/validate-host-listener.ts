import { KernelEvents, type RequestEvent } from '../../kernel/index.js';

/**
 * Reads the host of every main request on `kernel.request` at 256 (Symfony's ValidateRequestListener),
 * so an invalid or untrusted one is a 400 before the listeners that follow (CORS at 250, an
 * application's own) answer without ever reading it. The Request keeps the host it read: the router's read costs nothing.
 */
export class ValidateHostListener {
  getSubscribedEvents() {
    return { [KernelEvents.REQUEST]: ['onKernelRequest', 256] as const };
  }

  onKernelRequest(event: RequestEvent): void {
    // A sub-request is the main request's copy, already checked (the error page of a refused host must render).
    if (event.isMainRequest()) void event.request.host;
  }
}
