import { ArgumentResolver, type ArgumentResolverInterface } from './argument-resolver.js';
import type { ControllerResolverInterface } from './controller-resolver.js';
import { describeOtherCopy, describeValue } from './describe-value.js';
import { boundErrorHeaders } from './error-headers.js';
import { type EventDispatcher, isPromiseLike } from './event-dispatcher.js';
import {
  ControllerArgumentsEvent,
  ControllerEvent,
  ExceptionEvent,
  FinishRequestEvent,
  KernelEvents,
  RequestEvent,
  RequestType,
  ResponseEvent,
  TerminateEvent,
  ViewEvent,
  type Controller,
  type KernelLike,
} from './events.js';
import { BadRequestHttpError, ControllerDoesNotReturnResponseError, NotFoundHttpError, RequestError, SubRequestTooDeepError, TooManySubRequestsError, isHttpError, type HttpError } from './http-errors.js';
import { Request, RequestSlot } from './request.js';
import { requestInternals } from './request-internals.js';
import { RequestStack } from './request-stack.js';
import { Response } from './response.js';
import { KERNEL_OWNERS, RECORD_OWNERS, claimBody, keepsUnownedBodies, dropBody, handBack, hearBody, withoutHeadBody } from './response-body.js';
import { secureCookies } from './secure-cookies.js';

/**
 * How deep sub-requests may be nested (a sub-request of the main request is 1 deep, one of it 2):
 * handle() refuses a deeper one with a SubRequestTooDeepError. Fragments nest a few levels; a
 * controller that makes a sub-request to itself reaches it in milliseconds.
 */
export const MAX_SUB_REQUEST_DEPTH = 64;

/**
 * How many sub-requests one sub-request of the main request may have under it, all levels together:
 * handle() refuses the next with a TooManySubRequestsError. Error pages are not counted (each is
 * bounded by the failure it shows). The main request's own sub-requests are not counted: a stream
 * that renders a fragment per event for hours is a loop of the application's, not a runaway.
 */
export const MAX_SUB_REQUESTS = 10_000;

/** Sub-requests made so far under a sub-request of the main request (see MAX_SUB_REQUESTS). */
const subRequestCounts = new RequestSlot<number>();

/** An error a kernel.exception listener threw -> the error it was handling (see HttpKernel.handledErrorOf). */
const handledWhenThrown = new WeakMap<object, unknown>();

/** What handle() got instead of a Request, named so that another kind of Request is not "an object of type Request". */
function describeNonRequest(value: unknown): string {
  if (typeof globalThis.Request === 'function' && value instanceof globalThis.Request) return "the Fetch API's Request (the global one): import Request from http-kernel";
  return describeOtherCopy(value, 'Request') ?? describeValue(value);
}

/**
 * Turns a Request into a Response by dispatching the lifecycle events:
 * request → controller → controller_arguments → (view) → response → finish_request,
 * with `exception` for errors, and `terminate` once the response is sent.
 */
export class HttpKernel implements KernelLike {
  /**
   * The error a `kernel.exception` listener was handling when it threw `thrown` (which then escaped
   * `handle()`), or undefined. The listeners after it never saw that error: createRequestListener
   * names it where it logs the escape, and the debug page and the profiler show it, so it is not lost.
   */
  static handledErrorOf(thrown: unknown): unknown {
    return typeof thrown === 'object' && thrown !== null ? handledWhenThrown.get(thrown) : undefined;
  }

  constructor(
    readonly dispatcher: EventDispatcher,
    readonly controllerResolver: ControllerResolverInterface,
    readonly requestStack: RequestStack = new RequestStack(),
    readonly argumentResolver: ArgumentResolverInterface = new ArgumentResolver(),
  ) {}

  /**
   * Handles a request. With `catchErrors` (the default) an error goes through
   * `kernel.exception`; it is rethrown only when no listener makes a response of it.
   */
  handle(request: Request, type: RequestType = RequestType.MAIN, catchErrors = true): Promise<Response> {
    try {
      // Refused at the call: a path or an unknown type would otherwise fail deep in a listener, and be answered with an
      // error page for it. Here, not in handleMaybeAsync(), which servers call with a Request they made.
      if (!(request instanceof Request)) throw new TypeError(`HttpKernel.handle() takes a Request (Request.create('/path')), not ${describeNonRequest(request)}.`);
      if (type !== RequestType.MAIN && type !== RequestType.SUB) throw new TypeError(`A request type is RequestType.MAIN (1) or RequestType.SUB (2), not ${describeValue(type)}.`);
      const result = this.handleMaybeAsync(request, type, catchErrors);
      return isPromiseLike(result) ? result : Promise.resolve(result);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The same as handle(), but answers the Response itself when every listener and the
   * controller were synchronous: servers use it to spend no promise on such requests.
   */
  handleMaybeAsync(request: Request, type: RequestType = RequestType.MAIN, catchErrors = true): Response | Promise<Response> {
    if (type === RequestType.SUB) {
      checkSubRequestBounds(request, this.requestStack);
      RECORD_OWNERS.set(request, recordOwnerOf(request, this.requestStack, this));
    }
    // A main request made with duplicate() (an embedder's retry): its own sub-requests are its first level, not its second.
    else requestInternals.handledAsMain(request);
    // Without async context tracking, run() would only call the function: no closure for it.
    if (!this.requestStack.tracksAsyncContext) return this.#handleCaught(request, type, catchErrors);
    if (type === RequestType.MAIN) requestInternals.handledWith(request, this.requestStack);
    return this.requestStack.run(request, () => this.#handleCaught(request, type, catchErrors));
  }

  #handleCaught(request: Request, type: RequestType, catchErrors: boolean): Response | Promise<Response> {
    let result: Response | Promise<Response>;
    try {
      result = this.#handleRaw(request, type);
    } catch (error) {
      return this.#handleError(error, request, type, catchErrors);
    }
    return isPromiseLike(result) ? result.then(undefined, (error: unknown) => this.#handleError(error, request, type, catchErrors)) : result;
  }

  /**
   * The response for an error raised outside handle() on behalf of `request`, made as handle()
   * makes one for an error of its controller: `kernel.exception` (the error page), `kernel.response`
   * and `kernel.finish_request` run again, with `request` current. Servers call it when the Response
   * handle() gave cannot be sent (see ResponseNotSendableError), before `kernel.terminate`: the
   * client gets an error page, and the profile records it. Symfony's terminateWithException() does
   * the same, and sends and terminates too. Rejects with the error when no listener answers it.
   */
  handleException(error: unknown, request: Request, type: RequestType = RequestType.MAIN): Promise<Response> {
    const stack = this.requestStack;
    if (!stack.tracksAsyncContext) return this.#handleError(error, request, type, true);
    const current = stack.all();
    // Called from the request's own context (a listener), no second push.
    if (current.at(-1) === request) return this.#handleError(error, request, type, true);
    const run = (): Promise<Response> => this.#handleError(error, request, type, true);
    return type === RequestType.MAIN && current.length > 0 ? stack.exit(() => stack.run(request, run)) : stack.run(request, run);
  }

  /** Dispatches `kernel.terminate`; call it after the response has been sent. */
  async terminate(request: Request, response: Response): Promise<void> {
    await this.terminateMaybeAsync(request, response);
  }

  /**
   * The same as terminate(), but without a promise when every listener was synchronous (servers use it).
   * The listeners run with `request` current, as handle()'s did: what they log is attributed to it (and
   * reaches its profile, the profiler's listener being the last), unlike Symfony's, which run after the pop.
   * It is the main request, alone on the stack, whatever the caller's context.
   */
  terminateMaybeAsync(request: Request, response: Response): void | Promise<void> {
    const stack = this.requestStack;
    if (!stack.tracksAsyncContext) return this.#terminate(request, response);
    const current = stack.all();
    // A caller already in the request's own context needs no second push.
    if (current.length === 1 && current[0] === request) return this.#terminate(request, response);
    const terminate = (): void | Promise<void> => this.#terminate(request, response);
    // A stream body reports its end in whatever context ended it: another client's request (a hub that
    // request ends), or the sub-request that made it. Pushed on that stack, the request would have
    // another client's as its main request, or a sub-request as its parent.
    return current.length === 0 ? stack.run(request, terminate) : stack.exit(() => stack.run(request, terminate));
  }

  #terminate(request: Request, response: Response): void | Promise<void> {
    const event = new TerminateEvent(this, request, response);
    // The request is done once its listeners have run, whether they threw or not: the caller's signal lets go of it then.
    const { endSignalFollowing } = requestInternals;
    let pending: TerminateEvent | Promise<unknown>;
    try {
      pending = this.dispatcher.dispatch(event, KernelEvents.TERMINATE);
    } catch (error) {
      endSignalFollowing(request);
      throw error;
    }
    if (pending === event) return endSignalFollowing(request);
    return (pending as Promise<unknown>).then(
      () => endSignalFollowing(request),
      (error: unknown) => {
        endSignalFollowing(request);
        throw error;
      },
    );
  }

  // The steps below stay synchronous until a listener or the controller returns a promise: each
  // calls the next step at once after a plain value, and chains it after a promise (no closure
  // is made on the synchronous path). A dispatch returns its event, or a promise of it: comparing
  // with the event is exact and cheaper than looking for `then` on each kind of event.

  #handleRaw(request: Request, type: RequestType): Response | Promise<Response> {
    const event = new RequestEvent(this, request, type);
    const pending = dispatchSetting(this.dispatcher, event, KernelEvents.REQUEST);
    if (pending !== event) return (pending as Promise<unknown>).then(() => this.#afterRequest(event, request, type));
    return this.#afterRequest(event, request, type);
  }

  #afterRequest(event: RequestEvent, request: Request, type: RequestType): Response | Promise<Response> {
    if (event.response === null) return this.#callController(request, type);
    dropReplaced(event, event.response);
    return this.#filterResponse(event.response, request, type);
  }

  #callController(request: Request, type: RequestType): Response | Promise<Response> {
    const controller = this.controllerResolver.getController(request);
    if (controller === null) {
      throw new NotFoundHttpError(`Unable to find the controller for path "${request.path}". The route is wrongly configured.`);
    }
    // Named here, not as "controller is not a function" once kernel.controller has run (Symfony's ControllerEvent takes a callable).
    // Not by the resolver's class: createKernel's wraps the embedder's.
    if (typeof controller !== 'function') throw new TypeError(`The controller resolver answered ${describeValue(controller)} for "${request.path}": a controller is a function, or null when there is none.`);
    const event = new ControllerEvent(this, controller, request, type);
    const pending = this.dispatcher.dispatch(event, KernelEvents.CONTROLLER);
    if (pending !== event) return (pending as Promise<unknown>).then(() => this.#resolveArguments(event, request, type));
    return this.#resolveArguments(event, request, type);
  }

  #resolveArguments(controllerEvent: ControllerEvent, request: Request, type: RequestType): Response | Promise<Response> {
    const resolved = controllerEvent.controller;
    const args = this.argumentResolver.getArguments(request, resolved);
    // A string would be spread into its characters, null fail as "not iterable" in the call.
    if (!Array.isArray(args)) throw new TypeError(`The argument resolver answered ${describeValue(args)} for the controller "${resolved.name || 'anonymous'}": the arguments are an array.`);
    const event = new ControllerArgumentsEvent(this, resolved, args, request, type);
    const pending = this.dispatcher.dispatch(event, KernelEvents.CONTROLLER_ARGUMENTS);
    if (pending !== event) return (pending as Promise<unknown>).then(() => this.#runController(event, request, type));
    return this.#runController(event, request, type);
  }

  #runController(event: ControllerArgumentsEvent, request: Request, type: RequestType): Response | Promise<Response> {
    const controller = event.controller;
    const result: unknown = controller(...event.arguments);
    // Promise.resolve() adopts any thenable (whose then() may return nothing and take no rejection handler); a native promise is returned as it is.
    if (isPromiseLike(result)) return Promise.resolve(result).then((value) => this.#toResponse(value, controller, request, type));
    return this.#toResponse(result, controller, request, type);
  }

  /** A Response goes on; anything else goes through `kernel.view`. */
  #toResponse(result: unknown, controller: Controller, request: Request, type: RequestType): Response | Promise<Response> {
    if (result instanceof Response) return this.#filterResponse(result, request, type);
    const event = new ViewEvent(this, request, type, result);
    const pending = dispatchSetting(this.dispatcher, event, KernelEvents.VIEW);
    if (pending !== event) return (pending as Promise<unknown>).then(() => this.#afterView(event, controller, result, request, type));
    return this.#afterView(event, controller, result, request, type);
  }

  #afterView(event: ViewEvent, controller: Controller, result: unknown, request: Request, type: RequestType): Response | Promise<Response> {
    if (event.response === null) throw new ControllerDoesNotReturnResponseError(noResponseMessage(controller, result));
    dropReplaced(event, event.response);
    return this.#filterResponse(event.response, request, type);
  }

  /** `kernel.response`, then `kernel.finish_request`; stays synchronous while the listeners are. */
  #filterResponse(response: Response, request: Request, type: RequestType): Response | Promise<Response> {
    // Its stream may fail while an async listener awaits: heard from now on (see hearBody).
    hearBody(response.body);
    // A sub-request's stream the main request answers with is its server's from now on: another request's terminate must not say it failed unheard meanwhile.
    if (type === RequestType.MAIN) claimBody(response.body);
    const event = new ResponseEvent(this, request, type, response);
    let result: Response | Promise<Response>;
    try {
      const pending = this.dispatcher.dispatch(event, KernelEvents.RESPONSE);
      result = pending !== event ? (pending as Promise<unknown>).then(() => this.#finishWith(event, request, type, response)) : this.#finishWith(event, request, type, response);
    } catch (error) {
      dropBodies(request, null, response, ...event.replacedResponses(), event.response);
      throw error;
    }
    if (!isPromiseLike(result)) return result;
    return result.then(undefined, (error: unknown) => {
      dropBodies(request, null, response, ...event.replacedResponses(), event.response);
      throw error;
    });
  }

  #finishWith(event: ResponseEvent, request: Request, type: RequestType, response: Response): Response | Promise<Response> {
    // The listeners put another response in place: those they replaced are never sent, their stream bodies would stay open.
    // setResponse() lists what it replaces; a response put in place past it (Object.defineProperty on the event) is compared too.
    const replaced = event.replacedResponses();
    if (event.response !== response || replaced.length > 0) dropBodies(request, event.response, response, ...replaced);
    const pending = this.#finishRequest(request, type);
    return pending === undefined ? this.#finalResponse(event.response, request, type) : pending.then(() => this.#finalResponse(event.response, request, type));
  }

  /**
   * The answer handle() gives, once kernel.response and kernel.finish_request have run: for a main request,
   * after every listener that could still change its headers (the toolbar changes the length; a finish_request
   * listener holding the response may set a cookie), a HEAD's answer is the GET's head alone, and a cookie set
   * after ResponseListener's prepare() gets Secure over https as the others did.
   */
  #finalResponse(response: Response, request: Request, type: RequestType): Response {
    if (type === RequestType.MAIN) {
      // A sub-request's stream body the main request answers with is its server's to send, and to log should it fail (one a listener put in place too).
      claimBody(response.body);
      finishMainResponse(response, request);
    }
    hearBody(response.body);
    if (type === RequestType.SUB) handBack(request, response.body);
    return keepRequestContext(response, this.requestStack);
  }

  #finishRequest(request: Request, type: RequestType): undefined | Promise<unknown> {
    const event = new FinishRequestEvent(this, request, type);
    const pending = this.dispatcher.dispatch(event, KernelEvents.FINISH_REQUEST);
    return pending !== event ? (pending as Promise<unknown>) : undefined;
  }

  async #handleError(caught: unknown, request: Request, type: RequestType, catchErrors: boolean): Promise<Response> {
    const error = isRequestError(caught) ? new BadRequestHttpError(caught.message, { cause: caught }) : caught;
    if (!catchErrors) return this.#finishAndThrow(error, request, type);
    const event = new ExceptionEvent(this, request, type, error);
    try {
      const pending = this.dispatcher.dispatch(event, KernelEvents.EXCEPTION);
      if (pending !== event) await pending;
    } catch (listenerError) {
      // The listener's error escapes, as in Symfony; unlike Symfony, finish_request runs first,
      // so that what a listener set up for the request is reset on every way out. The error it was
      // handling is kept for handledErrorOf() (the first one, should the same error escape twice).
      if (typeof listenerError === 'object' && listenerError !== null && listenerError !== error && !handledWhenThrown.has(listenerError)) handledWhenThrown.set(listenerError, error);
      dropSetResponse(event);
      return this.#finishAndThrow(listenerError, request, type);
    }
    const finalError = event.error;
    const response = event.response;
    if (response === null) return this.#finishAndThrow(finalError, request, type);
    hearBody(response.body);
    dropReplaced(event, response);
    // A listener that answered with a non-error status gets the error's own status, unless it asked otherwise.
    if (!event.isAllowingCustomResponseCode() && !response.isClientError() && !response.isServerError() && !response.isRedirect()) {
      if (isHttpError(finalError)) {
        // As on the error page: only an error status is the error's; node refuses some others, and a 2xx would say it worked.
        response.status = isErrorStatus(finalError.status) ? finalError.status : 500;
        // Checked and bounded: a header node:http refuses would make the answer a bare 500, a CR/LF in one split it.
        for (const [name, value] of Object.entries(boundErrorHeaders(headersOf(finalError)).headers)) response.setHeader(name, value);
      } else {
        response.status = 500;
      }
    }
    if (type === RequestType.MAIN) claimBody(response.body);
    // A listener that fails on the error page must not hide it: a failed kernel.response leaves the
    // page unfiltered (as in Symfony), and finish_request still runs once (Symfony skips it).
    const responseEvent = new ResponseEvent(this, request, type, response);
    let filtered = response;
    try {
      const pending = this.dispatcher.dispatch(responseEvent, KernelEvents.RESPONSE);
      if (pending !== responseEvent) await pending;
      filtered = responseEvent.response;
      // As on the way of a response: the pages the listeners replaced are never sent, their stream bodies would stay open.
      const replaced = responseEvent.replacedResponses();
      if (filtered !== response || replaced.length > 0) dropBodies(request, filtered, response, ...replaced);
    } catch {
      // The unfiltered page goes out; the streams listeners put in its place before failing are closed.
      dropBodies(request, response, ...responseEvent.replacedResponses(), responseEvent.response);
    }
    try {
      const finishing = this.#finishRequest(request, type);
      if (finishing !== undefined) await finishing;
    } catch {
      // The page goes out all the same.
    }
    return this.#finalResponse(filtered, request, type);
  }

  /**
   * `kernel.finish_request` on the way out of an error that escapes handle(), then the error. A
   * finish_request listener that fails there too does not put its error in the place of the one
   * escaping (the controller's, or a kernel.exception listener's), as it does not after an error page.
   */
  async #finishAndThrow(error: unknown, request: Request, type: RequestType): Promise<never> {
    try {
      const finishing = this.#finishRequest(request, type);
      if (finishing !== undefined) await finishing;
    } catch {
      // The error that escapes is the one being handled.
    }
    throw error;
  }
}

/** What the main request's answer gets once every kernel.response and kernel.finish_request listener has run: Secure on the cookies set late, and a HEAD's answer its head alone. */
function finishMainResponse(response: Response, request: Request): void {
  if (response.headers['set-cookie'] !== undefined) secureCookies(response, request);
  if (request.method === 'HEAD') withoutHeadBody(response);
}

/** Set on a stream body whose reads run in a request's context: the innermost request that answered with it keeps it. */
const IN_REQUEST_CONTEXT = Symbol('http-kernel.inRequestContext');

/** What keepRequestContext wraps on a stream body. */
interface ContextBoundStream {
  _read?: unknown;
  _destroy?: unknown;
  [IN_REQUEST_CONTEXT]?: true;
}

/**
 * Makes the reads (`_read`) and the destruction (`_destroy`) of a stream body run with the current
 * request stack. The server pulls the body after handle() has returned, outside the request's async
 * context, where a generator or a read() would see no current request and its log records would
 * carry none (Symfony pushes the request again while a StreamedResponse sends its content). The body
 * keeps its identity: its own two methods are wrapped, once. Text and bytes go by at the first test.
 */
function keepRequestContext(response: Response, requestStack: RequestStack): Response {
  const body: unknown = response.body;
  if (typeof body !== 'object' || body === null || body instanceof Uint8Array || !requestStack.tracksAsyncContext) return response;
  const stream = body as ContextBoundStream;
  if (stream[IN_REQUEST_CONTEXT] === true || typeof stream._read !== 'function') return response;
  stream[IN_REQUEST_CONTEXT] = true;
  stream._read = requestStack.bind(stream._read as (...args: unknown[]) => unknown);
  if (typeof stream._destroy === 'function') stream._destroy = requestStack.bind(stream._destroy as (...args: unknown[]) => unknown);
  return response;
}

/**
 * Dispatches kernel.request or kernel.view: a response a listener set before one failed is never
 * sent, and its stream body is destroyed, as on kernel.response (it would stay open, a file's descriptor with it).
 */
function dispatchSetting(dispatcher: EventDispatcher, event: RequestEvent, eventName: string): RequestEvent | Promise<unknown> {
  let pending: RequestEvent | Promise<unknown>;
  try {
    pending = dispatcher.dispatch(event, eventName);
  } catch (error) {
    dropSetResponse(event);
    throw error;
  }
  if (pending === event) return pending;
  return (pending as Promise<unknown>).then(undefined, (error: unknown) => {
    dropSetResponse(event);
    throw error;
  });
}

/** The stream bodies of the responses a listener set on an event whose dispatch failed: never sent, they would stay open. */
function dropSetResponse(event: RequestEvent): void {
  if (event.response !== null) dropBodies(event.request, null, ...event.replacedResponses(), event.response);
}

/** The stream bodies of the responses a listener set and then replaced on kernel.request, kernel.view or kernel.exception: never sent, they would stay open. */
function dropReplaced(event: RequestEvent, kept: Response): void {
  const replaced = event.replacedResponses();
  if (replaced.length > 0) dropBodies(event.request, kept, ...replaced);
}

/**
 * Destroys the stream bodies of responses the kernel drops because kernel.response or finish_request
 * failed (an error page takes their place, and their file or socket would stay open); `kept` is the
 * response sent instead, whose body is spared.
 */
function dropBodies(request: Request, kept: Response | null, ...dropped: Response[]): void {
  for (const response of dropped) {
    if (response !== kept && response.body !== kept?.body) dropBody(request, response.body);
  }
}

/**
 * Refuses a sub-request nested past MAX_SUB_REQUEST_DEPTH, or past MAX_SUB_REQUESTS under the
 * sub-request of the main request it descends from. Both are counted on the request stack, or, when it
 * does not track the current request (no debug, no requestContext), along the duplicate() steps from
 * the main request (the one the client sent, or a duplicate handled as a main request).
 */
function checkSubRequestBounds(request: Request, stack: RequestStack): void {
  // An error page (its `exception` attribute) is let through both: the client sees this error, not the plain
  // page for the error page's failure. It goes one level past the depth, and is made once per failure.
  const errorPage = request.attributes.has('exception');
  const handling = stack.all();
  const depth = Math.max(handling.length, requestInternals.duplicateDepth(request));
  if (depth > (errorPage ? MAX_SUB_REQUEST_DEPTH + 1 : MAX_SUB_REQUEST_DEPTH)) {
    throw new SubRequestTooDeepError(
      `The sub-request for "${request.path}"${madeBy(stack)} would be ${depth} deep, past MAX_SUB_REQUEST_DEPTH (${MAX_SUB_REQUEST_DEPTH}): ` +
        'a controller that makes a sub-request to itself, directly or through others, never stops.',
    );
  }
  if (errorPage || depth < 2) return;
  // The main request's sub-request this one descends from: a runaway (a fragment rendering itself twice) grows under one.
  const fragment = handling.length >= 2 ? handling[1]! : requestInternals.duplicatedAt(request, 1);
  const count = (subRequestCounts.get(fragment) ?? 0) + 1;
  if (count > MAX_SUB_REQUESTS) {
    throw new TooManySubRequestsError(
      `The sub-request for "${request.path}"${madeBy(stack)} would be number ${count} under the sub-request for "${fragment.path}", past MAX_SUB_REQUESTS (${MAX_SUB_REQUESTS}): ` +
        'a fragment that renders itself in more than one place doubles at each level.',
    );
  }
  subRequestCounts.set(fragment, count);
}

/**
 * What a sub-request's records are kept under (see RECORD_OWNERS): its main request, from the request stack, or, when the stack
 * does not track it, along the duplicate() steps; the kernel when neither knows it (a Request.create() sub-request without request context) and
 * a server of the package takes its records, the sub-request itself otherwise (nobody would take them).
 */
function recordOwnerOf(request: Request, stack: RequestStack, kernel: HttpKernel): object {
  const main = stack.all()[0];
  if (main !== undefined && main !== request) return main;
  const root = requestInternals.duplicatedAt(request, 0);
  if (root !== request) return root;
  // Kept under the kernel only for a server that takes them: else under the sub-request itself, let go of with it.
  if (!keepsUnownedBodies(kernel)) return request;
  KERNEL_OWNERS.add(kernel);
  return kernel;
}

/** ` made by route "<name>"` for the request making a sub-request, when the stack knows it and its route. */
function madeBy(stack: RequestStack): string {
  const route = stack.getCurrentRequest()?.attributes.get('_route');
  return typeof route === 'string' ? ` made by route "${route}"` : '';
}

/**
 * Whether a thrown value is a RequestError; false for a value `instanceof` throws on (a Proxy whose
 * getPrototypeOf trap throws), which would otherwise escape the kernel before any error page is made.
 */
function isRequestError(value: unknown): value is RequestError {
  try {
    return value instanceof RequestError;
  } catch {
    return false;
  }
}

function isErrorStatus(status: number): boolean {
  return Number.isInteger(status) && status >= 400 && status <= 599;
}

/** The error's `headers`, or undefined when reading them throws. */
function headersOf(error: HttpError): unknown {
  try {
    return error.headers;
  } catch {
    return undefined;
  }
}

function noResponseMessage(controller: Controller, result: unknown): string {
  const name = controller.name || 'anonymous';
  const hint = result === undefined || result === null ? ' Did you forget to add a return statement somewhere in your controller?' : '';
  // Symfony's wording (its varToString()), with the controller's name: a JavaScript error carries no file and line of it.
  return `The controller "${name}" must return a "Response" object but it returned ${describeResult(result)}.${hint}`;
}

/** What a controller returned, as the no-Response error names it. */
function describeResult(result: unknown): string {
  if (result === undefined || result === null) return String(result);
  if (typeof result === 'string') return `a string ("${result.slice(0, 255)}${result.length > 255 ? '...' : ''}")`;
  if (typeof result === 'function') return `a function (${result.name || 'anonymous'})`;
  if (typeof result === 'boolean') return `a boolean value (${result})`;
  if (typeof result !== 'object') return `a ${typeof result} (${String(result)})`;
  if (Array.isArray(result)) return `an array (${result.length} ${result.length === 1 ? 'item' : 'items'})`;
  // Node has a global Response (the Fetch API's): a controller file that forgot the import makes one of those.
  if (typeof globalThis.Response === 'function' && result instanceof globalThis.Response) {
    return "a Fetch API Response (the global Response, not this kernel's: import { Response } from 'http-kernel')";
  }
  return describeOtherCopy(result, 'Response') ?? `an object of type ${(result as { constructor?: { name?: string } }).constructor?.name || 'Object'}`;
}
