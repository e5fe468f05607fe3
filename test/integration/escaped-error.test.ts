// An error that escapes kernel.handle() (a kernel.exception listener of the application that
// throws) still gets an error page, over real sockets: the debug page with the request's logs for
// clients allowed to see it, the plain page or problem+json otherwise, never the bare text.
import { request as undiciRequest } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EventDispatcher, HttpKernel, KernelEvents, MethodNotAllowedHttpError, Response, ResponseNotSendableError, type ExceptionEvent, type Request, type TerminateEvent } from '../../kernel/index.js';
import { Logger, createBus } from '../../lib/log/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { createRequestListener } from '../../lib/server/index.js';
import { SCHEMES, decodeEntities, fetchFrom, header, savedProfile, serveListener, type ListenerServer, type TestServer, startTestServer } from './harness.js';

function routes(): RouteCollection {
  return new RouteCollection().add('order', new Route('/orders/:id', {
    defaults: {
      _controller: () => {
        throw new Error('the order service is down');
      },
    },
  }));
}

/** An application's error formatter with a bug: it reads a property of something that is not there. */
const buggyFormatter = {
  getSubscribedEvents: () => ({ [KernelEvents.EXCEPTION]: ['onException', 10] as const }),
  onException(event: ExceptionEvent): void {
    const details = (event.error as { details?: { reason: string } }).details;
    event.setResponse(new Response(`failed: ${details!.reason}`, 500));
  },
};

/** Counts the kernel.terminate events, with the status of each response. */
function terminateWatcher(): { statuses: number[]; getSubscribedEvents(): Record<string, readonly [string, number]>; onTerminate(event: TerminateEvent): void } {
  return {
    statuses: [],
    getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: ['onTerminate', 0] as const }),
    onTerminate(event: TerminateEvent): void {
      this.statuses.push(event.response.status);
    },
  };
}

for (const scheme of SCHEMES) {
  const test = suite(`an error that escapes the kernel, over ${scheme}`);
  const terminated = terminateWatcher();
  let debug: TestServer;
  let plain: TestServer;
  let brokenPage: TestServer;
  let asyncPage: TestServer;

  test.before(async () => {
    debug = await startTestServer({ kernel: { debug: true, routes: routes(), subscribers: [buggyFormatter, terminated] } });
    plain = await startTestServer({ kernel: { debug: false, routes: routes(), subscribers: [buggyFormatter] } });
    brokenPage = await startTestServer({
      kernel: {
        debug: true,
        routes: routes(),
        subscribers: [buggyFormatter],
        errorController: () => {
          throw new Error('the error page is broken too');
        },
      },
    });
    // An error controller of the application's that answers later (a Promise), or with what is no Response.
    asyncPage = await startTestServer({
      kernel: {
        debug: false,
        routes: routes(),
        subscribers: [buggyFormatter],
        errorController: async (sub: { path: string }) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          return sub.path === '/orders/2' ? 'not a Response' : new Response(`our own page for ${sub.path}`, 503, { 'content-type': 'text/plain' });
        },
      },
    });
  });
  test.after(async () => {
    await debug.close();
    await plain.close();
    await brokenPage.close();
    await asyncPage.close();
  });

  test('debug: the debug page of the listener\'s error, with the request\'s logs', async () => {
    const response = await fetchFrom(debug, scheme, '/orders/7');
    assert.is(response.status, 500);
    assert.match(header(response.headers['content-type']), /^text\/html/);
    const page = decodeEntities(response.body);
    assert.match(page, "TypeError");
    assert.match(page, "Cannot read properties of undefined (reading 'reason')");
    // The request's own records: the route it matched, and the CRITICAL line of the escape.
    assert.match(page, 'Matched route "order".');
    assert.match(page, 'Unhandled error: ');
    assert.match(page, 'while handling Error: the order service is down');
    // And the error itself, with its frames, in a section of its own.
    const handled = page.slice(page.indexOf('<section id="handled">'));
    assert.match(handled, 'Thrown while handling');
    assert.match(handled, '<p class="message">the order service is down</p>');
    assert.match(handled, 'escaped-error.test.ts');
    assert.match(header(response.headers['x-debug-exception']), /Cannot%20read%20properties/);
  });

  test('the request terminates and is recorded: its token on the page and the headers, its profile with the error and the logs', async () => {
    const before = terminated.statuses.length;
    const response = await fetchFrom(debug, scheme, '/orders/8');
    assert.is(response.status, 500);
    const token = header(response.headers['x-debug-token']);
    assert.match(token, /^[0-9a-f]{6}$/);
    assert.match(header(response.headers['x-debug-token-link']), new RegExp(`/_profiler/${token}$`));
    // The page's link leads to a profile that exists.
    assert.ok(response.body.includes(`/_profiler/${token}`));
    const profile = await savedProfile(debug, token);
    assert.equal(terminated.statuses.slice(before), [500]);
    assert.is(profile.status, 500);
    assert.is(profile.parent, null);
    assert.match(profile.url, /\/orders\/8$/);
    const shown = debug.app.profiler!.present(profile).collectors as any;
    assert.is(shown.exception.exceptions[0].class, 'TypeError');
    assert.match(shown.exception.exceptions[0].message, "reading 'reason'");
    // The controller's error, which the listener was handling, with its own stack frames.
    assert.is(shown.exception.handled.length, 1);
    assert.is(shown.exception.handled[0].class, 'Error');
    assert.is(shown.exception.handled[0].message, 'the order service is down');
    assert.ok(shown.exception.handled[0].frames.some((frame: { file: string | null }) => frame.file?.endsWith('escaped-error.test.ts')), JSON.stringify(shown.exception.handled[0].frames));
    const panel = decodeEntities((await fetchFrom(debug, scheme, `/_profiler/${token}?panel=exception`)).body);
    assert.match(panel, 'Thrown while handling');
    assert.match(panel, '<p class="message">the order service is down</p>');
    const messages = shown.logger.logs.map((record: { message: string }) => record.message);
    assert.ok(messages.includes('Matched route "order".'), messages.join(' | '));
    // The record names the error the listener was handling: the controller's, which nothing else shows.
    const escape = shown.logger.logs.find((record: { message: string }) => record.message.startsWith('Unhandled error: '));
    assert.is(escape.message, "Unhandled error: TypeError: Cannot read properties of undefined (reading 'reason') (thrown by a kernel.exception listener while handling Error: the order service is down)");
    assert.is(escape.level, 2);
  });

  test('a JSON client gets problem+json; without debug, the plain page says nothing internal', async () => {
    const json = await fetchFrom(debug, scheme, '/orders/7', { headers: { accept: 'application/json' } });
    assert.is(json.status, 500);
    assert.is(header(json.headers['content-type']), 'application/problem+json');
    assert.is(JSON.parse(json.body).status, 500);
    const page = await fetchFrom(plain, scheme, '/orders/7');
    assert.is(page.status, 500);
    assert.ok(page.body.includes('The server returned a "500 Internal Server Error".'));
    assert.not.ok(page.body.includes('reason'));
    assert.not.ok(page.body.includes('order service'));
  });

  test('an error page that fails as well: the plain page, still no bare text', async () => {
    const response = await fetchFrom(brokenPage, scheme, '/orders/7');
    assert.is(response.status, 500);
    assert.match(header(response.headers['content-type']), /^text\/html/);
    assert.ok(response.body.includes('The server returned a "500 Internal Server Error".'));
  });

  test('an error page answered later is sent; one that answers with what is no Response gives the plain page', async () => {
    const later = await fetchFrom(asyncPage, scheme, '/orders/1');
    assert.is(later.status, 503);
    assert.is(later.body, 'our own page for /orders/1');
    const none = await fetchFrom(asyncPage, scheme, '/orders/2');
    assert.is(none.status, 500);
    assert.match(header(none.headers['content-type']), /^text\/html/);
    assert.ok(none.body.includes('The server returned a "500 Internal Server Error".'));
  });

  test.run();
}

// An embedder's own kernel, mounted with createRequestListener and no `unhandled` page: the bare
// text, and kernel.terminate after it all the same.
{
  const test = suite('an error that escapes an embedder\'s kernel');
  const terminated: number[] = [];
  let server: ListenerServer;

  test.before(async () => {
    const dispatcher = new EventDispatcher();
    dispatcher.addListener(KernelEvents.EXCEPTION, () => {
      throw new Error('the formatter failed');
    });
    dispatcher.addListener(KernelEvents.TERMINATE, (event: TerminateEvent) => void terminated.push(event.response.status));
    const kernel = new HttpKernel(dispatcher, {
      getController: () => () => {
        throw new Error('the order service is down');
      },
    });
    server = await serveListener(createRequestListener(kernel));
  });
  test.after(async () => {
    await server.close();
  });

  for (const scheme of SCHEMES) {
    test(`over ${scheme}: the bare 500 text, then kernel.terminate with it`, async () => {
      const before = terminated.length;
      const response = await undiciRequest(`${server.urls[scheme]}/orders/7`, { dispatcher: server.agent });
      assert.is(response.statusCode, 500);
      assert.is(header(response.headers['content-type']), 'text/plain; charset=UTF-8');
      assert.is(await response.body.text(), 'Internal Server Error\n');
      for (let k = 0; k < 100 && terminated.length === before; k++) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(terminated.slice(before), [500]);
    });
  }

  test.run();
}

// An embedder's own kernel with no kernel.exception listener at all: the error escapes handle() as it
// was thrown, and the bare text keeps its status and headers (a 404 is no 500).
{
  const test = suite('an HTTP error that escapes an embedder\'s kernel with no error listener');
  const terminated: number[] = [];
  let server: ListenerServer;

  test.before(async () => {
    const dispatcher = new EventDispatcher();
    dispatcher.addListener(KernelEvents.REQUEST, (event) => {
      if (event.request.path === '/orders') throw new MethodNotAllowedHttpError(['GET', 'HEAD']);
    });
    dispatcher.addListener(KernelEvents.TERMINATE, (event) => void terminated.push(event.response.status));
    // No controller for any path: the kernel's own 404.
    server = await serveListener(createRequestListener(new HttpKernel(dispatcher, { getController: () => null })));
  });
  test.after(async () => {
    await server.close();
  });

  for (const scheme of SCHEMES) {
    test(`over ${scheme}: a 404 is a bare 404 and a 405 keeps its Allow, then kernel.terminate with them`, async () => {
      const before = terminated.length;
      const missing = await undiciRequest(`${server.urls[scheme]}/nowhere`, { dispatcher: server.agent });
      assert.is(missing.statusCode, 404);
      assert.is(header(missing.headers['content-type']), 'text/plain; charset=UTF-8');
      assert.is(await missing.body.text(), 'Not Found\n');
      const refused = await undiciRequest(`${server.urls[scheme]}/orders`, { dispatcher: server.agent, method: 'POST', body: '' });
      assert.is(refused.statusCode, 405);
      assert.is(header(refused.headers.allow), 'GET, HEAD');
      assert.is(await refused.body.text(), 'Method Not Allowed\n');
      for (let k = 0; k < 100 && terminated.length < before + 2; k++) await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(terminated.slice(before), [404, 405]);
    });
  }

  test.run();
}

// An error page node:http cannot send (a 1xx status): the bare 500 goes, and the log says why, in
// the request's context, as inject() logs it; kernel.terminate records that 500, not the page.
{
  const test = suite('an error page the server cannot send');
  const terminated: number[] = [];
  const critical: Array<{ message: string; path: string | undefined }> = [];
  let server: ListenerServer;
  let kernel: HttpKernel;

  test.before(async () => {
    const dispatcher = new EventDispatcher();
    // Answers only the refusal of a response, and with what cannot be sent either (a header beyond Latin-1); anything else escapes.
    dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
      if (event.error instanceof ResponseNotSendableError) event.setResponse(new Response('refused again', 500, { 'x-note': 'refus\u0101' }));
    });
    dispatcher.addListener(KernelEvents.TERMINATE, (event: TerminateEvent) => void terminated.push(event.response.status));
    kernel = new HttpKernel(dispatcher, {
      getController: (request) => (request.path === '/interim' ? () => new Response('early hints', 103) : () => {
        throw new Error('the order service is down');
      }),
    });
    const bus = createBus();
    bus.on('log', ({ record, request }) => void (record.levelName === 'CRITICAL' && critical.push({ message: record.message, path: (request as Request | undefined)?.path })));
    const logger = new Logger({ bus, currentRequest: () => kernel.requestStack.getCurrentRequest() });
    server = await serveListener(createRequestListener(kernel, { logger, unhandled: () => new Response('a page', 103) }));
  });
  test.after(async () => {
    await server.close();
  });

  for (const scheme of SCHEMES) {
    test(`over ${scheme}: an escaped error's page and a refusal's page: the bare 500, the page's refusal logged CRITICAL as the request's, terminated with the 500`, async () => {
      for (const path of ['/orders/7', '/interim']) {
        terminated.length = 0;
        critical.length = 0;
        const response = await undiciRequest(`${server.urls[scheme]}${path}`, { dispatcher: server.agent });
        assert.is(response.statusCode, 500);
        assert.is(await response.body.text(), 'Internal Server Error\n');
        for (let k = 0; k < 100 && terminated.length === 0; k++) await new Promise((resolve) => setTimeout(resolve, 20));
        assert.equal(terminated, [500], path);
        const refusal = path === '/interim' ? 'TypeError: Invalid character in header content ["x-note"]' : 'RangeError: A response sent to the client has a final status (200 or more), not 103.';
        assert.equal(critical.at(-1), { message: `Unhandled error: ${refusal}`, path }, path);
      }
    });
  }

  test.run();
}
