// Differential test of the compiled matcher (static map, generated search, tree walk, TailMatcher)
// against a naive reference matcher written from README "Routing" (test/routing-oracle.ts): random
// route collections (static text, parameters, separators, optional groups, wildcards, requirements,
// defaults, methods, schemes, hosts with parameters, names added twice) and requests made near
// them (parameters filled in, then trailing slashes toggled, segments cut, percent-encodings valid,
// lower-case and malformed, dot and empty segments, raw Unicode, case changed), over every method,
// host and scheme. The whole outcome must agree: route and decoded parameters, redirect target, 405
// and its Allow, 404 and the path it names, 400 for a malformed encoding. Fixed seed; FC_SEED=<n>
// replays a failure, FC_RUNS=<n> runs more.
import fc from 'fast-check';
import { match as ptrMatch } from 'path-to-regexp';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RouteCollection, RoutingError, UrlMatcher, type LookupResult } from '../../../lib/routing/index.js';
import { propertyParameters } from '../../arbitraries.js';
import { OracleMatcher, variantsOf, type OracleOutcome } from '../../routing-oracle.js';
import { refused, requestOf, requestRecipe, routeRecipe, routeRecipeOf, specOf, specsOf, type Spec } from '../../routing-arbitraries.js';

/** The outcome without the Route object and the error's cause, as the oracle gives it. */
function outcomeOf(result: LookupResult): OracleOutcome {
  switch (result.kind) {
    case 'match':
      return { kind: 'match', name: result.name, params: { ...result.params } };
    case 'redirect':
      return { kind: 'redirect', name: result.name, params: { ...result.params }, redirect: { ...result.redirect } };
    case 'method-not-allowed':
      return { kind: 'method-not-allowed', allowedMethods: [...result.allowedMethods] };
    case 'not-found':
      return { kind: 'not-found', path: result.path };
    case 'malformed-path':
      return { kind: 'malformed-path', parameter: result.parameter, path: result.path };
  }
}

/** What match() must throw for a miss: the outcome's error, its status, and the message or Allow the outcome implies. */
function checkMatchAgrees(matcher: UrlMatcher, request: ReturnType<typeof requestOf>, expected: OracleOutcome): void {
  let error: unknown = null;
  try {
    matcher.match(request.path, request);
  } catch (thrown) {
    error = thrown;
  }
  if (expected.kind === 'match' || expected.kind === 'redirect') {
    assert.is(error, null, 'match()');
    return;
  }
  assert.ok(error instanceof RoutingError, 'match()');
  const routingError = error as RoutingError & { status: number; headers: Record<string, string> };
  if (expected.kind === 'not-found') {
    assert.is(routingError.status, 404, 'match()');
    assert.is(routingError.message, `No routes found for "${expected.path}".`, 'match()');
  } else if (expected.kind === 'method-not-allowed') {
    assert.is(routingError.status, 405, 'match()');
    assert.is(routingError.headers.allow, expected.allowedMethods.join(', '), 'match()');
  } else {
    assert.is(routingError.status, 400, 'match()');
    assert.ok(routingError.message.includes(`"${expected.parameter}"`), 'match()');
  }
}

/**
 * explain() (the profiler's router panel) reads each route apart from the tree: its path and host
 * checks must be the oracle's, and it must end on the route that matches, and only then.
 */
function checkExplainAgrees(matcher: UrlMatcher, oracle: OracleMatcher, request: ReturnType<typeof requestOf>, expected: OracleOutcome): void {
  const traces = matcher.explain(request.path || '/', request);
  const checks = oracle.checks(request.path || '/', request.host);
  traces.forEach((trace, i) => {
    assert.equal({ name: trace.name, path: trace.checks.path, host: trace.checks.host }, checks[i], `explain() ${trace.name}`);
  });
  const last = traces.at(-1);
  if (expected.kind === 'match') assert.equal([last?.name, last?.verdict], [expected.name, 'match'], 'explain()');
  else if (expected.kind !== 'malformed-path') assert.ok(traces.every((trace) => trace.verdict !== 'match'), 'explain()');
}

const seen = new Map<string, number>();

test('the compiled matcher answers every request as the reference matcher does', () => {
  const collectionArb = fc.array(routeRecipe, { minLength: 1, maxLength: 8 });
  fc.assert(
    fc.property(collectionArb, fc.array(requestRecipe, { minLength: 1, maxLength: 20 }), (recipes, requestRecipes) => {
      const specs = specsOf(recipes);
      const collection = new RouteCollection();
      for (const spec of specs) collection.add(spec.oracle.name, spec.route);
      const matcher = new UrlMatcher(collection);
      const oracle = new OracleMatcher(specs.map((spec) => spec.oracle));
      for (const recipe of requestRecipes) {
        const request = requestOf(specs, recipe);
        const expected = oracle.lookup(request.path, request);
        const actual = outcomeOf(matcher.lookup(request.path, request));
        const report = (): string =>
          [
            'routes: new RouteCollection()',
            ...specs.map((spec) => `  ${spec.source}`),
            `request: ${JSON.stringify(request)}`,
            `oracle:  ${JSON.stringify(expected)}`,
            `matcher: ${JSON.stringify(actual)}`,
          ].join('\n');
        // The report (the routes as code, the request, both outcomes) is written only for a failure.
        try {
          assert.equal(actual, expected, 'lookup()');
          checkMatchAgrees(matcher, request, expected);
          checkExplainAgrees(matcher, oracle, request, expected);
        } catch (error) {
          throw new Error(`${(error as Error).message}\n${report()}`, { cause: error });
        }
        const key = expected.kind === 'redirect' ? `redirect${expected.redirect.scheme === undefined ? '' : ' scheme'}` : expected.kind;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
    }),
    propertyParameters(2000),
  );
  // Every pattern made of the pieces is valid as README describes them, and every kind of outcome was compared.
  assert.equal([...refused.keys()], [], 'routes refused');
  for (const kind of ['match', 'redirect', 'redirect scheme', 'method-not-allowed', 'not-found', 'malformed-path']) {
    assert.ok((seen.get(kind) ?? 0) >= 10, `only ${seen.get(kind) ?? 0} outcomes of kind ${kind} compared: ${JSON.stringify([...seen])}`);
  }
});

// Where README's semantics and path-to-regexp's own match() coincide (no requirement; each parameter
// ending a segment, whichever groups are written; at most one wildcard; text first), the oracle must read a path
// as match() does: a check of the oracle itself against the library the routes are written for.
function segmentsOnly(spec: Spec): boolean {
  if (Object.keys(spec.oracle.requirements).length > 0) return false;
  return variantsOf(spec.oracle.path, '/', {}).every(({ items }) => {
    // A pattern that is one optional group is `/` without it (README), path-to-regexp's the empty path.
    if (items.find((item) => item.kind !== 'skipped')?.kind !== 'text') return false;
    if (items.filter((item) => item.kind === 'wildcard').length > 1) return false;
    return items.every((item, at) => {
      if (item.kind !== 'param' && item.kind !== 'wildcard') return true;
      for (const next of items.slice(at + 1)) {
        if (next.kind === 'skipped' && next.opens.split('').every((char) => char === '/')) continue;
        return next.kind === 'text' && next.value.startsWith('/');
      }
      return true;
    });
  });
}

const segmentRecipe = routeRecipeOf(['/books', '/café', '/a b', '/x.y', '/:§', '{/:§}', '/:§{/:§}', '/x{/:§{/:§}}', '/:§.html'], ['/*§', '/*§/end', '/']);

test('the oracle reads a path as path-to-regexp\'s match() does where README\'s semantics are that library\'s', () => {
  let compared = 0;
  fc.assert(
    fc.property(segmentRecipe, fc.array(requestRecipe, { minLength: 1, maxLength: 10 }), (recipe, requestRecipes) => {
      const spec = specOf({ ...recipe, requirements: recipe.requirements.map(() => null), rename: null }, 0);
      if (spec instanceof Error || !segmentsOnly(spec)) return;
      const oracle = new OracleMatcher([spec.oracle]);
      const library = ptrMatch(spec.oracle.path, { sensitive: true, trailing: false, decode: false, encodePath: encodePathText });
      for (const recipe of requestRecipes) {
        const { path } = requestOf([spec], recipe);
        if (path === '') continue;
        const found = library(path);
        assert.equal(oracle.rawPathParams(spec.oracle.name, path), found === false ? null : { ...found.params }, `${spec.source} ${path}`);
        compared++;
      }
    }),
    propertyParameters(1000),
  );
  assert.ok(compared > 300, `only ${compared} paths compared`);
});

/** Route text as README says a route's path is compiled: each character a URL must encode in its UTF-8 encoding. */
function encodePathText(text: string): string {
  return [...text].map((char) => (/[A-Za-z0-9\-._~!$&'()*+,;=:@/]/.test(char) ? char : encodeURIComponent(char))).join('');
}

test.run();
