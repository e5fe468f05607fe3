// Generators of route collections and of requests near them, for the routing properties
// (test/unit/routing/url-matcher-oracle.test.ts, url-generator-round-trip.test.ts): the routes as
// both UrlMatcher and the reference matcher of test/routing-oracle.ts are given them.
import fc from 'fast-check';
import { Route } from '../lib/routing/index.js';
import { pathSegment } from './arbitraries.js';
import { variantsOf, type OracleRequest, type OracleRoute, type Variant } from './routing-oracle.js';

// Pieces of a path pattern; `§` is replaced by a fresh parameter name.
const PIECES = [
  '/books', '/a', '/café', '/a b', '/x.y', '/B', '/v1', '/~u', '/x-y', '/book{s}',
  '/:§', '/:§', '/:§', '{/:§}', '{/:§}', '/:§.:§', '/:§-:§', '/:§,:§', '/:§@:§', '/:§{.:§}', '/:§{-:§}',
  '/:§{/:§}.html', '/:§{/:§}-x', '/x{/:§{/:§}}', '/:§{.:§{-:§}}', '{/:§}{/:§}', '/:§{.:§}{-:§}', '/:§{-:§}.:§', '/:"§"x', '/get:"§"Suffix', '/:§.html', '/:§|:§', '/:"§"é:§',
];
const ENDS = ['/*§', '/*§', '/*§.:§', '/*§/end', '/*§{.:§}', '/*§/*§/end', '/*§/:§.:§', '/*§-:§', '/'];
const HOSTS = [undefined, undefined, undefined, undefined, 'example.com', 'Example.COM', ':§.example.com', '{:§.}example.com', ':§-:§.example.com', ':§.:§.com'];
// Each requirement as a route is given it, and as the oracle reads it against the percent-encoded value.
// Each requirement as a route is given it, as the oracle reads it against the percent-encoded value,
// and values (raw, as in a path) that satisfy it, for requests that fit the route.
const PATH_REQUIREMENTS: readonly (readonly [string, string, readonly string[]])[] = [
  ['\\d+', '\\d+', ['12', '7']], ['[a-z]+', '[a-z]+', ['ab', 'x']], ['a|ab', 'a|ab', ['a', 'ab']], ['[^/]+', '[^/]+', ['a.b', 'x-y', '%zz']],
  ['.+', '.+', ['a/b', 'x.y/z', 'a']], ['[a-z.]+', '[a-z.]+', ['a.b', 'x.']], ['EUR|€', 'EUR|%E2%82%AC', ['EUR', '%E2%82%AC']],
  ['[a-z ]+', '(?:[a-z]|%20)+', ['a%20b', 'ab']], ['^v\\d$', 'v\\d', ['v1']], ['\\d{2,3}', '\\d{2,3}', ['12', '123']],
  ['x/y|z', 'x/y|z', ['x/y', 'z']], ['(a|b)+', '(?:a|b)+', ['ab', 'bba']],
];
const HOST_REQUIREMENTS: readonly (readonly [string, string, readonly string[]])[] = [
  ['[a-z]+', '[a-z]+', ['ab', 'x']], ['\\d+', '\\d+', ['12']], ['[a-z.]+', '[a-z.]+', ['a.b', 'x']], ['[A-Z]+', '[A-Z]+', ['ab']],
];
const METHOD_SETS = [[], [], ['GET'], ['GET'], ['POST'], ['GET', 'POST'], ['PUT'], ['HEAD'], ['post', 'DELETE'], ['DELETE', 'GET']];
const SCHEME_SETS = [[], [], [], ['https'], ['http'], ['http', 'https']];

/** `arbitrary` once in `every` draws, else null (fc.option's `freq` is the odds of null). */
function sometimes<T>(arbitrary: fc.Arbitrary<T>, every: number): fc.Arbitrary<T | null> {
  return fc.oneof({ weight: every - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary });
}

/** Route recipes made of these pieces of path and these ends. */
export const routeRecipeOf = (pieces: readonly string[], ends: readonly string[]) => fc.record({
  lead: fc.constantFrom(false, false, false, false, false, false, true),
  pieces: fc.array(fc.constantFrom(...pieces), { minLength: 1, maxLength: 3 }),
  end: fc.option(fc.constantFrom(...ends), { nil: '' }),
  host: fc.constantFrom(...HOSTS),
  requirements: fc.array(sometimes(fc.nat(PATH_REQUIREMENTS.length - 1), 4), { minLength: 12, maxLength: 12 }),
  methods: fc.constantFrom(...METHOD_SETS),
  schemes: fc.constantFrom(...SCHEME_SETS),
  defaults: fc.constantFrom('none', 'none', 'param', 'format', 'number'),
  rename: sometimes(fc.nat(7), 12),
  // The path of the route before, as it is or with its trailing slash toggled, with methods, schemes and
  // host of its own: without it, two routes of one path are drawn in about one collection in 200.
  sibling: fc.constantFrom(null, null, null, 'same', 'toggled'),
});
/** Route recipes of every kind of piece. */
export const routeRecipe = routeRecipeOf(PIECES, ENDS);
export type RouteRecipe = typeof routeRecipe extends fc.Arbitrary<infer T> ? T : never;

// Host patterns of several parameters, for properties of the host alone: parameters that may take
// dots side by side, optional groups side by side, separators, a wildcard.
const HOST_SHAPES = [':§.:§.com', ':§.:§.example.com', '{:§.}{:§.}example.com', '{:§.}:§.example.com', ':§-:§.example.com', ':§.example.com', '*§.example.com', ':§.*§.com'];

/**
 * Route recipes whose path is static and whose host has parameters, each with a host requirement
 * one time in two (in routeRecipe, a host of two parameters that both take dots is drawn about once
 * in 2,500 routes): what the generator's host read-back is about.
 */
export const hostRouteRecipe = fc
  .tuple(routeRecipe, fc.constantFrom(...HOST_SHAPES), fc.array(sometimes(fc.nat(HOST_REQUIREMENTS.length - 1), 2), { minLength: 12, maxLength: 12 }))
  .map(([recipe, host, requirements]): RouteRecipe => ({ ...recipe, lead: false, pieces: ['/books'], end: '', host, requirements, rename: null }));

/** A route as both matchers are given it. */
export interface Spec {
  readonly oracle: OracleRoute;
  readonly route: Route;
  /** The route as code, for failure reports. */
  readonly source: string;
  /** Values that satisfy each parameter's requirement. */
  readonly samples: Readonly<Record<string, readonly string[]>>;
  /** The requirements as the route is given them (the oracle's are as it reads them). */
  readonly written: Readonly<Record<string, string>>;
}

/** A route and its oracle reading, or the error of a route the Route constructor refused. */
export function specOf(recipe: RouteRecipe, index: number): Spec | Error {
  let count = 0;
  const names: string[] = [];
  const fill = (template: string): string =>
    template.replace(/§/g, () => {
      const name = `p${count++}`;
      names.push(name);
      return name;
    });
  const path = fill(`${recipe.lead ? '{/:§}' : ''}${recipe.pieces.join('')}${recipe.end}`);
  const pathNames = names.length;
  const host = recipe.host === undefined ? undefined : fill(recipe.host);
  const given: Record<string, string> = {};
  const read: Record<string, string> = {};
  const samples: Record<string, readonly string[]> = {};
  names.forEach((name, i) => {
    const choice = recipe.requirements[i % recipe.requirements.length];
    if (choice === null || choice === undefined) return;
    const pool = i < pathNames ? PATH_REQUIREMENTS : HOST_REQUIREMENTS;
    const [written, meaning, fitting] = pool[choice % pool.length]!;
    given[name] = written;
    read[name] = meaning;
    samples[name] = fitting;
  });
  const defaults: Record<string, unknown> =
    recipe.defaults === 'param' && names.length > 0 ? { [names[names.length - 1]!]: 'dflt' } : recipe.defaults === 'format' ? { _format: 'html' } : recipe.defaults === 'number' ? { n: 1 } : {};
  const name = recipe.rename === null || recipe.rename >= index ? `r${index}` : `r${recipe.rename}`;
  const options = { requirements: given, methods: recipe.methods, schemes: recipe.schemes, defaults, ...(host === undefined ? {} : { host }) };
  const source = `.add(${JSON.stringify(name)}, new Route(${JSON.stringify(path)}, ${JSON.stringify(options)}))`;
  try {
    const route = new Route(path, options);
    return { oracle: { name, path, host, methods: recipe.methods, schemes: recipe.schemes, defaults, requirements: read }, route, source, samples, written: given };
  } catch (error) {
    return new Error(`${source}: ${(error as Error).message}`);
  }
}

/** `recipe` with the path of `before` when it asks for it (its trailing slash toggled where the path ends with text). */
function siblingOf(recipe: RouteRecipe, before: RouteRecipe | undefined): RouteRecipe {
  if (recipe.sibling === null || before === undefined) return recipe;
  const end = recipe.sibling === 'toggled' && before.end === '' ? '/' : recipe.sibling === 'toggled' && before.end === '/' ? '' : before.end;
  return { ...recipe, lead: before.lead, pieces: before.pieces, end };
}

/** Routes the Route constructor refused, with how often: none is expected (every piece is valid). */
export const refused = new Map<string, number>();

/** The routes of a collection's recipes, those refused left out. */
export function specsOf(recipes: readonly RouteRecipe[]): Spec[] {
  const specs: Spec[] = [];
  recipes.forEach((recipe, index) => {
    const spec = specOf(siblingOf(recipe, recipes[index - 1]), index);
    if (spec instanceof Error) refused.set(spec.message, (refused.get(spec.message) ?? 0) + 1);
    else specs.push(spec);
  });
  return specs;
}

// Values a parameter is filled with: plain, separators, encodings good, lower-case and malformed, dots, Unicode.
const VALUES = [
  'a', 'ab', 'b', 'x', '12', '7', '123', 'v1', 'v12', 'x.y', 'a-b', 'a.b.c', 'EUR', '%E2%82%AC', 'caf%C3%A9', 'caf%c3%a9', 'é', 'a%20b',
  'a%2Fb', '%zz', '%E0%A4%A', 'x%', '.', '..', '%2E%2E', 'Ab', 'x/y', 'z', 'html', 'p.html', 'a,b', 'a@b', 'a_b', 'a+b', 'a:b', '%7C', 'a|b',
  'a%7Cb', 'x-', '-x', 'x.', 'getaSuffix', 'axb', 'end', 'a%41',
];
const MUTATIONS = ['toggle-slash', 'add-slash', 'slashes', 'cut', 'upper', 'lower-hex', 'encode-char', 'dot-segment', 'empty-segment', 'raw-unicode', 'malformed', 'empty'] as const;
type Mutation = (typeof MUTATIONS)[number];

const HOST_VALUES = ['a', 'ab', 'x1', '12', 'a-b', 'www', 'A'];

export const requestRecipe = fc.record({
  // Whether the method, scheme, host and requirements are the route's own (else drawn at random).
  fit: fc.boolean(),
  port: fc.constantFrom('', '', ':8080'),
  // A request that fits the route but for its scheme, for the redirects to another scheme.
  ownScheme: fc.constantFrom(true, true, false),
  route: fc.nat(),
  variant: fc.nat(),
  values: fc.array(fc.nat(VALUES.length - 1), { minLength: 6, maxLength: 6 }),
  segments: fc.integer({ min: 1, max: 3 }),
  mutations: fc.array(fc.tuple(fc.constantFrom(...MUTATIONS), fc.nat()), { maxLength: 2 }),
  random: sometimes(fc.array(pathSegment, { minLength: 1, maxLength: 3 }), 8),
  method: fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PURGE', 'get'),
  host: fc.constantFrom('', 'example.com', 'EXAMPLE.COM:8080', 'a.example.com', 'Ab.Example.com', 'a-b.example.com', 'x.y.example.com', '12.example.com', 'a.b.com', 'localhost', '[::1]:8000', 'www.example.com'),
  scheme: fc.constantFrom<'http' | 'https'>('http', 'https'),
});
export type RequestRecipe = typeof requestRecipe extends fc.Arbitrary<infer T> ? T : never;

// A path (or host) of one of the routes' variants, its parameters filled in: values that fit their
// requirements when `samples` are given, else any of `values`.
function instantiate(variant: Variant, recipe: RequestRecipe, values: readonly string[], samples: Readonly<Record<string, readonly string[]>> | null): string {
  let path = '';
  let k = 0;
  const value = (name: string): string => {
    const n = recipe.values[k++ % recipe.values.length]!;
    const fitting = samples?.[name];
    return fitting === undefined ? values[n % values.length]! : fitting[n % fitting.length]!;
  };
  for (const item of variant.items) {
    if (item.kind === 'text') path += item.value;
    else if (item.kind === 'param') path += value(item.name);
    else if (item.kind === 'wildcard') {
      const segments: string[] = [];
      for (let s = 0; s < recipe.segments; s++) segments.push(value(item.name));
      path += segments.join('/');
    }
  }
  return path;
}

function mutate(path: string, [mutation, n]: readonly [Mutation, number]): string {
  if (path === '') return path;
  switch (mutation) {
    case 'toggle-slash':
      return path.endsWith('/') ? path.replace(/\/+$/, '') : `${path}/`;
    case 'add-slash':
      return `${path}/`;
    case 'slashes':
      return `${path}//`;
    case 'cut':
      return path.slice(0, 1 + (n % Math.max(1, path.length)));
    case 'upper':
      return path.toUpperCase();
    case 'lower-hex':
      return path.replace(/%[0-9A-F]{2}/g, (encoding) => encoding.toLowerCase());
    case 'encode-char': {
      const at = n % path.length;
      const char = path[at]!;
      return /[A-Za-z0-9.\-_~]/.test(char) ? `${path.slice(0, at)}%${char.charCodeAt(0).toString(16).toUpperCase()}${path.slice(at + 1)}` : path;
    }
    case 'dot-segment':
      return path.replace('/', n % 2 === 0 ? '/./' : '/../');
    case 'empty-segment': {
      const slashes = [...path.matchAll(/\//g)].map((found) => found.index);
      const at = slashes[n % slashes.length] ?? 0;
      return `${path.slice(0, at)}/${path.slice(at)}`;
    }
    case 'raw-unicode':
      return path.replace(/%C3%A9/gi, 'é').replace(/%E2%82%AC/gi, '€');
    case 'malformed':
      return `${path}${n % 2 === 0 ? '%zz' : '%E0%A4%A'}`;
    case 'empty':
      return '';
  }
}

/** A request near one of the routes (or a random one), as both matchers are given it. */
export function requestOf(specs: readonly Spec[], recipe: RequestRecipe): { path: string; method: string; host: string; scheme: 'http' | 'https' } {
  if (recipe.random !== null || specs.length === 0) return { path: `/${(recipe.random ?? ['x']).join('/')}`, method: recipe.method, host: recipe.host, scheme: recipe.scheme };
  const spec = specs[recipe.route % specs.length]!;
  const { oracle } = spec;
  const samples = recipe.fit ? spec.samples : null;
  const variants = variantsOf(oracle.path, '/', oracle.requirements);
  let path = instantiate(variants[recipe.variant % variants.length]!, recipe, VALUES, samples) || '/';
  for (const mutation of recipe.mutations) path = mutate(path, mutation);
  if (!recipe.fit) return { path, method: recipe.method, host: recipe.host, scheme: recipe.scheme };
  const method = oracle.methods.length === 0 ? recipe.method : oracle.methods[recipe.variant % oracle.methods.length]!.toUpperCase();
  const scheme = oracle.schemes.length === 0 || !recipe.ownScheme ? recipe.scheme : (oracle.schemes[recipe.variant % oracle.schemes.length] as 'http' | 'https');
  let host = recipe.host;
  if (oracle.host !== undefined) {
    const hosts = variantsOf(oracle.host, '.', oracle.requirements);
    host = instantiate(hosts[recipe.route % hosts.length]!, recipe, HOST_VALUES, samples) + recipe.port;
  }
  return { path, method, host, scheme };
}


/** A request near the routes as RouterListener gets it: a query, a Referer, `OPTIONS *` now and then. */
export const listenerRequestRecipe = fc.record({
  request: requestRecipe,
  query: fc.constantFrom('', '', '', '?', '?q=1', '?a=1&b=%C3%A9', '?q=<b>"x"', '?a=%zz&b=%', '?q=é €', '?x=a/b?c'),
  referer: fc.constantFrom(undefined, undefined, '', 'http://r.test/from?x=1'),
  star: fc.constantFrom(false, false, false, false, false, false, false, false, false, true),
});
export type ListenerRequestRecipe = typeof listenerRequestRecipe extends fc.Arbitrary<infer T> ? T : never;

/** The request of a recipe, as both listeners are given it. */
export function listenerRequestOf(specs: readonly Spec[], recipe: ListenerRequestRecipe): OracleRequest {
  const { path, method, host, scheme } = requestOf(specs, recipe.request);
  if (recipe.star) return { method: 'OPTIONS', scheme, hostHeader: host || 'localhost', target: '*' };
  return { method: method.toUpperCase(), scheme, hostHeader: host || 'localhost', target: `${path || '/'}${recipe.query}`, referer: recipe.referer };
}
