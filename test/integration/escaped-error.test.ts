// An error that escapes kernel.handle() (a kernel.exception listener of the application that
// throws) still gets an error page, over real sockets: the debug page with the request's logs for
// clients allowed to see it, the plain page or problem+json otherwise, never the bare text.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Response, type ExceptionEvent } from '../../kernel/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, decodeEntities, fetchFrom, header, type TestServer, startTestServer } from './harness.js';

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

for (const scheme of SCHEMES) {
  const test = suite(`an error that escapes the kernel, over ${scheme}`);
  let debug: TestServer;
  let plain: TestServer;
  let brokenPage: TestServer;

  test.before(async () => {
    debug = await startTestServer({ kernel: { debug: true, routes: routes(), subscribers: [buggyFormatter] } });
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
  });
  test.after(async () => {
    await debug.close();
    await plain.close();
    await brokenPage.close();
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
    assert.match(header(response.headers['x-debug-exception']), /Cannot%20read%20properties/);
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

  test.run();
}
