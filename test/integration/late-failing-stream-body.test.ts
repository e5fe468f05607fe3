// A stream body that fails while the kernel still holds it (an async kernel.response listener awaiting
// I/O), before the server has attached its own listeners: node emits its 'error' with nobody listening,
// which ended the process. The kernel hears it from the moment it is given the response.
import { Readable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Response, type ResponseEvent } from '../../kernel/index.js';
import type { LogEntry } from '../../lib/log/index.js';
import { SCHEMES, fetchFrom, routesOf, startTestServer, until, type TestServer } from './harness.js';

/** A live stream that fails `ms` from now, with nothing sent. */
const failsLater = (what: string, ms: number): Readable => {
  const stream = new Readable({ read() {} });
  setTimeout(() => stream.destroy(new Error(`${what} failed later`)), ms);
  return stream;
};

for (const scheme of SCHEMES) {
  const test = suite(`a stream body failing while an async kernel.response listener awaits, over ${scheme}`);
  let server: TestServer;
  const critical: string[] = [];
  const onLog = (entry: LogEntry): void => void (entry.record.levelName === 'CRITICAL' && critical.push(entry.record.message));

  test.before(async () => {
    // Each response waits 40 ms in kernel.response: the body fails 5 ms in, before handle() has given it back.
    const slow = { getSubscribedEvents: () => ({ [KernelEvents.RESPONSE]: 'onResponse' }), onResponse: () => new Promise((resolve) => setTimeout(resolve, 40)) };
    server = await startTestServer({
      kernel: {
        routes: routesOf({
          '/export': () => new Response(failsLater('the export', 5), 200),
          // An error it emits itself, not destroyed (no `errored`), once the server listens: the server's to hear.
          '/emitted': () => new Response(new Readable({ read() { setTimeout(() => this.emit('error', new Error('the feed emitted an error')), 50); } }), 200),
          '/text': () => new Response('still serving'),
          // A stream whose own on() drops 'error' listeners: the kernel's hearer must not depend on it.
          '/deaf': () => {
            const stream = failsLater('the deaf export', 5);
            stream.on = function (this: Readable, event: string | symbol, listener: (...args: any[]) => void) {
              if (event !== 'error') Readable.prototype.on.call(this, event, listener);
              return this;
            } as Readable['on'];
            return new Response(stream, 200);
          },
        }),
        errorController: () => new Response(failsLater('the page', 5), 500, { 'content-type': 'text/html' }),
        subscribers: [slow],
      },
    });
    server.app.bus.on('log', onLog);
  });
  test.after(async () => server.close());

  test('the process lives: the bare 500, both errors logged CRITICAL, and the server serves on', async () => {
    critical.length = 0;
    const response = await fetchFrom(server, scheme, '/export');
    assert.equal([response.status, response.body], [500, 'Internal Server Error\n']);
    assert.ok(critical.some((line) => line.includes('the export failed later')), JSON.stringify(critical));
    assert.ok(critical.some((line) => line.includes('the page failed later')), JSON.stringify(critical));
    assert.is((await fetchFrom(server, scheme, '/text')).body, 'still serving');
  });

  test('an error the stream emits itself, once the server listens, is the server\'s to answer: its page, logged, and the process lives', async () => {
    critical.length = 0;
    const response = await fetchFrom(server, scheme, '/emitted');
    assert.is(response.status, 500);
    assert.ok(critical.some((line) => line.includes('the feed emitted an error')), JSON.stringify(critical));
    assert.is((await fetchFrom(server, scheme, '/text')).body, 'still serving');
  });

  test('a stream whose on() drops \'error\' listeners fails so too: the bare 500, logged, and the process lives', async () => {
    critical.length = 0;
    const response = await fetchFrom(server, scheme, '/deaf');
    assert.equal([response.status, response.body], [500, 'Internal Server Error\n']);
    assert.ok(critical.some((line) => line.includes('the deaf export failed later')), JSON.stringify(critical));
    critical.length = 0;
    assert.is((await server.app.inject('/deaf')).status, 500);
    assert.ok(critical.some((line) => line.includes('the deaf export failed later')), JSON.stringify(critical));
    assert.is((await fetchFrom(server, scheme, '/text')).body, 'still serving');
  });

  test('inject() answers it so too', async () => {
    critical.length = 0;
    const response = await server.app.inject('/export');
    assert.equal([response.status, response.text()], [500, 'Internal Server Error\n']);
    assert.ok(critical.some((line) => line.includes('the page failed later')), JSON.stringify(critical));
  });

  test.run();
}

// A stream never read (a HEAD's, one prepare() took from a 204, one a listener replaced) that fails: the answer goes out whole without it, and
// the kernel's hearer keeps node from ending the process on its error; the server and inject() log it, for its request.
for (const scheme of SCHEMES) {
  const test = suite(`a stream body never read (a HEAD's, a 204's, one a listener replaced) that failed, over ${scheme}`);
  let server: TestServer;
  const logged: { level: string; message: string; path: string | undefined }[] = [];
  const onLog = (entry: LogEntry): void => void logged.push({ level: entry.record.levelName, message: entry.record.message, path: (entry.request as { path?: string } | undefined)?.path });

  test.before(async () => {
    const slow = { getSubscribedEvents: () => ({ [KernelEvents.RESPONSE]: 'onResponse' }), onResponse: () => new Promise((resolve) => setTimeout(resolve, 40)) };
    // Answers /replaced with text in place of its stream, which the kernel then destroys.
    const replacer = {
      getSubscribedEvents: () => ({ [KernelEvents.RESPONSE]: ['onResponse', -10] as const }),
      onResponse: (event: ResponseEvent) => void (event.request.path.startsWith('/replaced') && event.setResponse(new Response('in its place'))),
    };
    server = await startTestServer({
      kernel: {
        debug: true,
        routes: routesOf({
          '/export': () => new Response(failsLater('the export', 5), 200),
          // Dropped by prepare() at once, and failing in its clean-up.
          '/replaced': () => new Response(new Readable({ read() {}, destroy: (_error, callback) => setTimeout(() => callback(new Error('the replaced export failed')), 5) }), 200),
          // The same, built with `emitClose: false`: it never emits 'close', only its 'error'.
          '/replaced-quietly': () => new Response(new Readable({ emitClose: false, read() {}, destroy: (_error, callback) => setTimeout(() => callback(new Error('the quiet export failed')), 5) }), 200),
          '/empty': () => new Response(new Readable({ read() {}, destroy: (_error, callback) => setTimeout(() => callback(new Error('the empty export failed later')), 5) }), 204),
        }),
        subscribers: [slow, replacer],
      },
    });
    server.app.bus.on('log', onLog);
  });
  test.after(async () => server.close());

  test('one a kernel.response listener replaced, destroyed by the kernel, that fails in its clean-up is logged once at ERROR, for its request', async () => {
    const failures = (): typeof logged => logged.filter((line) => line.message.includes('the replaced export failed'));
    logged.length = 0;
    const response = await fetchFrom(server, scheme, '/replaced');
    assert.equal([response.status, response.body], [200, 'in its place']);
    await until(() => failures().length > 0, 2000, 'the failure logged');
    assert.equal(failures().map(({ level, path }) => [level, path]), [['ERROR', '/replaced']], JSON.stringify(logged));
    logged.length = 0;
    assert.is((await server.app.inject('/replaced')).text(), 'in its place');
    await until(() => failures().length > 0, 2000, 'the failure logged');
    assert.equal(failures().map(({ level, path }) => [level, path]), [['ERROR', '/replaced']], JSON.stringify(logged));
  });

  test("one built with `emitClose: false`, which emits no 'close', is logged so too, once its 'error' comes", async () => {
    const failures = (): typeof logged => logged.filter((line) => line.message.includes('the quiet export failed'));
    for (const answer of [async () => (await fetchFrom(server, scheme, '/replaced-quietly')).body, async () => (await server.app.inject('/replaced-quietly')).text()]) {
      logged.length = 0;
      assert.is(await answer(), 'in its place');
      await until(() => failures().length > 0, 2000, 'the failure logged');
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(failures().map(({ level, message, path }) => [level, message, path]), [['ERROR', 'The response body stream, not sent, failed: Error: the quiet export failed', '/replaced-quietly']], JSON.stringify(logged));
    }
  });

  test('is logged once at ERROR, for its request, by the server and by inject()', async () => {
    for (const [path, method, status, what] of [['/export', 'HEAD', 200, 'the export'], ['/empty', 'GET', 204, 'the empty export']] as const) {
      const failures = (): typeof logged => logged.filter((line) => line.message.includes(`${what} failed later`));
      logged.length = 0;
      assert.is((await fetchFrom(server, scheme, path, { method })).status, status);
      assert.equal(failures().map(({ level, path }) => [level, path]), [['ERROR', path]], JSON.stringify(logged));
      logged.length = 0;
      assert.is((await server.app.inject(path, { method })).status, status);
      assert.equal(failures().map(({ level, path }) => [level, path]), [['ERROR', path]], JSON.stringify(logged));
    }
  });

  test.run();
}
