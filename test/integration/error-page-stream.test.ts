// An error page whose own stream body fails before its first chunk, over real sockets: the page of
// a stream that failed so is given once, and a page failing so too gets the bare 500, logged, rather
// than a page again for ever (each failure answered by a page that fails, the event loop never free).
import { Readable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Response, type TerminateEvent } from '../../kernel/index.js';
import type { LogEntry } from '../../lib/log/index.js';
import { SCHEMES, fetchFrom, header, routesOf, startTestServer, type TestServer } from './harness.js';

/** A stream that fails before its first chunk, as a file that cannot be opened does. */
const failing = (what: string): Readable =>
  new Readable({
    read() {
      this.destroy(new Error(`${what} cannot be read`));
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
    const watcher = {
      getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }),
      onTerminate: (event: TerminateEvent) => void terminated.push(event.response.status),
    };
    server = await startTestServer({
      kernel: {
        routes: routesOf({ '/export': () => new Response(failing('the export'), 200), '/text': () => new Response('still serving') }),
        // A page from the fourth on is text: without a bound, the test would hang rather than fail.
        errorController: () => (++pages > 3 ? new Response('the loop was cut by the test', 500) : new Response(failing(`error page ${pages}`), 500, { 'content-type': 'text/html' })),
        subscribers: [watcher],
      },
    });
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
