import { ClientClosedError, KernelEvents, RequestTimeoutHttpError, RequestType, boundErrorHeaders, isHttpError, type Controller, type ExceptionEvent, type Request } from '../../kernel/index.js';
import type { Logger } from '../log/index.js';
import { fallbackErrorResponse } from './fallback-error-response.js';
import { flattenError } from './flatten-error.js';

/**
 * Errors some ErrorListener logged, each with the request it logged it for: see ErrorListener.hasLogged.
 * The request is held weakly: an error kept for ever (a constant thrown on every request, a rejected
 * promise cached) must not keep the last request it was logged for, and all that request holds, alive.
 */
const loggedByAny = new WeakMap<object, WeakRef<Request>>();

/**
 * Handles errors that escape the kernel (Symfony's ErrorListener): logs them, then
 * renders the error page through a sub-request to the error controller.
 */
export class ErrorListener {
  /**
   * Whether an ErrorListener logged `error` for `request` (or one of its family): a server that gets
   * it back from handleException() unanswered (no listener set a response) has it on the request's log already.
   */
  static hasLogged(error: unknown, request: Request): boolean {
    if (error === null || (typeof error !== 'object' && typeof error !== 'function')) return false;
    return sameFamily(loggedByAny.get(error), request);
  }

  constructor(
    readonly controller: Controller,
    readonly logger: Logger | null = null,
  ) {}

  /**
   * Errors logged already, each with the request it was last logged for: one that comes back for that
   * request or its sub-requests (the response timeout, rethrown by a late `fetch` given the request's
   * signal) is INFO the second time; one thrown again for another request (a rejected promise kept) is logged at its level.
   * The request is held weakly, as in loggedByAny.
   */
  readonly #loggedFor = new WeakMap<object, WeakRef<Request>>();

  getSubscribedEvents() {
    return {
      [KernelEvents.EXCEPTION]: [
        ['onClientClosed', 128],
        ['logKernelException', 0],
        ['onKernelException', -128],
      ] as const,
    };
  }

  /**
   * Makes an error that follows from the client leaving (the AbortError of a wait on `request.signal`,
   * aborted with a ClientClosedError) a ClientClosedError, the original its cause: a 499, the client's
   * doing, for the listeners after it (those of your own at 0 too), the log, the profile and kernel.terminate.
   * One that follows from the server's request timeout cutting a stalled body (the signal aborted with
   * the RequestTimeoutHttpError whose 408 the server sent) becomes that 408 in the same way.
   */
  onClientClosed(event: ExceptionEvent): void {
    const error = event.error;
    if (isClientClosed(error)) return;
    const reason = abortReasonBehind(error, event.request);
    if (isClientClosed(reason)) event.setError(new ClientClosedError({ cause: error }));
    else if (reason instanceof RequestTimeoutHttpError && error !== reason) event.setError(new RequestTimeoutHttpError(reason.message, { cause: error }));
  }

  /**
   * Logs the error: INFO for a client that left (ClientClosedError, a 499: no fault of the server's
   * nor of the request) and for the AbortError of a wait on `request.signal` aborted otherwise (the
   * response timeout, logged already) or an error logged before for the same request (the ResponseTimeoutError a late `fetch`
   * given the signal rethrows), ERROR for other client errors (4xx), CRITICAL for everything else; and, once, as a
   * WARNING, the error's own headers its response goes without (see boundErrorHeaders).
   */
  logKernelException(event: ExceptionEvent): void {
    if (this.logger === null) return;
    const error = event.error;
    const [flat] = flattenError(error);
    // The status the error page is sent with (flattenError also reads `statusCode`, as http-errors and Fastify set it).
    const status = flat?.status ?? 500;
    const frame = flat?.frames.find((f) => f.file !== null);
    const message = 'Uncaught error: {class}: "{message}" at {file} line {line}';
    const context = { class: flat?.class ?? 'Error', message: flat?.message ?? String(error), file: frame?.file ?? 'unknown', line: frame?.line ?? 0, exception: error };
    if (isClientClosed(error) || abortReasonBehind(error, event.request) !== undefined || this.#loggedBefore(error, event.request)) this.logger.info(message, context);
    else if (status >= 400 && status < 500) this.logger.error(message, context);
    else this.logger.critical(message, context);
    if (error !== null && (typeof error === 'object' || typeof error === 'function')) loggedByAny.set(error, new WeakRef(event.request));
    // Only an HttpError's headers are ever used (see flattenError): another error's are not reported.
    const { dropped, droppedCount } = boundErrorHeaders(isHttpError(error) ? headersOf(error) : undefined);
    if (droppedCount > 0) {
      this.logger.warning('{count} of the headers of {class} left out of its response: {names}', {
        count: droppedCount,
        class: context.class,
        names: dropped.map((header) => `${header.name} (${header.reason})`).join(', ') + (droppedCount > dropped.length ? `, and ${droppedCount - dropped.length} more` : ''),
        dropped,
      });
    }
  }

  /** Whether the error was logged before for this request or one of its family (and remembers it now); false for a value that is no object. */
  #loggedBefore(error: unknown, request: Request): boolean {
    if (error === null || (typeof error !== 'object' && typeof error !== 'function')) return false;
    if (sameFamily(this.#loggedFor.get(error), request)) return true;
    this.#loggedFor.set(error, new WeakRef(request));
    return false;
  }

  /**
   * Renders the error page in a sub-request and makes it the response. When that fails (the error
   * controller throws or answers no Response), the failure is logged as CRITICAL with the original
   * error beside it, and the plain page (problem+json for JSON clients) goes out with the original
   * error's status and headers: never a bare 500, and never another sub-request that could fail the same way.
   */
  async onKernelException(event: ExceptionEvent): Promise<void> {
    const request = event.request;
    try {
      const subRequest = request.duplicate({ method: 'GET', attributes: { _controller: this.controller, exception: event.error } });
      const response = await event.kernel.handle(subRequest, RequestType.SUB, false);
      event.setResponse(response);
    } catch (renderError) {
      this.#logRenderingFailure(renderError, event.error);
      event.setResponse(fallbackErrorResponse(event.error, request));
    }
  }

  #logRenderingFailure(renderError: unknown, original: unknown): void {
    if (this.logger === null) return;
    const [failure] = flattenError(renderError);
    const [cause] = flattenError(original);
    // The same error made again is most often a kernel.request listener refusing the error page's sub-request as it refused the request
    // (an authentication check written as Express middleware, which runs once per request): say how to keep it to main requests. The very
    // error object is an error controller of the app throwing what it was given, with no listener to point to (and no cost on every request
    // to tell the two apart by where the sub-request failed).
    const again = renderError !== original && failure !== undefined && cause !== undefined && failure.class === cause.class && failure.message === cause.message;
    const hint = again ? ': its sub-request met the same error; a kernel.request listener that refuses requests returns first thing for sub-requests (if (!event.isMainRequest()) return)' : '';
    this.logger.critical(`The error page failed ({class}: "{message}"), so the plain page was sent for {original_class}: "{original_message}"${hint}`, {
      class: failure?.class ?? 'Error',
      message: failure?.message ?? '',
      original_class: cause?.class ?? 'Error',
      original_message: cause?.message ?? '',
      exception: renderError,
      original_exception: original,
    });
  }
}

/**
 * Whether `logged` (the request an error was logged for, held weakly) is `request` or of its family: a
 * sub-request shares its main request's signal, read only for an error seen before, so that no other
 * request makes one. A request collected since matches none: only a sub-request can be collected before
 * its family (it holds its main request, not the reverse), and an error that escapes the main request
 * is logged for that one by its own kernel.exception.
 */
function sameFamily(logged: WeakRef<Request> | undefined, request: Request): boolean {
  const before = logged?.deref();
  return before !== undefined && (before === request || before.signal === request.signal);
}

/** The error's `headers`, or undefined when it has none or reading them throws. */
function headersOf(error: unknown): unknown {
  try {
    return error !== null && typeof error === 'object' ? (error as { headers?: unknown }).headers : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The reason `request.signal` was aborted with, when `error` is what a wait on it rejected with: an
 * AbortError while the signal is aborted, or an error whose cause is a ClientClosedError or the
 * signal's RequestTimeoutHttpError itself (node:timers/promises and streams name the reason as the
 * cause, and so does an error of yours wrapping it). Undefined otherwise, and for whatever cannot
 * be read (a throwing getter, a Proxy).
 */
function abortReasonBehind(error: unknown, request: Request): unknown {
  let name: unknown;
  let cause: unknown;
  try {
    if (error === null || typeof error !== 'object') return undefined;
    cause = (error as { cause?: unknown }).cause;
    if (cause instanceof ClientClosedError) return cause;
    name = (error as { name?: unknown }).name;
  } catch {
    return undefined;
  }
  // An application's own 408 as a cause is not the server's: only the very reason the signal was aborted with.
  if (name !== 'AbortError' && !(cause instanceof RequestTimeoutHttpError)) return undefined;
  // Read only now: the signal of a request that never read it is made here.
  const signal = request.signal;
  if (!signal.aborted) return undefined;
  return name === 'AbortError' || signal.reason === cause ? signal.reason : undefined;
}

/** Whether `error` is a ClientClosedError; false for what cannot be asked (a Proxy whose traps throw). */
function isClientClosed(error: unknown): boolean {
  try {
    return error instanceof ClientClosedError;
  } catch {
    return false;
  }
}
