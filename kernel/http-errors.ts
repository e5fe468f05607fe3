import { STATUS_CODES } from 'node:http';
import { describeDuration } from './describe-duration.js';

/** Options every kernel error accepts. */
export interface ErrorOptions {
  cause?: unknown;
  headers?: Record<string, string>;
  code?: string;
}

/** An error that carries the HTTP status (and headers) the client should get. */
export class HttpError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly code: string;

  constructor(status: number, message?: string, options: ErrorOptions = {}) {
    super(message ?? STATUS_CODES[status] ?? 'HTTP error', options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.headers = options.headers ?? {};
    this.code = options.code ?? `HK_HTTP_${status}`;
  }
}

/** 400: the request is malformed; the message says what to fix. */
export class BadRequestHttpError extends HttpError {
  constructor(message?: string, options: ErrorOptions = {}) {
    super(400, message, { code: 'HK_BAD_REQUEST', ...options });
  }
}

/** 401: credentials are missing or wrong; `challenge` becomes `WWW-Authenticate`. */
export class UnauthorizedHttpError extends HttpError {
  constructor(challenge: string, message?: string, options: ErrorOptions = {}) {
    super(401, message, { code: 'HK_UNAUTHORIZED', ...options, headers: { 'www-authenticate': challenge, ...options.headers } });
  }
}

/** 403: the client is known but not allowed. */
export class AccessDeniedHttpError extends HttpError {
  constructor(message?: string, options: ErrorOptions = {}) {
    super(403, message, { code: 'HK_ACCESS_DENIED', ...options });
  }
}

/** 404: nothing here. */
export class NotFoundHttpError extends HttpError {
  constructor(message?: string, options: ErrorOptions = {}) {
    super(404, message, { code: 'HK_NOT_FOUND', ...options });
  }
}

/** 405: the resource exists for other methods; they are listed in `Allow`. */
export class MethodNotAllowedHttpError extends HttpError {
  readonly allowedMethods: readonly string[];

  constructor(allowedMethods: readonly string[], message?: string, options: ErrorOptions = {}) {
    super(405, message, { code: 'HK_METHOD_NOT_ALLOWED', ...options, headers: { allow: allowedMethods.join(', '), ...options.headers } });
    this.allowedMethods = allowedMethods;
  }
}

/** 406: none of the formats the client accepts can be produced. */
export class NotAcceptableHttpError extends HttpError {
  constructor(message?: string, options: ErrorOptions = {}) {
    super(406, message, { code: 'HK_NOT_ACCEPTABLE', ...options });
  }
}

/** 408: the request (its body, mostly) did not arrive within the server's request timeout. */
export class RequestTimeoutHttpError extends HttpError {
  constructor(message?: string, options: ErrorOptions = {}) {
    super(408, message, { code: 'HK_REQUEST_TIMEOUT', ...options });
  }
}

/** 409: the request conflicts with the resource's current state. */
export class ConflictHttpError extends HttpError {
  constructor(message?: string, options: ErrorOptions = {}) {
    super(409, message, { code: 'HK_CONFLICT', ...options });
  }
}

/** 413: the body is larger than the configured limit. */
export class PayloadTooLargeHttpError extends HttpError {
  constructor(message?: string, options: ErrorOptions = {}) {
    super(413, message, { code: 'HK_PAYLOAD_TOO_LARGE', ...options });
  }
}

/** 415: the body's Content-Type is not one the endpoint reads. */
export class UnsupportedMediaTypeHttpError extends HttpError {
  constructor(message?: string, options: ErrorOptions = {}) {
    super(415, message, { code: 'HK_UNSUPPORTED_MEDIA_TYPE', ...options });
  }
}

/** 422: the body is well-formed but its content is invalid. */
export class UnprocessableEntityHttpError extends HttpError {
  constructor(message?: string, options: ErrorOptions = {}) {
    super(422, message, { code: 'HK_UNPROCESSABLE_ENTITY', ...options });
  }
}

/** 429: too many requests; `retryAfter` (seconds) becomes `Retry-After`. */
export class TooManyRequestsHttpError extends HttpError {
  constructor(retryAfter?: number, message?: string, options: ErrorOptions = {}) {
    const headers: Record<string, string> = retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) };
    super(429, message, { code: 'HK_TOO_MANY_REQUESTS', ...options, headers: { ...headers, ...options.headers } });
  }
}

/** 431: the request's header fields (or, after a chunked body, its trailer fields) are larger than the server takes. */
export class RequestHeaderFieldsTooLargeHttpError extends HttpError {
  constructor(message?: string, options: ErrorOptions = {}) {
    super(431, message, { code: 'HK_REQUEST_HEADER_FIELDS_TOO_LARGE', ...options });
  }
}

/** 501: the server does not implement what the request asks for (a feature not built yet); what a client made up is a 400, not this. */
export class NotImplementedHttpError extends HttpError {
  constructor(message?: string, options: ErrorOptions = {}) {
    super(501, message, { code: 'HK_NOT_IMPLEMENTED', ...options });
  }
}

/** 503: the service cannot answer now; `retryAfter` (seconds) becomes `Retry-After`. */
export class ServiceUnavailableHttpError extends HttpError {
  constructor(retryAfter?: number, message?: string, options: ErrorOptions = {}) {
    const headers: Record<string, string> = retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) };
    super(503, message, { code: 'HK_SERVICE_UNAVAILABLE', ...options, headers: { ...headers, ...options.headers } });
  }
}

/**
 * 503: the kernel had no response for the request within the server's response timeout (a controller
 * or listener whose promise never settled, or settled too late). The server answers it through
 * `HttpKernel.handleException()`, as a 5xx is: logged CRITICAL, an error page, `kernel.terminate`.
 * A 503 rather than Hono's 504: no gateway waited on an upstream; it is this server that cannot
 * answer in time (Go's http.TimeoutHandler says 503 too).
 */
export class ResponseTimeoutError extends HttpError {
  /** The limit that elapsed, in milliseconds. */
  readonly timeoutMs: number;
  /** The request's `_route` when the limit passed; null before routing, or for none. */
  readonly route: string | null;
  /** Its `_controller` by name (describeController); null when none had been chosen yet. */
  readonly controller: string | null;

  /**
   * The message names the route and the controller the request was in (`route` and `controller`
   * in `options`; a `controller` of null says none had been chosen yet), so that the developer can
   * find the slow code: the error is raised by the server's timer, and its stack shows only that.
   * `stalled` (inject()'s cut of a stream body that began, then gave no chunk for `timeoutMs`) says that instead of `not ready`.
   */
  constructor(timeoutMs: number, options: ErrorOptions & { route?: string | null; controller?: string | null; stalled?: boolean } = {}) {
    const { route = null, controller, stalled = false, ...rest } = options;
    // `stalled`: the response's stream began, then gave no chunk for as long (inject()'s cut of a body gone quiet), which `not ready` would misstate.
    const what = stalled ? `The response body stream gave no chunk for ${describeDuration(timeoutMs)} once begun` : `The response was not ready within ${describeDuration(timeoutMs)}`;
    super(503, `${what}${runningIn(route, controller)}.`, { code: 'HK_RESPONSE_TIMEOUT', ...rest });
    this.timeoutMs = timeoutMs;
    this.route = route;
    this.controller = controller ?? null;
  }
}

/** Where a request was when its response timeout passed, as the ResponseTimeoutError's message says it; nothing when not told. */
function runningIn(route: string | null, controller: string | null | undefined): string {
  const parts = route === null ? [] : [`route "${route}"`];
  if (controller === null) parts.push('no controller chosen yet');
  else if (controller !== undefined) parts.push(`controller "${controller}"`);
  return parts.length === 0 ? '' : ` (${parts.join(', ')})`;
}

/**
 * 499 (nginx's Client Closed Request): the client closed the connection before its response was
 * sent. The reason `request.signal` is aborted with when the client leaves; an error that follows
 * from that abort (the AbortError of a wait on the signal) is answered as this one, its cause the
 * original: ErrorListener logs it at INFO, as the client's doing, and the page made for it is never sent.
 */
export class ClientClosedError extends HttpError {
  constructor(options: ErrorOptions = {}) {
    super(499, 'The client closed the connection before the response was sent.', { code: 'HK_CLIENT_CLOSED_REQUEST', ...options });
  }
}

/**
 * A problem with the request itself (bad encoding, a forged Host header, an unreadable body),
 * found while reading it. The kernel turns it into a 400 with the same message.
 */
export class RequestError extends Error {
  readonly code: string;

  constructor(message: string, options: { cause?: unknown; code?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code ?? 'HK_BAD_REQUEST';
  }
}

/** A request that looks forged or dangerous (an invalid Host header, say). */
export class SuspiciousOperationError extends RequestError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, code: 'HK_SUSPICIOUS_OPERATION' });
  }
}

/**
 * A well-formed Host outside the trusted hosts (`Untrusted Host "evil.test".`): a name someone may
 * own and point at the server (DNS rebinding), which debug details are never shown on.
 */
export class UntrustedHostError extends SuspiciousOperationError {
  constructor(host: string) {
    super(`Untrusted Host "${host}".`);
  }
}

/** A request that cannot be read (malformed percent-encoding, invalid JSON body...). */
export class MalformedRequestError extends RequestError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { ...options, code: 'HK_MALFORMED_REQUEST' });
  }
}

/** The controller returned neither a Response nor anything a `kernel.view` listener could turn into one. */
export class ControllerDoesNotReturnResponseError extends Error {
  readonly code = 'HK_CONTROLLER_NO_RESPONSE';

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * A sub-request nested deeper than MAX_SUB_REQUEST_DEPTH: `handle()` refuses it before any listener
 * runs. A controller that makes a sub-request to itself (directly, or through others) would
 * otherwise never stop, and its chain of promises would hold the event loop, every client's
 * requests and the response timeout with it, until the process ran out of memory.
 */
export class SubRequestTooDeepError extends Error {
  readonly code = 'HK_SUB_REQUEST_TOO_DEEP';

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * A sub-request past MAX_SUB_REQUESTS under one sub-request of the main request: `handle()` refuses it before any
 * listener runs. A fragment that renders itself in two places doubles at each level, and would
 * otherwise hold the event loop long after the depth bound has stopped each branch.
 */
export class TooManySubRequestsError extends Error {
  readonly code = 'HK_TOO_MANY_SUB_REQUESTS';

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * A Response that could not be written to the client: a header node:http refuses (CR/LF or a
 * character beyond Latin-1 in a value, a name that is no token), an interim status, a body of
 * another type. The server raises it before any byte is sent, and the kernel answers it as it
 * answers errors from a controller (`HttpKernel.handleException()`): an error page, logged, and
 * in debug mode the profile of the request. The refusal is its `cause`.
 */
export class ResponseNotSendableError extends Error {
  readonly code = 'HK_RESPONSE_NOT_SENDABLE';

  /** `headers`: the refused response's, so that a value node:http refused for a character beyond Latin-1 is named with what to do. */
  constructor(cause: unknown, headers?: Readonly<Record<string, unknown>>) {
    super(`The response cannot be sent: ${describeCause(cause)}${headers === undefined ? '' : beyondLatin1Hint(cause, headers)}`, { cause });
    this.name = new.target.name;
  }
}

/**
 * A stream body destroyed without an error before its end (`destroy()` where an end is `push(null)`):
 * node reads it as a cut, not an end. The server raises it: before the first chunk nothing was sent,
 * and the kernel answers it as any error (its page, logged, and in debug mode the profile); after it,
 * the answer is cut, and it is logged.
 */
export class ResponseBodyDestroyedError extends Error {
  readonly code = 'HK_RESPONSE_BODY_DESTROYED';

  /** `begun`: the body had given a chunk, so the answer was cut after its head. */
  constructor(begun: boolean) {
    super(
      begun
        ? 'The response body stream was destroyed before its end, without an error: the answer was cut after its head.'
        : 'The response body stream was destroyed before its first chunk was sent, without an error (an empty body ends with push(null)).',
    );
    this.name = new.target.name;
  }
}

function describeCause(cause: unknown): string {
  const message = cause instanceof Error ? cause.message : String(cause);
  return /[.!?]$/.test(message) ? message : `${message}.`;
}

const BEYOND_LATIN1 = /[^\u0000-\u00ff]/u;

/**
 * node:http writes header values as Latin-1 and refuses a character beyond it with "Invalid character
 * in header content", which reads as a control character: the character and the way out.
 */
function beyondLatin1Hint(cause: unknown, headers: Readonly<Record<string, unknown>>): string {
  // The header node:http names (`["content-disposition"]`), and only when it refused a character; named as
  // it was set, which may be in capitals where `response.headers` is written to directly.
  const named = (cause as { code?: unknown } | null)?.code === 'ERR_INVALID_CHAR' ? /\["([^"]+)"\]/.exec((cause as Error).message)?.[1] : undefined;
  const name = named?.toLowerCase();
  const value = named === undefined ? undefined : Object.hasOwn(headers, named) ? headers[named] : headers[name!];
  for (const text of Array.isArray(value) ? value : [value]) {
    const character = typeof text === 'string' ? BEYOND_LATIN1.exec(text)?.[0] : undefined;
    if (character === undefined) continue;
    const code = `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    // encodeURIComponent would encode a Location's slashes, and cannot write a host in punycode.
    const way = name === 'content-disposition'
      ? `give the file name as filename*=UTF-8'' and the name percent-encoded (RFC 6266), after an ASCII filename="..." for old clients`
      : name === 'location'
        ? 'give the URL to Response.redirect(), which writes it in ASCII (its host in punycode, the rest percent-encoded)'
        : 'percent-encode such text (encodeURIComponent) or keep it in the body';
    return ` Header values are Latin-1 text, and ${name} holds "${character}" (${code}), beyond it: ${way}.`;
  }
  return '';
}

/** `_controller` names something that cannot be called. */
export class InvalidControllerError extends Error {
  readonly code = 'HK_INVALID_CONTROLLER';

  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Whether a value is an HttpError (also across package copies, by shape: a numeric status and a headers object, not null). */
export function isHttpError(error: unknown): error is HttpError {
  // Thrown values come from anywhere: a Proxy whose getPrototypeOf trap or a getter throws is no HttpError, not a new failure.
  try {
    if (error instanceof HttpError) return true;
    if (!(error instanceof Error)) return false;
    const { status, headers } = error as Partial<HttpError>;
    return typeof status === 'number' && typeof headers === 'object' && headers !== null;
  } catch {
    return false;
  }
}
