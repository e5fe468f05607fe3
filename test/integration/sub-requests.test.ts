// Sub-requests as applications make them, on a real server: a controller that forwards to itself
// gets a clear error rather than holding the event loop, in debug mode and without it.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_SUB_REQUEST_DEPTH, RequestType, Response, type Controller, type Request } from '../../kernel/index.js';
import { SCHEMES, fetchFrom, routesOf, startTestServer, type TestServer } from './harness.js';

/** Where a runaway controller stops by itself, so that a kernel without the bound answers rather than hangs. */
const RUNAWAY_STOP = 4 * MAX_SUB_REQUEST_DEPTH;

for (const debug of [true, false]) {
  for (const scheme of SCHEMES) {
    const test = suite(`sub-requests on a real server, debug ${debug ? 'on' : 'off'}, over ${scheme}`);
    let server: TestServer;
    /** Sub-requests the runaway controllers made, this request. */
    let made = 0;

    const controllers: Record<string, Controller> = {
      // Forwards to itself: the sub-request is routed back here.
      '/forward-to-self': (request: Request) => {
        if (++made > RUNAWAY_STOP) return new Response('stopped by the test');
        return server.app.kernel.handle(request.duplicate(), RequestType.SUB);
      },
      // Renders itself as its own fragment, with a `_controller` of its own (no routing), awaiting it.
      '/fragment-of-itself': async (request: Request) => {
        const fragment = async (parent: Request): Promise<Response> => {
          if (++made > RUNAWAY_STOP) return new Response('stopped by the test');
          const inner = await server.app.kernel.handle(parent.duplicate({ attributes: { _controller: fragment } }), RequestType.SUB);
          return new Response(`<div>${String(inner.body)}</div>`, inner.status);
        };
        return fragment(request);
      },
      '/ok': () => new Response('ok'),
    };

    test.before(async () => {
      server = await startTestServer({ kernel: { routes: routesOf(controllers), debug, env: 'dev' } });
    });
    test.after(() => server.close());
    test.before.each(() => {
      made = 0;
    });

    test('a controller that forwards to itself gets a 500 past MAX_SUB_REQUEST_DEPTH, and the server answers the next request', async () => {
      const response = await fetchFrom(server, scheme, '/forward-to-self', { headers: { accept: 'application/json' } });
      assert.is(response.status, 500);
      assert.is(made, MAX_SUB_REQUEST_DEPTH + 1);
      if (debug) {
        const problem = JSON.parse(response.body) as { detail: string; class: string };
        assert.is(problem.class, 'SubRequestTooDeepError');
        assert.is(
          problem.detail,
          `The sub-request for "/forward-to-self" made by route "forward-to-self" would be ${MAX_SUB_REQUEST_DEPTH + 1} deep, past MAX_SUB_REQUEST_DEPTH (${MAX_SUB_REQUEST_DEPTH}): a controller that makes a sub-request to itself, directly or through others, never stops.`,
        );
      }
      assert.is((await fetchFrom(server, scheme, '/ok')).body, 'ok');
    });

    test('a fragment that renders itself stops at MAX_SUB_REQUEST_DEPTH, its error shown by the deepest error page', async () => {
      const response = await fetchFrom(server, scheme, '/fragment-of-itself', { headers: { accept: 'text/html' } });
      assert.is(response.status, 500);
      assert.is(made, MAX_SUB_REQUEST_DEPTH + 1);
      assert.is.not(response.body.indexOf('<div>'.repeat(MAX_SUB_REQUEST_DEPTH)), -1);
      // The debug page names the error; the plain page, rendered all the same, is not the failure of an error page's.
      if (debug) assert.ok(response.body.includes('SubRequestTooDeepError'), 'the debug page names the error');
      else assert.ok(response.body.includes('Internal Server Error'));
    });

    test.run();
  }
}
