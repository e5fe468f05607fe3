// Property-based robustness of the kernel as wired by createApp/createKernel, in process: whatever a
// client sends, the answer is a 4xx at worst, with a message, and nothing it sent comes back as markup.
// Why fast-check: example tests only cover the bad inputs someone thought of (and the bugs found by
// review were inputs nobody had listed); it generates the requests (test/arbitraries.ts), shrinks a
// failing one to a minimal case and prints the seed that replays it (FC_SEED=<seed>).
import { mkdtempSync, rmSync } from 'node:fs';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import proxyaddr from 'proxy-addr';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Request, Response, compileTrustedHosts, type TrustHost, type TrustProxy } from '../../../kernel/index.js';
import { createApp, createKernel, referenceRoutes, type KernelApp } from '../../../lib/app/index.js';
import type { LogEntry, LogRecord } from '../../../lib/log/index.js';
import { FileStorage, MemoryStorage, PROFILER_PANELS } from '../../../lib/profiler/index.js';
import { Route } from '../../../lib/routing/index.js';
import {
  MARKERS,
  acceptHeader,
  bodyWithType,
  cookieHeader,
  forwardedFor,
  forwardedHost,
  forwardedPort,
  forwardedProto,
  headerText,
  hostValue,
  markerIn,
  method,
  pathSegment,
  propertyParameters,
  queryString,
  refererHeader,
  requestTarget,
} from '../../arbitraries.js';

/** Small, so bodies around it are cheap to make. */
const BODY_LIMIT = 256;

const TRUST: Record<string, TrustProxy | null> = {
  none: null,
  loopback: proxyaddr.compile(['loopback']),
  private: proxyaddr.compile(['loopback', '10.0.0.0/8']),
  // Every hop, whatever it says: the forwarded values are read in full.
  all: () => true,
};

/** Trusted hosts (`trustedHosts`): none set, or a list most generated hosts are not on. */
const HOSTS: Record<string, TrustHost | null> = {
  any: null,
  listed: compileTrustedHosts(['localhost', '.a.test', '*.example.com', '127.0.0.1', '[::1]', /^(?:\w+\.)?b\.test$/]),
};

/** A request as a client may send it, in the fields node:http hands over. */
const requestFields = {
  method,
  target: requestTarget,
  scheme: fc.constantFrom('http', 'https'),
  // Two values: an embedder's array of several Host headers (node:http keeps the first, and rawHeaders has them all).
  host: fc.option(fc.oneof({ weight: 5, arbitrary: hostValue }, { weight: 1, arbitrary: fc.tuple(hostValue, hostValue) }), { nil: undefined }),
  remoteAddress: fc.constantFrom('127.0.0.1', '::1', '::ffff:127.0.0.1', '10.0.0.1', '203.0.113.5', '2001:db8::5'),
  trust: fc.constantFrom('none', 'loopback', 'private', 'all'),
  hosts: fc.constantFrom('any', 'listed'),
  forwarded: fc.record({ for: forwardedFor, proto: forwardedProto, port: forwardedPort, host: forwardedHost }, { requiredKeys: [] }),
  cookie: fc.option(cookieHeader, { nil: undefined }),
  accept: fc.option(acceptHeader, { nil: undefined }),
  referer: fc.option(refererHeader, { nil: undefined }),
  xhr: fc.boolean(),
  other: fc.option(fc.tuple(fc.constantFrom('user-agent', 'authorization', 'x-custom', 'origin', '__proto__', 'constructor'), headerText), { nil: undefined }),
  payload: fc.option(bodyWithType(BODY_LIMIT), { nil: undefined }),
  // A Content-Length that does not match the body, when set.
  contentLength: fc.option(fc.constantFrom('abc', '-1', '99999999999', '0', '1e3', ' 5', String(BODY_LIMIT + 1)), { nil: undefined }),
};
const clientRequest = fc.record(requestFields);

/**
 * Requests that reach the deeper steps: a GET or HEAD the router answers with a redirect (a path
 * with its trailing slash toggled, any query), and a body for the route that reads JSON. The Host is
 * a valid one and no proxy is trusted, so no earlier 400 hides what those steps do with the rest.
 */
const routedFields = { ...requestFields, host: fc.constantFrom(undefined, 'localhost', 'localhost:8000', 'a.test', '[::1]:8000'), trust: fc.constant('none') };
const redirectedRequest = fc.record({
  ...routedFields,
  method: fc.constantFrom('GET', 'HEAD'),
  target: fc.tuple(fc.oneof(fc.constant('/health/'), pathSegment.filter((id) => id !== '' && id !== '.' && id !== '..').map((id) => `/books/${id}/`)), queryString).map(([path, query]) => `${path}${query}`),
  payload: fc.constant(undefined),
  contentLength: fc.constant(undefined),
});
const bodyRequest = fc.record({ ...routedFields, method: fc.constantFrom('POST', 'PUT'), target: fc.constant('/echo'), payload: bodyWithType(BODY_LIMIT), contentLength: fc.constant(undefined) });

type ClientRequest = typeof clientRequest extends fc.Arbitrary<infer T> ? T : never;

function toRequest(input: ClientRequest): Request {
  const headers: Record<string, string | string[]> = {};
  if (input.host !== undefined) headers.host = typeof input.host === 'string' ? input.host : [...input.host];
  if (input.forwarded.for !== undefined) headers['x-forwarded-for'] = input.forwarded.for;
  if (input.forwarded.proto !== undefined) headers['x-forwarded-proto'] = input.forwarded.proto;
  if (input.forwarded.port !== undefined) headers['x-forwarded-port'] = input.forwarded.port;
  if (input.forwarded.host !== undefined) headers['x-forwarded-host'] = input.forwarded.host;
  if (input.cookie !== undefined) headers.cookie = input.cookie;
  if (input.accept !== undefined) headers.accept = input.accept;
  if (input.referer !== undefined) headers.referer = input.referer;
  if (input.xhr) headers['x-requested-with'] = 'XMLHttpRequest';
  if (input.other !== undefined) headers[input.other[0]] = input.other[1];
  if (input.payload?.type !== undefined) headers['content-type'] = input.payload.type;
  if (input.payload !== undefined) headers['content-length'] = String(Buffer.byteLength(input.payload.body));
  if (input.contentLength !== undefined) headers['content-length'] = input.contentLength;
  return new Request(input.target, {
    method: input.method,
    headers,
    body: input.payload?.body ?? null,
    scheme: input.scheme,
    remoteAddress: input.remoteAddress,
    localAddress: '127.0.0.1',
    localPort: 8000,
    trustProxy: TRUST[input.trust],
    trustHost: HOSTS[input.hosts],
    bodyLimit: BODY_LIMIT,
  });
}

/** A profiler page asked for by an allowed (loopback) client, in HTML or JSON. */
function profilerRequest(target: string, json: boolean): Request {
  return new Request(target, { headers: { host: 'localhost:8000', ...(json ? { accept: 'application/json' } : {}) }, remoteAddress: '127.0.0.1' });
}

/** The body as a client reads it: sent as UTF-8, so half a surrogate pair arrives as U+FFFD. */
function bodyText(response: Response): string {
  const body = response.body;
  if (typeof body === 'string' || body instanceof Uint8Array) return Buffer.from(body).toString('utf8');
  return '';
}

/** Turns the entities our HTML escaping writes back into text, to find a message in a page. */
function decodeEntities(text: string): string {
  return text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/**
 * What every answer must be, whatever was asked: below 500; headers node:http accepts and a
 * Content-Length that is the body's; no marker tag in a header or the body; a 4xx says what went wrong.
 */
function checkAnswer(request: Request, response: Response): void {
  const target = request.url;
  const route = request.attributes.get('_route');
  const status = response.status;
  // The toolbar of an unknown token is an empty 404, as Symfony's: the loader then shows no toolbar.
  if (route === '_wdt' && status === 404 && bodyText(response) === '') return;
  assert.ok(Number.isInteger(status) && status >= 100 && status < 500, `${target}: status ${status}`);
  const body = bodyText(response);
  for (const [name, value] of Object.entries(response.headers)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      assert.not.throws(() => validateHeaderName(name), `${target}: header name ${JSON.stringify(name)}`);
      assert.not.throws(() => validateHeaderValue(name, one), `${target}: header ${name}: ${JSON.stringify(one)}`);
      assert.is(markerIn(one), undefined, `${target}: header ${name} echoes markup: ${JSON.stringify(one)}`);
    }
  }
  const length = response.headers['content-length'];
  // A HEAD's answer is the GET's head alone (the same request as a GET checks its body).
  if (request.method === 'HEAD') {
    assert.is(response.body, null, `${target}: a HEAD's answer has no body`);
    assert.ok(length === undefined || /^\d+$/.test(String(length)), `${target}: a HEAD's Content-Length`);
    return;
  }
  if (length !== undefined && (typeof response.body === 'string' || response.body instanceof Uint8Array)) {
    assert.is(Number(length), Buffer.byteLength(body), `${target}: Content-Length`);
  }
  // This test's own routes answer JSON with what the client sent, as they were written to.
  const echoed = (route === 'echo' || route === 'book') && status === 200;
  if (!echoed) assert.is(markerIn(body), undefined, `${target}: the body echoes markup`);
  if (status < 400) return;

  const type = response.getHeader('content-type') ?? '';
  if (type.startsWith('application/problem+json')) {
    const problem = JSON.parse(body) as { status: unknown; title: unknown; detail: unknown };
    assert.is(problem.status, status, `${target}: problem status`);
    assert.ok(typeof problem.title === 'string' && problem.title !== '', `${target}: problem title`);
    assert.ok(typeof problem.detail === 'string' && problem.detail !== '', `${target}: problem detail`);
  } else if (type.startsWith('application/json')) {
    assert.ok(Object.keys(JSON.parse(body) as object).length > 0, `${target}: a JSON error says something`);
  } else {
    assert.ok(type.startsWith('text/html'), `${target}: an error is HTML, problem+json or JSON, got ${JSON.stringify(type)}`);
    const title = /<title>([^<]+)<\/title>/.exec(body)?.[1];
    assert.ok(title !== undefined && body.includes(String(status)), `${target}: the error page has a title and names the status`);
    // A debug page (allowed client) names the error's message.
    const debugMessage = response.headers['x-debug-exception'];
    if (typeof debugMessage === 'string') {
      assert.ok(decodeEntities(body).includes(decodeURIComponent(debugMessage)), `${target}: the debug page shows the message`);
    }
  }
}

/** Failures the kernel only logs: a 500 no client saw, a profile that could not be kept. */
function watchLogs(app: KernelApp): { failures: LogRecord[]; stop(): void } {
  const failures: LogRecord[] = [];
  const listen = ({ record }: LogEntry): void => {
    if (record.level <= 2 || (record.channel === 'profiler' && record.level <= 3)) failures.push(record);
  };
  app.bus.on('log', listen);
  return { failures, stop: () => app.bus.off('log', listen) };
}

/** The reference routes, and one that reads a JSON body and one with a parameter (the reference app reads no body). */
function embeddedRoutes() {
  const routes = referenceRoutes();
  routes.add('echo', new Route('/echo', { methods: ['POST', 'PUT'], defaults: { _controller: async (request: Request) => Response.json(await request.json()) } }));
  routes.add('book', new Route('/books/:id', { methods: ['GET'], defaults: { _controller: (_: Request, params: { id: string }) => Response.json({ id: params.id }) } }));
  return routes;
}

/** A temporary directory for profiles, removed when the process exits. */
function profileDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'http-kernel-robustness-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const subjects: Array<{ name: string; debug: boolean; readsBodies: boolean; make(): KernelApp }> = [
  { name: 'the reference app, debug', debug: true, readsBodies: false, make: () => createApp({ stderrLogLevel: false, profiler: { storage: new MemoryStorage(), saveDelayMs: 0 } }) },
  { name: 'the reference app, no debug', debug: false, readsBodies: false, make: () => createApp({ stderrLogLevel: false, debug: false }) },
  // Profiles in files, as bin/serve keeps them: what clients send goes through the index and back.
  { name: 'a kernel reading bodies, debug', debug: true, readsBodies: true, make: () => createKernel({ env: 'staging', debug: true, routes: embeddedRoutes(), stderrLogLevel: false, profiler: { storage: new FileStorage({ dir: profileDir() }), saveDelayMs: 0 } }) },
  { name: 'a kernel reading bodies, no debug', debug: false, readsBodies: true, make: () => createKernel({ env: 'prod', debug: false, routes: embeddedRoutes(), stderrLogLevel: false }) },
];

/** The profiler pages an allowed client opens after a request: its panels, its toolbar, searches. */
const profilerVisit = fc.record({
  panel: fc.constantFrom('', 'memory', '__proto__', 'constructor', '%E0%A4%A', ...MARKERS, ...MARKERS.map(encodeURIComponent)),
  search: queryString,
  json: fc.boolean(),
  token: fc.oneof(fc.constantFrom('', '000000', 'ABCDEF', 'latest', '..', '%00', '%E0%A4%A'), fc.constantFrom(...MARKERS).map(encodeURIComponent), fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 1, maxLength: 8 })),
});

for (const subject of subjects) {
  const test = suite(`robustness: ${subject.name}`);
  let app: KernelApp;

  test.before(() => {
    app = subject.make();
  });
  test.after(async () => app.close());

  /** Handles each generated request: the answer is checked, and nothing fails on the way (handle, terminate, logs). */
  const answersEach = (requests: fc.Arbitrary<ClientRequest>, numRuns: number) => async () => {
    const logs = watchLogs(app);
    try {
      await fc.assert(
        fc.asyncProperty(requests, async (input) => {
          logs.failures.length = 0;
          const request = toRequest(input);
          const response = await app.kernel.handle(request);
          checkAnswer(request, response);
          await app.kernel.terminate(request, response);
          assert.equal(logs.failures.map((record) => record.message), [], 'nothing failed on the way');
        }),
        propertyParameters(numRuns),
      );
    } finally {
      logs.stop();
    }
  };

  test('any request is answered below 500, a 4xx with a message, nothing sent echoed as markup', answersEach(clientRequest, 150));
  test('a redirect of any path and query is a valid URI in Location, without the client\'s markup', answersEach(redirectedRequest, 50));
  if (subject.readsBodies) test('any body sent to a route that reads JSON is a 200 or a 4xx with a message', answersEach(bodyRequest, 80));

  if (subject.debug) {
    test('the profiler pages of any recorded request, and any profiler URL, are answered below 500 with nothing echoed as markup', async () => {
      const logs = watchLogs(app);
      try {
        await fc.assert(
          // Any request, and ones that get past the Host check, so profiles hold routes, parameters and bodies too.
          fc.asyncProperty(fc.oneof(clientRequest, fc.record(routedFields), bodyRequest), profilerVisit, async (input, visit) => {
            logs.failures.length = 0;
            const request = toRequest(input);
            const response = await app.kernel.handle(request);
            await app.kernel.terminate(request, response);
            const tokens = [app.profiler!.tokenOf(request), response.headers['x-previous-debug-token']].filter((token): token is string => typeof token === 'string');
            const targets = [`/_profiler/${visit.token}`, `/_wdt/${visit.token}`, `/_profiler/search${visit.search}`, '/_profiler/', '/_profiler/latest'];
            for (const token of tokens) {
              targets.push(`/_profiler/${token}`, `/_profiler/${token}?panel=${visit.panel}`, `/_wdt/${token}`);
              for (const panel of PROFILER_PANELS) targets.push(`/_profiler/${token}?panel=${panel}`);
            }
            for (const target of targets) {
              const page = profilerRequest(target, visit.json);
              const answer = await app.kernel.handle(page);
              checkAnswer(page, answer);
              await app.kernel.terminate(page, answer);
            }
            assert.equal(logs.failures.map((record) => record.message), [], 'nothing failed on the way');
          }),
          propertyParameters(60),
        );
      } finally {
        logs.stop();
      }
    });
  }

  test.run();
}
