import { KernelEvents, type ResponseEvent } from '../../kernel/index.js';

/** Prepares the main request's response for it (charset, Content-Length, empty statuses) on `kernel.response`. */
export class ResponseListener {
  constructor(readonly charset = 'UTF-8') {}

  getSubscribedEvents() {
    return { [KernelEvents.RESPONSE]: ['onKernelResponse', 0] as const };
  }

  onKernelResponse(event: ResponseEvent): void {
    // As Symfony's: a sub-request's response goes back to its caller, which embeds it or returns it (then prepared as the main one).
    if (!event.isMainRequest()) return;
    event.response.prepare(event.request, this.charset);
  }
}
