// Route groups: RouteCollection's addCollection(), addPrefix(), addNamePrefix() and the methods that
// change every route (Symfony's cases are in symfony-fidelity.test.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FrozenCollectionError, InvalidRouteError, Route, RouteCollection, UrlGenerator, UrlMatcher, type CollectionChange } from '../../../lib/routing/index.js';
import { thrown } from '../helpers.js';

const GET = { method: 'GET', host: 'localhost', scheme: 'http' } as const;

function api(): RouteCollection {
  return new RouteCollection()
    .add('index', new Route('/'))
    .add('show', new Route('/users/:id', { methods: ['GET'], requirements: { id: /\d+/ } }))
    .add('update', new Route('/users/:id', { methods: ['PUT'] }));
}

test('a prefixed, name-prefixed group is matched by UrlMatcher and generated back by UrlGenerator', () => {
  const routes = new RouteCollection().add('home', new Route('/')).addCollection(api().addPrefix('/api/v1/').addNamePrefix('api_'));
  assert.equal([...routes].map(([name, route]) => [name, route.path]), [['home', '/'], ['api_index', '/api/v1/'], ['api_show', '/api/v1/users/:id'], ['api_update', '/api/v1/users/:id']]);
  const matcher = new UrlMatcher(routes);
  const show = matcher.match('/api/v1/users/42', GET);
  assert.is(show.name, 'api_show');
  assert.equal(show.params, { id: '42' });
  assert.is(matcher.match('/api/v1/users/42', { ...GET, method: 'PUT' }).name, 'api_update');
  assert.is(matcher.lookup('/users/42', GET).kind, 'not-found');
  assert.is(matcher.lookup('/api/v1/users/x', GET).kind, 'method-not-allowed'); // show's requirement refuses x; update is PUT only
  assert.is(matcher.match('/api/v1/', GET).name, 'api_index');
  const urls = new UrlGenerator(routes);
  assert.is(urls.generate('api_show', { id: 42 }), '/api/v1/users/42');
  assert.is(urls.generate('api_index'), '/api/v1/');
  assert.is(urls.generate('home'), '/');
});

test('a prefix with a parameter composes with the route\'s: its requirement and default go to every route', () => {
  const routes = api().addPrefix('/:locale', { locale: 'en' }, { locale: 'en|fr' });
  assert.is(routes.get('show')?.path, '/:locale/users/:id');
  assert.equal(routes.get('show')?.requirements, { id: '\\d+', locale: 'en|fr' });
  const matcher = new UrlMatcher(routes);
  assert.equal(matcher.match('/fr/users/7', GET).params, { locale: 'fr', id: '7' });
  assert.is(matcher.lookup('/de/users/7', GET).kind, 'not-found');
  // The route's requirement is kept as written, a RegExp included, as explain() shows it.
  const almost = matcher.explain('/fr/users/x', GET).find((trace) => trace.name === 'show');
  assert.is(almost?.reason, 'Requirement for "id" does not match (/\\d+/).');
  assert.is(new UrlGenerator(routes).generate('show', { locale: 'fr', id: 7 }), '/fr/users/7');
  assert.throws(() => new UrlGenerator(routes).generate('show', { locale: 'de', id: 7 }), /Parameter "locale" for route "show" must match "en\|fr"/);
});

test('an optional group may open the prefix, holding its slash', () => {
  const routes = api().addPrefix('/{/:locale}/');
  assert.is(routes.get('show')?.path, '{/:locale}/users/:id');
  const matcher = new UrlMatcher(routes);
  assert.equal(matcher.match('/users/7', GET).params, { id: '7' });
  assert.equal(matcher.match('/fr/users/7', GET).params, { locale: 'fr', id: '7' });
});

test('a prefix parameter that a route\'s path or host holds too is an InvalidRouteError naming both, and no route is changed', () => {
  const routes = api();
  const error = thrown(() => routes.addPrefix('/:id'));
  assert.instance(error, InvalidRouteError);
  assert.is(error.message, 'Parameter "id" of the prefix "/:id" is also a parameter of route "show" ("/users/:id"): rename one of them.');
  assert.equal([...routes].map(([, route]) => route.path), ['/', '/users/:id', '/users/:id']);
  const hosted = new RouteCollection().add('tenant', new Route('/home', { host: ':tenant.example.com' }));
  assert.is(thrown(() => hosted.addPrefix('/:tenant')).message, 'Parameter "tenant" of the prefix "/:tenant" is also a parameter of the host of route "tenant" (":tenant.example.com"): rename one of them.');
});

test('a route a change makes invalid is an InvalidRouteError naming the route and its new path, and no route is changed', () => {
  const routes = new RouteCollection().add('a', new Route('/a')).add('page', new Route('/:page'));
  const error = thrown(() => routes.setHost(':page.example.com'));
  assert.instance(error, InvalidRouteError);
  assert.is(error.message, 'setHost() makes route "page" ("/:page") invalid: Parameter "page" is used in both the host and the path of route "/:page".');
  assert.instance(error.cause, InvalidRouteError);
  assert.is(routes.get('a')?.host, undefined);
  assert.match(thrown(() => routes.addRequirements({ page: '\\pL' })).message, /^addRequirements\(\) makes route "a" \("\/a"\) invalid: The requirement for parameter "page" uses \\p/);
  assert.match(thrown(() => routes.addPrefix('/v1', {}, { page: '[à-ü]' })).message, /^addPrefix\(\) makes route "a" \("\/v1\/a"\) invalid: /);
  assert.is(thrown(() => routes.setMethods(['GET POST'])).message, 'setMethods() makes route "a" ("/a") invalid: Invalid method "GET POST" for route "/a".');
});

test('a malformed prefix is an InvalidRouteError naming the prefix', () => {
  const error = thrown(() => api().addPrefix('/{locale}'));
  assert.instance(error, InvalidRouteError);
  assert.match(error.message, /^Invalid route prefix "\/\{locale\}": "\{locale\}" is the optional text "locale", not a parameter/);
});

test('a prefix that puts "//" in every route\'s path (`/api/{:v}` left out is `/api/`) is an InvalidRouteError naming the prefix, once, before any route; no route is changed', () => {
  for (const [prefix, message] of [
    ['/api/{:v}', 'Invalid route prefix "/api/{:v}": it puts "//" in the path of every route, as in "/api/{:v}/x" for a route "/x": an optional group, written or left out, puts "//" in it ("/api//x"); the group holds the slash before its segment, the text before it does not: `/api{/:version}`, `/files{/:dir}/list`.'],
    ['/{:v}', 'Invalid route prefix "/{:v}": it puts "//" in the path of every route, as in "/{:v}/x" for a route "/x": it must start with one "/" whichever optional groups are left out or written, not "//x" (an optional group opening the path holds its slash: `{/:locale}/home`).'],
  ] as const) {
    const routes = api();
    const error = thrown(() => routes.addPrefix(prefix));
    assert.instance(error, InvalidRouteError, prefix);
    assert.is(error.message, message);
    assert.equal([...routes].map(([, route]) => route.path), ['/', '/users/:id', '/users/:id'], prefix);
    assert.is(thrown(() => new RouteCollection().addPrefix(prefix)).message, message, 'refused as a prefix, with no route to show it');
  }
  // The group holding its slash is the prefix that works, and so does one that leaves no "/" before the route.
  assert.equal([...api().addPrefix('/api{/:v}')].map(([, route]) => route.path), ['/api{/:v}/', '/api{/:v}/users/:id', '/api{/:v}/users/:id']);
  assert.equal([...api().addPrefix('{/:v}')].map(([, route]) => route.path), ['{/:v}/', '{/:v}/users/:id', '{/:v}/users/:id']);
});

test('arguments of the wrong kind are TypeErrors, not routes changed by nothing', () => {
  const routes = api();
  assert.is(thrown(() => routes.addDefaults(new Map([['a', 1]]) as never)).message, 'The defaults given to addDefaults() are an object ({ name: value }), not an object of type Map.');
  assert.instance(thrown(() => routes.addPrefix('/x', [] as never)), TypeError);
  assert.instance(thrown(() => routes.addPrefix(undefined as never)), TypeError);
  assert.is(thrown(() => routes.setMethods('PUT' as never)).message, 'setMethods() takes an array ([\'GET\']), not the string "PUT".');
  assert.instance(thrown(() => routes.setSchemes('https' as never)), TypeError);
  assert.instance(thrown(() => routes.setHost(null as never)), TypeError);
  assert.instance(thrown(() => routes.addCollection([] as never)), TypeError);
});

test('setHost(\'\') removes the host; a collection added is copied, so later changes to it stay its own', () => {
  const child = new RouteCollection().add('a', new Route('/a', { host: 'x.example.com' }));
  const parent = new RouteCollection().addCollection(child);
  child.setHost('').addPrefix('/child');
  assert.is(child.get('a')?.host, undefined);
  assert.is(parent.get('a')?.host, 'x.example.com');
  assert.is(parent.get('a')?.path, '/a');
  assert.is(parent.addCollection(parent).count, 1);
});

test('a frozen collection refuses every change with a FrozenCollectionError naming the method, and is left as it was', () => {
  const routes = api().freeze('compiled already.');
  const changes: [CollectionChange, () => unknown][] = [
    ['addCollection', () => routes.addCollection(new RouteCollection())],
    ['addPrefix', () => routes.addPrefix('/api')],
    ['addNamePrefix', () => routes.addNamePrefix('api_')],
    ['addDefaults', () => routes.addDefaults({ a: 1 })],
    ['addRequirements', () => routes.addRequirements({ id: '\\d+' })],
    ['setHost', () => routes.setHost('example.com')],
    ['setSchemes', () => routes.setSchemes(['https'])],
    ['setMethods', () => routes.setMethods(['GET'])],
  ];
  for (const [change, call] of changes) {
    const error = thrown(call);
    assert.instance(error, FrozenCollectionError, change);
    assert.is(error.message, `Cannot call ${change}(): compiled already.`);
    assert.is((error as FrozenCollectionError).change, change);
    assert.is((error as FrozenCollectionError).routeName, null);
    assert.is((error as FrozenCollectionError).code, 'HK_ROUTING_COLLECTION_FROZEN');
  }
  assert.equal([...routes].map(([name, route]) => [name, route.path, route.host, route.methods]), [['index', '/', undefined, []], ['show', '/users/:id', undefined, ['GET']], ['update', '/users/:id', undefined, ['PUT']]]);
});

test.run();
