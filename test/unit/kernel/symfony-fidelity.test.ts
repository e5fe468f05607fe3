// Symfony's own tests of its HttpKernel and EventDispatcher (HttpKernelTest, EventDispatcherTest,
// TraceableEventDispatcherTest), ported to this kernel's API: each test is named after the Symfony
// case it ports. Where the README documents a deliberate difference, the test asserts our behaviour
// and its title says so.
import { Readable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  AccessDeniedHttpError,
  ArgumentResolver,
  BadRequestHttpError,
  ControllerDoesNotReturnResponseError,
  ControllerResolver,
  Event,
  EventDispatcher,
  HttpError,
  HttpKernel,
  KernelEvents,
  MethodNotAllowedHttpError,
  NotFoundHttpError,
  Request,
  RequestStack,
  RequestType,
  Response,
  SuspiciousOperationError,
  TraceableEventDispatcher,
  type Controller,
  type ControllerArgumentsEvent,
  type ExceptionEvent,
  type KernelEvent,
  type RequestEvent,
  type ResponseEvent,
  RequestEvent as RequestEventClass,
  ResponseEvent as ResponseEventClass,
  type TerminateEvent,
  type ViewEvent,
} from '../../../kernel/index.js';

const kernelSuite = suite('Symfony HttpKernelTest, ported');
const dispatcherSuite = suite('Symfony EventDispatcherTest, ported');
const traceableSuite = suite('Symfony TraceableEventDispatcherTest, ported');

/** Symfony's getHttpKernel(): a controller resolver and an argument resolver that answer what they are given. */
function httpKernel(dispatcher: EventDispatcher, controller: Controller | null = () => new Response('Hello'), requestStack?: RequestStack, args: unknown[] = []): HttpKernel {
  return new HttpKernel(dispatcher, { getController: () => controller }, requestStack ?? new RequestStack(), { getArguments: () => args });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => assert.unreachable('expected a rejection'),
    (error: unknown) => error,
  );
}

const fail = (error: unknown) => () => {
  throw error;
};

// HttpKernelTest

kernelSuite('testHandleWhenControllerThrowsAnExceptionAndCatchIsTrue: with no kernel.exception listener, the error itself is rethrown', async () => {
  const error = new Error('runtime');
  const kernel = httpKernel(new EventDispatcher(), fail(error));
  assert.is(await rejection(kernel.handle(Request.create('/'), RequestType.MAIN, true)), error);
});

kernelSuite('testRequestStackIsNotBrokenWhenControllerThrowsAnException (catch true and false, Error and TypeError): no request is current afterwards', async () => {
  for (const [catchErrors, error] of [[true, new Error('runtime')], [false, new Error('runtime')], [true, new TypeError('throwable')]] as const) {
    const requestStack = new RequestStack();
    let during: Request | undefined;
    const kernel = httpKernel(new EventDispatcher(), () => {
      during = requestStack.getCurrentRequest();
      throw error;
    }, requestStack);
    const request = Request.create('/');
    await rejection(kernel.handle(request, RequestType.MAIN, catchErrors));
    assert.is(during, request);
    assert.is(requestStack.getCurrentRequest(), undefined);
    assert.equal(requestStack.all(), []);
  }
});

kernelSuite('testHandleWhenControllerThrowsAnExceptionAndCatchIsFalseAndNoListenerIsRegistered', async () => {
  const error = new Error('runtime');
  assert.is(await rejection(httpKernel(new EventDispatcher(), fail(error)).handle(Request.create('/'), RequestType.MAIN, false)), error);
});

kernelSuite('testHandleWhenControllerThrowsAnExceptionAndCatchIsTrueWithAHandlingListener: the response gets status 500', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response((event.error as Error).message)));
  const response = await httpKernel(dispatcher, fail(new Error('foo'))).handle(Request.create('/'), RequestType.MAIN, true);
  assert.is(response.status, 500);
  assert.is(response.body, 'foo');
});

kernelSuite('testHandleWhenControllerThrowsAThrowableAndCatchIsTrueWithAHandlingListener: a TypeError is handled as any error (Symfony\'s handleAllThrowables: PHP\'s Error/Exception split has no JavaScript counterpart)', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response((event.error as Error).message)));
  const response = await httpKernel(dispatcher, fail(new TypeError('foo'))).handle(Request.create('/'));
  assert.is(response.status, 500);
  assert.is(response.body, 'foo');
});

kernelSuite('testHandleWhenControllerThrowsAThrowableAndCatchIsFalseWithAHandlingListener: the TypeError is rethrown and no kernel.exception listener runs', async () => {
  const dispatcher = new EventDispatcher();
  let called = false;
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
    called = true;
    event.setResponse(new Response('handled'));
  });
  const error = new TypeError('foo');
  assert.is(await rejection(httpKernel(dispatcher, fail(error)).handle(Request.create('/'), RequestType.MAIN, false)), error);
  assert.is(called, false);
});

kernelSuite('testHandleWhenControllerThrowsAnExceptionAndCatchIsTrueWithANonHandlingListener: the same error object is rethrown', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.EXCEPTION, () => {
    // should set a response, but does not
  });
  const error = new Error('runtime');
  assert.is(await rejection(httpKernel(dispatcher, fail(error)).handle(Request.create('/'))), error);
});

kernelSuite('testHandleExceptionWithARedirectionResponse: a redirect set for an AccessDenied error keeps its 301 and Location', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(Response.redirect('/login', 301)));
  const response = await httpKernel(dispatcher, fail(new AccessDeniedHttpError())).handle(Request.create('/'));
  assert.is(response.status, 301);
  assert.is(response.getHeader('location'), '/login');
});

kernelSuite('testHandleHttpException: a 200 set for a MethodNotAllowed error gets its 405 and Allow header', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response((event.error as Error).message)));
  const response = await httpKernel(dispatcher, fail(new MethodNotAllowedHttpError(['POST']))).handle(Request.create('/'));
  assert.is(response.status, 405);
  assert.is(response.getHeader('allow'), 'POST');
});

kernelSuite('testHandleWhenAnExceptionIsHandledWithASpecificStatusCode (200, 302, 403): allowCustomResponseCode() keeps the status set', async () => {
  for (const status of [200, 302, 403]) {
    const dispatcher = new EventDispatcher();
    dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
      event.allowCustomResponseCode();
      event.setResponse(new Response('', status));
    });
    assert.is((await httpKernel(dispatcher, fail(new Error('runtime'))).handle(Request.create('/'))).status, status);
  }
});

kernelSuite('without allowCustomResponseCode(), a 200 or 304 becomes the error\'s status, while a redirect (isRedirect()) and an error status are kept', async () => {
  for (const [set, error, expected] of [
    [200, new Error('runtime'), 500],
    [304, new Error('runtime'), 500],
    [200, new NotFoundHttpError(), 404],
    [302, new Error('runtime'), 302],
    [403, new Error('runtime'), 403],
    [503, new NotFoundHttpError(), 503],
  ] as const) {
    const dispatcher = new EventDispatcher();
    dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(set === 302 ? Response.redirect('/x', 302) : new Response('', set)));
    assert.is((await httpKernel(dispatcher, fail(error)).handle(Request.create('/'))).status, expected, `${set} for ${error.name}`);
  }
});

kernelSuite('the error\'s own headers are added to a response set with a non-error status, and not to one set with an error status', async () => {
  for (const [set, expected] of [[200, 'Bearer'], [401, undefined]] as const) {
    const dispatcher = new EventDispatcher();
    dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('', set)));
    const error = new HttpError(401, 'who?', { headers: { 'www-authenticate': 'Bearer' } });
    const response = await httpKernel(dispatcher, fail(error)).handle(Request.create('/'));
    assert.is(response.status, 401);
    assert.is(response.getHeader('www-authenticate'), expected);
  }
});

kernelSuite('testHandleWhenAListenerReturnsAResponse: a kernel.request listener\'s response skips the controller and the listeners after it', async () => {
  const dispatcher = new EventDispatcher();
  const seen: string[] = [];
  dispatcher.addListener(KernelEvents.REQUEST, (event: RequestEvent) => event.setResponse(new Response('hello')), 10);
  dispatcher.addListener(KernelEvents.REQUEST, () => void seen.push('later request listener'));
  dispatcher.addListener(KernelEvents.CONTROLLER, () => void seen.push('controller'));
  dispatcher.addListener(KernelEvents.RESPONSE, () => void seen.push('response'));
  dispatcher.addListener(KernelEvents.FINISH_REQUEST, () => void seen.push('finish_request'));
  const response = await httpKernel(dispatcher, () => seen.push('called')).handle(Request.create('/'));
  assert.is(response.body, 'hello');
  assert.equal(seen, ['response', 'finish_request']);
});

kernelSuite('testHandleWhenNoControllerIsFound: a NotFound error naming the path', async () => {
  const error = await rejection(httpKernel(new EventDispatcher(), null).handle(Request.create('/x')));
  assert.instance(error, NotFoundHttpError);
  assert.is((error as Error).message, 'Unable to find the controller for path "/x". The route is wrongly configured.');
});

kernelSuite('testHandleWhenTheControllerIsAClosure: the very Response it returns', async () => {
  const response = new Response('foo');
  assert.is(await httpKernel(new EventDispatcher(), () => response).handle(Request.create('/')), response);
});

kernelSuite('testHandleWhenTheControllerIsAnArray / AFunction: [object, method] and a controller registered by name (the ControllerResolver)', async () => {
  class TestController {
    readonly word = 'foo';
    controller(): Response {
      return new Response(this.word);
    }
  }
  const resolver = new ControllerResolver({ controller_func: () => new Response('foo') });
  const kernel = new HttpKernel(new EventDispatcher(), resolver);
  for (const spec of [[new TestController(), 'controller'], 'controller_func']) {
    const request = Request.create('/');
    request.attributes.set('_controller', spec);
    assert.is((await kernel.handle(request)).body, 'foo');
  }
});

kernelSuite('testHandleWhenTheControllerIsNotACallable: an InvalidControllerError (Symfony\'s resolver: an InvalidArgumentException), a 500 for a kernel.exception listener\'s 200', async () => {
  const dispatcher = new EventDispatcher();
  let status: number | undefined;
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('')));
  dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => {
    status = event.response.status;
  });
  const handled = Request.create('/');
  handled.attributes.set('_controller', 'foobar');
  await new HttpKernel(dispatcher, new ControllerResolver()).handle(handled);
  assert.is(status, 500);
  const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver());
  const request = Request.create('/');
  request.attributes.set('_controller', 'foobar');
  const error = await rejection(kernel.handle(request));
  assert.is((error as Error).name, 'InvalidControllerError');
  assert.match((error as Error).message, 'The controller for URI "/" is not callable');
});

kernelSuite('testHandleWhenTheControllerDoesNotReturnAResponse: ControllerDoesNotReturnResponseError, with Symfony\'s wording (and the controller\'s name, which a JavaScript error does not carry as a file and line)', async () => {
  const dispatcher = new EventDispatcher();
  const messageFor = async (result: unknown): Promise<string> => {
    const error = await rejection(httpKernel(dispatcher, function show() {
      return result;
    }).handle(Request.create('/')));
    assert.instance(error, ControllerDoesNotReturnResponseError);
    return (error as Error).message;
  };
  assert.is(await messageFor(null), 'The controller "show" must return a "Response" object but it returned null. Did you forget to add a return statement somewhere in your controller?');
  assert.is(await messageFor('foo'), 'The controller "show" must return a "Response" object but it returned a string ("foo").');
  assert.is(await messageFor(true), 'The controller "show" must return a "Response" object but it returned a boolean value (true).');
  assert.is(await messageFor(42), 'The controller "show" must return a "Response" object but it returned a number (42).');
  assert.is(await messageFor(new (class Book {})()), 'The controller "show" must return a "Response" object but it returned an object of type Book.');
});

kernelSuite('testHandleWhenTheControllerDoesNotReturnAResponseButAViewIsRegistered', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.VIEW, (event: ViewEvent) => event.setResponse(new Response(event.controllerResult as string)));
  assert.is((await httpKernel(dispatcher, () => 'foo').handle(Request.create('/'))).body, 'foo');
});

kernelSuite('a kernel.view listener that sets a response stops the others, and kernel.view is not dispatched for a Response', async () => {
  const dispatcher = new EventDispatcher();
  const seen: string[] = [];
  dispatcher.addListener(KernelEvents.VIEW, (event: ViewEvent) => event.setResponse(new Response('first')), 10);
  dispatcher.addListener(KernelEvents.VIEW, () => void seen.push('second'));
  assert.is((await httpKernel(dispatcher, () => ({ id: 1 })).handle(Request.create('/'))).body, 'first');
  assert.equal(seen, []);
  const viewed: unknown[] = [];
  dispatcher.addListener(KernelEvents.VIEW, (event: ViewEvent) => void viewed.push(event.controllerResult), 100);
  await httpKernel(dispatcher, () => new Response('x')).handle(Request.create('/'));
  assert.equal(viewed, []);
});

kernelSuite('testHandleWithAResponseListener: a kernel.response listener replaces the response', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => event.setResponse(new Response('foo')));
  assert.is((await httpKernel(dispatcher).handle(Request.create('/'))).body, 'foo');
});

kernelSuite('testHandleAllowChangingControllerArguments', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.CONTROLLER_ARGUMENTS, (event: ControllerArgumentsEvent) => event.setArguments(['foo']));
  assert.is((await httpKernel(dispatcher, (content: string) => new Response(content)).handle(Request.create('/'))).body, 'foo');
});

kernelSuite('testHandleAllowChangingControllerAndArguments', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.CONTROLLER_ARGUMENTS, (event: ControllerArgumentsEvent) => {
    const oldController = event.controller;
    const oldArguments = event.arguments;
    event.setController((id: string) => (oldController(...oldArguments) as Response).setHeader('x-id', id));
    event.setArguments(['bar']);
  });
  const response = await httpKernel(dispatcher, (content: string) => new Response(content), undefined, ['foo']).handle(Request.create('/'));
  assert.is(response.body, 'foo');
  assert.is(response.getHeader('x-id'), 'bar');
});

kernelSuite('a kernel.controller listener replaces the controller before the arguments are resolved for it', async () => {
  const dispatcher = new EventDispatcher();
  const resolvedFor: Controller[] = [];
  const replacement = () => new Response('replaced');
  dispatcher.addListener(KernelEvents.CONTROLLER, (event: { setController(c: Controller): void }) => event.setController(replacement));
  const kernel = new HttpKernel(dispatcher, { getController: () => () => new Response('original') }, new RequestStack(), {
    getArguments: (_request, controller) => {
      resolvedFor.push(controller);
      return [];
    },
  });
  assert.is((await kernel.handle(Request.create('/'))).body, 'replaced');
  assert.equal(resolvedFor, [replacement]);
});

kernelSuite('testTerminate: kernel.terminate gets the kernel, the request and the response', async () => {
  const dispatcher = new EventDispatcher();
  const kernel = httpKernel(dispatcher);
  let captured: TerminateEvent | undefined;
  dispatcher.addListener(KernelEvents.TERMINATE, (event: TerminateEvent) => {
    captured = event;
  });
  const request = Request.create('/');
  const response = new Response();
  await kernel.terminate(request, response);
  assert.is(captured?.kernel, kernel);
  assert.is(captured?.request, request);
  assert.is(captured?.response, response);
});

kernelSuite('testTerminateWithException: handleException() runs kernel.exception with the request current, and leaves none current (the caller sends and terminates, README)', async () => {
  const dispatcher = new EventDispatcher();
  const requestStack = new RequestStack();
  const kernel = httpKernel(dispatcher, undefined, requestStack);
  let captured: Request | undefined;
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
    captured = requestStack.getCurrentRequest();
    event.setResponse(new Response());
  });
  const request = Request.create('/');
  const response = await kernel.handleException(new Error('boo'), request);
  assert.is(captured, request);
  assert.is(response.status, 500);
  assert.is(requestStack.getCurrentRequest(), undefined);
});

kernelSuite('testVerifyRequestStackPushPopDuringHandle: the request is current while handled and not after (the stack follows the async context: no push or pop to call)', async () => {
  const requestStack = new RequestStack();
  const dispatcher = new EventDispatcher();
  const current: Array<Request | undefined> = [];
  for (const name of [KernelEvents.REQUEST, KernelEvents.RESPONSE, KernelEvents.FINISH_REQUEST]) dispatcher.addListener(name, () => void current.push(requestStack.getCurrentRequest()));
  const request = Request.create('/');
  await httpKernel(dispatcher, () => {
    current.push(requestStack.getCurrentRequest());
    return new Response('ok');
  }, requestStack).handle(request);
  assert.equal(current, [request, request, request, request]);
  assert.is(requestStack.getCurrentRequest(), undefined);
});

kernelSuite('testVerifyRequestStackPushPopWithStreamedResponse: a stream body read after handle() sees its request as the main one', async () => {
  const requestStack = new RequestStack();
  const request = Request.create('/');
  const kernel = httpKernel(new EventDispatcher(), () => new Response(new Readable({
    read() {
      this.push(requestStack.getMainRequest() === request ? 'main' : 'none');
      this.push(null);
    },
  })), requestStack);
  const response = await kernel.handle(request);
  assert.is(requestStack.getMainRequest(), undefined);
  let text = '';
  for await (const chunk of response.body as Readable) text += String(chunk);
  assert.is(text, 'main');
  assert.is(requestStack.getMainRequest(), undefined);
});

kernelSuite('ArgumentResolverTest (testDefaultState): by default a controller gets the request and its route parameters, an empty object without any', () => {
  const resolver = new ArgumentResolver();
  const routed = Request.create('/books/42');
  routed.attributes.set('_route_params', { id: '42' });
  const [request, params] = resolver.getArguments(routed, () => null);
  assert.is(request, routed);
  assert.equal(params, { id: '42' });
  assert.equal(resolver.getArguments(Request.create('/'), () => null)[1], {});
});

kernelSuite('ArgumentResolverTest (value resolvers in order): the first resolver that answers gives the arguments; one answering undefined passes on (our resolvers give the whole list, not one argument each, README)', () => {
  const asked: string[] = [];
  const resolver = new ArgumentResolver([
    () => void asked.push('first'),
    (request) => {
      asked.push('second');
      return [request.path];
    },
    () => {
      asked.push('third');
      return ['never'];
    },
  ]);
  assert.equal(resolver.getArguments(Request.create('/x'), () => null), ['/x']);
  assert.equal(asked, ['first', 'second']);
});

kernelSuite('setResponse() of kernel.request, kernel.view, kernel.exception and kernel.response refuses what is no Response at the call (Symfony\'s Response type hint), rather than handle() answering with it', async () => {
  for (const [eventName, priority] of [[KernelEvents.REQUEST, 0], [KernelEvents.VIEW, 0], [KernelEvents.EXCEPTION, 0], [KernelEvents.RESPONSE, 0]] as const) {
    const dispatcher = new EventDispatcher();
    let refused: unknown;
    dispatcher.addListener(eventName, (event: { setResponse(response: unknown): void }) => {
      try {
        event.setResponse('hello');
      } catch (error) {
        refused = error;
      }
    }, priority);
    const controller = eventName === KernelEvents.VIEW ? () => 'result' : eventName === KernelEvents.EXCEPTION ? fail(new Error('x')) : () => new Response('ok');
    await httpKernel(dispatcher, controller).handle(Request.create('/')).catch(() => null);
    assert.instance(refused, TypeError, eventName);
    assert.match((refused as Error).message, /^(Request|View|Exception|Response)Event\.setResponse\(\) takes a Response, not the string "hello"\.$/);
  }
  const fetchResponse = new globalThis.Response('x');
  const event = new ResponseEventClass(httpKernel(new EventDispatcher()), Request.create('/'), RequestType.MAIN, new Response());
  assert.throws(() => event.setResponse(fetchResponse as never), /^ResponseEvent\.setResponse\(\) takes a Response, not the Fetch API's Response \(the global one\): import \{ Response \} from 'http-kernel'\.$/);
  assert.throws(() => new RequestEventClass(httpKernel(new EventDispatcher()), Request.create('/'), RequestType.MAIN).setResponse({ status: 200, body: 'x' } as never), /takes a Response, not an object of type Object/);
});

kernelSuite('setController() refuses what is no function, and setArguments() what is no array, at the call (Symfony\'s callable and array type hints), rather than a string spread into its characters', async () => {
  const dispatcher = new EventDispatcher();
  const refused: string[] = [];
  const attempt = (fn: () => void): void => {
    try {
      fn();
    } catch (error) {
      refused.push((error as Error).message);
    }
  };
  dispatcher.addListener(KernelEvents.CONTROLLER, (event: { setController(c: unknown): void }) => attempt(() => event.setController('home')));
  dispatcher.addListener(KernelEvents.CONTROLLER_ARGUMENTS, (event: ControllerArgumentsEvent) => {
    attempt(() => event.setController(['home', 'index'] as never));
    attempt(() => event.setArguments('abc' as never));
  });
  const response = await httpKernel(dispatcher, (...args: unknown[]) => new Response(JSON.stringify(args)), undefined, ['kept']).handle(Request.create('/'));
  assert.is(response.body, '["kept"]');
  assert.equal(refused, [
    'ControllerEvent.setController() takes a function, not the string "home".',
    'ControllerArgumentsEvent.setController() takes a function, not an object of type Array.',
    'ControllerArgumentsEvent.setArguments() takes an array of arguments, not the string "abc".',
  ]);
});

kernelSuite('a controller resolver that answers what is no function (nor null) is a TypeError naming it before kernel.controller (Symfony\'s ControllerEvent takes a callable)', async () => {
  const dispatcher = new EventDispatcher();
  let controllerEvents = 0;
  dispatcher.addListener(KernelEvents.CONTROLLER, () => void controllerEvents++);
  class BookResolver {
    getController(): Controller | null {
      return 'BookController::show' as never;
    }
  }
  const error = await rejection(new HttpKernel(dispatcher, new BookResolver()).handle(Request.create('/books/1')));
  assert.instance(error, TypeError);
  assert.is((error as Error).message, 'The controller resolver answered the string "BookController::show" for "/books/1": a controller is a function, or null when there is none.');
  assert.is(controllerEvents, 0);
});

kernelSuite('an argument resolver that answers what is no array is a TypeError naming the controller, before kernel.controller_arguments (Symfony\'s getArguments() returns an array)', async () => {
  for (const [answer, described] of [['abc', 'the string "abc"'], [null, 'null']] as const) {
    const dispatcher = new EventDispatcher();
    let argumentEvents = 0;
    dispatcher.addListener(KernelEvents.CONTROLLER_ARGUMENTS, () => void argumentEvents++);
    const kernel = new HttpKernel(dispatcher, { getController: () => function show() {
      return new Response('ok');
    } }, new RequestStack(), new ArgumentResolver([() => answer as never]));
    const error = await rejection(kernel.handle(Request.create('/')));
    assert.instance(error, TypeError);
    assert.is((error as Error).message, `The argument resolver answered ${described} for the controller "show": the arguments are an array.`);
    assert.is(argumentEvents, 0);
  }
});

// The lifecycle around errors, as Symfony's HttpKernel::handle() and handleThrowable() run it.

function recordingKernel(controller: Controller) {
  const dispatcher = new EventDispatcher();
  const seen: string[] = [];
  for (const name of Object.values(KernelEvents)) dispatcher.addListener(name, (event: KernelEvent, eventName: string) => void seen.push(`${eventName}${event.isMainRequest() ? '' : ' (sub)'}`), 1000);
  return { dispatcher, seen, kernel: httpKernel(dispatcher, controller) };
}

kernelSuite('finish_request follows the response of an error, as of any response', async () => {
  const { dispatcher, seen, kernel } = recordingKernel(fail(new Error('x')));
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('page')));
  await kernel.handle(Request.create('/'));
  assert.equal(seen, ['kernel.request', 'kernel.controller', 'kernel.controller_arguments', 'kernel.exception', 'kernel.response', 'kernel.finish_request']);
});

kernelSuite('finish_request runs before the error escapes: with catchErrors false, and when no kernel.exception listener answers', async () => {
  for (const catchErrors of [false, true]) {
    const { seen, kernel } = recordingKernel(fail(new Error('x')));
    await rejection(kernel.handle(Request.create('/'), RequestType.MAIN, catchErrors));
    assert.equal(seen.slice(-2), catchErrors ? ['kernel.exception', 'kernel.finish_request'] : ['kernel.controller_arguments', 'kernel.finish_request']);
  }
});

kernelSuite('an error thrown by a kernel.exception listener escapes handle(), after finish_request (README: Symfony skips finish_request there)', async () => {
  const { dispatcher, seen, kernel } = recordingKernel(fail(new Error('first')));
  const second = new Error('second');
  dispatcher.addListener(KernelEvents.EXCEPTION, fail(second));
  assert.is(await rejection(kernel.handle(Request.create('/'))), second);
  assert.equal(seen.slice(-2), ['kernel.exception', 'kernel.finish_request']);
  assert.is(seen.filter((name) => name === 'kernel.exception').length, 1);
});

kernelSuite('an error from a kernel.response listener goes through kernel.exception once; when kernel.response fails again the error page goes out unfiltered', async () => {
  const dispatcher = new EventDispatcher();
  let exceptions = 0;
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
    exceptions++;
    event.setResponse(new Response(`page for ${(event.error as Error).message}`));
  });
  dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => {
    if (event.response.body === 'Hello') throw new Error('filter failed');
    event.response.setHeader('x-filtered', 'yes');
  });
  const once = await httpKernel(dispatcher).handle(Request.create('/'));
  assert.is(once.body, 'page for filter failed');
  assert.is(once.status, 500);
  assert.is(once.getHeader('x-filtered'), 'yes');
  dispatcher.addListener(KernelEvents.RESPONSE, fail(new Error('always')), 10);
  const unfiltered = await httpKernel(dispatcher).handle(Request.create('/'));
  assert.is(unfiltered.body, 'page for always');
  assert.is(unfiltered.getHeader('x-filtered'), undefined);
  assert.is(exceptions, 2);
});

kernelSuite('a request error (RequestExceptionInterface, here a RequestError) reaches kernel.exception as a BadRequest error with the same message and the original as its cause', async () => {
  const dispatcher = new EventDispatcher();
  let handled: unknown;
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
    handled = event.error;
    event.setResponse(new Response('bad'));
  });
  const original = new SuspiciousOperationError('Invalid Host "###".');
  const response = await httpKernel(dispatcher, fail(original)).handle(Request.create('/'));
  assert.instance(handled, BadRequestHttpError);
  assert.is((handled as Error).message, 'Invalid Host "###".');
  assert.is((handled as Error).cause, original);
  assert.is(response.status, 400);
});

kernelSuite('ExceptionEvent: setResponse() stops propagation, and an error a listener put in place (setThrowable) gives the status and is what is rethrown', async () => {
  const replaced = new NotFoundHttpError('replaced');
  const dispatcher = new EventDispatcher();
  const seen: string[] = [];
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setError(replaced), 10);
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response((event.error as Error).message)));
  dispatcher.addListener(KernelEvents.EXCEPTION, () => void seen.push('after the response'), -10);
  const response = await httpKernel(dispatcher, fail(new Error('original'))).handle(Request.create('/'));
  assert.is(response.status, 404);
  assert.is(response.body, 'replaced');
  assert.equal(seen, []);
  const unanswered = new EventDispatcher();
  unanswered.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setError(replaced));
  assert.is(await rejection(httpKernel(unanswered, fail(new Error('original'))).handle(Request.create('/'))), replaced);
});

kernelSuite('a sub-request made by a controller: its events say SUB, its finish_request comes before the main response, and the main request is current again afterwards', async () => {
  const requestStack = new RequestStack();
  const dispatcher = new EventDispatcher();
  const seen: string[] = [];
  for (const name of [KernelEvents.REQUEST, KernelEvents.RESPONSE, KernelEvents.FINISH_REQUEST]) {
    dispatcher.addListener(name, (event: KernelEvent, eventName: string) => void seen.push(`${eventName}${event.isMainRequest() ? '' : ' (sub)'}`));
  }
  const main = Request.create('/');
  let stackInSub: readonly Request[] = [];
  let parentInSub: Request | undefined;
  let currentAfter: Request | undefined;
  const kernel: HttpKernel = new HttpKernel(dispatcher, {
    getController: (request) =>
      request === main
        ? async () => {
            const sub = main.duplicate({ attributes: { fragment: true } });
            const fragment = await kernel.handle(sub, RequestType.SUB);
            currentAfter = requestStack.getCurrentRequest();
            return new Response(`main + ${fragment.body as string}`);
          }
        : () => {
            stackInSub = requestStack.all();
            parentInSub = requestStack.getParentRequest();
            return new Response('fragment');
          },
  }, requestStack, { getArguments: () => [] });
  const response = await kernel.handle(main);
  assert.is(response.body, 'main + fragment');
  assert.is(stackInSub.length, 2);
  assert.is(stackInSub[0], main);
  assert.is(parentInSub, main);
  assert.is(currentAfter, main);
  assert.equal(seen, ['kernel.request', 'kernel.request (sub)', 'kernel.response (sub)', 'kernel.finish_request (sub)', 'kernel.response', 'kernel.finish_request']);
});

kernelSuite('a request error with catchErrors false is rethrown as the BadRequest error (Symfony converts it before the catch check)', async () => {
  const original = new SuspiciousOperationError('Invalid Host "###".');
  const error = await rejection(httpKernel(new EventDispatcher(), fail(original)).handle(Request.create('/'), RequestType.MAIN, false));
  assert.instance(error, BadRequestHttpError);
  assert.is((error as Error).cause, original);
});

kernelSuite('a 201 set by a kernel.exception listener is kept, as Symfony\'s isRedirect() names it one', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('', 201)));
  assert.is((await httpKernel(dispatcher, fail(new Error('runtime'))).handle(Request.create('/'))).status, 201);
});

kernelSuite('an HttpError whose status is no error status (a 302 thrown) makes a 200 set for it a 500, not its own status (Symfony: the error\'s status, whatever it is)', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => event.setResponse(new Response('')));
  const response = await httpKernel(dispatcher, fail(new HttpError(302, 'moved', { headers: { location: '/elsewhere' } }))).handle(Request.create('/'));
  assert.is(response.status, 500);
});

kernelSuite('a kernel.terminate listener\'s error escapes terminate()', async () => {
  const dispatcher = new EventDispatcher();
  const error = new Error('terminate failed');
  dispatcher.addListener(KernelEvents.TERMINATE, fail(error));
  assert.is(await rejection(httpKernel(dispatcher).terminate(Request.create('/'), new Response())), error);
});

kernelSuite('a sub-request whose controller throws is answered through kernel.exception as a sub-request, and the main request goes on', async () => {
  const dispatcher = new EventDispatcher();
  const types: boolean[] = [];
  dispatcher.addListener(KernelEvents.EXCEPTION, (event: ExceptionEvent) => {
    types.push(event.isMainRequest());
    event.setResponse(new Response('fragment failed'));
  });
  const main = Request.create('/');
  const kernel: HttpKernel = new HttpKernel(dispatcher, {
    getController: (request) => (request === main ? async () => new Response(`main + ${(await kernel.handle(main.duplicate({ attributes: { fragment: true } }), RequestType.SUB)).body as string}`) : fail(new Error('x'))),
  }, new RequestStack(), { getArguments: () => [] });
  const response = await kernel.handle(main);
  assert.is(response.body, 'main + fragment failed');
  assert.is(response.status, 200);
  assert.equal(types, [false]);
});

// EventDispatcherTest

class TestEventListener {
  preFooInvoked = false;
  postFooInvoked = false;
  constructor(readonly name = '') {}
  preFoo = (): void => {
    this.preFooInvoked = true;
  };
  postFoo = (event: Event): void => {
    this.postFooInvoked = true;
    if (!this.preFooInvoked) event.stopPropagation();
  };
}

dispatcherSuite('testInitialState', () => {
  const dispatcher = new EventDispatcher();
  assert.equal(dispatcher.getListeners(), {});
  assert.is(dispatcher.hasListeners('pre.foo'), false);
  assert.is(dispatcher.hasListeners('post.foo'), false);
});

dispatcherSuite('testAddListener', () => {
  const dispatcher = new EventDispatcher();
  const listener = new TestEventListener();
  dispatcher.addListener('pre.foo', listener.preFoo);
  dispatcher.addListener('post.foo', listener.postFoo);
  assert.ok(dispatcher.hasListeners());
  assert.ok(dispatcher.hasListeners('pre.foo'));
  assert.ok(dispatcher.hasListeners('post.foo'));
  assert.is(dispatcher.getListeners('pre.foo').length, 1);
  assert.is(dispatcher.getListeners('post.foo').length, 1);
  assert.is(Object.keys(dispatcher.getListeners()).length, 2);
});

dispatcherSuite('testGetListenersSortsByPriority', () => {
  const dispatcher = new EventDispatcher();
  const [l1, l2, l3, l4] = ['1', '2', '3', '4'].map((name) => new TestEventListener(name));
  dispatcher.addListener('pre.foo', l1!.preFoo, -10);
  dispatcher.addListener('pre.foo', l2!.preFoo, 10);
  dispatcher.addListener('pre.foo', l3!.preFoo);
  dispatcher.addListener('pre.foo', l4!.preFoo, 20);
  assert.equal(dispatcher.getListeners('pre.foo'), [l4!.preFoo, l2!.preFoo, l3!.preFoo, l1!.preFoo]);
});

dispatcherSuite('testGetAllListenersSortsByPriority', () => {
  const dispatcher = new EventDispatcher();
  const [l1, l2, l3, l4, l5, l6] = Array.from({ length: 6 }, () => () => {});
  dispatcher.addListener('pre.foo', l1!, -10);
  dispatcher.addListener('pre.foo', l2!);
  dispatcher.addListener('pre.foo', l3!, 10);
  dispatcher.addListener('post.foo', l4!, -10);
  dispatcher.addListener('post.foo', l5!);
  dispatcher.addListener('post.foo', l6!, 10);
  assert.equal(dispatcher.getListeners(), { 'pre.foo': [l3, l2, l1], 'post.foo': [l6, l5, l4] });
});

dispatcherSuite('testGetListenerPriority', () => {
  const dispatcher = new EventDispatcher();
  const l1 = () => {};
  const l2 = () => {};
  dispatcher.addListener('pre.foo', l1, -10);
  dispatcher.addListener('pre.foo', l2);
  assert.is(dispatcher.getListenerPriority('pre.foo', l1), -10);
  assert.is(dispatcher.getListenerPriority('pre.foo', l2), 0);
  assert.is(dispatcher.getListenerPriority('pre.bar', l2), null);
  assert.is(dispatcher.getListenerPriority('pre.foo', () => {}), null);
});

dispatcherSuite('testDispatch: returns the event it was given, also for an event nobody listens to', () => {
  const dispatcher = new EventDispatcher();
  const listener = new TestEventListener();
  dispatcher.addListener('pre.foo', listener.preFoo);
  dispatcher.addListener('post.foo', listener.postFoo);
  dispatcher.dispatch(new Event(), 'pre.foo');
  assert.ok(listener.preFooInvoked);
  assert.is(listener.postFooInvoked, false);
  const event = new Event();
  assert.is(dispatcher.dispatch(event, 'noevent'), event);
  assert.is(dispatcher.dispatch(event, 'pre.foo'), event);
});

dispatcherSuite('testDispatchForClosure: one closure on two events is called once per dispatch', () => {
  const dispatcher = new EventDispatcher();
  let invoked = 0;
  const listener = () => void invoked++;
  dispatcher.addListener('pre.foo', listener);
  dispatcher.addListener('post.foo', listener);
  dispatcher.dispatch(new Event(), 'pre.foo');
  assert.is(invoked, 1);
});

dispatcherSuite('testStopEventPropagation', () => {
  const dispatcher = new EventDispatcher();
  const listener = new TestEventListener();
  const other = new TestEventListener();
  dispatcher.addListener('post.foo', listener.postFoo, 10);
  dispatcher.addListener('post.foo', other.postFoo);
  dispatcher.dispatch(new Event(), 'post.foo');
  assert.ok(listener.postFooInvoked);
  assert.is(other.postFooInvoked, false);
});

dispatcherSuite('testDispatchByPriority', () => {
  const dispatcher = new EventDispatcher();
  const invoked: string[] = [];
  dispatcher.addListener('pre.foo', () => void invoked.push('1'), -10);
  dispatcher.addListener('pre.foo', () => void invoked.push('2'));
  dispatcher.addListener('pre.foo', () => void invoked.push('3'), 10);
  dispatcher.dispatch(new Event(), 'pre.foo');
  assert.equal(invoked, ['3', '2', '1']);
});

dispatcherSuite('testRemoveListener: and removing from an event that has none does nothing', () => {
  const dispatcher = new EventDispatcher();
  const listener = () => {};
  dispatcher.addListener('pre.bar', listener);
  assert.ok(dispatcher.hasListeners('pre.bar'));
  dispatcher.removeListener('pre.bar', listener);
  assert.is(dispatcher.hasListeners('pre.bar'), false);
  dispatcher.removeListener('notExists', listener);
});

class TestEventSubscriber {
  getSubscribedEvents() {
    return { 'pre.foo': 'preFoo', 'post.foo': 'postFoo' };
  }
  preFoo(): void {}
  postFoo(): void {}
}

class TestEventSubscriberWithPriorities {
  getSubscribedEvents() {
    return { 'pre.foo': ['preFoo', 10] as const, 'post.foo': ['postFoo'] as const };
  }
  preFoo(): void {}
  postFoo(): void {}
}

class TestEventSubscriberWithMultipleListeners {
  getSubscribedEvents() {
    return { 'pre.foo': [['preFoo1'], ['preFoo2', 10]] as const };
  }
  preFoo1(): void {}
  preFoo2(): void {}
}

dispatcherSuite('testAddSubscriber', () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addSubscriber(new TestEventSubscriber());
  assert.ok(dispatcher.hasListeners('pre.foo'));
  assert.ok(dispatcher.hasListeners('post.foo'));
});

dispatcherSuite('testAddSubscriberWithPriorities: the subscriber at 10 comes first', () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addSubscriber(new TestEventSubscriber());
  dispatcher.addSubscriber(new TestEventSubscriberWithPriorities());
  const entries = dispatcher.getListenerEntries('pre.foo');
  assert.is(entries.length, 2);
  assert.instance(entries[0]!.subscriber, TestEventSubscriberWithPriorities);
  assert.is(entries[0]!.priority, 10);
});

dispatcherSuite('testAddSubscriberWithMultipleListeners: [[method], [method, priority]]', () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addSubscriber(new TestEventSubscriberWithMultipleListeners());
  const entries = dispatcher.getListenerEntries('pre.foo');
  assert.is(entries.length, 2);
  assert.is(entries[0]!.name, 'TestEventSubscriberWithMultipleListeners::preFoo2');
});

dispatcherSuite('testRemoveSubscriber, WithPriorities, WithMultipleListeners', () => {
  for (const subscriber of [new TestEventSubscriber(), new TestEventSubscriberWithPriorities(), new TestEventSubscriberWithMultipleListeners()]) {
    const dispatcher = new EventDispatcher();
    dispatcher.addSubscriber(subscriber);
    assert.ok(dispatcher.hasListeners('pre.foo'));
    dispatcher.removeSubscriber(subscriber);
    assert.is(dispatcher.hasListeners('pre.foo'), false);
    assert.is(dispatcher.hasListeners('post.foo'), false);
    assert.is(dispatcher.hasListeners(), false);
  }
});

dispatcherSuite('testEventReceivesTheDispatcherInstanceAsArgument: (event, eventName, dispatcher)', () => {
  const dispatcher = new EventDispatcher();
  let received: unknown[] = [];
  dispatcher.addListener('test', (...args: unknown[]) => {
    received = args;
  });
  const event = new Event();
  dispatcher.dispatch(event, 'test');
  assert.equal(received.length, 3);
  assert.is(received[0], event);
  assert.is(received[1], 'test');
  assert.is(received[2], dispatcher);
});

dispatcherSuite('testWorkaroundForPhpBug62976: removing another closure leaves the registered one', () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener('bug.62976', () => {});
  dispatcher.removeListener('bug.62976', () => {});
  assert.ok(dispatcher.hasListeners('bug.62976'));
});

dispatcherSuite('testHasListenersWhenAddedCallbackListenerIsRemoved / testGetListenersWhenAddedCallbackListenerIsRemoved', () => {
  const dispatcher = new EventDispatcher();
  const listener = () => {};
  dispatcher.addListener('foo', listener);
  dispatcher.removeListener('foo', listener);
  assert.is(dispatcher.hasListeners(), false);
  assert.equal(dispatcher.getListeners(), {});
});

dispatcherSuite('testHasListenersWithoutEventsReturnsFalseAfterHasListenersWithEventHasBeenCalled (and after a dispatch of it)', () => {
  const dispatcher = new EventDispatcher();
  assert.is(dispatcher.hasListeners('foo'), false);
  dispatcher.dispatch(new Event(), 'foo');
  assert.equal(dispatcher.getListeners('foo'), []);
  assert.is(dispatcher.hasListeners(), false);
  assert.equal(dispatcher.getListeners(), {});
});

dispatcherSuite('testNamedClosures: one function added twice has the priority it was first added with, and removeListener() removes both', () => {
  const dispatcher = new EventDispatcher();
  const callback = () => {};
  const other = () => {};
  dispatcher.addListener('foo', callback, 3);
  dispatcher.addListener('foo', callback, 2);
  dispatcher.addListener('foo', other, 1);
  assert.is(dispatcher.getListenerPriority('foo', callback), 3);
  dispatcher.removeListener('foo', callback);
  assert.equal(dispatcher.getListeners(), { foo: [other] });
});

dispatcherSuite('testDispatchLazyListener and the other lazy cases: a listener is a function, so Symfony\'s [factory, \'method\'] (a DI container\'s lazy service) is a TypeError at addListener()', () => {
  const dispatcher = new EventDispatcher();
  const factory = () => new TestEventListener();
  assert.throws(() => dispatcher.addListener('foo', [factory, 'preFoo'] as never), (error: Error) => error instanceof TypeError && error.message.startsWith('A listener of "foo" is a function, not '));
  assert.is(dispatcher.hasListeners('foo'), false);
});

dispatcherSuite('an event stopped before it is dispatched reaches no listener (callListeners checks before each call)', () => {
  const dispatcher = new EventDispatcher();
  let called = 0;
  dispatcher.addListener('foo', () => void called++);
  const event = new Event();
  event.stopPropagation();
  assert.is(dispatcher.dispatch(event, 'foo'), event);
  assert.is(called, 0);
});

dispatcherSuite('one listener added twice is called twice, and a listener added during a dispatch waits for the next one', () => {
  const dispatcher = new EventDispatcher();
  const calls: string[] = [];
  const listener = () => void calls.push('twice');
  dispatcher.addListener('foo', listener);
  dispatcher.addListener('foo', listener);
  dispatcher.addListener('foo', () => {
    if (calls.length === 2) dispatcher.addListener('foo', () => void calls.push('late'), 100);
  });
  dispatcher.dispatch(new Event(), 'foo');
  assert.equal(calls, ['twice', 'twice']);
  dispatcher.dispatch(new Event(), 'foo');
  assert.equal(calls, ['twice', 'twice', 'late', 'twice', 'twice']);
});

dispatcherSuite('a kernel.response listener that stops propagation stops the other response listeners, and finish_request still runs', async () => {
  const dispatcher = new EventDispatcher();
  const seen: string[] = [];
  dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => event.stopPropagation(), 10);
  dispatcher.addListener(KernelEvents.RESPONSE, () => void seen.push('response'));
  dispatcher.addListener(KernelEvents.FINISH_REQUEST, () => void seen.push('finish_request'));
  await httpKernel(dispatcher).handle(Request.create('/'));
  assert.equal(seen, ['finish_request']);
});

dispatcherSuite('a listener\'s return value is ignored (a promise aside, which is awaited: README)', () => {
  const dispatcher = new EventDispatcher();
  let second = false;
  dispatcher.addListener('foo', () => false, 10);
  dispatcher.addListener('foo', () => {
    second = true;
  });
  const event = new Event();
  assert.is(dispatcher.dispatch(event, 'foo'), event);
  assert.ok(second);
});

dispatcherSuite('dispatch() without an event name is a TypeError (Symfony dispatches under the event\'s class name: a JavaScript class name is neither unique nor kept by minifiers), as is addListener() with a name that is no string', () => {
  class OrderPlaced extends Event {}
  const dispatcher = new EventDispatcher();
  let called = 0;
  dispatcher.addListener('OrderPlaced', () => void called++);
  for (let i = 0; i < 2; i++) {
    assert.throws(() => (dispatcher.dispatch as (event: Event) => unknown)(new OrderPlaced()), (error: Error) => error instanceof TypeError && error.message === 'An event name is a string, not undefined: dispatch(event, \'order.placed\') takes it second.');
  }
  assert.throws(() => dispatcher.addListener(OrderPlaced as never, () => {}), (error: Error) => error instanceof TypeError && error.message === 'An event name is a string, not a function (OrderPlaced).');
  assert.is(called, 0);
  const traced = new TraceableEventDispatcher(new RequestStack());
  assert.throws(() => (traced.dispatch as (event: Event) => unknown)(new OrderPlaced()), TypeError);
});

// TraceableEventDispatcherTest (ours traces per request: every method takes the request)

function traced() {
  const requestStack = new RequestStack();
  const dispatcher = new TraceableEventDispatcher(requestStack);
  const request = Request.create('/');
  const inRequest = <T>(fn: () => T): T => requestStack.run(request, fn);
  return { dispatcher, request, inRequest };
}

traceableSuite('testAddRemoveListener / testGetListeners / testHasListeners / testAddRemoveSubscriber: the registry is the dispatcher\'s own', () => {
  const { dispatcher } = traced();
  assert.is(dispatcher.hasListeners('foo'), false);
  const listener = () => {};
  dispatcher.addListener('foo', listener);
  assert.equal(dispatcher.getListeners('foo'), [listener]);
  assert.ok(dispatcher.hasListeners('foo'));
  dispatcher.removeListener('foo', listener);
  assert.equal(dispatcher.getListeners('foo'), []);
  const subscriber = new TestEventSubscriber();
  dispatcher.addSubscriber(subscriber);
  assert.is(dispatcher.getListeners('pre.foo').length, 1);
  dispatcher.removeSubscriber(subscriber);
  assert.is(dispatcher.getListeners('pre.foo').length, 0);
});

traceableSuite('testGetListenerPriority and testGetListenerPriorityWhileDispatching', () => {
  const { dispatcher, inRequest } = traced();
  let whileDispatching: number | null = null;
  const listener = () => {
    whileDispatching = dispatcher.getListenerPriority('foo', listener);
  };
  dispatcher.addListener('foo', listener, 123);
  assert.is(dispatcher.getListenerPriority('foo', listener), 123);
  inRequest(() => dispatcher.dispatch(new Event(), 'foo'));
  assert.is(whileDispatching, 123);
  assert.is(dispatcher.getListenerPriority('foo', listener), 123);
});

traceableSuite('testGetCalledListeners: not called before the dispatch, called after, with its priority and name', () => {
  const { dispatcher, request, inRequest } = traced();
  dispatcher.addListener('foo', () => {}, 5);
  assert.equal(dispatcher.getCalledListeners(request), []);
  assert.equal(dispatcher.getNotCalledListeners(request), [{ event: 'foo', listener: 'closure', priority: 5 }]);
  inRequest(() => dispatcher.dispatch(new Event(), 'foo'));
  const called = dispatcher.getCalledListeners(request);
  assert.equal(called.map(({ event, listener, priority }) => ({ event, listener, priority })), [{ event: 'foo', listener: 'closure', priority: 5 }]);
  assert.equal(dispatcher.getNotCalledListeners(request), []);
});

traceableSuite('testGetCalledListenersNested: a listener gets the traceable dispatcher, and a nested dispatch is traced too', () => {
  const { dispatcher, request, inRequest } = traced();
  let given: unknown;
  dispatcher.addListener('foo', (_event: Event, _name: string, d: EventDispatcher) => {
    given = d;
    d.dispatch(new Event(), 'bar');
  });
  dispatcher.addListener('bar', () => {});
  inRequest(() => dispatcher.dispatch(new Event(), 'foo'));
  assert.is(given, dispatcher);
  assert.is(dispatcher.getCalledListeners(request).length, 2);
});

traceableSuite('testItReturnsNoOrphanedEventsWhenCreated / AfterDispatch / testItDoesNotReturnHandledEvents', () => {
  const { dispatcher, request, inRequest } = traced();
  assert.equal(dispatcher.getOrphanedEvents(request), []);
  inRequest(() => dispatcher.dispatch(new Event(), 'foo'));
  assert.equal(dispatcher.getOrphanedEvents(request), ['foo']);
  const other = traced();
  other.dispatcher.addListener('foo', () => {});
  other.inRequest(() => other.dispatcher.dispatch(new Event(), 'foo'));
  assert.equal(other.dispatcher.getOrphanedEvents(other.request), []);
});

traceableSuite('testDispatchCallListeners: by priority', () => {
  const { dispatcher, inRequest } = traced();
  const called: string[] = [];
  dispatcher.addListener('foo', () => void called.push('foo1'), 10);
  dispatcher.addListener('foo', () => void called.push('foo2'), 20);
  inRequest(() => dispatcher.dispatch(new Event(), 'foo'));
  assert.equal(called, ['foo2', 'foo1']);
});

traceableSuite('testDispatchNested: a listener dispatching its own event again', () => {
  const { dispatcher, inRequest } = traced();
  let loop = 1;
  let dispatched = 0;
  dispatcher.addListener('foo', () => {
    loop++;
    if (loop === 2) dispatcher.dispatch(new Event(), 'foo');
  });
  dispatcher.addListener('foo', () => void dispatched++);
  inRequest(() => dispatcher.dispatch(new Event(), 'foo'));
  assert.is(dispatched, 2);
});

traceableSuite('testListenerCanRemoveItselfWhenExecuted', () => {
  const { dispatcher, inRequest } = traced();
  const listener1 = (_event: Event, _name: string, d: EventDispatcher) => d.removeListener('foo', listener1);
  dispatcher.addListener('foo', listener1);
  dispatcher.addListener('foo', () => {});
  inRequest(() => dispatcher.dispatch(new Event(), 'foo'));
  assert.is(dispatcher.getListeners('foo').length, 1);
});

traceableSuite('testCallStackIsNotLeakingWithStoppedPropagation: the stopping listener is called, the one after it not', () => {
  const { dispatcher, request, inRequest } = traced();
  dispatcher.addListener('foo', (event: Event) => event.stopPropagation(), 10);
  dispatcher.addListener('foo', () => {}, 5);
  inRequest(() => dispatcher.dispatch(new Event(), 'foo'));
  const called = dispatcher.getCalledListeners(request);
  assert.is(called.length, 1);
  assert.is(called[0]!.stoppedPropagation, true);
  assert.equal(dispatcher.getNotCalledListeners(request), [{ event: 'foo', listener: 'closure', priority: 5 }]);
});

traceableSuite('testCallStackIsNotLeakingOnRepeatedDispatch: each call is recorded with its time, for the timeline (Symfony lists a listener once)', () => {
  const { dispatcher, request, inRequest } = traced();
  dispatcher.addListener('foo', () => {}, 5);
  for (let i = 0; i < 5; i++) inRequest(() => dispatcher.dispatch(new Event(), 'foo'));
  assert.is(dispatcher.getCalledListeners(request).length, 5);
  assert.equal(dispatcher.getNotCalledListeners(request), []);
});

traceableSuite('testPreviouslyCalledListenerStaysCalledAfterLaterStopPropagation', () => {
  const { dispatcher, request, inRequest } = traced();
  dispatcher.addListener('foo', () => {}, 5);
  inRequest(() => dispatcher.dispatch(new Event(), 'foo'));
  dispatcher.addListener('foo', (event: Event) => event.stopPropagation(), 10);
  inRequest(() => dispatcher.dispatch(new Event(), 'foo'));
  assert.equal(dispatcher.getNotCalledListeners(request), []);
});

traceableSuite('testDispatchReusedEventNested: an event object dispatched again under another name from its own listener', () => {
  const { dispatcher, request, inRequest } = traced();
  let nested = false;
  dispatcher.addListener('foo', (event: Event) => {
    dispatcher.dispatch(event, 'bar');
  });
  dispatcher.addListener('bar', () => {
    nested = true;
  });
  inRequest(() => dispatcher.dispatch(new Event(), 'foo'));
  assert.ok(nested);
  assert.equal(dispatcher.getCalledListeners(request).map((call) => call.event), ['bar', 'foo']);
});

traceableSuite('a dispatch outside any request is not traced, and calls its listeners all the same', () => {
  const { dispatcher, request } = traced();
  let called = 0;
  dispatcher.addListener('foo', () => void called++);
  dispatcher.dispatch(new Event(), 'foo');
  assert.is(called, 1);
  assert.equal(dispatcher.getCalledListeners(request), []);
});

kernelSuite.run();
dispatcherSuite.run();
traceableSuite.run();
