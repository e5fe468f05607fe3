// Differential test of RouteCollection's group methods (addPrefix, addNamePrefix, addDefaults,
// addRequirements, setHost, setSchemes, setMethods, addCollection, and Route.with on one route):
// a random group of routes (the shapes of url-matcher-oracle.test.ts) is changed by random calls
// and added to an app's collection, then changed again (which must not reach the app's). The
// result must be the same routes written out flat as README "Route groups" says each call writes
// them: the same names in the same order, each route as `new Route()` of its path and options
// would make it; and UrlMatcher on it must answer requests as the reference matcher does on the
// flat routes. A call that makes a route invalid changes none (an InvalidRouteError). Fixed seed;
// FC_SEED=<n> replays a failure, FC_RUNS=<n> runs more.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidRouteError, Route, RouteCollection, UrlMatcher, type LookupResult } from '../../../lib/routing/index.js';
import { propertyParameters } from '../../arbitraries.js';
import { OracleMatcher, type OracleOutcome, type OracleRoute } from '../../routing-oracle.js';
import { refused, requestOf, requestRecipe, routeRecipe, specsOf, type Spec } from '../../routing-arbitraries.js';

/** A route written out flat: requirements as given and as the oracle reads them. */
interface Flat {
  readonly name: string;
  readonly path: string;
  readonly host: string | undefined;
  readonly methods: readonly string[];
  readonly schemes: readonly string[];
  readonly defaults: Readonly<Record<string, unknown>>;
  readonly requirements: Readonly<Record<string, readonly [written: string, read: string]>>;
}

function flatOf(spec: Spec): Flat {
  const { name, path, host, methods, schemes, defaults } = spec.oracle;
  const requirements = Object.fromEntries(Object.entries(spec.written).map(([param, written]) => [param, [written, spec.oracle.requirements[param]!] as const]));
  return { name, path, host, methods, schemes, defaults, requirements };
}

function routeOf(flat: Flat): Route {
  const requirements = Object.fromEntries(Object.entries(flat.requirements).map(([param, [written]]) => [param, written]));
  return new Route(flat.path, { host: flat.host ?? '', methods: [...flat.methods], schemes: [...flat.schemes], defaults: { ...flat.defaults }, requirements });
}

function oracleOf(flat: Flat): OracleRoute {
  const requirements = Object.fromEntries(Object.entries(flat.requirements).map(([param, [, read]]) => [param, read]));
  return { name: flat.name, path: flat.path, host: flat.host, methods: flat.methods, schemes: flat.schemes, defaults: flat.defaults, requirements };
}

// Requirements as given and as read; `''` is refused (README: a requirement left empty is an InvalidRouteError).
const REQUIREMENTS: Readonly<Record<string, string>> = { '\\d+': '\\d+', 'en|fr': 'en|fr', '[a-z]+': '[a-z]+', '': '' };
const requirementsArb = fc.constantFrom<Record<string, string>>({}, {}, { lang: 'en|fr' }, { p0: '\\d+' }, { p1: '[a-z]+', tenant: '[a-z]+' }, { p0: '' });
const defaultsArb = fc.constantFrom<Record<string, unknown>>({}, {}, { lang: 'en' }, { _format: 'json' }, { p0: 'd' });

/** One call on the group. */
const callArb = fc.oneof(
  fc.record({ call: fc.constant('addPrefix' as const), prefix: fc.constantFrom('/api', ' /v1/ ', '/', '', '/:lang', '/:lang', '{/:loc}', '/a b', '/café', '/api/'), defaults: defaultsArb, requirements: requirementsArb }),
  fc.record({ call: fc.constant('addNamePrefix' as const), prefix: fc.constantFrom('api_', 'g.') }),
  fc.record({ call: fc.constant('addDefaults' as const), defaults: defaultsArb }),
  fc.record({ call: fc.constant('addRequirements' as const), requirements: requirementsArb }),
  fc.record({ call: fc.constant('setHost' as const), host: fc.constantFrom('', 'example.com', ':tenant.example.com', '{:tenant.}example.com'), defaults: defaultsArb, requirements: requirementsArb }),
  fc.record({ call: fc.constant('setSchemes' as const), schemes: fc.constantFrom([], ['https'], ['http', 'https']) }),
  fc.record({ call: fc.constant('setMethods' as const), methods: fc.constantFrom([], ['GET'], ['POST', 'put']) }),
  // Route.with() on one route, which moves it last: a later call may then be refused for that route alone (atomicity).
  fc.record({
    call: fc.constant('with' as const),
    route: fc.nat(),
    changes: fc.constantFrom<Record<string, unknown>>({ methods: ['PUT'] }, { host: '' }, { path: '/w/:lang' }, { path: '/w/:lang' }, { path: '/t/:tenant' }, { schemes: undefined }, { defaults: { d: 1 } }, { host: 'w.example.com', schemes: ['http'] }),
  }),
);
type Call = typeof callArb extends fc.Arbitrary<infer T> ? T : never;

const merge = (flat: Flat, defaults: Readonly<Record<string, unknown>>, requirements: Readonly<Record<string, string>>): Flat => ({
  ...flat,
  defaults: { ...flat.defaults, ...defaults },
  requirements: { ...flat.requirements, ...Object.fromEntries(Object.entries(requirements).map(([param, written]) => [param, [written, REQUIREMENTS[written]!] as const])) },
});

/** The parameter names of a pattern (`:name`, `:"name"`, `*name`). */
function namesOf(pattern: string): string[] {
  return [...pattern.matchAll(/[:*](?:"([^"]+)"|(\w+))/g)].map((found) => found[1] ?? found[2]!);
}

/** README's reading of each call, on the routes written out flat; null where the call is refused. */
function applied(flats: readonly Flat[], call: Call): Flat[] | null {
  // A requirement left empty is refused, whichever route it is for: every route of the group is remade.
  const refusesEmpty = (requirements: Readonly<Record<string, string>>): boolean => flats.length > 0 && Object.values(requirements).includes('');
  switch (call.call) {
    case 'addPrefix': {
      if (refusesEmpty(call.requirements)) return null;
      const trimmed = call.prefix.trim().replace(/^\/+|\/+$/g, '');
      const head = trimmed === '' ? '' : trimmed.startsWith('{/') ? trimmed : `/${trimmed}`;
      // A prefix parameter named as one of a route's path or host is refused (a prefix added twice).
      const names = namesOf(head);
      if (flats.some((flat) => names.some((name) => namesOf(`${flat.path} ${flat.host ?? ''}`).includes(name)))) return null;
      // A route `/` becomes `/api/`.
      return flats.map((flat) => merge({ ...flat, path: head === '' ? flat.path : `${head}${flat.path === '/' ? '/' : flat.path}` }, call.defaults, call.requirements));
    }
    case 'addNamePrefix':
      return flats.map((flat) => ({ ...flat, name: `${call.prefix}${flat.name}` }));
    case 'addDefaults':
      return flats.map((flat) => merge(flat, call.defaults, {}));
    case 'addRequirements':
      return refusesEmpty(call.requirements) ? null : flats.map((flat) => merge(flat, {}, call.requirements));
    case 'setHost':
      // A host parameter that is one of a route's path too is refused (for that route: so for all of them).
      if (flats.some((flat) => namesOf(call.host).some((name) => namesOf(flat.path).includes(name)))) return null;
      return refusesEmpty(call.requirements) ? null : flats.map((flat) => merge({ ...flat, host: call.host === '' ? undefined : call.host }, call.defaults, call.requirements));
    case 'setSchemes':
      return flats.map((flat) => ({ ...flat, schemes: call.schemes }));
    case 'setMethods':
      return flats.map((flat) => ({ ...flat, methods: call.methods.map((method) => method.toUpperCase()) }));
    case 'with': {
      if (flats.length === 0) return [...flats];
      // The changed route is added again under its name: it moves last.
      const at = call.route % flats.length;
      const flat = flats[at]!;
      const { path, host, methods, schemes, defaults } = call.changes as Partial<Flat>;
      const changed: Flat = {
        ...flat,
        ...(path === undefined ? {} : { path }),
        ...('host' in call.changes ? { host: host === '' ? undefined : host } : {}),
        ...(methods === undefined ? {} : { methods }),
        ...(schemes === undefined ? {} : { schemes }),
        ...(defaults === undefined ? {} : { defaults }),
      };
      // A parameter in both its host and its path makes the route invalid: Route.with() throws, nothing is added.
      if (namesOf(changed.host ?? '').some((name) => namesOf(changed.path).includes(name))) return null;
      return [...flats.slice(0, at), ...flats.slice(at + 1), changed];
    }
  }
}

/** The call made on a RouteCollection. */
function make(group: RouteCollection, call: Call): void {
  switch (call.call) {
    case 'addPrefix':
      group.addPrefix(call.prefix, call.defaults, call.requirements);
      return;
    case 'addNamePrefix':
      group.addNamePrefix(call.prefix);
      return;
    case 'addDefaults':
      group.addDefaults(call.defaults);
      return;
    case 'addRequirements':
      group.addRequirements(call.requirements);
      return;
    case 'setHost':
      group.setHost(call.host, call.defaults, call.requirements);
      return;
    case 'setSchemes':
      group.setSchemes(call.schemes);
      return;
    case 'setMethods':
      group.setMethods(call.methods);
      return;
    case 'with': {
      const names = [...group].map(([name]) => name);
      if (names.length === 0) return;
      const name = names[call.route % names.length]!;
      group.add(name, group.get(name)!.with(call.changes));
    }
  }
}

/** A name added again replaces the route and moves it last. */
function added(flats: readonly Flat[], more: readonly Flat[]): Flat[] {
  const result = [...flats];
  for (const flat of more) {
    const at = result.findIndex((each) => each.name === flat.name);
    if (at !== -1) result.splice(at, 1);
    result.push(flat);
  }
  return result;
}

const describe = (route: Route): Record<string, unknown> => ({ path: route.path, host: route.host, methods: route.methods, schemes: route.schemes, defaults: route.defaults, requirements: route.requirements });

function outcomeOf(result: LookupResult): OracleOutcome {
  const { route: _route, cause: _cause, ...rest } = result as LookupResult & { route?: unknown; cause?: unknown };
  return JSON.parse(JSON.stringify(rest)) as OracleOutcome;
}

test('a group changed by its methods and added to a collection is the same routes written out flat', () => {
  let calls = 0;
  let refusals = 0;
  fc.assert(
    fc.property(
      fc.array(routeRecipe, { maxLength: 3 }),
      fc.array(routeRecipe, { minLength: 1, maxLength: 4 }),
      fc.array(callArb, { maxLength: 5 }),
      fc.array(callArb, { maxLength: 2 }),
      fc.array(requestRecipe, { minLength: 1, maxLength: 8 }),
      (appRecipes, groupRecipes, before, after, requestRecipes) => {
        const appSpecs = specsOf(appRecipes);
        const groupSpecs = specsOf(groupRecipes);
        const app = new RouteCollection();
        for (const spec of appSpecs) app.add(spec.oracle.name, spec.route);
        const group = new RouteCollection();
        for (const spec of groupSpecs) group.add(spec.oracle.name, spec.route);
        let flats = added([], groupSpecs.map(flatOf));
        const log: string[] = [];
        let groupAtAdd: Flat[] = [];
        for (const [k, call] of [...before, ...after].entries()) {
          if (k === before.length) {
            app.addCollection(group);
            groupAtAdd = flats;
          }
          const expected = applied(flats, call);
          log.push(JSON.stringify(call));
          let error: unknown = null;
          const snapshot = [...group];
          try {
            make(group, call);
          } catch (thrown) {
            error = thrown;
          }
          const where = `${log.join('\n')}\ngroup: ${groupSpecs.map((spec) => spec.source).join('\n  ')}`;
          if (expected === null) {
            assert.instance(error, InvalidRouteError, where);
            // None of the routes is changed.
            assert.equal([...group], snapshot, where);
            refusals++;
          } else {
            assert.is(error, null, where);
            flats = expected;
          }
          calls++;
        }
        if (after.length === 0) {
          app.addCollection(group);
          groupAtAdd = flats;
        }
        // The app's routes: its own, then the group's as they were when added (later calls stay the group's).
        const expected = added(added([], appSpecs.map(flatOf)), groupAtAdd);
        const report = `calls: ${log.join(', ')}\napp: ${appSpecs.map((spec) => spec.source).join(' ')}\ngroup: ${groupSpecs.map((spec) => spec.source).join(' ')}`;
        assert.equal([...app].map(([name]) => name), expected.map((flat) => flat.name), report);
        const flatRoutes = expected.map(routeOf);
        [...app].forEach(([, route], i) => assert.equal(describe(route), describe(flatRoutes[i]!), `${report}\nroute ${expected[i]!.name}`));
        // And they match as the flat routes do.
        const matcher = new UrlMatcher(app);
        const oracle = new OracleMatcher(expected.map(oracleOf));
        const specs: Spec[] = expected.map((flat, i) => ({ oracle: oracleOf(flat), route: flatRoutes[i]!, source: flat.name, samples: {}, written: {} }));
        for (const recipe of requestRecipes) {
          const request = requestOf(specs, recipe);
          assert.equal(outcomeOf(matcher.lookup(request.path, request)), oracle.lookup(request.path, request), `${report}\nrequest: ${JSON.stringify(request)}`);
        }
      },
    ),
    propertyParameters(500),
  );
  assert.equal([...refused.keys()], [], 'routes refused');
  assert.ok(calls > 500 && refusals > 10, `${calls} calls, ${refusals} refused`);
});

test.run();
