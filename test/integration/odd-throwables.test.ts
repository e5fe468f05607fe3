// Values no String() can turn into text (a null-prototype object), thrown where the server logs them
// itself (a kernel.exception listener, a kernel.terminate listener), and a class whose static `name`
// getter throws: never a crash, an unhandled rejection or a request left without an answer.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Request, Response } from '../../kernel/index.js';
import { createKernel } from '../../lib/app/index.js';
import { flattenError } from '../../lib/errors/index.js';
import type { LogEntry } from '../../lib/log/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { fetchFrom, savedProfile, startTestServer, type TestServer } from './harness.js';

class NamelessError extends Error {}
Object.defineProperty(NamelessError, 'name', { get() { throw new Error('no name'); } });

const throwing = new Map<string, () => unknown>([
  ['nullproto', () => Object.create(null)],
  ['nameless', () => new NamelessError('nameless')],
]);

function routes(): RouteCollection {
  return new RouteCollection()
    .add('fail', new Route('/fail/:what', { defaults: { _controller: (_request: unknown, params: { what: string }) => { throw throwing.get(params.what)!(); } } }))
    .add('forged', new Route('/forged/:file', {
      defaults: {
        _controller: (_request: unknown, params: { file: string }) => {
          const error = new Error('forged');
          error.stack = `Error: forged\n    at f (/srv/${params.file === 'lone' ? '\ud800' : '€'.repeat(990)}.js:1:1)`;
          throw error;
        },
      },
    }))
    .add('ok', new Route('/ok/:what', { defaults: { _controller: () => new Response('ok') } }));
}

const test = suite('odd thrown values where the server logs them');
let server: TestServer;
const rejections: unknown[] = [];
const onRejection = (reason: unknown): void => void rejections.push(reason);
const onException = (error: unknown): void => void rejections.push(error);

test.before(async () => {
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  server = await startTestServer({ kernel: { debug: false, routes: routes(), stderrLogLevel: false } });
  const dispatcher = server.app.dispatcher;
  // Throws the same value again from kernel.exception (it escapes the kernel) and from kernel.terminate.
  dispatcher.addListener(KernelEvents.EXCEPTION, (event) => {
    if (event.request.path.startsWith('/fail/')) throw throwing.get(event.request.path.slice(6))!();
  }, 10);
  dispatcher.addListener(KernelEvents.TERMINATE, (event) => {
    const make = throwing.get(event.request.path.slice(4));
    if (make !== undefined) throw make();
  });
});
test.after(async () => {
  await server.close();
  process.off('unhandledRejection', onRejection);
  process.off('uncaughtException', onException);
});

test('flattenError names an error whose class name getter throws', () => {
  const [flat] = flattenError(new NamelessError('nameless'));
  assert.is(flat!.message, 'nameless');
  assert.is(flat!.status, 500);
});

for (const what of throwing.keys()) {
  test(`a kernel.exception listener throwing ${what}: a 500, no unhandled rejection`, async () => {
    const response = await fetchFrom(server, 'http', `/fail/${what}`, { headers: { accept: 'application/json' } });
    assert.is(response.status, 500);
    assert.is(JSON.parse(response.body).status, 500);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(rejections, []);
  });

  test(`a kernel.terminate listener throwing ${what}: the server lives on`, async () => {
    const response = await fetchFrom(server, 'http', `/ok/${what}`);
    assert.is(response.status, 200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(rejections, []);
    assert.is((await fetchFrom(server, 'http', '/ok/none')).status, 200);
  });
}

for (const file of ['lone', 'long']) {
  test(`a debug page whose first frame's file is ${file === 'lone' ? 'a lone surrogate' : '990 euro signs'}: the page, X-Debug-Exception-File bounded`, async () => {
    const app = createKernel({ debug: true, profiler: false, stderrLogLevel: false, routes: routes() });
    const response = await app.kernel.handle(Request.create(`/forged/${file}`, 'GET', { headers: { accept: 'application/json' } }));
    assert.is(response.status, 500);
    assert.is(JSON.parse(String(response.body)).detail, 'forged');
    const header = String(response.headers['x-debug-exception-file']);
    assert.ok(header.length <= 2048 + 2, `${header.length} characters`);
    await app.close();
  });
}

const profiled = suite('the profile of a failure the profiler could miss');
let debugServer: TestServer;
profiled.before(async () => {
  const routes = new RouteCollection()
    .add('undefined', new Route('/throw/undefined', { defaults: { _controller: () => { throw undefined; } } }))
    .add('null', new Route('/throw/null', { defaults: { _controller: () => { throw null; } } }))
    .add('signed', new Route('/signed', { defaults: { _controller: () => new Response('ok') } }))
    .add('mailed', new Route('/mailed', { defaults: { _controller: () => new Response('ok') } }));
  debugServer = await startTestServer({ kernel: { debug: true, routes } });
  // A kernel.response listener that fails on every main response to /signed, the error page's included.
  debugServer.app.dispatcher.addListener(KernelEvents.RESPONSE, (event) => {
    if (event.isMainRequest() && event.request.path === '/signed') throw new Error('the signing listener is broken');
  }, 10);
  debugServer.app.dispatcher.addListener(KernelEvents.TERMINATE, (event) => {
    if (event.request.path === '/mailed') throw Object.create(null);
  });
});
profiled.after(async () => {
  await debugServer.close();
});

for (const what of ['undefined', 'null']) {
  profiled(`a thrown ${what} is on the exception panel`, async () => {
    const response = await fetchFrom(debugServer, 'http', `/throw/${what}`, { headers: { accept: 'application/json' } });
    assert.is(response.status, 500);
    const profile = await savedProfile(debugServer, String(response.headers['x-debug-token']));
    assert.is(profile.collectors.exception.exceptions.length, 1);
    assert.match(profile.collectors.exception.exceptions[0].message, `(${what})`);
  });
}

profiled('a kernel.response listener failing on the error page too: the main request is profiled with its error', async () => {
  const response = await fetchFrom(debugServer, 'http', '/signed', { headers: { accept: 'application/json' } });
  assert.is(response.status, 500);
  // The page went out unfiltered: its token is the error page's sub-request's, whose parent is the failed request.
  const page = await savedProfile(debugServer, String(response.headers['x-debug-token']));
  assert.type(page.parent, 'string');
  const main = await savedProfile(debugServer, page.parent);
  assert.is(main.status, 500);
  assert.equal(main.collectors.exception.exceptions.map((e: { message: string }) => e.message), ['the signing listener is broken']);
});

profiled('what a failing kernel.terminate listener leaves is logged as its request\'s', async () => {
  const records: LogEntry[] = [];
  const onLog = (entry: LogEntry): void => void (entry.record.message.startsWith('kernel.terminate failed') && records.push(entry));
  debugServer.app.bus.on('log', onLog);
  try {
    assert.is((await fetchFrom(debugServer, 'http', '/mailed')).status, 200);
    for (let i = 0; i < 50 && records.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.is(records.length, 1);
    assert.is((records[0]!.request as Request | undefined)?.path, '/mailed');
  } finally {
    debugServer.app.bus.off('log', onLog);
  }
});

test.run();
profiled.run();
