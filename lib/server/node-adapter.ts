import { EventEmitter } from 'node:events';
import { STATUS_CODES, validateHeaderName, validateHeaderValue, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import { ClientClosedError, HttpKernel, ResponseBodyDestroyedError, discardedBody, isHttpError, KernelEvents, Request, RequestTimeoutHttpError, Response, ResponseNotSendableError, ResponseTimeoutError, ServiceUnavailableHttpError, abortRequest, describeController, checkBodyLimit, compileTrustedHosts, isPromiseLike, type TrustHost, type TrustProxy, type TrustedHost } from '../../kernel/index.js';
import { DROPPED, checkResponseBody, claimedSinceTaken, destroyBody, failedUnheard, handedBackBodies, hearBody, onHeardFailure, onLateRecords, takeUnownedBodies, takesUnownedBodies } from '../../kernel/response-body.js';
import { describeDuration } from '../../kernel/describe-duration.js';
import { describeValue } from '../../kernel/describe-value.js';
import { isPlainObject } from '../../kernel/name-value-object.js';
import { connectionClosedError, serverCut } from '../../kernel/server-cut.js';
import { compileAddressList } from '../http/address-list.js';
import type { Logger } from '../log/index.js';
import { ErrorListener, flattenError, statusText } from '../errors/index.js';
import { ERROR_PAGE_GRACE_MS, MAX_TIMER_MS, answersExpectContinue, answersResponseTimeout, hearsRefusals, type Refusal } from './listen.js';
import { bodySource, isBodyFailure } from './body-source.js';
import { ChunkTypeGuard, ContentLengthGuard, chunkTypeError, frameResponse } from './response-framing.js';

/** How requests are read from node:http. */
export interface RequestListenerOptions {
  /** Proxies allowed to set X-Forwarded-* (CIDR list like `['10.0.0.0/8', 'loopback']`, or a function). */
  trustedProxies?: readonly string[] | TrustProxy;
  /**
   * Hosts a request may name (see TrustedHost for the syntax, or a function); others are a 400 where the host is read.
   * With a kernel of your own, add ValidateHostListener too: a listener that answers before anything reads the host answers any host. Default every host.
   */
  trustedHosts?: readonly TrustedHost[] | TrustHost;
  /** Largest request body, in bytes (default 1 MiB). */
  bodyLimit?: number;
  /** Where failures that no listener handled are logged. */
  logger?: Logger;
  /**
   * The page for an error that escaped `kernel.handle()` (a `kernel.exception` listener that threw,
   * or none that answered), once it is logged CRITICAL. Default: a bare text of the error's status
   * and reason phrase, with its own headers (`Not Found` for a 404, `Internal Server Error` for an
   * error without a status); a bare 500 is sent when this throws or gives no Response, and, logged, when its promise
   * has not settled half a second on (ERROR_PAGE_GRACE_MS in listen.ts). createKernel gives its error
   * page, as Symfony's ErrorHandler renders what escapes its kernel. Either way `kernel.terminate`
   * follows, with the Response sent.
   */
  unhandled?: (error: unknown, request: Request) => Response | Promise<Response>;
  /**
   * How long, in milliseconds, `kernel.terminate` waits for a stream body's clean-up (its `close`)
   * after the body ended or lost its client, so that what the clean-up logs is in the profile;
   * default 5,000. While `settled()` is awaited, these waits keep the process alive.
   */
  bodyCloseWaitMs?: number;
}

/** A node:http request listener; `responseTimeout` as startServers hands it (see RequestListener in listen.ts). */
export type NodeRequestListener = (req: IncomingMessage, res: ServerResponse, responseTimeout?: number) => void;

/** createRequestListener's listener. */
export interface KernelRequestListener extends NodeRequestListener {
  /**
   * Resolves once every request whose stream body was still being sent, or closing, has been
   * terminated, and every `kernel.terminate` still running (an async listener) has settled: await it
   * after the server has closed and before the profiler's storage is (app.close() does).
   */
  settled(): Promise<void>;
}

const LISTENER_OPTIONS: readonly string[] = ['trustedProxies', 'trustedHosts', 'bodyLimit', 'logger', 'unhandled', 'bodyCloseWaitMs'];

/**
 * Refuses a kernel or options createRequestListener() (or `caller`, with its `own` options besides) would fail on later, or misread:
 * a typo (`bodylimit`) would leave the default limit on.
 */
export function checkListenerArguments(kernel: unknown, options: unknown, caller = 'createRequestListener()', own: readonly string[] = []): void {
  if (!(kernel instanceof HttpKernel)) throw new TypeError(`${caller} serves an HttpKernel (new HttpKernel(dispatcher, resolver), or createKernel()'s app.kernel), not ${describeValue(kernel)}.`);
  if (!isPlainObject(options)) throw new TypeError(`${caller} takes a plain object of options ({ trustedProxies, bodyLimit }), not ${describeValue(options)}.`);
  const known = [...LISTENER_OPTIONS, ...own];
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw new TypeError(`${caller} has no option "${key}"; its options are ${known.join(', ')}.`);
  }
}

/** What a Request is read with (trusted proxies and hosts, body limit): one place, so that the server and inject() never read requests apart. */
export interface RequestReadOptions {
  trustProxy: TrustProxy | null;
  trustHost: TrustHost | null;
  bodyLimit: number | undefined;
}

/** The listener options' trustedProxies, trustedHosts and bodyLimit, compiled and checked once, as every request is read with them. */
export function requestReadOptions(options: Pick<RequestListenerOptions, 'trustedProxies' | 'trustedHosts' | 'bodyLimit'>): RequestReadOptions {
  const trustHost = options.trustedHosts === undefined || typeof options.trustedHosts === 'function' ? (options.trustedHosts ?? null) : compileTrustedHosts(options.trustedHosts);
  return { trustProxy: compileTrust(options.trustedProxies), trustHost, bodyLimit: options.bodyLimit === undefined ? undefined : checkBodyLimit(options.bodyLimit) };
}

/** Logs a stream body's clean-up that failed after its last chunk: at ERROR, as the client got its whole answer (the server's line and inject()'s). */
export function logCleanupFailure(logger: Logger | undefined, error: unknown): void {
  logger?.error('The response body stream failed in its clean-up, after its last chunk: {message}', { message: messageOf(error), error });
}

/**
 * Logs the error of a stream body never read (a HEAD's, or one prepare() took from a 204 or 304) that failed before or in its
 * clean-up: the answer went out whole without it, and the kernel's hearer (see hearBody) keeps node from ending the process
 * on it, so this is its one record. At ERROR, as a clean-up failure: the client got its answer.
 */
export function logUnsentBodyFailure(logger: Logger | undefined, body: object): void {
  const error = (body as { errored?: unknown }).errored;
  if (error !== null && error !== undefined) logger?.error('The response body stream, not sent, failed: {message}', { message: messageOf(error), error });
}

/** Logs the failure of a stream body a sub-request handed back that nobody but the kernel heard (see failedUnheard()): at ERROR, as one not sent. */
export function logUnheardBodyFailure(logger: Logger | undefined, body: object): void {
  if (!failedUnheard(body)) return;
  const error = (body as { errored?: unknown }).errored;
  logger?.error('The response body stream of a sub-request failed with nobody listening: {message}', { message: messageOf(error), error });
}

/** The stream bodies logDroppedBodies() has listened to: each is said once, however often its request terminates. */
const SAID_DROPPED = new WeakSet<object>();

/**
 * Logs, as logUnsentBodyFailure() does and for `request`, the failure of each stream body the kernel dropped while handling it or
 * its sub-requests (a response a listener replaced, see droppedBodies()), once it has closed (or, built with `emitClose: false`,
 * failed): the kernel's hearer keeps node from ending the process on it. So too the failure of a stream body one of its
 * sub-requests handed back that nobody but the kernel heard (logUnheardBodyFailure()), however late. Those the kernel could
 * not tell the main request of (no request context) are said at any request's terminate, outside any request.
 * Made once per server (or inject()): a request's terminate with nothing to say (GET /health) makes nothing, no closure nor array.
 */
export function droppedBodiesLog(kernel: HttpKernel, logger: Logger | undefined): (request: Request) => void {
  // A sub-request made once it has terminated (from a timer) keeps its records under it all the same: said as they come, once the
  // code that made it has had its turn with its answer (a stream failed as it was answered emits its 'error' after it: see failedUnheard()).
  const late = (request: Request): void => void setImmediate(log, request);
  const log = (request: Request): void => logDroppedBodies(kernel, logger, request, late);
  return log;
}

// Makes no closure itself (V8 would make the context of one at every call): those that say are made by the two below, when there is something to say.
function logDroppedBodies(kernel: HttpKernel, logger: Logger | undefined, request: Request, late: (request: Request) => void): void {
  const dropped = DROPPED.get(request);
  const handedBack = handedBackBodies(request);
  if (dropped !== undefined || handedBack.length > 0) watchKept(kernel, logger, request, dropped ?? [], handedBack);
  // Taken only by a server that can log them: another of the kernel's, or inject(), with a logger says them (see takesUnownedBodies()).
  if (logger !== undefined) {
    const unowned = takeUnownedBodies(kernel);
    if (unowned.dropped.length > 0 || unowned.handedBack.length > 0) watchUnowned(kernel, logger, unowned.dropped, unowned.handedBack);
  }
  onLateRecords(request, late);
}

/** Says, for `request`, how its records end (see logDroppedBodies()). */
function watchKept(kernel: HttpKernel, logger: Logger | undefined, request: Request, dropped: readonly Readable[], handedBack: readonly Readable[]): void {
  const inRequest = (say: () => void) => (): void => kernel.requestStack.run(request, say);
  for (const body of dropped) whenEnded(body, inRequest(() => logUnsentBodyFailure(logger, body)));
  for (const body of handedBack) whenEnded(body, inRequest(() => logUnheardBodyFailure(logger, body)));
}

/** Says, outside any request, how the records kept under the kernel end (see logDroppedBodies()). */
function watchUnowned(kernel: HttpKernel, logger: Logger | undefined, dropped: readonly Readable[], handedBack: readonly Readable[]): void {
  const outside = (say: () => void) => (): void => kernel.requestStack.exit(say);
  for (const body of dropped) whenEnded(body, outside(() => logUnsentBodyFailure(logger, body)));
  // One a main request answers with after all (a forward still in its kernel.response) is its server's to log, or, dropped by that request
  // (a kernel.response listener replaced it), that request's terminate's: followed apart (SAID_TAKEN), so that terminate still follows it.
  for (const body of handedBack) whenEnded(body, outside(() => void (claimedSinceTaken(body) || logUnheardBodyFailure(logger, body))), SAID_TAKEN);
}

/** The handed-back stream bodies logDroppedBodies() took from the kernel's records and listens to (see watchUnowned()). */
const SAID_TAKEN = new WeakSet<object>();

/** Calls `say` once the stream body has closed, or failed (a stream built with `emitClose: false` emits no 'close'); once for each body (in `followed`). */
function whenEnded(body: Readable, say: () => void, followed = SAID_DROPPED): void {
  if (followed.has(body)) return;
  followed.add(body);
  const emitter = body instanceof EventEmitter;
  // An EventEmitter whose own once is no function (a wrapper that hides it) is listened to all the same: said now, its failure to come was said by nobody.
  if (body.closed || (!emitter && typeof (body as { once?: unknown }).once !== 'function')) return say();
  let said = false;
  const once = (): void => {
    if (said) return;
    said = true;
    say();
  };
  // Through EventEmitter's own once() when it is one (every node stream), as the kernel hears it: a stream whose once() is its own
  // (one that throws) would throw out of its request's terminate, and end the process. One of another kind that refuses is said now.
  if (emitter) EventEmitter.prototype.once.call(body, 'close', once);
  else {
    try {
      (body as { once(event: string, listener: () => void): unknown }).once('close', once);
    } catch {
      return say();
    }
  }
  onHeardFailure(body, once);
}

/** Logs a request refused before it reached the kernel (it has no profile): at ERROR, as any refusal of what a client sent (the server's line and inject()'s). */
export function logRefusal(logger: Logger | undefined, { status, reason, client }: Refusal): void {
  logger?.error('A request was refused before it reached the kernel: {status} {statusText}: {reason}', { status, statusText: STATUS_CODES[status], reason, client });
}

/** Logs a kernel.terminate that failed, in the request's context, as its listeners ran: the record is the request's (its stderr line). */
export function logTerminateFailure(kernel: HttpKernel, logger: Logger | undefined, request: Request, error: unknown): void {
  kernel.requestStack.run(request, () => logger?.critical('kernel.terminate failed: {message}', { message: messageOf(error), error }));
}

/** The status of the bare answer sent in place of the page of `error` that is not ready in time: the error's own, when it is an HTTP error status, else 500. */
export function bareStatusOf(error: unknown): number {
  return isHttpError(error) && error.status >= 400 && error.status <= 599 ? error.status : 500;
}

/** Logs, CRITICAL and as the request's, that the page of `error` was not ready within ERROR_PAGE_GRACE_MS; `what` says what went instead. */
export function logPageNotReady(kernel: HttpKernel, logger: Logger | undefined, request: Request, error: unknown, status: number, what: string): void {
  kernel.requestStack.run(request, () => logger?.critical(`The error page was not ready within {ms} ms, ${what} for {message}`, { ms: ERROR_PAGE_GRACE_MS, status, message: messageOf(error), error }));
}

/**
 * Logs the failure of the page of `error` that came after ERROR_PAGE_GRACE_MS, the bare answer
 * given instead: the grace's CRITICAL line said the page was not ready, not why. At ERROR, as the
 * request's; not when the failure is `error` itself (no listener answered it), named by that line already.
 */
export function logLatePageFailure(kernel: HttpKernel, logger: Logger | undefined, request: Request, error: unknown, failure: unknown): void {
  if (failure === error) return;
  kernel.requestStack.run(request, () => logger?.error('The error page, given up on after {ms} ms, failed later: {message} (the page was for {for})', { ms: ERROR_PAGE_GRACE_MS, message: messageOf(failure), for: messageOf(error), error: failure }));
}

/**
 * Logs an error that escaped kernel.handle() (CRITICAL, in the request's context, unless the error
 * listener's record names it already) and gives its page: `unhandled`'s (a Response, or anything
 * else, which gets the bare 500, or a promise of either), the bare 500 when that throws, the error's
 * bare answer without `unhandled`. The server's and inject()'s answer to such an error.
 */
export function escapedPage(kernel: HttpKernel, options: Pick<RequestListenerOptions, 'logger' | 'unhandled'>, request: Request, error: unknown): unknown {
  const { logger, unhandled } = options;
  logEscaped(kernel, logger, request, error);
  if (unhandled === undefined) return bareAnswerOf(error);
  try {
    return unhandled(error, request);
  } catch {
    return bareAnswer();
  }
}

/**
 * Logs an error that escaped the kernel (handle(), or handleException() for an error raised outside it), CRITICAL
 * and as the request's, unless the error listener's record names it already: with the error a kernel.exception
 * listener was handling when it threw it (see HttpKernel.handledErrorOf), which reached neither the listeners after it nor the page.
 */
export function logEscaped(kernel: HttpKernel, logger: Logger | undefined, request: Request, error: unknown): void {
  // The error the failing listener was handling reached neither the listeners after it nor the page: the record names it.
  const handled = HttpKernel.handledErrorOf(error);
  // The error itself, no listener having answered it (one stopped the others): the error listener's record names it already.
  if (handled === undefined && ErrorListener.hasLogged(error, request)) return;
  kernel.requestStack.run(request, () =>
    handled === undefined
      ? logger?.critical('Unhandled error: {message}', { message: messageOf(error), error })
      : logger?.critical('Unhandled error: {message} (thrown by a kernel.exception listener while handling {handled})', { message: messageOf(error), error, handled: messageOf(handled), handledError: handled }),
  );
}

/**
 * Whether the error listener's record of `error` for the request names a stream body failing with it (the server's and
 * inject()'s): logged at CRITICAL, not a client error's (4xx) at ERROR, which tells of no bare 500 nor cut answer.
 */
export function loggedAsServerError(error: unknown, request: Request): boolean {
  if (!ErrorListener.hasLogged(error, request)) return false;
  try {
    // The status the error listener logs it by (see logKernelException).
    const status = flattenError(error, { maxErrors: 1 })[0]?.status ?? 500;
    return status < 400 || status >= 500;
  } catch {
    return false;
  }
}

/**
 * Mounts a kernel on node:http / node:https: each request goes through
 * `kernel.handle()`, the response is written, then `kernel.terminate()` runs.
 */
export function createRequestListener(kernel: HttpKernel, options: RequestListenerOptions = {}): KernelRequestListener {
  checkListenerArguments(kernel, options);
  // Its terminates log the records of the sub-requests whose main request the kernel cannot know (see logDroppedBodies()), given a logger to log them to.
  if (options.logger !== undefined) takesUnownedBodies(kernel);
  // Checked here, once, rather than by the first request's Request.
  const readOptions = requestReadOptions(options);
  const closeWaits = bodyCloseWaits(options);
  const logger = options.logger;
  const dispatcher = kernel.dispatcher;

  const terminateFailed = (request: Request, error: unknown): void => logTerminateFailure(kernel, logger, request, error);

  // Stream bodies sent (or closing) whose request has not terminated yet, kernel.terminate dispatches still
  // running (an async listener), and who waits for none to be left.
  let openBodies = 0;

  const logDroppedBodies = droppedBodiesLog(kernel, logger);

  // After the response is handed to the socket: slow work (profile saving) is off the client's path.
  // An asynchronous kernel.terminate is counted until it settles: settled() (app.close()) waits for it,
  // or the profiler's storage closed before the profile of a request answered a moment ago was queued.
  const terminate = (request: Request, response: Response): void => {
    logDroppedBodies(request);
    if (!dispatcher.hasListeners(KernelEvents.TERMINATE)) return;
    try {
      const done = kernel.terminateMaybeAsync(request, response);
      if (done === undefined) return;
      openBodies++;
      done.then(bodyTerminated, (error: unknown) => {
        try {
          terminateFailed(request, error);
        } finally {
          bodyTerminated();
        }
      });
    } catch (error) {
      terminateFailed(request, error);
    }
  };

  let waiting: Array<() => void> = [];
  const bodyTerminated = (): void => {
    if (--openBodies > 0) return;
    // Nobody is waiting any more: a later wait must not hold the process again.
    closeWaits.keepAlive(false);
    const waiters = waiting;
    waiting = [];
    for (const wake of waiters) wake();
  };

  /**
   * Sends the response, then terminates; SENT, or what send() threw when it refused the response before any byte went out.
   * `isPage`: `response` is an error page answerError gives, whose own stream failing before its first chunk gets the bare 500, logged, not a page again.
   */
  const sendAndTerminate = (req: IncomingMessage, res: ServerResponse, request: Request, response: Response, isPage = false): unknown => {
    // A stream body is still being read when send() returns: kernel.terminate waits for its end, as
    // Symfony's follows send(), so that what the stream logs reaches the profile. Text and bytes make no closure.
    // A 204/304 whose stream prepare() dropped waits for that stream's clean-up too (see discardedBody).
    const body = response.body ?? discardedBody(response) ?? null;
    const isStream = typeof body === 'object' && body !== null && !(body instanceof Uint8Array);
    const onBodyEnd = isStream
      ? () => {
          // An error page whose client left (or whose connection the server cut) before its head ends as that leaving,
          // a 499 (or the cut's 408), as a response whose stream waits so does (see onFailedBeforeHead), not as the page never sent.
          if (isPage && !res.headersSent) return answerError(req, res, request, response, connectionClosedError(req), bodyTerminated);
          // A stream never read (a HEAD's, a 204's or 304's) that failed: the answer went out without it, and nobody else says so.
          if (req.method === 'HEAD' || response.body === null || response.isEmpty()) kernel.requestStack.run(request, () => logUnsentBodyFailure(logger, body));
          // An error page whose own stream failed before its head got the bare 500: the request ends as that answer, not as the page never sent.
          terminate(request, bare500Sent.has(res) ? bareAnswer() : response);
          bodyTerminated();
        }
      : undefined;
    // A stream that fails before its first chunk (a file that cannot be opened) has sent nothing yet: its error gets the error page.
    // Once: a page whose stream fails so too would be answered by a page again, for ever.
    const onFailedBeforeHead = isStream && !isPage ? (error: unknown) => answerError(req, res, request, response, error, bodyTerminated) : undefined;
    // An error page's stream that fails with the very error it is the page of (one that stops on request.signal, aborted
    // with the response timeout's error): the error listener's record of that error for the request is the one.
    const logged = isStream ? (failure: unknown) => loggedAsServerError(failure, request) : undefined;
    let streaming: boolean;
    try {
      streaming = sendWith(req, res, response, logger, onBodyEnd, closeWaits, onFailedBeforeHead, logged);
    } catch (error) {
      // A header node:http refuses (CR/LF, a character beyond Latin-1), a 1xx status, a body of another type.
      destroyBody(response.body);
      return error;
    }
    // onBodyEnd is called later, never from within send().
    if (streaming) openBodies++;
    else terminate(request, response);
    return SENT;
  };

  const respond = (req: IncomingMessage, res: ServerResponse, request: Request, response: Response): void => {
    // A client gone before its answer was ready (pipelined: its connection closed behind another) got
    // nothing: the request ends as its leaving, a 499 at INFO, as at the response timeout, not as the
    // success it never got; one whose body stalled got the request timeout's 408 (on the connection, or
    // through `res` at server.timeout, see watchSocketTimeout), and one whose body the parser refused its
    // 400 (see serverCut), and ends as that, even in place of an error answer of its own that never went
    // out (a 410 the controller gave without reading the body, a 422 for the body it could not read). So
    // does one the idle check cut, which sends nothing: its 408 says why nothing went. Without a cut of
    // the server's, another error answer is kept: it says what went wrong already (a body cut short, or a
    // wait on request.signal aborted, a 499). A response whose head went already (that 408's) on a
    // connection now gone is one too, before `res` knows it: over TLS it learns of the close a turn later.
    if (res.destroyed || (req.socket.destroyed && (res.socket === null || res.headersSent))) {
      const cut = serverCut(req);
      // The kernel answers a RequestError (the parser's refusal) with a 400.
      const replaced = cut !== undefined ? ('status' in cut ? cut.status : 400) !== response.status : response.status < 400 && !res.headersSent;
      if (replaced) {
        destroyBody(response.body);
        return answerError(req, res, request, response, cut ?? new ClientClosedError());
      }
    }
    const refusal = sendAndTerminate(req, res, request, response);
    if (refusal === SENT) return;
    // Nothing was written: the kernel answers the refusal as an error of the request (an error page,
    // logged, and recorded by the profiler) rather than the client getting a bare 500 and the profile
    // the status that never went out.
    answerError(req, res, request, response, new ResponseNotSendableError(refusal, response.headers));
  };

  /**
   * Answers an error raised outside handle(), before any byte of `response` (null: handle() gave none
   * yet) went out, with the kernel's error page (or the bare 500 when that page cannot be had or
   * sent), then terminates with what was sent.
   */
  const answerError = (req: IncomingMessage, res: ServerResponse, request: Request, response: Response | null, error: unknown, then?: () => void): void => {
    // writeHead() keeps the reason phrase of a status it refused (`500 Found`).
    res.statusMessage = '';
    const inTime = pageWithin(req, res, request, error, bareStatusOf(error), then);
    kernel.handleException(error, request).then(
      (page) => {
        // Too late: the bare answer went, and the request was terminated with it.
        if (!inTime()) return destroyBody(page.body);
        const again = sendAndTerminate(req, res, request, page, true);
        if (again !== SENT) refusedPage(res, request, again);
        then?.();
      },
      (unanswered: unknown) => {
        if (!inTime()) return failedLate(request, error, unanswered);
        // The error itself, no listener having answered it: the error listener's record names it already. A
        // listener's own error names `error` too, which the listeners after it (the error listener's log) never saw.
        logEscaped(kernel, logger, request, unanswered);
        sendBare500(res);
        terminate(request, response ?? bareAnswer());
        then?.();
      },
    );
  };

  /**
   * Bounds the wait for the page of `error` (a kernel.exception or kernel.response listener, or an
   * `unhandled` page, that never settles must not hold the answer, for the client would wait for the
   * idle sweep, nor settled()): past ERROR_PAGE_GRACE_MS the bare `status` goes out instead, logged,
   * the request is terminated with it, and `then` is called. The function returned, called once the
   * page (or its failure) has come, stops the wait: false when it came too late.
   */
  const pageWithin = (req: IncomingMessage, res: ServerResponse, request: Request, error: unknown, status: number, then?: () => void): (() => boolean) => {
    let gaveUp = false;
    // Not unref()'d: an app closing waits for this request's kernel.terminate.
    const grace = setTimeout(() => {
      gaveUp = true;
      const bare = bareAnswer(status);
      // A client gone meanwhile (or before: its 499) is sent nothing; the line says so rather than name an answer that never went.
      const what = res.destroyed || req.socket.destroyed ? 'and the client had left: nothing was sent' : `so a bare ${bare.status} was sent`;
      logPageNotReady(kernel, logger, request, error, bare.status, what);
      if (sendAndTerminate(req, res, request, bare) !== SENT) terminate(request, bare);
      then?.();
    }, ERROR_PAGE_GRACE_MS);
    return () => {
      if (gaveUp) return false;
      clearTimeout(grace);
      return true;
    };
  };

  /** The page of `error` failed with `failure` after pageWithin gave up on it (see logLatePageFailure). */
  const failedLate = (request: Request, error: unknown, failure: unknown): void => logLatePageFailure(kernel, logger, request, error, failure);

  /** An error that escaped kernel.handle(): logged, then answered with `unhandled`'s page (within the grace, see pageWithin), or the bare 500. */
  const escaped = (req: IncomingMessage, res: ServerResponse, request: Request, error: unknown): void => {
    const page = escapedPage(kernel, options, request, error);
    if (!isPromiseLike(page)) return sendPage(req, res, request, page);
    // Counted with the stream bodies: settled() (app.close()) waits for its kernel.terminate, at most the grace.
    openBodies++;
    const inTime = pageWithin(req, res, request, error, 500, bodyTerminated);
    page.then(
      (answer) => {
        if (!inTime()) return destroyBody(answer instanceof Response ? answer.body : null);
        sendPage(req, res, request, answer);
        bodyTerminated();
      },
      (failure: unknown) => {
        if (!inTime()) return failedLate(request, error, failure);
        sendPage(req, res, request, bareAnswer());
        bodyTerminated();
      },
    );
  };
  // The page is the request's answer: kernel.terminate follows it, as after any other (Symfony's
  // terminateWithException() terminates too), so the profile is saved and terminate listeners run.
  const sendPage = (req: IncomingMessage, res: ServerResponse, request: Request, page: unknown): void => {
    const answer = page instanceof Response ? page : bareAnswer();
    const refusal = sendAndTerminate(req, res, request, answer);
    if (refusal === SENT) return;
    // A page node:http cannot send (a 1xx status, a header it refuses): the bare 500 goes, the log says why, and the request ends as that answer.
    refusedPage(res, request, refusal);
  };

  /** The bare 500 for an error page the server refused (see sendAndTerminate), the refusal logged CRITICAL as the request's, then kernel.terminate with that 500. */
  const refusedPage = (res: ServerResponse, request: Request, refusal: unknown): void => {
    kernel.requestStack.run(request, () => fail(res, refusal, logger));
    terminate(request, bareAnswer());
  };

  /** Requests waiting for handle() under the response timeout, each with what gives up on it: settled() does, at once. */
  const awaitingHandle = new Set<(closing?: boolean) => void>();

  /**
   * Sends what handle() gives when it comes within `ms`; otherwise `request.signal` is aborted with a
   * ResponseTimeoutError, which the kernel answers (logged, an error page, kernel.terminate), and what
   * handle() gives later is dropped: a stream body destroyed, an error that escaped it logged once, never sent.
   * A client gone by then gets no 503: the request ends as its leaving (a ClientClosedError, 499, logged at
   * INFO), or as the 408 the request timeout answered when its body stalled (see connectionClosedError).
   */
  const respondWithin = (req: IncomingMessage, res: ServerResponse, request: Request, result: Promise<Response>, ms: number): void => {
    // The monotonic clock: a wall clock stepped meanwhile (NTP) would cut a stream at once, or give it the jump too.
    const started = performance.now();
    let late = false;
    let timer: NodeJS.Timeout;
    // `closing`: settled() gives up before the limit, the app closing while the client still waits.
    const giveUp = (closing = false): void => {
      clearTimeout(timer);
      awaitingHandle.delete(giveUp);
      late = true;
      const gone = res.destroyed || req.socket.destroyed;
      const error = gone ? connectionClosedError(req) : closing ? new ServiceUnavailableHttpError(undefined, 'The server closed before the response was ready.') : responseTimeoutOf(request, ms);
      // What the controller waits on with request.signal stops: nothing else could stop it.
      abortRequest(request, error);
      // Counted with the stream bodies: settled() (app.close()) waits for its kernel.terminate.
      openBodies++;
      answerError(req, res, request, null, error, bodyTerminated);
      if (!gone) failBodyOnClose(req, error);
    };
    const check = (): void => {
      // A body still arriving while it is read, under a request timeout, is that timeout's to answer (a
      // 408: the client's doing), not a 503; once its connection has ended, handle() has `ms` more to
      // settle through the body reader's error. One nobody reads is held up by the server (see bodyIsRead).
      if (!req.complete && bodyIsRead(req) && hasRequestTimeout(req)) {
        timer = setTimeout(req.destroyed ? giveUp : check, req.destroyed ? ms : BODY_ARRIVAL_CHECK_MS);
        // A controller that never settles must not hold the process once the server has closed.
        timer.unref();
        return;
      }
      giveUp();
    };
    timer = setTimeout(check, ms);
    timer.unref();
    awaitingHandle.add(giveUp);
    result.then(
      (response) => {
        if (late) return destroyBody(response.body);
        clearTimeout(timer);
        awaitingHandle.delete(giveUp);
        awaitFirstChunkWithin(req, res, request, response, ms, ms - (performance.now() - started));
        respond(req, res, request, response);
      },
      (error: unknown) => {
        if (late) return kernel.requestStack.run(request, () => logger?.critical('Unhandled error after the response timeout: {message}', { message: messageOf(error), error }));
        clearTimeout(timer);
        awaitingHandle.delete(giveUp);
        escaped(req, res, request, error);
      },
    );
  };

  const listener: NodeRequestListener & { [answersExpectContinue]?: true; [answersResponseTimeout]?: true; [hearsRefusals]?: (refusal: Refusal) => void } = (req, res, responseTimeout = 0) => {
    // A server of the embedder's may time its sockets out (startServers's never do).
    if ((req.socket as Socket).timeout! > 0) watchSocketTimeout(req, res);
    let request: Request;
    try {
      // Expect: 100-continue (startServers leaves the answer to us, see answersExpectContinue): invite the body only once it is read.
      const options = req.headers.expect === undefined || !awaitsContinue(req, res) ? readOptions : { ...readOptions, beforeBodyRead: () => sendContinue(res) };
      request = Request.fromIncomingMessage(req, options, res);
    } catch (error) {
      fail(res, error, logger);
      return;
    }
    let result: Response | Promise<Response>;
    try {
      result = kernel.handleMaybeAsync(request);
    } catch (error) {
      escaped(req, res, request, error);
      return;
    }
    // The synchronous path (every listener and the controller synchronous) makes no closure, and no timer.
    if (!isPromiseLike(result)) {
      // A stream given at once has the whole limit for its first chunk, as one given later has what is left of it.
      if (responseTimeout > 0) awaitFirstChunkWithin(req, res, request, result, responseTimeout, responseTimeout);
      respond(req, res, request, result);
    }
    else if (responseTimeout > 0) respondWithin(req, res, request, result, responseTimeout);
    else result.then((response) => respond(req, res, request, response), (error: unknown) => escaped(req, res, request, error));
  };
  listener[answersExpectContinue] = true;
  listener[answersResponseTimeout] = true;
  // Requests startServers answers in their head never reach the kernel: no profile, so a log record (ERROR, as any 4xx).
  listener[hearsRefusals] = (refusal) => logRefusal(logger, refusal);
  const settled = (): Promise<void> => {
    // The server is closing: a request still waiting for handle() is given up now, not when its timer would have fired on a closed app.
    for (const giveUp of [...awaitingHandle]) giveUp(true);
    if (openBodies === 0) return Promise.resolve();
    // Whoever waits for these requests (app.close() on a signal) must not see the process exit first: an
    // unsettled top-level await would end it with code 13, the profiles unsaved.
    closeWaits.keepAlive(true);
    return new Promise<void>((resolve) => void waiting.push(resolve));
  };
  return Object.assign(listener, { settled });
}

/**
 * A stream's head goes with its first chunk: one that has not come within `left`, what is left of the
 * response timeout (`ms`), fails with the ResponseTimeoutError, and, nothing sent yet, the kernel answers it
 * (see sendWith). Nothing for a body that is no stream: no timer, no closure.
 */
function awaitFirstChunkWithin(req: IncomingMessage, res: ServerResponse, request: Request, response: Response, ms: number, left: number): void {
  const body = response.body;
  if (body === null || typeof body !== 'object' || body instanceof Uint8Array) return;
  let headWait: NodeJS.Timeout;
  const check = (): void => {
    if (res.headersSent || res.destroyed) return;
    // Destroyed and still awaited: one that emits no 'close' (emitClose: false) never said so, and would hold its client for ever.
    if (body.destroyed) return void awaitingFirstChunk.get(body)?.(body.errored ?? new ResponseBodyDestroyedError(false));
    // A stream that waits on a body still arriving while it is read, under a request timeout, is that timeout's to answer (see respondWithin's check).
    if (!req.complete && !req.destroyed && bodyIsRead(req) && hasRequestTimeout(req)) {
      headWait = setTimeout(check, BODY_ARRIVAL_CHECK_MS);
      headWait.unref();
      return;
    }
    const timeout = responseTimeoutOf(request, ms);
    // The body first: one wired to the signal (addAbortSignal, pipeline's `signal`) would fail with its AbortError, a 500 logged at INFO.
    // Not a legacy stream (`pipe()` alone): its pipe's source, failed below, destroys it when it has a destroy(); once, not twice.
    if (isReadable(body)) body.destroy(timeout);
    abortRequest(request, timeout);
    // A destroy may finish late, and its error come only then (a generator's stream awaiting what never settles): the response fails now.
    awaitingFirstChunk.get(body)?.(timeout);
  };
  headWait = setTimeout(check, Math.max(0, left));
  headWait.unref();
  res.once('close', () => clearTimeout(headWait));
}

/**
 * The response timeout's error for `request`, naming its route and controller when the limit passed
 * (null: none chosen yet): raised by a timer, its stack would point only here.
 */
export function responseTimeoutOf(request: Request, ms: number, stalled = false): ResponseTimeoutError {
  const route = request.attributes.get('_route');
  return new ResponseTimeoutError(ms, { route: typeof route === 'string' ? route : null, controller: describeController(request.attributes.get('_controller')), stalled });
}

/** Whether the request's server times out the whole request (node's `requestTimeout`): a body that stalls is then its 408. */
function hasRequestTimeout(req: IncomingMessage): boolean {
  const timeout = (req.socket as IncomingMessage['socket'] & { server?: { requestTimeout?: unknown } }).server?.requestTimeout;
  return typeof timeout === 'number' && timeout > 0;
}

/**
 * Whether something has begun reading the request's body (the kernel's reader iterates it from its
 * first read on). One nobody reads stalls on the server's side, not the client's: node stops reading
 * the socket once it holds a few KiB of it, and under `Expect: 100-continue` the client waits to be invited.
 */
function bodyIsRead(req: IncomingMessage): boolean {
  return req.readableFlowing !== null;
}

/**
 * Under node's socket timeout (`server.timeout`, set by a server of the embedder's: startServers turns
 * it off), node destroys a socket quiet for that long without a reason, and the body's reader would
 * take a body cut so for the client leaving. A body being read is then the server's timeout: a
 * bare 408 goes out when no byte of the response has (as node answers its own request timeout), and
 * the socket is destroyed with the RequestTimeoutHttpError, which the reader reports (logged, the
 * request's 408). Anything else is cut as node cuts it; a request, response or server with a
 * `timeout` listener of its own decides for itself, as node leaves it to them.
 */
function watchSocketTimeout(req: IncomingMessage, res: ServerResponse): void {
  // node emits it on a request whose body has not all come, before it would destroy the socket.
  req.once('timeout', (socket: Socket) => {
    const server = (socket as Socket & { server?: EventEmitter }).server;
    if (req.listenerCount('timeout') > 0 || res.listenerCount('timeout') > 0 || (server?.listenerCount('timeout') ?? 0) > 0) return;
    if (!bodyIsRead(req)) return void socket.destroy();
    const error = new RequestTimeoutHttpError(`The request body did not arrive: nothing came within the server's socket timeout (server.timeout, ${describeDuration(socket.timeout ?? 0)}).`);
    // Not when its response is queued behind another's (pipelined: no socket yet), nor begun.
    if (!res.headersSent && res.socket === socket) {
      const body = `${STATUS_CODES[408]}: The request body did not arrive in time.\n`;
      res.writeHead(408, { 'content-type': 'text/plain; charset=UTF-8', 'content-length': String(Buffer.byteLength(body)), connection: 'close' });
      res.end(body);
    }
    socket.destroy(error);
    // node ends no request whose response has finished (the 408's): its reader is told here.
    failBodyOnClose(req, error);
  });
}

/**
 * A body still arriving when the response timeout answered is read by nobody the server answers for,
 * and node ends no request whose response has finished: a controller reading it, now or later, would
 * wait forever. Once the connection ends (the 503 closes it: this happens only without a request
 * timeout, under one the body is the 408's, see respondWithin), its reader gets `error`.
 */
function failBodyOnClose(req: IncomingMessage, error: Error): void {
  if (req.complete) return;
  const fail = (): void => {
    if (!req.complete && !req.destroyed) req.destroy(error);
  };
  const socket = req.socket;
  if (socket.destroyed) return fail();
  socket.once('close', fail);
  // The rest came after all (node drains it): a kept connection does not gather one listener per such request.
  req.once('end', () => socket.off('close', fail));
}

/** Whether node has answered `Expect: 100-continue` itself (a server without a checkContinue listener). */
function sent100(res: ServerResponse): boolean {
  return (res as ServerResponse & { _sent100?: boolean })._sent100 === true;
}

/** An HTTP/1.1 client waiting for 100 Continue before its body (RFC 9110 10.1.1: never sent to HTTP/1.0, which does not wait). */
function awaitsContinue(req: IncomingMessage, res: ServerResponse): boolean {
  return req.httpVersionMajor === 1 && req.httpVersionMinor === 1 && /100-continue/i.test(req.headers.expect ?? '') && !sent100(res);
}

function sendContinue(res: ServerResponse): void {
  if (!res.headersSent && !res.destroyed && !sent100(res)) res.writeContinue();
}

/** What sendAndTerminate() answers when the response went out. */
const SENT = Symbol('sent');

/** Errors of a response stream that mean the client went away, not that the body failed. */
const CLIENT_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE']);

/**
 * Writes a Response to a node:http response (headers only for HEAD and empty statuses), framed by
 * frameResponse; a stream body that fails is logged (one whose clean-up fails after its last chunk at ERROR, its answer sent whole; without `onBodyEnd`,
 * one not sent, a HEAD's or a 204's, at ERROR too, as the server logs it). Returns true when a stream body is being piped:
 * `onBodyEnd` is then called once it has ended, failed or lost its client, and closed (see afterClose); anything else is written
 * when send() returns (false). Throws, before any byte is written, for what cannot be sent: a body of
 * another type, a 1xx status, a Transfer-Encoding that does not end with chunked, a header node:http refuses.
 * A stream body's head is written with its first chunk (node:http holds a head until then anyway): a
 * body that fails before it (or, object-mode, whose first chunk is no text nor bytes) is answered with a bare 500 (createRequestListener: the kernel's error page), not a cut connection.
 */
export function send(req: IncomingMessage, res: ServerResponse, response: Response, logger?: Logger, onBodyEnd?: () => void): boolean {
  return sendWith(req, res, response, logger, onBodyEnd, DEFAULT_CLOSE_WAITS);
}

function sendWith(
  req: IncomingMessage,
  res: ServerResponse,
  response: Response,
  logger: Logger | undefined,
  onBodyEnd: (() => void) | undefined,
  closeWaits: BodyCloseWaits,
  onFailedBeforeHead?: (error: unknown) => void,
  logged?: (error: unknown) => boolean,
): boolean {
  // A response queued behind others (pipelined) on a connection that has closed is never told (see abandon): its client is gone too.
  if (res.headersSent || res.destroyed || (res.socket === null && req.socket.destroyed)) {
    // The client is gone (or an answer went already): a stream body would never be read, its file or socket left open.
    destroyBody(response.body);
    return false;
  }
  const body = response.body;
  // Checked before the head goes (the body may have been set after the constructor): a head sent with no body to follow is a cut answer.
  checkResponseBody(body);
  checkFinalStatus(response.status);
  // The rest of a body refused (413), left half read, or never invited (Expect: 100-continue without
  // 100 Continue: the client may or may not send it) is not drained: the connection closes after the answer.
  if (!req.complete && (response.status === 413 || req.readableDidRead || (req.headers.expect !== undefined && awaitsContinue(req, res)))) res.shouldKeepAlive = false;
  // RFC 9112 6.1: the framing of an HTTP/1.0 request with Transfer-Encoding is faulty; answer it, then close.
  if (req.httpVersionMinor === 0 && req.headers['transfer-encoding'] !== undefined) res.shouldKeepAlive = false;
  const declaredLength = frameResponse(req, res, response);
  if (req.method === 'HEAD' || body === null || response.isEmpty()) {
    res.writeHead(response.status, response.headers);
    res.end();
    // A stream never read (a HEAD's, or the one prepare() took from a 204 or 304): destroyed, and
    // kernel.terminate waits for its clean-up, as after one sent, so that what it logs is in the request's profile.
    const unsent = body ?? discardedBody(response);
    if (unsent === undefined || unsent === null || typeof unsent === 'string' || unsent instanceof Uint8Array) return false;
    // Heard, so that its failure, before or in its clean-up, cannot end the process (one made by hand the kernel never heard): it keeps it in `errored`.
    hearBody(unsent);
    if (onBodyEnd === undefined) {
      // Nobody is told of its end: its failure is logged here, as the server logs it.
      destroyBody(unsent);
      if (logger !== undefined) whenEnded(unsent, () => logUnsentBodyFailure(logger, unsent));
      return false;
    }
    // A legacy stream (`pipe()` alone) may have no destroy(): it is let go.
    destroyBody(unsent);
    // Never from within send() (see sendAndTerminate): a stream destroyed at once is closed already.
    process.nextTick(() => closeWaits.afterClose(unsent, onBodyEnd));
    return true;
  }
  if (typeof body === 'string' || body instanceof Uint8Array) {
    res.writeHead(response.status, response.headers);
    res.end(body);
    return false;
  }
  // The head waits for the first chunk; what writeHead() would refuse is refused now, while nothing is sent.
  checkHeaders(response.headers);
  checkPipedBody(body);
  // The one record of a body's failure: none for an error `logged` for the request already. Made here, where a stream is sent: text and bytes make no closure.
  const logFailure = (error: unknown): void => {
    if (logged?.(error) !== true) logger?.critical('The response body stream failed: {message}', { message: messageOf(error), error });
  };
  const cleanupFailed = (error: Error): void => logCleanupFailure(logger, error);
  // A legacy stream (`pipe()` alone) has no buffer to watch for its first chunk: the source of its pipe,
  // made now, has, so that its head waits as a Readable's does, and one failing before it gets the error page, not a cut 200.
  const legacySource = isReadable(body) ? undefined : bodySource(body, cleanupFailed);
  // Once, from the pipeline's end or from the connection's close while still queued.
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    queued?.delete(abandon);
    if (onBodyEnd !== undefined) closeWaits.afterClose(body, onBodyEnd);
  };
  // A response queued behind others on its connection (pipelined) has no socket yet. If the
  // connection closes first, node never tells it, and its pipeline never ends (destroying the
  // response waits for a socket): none of it went out, its first chunk come or not, so it ends as
  // its client's leaving (see failed), the body destroyed (a file would stay open).
  const abandon = (): void => {
    // Marked gone, as node marks an answered response whose client left: nothing more is written into it.
    res.destroy();
    failed(connectionClosedError(req), true);
  };
  const queued = res.socket === null ? queueOnSocket(req.socket, abandon) : undefined;
  const done = (error: Error | null): void => {
    if (error) {
      res.destroy(error);
      // The head is gone: the client sees a cut answer, and only the log tells why. Not for a response
      // given up already (see abandon): its body was destroyed by us, its pipeline's error is that.
      if (!ended && (isBodyFailure(error) || !CLIENT_GONE.has((error as NodeJS.ErrnoException).code ?? ''))) logFailure(error);
    }
    end();
  };
  const start = (): void => {
    if (ended) return;
    // writeHead() would send nothing yet, but could not be taken back: an object-mode body's first
    // chunk that cannot be sent fails the body before its head, as a body failing before its first chunk.
    // A legacy stream's pipe source has refused its first chunk so already (see bodySource).
    const refused = body.readableObjectMode === true ? firstChunkError(body) : (legacySource?.errored ?? undefined);
    if (refused !== undefined) return failed(refused);
    res.writeHead(response.status, response.headers);
    // pipeline() calls back once the body has closed too: a clean-up that never ends would hold the
    // request unterminated for ever. The response written whole is the end; afterClose bounds the wait.
    res.once('finish', end);
    const guards = [...(body.readableObjectMode === true ? [new ChunkTypeGuard()] : []), ...(declaredLength === -1 ? [] : [new ContentLengthGuard(declaredLength)])];
    // A clean-up failing once the body has given its last chunk is logged, and the answer goes on whole.
    pipeline([legacySource ?? bodySource(body, cleanupFailed), ...guards, res], done);
  };
  // `gone`: the connection closed before the head (see connectionClosedError), not the body failing.
  const failed = (error: unknown, gone = error instanceof ClientClosedError): void => {
    if (ended) return;
    ended = true;
    queued?.delete(abandon);
    // Nothing listens to the body any more (see afterFirstChunk): an error it emits later must not end the
    // process. A destroy may finish late: a generator's stream, destroyed by the response timeout while it awaits, emits its error once that await settles.
    body.on('error', ignoreLateError);
    // A legacy stream's pipe source destroys the stream (when it has a destroy()) as it closes: once, not twice.
    if (legacySource === undefined) destroyBody(body);
    else legacySource.on('error', ignoreLateError).destroy();
    if (gone) {
      // The client left before the head (or before a queued response had the connection): nothing was sent, and the request ends as its leaving (createRequestListener: a
      // 499, logged at INFO, as a client gone before any response), not as the status it never got; after the body's clean-up, as when sent.
      // So does one whose body stalled, with the 408 the request timeout answered (see connectionClosedError).
      const then = onFailedBeforeHead === undefined ? onBodyEnd : () => onFailedBeforeHead(error);
      if (then !== undefined) closeWaits.afterClose(body, then);
      return;
    }
    if (onFailedBeforeHead !== undefined) return onFailedBeforeHead(error);
    logFailure(error);
    sendBare500(res);
    if (onBodyEnd !== undefined) closeWaits.afterClose(body, onBodyEnd);
  };
  afterFirstChunk(legacySource ?? body, body, res, start, failed);
  return true;
}

/** Whether a stream body is a node Readable, with a buffer to watch (readableLength), not a legacy stream with `pipe()` alone. */
function isReadable(body: Readable): boolean {
  return typeof body.once === 'function' && typeof body.readableLength === 'number';
}

/**
 * How each stream body still waiting for its first chunk fails (see afterFirstChunk), for the response timeout's head wait.
 * By body, not response: once a body has failed, its error page's stream waits on the same response, and is not the body's to fail.
 */
const awaitingFirstChunk = new WeakMap<Readable, (error: unknown) => void>();

/** A failed body's later errors: the failure was answered or logged already. */
function ignoreLateError(): void {}

/**
 * Calls `ready` once a stream body has its first chunk or has ended, `failed` when it fails first (a
 * destroy() without an error too: a ResponseBodyDestroyedError), or with connectionClosedError's (and
 * `gone`) when the connection closes first. `body` is the Readable watched, the response's body
 * (`key`) or a legacy stream's pipe source (see bodySource): kept as waiting by `key` for the response
 * timeout's head wait, and ready at the legacy stream's first 'data', as a Readable's first chunk is
 * sent even when it is destroyed in the same tick (its answer cut after its head, not an error page).
 */
function afterFirstChunk(body: Readable, key: Readable, res: ServerResponse, ready: () => void, failed: (error: unknown, gone?: boolean) => void): void {
  if (body.errored) return failed(body.errored);
  // Destroyed before its end, what it holds is never read to an end: the pipeline would take its close for the client's, the head sent and then cut.
  if (body.destroyed && !body.readableEnded) return failed(new ResponseBodyDestroyedError(false));
  if (body.readableLength > 0 || body.readableEnded) return ready();
  const settle = (): void => {
    body.off('readable', onReadable);
    body.off('close', onClose);
    body.off('error', onError);
    res.off('close', onGone);
    if (key !== body) key.off('data', onReadable);
    awaitingFirstChunk.delete(key);
  };
  const onReadable = (): void => {
    settle();
    // Removing the last 'readable' listener hands the flow back: the pipeline reads what it left buffered.
    ready();
  };
  const onError = (error: unknown): void => {
    settle();
    failed(error);
  };
  const onGone = (): void => {
    settle();
    failed(connectionClosedError(res.req), true);
  };
  // A close with no 'readable' before it (an end is one) is a destroy. One on request.signal, the client gone,
  // closes a tick after the connection's close, which onGone (or abandon, queued) has answered already.
  const onClose = (): void => {
    if (body.readableEnded) return onReadable();
    settle();
    failed(body.errored ?? new ResponseBodyDestroyedError(false));
  };
  body.on('readable', onReadable);
  body.once('close', onClose);
  body.once('error', onError);
  res.once('close', onGone);
  // After the pipe's own 'data' listener: the chunk is in the source when the pipeline starts.
  if (key !== body) key.once('data', onReadable);
  awaitingFirstChunk.set(key, onError);
}

/**
 * Why an object-mode body's first chunk, when it has one, cannot be sent (see chunkTypeError): looked
 * at where it waits, not read: read() gives it to the body's 'data' listeners (a tap counting the
 * chunks), which would see it twice once put back, and asks the body for more before its time. A
 * buffer of another shape than node's (an array from `bufferIndex`, or before node 20.20 a list from
 * `head`) is left to ChunkTypeGuard.
 */
function firstChunkError(body: Readable): TypeError | undefined {
  if (body.readableLength === 0) return undefined;
  const state = (body as { _readableState?: { buffer?: unknown; bufferIndex?: unknown } })._readableState;
  const buffer = state?.buffer;
  if (Array.isArray(buffer)) {
    const index = typeof state?.bufferIndex === 'number' ? state.bufferIndex : 0;
    return index < buffer.length ? chunkTypeError(buffer[index]) : undefined;
  }
  const head = (buffer as { head?: { data?: unknown } | null } | undefined)?.head;
  return head === null || head === undefined || !('data' in head) ? undefined : chunkTypeError(head.data);
}

/** An interim status is no answer: the client would wait on for the final one. */
function checkFinalStatus(status: number): void {
  if (status < 200) throw new RangeError(`A response sent to the client has a final status (200 or more), not ${status}.`);
}

/**
 * Throws what send() throws before any byte is written for a Response no server can send (a body of
 * another type, a 1xx status, a header node:http refuses): inject() answers it as the server does.
 */
export function checkSendable(response: Response): void {
  checkResponseBody(response.body);
  checkFinalStatus(response.status);
  checkHeaders(response.headers);
}

/**
 * Refuses a stream body the server cannot read to its end (see bodySource): one with pipe() but no on() or once(),
 * no EventEmitter, would fail once piped, its head gone. Only for a body that is sent: a HEAD's, or a 204's, is let go.
 */
export function checkPipedBody(body: Response['body']): void {
  if (body === null || typeof body !== 'object' || body instanceof Uint8Array) return;
  const { on, once } = body as { on?: unknown; once?: unknown };
  if (typeof on !== 'function' || typeof once !== 'function') {
    throw new TypeError('A response body stream is an EventEmitter, with on() and once() as node\'s streams have, not an object with pipe() alone: pass a Readable of node:stream.');
  }
}

/** Refuses, as writeHead() would, a header name or value node:http cannot write (CR, LF, a character beyond Latin-1). */
function checkHeaders(headers: Response['headers']): void {
  for (const name in headers) {
    validateHeaderName(name);
    const value = headers[name]!;
    if (Array.isArray(value)) for (const one of value) validateHeaderValue(name, one);
    else validateHeaderValue(name, value);
  }
}

/** What to do for each stream response still waiting for its connection's earlier responses, by connection, if it closes first. */
const queuedStreams = new WeakMap<object, Set<() => void>>();

/** Registers a queued stream response's abandon; one 'close' listener per connection, however many are queued. */
function queueOnSocket(socket: IncomingMessage['socket'], abandon: () => void): Set<() => void> {
  let queued = queuedStreams.get(socket);
  if (queued === undefined) {
    const waiting = new Set<() => void>();
    queued = waiting;
    queuedStreams.set(socket, waiting);
    socket.once('close', () => {
      queuedStreams.delete(socket);
      for (const abandonOne of [...waiting]) abandonOne();
      waiting.clear();
    });
  }
  queued.add(abandon);
  return queued;
}

/** How long a body may take to close after its pipeline ended before its request terminates without it. */
const BODY_CLOSE_WAIT_MS = 5_000;
/** How often the response timeout looks again whether a body still arriving has come whole (see respondWithin). */
const BODY_ARRIVAL_CHECK_MS = 250;

/**
 * Calls `then` once a stream body has closed: pipeline() reports a client gone before the body's
 * clean-up (a generator's `finally`, a file closed) has run, and what that logs belongs in the
 * profile. At once for a body that has closed or never reports it (`emitClose: false`, no node
 * stream); a clean-up that hangs is waited for at most `ms`. The waits do not keep the process
 * alive (a hung clean-up must not hold it) until keepAlive() says someone is waiting for them.
 */
export class BodyCloseWaits {
  readonly #timers = new Set<NodeJS.Timeout>();
  #keepAlive = false;

  constructor(readonly ms: number) {}

  afterClose(body: object, then: () => void): void {
    const stream = body as { closed?: unknown; readableEnded?: unknown; _readableState?: { emitClose?: boolean; autoDestroy?: boolean }; once?: unknown; off?: unknown };
    const state = stream._readableState;
    // A stream that does not destroy itself (autoDestroy: false) closes only when someone destroys it: once ended, there is nothing to wait for.
    if (stream.closed !== false || state?.emitClose === false || (state?.autoDestroy === false && stream.readableEnded === true) || typeof stream.once !== 'function') {
      then();
      return;
    }
    const readable = body as Readable;
    const timers = this.#timers;
    const timer = setTimeout(() => {
      timers.delete(timer);
      readable.off('close', closed);
      then();
    }, this.ms);
    if (!this.#keepAlive) timer.unref();
    timers.add(timer);
    const closed = (): void => {
      clearTimeout(timer);
      timers.delete(timer);
      then();
    };
    readable.once('close', closed);
  }

  /** Whether the waits keep the process alive: while someone awaits them (the server is closing), they do. */
  keepAlive(on: boolean): void {
    this.#keepAlive = on;
    for (const timer of this.#timers) {
      if (on) timer.ref();
      else timer.unref();
    }
  }
}

const DEFAULT_CLOSE_WAITS = new BodyCloseWaits(BODY_CLOSE_WAIT_MS);

/** The waits for stream bodies' clean-up of the listener options' bodyCloseWaitMs, checked. */
export function bodyCloseWaits(options: Pick<RequestListenerOptions, 'bodyCloseWaitMs'>): BodyCloseWaits {
  const closeWaitMs = options.bodyCloseWaitMs ?? BODY_CLOSE_WAIT_MS;
  // setTimeout would read NaN, a negative or a huge delay as 1 ms.
  if (!Number.isInteger(closeWaitMs) || closeWaitMs < 0 || closeWaitMs > MAX_TIMER_MS) throw new RangeError(`bodyCloseWaitMs is a whole number of milliseconds from 0 to ${MAX_TIMER_MS}, not ${String(closeWaitMs)}.`);
  return new BodyCloseWaits(closeWaitMs);
}

function fail(res: ServerResponse, error: unknown, logger: Logger | undefined): void {
  logger?.critical('Unhandled error: {message}', { message: messageOf(error), error });
  sendBare500(res);
}

/**
 * A bare answer, its status and reason phrase alone (no internals), as a Response: what an escaped error gets when no
 * `unhandled` page can be had, or an error raised outside handle() when its page is not ready in time (it is terminated as any answer).
 */
export function bareAnswer(status = 500): Response {
  return new Response(`${statusText(status)}\n`, status, { 'content-type': 'text/plain; charset=UTF-8' });
}

/**
 * The bare answer of an error that escaped handle() with no `unhandled` page (a kernel of your own
 * without an error listener): its own status and headers, as an error page would send them (a 404
 * no listener answered stays a 404, a 405 keeps its Allow), else a 500; its reason phrase alone.
 */
function bareAnswerOf(error: unknown): Response {
  try {
    const flat = flattenError(error, { maxErrors: 1 })[0]!;
    const status = flat.status ?? 500;
    return new Response(`${statusText(status)}\n`, status, { ...flat.headers, 'content-type': 'text/plain; charset=UTF-8' });
  } catch {
    return bareAnswer();
  }
}

/** node:http responses sendBare500 answered: a stream body's request that got it terminates as that 500 (see sendAndTerminate). */
const bare500Sent = new WeakSet<ServerResponse>();

/** The answer of last resort: a 500 with a one-line text, or a cut connection once a head went out. */
function sendBare500(res: ServerResponse): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = 'Internal Server Error\n';
  // The reason phrase too: a writeHead() that threw has already kept the refused status's (`500 Found`).
  res.writeHead(500, 'Internal Server Error', { 'content-type': 'text/plain; charset=UTF-8', 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
  bare500Sent.add(res);
}

/** Refuses a trustedProxies option that is no list of strings: a string would be read character by character (`invalid IP address: .`). */
export function checkTrustedProxies(trusted: unknown): void {
  if (trusted === undefined || typeof trusted === 'function') return;
  if (!Array.isArray(trusted) || trusted.some((entry) => typeof entry !== 'string')) {
    throw new TypeError(`trustedProxies is an array of addresses and CIDR ranges (such as ['10.0.0.0/8', 'loopback']) or a function, not ${typeof trusted === 'string' ? `a string (write ['${trusted}'])` : describeValue(trusted)}.`);
  }
}

function compileTrust(trusted: RequestListenerOptions['trustedProxies']): TrustProxy | null {
  if (trusted === undefined) return null;
  if (typeof trusted === 'function') return trusted;
  checkTrustedProxies(trusted);
  if (trusted.length === 0) return null;
  return compileAddressList(trusted);
}

/** The error as a log message names it; never throws, whatever was thrown (a null-prototype object, a Proxy, a throwing getter). */
export function messageOf(error: unknown): string {
  try {
    return error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error);
  } catch {
    return `[${typeof error} that cannot be written as text]`;
  }
}
