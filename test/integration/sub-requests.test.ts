// Sub-requests as applications make them, on a real server: a controller that forwards to itself, or
// renders itself twice, gets a clear error rather than holding the event loop, in debug mode and
// without it; one that fans
// out more sub-requests than the profiler queues keeps the profile its client has the token of.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_SUB_REQUEST_DEPTH, MAX_SUB_REQUESTS, RequestType, Response, TooManySubRequestsError, type Controller, type Request } from '../../kernel/index.js';
import type { Profile } from '../../lib/profiler/index.js';
import { MemoryStorage } from '../../lib/profiler/storage/index.js';
import { SCHEMES, fetchFrom, routesOf, startTestServer, until, type TestServer } from './harness.js';

/** Where a runaway controller stops by itself, so that a kernel without the bound answers rather than hangs. */
const RUNAWAY_STOP = 4 * MAX_SUB_REQUEST_DEPTH;
/** The same for a controller that doubles at each level. */
const DOUBLING_STOP = MAX_SUB_REQUESTS + 1000;

for (const debug of [true, false]) {
  for (const scheme of SCHEMES) {
    const test = suite(`sub-requests on a real server, debug ${debug ? 'on' : 'off'}, over ${scheme}`);
    let server: TestServer;
    /** Sub-requests the runaway controllers made, this request. */
    let made = 0;
    /** The first TooManySubRequestsError handle() rejected with, this request. */
    let refusal: unknown;

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
      // A page with one fragment that renders itself in two places (fragments of fragments), answering the worst status of the two.
      '/twice': async (request: Request) => {
        if (++made > DOUBLING_STOP) return new Response('stopped by the test');
        const fragment = (): Promise<Response> =>
          server.app.kernel.handle(request.duplicate({ attributes: { fragment: true } }), RequestType.SUB).catch((error: unknown) => {
            // The depth bound stops the first branch before the count is reached: the count's refusal is the one looked for.
            if (error instanceof TooManySubRequestsError) refusal ??= error;
            throw error;
          });
        if (!request.attributes.has('fragment')) return fragment();
        const [first, second] = await Promise.all([fragment(), fragment()]);
        return new Response('', Math.max(first!.status, second!.status));
      },
      '/ok': () => new Response('ok'),
    };

    test.before(async () => {
      server = await startTestServer({ kernel: { routes: routesOf(controllers), debug, env: 'dev' } });
    });
    test.after(() => server.close());
    test.before.each(() => {
      made = 0;
      refusal = undefined;
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

    test('a fragment that renders itself twice stops at MAX_SUB_REQUESTS under it, all levels together', async () => {
      const response = await fetchFrom(server, scheme, '/twice');
      assert.is(response.status, 500);
      // The page, its fragment, and MAX_SUB_REQUESTS under that.
      assert.is(made, MAX_SUB_REQUESTS + 2);
      assert.instance(refusal, TooManySubRequestsError);
      assert.is(
        (refusal as Error).message,
        `The sub-request for "/twice"${debug ? ' made by route "twice"' : ''} would be number ${MAX_SUB_REQUESTS + 1} under the sub-request for "/twice", past MAX_SUB_REQUESTS (${MAX_SUB_REQUESTS}): a fragment that renders itself in more than one place doubles at each level.`,
      );
      assert.is((await fetchFrom(server, scheme, '/ok')).body, 'ok');
    });

    test.run();
  }
}

/** The save queue of the fan-out server: a small one, so that a few dozen sub-requests pass it. */
const MAX_QUEUED = 20;

for (const scheme of SCHEMES) {
  const test = suite(`a fan-out of sub-requests past the profiler's save queue, over ${scheme}`);
  let server: TestServer;
  const storage = new MemoryStorage();

  const controllers: Record<string, Controller> = {
    // As many fragments as ?n= says, all at once, each logging.
    '/fan-out': async (request: Request) => {
      const count = Number(request.query.get('n'));
      const fragment = (sub: Request): Response => {
        server.app.logger.info('fragment {n}', { n: sub.attributes.get('n') });
        return new Response('.');
      };
      const responses = await Promise.all(Array.from({ length: count }, (_, n) => server.app.kernel.handle(request.duplicate({ attributes: { _controller: fragment, n } }), RequestType.SUB)));
      return new Response(responses.map((response) => String(response.body)).join(''));
    },
  };

  test.before(async () => {
    server = await startTestServer({ kernel: { routes: routesOf(controllers), debug: true, env: 'dev', profiler: { storage, maxQueuedProfiles: MAX_QUEUED } } });
  });
  test.after(() => server.close());

  /** Resolves once the profile is in the storage: the queue has room again for the next test. */
  const saved = async (token: string): Promise<void> => {
    for (const end = Date.now() + 5_000; (await storage.read(token)) === null; ) {
      if (Date.now() > end) throw new Error(`profile ${token} was not saved within 5 s`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  const profileOf = async (token: string): Promise<Profile> => {
    const response = await fetchFrom(server, scheme, `/_profiler/${token}`, { headers: { accept: 'application/json' } });
    assert.is(response.status, 200, `the profile ${token} is found`);
    return JSON.parse(response.body) as Profile;
  };

  test('the main profile and its first sub-requests are kept, the request\'s log saying how many were dropped', async () => {
    const recorded = server.app.profiler!.recordedProfiles;
    const response = await fetchFrom(server, scheme, `/fan-out?n=${3 * MAX_QUEUED}`);
    assert.is(response.body, '.'.repeat(3 * MAX_QUEUED));
    await until(() => server.app.profiler!.recordedProfiles === recorded + 3 * MAX_QUEUED + 1, 5_000, 'the request terminating');
    const main = await profileOf(String(response.headers['x-debug-token']));
    assert.is(main.status, 200);
    assert.is(main.children.length, MAX_QUEUED - 1);
    const logs = (main.collectors.logger as { logs: Array<{ message: string; levelName: string }> }).logs;
    assert.ok(
      logs.some((log) => log.levelName === 'WARNING' && log.message === `This request made ${3 * MAX_QUEUED} sub-requests, more profiles than the profiler queues for saving (${MAX_QUEUED}, maxQueuedProfiles): the last ${2 * MAX_QUEUED + 1} were dropped.`),
      'the warning is in the main profile',
    );
    // Each sub-request listed is there, with its own log record.
    const first = await profileOf(main.children[0]!);
    assert.is(first.parent, main.token);
    assert.equal((first.collectors.logger as { logs: Array<{ message: string }> }).logs.map((log) => log.message), ['fragment 0']);
    await saved(main.token);
  });

  test('a fan-out within the queue keeps every profile', async () => {
    const recorded = server.app.profiler!.recordedProfiles;
    const response = await fetchFrom(server, scheme, `/fan-out?n=${MAX_QUEUED - 1}`);
    await until(() => server.app.profiler!.recordedProfiles === recorded + MAX_QUEUED, 5_000, 'the request terminating');
    assert.is((await profileOf(String(response.headers['x-debug-token']))).children.length, MAX_QUEUED - 1);
  });

  test.run();
}
