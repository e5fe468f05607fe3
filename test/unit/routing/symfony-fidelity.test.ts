// Cases of Symfony's Routing test suites (UrlMatcherTest, RedirectableUrlMatcherTest, UrlGeneratorTest, RouteCollectionTest),
// ported to our API: each test names the Symfony test it follows. Patterns are written in
// path-to-regexp syntax (`/foo/:bar`, an optional parameter as an optional group `{/:bar}`); a test
// whose title starts with "difference:" asserts our behaviour where the README documents that it
// departs from Symfony's.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { thrown } from '../helpers.js';
import { EventDispatcher, ControllerResolver, HttpKernel, Request, RequestEvent, RequestType } from '../../../kernel/index.js';
import {
  InvalidParameterError,
  InvalidRouteError,
  MethodNotAllowedError,
  MissingMandatoryParametersError,
  ResourceNotFoundError,
  Route,
  RouteCollection,
  RouteNotFoundError,
  RouterListener,
  UrlGenerator,
  UrlMatcher,
  type GeneratorContext,
  type LookupResult,
  type RouteOptions,
} from '../../../lib/routing/index.js';

type Def = [name: string, path: string, options?: RouteOptions];

function collection(...routes: Def[]): RouteCollection {
  const routesByName = new RouteCollection();
  for (const [name, path, options] of routes) routesByName.add(name, new Route(path, options));
  return routesByName;
}

/** The lookup of `path` without the route object: kind, name, params, redirect, allowedMethods or path. */
function look(routes: Def[], path: string, method = 'GET', host = 'localhost', scheme: 'http' | 'https' = 'http'): Record<string, unknown> {
  const { route: _route, ...rest } = new UrlMatcher(collection(...routes)).lookup(path, { method, host, scheme }) as LookupResult & { route?: unknown };
  return rest;
}

function matched(name: string, params: Record<string, unknown> = {}): Record<string, unknown> {
  return { kind: 'match', name, params };
}

function redirected(name: string, path: string, params: Record<string, unknown> = {}, scheme?: string): Record<string, unknown> {
  return { kind: 'redirect', name, params, redirect: scheme === undefined ? { path } : { path, scheme } };
}

/** Symfony's generator tests run with the base URL `/app.php`. */
function generate(routes: Def[], name: string, params: Record<string, unknown> = {}, absolute = false, context: GeneratorContext = {}): string {
  return new UrlGenerator(collection(...routes), { baseUrl: '/app.php', ...context }).generate(name, params, absolute);
}

// ---------------------------------------------------------------------------------------------
// UrlMatcherTest: methods

test('UrlMatcherTest::testNoMethodSoAllowed: a route without methods takes any', () => {
  assert.equal(look([['foo', '/foo']], '/foo', 'PATCH'), matched('foo'));
});

test('UrlMatcherTest::testMethodNotAllowed: a path served for POST only is a 405 listing POST (methods given in lower case)', () => {
  assert.equal(look([['foo', '/foo', { methods: ['post'] }]], '/foo'), { kind: 'method-not-allowed', allowedMethods: ['POST'] });
});

test('UrlMatcherTest::testHeadAllowedWhenRequirementContainsGet: HEAD matches a GET route', () => {
  assert.equal(look([['foo', '/foo', { methods: ['get'] }]], '/foo', 'HEAD'), matched('foo'));
});

test('UrlMatcherTest::testMethodNotAllowedAggregatesAllowedMethods: the 405 lists every route\'s methods in route order', () => {
  const routes: Def[] = [['foo1', '/foo', { methods: ['post'] }], ['foo2', '/foo', { methods: ['put', 'delete'] }]];
  assert.equal(look(routes, '/foo'), { kind: 'method-not-allowed', allowedMethods: ['POST', 'PUT', 'DELETE'] });
  const error = thrown(() => new UrlMatcher(collection(...routes)).match('/foo', { method: 'GET', host: 'localhost', scheme: 'http' }));
  assert.instance(error, MethodNotAllowedError);
  assert.equal((error as MethodNotAllowedError).allowedMethods, ['POST', 'PUT', 'DELETE']);
});

test('difference: UrlMatcherTest::testMethodNotAllowedOnRoot: a GET route\'s 405 lists GET and HEAD (Symfony lists GET)', () => {
  assert.equal(look([['foo', '/', { methods: ['GET'] }]], '/', 'POST'), { kind: 'method-not-allowed', allowedMethods: ['GET', 'HEAD'] });
});

test('UrlMatcherTest::testMethodIsIgnoredIfNoMethodGiven: a GET|HEAD route answers GET and HEAD, and POST is a 405', () => {
  const routes: Def[] = [['foo', '/foo', { methods: ['get', 'head'] }]];
  assert.equal(look(routes, '/foo'), matched('foo'));
  assert.equal(look(routes, '/foo', 'HEAD'), matched('foo'));
  assert.equal(look(routes, '/foo', 'POST'), { kind: 'method-not-allowed', allowedMethods: ['GET', 'HEAD'] });
});

test('405s: HEAD on a POST route lists POST; a dynamic path lists every matching route\'s methods; a 405 wins over a scheme redirect', () => {
  assert.equal(look([['a', '/foo', { methods: ['POST'] }]], '/foo', 'HEAD'), { kind: 'method-not-allowed', allowedMethods: ['POST'] });
  assert.equal(look([['a', '/foo/:id', { methods: ['GET'] }], ['b', '/foo/:id', { methods: ['PUT'] }]], '/foo/1', 'POST'), { kind: 'method-not-allowed', allowedMethods: ['GET', 'HEAD', 'PUT'] });
  assert.equal(look([['a', '/foo', { methods: ['GET'] }], ['b', '/foo', { methods: ['GET', 'POST'] }]], '/foo', 'DELETE'), { kind: 'method-not-allowed', allowedMethods: ['GET', 'HEAD', 'POST'] });
  // CompiledUrlMatcherTrait::match throws the 405 before it tries another scheme.
  assert.equal(look([['a', '/foo', { methods: ['POST'] }], ['b', '/foo', { schemes: ['https'] }]], '/foo'), { kind: 'method-not-allowed', allowedMethods: ['POST'] });
  // A route matching only with the slash toggled adds nothing to a POST's 405: it is a 404.
  assert.equal(look([['foo', '/foo/', { methods: ['GET'] }]], '/foo', 'POST'), { kind: 'not-found', path: '/foo' });
});

test('RouteCollectionTest::testOverriddenRoute and testIterator: a name added again replaces the route and moves it last', () => {
  const routes = new RouteCollection().add('foo', new Route('/foo')).add('bar', new Route('/bar')).add('foo', new Route('/foo1'));
  assert.equal([...routes].map(([name, route]) => [name, route.path]), [['bar', '/bar'], ['foo', '/foo1']]);
  assert.is(routes.get('foo')?.path, '/foo1');
  assert.is(routes.count, 2);
  assert.ok(routes.remove('foo'));
  assert.is(routes.get('foo'), undefined);
});

// ---------------------------------------------------------------------------------------------
// RouteCollectionTest: groups

/** Each route of `routes` as [name, path], in priority order. */
function paths(routes: RouteCollection): [string, string][] {
  return [...routes].map(([name, route]) => [name, route.path]);
}

test('RouteCollectionTest::testDeepOverriddenRoute and testUniqueRouteWithGivenName: a route of an added collection replaces the one of its name', () => {
  const routes = collection(['foo', '/foo']);
  const child = collection(['foo', '/foo1']);
  child.addCollection(collection(['foo', '/foo2']));
  routes.addCollection(child);
  assert.is(child.get('foo')?.path, '/foo2');
  assert.is(routes.get('foo')?.path, '/foo2');
  assert.is(routes.count, 1);
});

test('RouteCollectionTest::testAddCollection, testIterator and testCount: the added routes come last, in their order, a name taken moving last', () => {
  const routes = collection(['foo', '/foo']);
  const child = collection(['bar', '/bar'], ['foo', '/foo-new']);
  const grandchild = collection(['grandchild', '/grandchild']);
  const bar = child.get('bar');
  child.addCollection(grandchild);
  routes.addCollection(child).add('last', new Route('/last'));
  assert.equal(paths(routes), [['bar', '/bar'], ['foo', '/foo-new'], ['grandchild', '/grandchild'], ['last', '/last']]);
  assert.is(routes.get('bar'), bar);
  assert.is(routes.count, 4);
});

test('RouteCollectionTest::testGet: a route of an added collection is got by its name, whatever the name; the parent\'s stay out of the child', () => {
  const parent = collection(['a', '/a']);
  const child = collection(['b', '/b']);
  parent.addCollection(child).add('$péß^a|', new Route('/special'));
  assert.is(parent.get('b'), child.get('b'));
  assert.is(parent.get('$péß^a|')?.path, '/special');
  assert.is(child.get('a'), undefined);
  assert.is(parent.get('non-existent'), undefined);
});

test('RouteCollectionTest::testRemove: a route of an added collection is removed by its name', () => {
  const routes = collection(['foo', '/foo']).addCollection(collection(['bar', '/bar'])).add('last', new Route('/last'));
  routes.remove('foo');
  assert.equal(paths(routes), [['bar', '/bar'], ['last', '/last']]);
});

test('RouteCollectionTest::testAddDefaultsAndRequirementsAndOptions: defaults and requirements are added to every route, replacing those of the same name', () => {
  const routes = collection(['foo', '/:placeholder']);
  routes.addCollection(collection(['bar', '/:placeholder', { defaults: { _controller: 'fixed', placeholder: 'default' }, requirements: { placeholder: '.+' } }]));
  routes.addDefaults({ placeholder: 'new-default' });
  assert.equal(routes.get('foo')?.defaults, { placeholder: 'new-default' });
  assert.equal(routes.get('bar')?.defaults, { _controller: 'fixed', placeholder: 'new-default' });
  routes.addRequirements({ placeholder: '\\d+' });
  assert.equal(routes.get('foo')?.requirements, { placeholder: '\\d+' });
  assert.equal(routes.get('bar')?.requirements, { placeholder: '\\d+' });
});

test('RouteCollectionTest::testAddPrefix: the prefix is trimmed of spaces and slashes, "/" alone changes nothing, and its defaults and requirements go to every route', () => {
  const routes = collection(['foo', '/foo']).addCollection(collection(['bar', '/bar']));
  routes.addPrefix(' / ');
  assert.is(routes.get('foo')?.path, '/foo');
  routes.addPrefix('/:admin', { admin: 'admin' }, { admin: '\\d+' });
  assert.equal(paths(routes), [['foo', '/:admin/foo'], ['bar', '/:admin/bar']]);
  for (const name of ['foo', 'bar']) {
    assert.equal(routes.get(name)?.defaults, { admin: 'admin' });
    assert.equal(routes.get(name)?.requirements, { admin: '\\d+' });
  }
  routes.addPrefix('0');
  assert.is(routes.get('foo')?.path, '/0/:admin/foo');
  routes.addPrefix('/ /');
  assert.equal(paths(routes), [['foo', '/ /0/:admin/foo'], ['bar', '/ /0/:admin/bar']]);
  assert.equal(look([['foo', routes.get('foo')!.path]], '/%20/0/1/foo'), matched('foo', { admin: '1' }));
});

test('RouteCollectionTest::testAddPrefixOverridesDefaultsAndRequirements', () => {
  const routes = collection(['foo', '/foo.:_format'], ['bar', '/bar.:_format', { requirements: { _format: 'json' } }]);
  routes.addPrefix('/admin', {}, { _format: 'html' });
  assert.is(routes.get('foo')?.requirements._format, 'html');
  assert.is(routes.get('bar')?.requirements._format, 'html');
  assert.is(routes.get('bar')?.path, '/admin/bar.:_format');
});

test('RouteCollection::addPrefix: a route "/" under "/api" is "/api/", as Symfony\'s addPrefix() makes it, and GET /api is redirected to it', () => {
  const routes = collection(['home', '/'], ['list', '/list']).addPrefix('/api');
  assert.equal(paths(routes), [['home', '/api/'], ['list', '/api/list']]);
  assert.equal(look([['home', routes.get('home')!.path]], '/api'), redirected('home', '/api/'));
});

test('RouteCollectionTest::testSetHost, testSetSchemes and testSetMethods: each replaces the option of every route', () => {
  const routes = collection(['a', '/a', { schemes: ['http'], methods: ['GET', 'POST'] }], ['b', '/b', { host: ':locale.example.net' }]);
  routes.setHost(':locale.example.com');
  routes.setSchemes(['http', 'https']);
  routes.setMethods(['PUT']);
  for (const name of ['a', 'b']) {
    assert.is(routes.get(name)?.host, ':locale.example.com');
    assert.equal(routes.get(name)?.schemes, ['http', 'https']);
    assert.equal(routes.get(name)?.methods, ['PUT']);
  }
});

test('RouteCollectionTest::testAddNamePrefix: every name gets the prefix, the routes their order', () => {
  const routes = collection(['foo', '/foo'], ['bar', '/bar'], ['api_foo', '/api/foo']);
  const [foo, bar, apiFoo] = [routes.get('foo'), routes.get('bar'), routes.get('api_foo')];
  routes.addNamePrefix('api_');
  assert.equal([...routes.all().keys()], ['api_foo', 'api_bar', 'api_api_foo']);
  assert.is(routes.get('api_foo'), foo);
  assert.is(routes.get('api_bar'), bar);
  assert.is(routes.get('api_api_foo'), apiFoo);
  assert.is(routes.get('foo'), undefined);
  assert.is(routes.get('bar'), undefined);
});

test('difference: RouteCollectionTest::testSetHost: a group method replaces the collection\'s routes with new ones (a Route is immutable), so a Route kept from before is unchanged (Symfony changes the Route itself)', () => {
  const a = new Route('/a');
  const routes = new RouteCollection().add('a', a).setHost(':locale.example.com');
  assert.is(a.host, undefined);
  assert.is.not(routes.get('a'), a);
  assert.is(routes.get('a')?.host, ':locale.example.com');
});

test('difference: RouteCollectionTest::testAddPrefix: an empty prefix still adds its defaults and requirements (Symfony drops them)', () => {
  const routes = collection(['foo', '/foo/:id']).addPrefix('/', { id: '1' }, { id: '\\d+' });
  assert.is(routes.get('foo')?.path, '/foo/:id');
  assert.equal(routes.get('foo')?.defaults, { id: '1' });
  assert.equal(routes.get('foo')?.requirements, { id: '\\d+' });
});

// ---------------------------------------------------------------------------------------------
// UrlMatcherTest: parameters, defaults, requirements

test('UrlMatcherTest::testZero: the path "0" matches no route', () => {
  assert.is(look([['index', '/']], '0').kind, 'not-found');
});

test('UrlMatcherTest::testPatternMatchAndParameterReturn and testDefaultsAreMerged', () => {
  assert.is(look([['foo', '/foo/:bar']], '/no-match').kind, 'not-found');
  assert.equal(look([['foo', '/foo/:bar']], '/foo/baz'), matched('foo', { bar: 'baz' }));
  assert.equal(look([['foo', '/foo/:bar', { defaults: { def: 'test' } }]], '/foo/baz'), matched('foo', { def: 'test', bar: 'baz' }));
});

test('UrlMatcherTest::testRouteWithOptionalVariableAsFirstSegment: a pattern may open with an optional group', () => {
  const routes: Def[] = [['bar', '{/:bar}/foo', { defaults: { bar: 'bar' }, requirements: { bar: 'foo|bar' } }]];
  assert.equal(look(routes, '/bar/foo'), matched('bar', { bar: 'bar' }));
  assert.equal(look(routes, '/foo/foo'), matched('bar', { bar: 'foo' }));
  assert.equal(look(routes, '/foo'), matched('bar', { bar: 'bar' }));
  const alone: Def[] = [['bar', '{/:bar}', { defaults: { bar: 'bar' }, requirements: { bar: 'foo|bar' } }]];
  assert.equal(look(alone, '/foo'), matched('bar', { bar: 'foo' }));
  assert.equal(look(alone, '/'), matched('bar', { bar: 'bar' }));
});

test('UrlMatcherTest::testRouteWithOnlyOptionalVariables', () => {
  const routes: Def[] = [['bar', '{/:foo{/:bar}}', { defaults: { foo: 'foo', bar: 'bar' } }]];
  assert.equal(look(routes, '/'), matched('bar', { foo: 'foo', bar: 'bar' }));
  assert.equal(look(routes, '/a'), matched('bar', { foo: 'a', bar: 'bar' }));
  assert.equal(look(routes, '/a/b'), matched('bar', { foo: 'a', bar: 'b' }));
});

test('Route: several leading slashes are one, as Symfony\'s Route::setPath makes them', () => {
  assert.is(new Route('//path-and-not-domain').path, '/path-and-not-domain');
  assert.equal(look([['test', '//path-and-not-domain']], '/path-and-not-domain'), matched('test'));
  // An optional group may open a pattern only when the path starts with "/" without it.
  assert.match(thrown(() => new Route('{/:a}x')).message, 'it must start with "/" whichever optional groups are left out');
  // Nor with two, which no value written or left out could make one: served under `//b`, generated as a network path.
  for (const path of ['/{:a}/b', '{:a}/b', '{//:a}/b', '{/}/b']) {
    const error = thrown(() => new Route(path));
    assert.instance(error, InvalidRouteError, path);
    assert.match(error.message, 'it must start with one "/" whichever optional groups are left out or written', path);
  }
  assert.is(new Route('/{:a}').path, '/{:a}');
});

test('UrlMatcherTest::testMatchSpecialRouteName: any text is a route name', () => {
  assert.equal(look([['$péß^a|', '/bar']], '/bar'), matched('$péß^a|'));
});

test('UrlMatcherTest::testMatchImportantVariable and testShortPathDoesNotMatchImportantVariable: a required parameter with a default', () => {
  const routes: Def[] = [['index', '/index.:_format', { defaults: { _format: 'xml' } }]];
  assert.equal(look(routes, '/index.xml'), matched('index', { _format: 'xml' }));
  assert.is(look(routes, '/index').kind, 'not-found');
});

test('difference: a default does not make a parameter optional (Symfony\'s /ticks/{count} with a default matches /ticks); the group /ticks{/:count} does, and a default reaches the controller as given, a matched value as text', () => {
  const mandatory: Def[] = [['ticks', '/ticks/:count', { defaults: { count: '3' } }]];
  assert.equal(look(mandatory, '/ticks/5'), matched('ticks', { count: '5' }));
  assert.is(look(mandatory, '/ticks').kind, 'not-found');
  assert.is(generate(mandatory, 'ticks'), '/app.php/ticks/3');
  const optional: Def[] = [['list', '/list{/:page}', { defaults: { page: 1 } }]];
  assert.equal(look(optional, '/list'), matched('list', { page: 1 }));
  assert.equal(look(optional, '/list/2'), matched('list', { page: '2' }));
  assert.is(generate(optional, 'list'), '/app.php/list');
  assert.is(generate(optional, 'list', { page: 1 }), '/app.php/list');
});

test('UrlMatcherTest::testTrailingEncodedNewlineIsNotOverlooked', () => {
  assert.is(look([['foo', '/foo']], '/foo%0a').kind, 'not-found');
  assert.is(look([['foo', '/foo']], '/foo%0A').kind, 'not-found');
});

test('UrlMatcherTest::testMatchNonAlpha: a parameter holding every printable ASCII character, percent-encoded or not, comes back decoded', () => {
  const chars = '!"$%éà &\'()*+,./:;<=>@ABCDEFGHIJKLMNOPQRSTUVWXYZ\\[]^_`abcdefghijklmnopqrstuvwxyz{|}~-';
  const routes: Def[] = [['foo', '/:foo/bar', { requirements: { foo: '.+' } }]];
  assert.equal(look(routes, `/${encodeURIComponent(chars)}/bar`), matched('foo', { foo: chars }));
  // Those a client may send as they are, with % written %25.
  const raw = "!$%&'()*+,.:;=@AZaz_~-";
  assert.equal(look(routes, `/${raw.replace('%', '%25')}/bar`), matched('foo', { foo: raw }));
});

test('UrlMatcherTest::testMatchWithDotMetacharacterInRequirements: `.` in a requirement matches an encoded line feed', () => {
  assert.equal(look([['foo', '/:foo/bar', { requirements: { foo: '.+' } }]], '/%0A/bar'), matched('foo', { foo: '\n' }));
});

test('UrlMatcherTest::testMatchOverriddenRoute: a name added again replaces the route', () => {
  const routes = new RouteCollection().add('foo', new Route('/foo')).add('foo', new Route('/foo1'));
  const m = new UrlMatcher(routes);
  assert.is(m.lookup('/foo1', { method: 'GET', host: 'localhost', scheme: 'http' }).kind, 'match');
  assert.is(m.lookup('/foo', { method: 'GET', host: 'localhost', scheme: 'http' }).kind, 'not-found');
});

test('UrlMatcherTest::testMatchRegression: a longer static prefix is not shadowed, and /:bar does not match /', () => {
  assert.equal(look([['foo', '/foo/:foo'], ['bar', '/foo/bar/:foo']], '/foo/bar/bar'), matched('bar', { foo: 'bar' }));
  assert.is(look([['foo', '/:bar']], '/').kind, 'not-found');
});

test('UrlMatcherTest::testMultipleParams: the route whose pattern matches wins, whatever its place in the tree', () => {
  const routes: Def[] = [['foo1', '/foo/:a/:b'], ['foo2', '/foo/:a/test/test/:b'], ['foo3', '/foo/:a/:b/:c/:d']];
  assert.equal(look(routes, '/foo/test/test/test/bar'), matched('foo2', { a: 'test', b: 'bar' }));
});

test('UrlMatcherTest::testDefaultRequirementForOptionalVariables and testDefaultRequirementOfVariable', () => {
  assert.equal(look([['test', '/:page.:_format', { defaults: { page: 'index', _format: 'html' } }]], '/my-page.xml'), matched('test', { page: 'my-page', _format: 'xml' }));
  assert.equal(look([['test', '/:page.:_format']], '/index.mobile.html'), matched('test', { page: 'index', _format: 'mobile.html' }));
});

test('UrlMatcherTest::testDefaultRequirementOfVariableDisallowsSlash and ...DisallowsNextSeparator', () => {
  assert.is(look([['test', '/:page.:_format']], '/index.sl/ash').kind, 'not-found');
  assert.is(look([['test', '/:page.:_format', { requirements: { _format: 'html|xml' } }]], '/do.t.html').kind, 'not-found');
});

test('UrlMatcherTest::testMatchingIsEager: a requirement is greedy', () => {
  const routes: Def[] = [['test', '/:foo-:bar-', { requirements: { foo: '.+', bar: '.+' } }]];
  assert.equal(look(routes, '/text1-text2-text3-text4-'), matched('test', { foo: 'text1-text2-text3', bar: 'text4' }));
});

test('UrlMatcherTest::testOptionalVariableWithNoRealSeparator', () => {
  const routes: Def[] = [['test', '/get{:what}', { defaults: { what: 'All' } }]];
  assert.equal(look(routes, '/get'), matched('test', { what: 'All' }));
  assert.equal(look(routes, '/getSites'), matched('test', { what: 'Sites' }));
  assert.is(look(routes, '/ge').kind, 'not-found');
});

test('UrlMatcherTest::testRequiredVariableWithNoRealSeparator: a parameter\'s default pattern stops only at a separator', () => {
  const routes: Def[] = [['test', '/get:"what"Suffix']];
  assert.equal(look(routes, '/getSitesSuffix'), matched('test', { what: 'Sites' }));
  assert.equal(look(routes, '/getSuffixSuffix'), matched('test', { what: 'Suffix' }));
  assert.is(look(routes, '/getSuffix').kind, 'not-found');
  assert.is(look(routes, '/getSi/tesSuffix').kind, 'not-found');
  // A separator (Symfony's `/,;.:-_~+*=@|`, `|` aside: see below) after the parameter still ends it.
  assert.equal(look([['test', '/:a-:b']], '/x-y-z'), matched('test', { a: 'x', b: 'y-z' }));
  assert.equal(look([['test', '/:"a"x']], '/axbx'), matched('test', { a: 'axb' }));
});

test('difference: UrlMatcherTest::testRequiredVariableWithNoRealSeparator: `|` after a parameter is matched as its encoding %7C, so it takes back what it needs (Symfony: a separator)', () => {
  assert.equal(look([['test', '/:a|:b']], '/x%7Cy%7Cz'), matched('test', { a: 'x|y', b: 'z' }));
  // The generator writes what reads back so.
  assert.is(generate([['test', '/:a|:b']], 'test', { a: 'x|y', b: 'z' }), '/app.php/x%7Cy%7Cz');
  assert.instance(thrown(() => generate([['test', '/:a|:b']], 'test', { a: 'x', b: 'y|z' })), InvalidParameterError);
});

test('RouteTest::testConstructor, testPath, testRequirements: what a Route keeps of its options', () => {
  const route = new Route('/', { schemes: ['Https'], methods: ['POST', 'put'] });
  assert.equal(route.schemes, ['https']);
  assert.equal(route.methods, ['POST', 'PUT']);
  assert.is(new Route('').path, '/');
  assert.is(new Route('bar').path, '/bar');
  assert.is(new Route('/:foo', { requirements: { foo: '^\\d+$' } }).requirements.foo, '\\d+');
});

test('RouteTest::testRequirementAlternativeStartAndEndRegexSyntax and testSetInvalidRequirement: \\A and \\z anchor as ^ and $ do', () => {
  const route = new Route('/:foo', { requirements: { foo: '\\A\\d+\\z' } });
  assert.is(route.requirements.foo, '\\d+');
  assert.equal(look([['r', '/:foo', { requirements: { foo: '\\A\\d+\\z' } }]], '/42'), matched('r', { foo: '42' }));
  assert.is(look([['r', '/:foo', { requirements: { foo: '\\A\\d+\\z' } }]], '/A42z').kind, 'not-found');
  for (const requirement of ['', '^$', '^', '$', '\\A\\z', '\\A', '\\z']) {
    assert.instance(thrown(() => new Route('/:foo', { requirements: { foo: requirement } })), InvalidRouteError, requirement);
  }
  // An escaped backslash before the z is no anchor (a backslash stands for its encoding, %5C).
  assert.is(new Route('/:foo', { requirements: { foo: 'a\\\\z' } }).requirements.foo, 'a(?:%5C)z');
});

test('difference: UrlGeneratorTest::testGenerateForRouteWithInvalidUtf8Parameter: a Unicode property escape (\\pL) in a requirement is an InvalidRouteError, not the letters pL', () => {
  for (const requirement of ['\\pL+', '\\p{L}+', '[\\PL]+']) {
    const error = thrown(() => new Route('/testing/:foo', { requirements: { foo: requirement } }));
    assert.instance(error, InvalidRouteError, requirement);
    assert.match(error.message, 'Unicode property escapes');
  }
  assert.is(new Route('/:foo', { requirements: { foo: 'a\\\\p' } }).requirements.foo, 'a(?:%5C)p', 'an escaped backslash before p is no escape');
});

test('difference: a PCRE escape JavaScript has not (\\Z, \\h, \\R, \\A or \\z inside the pattern) in a requirement is an InvalidRouteError, not the letter', () => {
  for (const requirement of ['\\d+\\Z', '\\h+', '[\\h-]+', 'a\\R', 'a|\\Ab', 'a\\z|b', '\\Qa.b\\E', '\\d++\\K']) {
    const error = thrown(() => new Route('/:foo', { requirements: { foo: requirement } }));
    assert.instance(error, InvalidRouteError, requirement);
    assert.match(error.message, 'which JavaScript reads as the letter', requirement);
  }
  // JavaScript's own escapes are kept.
  assert.is(new Route('/:foo', { requirements: { foo: '\\d\\D\\w\\W\\s\\S\\b\\B\\x41\\u0042' } }).requirements.foo, '\\d\\D\\w\\W\\s\\S\\b\\B\\x41\\u0042');
});

test('difference: UrlMatcherTest::testAdjacentVariables and testSiblingRoutes: two parameters with no text between them are an InvalidRouteError', () => {
  const error = thrown(() => new Route('/:w:x.:_format'));
  assert.instance(error, InvalidRouteError);
  assert.match(error.message, 'parameter "x" must be separated from the previous one by some text');
});

test('UrlMatcherTest::testDecodeOnce: a parameter is decoded once', () => {
  assert.equal(look([['foo', '/foo/:foo']], '/foo/bar%2523'), matched('foo', { foo: 'bar%23' }));
});

test('decoding of path parameters: %2F, +, %25 and UTF-8', () => {
  const routes: Def[] = [['a', '/a/:a']];
  assert.equal(look(routes, '/a/x%2Fy'), matched('a', { a: 'x/y' }), '%2F is a slash in the value, not a separator');
  assert.equal(look(routes, '/a/x+y'), matched('a', { a: 'x+y' }), '+ is no space in a path (rawurldecode)');
  assert.equal(look(routes, '/a/100%25'), matched('a', { a: '100%' }));
  assert.equal(look(routes, '/a/caf%C3%A9'), matched('a', { a: 'café' }));
});

test('UrlMatcherTest::testPathIsCaseSensitive', () => {
  assert.is(look([['foo', '/locale']], '/LOCALE').kind, 'not-found');
  assert.is(look([['foo', '/:locale', { requirements: { locale: 'EN|FR|DE' } }]], '/en').kind, 'not-found');
});

test('UrlMatcherTest::testRequirementWithCapturingGroup: a group in a requirement does not shift the parameters', () => {
  assert.equal(look([['a', '/:a/:b', { requirements: { a: '(a|b)' } }]], '/a/b'), matched('a', { a: 'a', b: 'b' }));
});

test('UrlMatcherTest::testDotAllWithCatchAll: the first route wins even when a later one would take the whole path', () => {
  const routes: Def[] = [['a', '/:id.html', { requirements: { id: '.+' } }], ['b', '/:all', { requirements: { all: '.+' } }]];
  assert.equal(look(routes, '/foo/bar.html'), matched('a', { id: 'foo/bar' }));
});

test('UrlMatcherTest::testUtf8Prefix and testUnicodeRoute: UTF-8 text in a pattern matches its percent-encoding', () => {
  assert.equal(look([['a', '/é:foo'], ['b', '/è:bar']], '/%C3%A9o'), matched('a', { foo: 'o' }));
  assert.equal(look([['b', '/:a', { requirements: { a: 'é' } }]], '/%C3%A9'), matched('b', { a: 'é' }));
});

test('UrlMatcherTest::testUtf8AndMethodMatching: a GET route after routes for other methods still answers GET', () => {
  const routes: Def[] = [
    ['a', '/admin/api/list/:shortClassName/:id.:_format', { methods: ['PUT'] }],
    ['b', '/admin/api/package.:_format', { methods: ['POST'] }],
    ['c', '/admin/api/package.:_format', { defaults: { _format: 'json' }, methods: ['GET'] }],
  ];
  assert.equal(look(routes, '/admin/api/package.json'), matched('c', { _format: 'json' }));
});

test('UrlMatcherTest::testSlashVariant: a requirement matching the empty string takes the trailing slash', () => {
  assert.equal(look([['a', '/foo/:bar', { requirements: { bar: '.*' } }]], '/foo/'), matched('a', { bar: '' }));
});

test('UrlMatcherTest::testGreedyTrailingRequirement: `.+` takes the trailing slash, no redirect', () => {
  const routes: Def[] = [['a', '/:a', { requirements: { a: '.+' } }]];
  assert.equal(look(routes, '/foo'), matched('a', { a: 'foo' }));
  assert.equal(look(routes, '/foo/'), matched('a', { a: 'foo/' }));
});

test('UrlMatcherTest::testTrailingRequirementWithDefault: an optional trailing parameter falls back to its default', () => {
  const routes: Def[] = [
    ['a', '/fr-fr{/:a}', { defaults: { a: 'aaa' }, requirements: { a: '.+' } }],
    ['b', '/en-en{/:b}', { defaults: { b: 'bbb' }, requirements: { b: '.*' } }],
  ];
  assert.equal(look(routes, '/fr-fr'), matched('a', { a: 'aaa' }));
  assert.equal(look(routes, '/fr-fr/AAA'), matched('a', { a: 'AAA' }));
  assert.equal(look(routes, '/en-en'), matched('b', { b: 'bbb' }));
  assert.equal(look(routes, '/en-en/BBB'), matched('b', { b: 'BBB' }));
  // testTrailingRequirementWithDefaultB: `.*` takes the empty value after the slash.
  assert.equal(look(routes, '/en-en/'), matched('b', { b: '' }));
  // RedirectableUrlMatcherTest::testTrailingRequirementWithDefault_A: `.+` cannot, and a GET is redirected.
  assert.equal(look(routes, '/fr-fr/'), redirected('a', '/fr-fr', { a: 'aaa' }));
  assert.is(look(routes, '/fr-fr/', 'POST').kind, 'not-found');
});

test('UrlMatcherTest::testRestrictiveTrailingRequirementWithStaticRouteAfter', () => {
  assert.equal(look([['a', '/hello:_', { requirements: { _: '/(?!/)' } }], ['b', '/hello']], '/hello/'), matched('a', { _: '/' }));
});

test('UrlMatcherTest::testParameterWithRequirementWithDefault', () => {
  const routes: Def[] = [['test', '/test{/:foo}', { defaults: { foo: 'foo-' }, requirements: { foo: '\\w+' } }]];
  assert.equal(look(routes, '/test/foo'), matched('test', { foo: 'foo' }));
  assert.is(look(routes, '/test/foo-').kind, 'not-found');
  assert.equal(look(routes, '/test'), matched('test', { foo: 'foo-' }));
});

// ---------------------------------------------------------------------------------------------
// UrlMatcherTest: schemes and hosts

test('UrlMatcherTest::testSchemeRequirementForNonSafeMethod: a POST over another scheme is a 404, never redirected', () => {
  assert.equal(look([['foo', '/foo', { schemes: ['https'] }]], '/foo', 'POST'), { kind: 'not-found', path: '/foo' });
});

test('UrlMatcherTest::testSamePathWithDifferentScheme: the route of the request\'s scheme answers', () => {
  assert.equal(look([['https_route', '/', { schemes: ['https'] }], ['http_route', '/', { schemes: ['http'] }]], '/'), matched('http_route'));
});

test('UrlMatcherTest::testSchemeAndMethodMismatch: the message names the path', () => {
  const m = new UrlMatcher(collection(['foo', '/', { schemes: ['https'], methods: ['POST'] }]));
  const error = thrown(() => m.match('/', { method: 'GET', host: 'localhost', scheme: 'http' }));
  assert.instance(error, ResourceNotFoundError);
  assert.is(error.message, 'No routes found for "/".');
});

test('UrlMatcherTest::testWithHost, testHostPattern and testWithOutHostHostDoesNotMatch', () => {
  assert.equal(look([['foo', '/foo/:foo', { host: ':locale.example.com' }]], '/foo/bar', 'GET', 'en.example.com'), matched('foo', { foo: 'bar', locale: 'en' }));
  assert.is(look([['foo', '/foo/:foo', { host: ':locale.example.com' }]], '/foo/bar', 'GET', 'example.com').kind, 'not-found');
  assert.equal(look([['a', '/:app/:action/:unused', { host: ':host' }]], '/an_app/an_action/unused', 'GET', 'foo'), matched('a', { app: 'an_app', action: 'an_action', unused: 'unused', host: 'foo' }));
});

test('UrlMatcherTest::testHostIsCaseInsensitive', () => {
  assert.equal(look([['foo', '/', { host: ':locale.example.com', requirements: { locale: 'EN|FR|DE' } }]], '/', 'GET', 'en.example.com'), matched('foo', { locale: 'en' }));
});

test('UrlMatcherTest::testHostWithDot: a dot in a path parameter is not a host matter', () => {
  assert.equal(look([['a', '/foo', { host: 'foo.example.com' }], ['b', '/bar/:baz']], '/bar/abc.123'), matched('b', { baz: 'abc.123' }));
});

// ---------------------------------------------------------------------------------------------
// UrlMatcherTest and RedirectableUrlMatcherTest: trailing slashes

test('RedirectableUrlMatcherTest::testMissingTrailingSlash and testExtraTrailingSlash: a GET or HEAD is redirected', () => {
  assert.equal(look([['foo', '/foo/']], '/foo'), redirected('foo', '/foo/'));
  assert.equal(look([['foo', '/foo']], '/foo/'), redirected('foo', '/foo'));
  assert.equal(look([['foo', '/foo/']], '/foo', 'HEAD'), redirected('foo', '/foo/'));
});

test('UrlMatcherTest::testMissingTrailingSlashForNonSafeMethod and testExtraTrailingSlashForNonSafeMethod: other methods get the 404', () => {
  assert.equal(look([['foo', '/foo/']], '/foo', 'POST'), { kind: 'not-found', path: '/foo' });
  assert.equal(look([['foo', '/foo']], '/foo/', 'POST'), { kind: 'not-found', path: '/foo/' });
  assert.equal(look([['foo', '/foo']], '/foo/', 'PUT'), { kind: 'not-found', path: '/foo/' });
});

test('RedirectableUrlMatcherTest::testSlashRedirectWithParams and testNonGreedyTrailingRequirement: dynamic routes are redirected too', () => {
  assert.equal(look([['foo', '/foo/:bar/']], '/foo/baz'), redirected('foo', '/foo/baz/', { bar: 'baz' }));
  assert.equal(look([['a', '/:a', { requirements: { a: '\\d+' } }]], '/123/'), redirected('a', '/123', { a: '123' }));
});

test('RedirectableUrlMatcherTest::testRedirectPreservesUrlEncoding: the redirect keeps the path\'s encoding', () => {
  assert.equal(look([['foo', '/caf%C3%A9/']], '/caf%C3%A9'), redirected('foo', '/caf%C3%A9/'));
});

test('difference: RedirectableUrlMatcherTest::testRedirectPreservesUrlEncoding: an encoded reserved character (%3A) is not the character (:) in a route\'s text', () => {
  assert.is(look([['foo', '/foo\\:bar/']], '/foo%3Abar').kind, 'not-found');
  assert.equal(look([['foo', '/foo\\:bar/']], '/foo:bar'), redirected('foo', '/foo:bar/'));
});

test('UrlMatcherTest::testVariationInTrailingSlashWithHosts (and in reverse): each host\'s route answers its own spelling', () => {
  for (const routes of [
    [['foo', '/foo/', { host: 'foo.example.com' }], ['bar', '/foo', { host: 'bar.example.com' }]],
    [['bar', '/foo', { host: 'bar.example.com' }], ['foo', '/foo/', { host: 'foo.example.com' }]],
  ] as Def[][]) {
    assert.equal(look(routes, '/foo/', 'GET', 'foo.example.com'), matched('foo'));
    assert.equal(look(routes, '/foo', 'GET', 'bar.example.com'), matched('bar'));
  }
  for (const routes of [
    [['foo', '/:foo/', { host: 'foo.example.com' }], ['bar', '/:foo', { host: 'bar.example.com' }]],
    [['bar', '/:foo', { host: 'bar.example.com' }], ['foo', '/:foo/', { host: 'foo.example.com' }]],
  ] as Def[][]) {
    assert.equal(look(routes, '/bar/', 'GET', 'foo.example.com'), matched('foo', { foo: 'bar' }));
    assert.equal(look(routes, '/bar', 'GET', 'bar.example.com'), matched('bar', { foo: 'bar' }));
  }
});

test('UrlMatcherTest::testVariationInTrailingSlashWithMethods (static, dynamic, mixed, in reverse): each method\'s route answers its own spelling', () => {
  for (const routes of [
    [['foo', '/foo/', { methods: ['POST'] }], ['bar', '/foo', { methods: ['GET'] }]],
    [['bar', '/foo', { methods: ['GET'] }], ['foo', '/foo/', { methods: ['POST'] }]],
  ] as Def[][]) {
    assert.equal(look(routes, '/foo/', 'POST'), matched('foo'));
    assert.equal(look(routes, '/foo', 'GET'), matched('bar'));
  }
  for (const routes of [
    [['foo', '/:foo/', { methods: ['POST'] }], ['bar', '/:foo', { methods: ['GET'] }]],
    [['bar', '/:foo', { methods: ['GET'] }], ['foo', '/:foo/', { methods: ['POST'] }]],
  ] as Def[][]) {
    assert.equal(look(routes, '/bar/', 'POST'), matched('foo', { foo: 'bar' }));
    assert.equal(look(routes, '/bar', 'GET'), matched('bar', { foo: 'bar' }));
  }
  const mixed: Def[] = [['foo', '/foo/', { methods: ['POST'] }], ['bar', '/:foo', { methods: ['GET'] }]];
  assert.equal(look(mixed, '/foo/', 'POST'), matched('foo'));
  assert.equal(look(mixed, '/bar'), matched('bar', { foo: 'bar' }));
  assert.equal(look(mixed, '/foo'), matched('bar', { foo: 'foo' }));
});

test('UrlMatcherTest::testSlashWithVerb: a route for other methods does not hide a GET route', () => {
  assert.equal(look([['a', '/:foo', { methods: ['put', 'delete'] }], ['b', '/bar/']], '/bar/'), matched('b'));
});

test('difference: UrlMatcherTest::testSlashWithVerb: a wildcard is a list of segments (Symfony: the text `files/bar/`)', () => {
  assert.equal(look([['a', '/dav/*foo', { methods: ['GET', 'OPTIONS'] }]], '/dav/files/bar/', 'OPTIONS'), matched('a', { foo: ['files', 'bar', ''] }));
});

test('UrlMatcherTest::testSlashAndVerbPrecedence: the route serving the method and the exact path wins', () => {
  assert.equal(
    look([['a', '/api/customers/:customerId/contactpersons/', { methods: ['post'] }], ['b', '/api/customers/:customerId/contactpersons', { methods: ['get'] }]], '/api/customers/123/contactpersons'),
    matched('b', { customerId: '123' }),
  );
  assert.equal(
    look([['a', '/api/customers/:customerId/contactpersons/', { methods: ['get'] }], ['b', '/api/customers/:customerId/contactpersons', { methods: ['post'] }]], '/api/customers/123/contactpersons', 'POST'),
    matched('b', { customerId: '123' }),
  );
});

test('RedirectableUrlMatcherTest::testSlashAndVerbPrecedenceWithRedirection: the GET route\'s redirect wins over the POST route\'s 405', () => {
  const routes: Def[] = [['a', '/api/customers/:customerId/contactpersons', { methods: ['post'] }], ['b', '/api/customers/:customerId/contactpersons/', { methods: ['get'] }]];
  assert.equal(look(routes, '/api/customers/123/contactpersons/'), matched('b', { customerId: '123' }));
  assert.equal(look(routes, '/api/customers/123/contactpersons'), redirected('b', '/api/customers/123/contactpersons/', { customerId: '123' }));
});

test('both /foo and /foo/: each answers its own path, and a method neither serves is a 405 of the path\'s route', () => {
  const routes: Def[] = [['a', '/foo', { methods: ['GET'] }], ['b', '/foo/', { methods: ['POST'] }]];
  assert.equal(look(routes, '/foo'), matched('a'));
  assert.equal(look(routes, '/foo/', 'POST'), matched('b'));
  assert.equal(look(routes, '/foo', 'PUT'), { kind: 'method-not-allowed', allowedMethods: ['GET', 'HEAD'] });
  assert.equal(look(routes, '/foo/', 'PUT'), { kind: 'method-not-allowed', allowedMethods: ['POST'] });
  assert.equal(look(routes, '/foo/'), redirected('a', '/foo'));
});

test('difference: RedirectableUrlMatcherTest::testFallbackPage: a later route matching the path as it is wins over an earlier one matching it with the trailing slash toggled', () => {
  assert.equal(look([['foo', '/foo/'], ['bar', '/:name']], '/foo'), matched('bar', { name: 'foo' }));
  assert.equal(look([['foo', '/foo'], ['bar', '/:name/']], '/foo/'), matched('bar', { name: 'foo' }));
});

// ---------------------------------------------------------------------------------------------
// RedirectableUrlMatcherTest: schemes

test('RedirectableUrlMatcherTest::testSchemeRedirectRedirectsToFirstScheme, testSchemeRedirectWithParams, testSchemeRedirectForRoot', () => {
  assert.equal(look([['foo', '/foo', { schemes: ['HTTPS'] }]], '/foo'), redirected('foo', '/foo', {}, 'https'));
  assert.equal(look([['foo', '/foo/:bar', { schemes: ['https'] }]], '/foo/baz'), redirected('foo', '/foo/baz', { bar: 'baz' }, 'https'));
  assert.equal(look([['foo', '/', { schemes: ['https'] }]], '/'), redirected('foo', '/', {}, 'https'));
});

test('RedirectableUrlMatcherTest::testNoSchemaRedirectIfOneOfMultipleSchemesMatches', () => {
  assert.equal(look([['foo', '/foo', { schemes: ['https', 'http'] }]], '/foo'), matched('foo'));
});

test('RedirectableUrlMatcherTest::testMissingTrailingSlashAndScheme: one redirect fixes both', () => {
  assert.equal(look([['foo', '/foo/', { schemes: ['https'] }]], '/foo'), redirected('foo', '/foo/', {}, 'https'));
});

test('difference: a route\'s scheme other than http or https (Symfony\'s FTP) is an InvalidRouteError', () => {
  assert.instance(thrown(() => new Route('/foo', { schemes: ['FTP', 'HTTPS'] })), InvalidRouteError);
});

// ---------------------------------------------------------------------------------------------
// TraceableUrlMatcherTest: explain(), what the profiler's router panel shows

function levels(m: UrlMatcher, path: string, method = 'GET', host = 'baz'): number[] {
  return m.explain(path, { method, host, scheme: 'http' }).map((trace) => ({ mismatch: 0, almost: 1, match: 2 })[trace.verdict]);
}

test('TraceableUrlMatcherTest::test: the levels of each route, a requirement that refuses the value being an almost match', () => {
  const m = new UrlMatcher(collection(
    ['foo', '/foo', { methods: ['POST'] }],
    ['bar', '/bar/:id', { requirements: { id: '\\d+' } }],
    ['bar1', '/bar/:name', { methods: ['POST'] }],
    ['bar2', '/foo', { host: 'baz' }],
    ['bar3', '/foo1', { host: 'baz' }],
  ));
  assert.equal(levels(m, '/babar'), [0, 0, 0, 0, 0]);
  assert.equal(levels(m, '/foo'), [1, 0, 0, 2]);
  assert.equal(levels(m, '/bar/12'), [0, 2]);
  assert.equal(levels(m, '/bar/dd'), [0, 1, 1, 0, 0]);
  assert.equal(levels(m, '/foo1'), [0, 0, 0, 0, 2]);
  assert.equal(levels(m, '/foo', 'POST'), [2]);
  assert.equal(levels(m, '/bar/dd', 'POST'), [0, 1, 2]);
  const trace = m.explain('/bar/dd', { method: 'GET', host: 'baz', scheme: 'http' })[1]!;
  assert.is(trace.reason, 'Requirement for "id" does not match (\\d+).');
  assert.equal(trace.checks, { path: false, host: null, method: null, scheme: null });
  // Of several requirements, the one that refuses is named.
  const two = new UrlMatcher(collection(['r', '/:a/:b', { requirements: { a: '[a-z]+', b: '\\d+' } }]));
  assert.is(two.explain('/x/y', { method: 'GET', host: 'baz', scheme: 'http' })[0]!.reason, 'Requirement for "b" does not match (\\d+).');
  assert.is(two.explain('/1/2', { method: 'GET', host: 'baz', scheme: 'http' })[0]!.reason, 'Requirement for "a" does not match ([a-z]+).');
  assert.is(two.explain('/x', { method: 'GET', host: 'baz', scheme: 'http' })[0]!.verdict, 'mismatch');
});

test('TraceableUrlMatcherTest::testMatchRouteOnMultipleHosts: a route for another host almost matches', () => {
  const m = new UrlMatcher(collection(['first', '/mypath/', { host: 'some.example.com' }], ['second', '/mypath/', { host: 'another.example.com' }]));
  assert.equal(levels(m, '/mypath/'), [1, 1]);
  assert.is(m.explain('/mypath/', { method: 'GET', host: 'baz', scheme: 'http' })[0]!.reason, 'Host "baz" does not match "some.example.com".');
});

// ---------------------------------------------------------------------------------------------
// RouterListener: the messages of Symfony's RouterListener

const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver());

function routeRequest(routes: Def[], target: string, init: { method?: string; headers?: Record<string, string> } = {}): RequestEvent {
  const event = new RequestEvent(kernel, new Request(target, { method: init.method ?? 'GET', headers: { host: 'a.test', ...init.headers } }), RequestType.MAIN);
  new RouterListener(new UrlMatcher(collection(...routes))).onKernelRequest(event);
  return event;
}

test('RouterListener: the 404 and 405 messages are Symfony\'s, the 405 with Allow', () => {
  const routes: Def[] = [['health', '/health', { methods: ['GET'] }]];
  const notFound = thrown(() => routeRequest(routes, '/robots.txt', { headers: { referer: 'http://a.test/' } })) as Error & { status: number };
  assert.is(notFound.status, 404);
  assert.is(notFound.message, 'No route found for "GET http://a.test/robots.txt" (from "http://a.test/")');
  const notAllowed = thrown(() => routeRequest(routes, '/health', { method: 'POST' })) as Error & { status: number; headers: Record<string, string> };
  assert.is(notAllowed.status, 405);
  assert.is(notAllowed.message, 'No route found for "POST http://a.test/health": Method Not Allowed (Allow: GET, HEAD)');
  assert.is(notAllowed.headers.allow ?? notAllowed.headers.Allow, 'GET, HEAD');
});

test('RouterListener: a trailing-slash redirect is a 301 keeping the query string', () => {
  const event = routeRequest([['foo', '/foo/:bar/']], '/foo/baz?a=1&b=2');
  assert.is(event.response?.status, 301);
  assert.is(event.response?.getHeader('location'), 'http://a.test/foo/baz/?a=1&b=2');
});

// ---------------------------------------------------------------------------------------------
// UrlGeneratorTest

test('UrlGeneratorTest::testAbsoluteUrlWithPort80, testAbsoluteSecureUrlWithPort443 and the non-standard ports', () => {
  const routes: Def[] = [['test', '/testing']];
  assert.is(generate(routes, 'test', {}, true), 'http://localhost/app.php/testing');
  assert.is(generate(routes, 'test', {}, true, { scheme: 'https' }), 'https://localhost/app.php/testing');
  assert.is(generate(routes, 'test', {}, true, { port: 8080 }), 'http://localhost:8080/app.php/testing');
  assert.is(generate(routes, 'test', {}, true, { scheme: 'https', port: 8080 }), 'https://localhost:8080/app.php/testing');
});

test('UrlGeneratorTest: a route forcing the other scheme gets that scheme\'s default port, not the context\'s (Symfony\'s httpsPort is 443 unless set)', () => {
  assert.is(generate([['test', '/', { schemes: ['https'] }]], 'test', {}, false, { port: 8080 }), 'https://localhost/app.php/');
  assert.is(generate([['test', '/', { schemes: ['https'] }]], 'test', {}, true, { scheme: 'https', port: 8443 }), 'https://localhost:8443/app.php/');
});

test('UrlGeneratorTest::testRelativeUrlWithoutParameters, testRelativeUrlWithParameter, testRelativeUrlWithOptionalZeroParameter', () => {
  assert.is(generate([['test', '/testing']], 'test'), '/app.php/testing');
  assert.is(generate([['test', '/testing/:foo']], 'test', { foo: 'bar' }), '/app.php/testing/bar');
  assert.is(generate([['test', '/testing/:page']], 'test', { page: 0 }), '/app.php/testing/0');
});

test('UrlGeneratorTest::testRelativeUrlWithNullParameter: an optional parameter whose default is null is left out', () => {
  assert.is(generate([['test', '/testing{.:format}', { defaults: { format: null } }]], 'test'), '/app.php/testing');
});

test('UrlGeneratorTest::testRelativeUrlWithNullParameterButNotOptional: a required parameter with a null default is missing', () => {
  assert.instance(thrown(() => generate([['test', '/testing/:foo/bar', { defaults: { foo: null } }]], 'test')), MissingMandatoryParametersError);
});

test('UrlGeneratorTest::testNoTrailingSlashForMultipleOptionalParameters and testNullForOptionalParameterIsIgnored', () => {
  assert.is(generate([['test', '/category/:slug1{/:slug2{/:slug3}}', { defaults: { slug2: null, slug3: null } }]], 'test', { slug1: 'foo' }), '/app.php/category/foo');
  assert.is(generate([['test', '/test{/:default}', { defaults: { default: 0 } }]], 'test', { default: null }), '/app.php/test');
});

test('UrlGeneratorTest::testNotPassedOptionalParameterInBetween and testWithAnIntegerAsADefaultValue: a pattern opening with an optional group', () => {
  const routes: Def[] = [['test', '{/:slug{/:page}}', { defaults: { slug: 'index', page: 0 } }]];
  assert.is(generate(routes, 'test', { page: 1 }), '/app.php/index/1');
  assert.is(generate(routes, 'test'), '/app.php/');
  assert.is(generate([['test', '{/:default}', { defaults: { default: 0 } }]], 'test', { default: 'foo' }), '/app.php/foo');
});

test('UrlGeneratorTest::testPathWithTwoStartingSlashes: never a network path', () => {
  assert.is(generate([['test', '//path-and-not-domain']], 'test', {}, false, { baseUrl: '' }), '/path-and-not-domain');
});

test('UrlGeneratorTest::testPathWithTwoStartingSlashes: a value that would start the path with // is an InvalidParameterError', () => {
  for (const [routes, params] of [
    [[['test', '/*path']], { path: ['', 'evil.example', 'x'] }],
    [[['test', '/*path']], { path: '/evil.example' }],
    [[['test', '/:a/x', { requirements: { a: '.*' } }]], { a: '' }],
  ] as [Def[], Record<string, unknown>][]) {
    for (const baseUrl of ['', '/shop']) {
      const error = thrown(() => generate(routes, 'test', params, false, { baseUrl }));
      assert.instance(error, InvalidParameterError);
      assert.match(error.message, 'a network path');
    }
  }
  assert.is(generate([['test', '/*path']], 'test', { path: ['a', '', 'b'] }, false, { baseUrl: '' }), '/a//b');
});

test('UrlGeneratorTest::testRelativeUrlWithExtraParameters: other parameters go to the query string', () => {
  const routes: Def[] = [['test', '/testing']];
  assert.is(generate(routes, 'test', { foo: null }), '/app.php/testing');
  assert.is(generate(routes, 'test', { foo: 'bar' }), '/app.php/testing?foo=bar');
  assert.is(generate(routes, 'test', { 123: 'foo' }), '/app.php/testing?123=foo');
  assert.is(generate(routes, 'test', { foo: 'bar' }, true), 'http://localhost/app.php/testing?foo=bar');
});

test('difference: UrlGeneratorTest::testRelativeUrlWithExtraParameters: a boolean is written true or false (PHP writes 1 or 0), a list as repeated keys (PHP: key[0], key[1]), an object is a TypeError (PHP: key[sub]; request.query reads no brackets back)', () => {
  const routes: Def[] = [['test', '/testing']];
  assert.throws(() => generate(routes, 'test', { foo: { baz: 'bar' } }), (error: unknown) => error instanceof TypeError && /query parameter "foo"/.test(error.message));
  assert.throws(() => generate(routes, 'test', { foo: { nested: { baz: 'bar' } } }), TypeError);
  assert.is(generate(routes, 'test', { foo: true }), '/app.php/testing?foo=true');
  assert.is(generate(routes, 'test', { foo: false }), '/app.php/testing?foo=false');
  assert.is(generate(routes, 'test', { foo: ['a', 'b'] }), '/app.php/testing?foo=a&foo=b');
});

test('UrlGeneratorTest::testQueryParameters and ...WithSameName: _query gives query parameters by name, a route parameter\'s name included', () => {
  const user: Def[] = [['user', '/user/:username']];
  assert.is(generate(user, 'user', { username: 'john', a: 'foo', b: 'bar', c: 'baz', _query: { a: '123', d: '789' } }), '/app.php/user/john?a=123&b=bar&c=baz&d=789');
  assert.is(generate([['user', '/user/:id']], 'user', { id: '123', _query: { id: '456' } }), '/app.php/user/123?id=456');
  const stats: Def[] = [['admin_stats', '/admin/stats', { host: ':siteCode.example.com' }]];
  assert.is(generate(stats, 'admin_stats', { siteCode: 'fr', _query: { siteCode: 'us' } }), 'http://fr.example.com/app.php/admin/stats?siteCode=us');
  // testQueryParameterCannotSubstituteRouteParameter
  const error = thrown(() => generate([['user', '/user/:id']], 'user', { _query: { id: '456' } }));
  assert.instance(error, MissingMandatoryParametersError);
  assert.is(error.message, 'Some mandatory parameters are missing ("id") to generate a URL for route "user".');
  assert.instance(thrown(() => generate(user, 'user', { username: 'john', _query: 'a=1' })), TypeError);
  // A Date or a Map has no own keys: read as an object by name it would be an empty query, said nowhere.
  for (const query of [new Date(0), new Map([['a', '1']])]) {
    assert.match(String(thrown(() => generate(user, 'user', { username: 'john', _query: query }))), /^TypeError: The _query parameter of route "user" is a plain object by name/);
  }
  assert.is(generate(user, 'user', { username: 'john', a: 'foo', _query: { a: null } }), '/app.php/user/john');
});

test('UrlGeneratorTest::testGenerateWithoutRoutes: an unknown name is a RouteNotFoundError', () => {
  const error = thrown(() => generate([['foo', '/testing/:foo']], 'test', {}, true));
  assert.instance(error, RouteNotFoundError);
  assert.is(error.message, 'Unable to generate a URL for the named route "test" as such route does not exist.');
});

test('UrlGeneratorTest::testGenerateForRouteWithoutMandatoryParameter: the message is Symfony\'s', () => {
  const error = thrown(() => generate([['test', '/testing/:foo']], 'test', {}, true));
  assert.instance(error, MissingMandatoryParametersError);
  assert.is(error.message, 'Some mandatory parameters are missing ("foo") to generate a URL for route "test".');
});

test('UrlGeneratorTest::testGenerateForRouteWithInvalid(Optional|Mandatory)Parameter and the alternation one: an InvalidParameterError', () => {
  const invalid = thrown(() => generate([['test', '/testing/:foo', { requirements: { foo: 'd+' } }]], 'test', { foo: 'bar' }, true));
  assert.instance(invalid, InvalidParameterError);
  assert.is(invalid.message, 'Parameter "foo" for route "test" must match "d+" ("bar" given) to generate a corresponding URL.');
  assert.instance(thrown(() => generate([['test', '/testing{/:foo}', { defaults: { foo: '1' }, requirements: { foo: 'd+' } }]], 'test', { foo: 'bar' })), InvalidParameterError);
  assert.instance(thrown(() => generate([['test', '/testing/:foo', { requirements: { foo: '1|2' } }]], 'test', { foo: '0' })), InvalidParameterError);
  // testGenerateForRouteWithAlternationRequirementRejectsSubstringMatch: the requirement is anchored as a whole.
  assert.instance(thrown(() => generate([['test', '/:_locale/blog', { requirements: { _locale: 'en|fr|vi|de' } }]], 'test', { _locale: '/evil.com' })), InvalidParameterError);
});

test('UrlGeneratorTest::testRequiredParamAndEmptyPassed', () => {
  assert.instance(thrown(() => generate([['test', '/:slug', { requirements: { slug: '.+' } }]], 'test', { slug: '' })), InvalidParameterError);
});

test('UrlGeneratorTest::testSchemeRequirementDoesNothingIfSameCurrentScheme and testSchemeRequirementForcesAbsoluteUrl', () => {
  assert.is(generate([['test', '/', { schemes: ['http'] }]], 'test'), '/app.php/');
  assert.is(generate([['test', '/', { schemes: ['https'] }]], 'test', {}, false, { scheme: 'https' }), '/app.php/');
  assert.is(generate([['test', '/', { schemes: ['https'] }]], 'test'), 'https://localhost/app.php/');
  assert.is(generate([['test', '/', { schemes: ['http'] }]], 'test', {}, false, { scheme: 'https' }), 'http://localhost/app.php/');
});

test('UrlGeneratorTest::testQueryParamSameAsDefault: a default given as it is stays out of the query', () => {
  const routes: Def[] = [['test', '/test', { defaults: { page: 1 } }]];
  assert.is(generate(routes, 'test', { page: 2 }), '/app.php/test?page=2');
  assert.is(generate(routes, 'test', { page: 1 }), '/app.php/test');
  assert.is(generate(routes, 'test', { page: '1' }), '/app.php/test');
  assert.is(generate(routes, 'test'), '/app.php/test');
});

test('UrlGeneratorTest::testGenerateWithSpecialRouteName', () => {
  assert.is(generate([['$péß^a|', '/bar']], '$péß^a|'), '/app.php/bar');
});

test('UrlGeneratorTest::testUrlEncoding: characters a path segment may hold are written as they are, others encoded', () => {
  const routes: Def[] = [['test', '/t/:a', { requirements: { a: '.+' } }]];
  assert.is(generate(routes, 'test', { a: '@:;,=+!*' }), '/app.php/t/@:;,=+!*');
  assert.is(generate(routes, 'test', { a: '?#%"[]<>{}\\^` ' }), '/app.php/t/%3F%23%25%22%5B%5D%3C%3E%7B%7D%5C%5E%60%20');
  assert.is(generate(routes, 'test', { a: '-._~' }), '/app.php/t/-._~');
  assert.is(generate(routes, 'test', { a: 'café' }), '/app.php/t/caf%C3%A9');
});

test('difference: UrlGeneratorTest::testUrlEncoding and testEncodingOfSlashInPath: / in a value is %2F and | is encoded (Symfony writes both as they are)', () => {
  const routes: Def[] = [['test', '/dir/:path/dir2', { requirements: { path: '.+' } }]];
  assert.is(generate(routes, 'test', { path: 'foo/bar' }), '/app.php/dir/foo%2Fbar/dir2');
  assert.is(generate(routes, 'test', { path: 'a|b' }), '/app.php/dir/a%7Cb/dir2');
  // It reads back as the one value it was.
  const m = new UrlMatcher(collection(...routes));
  assert.equal(m.match('/dir/foo%2Fbar/dir2', { method: 'GET', host: 'localhost', scheme: 'http' }).params, { path: 'foo/bar' });
});

test('difference: UrlGeneratorTest::testEncodingOfSlashInQueryParameters: the query is encoded as encodeURIComponent does (/ is %2F)', () => {
  assert.is(generate([['test', '/get']], 'test', { query: 'foo/bar' }), '/app.php/get?query=foo%2Fbar');
  assert.is(generate([['test', '/get']], 'test', { query: 'a+b c&d=e' }), '/app.php/get?query=a%2Bb%20c%26d%3De');
});

test('UrlGeneratorTest::testEncodingOfRelativePathSegments: dot segments are encoded, other dots not', () => {
  assert.is(generate([['test', '/dir/../dir/..']], 'test'), '/app.php/dir/%2E%2E/dir/%2E%2E');
  assert.is(generate([['test', '/dir/./dir/.']], 'test'), '/app.php/dir/%2E/dir/%2E');
  assert.is(generate([['test', '/a./.a/a../..a/...']], 'test'), '/app.php/a./.a/a../..a/...');
});

test('difference: UrlGeneratorTest::testEncodingOfRelativePathSegments: a value that makes a dot segment is an InvalidParameterError (Symfony writes %2E%2E, which browsers resolve away too)', () => {
  assert.instance(thrown(() => generate([['test', '/dir/:a']], 'test', { a: '..' })), InvalidParameterError);
  assert.instance(thrown(() => generate([['test', '/dir/:a/x']], 'test', { a: '.' })), InvalidParameterError);
});

test('UrlGeneratorTest::testOptionalVariableWithNoRealSeparator and testDefaultRequirementOfVariable', () => {
  assert.is(generate([['test', '/get{:what}', { defaults: { what: 'All' } }]], 'test'), '/app.php/get');
  assert.is(generate([['test', '/get{:what}', { defaults: { what: 'All' } }]], 'test', { what: 'Sites' }), '/app.php/getSites');
  assert.is(generate([['test', '/:page.:_format']], 'test', { page: 'index', _format: 'mobile.html' }), '/app.php/index.mobile.html');
});

test('UrlGeneratorTest::testRequiredVariableWithNoRealSeparator', () => {
  assert.is(generate([['test', '/get:"what"Suffix']], 'test', { what: 'Sites' }), '/app.php/getSitesSuffix');
  // The text after the parameter may be in its value, unless the URL would read back otherwise.
  assert.is(generate([['test', '/get:"what"Suffix']], 'test', { what: 'aSuffixb' }), '/app.php/getaSuffixbSuffix');
  assert.is(generate([['test', '/:"a"x:"b"']], 'test', { a: '1x2', b: '3' }), '/app.php/1x2x3');
  assert.match(thrown(() => generate([['test', '/:"a"x:"b"']], 'test', { a: '1', b: '2x3' })).message, '"/1x2x3" would give "1x2"');
  assert.is(generate([['test', '/:"a"x']], 'test', { a: 'axb' }), '/app.php/axbx');
  assert.instance(thrown(() => generate([['test', '/:a-:b']], 'test', { a: 'x-y', b: 'z' })), InvalidParameterError);
});

test('UrlGeneratorTest::testImportantVariable and testImportantVariableWithNoDefault: a required parameter is written, its default if not given', () => {
  const routes: Def[] = [['test', '/:page.:_format', { defaults: { _format: 'mobile.html' } }]];
  assert.is(generate(routes, 'test', { page: 'index', _format: 'xml' }), '/app.php/index.xml');
  assert.is(generate(routes, 'test', { page: 'index', _format: 'mobile.html' }), '/app.php/index.mobile.html');
  assert.is(generate(routes, 'test', { page: 'index' }), '/app.php/index.mobile.html');
  const error = thrown(() => generate([['test', '/:page.:_format']], 'test', { page: 'index' }));
  assert.is(error.message, 'Some mandatory parameters are missing ("_format") to generate a URL for route "test".');
});

test('difference: UrlGeneratorTest::testDefaultRequirementOfVariableDisallowsSlash: / in a value is written %2F rather than refused', () => {
  assert.is(generate([['test', '/:page.:_format']], 'test', { page: 'index', _format: 'sl/ash' }), '/app.php/index.sl%2Fash');
});

test('UrlGeneratorTest::testDefaultRequirementOfVariableDisallowsNextSeparator', () => {
  assert.instance(thrown(() => generate([['test', '/:page.:_format']], 'test', { page: 'do.t', _format: 'html' })), InvalidParameterError);
});

test('UrlGeneratorTest::testWithHostSameAsContext and testWithHostSameAsContextAndAbsolute', () => {
  const routes: Def[] = [['test', '/:name', { host: ':locale.example.com' }]];
  assert.is(generate(routes, 'test', { name: 'Fabien', locale: 'fr' }, false, { host: 'fr.example.com' }), '/app.php/Fabien');
  assert.is(generate(routes, 'test', { name: 'Fabien', locale: 'fr' }, true, { host: 'fr.example.com' }), 'http://fr.example.com/app.php/Fabien');
});

test('difference: UrlGeneratorTest::testWithHostDifferentFromContext and testHostIsCaseInsensitive: another host gives an absolute URL in the context\'s scheme, lower-cased (Symfony: a network path //host/...)', () => {
  const routes: Def[] = [['test', '/:name', { host: ':locale.example.com' }]];
  assert.is(generate(routes, 'test', { name: 'Fabien', locale: 'fr' }), 'http://fr.example.com/app.php/Fabien');
  assert.is(generate([['test', '/', { host: ':locale.FooBar.com', requirements: { locale: 'en|de|fr' } }]], 'test', { locale: 'EN' }), 'http://en.foobar.com/app.php/');
});

test('UrlGeneratorTest::testUrlWithInvalidParameterInHost (with a default, and equal to the default)', () => {
  assert.instance(thrown(() => generate([['test', '/', { host: ':foo.example.com', requirements: { foo: 'bar' } }]], 'test', { foo: 'baz' })), InvalidParameterError);
  assert.instance(thrown(() => generate([['test', '/', { host: ':foo.example.com', defaults: { foo: 'bar' }, requirements: { foo: 'bar' } }]], 'test', { foo: 'baz' })), InvalidParameterError);
  assert.instance(thrown(() => generate([['test', '/', { host: ':foo.example.com', defaults: { foo: 'baz' }, requirements: { foo: 'bar' } }]], 'test', { foo: 'baz' })), InvalidParameterError);
});

test('UrlGeneratorTest::testFragmentsCanBeAppendedToUrls and testFragmentsDoNotEscapeValidCharacters', () => {
  assert.is(generate([['test', '/testing']], 'test', { _fragment: 'frag ment' }), '/app.php/testing#frag%20ment');
  assert.is(generate([['test', '/testing']], 'test', { _fragment: '0' }), '/app.php/testing#0');
  assert.is(generate([['test', '/testing']], 'test', { _fragment: '?/' }), '/app.php/testing#?/');
});

test('UrlGeneratorTest::testFragmentsCanBeDefinedAsDefaults: a route\'s default _fragment is the fragment, unless one is given', () => {
  const routes: Def[] = [['test', '/testing', { defaults: { _fragment: 'fragment' } }]];
  assert.is(generate(routes, 'test'), '/app.php/testing#fragment');
  assert.is(generate(routes, 'test', { _fragment: 'other' }), '/app.php/testing#other');
  assert.is(generate(routes, 'test', { page: 2 }), '/app.php/testing?page=2#fragment');
});

test('generated URLs match back to their route and parameters (UrlGeneratorTest and UrlMatcherTest together)', () => {
  const routes = collection(['page', '/pages/:slug'], ['file', '/files/*path'], ['book', '/books/:id{.:format}', { requirements: { id: '\\d+' } }]);
  const g = new UrlGenerator(routes);
  const m = new UrlMatcher(routes);
  for (const [name, params] of [
    ['page', { slug: '/ ? # % @ : ; , = + ! * | "' }],
    ['file', { path: ['a b', 'c%d', 'é'] }],
    ['book', { id: '12', format: 'json' }],
  ] as const) {
    const result = m.match(g.generate(name, params), { method: 'GET', host: 'localhost', scheme: 'http' });
    assert.is(result.name, name);
    assert.equal(result.params, params);
  }
});

test.run();
