// A stream body destroyed without an error (destroy(), not push(null)) before its first chunk, over
// real sockets: nothing was sent, so the client gets the error page of a ResponseBodyDestroyedError,
// logged and profiled, not a cut connection with no status and no log; after it, the answer is cut
// and that is logged, not taken for the client leaving. An empty stream that ends and a client that leaves keep their own answers.
import { Readable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Response, type ExceptionEvent, type TerminateEvent } from '../../kernel/index.js';
import type { LogEntry } from '../../lib/log/index.js';
import { SCHEMES, fetchFrom, header, routesOf, savedProfile, sendRaw, startTestServer, until, type TestServer } from './harness.js';

const MESSAGE = 'The response body stream was destroyed before its first chunk was sent, without an error (an empty body ends with push(null)).';
const CUT = 'The response body stream was destroyed before its end, without an error: the answer was cut after its head.';

for (const scheme of SCHEMES) {
  const test = suite(`a stream body destroyed without an error, over ${scheme}`);
  let server: TestServer;
  const terminated: string[] = [];
  const severe: string[] = [];
  const onLog = (entry: LogEntry): void => void (entry.record.level <= 3 && severe.push(`${entry.record.levelName} ${entry.record.message}`));

  test.before(async () => {
    const recorder = {
      getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }),
      onTerminate: (event: TerminateEvent): void => void terminated.push(`${event.request.path} ${event.response.status}`),
    };
    const routes = routesOf({
      '/now': () => {
        const body = new Readable({ read() {} });
        body.destroy();
        return new Response(body, 200, { 'content-type': 'text/csv' });
      },
      '/soon': () => {
        const body = new Readable({ read() {} });
        setTimeout(() => body.destroy(), 20);
        return new Response(body, 200, { 'content-type': 'text/csv' });
      },
      '/empty': () => new Response(Readable.from([]), 200, { 'content-type': 'text/csv' }),
      '/after': () => {
        const body = new Readable({ read() {} });
        body.push('id\n');
        setTimeout(() => body.destroy(), 20);
        return new Response(body, 200, { 'content-type': 'text/csv' });
      },
      // A proxied upstream response cut after its first chunk: node destroys it with an ECONNRESET 'aborted'.
      '/reset': () => {
        const body = new Readable({ read() {} });
        body.push('id\n');
        setTimeout(() => body.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' })), 20);
        return new Response(body, 200, { 'content-type': 'text/csv' });
      },
      // Destroyed when its client leaves, as an event stream does on request.signal.
      '/events': (request) => {
        const body = new Readable({ read() {} });
        request.signal.addEventListener('abort', () => body.destroy());
        return new Response(body, 200, { 'content-type': 'text/event-stream' });
      },
      '/ticks': (request) => {
        const body = new Readable({ read() {} });
        body.push(': tick\n');
        request.signal.addEventListener('abort', () => body.destroy());
        return new Response(body, 200, { 'content-type': 'text/event-stream' });
      },
      '/text': () => new Response('served on'),
    });
    server = await startTestServer({ kernel: { debug: true, routes, subscribers: [recorder] } });
    server.app.bus.on('log', onLog);
  });
  test.after(async () => server.close());

  for (const path of ['/now', '/soon']) {
    test(`${path}: the error page of the ResponseBodyDestroyedError, logged CRITICAL once, profiled and terminated as the 500 sent`, async () => {
      terminated.length = 0;
      severe.length = 0;
      const response = await fetchFrom(server, scheme, path, { headers: { accept: 'application/json' } });
      assert.is(response.status, 500);
      assert.match(header(response.headers['content-type']), /^application\/problem\+json/);
      assert.is(JSON.parse(response.body).detail, MESSAGE);
      const profile = await savedProfile(server, header(response.headers['x-debug-token']));
      assert.is(profile.status, 500);
      const classes = profile.collectors.exception.exceptions.map((error: { class: string }) => error.class);
      assert.equal(classes, ['ResponseBodyDestroyedError']);
      await until(() => terminated.length > 0, 2_000, 'kernel.terminate');
      assert.equal(terminated, [`${path} 500`]);
      assert.is(severe.length, 1, JSON.stringify(severe));
      assert.match(severe[0]!, /^CRITICAL Uncaught error: ResponseBodyDestroyedError: /);
      // The page is a whole answer: the connection serves on.
      assert.is((await fetchFrom(server, scheme, '/text')).body, 'served on');
    });
  }

  test('an empty stream that ends is a 200 with an empty body, nothing logged', async () => {
    severe.length = 0;
    const response = await fetchFrom(server, scheme, '/empty');
    assert.is(response.status, 200);
    assert.is(response.body, '');
    assert.equal(severe, []);
  });

  test('a body destroyed after its first chunk cuts the answer its head began, logged CRITICAL once as its own failure, not as the client leaving', async () => {
    severe.length = 0;
    const cut = await fetchFrom(server, scheme, '/after').then((response) => `answered ${response.status} ${JSON.stringify(response.body)}`, () => 'cut');
    assert.is(cut, 'cut');
    await until(() => severe.length > 0, 2_000, 'the log record');
    assert.equal(severe, [`CRITICAL The response body stream failed: ResponseBodyDestroyedError: ${CUT}`]);
  });

  test('inject() answers them as the server does: the page before the first chunk, and after it a rejection, logged', async () => {
    const page = await server.app.inject('/now', { headers: { accept: 'application/json' } });
    assert.is(page.status, 500);
    assert.is((page.json() as { detail: string }).detail, MESSAGE);
    severe.length = 0;
    const rejected = await server.app.inject('/after').then(() => 'resolved', (error: Error) => `${error.name}: ${error.message}`);
    assert.is(rejected, `ResponseBodyDestroyedError: ${CUT}`);
    assert.equal(severe, [`CRITICAL The response body stream failed: ResponseBodyDestroyedError: ${CUT}`]);
  });

  test("a body that fails after its first chunk with a connection's error code (an upstream cut, ECONNRESET) keeps its error, logged CRITICAL as its own failure, not taken for the client leaving; inject() alike", async () => {
    severe.length = 0;
    const cut = await fetchFrom(server, scheme, '/reset').then((response) => `answered ${response.status} ${JSON.stringify(response.body)}`, () => 'cut');
    assert.is(cut, 'cut');
    await until(() => severe.length > 0, 2_000, 'the log record');
    assert.equal(severe, ['CRITICAL The response body stream failed: Error: aborted']);
    severe.length = 0;
    const rejected = await server.app.inject('/reset').then(() => 'resolved', (error: NodeJS.ErrnoException) => `${error.code} ${error.message}`);
    assert.is(rejected, 'ECONNRESET aborted');
    assert.equal(severe, ['CRITICAL The response body stream failed: Error: aborted']);
  });

  test('a client that leaves after the head, its body destroyed on request.signal, is no failure of the body: nothing logged', async () => {
    terminated.length = 0;
    severe.length = 0;
    const received = await sendRaw(server, scheme, 'GET /ticks HTTP/1.1\r\nHost: localhost\r\n\r\n', { waitMs: 150 });
    assert.match(received, /^HTTP\/1\.1 200 OK\r\n[^]*: tick\n/);
    await until(() => terminated.length > 0, 2_000, 'kernel.terminate');
    assert.equal(severe, []);
  });

  test('a client that leaves while the head waits, its body destroyed on request.signal, ends as its leaving: a 499, no failure logged', async () => {
    terminated.length = 0;
    severe.length = 0;
    const received = await sendRaw(server, scheme, 'GET /events HTTP/1.1\r\nHost: localhost\r\n\r\n', { waitMs: 100 });
    assert.is(received, '');
    await until(() => terminated.length > 0, 2_000, 'kernel.terminate');
    assert.equal(terminated, ['/events 499']);
    assert.equal(severe, []);
  });

  test.run();
}

for (const scheme of SCHEMES) {
  const test = suite(`a stream body destroyed before its first chunk that emits no 'close', over ${scheme}`);
  let server: TestServer;
  const severe: string[] = [];
  const onLog = (entry: LogEntry): void => void (entry.record.level <= 3 && severe.push(`${entry.record.levelName} ${entry.record.message}`));

  test.before(async () => {
    const routes = routesOf({
      '/quiet': () => {
        const body = new Readable({ read() {}, emitClose: false });
        setTimeout(() => body.destroy(), 20);
        return new Response(body, 200, { 'content-type': 'text/csv' });
      },
      // Destroyed at once, its error page a stream whose first chunk comes after the response timeout of this answer.
      '/paged': () => {
        const body = new Readable({ read() {} });
        setTimeout(() => body.destroy(), 20);
        return new Response(body, 200, { 'content-type': 'text/csv' });
      },
    });
    server = await startTestServer({ kernel: { debug: true, routes }, limits: { responseTimeout: 300 } });
    server.app.dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
      if (event.request.path !== '/paged') return;
      const page = new Readable({ read() {} });
      setTimeout(() => {
        page.push('the page, late');
        page.push(null);
      }, 450);
      event.setResponse(new Response(page, 500, { 'content-type': 'text/plain' }));
    }, -64);
    server.app.bus.on('log', onLog);
  });
  test.after(async () => server.close());

  test("its stream error page, still awaiting its first chunk when the destroyed body's head wait ends, is not failed with that body's error: it is sent", async () => {
    severe.length = 0;
    const response = await fetchFrom(server, scheme, '/paged');
    assert.is(response.status, 500);
    assert.is(response.body, 'the page, late');
    // The body's failure alone, not the page's too.
    assert.is(severe.length, 1, JSON.stringify(severe));
    assert.match(severe[0]!, /^CRITICAL Uncaught error: ResponseBodyDestroyedError: /);
  });

  test('is answered at the response timeout with the error page of its destroy, not held for ever', async () => {
    const response = await fetchFrom(server, scheme, '/quiet', { headers: { accept: 'application/json' } });
    assert.is(response.status, 500);
    assert.is(JSON.parse(response.body).detail, MESSAGE);
  });

  test.run();
}
