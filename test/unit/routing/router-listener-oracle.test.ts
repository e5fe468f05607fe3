// Differential test of RouterListener (the kernel.request listener) against the reference listener
// of test/routing-oracle.ts, written from README "Routing" on top of the reference matcher: random
// route collections and requests near them (the shapes of url-matcher-oracle.test.ts), with a query,
// a Referer, another spelling of the path (lower-case hex, encoded unreserved characters, dot
// segments written or encoded), ports in the Host header, and `OPTIONS *`. What the listener does
// must agree: the route and parameters put in the attributes, or the response (301 and its Location,
// the 200 of `OPTIONS *` and its Allow), or the HttpError (status, exact message, Allow, and the
// message of its cause). Fixed seed; FC_SEED=<n> replays a failure, FC_RUNS=<n> runs more.
import fc from 'fast-check';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ControllerResolver, EventDispatcher, HttpError, HttpKernel, Request, RequestEvent, RequestType } from '../../../kernel/index.js';
import { RouteCollection, RouterListener, UrlMatcher } from '../../../lib/routing/index.js';
import { propertyParameters } from '../../arbitraries.js';
import { OracleMatcher, listenerOutcome, type ListenerOutcome, type OracleRequest } from '../../routing-oracle.js';
import { listenerRequestOf, listenerRequestRecipe, refused, routeRecipe, specsOf } from '../../routing-arbitraries.js';

const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver());

/** What RouterListener did with `request`, in the reference listener's terms. */
function outcomeOf(listener: RouterListener, request: OracleRequest): ListenerOutcome {
  const headers: Record<string, string> = { host: request.hostHeader };
  if (request.referer !== undefined) headers.referer = request.referer;
  const event = new RequestEvent(kernel, new Request(request.target, { method: request.method, scheme: request.scheme, headers }), RequestType.MAIN);
  try {
    listener.onKernelRequest(event);
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    const allow = (error.headers as Record<string, string | undefined>).allow ?? null;
    return { kind: 'error', status: error.status as 400 | 404 | 405, message: error.message, allow, cause: (error.cause as Error | undefined)?.message ?? '(no cause)' };
  }
  const response = event.response;
  if (response !== null && response !== undefined) {
    return { kind: 'response', status: response.status, location: response.getHeader('location') ?? null, allow: response.getHeader('allow') ?? null };
  }
  const attributes = event.request.attributes;
  const params = attributes.get('_route_params') as Record<string, unknown>;
  // Every parameter is an attribute too.
  for (const [name, value] of Object.entries(params)) assert.equal(attributes.get(name), value, `attribute ${name}`);
  return { kind: 'routed', route: attributes.get('_route') as string, params: { ...params } };
}

const seen = new Map<string, number>();
// The scheme ports of a redirect to the other scheme: the defaults (left out of Location), or bin/serve's.
const ports = fc.constantFrom({ http: 80, https: 443 }, { http: 8000, https: 8443 });

test('RouterListener answers every request as the reference listener does', () => {
  fc.assert(
    fc.property(fc.array(routeRecipe, { minLength: 1, maxLength: 6 }), fc.array(listenerRequestRecipe, { minLength: 1, maxLength: 12 }), ports, (recipes, requestRecipes, schemePorts) => {
      const specs = specsOf(recipes);
      const collection = new RouteCollection();
      for (const spec of specs) collection.add(spec.oracle.name, spec.route);
      const listener = new RouterListener(new UrlMatcher(collection), null, schemePorts);
      const oracle = new OracleMatcher(specs.map((spec) => spec.oracle));
      for (const recipe of requestRecipes) {
        const request = listenerRequestOf(specs, recipe);
        const expected = listenerOutcome(oracle, request, schemePorts);
        const actual = outcomeOf(listener, request);
        try {
          assert.equal(actual, expected);
        } catch (error) {
          const report = ['routes: new RouteCollection()', ...specs.map((spec) => `  ${spec.source}`), `request:  ${JSON.stringify(request)}`, `oracle:   ${JSON.stringify(expected)}`, `listener: ${JSON.stringify(actual)}`].join('\n');
          throw new Error(`${(error as Error).message}\n${report}`, { cause: error });
        }
        const key = expected.kind === 'routed' ? 'routed' : `${expected.status}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }
    }),
    propertyParameters(600),
  );
  assert.equal([...refused.keys()], [], 'routes refused');
  // Every kind of outcome was compared, often enough to mean something.
  for (const kind of ['routed', '301', '200', '400', '404', '405']) {
    assert.ok((seen.get(kind) ?? 0) >= 10, `only ${seen.get(kind) ?? 0} outcomes ${kind} compared: ${JSON.stringify([...seen])}`);
  }
});

test.run();
