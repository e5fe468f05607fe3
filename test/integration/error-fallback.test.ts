// Error pages that cannot be rendered and errors whose own headers cannot be sent, over real
// sockets: the client always gets a page with the error's status, never the adapter's bare 500,
// and never a header line the error smuggled in.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { HttpError, KernelEvents, Response, type Controller, type ExceptionEvent } from '../../kernel/index.js';
import { GENERIC_SERVER_ERROR_DETAIL } from '../../lib/errors/index.js';
import { LogLevel } from '../../lib/log/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, fetchFrom, header, rawStatus, savedProfile, sendRaw, startTestServer, type TestResponse, type TestServer } from './harness.js';

const boom = () => {
  throw new Error('trap');
};

/** A Proxy of an Error whose every trap throws: `instanceof` on it throws, and so does reading any property. */
const hostile = () => new Proxy(new Error('hostile'), { getPrototypeOf: boom, get: boom, has: boom, ownKeys: boom, getOwnPropertyDescriptor: boom });

/** Headers of every kind an error should not be able to send. */
function badHeaders(): Record<string, string> {
  const headers: Record<string, string> = {
    'Retry-After': '7',
    'x-split': 'a\r\nSet-Cookie: session=evil',
    'bad name': 'x',
    'content-length': '0',
    'x-huge': 'x'.repeat(2_000_000),
  };
  for (let i = 0; i < 5000; i++) headers[`x-h${i}`] = String(i);
  return headers;
}

function routesOf(controllers: Record<string, Controller>): RouteCollection {
  const routes = new RouteCollection();
  for (const [path, controller] of Object.entries(controllers)) routes.add(path.slice(1).replaceAll('/', '-'), new Route(path, { defaults: { _controller: controller } }));
  return routes;
}

/** Whether `response` is a page of the kernel's, not the adapter's `Internal Server Error` text that no listener made. */
function isPage(response: TestResponse): boolean {
  return /^(text\/html|application\/problem\+json)/.test(header(response.headers['content-type'])) && header(response.headers.vary).includes('Accept');
}

/** The header lines of a raw HTTP/1.1 answer, lower-cased names. */
function rawHeaderNames(answer: string): string[] {
  return answer
    .slice(0, answer.indexOf('\r\n\r\n'))
    .split('\r\n')
    .slice(1)
    .map((line) => line.slice(0, line.indexOf(':')).toLowerCase());
}

for (const scheme of SCHEMES) {
  const test = suite(`error pages that fail, and errors' own headers, over ${scheme}`);
  let pages: TestServer;
  let throwing: TestServer;
  let noResponse: TestServer;

  test.before(async () => {
    const routes = routesOf({
      '/proxy': () => {
        throw hostile();
      },
      '/bad-headers': () => {
        throw new HttpError(429, 'Slow down.', { headers: badHeaders() });
      },
      '/handled': () => {
        throw new HttpError(429, 'Slow down.', { headers: badHeaders() });
      },
    });
    // A listener of the application that answers with a 200: the kernel gives it the error's status and headers.
    const handled = {
      getSubscribedEvents: () => ({ [KernelEvents.EXCEPTION]: ['onException', 16] as const }),
      onException(event: ExceptionEvent) {
        if (event.request.path === '/handled') event.setResponse(new Response('handled by the application'));
      },
    };
    pages = await startTestServer({ kernel: { debug: true, routes, subscribers: [handled] } });
    const failing = () =>
      routesOf({
        '/maintenance': () => {
          throw new HttpError(503, 'Down: replica db-7 unreachable', { headers: { 'retry-after': '120' } });
        },
        '/bug': () => {
          throw new Error('secret=hunter2');
        },
      });
    throwing = await startTestServer({
      kernel: {
        debug: true,
        routes: failing(),
        errorController: () => {
          throw hostile();
        },
      },
    });
    noResponse = await startTestServer({ kernel: { debug: false, routes: failing(), errorController: () => 'not a Response' } });
  });
  test.after(async () => {
    await pages.close();
    await throwing.close();
    await noResponse.close();
  });

  test('a thrown Proxy whose traps throw gets a 500 page, HTML or problem+json, not the bare 500', async () => {
    const html = await fetchFrom(pages, scheme, '/proxy');
    assert.is(html.status, 500);
    assert.ok(isPage(html), header(html.headers['content-type']));
    assert.match(html.body, /<html/);
    const json = await fetchFrom(pages, scheme, '/proxy', { headers: { accept: 'application/json' } });
    assert.is(json.status, 500);
    assert.is(header(json.headers['content-type']), 'application/problem+json');
    assert.is(JSON.parse(json.body).status, 500);
    // Its profile is saved, with the error logged: a value that cannot be read is left out of the record, not the record out of the profile.
    const profile = await savedProfile(pages, header(html.headers['x-debug-token']));
    assert.ok(profile.collectors.logger.logs.some((record: { level: number; message: string }) => record.level === LogLevel.CRITICAL && record.message.startsWith('Uncaught error: Error: "Thrown value is not an Error')));
  });

  test('an error controller that throws: the plain page with the error\'s status and headers, no debug detail, and the failure CRITICAL in the profile', async () => {
    const response = await fetchFrom(throwing, scheme, '/maintenance');
    assert.is(response.status, 503);
    assert.is(header(response.headers['retry-after']), '120');
    assert.ok(isPage(response));
    assert.ok(response.body.includes('The server returned a "503 Service Unavailable".'));
    assert.not.ok(response.body.includes('db-7'));
    assert.is(response.headers['x-debug-exception'], undefined);
    const token = header(response.headers['x-debug-token']);
    assert.ok(token !== '', 'the profile is linked all the same');
    const profile = await savedProfile(throwing, token);
    const failure = profile.collectors.logger.logs.find((record: { message: string }) => record.message.startsWith('The error page failed'));
    assert.is(failure?.level, LogLevel.CRITICAL);
    assert.is(failure?.context.original_message, 'Down: replica db-7 unreachable');
  });

  test('an error controller that throws: a JSON client gets problem+json saying nothing of a 5xx', async () => {
    const response = await fetchFrom(throwing, scheme, '/bug', { headers: { accept: 'application/json' } });
    assert.is(response.status, 500);
    assert.is(header(response.headers['content-type']), 'application/problem+json');
    assert.equal(JSON.parse(response.body), { type: 'about:blank', title: 'Internal Server Error', status: 500, detail: GENERIC_SERVER_ERROR_DETAIL, instance: '/bug' });
    assert.not.ok(response.body.includes('hunter2'));
  });

  test('an error controller that answers no Response: the plain page with the error\'s status, for routes and for a 404', async () => {
    const down = await fetchFrom(noResponse, scheme, '/maintenance');
    assert.is(down.status, 503);
    assert.is(header(down.headers['retry-after']), '120');
    assert.ok(down.body.includes('The server returned a "503 Service Unavailable".'));
    const missing = await fetchFrom(noResponse, scheme, '/nowhere');
    assert.is(missing.status, 404);
    assert.ok(isPage(missing));
  });

  test('an error\'s headers with CR/LF, an invalid name, a body header, thousands of them or megabytes: the valid ones within bounds go out, nothing is split', async () => {
    for (const path of ['/bad-headers', '/handled']) {
      const response = await fetchFrom(pages, scheme, path);
      assert.is(response.status, 429, path);
      assert.is(header(response.headers['retry-after']), '7', path);
      assert.is(response.headers['set-cookie'], undefined, path);
      assert.is(response.headers['x-split'], undefined, path);
      assert.is(response.headers['x-huge'], undefined, path);
      const numbered = Object.keys(response.headers).filter((name) => /^x-h\d+$/.test(name));
      assert.is(numbered.length, 31, `${path}: Retry-After and 31 numbered headers are the 32 kept`);
      if (path === '/handled') assert.is(response.body, 'handled by the application');
      else assert.ok(isPage(response), path);
      // On the wire: one head, without a Set-Cookie line.
      const raw = await sendRaw(pages, scheme, `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      assert.is(rawStatus(raw), 429, path);
      assert.not.ok(rawHeaderNames(raw).includes('set-cookie'), path);
      assert.is(raw.match(/HTTP\/1\.1 /g)?.length, 1, path);
    }
  });

  test('the headers left out are logged once per response, as a WARNING', async () => {
    const response = await fetchFrom(pages, scheme, '/bad-headers');
    const profile = await savedProfile(pages, header(response.headers['x-debug-token']));
    const warnings = profile.collectors.logger.logs.filter((record: { level: number }) => record.level === LogLevel.WARNING);
    assert.is(warnings.length, 1);
    assert.match(warnings[0].message, /^4973 of the headers of HttpError left out of its response: x-split \(invalid value\), bad name \(invalid name\), content-length \(body header\), x-huge \(too large\), x-h31 \(too many\)/);
  });

  test.run();
}
