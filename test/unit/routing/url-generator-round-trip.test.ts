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
import { routeRecipe, specOf } from '../../routing-arbitraries.js';

// Any text (graphemes, so no lone surrogate), and values that have tripped URL builders before.
const anyValue = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
  fc.constantFrom('a/b', 'é', '€', 'a b', '?', '#', '%', '%41', 'a.b', '-', 'x.html', '|', '😀', 'a+b', 'ü/ö', ':', '@', ';', '=', '&', 'x-y.z', 'get', '~'),
);
const hostValue = fc.constantFrom('a', 'ab', 'x1', 'a-b', '12');

const valueRecipe = fc.record({
  /** Per parameter: whether an optional one is given, and which value. */
  given: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
  fitting: fc.array(fc.nat(), { minLength: 12, maxLength: 12 }),
  values: fc.array(anyValue, { minLength: 12, maxLength: 12 }),
  hosts: fc.array(hostValue, { minLength: 12, maxLength: 12 }),
  segments: fc.array(fc.array(anyValue, { minLength: 1, maxLength: 3 }), { minLength: 12, maxLength: 12 }),
});

test('a generated URL is matched back to its route and the values given, or refused with InvalidParameterError or MissingMandatoryParametersError', () => {
  let generated = 0;
  let tried = 0;
  fc.assert(
    fc.property(routeRecipe, valueRecipe, (recipe, values) => {
      const spec = specOf({ ...recipe, rename: null }, 0);
      if (spec instanceof Error) return;
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
        if (fitting !== undefined) {
          const sample = decodeURIComponent(fitting[values.fitting[i]! % fitting.length]!);
          params[name] = wildcards.has(name) ? sample.split('/') : sample;
        } else if (hostNames.has(name)) params[name] = values.hosts[i];
        else params[name] = wildcards.has(name) ? values.segments[i] : values.values[i];
      });
      tried++;
      let url: string;
      try {
        url = new UrlGenerator(collection, { host: 'example.com' }).generate(oracle.name, params);
      } catch (error) {
        if (error instanceof InvalidParameterError || error instanceof MissingMandatoryParametersError) return;
        throw error;
      }
      generated++;
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
      if (result.kind !== 'match') return;
      assert.is(result.name, oracle.name, report);
      assert.equal({ ...result.params }, { ...oracle.defaults, ...params }, report);
    }),
    propertyParameters(2000),
  );
  // Not vacuous: most value sets give a URL.
  assert.ok(generated > tried / 2, `${generated} URLs generated of ${tried} tried`);
});

test.run();
