// A controller whose promise never settles, or settles too late, over real sockets: at the response
// timeout the kernel answers a 503 ResponseTimeoutError through its error path (the debug page or
// problem+json, logged CRITICAL, kernel.terminate, the profile with its error sub-request), and what
// the controller gives later is dropped (a stream body destroyed, a rejection logged once, the saved
// profile left as it was). A controller in time is not touched.
import { PassThrough, Readable, addAbortSignal } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Response, type Controller, type ExceptionEvent, type FinishRequestEvent, type Request, type RequestEvent, type ResponseEvent, type TerminateEvent } from '../../kernel/index.js';
import { LogLevel, type LogEntry, type LogRecord } from '../../lib/log/index.js';
import type { RouteCollection } from '../../lib/routing/index.js';
import { ERROR_PAGE_GRACE_MS } from '../../lib/server/listen.js';
import { SCHEMES, decodeEntities, fetchFrom, header, rawStatus, savedProfile, sendRaw, routesOf, startTestServer, until, type TestServer } from './harness.js';

/** The response timeout of the timed-out server, in milliseconds. */
const TIMEOUT_MS = 200;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Late stream bodies, by name, with whether each was destroyed. */
const lateBodies = new Map<string, Readable>();
let lateRejections = 0;
/** Streams that never gave a chunk, by id. */
const silentBodies = new Map<string, Readable>();
/** What the controller reading a stalled body got from it, by id, once it settled. */
const bodyReads = new Map<string, string>();

/** Reads the body, noting in bodyReads (under the `id` query parameter) what the read gave or threw. */
async function readBody(request: Request): Promise<Response> {
  const id = request.query.get('id') ?? '';
  try {
    bodyReads.set(id, `read ${JSON.stringify(await request.text())}`);
  } catch (error) {
    bodyReads.set(id, `threw ${(error as Error).name}`);
    throw error;
  }
  return new Response('read', 200, { 'content-type': 'text/plain' });
}

/** Reads the request's body (see readBody), then gives what the read gave as its one chunk. */
async function* bodyThenEcho(request: Request): AsyncGenerator<string> {
  await readBody(request);
  yield bodyReads.get(request.query.get('id') ?? '') ?? '';
}

const controllers: Record<string, Controller> = {
  '/never': () => new Promise<Response>(() => {}),
  // Answers after the timeout, with a stream that would never end by itself.
  '/late-stream': (request) =>
    sleep(TIMEOUT_MS * 3).then(() => {
      const body = new Readable({ read() {} });
      body.push('too late');
      lateBodies.set(request.query.get('id') ?? '', body);
      return new Response(body, 200, { 'content-type': 'text/plain' });
    }),
  '/late-reject': () =>
    sleep(TIMEOUT_MS * 3).then(() => {
      lateRejections++;
      throw new Error('failed after the timeout');
    }),
  // Reads a body the client stalls half-way: the read is still under way at the timeout.
  '/read-body': (request) => readBody(request),
  // Never reads the body: answers an error status of its own after `ms` milliseconds.
  '/gone-after': (request) => sleep(Number(request.query.get('ms'))).then(() => new Response('gone\n', 410, { 'content-type': 'text/plain' })),
  // Reads the body, sent whole, only after the timeout: node has drained it unread once the 503 went out.
  '/read-late': (request) => sleep(TIMEOUT_MS * 2).then(() => readBody(request)),
  // Answers after the timeout, while the 503 page is still on its way (see slowPageFinish).
  '/late-during-page': () => sleep(TIMEOUT_MS * 1.5).then(() => new Response('too late', 200, { 'content-type': 'text/plain' })),
  '/slow': () => sleep(TIMEOUT_MS * 2).then(() => new Response('in time', 200, { 'content-type': 'text/plain' })),
  // Names itself with a value whose every property read throws, then never settles: the 503 is made in a timer.
  '/hostile-controller': (request) => {
    request.attributes.set('_controller', [new Proxy({}, { get() { throw new Error('trap'); }, getPrototypeOf() { throw new Error('trap'); } }), 'show']);
    return new Promise<Response>(() => {});
  },
  // Its head goes at once, its body takes three times the limit.
  // A stream whose first chunk never comes: its head never goes out.
  '/silent-stream': async (request) => {
    await sleep(1);
    const body = new Readable({ read() {} });
    silentBodies.set(request.query.get('id') ?? '', body);
    return new Response(body, 200, { 'content-type': 'text/plain' });
  },
  // The same, given at once by a synchronous controller: the kernel answers without a promise.
  '/sync-silent-stream': (request) => {
    const body = new Readable({ read() {} });
    silentBodies.set(request.query.get('id') ?? '', body);
    return new Response(body, 200, { 'content-type': 'text/plain' });
  },
  // The same, a generator's that awaits what never settles: destroyed, its stream emits no error until that await does.
  '/hung-generator-stream': (request) => {
    const body = Readable.from((async function* () {
      await new Promise<never>(() => {});
      yield 'never';
    })());
    silentBodies.set(request.query.get('id') ?? '', body);
    return new Response(body, 200, { 'content-type': 'text/plain' });
  },
  // A stream whose first chunk is the request's body, read whole (an upload answered as a stream), given by a
  // synchronous controller: destroyed by the response timeout while its generator awaits the body, it emits its error only once the read settles.
  '/sync-stream-of-body': (request) => new Response(Readable.from(bodyThenEcho(request)), 200, { 'content-type': 'text/plain' }),
  // The same, given by an asynchronous controller.
  '/stream-of-body': async (request) => {
    await sleep(1);
    return new Response(Readable.from(bodyThenEcho(request)), 200, { 'content-type': 'text/plain' });
  },
  // The same, its stream wired to request.signal (`addAbortSignal`, as `pipeline(..., { signal })` does).
  '/wired-stream': async (request) => {
    await sleep(1);
    const body = addAbortSignal(request.signal, new PassThrough());
    silentBodies.set(request.query.get('id') ?? '', body);
    return new Response(body, 200, { 'content-type': 'text/plain' });
  },
  '/streaming': async () => {
    await sleep(1);
    async function* chunks(): AsyncGenerator<string> {
      for (let i = 0; i < 6; i++) {
        yield `${i}`;
        await sleep(TIMEOUT_MS / 2);
      }
    }
    return new Response(Readable.from(chunks()), 200, { 'content-type': 'text/plain' });
  },
};

const routes = (): RouteCollection => routesOf({ ...controllers, '/hang-exception': controllers['/never']!, '/hang-response': controllers['/never']!, '/fail-late': controllers['/never']! });

/**
 * Holds the main request's kernel.finish_request of `/late-during-page` for the limit: the 503 page has
 * passed kernel.response, and is not sent yet, when the controller's late response goes through kernel.response.
 */
const slowPageFinish = {
  getSubscribedEvents: () => ({ [KernelEvents.FINISH_REQUEST]: 'onFinish' }),
  onFinish: (event: FinishRequestEvent): Promise<void> | void => (event.isMainRequest() && event.request.path === '/late-during-page' ? sleep(TIMEOUT_MS) : undefined),
};

/** Holds `/hang-request` in a kernel.request listener that runs before the router's: no route, no controller chosen, at the limit. */
const requestHanger = {
  getSubscribedEvents: () => ({ [KernelEvents.REQUEST]: ['onRequest', 256] as const }),
  onRequest: (event: RequestEvent): Promise<void> | void => (event.isMainRequest() && event.request.path === '/hang-request' ? new Promise<void>(() => {}) : undefined),
};

/** Hangs the error page of its paths: a kernel.exception listener, or a kernel.response one, that never settles (or fails late). */
const pageHanger = {
  getSubscribedEvents: () => ({ [KernelEvents.EXCEPTION]: ['onException', 256] as const, [KernelEvents.RESPONSE]: ['onResponse', 256] as const }),
  onException: (event: ExceptionEvent): Promise<void> | void => {
    if (event.request.path === '/hang-exception') return new Promise<void>(() => {});
    // Fails twice the grace on: the bare 503 has gone by then, whatever the load.
    if (event.request.path === '/fail-late' && event.isMainRequest()) {
      return sleep(ERROR_PAGE_GRACE_MS * 2).then(() => {
        throw new Error('the page failed late');
      });
    }
  },
  onResponse: (event: ResponseEvent): Promise<void> | void => (event.request.path === '/hang-response' ? new Promise<void>(() => {}) : undefined),
};

for (const scheme of SCHEMES) {
  const test = suite(`the response timeout, over ${scheme}`);
  let timed: TestServer;
  let roomy: TestServer;
  let shortIdle: TestServer;
  let bodyTimed: TestServer;
  let noRequestTimeout: TestServer;
  let idleCut: TestServer;
  const records: LogRecord[] = [];
  const onLog = ({ record }: LogEntry): void => void records.push(record);
  const terminated: Array<{ path: string; status: number }> = [];
  const terminateRecorder = {
    getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }),
    onTerminate: (event: TerminateEvent): void => void terminated.push({ path: event.request.path, status: event.response.status }),
  };

  test.before(async () => {
    timed = await startTestServer({ kernel: { debug: true, routes: routes(), subscribers: [terminateRecorder, pageHanger, slowPageFinish, requestHanger] }, limits: { responseTimeout: TIMEOUT_MS } });
    // Twice as long as the slow controller takes, and ten times the other server's limit.
    roomy = await startTestServer({ kernel: { debug: true, routes: routes() }, limits: { responseTimeout: TIMEOUT_MS * 10 } });
    // An idle timeout shorter than the response timeout: the wait for the head is not idleness.
    shortIdle = await startTestServer({ kernel: { debug: false, routes: routes() }, limits: { idleTimeout: TIMEOUT_MS, responseTimeout: TIMEOUT_MS * 3 } });
    // A request timeout: a body that stalls is its 408, whatever the response timeout.
    bodyTimed = await startTestServer({ kernel: { debug: false, routes: routes(), subscribers: [terminateRecorder] }, limits: { responseTimeout: TIMEOUT_MS, requestTimeout: 1_000, headersTimeout: 1_000 } });
    // None: nothing but the response timeout ends a body that stalls.
    noRequestTimeout = await startTestServer({ kernel: { debug: false, routes: routes() }, limits: { responseTimeout: TIMEOUT_MS, requestTimeout: 0 } });
    // Nothing but the idle timeout ends a body that stalls.
    idleCut = await startTestServer({ kernel: { debug: false, routes: routes(), subscribers: [terminateRecorder] }, limits: { responseTimeout: 0, requestTimeout: 0, idleTimeout: TIMEOUT_MS } });
    timed.app.bus.on('log', onLog);
  });
  test.after(async () => {
    timed.app.bus.off('log', onLog);
    await timed.close();
    await roomy.close();
    await shortIdle.close();
    await bodyTimed.close();
    await noRequestTimeout.close();
    await idleCut.close();
  });

  test('a controller that never settles gets a 503 debug page naming the limit, logged CRITICAL once, then kernel.terminate', async () => {
    records.length = 0;
    terminated.length = 0;
    const response = await fetchFrom(timed, scheme, '/never');
    assert.is(response.status, 503);
    assert.match(header(response.headers['content-type']), /^text\/html/);
    assert.ok(response.body.includes('ResponseTimeoutError'), 'the class is on the page');
    assert.ok(decodeEntities(response.body).includes('The response was not ready within 0.2 seconds (route "never", controller "/never").'), 'the message names the limit, the route and the controller');
    assert.is(decodeURIComponent(header(response.headers['x-debug-exception'])), 'The response was not ready within 0.2 seconds (route "never", controller "/never").');
    const critical = records.filter((record) => record.level === LogLevel.CRITICAL);
    assert.is(critical.length, 1, JSON.stringify(critical.map((record) => record.message)));
    assert.ok(critical[0]!.message.startsWith('Uncaught error: ResponseTimeoutError: "The response was not ready within 0.2 seconds (route "never", controller "/never")."'), critical[0]!.message);
    await until(() => terminated.some((one) => one.path === '/never'), 2_000, 'kernel.terminate');
    assert.equal(terminated.filter((one) => one.path === '/never'), [{ path: '/never', status: 503 }]);
  });

  test('the 503 names the route and the controller the request was in, on the debug page and in the log; before routing it says no controller was chosen yet; the plain page names neither', async () => {
    records.length = 0;
    const stream = await fetchFrom(timed, scheme, '/silent-stream?id=named', { headers: { accept: 'application/json' } });
    assert.is(JSON.parse(stream.body).detail, 'The response was not ready within 0.2 seconds (route "silent-stream", controller "/silent-stream").');
    const early = await fetchFrom(timed, scheme, '/hang-request');
    assert.is(early.status, 503);
    assert.is(decodeURIComponent(header(early.headers['x-debug-exception'])), 'The response was not ready within 0.2 seconds (no controller chosen yet).');
    await until(() => records.filter((record) => record.level === LogLevel.CRITICAL).length === 2, 2_000, 'both CRITICAL lines');
    assert.match(records.filter((record) => record.level === LogLevel.CRITICAL).map((record) => record.message).join('\n'), /controller "\/silent-stream"[^]*no controller chosen yet/);
    const plain = await fetchFrom(shortIdle, scheme, '/never');
    assert.is(plain.status, 503);
    assert.not.ok(/never|controller|route/i.test(plain.body), plain.body);
    assert.is(plain.headers['x-debug-exception'], undefined);
  });

  test('a _controller that throws when named (a Proxy\'s traps) gets the 503 all the same, the controller "unnamed", and the server lives on', async () => {
    const response = await fetchFrom(timed, scheme, '/hostile-controller', { headers: { accept: 'application/json' } });
    assert.is(response.status, 503);
    assert.is(JSON.parse(response.body).detail, 'The response was not ready within 0.2 seconds (route "hostile-controller", controller "unnamed").');
    assert.is((await fetchFrom(timed, scheme, '/slow')).status, 503);
  });

  test('a JSON client gets problem+json with the 503 and the message', async () => {
    const response = await fetchFrom(timed, scheme, '/never', { headers: { accept: 'application/json' } });
    assert.is(response.status, 503);
    assert.is(header(response.headers['content-type']), 'application/problem+json');
    const problem = JSON.parse(response.body);
    assert.is(problem.status, 503);
    assert.is(problem.detail, 'The response was not ready within 0.2 seconds (route "never", controller "/never").');
  });

  test('the profile records the 503, the ResponseTimeoutError and the error page\'s sub-request', async () => {
    const response = await fetchFrom(timed, scheme, '/never');
    const token = header(response.headers['x-debug-token']);
    assert.match(token, /^[0-9a-f]{6}$/);
    const sub = header(response.headers['x-previous-debug-token']);
    assert.match(sub, /^[0-9a-f]{6}$/);
    const profile = await savedProfile(timed, token);
    assert.is(profile.status, 503);
    assert.is(profile.collectors.exception.exceptions[0].class, 'ResponseTimeoutError');
    assert.ok(profile.children.includes(sub), 'the error page is a child of the request');
    assert.is((await savedProfile(timed, sub)).parent, token);
  });

  test('a Response that comes after the timeout is dropped: its stream body destroyed, the profile left as saved', async () => {
    const id = `${scheme}-${Math.random()}`;
    const response = await fetchFrom(timed, scheme, `/late-stream?id=${encodeURIComponent(id)}`);
    assert.is(response.status, 503);
    const token = header(response.headers['x-debug-token']);
    await savedProfile(timed, token);
    await until(() => lateBodies.get(id)?.destroyed === true, 5_000, 'the late body to be destroyed');
    // The late response's kernel.response and kernel.finish_request changed nothing in the profile already taken.
    const profile = await timed.app.profiler!.loadProfile(token);
    assert.is(profile?.status, 503);
  });

  test('a late response that goes through kernel.response after the 503 page did, before it is sent, is not what the profile records: the 503 that went out is', async () => {
    const response = await fetchFrom(timed, scheme, '/late-during-page');
    assert.is(response.status, 503);
    const token = header(response.headers['x-debug-token']);
    const profile = await savedProfile(timed, token);
    assert.is(profile.status, 503);
    assert.is(profile.collectors.exception.exceptions[0].class, 'ResponseTimeoutError');
  });

  test('a controller that fails after the timeout is logged once by the error listener, and the server keeps serving', async () => {
    records.length = 0;
    const before = lateRejections;
    const response = await fetchFrom(timed, scheme, '/late-reject');
    assert.is(response.status, 503);
    await until(() => lateRejections > before, 5_000, 'the late rejection');
    await until(() => records.some((record) => /failed after the timeout/.test(record.message)), 2_000, 'the late error to be logged');
    await sleep(50);
    const late = records.filter((record) => /failed after the timeout/.test(record.message));
    assert.is(late.length, 1, JSON.stringify(late.map((record) => record.message)));
    assert.ok(!records.some((record) => /^Unhandled error/.test(record.message)), 'not also as an unhandled error');
    const next = await fetchFrom(timed, scheme, '/never');
    assert.is(next.status, 503);
  });

  test('without a request timeout, a body read still under way at the response timeout fails with the ResponseTimeoutError once the connection ends, rather than never settling', async () => {
    const id = `${scheme}-${Math.random()}`;
    const answer = await sendRaw(noRequestTimeout, scheme, `POST /read-body?id=${encodeURIComponent(id)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nhel`, { waitMs: 5_000 });
    assert.is(rawStatus(answer), 503);
    await until(() => bodyReads.has(id), 5_000, 'the body read to settle');
    assert.is(bodyReads.get(id), 'threw ResponseTimeoutError');
  });

  test('a body first read after the timeout fails with the ResponseTimeoutError, rather than reading empty (node drained it after the 503)', async () => {
    const id = `${scheme}-late-${Math.random()}`;
    const response = await fetchFrom(timed, scheme, `/read-late?id=${encodeURIComponent(id)}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    assert.is(response.status, 503);
    await until(() => bodyReads.has(id), 5_000, 'the late read to settle');
    assert.is(bodyReads.get(id), 'threw ResponseTimeoutError');
  });

  test('a body that stalls under a request timeout is its 408 (the client\'s doing), not the response timeout\'s 503', async () => {
    const id = `${scheme}-stalled-${Math.random()}`;
    records.length = 0;
    bodyTimed.app.bus.on('log', onLog);
    try {
      const answer = await sendRaw(bodyTimed, scheme, `POST /read-body?id=${encodeURIComponent(id)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nhel`, { waitMs: 5_000 });
      assert.is(rawStatus(answer), 408);
      await until(() => bodyReads.has(id), 5_000, 'the body read to settle');
      assert.is(bodyReads.get(id), 'threw RequestTimeoutHttpError');
      await until(() => terminated.some((one) => one.path === '/read-body' && one.status === 408), 5_000, 'kernel.terminate with the 408');
      assert.not.ok(records.some((record) => record.level <= LogLevel.CRITICAL), JSON.stringify(records.map((record) => record.message)));
    } finally {
      bodyTimed.app.bus.off('log', onLog);
    }
  });

  test('a stream whose first chunk waits on a body that stalls under a request timeout is that timeout\'s 408, as a controller reading it is, not the 503 of a first chunk late; the request is terminated', async () => {
    for (const path of ['/sync-stream-of-body', '/stream-of-body']) {
      const id = `${scheme}-stream-stalled-${path}-${Math.random()}`;
      terminated.length = 0;
      const answer = await sendRaw(bodyTimed, scheme, `POST ${path}?id=${encodeURIComponent(id)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nhel`, { waitMs: 5_000 });
      assert.is(rawStatus(answer), 408, path);
      await until(() => bodyReads.has(id), 5_000, 'the body read to settle');
      assert.is(bodyReads.get(id), 'threw RequestTimeoutHttpError', path);
      await until(() => terminated.some((one) => one.path === path), 5_000, 'kernel.terminate');
    }
  });

  test('without a request timeout, such a stream is the 503 at the limit, and the error its destroy emits once the client leaves and the read fails does not end the process', async () => {
    for (const path of ['/sync-stream-of-body', '/stream-of-body']) {
      const id = `${scheme}-stream-unbounded-${path}-${Math.random()}`;
      const answer = await sendRaw(noRequestTimeout, scheme, `POST ${path}?id=${encodeURIComponent(id)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nhel`, { waitMs: 2_000 });
      assert.is(rawStatus(answer), 503, path);
      // The client gone, the read fails, the generator with it, and its stream's late error is emitted.
      await until(() => bodyReads.has(id), 5_000, 'the body read to settle');
      // The process is still here to answer (/slow's 503, twice the limit).
      assert.is((await fetchFrom(noRequestTimeout, scheme, '/slow')).status, 503, path);
    }
  });

  test('a body that stalls until the idle timeout cuts it is a 408 saying so, not a client that closed the connection', async () => {
    const id = `${scheme}-idle-${Math.random()}`;
    terminated.length = 0;
    records.length = 0;
    idleCut.app.bus.on('log', onLog);
    try {
      await sendRaw(idleCut, scheme, `POST /read-body?id=${encodeURIComponent(id)} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nhel`, { waitMs: 5_000 });
      await until(() => bodyReads.has(id), 5_000, 'the body read to settle');
      assert.is(bodyReads.get(id), 'threw RequestTimeoutHttpError');
      await until(() => terminated.some((one) => one.path === '/read-body'), 5_000, 'kernel.terminate');
      assert.equal(terminated.filter((one) => one.path === '/read-body'), [{ path: '/read-body', status: 408 }]);
      assert.ok(
        records.some((record) => record.level === LogLevel.ERROR && record.message.includes('The request body did not arrive: nothing came within the idle timeout (0.2 seconds).')),
        JSON.stringify(records.map((record) => record.message)),
      );
    } finally {
      idleCut.app.bus.off('log', onLog);
    }
  });

  test('an error answer of the controller\'s own that went out before the idle check cut the body stays the request\'s; one ready only after the cut, which sent nothing, ends as the 408 saying why', async () => {
    idleCut.app.bus.on('log', onLog);
    try {
      for (const [ms, status] of [[TIMEOUT_MS / 4, 410], [TIMEOUT_MS * 4, 408]] as const) {
        terminated.length = 0;
        records.length = 0;
        const answer = await sendRaw(idleCut, scheme, `POST /gone-after?ms=${ms} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nhel`, { waitMs: 5_000 });
        await until(() => terminated.some((one) => one.path === '/gone-after'), 5_000, 'kernel.terminate');
        const seen = `answered after ${ms} ms: ${JSON.stringify(answer)}, ${JSON.stringify(records.map((record) => record.message))}`;
        // The client got the 410, or no byte at all: the idle check cuts the connection without an answer.
        assert.is(answer === '' ? 0 : rawStatus(answer), status === 410 ? 410 : 0, seen);
        assert.equal(terminated.filter((one) => one.path === '/gone-after'), [{ path: '/gone-after', status }], seen);
        const idleLines = records.filter((record) => record.message.includes('nothing came within the idle timeout'));
        assert.equal(idleLines.map((record) => record.levelName), status === 410 ? [] : ['ERROR'], seen);
      }
    } finally {
      idleCut.app.bus.off('log', onLog);
    }
  });

  test('a body nobody reads is no request timeout\'s 408: a whole body node stopped taking, and one whose client waits for 100 Continue, get the 503', async () => {
    terminated.length = 0;
    // More than node buffers before it stops reading the socket: its end is never parsed while nobody reads.
    const big = 'x'.repeat(4 * 1024 * 1024);
    const whole = await sendRaw(bodyTimed, scheme, `POST /never HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ${big.length}\r\nConnection: close\r\n\r\n${big}`, { waitMs: 5_000 });
    assert.is(rawStatus(whole), 503);
    const uninvited = await sendRaw(bodyTimed, scheme, 'POST /never HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n', { waitMs: 5_000 });
    assert.is(rawStatus(uninvited), 503);
    assert.not.match(uninvited, /100 Continue/);
    await until(() => terminated.filter((one) => one.path === '/never').length === 2, 5_000, 'kernel.terminate');
    assert.equal(terminated.filter((one) => one.path === '/never'), [{ path: '/never', status: 503 }, { path: '/never', status: 503 }]);
  });

  /** Requests `path` from the timed server and leaves a quarter of the way to its limit; resolves when the client has given up. */
  const leaveBeforeTheLimit = async (path: string): Promise<void> => {
    const controller = new AbortController();
    const leaving = fetchFrom(timed, scheme, path, { signal: controller.signal }).catch((error: Error) => error);
    await sleep(TIMEOUT_MS / 4);
    controller.abort();
    assert.instance(await leaving, Error);
  };

  test('a client gone before the response timeout is no 503 logged CRITICAL: the request ends as its leaving, a 499 at INFO', async () => {
    records.length = 0;
    terminated.length = 0;
    await leaveBeforeTheLimit('/never');
    await until(() => terminated.some((one) => one.path === '/never'), 5_000, 'kernel.terminate');
    assert.equal(terminated.filter((one) => one.path === '/never'), [{ path: '/never', status: 499 }]);
    assert.not.ok(records.some((record) => record.level <= LogLevel.CRITICAL), JSON.stringify(records.map((record) => record.message)));
    assert.ok(records.some((record) => record.level === LogLevel.INFO && record.message.includes('ClientClosedError')));
  });

  test('a client gone while a stream body\'s first chunk is pending ends as its leaving, as one gone before any response: terminated with a 499, logged at INFO, the stream destroyed', async () => {
    records.length = 0;
    terminated.length = 0;
    const id = `${scheme}-gone-${Math.random()}`;
    const controller = new AbortController();
    const leaving = fetchFrom(timed, scheme, `/silent-stream?id=${encodeURIComponent(id)}`, { signal: controller.signal }).catch((error: Error) => error);
    await until(() => silentBodies.has(id), 2_000, 'the stream body');
    await sleep(TIMEOUT_MS / 4);
    controller.abort();
    assert.instance(await leaving, Error);
    await until(() => terminated.some((one) => one.path === '/silent-stream'), 5_000, 'kernel.terminate');
    assert.equal(terminated.filter((one) => one.path === '/silent-stream'), [{ path: '/silent-stream', status: 499 }]);
    assert.ok(silentBodies.get(id)?.destroyed, 'the stream is destroyed');
    assert.not.ok(records.some((record) => record.level <= LogLevel.ERROR), JSON.stringify(records.map((record) => record.message)));
    assert.ok(records.some((record) => record.level === LogLevel.INFO && record.message.includes('ClientClosedError')));
  });

  test('a request still waiting for its controller when the app closes is given up then, and terminated before close() resolves', async () => {
    const recorded: Array<{ path: string; status: number }> = [];
    const recorder = { getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }), onTerminate: (event: TerminateEvent) => void recorded.push({ path: event.request.path, status: event.response.status }) };
    const closing = await startTestServer({ kernel: { debug: false, routes: routes(), subscribers: [recorder] }, limits: { responseTimeout: 60_000, shutdownTimeout: 200 } });
    const pending = fetchFrom(closing, scheme, '/never').catch((error: Error) => error);
    await sleep(100);
    await closing.close();
    await pending;
    assert.equal(recorded, [{ path: '/never', status: 499 }]);
  });

  test('a stream given in time whose first chunk has not come at the limit is the 503 logged CRITICAL once, also one wired to request.signal (not its AbortError\'s 500), one a synchronous controller gives, and a generator\'s whose destroy waits on an await that never settles: nothing was sent, the stream is destroyed, the request terminated', async () => {
    for (const path of ['/silent-stream', '/wired-stream', '/sync-silent-stream', '/hung-generator-stream']) {
      records.length = 0;
      terminated.length = 0;
      const id = `${scheme}-${path}`;
      const response = await fetchFrom(timed, scheme, `${path}?id=${id}`, { headers: { accept: 'application/json' } });
      assert.is(response.status, 503, path);
      assert.is(JSON.parse(response.body).detail, `The response was not ready within 0.2 seconds (route "${path.slice(1)}", controller "${path}").`);
      assert.ok(silentBodies.get(id)?.destroyed, `${path}: the stream is destroyed`);
      await until(() => terminated.some((one) => one.path === path), 5_000, 'kernel.terminate');
      assert.equal(terminated.filter((one) => one.path === path), [{ path, status: 503 }]);
      const critical = records.filter((record) => record.level === LogLevel.CRITICAL);
      assert.is(critical.length, 1, `${path}: ${JSON.stringify(records.map((record) => record.message))}`);
      assert.match(critical[0]!.message, /ResponseTimeoutError/);
    }
  });

  test('a client still waiting when the app closes (settled() before the server has cut it) gets a 503 saying the server closed, not the timeout', async () => {
    const closing = await startTestServer({ kernel: { debug: true, routes: routes() }, limits: { responseTimeout: 60_000 } });
    try {
      const pending = fetchFrom(closing, scheme, '/never', { headers: { accept: 'application/json' } });
      await sleep(100);
      await closing.app.listener.settled();
      const response = await pending;
      assert.is(response.status, 503);
      assert.is(JSON.parse(response.body).detail, 'The server closed before the response was ready.');
    } finally {
      await closing.close();
    }
  });

  test('a kernel.exception or kernel.response listener that hangs on the 503 page does not hold it: past the grace a bare 503 goes out, logged, and the request is terminated with it', async () => {
    for (const path of ['/hang-exception', '/hang-response']) {
      records.length = 0;
      terminated.length = 0;
      const response = await fetchFrom(timed, scheme, path);
      assert.is(response.status, 503, path);
      assert.is(response.body, 'Service Unavailable\n', 'no internals');
      await until(() => terminated.some((one) => one.path === path), 5_000, 'kernel.terminate');
      assert.equal(terminated.filter((one) => one.path === path), [{ path, status: 503 }]);
      assert.ok(
        records.some((record) => record.level === LogLevel.CRITICAL && /^The error page was not ready within 500 ms, so a bare 503 was sent for ResponseTimeoutError/.test(record.message)),
        JSON.stringify(records.map((record) => record.message)),
      );
    }
  });

  test('a page that fails after the grace is logged once at ERROR, as the request\'s, after the bare 503 and its CRITICAL line', async () => {
    records.length = 0;
    const entries: LogEntry[] = [];
    const onEntry = (entry: LogEntry): void => void entries.push(entry);
    timed.app.bus.on('log', onEntry);
    try {
      const response = await fetchFrom(timed, scheme, '/fail-late');
      assert.is(response.status, 503);
      assert.is(response.body, 'Service Unavailable\n');
      await until(() => records.some((record) => record.level === LogLevel.ERROR), 5_000, 'the late failure to be logged');
      // The page's promise has settled: anything else it would log is logged by now.
      await sleep(50);
    } finally {
      timed.app.bus.off('log', onEntry);
    }
    const late = entries.filter(({ record }) => /failed later/.test(record.message));
    assert.equal(
      late.map(({ record }) => [record.levelName, record.message]),
      [['ERROR', 'The error page, given up on after 500 ms, failed later: Error: the page failed late (the page was for ResponseTimeoutError: The response was not ready within 0.2 seconds (route "fail-late", controller "/never").)']],
    );
    assert.is((late[0]!.request as Request).path, '/fail-late');
    assert.ok(records.some((record) => record.level === LogLevel.CRITICAL && record.message.startsWith('The error page was not ready within 500 ms, so a bare 503 was sent')));
  });

  test('a page that hangs for a client gone before the limit: past the grace the request is terminated with the 499, and the log line says nothing was sent', async () => {
    records.length = 0;
    terminated.length = 0;
    await leaveBeforeTheLimit('/hang-exception');
    await until(() => terminated.some((one) => one.path === '/hang-exception'), 5_000, 'kernel.terminate');
    assert.equal(terminated.filter((one) => one.path === '/hang-exception'), [{ path: '/hang-exception', status: 499 }]);
    const lines = records.filter((record) => record.message.startsWith('The error page was not ready')).map((record) => record.message);
    assert.equal(lines, ['The error page was not ready within 500 ms, and the client had left: nothing was sent for ClientClosedError: The client closed the connection before the response was sent.']);
  });

  test('a page that hangs does not hold settled() (app.close()) for ever: the client still waiting gets the bare 503', async () => {
    const closing = await startTestServer({ kernel: { debug: true, routes: routes(), subscribers: [pageHanger] }, limits: { responseTimeout: 60_000 } });
    try {
      const pending = fetchFrom(closing, scheme, '/hang-exception');
      await sleep(100);
      const outcome = await Promise.race([closing.app.listener.settled().then(() => 'settled'), sleep(5_000).then(() => 'still waiting')]);
      assert.is(outcome, 'settled');
      const response = await pending;
      assert.is(response.status, 503);
      assert.is(response.body, 'Service Unavailable\n');
    } finally {
      await closing.close();
    }
  });

  test('a response whose head went out is never cut by the limit, however long its body takes', async () => {
    const response = await fetchFrom(timed, scheme, '/streaming');
    assert.is(response.status, 200);
    assert.is(response.body, '012345');
  });

  test('an idle timeout shorter than the response timeout does not drop the connection first: the 503 goes out', async () => {
    const response = await fetchFrom(shortIdle, scheme, '/never');
    assert.is(response.status, 503);
    assert.match(response.body, /Service Unavailable/);
  });

  test('a slow controller within the limit is answered as usual', async () => {
    const response = await fetchFrom(roomy, scheme, '/slow');
    assert.is(response.status, 200);
    assert.is(response.body, 'in time');
  });

  test.run();
}
