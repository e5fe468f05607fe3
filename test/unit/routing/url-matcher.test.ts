import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { thrown } from '../helpers.js';
import {
  InvalidRouteError,
  MalformedPathError,
  MethodNotAllowedError,
  ResourceNotFoundError,
  Route,
  RouteCollection,
  UrlGenerator,
  UrlMatcher,
  normalizePercentEncoding,
  type LookupResult,
  type MatchContext,
  type RouteOptions,
} from '../../../lib/routing/index.js';

function matcher(...routes: [string, string, RouteOptions?][]): UrlMatcher {
  const collection = new RouteCollection();
  for (const [name, path, options] of routes) collection.add(name, new Route(path, options));
  return new UrlMatcher(collection);
}

function context(method = 'GET', scheme: 'http' | 'https' = 'http', host = 'localhost'): MatchContext {
  return { method, host, scheme };
}

// A lookup without the route object, easy to compare.
function look(m: UrlMatcher, path: string, ctx = context()): Record<string, unknown> {
  const { route: _route, ...rest } = m.lookup(path, ctx) as LookupResult & { route?: unknown };
  return rest;
}

test('a static route matches with its name, route and defaults as params', () => {
  const m = matcher(['health', '/health', { methods: ['GET'], defaults: { _controller: 'health' } }]);
  const result = m.match('/health', context());
  assert.is(result.name, 'health');
  assert.is(result.route.path, '/health');
  assert.equal(result.params, { _controller: 'health' });
  assert.is(result.redirect, undefined);
});

test('a default named __proto__ is a plain property of the params, never their prototype', () => {
  const defaults = JSON.parse('{"__proto__": {"polluted": true}, "_controller": "c"}') as Record<string, unknown>;
  for (const [name, path, url] of [['static', '/odd', '/odd'], ['dynamic', '/odd/:id', '/odd/7']] as const) {
    const params = matcher([name, path, { defaults }]).match(url, context()).params;
    assert.is(Object.getPrototypeOf(params), Object.prototype, name);
    assert.equal(Object.getOwnPropertyDescriptor(params, '__proto__')?.value, { polluted: true }, name);
    assert.is((params as { polluted?: unknown }).polluted, undefined, name);
  }
});

test('a parameter named __proto__ is a plain property of the params, never their prototype', () => {
  const m = matcher(['odd', '/odd/:__proto__/*rest', { defaults: { _controller: 'c' } }]);
  const params = m.match('/odd/a%20b/c/d', context()).params;
  assert.is(Object.getPrototypeOf(params), Object.prototype);
  assert.is(Object.getOwnPropertyDescriptor(params, '__proto__')?.value, 'a b');
  assert.equal(params.rest, ['c', 'd']);
});

test('a host parameter named __proto__ is a plain property of the params, as a path one is', () => {
  const m = matcher(['odd', '/odd', { host: ':__proto__.example.com', defaults: { _controller: 'c' } }]);
  const params = m.match('/odd', context('GET', 'http', 'a.example.com')).params;
  assert.is(Object.getPrototypeOf(params), Object.prototype);
  assert.is(Object.getOwnPropertyDescriptor(params, '__proto__')?.value, 'a');
  assert.equal(Object.keys(params), ['_controller', '__proto__']);
});

test('the params list the defaults in their order, a parameter that overrides one in its place, then the other parameters (Symfony\'s mergeDefaults)', () => {
  const m = matcher(
    ['blog', '/blog/:page/:slug', { defaults: { _controller: 'c', page: 1, _format: 'html' } }],
    ['optional', '/opt/:a{/:b}', { defaults: { b: 'B', _controller: 'c' } }],
    ['host', '/h/:p', { host: ':sub.example.com', defaults: { sub: 'www', p: 0, _controller: 'c' } }],
  );
  const blog = m.match('/blog/2/hello', context()).params;
  assert.equal(Object.entries(blog), [['_controller', 'c'], ['page', '2'], ['_format', 'html'], ['slug', 'hello']]);
  assert.equal(Object.entries(m.match('/opt/1', context()).params), [['b', 'B'], ['_controller', 'c'], ['a', '1']]);
  assert.equal(Object.entries(m.match('/opt/1/2', context()).params), [['b', '2'], ['_controller', 'c'], ['a', '1']]);
  assert.equal(Object.entries(m.match('/h/7', context('GET', 'http', 'api.example.com')).params), [['sub', 'api'], ['p', '7'], ['_controller', 'c']]);
});

// Listeners may rewrite or drop a parameter (Symfony's request attributes are a plain bag).
test('matched params are ordinary properties: writable, deletable and enumerable', () => {
  const m = matcher(['book', '/books/:id', { defaults: { _controller: 'c' } }]);
  const params = m.match('/books/7', context()).params;
  for (const key of ['id', '_controller']) {
    assert.equal(Object.getOwnPropertyDescriptor(params, key), { value: params[key], writable: true, enumerable: true, configurable: true }, key);
  }
});

// A host condition keeps the generic tree walk (no generated search).
test('the tree walk compares long static text and checks a wildcard\'s requirement', () => {
  const m = matcher(
    ['long', '/a-rather-long-static-prefix/:id', { host: 'localhost' }],
    ['files', '/files/*path', { host: 'localhost', requirements: { path: '[a-z]+(/[a-z]+)*' } }],
  );
  assert.equal(look(m, '/a-rather-long-static-prefix/7'), { kind: 'match', name: 'long', params: { id: '7' } });
  assert.is(m.lookup('/a-rather-long-static-prefiz/7', context()).kind, 'not-found');
  assert.is(m.lookup('/b-rather-long-static-prefix/7', context()).kind, 'not-found');
  assert.equal(look(m, '/files/a/b'), { kind: 'match', name: 'files', params: { path: ['a', 'b'] } });
  assert.is(m.lookup('/files/a/7', context()).kind, 'not-found');
});

test('the tree walk rejects an empty parameter, or one failing its requirement, beside static text', () => {
  const m = matcher(['new', '/n/new', { host: 'localhost' }], ['num', '/n/:id/x', { host: 'localhost', requirements: { id: '\\d+' } }], ['any', '/n/:slug/y', { host: 'localhost' }]);
  assert.equal(look(m, '/n/7/x'), { kind: 'match', name: 'num', params: { id: '7' } });
  assert.is(look(m, '/n/new').name, 'new');
  assert.equal(look(m, '/n/abc/y'), { kind: 'match', name: 'any', params: { slug: 'abc' } });
  for (const path of ['/n/abc/x', '/n//x', '/n//y']) assert.is(m.lookup(path, context()).kind, 'not-found', path);
});

test('path parameters are decoded and overlay the defaults', () => {
  const m = matcher(['book', '/books/:id', { defaults: { id: 'none', _format: 'html' } }]);
  assert.equal(m.match('/books/caf%C3%A9%20au%20lait', context()).params, { id: 'café au lait', _format: 'html' });
});

test('an encoded slash stays inside its parameter', () => {
  const m = matcher(['file', '/files/:name']);
  assert.equal(m.match('/files/a%2Fb', context()).params, { name: 'a/b' });
});

test('a malformed percent-encoding is a MalformedPathError (400) naming the parameter', () => {
  const m = matcher(['book', '/books/:id']);
  assert.equal(look(m, '/books/%E0%A4%A').kind, 'malformed-path');
  const error = thrown(() => m.match('/books/%E0%A4%A', context()));
  assert.instance(error, MalformedPathError);
  assert.is(error.message, 'Malformed percent-encoding in parameter "id" of path "/books/%E0%A4%A".');
  assert.is((error as MalformedPathError).code, 'HK_ROUTING_MALFORMED_PATH');
  assert.is((error as MalformedPathError).status, 400);
  assert.instance(error.cause, URIError);
});

test('a malformed segment of a wildcard is a MalformedPathError too', () => {
  const m = matcher(['static', '/static/*path']);
  assert.instance(thrown(() => m.match('/static/a/%ZZ/b', context())), MalformedPathError);
});

test('matching is case-sensitive', () => {
  const m = matcher(['health', '/health']);
  assert.instance(thrown(() => m.match('/Health', context())), ResourceNotFoundError);
});

test('a static route does not match with a trailing slash added: GET is redirected, POST is a 404', () => {
  const m = matcher(['health', '/health']);
  assert.equal(look(m, '/health/'), { kind: 'redirect', name: 'health', params: {}, redirect: { path: '/health' } });
  const error = thrown(() => m.match('/health/', context('POST')));
  assert.instance(error, ResourceNotFoundError);
  assert.is(error.message, 'No routes found for "/health/".');
});

test('a GET for a path missing its trailing slash is redirected to it', () => {
  const m = matcher(['dir', '/dir/', { methods: ['GET'] }]);
  const result = m.match('/dir', context());
  assert.is(result.kind, 'redirect');
  assert.equal(result.redirect, { path: '/dir/' });
  assert.is(result.name, 'dir');
});

test('HEAD is redirected like GET after the trailing-slash retry', () => {
  const m = matcher(['health', '/health', { methods: ['GET'] }]);
  assert.equal(m.match('/health/', context('HEAD')).redirect, { path: '/health' });
});

test('a dynamic route is found by the trailing-slash retry with its parameters', () => {
  const m = matcher(['book', '/books/:id']);
  assert.equal(look(m, '/books/12/'), { kind: 'redirect', name: 'book', params: { id: '12' }, redirect: { path: '/books/12' } });
});

test('all trailing slashes are trimmed by the retry', () => {
  const m = matcher(['health', '/health']);
  assert.equal(m.match('/health///', context()).redirect, { path: '/health' });
});

// Whether the retry runs depends on how far the search read the path: these check that each place
// the search stops reading says so.
test('the trailing-slash retry runs where the search stopped at a character no route continues with, or at a wildcard refused by its requirement', () => {
  const m = matcher(['health', '/health'], ['healthz', '/healthz'], ['files', '/files/*path', { requirements: { path: '[a-z/]*[a-z]' } }]);
  assert.equal(look(m, '/health/'), { kind: 'redirect', name: 'health', params: {}, redirect: { path: '/health' } });
  assert.equal(look(m, '/files/a/b/'), { kind: 'redirect', name: 'files', params: { path: ['a', 'b'] }, redirect: { path: '/files/a/b' } });
});

test('several trailing slashes are redirected to a route that keeps one, as to a route that has none', () => {
  const m = matcher(['dir', '/dir/', { methods: ['GET'] }], ['health', '/health'], ['book', '/books/:id/']);
  assert.equal(look(m, '/dir//'), { kind: 'redirect', name: 'dir', params: {}, redirect: { path: '/dir/' } });
  assert.equal(look(m, '/dir///', context('HEAD')), { kind: 'redirect', name: 'dir', params: {}, redirect: { path: '/dir/' } });
  assert.equal(look(m, '/books/7//'), { kind: 'redirect', name: 'book', params: { id: '7' }, redirect: { path: '/books/7/' } });
  assert.equal(look(m, '/health//').redirect, { path: '/health' });
  assert.equal(look(m, '/nope//'), { kind: 'not-found', path: '/nope/' }, 'a search that never reached the slashes retries nothing, and names the path it would have tried last');
  assert.equal(look(m, '/dir//', context('POST')), { kind: 'not-found', path: '/dir//' });
  assert.is(m.explain('/dir//', context())[0]!.reason, 'Path "/dir//" matches only as "/dir/", a GET or HEAD is redirected there if no route matches.');
});

test('a miss names the last path tried: the toggled one for GET', () => {
  const m = matcher(['health', '/health', { methods: ['GET'] }]);
  const error = thrown(() => m.match('/robots.txt', context()));
  assert.instance(error, ResourceNotFoundError);
  assert.is(error.message, 'No routes found for "/robots.txt/".');
  assert.is((error as ResourceNotFoundError).path, '/robots.txt/');
  assert.is((error as ResourceNotFoundError).code, 'HK_ROUTING_NOT_FOUND');
  assert.is((error as ResourceNotFoundError).status, 404);
});

test('a GET miss with several trailing slashes names the path with one, however far the other routes let the search read', () => {
  const m = matcher(['dir', '/dir/'], ['book', '/books/:id/']);
  assert.equal(look(m, '/books//'), { kind: 'not-found', path: '/books/' });
  assert.equal(look(m, '/nope//'), { kind: 'not-found', path: '/nope/' });
  assert.equal(look(m, '/nope///', context('HEAD')), { kind: 'not-found', path: '/nope/' });
});

test('a miss that reads far into the path still tries the toggled path', () => {
  const m = matcher(['book', '/books/:id/edit/']);
  assert.equal(look(m, '/books/12/edit').kind, 'redirect');
  assert.equal(look(m, '/books/12/view'), { kind: 'not-found', path: '/books/12/view/' });
});

test('a POST miss is not retried', () => {
  const m = matcher(['health', '/health']);
  assert.is(thrown(() => m.match('/nothing/', context('POST'))).message, 'No routes found for "/nothing/".');
});

test('"/" is never toggled', () => {
  const m = matcher(['health', '/health']);
  assert.is(thrown(() => m.match('/', context())).message, 'No routes found for "/".');
  assert.is(thrown(() => m.match('//', context())).message, 'No routes found for "//".');
});

test('an empty path is matched as "/"', () => {
  const m = matcher(['home', '/']);
  assert.is(m.match('', context()).name, 'home');
});

test('HEAD matches GET routes', () => {
  const m = matcher(['health', '/health', { methods: ['GET'] }], ['book', '/books/:id', { methods: ['GET'] }]);
  assert.is(m.match('/health', context('HEAD')).name, 'health');
  assert.is(m.match('/books/1', context('HEAD')).name, 'book');
});

test('405 lists the allowed methods in order with HEAD after GET', () => {
  const m = matcher(
    ['show', '/books/:id', { methods: ['GET'] }],
    ['update', '/books/:id', { methods: ['PUT', 'PATCH'] }],
    ['replace', '/books/:id', { methods: ['PUT'] }],
    ['other', '/other', { methods: ['DELETE'] }],
  );
  const error = thrown(() => m.match('/books/12', context('DELETE')));
  assert.instance(error, MethodNotAllowedError);
  assert.equal((error as MethodNotAllowedError).allowedMethods, ['GET', 'HEAD', 'PUT', 'PATCH']);
  assert.is(error.message, 'Method Not Allowed (Allow: GET, HEAD, PUT, PATCH)');
  assert.is((error as MethodNotAllowedError).status, 405);
  assert.equal((error as MethodNotAllowedError).headers, { allow: 'GET, HEAD, PUT, PATCH' });
  assert.is((error as MethodNotAllowedError).code, 'HK_ROUTING_METHOD_NOT_ALLOWED');
});

test('405 on a static path collects the dynamic routes that match it too, in route order', () => {
  const m = matcher(['edit', '/books/:id', { methods: ['PUT'] }], ['new', '/books/new', { methods: ['GET', 'POST'] }]);
  assert.equal(look(m, '/books/new', context('DELETE')), { kind: 'method-not-allowed', allowedMethods: ['PUT', 'GET', 'HEAD', 'POST'] });
});

test('a route serving GET under the path with its trailing slash toggled wins over a 405 and a scheme redirect, as in Symfony\'s compiled matcher', () => {
  const m = matcher(['health', '/health', { methods: ['POST'] }], ['health_slash', '/health/', { methods: ['GET'] }]);
  assert.equal(look(m, '/health', context('GET')), { kind: 'redirect', name: 'health_slash', params: {}, redirect: { path: '/health/' } });
  assert.equal(look(m, '/health', context('HEAD')), { kind: 'redirect', name: 'health_slash', params: {}, redirect: { path: '/health/' } });
  assert.equal(look(m, '/health', context('PUT')), { kind: 'method-not-allowed', allowedMethods: ['POST'] }, 'no retry for other methods');
  const dynamic = matcher(['put', '/items/:id', { methods: ['PUT'] }], ['get', '/items/:id/', { methods: ['GET'] }]);
  assert.equal(look(dynamic, '/items/7', context('GET')), { kind: 'redirect', name: 'get', params: { id: '7' }, redirect: { path: '/items/7/' } });
  // The toggled path serves only another method as well: the 405 of the path asked for.
  const neither = matcher(['a', '/a', { methods: ['POST'] }], ['a_slash', '/a/', { methods: ['PUT'] }]);
  assert.equal(look(neither, '/a', context('GET')), { kind: 'method-not-allowed', allowedMethods: ['POST'] });
  // Over a scheme redirect: /x is https-only, /x/ is served over http.
  const scheme = matcher(['x', '/x', { schemes: ['https'], methods: ['POST'] }], ['x_slash', '/x/', { methods: ['GET'] }]);
  assert.equal(look(scheme, '/x', context('GET')), { kind: 'redirect', name: 'x_slash', params: {}, redirect: { path: '/x/' } });
  const login = matcher(['login', '/login', { schemes: ['https'] }], ['login_slash', '/login/']);
  assert.equal(look(login, '/login', context('GET')), { kind: 'redirect', name: 'login_slash', params: {}, redirect: { path: '/login/' } });
  assert.equal(look(matcher(['login', '/login', { schemes: ['https'] }]), '/login', context('GET')), { kind: 'redirect', name: 'login', params: {}, redirect: { path: '/login', scheme: 'https' } });
});

test('a route serving GET under the toggled path over another scheme wins over a 405 as well, redirected to that path and scheme (Symfony\'s testSlashAndVerbPrecedenceWithRedirection with testMissingTrailingSlashAndScheme)', () => {
  // Symfony's CompiledUrlMatcherTrait::doMatch() returns early at a route serving GET whose path
  // matches only with the trailing slash toggled, whatever its scheme (`return $allow = $allowSchemes = [];`),
  // so match() throws no MethodNotAllowedException; its retry of the toggled path then finds the
  // route over another scheme (`$allowSchemes`) and `goto redirect_scheme` redirects to both.
  const m = matcher(['create', '/a/', { methods: ['POST'] }], ['show', '/a', { methods: ['GET'], schemes: ['https'] }]);
  assert.equal(look(m, '/a/', context('GET', 'http')), { kind: 'redirect', name: 'show', params: {}, redirect: { path: '/a', scheme: 'https' } });
  assert.equal(look(m, '/a/', context('HEAD', 'http')), { kind: 'redirect', name: 'show', params: {}, redirect: { path: '/a', scheme: 'https' } });
  assert.equal(look(m, '/a/', context('GET', 'https')), { kind: 'redirect', name: 'show', params: {}, redirect: { path: '/a' } });
  assert.equal(look(m, '/a/', context('PUT', 'http')), { kind: 'method-not-allowed', allowedMethods: ['POST'] }, 'no retry for other methods');
  const added = matcher(['create', '/b', { methods: ['POST'] }], ['list', '/b/', { methods: ['GET'], schemes: ['https'] }]);
  assert.equal(look(added, '/b', context('GET', 'http')), { kind: 'redirect', name: 'list', params: {}, redirect: { path: '/b/', scheme: 'https' } });
  const dynamic = matcher(['put', '/items/:id', { methods: ['PUT'] }], ['get', '/items/:id/', { methods: ['GET'], schemes: ['https'] }]);
  assert.equal(look(dynamic, '/items/7', context('GET', 'http')), { kind: 'redirect', name: 'get', params: { id: '7' }, redirect: { path: '/items/7/', scheme: 'https' } });
  // A GET route of the path asked for, over another scheme, does not: Symfony's doMatch() collects a
  // method of a route over the right scheme into `$allow`, and match() throws the 405 before `$allowSchemes`.
  const same = matcher(['create', '/c', { methods: ['POST'] }], ['show', '/c', { methods: ['GET'], schemes: ['https'] }]);
  assert.equal(look(same, '/c', context('GET', 'http')), { kind: 'method-not-allowed', allowedMethods: ['POST'] });
});

test('a route that lists HEAD before GET keeps that order in Allow', () => {
  const m = matcher(['a', '/a', { methods: ['HEAD', 'GET'] }]);
  assert.equal(look(m, '/a', context('POST')), { kind: 'method-not-allowed', allowedMethods: ['HEAD', 'GET'] });
});

test('a route without methods accepts any method, even one no route names', () => {
  const m = matcher(['only_get', '/a', { methods: ['GET'] }], ['any', '/a']);
  assert.is(m.match('/a', context('BREW')).name, 'any');
  assert.is(m.match('/a', context('GET')).name, 'only_get');
});

test('the first matching route wins: a dynamic route before a static one', () => {
  const m = matcher(['book', '/books/:id'], ['new', '/books/new']);
  assert.equal(look(m, '/books/new'), { kind: 'match', name: 'book', params: { id: 'new' } });
});

test('the first matching route wins: a static route before a dynamic one', () => {
  const m = matcher(['new', '/books/new'], ['book', '/books/:id']);
  assert.is(m.match('/books/new', context()).name, 'new');
  assert.is(m.match('/books/12', context()).name, 'book');
});

test('the first matching route wins among methods: a later route of the right method is still found', () => {
  const m = matcher(['update', '/books/:id', { methods: ['PUT'] }], ['new', '/books/new', { methods: ['GET'] }]);
  assert.is(m.match('/books/new', context('GET')).name, 'new');
  assert.is(m.match('/books/new', context('PUT')).name, 'update');
});

test('a requirement goes into the parameter: a value that fails it falls through to the next route', () => {
  const m = matcher(['by_id', '/books/:id', { requirements: { id: '\\d+' } }], ['by_slug', '/books/:slug']);
  assert.equal(look(m, '/books/42'), { kind: 'match', name: 'by_id', params: { id: '42' } });
  assert.equal(look(m, '/books/dune'), { kind: 'match', name: 'by_slug', params: { slug: 'dune' } });
  assert.equal(look(m, '/books/42abc'), { kind: 'match', name: 'by_slug', params: { slug: '42abc' } });
});

test('a requirement is matched against the raw, still encoded value', () => {
  const m = matcher(['by_id', '/books/:id', { requirements: { id: '\\d+' } }]);
  assert.equal(look(m, '/books/%31'), { kind: 'not-found', path: '/books/%31/' });
});

test('a requirement that allows slashes spans segments', () => {
  const m = matcher(['page', '/pages/:path', { requirements: { path: '.+' } }], ['edit', '/docs/:path/edit', { requirements: { path: '[a-z/]+' } }]);
  assert.equal(look(m, '/pages/a/b/c'), { kind: 'match', name: 'page', params: { path: 'a/b/c' } });
  assert.equal(look(m, '/docs/a/b/edit'), { kind: 'match', name: 'edit', params: { path: 'a/b' } });
});

test('a requirement that allows an empty value matches an empty segment', () => {
  const m = matcher(['page', '/list/:page/x', { requirements: { page: '\\d*' } }]);
  assert.equal(look(m, '/list//x'), { kind: 'match', name: 'page', params: { page: '' } });
});

test('an optional group matches with and without its parameter, the default filling in', () => {
  const m = matcher(['list', '/list{/:page}', { defaults: { page: '1' } }]);
  assert.equal(look(m, '/list'), { kind: 'match', name: 'list', params: { page: '1' } });
  assert.equal(look(m, '/list/3'), { kind: 'match', name: 'list', params: { page: '3' } });
});

test('nested optional groups expand into every combination', () => {
  const m = matcher(['archive', '/archive{/:year{/:month}}']);
  assert.equal(look(m, '/archive').params, {});
  assert.equal(look(m, '/archive/2024').params, { year: '2024' });
  assert.equal(look(m, '/archive/2024/05').params, { year: '2024', month: '05' });
});

test('an optional group with text in the segment prefers the longer form, as a regex would', () => {
  const m = matcher(['file', '/:name{.:ext}']);
  assert.equal(look(m, '/report.pdf').params, { name: 'report', ext: 'pdf' });
  assert.equal(look(m, '/report').params, { name: 'report' });
});

test('a parameter stops at the separator opening the optional group after it, with the group left out too (as Symfony)', () => {
  const m = matcher(['file', '/:name{.:ext}'], ['tail', '/t/*dir/:name{.:ext}'], ['json', '/j/:name{/:page}.json']);
  assert.equal(look(m, '/x.'), { kind: 'not-found', path: '/x./' });
  assert.equal(look(m, '/x'), { kind: 'match', name: 'file', params: { name: 'x' } });
  assert.equal(look(m, '/x.y.z').params, { name: 'x', ext: 'y.z' });
  // A wildcard's tail, and a separator after the group rather than in it.
  assert.equal(look(m, '/t/a/x.'), { kind: 'not-found', path: '/t/a/x./' });
  assert.equal(look(m, '/t/a/b/x.y').params, { dir: ['a', 'b'], name: 'x', ext: 'y' });
  assert.equal(look(m, '/j/x/2.json').params, { name: 'x', page: '2' });
  // explain() reads each route's own regex: it agrees.
  assert.ok(m.explain('/x.', context()).every((trace) => trace.verdict !== 'match'));
});

test('a parameter\'s stops are those of each combination of optional groups: the text after it there, and the groups right after it', () => {
  const m = matcher(['docs', '/docs/:version{/:page}.html'], ['json', '/j/:name{/:page}.json'], ['two', '/t/:a{.:b}{-:c}']);
  // With the group, `/` follows `version`: it holds a `.` (as Symfony's `/docs/{version}/{page}.html`).
  assert.equal(look(m, '/docs/1.2/intro.html'), { kind: 'match', name: 'docs', params: { version: '1.2', page: 'intro' } });
  assert.equal(look(m, '/j/x.y/2.json').params, { name: 'x.y', page: '2' });
  // Without it, `.html` follows it: it stops at that `.`.
  assert.equal(look(m, '/docs/1.html').params, { version: '1' });
  assert.is(look(m, '/docs/1.2.html').kind, 'not-found');
  // A group written after another is not right after the parameter: `a` holds a `-` before `.b-c`, not before `-c` alone.
  assert.equal(look(m, '/t/x-y.z-w').params, { a: 'x-y', b: 'z', c: 'w' });
  assert.equal(look(m, '/t/x-y').params, { a: 'x', c: 'y' });
  assert.is(look(m, '/t/x-').kind, 'not-found');
  assert.is(look(m, '/t/x.y-').kind, 'not-found');
  for (const path of ['/docs/1.2/intro.html', '/docs/1.2.html', '/t/x-y.z-w', '/t/x-']) {
    const trace = m.explain(path, context()).find((each) => each.verdict === 'match');
    assert.is(trace?.name, look(m, path).kind === 'match' ? look(m, path).name : undefined, path);
  }
});

test('a parameter followed by text in its segment stops at that text', () => {
  const m = matcher(['file', '/files/:name.:ext']);
  assert.equal(look(m, '/files/archive.tar.gz').params, { name: 'archive', ext: 'tar.gz' });
});

test('a trailing wildcard captures the rest as decoded segments', () => {
  const m = matcher(['static', '/static/*path']);
  assert.equal(look(m, '/static/css/main%20file.css').params, { path: ['css', 'main file.css'] });
  assert.equal(look(m, '/static/'), { kind: 'not-found', path: '/static' });
});

test('a wildcard followed by text gives back what the text after it needs, as a regex would', () => {
  const m = matcher(['edit', '/wiki/*page/edit']);
  assert.equal(look(m, '/wiki/a/b/edit').params, { page: ['a', 'b'] });
  assert.equal(look(m, '/wiki/a/edit/edit').params, { page: ['a', 'edit'] });
});

test('route text with characters a client must encode matches the encoded path', () => {
  const m = matcher(['cafe', '/café menu']);
  assert.is(m.match('/caf%C3%A9%20menu', context()).name, 'cafe');
});

test('host parameters merge into the params; hosts match case-insensitively and without port', () => {
  const m = matcher(['dash', '/dash', { host: ':tenant.example.com', defaults: { tenant: 'www' } }]);
  assert.equal(look(m, '/dash', context('GET', 'http', 'Acme.Example.COM:8443')), { kind: 'match', name: 'dash', params: { tenant: 'acme' } });
  assert.equal(look(m, '/dash', context('GET', 'http', 'example.org')).kind, 'not-found');
});

test('a static host must be equal', () => {
  const m = matcher(['admin', '/', { host: 'admin.example.com' }], ['home', '/']);
  assert.is(m.match('/', context('GET', 'http', 'admin.example.com')).name, 'admin');
  assert.is(m.match('/', context('GET', 'http', 'www.example.com')).name, 'home');
});

test('a host with an optional group and a requirement', () => {
  const m = matcher(['api', '/v', { host: '{:region.}api.example.com', requirements: { region: 'eu|us' } }]);
  assert.equal(look(m, '/v', context('GET', 'http', 'eu.api.example.com')).params, { region: 'eu' });
  assert.equal(look(m, '/v', context('GET', 'http', 'api.example.com')).params, {});
  assert.is(look(m, '/v', context('GET', 'http', 'asia.api.example.com')).kind, 'not-found');
});

test('a route host mismatch does not count towards 405', () => {
  const m = matcher(['admin', '/x', { host: 'admin.example.com', methods: ['POST'] }], ['x', '/x', { methods: ['GET'] }]);
  assert.equal(look(m, '/x', context('DELETE', 'http', 'www.example.com')), { kind: 'method-not-allowed', allowedMethods: ['GET', 'HEAD'] });
  assert.equal(look(m, '/x', context('DELETE', 'http', 'admin.example.com')), { kind: 'method-not-allowed', allowedMethods: ['POST', 'GET', 'HEAD'] });
});

test('a GET over the wrong scheme is redirected to the route\'s scheme', () => {
  const m = matcher(['login', '/login', { schemes: ['https'] }]);
  assert.equal(look(m, '/login', context('GET', 'http')), { kind: 'redirect', name: 'login', params: {}, redirect: { path: '/login', scheme: 'https' } });
  assert.is(look(m, '/login', context('GET', 'https')).kind, 'match');
});

test('a POST over the wrong scheme is a 404, not a 405', () => {
  const m = matcher(['login', '/login', { schemes: ['https'], methods: ['POST'] }]);
  assert.equal(look(m, '/login', context('POST', 'http')), { kind: 'not-found', path: '/login' });
});

test('the trailing-slash retry and the scheme redirect combine', () => {
  const m = matcher(['login', '/login', { schemes: ['https'] }]);
  assert.equal(look(m, '/login/', context('GET', 'http')).redirect, { path: '/login', scheme: 'https' });
});

test('a route for another method over the other scheme keeps a GET from the scheme redirect of its toggled path, and from naming it in the 404', () => {
  // Only a route serving the method can be redirected to (Symfony's allowSchemes): `create` is none for a GET.
  const m = matcher(['create', '/items', { methods: ['POST'], schemes: ['https'] }], ['list', '/items/', { methods: ['GET'], schemes: ['https'] }]);
  assert.equal(look(m, '/items', context('GET', 'http')), { kind: 'redirect', name: 'list', params: {}, redirect: { path: '/items/', scheme: 'https' } });
  const n = matcher(['create', '/items', { methods: ['POST'], schemes: ['https'] }], ['edit', '/items/:id/']);
  assert.equal(look(n, '/items', context('GET', 'http')), { kind: 'not-found', path: '/items/' });
});

test('a GET or HEAD of a static path is redirected to its toggled slash also when no route names GET or HEAD', () => {
  // GET then shares a slot with the methods no route names, whose static answer is never a redirect.
  const m = matcher(['create', '/items', { methods: ['POST'] }], ['any', '/items/']);
  assert.equal(look(m, '/items'), { kind: 'redirect', name: 'any', params: {}, redirect: { path: '/items/' } });
  assert.equal(look(m, '/items', context('HEAD')), { kind: 'redirect', name: 'any', params: {}, redirect: { path: '/items/' } });
  assert.equal(look(m, '/items', context('PURGE')), { kind: 'method-not-allowed', allowedMethods: ['POST'] });
  const n = matcher(['create', '/items', { methods: ['POST'] }], ['any', '/items/'], ['head', '/ping', { methods: ['HEAD'] }]);
  assert.equal(look(n, '/items'), { kind: 'redirect', name: 'any', params: {}, redirect: { path: '/items/' } });
});

test('a later route with the right scheme wins over a redirect', () => {
  const m = matcher(['secure', '/page', { schemes: ['https'] }], ['plain', '/page']);
  assert.is(m.match('/page', context('GET', 'http')).name, 'plain');
});

test('static results are shared and frozen; a dynamic result is fresh', () => {
  const m = matcher(['health', '/health', { defaults: { a: 1 } }], ['book', '/books/:id']);
  const first = m.match('/health', context());
  assert.is(m.match('/health', context()), first);
  assert.ok(Object.isFrozen(first.params));
  assert.is.not(m.match('/books/1', context()), m.match('/books/1', context()));
});

test('a path named like an Object.prototype member is no static hit', () => {
  const m = matcher(['proto', '/__proto__'], ['constructor', '/constructor']);
  for (const path of ['constructor', '__proto__', 'toString', 'hasOwnProperty', '/toString']) assert.is(m.lookup(path, context()).kind, 'not-found', path);
  assert.is(look(m, '/__proto__').name, 'proto');
  assert.is(look(m, '/constructor').name, 'constructor');
});

test('the matcher compiles a snapshot: later changes to the collection are not seen', () => {
  const collection = new RouteCollection().add('a', new Route('/a'));
  const m = new UrlMatcher(collection);
  collection.add('b', new Route('/b'));
  assert.instance(thrown(() => m.match('/b', context())), ResourceNotFoundError);
});

test('match() throws what lookup() returns, with errors that carry a cause', () => {
  const m = matcher(['a', '/a', { methods: ['GET'] }]);
  assert.equal(m.lookup('/a', context('POST')), { kind: 'method-not-allowed', allowedMethods: ['GET', 'HEAD'] });
  const error = thrown(() => m.match('/a', context('POST')));
  assert.instance(error, MethodNotAllowedError);
  const cause = new Error('inner');
  assert.is(new ResourceNotFoundError('/x', { cause }).cause, cause);
});

test('explain gives each route\'s verdict up to the one that answers', () => {
  const m = matcher(
    ['home', '/'],
    ['health', '/health/'],
    ['show', '/books/:id', { methods: ['GET'] }],
    ['secure', '/books/:id', { schemes: ['https'] }],
    ['admin', '/books/:id', { host: 'admin.example.com' }],
    ['edit', '/books/:id'],
    ['never', '/books/:id'],
  );
  const traces = m.explain('/books/12', context('POST'));
  assert.equal(traces.map((trace) => [trace.name, trace.verdict]), [
    ['home', 'mismatch'],
    ['health', 'mismatch'],
    ['show', 'almost'],
    ['secure', 'almost'],
    ['admin', 'almost'],
    ['edit', 'match'],
  ]);
  assert.is(traces[2]!.reason, 'Method "POST" is not one of GET, HEAD.');
  assert.equal(traces[2]!.checks, { path: true, host: null, method: false, scheme: null });
  assert.match(traces[3]!.reason, /Scheme "http" is not one of https/);
  assert.is(traces[4]!.reason, 'Host "localhost" does not match "admin.example.com".');
  assert.is(traces[5]!.reason, 'Route matches.');
  assert.match(m.explain('/health', context())[1]!.reason, /matches only as "\/health\/"/);
});

test('explain() names a refusing requirement as its author wrote it, not as the matcher reads it (percent-encoded)', () => {
  const m = matcher(['lt', '/lt/:v', { requirements: { v: '<b' } }], ['id', '/id/:v', { requirements: { v: /^\d+$/ } }]);
  assert.is(m.explain('/lt/x', context())[0]!.reason, 'Requirement for "v" does not match (<b).');
  assert.is(m.explain('/id/x', context())[1]!.reason, 'Requirement for "v" does not match (/^\\d+$/).');
  // The matcher still reads the sanitized one.
  assert.is(look(m, '/lt/%3Cb').kind, 'match');
});

test('explain() says when requirements refuse a path only together, each alone accepting it', () => {
  const m = matcher(['r', '/:a.:b', { requirements: { a: 'p\\.q', b: 'q\\.r' } }]);
  const [trace] = m.explain('/p.q.r', context());
  assert.is(trace!.verdict, 'almost');
  assert.is(trace!.reason, 'Requirements for "a" (p\\.q), "b" (q\\.r) do not match together (each alone does).');
});

test('normalizePercentEncoding upper-cases hex digits and decodes unreserved characters only', () => {
  assert.is(normalizePercentEncoding('/caf%c3%a9'), '/caf%C3%A9');
  assert.is(normalizePercentEncoding('/%69p/%7E%2d%2E%5f'), '/ip/~-._');
  assert.is(normalizePercentEncoding('/a%2fb%3F%20'), '/a%2Fb%3F%20');
  assert.is(normalizePercentEncoding('/%zz/%4/%'), '/%zz/%4/%');
  assert.is(normalizePercentEncoding('/plain'), '/plain');
});

test('servedMethods lists every route\'s methods once, in route order, GET bringing HEAD; null when a route takes any method', () => {
  const routes = new RouteCollection();
  routes.add('a', new Route('/a', { methods: ['get'] }));
  routes.add('b', new Route('/b', { methods: ['PUT', 'GET'] }));
  routes.add('c', new Route('/c', { methods: ['HEAD', 'POST'] }));
  assert.equal(new UrlMatcher(routes).servedMethods, ['GET', 'HEAD', 'PUT', 'POST']);
  assert.equal(new UrlMatcher(new RouteCollection()).servedMethods, []);
  routes.add('any', new Route('/any'));
  assert.is(new UrlMatcher(routes).servedMethods, null);
});

test('explain() gives each route its verdict as the router panel shows it: host patterns with variables, methods, schemes, the toggled slash', () => {
  const m = matcher(
    ['tenant', '/dash', { host: ':tenant.example.com', requirements: { tenant: '[a-z]+' } }],
    ['admin', '/dash', { host: 'admin.example.org' }],
    ['edit', '/dash', { methods: ['PUT'] }],
    ['secure', '/dash', { schemes: ['https'] }],
    ['list', '/items/'],
  );
  const verdicts = (path: string, ctx: MatchContext) => m.explain(path, ctx).map((trace) => `${trace.name}: ${trace.verdict}: ${trace.reason}`);
  assert.equal(verdicts('/dash', context('GET', 'http', 'Acme.Example.com:8080')), [
    'tenant: match: Route matches.',
  ]);
  assert.equal(verdicts('/dash', context('GET', 'http', '42.example.com')), [
    'tenant: almost: Host "42.example.com" does not match ":tenant.example.com".',
    'admin: almost: Host "42.example.com" does not match "admin.example.org".',
    'edit: almost: Method "GET" is not one of PUT.',
    'secure: almost: Scheme "http" is not one of https, a GET or HEAD is redirected to the first.',
    'list: mismatch: Path "/dash" does not match "/items/".',
  ]);
  assert.equal(verdicts('/items', context('POST', 'http', 'localhost')).slice(-1), ['list: almost: Path "/items" matches only as "/items/".']);
  assert.equal(verdicts('/items', context('GET', 'http', 'localhost')).slice(-1), ['list: almost: Path "/items" matches only as "/items/", a GET or HEAD is redirected there if no route matches.']);
  const checks = m.explain('/dash', context('GET', 'http', 'acme.example.com'))[0]!.checks;
  assert.equal(checks, { path: true, host: true, method: null, scheme: null });
});

test('a requirement holding a character a URL must encode matches its encoding, and the parameter is decoded (as Symfony, which decodes first)', () => {
  const m = matcher(
    ['price', '/price/:cur', { requirements: { cur: 'EUR|€' } }],
    ['words', '/words/:q', { requirements: { q: '[a-z ]+' } }],
    ['smile', '/smile/:face', { requirements: { face: /\u{1F600}+/u.source } }],
    ['brace', '/brace/:b', { requirements: { b: 'a\\{b' } }],
  );
  assert.equal(look(m, '/price/%E2%82%AC'), { kind: 'match', name: 'price', params: { cur: '€' } });
  assert.equal(look(m, '/price/EUR'), { kind: 'match', name: 'price', params: { cur: 'EUR' } });
  assert.equal(look(m, '/price/USD'), { kind: 'not-found', path: '/price/USD/' });
  assert.equal(look(m, '/words/two%20words'), { kind: 'match', name: 'words', params: { q: 'two words' } });
  assert.equal(look(m, '/smile/%F0%9F%98%80%F0%9F%98%80'), { kind: 'match', name: 'smile', params: { face: '😀😀' } });
  assert.equal(look(m, '/brace/a%7Bb'), { kind: 'match', name: 'brace', params: { b: 'a{b' } });
  const generator = new UrlGenerator(new RouteCollection().add('price', new Route('/price/:cur', { requirements: { cur: 'EUR|€' } })));
  assert.is(generator.generate('price', { cur: '€' }), '/price/%E2%82%AC');
});

test('a character a URL must encode in a range or a negated class is refused, with what to write instead', () => {
  for (const [requirement, where] of [['[à-ü]+', 'a range'], ['[^ ]+', 'a negated class']] as const) {
    const error = thrown(() => new Route('/x/:p', { requirements: { p: requirement } }));
    assert.instance(error, InvalidRouteError, requirement);
    assert.match(error.message, `in ${where}, but paths are matched percent-encoded: write it as an alternative of its encoding`);
  }
  // What stays as it was: classes, escapes and text that a path holds as they are.
  for (const requirement of ['\\d+', '[^/]+', '[\\s\\S]+', 'caf%C3%A9', 'x{2}', '(a|b)\\.c']) {
    assert.is(new Route('/x/:p', { requirements: { p: requirement } }).requirements.p, requirement.replace('(a|b)', '(?:a|b)'), requirement);
  }
});

test('percent-encodings written in a route pattern are normalized as requests are: upper-case hex, unreserved characters decoded', () => {
  const m = matcher(['cafe', '/caf%c3%a9'], ['user', '/%7Euser']);
  assert.is(m.match('/caf%C3%A9', context()).name, 'cafe');
  assert.is(m.match('/~user', context()).name, 'user');
  const generator = new UrlGenerator(new RouteCollection().add('cafe', new Route('/caf%c3%a9')).add('user', new Route('/%7Euser')));
  assert.is(generator.generate('cafe'), '/caf%C3%A9');
  assert.is(generator.generate('user'), '/~user');
});

test('a host requirement in capitals matches the host, which is compared lower-cased (as Symfony compiles host patterns)', () => {
  const m = matcher(['tenant', '/y', { host: ':t.example.com', requirements: { t: '[A-Z]+|Beta' } }]);
  assert.equal(look(m, '/y', context('GET', 'http', 'ACME.example.com')), { kind: 'match', name: 'tenant', params: { t: 'acme' } });
  assert.equal(look(m, '/y', context('GET', 'http', 'beta.example.com')), { kind: 'match', name: 'tenant', params: { t: 'beta' } });
  const generator = new UrlGenerator(new RouteCollection().add('tenant', new Route('/y', { host: ':t.example.com', requirements: { t: '[A-Z]+' } })));
  assert.is(generator.generate('tenant', { t: 'acme' }, true), 'http://acme.example.com/y');
});

test('match() and explain() without a context, or with one lacking its method, host or scheme, are a TypeError at the call saying what to give', () => {
  const m = matcher(['health', '/health', { methods: ['GET'] }]);
  const noContext = thrown(() => m.match('/health' as string, undefined as never));
  assert.instance(noContext, TypeError);
  assert.match(String((noContext as Error).message), "UrlMatcher.match() takes the request's context as its second argument, { method: 'GET', host: 'example.com', scheme: 'https' }, not undefined: there is no default");
  assert.throws(() => m.explain('/health', undefined as never), /UrlMatcher\.explain\(\) takes the request's context/);
  assert.throws(() => m.match('/health', { host: '', scheme: 'http' } as never), /context has a method \('GET'\), not undefined/);
  assert.throws(() => m.match('/health', { method: 'GET', scheme: 'http' } as never), /context has a host \('example\.com', or '' for none\), not undefined/);
  assert.throws(() => m.match('/health', { method: 'GET', host: '' } as never), /context has a scheme, 'http' or 'https', not undefined/);
  assert.throws(() => m.match(undefined as never, context()), /UrlMatcher\.match\(\) takes a path \('\/books\/1'\), not undefined/);
  assert.is(m.match('/health', { method: 'GET', host: '', scheme: 'http' }).name, 'health');
});

test('a UrlMatcher takes 30 distinct methods, each routed to its own route; a 31st is an InvalidRouteError', () => {
  const routes: [string, string, RouteOptions][] = Array.from({ length: 30 }, (_, i) => [`r${i}`, '/r', { methods: [`M${i}`] }]);
  const m = matcher(...routes);
  assert.is(m.match('/r', context('M29')).name, 'r29');
  assert.is(m.match('/r', context('M0')).name, 'r0');
  assert.equal(look(m, '/r', context('OTHER')), { kind: 'method-not-allowed', allowedMethods: routes.map(([, , options]) => options.methods![0]) });
  const error = thrown(() => matcher(...routes, ['r30', '/r', { methods: ['M30'] }]));
  assert.instance(error, InvalidRouteError);
  assert.is(error.message, 'A UrlMatcher supports at most 30 distinct methods.');
});

test('a GET is redirected to the path with a trailing slash added also where only an optional group or a requirement ends a route with one', () => {
  const cases: [RouteOptions & { path: string }, string, Record<string, unknown>][] = [
    [{ path: '/docs{/:version/}' }, '/docs/1.2', { version: '1.2' }],
    [{ path: '/dir/:name', requirements: { name: '[a-z]+/' } }, '/dir/abc', { name: 'abc/' }],
    [{ path: '/pages/:name.html/' }, '/pages/a.html', { name: 'a' }],
  ];
  for (const [{ path, ...options }, request, params] of cases) {
    assert.equal(look(matcher(['r', path, options]), request), { kind: 'redirect', name: 'r', params, redirect: { path: `${request}/` } }, path);
  }
});

test('a GET or HEAD of "/" served for other methods only is a 405', () => {
  const m = matcher(['create', '/', { methods: ['POST'] }]);
  assert.equal(look(m, '/'), { kind: 'method-not-allowed', allowedMethods: ['POST'] });
  assert.equal(look(m, '/', context('HEAD')), { kind: 'method-not-allowed', allowedMethods: ['POST'] });
});

test('a GET 405 where a static and a dynamic route serve the path for other methods lists the methods of both, in route order', () => {
  const list = ['list', '/items/', { methods: ['GET'] }] as [string, string, RouteOptions];
  const m = matcher(['update', '/items/:id', { methods: ['PUT'] }], ['create', '/items/new', { methods: ['POST'] }], list);
  assert.equal(look(m, '/items/new'), { kind: 'method-not-allowed', allowedMethods: ['PUT', 'POST'] });
  assert.equal(look(m, '/items/7'), { kind: 'method-not-allowed', allowedMethods: ['PUT'] });
  const n = matcher(['create', '/items/new', { methods: ['POST'] }], ['update', '/items/:id', { methods: ['PUT'] }], list);
  assert.equal(look(n, '/items/new'), { kind: 'method-not-allowed', allowedMethods: ['POST', 'PUT'] });
});

test('a GET served as asked over another scheme, by a route other methods make a 405, stays the 405 although its toggled path is served over that scheme too (Symfony\'s $allow before $allowSchemes)', () => {
  const m = matcher(['create', '/a/', { methods: ['POST'] }], ['show', '/a', { schemes: ['https'] }], ['list', '/a/', { methods: ['GET'], schemes: ['https'] }]);
  assert.equal(look(m, '/a/'), { kind: 'method-not-allowed', allowedMethods: ['POST'] });
});

test('a GET with several trailing slashes is redirected to the path with one over the scheme of the route serving it, also where a route of other methods matches the path as sent', () => {
  const list = ['list', '/a/', { methods: ['GET'], schemes: ['https'] }] as [string, string, RouteOptions];
  const redirect = { kind: 'redirect', name: 'list', params: {}, redirect: { path: '/a/', scheme: 'https' } };
  assert.equal(look(matcher(list), '/a//'), redirect);
  assert.equal(look(matcher(['api', '/*path', { methods: ['POST'] }], list), '/a//'), redirect);
});

test('explain() toggles the trailing slash as the matcher does: removed too, several trimmed to one, never for "/"; HEAD is told of the redirect as GET is', () => {
  const m = matcher(['home', '/'], ['plain', '/items'], ['dir', '/dir/']);
  const reasons = (path: string, ctx = context()) => m.explain(path, ctx).map((trace) => `${trace.name}: ${trace.verdict}: ${trace.reason}`);
  assert.equal(reasons('/items/', context('HEAD')).slice(1, 2), ['plain: almost: Path "/items/" matches only as "/items", a GET or HEAD is redirected there if no route matches.']);
  assert.equal(reasons('/dir//').slice(1), [
    'plain: mismatch: Path "/dir//" does not match "/items".',
    'dir: almost: Path "/dir//" matches only as "/dir/", a GET or HEAD is redirected there if no route matches.',
  ]);
  // The matcher never redirects "//" to "/": explain() must not say it would.
  assert.equal(reasons('//')[0], 'home: mismatch: Path "//" does not match "/".');
  assert.is(look(m, '//').kind, 'not-found');
});

test('explain() says a POST over the wrong scheme is not redirected', () => {
  const m = matcher(['secure', '/login', { schemes: ['https'] }]);
  assert.is(m.explain('/login', context('POST'))[0]!.reason, 'Scheme "http" is not one of https.');
});

test('explain() compares a host with a port or an IPv6 address as the matcher does', () => {
  const m = matcher(['v6', '/x', { host: '\\[\\:\\:1\\]' }], ['named', '/x', { host: 'a' }]);
  for (const host of ['[::1]', '[::1]:8080']) {
    assert.equal(m.explain('/x', context('GET', 'http', host)).map((trace) => trace.verdict), ['match'], host);
    assert.is(m.match('/x', context('GET', 'http', host)).name, 'v6', host);
  }
  assert.equal(m.explain('/x', context('GET', 'http', 'a:8080')).map((trace) => trace.verdict), ['almost', 'match']);
  assert.is(m.match('/x', context('GET', 'http', 'a:8080')).name, 'named');
});

test('a context of null is the same TypeError saying what to give', () => {
  const m = matcher(['health', '/health']);
  assert.throws(() => m.match('/health', null as never), /UrlMatcher\.match\(\) takes the request's context as its second argument, .*, not null: there is no default/);
  assert.throws(() => m.explain('/health', null as never), /UrlMatcher\.explain\(\) takes the request's context as its second argument/);
});

test('a MalformedPathError\'s cause is the URIError decodeURIComponent throws', () => {
  const error = thrown(() => matcher(['book', '/books/:id']).match('/books/%E0%A4%A', context()));
  let decodeError: unknown;
  try {
    decodeURIComponent('%E0%A4%A');
  } catch (caught) {
    decodeError = caught;
  }
  assert.instance(error.cause, URIError);
  assert.is((error.cause as Error).message, (decodeError as Error).message);
});

test('a parameter before two left-out groups opening with different separators stops at either, and takes any other letter', () => {
  const m = matcher(['file', '/:name{.:ext}{-:v}']);
  assert.equal(m.match('/story', context()).params, { name: 'story' });
  assert.equal(m.match('/story-2', context()).params, { name: 'story', v: '2' });
  assert.equal(m.match('/story.txt-2', context()).params, { name: 'story', ext: 'txt', v: '2' });
});

test('a group opening with a group stops the parameter before it at what the inner group opens with too, as Symfony\'s next separator', () => {
  const m = matcher(['r', '/:a{{.:b}-:c}']);
  assert.equal(m.match('/x', context()).params, { a: 'x' });
  assert.equal(m.match('/x-1', context()).params, { a: 'x', c: '1' });
  assert.equal(m.match('/x.y-1', context()).params, { a: 'x', b: 'y', c: '1' });
  assert.instance(thrown(() => m.match('/x.y', context())), ResourceNotFoundError);
});

test.run();
