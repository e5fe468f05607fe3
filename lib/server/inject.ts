import { pipeline, Writable, type Readable } from 'node:stream';
import { ClientClosedError, HttpKernel, Request, Response, ResponseNotSendableError, ServiceUnavailableHttpError, abortRequest, discardedBody, isPromiseLike, type RequestCreateInit } from '../../kernel/index.js';
import { destroyBody, takesUnownedBodies } from '../../kernel/response-body.js';
import { describeValue } from '../../kernel/describe-value.js';
import { isPlainObject } from '../../kernel/name-value-object.js';
import { requestInternals } from '../../kernel/request-internals.js';
import { DEFAULT_LIMITS, ERROR_PAGE_GRACE_MS, MAX_TIMER_MS, describeLimit, refusalAnswer } from './listen.js';
import { bodySource, isBodyFailure } from './body-source.js';
import { framingLine, headerLines, injectedHeadRefusal, releaseRefusedBody, sentMethod, type HeadRefusal } from './injected-head-refusal.js';
import { checkFraming, chunkTypeError, contentLengthError } from './response-framing.js';
import { bareAnswer, bareStatusOf, bodyCloseWaits, checkListenerArguments, checkPipedBody, checkSendable, escapedPage, logCleanupFailure, droppedBodiesLog, logUnsentBodyFailure, logEscaped, logRefusal, logLatePageFailure, logPageNotReady, logTerminateFailure, loggedAsServerError, messageOf, requestReadOptions, responseTimeoutOf, type RequestListenerOptions } from './node-adapter.js';

/** createInjector()'s options: the request listener's, and the response timeout startServers gives its listener. */
export interface InjectorOptions extends RequestListenerOptions {
  /**
   * Milliseconds, from the moment handle() returns (as the server counts it), within which handle() must settle and the app's stream body give its first chunk,
   * as the server's Limits.responseTimeout (default 30,000, the server's): a handle() not settled, or a body without its first chunk,
   * by then gets the page of the ResponseTimeoutError (a 503), as from the server; a body begun that then gives no chunk for as long,
   * a rejection with that error (one still flowing is read whole, as the server sends it). 0 turns it off; checked as the server's.
   */
  responseTimeout?: number;
}

/** What createInjector() takes besides the request listener's options. */
const INJECTOR_OPTIONS: readonly string[] = ['responseTimeout'];

/** How inject() makes its request: Request.create()'s init with the method in it; trusted hosts, proxies and the body limit are the server's. */
export interface InjectInit extends Omit<RequestCreateInit, 'trustProxy' | 'trustHost' | 'bodyLimit'> {
  /** Default GET. */
  method?: string;
}

/** What inject() answers: the kernel's Response as its server would have sent it, its body read whole. */
export interface InjectedResponse extends Response {
  /** Text or bytes as the application gave them, a stream's as bytes; null for HEAD and for statuses without a body (204, 304). */
  body: string | Uint8Array | null;
  /** The body as UTF-8 text ('' for none). */
  text(): string;
  /** The body parsed as JSON (a SyntaxError for a body that is no JSON). */
  json(): unknown;
}

/** Runs a request through the kernel without a socket, as the server would; see createInjector. */
export interface Inject {
  (target: string, init?: InjectInit): Promise<InjectedResponse>;
  /**
   * Resolves once every inject() begun has terminated, answered or rejected: await it before the
   * profiler's storage is closed (app.close() does), as a server's requests are awaited.
   */
  settled(): Promise<void>;
}

const INIT_OPTIONS: ReadonlySet<string> = new Set(['method', 'headers', 'body', 'json', 'scheme', 'remoteAddress', 'localAddress', 'localPort', 'signal']);
/** Request.create()'s options that inject() takes from the server's, by the server's name for them. */
const SERVER_SETTINGS: Readonly<Record<string, string>> = { trustProxy: 'trustedProxies', trustHost: 'trustedHosts', bodyLimit: 'bodyLimit' };

/** Errors of a stream body that mean its reader went away, not that the body failed (as the server tells them). */
const READER_GONE = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE']);

/**
 * An inject() for `kernel` (Fastify's inject(), Symfony's KernelBrowser): the request is read with the
 * listener options' trusted proxies, trusted hosts and body limit, as createRequestListener reads one
 * from a socket; an error that escapes handle() gets the same logged page as from the server; the server's
 * response timeout holds (options.responseTimeout); a stream body is read whole; HEAD and 204/304 get no body; then `kernel.terminate` runs, and is awaited, before
 * the Response is answered. It rejects only for an init it cannot make a request of, a stream body that
 * fails once begun (before its last chunk: a clean-up failing after it is logged at ERROR, as by the server) or breaks its Content-Length (the server cuts that connection) or `init.signal`
 * having aborted before the answer is whole (with its reason; one aborted already when inject() is called, before the request is handled, as fetch()).
 */
export function createInjector(kernel: HttpKernel, options: InjectorOptions = {}): Inject {
  checkListenerArguments(kernel, options, 'createInjector()', INJECTOR_OPTIONS);
  const responseTimeout = checkResponseTimeout(options.responseTimeout);
  // Its terminates log the records of the sub-requests whose main request the kernel cannot know (see logDroppedBodies()), given a logger to log them to.
  if (options.logger !== undefined) takesUnownedBodies(kernel);
  const readOptions = requestReadOptions(options);
  const logger = options.logger;
  // Awaited by the caller: the waits keep the process alive, as the server's do while it closes.
  const closeWaits = bodyCloseWaits(options);
  closeWaits.keepAlive(true);

  const logDroppedBodies = droppedBodiesLog(kernel, logger);

  const terminate = async (request: Request, response: Response): Promise<void> => {
    logDroppedBodies(request);
    try {
      await kernel.terminateMaybeAsync(request, response);
    } catch (error) {
      logTerminateFailure(kernel, logger, request, error);
    }
  };

  /**
   * The page of `error`, or the bare `status` once ERROR_PAGE_GRACE_MS has passed without it, logged as the server logs it;
   * `failed` answers the page's failure. A page that comes later is dropped as the server drops it: its stream destroyed, its failure logged.
   */
  const pageWithin = async (page: PromiseLike<unknown>, request: Request, error: unknown, status: number, failed: (failure: unknown) => Response): Promise<Response> => {
    let grace: NodeJS.Timeout | undefined;
    let gaveUp = false;
    const late = new Promise<Response>((resolve) => {
      grace = setTimeout(() => {
        gaveUp = true;
        const bare = bareAnswer(status);
        logPageNotReady(kernel, logger, request, error, bare.status, `so a bare ${bare.status} was sent`);
        resolve(bare);
      }, ERROR_PAGE_GRACE_MS);
    });
    const answer = Promise.resolve(page).then(
      (given) => {
        if (gaveUp) destroyBody(given instanceof Response ? given.body : null);
        return given instanceof Response ? given : bareAnswer();
      },
      (failure: unknown) => {
        if (!gaveUp) return failed(failure);
        logLatePageFailure(kernel, logger, request, error, failure);
        return bareAnswer();
      },
    );
    try {
      return await Promise.race([answer, late]);
    } finally {
      clearTimeout(grace);
    }
  };

  /** The answer to a stream body that failed before its first chunk: the kernel's error page, as the server answers it. */
  const pageOfFailedBody = (request: Request, error: unknown): Promise<Response> =>
    pageWithin(kernel.handleException(error, request), request, error, bareStatusOf(error), (unanswered) => {
      logEscaped(kernel, logger, request, unanswered);
      return bareAnswer();
    });

  /**
   * What handle() gives within the response timeout; past it, as from the server, request.signal is aborted with the
   * ResponseTimeoutError, whose page is the answer (see pageOfFailedBody), and what handle() gives later is dropped: a stream
   * body destroyed, an error that escaped it logged CRITICAL. The timer keeps no process alive.
   */
  const handledWithin = (request: Request, handled: PromiseLike<Response>, signal: AbortSignal | undefined): Promise<{ response: Response; isPage?: true }> =>
    new Promise((resolve, reject) => {
      let late = false;
      const timer = setTimeout(() => {
        late = true;
        // The caller gone by then (init.signal aborted, as a client that left) gets no 503: the request ends as its
        // leaving, a ClientClosedError (499, logged at INFO), as the server ends one whose client left; inject() rejects with the signal's reason.
        const timeout = signal?.aborted === true ? new ClientClosedError() : responseTimeoutOf(request, responseTimeout);
        // What the controller waits on with request.signal stops: nothing else could stop it.
        abortRequest(request, timeout);
        pageOfFailedBody(request, timeout).then((response) => resolve({ response, isPage: true }), reject);
      }, responseTimeout);
      timer.unref();
      handled.then(
        (response) => {
          if (late) return destroyBody(response.body);
          clearTimeout(timer);
          resolve({ response });
        },
        (error: unknown) => {
          if (late) return kernel.requestStack.run(request, () => logger?.critical('Unhandled error after the response timeout: {message}', { message: messageOf(error), error }));
          clearTimeout(timer);
          reject(error);
        },
      );
    });

  /**
   * The body the client would get, read whole; the response terminated once it is. `isPage`: `first`
   * is the page of an escaped error, which the server replaces with the bare 500 when it cannot send it.
   */
  const deliver = async (request: Request, first: Response, signal: AbortSignal | undefined, isPage: boolean, started: number): Promise<InjectedResponse> => {
    let response = first;
    let body: string | Uint8Array | null = null;
    let paged = isPage;
    // Whether init.signal had aborted when the answer became whole: one aborting after (in its clean-up, in kernel.terminate) changes nothing.
    let abortedBeforeWhole = false;
    // An error page's stream that fails with the very error it is the page of: the error listener's record of it is the one, as from the server.
    const logFailure = (error: unknown): void => {
      if (loggedAsServerError(error, request)) return;
      kernel.requestStack.run(request, () => logger?.critical('The response body stream failed: {message}', { message: messageOf(error), error }));
    };
    for (let attempt = 1; ; attempt++) {
      const refusal = refusalOf(response, request.method);
      if (refusal !== undefined) {
        // Refused before any byte: the server answers the refusal as an error of the request (its page, logged), a page it refuses with the bare 500.
        destroyBody(response.body);
        if (paged) kernel.requestStack.run(request, () => logger?.critical('Unhandled error: {message}', { message: messageOf(refusal), error: refusal }));
        response = paged ? bareAnswer() : await pageOfFailedBody(request, new ResponseNotSendableError(refusal, response.headers));
        paged = true;
        continue;
      }
      const given = response.body;
      if (request.method === 'HEAD' || response.isEmpty() || given === null) {
        // A stream never read (a HEAD's, or the one prepare() took from a 204 or 304): destroyed, and kernel.terminate
        // waits for its clean-up, as the server's does, so that what it logs is in the request's profile.
        abortedBeforeWhole = signal?.aborted === true;
        const unsent = given ?? discardedBody(response);
        if (unsent !== undefined && unsent !== null && typeof unsent === 'object' && !(unsent instanceof Uint8Array)) {
          // A legacy stream (`pipe()` alone) may have no destroy(): it is let go.
          destroyBody(unsent);
          await new Promise<void>((resolve) => closeWaits.afterClose(unsent, resolve));
          kernel.requestStack.run(request, () => logUnsentBodyFailure(logger, unsent));
        }
        break;
      }
      if (typeof given === 'string' || given instanceof Uint8Array) {
        abortedBeforeWhole = signal?.aborted === true;
        body = given;
        break;
      }
      // The app's own body is held to the response timeout from the moment handle() returned; an error page's is not, as by the server.
      const deadline = attempt === 1 && !isPage && responseTimeout > 0 ? { left: Math.max(0, started + responseTimeout - performance.now()), quiet: responseTimeout, expire: (cut: (error: Error) => void, begun: boolean) => {
        // Begun, the body was ready and then went quiet: its error says so, not that the response was not ready.
        const timeout = responseTimeoutOf(request, responseTimeout, begun);
        // The body first, as the server does: one wired to request.signal would fail with its AbortError instead.
        cut(timeout);
        abortRequest(request, timeout);
      } } : undefined;
      let read = await readWhole(given, signal, (error) => kernel.requestStack.run(request, () => logCleanupFailure(logger, error)), deadline);
      abortedBeforeWhole = signal?.aborted === true;
      // kernel.terminate waits for the body's clean-up, at most bodyCloseWaitMs, as the server's does: what it logs is in the profile.
      await new Promise<void>((resolve) => closeWaits.afterClose(given, resolve));
      // The server holds a stream to its Content-Length, and cuts the connection at a byte beyond it or an end short of it.
      const declared = declaredLength(response);
      if (read.bytes !== undefined && declared !== undefined && read.bytes.byteLength !== declared) read = { begun: true, error: contentLengthError(declared, read.bytes.byteLength) };
      if (read.bytes !== undefined) {
        body = read.bytes;
        break;
      }
      // Nothing came before the failure: the error page goes out instead (once; the bare 500, logged, if its own body fails so too).
      if (!read.begun && signal?.aborted !== true) {
        if (attempt > 1) logFailure(read.error);
        response = attempt === 1 ? await pageOfFailedBody(request, read.error) : bareAnswer();
        // A page: the server refuses to send it with the bare 500, its refusal logged, not a page of that refusal again.
        paged = true;
        continue;
      }
      if (signal?.aborted !== true && (isBodyFailure(read.error) || !READER_GONE.has((read.error as NodeJS.ErrnoException | null)?.code ?? ''))) logFailure(read.error);
      await terminate(request, response);
      throw read.error;
    }
    await terminate(request, response);
    // Aborted before the answer was whole (while handle() ran): rejected with its reason, whatever the body, once
    // the request has terminated, as while a stream body is read; the answer the caller gave up on is not given.
    // Aborted after (while a read stream closed, in kernel.terminate), as fetch()'s after its body is read: harmless.
    if (abortedBeforeWhole) throw signal!.reason;
    response.body = body;
    const text = (): string => (body === null ? '' : typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
    return Object.assign(response, { body, text, json: (): unknown => JSON.parse(text()) });
  };

  const run = async (target: string, init: InjectInit = {}): Promise<InjectedResponse> => {
    checkTarget(target);
    checkInit(init);
    // A signal aborted already rejects with its reason, as fetch() does, before anything runs: the request is never
    // handled, nor its stream body read (let go, as a refused request's), whatever its answer would have been.
    if (init.signal?.aborted === true) {
      releaseRefusedBody(init.body);
      throw init.signal.reason;
    }
    const { method = 'GET', ...createInit } = init;
    const request = Request.create(target, method, { ...createInit, ...readOptions });
    // node:http reads a request's headers into a plain object by assignment, where `__proto__` (in any case, lower-cased)
    // sets nothing: the server's kernel never sees such a header, so an injected request goes without it too.
    // Request.create() made the headers a copy, lower-cased with setOwn(): the caller's object is untouched.
    if (Object.hasOwn(request.headers, '__proto__')) delete request.headers['__proto__'];
    // Its body is held to the rules of a client's, as from the server: gzip, chunked is the reader's 400.
    requestInternals.sentAsByClient(request);
    // What startServers (or node's parser) refuses in a request's head never reaches the kernel: the same answer, logged as the
    // server logs it, and no kernel.terminate. Read from the header lines as given: their order says which line the parser stops at.
    const given = headerLines(init.headers);
    // The body as Request.create() took it, a json one as the text it wrote (it has refused one JSON cannot write), not written
    // again: a toJSON() may give another text each time, and the Content-Length is held to the one sent.
    checkDeclaredLength(given, requestInternals.unreadBody(request));
    // The method as a client sends it: `get` as GET, `patch` as written, which node's parser refuses (Request.create() upper-cases it).
    // A stream body goes with the Transfer-Encoding: chunked line a client adds for it, which the head limit counts.
    const framing = framingLine(init.body, given);
    const headRefusal = injectedHeadRefusal(sentMethod(method), wireTarget(String(target), request.url), request.headers, given, framing);
    if (headRefusal !== undefined) return refused(request, headRefusal, init);
    // The kernel sees that line too, as the server's does (a controller, the profile's note of a body sent in chunks and unread).
    if (framing !== undefined) request.headers[framing[0]] = framing[1];
    let response: Response;
    let isPage = false;
    // The monotonic clock, as the server's: a wall clock stepped meanwhile (NTP) would give the body the jump. Read once
    // handleMaybeAsync() has returned, as the server reads it: a synchronous answer's stream has the whole limit for its first
    // chunk, and handle()'s synchronous part (which no timer could cut) is not taken from what an async one has left.
    let started = 0;
    try {
      const handled = kernel.handleMaybeAsync(request);
      started = performance.now();
      const answer = isPromiseLike(handled) && responseTimeout > 0 ? await handledWithin(request, handled, init.signal ?? undefined) : { response: await handled };
      response = answer.response;
      isPage = answer.isPage === true;
    } catch (error) {
      const page = escapedPage(kernel, options, request, error);
      response = isPromiseLike(page) ? await pageWithin(page, request, error, 500, () => bareAnswer()) : page instanceof Response ? page : bareAnswer();
      isPage = true;
    }
    // The caller gone before handle() settled (init.signal aborted, as a client that left) got nothing: an answer under 400
    // ends as its leaving, a ClientClosedError (499, at INFO), as the server's respond() ends one, not as the success never
    // given (the profile, kernel.terminate); an error answer is kept, as the server keeps it. At the response timeout, see handledWithin.
    // (Read again: TypeScript takes `aborted` for false since the check above, though the awaits between let it change.)
    if ((init.signal as AbortSignal | null | undefined)?.aborted === true && !isPage && response.status < 400) {
      destroyBody(response.body);
      response = await pageOfFailedBody(request, new ClientClosedError());
      isPage = true;
    }
    return deliver(request, response, init.signal ?? undefined, isPage, started);
  };

  /** The answer startServers gives a request it refuses in its head, logged as the server's listener logs it. */
  const refused = (request: Request, { status, reason, closes }: HeadRefusal, { body: given, signal }: InjectInit): InjectedResponse => {
    // Never read, as by the server. With the signal aborted, the answer the caller no longer waits for is not given, nor logged
    // (the server logs a refusal once it is sent): a rejection with its reason, as while a body is read.
    releaseRefusedBody(given);
    if (signal?.aborted === true) throw signal.reason;
    logRefusal(logger, { status, reason, client: request.remoteAddress });
    const answer = refusalAnswer(status, reason, closes);
    // To a HEAD (`head` is sent as one), its head alone, as from the server.
    const body = request.method === 'HEAD' ? null : answer.body;
    return Object.assign(new Response(body, status, answer.headers), { body, text: () => body ?? '', json: (): unknown => JSON.parse(body ?? '') });
  };

  // Injects in flight, each settling once it has terminated: settled() waits for them.
  const inFlight = new Set<Promise<unknown>>();
  const inject = (target: string, init?: InjectInit): Promise<InjectedResponse> => {
    const answer = run(target, init);
    const done: Promise<unknown> = answer.then(
      () => inFlight.delete(done),
      () => inFlight.delete(done),
    );
    inFlight.add(done);
    return answer;
  };
  const settled = async (): Promise<void> => {
    // One begun meanwhile (by a terminate listener) is waited for too.
    while (inFlight.size > 0) await Promise.all(inFlight);
  };
  return Object.assign(inject, { settled });
}

/**
 * Refuses a target that is no string (nor a URL, which Request.create() reads as its text): a test
 * ported from Fastify passes its one object, which would fail inside Request.create() as `uri.indexOf`.
 */
function checkTarget(target: unknown): void {
  if (typeof target === 'string' || target instanceof URL) return;
  const fastify = isPlainObject(target) ? ": Fastify's inject({ method, url, payload }) is inject(url, { method, json }) here" : '';
  throw new TypeError(`inject() takes the request's target as its first argument, a string ('/books?page=2'), not ${describeValue(target)}${fastify}.`);
}

/**
 * Refuses a text, bytes or json body of another length than the one Content-Length given (a number): undici and node:http refuse to send it,
 * and the server would read that many bytes, where the request was given the whole body. Several, one that is no number, or one beside a Transfer-Encoding are the parser's refusals.
 */
function checkDeclaredLength(lines: ReadonlyArray<readonly [string, string]>, body: unknown): void {
  // Beside a Transfer-Encoding, the parser's refusal of the two is the answer.
  if ((typeof body !== 'string' && !(body instanceof Uint8Array)) || lines.some(([name]) => name.toLowerCase() === 'transfer-encoding')) return;
  const lengths = lines.filter(([name]) => name.toLowerCase() === 'content-length');
  const declared = lengths.length === 1 ? /^[ \t]*(\d+)[ \t]*$/.exec(lengths[0]![1])?.[1] : undefined;
  if (declared === undefined) return;
  const bytes = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
  if (BigInt(declared) !== BigInt(bytes)) {
    throw new RangeError(`inject()'s body is ${bytes} bytes, where its Content-Length says ${declared}: no client sends it (undici and node:http refuse it), and the server would read ${declared} bytes.`);
  }
}

/**
 * The response timeout createInjector() was given, checked as startServers checks its limits.responseTimeout (the same values,
 * a RangeError with the same words), so that one value configures both: 0 is off, none the server's default. setTimeout
 * would read NaN, a negative or a huge delay as 1 ms, and `'200'` would be read as no limit at all.
 */
function checkResponseTimeout(given: unknown): number {
  if (given === undefined) return DEFAULT_LIMITS.responseTimeout;
  if (typeof given === 'number' && Number.isInteger(given) && given >= 0 && given <= MAX_TIMER_MS) return given;
  throw new RangeError(`responseTimeout is a whole number of milliseconds from 0 (off) to ${MAX_TIMER_MS}, not ${describeLimit(given)}.`);
}

/** Refuses an init that inject() would misread, and the server's settings, which it does not take per request. */
function checkInit(init: unknown): void {
  if (!isPlainObject(init)) throw new TypeError(`inject() takes a plain object of options ({ method, headers, body }) as its second argument, not ${describeValue(init)}.`);
  for (const key of Object.keys(init)) {
    // Own keys only: `constructor` or `toString` would otherwise name a function as the server's setting.
    const setting = Object.hasOwn(SERVER_SETTINGS, key) ? SERVER_SETTINGS[key] : undefined;
    if (setting !== undefined) throw new TypeError(`inject() reads its request as the server does, with the server's ${setting}: give that to createKernel() (or createInjector()), not "${key}" to inject().`);
    if (!INIT_OPTIONS.has(key)) throw new TypeError(`inject() has no option "${key}"; its options are ${[...INIT_OPTIONS].join(', ')}.${FASTIFY_INJECT_OPTIONS.get(key) ?? ''}`);
  }
}

/** Fastify's inject() options, which a test ported from Fastify passes, with where they go here. */
const FASTIFY_INJECT_OPTIONS: ReadonlyMap<string, string> = new Map([
  ['payload', ' Fastify\'s payload is json here for a value to send as JSON, or body for text or bytes.'],
  ['query', ' Put the query in the target: inject(\'/books?tag=a&tag=b\').'],
  ['cookies', ' Send cookies as a header: headers: { cookie: \'session=abc\' }.'],
  ['url', ' The target is inject()\'s first argument.'],
  ['path', ' The target is inject()\'s first argument.'],
]);

/**
 * The request target a client writes on the wire for `given`, which the head limit counts: the one Request.create() made (`url`:
 * percent-encoded, a leading slash added, the fragment left out), behind the scheme and authority of an absolute URL as given. The
 * target as given counted an `é` as 1 byte where a client sends 6 (`%C3%A9`), and a fragment no client sends: inject() served a
 * target the server refuses with its 414, and refused one the server serves.
 */
function wireTarget(given: string, url: string): string {
  const authority = /^https?:\/\/[^/?#]*/i.exec(given)?.[0];
  // A URL with a user or password is kept whole as its target (without its fragment) for the kernel to refuse.
  return authority !== undefined && url.startsWith('/') ? `${authority}${url}` : url;
}

/** What the server would refuse to send of `response` to a `method` request (see checkSendable, checkPipedBody), or undefined. */
function refusalOf(response: Response, method: string): unknown {
  try {
    checkFraming(response);
    checkSendable(response);
    if (method !== 'HEAD' && !response.isEmpty()) checkPipedBody(response.body);
    return undefined;
  } catch (error) {
    return error;
  }
}

/** The Content-Length the server holds a stream body to (see frameResponse), or undefined. */
function declaredLength(response: Response): number | undefined {
  const declared = response.headers['content-length'];
  return response.headers['transfer-encoding'] === undefined && typeof declared === 'string' && /^\d+$/.test(declared) ? Number(declared) : undefined;
}

/** Why a stream body read by inject() was given up when nothing left to run could give its next chunk (see readWhole). */
const STALLED = 'The response body stream stalled: nothing left to run in the process could give its next chunk (the server answers such a body at its response timeout).';

/** How each body readWhole() is reading gives up, for the process's 'beforeExit' (one listener, while any is read). */
const reading = new Set<() => void>();

function giveUpStalled(): void {
  for (const giveUp of [...reading]) giveUp();
}

/** What readWhole() read: the bytes, or the error the body failed with and whether it had begun (given a chunk) first. */
type WholeBody = { bytes: Buffer; begun?: undefined; error?: undefined } | { bytes?: undefined; begun: boolean; error: unknown };

/**
 * The response timeout of a body readWhole() reads: `left` milliseconds on for its first chunk, then `quiet` milliseconds
 * without one (the server never cuts a body that flows once its head is out); `expire` is called with what fails the body, and whether it had begun.
 */
interface ReadDeadline {
  left: number;
  quiet: number;
  expire(cut: (error: Error) => void, begun: boolean): void;
}

/**
 * A stream body read whole, piped as the server pipes it; `signal` aborting destroys it, as `deadline` passing does. It is read
 * once the last chunk is taken, not once the body has closed: a clean-up that never ends must not
 * hold it (the caller waits for that close, bounded, as the server does), and one that fails goes to `cleanupFailed`.
 */
function readWhole(body: Readable, signal: AbortSignal | undefined, cleanupFailed: (error: Error) => void, deadline?: ReadDeadline): Promise<WholeBody> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const stalled = (): void => void source.destroy(new ServiceUnavailableHttpError(undefined, STALLED));
    const expire = (): void => deadline?.expire((error) => void source.destroy(error), chunks.length > 0);
    const settle = (read: WholeBody): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reading.delete(stalled);
      if (reading.size === 0) process.off('beforeExit', giveUpStalled);
      signal?.removeEventListener('abort', stop);
      resolve(read);
    };
    const stop = (): void => {
      settle({ begun: chunks.length > 0, error: signal!.reason });
      // Through the source, which destroys the body with it when it can: a legacy stream (`pipe()` alone) has no destroy().
      source.destroy(signal!.reason as Error);
    };
    const sink = new Writable({
      objectMode: true,
      write(chunk: unknown, encoding, callback): void {
        // An object-mode stream's chunk that is no text nor bytes: the server cuts the connection at it, or, the first, answers its error page.
        const refused = chunkTypeError(chunk);
        if (refused !== undefined) {
          settle({ begun: chunks.length > 0, error: refused });
          return callback(refused);
        }
        chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array));
        // Begun, a body is cut only once it stalls: one still flowing is read whole, as the server sends it.
        if (timer !== undefined && !done) {
          if (chunks.length === 1) {
            clearTimeout(timer);
            timer = setTimeout(expire, deadline!.quiet);
            timer.unref();
          } else timer.refresh();
        }
        callback();
      },
    });
    sink.once('finish', () => settle({ bytes: Buffer.concat(chunks) }));
    // Failed as soon as it is destroyed, with its error (or as one that closed without one): a destroy
    // that says nothing (no 'close', emitClose: false; a clean-up that never calls back, no error either)
    // would be read until the response timeout (for ever with none), where the server finds it at its response timeout too.
    const source = bodySource(body, cleanupFailed, true);
    pipeline(source, sink, (error) => {
      if (error) settle({ begun: chunks.length > 0, error });
    });
    // A body that stalls, never destroyed, is answered as the server answers it at its response timeout (a 503,
    // its page before its first chunk; a rejection, its cut, after it), and sooner, once the process has
    // nothing left to run that could give it a chunk ('beforeExit'): no timer of inject()'s own keeps the process
    // alive, nor does it end before the answer, which the page and kernel.terminate keep it alive for.
    if (reading.size === 0) process.on('beforeExit', giveUpStalled);
    reading.add(stalled);
    // In a process something else keeps alive (a listening server, a timer), 'beforeExit' never comes: the response timeout
    // answers the body then, as the server's does. Unref'd: inject() alone never keeps the process alive longer than its work.
    if (deadline !== undefined) {
      timer = setTimeout(expire, deadline.left);
      timer.unref();
    }
    if (signal?.aborted === true) stop();
    else signal?.addEventListener('abort', stop, { once: true });
  });
}
