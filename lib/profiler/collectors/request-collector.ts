import { STATUS_CODES } from 'node:http';
import { describeController, type Request } from '../../../kernel/index.js';
import type { CollectContext, DataCollector } from '../data-collector.js';
import { jsonString, jsonStringOrNull, jsonValue, setOwn } from '../json.js';
import { RawJson, type Profile, type RequestData } from '../profile.js';
import { LastHeaders, REDACTED_JSON, type Redactor } from '../redactor.js';

/** A controller's name as the panel shows it (the kernel's, as error messages name it). */
export { describeController };

/** Largest request body kept, in bytes. */
export const DEFAULT_BODY_CAP = 64 * 1024;

/**
 * Most characters of JSON of a request's attributes in its profile; past them the attributes are
 * counted (`attributesOmitted`), not kept. Each is bounded (MAX_VALUE_JSON), but not their number:
 * nine of 256 KiB passed MAX_COLLECTOR_JSON, and the whole request panel, its headers, route and
 * response, was a note in the profile.
 */
export const MAX_ATTRIBUTES_JSON = 1024 * 1024;

/** The attributes the panel's summary is made of: kept however many came before them. */
const SUMMARY_ATTRIBUTES: ReadonlySet<string> = new Set(['_controller', '_route', '_route_params']);

/** The request and response: headers, query, cookies, body within a cap, attributes, route; secrets redacted. */
export class RequestCollector implements DataCollector {
  readonly name = 'request';
  /** Its lateCollect only reads: a provisional view may run it too. */
  readonly provisional = true;
  /** The last request headers written: a client sends the same ones request after request. */
  readonly #lastRequestHeaders = new LastHeaders();

  constructor(
    readonly redactor: Redactor,
    readonly bodyCap = DEFAULT_BODY_CAP,
  ) {}

  /**
   * RequestData as JSON (the fixed fields by hand, the maps through JSON.stringify), less what the
   * profile's summary or the other stored fields already say (method, URL, status, client IP,
   * route, controller, content type): present() adds that back on reading.
   */
  lateCollect({ request, response, requestType }: CollectContext): RawJson {
    const redactor = this.redactor;
    const bytes = request.peekBody();
    const truncated = bytes !== undefined && bytes.byteLength > this.bodyCap;
    const text = bytes === undefined || bytes.byteLength === 0 ? null : bytes.subarray(0, truncated ? utf8Cut(bytes, this.bodyCap) : this.bodyCap).toString('utf8');
    const cookies: Record<string, unknown> = {};
    if (request.headers.cookie !== undefined) for (const [name, value] of Object.entries(request.cookies)) if (value !== undefined) setOwn(cookies, name, redactor.isSecretKey(name) ? '[redacted]' : value);
    const session = request.attributes.get('_session_data');
    return new RawJson(
      `{"path":${jsonString(redactor.url(request.path))},"requestHeaders":${redactor.headersJson(request.headers, this.#lastRequestHeaders)}` +
        `,"query":${request.queryString === '' ? '{}' : jsonValue(redactor.searchParams(request.query))},"cookies":${request.headers.cookie === undefined ? '{}' : jsonValue(cookies)}` +
        `,"body":${jsonStringOrNull(text === null ? null : redactor.body(text, request.contentType))},"bodyTruncated":${truncated}` +
        `,${attributesJson(request, redactor)},"requestType":${jsonString(requestType)}` +
        `,"responseHeaders":${redactor.headersJson(response.headers)}` +
        `,"session":${session !== null && typeof session === 'object' ? redactor.valueJson(session) : 'null'}}`,
    );
  }

  /** RequestData: the stored fields, and those worked out from them and from the profile's summary. */
  present(data: unknown, profile: Profile): RequestData {
    return presentRequest(data, profile);
  }
}

/**
 * The stored request data as pages show it (RequestData). Profiles saved before the stored form
 * was trimmed already have every field: what is there is kept.
 */
export function presentRequest(data: unknown, profile: Profile): RequestData {
  const stored = (isObject(data) ? data : {}) as Partial<RequestData>;
  const attributes = isObject(stored.attributes) ? stored.attributes : {};
  const responseHeaders = isObject(stored.responseHeaders) ? (stored.responseHeaders as Record<string, string>) : {};
  const contentType = responseHeaders['content-type'];
  return {
    method: profile.method,
    url: profile.url,
    path: '',
    requestHeaders: {},
    query: {},
    cookies: {},
    body: null,
    bodyTruncated: false,
    route: typeof attributes['_route'] === 'string' ? attributes['_route'] : null,
    routeParams: isObject(attributes['_route_params']) ? attributes['_route_params'] : {},
    controller: typeof attributes['_controller'] === 'string' ? attributes['_controller'] : null,
    clientIp: profile.ip,
    requestType: profile.parent === null ? 'main' : 'sub',
    statusCode: profile.status,
    statusText: STATUS_CODES[profile.status] ?? 'Unknown Status',
    contentType: typeof contentType === 'string' ? contentType : null,
    session: null,
    ...stored,
    attributes,
    responseHeaders,
  };
}

/**
 * Where to cut `bytes` at most `cap` long without splitting a UTF-8 character: its first bytes
 * decoded alone were a U+FFFD the client never sent. At most three continuation bytes follow a
 * lead byte, as many as it says (c2-df one, e0-ef two, f0-f4 three); a lead byte whose character
 * ends before the cap, or none within three bytes, is no character the cap splits: cut at the cap.
 */
function utf8Cut(bytes: Buffer, cap: number): number {
  let end = cap;
  while (end > cap - 3 && end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  const lead = bytes[end]!;
  const length = lead >= 0xc2 && lead <= 0xdf ? 2 : lead >= 0xe0 && lead <= 0xef ? 3 : lead >= 0xf0 && lead <= 0xf4 ? 4 : 1;
  return end < cap && end + length > cap ? end : cap;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The error page's `exception` attribute as text; any value was thrown, a Proxy whose traps throw too (that would cost the profile). */
function errorText(value: unknown): string {
  try {
    return value instanceof Error ? `${value.constructor.name}: ${value.message}` : String(value);
  } catch {
    return '[unreadable value]';
  }
}

/**
 * The request attributes as JSON members (`"attributes":{...}`, and `"attributesOmitted":N` past MAX_ATTRIBUTES_JSON):
 * `_controller` by name, errors as `Class: message` (cut as strings are), the rest (`__proto__` too) redacted and JSON-safe.
 */
function attributesJson(request: Request, redactor: Redactor): string {
  let json = '';
  let omitted = 0;
  for (const [name, value] of request.attributes) {
    // `__proto__` too, as any key: JSON.parse makes it an own property, never the prototype (as setOwn does for a query's).
    if (name === '_session_data') continue;
    if (json.length >= MAX_ATTRIBUTES_JSON && !SUMMARY_ATTRIBUTES.has(name)) {
      omitted++;
      continue;
    }
    let inner: string;
    if (name === '_controller') inner = jsonStringOrNull(describeController(value));
    // Cut as any attribute's string is (valueJson): a 10 MB message was stored whole in the error page's profile.
    else if (name === 'exception') inner = redactor.valueJson(errorText(value));
    else inner = redactor.isSecretKey(name) ? REDACTED_JSON : redactor.valueJson(value);
    json += `${json === '' ? '' : ','}${redactor.keyJson(name)}${inner}`;
  }
  return omitted === 0 ? `"attributes":{${json}}` : `"attributes":{${json}},"attributesOmitted":${omitted}`;
}
