import { KernelEvents, type ResponseEvent } from '../../kernel/index.js';

/** Prepares every response for its request (charset, Content-Length, empty statuses) on `kernel.response`. */
export class ResponseListener {
  constructor(readonly charset = 'UTF-8') {}

  getSubscribedEvents() {
    return { [KernelEvents.RESPONSE]: ['onKernelResponse', 0] as const };
  }

  onKernelResponse(event: ResponseEvent): void {
    event.response.prepare(event.request, this.charset);
  }
}
