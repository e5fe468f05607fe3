// A legacy stream body (a `stream.Stream` with pipe() alone, no readableEnded): sent whole, and,
// once it has ended, left as pipeline() leaves a body that ended, not destroyed (its destroy() may
// close what it reads from); one whose client leaves before its end is destroyed. Its head waits for
// its first chunk, as a Readable's does: one that fails before it gets the error page, not a cut
// connection terminated as the 200 the client never got.
import { Stream } from 'node:stream';
import net from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Response, type TerminateEvent } from '../../kernel/index.js';
import type { LogEntry } from '../../lib/log/index.js';
import { SCHEMES, fetchFrom, header, routesOf, startTestServer, until, type TestServer } from './harness.js';

/** What each legacy body of a test saw: its destroy() called, by the id of its request. */
const destroyed: string[] = [];

/** A legacy stream of two chunks (`?forever` never ending), recording a destroy() call. */
function legacy(id: string, forever: boolean): Stream {
  const stream = new Stream() as Stream & { destroy(): void };
  let timer: NodeJS.Timeout | undefined;
  stream.destroy = () => {
    clearInterval(timer);
    destroyed.push(id);
  };
  setTimeout(() => {
    stream.emit('data', Buffer.from('leg'));
    if (forever) timer = setInterval(() => stream.emit('data', Buffer.alloc(16_384, 97)), 1);
    else {
      stream.emit('data', Buffer.from('acy'));
      stream.emit('end');
    }
  }, 5);
  return stream;
}

const test = suite('a legacy stream body');
let server: TestServer;
const terminated: string[] = [];
const uncaught: unknown[] = [];
const onUncaught = (error: unknown): void => void uncaught.push(error);
const severe: string[] = [];
/** What a legacy body's own emit() threw. */
const thrown: unknown[] = [];

test.before(async () => {
  const routes = routesOf({
    '/legacy': (request) => new Response(legacy(request.query.get('id') ?? '', request.query.has('forever')) as never, 200),
    // One that closes after its first chunk, with no 'end': a legacy stream's destroy() without an error.
    '/closed': () => {
      const stream = new Stream();
      setTimeout(() => {
        stream.emit('data', Buffer.from('leg'));
        stream.emit('close');
      }, 5);
      return new Response(stream as never, 200);
    },
    // One that fails before its first chunk (an error, or a 'close' with no 'end': a destroy() without an error).
    '/failing': (request) => {
      const stream = new Stream() as Stream & { destroy(): void };
      stream.destroy = () => void destroyed.push(request.path);
      setTimeout(() => (request.query.has('close') ? stream.emit('close') : stream.emit('error', new Error('the legacy source broke'))), 5);
      return new Response(stream as never, 200);
    },
    // One that emits what is no chunk as 'data' (`?value=object` an object, `?value=null` null, else `undefined`): its first (`?first`), or after 'leg'.
    '/odd': (request) => {
      const stream = new Stream() as Stream & { destroy(): void };
      stream.destroy = () => void destroyed.push(request.path);
      const value = request.query.get('value');
      const odd = value === 'object' ? { length: 3 } : value === 'null' ? null : undefined;
      setTimeout(() => {
        try {
          if (!request.query.has('first')) stream.emit('data', Buffer.from('leg'));
          stream.emit('data', odd);
          stream.emit('end');
        } catch (error) {
          thrown.push(error);
        }
      }, 5);
      return new Response(stream as never, 200);
    },
    // A bare legacy stream, no destroy() at all, never ending.
    '/bare': (request) => new Response(new Stream() as never, Number(request.query.get('status') ?? 200)),
    '/slow': async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return new Response('slow');
    },
  });
  const recorder = {
    getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }),
    onTerminate: (event: TerminateEvent): void => void terminated.push(`${event.request.method} ${event.request.path} ${event.response.status}`),
  };
  server = await startTestServer({ kernel: { routes, subscribers: [recorder] } });
  server.app.bus.on('log', (entry: LogEntry) => void (entry.record.level <= 3 && severe.push(`${entry.record.levelName} ${entry.record.message}`)));
  process.on('uncaughtException', onUncaught);
});
test.after(async () => {
  process.off('uncaughtException', onUncaught);
  await server.close();
});

test('one that ends is sent whole and not destroyed after its end, by the server and by inject()', async () => {
  destroyed.length = 0;
  for (const scheme of SCHEMES) {
    const response = await fetchFrom(server, scheme, `/legacy?id=${scheme}`);
    assert.is(response.status, 200);
    assert.is(response.body, 'legacy');
  }
  const injected = await server.app.inject('/legacy?id=inject');
  assert.is(injected.text(), 'legacy');
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(destroyed, []);
});

test('one whose client leaves before its end is destroyed', async () => {
  destroyed.length = 0;
  const socket = net.connect(Number(new URL(server.urls.http).port), '127.0.0.1');
  socket.write('GET /legacy?id=left&forever HTTP/1.1\r\nHost: localhost\r\n\r\n');
  let received = 0;
  socket.on('data', (data: Buffer) => {
    received += data.length;
    if (received > 50_000) socket.destroy();
  });
  await until(() => destroyed.includes('left'), 5_000, 'the destroy of the legacy body left by its client');
  socket.destroy();
  assert.equal(destroyed, ['left']);
});

test('one that closes before its end, with no error, is its own failure: the server cuts the answer and logs a ResponseBodyDestroyedError, and inject() rejects with it', async () => {
  const cut = 'ResponseBodyDestroyedError: The response body stream was destroyed before its end, without an error: the answer was cut after its head.';
  for (const scheme of SCHEMES) {
    severe.length = 0;
    const answer = await fetchFrom(server, scheme, '/closed').then((response) => `answered ${response.status}`, () => 'cut');
    assert.is(answer, 'cut', scheme);
    await until(() => severe.length > 0, 2_000, 'the log record');
    assert.equal(severe, [`CRITICAL The response body stream failed: ${cut}`], scheme);
  }
  severe.length = 0;
  const rejected = await server.app.inject('/closed').then(() => 'resolved', (error: Error) => `${error.name}: ${error.message}`);
  assert.is(rejected, cut);
  assert.equal(severe, [`CRITICAL The response body stream failed: ${cut}`]);
});

test('one that fails before its first chunk gets the error page, logged once, and its request terminates as that 500, not as a 200 never sent; inject() answers alike', async () => {
  const cases = [
    ['/failing', 'the legacy source broke', /^CRITICAL Uncaught error: Error: "the legacy source broke"/],
    ['/failing?close', 'The response body stream was destroyed before its first chunk was sent, without an error (an empty body ends with push(null)).', /^CRITICAL Uncaught error: ResponseBodyDestroyedError: /],
  ] as const;
  for (const [path, title, record] of cases) {
    for (const scheme of SCHEMES) {
      terminated.length = 0;
      severe.length = 0;
      destroyed.length = 0;
      const response = await fetchFrom(server, scheme, path, { headers: { accept: 'application/json' } });
      assert.is(response.status, 500, `${scheme} ${path}`);
      assert.match(header(response.headers['content-type']), /^application\/problem\+json/);
      assert.is(JSON.parse(response.body).title, 'Internal Server Error');
      await until(() => terminated.length > 0, 2_000, 'kernel.terminate');
      assert.equal(terminated, [`GET /failing 500`], `${scheme} ${path}`);
      // Destroyed once, for what it holds, not once by the server and again by its pipe's source.
      assert.equal(destroyed, ['/failing'], `${scheme} ${path}`);
      assert.is(severe.length, 1, JSON.stringify(severe));
      assert.match(severe[0]!, record);
      assert.ok(severe[0]!.includes(title), severe[0]);
    }
    severe.length = 0;
    const injected = await server.app.inject(path, { headers: { accept: 'application/json' } });
    assert.is(injected.status, 500, `inject ${path}`);
    assert.is(severe.length, 1, JSON.stringify(severe));
    assert.match(severe[0]!, record);
  }
});

test('one that emits undefined, null or an object as data fails as an object-mode body of that chunk fails, not by a throw from its own emit(): before its first chunk the error page of the TypeError, after it a cut answer, logged; inject() answers alike', async () => {
  const refusal = (what: string): string => `TypeError: A response body stream gives text or bytes, not ${what} (an object-mode stream's chunks are sent as they are).`;
  for (const [value, what] of [['undefined', 'undefined'], ['null', 'null'], ['object', 'an object of type Object']] as const) {
    for (const scheme of SCHEMES) {
      thrown.length = 0;
      uncaught.length = 0;
      severe.length = 0;
      terminated.length = 0;
      const response = await fetchFrom(server, scheme, `/odd?first&value=${value}`, { headers: { accept: 'application/json' } });
      assert.is(response.status, 500, `${scheme} ${value}`);
      assert.is(JSON.parse(response.body).title, 'Internal Server Error');
      await until(() => terminated.length > 0, 2_000, 'kernel.terminate');
      assert.equal(terminated, ['GET /odd 500']);
      assert.is(severe.length, 1, JSON.stringify(severe));
      assert.match(severe[0]!, `CRITICAL Uncaught error: TypeError: "A response body stream gives text or bytes, not ${what}`);
      severe.length = 0;
      assert.is(await fetchFrom(server, scheme, `/odd?value=${value}`).then((answer) => `answered ${answer.status}`, () => 'cut'), 'cut', `${scheme} ${value}`);
      await until(() => severe.length > 0, 2_000, 'the log record');
      assert.equal(severe, [`CRITICAL The response body stream failed: ${refusal(what)}`]);
      assert.equal([thrown, uncaught], [[], []]);
    }
    severe.length = 0;
    const first = await server.app.inject(`/odd?first&value=${value}`);
    assert.is(first.status, 500);
    const later = await server.app.inject(`/odd?value=${value}`).then(() => 'resolved', (error: Error) => `${error.name}: ${error.message}`);
    assert.is(later, refusal(what));
    assert.is(severe.length, 2, JSON.stringify(severe));
    assert.equal(severe[1], `CRITICAL The response body stream failed: ${refusal(what)}`);
    assert.equal([thrown, uncaught], [[], []]);
  }
});

test('one with no destroy() that is not sent (HEAD, 204) is let go: the answer and its termination are whole, by the server and by inject()', async () => {
  terminated.length = 0;
  uncaught.length = 0;
  for (const scheme of SCHEMES) {
    assert.is((await fetchFrom(server, scheme, '/bare', { method: 'HEAD' })).status, 200);
    assert.is((await fetchFrom(server, scheme, '/bare?status=204')).status, 204);
  }
  assert.is((await server.app.inject('/bare', { method: 'HEAD' })).status, 200);
  assert.is((await server.app.inject('/bare?status=204')).status, 204);
  await until(() => terminated.length === 6, 5_000, 'the six terminations');
  assert.equal(terminated, ['HEAD /bare 200', 'GET /bare 204', 'HEAD /bare 200', 'GET /bare 204', 'HEAD /bare 200', 'GET /bare 204']);
  assert.equal(uncaught, []);
});

test('one with no destroy() queued behind a pipelined answer whose client leaves ends as its leaving, with no uncaught TypeError', async () => {
  terminated.length = 0;
  uncaught.length = 0;
  const socket = net.connect(Number(new URL(server.urls.http).port), '127.0.0.1');
  socket.write('GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\nGET /bare HTTP/1.1\r\nHost: localhost\r\n\r\n');
  await new Promise((resolve) => setTimeout(resolve, 100));
  socket.destroy();
  await until(() => terminated.length === 2, 5_000, 'the two terminations');
  assert.equal([...terminated].sort(), ['GET /bare 499', 'GET /slow 499']);
  assert.equal(uncaught, []);
});

test.run();

const timed = suite('a legacy stream body under the response timeout');
let timedServer: TestServer;

timed.before(async () => {
  // A bare legacy stream, no destroy() at all, never giving a chunk.
  const routes = routesOf({
    '/bare': () => new Response(new Stream() as never, 200),
    // One with a destroy(), never giving a chunk.
    '/quiet': (request) => {
      const stream = new Stream() as Stream & { destroy(): void };
      stream.destroy = () => void destroyed.push(request.query.get('id') ?? '');
      return new Response(stream as never, 200);
    },
  });
  timedServer = await startTestServer({ kernel: { routes, subscribers: [] }, limits: { responseTimeout: 300 } });
  process.on('uncaughtException', onUncaught);
});
timed.after(async () => {
  process.off('uncaughtException', onUncaught);
  await timedServer.close();
});

timed('one with no destroy() whose first chunk has not come at the response timeout gets the 503 page, as a Readable, with no uncaught TypeError', async () => {
  uncaught.length = 0;
  for (const scheme of SCHEMES) {
    const response = await fetchFrom(timedServer, scheme, '/bare', { headers: { accept: 'application/json' } });
    assert.is(response.status, 503, scheme);
    assert.match(JSON.parse(response.body).title, 'Service Unavailable');
  }
  assert.equal(uncaught, []);
});

timed('one whose first chunk has not come at the response timeout gets the 503 page and is destroyed once, not by the head wait and again by its pipe\'s source', async () => {
  destroyed.length = 0;
  for (const scheme of SCHEMES) {
    const response = await fetchFrom(timedServer, scheme, `/quiet?id=${scheme}`, { headers: { accept: 'application/json' } });
    assert.is(response.status, 503, scheme);
  }
  // A second destroy() would come within a tick or two of the first.
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(destroyed, ['http', 'https']);
});

timed.run();
