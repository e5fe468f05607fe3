import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { thrown } from '../helpers.js';
import { propertyParameters } from '../../arbitraries.js';
import { Request, UntrustedHostError } from '../../../kernel/index.js';
import {
  InvalidParameterError,
  InvalidRouteError,
  MissingMandatoryParametersError,
  Route,
  RouteCollection,
  RouteNotFoundError,
  UrlGenerator,
  UrlMatcher,
  type GeneratorContext,
} from '../../../lib/routing/index.js';

function routes(): RouteCollection {
  return new RouteCollection()
    .add('home', new Route('/'))
    .add('book', new Route('/books/:id', { requirements: { id: '\\d+' } }))
    .add('file', new Route('/files/:name.:ext'))
    .add('page', new Route('/pages/:slug'))
    .add('list', new Route('/list{/:page}', { defaults: { page: '1' } }))
    .add('archive', new Route('/archive{/:year{/:month}}'))
    .add('static', new Route('/static/*path'))
    .add('login', new Route('/login', { schemes: ['https'] }))
    .add('tenant', new Route('/dash', { host: ':tenant.example.com' }))
    .add('review', new Route('/books/:id/reviews/:review', { defaults: { review: 'latest' } }))
    .add('feed', new Route('/feed', { defaults: { format: 'rss', limit: 20 } }));
}

function generator(context: GeneratorContext = { host: 'example.com' }): UrlGenerator {
  return new UrlGenerator(routes(), context);
}

test('path parameters are filled in and percent-encoded', () => {
  const g = generator();
  assert.is(g.generate('book', { id: 12 }), '/books/12');
  assert.is(g.generate('page', { slug: 'café au lait/1' }), '/pages/caf%C3%A9%20au%20lait%2F1');
  assert.is(g.generate('page', { slug: 'a@b:c' }), '/pages/a@b:c');
  assert.is(g.generate('home'), '/');
});

test('a generated URL matches its route and gives the parameters back', () => {
  const collection = routes();
  const g = new UrlGenerator(collection);
  const m = new UrlMatcher(collection);
  const context = { method: 'GET', host: 'localhost', scheme: 'http' } as const;
  for (const [name, params] of [
    ['page', { slug: 'café au lait/1' }],
    ['static', { path: ['css', 'a b.css'] }],
    ['file', { name: 'report', ext: 'tar.gz' }],
  ] as const) {
    const url = g.generate(name, params);
    const result = m.match(url, context);
    assert.is(result.name, name);
    assert.equal(result.params, params);
  }
});

test('parameters that are not in the path go to the query string, defaults included only when they differ', () => {
  const g = generator();
  assert.is(g.generate('book', { id: 1, q: 'a b', tags: ['x', 'y'], empty: null }), '/books/1?q=a%20b&tags=x&tags=y');
  assert.is(g.generate('list', { page: '1', sort: 'asc' }), '/list?sort=asc');
  // Defaults that are no path variable: left out of the query when given as they are (compared as text).
  assert.is(g.generate('feed', { format: 'rss', limit: '20' }), '/feed');
  assert.is(g.generate('feed', { format: 'atom', limit: 20, page: 2 }), '/feed?format=atom&page=2');
});

test('_fragment becomes the fragment', () => {
  assert.is(generator().generate('book', { id: 1, _fragment: 'part 2' }), '/books/1#part%202');
});

test('an optional group is written when its parameter is given, not when it equals the default', () => {
  const g = generator();
  assert.is(g.generate('list'), '/list');
  assert.is(g.generate('list', { page: 1 }), '/list');
  assert.is(g.generate('list', { page: 2 }), '/list/2');
  assert.is(g.generate('archive', { year: 2024 }), '/archive/2024');
  assert.is(g.generate('archive', { year: 2024, month: '05' }), '/archive/2024/05');
  // A month without its year cannot be written: the year's group holds the month's.
  const missing = thrown(() => g.generate('archive', { month: '05' }));
  assert.instance(missing, MissingMandatoryParametersError);
  assert.match(missing.message, /\("year"\)/);
});

test('optional groups side by side or nested are written so that the URL matches back to the same parameters, or refused', () => {
  const routes = new RouteCollection()
    .add('arch', new Route('/archive{/:year}{/:month}', { defaults: { year: '2024' } }))
    .add('nested', new Route('/nd{/:a{/:b}}', { defaults: { a: 'x' } }))
    .add('docs', new Route('/docs/*path{.:format}'))
    .add('dl', new Route('/dl/*path.:ext'))
    .add('fmt', new Route('/x{.:format}{/:page}'))
    .add('files', new Route('/files/:name', { requirements: { name: '[\\w.-]+' } }));
  const g = new UrlGenerator(routes);
  const m = new UrlMatcher(routes);
  const back = (url: string): unknown => (m.match(url, { method: 'GET', host: 'localhost', scheme: 'http' }) as { params: unknown }).params;
  // The year equals its default, yet the month after it needs it written: `/archive/05` is a year.
  assert.is(g.generate('arch', { year: '2024', month: '05' }), '/archive/2024/05');
  assert.is(g.generate('arch', { month: '05' }), '/archive/2024/05');
  assert.is(g.generate('arch'), '/archive');
  // The inner group's value needs the outer group, default or not.
  assert.is(g.generate('nested', { a: 'x', b: 'y' }), '/nd/x/y');
  assert.equal(back('/nd/x/y'), { a: 'x', b: 'y' });
  // Groups that cannot be taken for each other are left out as before.
  assert.is(g.generate('fmt', { page: '2' }), '/x/2');
  assert.equal(back('/x/2'), { page: '2' });
  // A wildcard whose value would lose its dot to the extension after it.
  for (const [name, params, read] of [['docs', { path: 'guide/v1.2' }, '"guide/v1"'], ['dl', { path: 'a', ext: 'tar.gz' }, '"a.tar"']] as const) {
    const error = thrown(() => g.generate(name, params));
    assert.instance(error, InvalidParameterError, name);
    assert.match(error.message, `would give ${read}`);
  }
  assert.is(g.generate('docs', { path: 'guide/v1', format: 'html' }), '/docs/guide/v1.html');
  // A dot segment is encoded; where the requirement refuses the encoding, the value is refused.
  assert.instance(thrown(() => g.generate('files', { name: '..' })), InvalidParameterError);
  assert.is(g.generate('files', { name: 'a..b' }), '/files/a..b');
});

test('an optional group left out before a written one: the URL if it matches back to the same parameters (/t/:a{.:b}{-:c} with a and c is /t/x-y), else an error naming the group that cannot be left out', () => {
  const routes = new RouteCollection()
    .add('dot-dash', new Route('/t/:a{.:b}{-:c}'))
    .add('slashes', new Route('/s/:a{/:b}{/:c}'))
    .add('dots', new Route('/d/:a{.:b}{.:c}'))
    .add('three', new Route('/3/:a{/:b}{/:c}{/:d}'))
    .add('format', new Route('/f{.:format}{/:b}{/:c}'));
  const g = new UrlGenerator(routes);
  const m = new UrlMatcher(routes);
  const back = (url: string): unknown => {
    const found = m.lookup(url, { method: 'GET', host: 'localhost', scheme: 'http' });
    return found.kind === 'match' ? [found.name, found.params] : found.kind;
  };
  // `a` stops at `-` with `-c` alone, so `-y` reads back as c: b's group may be left out.
  assert.is(g.generate('dot-dash', { a: 'x', c: 'y' }), '/t/x-y');
  assert.equal(back('/t/x-y'), ['dot-dash', { a: 'x', c: 'y' }]);
  // Where the group left out would take the value after it, it is named, with what the URL would read back as.
  for (const [name, params, message] of [
    ['slashes', { a: 'x', c: 'y' }, 'Some mandatory parameters are missing ("b") to generate a URL for route "slashes": the optional group "{/:b}" cannot be left out before "{/:c}" ("/s/x/y" would read back as a "x", b "y").'],
    ['dots', { a: 'x', c: 'y' }, 'Some mandatory parameters are missing ("b") to generate a URL for route "dots": the optional group "{.:b}" cannot be left out before "{.:c}" ("/d/x.y" would read back as a "x", b "y").'],
    ['three', { a: 'x', d: 'y' }, 'Some mandatory parameters are missing ("b", "c") to generate a URL for route "three": the optional groups "{/:b}", "{/:c}" cannot be left out before "{/:d}" ("/3/x/y" would read back as a "x", b "y").'],
    // The format's group is not in the way (`.q` cannot be read as b): only b's is named.
    ['format', { c: 'y' }, 'Some mandatory parameters are missing ("b") to generate a URL for route "format": the optional group "{/:b}" cannot be left out before "{/:c}" ("/f/y" would read back as b "y").'],
  ] as const) {
    const error = thrown(() => g.generate(name, params));
    assert.instance(error, MissingMandatoryParametersError, name);
    assert.is(error.message, message);
  }
  assert.equal((thrown(() => g.generate('three', { a: 'x', d: 'y' })) as MissingMandatoryParametersError).missingParameters, ['b', 'c']);
  // Given what they need, they are written, and read back.
  for (const [name, params] of [['slashes', { a: 'x', b: 'z', c: 'y' }], ['dots', { a: 'x', b: 'z', c: 'y' }], ['three', { a: 'x', b: '1', c: '2', d: 'y' }], ['format', { b: 'z', c: 'y' }]] as const) {
    assert.equal(back(g.generate(name, params)), [name, params], name);
  }
});

test('a group without values before a written one stays out when the URL matches back without it', () => {
  const g = new UrlGenerator(new RouteCollection().add('format', new Route('/f{.:format}{/:b}{/:c}', { defaults: { b: 'all' } })));
  // b's default is written so that c reads back; the format has none, and is not needed.
  assert.is(g.generate('format', { c: 'y' }), '/f/all/y');
});

test('a value for a group nested in another names the outer group that cannot be written without its parameter', () => {
  const g = new UrlGenerator(new RouteCollection().add('nested', new Route('/t/:a{.:b{-:c}}')));
  const error = thrown(() => g.generate('nested', { a: 'x', c: 'y' }));
  assert.instance(error, MissingMandatoryParametersError);
  assert.is(error.message, 'Some mandatory parameters are missing ("b") to generate a URL for route "nested": the optional group "{-:c}" is inside "{.:b{-:c}}", which cannot be written without "b".');
  assert.is(g.generate('nested', { a: 'x', b: 'z', c: 'y' }), '/t/x.z-y');
});

test('a group at the end of an earlier one is before a group written after that one: written with its default, or named as the one that cannot be left out', () => {
  const routes = new RouteCollection()
    .add('defaults', new Route('/x{/:a{/:b}}{/:c}', { defaults: { b: 'all' } }))
    .add('bare', new Route('/x{/:a{/:b}}{/:c}'))
    .add('dash', new Route('/x{/:a{-:b}}{-:c}', { defaults: { b: 'all' } }));
  const g = new UrlGenerator(routes);
  const m = new UrlMatcher(routes);
  const back = (url: string): unknown => {
    const found = m.lookup(url, { method: 'GET', host: 'localhost', scheme: 'http' });
    return found.kind === 'match' ? found.params : found.kind;
  };
  // `/x/x/y` would read back as b "y": b's default is written, as Symfony writes every optional parameter before the last one given.
  assert.is(g.generate('defaults', { a: 'x', c: 'y' }), '/x/x/all/y');
  assert.equal(back('/x/x/all/y'), { a: 'x', b: 'all', c: 'y' });
  assert.is(g.generate('dash', { a: 'x', c: 'y' }), '/x/x-all-y');
  const error = thrown(() => g.generate('bare', { a: 'x', c: 'y' }));
  assert.instance(error, MissingMandatoryParametersError);
  assert.is(error.message, 'Some mandatory parameters are missing ("b") to generate a URL for route "bare": the optional group "{/:b}" cannot be left out before "{/:c}" ("/x/x/y" would read back as a "x", b "y").');
  assert.equal(back(g.generate('bare', { a: 'x', b: 'z', c: 'y' })), { a: 'x', b: 'z', c: 'y' });
});

test('a parameter that would be read from optional text written after it is no URL returned: /posts{/:page}{/feed} is never /posts/feed, page "feed"', () => {
  const routes = new RouteCollection()
    .add('feed', new Route('/posts{/:page}{/feed}'))
    .add('paged', new Route('/posts{/:page}{/feed}', { defaults: { page: '1' } }))
    .add('same', new Route('/x{/:a}{/all}', { defaults: { a: 'all' } }));
  const g = new UrlGenerator(routes);
  const error = thrown(() => g.generate('feed'));
  assert.instance(error, MissingMandatoryParametersError);
  assert.is(error.message, 'Some mandatory parameters are missing ("page") to generate a URL for route "feed": the optional group "{/:page}" cannot be left out before "{/feed}" ("/posts/feed" would read back as page "feed").');
  assert.is(g.generate('feed', { page: '2' }), '/posts/2/feed');
  // The default is written, as before a group given.
  assert.is(g.generate('paged'), '/posts/1/feed');
  // What it reads there is its default: the matcher gives it that anyway.
  assert.is(g.generate('same'), '/x/all');
});

test('one call names every parameter missing: the mandatory ones and the optional groups that could not be left out once they are given', () => {
  const routes = new RouteCollection()
    .add('slashes', new Route('/s/:a{/:b}{/:c}'))
    .add('between', new Route('/t{/:a}/:m{/:b}/:n{/:c}'))
    .add('texts', new Route('/s/:a{/page/:p}{/sort/:s}'));
  const g = new UrlGenerator(routes);
  const m = new UrlMatcher(routes);
  const back = (url: string): unknown => {
    const found = m.lookup(url, { method: 'GET', host: 'localhost', scheme: 'http' });
    return found.kind === 'match' ? found.params : found.kind;
  };
  // Not "a", then "b" once a is given: the value of a in its place, c's would still read back as b.
  const error = thrown(() => g.generate('slashes', { c: 'z' }));
  assert.instance(error, MissingMandatoryParametersError);
  assert.is(error.message, 'Some mandatory parameters are missing ("a", "b") to generate a URL for route "slashes": the optional group "{/:b}" cannot be left out before "{/:c}" ("/s/{a}/z" would read back as a "{a}", b "z").');
  assert.equal((error as MissingMandatoryParametersError).missingParameters, ['a', 'b']);
  assert.equal(back(g.generate('slashes', { a: 'x', b: 'y', c: 'z' })), { a: 'x', b: 'y', c: 'z' });
  // In the pattern's order, however many mandatory ones stand between the groups.
  assert.equal((thrown(() => g.generate('between', { c: 'z' })) as MissingMandatoryParametersError).missingParameters, ['a', 'm', 'b', 'n']);
  assert.equal((thrown(() => g.generate('between', { m: 'w', c: 'z' })) as MissingMandatoryParametersError).missingParameters, ['a', 'b', 'n']);
  assert.equal(back(g.generate('between', { a: 'v', m: 'w', b: 'x', n: 'y', c: 'z' })), { a: 'v', m: 'w', b: 'x', n: 'y', c: 'z' });
  // A group whose text keeps a later value out of it is not named, nor is one with nothing written after it.
  assert.equal((thrown(() => g.generate('texts', { s: 'new' })) as MissingMandatoryParametersError).missingParameters, ['a']);
  assert.equal((thrown(() => g.generate('slashes', { b: 'y' })) as MissingMandatoryParametersError).missingParameters, ['a']);
  assert.is(thrown(() => g.generate('slashes')).message, 'Some mandatory parameters are missing ("a") to generate a URL for route "slashes".');
});

test('a requirement decides which group a later value would be read into, so the value given may put one more group in the way', () => {
  const g = new UrlGenerator(new RouteCollection().add('letters', new Route('{/:a}{/:b}{/:c}{/:d}', { requirements: { b: '[a-z]+' } })));
  // `/1/2` reads back as a and c: b takes no digits, so c's group alone is in the way.
  assert.equal((thrown(() => g.generate('letters', { a: '1', d: '2' })) as MissingMandatoryParametersError).missingParameters, ['c']);
  assert.is(g.generate('letters', { a: '1', c: '3', d: '2' }), '/1/3/2');
  // A c of letters would be b's: then b's group is in the way too.
  assert.equal((thrown(() => g.generate('letters', { a: '1', c: 'x', d: '2' })) as MissingMandatoryParametersError).missingParameters, ['b']);
});

test('for tricky patterns (optional groups at the start, middle and end, prefixes, wildcards), a generated path matches back to its route and parameters, optional ones given or not', () => {
  const context = { method: 'GET', host: 'localhost', scheme: 'http' } as const;
  const patterns = [
    '{/:v}', '{/:v}/x', '/x{/:v}', '/x{/:v}/', '/x/{:v}', '/x{/:v}/y', '/x{/:v}{/:w}', '/x{/:v{/:w}}', '/x{/:v}{.:f}', '/x/:a{/:v}',
    '{/:v}/*rest', '/x{/:v}/*rest', '/x/*rest{.:f}', '/x{/*rest}', '/x{/*rest}/y', '/x/:a{-:v}/*rest', '/a//b{/:v}',
  ];
  // A group after a slash that holds its own: refused when added, never a path with "//" in it; these alone.
  const refused = ['/x/{/:v}', '/x/{:v}/y', '/x/{/:v}/*rest'];
  patterns.push(...refused);
  const values: Record<string, readonly unknown[]> = { v: ['1', 'a.b', undefined], w: ['2', undefined], f: ['json', undefined], a: ['q'], rest: [['r', 's'], 't', undefined], l: ['en', undefined] };
  let checked = 0;
  for (const prefix of ['', '/p/', '{/:l}/', '/:l/']) {
    for (const path of patterns) {
      let collection: RouteCollection;
      try {
        collection = new RouteCollection().add('other', new Route('/other')).add('r', new Route(path)).addPrefix(prefix);
      } catch (error) {
        assert.instance(error, InvalidRouteError, path);
        assert.ok(refused.includes(path), `${prefix} ${path} is refused: ${String(error)}`);
        continue;
      }
      assert.not.ok(refused.includes(path), `${prefix} ${path} is taken`);
      const full = collection.get('r')!.path;
      const names = Object.keys(values).filter((name) => new RegExp(`[:*]${name}\\b`).test(full));
      const combinations = names.reduce<Array<Record<string, unknown>>>((all, name) => all.flatMap((params) => values[name]!.map((value) => (value === undefined ? params : { ...params, [name]: value }))), [{}]);
      const [generator, matcher] = [new UrlGenerator(collection), new UrlMatcher(collection)];
      for (const params of combinations) {
        let url: string;
        try {
          url = generator.generate('r', params);
        } catch (error) {
          // A mandatory parameter left out, or a group that cannot be left out before a written one: refused, never a wrong URL.
          assert.ok(error instanceof MissingMandatoryParametersError || error instanceof InvalidParameterError, `${full} ${JSON.stringify(params)}: ${String(error)}`);
          continue;
        }
        // No group puts "//" in a path: only the route's own text does.
        if (!full.includes('//')) assert.not.ok(url.includes('//'), `${full} ${JSON.stringify(params)} is ${url}`);
        const result = matcher.lookup(url, context);
        assert.is(result.kind, 'match', `${full} ${JSON.stringify(params)} is ${url}`);
        const expected = Object.fromEntries(Object.entries(params).map(([name, value]) => [name, name === 'rest' && typeof value === 'string' ? value.split('/') : value]));
        if (result.kind === 'match') {
          assert.is(result.name, 'r', url);
          assert.equal(result.params, expected, `${full} ${JSON.stringify(params)} is ${url}`);
        }
        checked++;
      }
    }
  }
  assert.ok(checked > 150, `only ${checked} URLs checked`);
});

test('a mandatory parameter may come from the defaults', () => {
  assert.is(generator().generate('review', { id: 3 }), '/books/3/reviews/latest');
});

test('a wildcard takes an array of segments or a string, each segment encoded', () => {
  const g = generator();
  assert.is(g.generate('static', { path: ['css', 'a b.css'] }), '/static/css/a%20b.css');
  assert.is(g.generate('static', { path: 'js/app.js' }), '/static/js/app.js');
  assert.instance(thrown(() => g.generate('static', { path: [] })), InvalidParameterError, 'no segment at all');
});

test('a value that makes a "." or ".." segment is an InvalidParameterError, as browsers and fetch() resolve it away encoded too; dots within a segment are kept', () => {
  const group = new RouteCollection().add('page', new Route('/pages/:slug')).add('static', new Route('/static/*path')).add('download', new Route('/files/:name/download'));
  const g = new UrlGenerator(group.addPrefix('/:tenant'));
  const error = thrown(() => g.generate('download', { tenant: 'acme', name: '..' }));
  assert.instance(error, InvalidParameterError);
  assert.is(error.message, 'Parameter "name" for route "download" must not make the path segment ".." (browsers and fetch() resolve "." and ".." segments away, %2E%2E too: "/acme/files/%2E%2E/download" is requested as "/acme/download") (".." given) to generate a corresponding URL.');
  assert.is(new URL('/acme/files/%2E%2E/download', 'http://localhost').pathname, '/acme/download');
  assert.is((error as InvalidParameterError).parameter, 'name');
  assert.is(thrown(() => g.generate('page', { tenant: '.', slug: 'x' })).message, 'Parameter "tenant" for route "page" must not make the path segment "." (browsers and fetch() resolve "." and ".." segments away, %2E too: "/%2E/pages/x" is requested as "/pages/x") ("." given) to generate a corresponding URL.');
  assert.is(thrown(() => g.generate('static', { tenant: 'acme', path: ['a', '.', 'b'] })).message, 'Parameter "path" for route "static" must not make the path segment "." (browsers and fetch() resolve "." and ".." segments away, %2E too: "/acme/static/a/%2E/b" is requested as "/acme/static/a/b") ("a,.,b" given) to generate a corresponding URL.');
  assert.is(g.generate('page', { tenant: 'acme', slug: '...' }), '/acme/pages/...');
  assert.is(g.generate('page', { tenant: 'acme', slug: '.well-known' }), '/acme/pages/.well-known');
  assert.is(g.generate('static', { tenant: 'acme', path: ['..a', 'b..'] }), '/acme/static/..a/b..');
});

test('a route whose text has a "." or ".." just before a parameter (/d/.:name) still refuses a value that makes a dot segment', () => {
  const g = new UrlGenerator(new RouteCollection().add('dotfile', new Route('/d/.:name/:rest')).add('hidden', new Route('/h/..:name{/*rest}')));
  assert.is(g.generate('dotfile', { name: 'env', rest: 'x' }), '/d/.env/x');
  assert.is(
    thrown(() => g.generate('dotfile', { name: 'env', rest: '..' })).message,
    'Parameter "rest" for route "dotfile" must not make the path segment ".." (browsers and fetch() resolve "." and ".." segments away, %2E%2E too: "/d/.env/%2E%2E" is requested as "/d/") (".." given) to generate a corresponding URL.',
  );
  assert.instance(thrown(() => g.generate('hidden', { name: 'x', rest: ['a', '.'] })), InvalidParameterError);
  assert.is(g.generate('hidden', { name: 'x', rest: ['a', 'b'] }), '/h/..x/a/b');
});

test('an unknown route name is a RouteNotFoundError', () => {
  const error = thrown(() => generator().generate('nope'));
  assert.instance(error, RouteNotFoundError);
  assert.is(error.message, 'Unable to generate a URL for the named route "nope" as such route does not exist.');
  assert.is((error as RouteNotFoundError).code, 'HK_ROUTING_ROUTE_NOT_FOUND');
});

test('missing mandatory parameters are all named', () => {
  const error = thrown(() => generator().generate('file'));
  assert.instance(error, MissingMandatoryParametersError);
  assert.is(error.message, 'Some mandatory parameters are missing ("name", "ext") to generate a URL for route "file".');
  assert.equal((error as MissingMandatoryParametersError).missingParameters, ['name', 'ext']);
  assert.is((error as MissingMandatoryParametersError).code, 'HK_ROUTING_MISSING_PARAMETERS');
});

test('a value holding the separator that opens the optional group after it is refused, group written or not: the matcher would not read it back', () => {
  const g = new UrlGenerator(new RouteCollection().add('file', new Route('/:name{.:ext}')));
  assert.instance(thrown(() => g.generate('file', { name: 'x.' })), InvalidParameterError);
  assert.instance(thrown(() => g.generate('file', { name: 'x.y', ext: 'z' })), InvalidParameterError);
  assert.is(g.generate('file', { name: 'x' }), '/x');
  assert.is(g.generate('file', { name: 'x', ext: 'y.z' }), '/x.y.z');
});

test('a value is checked against the stops of the combination of groups written: the text after it there, and the groups right after it', () => {
  const g = new UrlGenerator(new RouteCollection()
    .add('docs', new Route('/docs/:version{/:page}.html'))
    .add('two', new Route('/t/:a{.:b}{-:c}')));
  // With the page, `/` follows the version: its dot reads back (as in Symfony).
  assert.is(g.generate('docs', { version: '1.2', page: 'intro' }), '/docs/1.2/intro.html');
  // Without it, `.html` does: `/docs/1.2.html` would not match.
  assert.is(g.generate('docs', { version: '1' }), '/docs/1.html');
  assert.instance(thrown(() => g.generate('docs', { version: '1.2' })), InvalidParameterError);
  // `a` before `.b-c` may hold a `-`, not before `-c` alone, nor with both groups left out (`/t/x-y` is `-c`'s).
  assert.is(g.generate('two', { a: 'x-y', b: 'z', c: 'w' }), '/t/x-y.z-w');
  assert.instance(thrown(() => g.generate('two', { a: 'x-y', c: 'w' })), InvalidParameterError);
  assert.instance(thrown(() => g.generate('two', { a: 'x-y' })), InvalidParameterError);
  assert.instance(thrown(() => g.generate('two', { a: 'x', b: 'y-' })), InvalidParameterError);
  const m = new UrlMatcher(new RouteCollection().add('docs', new Route('/docs/:version{/:page}.html')).add('two', new Route('/t/:a{.:b}{-:c}')));
  for (const [name, params] of [['docs', { version: '1.2', page: 'intro' }], ['docs', { version: '1' }], ['two', { a: 'x-y', b: 'z', c: 'w' }], ['two', { a: 'x', c: 'y' }]] as const) {
    const found = m.lookup(g.generate(name, params), { method: 'GET', host: 'localhost', scheme: 'http' });
    assert.equal(found.kind === 'match' ? [found.name, found.params] : found.kind, [name, params]);
  }
});

test('a URL generated from optional groups after parameters matches back to the values given, and a value refused would not', () => {
  // Segments whose parameters stop at the text after them or at the groups after them (`@`: a fresh name).
  const segment = fc.constantFrom('/w', '/:@', '{/:@}', '/:@.:@', '/:@{.:@}', '/:@{/:@}.html', '/:@{/:@}-x', '/:@{.:@}{-:@}', '/:@{-:@}.:@');
  const value = fc.constantFrom('a', '1.2', 'x-y', 'a.b-c', 'b.', '-z', 'x.html', 'p-x');
  const context = { method: 'GET', host: 'localhost', scheme: 'http' } as const;
  let matched = 0;
  let refused = 0;
  fc.assert(
    fc.property(fc.array(segment, { minLength: 1, maxLength: 3 }), fc.array(fc.option(value, { freq: 3 }), { minLength: 9, maxLength: 9 }), (segments, values) => {
      let n = 0;
      const path = segments.join('').replace(/@/g, () => `p${n++}`);
      const route = new Route(path);
      const given: Record<string, string> = {};
      // A parameter outside a group always has a value; one in a group may have none (the group left out).
      path.replace(/\{[^}]*\}|:(\w+)/g, (token: string, name: string | undefined) => {
        for (const [, inner] of token.matchAll(/:(\w+)/g)) {
          const chosen = values[Number(inner!.slice(1))] ?? (name === undefined ? null : 'a');
          if (chosen !== null) given[inner!] = chosen;
        }
        return token;
      });
      const generator = new UrlGenerator(new RouteCollection().add('r', route));
      const matcher = new UrlMatcher(new RouteCollection().add('r', route));
      const readBack = (url: string) => {
        const found = matcher.lookup(url, context);
        return found.kind === 'match' ? found.params : found.kind;
      };
      let url: string;
      try {
        url = generator.generate('r', given);
      } catch (error) {
        assert.ok(error instanceof InvalidParameterError || error instanceof MissingMandatoryParametersError, String(error));
        refused++;
        // Written as asked (a group with every value of its own), the path would not match back to them.
        const written = path.replace(/\{([^}]*)\}/g, (_, group: string) => ([...group.matchAll(/:(\w+)/g)].every(([, inner]) => given[inner!] !== undefined) ? group : ''));
        const naive = written.replace(/:(\w+)/g, (_, name: string) => given[name]!);
        assert.not.equal(readBack(naive), given, `${path} ${JSON.stringify(given)}: ${naive} is refused but reads back`);
        return;
      }
      matched++;
      assert.equal(readBack(url), given, `${path} ${JSON.stringify(given)}: ${url}`);
    }),
    propertyParameters(1500),
  );
  assert.ok(matched > 300 && refused > 300, `${matched} generated, ${refused} refused`);
});

test('a value that fails its requirement is an InvalidParameterError', () => {
  const error = thrown(() => generator().generate('book', { id: 'abc' }));
  assert.instance(error, InvalidParameterError);
  assert.is(error.message, 'Parameter "id" for route "book" must match "\\d+" ("abc" given) to generate a corresponding URL.');
  assert.is((error as InvalidParameterError).code, 'HK_ROUTING_INVALID_PARAMETER');
});

test('a value the default pattern would split is refused rather than generating a URL that matches differently', () => {
  assert.instance(thrown(() => generator().generate('file', { name: 'a.b', ext: 'c' })), InvalidParameterError);
});

test('a value holding the text an optional group starts with is refused: the matcher would give another split back', () => {
  const g = new UrlGenerator(
    new RouteCollection()
      .add('file', new Route('/files/:name{.:ext}'))
      .add('range', new Route('/r/:from{-:to}/x'))
      .add('inner', new Route('/x{/:name}.json')),
  );
  for (const [name, params] of [
    ['file', { name: 'a.b', ext: 'c' }],
    ['file', { name: 'a.b' }],
    ['range', { from: 'p-q', to: 'r' }],
    ['inner', { name: 'a.b' }],
  ] as const) {
    assert.instance(thrown(() => g.generate(name, params)), InvalidParameterError, `${name} ${JSON.stringify(params)}`);
  }
  assert.is(thrown(() => g.generate('file', { name: 'a.b', ext: 'c' })).message, 'Parameter "name" for route "file" must match "[^/.]+" ("a.b" given) to generate a corresponding URL.');
  // What can be generated matches back to the same values.
  const routes = new RouteCollection().add('file', new Route('/files/:name{.:ext}')).add('inner', new Route('/x{/:name}.json'));
  const generator = new UrlGenerator(routes);
  const matcher2 = new UrlMatcher(routes);
  const context = { method: 'GET', host: 'localhost', scheme: 'http' } as const;
  assert.equal(matcher2.match(generator.generate('file', { name: 'a', ext: 'tar.gz' }), context).params, { name: 'a', ext: 'tar.gz' });
  assert.equal(matcher2.match(generator.generate('file', { name: 'a' }), context).params, { name: 'a' });
  assert.equal(matcher2.match(generator.generate('inner', { name: 'a-b' }), context).params, { name: 'a-b' });
});

test('a non-scalar value for a path parameter is refused', () => {
  assert.instance(thrown(() => generator().generate('page', { slug: { a: 1 } })), InvalidParameterError);
});

test('a lone surrogate in a path, host, query or fragment value is an InvalidParameterError naming the parameter, not a URIError', () => {
  const g = generator();
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['page', { slug: 'a\uD800' }, 'slug'],
    ['static', { path: ['ok', '\uDC00'] }, 'path'],
    ['tenant', { tenant: '\uD83D' }, 'tenant'],
    ['page', { slug: 'a', q: '\uDFFFx' }, 'q'],
    ['page', { slug: 'a', q: ['ok', '\uD800'] }, 'q'],
    ['page', { slug: 'a', '\uD800': 'x' }, '\uD800'],
    ['page', { slug: 'a', _fragment: 'x\uD800' }, '_fragment'],
  ];
  for (const [name, params, parameter] of cases) {
    const error = thrown(() => g.generate(name, params));
    assert.instance(error, InvalidParameterError, `${name} ${parameter}`);
    assert.is((error as InvalidParameterError).parameter, parameter);
    assert.is((error as InvalidParameterError).code, 'HK_ROUTING_INVALID_PARAMETER');
    assert.match(error.message, `Parameter "${parameter}" for route "${name}" must be well-formed Unicode (no lone surrogate)`);
  }
  assert.is(thrown(() => g.generate('page', { slug: 'a\uD800b' })).message, 'Parameter "slug" for route "page" must be well-formed Unicode (no lone surrogate) ("a\\ud800b" given) to generate a corresponding URL.');
  // A whole pair is one character, encoded as its UTF-8 bytes.
  assert.is(g.generate('page', { slug: '\uD83D\uDE00' }), '/pages/%F0%9F%98%80');
});

test('a value that cannot be turned into text is refused with an InvalidParameterError, not a TypeError', () => {
  const error = thrown(() => generator().generate('page', { slug: Object.create(null) }));
  assert.instance(error, InvalidParameterError);
  assert.is(error.message, 'Parameter "slug" for route "page" must match "[^/]+" ([object Object] given) to generate a corresponding URL.');
});

test('absolute URLs carry scheme, host and a non-default port', () => {
  assert.is(generator({ host: 'example.com', port: 8080 }).generate('book', { id: 1 }, true), 'http://example.com:8080/books/1');
  assert.is(generator({ scheme: 'https', host: 'example.com', port: 443 }).generate('book', { id: 1 }, true), 'https://example.com/books/1');
});

test('contextFrom takes the scheme, host and port of the request, its host lower-cased and IPv6 in brackets', () => {
  assert.equal(UrlGenerator.contextFrom(Request.create('https://Books.Example:8443/x')), { scheme: 'https', host: 'books.example', port: 8443 });
  assert.is(generator(UrlGenerator.contextFrom(Request.create('https://Books.Example:8443/x'))).generate('book', { id: 1 }, true), 'https://books.example:8443/books/1');
  assert.is(generator(UrlGenerator.contextFrom(Request.create('http://[::1]:8000/'))).generate('book', { id: 1 }, true), 'http://[::1]:8000/books/1');
  assert.is(generator(UrlGenerator.contextFrom(Request.create('https://books.example/'))).generate('book', { id: 1 }, true), 'https://books.example/books/1');
  // A route forcing https from an http request gets the https default port, not the request's.
  assert.is(generator(UrlGenerator.contextFrom(Request.create('http://books.example:8000/'))).generate('login'), 'https://books.example/login');
  const shop = new UrlGenerator(routes(), { ...UrlGenerator.contextFrom(Request.create('https://books.example/')), baseUrl: '/shop' });
  assert.is(shop.generate('book', { id: 1 }, true), 'https://books.example/shop/books/1');
});

test('context parameters fill the route variables generate() is not given (Symfony\'s RequestContext parameters), before the defaults, never the query', () => {
  const localized = new RouteCollection()
    .add('about', new Route('/:_locale/about'))
    .add('home', new Route('/{:_locale}', { defaults: { _locale: 'en' } }))
    .add('tenant', new Route('/dash', { host: ':tenant.example.com' }))
    .add('plain', new Route('/plain'));
  const urls = new UrlGenerator(localized, { host: 'example.com', parameters: { _locale: 'fr', tenant: 'acme' } });
  assert.is(urls.generate('about'), '/fr/about');
  // A value given wins; null given is none, not the context's.
  assert.is(urls.generate('about', { _locale: 'de' }), '/de/about');
  assert.is(thrown(() => urls.generate('about', { _locale: null })).constructor, MissingMandatoryParametersError);
  // An own undefined is not given, as generate() reads it.
  assert.is(urls.generate('about', { _locale: undefined }), '/fr/about');
  // Over the default: an optional group is written for a context value other than its default, left out for the default.
  assert.is(urls.generate('home'), '/fr');
  assert.is(new UrlGenerator(localized, { parameters: { _locale: 'en' } }).generate('home'), '/');
  assert.is(urls.generate('tenant'), 'http://acme.example.com/dash');
  // A route without the variable does not get it in its query string.
  assert.is(urls.generate('plain'), '/plain');
  assert.is(urls.generate('plain', { page: 2 }), '/plain?page=2');
  // A value that breaks the requirement is the generator's usual error.
  const strict = new RouteCollection().add('item', new Route('/:_locale/item', { requirements: { _locale: '[a-z]{2}' } }));
  assert.instance(thrown(() => new UrlGenerator(strict, { parameters: { _locale: 'french' } }).generate('item')), InvalidParameterError);
  // Copied when the generator is made.
  const parameters: Record<string, unknown> = { _locale: 'fr' };
  const copied = new UrlGenerator(localized, { parameters });
  parameters._locale = 'it';
  assert.is(copied.generate('about'), '/fr/about');
});

test('context parameters are a plain object, and never _fragment or _query (a TypeError, not every URL with them)', () => {
  assert.match(thrown(() => new UrlGenerator(routes(), { parameters: new Map([['_locale', 'fr']]) } as never)).message, /^The generator's parameters are a plain object by name/);
  assert.match(thrown(() => new UrlGenerator(routes(), { parameters: ['fr'] } as never)).message, /^The generator's parameters are a plain object by name/);
  for (const name of ['_fragment', '_query']) {
    const error = thrown(() => new UrlGenerator(routes(), { parameters: { [name]: 'x' } }));
    assert.instance(error, TypeError);
    assert.is(error.message, `The generator's parameters fill route variables, which "${name}" never is: give it to generate() for the URL that needs it.`);
  }
});

test('contextFrom passes on the request\'s _locale attribute (set by its route) as a context parameter, so its links keep the language', () => {
  const localized = new RouteCollection().add('about', new Route('/:_locale/about')).add('book', new Route('/books/:id'));
  const request = Request.create('https://books.example/fr/about');
  assert.equal(UrlGenerator.contextFrom(request), { scheme: 'https', host: 'books.example', port: 443 });
  request.attributes.set('_locale', 'fr');
  const context = UrlGenerator.contextFrom(request, { http: 8000 });
  assert.equal(context, { scheme: 'https', host: 'books.example', port: 443, parameters: { _locale: 'fr' }, httpPort: 8000 });
  const urls = new UrlGenerator(localized, context);
  assert.is(urls.generate('about'), '/fr/about');
  assert.is(urls.generate('about', { _locale: 'de' }), '/de/about');
  assert.is(urls.generate('book', { id: 1 }), '/books/1');
  // Only text: another value (or none) passes nothing on.
  request.attributes.set('_locale', 42);
  assert.equal(UrlGenerator.contextFrom(request), { scheme: 'https', host: 'books.example', port: 443 });
  request.attributes.set('_locale', '');
  assert.equal(UrlGenerator.contextFrom(request), { scheme: 'https', host: 'books.example', port: 443 });
});

test('contextFrom believes X-Forwarded-Proto, -Host and -Port from a trusted proxy alone', () => {
  const forwarded = { host: 'app.internal:8080', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'shop.example', 'x-forwarded-port': '8443' };
  const trustProxy = (address: string) => address === '10.0.0.1';
  const behindProxy = Request.create('/books', 'GET', { headers: forwarded, remoteAddress: '10.0.0.1', trustProxy });
  assert.equal(UrlGenerator.contextFrom(behindProxy), { scheme: 'https', host: 'shop.example', port: 8443 });
  assert.is(generator(UrlGenerator.contextFrom(behindProxy)).generate('book', { id: 1 }, true), 'https://shop.example:8443/books/1');
  const { 'x-forwarded-port': _port, ...withoutPort } = forwarded;
  const defaultPort = Request.create('/books', 'GET', { headers: withoutPort, remoteAddress: '10.0.0.1', trustProxy });
  assert.is(generator(UrlGenerator.contextFrom(defaultPort)).generate('book', { id: 1 }, true), 'https://shop.example/books/1');
  // The same headers from a client that is no trusted proxy are its own words: the connection and Host count.
  const untrusted = Request.create('/books', 'GET', { headers: forwarded, remoteAddress: '203.0.113.9', trustProxy });
  assert.equal(UrlGenerator.contextFrom(untrusted), { scheme: 'http', host: 'app.internal', port: 8080 });
  assert.is(generator(UrlGenerator.contextFrom(untrusted)).generate('book', { id: 1 }, true), 'http://app.internal:8080/books/1');
  const noProxies = Request.create('/books', 'GET', { headers: forwarded, remoteAddress: '10.0.0.1' });
  assert.is(generator(UrlGenerator.contextFrom(noProxies)).generate('book', { id: 1 }, true), 'http://app.internal:8080/books/1');
});

test('contextFrom refuses a host the trusted hosts do not list, forwarded or not, with the 400 that reading it throws', () => {
  const trustHost = (host: string) => host === 'shop.example';
  const evil = Request.create('/books', 'GET', { headers: { host: 'evil.example' }, trustHost });
  const error = thrown(() => UrlGenerator.contextFrom(evil));
  assert.instance(error, UntrustedHostError);
  assert.is(error.message, 'Untrusted Host "evil.example".');
  const forwarded = Request.create('/books', 'GET', { headers: { host: 'shop.example', 'x-forwarded-host': 'evil.example' }, remoteAddress: '10.0.0.1', trustProxy: () => true, trustHost });
  assert.instance(thrown(() => UrlGenerator.contextFrom(forwarded)), UntrustedHostError);
});

test('a route that requires another scheme is generated absolute, at that scheme\'s port (httpsPort, default 443), never the context port', () => {
  assert.is(generator({ host: 'example.com', port: 8080 }).generate('login'), 'https://example.com/login');
  assert.is(generator({ scheme: 'https', host: 'example.com' }).generate('login'), '/login');
  assert.is(generator({ host: 'example.com', port: 8000, httpsPort: 8443 }).generate('login'), 'https://example.com:8443/login');
  assert.is(generator({ host: 'example.com', httpPort: 8000, httpsPort: 443 }).generate('login'), 'https://example.com/login');
  // The context's own scheme keeps its port: `port`, or the scheme's port option when port is left out.
  assert.is(generator({ host: 'example.com', port: 8000, httpsPort: 8443 }).generate('book', { id: 1 }, true), 'http://example.com:8000/books/1');
  assert.is(generator({ host: 'example.com', httpPort: 8000, httpsPort: 8443 }).generate('book', { id: 1 }, true), 'http://example.com:8000/books/1');
  const plain = new RouteCollection().add('plain', new Route('/plain', { schemes: ['http'] }));
  assert.is(new UrlGenerator(plain, { scheme: 'https', host: 'example.com', port: 8443, httpPort: 8000 }).generate('plain'), 'http://example.com:8000/plain');
  assert.is(new UrlGenerator(plain, { scheme: 'https', host: 'example.com', httpsPort: 8443 }).generate('plain'), 'http://example.com/plain');
  assert.is(new UrlGenerator(plain, { scheme: 'https', host: 'example.com', httpsPort: 8443 }).generate('plain', {}, true), 'http://example.com/plain');
});

test('contextFrom takes the other scheme\'s port from the ports given (app.schemePorts), so links to it go where the router redirects', () => {
  const ports = { http: 8000, https: 8443 };
  assert.equal(UrlGenerator.contextFrom(Request.create('http://books.example:8000/'), ports), { scheme: 'http', host: 'books.example', port: 8000, httpsPort: 8443 });
  assert.equal(UrlGenerator.contextFrom(Request.create('https://books.example:8443/'), ports), { scheme: 'https', host: 'books.example', port: 8443, httpPort: 8000 });
  assert.is(generator(UrlGenerator.contextFrom(Request.create('http://books.example:8000/'), ports)).generate('login'), 'https://books.example:8443/login');
  // The request's own port stands for its scheme (a proxy's, forwarded), whatever the listener's.
  assert.is(generator(UrlGenerator.contextFrom(Request.create('http://books.example:9000/'), ports)).generate('book', { id: 1 }, true), 'http://books.example:9000/books/1');
  assert.is(generator(UrlGenerator.contextFrom(Request.create('http://books.example:8000/'), { http: 8000, https: 443 })).generate('login'), 'https://books.example/login');
  assert.is(generator(UrlGenerator.contextFrom(Request.create('http://books.example:8000/'), {})).generate('login'), 'https://books.example/login');
});

test('a route host is filled in, and makes the URL absolute when it differs from the context host', () => {
  const g = generator({ host: 'acme.example.com' });
  assert.is(g.generate('tenant', { tenant: 'acme' }), '/dash');
  assert.is(g.generate('tenant', { tenant: 'other' }), 'http://other.example.com/dash');
  assert.equal((thrown(() => g.generate('tenant')) as MissingMandatoryParametersError).missingParameters, ['tenant']);
});

test('a host parameter is refused when it holds what no host name may (it would never match, or would name another host)', () => {
  const g = generator({ host: 'acme.example.com' });
  for (const tenant of ['a b', 'x@evil', 'evil:80', 'café', 'a/b', '%41', 'a#b']) {
    const error = thrown(() => g.generate('tenant', { tenant }));
    assert.instance(error, InvalidParameterError, tenant);
    assert.match(error.message, `Parameter "tenant" for route "tenant" must be a host name label (letters, digits, "-" and "_") (${JSON.stringify(tenant)} given)`);
  }
  assert.is(g.generate('tenant', { tenant: 'ACME' }), '/dash', 'host names are compared without case');
  assert.is(g.generate('tenant', { tenant: 'Other-1_x' }), 'http://other-1_x.example.com/dash');
});

test('a host parameter that would leave an empty label, or holds a dot where it is one label, is refused naming the route and parameter; several labels where a requirement or a wildcard takes them', () => {
  const collection = new RouteCollection()
    .add('one', new Route('/', { host: ':sub.example.test' }))
    .add('optional', new Route('/o', { host: '{:sub.}example.test' }))
    .add('several', new Route('/s', { host: ':sub.example.test', requirements: { sub: '[a-z.]*' } }))
    .add('labels', new Route('/l', { host: '*labels.example.test' }));
  const g = new UrlGenerator(collection, { host: 'example.test' });
  const message = (name: string, params: Record<string, unknown>): string => {
    const error = thrown(() => g.generate(name, params));
    assert.instance(error, InvalidParameterError, `${name} ${JSON.stringify(params)}`);
    return error.message;
  };
  for (const name of ['one', 'optional', 'several']) {
    assert.is(message(name, { sub: '' }), `Parameter "sub" for route "${name}" must not be empty (it would leave an empty label in the host) ("" given) to generate a corresponding URL.`);
  }
  assert.is(message('labels', { labels: '' }), 'Parameter "labels" for route "labels" must not be empty (it would leave an empty label in the host) ("" given) to generate a corresponding URL.');
  for (const sub of ['a.b', '.', 'a.', '.a', 'a..b']) {
    for (const name of ['one', 'optional']) assert.is(message(name, { sub }), `Parameter "sub" for route "${name}" must be a host name label (letters, digits, "-" and "_") (${JSON.stringify(sub)} given) to generate a corresponding URL.`);
  }
  for (const sub of ['.', 'a.', '.a', 'a..b']) {
    assert.is(message('several', { sub }), `Parameter "sub" for route "several" must be host name labels separated by dots that leave no label of the host empty (${JSON.stringify(`${sub}.example.test`)}) (${JSON.stringify(sub)} given) to generate a corresponding URL.`);
    assert.match(message('labels', { labels: sub }), 'Parameter "labels" for route "labels" must be host name labels separated by dots that leave no label of the host empty');
  }
  for (const sub of ['a@b', 'a:1', 'a/b']) assert.match(message('several', { sub }), 'Parameter "sub" for route "several" must be host name labels (letters, digits, "-" and "_") separated by dots');
  assert.is(g.generate('several', { sub: 'a.b' }), 'http://a.b.example.test/s');
  assert.is(g.generate('labels', { labels: 'a.b' }), 'http://a.b.example.test/l');
  assert.is(g.generate('optional', {}), '/o');
});

test('a host parameter that ends the host may end with a dot (a fully qualified name, which the matcher reads back); one before more of the host may not', () => {
  const collection = new RouteCollection()
    .add('any', new Route('/a', { host: '*host' }))
    .add('tld', new Route('/t', { host: 'example.:tld', requirements: { tld: '[a-z.]+' } }))
    .add('labels', new Route('/l', { host: '*labels.example.test' }))
    .add('suffix', new Route('/s', { host: 'shop:suffix.example.test', requirements: { suffix: '[a-z.]+' } }))
    .add('apex', new Route('/x', { host: 'example.:tld', requirements: { tld: '[a-z.]*' } }));
  const g = new UrlGenerator(collection, { host: 'example.test' });
  const matcher = new UrlMatcher(collection);
  for (const [name, params, url] of [
    ['any', { host: 'shop.example.test.' }, 'http://shop.example.test./a'],
    ['tld', { tld: 'test.' }, 'http://example.test./t'],
    // Nothing, where the requirement takes it and no label is left empty: `example.` is a fully qualified name too.
    ['apex', { tld: '' }, 'http://example./x'],
    ['suffix', { suffix: '.eu' }, 'http://shop.eu.example.test/s'],
  ] as const) {
    assert.is(g.generate(name, params), url);
    const { host, pathname } = new URL(url);
    const result = matcher.lookup(pathname, { method: 'GET', host, scheme: 'http' });
    assert.is(result.kind, 'match', url);
    if (result.kind === 'match') assert.equal([result.name, result.params], [name, params], url);
  }
  for (const [name, params] of [['labels', { labels: 'a.' }], ['labels', { labels: 'a..b' }], ['any', { host: '.a' }], ['tld', { tld: 'test..' }]] as const) {
    const error = thrown(() => g.generate(name, params));
    assert.instance(error, InvalidParameterError, JSON.stringify(params));
    assert.match(error.message, 'separated by dots that leave no label of the host empty', JSON.stringify(params));
  }
  assert.is(thrown(() => g.generate('labels', { labels: '' })).message, 'Parameter "labels" for route "labels" must not be empty (it would leave an empty label in the host) ("" given) to generate a corresponding URL.');
  assert.is(thrown(() => g.generate('suffix', { suffix: '' })).message, 'Parameter "suffix" for route "suffix" must match "[a-z.]+" ("" given) to generate a corresponding URL.');
});

test('a host that the matcher would split into other values than those given is an InvalidParameterError, not a URL that matches them otherwise', () => {
  const collection = new RouteCollection().add('two', new Route('/', { host: ':a.:b.example.test', requirements: { a: '[a-z.]+', b: '[a-z.]+' } }));
  const g = new UrlGenerator(collection, { host: 'example.test' });
  const error = thrown(() => g.generate('two', { a: 'x', b: 'y.z' }));
  assert.instance(error, InvalidParameterError);
  assert.is(error.message, 'Parameter "a" for route "two" must give a URL that matches back to it (host "x.y.z.example.test" would give "x.y") ("x" given) to generate a corresponding URL.');
  assert.is(g.generate('two', { a: 'x.y', b: 'z' }), 'http://x.y.z.example.test/');
  const result = new UrlMatcher(collection).match('/', { method: 'GET', host: 'x.y.z.example.test', scheme: 'http' });
  assert.equal(result.params, { a: 'x.y', b: 'z' });
});

test('a host group written after one left out writes the earlier one with its default, or names it as missing, as a path group does', () => {
  // `x.example.test` would read back as `a` x: the earlier group takes a value written after it.
  const collection = new RouteCollection()
    .add('default', new Route('/', { host: '{:a.}{:b.}example.test', defaults: { a: 'www' } }))
    .add('none', new Route('/', { host: '{:a.}{:b.}example.test' }));
  const g = new UrlGenerator(collection, { host: 'example.test' });
  assert.is(g.generate('default', { b: 'x' }), 'http://www.x.example.test/');
  const result = new UrlMatcher(collection).match('/', { method: 'GET', host: 'www.x.example.test', scheme: 'http' });
  assert.equal(result.params, { a: 'www', b: 'x' });
  const error = thrown(() => g.generate('none', { b: 'x' }));
  assert.instance(error, MissingMandatoryParametersError);
  assert.is(error.message, 'Some mandatory parameters are missing ("a") to generate a URL for route "none": the optional group "{:a.}" cannot be left out before "{:b.}" ("x.example.test" would read back as a "x").');
});

test('the base URL prefixes every path', () => {
  const g = generator({ host: 'example.com', baseUrl: '/app/' });
  assert.is(g.generate('book', { id: 1 }), '/app/books/1');
  assert.is(g.generate('home', {}, true), 'http://example.com/app/');
});

test('a parameter named like an Object.prototype property (constructor, toString) is a parameter like any other', () => {
  const routes = new RouteCollection().add('c', new Route('/x/:constructor/:toString'));
  const g = new UrlGenerator(routes);
  assert.equal((thrown(() => g.generate('c', {})) as MissingMandatoryParametersError).missingParameters, ['constructor', 'toString']);
  assert.is(g.generate('c', { constructor: 'a', toString: 'b' }), '/x/a/b');
  assert.equal(new UrlMatcher(routes).match('/x/a/b', { method: 'GET', host: 'localhost', scheme: 'http' }).params, { constructor: 'a', toString: 'b' });
});

test('a path or host parameter named __proto__ is a parameter like any other, given or by default', () => {
  const routes = new RouteCollection()
    .add('path', new Route('/x/:__proto__'))
    .add('host', new Route('/x', { host: ':__proto__.example.com' }))
    .add('defaulted', new Route('/x', { host: ':__proto__.example.com', defaults: JSON.parse('{"__proto__": "d"}') as Record<string, unknown> }));
  const g = new UrlGenerator(routes, { host: 'example.com' });
  assert.is(g.generate('path', { ['__proto__']: 'a' }), '/x/a');
  assert.is(g.generate('host', { ['__proto__']: 'a' }), 'http://a.example.com/x');
  assert.is(g.generate('defaulted'), 'http://d.example.com/x');
  assert.equal((thrown(() => g.generate('host', {})) as MissingMandatoryParametersError).missingParameters, ['__proto__']);
});

test('a context that would make malformed URLs is refused when the generator is made', () => {
  const cases: Array<[GeneratorContext, RegExp]> = [
    [{ baseUrl: 'shop' }, /^The generator's baseUrl is empty or a path starting with a slash/],
    [{ baseUrl: '/sh op' }, /baseUrl/],
    [{ baseUrl: '/shop?x=1' }, /baseUrl/],
    [{ baseUrl: '//evil.example' }, /^The generator's baseUrl is a path starting with one slash \(`\/shop`\): one starting with two makes every link a network path, to the host after them, not "\/\/evil\.example"\.$/],
    [{ baseUrl: '///evil.example/' }, /baseUrl is a path starting with one slash/],
    [{ host: 'a b' }, /^The generator's host is a host name or address without a port/],
    [{ host: 'example.com:8080' }, /host/],
    [{ port: 99_999 }, /^The generator's port is a port number from 1 to 65535, not 99999\./],
    [{ port: 0 }, /port/],
    [{ httpPort: 0 }, /^The generator's httpPort is a port number from 1 to 65535, not 0\./],
    [{ httpsPort: 8443.5 }, /^The generator's httpsPort is a port number from 1 to 65535, not 8443\.5\./],
    [{ httpsPort: '8443' as unknown as number }, /^The generator's httpsPort is a port number from 1 to 65535, not "8443"\./],
    [{ port: 8000, httpPort: 8080 }, /^The generator's port 8000 and httpPort 8080 are both the port of its scheme, http: give one\.$/],
    [{ scheme: 'https', port: 8443, httpsPort: 443 }, /^The generator's port 8443 and httpsPort 443 are both the port of its scheme, https: give one\.$/],
    [{ scheme: 'ftp' as 'http' }, /^The generator's scheme is "http" or "https", not "ftp"\./],
  ];
  for (const [context, message] of cases) {
    const error = thrown(() => new UrlGenerator(routes(), context));
    assert.instance(error, TypeError, JSON.stringify(context));
    assert.match(error.message, message);
  }
  const fine = new UrlGenerator(routes(), { scheme: 'https', host: '[::1]', port: 8443, httpsPort: 8443, httpPort: 8000, baseUrl: '/caf%C3%A9/' });
  assert.is(fine.generate('book', { id: 1 }, true), 'https://[::1]:8443/caf%C3%A9/books/1');
  assert.is(new UrlGenerator(routes(), { baseUrl: '' }).generate('home'), '/');
  assert.is(new UrlGenerator(routes(), { baseUrl: '//' }).generate('home'), '/', 'slashes alone are no base');
  assert.is(new UrlGenerator(routes(), { baseUrl: '/a//b/' }).generate('home'), '/a//b/');
});

test('a context option the generator does not know (a typo: baseURL) or a context that is no object is a TypeError, not URLs without it', () => {
  const typo = thrown(() => new UrlGenerator(routes(), { baseURL: '/shop' } as never));
  assert.instance(typo, TypeError);
  assert.is(typo.message, 'The generator has no context option "baseURL"; its options are scheme, host, port, httpPort, httpsPort, baseUrl, parameters.');
  assert.match(thrown(() => new UrlGenerator(routes(), { http_port: 8080 } as never)).message, /no context option "http_port"/);
  assert.is(thrown(() => new UrlGenerator(routes(), null as never)).message, "The generator's context is a plain object ({ host: 'example.com' }), not null.");
  assert.is(new UrlGenerator(routes(), { host: undefined }).generate('home', {}, true), 'http://localhost/');
});

test('parameters that are no object by name (null, a list of values) are a TypeError naming the route', () => {
  const generator = new UrlGenerator(routes());
  assert.is(thrown(() => generator.generate('book', null as never)).message, 'The parameters of route "book" are an object by name ({ id: 42 }), not null.');
  const list = thrown(() => generator.generate('book', [42] as never));
  assert.instance(list, TypeError);
  assert.is(list.message, 'The parameters of route "book" are an object by name ({ id: 42 }), not an object of type Array.');
  assert.is(generator.generate('home', undefined), '/', 'undefined is the default: no parameters');
  assert.instance(thrown(() => generator.generate('book', undefined)), MissingMandatoryParametersError);
});

test('parameters or a context given as a Map are a TypeError, not a URL without them', () => {
  assert.is(thrown(() => new UrlGenerator(routes()).generate('home', new Map([['page', 2]]) as never)).message, 'The parameters of route "home" are an object by name ({ id: 42 }), not an object of type Map.');
  assert.is(thrown(() => new UrlGenerator(routes(), new Map([['host', 'example.com']]) as never)).message, "The generator's context is a plain object ({ host: 'example.com' }), not an object of type Map.");
});

test('query parameters are written as request.query reads them back: a list as its key repeated; an object, a list in a list, a function or a symbol is a TypeError', () => {
  const g = generator();
  const url = g.generate('book', { id: 1, q: 'a&b=c', tags: ['x', 2, null, true], n: 10n });
  assert.is(url, '/books/1?q=a%26b%3Dc&tags=x&tags=2&tags=true&n=10');
  const query = Request.create(url).query;
  assert.equal([...query.keys()], ['q', 'tags', 'tags', 'tags', 'n']);
  assert.is(query.get('q'), 'a&b=c');
  assert.equal(query.getAll('tags'), ['x', '2', 'true']);
  const nested = thrown(() => g.generate('book', { id: 1, filter: { year: 2024 } }));
  assert.instance(nested, TypeError);
  assert.is(
    nested.message,
    'The query parameter "filter" of route "book" is a string, a number, a boolean or a list of them, not an object of type Object: request.query reads no nested keys (filter[a]=1 is the key "filter[a]"), so give each value its own parameter, or text (a date\'s toISOString(), JSON).',
  );
  assert.throws(() => g.generate('book', { id: 1, tags: [['x']] }), /"tags" of route "book" is a string, a number, a boolean or a list of them, not an object of type Array/);
  assert.throws(() => g.generate('book', { id: 1, when: new Date(0) }), /not an object of type Date/);
  assert.throws(() => g.generate('book', { id: 1, f: () => 1 }), /not a function/);
  assert.throws(() => g.generate('book', { id: 1, s: Symbol('s') }), /not symbol Symbol\(s\)/);
});

test('a context given as a list or a class instance is a TypeError asking for a plain object, not URLs without it; one of another realm or without prototype is taken', () => {
  class Context {
    host = 'example.com';
  }
  for (const [context, kind] of [[[['host', 'example.com']], 'Array'], [new Context(), 'Context']] as const) {
    const error = thrown(() => new UrlGenerator(routes(), context as never));
    assert.instance(error, TypeError, kind);
    assert.is(error.message, `The generator's context is a plain object ({ host: 'example.com' }), not an object of type ${kind}.`);
  }
  assert.is(new UrlGenerator(routes(), runInNewContext("({ host: 'example.com' })") as never).generate('home', {}, true), 'http://example.com/');
  assert.is(new UrlGenerator(routes(), Object.assign(Object.create(null) as object, { host: 'example.com' })).generate('home', {}, true), 'http://example.com/');
});

test('a port of 1 or 65535 is taken, 0 and 65536 are refused', () => {
  for (const port of [1, 65_535]) {
    assert.is(new UrlGenerator(routes(), { host: 'example.com', port }).generate('home', {}, true), `http://example.com:${port}/`);
    assert.is(new UrlGenerator(routes(), { host: 'example.com', httpsPort: port }).generate('login'), `https://example.com:${port}/login`);
  }
  for (const port of [0, 65_536]) assert.throws(() => new UrlGenerator(routes(), { port }), /port is a port number from 1 to 65535/);
});

test('a fragment of null or "" writes none, over the route\'s default too; a "#" in it is written %23', () => {
  const g = new UrlGenerator(new RouteCollection().add('doc', new Route('/doc')).add('top', new Route('/top', { defaults: { _fragment: 'start' } })));
  assert.is(g.generate('doc', { _fragment: null }), '/doc');
  assert.is(g.generate('top', { _fragment: '' }), '/top');
  assert.is(g.generate('top'), '/top#start');
  assert.is(g.generate('doc', { _fragment: 'a#b' }), '/doc#a%23b');
});

test('a baseUrl with a slash inside but not first is refused', () => {
  assert.throws(() => new UrlGenerator(routes(), { baseUrl: 'shop/app' }), /^The generator's baseUrl is empty or a path starting with a slash/);
});

test('a path parameter takes a number, a boolean or a bigint as its text; a wildcard takes one as its one segment, and an empty list is refused', () => {
  const g = new UrlGenerator(new RouteCollection().add('page', new Route('/pages/:slug')).add('static', new Route('/static/*path')));
  assert.is(g.generate('page', { slug: true }), '/pages/true');
  assert.is(g.generate('page', { slug: 10n }), '/pages/10');
  assert.is(g.generate('static', { path: 5 }), '/static/5');
  assert.is(g.generate('static', { path: false }), '/static/false');
  assert.instance(thrown(() => g.generate('static', { path: [] })), InvalidParameterError);
});

test('a query parameter of undefined or null, and such items of a list, are left out, as is a _query of null', () => {
  const g = generator();
  assert.is(g.generate('home', { a: undefined, b: null, c: 1 }), '/?c=1');
  assert.is(g.generate('home', { tags: ['x', undefined, null, 'y'] }), '/?tags=x&tags=y');
  assert.is(g.generate('home', { c: 1, _query: null }), '/?c=1');
});

test.run();
