import { KernelEvents, type ResponseEvent } from '../../kernel/index.js';
import { profilerUrls } from './profiler-controller.js';
import { renderToolbarLoader } from './ui/index.js';

/**
 * Injects the debug toolbar's loader before the last `</body>` of HTML main responses
 * (not XHR, not redirects, not attachments), on `kernel.response` at -128.
 */
export class ToolbarListener {
  constructor(readonly showDebug: (request: ResponseEvent['request']) => boolean = () => true) {}

  getSubscribedEvents() {
    return { [KernelEvents.RESPONSE]: ['onKernelResponse', -128] as const };
  }

  onKernelResponse(event: ResponseEvent): void {
    const { request, response } = event;
    if (!event.isMainRequest() || request.isXmlHttpRequest() || response.isRedirect()) return;
    const token = response.headers['x-debug-token'];
    const body = response.body;
    if (typeof token !== 'string' || typeof body !== 'string') return;
    const type = response.getHeader('content-type');
    if (type !== undefined && !type.toLowerCase().startsWith('text/html')) return;
    if ((response.getHeader('content-disposition') ?? '').toLowerCase().startsWith('attachment')) return;
    if (!this.showDebug(request)) return;
    const at = body.lastIndexOf('</body>');
    if (at === -1) return;
    response.body = `${body.slice(0, at)}${renderToolbarLoader(token, profilerUrls)}${body.slice(at)}`;
    if (response.headers['content-length'] !== undefined) response.headers['content-length'] = String(Buffer.byteLength(response.body));
  }
}
