// An error page whose own stream body fails before its first chunk, over real sockets: the page of
// a stream that failed so is given once, and a page failing so too gets the bare 500, logged, rather
// than a page again for ever (each failure answered by a page that fails, the event loop never free).
import { Readable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, NotFoundHttpError, Response, type Request, type TerminateEvent } from '../../kernel/index.js';
import type { LogEntry } from '../../lib/log/index.js';
import { SCHEMES, fetchFrom, header, routesOf, sendRaw, startTestServer, until, type TestServer } from './harness.js';

/** A stream that fails before its first chunk, as a file that cannot be opened does. */
const failing = (what: string): Readable =>
  new Readable({
    read() {
      this.destroy(new Error(`${what} cannot be read`));
    },
  });

/** A subscriber that notes the status each request terminates with in `terminated`. */
const statusesTerminated = (terminated: number[]) => ({
  getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }),
  onTerminate: (event: TerminateEvent) => void terminated.push(event.response.status),
});

/**
 * A server whose /export answers a body failing before its first chunk, whose /text answers text (the server serving on),
 * whose error pages come from `errorController`, and whose requests' terminated statuses go to `terminated`.
 */
const startExportServer = (errorController: (request: Request) => Response, terminated: number[]): Promise<TestServer> =>
  startTestServer({
    kernel: {
      routes: routesOf({ '/export': () => new Response(failing('the export'), 200), '/text': () => new Response('still serving') }),
      errorController,
      subscribers: [statusesTerminated(terminated)],
    },
  });

for (const scheme of SCHEMES) {
  const test = suite(`an error page whose stream fails before its first chunk, over ${scheme}`);
  let server: TestServer;
  let pages = 0;
  const terminated: number[] = [];
  const critical: string[] = [];
  const onLog = (entry: LogEntry): void => void (entry.record.levelName === 'CRITICAL' && critical.push(entry.record.message));

  test.before(async () => {
    // A page from the fourth on is text: without a bound, the test would hang rather than fail.
    server = await startExportServer(() => (++pages > 3 ? new Response('the loop was cut by the test', 500) : new Response(failing(`error page ${pages}`), 500, { 'content-type': 'text/html' })), terminated);
    server.app.bus.on('log', onLog);
  });
  test.after(async () => server.close());

  test('the page is tried once: its failure gets the bare 500, logged CRITICAL, the request terminated once, and the server serves on', async () => {
    pages = 0;
    terminated.length = 0;
    critical.length = 0;
    const response = await fetchFrom(server, scheme, '/export');
    assert.is(response.status, 500);
    assert.is(header(response.headers['content-type']), 'text/plain; charset=UTF-8');
    assert.is(response.body, 'Internal Server Error\n');
    assert.is(pages, 1);
    for (let i = 0; i < 100 && terminated.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(terminated, [500]);
    // The body's error, as the error listener logs it, then the page's failure.
    assert.is(critical.length, 2, JSON.stringify(critical));
    assert.match(critical[0]!, /^Uncaught error: Error: "the export cannot be read"/);
    assert.is(critical[1], 'The response body stream failed: Error: error page 1 cannot be read');
    assert.is((await fetchFrom(server, scheme, '/text')).body, 'still serving');
  });

  test('inject() answers it so too', async () => {
    pages = 0;
    critical.length = 0;
    const response = await server.app.inject('/export');
    assert.is(response.status, 500);
    assert.is(response.text(), 'Internal Server Error\n');
    assert.is(pages, 1);
    assert.equal(critical.slice(1), ['The response body stream failed: Error: error page 1 cannot be read']);
  });

  test.run();
}

/**
 * A page that fails with the very error it is the page of: one that stops once its request is aborted (as the
 * response timeout aborts it, with its error), or a template that rethrows what it renders; after a first chunk with `?late`.
 */
async function* failingWithItsError(request: Request): AsyncGenerator<string> {
  await new Promise((resolve) => setTimeout(resolve, 5));
  if (request.query.has('late')) yield '<p>';
  request.signal.throwIfAborted();
  throw request.attributes.get('exception');
}

for (const scheme of SCHEMES) {
  const test = suite(`an error page whose stream fails with the very error it is the page of, over ${scheme}`);
  let server: TestServer;
  const severe: string[] = [];
  const onLog = (entry: LogEntry): void => void (entry.record.level <= 3 && severe.push(`${entry.record.levelName} ${entry.record.message}`));

  test.before(async () => {
    server = await startTestServer({
      kernel: {
        routes: routesOf({
          '/export': () => new Response(failing('the export'), 200),
          '/stall': () => new Response(new Readable({ read() {} }), 200),
          '/throws': () => {
            throw new Error('the report broke');
          },
          '/missing': () => {
            throw new NotFoundHttpError('No book 7.');
          },
        }),
        errorController: (request: Request) => new Response(Readable.from(failingWithItsError(request)), 500, { 'content-type': 'text/html' }),
      },
      limits: { responseTimeout: 300 },
    });
    server.app.bus.on('log', onLog);
  });
  test.after(async () => server.close());

  const cases = [
    ['/export', 500, /^CRITICAL Uncaught error: Error: "the export cannot be read"/],
    ['/stall', 500, /^CRITICAL Uncaught error: ResponseTimeoutError: /],
    // The page handle() gives for a controller's error.
    ['/throws', 500, /^CRITICAL Uncaught error: Error: "the report broke"/],
  ] as const;
  for (const [path, status, record] of cases) {
    test(`${path}: the error is logged once, by the error listener, not again as the page's failure: before the page's first chunk (the bare 500), or after it (cut)`, async () => {
      severe.length = 0;
      const response = await fetchFrom(server, scheme, path);
      assert.is(response.status, status);
      assert.is(response.body, 'Internal Server Error\n');
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.is(severe.length, 1, JSON.stringify(severe));
      assert.match(severe[0]!, record);
      severe.length = 0;
      assert.is(await fetchFrom(server, scheme, `${path}?late`).then(() => 'answered', () => 'cut'), 'cut');
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.is(severe.length, 1, JSON.stringify(severe));
      assert.match(severe[0]!, record);
    });
  }

  test('a client error (4xx, logged at ERROR) that its page rethrows is logged CRITICAL as the page\'s failure, by the server and inject(): its bare 500, or its cut answer, has no record else', async () => {
    const expected = ['ERROR Uncaught error: NotFoundHttpError: "No book 7."', 'CRITICAL The response body stream failed: NotFoundHttpError: No book 7.'];
    const records = (): string[] => severe.splice(0).map((record) => record.replace(/ at .*$/, ''));
    severe.length = 0;
    const response = await fetchFrom(server, scheme, '/missing');
    assert.equal([response.status, response.body], [500, 'Internal Server Error\n']);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(records(), expected);
    assert.is(await fetchFrom(server, scheme, '/missing?late').then(() => 'answered', () => 'cut'), 'cut');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(records(), expected);
    assert.is((await server.app.inject('/missing')).status, 500);
    assert.equal(records(), expected);
    assert.is(await server.app.inject('/missing?late').then(() => 'resolved', (error: Error) => error.message), 'No book 7.');
    assert.equal(records(), expected);
  });

  test('inject() logs it once too', async () => {
    for (const [path, message] of [['/export', 'the export cannot be read'], ['/throws', 'the report broke']] as const) {
      severe.length = 0;
      const response = await server.app.inject(path);
      assert.is(response.text(), 'Internal Server Error\n');
      assert.is(severe.length, 1, JSON.stringify(severe));
      assert.match(severe[0]!, `CRITICAL Uncaught error: Error: "${message}"`);
      severe.length = 0;
      const failure = await server.app.inject(`${path}?late`).then(() => undefined, (error: unknown) => error as Error);
      assert.is(failure?.message, message);
      assert.is(severe.length, 1, JSON.stringify(severe));
      assert.match(severe[0]!, `CRITICAL Uncaught error: Error: "${message}"`);
    }
  });

  test.run();
}

/** A stream destroyed with an error as it is made, with no 'error' listener: node emits that error a tick later. */
const destroyedAlready = (): Readable => {
  const stream = new Readable({ read() {} });
  stream.destroy(new Error('the page was destroyed as it was made'));
  return stream;
};

for (const scheme of SCHEMES) {
  const test = suite(`an error page whose stream is destroyed with an error before it is given back (the page of a body failing before its first chunk), over ${scheme}`);
  let server: TestServer;
  const terminated: number[] = [];
  const critical: string[] = [];
  const onLog = (entry: LogEntry): void => void (entry.record.levelName === 'CRITICAL' && critical.push(entry.record.message));

  test.before(async () => {
    server = await startExportServer(() => new Response(destroyedAlready(), 500, { 'content-type': 'text/html' }), terminated);
    server.app.bus.on('log', onLog);
  });
  test.after(async () => server.close());

  test('the process lives: the bare 500, the page\'s error logged CRITICAL, the request terminated as that 500, and the server serves on', async () => {
    terminated.length = 0;
    critical.length = 0;
    const response = await fetchFrom(server, scheme, '/export');
    assert.equal([response.status, response.body], [500, 'Internal Server Error\n']);
    for (let i = 0; i < 100 && terminated.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(terminated, [500]);
    assert.is(critical.length, 2, JSON.stringify(critical));
    assert.match(critical[0]!, /^Uncaught error: Error: "the export cannot be read"/);
    assert.is(critical[1], 'The response body stream failed: Error: the page was destroyed as it was made');
    assert.is((await fetchFrom(server, scheme, '/text')).body, 'still serving');
  });

  test('inject() answers it so too', async () => {
    critical.length = 0;
    const response = await server.app.inject('/export');
    assert.equal([response.status, response.text()], [500, 'Internal Server Error\n']);
    assert.equal(critical.slice(1), ['The response body stream failed: Error: the page was destroyed as it was made']);
  });

  test.run();
}

/** An application's error formatter with a bug, run before the error listener (which logs the error and makes the page). */
const buggyFormatter = {
  getSubscribedEvents: () => ({ [KernelEvents.EXCEPTION]: ['onException', 10] as const }),
  onException(): void {
    throw new TypeError('the formatter broke');
  },
};

for (const scheme of SCHEMES) {
  const test = suite(`a kernel.exception listener that throws while the page of a body failing before its first chunk is made, over ${scheme}`);
  let server: TestServer;
  const critical: Array<{ message: string; context: Record<string, unknown> }> = [];
  const onLog = (entry: LogEntry): void => void (entry.record.levelName === 'CRITICAL' && critical.push({ message: entry.record.message, context: entry.record.context as Record<string, unknown> }));

  test.before(async () => {
    server = await startTestServer({
      kernel: { routes: routesOf({ '/export': () => new Response(failing('the export'), 200) }), subscribers: [buggyFormatter] },
    });
    server.app.bus.on('log', onLog);
  });
  test.after(async () => server.close());

  const expectBoth = (): void => {
    assert.equal(critical.map((record) => record.message), ['Unhandled error: TypeError: the formatter broke (thrown by a kernel.exception listener while handling Error: the export cannot be read)']);
    assert.is((critical[0]!.context.handledError as Error).message, 'the export cannot be read');
  };

  test('the bare 500, logged with the listener\'s error and the body\'s, which nothing else shows', async () => {
    critical.length = 0;
    const response = await fetchFrom(server, scheme, '/export');
    assert.equal([response.status, response.body], [500, 'Internal Server Error\n']);
    for (let i = 0; i < 100 && critical.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expectBoth();
  });

  test('inject() logs it so too', async () => {
    critical.length = 0;
    const response = await server.app.inject('/export');
    assert.equal([response.status, response.text()], [500, 'Internal Server Error\n']);
    expectBoth();
  });

  test.run();
}

for (const scheme of SCHEMES) {
  const test = suite(`an error page whose stream has given nothing when its client leaves (the page of a body failing before its first chunk), over ${scheme}`);
  let server: TestServer;
  const terminated: number[] = [];
  const pages: Readable[] = [];

  test.before(async () => {
    // The page of the export's error waits for ever; that of the client's leaving is text.
    server = await startExportServer((request: Request) => {
      if ((request.attributes.get('exception') as { status?: number }).status === 499) return new Response('gone', 499);
      const page = new Readable({ read() {} });
      pages.push(page);
      return new Response(page, 500, { 'content-type': 'text/html' });
    }, terminated);
  });
  test.after(async () => server.close());

  test('the request terminates as the client\'s leaving, a 499, as when a body waits so, not as the page\'s 500 that never went out; the page is destroyed', async () => {
    terminated.length = 0;
    pages.length = 0;
    // The client leaves once the page has been given, nothing sent.
    const answer = await sendRaw(server, scheme, 'GET /export HTTP/1.1\r\nHost: localhost\r\n\r\n', { waitMs: 300 });
    assert.is(answer, '');
    await until(() => terminated.length > 0, 5_000, 'kernel.terminate');
    assert.equal(terminated, [499]);
    assert.is(pages.length, 1);
    assert.ok(pages[0]!.destroyed);
    assert.is((await fetchFrom(server, scheme, '/text')).body, 'still serving');
  });

  test.run();
}
