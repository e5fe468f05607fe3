import { runInNewContext } from 'node:vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FrozenCollectionError, InvalidRouteError, Route, RouteCollection, UrlMatcher } from '../../../lib/routing/index.js';
import { thrown } from '../helpers.js';

test('a path without a leading slash gets one', () => {
  assert.is(new Route('books').path, '/books');
});

test('methods are uppercased and deduplicated, schemes lowercased', () => {
  const route = new Route('/a', { methods: ['get', 'GET', 'post'], schemes: ['HTTPS', 'https'] });
  assert.equal(route.methods, ['GET', 'POST']);
  assert.equal(route.schemes, ['https']);
});

test('defaults are copied and frozen', () => {
  const defaults = { page: '1' };
  const route = new Route('/a', { defaults });
  defaults.page = '2';
  assert.is(route.defaults.page, '1');
  assert.ok(Object.isFrozen(route.defaults));
});

test('requirement anchors are dropped and capturing groups made non-capturing', () => {
  const route = new Route('/a/:id/:slug', { requirements: { id: '^(\\d+)$', slug: /(?<word>[a-z]+)(-[a-z]+)*/ } });
  assert.is(route.requirements.id, '(?:\\d+)');
  assert.is(route.requirements.slug, '(?:[a-z]+)(?:-[a-z]+)*');
});

test('a requirement named __proto__ is kept as any other (JSON.parse gives it as an own key), not lost', () => {
  const route = new Route('/x/:__proto__', { requirements: JSON.parse('{"__proto__": "\\\\d+"}') as Record<string, string> });
  assert.is(Object.getOwnPropertyDescriptor(route.requirements, '__proto__')?.value, '\\d+');
  assert.is(Object.getPrototypeOf(route.requirements), Object.prototype);
  const matcher = new UrlMatcher(new RouteCollection().add('x', route));
  const context = { method: 'GET', host: 'localhost', scheme: 'http' } as const;
  assert.is(matcher.lookup('/x/7', context).kind, 'match');
  assert.is(matcher.lookup('/x/abc', context).kind, 'not-found');
});

test('a requirement with flags, a backreference or bad syntax is refused when the route is built', () => {
  assert.throws(() => new Route('/a/:id', { requirements: { id: /x/i } }), (error: unknown) => error instanceof InvalidRouteError && /flags/.test(error.message));
  assert.throws(() => new Route('/a/:id', { requirements: { id: '(a)\\1' } }), (error: unknown) => error instanceof InvalidRouteError && /backreferences/.test(error.message));
  assert.throws(() => new Route('/a/:id', { requirements: { id: '[' } }), (error: unknown) => error instanceof InvalidRouteError && error.code === 'HK_ROUTING_INVALID_ROUTE');
});

test('an invalid pattern is an InvalidRouteError with the parser error as cause', () => {
  try {
    new Route('/a/{b');
    assert.unreachable('should have thrown');
  } catch (error) {
    assert.instance(error, InvalidRouteError);
    assert.match((error as Error).message, /Invalid route path "\/a\/\{b"/);
    assert.ok((error as Error).cause instanceof TypeError);
  }
});

test('Symfony\'s placeholder, a name alone in braces between separators, is refused saying how a parameter is written, not read as optional text', () => {
  assert.throws(() => new Route('/books/{id}'), (error: Error) => error instanceof InvalidRouteError
    && error.message === 'Invalid route path "/books/{id}": "{id}" is the optional text "id", not a parameter: a parameter is written ":id" (Symfony\'s "{id}"), an optional one in braces with its separator, "{/:id}".');
  assert.throws(() => new Route('/books/:id.{_format}'), /"\{_format\}" is the optional text "_format", not a parameter: a parameter is written ":_format" .*"\{\.:_format\}"/);
  assert.throws(() => new Route('/x', { host: '{tenant}.example.com' }), /^Invalid route host "\{tenant\}\.example\.com": "\{tenant\}" is the optional text "tenant", not a parameter: a parameter is written ":tenant" \(Symfony's "\{tenant\}"\)\.$/);
  // Optional text within a segment is path-to-regexp's own.
  assert.is(new Route('/book{s}').path, '/book{s}');
  assert.is(new Route('/api/{v}1').path, '/api/{v}1');
  assert.is(new Route('/docs{/intro}').path, '/docs{/intro}');
});

test('Symfony\'s placeholder is refused by the name as written: letters of any script, a host\'s capitals', () => {
  assert.throws(() => new Route('/books/{identité}'), (error: Error) => error instanceof InvalidRouteError
    && error.message === 'Invalid route path "/books/{identité}": "{identité}" is the optional text "identité", not a parameter: a parameter is written ":identité" (Symfony\'s "{identité}"), an optional one in braces with its separator, "{/:identité}".');
  assert.throws(() => new Route('/x', { host: '{Tenant}.example.com' }), (error: Error) => error instanceof InvalidRouteError
    && error.message === 'Invalid route host "{Tenant}.example.com": "{Tenant}" is the optional text "Tenant", not a parameter: a parameter is written ":Tenant" (Symfony\'s "{Tenant}").');
  // What it says to write is a route.
  assert.is(new Route('/books/:identité').path, '/books/:identité');
  assert.is(new Route('/caf{é}').path, '/caf{é}');
});

test('braces that are not a lone name between separators stay optional text: a name with a "-", a group opening a group, text before a parameter, beside a parameter', () => {
  for (const path of ['/books/{id-x}', '/a{{id}/b}', '/books/{id:x}', '/:a{b}', '/{a}:b']) {
    assert.not.throws(() => new Route(path), path);
    assert.is(new Route(path).path, path);
  }
});

test('Express 4\'s pattern syntax is refused with the parser\'s message and what to write instead', () => {
  const messageOf = (path: string) => (thrown(() => new Route(path)) as Error).message;
  assert.is(messageOf('/books/:id?'), 'Invalid route path "/books/:id?": Unexpected ? at index 10: /books/:id? (an optional part is written in braces with its separator: `{/:id}`, not Express 4\'s `/:id?`); visit https://git.new/pathToRegexpError for info');
  assert.match(messageOf('/files/:name.:ext?'), '(an optional part is written in braces with its separator: `{.:ext}`, not Express 4\'s `.:ext?`)');
  assert.match(messageOf('/files/:path+'), '(a parameter of one or more segments is a wildcard: `/files/*path`)');
  assert.match(messageOf('/books/:id(\\d+)'), '(a parameter\'s pattern goes in the route\'s requirements, `{ requirements: { id: \'\\\\d+\' } }`, not in the path)');
  assert.match(messageOf('/files/*'), '(a wildcard has a name: `/*path`, its value a list of segments)');
  assert.match(messageOf('/a:'), '(a ":" that is text is escaped: `\\:`)');
  assert.match(messageOf('/a]'), '(a "]" that is text is escaped: `\\]`)');
  assert.instance(thrown(() => new Route('/books/:id?')), InvalidRouteError);
});

test('the hint for a "?" names the parameter before it whatever its letters, and one after no parameter is a query string', () => {
  const messageOf = (path: string) => (thrown(() => new Route(path)) as Error).message;
  assert.match(messageOf('/books/:café?'), '(an optional part is written in braces with its separator: `{/:café}`, not Express 4\'s `/:café?`)');
  assert.match(messageOf('/😀/:id?'), '`{/:id}`, not Express 4\'s `/:id?`');
  assert.match((thrown(() => new Route('/x', { host: ':sub?.example.com' })) as Error).message, '`{:sub.}`, not Express 4\'s `:sub?.`');
  assert.is(messageOf('/search?q'), 'Invalid route path "/search?q": Unexpected ? at index 7: /search?q (a route matches the path, without its query string, which request.query reads; a "?" that is text is escaped: `\\?`); visit https://git.new/pathToRegexpError for info');
});

test('the hint for a "?" takes the separator after it into the braces only for a host opening with the parameter, and only one that is there', () => {
  const hostMessageOf = (host: string) => (thrown(() => new Route('/x', { host })) as Error).message;
  assert.is(hostMessageOf(':sub?'), 'Invalid route host ":sub?": Unexpected ? at index 4: :sub? (an optional part is written in braces with its separator: `{:sub}`, not Express 4\'s `:sub?`); visit https://git.new/pathToRegexpError for info');
  assert.match(hostMessageOf(':sub?x.example.com'), '(an optional part is written in braces with its separator: `{:sub}`, not Express 4\'s `:sub?`)');
  // A parameter after a separator takes that one into the braces, not the one after the "?".
  assert.match((thrown(() => new Route('/books/:id?/edit')) as Error).message, '(an optional part is written in braces with its separator: `{/:id}`, not Express 4\'s `/:id?`)');
});

test('a "?" after no parameter in a host gets the parser\'s message alone: a host has no query string', () => {
  assert.is((thrown(() => new Route('/x', { host: 'a?.example.com' })) as Error).message, 'Invalid route host "a?.example.com": Unexpected ? at index 1: a?.example.com; visit https://git.new/pathToRegexpError for info');
});

test('a path whose optional groups make more than 256 variants is refused with how many it may have', () => {
  const path = '/a{/:p0}{/:p1}{/:p2}{/:p3}{/:p4}{/:p5}{/:p6}{/:p7}{/:p8}';
  const error = thrown(() => new Route(path));
  assert.instance(error, InvalidRouteError);
  assert.is(error.message, `Invalid route path "${path}": more than 256 combinations of optional groups.`);
  assert.not.throws(() => new Route('/a{/:p0}{/:p1}{/:p2}{/:p3}{/:p4}{/:p5}{/:p6}{/:p7}'));
});

test('a path that opens with a parameter once a group is left out is refused as not starting with "/"', () => {
  const error = thrown(() => new Route('{/x}:b'));
  assert.instance(error, InvalidRouteError);
  assert.is(error.message, 'Invalid route path "{/x}:b": it must start with "/" whichever optional groups are left out.');
});

test('an optional group that puts "//" in the path, written or left out, is an InvalidRouteError saying the group holds the slash; the route\'s own "//" stays', () => {
  const api = thrown(() => new Route('/api/{/:v}'));
  assert.instance(api, InvalidRouteError);
  assert.is(api.message, 'Invalid route path "/api/{/:v}": an optional group, written or left out, puts "//" in it ("/api//:v"); the group holds the slash before its segment, the text before it does not: `/api{/:version}`, `/files{/:dir}/list`.');
  for (const [path, variant] of [['/files/{:dir}/list', '/files//list'], ['/x/{*rest}/y', '/x//y'], ['/api/{/*rest}', '/api//*rest'], ['/a{/:b}/{/:c}', '/a/:b//:c'], ['/x/{/y}', '/x//y'], ['/a/{:v}/', '/a//'], ['/a{/b/}/c', '/a/b//c'], ['/:a/{/:v}{.:f}', '/:a//:v.:f']]) {
    const error = thrown(() => new Route(path));
    assert.instance(error, InvalidRouteError, path);
    assert.match(error.message, `Invalid route path "${path}": an optional group, written or left out, puts "//" in it ("${variant}")`, path);
  }
  // A prefix is checked as a path, and one ending with "/" is trimmed before a route opening with a group.
  assert.match(thrown(() => new RouteCollection().add('a', new Route('/a')).addPrefix('/api/{/:v}')).message, 'Invalid route prefix "/api/{/:v}": an optional group');
  assert.is(new RouteCollection().add('v', new Route('{/:v}/x')).addPrefix('/api/').get('v')!.path, '/api{/:v}/x');
  for (const path of ['/api{/:v}', '/files{/:dir}/list', '/a//b', '/a//b{/:c}', '/a/{:v}', '/a{/:v}/', '/x{/*rest}']) assert.ok(new Route(path), path);
});

test('two parameters with nothing between them are refused', () => {
  assert.throws(() => new Route('/:a:b'), /must be separated/);
});

test('a parameter name used twice is refused, in the path or across host and path', () => {
  assert.throws(() => new Route('/:a/x/:a'), /used twice/);
  assert.throws(() => new Route('/:a', { host: ':a.example.com' }), /both the host and the path/);
});

test('an invalid method is refused', () => {
  assert.throws(() => new Route('/a', { methods: ['GE T'] }), (error: unknown) => error instanceof InvalidRouteError);
});

test('the collection keeps insertion order, and re-adding a name moves it last', () => {
  const routes = new RouteCollection();
  const a = new Route('/a');
  routes.add('a', a).add('b', new Route('/b')).add('c', new Route('/c'));
  routes.add('a', a);
  assert.equal([...routes].map(([name]) => name), ['b', 'c', 'a']);
  assert.equal([...routes.all().keys()], ['b', 'c', 'a']);
  assert.is(routes.count, 3);
});

test('the collection gets and removes routes by name', () => {
  const routes = new RouteCollection();
  const a = new Route('/a');
  routes.add('a', a);
  assert.is(routes.get('a'), a);
  assert.is(routes.get('nope'), undefined);
  assert.ok(routes.remove('a'));
  assert.not.ok(routes.remove('a'));
  assert.is(routes.count, 0);
});

test('all() is a snapshot the caller cannot use to change the collection', () => {
  const routes = new RouteCollection().add('a', new Route('/a'));
  routes.all().delete('a');
  assert.is(routes.count, 1);
});

test('a frozen collection refuses add() and remove() with the reason it was given, and still reads', () => {
  const routes = new RouteCollection().add('a', new Route('/a'));
  assert.not.ok(routes.isFrozen);
  routes.freeze('compiled already.');
  assert.ok(routes.isFrozen);
  assert.throws(() => routes.add('b', new Route('/b')), (error: FrozenCollectionError) =>
    error instanceof FrozenCollectionError && error.code === 'HK_ROUTING_COLLECTION_FROZEN' && error.routeName === 'b' && error.message === 'Cannot add route "b": compiled already.');
  assert.throws(() => routes.remove('a'), /^Cannot remove route "a": compiled already\.$/);
  assert.equal([...routes].map(([name]) => name), ['a']);
  assert.is(routes.get('a')?.path, '/a');
});

test('freeze() without a reason freezes too, with a reason of its own; a reason that is no text is a TypeError, not a collection left open', () => {
  const routes = new RouteCollection().add('a', new Route('/a'));
  (routes.freeze as (reason?: string) => RouteCollection)();
  assert.ok(routes.isFrozen);
  assert.is(thrown(() => routes.add('b', new Route('/b'))).message, 'Cannot add route "b": the collection was frozen.');
  for (const reason of [null, 42, '']) {
    const error = thrown(() => new RouteCollection().freeze(reason as never));
    assert.instance(error, TypeError);
    assert.is(error.message, `freeze() takes the reason changes are refused, a non-empty string ('compiled already'), not ${reason === null ? 'null' : reason === 42 ? 'number 42' : 'the string ""'}.`);
  }
});

test('with() makes a new route with the changes, each option replacing the route\'s whole, the rest as given', () => {
  const id = /\d+/;
  const route = new Route('/users/:id', { defaults: { a: 1 }, requirements: { id }, methods: ['get'], host: 'example.com' });
  const moved = route.with({ path: '/api/users/:id', host: '' });
  assert.is.not(moved, route);
  assert.is(route.path, '/users/:id');
  assert.equal([moved.path, moved.host, moved.methods, moved.defaults, moved.requirements], ['/api/users/:id', undefined, ['GET'], { a: 1 }, { id: '\\d+' }]);
  assert.equal(route.with({ defaults: { b: 2 } }).defaults, { b: 2 });
  assert.is(thrown(() => route.with({ paht: '/x' } as never)).message, 'Route "/users/:id" has no option "paht"; its options are path, defaults, requirements, methods, schemes, host.');
  assert.is(thrown(() => route.with({ path: '/users/:id/:id' })).message, 'Invalid route path "/users/:id/:id": parameter "id" is used twice.');
});

test('with() keeps an option given as undefined, as it keeps the path, rather than dropping the route\'s host, methods or defaults', () => {
  const route = new Route('/admin', { defaults: { a: 1 }, requirements: { a: '\\d+' }, methods: ['POST'], schemes: ['https'], host: 'admin.example.com' });
  const host: string | undefined = undefined;
  const same = route.with({ path: undefined, host, methods: undefined, schemes: undefined, defaults: undefined, requirements: undefined });
  assert.equal([same.path, same.host, same.methods, same.schemes, same.defaults, same.requirements], ['/admin', 'admin.example.com', ['POST'], ['https'], { a: 1 }, { a: '\\d+' }]);
  assert.is(route.with({ host: '' }).host, undefined);
  assert.equal(route.with({ methods: [] }).methods, []);
});

test('a host pattern whose text no Host header holds (a "@", "/", ":", a space) is an InvalidRouteError, not a route never matched whose URLs point at another host', () => {
  const at = thrown(() => new Route('/a', { host: 'evil.example@shop.example' }));
  assert.instance(at, InvalidRouteError);
  assert.is(at.message, 'Invalid route host "evil.example@shop.example": "@" is no part of a host name, which holds letters, digits, "-", "_" and dots (or is a bracketed IPv6 address), so no request would match it.');
  assert.is(thrown(() => new Route('/a', { host: 'example.com/admin' })).message, 'Invalid route host "example.com/admin": "/" is no part of a host name, which holds letters, digits, "-", "_" and dots (or is a bracketed IPv6 address), so no request would match it.');
  assert.is(thrown(() => new Route('/a', { host: 'example.com\\:8080' })).message, 'Invalid route host "example.com\\:8080": ":" is no part of a host name, which holds letters, digits, "-", "_" and dots (or is a bracketed IPv6 address), so no request would match it (a host pattern has no port: the request\'s is not matched).');
  assert.is(thrown(() => new Route('/a', { host: ':tenant.my shop.example' })).message, 'Invalid route host ":tenant.my shop.example": " " is no part of a host name, which holds letters, digits, "-", "_" and dots (or is a bracketed IPv6 address), so no request would match it.');
  // An international name, which no Host header carries as it is: its ASCII form is named.
  assert.is(thrown(() => new Route('/a', { host: ':shop.bücher.example' })).message, 'Invalid route host ":shop.bücher.example": "ü" is no part of a host name, which holds letters, digits, "-", "_" and dots (or is a bracketed IPv6 address), so no request would match it (an international name is written as it is sent: ":shop.xn--bcher-kva.example").');
  assert.is(thrown(() => new Route('/a', { host: 'shop..example' })).message, 'Invalid route host "shop..example": it is no host name (letters, digits, "-", "_" and dots, no label empty, or a bracketed IPv6 address), so no request would match it.');
  assert.is(thrown(() => new RouteCollection().add('a', new Route('/a')).setHost('evil.example@shop.example')).message, 'setHost() makes route "a" ("/a") invalid: Invalid route host "evil.example@shop.example": "@" is no part of a host name, which holds letters, digits, "-", "_" and dots (or is a bracketed IPv6 address), so no request would match it.');
  for (const host of ['Example.COM', 'example.com.', 'my_host-1.example', ':tenant.example.com', '{:sub.}example.com', 'api{-:v}.example.com', '*labels.example.com', '\\[\\:\\:1\\]', '127.0.0.1']) assert.ok(new Route('/a', { host }), host);
});

test('a host pattern a label of whose own text is empty (":a..test", ".:a.test", one of its forms with optional groups) is an InvalidRouteError, from setHost() too', () => {
  const double = thrown(() => new Route('/a', { host: ':sub..example.test' }));
  assert.instance(double, InvalidRouteError);
  assert.is(double.message, 'Invalid route host ":sub..example.test": it has an empty label (a "." opening it, or ".."), so no request would match it.');
  assert.is(thrown(() => new Route('/a', { host: '.:sub.example.test' })).message, 'Invalid route host ".:sub.example.test": it has an empty label (a "." opening it, or ".."), so no request would match it.');
  assert.is(thrown(() => new Route('/a', { host: '{:sub}..test' })).message, 'Invalid route host "{:sub}..test": it has an empty label (a "." opening it, or "..") (as ":sub..test", one of its forms with optional groups written or left out), so no request would match it.');
  assert.is(thrown(() => new Route('/a', { host: '{.:sub}.test' })).message, 'Invalid route host "{.:sub}.test": it has an empty label (a "." opening it, or "..") (as ".:sub.test", one of its forms with optional groups written or left out), so no request would match it.');
  assert.match(thrown(() => new RouteCollection().add('a', new Route('/a')).setHost(':a..:b.test')).message, 'setHost() makes route "a" ("/a") invalid: Invalid route host ":a..:b.test": it has an empty label');
  for (const host of ['{:sub.}example.test', ':a.:b.test', 'x-:sub.example.test', '*labels.example.test', ':sub.example.test.']) assert.ok(new Route('/a', { host }), host);
});

test('a parameter named _fragment or _query, which the generator reads as the URL\'s fragment and query, is an InvalidRouteError, in the path, the host or a prefix', () => {
  const fragment = thrown(() => new Route('/:_fragment/x'));
  assert.instance(fragment, InvalidRouteError);
  assert.is(fragment.message, 'Invalid route path "/:_fragment/x": "_fragment" is no name for a parameter: UrlGenerator reads it as the URL\'s fragment ("_query" as its query parameters).');
  assert.is(thrown(() => new Route('/x', { host: ':_query.example.com' })).message, 'Invalid route host ":_query.example.com": "_query" is no name for a parameter: UrlGenerator reads it as the URL\'s query parameters ("_fragment" as its fragment).');
  assert.is(thrown(() => new RouteCollection().add('a', new Route('/x')).addPrefix('{/:_fragment}')).message, 'addPrefix() makes route "a" ("{/:_fragment}/x") invalid: Invalid route path "{/:_fragment}/x": "_fragment" is no name for a parameter: UrlGenerator reads it as the URL\'s fragment ("_query" as its query parameters).');
  assert.equal(new Route('/:fragment', { defaults: { _fragment: 'top' } }).defaults, { _fragment: 'top' });
});

test('an empty route name is refused', () => {
  assert.throws(() => new RouteCollection().add('', new Route('/a')), TypeError);
});

test('a scheme other than http or https, and methods or schemes given as a string, are refused', () => {
  const ftp = thrown(() => new Route('/ftp', { schemes: ['ftp'] }));
  assert.instance(ftp, InvalidRouteError);
  assert.is(ftp.message, 'Invalid scheme "ftp" for route "/ftp": a route is served over http or https.');
  assert.equal(new Route('/s', { schemes: ['HTTPS', 'https'] }).schemes, ['https']);
  assert.is(thrown(() => new Route('/m', { methods: 'GET' as unknown as string[] })).message, 'The methods of route "/m" are an array ([\'GET\']), not "GET".');
  assert.is(thrown(() => new Route('/s', { schemes: 'https' as unknown as string[] })).message, 'The schemes of route "/s" are an array ([\'https\']), not "https".');
});

test('a collection holds Route objects: a plain object is refused when added', () => {
  const error = thrown(() => new RouteCollection().add('x', { path: '/x' } as unknown as Route));
  assert.instance(error, TypeError);
  assert.is(error.message, "Route \"x\" is a Route (new Route('/path', options)), not an object of type Object.");
});

test('options that are no object, an option it does not know (a typo: method) or a host that is no string are an InvalidRouteError naming them', () => {
  const typo = thrown(() => new Route('/admin', { method: ['GET'] } as never));
  assert.instance(typo, InvalidRouteError);
  assert.is(typo.message, 'Route "/admin" has no option "method"; its options are defaults, requirements, methods, schemes, host.');
  assert.is(thrown(() => new Route('/a', 'GET' as never)).message, 'The options of route "/a" are a plain object ({ methods: [\'GET\'] }), not the string "GET".');
  assert.instance(thrown(() => new Route('/a', null as never)), InvalidRouteError);
  assert.is(thrown(() => new Route('/a', { host: 5 } as never)).message, 'The host of route "/a" is a string (\':tenant.example.com\'), not number 5.');
  assert.is(thrown(() => new Route('/a/:x', { requirements: ['a'] } as never)).message, 'The requirements of route "/a/:x" are an object, not an object of type Array.');
  assert.is(thrown(() => new Route('/a', { defaults: 'x' } as never)).message, 'The defaults of route "/a" are an object, not the string "x".');
  assert.is(new Route('/a', { defaults: undefined, host: undefined }).path, '/a');
});

test('defaults or requirements given as a Map are an InvalidRouteError, not a route without them', () => {
  assert.is(thrown(() => new Route('/a/:x', { requirements: new Map([['x', '\\d+']]) } as never)).message, 'The requirements of route "/a/:x" are an object, not an object of type Map.');
  assert.is(thrown(() => new Route('/a', { defaults: new Map([['_controller', 'x']]) } as never)).message, 'The defaults of route "/a" are an object, not an object of type Map.');
});

test('options given as a Map, a list or a class instance are an InvalidRouteError asking for a plain object, not a route without them; one of another realm or without prototype is taken', () => {
  class RouteOptions {
    methods = ['POST'];
  }
  for (const [options, kind] of [[new Map([['methods', ['POST']]]), 'Map'], [[['methods', ['POST']]], 'Array'], [new RouteOptions(), 'RouteOptions']] as const) {
    const error = thrown(() => new Route('/a', options as never));
    assert.instance(error, InvalidRouteError, kind);
    assert.is(error.message, `The options of route "/a" are a plain object ({ methods: ['GET'] }), not an object of type ${kind}.`);
  }
  assert.equal(new Route('/a', runInNewContext("({ methods: ['POST'] })") as never).methods, ['POST']);
  assert.equal(new Route('/a', Object.assign(Object.create(null) as object, { methods: ['POST'] })).methods, ['POST']);
});

test('a path whose text holds a lone surrogate is an InvalidRouteError saying so, not "URI malformed"; non-ASCII text is kept percent-encoded', () => {
  const error = thrown(() => new Route('/caf\u00e9\ud800/x'));
  assert.instance(error, InvalidRouteError);
  assert.is(error.message, 'Invalid route path "/caf\u00e9\ud800/x": its text holds a lone surrogate (half of a UTF-16 pair), which no URL can carry');
  assert.instance(thrown(() => new Route('/x/:a/\udc00')), InvalidRouteError);
  assert.not.throws(() => new Route('/caf\u00e9/\ud83d\ude00'));
});

test.run();
