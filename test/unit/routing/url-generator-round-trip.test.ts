// Round trip of the generator through the matcher: for random routes (the shapes of the differential
// test, test/routing-arbitraries.ts) and values (Unicode, reserved characters, `/` in a wildcard's
// segments and in a parameter, values fitting each requirement, optional groups given or left out),
// UrlGenerator.generate() either returns a URL that the matcher maps back to the same route and the
// same values, or refuses with the errors README names (InvalidParameterError for a value that would
// not read back, MissingMandatoryParametersError for a group that cannot be left out). Fixed seed;
// FC_SEED=<n> replays a failure, FC_RUNS=<n> runs more.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidParameterError, MissingMandatoryParametersError, RouteCollection, UrlGenerator, UrlMatcher } from '../../../lib/routing/index.js';
import { propertyParameters } from '../../arbitraries.js';
import { variantsOf } from '../../routing-oracle.js';
import { hostRouteRecipe, routeRecipe, specOf, type RouteRecipe } from '../../routing-arbitraries.js';

// Any text (graphemes, so no lone surrogate), and values that have tripped URL builders before.
const anyValue = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
  fc.constantFrom('a/b', 'é', '€', 'a b', '?', '#', '%', '%41', 'a.b', '-', 'x.html', '|', '😀', 'a+b', 'ü/ö', ':', '@', ';', '=', '&', 'x-y.z', 'get', '~'),
);
// Host values, dotted ones for the requirements that take dots, in capitals too (hosts are read lower-cased).
const hostValue = fc.constantFrom('a', 'ab', 'x1', 'a-b', '12', 'a.b', 'x.y.z', 'AB', 'a_b');

const valueRecipe = fc.record({
  /** Per parameter: whether an optional one is given, and which value. */
  given: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
  fitting: fc.array(fc.nat(), { minLength: 12, maxLength: 12 }),
  values: fc.array(anyValue, { minLength: 12, maxLength: 12 }),
  hosts: fc.array(hostValue, { minLength: 12, maxLength: 12 }),
  anyHost: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
  segments: fc.array(fc.array(anyValue, { minLength: 1, maxLength: 3 }), { minLength: 12, maxLength: 12 }),
  /** Per parameter: whether it is given by the context's `parameters` instead of to generate(). */
  inContext: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
});

/** What a round trip gave: a URL that matched back, or the error generate() refused with. */
type Trip = { kind: 'generated' } | { kind: 'refused'; error: Error } | { kind: 'skipped' };

// Generates the route of `recipe` for `values`, and checks the URL against the matcher.
function roundTrip(recipe: RouteRecipe, values: typeof valueRecipe extends fc.Arbitrary<infer T> ? T : never): Trip {
      const spec = specOf({ ...recipe, rename: null }, 0);
      if (spec instanceof Error) return { kind: 'skipped' };
      const { oracle, route } = spec;
      const collection = new RouteCollection().add(oracle.name, route);
      // The names in the pattern, and those every combination of optional groups writes.
      const pathVariants = variantsOf(oracle.path, '/', {});
      const hostVariants = oracle.host === undefined ? [] : variantsOf(oracle.host, '.', {});
      const inEvery = (variants: typeof pathVariants): string[] => variants.map((variant) => [...variant.names]).reduce((all, names) => all.filter((name) => names.includes(name)), variants[0]?.names.slice() ?? []);
      const mandatory = new Set([...inEvery(pathVariants), ...inEvery(hostVariants)]);
      const hostNames = new Set(hostVariants.flatMap((variant) => variant.names));
      const wildcards = new Set(pathVariants.flatMap((variant) => [...variant.wildcards]));
      const names = [...new Set([...pathVariants, ...hostVariants].flatMap((variant) => variant.names))].sort();
      const params: Record<string, unknown> = {};
      names.forEach((name, i) => {
        if (!mandatory.has(name) && !values.given[i]) return;
        const fitting = spec.samples[name]?.filter((sample) => !sample.includes('%zz'));
        // A host value fits its requirement one time in two: the others may hold dots where it takes none.
        if (fitting !== undefined && !(hostNames.has(name) && values.anyHost[i])) {
          const sample = decodeURIComponent(fitting[values.fitting[i]! % fitting.length]!);
          params[name] = wildcards.has(name) ? sample.split('/') : sample;
        } else if (hostNames.has(name)) params[name] = values.hosts[i];
        else params[name] = wildcards.has(name) ? values.segments[i] : values.values[i];
      });
      // The same values, some of them given by the context's parameters instead (Symfony's RequestContext parameters):
      // the same URL, or the same refusal, as with all of them given to generate().
      const fromContext: Record<string, unknown> = {};
      const toGenerate: Record<string, unknown> = {};
      names.forEach((name, i) => {
        if (Object.hasOwn(params, name)) (values.inContext[i] ? fromContext : toGenerate)[name] = params[name];
      });
      const outcome = (generate: () => string): string => {
        try {
          return generate();
        } catch (error) {
          return `${(error as Error).name}: ${(error as Error).message}`;
        }
      };
      const alone = outcome(() => new UrlGenerator(collection, { host: 'example.com' }).generate(oracle.name, params));
      const withContext = outcome(() => new UrlGenerator(collection, { host: 'example.com', parameters: fromContext }).generate(oracle.name, toGenerate));
      assert.is(withContext, alone, `${spec.source}\ncontext parameters: ${JSON.stringify(fromContext)}\ngiven: ${JSON.stringify(toGenerate)}`);
      let url: string;
      try {
        url = new UrlGenerator(collection, { host: 'example.com' }).generate(oracle.name, params);
      } catch (error) {
        if (error instanceof InvalidParameterError || error instanceof MissingMandatoryParametersError) return { kind: 'refused', error };
        throw error;
      }
      // Relative, or absolute when the route's host or scheme is not the context's.
      const absolute = /^(https?):\/\/([^/]*)(.*)$/.exec(url);
      const path = (absolute === null ? url : absolute[3]!).replace(/[?#].*$/, '');
      const context = {
        method: oracle.methods[0]?.toUpperCase() ?? 'GET',
        host: absolute === null ? 'example.com' : absolute[2]!,
        scheme: (absolute?.[1] ?? oracle.schemes[0] ?? 'http') as 'http' | 'https',
      };
      const result = new UrlMatcher(collection).lookup(path, context);
      const report = `${spec.source}\nparams: ${JSON.stringify(params)}\nurl: ${url}\nlookup: ${JSON.stringify({ ...result, route: undefined })}`;
      assert.is(result.kind, 'match', report);
      if (result.kind !== 'match') return { kind: 'skipped' };
      assert.is(result.name, oracle.name, report);
      // Hosts are read lower-cased (README): a host value comes back so.
      const expected = Object.fromEntries(Object.entries({ ...oracle.defaults, ...params }).map(([name, value]) => [name, hostNames.has(name) && typeof value === 'string' ? value.toLowerCase() : value]));
      assert.equal({ ...result.params }, expected, report);
      return { kind: 'generated' };
}

test('a generated URL is matched back to its route and the values given, or refused with InvalidParameterError or MissingMandatoryParametersError', () => {
  let generated = 0;
  let tried = 0;
  fc.assert(
    fc.property(routeRecipe, valueRecipe, (recipe, values) => {
      const trip = roundTrip(recipe, values);
      if (trip.kind !== 'skipped') tried++;
      if (trip.kind === 'generated') generated++;
    }),
    propertyParameters(2000),
  );
  // Not vacuous: most value sets give a URL.
  assert.ok(generated > tried / 2, `${generated} URLs generated of ${tried} tried`);
});

test('a generated host is matched back to the values given, or refused, for hosts of several parameters taking dots, optional groups and separators', () => {
  let generated = 0;
  let misread = 0;
  fc.assert(
    fc.property(hostRouteRecipe, valueRecipe, (recipe, values) => {
      const trip = roundTrip(recipe, values);
      if (trip.kind === 'generated') generated++;
      if (trip.kind === 'refused' && /would (give|read back)/.test(trip.error.message)) misread++;
    }),
    propertyParameters(1000),
  );
  // Not vacuous: hosts are generated, and some are refused for what the matcher would read back.
  assert.ok(generated > 300 && misread > 10, `${generated} hosts generated, ${misread} refused as misread`);
});

test.run();
