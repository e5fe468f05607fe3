import { describeOtherCopy, describeValue } from './describe-value.js';
import type { Request } from './request.js';
import { Response } from './response.js';
import { hearBody } from './response-body.js';

/** The kernel's lifecycle events, in the order they fire. */
export const KernelEvents = {
  /** First event of `handle()`: a listener may set a response (routing, security, CORS preflight...). */
  REQUEST: 'kernel.request',
  /** Once the controller is resolved: a listener may replace it. */
  CONTROLLER: 'kernel.controller',
  /** Once the controller's arguments are resolved: a listener may replace them. */
  CONTROLLER_ARGUMENTS: 'kernel.controller_arguments',
  /** When the controller returned something other than a Response: a listener turns it into one. */
  VIEW: 'kernel.view',
  /** When a response is ready: listeners may change it (headers, cookies, toolbar). */
  RESPONSE: 'kernel.response',
  /** After the response event, or when a request ends in an error: lets listeners reset request state. */
  FINISH_REQUEST: 'kernel.finish_request',
  /** When an error escapes: a listener may turn it into a response. */
  EXCEPTION: 'kernel.exception',
  /** After the response has been sent: slow work (saving the profile) goes here. */
  TERMINATE: 'kernel.terminate',
} as const;

/** The kind of request being handled. */
export const RequestType = {
  /** The request the client sent. */
  MAIN: 1,
  /** A request the application made while handling another (error pages, fragments). */
  SUB: 2,
} as const;
export type RequestType = (typeof RequestType)[keyof typeof RequestType];

/** Base event: can stop further listeners from being called. */
export class Event {
  /** True once a listener called stopPropagation() (absent until then). */
  propagationStopped?: boolean;

  /** Stops the remaining listeners of this dispatch from being called. */
  stopPropagation(): void {
    this.propagationStopped = true;
  }

  isPropagationStopped(): boolean {
    return this.propagationStopped === true;
  }
}

/** The minimal view of the kernel that events expose (breaks the import cycle with http-kernel.ts). */
export interface KernelLike {
  handle(request: Request, type?: RequestType, catchErrors?: boolean): Promise<Response>;
}

/**
 * Passed by the kernel's own event classes, whose constructors store the kernel, request, request
 * type and propagation flag themselves. A property store in a base constructor is one site shared
 * by every subclass: it sees one object shape per subclass, V8 makes it megamorphic, and the
 * kernel's six events per request spent about 190 ns in such stores, a third of its own cost.
 */
const OWN_FIELDS = Symbol('the subclass stores the fields');

/** KernelEvent's fields, writable: for the constructors that store them (see OWN_FIELDS). */
type KernelEventFields = { kernel: KernelLike; request: Request; requestType: RequestType; propagationStopped: boolean };

/** Base of every kernel event: the kernel, the request and whether it is the main one. */
export class KernelEvent extends Event {
  declare readonly kernel: KernelLike;
  declare readonly request: Request;
  declare readonly requestType: RequestType;

  /** `ownFields` is internal: the kernel's own events pass it (see OWN_FIELDS). */
  constructor(kernel: KernelLike, request: Request, requestType: RequestType, ownFields?: typeof OWN_FIELDS) {
    super();
    if (ownFields !== OWN_FIELDS) {
      const self = this as unknown as KernelEventFields;
      self.kernel = kernel;
      self.request = request;
      self.requestType = requestType;
    }
  }

  isMainRequest(): boolean {
    return this.requestType === RequestType.MAIN;
  }
}

/**
 * What setResponse() replaced, on the event from its first replacement on: a field every event
 * would carry cost each request's construction, where replacing a response is rare.
 */
const REPLACED = Symbol('replaced responses');
type Replacing = { [REPLACED]?: Response[] };

const NONE_REPLACED: readonly Response[] = Object.freeze([]);

/** Lists `replaced` as replaced on `event` (RequestEvent's and ResponseEvent's setResponse()). */
function recordReplaced(event: KernelEvent, replaced: Response): void {
  ((event as Replacing)[REPLACED] ??= []).push(replaced);
}

/** What setResponse() replaced on `event`, oldest first. */
function replacedOn(event: KernelEvent): readonly Response[] {
  return (event as Replacing)[REPLACED] ?? NONE_REPLACED;
}

/** `kernel.request`: setting a response stops propagation and skips the controller. */
export class RequestEvent extends KernelEvent {
  /**
   * The response a listener set, if any. Read-only: setResponse() sets it and stops propagation, as
   * Symfony's does; an assignment would let the listeners after it (the router, a firewall) run all the same.
   */
  readonly response: Response | null;

  constructor(kernel: KernelLike, request: Request, requestType: RequestType) {
    super(kernel, request, requestType, OWN_FIELDS);
    const self = this as unknown as KernelEventFields;
    self.propagationStopped = false;
    self.kernel = kernel;
    self.request = request;
    self.requestType = requestType;
    this.response = null;
  }

  /** Sets the response and stops propagation; a response it replaces is destroyed by the kernel once the listener is done (see replacedResponses()). */
  setResponse(response: Response): void {
    checkResponse(this, response);
    // Stopped propagation leaves only the same listener to set another: rare, so listed only then.
    if (this.response !== null && response !== this.response) recordReplaced(this, this.response);
    (this as { response: Response | null }).response = response;
    // Its stream may fail while the listener that set it awaits: heard from now on (see hearBody).
    hearBody(response.body);
    this.stopPropagation();
  }

  hasResponse(): boolean {
    return this.response !== null;
  }

  /** The responses setResponse() replaced, oldest first: none of them is sent, unless set again. */
  replacedResponses(): readonly Response[] {
    return replacedOn(this);
  }
}

/**
 * Refuses what is no Response at setResponse() (Symfony's type hint), naming the listener's event:
 * handle() would otherwise answer with it, and the failure come where it is sent.
 */
function checkResponse(event: Event, response: unknown): void {
  if (response instanceof Response) return;
  const what =
    typeof globalThis.Response === 'function' && response instanceof globalThis.Response
      ? "the Fetch API's Response (the global one): import { Response } from 'http-kernel'"
      : (describeOtherCopy(response, 'Response') ?? describeValue(response));
  throw new TypeError(`${event.constructor.name}.setResponse() takes a Response, not ${what}.`);
}

/** Refuses a controller that is no function at setController(), rather than when it is called. */
function checkController(event: Event, controller: unknown): void {
  if (typeof controller !== 'function') throw new TypeError(`${event.constructor.name}.setController() takes a function, not ${describeValue(controller)}.`);
}

/** A controller: receives the resolved arguments (by default the request and the route parameters). */
export type Controller = (...args: any[]) => unknown;

/** `kernel.controller`: the controller about to be called; listeners may replace it. */
export class ControllerEvent extends KernelEvent {
  constructor(
    kernel: KernelLike,
    public controller: Controller,
    request: Request,
    requestType: RequestType,
  ) {
    super(kernel, request, requestType, OWN_FIELDS);
    const self = this as unknown as KernelEventFields;
    self.propagationStopped = false;
    self.kernel = kernel;
    self.request = request;
    self.requestType = requestType;
  }

  setController(controller: Controller): void {
    checkController(this, controller);
    this.controller = controller;
  }
}

/** `kernel.controller_arguments`: the controller and its arguments; listeners may replace either. */
export class ControllerArgumentsEvent extends KernelEvent {
  #arguments: unknown[];

  constructor(
    kernel: KernelLike,
    public controller: Controller,
    args: unknown[],
    request: Request,
    requestType: RequestType,
  ) {
    super(kernel, request, requestType, OWN_FIELDS);
    const self = this as unknown as KernelEventFields;
    self.propagationStopped = false;
    self.kernel = kernel;
    self.request = request;
    self.requestType = requestType;
    this.#arguments = args;
  }

  get arguments(): unknown[] {
    return this.#arguments;
  }

  setArguments(args: unknown[]): void {
    // A string would be spread into its characters, an object into nothing.
    if (!Array.isArray(args)) throw new TypeError(`ControllerArgumentsEvent.setArguments() takes an array of arguments, not ${describeValue(args)}.`);
    this.#arguments = args;
  }

  setController(controller: Controller): void {
    checkController(this, controller);
    this.controller = controller;
  }
}

/** `kernel.view`: the controller returned a non-Response value; a listener should set a response. */
export class ViewEvent extends RequestEvent {
  constructor(
    kernel: KernelLike,
    request: Request,
    requestType: RequestType,
    public controllerResult: unknown,
  ) {
    super(kernel, request, requestType);
  }
}

/** `kernel.exception`: an error escaped; a listener may set a response or replace the error. */
export class ExceptionEvent extends RequestEvent {
  #allowCustomResponseCode: boolean;

  constructor(
    kernel: KernelLike,
    request: Request,
    requestType: RequestType,
    public error: unknown,
  ) {
    super(kernel, request, requestType);
    this.#allowCustomResponseCode = false;
  }

  setError(error: unknown): void {
    this.error = error;
  }

  /** Keep the response's own status even when it is not an error status. */
  allowCustomResponseCode(): void {
    this.#allowCustomResponseCode = true;
  }

  isAllowingCustomResponseCode(): boolean {
    return this.#allowCustomResponseCode;
  }
}

/** `kernel.response`: the response about to be returned; listeners may change or replace it. */
export class ResponseEvent extends KernelEvent {
  #response: Response;

  constructor(kernel: KernelLike, request: Request, requestType: RequestType, response: Response) {
    super(kernel, request, requestType, OWN_FIELDS);
    const self = this as unknown as KernelEventFields;
    self.propagationStopped = false;
    self.kernel = kernel;
    self.request = request;
    self.requestType = requestType;
    this.#response = response;
  }

  /**
   * The response to send. Assigning it is setResponse(): the response it replaces is remembered, so
   * that its stream body is destroyed, whether one listener or several replaced it on the way.
   */
  get response(): Response {
    return this.#response;
  }

  set response(response: Response) {
    this.setResponse(response);
  }

  /**
   * Replaces the response. Once the listeners are done, the kernel destroys the stream body of each
   * response replaced on the way (a listener that then fails brings the replaced one back, body and all).
   */
  setResponse(response: Response): void {
    checkResponse(this, response);
    if (response !== this.#response) recordReplaced(this, this.#response);
    hearBody(response.body);
    this.#response = response;
  }

  /** The responses setResponse() replaced, oldest first: none of them is sent, unless set again. */
  replacedResponses(): readonly Response[] {
    return replacedOn(this);
  }
}

/** `kernel.finish_request`: the request is done (with a response or an error). */
export class FinishRequestEvent extends KernelEvent {
  constructor(kernel: KernelLike, request: Request, requestType: RequestType) {
    super(kernel, request, requestType, OWN_FIELDS);
    const self = this as unknown as KernelEventFields;
    self.propagationStopped = false;
    self.kernel = kernel;
    self.request = request;
    self.requestType = requestType;
  }
}

/** `kernel.terminate`: the response has been sent. */
export class TerminateEvent extends KernelEvent {
  constructor(
    kernel: KernelLike,
    request: Request,
    readonly response: Response,
  ) {
    super(kernel, request, RequestType.MAIN, OWN_FIELDS);
    const self = this as unknown as KernelEventFields;
    self.propagationStopped = false;
    self.kernel = kernel;
    self.request = request;
    self.requestType = RequestType.MAIN;
  }
}

/**
 * The event class each kernel event is dispatched with, by name: what `addListener()` gives a
 * listener of `KernelEvents.VIEW` (a ViewEvent), and refuses a listener of another class for.
 */
export interface KernelEventMap {
  'kernel.request': RequestEvent;
  'kernel.controller': ControllerEvent;
  'kernel.controller_arguments': ControllerArgumentsEvent;
  'kernel.view': ViewEvent;
  'kernel.response': ResponseEvent;
  'kernel.finish_request': FinishRequestEvent;
  'kernel.exception': ExceptionEvent;
  'kernel.terminate': TerminateEvent;
}
