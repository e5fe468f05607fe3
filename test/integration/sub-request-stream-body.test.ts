// A sub-request's stream body: the kernel hears its 'error' from the moment it is given it, for good, so one handed back to
// the controller that made the sub-request, which ignores it or pipe()s it (pipe() does not listen to its source), failed
// unheard by anyone (node ended the process on it before the kernel heard it). And the bodies the kernel drops within a
// sub-request, which is never terminated, were never logged. Both are logged once at ERROR for the main request.
import { PassThrough, Readable, Writable, pipeline } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Request, RequestType, Response, type Controller, type ResponseEvent } from '../../kernel/index.js';
import { LogLevel, type LogEntry } from '../../lib/log/index.js';
import { SCHEMES, fetchFrom, header, routesOf, savedProfile, startTestServer, until, type TestServer } from './harness.js';

/** A live stream that fails `ms` from now, with nothing sent. */
const failsLater = (what: string, ms: number): Readable => {
  const stream = new Readable({ read() {} });
  setTimeout(() => stream.destroy(new Error(`${what} failed`)), ms);
  return stream;
};

/** A stream whose clean-up fails, 5 ms after it is destroyed; `emitClose: false` keeps it from emitting 'close'. */
const failsInCleanUp = (what: string, emitClose = true): Readable =>
  new Readable({ emitClose, read() {}, destroy: (_error, callback) => setTimeout(() => callback(new Error(`${what} failed`)), 5) });

const UNHEARD = 'The response body stream of a sub-request failed with nobody listening: ';
const NOT_SENT = 'The response body stream, not sent, failed: ';

interface Line {
  level: string;
  message: string;
  path: string | undefined;
}

/** The controllers of both servers: `sub` makes the sub-request (a duplicate, or one of Request.create()). */
const controllersOf = (server: () => TestServer, sub: (request: Request, controller: Controller) => Request): Record<string, Controller> => {
  const fragment = (request: Request, controller: Controller): Promise<Response> => server().app.kernel.handle(sub(request, controller), RequestType.SUB);
  return {
    '/text': () => new Response('served on'),
    // Ignores the fragment's stream, which fails before the page has terminated.
    '/ignores-failed': async (request: Request) => {
      await fragment(request, () => {
        const stream = new Readable({ read() {} });
        stream.destroy(new Error('the early fragment failed'));
        return new Response(stream);
      });
      return new Response('page');
    },
    // Ignores the fragment's stream, which fails once the page has terminated.
    '/ignores': async (request: Request) => {
      await fragment(request, () => new Response(failsLater('the late fragment', 50)));
      return new Response('page');
    },
    // pipe()s it into a stream of its own, which pipe() does not tell of its source's failure.
    '/pipes': async (request: Request) => {
      const inner = await fragment(request, () => new Response(failsLater('the piped fragment', 20)));
      (inner.body as Readable).pipe(new PassThrough());
      return new Response('page');
    },
    // Hears it itself, through pipeline().
    '/pipeline': async (request: Request) => {
      const inner = await fragment(request, () => new Response(failsLater('the heard fragment', 20)));
      pipeline(inner.body as Readable, new Writable({ write: (_chunk, _encoding, callback) => callback() }), (error) => void (heard = error));
      return new Response('page');
    },
    // Answers with it: the server's to send (its failure before the first chunk is the bare 500, logged CRITICAL), failing while a kernel.response listener awaits.
    '/forwards': async (request: Request) => fragment(request, () => new Response(failsLater('the forwarded fragment', 5))),
    // A fragment whose stream a kernel.response listener replaces, which fails in its clean-up.
    '/drops': async (request: Request) => {
      const inner = await fragment(request, (sub: Request) => {
        sub.attributes.set('replace', true);
        return new Response(failsInCleanUp('the replaced fragment'));
      });
      return new Response(`page with ${String(inner.body)}`);
    },
  };
};

/** What /pipeline's pipeline() heard. */
let heard: Error | null | undefined;

/** Holds the answer to /forwards 40 ms in kernel.response: its stream fails meanwhile, with only the kernel listening. */
const slow = {
  getSubscribedEvents: () => ({ [KernelEvents.RESPONSE]: 'onResponse' }),
  onResponse: (event: ResponseEvent) => (event.isMainRequest() && event.request.path === '/forwards' ? new Promise((resolve) => setTimeout(resolve, 40)) : undefined),
};

/** Answers a response whose request has the `replace` attribute with text in place of its stream, which the kernel then destroys. */
const replacer = {
  getSubscribedEvents: () => ({ [KernelEvents.RESPONSE]: 'onResponse' }),
  onResponse: (event: ResponseEvent) => void (event.request.attributes.get('replace') === true && event.setResponse(new Response('in its place'))),
};

for (const scheme of SCHEMES) {
  const test = suite(`a sub-request's stream body that fails, over ${scheme}`);
  let server: TestServer;
  const logged: Line[] = [];
  const onLog = (entry: LogEntry): void => void logged.push({ level: entry.record.levelName, message: entry.record.message, path: (entry.request as { path?: string } | undefined)?.path });
  const lines = (what: string): Line[] => logged.filter((line) => line.message.includes(what));

  test.before(async () => {
    const duplicate = (request: Request, controller: Controller): Request => request.duplicate({ attributes: { _controller: controller } });
    server = await startTestServer({ kernel: { debug: true, routes: routesOf(controllersOf(() => server, duplicate)), subscribers: [replacer, slow] } });
    server.app.bus.on('log', onLog);
  });
  test.after(async () => server.close());
  test.before.each(() => {
    logged.length = 0;
  });

  test('one the page ignores, failed before the page terminated, is logged once at ERROR for the page, and is in its profile', async () => {
    const response = await fetchFrom(server, scheme, '/ignores-failed');
    assert.is(response.body, 'page');
    const profile = await savedProfile(server, header(response.headers['x-debug-token']));
    const logs = (profile.collectors.logger as { logs: Array<{ message: string; level: number }> }).logs;
    assert.equal(
      logs.filter((log) => log.message.includes('the early fragment failed')).map((log) => [log.level, log.message]),
      [[LogLevel.ERROR, `${UNHEARD}Error: the early fragment failed`]],
    );
    assert.equal(lines('the early fragment failed').map(({ level, path }) => [level, path]), [['ERROR', '/ignores-failed']], JSON.stringify(logged));
  });

  test('one that fails once the page has terminated is logged once at ERROR for the page, and the server serves on', async () => {
    const response = await fetchFrom(server, scheme, '/ignores');
    assert.is(response.body, 'page');
    await until(() => lines('the late fragment failed').length > 0, 2000, 'the failure logged');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(lines('the late fragment failed').map(({ level, message, path }) => [level, message, path]), [['ERROR', `${UNHEARD}Error: the late fragment failed`, '/ignores']], JSON.stringify(logged));
    assert.is((await fetchFrom(server, scheme, '/text')).body, 'served on');
  });

  test('one the page pipe()s somewhere is logged once at ERROR for the page', async () => {
    assert.is((await fetchFrom(server, scheme, '/pipes')).body, 'page');
    await until(() => lines('the piped fragment failed').length > 0, 2000, 'the failure logged');
    assert.equal(lines('the piped fragment failed').map(({ level, path }) => [level, path]), [['ERROR', '/pipes']], JSON.stringify(logged));
  });

  test('one the page hears itself (pipeline()) is its own to log: no line of the server', async () => {
    heard = undefined;
    assert.is((await fetchFrom(server, scheme, '/pipeline')).body, 'page');
    await until(() => heard !== undefined, 2000, 'the failure heard by pipeline()');
    assert.is((heard as Error | null | undefined)?.message, 'the heard fragment failed');
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(lines(UNHEARD), [], JSON.stringify(logged));
  });

  test('one the page answers with is the server\'s: its error page, logged CRITICAL, not as unheard', async () => {
    assert.is((await fetchFrom(server, scheme, '/forwards')).status, 500);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(lines('the forwarded fragment failed').map(({ level }) => level).filter((level) => level !== 'CRITICAL'), [], JSON.stringify(logged));
    assert.ok(lines('the forwarded fragment failed').length > 0, JSON.stringify(logged));
    assert.equal(lines(UNHEARD), [], JSON.stringify(logged));
  });

  test('one a kernel.response listener of the sub-request replaced, failing in its clean-up, is logged once at ERROR for the page', async () => {
    assert.is((await fetchFrom(server, scheme, '/drops')).body, 'page with in its place');
    await until(() => lines('the replaced fragment failed').length > 0, 2000, 'the failure logged');
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(lines('the replaced fragment failed').map(({ level, message, path }) => [level, message, path]), [['ERROR', `${NOT_SENT}Error: the replaced fragment failed`, '/drops']], JSON.stringify(logged));
  });

  test('inject() logs them so too', async () => {
    for (const [path, what] of [['/ignores-failed', 'the early fragment'], ['/ignores', 'the late fragment'], ['/drops', 'the replaced fragment']] as const) {
      logged.length = 0;
      await server.app.inject(path);
      await until(() => lines(`${what} failed`).length > 0, 2000, `the failure of ${path} logged`);
      assert.equal(lines(`${what} failed`).map(({ level, path }) => [level, path]), [['ERROR', path]], JSON.stringify(logged));
    }
  });

  test.run();
}

// Without request context (debug off), the kernel knows the main request of a duplicate() by its duplicate steps, and not that
// of a sub-request made with Request.create(): its bodies are logged at any request's terminate, outside any request.
for (const sub of ['duplicate', 'create'] as const) {
  const test = suite(`a sub-request's stream body that fails, debug off, a sub-request made with ${sub === 'duplicate' ? 'request.duplicate()' : 'Request.create()'}`);
  let server: TestServer;
  const logged: Line[] = [];
  const onLog = (entry: LogEntry): void => void logged.push({ level: entry.record.levelName, message: entry.record.message, path: undefined });
  const lines = (what: string): Line[] => logged.filter((line) => line.message.includes(what));

  test.before(async () => {
    const make =
      sub === 'duplicate'
        ? (request: Request, controller: Controller): Request => request.duplicate({ attributes: { _controller: controller } })
        : (request: Request, controller: Controller): Request => {
            const made = Request.create('/fragment', 'GET', { signal: request.signal });
            made.attributes.set('_controller', controller);
            return made;
          };
    server = await startTestServer({ kernel: { debug: false, routes: routesOf(controllersOf(() => server, make)), subscribers: [replacer] } });
    server.app.bus.on('log', onLog);
  });
  test.after(async () => server.close());

  test('one ignored, one failing later and one dropped are each logged once at ERROR', async () => {
    for (const [path, line] of [['/ignores-failed', `${UNHEARD}Error: the early fragment failed`], ['/ignores', `${UNHEARD}Error: the late fragment failed`], ['/drops', `${NOT_SENT}Error: the replaced fragment failed`]] as const) {
      logged.length = 0;
      assert.is((await fetchFrom(server, 'http', path)).status, 200);
      await until(() => lines(line).length > 0, 2000, `the failure of ${path} logged`);
      await new Promise((resolve) => setTimeout(resolve, 60));
      assert.equal(lines('fragment failed').map(({ level, message }) => [level, message]), [['ERROR', line]], JSON.stringify(logged));
    }
  });

  test.run();
}
