import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  ClientClosedError,
  ControllerResolver,
  EventDispatcher,
  ExceptionEvent,
  HttpError,
  HttpKernel,
  KernelEvents,
  NotFoundHttpError,
  Request,
  RequestTimeoutHttpError,
  RequestType,
  Response,
  type Controller,
  type RequestEvent,
  abortRequest,
} from '../../../kernel/index.js';
import { ErrorListener, GENERIC_SERVER_ERROR_DETAIL, PROBLEM_CONTENT_TYPE, fallbackErrorResponse, flattenError } from '../../../lib/errors/index.js';
import { Logger, createBus, type LogRecord } from '../../../lib/log/index.js';

const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver());

/** The record ErrorListener.logKernelException writes for `error`. */
/** An ErrorListener logging to a bus, and the records it has written. */
function loggingListener(): { listener: ErrorListener; records: LogRecord[] } {
  const bus = createBus();
  const records: LogRecord[] = [];
  bus.on('log', ({ record }) => records.push(record));
  return { listener: new ErrorListener(() => null as never, new Logger({ bus })), records };
}

function logged(error: unknown): LogRecord {
  const { listener, records } = loggingListener();
  listener.logKernelException(new ExceptionEvent(kernel, new Request('/x'), RequestType.MAIN, error));
  assert.is(records.length, 1);
  return records[0]!;
}

test('an error that comes through kernel.exception again (a late fetch rethrowing the timeout it was aborted with) is logged at INFO the second time', () => {
  const { listener, records } = loggingListener();
  const error = new Error('timed out');
  const request = new Request('/x');
  for (let i = 0; i < 2; i++) listener.logKernelException(new ExceptionEvent(kernel, request, RequestType.MAIN, error));
  // A sub-request's is its main request's.
  listener.logKernelException(new ExceptionEvent(kernel, request.duplicate(), RequestType.SUB, error));
  listener.logKernelException(new ExceptionEvent(kernel, request, RequestType.MAIN, new Error('timed out')));
  assert.equal(records.map((record) => record.levelName), ['CRITICAL', 'INFO', 'INFO', 'CRITICAL']);
});

test('one error object thrown for request after request (a rejected promise kept, a shared constant) is logged at its level for each', () => {
  const { listener, records } = loggingListener();
  const error = new Error('the database is down');
  for (let i = 0; i < 3; i++) listener.logKernelException(new ExceptionEvent(kernel, new Request('/x'), RequestType.MAIN, error));
  assert.equal(records.map((record) => record.levelName), ['CRITICAL', 'CRITICAL', 'CRITICAL']);
});

test('hasLogged(error, request) is true for the request it was last logged for and its sub-requests, false for another, an error never logged or a value that is no object', () => {
  const { listener } = loggingListener();
  const error = new Error('down');
  const first = new Request('/x');
  const second = new Request('/y');
  assert.not.ok(ErrorListener.hasLogged(error, first), 'never logged');
  listener.logKernelException(new ExceptionEvent(kernel, first, RequestType.MAIN, error));
  assert.ok(ErrorListener.hasLogged(error, first));
  assert.ok(ErrorListener.hasLogged(error, first.duplicate()), 'a sub-request of it');
  assert.not.ok(ErrorListener.hasLogged(error, second), 'another request');
  listener.logKernelException(new ExceptionEvent(kernel, second, RequestType.MAIN, error));
  assert.ok(ErrorListener.hasLogged(error, second));
  assert.not.ok(ErrorListener.hasLogged(error, first), 'only the request it was last logged for');
  const sub = second.duplicate();
  const subError = new Error('in a sub-request');
  listener.logKernelException(new ExceptionEvent(kernel, sub, RequestType.SUB, subError));
  assert.ok(ErrorListener.hasLogged(subError, second), 'logged for a sub-request: its main request has it');
  listener.logKernelException(new ExceptionEvent(kernel, first, RequestType.MAIN, 'a string'));
  assert.not.ok(ErrorListener.hasLogged('a string', first));
  assert.not.ok(ErrorListener.hasLogged(null, first));
});

/** Node's gc(), without starting node with --expose-gc. */
function collectGarbage(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

test('an error kept for ever (a constant thrown on every request) keeps no request it was logged for alive', async () => {
  const gc = collectGarbage();
  const { listener } = loggingListener();
  const forever = new Error('the database is down');
  const logOnce = (): WeakRef<Request> => {
    const request = new Request('/x', { headers: { 'x-big': 'y'.repeat(1024) } });
    listener.logKernelException(new ExceptionEvent(kernel, request, RequestType.MAIN, forever));
    assert.ok(ErrorListener.hasLogged(forever, request));
    return new WeakRef(request);
  };
  const requests = [logOnce(), logOnce()];
  // A WeakRef keeps its target until the current job ends: collect after it, a few times for a lazy collector.
  for (let i = 0; i < 10 && requests.some((ref) => ref.deref() !== undefined); i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  assert.equal(requests.map((ref) => ref.deref() === undefined), [true, true], 'both requests were collected while the error lives');
  assert.ok(forever.message, 'the error is still alive here');
});

test('an error is logged at the level of the status its page is sent with: ERROR for 4xx, CRITICAL otherwise', () => {
  assert.is(logged(new NotFoundHttpError('gone')).levelName, 'ERROR');
  assert.is(logged(new Error('bug')).levelName, 'CRITICAL');
  assert.is(logged('a string').levelName, 'CRITICAL');
  // http-errors and Fastify errors carry `statusCode` (or `status`) without our `headers`: their page is a 4xx too.
  const foreign = Object.assign(new Error('Gone for good'), { statusCode: 410 });
  assert.is(flattenError(foreign)[0]!.status, 410);
  assert.is(logged(foreign).levelName, 'ERROR');
  assert.is(logged(Object.assign(new Error('teapot'), { status: 418 })).levelName, 'ERROR');
  assert.is(logged(Object.assign(new Error('odd'), { status: 302, headers: {} })).levelName, 'CRITICAL', 'a status no error page has is a 500');
});

test('a client that left is logged at INFO as a 499 ClientClosedError, not as the server\'s failure', () => {
  const record = logged(new ClientClosedError());
  assert.is(record.levelName, 'INFO');
  assert.match(record.message, /^Uncaught error: ClientClosedError: "The client closed the connection before the response was sent\."/);
});

/** What kernel.handle() makes of `error`, thrown by a controller of `request`: the status, the error the page was made for, and the levels logged. */
async function answerTo(request: Request, error: unknown) {
  let pageError: unknown;
  const { kernel, records } = failingWith(error, (sub: Request) => {
    pageError = sub.attributes.get('exception');
    return new Response('page', (pageError as { status?: number }).status ?? 500);
  });
  const response = await kernel.handle(request);
  return { status: response.status, pageError, levels: records.map((record) => record.levelName) };
}

test('the AbortError of a wait on request.signal, aborted because the client left, becomes a 499 ClientClosedError (the AbortError its cause), at INFO', async () => {
  const request = Request.create('/');
  abortRequest(request, new ClientClosedError());
  // What node:timers/promises rejects with: an AbortError whose cause is the signal's reason.
  const wait = new DOMException('The operation was aborted', 'AbortError');
  Object.defineProperty(wait, 'cause', { value: request.signal.reason });
  const answer = await answerTo(request, wait);
  assert.is(answer.status, 499);
  assert.instance(answer.pageError, ClientClosedError);
  assert.is((answer.pageError as Error).cause, wait);
  assert.equal(answer.levels, ['INFO']);
  // An AbortError without a cause, from a library that drops it, while the signal says the client left.
  const bare = await answerTo(request, new DOMException('This operation was aborted', 'AbortError'));
  assert.is(bare.status, 499);
  assert.equal(bare.levels, ['INFO']);
});

test('the AbortError of a wait on request.signal, aborted because the request timeout answered a stalled body with its 408, becomes that 408 (the AbortError its cause), at ERROR', async () => {
  const request = Request.create('/');
  abortRequest(request, new RequestTimeoutHttpError('The request body did not arrive within the request timeout (1 second).'));
  const wait = new DOMException('The operation was aborted', 'AbortError');
  Object.defineProperty(wait, 'cause', { value: request.signal.reason });
  const answer = await answerTo(request, wait);
  assert.is(answer.status, 408);
  assert.instance(answer.pageError, RequestTimeoutHttpError);
  assert.is((answer.pageError as Error).message, 'The request body did not arrive within the request timeout (1 second).');
  assert.is((answer.pageError as Error).cause, wait);
  assert.equal(answer.levels, ['ERROR']);
});

test('an error whose cause is the RequestTimeoutHttpError request.signal was aborted with (a library or the application wrapping the wait\'s failure) becomes that 408 too, at ERROR; one whose cause is another 408 stays as it is', async () => {
  const request = Request.create('/');
  abortRequest(request, new RequestTimeoutHttpError('The request body did not arrive within the request timeout (1 second).'));
  const wrapped = new Error('The query was cancelled', { cause: request.signal.reason });
  const answer = await answerTo(request, wrapped);
  assert.is(answer.status, 408);
  assert.instance(answer.pageError, RequestTimeoutHttpError);
  assert.is((answer.pageError as Error).cause, wrapped);
  assert.equal(answer.levels, ['ERROR']);
  const other = Request.create('/');
  abortRequest(other, new RequestTimeoutHttpError('The request body did not arrive within the request timeout (1 second).'));
  const upstream = new Error('The upstream timed out', { cause: new RequestTimeoutHttpError('upstream') });
  assert.is((await answerTo(other, upstream)).pageError, upstream);
});

test('the AbortError of a wait on a signal the response timeout aborted is INFO (the timeout was logged); one of the controller\'s own abort stays CRITICAL', async () => {
  const timedOut = Request.create('/');
  abortRequest(timedOut, new HttpError(503, 'The response was not ready within 0.2 seconds.'));
  const answer = await answerTo(timedOut, new DOMException('This operation was aborted', 'AbortError'));
  assert.is(answer.status, 500, 'no 499: the client did not leave');
  assert.equal(answer.levels, ['INFO']);
  const own = await answerTo(Request.create('/'), new DOMException('This operation was aborted', 'AbortError'));
  assert.is(own.status, 500);
  assert.equal(own.levels, ['CRITICAL']);
});

/** A kernel whose controller throws `error`, with an ErrorListener rendering pages through `errorController`; the records logged. */
function failingWith(error: unknown, errorController: Controller) {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.REQUEST, (event: RequestEvent) => {
    if (!event.request.attributes.has('_controller')) {
      event.request.attributes.set('_controller', () => {
        throw error;
      });
    }
  });
  const bus = createBus();
  const records: LogRecord[] = [];
  bus.on('log', ({ record }) => records.push(record));
  dispatcher.addSubscriber(new ErrorListener(errorController, new Logger({ bus, level: 'debug' })));
  return { kernel: new HttpKernel(dispatcher, new ControllerResolver()), records };
}

/** The records about the error page failing. */
const pageFailures = (records: LogRecord[]) => records.filter((record) => record.message.startsWith('The error page failed'));

const throwingController = () => {
  throw new TypeError('the error page broke');
};

test('an error controller that throws: the plain page goes out with the original error\'s status and headers, and the failure is CRITICAL with the original beside it', async () => {
  const original = new HttpError(503, 'Down for maintenance: db-7 at 10.0.0.7', { headers: { 'Retry-After': '120' } });
  const { kernel, records } = failingWith(original, throwingController);
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.status, 503);
  assert.is(response.getHeader('retry-after'), '120');
  assert.is(response.getHeader('vary'), 'Accept');
  assert.match(String(response.getHeader('content-type')), /^text\/html/);
  assert.match(String(response.getHeader('content-security-policy')), /default-src 'none'/);
  const body = String(response.body);
  assert.ok(body.includes('The server returned a "503 Service Unavailable".'));
  for (const internal of ['db-7', 'the error page broke', 'TypeError', 'error-listener.test']) assert.not.ok(body.includes(internal), internal);
  const critical = pageFailures(records);
  assert.is(critical.length, 1);
  assert.is(critical[0]!.levelName, 'CRITICAL');
  assert.is(critical[0]!.message, 'The error page failed (TypeError: "the error page broke"), so the plain page was sent for HttpError: "Down for maintenance: db-7 at 10.0.0.7"');
  assert.instance(critical[0]!.context.exception, TypeError);
  assert.ok(critical[0]!.context.original_exception === original);
});

test('a kernel.request listener that refuses the error page\'s sub-request as it refused the request: the 401 goes out with its headers, and the log says to check isMainRequest()', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.REQUEST, (event: RequestEvent) => {
    if (event.request.headers.authorization === undefined) throw new HttpError(401, 'A bearer token is required.', { headers: { 'www-authenticate': 'Bearer' } });
  }, 64);
  const bus = createBus();
  const records: LogRecord[] = [];
  bus.on('log', ({ record }) => records.push(record));
  dispatcher.addSubscriber(new ErrorListener(() => new Response('the page'), new Logger({ bus, level: 'debug' })));
  const response = await new HttpKernel(dispatcher, new ControllerResolver()).handle(Request.create('/admin'));
  assert.is(response.status, 401);
  assert.is(response.getHeader('www-authenticate'), 'Bearer');
  const critical = pageFailures(records);
  assert.is(critical.length, 1);
  assert.is(critical[0]!.message, 'The error page failed (HttpError: "A bearer token is required."), so the plain page was sent for HttpError: "A bearer token is required.": its sub-request met the same error; a kernel.request listener that refuses requests returns first thing for sub-requests (if (!event.isMainRequest()) return)');
});

test('an error controller of the app that throws the very error it is given: the plain page goes out, and the log points to no kernel.request listener, which had no part in it', async () => {
  const original = new HttpError(409, 'Taken.');
  const { kernel, records } = failingWith(original, (request: Request) => {
    throw request.attributes.get('exception');
  });
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.status, 409);
  const critical = pageFailures(records);
  assert.is(critical.length, 1);
  assert.is(critical[0]!.message, 'The error page failed (HttpError: "Taken."), so the plain page was sent for HttpError: "Taken."');
});

test('an error controller that answers no Response gets the same fallback, and the log says what it answered', async () => {
  const { kernel, records } = failingWith(new NotFoundHttpError('No such book.'), () => ({ html: '<p>not a Response</p>' }));
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.status, 404);
  assert.ok(String(response.body).includes('The server returned a "404 Not Found".'));
  const critical = pageFailures(records);
  assert.is(critical.length, 1);
  assert.is(critical[0]!.levelName, 'CRITICAL');
  assert.match(critical[0]!.message, /^The error page failed \(ControllerDoesNotReturnResponseError: "The controller "anonymous" must return a "Response" object but it returned an object of type Object\."\)/);
});

test('a JSON client gets problem+json from the fallback: a 4xx keeps its message, a 5xx says nothing of the failure', async () => {
  const json = { headers: { accept: 'application/json' } };
  const clientError = failingWith(new HttpError(422, 'The title is empty.', { headers: { 'x-field': 'title' } }), throwingController);
  const unprocessable = await clientError.kernel.handle(Request.create('/books', 'POST', json));
  assert.is(unprocessable.status, 422);
  assert.is(unprocessable.getHeader('content-type'), PROBLEM_CONTENT_TYPE);
  assert.is(unprocessable.getHeader('x-field'), 'title');
  assert.equal(JSON.parse(String(unprocessable.body)), { type: 'about:blank', title: 'Unprocessable Entity', status: 422, detail: 'The title is empty.', instance: '/books' });
  const serverError = failingWith(new Error('password=hunter2'), throwingController);
  const internal = await serverError.kernel.handle(Request.create('/books', 'GET', json));
  assert.is(internal.status, 500);
  assert.equal(JSON.parse(String(internal.body)), { type: 'about:blank', title: 'Internal Server Error', status: 500, detail: GENERIC_SERVER_ERROR_DETAIL, instance: '/books' });
});

test('an error controller that throws a Proxy whose traps throw still gets the fallback, and is logged', async () => {
  const boom = () => {
    throw new Error('trap');
  };
  const hostile = new Proxy(new Error('hostile'), { getPrototypeOf: boom, get: boom, has: boom, ownKeys: boom, getOwnPropertyDescriptor: boom });
  const { kernel, records } = failingWith(new HttpError(409, 'Taken.'), () => {
    throw hostile;
  });
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.status, 409);
  assert.ok(String(response.body).includes('409 Conflict'));
  assert.equal(pageFailures(records).map((record) => record.levelName), ['CRITICAL']);
});

test('the fallback is made once, without the error controller: a failing page is never rendered again', async () => {
  let calls = 0;
  const { kernel } = failingWith(new Error('bug'), () => {
    calls++;
    throw new Error('page');
  });
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.status, 500);
  assert.is(calls, 1);
});

test('an error\'s headers that its response goes without are logged once, as a WARNING naming them; valid ones log no warning', async () => {
  const headers: Record<string, string> = { 'retry-after': '1', 'x-split': 'a\r\nb', 'bad name': 'x', 'x-huge': 'x'.repeat(2_000_000) };
  for (let i = 0; i < 40; i++) headers[`x-h${i}`] = 'y';
  const page = () => new Response('page', 429);
  const { kernel, records } = failingWith(new HttpError(429, 'slow', { headers }), page);
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.status, 429);
  const warnings = records.filter((record) => record.levelName === 'WARNING');
  assert.is(warnings.length, 1);
  // retry-after and x-h0 to x-h30 are the 32 kept.
  assert.is(warnings[0]!.context.count, 12);
  assert.is(warnings[0]!.message, '12 of the headers of HttpError left out of its response: x-split (invalid value), bad name (invalid name), x-huge (too large), x-h31 (too many), x-h32 (too many), x-h33 (too many), x-h34 (too many), x-h35 (too many), x-h36 (too many), x-h37 (too many), and 2 more');
  const valid = failingWith(new HttpError(429, 'slow', { headers: { 'retry-after': '1' } }), page);
  await valid.kernel.handle(Request.create('/'));
  assert.is(valid.records.filter((record) => record.levelName === 'WARNING').length, 0);
  // An error with only a statusCode has its headers ignored, not reported as partly left out.
  const foreign = failingWith(Object.assign(new Error('upstream'), { statusCode: 502, headers: { 'content-type': 'text/html', 'set-cookie': 'a=1' } }), page);
  const foreignResponse = await foreign.kernel.handle(Request.create('/'));
  assert.is(foreignResponse.getHeader('set-cookie'), undefined);
  assert.is(foreign.records.filter((record) => record.levelName === 'WARNING').length, 0);
});

test('fallbackErrorResponse never throws: an original error whose every trap throws is a 500 page', () => {
  const boom = () => {
    throw new Error('trap');
  };
  const hostile = new Proxy(new Error('hostile'), { getPrototypeOf: boom, get: boom, has: boom, ownKeys: boom, getOwnPropertyDescriptor: boom });
  for (const accept of ['text/html', 'application/json']) {
    const response = fallbackErrorResponse(hostile, Request.create('/x', 'GET', { headers: { accept } }));
    assert.is(response.status, 500);
    assert.is(response.getHeader('vary'), 'Accept');
    assert.ok(String(response.body).includes(accept === 'text/html' ? '500 Internal Server Error' : GENERIC_SERVER_ERROR_DETAIL));
  }
});

test.run();
