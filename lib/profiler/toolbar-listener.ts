import { KernelEvents, type ResponseEvent } from '../../kernel/index.js';
import { profilerUrls } from './profiler-controller.js';
import { CSP_HEADERS, allowToolbarInPolicy } from './toolbar-csp.js';
import { renderToolbarLoader } from './ui/index.js';

/**
 * Injects the debug toolbar's loader before the last `</body>` (any case) of HTML main responses
 * (not XHR, not redirects, not attachments, not compressed), on `kernel.response` at -128. A body
 * of bytes gets it too, as bytes: the loader is ASCII, so any charset that writes ASCII as ASCII
 * (UTF-8, the ISO-8859 and Windows families) keeps its own bytes; in another (UTF-16) no
 * `</body>` is found and the body is left alone. A Content-Security-Policy of the response that
 * would block the toolbar's inline script or style gets their hashes (see allowToolbarInPolicy).
 */
export class ToolbarListener {
  constructor(readonly showDebug: (request: ResponseEvent['request']) => boolean = () => true) {}

  getSubscribedEvents() {
    return { [KernelEvents.RESPONSE]: ['onKernelResponse', -128] as const };
  }

  onKernelResponse(event: ResponseEvent): void {
    const { request, response } = event;
    if (!event.isMainRequest() || request.isXmlHttpRequest() || response.isRedirection()) return;
    const token = response.headers['x-debug-token'];
    const body = response.body;
    if (typeof token !== 'string' || !(typeof body === 'string' || body instanceof Uint8Array)) return;
    const type = response.getHeader('content-type');
    if (type !== undefined && !type.toLowerCase().startsWith('text/html')) return;
    if ((response.getHeader('content-disposition') ?? '').toLowerCase().startsWith('attachment')) return;
    const encoding = response.getHeader('content-encoding');
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') return;
    if (!this.showDebug(request)) return;
    const loader = renderToolbarLoader(token, profilerUrls);
    if (typeof body === 'string') {
      const at = lastBodyClose(body);
      if (at === -1) return;
      response.body = `${body.slice(0, at)}${loader}${body.slice(at)}`;
    } else {
      const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
      const at = lastBodyClose(bytes);
      if (at === -1) return;
      response.body = Buffer.concat([bytes.subarray(0, at), Buffer.from(loader), bytes.subarray(at)]);
    }
    if (response.headers['content-length'] !== undefined) response.headers['content-length'] = String(Buffer.byteLength(response.body));
    for (const name of CSP_HEADERS) {
      const policy = response.headers[name];
      if (policy !== undefined) response.headers[name] = Array.isArray(policy) ? policy.map(allowToolbarInPolicy) : allowToolbarInPolicy(policy);
    }
  }
}

/** Where the last `</body>` starts, in any case (`</BODY>`), or -1; in bytes for a Buffer. */
function lastBodyClose(body: string | Buffer): number {
  for (let at = body.lastIndexOf('</'); at !== -1; at = at === 0 ? -1 : body.lastIndexOf('</', at - 1)) {
    const tag = typeof body === 'string' ? body.slice(at + 2, at + 7) : body.toString('latin1', at + 2, at + 7);
    if (tag.toLowerCase() === 'body>') return at;
  }
  return -1;
}
