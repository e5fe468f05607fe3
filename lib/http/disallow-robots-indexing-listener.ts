import { KernelEvents, type ResponseEvent } from '../../kernel/index.js';

/** Adds `X-Robots-Tag: noindex` to every response, so search engines skip non-production sites. */
export class DisallowRobotsIndexingListener {
  getSubscribedEvents() {
    return { [KernelEvents.RESPONSE]: ['onKernelResponse', -255] as const };
  }

  onKernelResponse(event: ResponseEvent): void {
    event.response.headers['x-robots-tag'] ??= 'noindex';
  }
}
