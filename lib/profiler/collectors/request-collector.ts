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

  collect({ request, response, requestType }: CollectContext): RequestData {
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
      routeParams: redactor.value(jsonSafe(request.attributes.get('_route_params') ?? {})) as Record<string, unknown>,
      controller: describeController(request.attributes.get('_controller')),
      clientIp: request.clientIp,
      requestType,
      statusCode: response.status,
      statusText: response.statusText,
      responseHeaders: redactor.headers(response.headers),
      contentType: response.getHeader('content-type') ?? null,
      session: session !== undefined && session !== null && typeof session === 'object' ? (redactor.value(jsonSafe(session)) as Record<string, unknown>) : null,
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
    else out[name] = redactor.isSecretKey(name) ? '[redacted]' : redactor.value(jsonSafe(value));
  }
  return out;
}

/** A JSON-safe copy: functions by name, errors by class and message, cycles cut, size bounded. */
export function jsonSafe(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (value === null || value === undefined) return value ?? null;
  switch (typeof value) {
    case 'string':
      return value.length > 10_000 ? `${value.slice(0, 10_000)}…` : value;
    case 'number':
    case 'boolean':
      return value;
    case 'bigint':
      return value.toString();
    case 'function':
      return `[function ${value.name || 'anonymous'}]`;
    case 'symbol':
      return value.toString();
  }
  if (depth > 8) return '[too deep]';
  const object = value as object;
  if (seen.has(object)) return '[circular]';
  seen.add(object);
  if (value instanceof Error) return { class: value.constructor.name, message: value.message };
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.slice(0, 100).map((item) => jsonSafe(item, depth + 1, seen));
  if (value instanceof Map) return jsonSafe(Object.fromEntries(value), depth, seen);
  const out: Record<string, unknown> = {};
  let count = 0;
  for (const [key, inner] of Object.entries(object)) {
    if (count++ >= 100) break;
    out[key] = jsonSafe(inner, depth + 1, seen);
  }
  return out;
}
