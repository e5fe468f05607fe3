import type { Request } from '../../../kernel/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import type { RequestData } from '../profile.js';
import type { Redactor } from '../redactor.js';

/** Largest request body kept, in bytes. */
export const DEFAULT_BODY_CAP = 64 * 1024;

/** The request and response: headers, query, cookies, body within a cap, attributes, route; secrets redacted. */
export class RequestCollector implements DataCollector {
  readonly name = 'request';

  constructor(
    readonly redactor: Redactor,
    readonly bodyCap = DEFAULT_BODY_CAP,
  ) {}

  lateCollect({ request, response, requestType }: CollectContext): RequestData {
    const redactor = this.redactor;
    const bytes = request.peekBody();
    const truncated = bytes !== undefined && bytes.byteLength > this.bodyCap;
    const text = bytes === undefined || bytes.byteLength === 0 ? null : bytes.subarray(0, this.bodyCap).toString('utf8');
    const cookies: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.cookies)) if (value !== undefined) cookies[name] = redactor.isSecretKey(name) ? '[redacted]' : value;
    const session = request.attributes.get('_session_data');
    return {
      method: request.method,
      url: redactor.url(safeUri(request)),
      path: request.path,
      requestHeaders: redactor.headers(request.headers),
      query: redactor.searchParams(request.query),
      cookies,
      body: text === null ? null : redactor.body(text, request.contentType),
      bodyTruncated: truncated,
      attributes: jsonSafeAttributes(request, redactor),
      route: (request.attributes.get('_route') as string | undefined) ?? null,
      routeParams: redactor.value(request.attributes.get('_route_params') ?? {}) as Record<string, unknown>,
      controller: describeController(request.attributes.get('_controller')),
      clientIp: request.clientIp,
      requestType,
      statusCode: response.status,
      statusText: response.statusText,
      responseHeaders: redactor.headers(response.headers),
      contentType: response.getHeader('content-type') ?? null,
      session: session !== undefined && session !== null && typeof session === 'object' ? (redactor.value(session) as Record<string, unknown>) : null,
    };
  }
}

/** The absolute URL, or the raw target when the Host header is unusable. */
export function safeUri(request: Request): string {
  try {
    return request.uri;
  } catch {
    return request.url;
  }
}

/** A controller's name as the panel shows it. */
export function describeController(controller: unknown): string | null {
  if (controller === undefined || controller === null) return null;
  if (typeof controller === 'function') return controller.name || 'anonymous function';
  if (typeof controller === 'string') return controller;
  if (Array.isArray(controller) && controller.length === 2) return `${(controller[0] as object)?.constructor?.name ?? 'object'}::${String(controller[1])}`;
  return typeof controller;
}

function jsonSafeAttributes(request: Request, redactor: Redactor): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of request.attributes) {
    if (name === '_controller') out[name] = describeController(value);
    else if (name === 'exception') out[name] = value instanceof Error ? `${value.constructor.name}: ${value.message}` : String(value);
    else if (name === '_session_data') continue;
    else out[name] = redactor.isSecretKey(name) ? '[redacted]' : redactor.value(value);
  }
  return out;
}
