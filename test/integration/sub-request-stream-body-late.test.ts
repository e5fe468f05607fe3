// A sub-request's stream body (see sub-request-stream-body.test.ts), at the edges of its main request's life: one another
// request's terminate took (debug off, a Request.create() sub-request) before the main request answered with it, and one of a
// sub-request made once its main request had terminated (from a timer).
import { Readable, Writable, pipeline } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Request, RequestType, Response, type Controller, type ResponseEvent } from '../../kernel/index.js';
import type { LogEntry } from '../../lib/log/index.js';
import { fetchFrom, routesOf, startTestServer, until, type TestServer } from './harness.js';

const UNHEARD = 'The response body stream of a sub-request failed with nobody listening: ';

/** A live stream that fails `ms` from now, with nothing sent. */
const failsLater = (what: string, ms: number): Readable => {
  const stream = new Readable({ read() {} });
  setTimeout(() => stream.destroy(new Error(`${what} failed`)), ms);
  return stream;
};

/** What /later-heard's pipeline() heard. */
let heard: Error | null | undefined;

interface Line {
  level: string;
  message: string;
  path: string | undefined;
}

for (const debug of [false, true]) {
  const test = suite(`a sub-request's stream body at the edges of its main request's life, debug ${debug ? 'on' : 'off'}`);
  let server: TestServer;
  const logged: Line[] = [];
  const onLog = (entry: LogEntry): void => void logged.push({ level: entry.record.levelName, message: entry.record.message, path: (entry.request as { path?: string } | undefined)?.path });
  const lines = (what: string): Line[] => logged.filter((line) => line.message.includes(what));
  const fragment = (controller: Controller): Promise<Response> => {
    const made = Request.create('/fragment', 'GET');
    made.attributes.set('_controller', controller);
    return server.app.kernel.handle(made, RequestType.SUB);
  };
  const duplicateFragment = (request: Request, controller: Controller): Promise<Response> =>
    server.app.kernel.handle(request.duplicate({ attributes: { _controller: controller } }), RequestType.SUB);

  /** Holds the answer to /forwards 60 ms in kernel.response: its fragment's stream fails meanwhile, with only the kernel listening. */
  const slow = {
    getSubscribedEvents: () => ({ [KernelEvents.RESPONSE]: 'onResponse' }),
    onResponse: (event: ResponseEvent) => (event.isMainRequest() && event.request.path.startsWith('/forwards') ? new Promise((resolve) => setTimeout(resolve, 60)) : undefined),
  };

  /** Answers /forwards-replaced with text in place of the fragment's stream, which the kernel then drops and destroys. */
  const replacer = {
    getSubscribedEvents: () => ({ [KernelEvents.RESPONSE]: 'onResponse' }),
    onResponse: (event: ResponseEvent) => void (event.isMainRequest() && event.request.path === '/forwards-replaced' && event.setResponse(new Response('in its place'))),
  };

  test.before(async () => {
    server = await startTestServer({
      kernel: {
        debug,
        subscribers: [slow, replacer],
        routes: routesOf({
          '/text': () => new Response('served on'),
          // Answers with a fragment's stream, as Symfony's forward() does: the server's to send and to log.
          '/forwards': async () => fragment(() => new Response(failsLater('the forwarded fragment', 5))),
          // So too, after 30 ms of its own with the fragment in hand: another request's terminate may take it from the kernel's records meanwhile.
          '/forwards-later': async () => {
            const forwarded = await fragment(() => new Response(failsLater('the fragment forwarded later', 45)));
            await new Promise((resolve) => setTimeout(resolve, 30));
            return forwarded;
          },
          // Makes, 20 ms after it answered, a sub-request whose stream it ignores, and which fails.
          // So too, one whose stream failed as it was answered, which the timer hears itself, through pipeline().
          '/later-heard': (request: Request) => {
            setTimeout(async () => {
              // Within a promise's turn, as a sub-request made by an async function after an await is: its stream's 'error' comes after it.
              await null;
              const inner = await duplicateFragment(request, async () => {
                const stream = new Readable({ read() {} });
                stream.destroy(new Error('the heard belated fragment failed'));
                return new Response(stream);
              });
              pipeline(inner.body as Readable, new Writable({ write: (_chunk, _encoding, callback) => callback() }), (error) => void (heard = error));
            }, 20);
            return new Response('page');
          },
          // Ignores a fragment's stream whose own once() throws (a wrapper that takes no listeners that way).
          '/odd': async (request: Request) => {
            await duplicateFragment(request, () => {
              const stream = new Readable({ read() {} });
              stream.once = () => {
                throw new Error('no once() here');
              };
              return new Response(stream);
            });
            return new Response('page');
          },
          // Ignores a fragment's stream whose own once is no function (a wrapper that hides it), which fails once the page has terminated.
          // So too, and a kernel.response listener replaces that answer (see replacer): the fragment's stream, dropped, fails in its clean-up.
          '/forwards-replaced': async () => {
            const forwarded = await fragment(() => new Response(new Readable({ read() {}, destroy: (_error, callback) => setTimeout(() => callback(new Error('the replaced forward failed')), 5) })));
            await new Promise((resolve) => setTimeout(resolve, 30));
            return forwarded;
          },
          '/odd-later': async (request: Request) => {
            await duplicateFragment(request, () => {
              const stream = failsLater('the fragment without once()', 20);
              (stream as { once: unknown }).once = undefined;
              return new Response(stream);
            });
            return new Response('page');
          },
          '/later': (request: Request) => {
            setTimeout(() => void duplicateFragment(request, () => new Response(failsLater('the belated fragment', 10))), 20);
            return new Response('page');
          },
        }),
      },
    });
    server.app.bus.on('log', onLog);
  });
  test.after(async () => server.close());
  test.before.each(() => {
    logged.length = 0;
  });

  test('one the page answers with, failing while kernel.response awaits as another request terminates, is the server\'s alone to log', async () => {
    const forwarded = fetchFrom(server, 'http', '/forwards');
    // Served and terminated while /forwards awaits in kernel.response, its fragment's stream failed and not yet claimed by it.
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.is((await fetchFrom(server, 'http', '/text')).body, 'served on');
    assert.is((await forwarded).status, 500);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(lines(UNHEARD), [], JSON.stringify(logged));
    assert.equal(lines('the forwarded fragment failed').map(({ level }) => level), ['CRITICAL'], JSON.stringify(logged));
  });

  test('one the page answers with once it has held it a while, another request terminating meanwhile, is the server\'s alone to log', async () => {
    const forwarded = fetchFrom(server, 'http', '/forwards-later');
    // Served and terminated while /forwards-later holds its fragment's stream, which fails later, as it awaits in kernel.response.
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.is((await fetchFrom(server, 'http', '/text')).body, 'served on');
    assert.is((await forwarded).status, 500);
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(lines(UNHEARD), [], JSON.stringify(logged));
    assert.equal(lines('the fragment forwarded later failed').map(({ level }) => level), ['CRITICAL'], JSON.stringify(logged));
  });

  test('one the page answers with once it has held it a while, another request terminating meanwhile, then replaced on kernel.response and failing in its clean-up, is logged once as not sent', async () => {
    const replaced = fetchFrom(server, 'http', '/forwards-replaced');
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.is((await fetchFrom(server, 'http', '/text')).body, 'served on');
    assert.is((await replaced).body, 'in its place');
    await until(() => lines('the replaced forward failed').length > 0, 1000, 'the failure logged');
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(lines('the replaced forward failed').map(({ level, message }) => [level, message]), [['ERROR', 'The response body stream, not sent, failed: Error: the replaced forward failed']], JSON.stringify(logged));
  });

  test("one whose own once() throws does not break the page's terminate: the server serves on", async () => {
    assert.is((await fetchFrom(server, 'http', '/odd')).body, 'page');
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(logged.filter((line) => line.message.includes('no once() here') || line.level === 'CRITICAL'), [], JSON.stringify(logged));
    assert.is((await fetchFrom(server, 'http', '/text')).body, 'served on');
  });

  test('one whose own once is no function, ignored, that fails once the page has terminated is logged once at ERROR', async () => {
    assert.is((await fetchFrom(server, 'http', '/odd-later')).body, 'page');
    await until(() => lines('the fragment without once() failed').length > 0, 1000, 'the failure logged');
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(lines('the fragment without once() failed').map(({ level, message }) => [level, message]), [['ERROR', `${UNHEARD}Error: the fragment without once() failed`]], JSON.stringify(logged));
  });

  test('one of a sub-request made once the page has terminated, ignored, that fails is logged once at ERROR', async () => {
    assert.is((await fetchFrom(server, 'http', '/later')).body, 'page');
    await until(() => lines('the belated fragment failed').length > 0, 1000, 'the failure logged');
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(lines('the belated fragment failed').map(({ level, message }) => [level, message]), [['ERROR', `${UNHEARD}Error: the belated fragment failed`]], JSON.stringify(logged));
    if (debug) assert.equal(lines('the belated fragment failed').map(({ path }) => path), ['/later']);
  });

  test('one of a sub-request made once the page has terminated that the maker hears itself (pipeline()) is its own to log', async () => {
    heard = undefined;
    assert.is((await fetchFrom(server, 'http', '/later-heard')).body, 'page');
    await until(() => heard !== undefined, 1000, 'the failure heard by pipeline()');
    assert.is((heard as Error | null | undefined)?.message, 'the heard belated fragment failed');
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.equal(lines(UNHEARD), [], JSON.stringify(logged));
  });

  test.run();
}
