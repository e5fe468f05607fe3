import type { Request } from '../../../kernel/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import { jsonNumber, jsonString, jsonStringOrNull, jsonValue } from '../json.js';
import { RawJson } from '../profile.js';
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

  /** RequestData, written as JSON: the fixed fields by hand, the maps through JSON.stringify. */
  lateCollect({ request, response, requestType }: CollectContext): RawJson {
    const redactor = this.redactor;
    const bytes = request.peekBody();
    const truncated = bytes !== undefined && bytes.byteLength > this.bodyCap;
    const text = bytes === undefined || bytes.byteLength === 0 ? null : bytes.subarray(0, this.bodyCap).toString('utf8');
    const cookies: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.cookies)) if (value !== undefined) cookies[name] = redactor.isSecretKey(name) ? '[redacted]' : value;
    const session = request.attributes.get('_session_data');
    const route = request.attributes.get('_route') as string | undefined;
    return new RawJson(
      `{"method":${jsonString(request.method)},"url":${jsonString(redactor.url(safeUri(request)))},"path":${jsonString(request.path)}` +
        `,"requestHeaders":${jsonValue(redactor.headers(request.headers))},"query":${jsonValue(redactor.searchParams(request.query))},"cookies":${jsonValue(cookies)}` +
        `,"body":${jsonStringOrNull(text === null ? null : redactor.body(text, request.contentType))},"bodyTruncated":${truncated}` +
        `,"attributes":${jsonValue(jsonSafeAttributes(request, redactor))},"route":${jsonStringOrNull(route)}` +
        `,"routeParams":${jsonValue(redactor.value(request.attributes.get('_route_params') ?? {}))},"controller":${jsonStringOrNull(describeController(request.attributes.get('_controller')))}` +
        `,"clientIp":${jsonString(request.clientIp)},"requestType":${jsonString(requestType)},"statusCode":${jsonNumber(response.status)},"statusText":${jsonString(response.statusText)}` +
        `,"responseHeaders":${jsonValue(redactor.headers(response.headers))},"contentType":${jsonStringOrNull(response.getHeader('content-type'))}` +
        `,"session":${session !== undefined && session !== null && typeof session === 'object' ? jsonValue(redactor.value(session)) : 'null'}}`,
    );
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
