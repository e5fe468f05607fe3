import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BadRequestHttpError, ControllerResolver, EventDispatcher, HttpKernel, Request, RequestEvent, RequestType } from '../../../kernel/index.js';
import { MalformedPathError, Route, RouteCollection, RouterListener, UrlMatcher } from '../../../lib/routing/index.js';
import { thrown } from '../helpers.js';

const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver());

/** The Location of the redirect the router answers `target` with, on host a.test. */
function redirectOf(target: string): string | undefined {
  const routes = new RouteCollection();
  routes.add('health', new Route('/health', { methods: ['GET'] }));
  routes.add('book', new Route('/books/:id', { methods: ['GET'] }));
  const event = new RequestEvent(kernel, new Request(target, { headers: { host: 'a.test' } }), RequestType.MAIN);
  new RouterListener(new UrlMatcher(routes)).onKernelRequest(event);
  assert.is(event.response?.status, 301, target);
  return event.response?.getHeader('location');
}

test('a trailing-slash redirect keeps the path and query as sent when they are a valid URI', () => {
  assert.is(redirectOf('/health/'), 'http://a.test/health');
  assert.is(redirectOf("/health/?a=1&b=%C3%A9&c=x:y/z?@!$'()*+,;=~"), "http://a.test/health?a=1&b=%C3%A9&c=x:y/z?@!$'()*+,;=~");
  assert.is(redirectOf('/books/caf%C3%A9/'), 'http://a.test/books/caf%C3%A9');
});

test('a redirect percent-encodes what no URI may hold, so the client\'s markup never reaches Location', () => {
  assert.is(redirectOf('/health/?q=<script>x</script>'), 'http://a.test/health?q=%3Cscript%3Ex%3C/script%3E');
  assert.is(redirectOf('/health/?a="><img/src=x>&b={|}^`\\'), 'http://a.test/health?a=%22%3E%3Cimg/src=x%3E&b=%7B%7C%7D%5E%60%5C');
  assert.is(redirectOf('/books/<b>/'), 'http://a.test/books/%3Cb%3E');
});

test('a redirect encodes a % that starts no percent-encoding, and an embedder\'s non-ASCII text as UTF-8', () => {
  assert.is(redirectOf('/health/?a=%41&b=%zz&c=%'), 'http://a.test/health?a=%41&b=%25zz&c=%25');
  assert.is(redirectOf('/health/?q=é €'), 'http://a.test/health?q=%C3%A9%20%E2%82%AC');
  assert.is(redirectOf('/health/?q=\ud800'), 'http://a.test/health?q=%EF%BF%BD', 'a lone surrogate is U+FFFD, never a URIError');
});


test('a redirect writes a control character of an embedder\'s text as two hex digits, and a % followed by one hex digit as %25', () => {
  assert.is(redirectOf('/health/?a=\t&b=\u0010&c=\u001f'), 'http://a.test/health?a=%09&b=%10&c=%1F');
  assert.is(redirectOf('/health/?a=%4x&b=%4'), 'http://a.test/health?a=%254x&b=%254');
});

/** The Location of the redirect for a request to `url` (absolute) when `/secure` takes https only and `/plain` http only. */
function schemeRedirectOf(url: string, ports?: { http: number; https: number }): string | undefined {
  const routes = new RouteCollection();
  routes.add('secure', new Route('/secure', { methods: ['GET'], schemes: ['https'] }));
  routes.add('plain', new Route('/plain', { methods: ['GET'], schemes: ['http'] }));
  const { protocol, host, pathname, search } = new URL(url);
  const request = new Request(`${pathname}${search}`, { headers: { host }, scheme: protocol === 'https:' ? 'https' : 'http' });
  const event = new RequestEvent(kernel, request, RequestType.MAIN);
  new RouterListener(new UrlMatcher(routes), null, ports).onKernelRequest(event);
  assert.is(event.response?.status, 301, url);
  return event.response?.getHeader('location');
}

test('a redirect to the other scheme goes to that scheme\'s port, not the port of the request', () => {
  assert.is(schemeRedirectOf('http://a.test:8000/secure?q=1'), 'https://a.test/secure?q=1');
  assert.is(schemeRedirectOf('http://a.test:8000/secure?q=1', { http: 8000, https: 8443 }), 'https://a.test:8443/secure?q=1');
  assert.is(schemeRedirectOf('https://a.test:8443/plain', { http: 8000, https: 8443 }), 'http://a.test:8000/plain');
  assert.is(schemeRedirectOf('https://[::1]:8443/plain', { http: 80, https: 8443 }), 'http://[::1]/plain');
});

test('the ports are read at each redirect, so a server can set them once it listens', () => {
  const routes = new RouteCollection();
  routes.add('secure', new Route('/secure', { methods: ['GET'], schemes: ['https'] }));
  const ports = { http: 80, https: 443 };
  const listener = new RouterListener(new UrlMatcher(routes), null, ports);
  const locationOf = (): string | undefined => {
    const event = new RequestEvent(kernel, new Request('/secure', { headers: { host: '127.0.0.1:41234' } }), RequestType.MAIN);
    listener.onKernelRequest(event);
    return event.response?.getHeader('location');
  };
  assert.is(locationOf(), 'https://127.0.0.1/secure');
  ports.https = 40999;
  assert.is(locationOf(), 'https://127.0.0.1:40999/secure');
});

test('a GET or HEAD of another percent-encoding of a route\'s path is redirected to the canonical path; other methods are a 404', () => {
  const routes = new RouteCollection();
  routes.add('cafe', new Route('/café', { methods: ['GET'] }));
  routes.add('book', new Route('/books/:id', { methods: ['GET', 'POST'], requirements: { id: '\\d+' } }));
  routes.add('dir', new Route('/dir/', { methods: ['GET'] }));
  const route = routeWith(new RouterListener(new UrlMatcher(routes)));
  assert.is(route('/caf%C3%A9'), 'cafe {}');
  assert.is(route('/caf%c3%a9?q=1'), '301 http://a.test/caf%C3%A9?q=1');
  assert.is(route('/%62ooks/%31', 'HEAD'), '301 http://a.test/books/1');
  assert.is(route('/%64ir'), '301 http://a.test/dir/');
  // Never served under the other spelling: that is what a check made before routing would not have seen.
  assert.is(route('/%62ooks/%31', 'POST'), 'No route found for "POST http://a.test/%62ooks/%31"');
  // A reserved character stays encoded: `%2F` is no `/`, and the 404 names the path as sent.
  assert.is(route('/books/1%2f2'), 'No route found for "GET http://a.test/books/1%2f2"');
});

test('a malformed percent-encoding in a parameter is a 400 whose cause is the MalformedPathError, caused by the URIError', () => {
  const routes = new RouteCollection();
  routes.add('book', new Route('/books/:id', { methods: ['GET'] }));
  const event = new RequestEvent(kernel, new Request('/books/%E0%A4%A', { headers: { host: 'a.test' } }), RequestType.MAIN);
  const error = thrown(() => new RouterListener(new UrlMatcher(routes)).onKernelRequest(event));
  assert.instance(error, BadRequestHttpError);
  assert.is((error as BadRequestHttpError).status, 400);
  assert.is(error.message, 'Malformed percent-encoding in parameter "id" of path "/books/%E0%A4%A".');
  assert.instance(error.cause, MalformedPathError);
  assert.is((error.cause as Error).message, error.message);
  assert.instance((error.cause as Error).cause, URIError);
});

test('a GET or HEAD of another spelling of a route\'s path is redirected also where a route of other methods matches it as sent', () => {
  const routes = new RouteCollection();
  routes.add('upload', new Route('{/:dir}/*path', { methods: ['POST'] }));
  routes.add('books', new Route('/books', { methods: ['GET'] }));
  const route = routeWith(new RouterListener(new UrlMatcher(routes)));
  assert.is(route('/%62ooks'), '301 http://a.test/books');
  assert.is(route('/%62ooks?q=1', 'HEAD'), '301 http://a.test/books?q=1');
  // No GET route under any spelling: the 405 stands.
  assert.is(route('/%62ooks/1'), 'No route found for "GET http://a.test/%62ooks/1": Method Not Allowed (Allow: POST)');
});

test('no redirect leads to a path with a "." or ".." segment, which a client resolves away (browsers and fetch() written %2E%2E too): the miss stands', () => {
  const routes = new RouteCollection();
  routes.add('files', new Route('/files/*path', { methods: ['GET'] }));
  routes.add('item', new Route('/items/:id', { methods: ['GET'] }));
  routes.add('secure', new Route('/secure/:id', { methods: ['GET'], schemes: ['https'] }));
  const route = routeWith(new RouterListener(new UrlMatcher(routes)));
  // The WHATWG URL parser, as browsers, fetch() and undici follow a Location: both spellings lead elsewhere.
  assert.is(new URL('http://a.test/files/%2E%2E/admin').pathname, '/admin');
  // Another spelling (`%66`): its canonical one would be `/files/../admin`, followed to `/admin`.
  assert.is(route('/%66iles/%2e%2e/admin?q=1'), 'No route found for "GET http://a.test/%66iles/%2e%2e/admin"');
  assert.is(route('/%66iles/a/.%2e/%2e/x'), 'No route found for "GET http://a.test/%66iles/a/.%2e/%2e/x"');
  // Asked as it is, the route answers.
  assert.is(route('/files/%2E%2E/admin'), 'files {"path":["..","admin"]}');
  // The trailing slash toggled, and the other scheme.
  assert.is(route('/items/../'), 'No route found for "GET http://a.test/items/../"');
  assert.is(route('/items/./'), 'No route found for "GET http://a.test/items/./"');
  assert.is(route('/items/%2E%2E'), 'item {"id":".."}');
  assert.is(route('/secure/..'), 'No route found for "GET http://a.test/secure/.."');
  // A dot in a segment is no dot segment, and other redirects are made.
  assert.is(route('/items/.well-known/'), '301 http://a.test/items/.well-known');
  assert.is(route('/items/x/'), '301 http://a.test/items/x');
  assert.is(route('/%66iles/a..b'), '301 http://a.test/files/a..b');
});

test('no trailing-slash nor scheme redirect leads to a path whose dot segment the request wrote encoded (%2E%2E, .%2e): the client would resolve it away', () => {
  const routes = new RouteCollection();
  routes.add('item', new Route('/items/:id', { methods: ['GET'] }));
  routes.add('secure', new Route('/secure/*path', { methods: ['GET'], schemes: ['https'] }));
  const route = routeWith(new RouterListener(new UrlMatcher(routes)));
  // Followed as it would be: `/secure/%2E%2E/admin` over https is `/admin`.
  assert.is(new URL('https://a.test/secure/%2E%2E/admin').pathname, '/admin');
  assert.is(route('/items/%2E%2E/'), 'No route found for "GET http://a.test/items/%2E%2E/"');
  assert.is(route('/items/.%2e/'), 'No route found for "GET http://a.test/items/.%2e/"');
  assert.is(route('/items/%2e/'), 'No route found for "GET http://a.test/items/%2e/"');
  assert.is(route('/secure/%2E%2E/admin'), 'No route found for "GET http://a.test/secure/%2E%2E/admin"');
  // Dots within a segment, encoded or not, are no dot segment.
  assert.is(route('/items/%2E%2Ex/'), '301 http://a.test/items/%2E%2Ex');
  assert.is(route('/secure/a/%2E.b'), '301 https://a.test/secure/a/%2E.b');
  // Asked as it is, the route answers.
  assert.is(route('/items/%2E%2E'), 'item {"id":".."}');
});

/** For `target` (and `method`), the route and parameters the listener matched, its redirect (`301 <location>`), or its error's message. */
function routeWith(listener: RouterListener): (target: string, method?: string) => string {
  return (target, method = 'GET') => {
    const request = new Request(target, { method, headers: { host: 'a.test' } });
    const event = new RequestEvent(kernel, request, RequestType.MAIN);
    try {
      listener.onKernelRequest(event);
    } catch (error) {
      return (error as Error).message;
    }
    return event.response == null ? `${request.attributes.get('_route')} ${JSON.stringify(request.attributes.get('_route_params'))}` : `${event.response.status} ${event.response.getHeader('location')}`;
  };
}

/** The router's answer to `target` for `method` (a 200, a redirect), or the message of the error it throws. */
function answer(routes: RouteCollection, target: string, method: string): { status: number; allow?: string; body: unknown } | string {
  const event = new RequestEvent(kernel, new Request(target, { method, headers: { host: 'a.test' } }), RequestType.MAIN);
  try {
    new RouterListener(new UrlMatcher(routes)).onKernelRequest(event);
  } catch (error) {
    return (error as Error).message;
  }
  return { status: event.response!.status, allow: event.response!.getHeader('allow'), body: event.response!.body };
}

function collection(...routes: Array<[string, string[]]>): RouteCollection {
  const result = new RouteCollection();
  for (const [path, methods] of routes) result.add(`${path} ${methods.join()}`, new Route(path, { methods }));
  return result;
}

test('OPTIONS * is a 200 with no content, its Allow the routes\' methods in route order (GET bringing HEAD) and OPTIONS', () => {
  const routes = collection(['/health', ['GET']], ['/books', ['POST', 'GET']], ['/books/:id', ['DELETE']]);
  assert.equal(answer(routes, '*', 'OPTIONS'), { status: 200, allow: 'GET, HEAD, POST, DELETE, OPTIONS', body: null });
  assert.equal(answer(collection(['/x', ['OPTIONS', 'GET']]), '*', 'OPTIONS'), { status: 200, allow: 'OPTIONS, GET, HEAD', body: null }, 'a route\'s OPTIONS is listed once');
  assert.equal(answer(new RouteCollection(), '*', 'OPTIONS'), { status: 200, allow: 'OPTIONS', body: null }, 'no routes: only OPTIONS itself');
});

test('OPTIONS * sends no Allow when a route takes any method: no list would name them all', () => {
  assert.equal(answer(collection(['/health', ['GET']], ['/any', []]), '*', 'OPTIONS'), { status: 200, allow: undefined, body: null });
});

test('OPTIONS to a URL with an empty path is OPTIONS *; to a path it is routed as any method is', () => {
  const routes = collection(['/health', ['GET']]);
  assert.equal(answer(routes, 'http://a.test', 'OPTIONS'), { status: 200, allow: 'GET, HEAD, OPTIONS', body: null });
  assert.is(answer(routes, 'http://a.test/health', 'OPTIONS'), 'No route found for "OPTIONS http://a.test/health": Method Not Allowed (Allow: GET, HEAD)');
  assert.is(answer(routes, '/health', 'OPTIONS'), 'No route found for "OPTIONS http://a.test/health": Method Not Allowed (Allow: GET, HEAD)');
});

test('"*" for another method than OPTIONS is a malformed request, never routed', () => {
  assert.is(answer(collection(['/health', ['GET']], ['/any', []]), '*', 'GET'), 'Invalid request target "*" for GET: "*" (asking about the server itself) is for OPTIONS only; name a path such as "/".');
});

test('a refused target is the same 400 from a router without the request checks before it, never a route\'s answer', () => {
  const routes = collection(['/', []], ['/health', []]);
  assert.is(answer(routes, '*', 'PATCH'), 'Invalid request target "*" for PATCH: "*" (asking about the server itself) is for OPTIONS only; name a path such as "/".');
  assert.is(answer(routes, '*?x', 'OPTIONS'), 'Invalid request target "*?x".');
  assert.is(answer(routes, 'ftp://a.test/health', 'GET'), 'Invalid request target "ftp://a.test/health": an absolute-form target is an http or https URL.');
  assert.is(answer(routes, 'http:///health', 'GET'), 'Invalid request target "http:///health": it names no host.');
  assert.is(answer(routes, '', 'GET'), 'Invalid request target "".');
});

test('a parameter or default named __proto__ is a plain property of _route_params, never its prototype', () => {
  const defaults = JSON.parse('{"__proto__": {"polluted": true}, "_controller": "c"}') as Record<string, unknown>;
  for (const [path, target, value] of [['/odd', '/odd', { polluted: true }], ['/odd/:__proto__', '/odd/a', 'a']] as const) {
    const routes = new RouteCollection();
    routes.add('odd', new Route(path, { defaults }));
    const request = new Request(target, { headers: { host: 'a.test' } });
    new RouterListener(new UrlMatcher(routes)).onKernelRequest(new RequestEvent(kernel, request, RequestType.MAIN));
    const routeParams = request.attributes.get('_route_params') as Record<string, unknown>;
    assert.is(Object.getPrototypeOf(routeParams), Object.prototype, path);
    assert.equal(Object.getOwnPropertyDescriptor(routeParams, '__proto__')?.value, value, path);
    assert.is((routeParams as { polluted?: unknown }).polluted, undefined, path);
    assert.equal(request.attributes.get('__proto__'), value, path);
  }
});

test.run();
