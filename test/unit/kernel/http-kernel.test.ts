import { getEventListeners } from 'node:events';
import { Readable } from 'node:stream';
import { setTimeout as wait } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  BadRequestHttpError,
  ControllerDoesNotReturnResponseError,
  ControllerResolver,
  EventDispatcher,
  HttpError,
  HttpKernel,
  InvalidControllerError,
  MAX_SUB_REQUEST_DEPTH,
  MAX_SUB_REQUESTS,
  KernelEvents,
  MethodNotAllowedHttpError,
  NotFoundHttpError,
  Request,
  RequestStack,
  RequestType,
  Response,
  SubRequestTooDeepError,
  SuspiciousOperationError,
  TooManySubRequestsError,
  discardedBody,
  droppedBodies,
  headBodyLength,
  type TerminateEvent,
  type ControllerArgumentsEvent,
  type ControllerEvent,
  type ExceptionEvent,
  type FinishRequestEvent,
  type KernelEvent,
  type RequestEvent,
  ResponseEvent,
  type ViewEvent,
} from '../../../kernel/index.js';
import { Logger, createBus } from '../../../lib/log/index.js';
import { createRequestListener } from '../../../lib/server/index.js';
import { thrown } from '../helpers.js';

const test = suite('HttpKernel');

function kernelWith(controller: (...args: any[]) => unknown) {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.REQUEST, (event: RequestEvent) => {
    if (!event.request.attributes.has('_controller')) event.request.attributes.set('_controller', controller);
  });
  return { dispatcher, kernel: new HttpKernel(dispatcher, new ControllerResolver()) };
}

test('dispatches the lifecycle events in order', async () => {
  const { dispatcher, kernel } = kernelWith(() => new Response('ok'));
  const seen: string[] = [];
  for (const name of Object.values(KernelEvents)) dispatcher.addListener(name, (_e: unknown, eventName: string) => void seen.push(eventName), -1);
  const request = Request.create('/');
  const response = await kernel.handle(request);
  await kernel.terminate(request, response);
  assert.equal(seen, ['kernel.request', 'kernel.controller', 'kernel.controller_arguments', 'kernel.response', 'kernel.finish_request', 'kernel.terminate']);
  assert.is(response.body, 'ok');
});

test('handle() rejects what is no Request and a request type that is neither MAIN nor SUB, at the call, with no listener run', async () => {
  const { dispatcher, kernel } = kernelWith(() => new Response('ok'));
  const seen: string[] = [];
  dispatcher.addListener(KernelEvents.REQUEST, () => void seen.push('request'), 100);
  const path = await kernel.handle('/books' as never).then(() => null, (error: unknown) => error as Error);
  assert.instance(path, TypeError);
  assert.is(path!.message, 'HttpKernel.handle() takes a Request (Request.create(\'/path\')), not the string "/books".');
  for (const type of ['sub', 0, 3]) {
    const error = await kernel.handle(Request.create('/'), type as never).then(() => null, (rejected: unknown) => rejected as Error);
    assert.instance(error, TypeError, String(type));
    assert.match(error!.message, /^A request type is RequestType\.MAIN \(1\) or RequestType\.SUB \(2\), not /);
  }
  assert.equal(seen, []);
  assert.is((await kernel.handle(Request.create('/'), RequestType.SUB)).body, 'ok');
});

test('handle() given the Fetch API\'s Request (the global one) or another copy\'s says so, rather than "takes a Request, not an object of type Request"', async () => {
  const { kernel } = kernelWith(() => new Response('ok'));
  const error = await kernel.handle(new globalThis.Request('http://a.test/books') as never).then(() => null, (rejected: unknown) => rejected as Error);
  assert.instance(error, TypeError);
  assert.is(error!.message, "HttpKernel.handle() takes a Request (Request.create('/path')), not the Fetch API's Request (the global one): import Request from http-kernel.");
  const copy = await kernel.handle(new (class Request {})() as never).then(() => null, (rejected: unknown) => rejected as Error);
  assert.is(copy!.message, "HttpKernel.handle() takes a Request (Request.create('/path')), not a Request of another copy of http-kernel (is it installed twice?).");
});

test('terminateMaybeAsync answers without a promise when the terminate listeners are synchronous, with one otherwise', async () => {
  const { dispatcher, kernel } = kernelWith(() => new Response('ok'));
  const seen: string[] = [];
  dispatcher.addListener(KernelEvents.TERMINATE, () => void seen.push('sync'));
  const request = Request.create('/');
  const response = await kernel.handle(request);
  assert.is(kernel.terminateMaybeAsync(request, response), undefined);
  assert.equal(seen, ['sync']);
  dispatcher.addListener(KernelEvents.TERMINATE, async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    seen.push('async');
  }, -10);
  const pending = kernel.terminateMaybeAsync(request, response);
  assert.ok(pending instanceof Promise);
  await pending;
  assert.equal(seen, ['sync', 'sync', 'async']);
});

test('a request listener that sets a response skips the controller', async () => {
  let called = false;
  const { dispatcher, kernel } = kernelWith(() => {
    called = true;
    return new Response('controller');
  });
  dispatcher.addListener(KernelEvents.REQUEST, (event: RequestEvent) => event.setResponse(new Response('early', 202)), 100);
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.status, 202);
  assert.not.ok(called);
});

test('no controller is a 404 naming the path', async () => {
  const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver());
  try {
    await kernel.handle(Request.create('/x'));
    assert.unreachable();
  } catch (error) {
    assert.instance(error, NotFoundHttpError);
    assert.is((error as Error).message, 'Unable to find the controller for path "/x". The route is wrongly configured.');
  }
});

test('the controller gets the request and route params; kernel.controller may replace it', async () => {
  const { dispatcher, kernel } = kernelWith(() => new Response('original'));
  dispatcher.addListener(KernelEvents.REQUEST, (event: RequestEvent) => event.request.attributes.set('_route_params', { id: '7' }), -5);
  dispatcher.addListener(KernelEvents.CONTROLLER, (event: { setController(c: unknown): void }) =>
    event.setController((request: Request, params: Record<string, string>) => new Response(`${request.path}:${params.id}`)),
  );
  const response = await kernel.handle(Request.create('/books/7'));
  assert.is(response.body, '/books/7:7');
});

test('kernel.controller_arguments may replace the controller and its arguments together', async () => {
  const { dispatcher, kernel } = kernelWith((request: Request) => new Response(`original ${request.path}`));
  const seen: unknown[][] = [];
  dispatcher.addListener(KernelEvents.CONTROLLER_ARGUMENTS, (event: ControllerArgumentsEvent) => {
    seen.push(event.arguments);
    event.setController((greeting: string, name: string) => new Response(`${greeting}, ${name}`));
    event.setArguments(['hello', 'world']);
  });
  const response = await kernel.handle(Request.create('/x'));
  assert.is(response.body, 'hello, world');
  assert.is(seen.length, 1);
  assert.instance(seen[0]![0], Request, 'the listener saw the arguments resolved for the original controller');
});

test('a kernel.request listener can tell whether an earlier one answered (hasResponse)', async () => {
  const { dispatcher, kernel } = kernelWith(() => new Response('from the controller'));
  const answers: boolean[] = [];
  dispatcher.addListener(KernelEvents.REQUEST, (event: RequestEvent) => {
    answers.push(event.hasResponse());
    if (event.request.path === '/cached') event.setResponse(new Response('from the cache'));
    answers.push(event.hasResponse());
  }, 10);
  assert.is((await kernel.handle(Request.create('/cached'))).body, 'from the cache');
  assert.is((await kernel.handle(Request.create('/fresh'))).body, 'from the controller');
  assert.equal(answers, [false, true, false, false]);
});

test('a non-Response result goes through kernel.view', async () => {
  const { dispatcher, kernel } = kernelWith(() => ({ hello: 'world' }));
  dispatcher.addListener(KernelEvents.VIEW, (event: ViewEvent) => event.setResponse(Response.json(event.controllerResult)));
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.body, '{"hello":"world"}');
});

test('a result no view listener handles is an error naming what was returned', async () => {
  const { kernel } = kernelWith(function show() {
    return undefined;
  });
  try {
    await kernel.handle(Request.create('/'));
    assert.unreachable();
  } catch (error) {
    assert.instance(error, ControllerDoesNotReturnResponseError);
    assert.match((error as Error).message, /"show" must return a "Response" object but it returned undefined\. Did you forget/);
  }
});

test('async controllers and listeners are awaited', async () => {
  const { dispatcher, kernel } = kernelWith(async () => {
    await new Promise((resolve) => setTimeout(resolve, 2));
    return new Response('late');
  });
  dispatcher.addListener(KernelEvents.RESPONSE, async (event: ResponseEvent) => {
    await Promise.resolve();
    event.response.setHeader('x-seen', 'yes');
  });
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.body, 'late');
  assert.is(response.getHeader('x-seen'), 'yes');
});

test('an async listener at every step is awaited before the next step, which sees its changes', async () => {
  const seen: string[] = [];
  const { dispatcher, kernel } = kernelWith(() => ({ hello: 'the original controller' }));
  const tick = () => new Promise((resolve) => setTimeout(resolve, 1));
  // Each listener changes, after its await, what the next step uses.
  dispatcher.addListener(KernelEvents.REQUEST, async (event: RequestEvent) => {
    await tick();
    seen.push('request');
    event.request.attributes.set('_controller', () => ({ hello: 'the routed controller' }));
  }, 100);
  dispatcher.addListener(KernelEvents.CONTROLLER, async (event: ControllerEvent) => {
    await tick();
    seen.push('controller event');
    event.setController(async (name: unknown) => {
      await tick();
      seen.push('controller');
      return { hello: name };
    });
  });
  dispatcher.addListener(KernelEvents.CONTROLLER_ARGUMENTS, async (event: ControllerArgumentsEvent) => {
    await tick();
    seen.push('arguments');
    event.setArguments(['changed']);
  });
  dispatcher.addListener(KernelEvents.VIEW, async (event: ViewEvent) => {
    await tick();
    seen.push('view');
    event.setResponse(Response.json(event.controllerResult));
  });
  dispatcher.addListener(KernelEvents.FINISH_REQUEST, async () => {
    await tick();
    seen.push('finish');
  });
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.body, '{"hello":"changed"}');
  assert.equal(seen, ['request', 'controller event', 'arguments', 'controller', 'view', 'finish']);
});

test('an async view listener that sets no response is the error naming what the controller returned', async () => {
  const { dispatcher, kernel } = kernelWith(function answer() {
    return 42;
  });
  dispatcher.addListener(KernelEvents.VIEW, async () => {
    await Promise.resolve();
  });
  try {
    await kernel.handle(Request.create('/'));
    assert.unreachable();
  } catch (error) {
    assert.instance(error, ControllerDoesNotReturnResponseError);
    assert.match((error as Error).message, /"answer" must return a "Response" object but it returned a number \(42\)/);
  }
});

test('kernel.exception turns an HttpError into a response with its status and headers', async () => {
  const { dispatcher, kernel } = kernelWith(() => {
    throw new MethodNotAllowedHttpError(['GET', 'HEAD'], 'nope');
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response(`handled: ${(event.error as Error).message}`)));
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.status, 405);
  assert.is(response.getHeader('allow'), 'GET, HEAD');
  assert.is(response.body, 'handled: nope');
});

test('a kernel.exception listener may replace the error: later listeners, the status and handle()\'s rejection follow the replacement', async () => {
  class OutOfStockError extends Error {}
  const { dispatcher, kernel } = kernelWith((request: Request) => {
    throw new OutOfStockError(`no copies of ${request.path}`);
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
    if (event.error instanceof OutOfStockError) event.setError(new NotFoundHttpError(event.error.message, { cause: event.error }));
  }, 10);
  const seen: unknown[] = [];
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
    seen.push(event.error);
    if (event.request.path !== '/unanswered') event.setResponse(new Response('sorry'));
  });
  const response = await kernel.handle(Request.create('/books/1'));
  assert.is(response.status, 404, 'the replacement\'s status, not a 500 for the original');
  assert.instance(seen[0], NotFoundHttpError);
  assert.instance((seen[0] as Error).cause, OutOfStockError);
  const rejected = await kernel.handle(Request.create('/unanswered')).then(
    () => assert.unreachable(),
    (reason: unknown) => reason,
  );
  assert.instance(rejected, NotFoundHttpError, 'with no response set, handle() rejects with the replacement');
});

test('a non-HTTP error handled with a 200 response becomes a 500', async () => {
  const { dispatcher, kernel } = kernelWith(() => {
    throw new TypeError('bug');
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('page')));
  assert.is((await kernel.handle(Request.create('/'))).status, 500);
});

test('an HttpError whose status is no error status, handled with a 200 response, becomes a 500 as on the error page (node refuses 1000, a 200 would say it worked)', async () => {
  for (const status of [0, 99, 200, 302, 1000, 404.5, Number.NaN]) {
    const { dispatcher, kernel } = kernelWith(() => {
      throw new HttpError(status, 'odd');
    });
    dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('page')));
    assert.is((await kernel.handle(Request.create('/'))).status, 500, String(status));
  }
  const { dispatcher, kernel } = kernelWith(() => {
    throw new HttpError(429, 'slow down');
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('page')));
  assert.is((await kernel.handle(Request.create('/'))).status, 429);
});

test('allowCustomResponseCode keeps the listener\'s status', async () => {
  const { dispatcher, kernel } = kernelWith(() => {
    throw new Error('x');
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
    event.allowCustomResponseCode();
    event.setResponse(new Response('fine', 200));
  });
  assert.is((await kernel.handle(Request.create('/'))).status, 200);
});

test('an exception listener\'s redirect is kept, as Symfony\'s isRedirect() says which: 201, 301, 302, 303, 307, 308; 300 and 304 take the error\'s status', async () => {
  const statusOf = async (status: number): Promise<number> => {
    const { dispatcher, kernel } = kernelWith(() => {
      throw new Error('x');
    });
    dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('', status, { location: '/login' })));
    return (await kernel.handle(Request.create('/'))).status;
  };
  for (const status of [201, 301, 302, 303, 307, 308]) assert.is(await statusOf(status), status, String(status));
  for (const status of [300, 304, 200, 204]) assert.is(await statusOf(status), 500, String(status));
});

test('request-level errors become a 400 with the same message and the original as cause', async () => {
  const { dispatcher, kernel } = kernelWith(() => {
    throw new SuspiciousOperationError('Invalid Host "<script>".');
  });
  let seen: unknown;
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
    seen = event.error;
  });
  try {
    await kernel.handle(Request.create('/'));
    assert.unreachable();
  } catch (error) {
    assert.is(error, seen);
    assert.instance(error, BadRequestHttpError);
    assert.is((error as BadRequestHttpError).status, 400);
    assert.is((error as Error).message, 'Invalid Host "<script>".');
    assert.instance((error as Error).cause, SuspiciousOperationError);
  }
});

test('an embedder\'s array of several Host values is a 400, not a 500', async () => {
  const { kernel } = kernelWith((request: Request) => new Response(request.host));
  await kernel.handle(Request.create('/', 'GET', { headers: { host: ['a.test', 'b.test'] } })).then(
    () => assert.unreachable(),
    (error: unknown) => {
      assert.instance(error, BadRequestHttpError);
      assert.instance((error as Error).cause, SuspiciousOperationError);
    },
  );
});

test('without catchErrors the error is rethrown after kernel.finish_request', async () => {
  const { dispatcher, kernel } = kernelWith(() => {
    throw new Error('raw');
  });
  const seen: string[] = [];
  dispatcher.addListener(KernelEvents.EXCEPTION, () => void seen.push('exception'));
  dispatcher.addListener(KernelEvents.FINISH_REQUEST, () => void seen.push('finish'));
  await kernel.handle(Request.create('/'), RequestType.MAIN, false).then(
    () => assert.unreachable(),
    (error: Error) => assert.is(error.message, 'raw'),
  );
  assert.equal(seen, ['finish']);
});

test('sub-requests see their parent on the request stack', async () => {
  const dispatcher = new EventDispatcher();
  const kernel = new HttpKernel(dispatcher, new ControllerResolver());
  const seen: Array<[string, string | undefined, string | undefined]> = [];
  const inner = (request: Request) => {
    seen.push([request.path, kernel.requestStack.getParentRequest()?.path, kernel.requestStack.getMainRequest()?.path]);
    return new Response('inner');
  };
  const outer = async (request: Request) => {
    const sub = request.duplicate({ attributes: { _controller: inner } });
    const response = await kernel.handle(sub, RequestType.SUB);
    return new Response(`outer(${response.body})`);
  };
  const request = Request.create('/main');
  request.attributes.set('_controller', outer);
  const response = await kernel.handle(request);
  assert.is(response.body, 'outer(inner)');
  assert.equal(seen, [['/main', '/main', '/main']]);
  assert.is(kernel.requestStack.getCurrentRequest(), undefined);
});

test('concurrent requests each see only their own request on the stack', async () => {
  const dispatcher = new EventDispatcher();
  const kernel = new HttpKernel(dispatcher, new ControllerResolver());
  const controller = async (request: Request) => {
    await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
    return new Response(kernel.requestStack.getCurrentRequest() === request ? 'same' : 'mixed');
  };
  const responses = await Promise.all(
    Array.from({ length: 100 }, (_, i) => {
      const request = Request.create(`/r${i}`);
      request.attributes.set('_controller', controller);
      return kernel.handle(request);
    }),
  );
  assert.ok(responses.every((r) => r.body === 'same'));
});

test('without async context tracking the kernel still handles sub-requests; the stack answers undefined', async () => {
  const stack = new RequestStack({ asyncContext: false });
  const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver(), stack);
  const seen: unknown[] = [];
  const inner = () => {
    seen.push(stack.getCurrentRequest());
    return new Response('inner');
  };
  const request = Request.create('/');
  request.attributes.set('_controller', async (req: Request) => {
    const response = await kernel.handle(req.duplicate({ attributes: { _controller: inner } }), RequestType.SUB);
    return new Response(`outer(${response.body})`);
  });
  assert.is((await kernel.handle(request)).body, 'outer(inner)');
  assert.equal(seen, [undefined]);
  assert.not.ok(stack.tracksAsyncContext);
  assert.ok(new RequestStack().tracksAsyncContext);
});

test('a controller returning a thenable that is no Promise gets its value awaited', async () => {
  // A thenable's then() need not return anything, nor call back synchronously.
  const { kernel } = kernelWith(() => ({
    then(resolve: (value: unknown) => void): void {
      setTimeout(() => resolve(new Response('from a thenable', 201)), 1);
    },
  }));
  const response = await kernel.handle(Request.create('/'));
  assert.ok(response instanceof Response);
  assert.is(response.status, 201);
  assert.is(response.body, 'from a thenable');
});

test('a controller returning a thenable that rejects goes through kernel.exception with its error', async () => {
  const { dispatcher, kernel } = kernelWith(() => ({
    then(_resolve: unknown, reject: (error: unknown) => void): void {
      reject(new NotFoundHttpError('gone'));
    },
  }));
  const errors: unknown[] = [];
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
    errors.push(event.error);
    event.setResponse(new Response('handled'));
  });
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.status, 404);
  assert.ok(errors[0] instanceof NotFoundHttpError);
});

test('an error with a numeric status but null headers, handled with a 200, is a 500 rather than a TypeError from the kernel', async () => {
  const { dispatcher, kernel } = kernelWith(() => {
    throw Object.assign(new Error('upstream said no'), { status: 502, headers: null });
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('page')));
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.status, 500);
  assert.is(response.body, 'page');
});

test('a thrown Proxy whose getPrototypeOf trap throws goes through kernel.exception, not out of handle() as the trap\'s error', async () => {
  const hostile = new Proxy(new Error('hostile'), {
    getPrototypeOf() {
      throw new Error('trap');
    },
  });
  const { dispatcher, kernel } = kernelWith(() => {
    throw hostile;
  });
  const seen: unknown[] = [];
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
    seen.push(event.error);
    event.setResponse(new Response('page'));
  });
  const response = await kernel.handle(Request.create('/'));
  assert.is(seen.length, 1);
  assert.ok(seen[0] === hostile, 'the listener gets the thrown value itself');
  assert.is(response.status, 500);
  assert.is(response.body, 'page');
});

test('an HttpError\'s headers given to a 200 from kernel.exception are checked: no CR/LF, no invalid name, no body header, bounded', async () => {
  const { dispatcher, kernel } = kernelWith(() => {
    throw new HttpError(429, 'slow down', {
      headers: { 'Retry-After': '5', 'x-split': 'a\r\nSet-Cookie: session=evil', 'bad name': 'x', 'content-length': '0', 'x-huge': 'x'.repeat(1_000_000) },
    });
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('page')));
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.status, 429);
  assert.equal(Object.keys(response.headers).sort(), ['retry-after']);
  assert.is(response.getHeader('retry-after'), '5');
});

test('an HttpError whose headers getter throws, handled with a 200, keeps its status and is no new failure', async () => {
  const error = new HttpError(409, 'conflict');
  let reads = 0;
  Object.defineProperty(error, 'headers', {
    get() {
      // isHttpError reads it once; the kernel's second read is the one that throws.
      if (reads++ > 0) throw new Error('getter');
      return {};
    },
  });
  const { dispatcher, kernel } = kernelWith(() => {
    throw error;
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('page')));
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.status, 409);
  assert.is(response.body, 'page');
});

test('a kernel.exception listener that throws or rejects: its error escapes after kernel.finish_request, once', async () => {
  for (const fails of [() => { throw new Error('listener failed'); }, async () => { throw new Error('listener failed'); }]) {
    const { dispatcher, kernel } = kernelWith(() => {
      throw new Error('controller failed');
    });
    const seen: string[] = [];
    dispatcher.addListener(KernelEvents.EXCEPTION, fails);
    dispatcher.addListener(KernelEvents.FINISH_REQUEST, (event: FinishRequestEvent) => void seen.push(`finish ${event.request.path} ${kernel.requestStack.getCurrentRequest()?.path}`));
    await kernel.handle(Request.create('/x')).then(
      () => assert.unreachable(),
      (error: Error) => {
        assert.is(error.message, 'listener failed');
        // The error it was handling is kept for whoever logs the escape.
        assert.is((HttpKernel.handledErrorOf(error) as Error).message, 'controller failed');
      },
    );
    assert.equal(seen, ['finish /x /x']);
    assert.is(kernel.requestStack.getCurrentRequest(), undefined);
  }
});

test('handledErrorOf: undefined for an error no kernel.exception listener threw, and for what is not an object', async () => {
  const { kernel } = kernelWith(() => {
    throw new Error('controller failed');
  });
  // No listener answers: the controller's own error escapes, and it was handling nothing.
  const escaped = await kernel.handle(Request.create('/x')).then(() => assert.unreachable(), (error: unknown) => error);
  assert.is((escaped as Error).message, 'controller failed');
  assert.is(HttpKernel.handledErrorOf(escaped), undefined);
  assert.is(HttpKernel.handledErrorOf(new Error('never thrown')), undefined);
  assert.is(HttpKernel.handledErrorOf('a string'), undefined);
  assert.is(HttpKernel.handledErrorOf(null), undefined);
});

test('a kernel.response listener that fails on the error response: the error page is sent unfiltered, and kernel.finish_request runs once', async () => {
  const { dispatcher, kernel } = kernelWith(() => {
    throw new NotFoundHttpError('gone');
  });
  const seen: string[] = [];
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('error page')));
  dispatcher.addListener(KernelEvents.RESPONSE, () => {
    throw new Error('response listener failed');
  });
  dispatcher.addListener(KernelEvents.FINISH_REQUEST, () => void seen.push('finish'));
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.status, 404);
  assert.is(response.body, 'error page');
  assert.equal(seen, ['finish']);
});

test('a sub-request whose error escapes leaves its parent the current request, and main-request listeners see which is which', async () => {
  const { dispatcher, kernel } = kernelWith(async (request: Request) => {
    const sub = request.duplicate({ attributes: { _controller: () => { throw new Error('fragment failed'); } } });
    const caught = await kernel.handle(sub, RequestType.SUB, false).then(() => 'none', (error: Error) => error.message);
    return new Response(`${caught}; current ${kernel.requestStack.getCurrentRequest()?.path}, ${kernel.requestStack.all().length} on the stack`);
  });
  const seen: string[] = [];
  dispatcher.addListener(KernelEvents.FINISH_REQUEST, (event: FinishRequestEvent) => void seen.push(event.isMainRequest() ? 'main' : 'sub'));
  const response = await kernel.handle(Request.create('/page'));
  assert.is(response.body, 'fragment failed; current /page, 1 on the stack');
  assert.equal(seen, ['sub', 'main']);
});

test('an error that escapes handle() is the one it met, not that of a kernel.finish_request listener failing on the way out', async () => {
  for (const way of ['exception listener throws', 'no listener answers', 'catchErrors off'] as const) {
    const controllerError = new Error('controller failed');
    const listenerError = new Error('exception listener failed');
    const { dispatcher, kernel } = kernelWith(() => {
      throw controllerError;
    });
    if (way === 'exception listener throws') {
      dispatcher.addListener(KernelEvents.EXCEPTION, () => {
        throw listenerError;
      });
    }
    let finished = 0;
    dispatcher.addListener(KernelEvents.FINISH_REQUEST, () => {
      finished++;
      throw new HttpError(400, 'finish_request failed');
    });
    const escaped = await kernel.handle(Request.create('/'), RequestType.MAIN, way !== 'catchErrors off').then(
      () => null,
      (error: unknown) => error,
    );
    assert.is(escaped, way === 'exception listener throws' ? listenerError : controllerError, way);
    assert.is(finished, 1, `${way}: kernel.finish_request ran once`);
    if (way === 'exception listener throws') assert.is(HttpKernel.handledErrorOf(escaped), controllerError);
  }
});

test('a stream body the kernel drops (kernel.response or kernel.finish_request failed) is destroyed, never left open', async () => {
  for (const failing of [KernelEvents.RESPONSE, KernelEvents.FINISH_REQUEST]) {
    const streams: Readable[] = [];
    const stream = () => {
      const body = Readable.from(['file contents']);
      streams.push(body);
      return body;
    };
    const { dispatcher, kernel } = kernelWith(() => new Response(stream()));
    // A listener replaces the controller's stream with another (as a compression listener would), then one fails.
    dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => {
      if (event.response.status === 200) event.setResponse(new Response(stream()));
    }, 10);
    dispatcher.addListener(failing, (event: KernelEvent) => {
      if (event.request.attributes.has('_failed')) return;
      event.request.attributes.set('_failed', true);
      throw new Error(`${failing} failed`);
    });
    dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('error page')));
    const response = await kernel.handle(Request.create('/download'));
    assert.is(response.body, 'error page', failing);
    assert.is(response.status, 500);
    assert.equal(streams.map((body) => body.destroyed), [true, true], failing);
  }
});

test('a stream body a failed kernel.response listener put on the error page is destroyed; the page it replaced is sent', async () => {
  const { dispatcher, kernel } = kernelWith(() => {
    throw new NotFoundHttpError('gone');
  });
  const page = Readable.from(['error page']);
  const replacement = Readable.from(['replacement']);
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response(page)));
  dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => {
    event.setResponse(new Response(replacement, 404));
    throw new Error('response listener failed');
  });
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.body, page);
  assert.not.ok(page.destroyed);
  assert.ok(replacement.destroyed);
});

test('the no-Response error says what came back: a quoted string cut with an ellipsis, an array, the Fetch API\'s global Response', async () => {
  const messageFor = async (result: unknown) => {
    const { kernel } = kernelWith(function show() {
      return result;
    });
    return kernel.handle(Request.create('/')).then(
      () => assert.unreachable(),
      (error: Error) => error.message,
    );
  };
  assert.is(await messageFor(''), 'The controller "show" must return a "Response" object but it returned a string ("").');
  assert.is(await messageFor('x'.repeat(300)), `The controller "show" must return a "Response" object but it returned a string ("${'x'.repeat(255)}...").`);
  assert.is(await messageFor(['a', 'b']), 'The controller "show" must return a "Response" object but it returned an array (2 items).');
  assert.is(await messageFor(false), 'The controller "show" must return a "Response" object but it returned a boolean value (false).');
  assert.is(
    await messageFor(new globalThis.Response('hello')),
    'The controller "show" must return a "Response" object but it returned a Fetch API Response (the global Response, not this kernel\'s: import { Response } from \'http-kernel\').',
  );
});

test('a Response of another copy of http-kernel (installed twice) is named so, by setResponse() and in the no-Response error, not "an object of type Response"', async () => {
  const CopyResponse = class Response {
    status = 200;
    headers = {};
    body = 'from the other copy';
  };
  const { kernel } = kernelWith(function show() {
    return new CopyResponse();
  });
  const error = await kernel.handle(Request.create('/')).then(() => null, (rejected: unknown) => rejected as Error);
  assert.is(error!.message, 'The controller "show" must return a "Response" object but it returned a Response of another copy of http-kernel (is it installed twice?).');
  const event = new ResponseEvent(kernel, Request.create('/'), RequestType.MAIN, new Response());
  assert.throws(() => event.setResponse(new CopyResponse() as never), /^ResponseEvent\.setResponse\(\) takes a Response, not a Response of another copy of http-kernel \(is it installed twice\?\)\.$/);
});

test('handleException answers an error raised after handle() through kernel.exception, kernel.response and finish_request, with the request current', async () => {
  const { dispatcher, kernel } = kernelWith(() => new Response('ok'));
  const request = Request.create('/');
  await kernel.handle(request);
  const seen: string[] = [];
  for (const name of Object.values(KernelEvents)) {
    // Before the listener that answers: setting a response stops the exception event.
    dispatcher.addListener(name, (_event: KernelEvent, eventName: string) => void seen.push(`${eventName} ${kernel.requestStack.getCurrentRequest() === request}`), 1);
  }
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
    // A page of its own, from within the request's context: a sub-request has it as its parent.
    event.setResponse(new Response(`page for ${(event.error as Error).message}`));
  });
  const response = await kernel.handleException(new Error('unsendable'), request);
  assert.is(response.body, 'page for unsendable');
  assert.is(response.status, 500, 'an error that is no HttpError gives a 500');
  assert.equal(seen, ['kernel.exception true', 'kernel.response true', 'kernel.finish_request true']);
  assert.is(kernel.requestStack.getCurrentRequest(), undefined, 'nothing is left on the stack');
});

test('handleException rejects with the error when no listener answers it, after finish_request', async () => {
  const { dispatcher, kernel } = kernelWith(() => new Response('ok'));
  const finished: string[] = [];
  dispatcher.addListener(KernelEvents.FINISH_REQUEST, (event: FinishRequestEvent) => void finished.push(event.request.path));
  const error = new Error('nobody answers');
  const rejected = await kernel.handleException(error, Request.create('/here')).then(
    () => assert.unreachable(),
    (reason: unknown) => reason,
  );
  assert.is(rejected, error);
  assert.equal(finished, ['/here']);
});

test('handleException from inside another request\'s context takes the request as the main one, alone on the stack', async () => {
  const { dispatcher, kernel } = kernelWith(() => new Response('ok'));
  const request = Request.create('/main');
  const other = Request.create('/other');
  let stack: readonly Request[] = [];
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
    stack = kernel.requestStack.all();
    event.setResponse(new Response('page'));
  });
  await kernel.requestStack.run(other, () => kernel.handleException(new Error('x'), request));
  assert.equal(stack, [request]);
});

test('an [object, method] controller whose method is missing: the error names the class and the methods it has', () => {
  class BookController {
    list() {}
    show() {}
  }
  const request = Request.create('/books/1');
  request.attributes.set('_controller', [new BookController(), 'shw']);
  const error = thrown(() => new ControllerResolver().getController(request));
  assert.instance(error, InvalidControllerError);
  assert.is(error.message, 'The controller for URI "/books/1" is not callable: expected method "shw" on class "BookController", which has "list", "show".');
  request.attributes.set('_controller', [{}, 'show']);
  assert.is(thrown(() => new ControllerResolver().getController(request)).message, 'The controller for URI "/books/1" is not callable: expected method "show" on class "Object", which has no methods.');
});

test('an [object, method] controller runs with the object as `this`; an unregistered name or a value of another kind is an InvalidControllerError', async () => {
  class BookController {
    readonly prefix = 'book';
    show(request: Request) {
      return new Response(`${this.prefix} ${request.path}`);
    }
  }
  const { kernel } = kernelWith(() => new Response('unused'));
  const request = Request.create('/books/9');
  request.attributes.set('_controller', [new BookController(), 'show']);
  assert.is((await kernel.handle(request)).body, 'book /books/9');

  const resolver = new ControllerResolver({ home: () => new Response('home') });
  const named = Request.create('/');
  named.attributes.set('_controller', 'home');
  assert.type(resolver.getController(named), 'function');
  named.attributes.set('_controller', 'hom');
  const unknown = thrown(() => resolver.getController(named));
  assert.instance(unknown, InvalidControllerError);
  assert.is(unknown.message, 'The controller for URI "/" is not callable: no controller is registered as "hom". Did you mean "home"? The registered controllers are "home".');
  named.attributes.set('_controller', 42);
  assert.is(thrown(() => resolver.getController(named)).message, 'The controller for URI "/" is not callable.');
  named.attributes.set('_controller', [new BookController(), 'show', 'extra']);
  assert.instance(thrown(() => resolver.getController(named)), InvalidControllerError);
});

test('an unregistered controller name is refused with the registered names, at most 10, and the closest one when it is a near miss', () => {
  const unused = () => new Response('unused');
  const messageFor = (resolver: ControllerResolver, name: string): string => {
    const request = Request.create('/books/1');
    request.attributes.set('_controller', name);
    return thrown(() => resolver.getController(request)).message;
  };
  const few = new ControllerResolver({ 'book.show': unused, 'book.list': unused, home: unused });
  const prefix = 'The controller for URI "/books/1" is not callable: no controller is registered as';
  const registered = 'The registered controllers are "book.list", "book.show", "home".';
  assert.is(messageFor(few, 'book.shwo'), `${prefix} "book.shwo". Did you mean "book.show"? ${registered}`);
  assert.is(messageFor(few, 'Book.Show'), `${prefix} "Book.Show". Did you mean "book.show"? ${registered}`);
  assert.is(messageFor(few, 'book.lists'), `${prefix} "book.lists". Did you mean "book.list"? ${registered}`);
  assert.is(messageFor(few, 'hmoe'), `${prefix} "hmoe". Did you mean "home"? ${registered}`);
  // No near miss: a third of the name's length in edits at most.
  assert.is(messageFor(few, 'about'), `${prefix} "about". ${registered}`);
  assert.is(messageFor(few, 'x'.repeat(10_000)), `${prefix} "${'x'.repeat(10_000)}". ${registered}`);

  const many = new ControllerResolver(Object.fromEntries(Array.from({ length: 13 }, (_, i) => [`page${String(i).padStart(2, '0')}`, unused])));
  assert.is(
    messageFor(many, 'page12x'),
    `${prefix} "page12x". Did you mean "page12"? The registered controllers are "page00", "page01", "page02", "page03", "page04", "page05", "page06", "page07", "page08", "page09" and 3 more.`,
  );
  assert.is(messageFor(new ControllerResolver(), 'home'), `${prefix} "home", nor under any other name.`);
});

test('the message for an unknown controller name is worked out once (a misconfigured route fails on every request) and again after a register()', () => {
  const unused = () => new Response('unused');
  const resolver = new ControllerResolver({ 'book.show': unused });
  const messageAt = (path: string, name: string): string => {
    const request = Request.create(path);
    request.attributes.set('_controller', name);
    return thrown(() => resolver.getController(request)).message;
  };
  const prefix = 'is not callable: no controller is registered as "book.shwo".';
  assert.is(messageAt('/a', 'book.shwo'), `The controller for URI "/a" ${prefix} Did you mean "book.show"? The registered controllers are "book.show".`);
  // The same name again, from another path: the path is the request's, the rest is kept.
  assert.is(messageAt('/b', 'book.shwo'), `The controller for URI "/b" ${prefix} Did you mean "book.show"? The registered controllers are "book.show".`);
  resolver.register('book.shew', unused);
  assert.is(messageAt('/c', 'book.shwo'), `The controller for URI "/c" ${prefix} Did you mean "book.show"? The registered controllers are "book.shew", "book.show".`);
  // More unknown names than are kept: each still gets its own message.
  for (let i = 0; i < 70; i++) assert.match(messageAt('/d', `missing${i}`), `registered as "missing${i}".`);
  assert.is(messageAt('/e', 'book.shwo'), `The controller for URI "/e" ${prefix} Did you mean "book.show"? The registered controllers are "book.shew", "book.show".`);
});

test('a stream response replaced in kernel.response, by setResponse() or by assignment, has its body destroyed; one kept is not', async () => {
  for (const how of ['setResponse', 'assign', 'keep'] as const) {
    const body = Readable.from(['never', 'read']);
    const { dispatcher, kernel } = kernelWith(() => new Response(body));
    dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => {
      if (how === 'setResponse') event.setResponse(new Response('replaced'));
      else if (how === 'assign') event.response = new Response('replaced');
    });
    const response = await kernel.handle(Request.create('/'));
    assert.is(body.destroyed, how !== 'keep', how);
    assert.is(response.body === body, how === 'keep', how);
  }
});

test('a stream response a kernel.response listener replaced past setResponse() (Object.defineProperty on the event) has its body destroyed all the same', async () => {
  for (const path of ['response', 'error page'] as const) {
    const body = Readable.from(['never', 'read']);
    const { dispatcher, kernel } = kernelWith(() => {
      if (path === 'error page') throw new Error('failed');
      return new Response(body);
    });
    dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response(body, 500)));
    dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => {
      Object.defineProperty(event, 'response', { value: new Response('defined', 500) });
    });
    const response = await kernel.handle(Request.create('/'));
    assert.is(response.body, 'defined', path);
    assert.ok(body.destroyed, path);
  }
});

test('a stream response a kernel.request, kernel.view or kernel.exception listener sets before it fails is destroyed, as on kernel.response', async () => {
  for (const where of ['request', 'view', 'exception'] as const) {
    for (const async of [false, true]) {
      const body = Readable.from(['never', 'read']);
      const { dispatcher, kernel } = kernelWith(() => {
        if (where === 'exception') throw new Error('controller failed');
        return where === 'view' ? { a: 1 } : new Response('controller');
      });
      const eventName = where === 'request' ? KernelEvents.REQUEST : where === 'view' ? KernelEvents.VIEW : KernelEvents.EXCEPTION;
      const setThenFail = (event: RequestEvent): never => {
        event.setResponse(new Response(body, 500));
        throw new Error('listener failed');
      };
      dispatcher.addListener(eventName, async ? async (event: RequestEvent) => setThenFail(await wait(1, event)) : setThenFail, 100);
      const error = await kernel.handle(Request.create('/'), RequestType.MAIN, where === 'exception').catch((caught: Error) => caught);
      assert.instance(error, Error, `${where}, async ${async}`);
      assert.ok(body.destroyed, `${where}, async ${async}`);
    }
  }
});

test('a stream response a kernel.request, kernel.view or kernel.exception listener sets and then replaces is destroyed, however often, unless set again; all are when the listener fails', async () => {
  for (const where of ['request', 'view', 'exception'] as const) {
    for (const how of ['twice', 'thrice', 'back', 'fail'] as const) {
      for (const async of [false, true]) {
        const label = `${where}, ${how}, async ${async}`;
        const first = Readable.from(['first']);
        const second = Readable.from(['second']);
        const { dispatcher, kernel } = kernelWith(() => {
          if (where === 'exception') throw new Error('controller failed');
          return where === 'view' ? { a: 1 } : new Response('controller');
        });
        const eventName = where === 'request' ? KernelEvents.REQUEST : where === 'view' ? KernelEvents.VIEW : KernelEvents.EXCEPTION;
        const firstResponse = new Response(first, 500);
        const setMore = (event: RequestEvent): void => {
          event.setResponse(firstResponse);
          event.setResponse(new Response(second, 500));
          if (how === 'thrice') event.setResponse(new Response('third', 500));
          else if (how === 'back') event.setResponse(firstResponse);
          else if (how === 'fail') throw new Error('listener failed');
        };
        dispatcher.addListener(eventName, async ? async (event: RequestEvent) => setMore(await wait(1, event)) : setMore, 100);
        const response = await kernel.handle(Request.create('/'), RequestType.MAIN, where === 'exception' || how !== 'fail').catch((caught: Error) => caught);
        assert.is(first.destroyed, how !== 'back', label);
        assert.is(second.destroyed, how !== 'twice', label);
        if (how === 'twice') assert.is((response as Response).body, second, label);
        if (how === 'back') assert.is((response as Response).body, first, label);
      }
    }
  }
});

test('a stream response one kernel.response listener sets and a later one replaces has its body destroyed too, also when the first comes back, or a listener fails', async () => {
  for (const how of ['replace', 'restore', 'fail'] as const) {
    const first = Readable.from(['first']);
    const second = Readable.from(['second']);
    const { dispatcher, kernel } = kernelWith(() => new Response(first));
    dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => event.setResponse(new Response(second)), 10);
    dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => {
      if (how === 'replace') event.setResponse(new Response('third'));
      else if (how === 'restore') event.setResponse(event.replacedResponses()[0]!);
      else {
        event.setResponse(new Response(Readable.from(['third'])));
        throw new Error('listener failed');
      }
    });
    const response = await kernel.handle(Request.create('/'), RequestType.MAIN, how !== 'fail').catch((error: Error) => error);
    assert.ok(second.destroyed, `${how}: the body set in between is destroyed`);
    assert.is(first.destroyed, how !== 'restore', how);
    if (how === 'restore') assert.is((response as Response).body, first);
  }
});

test('a stream response one kernel.response listener assigns and a later one replaces has its body destroyed, on the main path and on an error page', async () => {
  for (const path of ['response', 'error page'] as const) {
    const between = Readable.from(['between']);
    const { dispatcher, kernel } = kernelWith(() => {
      if (path === 'error page') throw new Error('failed');
      return new Response('controller');
    });
    dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('page', 500)));
    dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => {
      event.response = new Response(between);
    }, 10);
    dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => {
      event.response = new Response('last');
    });
    const response = await kernel.handle(Request.create('/'));
    assert.is(response.body, 'last', path);
    assert.ok(between.destroyed, `${path}: the body assigned in between is destroyed`);
  }
});

test('assigning a kernel.response event\'s response is setResponse(): it is listed among the replaced, and no Response is a TypeError', () => {
  const first = new Response('first');
  const event = new ResponseEvent(null as never, Request.create('/'), RequestType.MAIN, first);
  event.response = new Response('second');
  assert.equal(event.replacedResponses(), [first]);
  assert.throws(() => {
    (event as { response: unknown }).response = 'text';
  }, /ResponseEvent.setResponse\(\) takes a Response/);
});

test('an error page replaced in kernel.response has its stream body destroyed, as on the main path', async () => {
  for (const how of ['setResponse', 'keep'] as const) {
    const body = Readable.from(['never', 'read']);
    const { dispatcher, kernel } = kernelWith(() => {
      throw new Error('failed');
    });
    dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response(body, 500)));
    dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => {
      if (how === 'setResponse') event.setResponse(new Response('replaced', 500));
    });
    const response = await kernel.handle(Request.create('/'));
    assert.is(body.destroyed, how !== 'keep', how);
    assert.is(response.body === body, how === 'keep', how);
  }
});

test('10,000 requests made with one long-lived signal: it holds one listener for those in flight, and lets go of each once kernel.terminate has run', async () => {
  const shared = new AbortController();
  const warnings: Error[] = [];
  const onWarning = (warning: Error): void => void warnings.push(warning);
  process.on('warning', onWarning);
  let gate: Promise<void> = Promise.resolve();
  const { dispatcher, kernel } = kernelWith(async (request: Request) => {
    request.signal.addEventListener('abort', () => {}, { once: true });
    await gate;
    return new Response('ok');
  });
  const seenAtTerminate: boolean[] = [];
  dispatcher.addListener(KernelEvents.TERMINATE, (event: TerminateEvent) => void seenAtTerminate.push(event.request.signal.aborted));
  const done: Request[] = [];
  for (let batch = 0; batch < 100; batch++) {
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const requests = Array.from({ length: 100 }, () => Request.create('/', 'GET', { signal: shared.signal }));
    const responses = requests.map((request) => kernel.handle(request));
    await new Promise((resolve) => setImmediate(resolve));
    assert.is(getEventListeners(shared.signal, 'abort').length, 1, 'one listener for the 100 in flight');
    open();
    const answered = await Promise.all(responses);
    for (let i = 0; i < requests.length; i++) await kernel.terminate(requests[i]!, answered[i]!);
    assert.is(getEventListeners(shared.signal, 'abort').length, 0, 'none once they are done');
    done.push(requests[0]!);
  }
  await new Promise((resolve) => setImmediate(resolve));
  process.off('warning', onWarning);
  assert.is(seenAtTerminate.length, 10_000);
  assert.equal(warnings.map((warning) => warning.name), []);
  shared.abort(new Error('shutting down'));
  assert.ok(done.every((request) => !request.signal.aborted), 'a request done is not aborted later');
});

test('the caller\'s signal aborting a request in flight stops its controller\'s wait with its reason', async () => {
  const caller = new AbortController();
  const { kernel } = kernelWith(async (request: Request) => {
    await wait(60_000, undefined, { signal: request.signal });
    return new Response('waited');
  });
  const request = Request.create('/', 'GET', { signal: caller.signal });
  const response = kernel.handle(request);
  await new Promise((resolve) => setImmediate(resolve));
  const reason = new Error('shutting down');
  caller.abort(reason);
  const error = await response.then(() => undefined, (rejection: unknown) => rejection);
  assert.is((error as Error).name, 'AbortError');
  assert.is((error as Error).cause, reason);
  assert.is(request.signal.reason, reason);
});

test('a caller\'s signal aborted while another request is handled: each request\'s abort listeners run with their own request current', async () => {
  const shared = new AbortController();
  const seen: Array<[string, string | undefined]> = [];
  let kernel!: HttpKernel;
  ({ kernel } = kernelWith(async (request: Request) => {
    const id = request.query.get('id')!;
    if (id === 'admin') {
      // Shutting the others down from a request of its own (an admin endpoint).
      shared.abort(new Error('shutting down'));
      return new Response('stopped');
    }
    request.signal.addEventListener('abort', () => void seen.push([id, kernel.requestStack.getCurrentRequest()?.query.get('id') ?? undefined]));
    await wait(60_000, undefined, { signal: request.signal }).catch(() => {});
    return new Response('stopped');
  }));
  const waiting = ['a', 'b'].map((id) => kernel.handle(Request.create(`/?id=${id}`, 'GET', { signal: shared.signal })));
  await new Promise((resolve) => setImmediate(resolve));
  await kernel.handle(Request.create('/?id=admin', 'GET', { signal: shared.signal }));
  await Promise.all(waiting);
  assert.equal(seen, [['a', 'a'], ['b', 'b']], 'not the admin request, which aborted the signal');
});

test("a caller's signal aborted while another request is handled by two kernels (an embedder's handing it to an app's): its abort listeners run with their own request current in both", async () => {
  const shared = new AbortController();
  const seen: Array<[string, string | undefined, string | undefined]> = [];
  let app!: HttpKernel;
  ({ kernel: app } = kernelWith(async (request: Request) => {
    const id = request.query.get('id')!;
    if (id === 'admin') {
      shared.abort(new Error('shutting down'));
      return new Response('stopped');
    }
    request.signal.addEventListener('abort', () => void seen.push([id, app.requestStack.getCurrentRequest()?.query.get('id') ?? undefined, outer.requestStack.getCurrentRequest()?.query.get('id') ?? undefined]));
    await wait(60_000, undefined, { signal: request.signal }).catch(() => {});
    return new Response('stopped');
  }));
  // The embedder's kernel, with a stack of its own, hands every request to the app's as a main request.
  const { kernel: outer } = kernelWith((request: Request) => {
    request.attributes.delete('_controller');
    return app.handle(request);
  });
  const waiting = ['a', 'b'].map((id) => outer.handle(Request.create(`/?id=${id}`, 'GET', { signal: shared.signal })));
  await new Promise((resolve) => setImmediate(resolve));
  await outer.handle(Request.create('/?id=admin', 'GET', { signal: shared.signal }));
  await Promise.all(waiting);
  assert.equal(seen, [['a', 'a', 'a'], ['b', 'b', 'b']], "the app's stack as the embedder's: not the admin request, which aborted the signal");
});

test('handle() of a HEAD gives the head a GET gets, after every kernel.response listener, without its body; handleMaybeAsync() too', async () => {
  const { dispatcher, kernel } = kernelWith(() => new Response('hello', 200, { 'content-type': 'text/plain' }));
  dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => void event.response.prepare(event.request));
  // As the toolbar does, after prepare(): the body grows and its length with it.
  dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => {
    event.response.body = `${String(event.response.body)} world`;
    event.response.headers['content-length'] = '11';
  }, -128);
  const get = await kernel.handle(Request.create('/'));
  assert.is(get.body, 'hello world');
  const head = await kernel.handle(Request.create('/', 'HEAD'));
  assert.is(head.body, null);
  assert.equal(head.headers, get.headers);
  const sync = kernel.handleMaybeAsync(Request.create('/', 'HEAD')) as Response;
  assert.instance(sync, Response);
  assert.is(sync.body, null);
  assert.is(sync.headers['content-length'], '11');
});

test('a HEAD answered without a ResponseListener keeps the length of its text or bytes, and a Transfer-Encoding instead of one', async () => {
  for (const [body, headers, length] of [
    ['héllo', {}, '6'],
    [new Uint8Array(3), {}, '3'],
    ['abc', { 'transfer-encoding': 'chunked' }, undefined],
    ['', { 'content-length': '42' }, '42'],
    ['', {}, '0'],
    [new Uint8Array(0), {}, '0'],
  ] as const) {
    const { kernel } = kernelWith(() => new Response(body, 200, headers));
    const head = await kernel.handle(Request.create('/', 'HEAD'));
    assert.is(head.body, null);
    assert.is(head.headers['content-length'], length);
  }
});

test('headBodyLength() gives the byte length of the text or bytes a HEAD\'s answer lost, for a server that cannot chunk it (HTTP/1.0); none for an empty body or a stream', async () => {
  for (const [body, length] of [
    ['héllo', 6],
    [new Uint8Array(3), 3],
    ['', undefined],
    [Readable.from(['abc']), undefined],
  ] as const) {
    const { kernel } = kernelWith(() => new Response(body, 200, { 'transfer-encoding': 'chunked' }));
    const head = await kernel.handle(Request.create('/', 'HEAD'));
    assert.is(head.headers['content-length'], undefined);
    assert.is(headBodyLength(head), length, String(body));
    assert.is(headBodyLength(await kernel.handle(Request.create('/'))), undefined, 'a GET keeps its body');
  }
});

test("a HEAD answered with an empty body and a Content-Length of its own keeps that length through prepare(), as Symfony's does; a GET's is corrected", async () => {
  for (const body of ['', new Uint8Array(0)]) {
    const { dispatcher, kernel } = kernelWith(() => new Response(body, 200, { 'content-length': '1234' }));
    dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => void event.response.prepare(event.request));
    const head = await kernel.handle(Request.create('/', 'HEAD'));
    assert.is(head.headers['content-length'], '1234');
    // A GET sends the body it has: a length that is not its own would break the connection's framing.
    const get = await kernel.handle(Request.create('/'));
    assert.is(get.headers['content-length'], '0');
  }
});

test('a HEAD of text or bytes gets the length the GET sends, in one lower-case Content-Length, whatever was set by hand', async () => {
  for (const [body, headers, length] of [
    ['hello', { 'Content-Length': '5' }, '5'],
    ['abc', { 'content-length': '42' }, '3'],
    [new Uint8Array(4), { 'CONTENT-LENGTH': '1' }, '4'],
  ] as const) {
    const { kernel } = kernelWith(() => Object.assign(new Response(body, 200), { headers: { ...headers } }));
    const head = await kernel.handle(Request.create('/', 'HEAD'));
    assert.is(head.body, null);
    assert.equal(head.headers, { 'content-length': length });
  }
});

test("a HEAD's stream body is destroyed in handle() and kept for discardedBody(), its declared length kept", async () => {
  const stream = Readable.from(['never', 'read']);
  const { kernel } = kernelWith(() => new Response(stream, 200, { 'content-length': '9' }));
  const head = await kernel.handle(Request.create('/', 'HEAD'));
  assert.is(head.body, null);
  assert.is(head.headers['content-length'], '9');
  assert.ok(stream.destroyed);
  assert.is(discardedBody(head), stream);
});

test('a stream body dropped within a sub-request is kept for droppedBodies() of its main request, which its server terminates', async () => {
  for (const asyncContext of [true, false]) {
    const dispatcher = new EventDispatcher();
    const kernel = new HttpKernel(dispatcher, new ControllerResolver(), new RequestStack({ asyncContext }));
    const stream = Readable.from(['never', 'sent']);
    // The sub-request's answer is replaced on kernel.response: its stream is never sent.
    dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => void (event.isMainRequest() || event.setResponse(new Response('in its place'))));
    const fragment = (): Response => new Response(stream);
    const main = Request.create('/');
    let sub: Request | undefined;
    main.attributes.set('_controller', async (request: Request) => {
      sub = request.duplicate({ attributes: { _controller: fragment } });
      return kernel.handle(sub, RequestType.SUB);
    });
    assert.is((await kernel.handle(main)).body, 'in its place', `asyncContext ${asyncContext}`);
    assert.ok(stream.destroyed);
    assert.equal(droppedBodies(main), [stream], `asyncContext ${asyncContext}`);
  }
});

/** Fails naming the bodies the garbage collector could not take: each is held by something (two collections, a turn apart, for finalizers). */
async function assertCollected(bodies: ReadonlyArray<WeakRef<object>>): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  await wait(10);
  gc();
  await wait(10);
  gc();
  assert.equal(bodies.flatMap((body, i) => (body.deref() !== undefined ? [i] : [])), []);
}

test('a kernel whose server terminates nothing keeps nothing of the sub-requests whose main request it cannot know once their stream bodies closed cleanly', async () => {
  // Without request context, a Request.create() sub-request's records are kept under the kernel, for any request's terminate by
  // its server to take: a kernel driven by handle() beside it (a worker rendering fragments, a quiet server) is never terminated so.
  const dispatcher = new EventDispatcher();
  const kernel = new HttpKernel(dispatcher, new ControllerResolver(), new RequestStack({ asyncContext: false }));
  // Served, by a server that has no request yet (with a logger: one without takes no such record, see below).
  createRequestListener(kernel, { logger: new Logger({ bus: createBus() }) });
  // The sub-request's answer is replaced on kernel.response: its stream is dropped and destroyed.
  dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => void (event.request.attributes.get('replace') === true && event.setResponse(new Response('in its place'))));
  const bodies: Array<WeakRef<Readable>> = [];
  const fragment = async (replace: boolean): Promise<void> => {
    const sub = Request.create('/fragment');
    sub.attributes.set('replace', replace);
    sub.attributes.set('_controller', () => {
      const stream = Readable.from(['a fragment']);
      bodies.push(new WeakRef(stream));
      return new Response(stream);
    });
    const inner = await kernel.handle(sub, RequestType.SUB);
    // The one handed back is read to its end, as its caller would.
    if (!replace) for await (const _chunk of inner.body as Readable);
  };
  for (let i = 0; i < 20; i++) for (const replace of [true, false]) await fragment(replace);
  await assertCollected(bodies);
});

test('a kernel no server of the package drives keeps none of the stream bodies handed back by sub-requests whose main request it cannot know', async () => {
  // Kept under the kernel for a request's terminate by the package's server to take (see above), which never comes: one the
  // caller ignores (never read, never closed) was kept for the kernel's lifetime, where it was the garbage collector's before.
  const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver(), new RequestStack({ asyncContext: false }));
  const bodies: Array<WeakRef<Readable>> = [];
  const fragment = async (): Promise<void> => {
    const sub = Request.create('/fragment');
    sub.attributes.set('_controller', () => {
      const stream = Readable.from(['never', 'read']);
      bodies.push(new WeakRef(stream));
      return new Response(stream);
    });
    assert.is((await kernel.handle(sub, RequestType.SUB)).status, 200);
  };
  for (let i = 0; i < 20; i++) await fragment();
  await assertCollected(bodies);
});

test("a HEAD answered with a null body keeps its headers as they are, and has no discarded body", async () => {
  for (const headers of [{}, { 'content-length': '7' }]) {
    const { kernel } = kernelWith(() => new Response(null, 200, headers));
    const head = await kernel.handle(Request.create('/', 'HEAD'));
    assert.is(head.body, null);
    assert.equal(head.headers, headers);
    assert.is(discardedBody(head), undefined);
  }
});

test("a HEAD's error page has no body either, and a sub-request made with HEAD keeps its body for the request that made it", async () => {
  const { dispatcher, kernel } = kernelWith(() => {
    throw new NotFoundHttpError('nope');
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('error page')));
  const page = await kernel.handle(Request.create('/', 'HEAD'));
  assert.is(page.status, 404);
  assert.is(page.body, null);
  assert.is(page.headers['content-length'], '10');
  const sub = kernelWith(() => new Response('fragment')).kernel;
  const fragment = await sub.handle(Request.create('/', 'HEAD'), RequestType.SUB);
  assert.is(fragment.body, 'fragment');
});

test('an async kernel.response listener that replaces the response after an await: handle() answers the replacement, and kernel.finish_request runs after it', async () => {
  const { dispatcher, kernel } = kernelWith(() => new Response('controller'));
  const seen: string[] = [];
  dispatcher.addListener(KernelEvents.RESPONSE, async (event: ResponseEvent) => {
    await wait(2);
    event.setResponse(new Response('replaced'));
    seen.push('response');
  });
  dispatcher.addListener(KernelEvents.FINISH_REQUEST, () => void seen.push('finish_request'));
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.body, 'replaced');
  assert.equal(seen, ['response', 'finish_request']);
});

test('an async kernel.response listener that rejects: the error goes through kernel.exception, and the stream body of the response it failed on is destroyed', async () => {
  const body = Readable.from(['never', 'sent']);
  const { dispatcher, kernel } = kernelWith(() => new Response(body));
  let handled: unknown;
  dispatcher.addListener(KernelEvents.RESPONSE, async (event: ResponseEvent) => {
    await wait(1);
    if (event.response.body === body) throw new Error('response listener failed');
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
    handled = event.error;
    event.setResponse(new Response('error page', 500));
  });
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.body, 'error page');
  assert.is((handled as Error).message, 'response listener failed');
  assert.ok(body.destroyed);
});

test('on an error page, async kernel.response and kernel.finish_request listeners are awaited before handle() answers; an error that escapes waits for kernel.finish_request too', async () => {
  for (const answered of [true, false]) {
    const { dispatcher, kernel } = kernelWith(() => {
      throw new Error('controller failed');
    });
    const seen: string[] = [];
    if (answered) dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('page', 500)));
    dispatcher.addListener(KernelEvents.RESPONSE, async (event: ResponseEvent) => {
      await wait(1);
      event.setResponse(new Response(`filtered ${event.response.body}`, event.response.status));
    });
    dispatcher.addListener(KernelEvents.FINISH_REQUEST, async () => {
      await wait(1);
      seen.push('finish_request done');
    });
    const outcome = await kernel.handle(Request.create('/')).then((response) => response.body, (error: Error) => `rejected: ${error.message}`);
    seen.push(String(outcome));
    assert.equal(seen, ['finish_request done', answered ? 'filtered page' : 'rejected: controller failed'], String(answered));
  }
});

test('an error page whose stream a kernel.response listener replaced and then set back: the stream set in between is destroyed, the page is sent', async () => {
  const between = Readable.from(['between']);
  const page = Readable.from(['page']);
  const { dispatcher, kernel } = kernelWith(() => {
    throw new Error('failed');
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response(page, 500)));
  dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => {
    const original = event.response;
    event.setResponse(new Response(between));
    event.setResponse(original);
  });
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.body, page);
  assert.not.ok(page.destroyed);
  assert.ok(between.destroyed);
});

test('a kernel.response listener that answers with a new Response around the same stream body keeps that body open', async () => {
  for (const path of ['response', 'error page'] as const) {
    const body = Readable.from(['kept']);
    const { dispatcher, kernel } = kernelWith(() => {
      if (path === 'error page') throw new Error('failed');
      return new Response(body);
    });
    dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response(body, 500)));
    dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => {
      event.setResponse(new Response(event.response.body, event.response.status, { 'x-wrapped': '1' }));
    });
    const response = await kernel.handle(Request.create('/'));
    assert.is(response.body, body, path);
    assert.is(response.headers['x-wrapped'], '1', path);
    assert.not.ok(body.destroyed, path);
  }
});

test('a kernel.exception listener that throws what is no object (a string, null) or rethrows the error it handles: that escapes handle() as it is, and handledErrorOf() names nothing', async () => {
  const controllerError = new Error('controller failed');
  for (const [label, fails] of [
    ['a string', () => { throw 'listener failed'; }],
    ['null', () => { throw null; }],
    ['the same error', (event: ExceptionEvent) => { throw event.error; }],
  ] as const) {
    const { dispatcher, kernel } = kernelWith(() => {
      throw controllerError;
    });
    dispatcher.addListener(KernelEvents.EXCEPTION, fails);
    const escaped = await kernel.handle(Request.create('/')).then(() => assert.unreachable(), (error: unknown) => error);
    assert.is(escaped, label === 'a string' ? 'listener failed' : label === 'null' ? null : controllerError, label);
    assert.is(HttpKernel.handledErrorOf(escaped), undefined, label);
  }
});

test('handledErrorOf() keeps the first error a listener\'s error escaped from, when the same error object escapes again', async () => {
  const shared = new Error('service down');
  const { dispatcher, kernel } = kernelWith((request: Request) => {
    throw new Error(`controller failed on ${request.path}`);
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, () => {
    throw shared;
  });
  for (const path of ['/first', '/second']) await kernel.handle(Request.create(path)).catch(() => {});
  assert.is((HttpKernel.handledErrorOf(shared) as Error).message, 'controller failed on /first');
});

test('handleException called from within the request\'s own context answers it without pushing it again, with a stack that does not track, and for a sub-request on top of its parent', async () => {
  const seen: Array<[string, string[]]> = [];
  const answering = (dispatcher: EventDispatcher, stack: RequestStack) =>
    dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
      seen.push([event.request.path, stack.all().map((request) => request.path)]);
      event.setResponse(new Response(`page for ${(event.error as Error).message}`));
    });
  const own = kernelWith(async (request: Request) => {
    const page = await own.kernel.handleException(new Error('from within'), request);
    const sub = Request.create('/sub');
    const subPage = await own.kernel.handleException(new Error('for a sub-request'), sub, RequestType.SUB);
    const fragment = Request.create('/fragment');
    fragment.attributes.set('_controller', async (itself: Request) => new Response((await own.kernel.handleException(new Error('within a sub-request'), itself, RequestType.SUB)).body));
    const fragmentPage = await own.kernel.handle(fragment, RequestType.SUB);
    return new Response(`${page.body}; ${subPage.body}; ${fragmentPage.body}`);
  });
  answering(own.dispatcher, own.kernel.requestStack);
  const response = await own.kernel.handle(Request.create('/main'));
  assert.is(response.body, 'page for from within; page for for a sub-request; page for within a sub-request');
  assert.equal(seen, [['/main', ['/main']], ['/sub', ['/main', '/sub']], ['/fragment', ['/main', '/fragment']]]);

  const stack = new RequestStack({ asyncContext: false });
  const dispatcher = new EventDispatcher();
  const untracked = new HttpKernel(dispatcher, new ControllerResolver(), stack);
  answering(dispatcher, stack);
  assert.is((await untracked.handleException(new Error('untracked'), Request.create('/u'))).body, 'page for untracked');
});

test('terminate() rejects with the error of an async kernel.terminate listener that rejects', async () => {
  const { dispatcher, kernel } = kernelWith(() => new Response('ok'));
  dispatcher.addListener(KernelEvents.TERMINATE, async () => {
    await wait(1);
    throw new Error('terminate listener failed');
  });
  const request = Request.create('/');
  const response = await kernel.handle(request);
  const rejected = await kernel.terminate(request, response).then(() => 'resolved', (error: Error) => error.message);
  assert.is(rejected, 'terminate listener failed');
});

test('after an async kernel.terminate listener, the request lets go of the caller\'s signal: a later abort does not reach it', async () => {
  const caller = new AbortController();
  const { dispatcher, kernel } = kernelWith((request: Request) => {
    request.signal.addEventListener('abort', () => {}, { once: true });
    return new Response('ok');
  });
  dispatcher.addListener(KernelEvents.TERMINATE, async () => {
    await wait(1);
  });
  const request = Request.create('/', 'GET', { signal: caller.signal });
  const response = await kernel.handle(request);
  assert.is(getEventListeners(caller.signal, 'abort').length, 1, 'followed while in flight');
  await kernel.terminate(request, response);
  assert.is(getEventListeners(caller.signal, 'abort').length, 0);
  caller.abort(new Error('later'));
  assert.not.ok(request.signal.aborted);
});

test('handleMaybeAsync() catches errors by default, as handle() does: a failing controller gets its error page', async () => {
  const { dispatcher, kernel } = kernelWith(() => {
    throw new Error('controller failed');
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('page', 500)));
  const response = await kernel.handleMaybeAsync(Request.create('/'));
  assert.is(response.body, 'page');
});

test('an argument resolver answer that is no array names an anonymous controller "anonymous"', async () => {
  const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver(), new RequestStack(), { getArguments: () => 'request' as never });
  const request = Request.create('/');
  request.attributes.set('_controller', [() => new Response('never')][0]!);
  const error = await kernel.handle(request, RequestType.MAIN, false).then(() => assert.unreachable() as never, (caught: Error) => caught);
  assert.is(error.message, 'The argument resolver answered the string "request" for the controller "anonymous": the arguments are an array.');
});

test('an HttpError of status 599 answered with a 200 keeps 599: every 4xx and 5xx is the error\'s own', async () => {
  const { dispatcher, kernel } = kernelWith(() => {
    throw new HttpError(599, 'Network Connect Timeout');
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('page')));
  assert.is((await kernel.handle(Request.create('/'))).status, 599);
});

test('the no-Response error names a function by its name, an array of one item, a 255-character string whole, and an object without a constructor name as Object', async () => {
  const said = async (result: unknown) => {
    const { kernel } = kernelWith(() => result);
    const error = await kernel.handle(Request.create('/'), RequestType.MAIN, false).then(() => assert.unreachable() as never, (caught: Error) => caught);
    return error.message.replace(/^The controller "\w*" must return a "Response" object but it returned /, '');
  };
  assert.is(await said(function render() {}), 'a function (render).');
  assert.is(await said([() => {}][0]), 'a function (anonymous).');
  assert.is(await said(['one']), 'an array (1 item).');
  assert.is(await said('x'.repeat(255)), `a string ("${'x'.repeat(255)}").`);
  assert.is(await said(Object.create(null)), 'an object of type Object.');
  assert.is(await said(new ([class {}][0]!)()), 'an object of type Object.');
});

for (const asyncContext of [true, false]) {
  test(`a sub-request nested past MAX_SUB_REQUEST_DEPTH is a SubRequestTooDeepError naming the route that made it; an error page may go one level further, request stack ${asyncContext ? 'tracking' : 'not tracking'} the current request`, async () => {
    const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver(), new RequestStack({ asyncContext }));
    // Makes `_left` more nested sub-requests, the last `_errorPages` of them as error pages (with an `exception` attribute).
    const descend = (request: Request): Response | Promise<Response> => {
      const left = request.attributes.get('_left') as number;
      if (left === 0) return new Response('bottom');
      const errorPages = request.attributes.get('_errorPages') as number;
      const attributes: Record<string, unknown> = { _controller: descend, _route: 'descend', _left: left - 1, _errorPages: errorPages };
      if (left <= errorPages) attributes['exception'] = new Error('shown');
      return kernel.handle(request.duplicate({ attributes }), RequestType.SUB, false);
    };
    const outcome = (levels: number, errorPages = 0): Promise<unknown> => {
      const main = Request.create('/descend');
      main.attributes.set('_controller', descend);
      main.attributes.set('_left', levels);
      main.attributes.set('_errorPages', errorPages);
      return kernel.handle(main, RequestType.MAIN, false).then((response) => response.body, (error: unknown) => error);
    };
    const refusal = (depth: number) =>
      `The sub-request for "/descend"${asyncContext ? ' made by route "descend"' : ''} would be ${depth} deep, past MAX_SUB_REQUEST_DEPTH (${MAX_SUB_REQUEST_DEPTH}): ` +
      'a controller that makes a sub-request to itself, directly or through others, never stops.';
    assert.is(await outcome(MAX_SUB_REQUEST_DEPTH), 'bottom');
    const tooDeep = await outcome(MAX_SUB_REQUEST_DEPTH + 1);
    assert.instance(tooDeep, SubRequestTooDeepError);
    assert.is((tooDeep as Error).message, refusal(MAX_SUB_REQUEST_DEPTH + 1));
    assert.is(await outcome(MAX_SUB_REQUEST_DEPTH + 1, 1), 'bottom', 'an error page one level past the bound');
    const errorPageTooDeep = await outcome(MAX_SUB_REQUEST_DEPTH + 2, 2);
    assert.instance(errorPageTooDeep, SubRequestTooDeepError);
    assert.is((errorPageTooDeep as Error).message, refusal(MAX_SUB_REQUEST_DEPTH + 2));
  });
}

for (const asyncContext of [true, false]) {
  test(`MAX_SUB_REQUESTS bounds what grows under one sub-request of the main request, not the main request's own sub-requests (a stream rendering a fragment per event), request stack ${asyncContext ? 'tracking' : 'not tracking'} the current request`, async () => {
    const dispatcher = new EventDispatcher();
    const kernel = new HttpKernel(dispatcher, new ControllerResolver(), new RequestStack({ asyncContext }));
    let made = 0;
    let refusal: unknown;
    // Renders itself in two places, each fragment awaited: it doubles at each level, within the depth bound.
    const twice = async (request: Request): Promise<Response> => {
      // Where a kernel without the bound stops, so that the test fails rather than hangs.
      if (++made > MAX_SUB_REQUESTS + 1000) return new Response('stopped by the test');
      const fragment = (): Promise<Response> =>
        kernel.handle(request.duplicate({ attributes: { _controller: twice } }), RequestType.SUB).catch((error: unknown) => {
          // As an error page would: the depth bound stops the first branch before the count is reached.
          if (error instanceof TooManySubRequestsError) refusal ??= error;
          return new Response('', 500);
        });
      const [first, second] = await Promise.all([fragment(), fragment()]);
      return new Response('', Math.max(first.status, second.status));
    };
    // The main request's own sub-requests, one after another, as a stream sends them: more than the bound.
    const feed = async (request: Request): Promise<Response> => {
      let answered = 0;
      for (let i = 0; i <= MAX_SUB_REQUESTS; i++) {
        const part = await kernel.handle(request.duplicate({ attributes: { _controller: () => new Response('.') } }), RequestType.SUB);
        if (part.status === 200) answered++;
      }
      return new Response(String(answered));
    };
    const page = (request: Request): Promise<Response> => kernel.handle(request.duplicate({ attributes: { _controller: twice } }), RequestType.SUB);
    const main = (path: string, controller: (request: Request) => Promise<Response>): Request => {
      const request = Request.create(path);
      request.attributes.set('_controller', controller);
      return request;
    };
    const runaway = await kernel.handle(main('/page', page));
    assert.is(runaway.status, 500);
    // The page, then its fragment and MAX_SUB_REQUESTS under it.
    assert.is(made, MAX_SUB_REQUESTS + 1);
    assert.instance(refusal, TooManySubRequestsError);
    assert.is((refusal as Error).message, `The sub-request for "/page" would be number ${MAX_SUB_REQUESTS + 1} under the sub-request for "/page", past MAX_SUB_REQUESTS (${MAX_SUB_REQUESTS}): a fragment that renders itself in more than one place doubles at each level.`);
    const stream = await kernel.handle(main('/feed', feed));
    assert.is(stream.body, String(MAX_SUB_REQUESTS + 1));
  });
}

for (const asyncContext of [true, false]) {
  test(`a main request made with duplicate() (an embedder's retry) has its own sub-requests uncounted too, request stack ${asyncContext ? 'tracking' : 'not tracking'} the current request`, async () => {
    const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver(), new RequestStack({ asyncContext }));
    const feed = async (request: Request): Promise<Response> => {
      let answered = 0;
      for (let i = 0; i <= MAX_SUB_REQUESTS; i++) {
        const part = await kernel.handle(request.duplicate({ attributes: { _controller: () => new Response('.') } }), RequestType.SUB).catch(() => new Response('', 500));
        if (part.status === 200) answered++;
      }
      return new Response(String(answered));
    };
    const stream = await kernel.handle(Request.create('/feed').duplicate({ attributes: { _controller: feed } }));
    assert.is(stream.body, String(MAX_SUB_REQUESTS + 1));
  });
}

test.run();
