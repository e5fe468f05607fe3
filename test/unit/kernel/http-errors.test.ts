// The HttpError family: status, stable code, default message, headers, cause.
import { STATUS_CODES, validateHeaderValue } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  AccessDeniedHttpError,
  BadRequestHttpError,
  ConflictHttpError,
  HttpError,
  MethodNotAllowedHttpError,
  NotAcceptableHttpError,
  NotFoundHttpError,
  NotImplementedHttpError,
  PayloadTooLargeHttpError,
  RequestHeaderFieldsTooLargeHttpError,
  RequestTimeoutHttpError,
  ResponseBodyDestroyedError,
  ResponseNotSendableError,
  ResponseTimeoutError,
  ClientClosedError,
  ControllerDoesNotReturnResponseError,
  InvalidControllerError,
  MalformedRequestError,
  RequestError,
  SubRequestTooDeepError,
  SuspiciousOperationError,
  TooManySubRequestsError,
  UntrustedHostError,
  isHttpError,
  describeController,
  ServiceUnavailableHttpError,
  TooManyRequestsHttpError,
  UnauthorizedHttpError,
  UnprocessableEntityHttpError,
  UnsupportedMediaTypeHttpError,
} from '../../../kernel/index.js';

const family: Array<[make: () => HttpError, status: number, code: string, name: string, headers: Record<string, string>]> = [
  [() => new BadRequestHttpError(), 400, 'HK_BAD_REQUEST', 'BadRequestHttpError', {}],
  [() => new UnauthorizedHttpError('Bearer realm="api"'), 401, 'HK_UNAUTHORIZED', 'UnauthorizedHttpError', { 'www-authenticate': 'Bearer realm="api"' }],
  [() => new AccessDeniedHttpError(), 403, 'HK_ACCESS_DENIED', 'AccessDeniedHttpError', {}],
  [() => new NotFoundHttpError(), 404, 'HK_NOT_FOUND', 'NotFoundHttpError', {}],
  [() => new MethodNotAllowedHttpError(['GET', 'HEAD']), 405, 'HK_METHOD_NOT_ALLOWED', 'MethodNotAllowedHttpError', { allow: 'GET, HEAD' }],
  [() => new NotAcceptableHttpError(), 406, 'HK_NOT_ACCEPTABLE', 'NotAcceptableHttpError', {}],
  [() => new RequestTimeoutHttpError(), 408, 'HK_REQUEST_TIMEOUT', 'RequestTimeoutHttpError', {}],
  [() => new ConflictHttpError(), 409, 'HK_CONFLICT', 'ConflictHttpError', {}],
  [() => new PayloadTooLargeHttpError(), 413, 'HK_PAYLOAD_TOO_LARGE', 'PayloadTooLargeHttpError', {}],
  [() => new UnsupportedMediaTypeHttpError(), 415, 'HK_UNSUPPORTED_MEDIA_TYPE', 'UnsupportedMediaTypeHttpError', {}],
  [() => new UnprocessableEntityHttpError(), 422, 'HK_UNPROCESSABLE_ENTITY', 'UnprocessableEntityHttpError', {}],
  [() => new TooManyRequestsHttpError(30), 429, 'HK_TOO_MANY_REQUESTS', 'TooManyRequestsHttpError', { 'retry-after': '30' }],
  [() => new TooManyRequestsHttpError(), 429, 'HK_TOO_MANY_REQUESTS', 'TooManyRequestsHttpError', {}],
  [() => new RequestHeaderFieldsTooLargeHttpError(), 431, 'HK_REQUEST_HEADER_FIELDS_TOO_LARGE', 'RequestHeaderFieldsTooLargeHttpError', {}],
  [() => new NotImplementedHttpError(), 501, 'HK_NOT_IMPLEMENTED', 'NotImplementedHttpError', {}],
  [() => new ServiceUnavailableHttpError(120), 503, 'HK_SERVICE_UNAVAILABLE', 'ServiceUnavailableHttpError', { 'retry-after': '120' }],
  [() => new ServiceUnavailableHttpError(), 503, 'HK_SERVICE_UNAVAILABLE', 'ServiceUnavailableHttpError', {}],
];

test('each HttpError has its status, stable code, class name, the status text as default message, and its headers', () => {
  for (const [make, status, code, name, headers] of family) {
    const error = make();
    assert.instance(error, HttpError, name);
    assert.instance(error, Error, name);
    assert.is(error.status, status, name);
    assert.is(error.code, code, name);
    assert.is(error.name, name);
    assert.is(error.message, STATUS_CODES[status], name);
    assert.equal(error.headers, headers, name);
    assert.is(error.cause, undefined, name);
    assert.not.ok('cause' in error, `${name}: no cause given, none set (util.inspect would show [cause]: undefined)`);
  }
});

test('a message, a cause, extra headers and another code are kept; the caller\'s headers win over the computed ones', () => {
  const cause = new Error('rate limiter said no');
  const limited = new TooManyRequestsHttpError(30, 'Slow down.', { cause, headers: { 'retry-after': '60', 'x-rate-limit': '100' }, code: 'APP_RATE_LIMITED' });
  assert.is(limited.message, 'Slow down.');
  assert.is(limited.cause, cause);
  assert.equal(limited.headers, { 'retry-after': '60', 'x-rate-limit': '100' });
  assert.is(limited.code, 'APP_RATE_LIMITED');
  const unauthorized = new UnauthorizedHttpError('Basic realm="a"', 'Log in.', { headers: { 'www-authenticate': 'Bearer', 'cache-control': 'no-store' } });
  assert.equal(unauthorized.headers, { 'www-authenticate': 'Bearer', 'cache-control': 'no-store' });
  const generic = new HttpError(418);
  assert.is(generic.message, "I'm a Teapot");
  assert.is(generic.code, 'HK_HTTP_418');
  assert.is(new HttpError(599).message, 'HTTP error', 'a status with no text');
});

test('a ResponseTimeoutError is a 503 whose message names the limit in seconds', () => {
  const error = new ResponseTimeoutError(30_000);
  assert.instance(error, HttpError);
  assert.is(error.status, 503);
  assert.is(error.code, 'HK_RESPONSE_TIMEOUT');
  assert.is(error.name, 'ResponseTimeoutError');
  assert.is(error.timeoutMs, 30_000);
  assert.equal(error.headers, {});
  assert.is(error.message, 'The response was not ready within 30 seconds.');
  assert.is(new ResponseTimeoutError(1_000).message, 'The response was not ready within 1 second.');
  assert.is(new ResponseTimeoutError(200).message, 'The response was not ready within 0.2 seconds.');
  assert.is(new ResponseTimeoutError(1_500).message, 'The response was not ready within 1.5 seconds.');
  // A stream that began, then went quiet (inject()'s cut): said so, with the route and controller still.
  const stalled = new ResponseTimeoutError(200, { stalled: true, route: 'feed', controller: 'feed' });
  assert.is(stalled.message, 'The response body stream gave no chunk for 0.2 seconds once begun (route "feed", controller "feed").');
  assert.equal([stalled.status, stalled.code, stalled.timeoutMs, Object.hasOwn(stalled, 'stalled')], [503, 'HK_RESPONSE_TIMEOUT', 200, false]);
});

test('a ResponseTimeoutError told the route and controller names them, or says no controller was chosen yet', () => {
  const named = new ResponseTimeoutError(200, { route: 'book', controller: 'BookController::show' });
  assert.is(named.message, 'The response was not ready within 0.2 seconds (route "book", controller "BookController::show").');
  assert.is(named.route, 'book');
  assert.is(named.controller, 'BookController::show');
  assert.is(new ResponseTimeoutError(200, { route: null, controller: 'show' }).message, 'The response was not ready within 0.2 seconds (controller "show").');
  const early = new ResponseTimeoutError(200, { route: null, controller: null });
  assert.is(early.message, 'The response was not ready within 0.2 seconds (no controller chosen yet).');
  assert.is(early.controller, null);
  assert.is(new ResponseTimeoutError(200, { route: 'book' }).message, 'The response was not ready within 0.2 seconds (route "book").');
  assert.equal(new ResponseTimeoutError(200, { route: 'book', controller: 'show', headers: { 'retry-after': '5' } }).headers, { 'retry-after': '5' });
});

test('describeController names a function, a registered name, an [object, method] pair, or none', () => {
  class BookController {}
  assert.is(describeController(function show() {}), 'show');
  assert.is(describeController(() => undefined), 'anonymous function');
  assert.is(describeController('books.show'), 'books.show');
  assert.is(describeController([new BookController(), 'show']), 'BookController::show');
  assert.is(describeController(undefined), null);
});

test('describeController never throws: a Proxy whose traps throw, a revoked one, a name that is no string are "unnamed" or their kind', () => {
  const hostile = new Proxy({}, { get() { throw new Error('trap'); }, getPrototypeOf() { throw new Error('trap'); } });
  const { proxy: revoked, revoke } = Proxy.revocable([], {});
  revoke();
  const throwingName = new Proxy(function show() {}, { get() { throw new Error('trap'); } });
  assert.is(describeController([hostile, 'show']), 'unnamed');
  assert.is(describeController(['x', { toString() { throw new Error('no'); } }]), 'unnamed');
  assert.is(describeController(revoked), 'unnamed');
  assert.is(describeController(throwingName), 'unnamed');
  assert.is(describeController([Object.create(null), Symbol('show')]), 'object::Symbol(show)');
  assert.is(describeController(Object.defineProperty(function show() {}, 'name', { value: 42 })), 'anonymous function');
});

test('a ClientClosedError is a 499 (nginx\'s Client Closed Request) that says the client left', () => {
  const error = new ClientClosedError({ cause: new Error('aborted') });
  assert.instance(error, HttpError);
  assert.is(error.status, 499);
  assert.is(error.code, 'HK_CLIENT_CLOSED_REQUEST');
  assert.is(error.name, 'ClientClosedError');
  assert.is(error.message, 'The client closed the connection before the response was sent.');
  assert.is((error.cause as Error).message, 'aborted');
});

test('ResponseNotSendableError names a character beyond Latin-1 of a header set in capitals too (response.headers[\'Content-Disposition\'] = ...), as node:http names it', () => {
  const refusal = (name: string, value: string): unknown => {
    try {
      validateHeaderValue(name, value);
    } catch (error) {
      return error;
    }
    throw new Error('not refused');
  };
  const value = 'attachment; filename="\u2603.pdf"';
  const message = new ResponseNotSendableError(refusal('Content-Disposition', value), { 'Content-Disposition': value }).message;
  assert.is(message, 'The response cannot be sent: Invalid character in header content ["Content-Disposition"]. Header values are Latin-1 text, and content-disposition holds "\u2603" (U+2603), beyond it: give the file name as filename*=UTF-8\'\' and the name percent-encoded (RFC 6266), after an ASCII filename="..." for old clients.');
  assert.match(new ResponseNotSendableError(refusal('x-price', '5 \u20ac'), { 'x-price': '5 \u20ac' }).message, /x-price holds "\u20ac" \(U\+20AC\)/);
});

test('ResponseNotSendableError for a Location beyond Latin-1 says Response.redirect() writes it, not encodeURIComponent, which would encode its slashes and no host in punycode', () => {
  const value = 'https://b\u00fccher.example/\u20ac';
  let refusal: unknown;
  try {
    validateHeaderValue('location', value);
  } catch (error) {
    refusal = error;
  }
  assert.is(new ResponseNotSendableError(refusal, { location: value }).message, 'The response cannot be sent: Invalid character in header content ["location"]. Header values are Latin-1 text, and location holds "\u20ac" (U+20AC), beyond it: give the URL to Response.redirect(), which writes it in ASCII (its host in punycode, the rest percent-encoded).');
});

test('a RequestError (a 400 found while reading the request) and its kinds have their stable code and class name, and a cause only when given one', () => {
  const cause = new Error('bad byte');
  for (const [error, code, name] of [
    [new RequestError('Unreadable.'), 'HK_BAD_REQUEST', 'RequestError'],
    [new RequestError('Unreadable.', { code: 'APP_BAD' }), 'APP_BAD', 'RequestError'],
    [new SuspiciousOperationError('Forged.'), 'HK_SUSPICIOUS_OPERATION', 'SuspiciousOperationError'],
    [new MalformedRequestError('Bad JSON.'), 'HK_MALFORMED_REQUEST', 'MalformedRequestError'],
    [new UntrustedHostError('evil.test'), 'HK_SUSPICIOUS_OPERATION', 'UntrustedHostError'],
  ] as const) {
    assert.instance(error, RequestError, name);
    assert.is(error.code, code, name);
    assert.is(error.name, name);
    assert.not.ok('cause' in error, `${name}: no cause given, none set`);
  }
  assert.instance(new UntrustedHostError('evil.test'), SuspiciousOperationError);
  assert.is(new UntrustedHostError('evil.test').message, 'Untrusted Host "evil.test".');
  for (const error of [new RequestError('x', { cause }), new SuspiciousOperationError('x', { cause }), new MalformedRequestError('x', { cause })]) assert.is(error.cause, cause, error.name);
});

test("the kernel's own errors have their stable code and class name", () => {
  for (const [error, code, name] of [
    [new ControllerDoesNotReturnResponseError('m'), 'HK_CONTROLLER_NO_RESPONSE', 'ControllerDoesNotReturnResponseError'],
    [new SubRequestTooDeepError('m'), 'HK_SUB_REQUEST_TOO_DEEP', 'SubRequestTooDeepError'],
    [new TooManySubRequestsError('m'), 'HK_TOO_MANY_SUB_REQUESTS', 'TooManySubRequestsError'],
    [new InvalidControllerError('m'), 'HK_INVALID_CONTROLLER', 'InvalidControllerError'],
    [new ResponseNotSendableError(new Error('m')), 'HK_RESPONSE_NOT_SENDABLE', 'ResponseNotSendableError'],
    [new ResponseBodyDestroyedError(false), 'HK_RESPONSE_BODY_DESTROYED', 'ResponseBodyDestroyedError'],
  ] as const) {
    assert.instance(error, Error, name);
    assert.not.instance(error, HttpError, name);
    assert.is(error.code, code, name);
    assert.is(error.name, name);
  }
});

test('isHttpError() takes an HttpError, or an Error of its shape from another copy of the package (a numeric status, a headers object), and nothing else', () => {
  assert.ok(isHttpError(new NotFoundHttpError()));
  assert.ok(isHttpError(Object.assign(new Error('elsewhere'), { status: 404, headers: {} })));
  assert.not.ok(isHttpError(new Error('plain')));
  assert.not.ok(isHttpError({ status: 404, headers: {}, message: 'not an Error' }));
  assert.not.ok(isHttpError(Object.assign(new Error('x'), { status: '404', headers: {} })), 'a status that is no number');
  assert.not.ok(isHttpError(Object.assign(new Error('x'), { status: 404, headers: null })), 'headers null');
  assert.not.ok(isHttpError(Object.assign(new Error('x'), { status: 404, headers: 'allow: GET' })), 'headers no object');
  assert.not.ok(isHttpError(Object.assign(new Error('x'), { status: 404 })), 'no headers');
  assert.not.ok(isHttpError(Object.assign(new Error('x'), { headers: {} })), 'no status');
  assert.not.ok(isHttpError(null));
  const trap = () => {
    throw new Error('trap');
  };
  assert.is(isHttpError(new Proxy({}, { getPrototypeOf: trap })), false, 'a Proxy whose getPrototypeOf throws');
  assert.is(isHttpError(Object.defineProperty(new Error('x'), 'status', { get: trap })), false, 'a status getter that throws');
});

test('ResponseNotSendableError ends the refusal with a period, and adds a hint only for a character node:http refused in a named header that is beyond Latin-1', () => {
  const invalidChar = (message: string) => Object.assign(new TypeError(message), { code: 'ERR_INVALID_CHAR' });
  const cause = new Error('e.g. no way');
  const plain = new ResponseNotSendableError(cause);
  assert.is(plain.message, 'The response cannot be sent: e.g. no way.');
  assert.is(plain.cause, cause);
  assert.is(new ResponseNotSendableError(new Error('Refused!')).message, 'The response cannot be sent: Refused!');
  assert.is(new ResponseNotSendableError(null, {}).message, 'The response cannot be sent: null.');
  assert.is(new ResponseNotSendableError(invalidChar('Invalid character in statusMessage')).message, 'The response cannot be sent: Invalid character in statusMessage.');
  assert.is(new ResponseNotSendableError(invalidChar('Invalid character in statusMessage'), { 'x-a': '\u20ac' }).message, 'The response cannot be sent: Invalid character in statusMessage.', 'no header named');
  assert.is(new ResponseNotSendableError(invalidChar('Invalid character in header content ["x-a"]'), { 'x-a': 'a\r\nb' }).message, 'The response cannot be sent: Invalid character in header content ["x-a"].', 'a control character, no hint');
  assert.is(new ResponseNotSendableError(invalidChar('Invalid character in header content ["x-a"]')).message, 'The response cannot be sent: Invalid character in header content ["x-a"].', 'no headers given');
  assert.is(new ResponseNotSendableError(new Error('Invalid header ["x-a"]'), { 'x-a': '\u20ac' }).message, 'The response cannot be sent: Invalid header ["x-a"].', 'not a refused character');
  assert.is(
    new ResponseNotSendableError(invalidChar('Invalid character in header content ["x-name"]'), { 'x-name': ['plain', 'Erd\u0151s'] }).message,
    'The response cannot be sent: Invalid character in header content ["x-name"]. Header values are Latin-1 text, and x-name holds "\u0151" (U+0151), beyond it: percent-encode such text (encodeURIComponent) or keep it in the body.',
  );
});

test.run();
