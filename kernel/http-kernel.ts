import { ArgumentResolver, type ArgumentResolverInterface } from './argument-resolver.js';
import type { ControllerResolverInterface } from './controller-resolver.js';
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
import { BadRequestHttpError, ControllerDoesNotReturnResponseError, NotFoundHttpError, RequestError, isHttpError } from './http-errors.js';
import type { Request } from './request.js';
import { RequestStack } from './request-stack.js';
import { Response } from './response.js';

/**
 * Turns a Request into a Response by dispatching the lifecycle events:
 * request → controller → controller_arguments → (view) → response → finish_request,
 * with `exception` for errors, and `terminate` once the response is sent.
 */
export class HttpKernel implements KernelLike {
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
    return this.requestStack.run(request, () => this.#handle(request, type, catchErrors));
  }

  /** Dispatches `kernel.terminate`; call it after the response has been sent. */
  async terminate(request: Request, response: Response): Promise<void> {
    const result = this.dispatcher.dispatch(new TerminateEvent(this, request, response), KernelEvents.TERMINATE);
    if (isPromiseLike(result)) await result;
  }

  async #handle(request: Request, type: RequestType, catchErrors: boolean): Promise<Response> {
    try {
      return await this.#handleRaw(request, type);
    } catch (caught) {
      const error = caught instanceof RequestError ? new BadRequestHttpError(caught.message, { cause: caught }) : caught;
      if (!catchErrors) {
        await this.#finishRequest(request, type);
        throw error;
      }
      return this.#handleError(error, request, type);
    }
  }

  async #handleRaw(request: Request, type: RequestType): Promise<Response> {
    const dispatcher = this.dispatcher;
    const requestEvent = new RequestEvent(this, request, type);
    let pending: unknown = dispatcher.dispatch(requestEvent, KernelEvents.REQUEST);
    if (isPromiseLike(pending)) await pending;
    if (requestEvent.response !== null) return this.#filterResponse(requestEvent.response, request, type);

    let controller = this.controllerResolver.getController(request);
    if (controller === null) {
      throw new NotFoundHttpError(`Unable to find the controller for path "${request.path}". The route is wrongly configured.`);
    }
    const controllerEvent = new ControllerEvent(this, controller, request, type);
    pending = dispatcher.dispatch(controllerEvent, KernelEvents.CONTROLLER);
    if (isPromiseLike(pending)) await pending;
    controller = controllerEvent.controller;

    const argumentsEvent = new ControllerArgumentsEvent(this, controller, this.argumentResolver.getArguments(request, controller), request, type);
    pending = dispatcher.dispatch(argumentsEvent, KernelEvents.CONTROLLER_ARGUMENTS);
    if (isPromiseLike(pending)) await pending;
    controller = argumentsEvent.controller;

    let result = controller(...argumentsEvent.arguments);
    if (isPromiseLike(result)) result = await result;

    if (!(result instanceof Response)) {
      const viewEvent = new ViewEvent(this, request, type, result);
      pending = dispatcher.dispatch(viewEvent, KernelEvents.VIEW);
      if (isPromiseLike(pending)) await pending;
      if (viewEvent.response === null) throw new ControllerDoesNotReturnResponseError(noResponseMessage(controller, result));
      result = viewEvent.response;
    }
    return this.#filterResponse(result as Response, request, type);
  }

  async #filterResponse(response: Response, request: Request, type: RequestType): Promise<Response> {
    const event = new ResponseEvent(this, request, type, response);
    const pending = this.dispatcher.dispatch(event, KernelEvents.RESPONSE);
    if (isPromiseLike(pending)) await pending;
    await this.#finishRequest(request, type);
    return event.response;
  }

  #finishRequest(request: Request, type: RequestType): void | Promise<unknown> {
    const pending = this.dispatcher.dispatch(new FinishRequestEvent(this, request, type), KernelEvents.FINISH_REQUEST);
    return isPromiseLike(pending) ? (pending as Promise<unknown>) : undefined;
  }

  async #handleError(error: unknown, request: Request, type: RequestType): Promise<Response> {
    const event = new ExceptionEvent(this, request, type, error);
    const pending = this.dispatcher.dispatch(event, KernelEvents.EXCEPTION);
    if (isPromiseLike(pending)) await pending;
    const finalError = event.error;
    const response = event.response;
    if (response === null) {
      await this.#finishRequest(request, type);
      throw finalError;
    }
    // A listener that answered with a non-error status gets the error's own status, unless it asked otherwise.
    if (!event.isAllowingCustomResponseCode() && !response.isClientError() && !response.isServerError() && !response.isRedirect()) {
      if (isHttpError(finalError)) {
        response.status = finalError.status;
        for (const [name, value] of Object.entries(finalError.headers)) response.setHeader(name, value);
      } else {
        response.status = 500;
      }
    }
    try {
      return await this.#filterResponse(response, request, type);
    } catch {
      // A response listener that fails on an error page must not hide the original error's page.
      return response;
    }
  }
}

function noResponseMessage(controller: Controller, result: unknown): string {
  const name = controller.name || 'anonymous';
  const what = result === undefined ? 'undefined' : result === null ? 'null' : typeof result === 'object' ? `an object of type ${result.constructor?.name ?? 'Object'}` : `a ${typeof result} (${String(result).slice(0, 40)})`;
  const hint = result === undefined || result === null ? ' Did you forget to add a return statement somewhere in your controller?' : '';
  return `The controller "${name}" must return a Response object but it returned ${what}.${hint}`;
}
