import { availableParallelism } from 'node:os';
import {
  ControllerResolver,
  EventDispatcher,
  HttpKernel,
  RequestStack,
  Response,
  TraceableEventDispatcher,
  checkBodyLimit,
  compileTrustedHosts,
  isPromiseLike,
  type ArgumentResolverInterface,
  type Controller,
  type ControllerResolverInterface,
  type EventSubscriber,
  type Request,
  type TrustedHost,
} from '../../kernel/index.js';
import { ErrorListener, createErrorController, createFileLinker, fallbackErrorResponse } from '../errors/index.js';
import { DisallowRobotsIndexingListener, ResponseListener, ValidateHostListener } from '../http/index.js';
import { DebugLogBuffer, LogLevel, Logger, attachStderrSink, createBus, LEVEL_NAMES_TEXT, isLevelName, type LogLevelInput, type ObservationBus, type RequestDescriber } from '../log/index.js';
import { RouteCollection, RouterListener, UrlMatcher, type SchemePorts } from '../routing/index.js';
import {
  DEFAULT_PROFILER_ALLOW,
  DebugAccess,
  EventsCollector,
  ExceptionCollector,
  FileStorage,
  LoggerCollector,
  MemoryCollector,
  Profiler,
  ProfilerAccessListener,
  ProfilerController,
  Redactor,
  RequestCollector,
  RouterCollector,
  ThreadedFileStorage,
  TimeCollector,
  ToolbarListener,
  profilerRoutes,
  type DataCollector,
  type ProfilerStorage,
  type RedactionOptions,
  type StorageBounds,
} from '../profiler/index.js';
import { checkSaveOptions } from '../profiler/save-options.js';
import { MAX_TOKEN_LENGTH, MIN_TOKEN_LENGTH, isTokenLength } from '../profiler/token.js';
import { createInjector, type InjectInit, type InjectedResponse } from '../server/inject.js';
import { checkTrustedProxies, createRequestListener, type KernelRequestListener, type RequestListenerOptions } from '../server/node-adapter.js';
import { VAR_DIRECTORY, defaultUnderVar } from '../server/var-directory.js';
import { describeMisdeclaredSubscriber, describeValue } from '../../kernel/describe-value.js';
import { isPlainObject } from '../../kernel/name-value-object.js';
import { createRequestDescriber } from './describe-request.js';
import { isProductionEnvironment } from './environment.js';
import { OwnArgumentResolver } from './own-argument-resolver.js';
import { OwnControllerResolver } from './own-controller-resolver.js';
import { profileStoppedTerminates } from './profile-stopped-terminates.js';
import { oncePerKey, storageErrorLogger } from './profiler-storage-log.js';

/** The profiler's options (debug mode only). */
export interface ProfilerKernelOptions {
  /** Where profiles are kept; default files under `dir`. */
  storage?: ProfilerStorage;
  /** Directory of the default file storage; default `var/profiler` of the working directory, made with a `.gitignore` in a new `var/` as bin/serve does. */
  dir?: string;
  /** Bounds of the default file storage (max age in ms, max profiles, max bytes). */
  bounds?: Partial<StorageBounds>;
  /**
   * Whether the default file storage runs in a worker thread (ThreadedFileStorage) or on the
   * thread that answers requests (FileStorage), where its index, file writes and upkeep take that
   * thread's time. Same files either way. Default: a thread when the process may use more than
   * one CPU (`os.availableParallelism()`, which honours CPU affinity); on one CPU a second thread
   * only adds the hand-over's cost.
   */
  thread?: boolean;
  /** Token length in hex characters, a whole number from 6 to 32 (another is a TypeError); default 6. */
  tokenLength?: number;
  /** More collectors, after the built-in ones. */
  collectors?: readonly DataCollector[];
  /** What counts as secret (headers always hidden, key pattern). */
  redaction?: RedactionOptions;
  /** Most profiles waiting to be saved, a whole number from 1 (another is a TypeError); beyond it new ones are dropped (default 2,000). */
  maxQueuedProfiles?: number;
  /** Milliseconds profiles gather before a save starts, a whole number from 0 to 2147483647 (another is a TypeError; default 20); 0 starts it at once. */
  saveDelayMs?: number;
}

/** Everything `createKernel` accepts; the defaults are the safe ones (production, no debug). */
export interface KernelOptions {
  /** Environment name; outside `prod` and `production` responses carry `X-Robots-Tag: noindex`. Default `prod`. */
  env?: string;
  /** Debug mode: per-request logs, debug error pages, and the profiler (with its traced dispatcher) unless `profiler: false`. Default false. */
  debug?: boolean;
  /** The routes; `_controller` in a route's defaults names a function or a registered controller. */
  routes?: RouteCollection;
  /** Controllers reachable by name from `_controller`, in the default ControllerResolver. */
  controllers?: Record<string, Controller>;
  /**
   * Finds each request's controller (`getController(request)`), in place of the default
   * ControllerResolver; `controllers` fills the default one, so give one or the other.
   */
  controllerResolver?: ControllerResolverInterface;
  /**
   * Works out each controller's arguments (`getArguments(request, controller)`), in place of the
   * default `(request, routeParams)`. It is asked for the error controller's too, which needs the
   * request first: an `ArgumentResolver` whose value resolvers answer undefined for it does that.
   */
  argumentResolver?: ArgumentResolverInterface;
  /**
   * Renders error pages in place of the default controller (debug page, plain page, problem+json).
   * It runs in a sub-request whose `exception` attribute holds the error, and answers a Response;
   * when it throws or answers none, the plain page goes out with the error's status, and the failure
   * is logged as CRITICAL.
   */
  errorController?: Controller;
  /**
   * Debug mode: stack frames on the debug page and the profiler's exception panel link to this
   * editor (`vscode`, `cursor`, `webstorm`, `idea`, `zed`, `sublime`, ... see EDITOR_LINK_FORMATS)
   * or URL format (`%f` the file's absolute path, `%l` the line: `vscode://file/%f:%l`), as
   * Symfony's `framework.ide`. Default none. An editor or format it cannot use is a TypeError.
   */
  ide?: string;
  /** More listeners (objects with `getSubscribedEvents()`), added after the default chain. */
  subscribers?: readonly EventSubscriber[];
  /** Least severe level written to stderr, or false for none. Default `warning`. */
  stderrLogLevel?: LogLevelInput | false;
  /**
   * Least severe level the logger keeps: records at it and above are published on `bus` (where a
   * sink of your own listens, `bus.on('log', ...)`), those below cost nothing. Independent of
   * stderrLogLevel, which only filters what stderr gets. Default: `debug` in debug mode, else
   * stderrLogLevel (`error` when that is false), so that without debug nothing is built for no one.
   */
  logLevel?: LogLevelInput;
  /** Proxies allowed to set X-Forwarded-* (CIDR list). Default none. */
  trustedProxies?: readonly string[];
  /**
   * Hosts the service answers for (Symfony's trusted_hosts): `example.com`, `.example.com` (it and its
   * subdomains), `*.example.com` (subdomains only), IP addresses, or RegExps the whole host must match;
   * see TrustedHost. A request naming another host (Host, a trusted proxy's X-Forwarded-Host, an
   * absolute-form target) is a 400 `Untrusted Host "evil.test".`, so no redirect, link or error page
   * is ever written for it; the check is made on kernel.request at 256 (ValidateHostListener), before
   * the listeners below it can answer. A request without Host (HTTP/1.0) is answered for the local
   * address, as before. Invalid entries throw here. Default: every valid host.
   */
  trustedHosts?: readonly TrustedHost[];
  /** Largest request body in bytes. Default 1 MiB. */
  bodyLimit?: number;
  /**
   * Track the current request across awaits (`requestStack.getCurrentRequest()` anywhere, logs
   * attributed to their request). Always on in debug mode; off by default otherwise, because
   * Node 20's AsyncLocalStorage costs a server 6-10% of its throughput (README, Benchmarks).
   */
  requestContext?: boolean;
  /**
   * Clients that may see debug details and the profiler (CIDR list, `loopback`...). Default loopback only.
   * They see them on hosts no other site can name: IP addresses, `localhost`, `*.localhost` and `trustedHosts`.
   */
  debugAllow?: readonly string[];
  /** The profiler, recording every request in debug mode; false turns it off. Default on in debug mode. */
  profiler?: ProfilerKernelOptions | false;
  /** Ports a redirect to the other scheme goes to (a route with `schemes`), and links to it. Default 80 and 443; see KernelApp.schemePorts. */
  schemePorts?: Partial<SchemePorts>;
}

/** A wired kernel with the parts an embedder may want to reach. */
export interface KernelApp {
  kernel: HttpKernel;
  dispatcher: EventDispatcher;
  requestStack: RequestStack;
  bus: ObservationBus;
  logger: Logger;
  /** Per-request log records (debug mode only). */
  logs: DebugLogBuffer | null;
  /**
   * What the stderr sink writes of a record's request (method, path and query, client IP, profiler
   * token; see createRequestDescriber): give it to a sink of your own, `attachStderrSink(app.bus, { describeRequest })`.
   * Records carry their request in debug mode, or with `requestContext: true`.
   */
  describeRequest: RequestDescriber;
  /**
   * The rules that hide secrets (`profiler.redaction`) in what the profiler stores and in stderr's
   * lines: give it to a sink of your own too, `attachStderrSink(app.bus, { describeRequest, redaction: app.redactor })`.
   */
  redactor: Redactor;
  /** The profiler (debug mode only, unless turned off). */
  profiler: Profiler | null;
  routes: RouteCollection;
  /** A node:http request listener serving this kernel. */
  listener: KernelRequestListener;
  /**
   * Runs a request through the kernel without a socket, as `listener` would serve it (Fastify's
   * inject()): read with this app's trustedHosts, trustedProxies and bodyLimit, an escaped error
   * answered with the same page, a stream body read whole, no body for HEAD, and `kernel.terminate`
   * run (its profile queued) before it resolves. `init` is Request.create()'s, with `method` in it.
   */
  inject(target: string, init?: InjectInit): Promise<InjectedResponse>;
  env: string;
  debug: boolean;
  /**
   * Ports a redirect to the other scheme goes to, and links to it: `UrlGenerator.contextFrom(request, app.schemePorts)`.
   * Change them once the listeners are up (as `bin/serve` does: its https port is 8443, or one picked for port 0).
   */
  schemePorts: SchemePorts;
  /**
   * Resolves once the kernel is ready to serve at full speed: the profiler's first tokens are claimed
   * (at once without a profiler). Await it before listening, as `bin/serve` does: a request that
   * comes before waits for its token.
   */
  ready(): Promise<void>;
  /** Detaches sinks and collectors, once the injects in flight have terminated (their profiles saved), and lets go of the request stack's AsyncLocalStorage. */
  close(): Promise<void>;
}

/** Builds a kernel with the default request chain. The whole wiring is here, in one place. */
export function createKernel(options: KernelOptions = {}): KernelApp {
  // Options are checked first: one refused must not leave a storage thread or a log sink behind.
  checkOptions(options);
  const env = options.env ?? 'prod';
  const debug = options.debug ?? false;
  const routes = options.routes ?? new RouteCollection();
  const stderrLevel = options.stderrLogLevel ?? 'warning';
  const trustHost = options.trustedHosts === undefined ? undefined : compileTrustedHosts(options.trustedHosts);
  checkReplacements(options);
  const fileLink = createFileLinker(options.ide);

  // Debug mode needs it (log attribution, the profiler's sub-request tree); elsewhere it is opt-in.
  const requestStack = new RequestStack({ asyncContext: debug || options.requestContext === true });
  // Listeners are traced for the profiler's events and time panels, their only reader: without it, tracing would cost each call for nothing.
  const dispatcher = debug && options.profiler !== false ? new TraceableEventDispatcher(requestStack) : new EventDispatcher();
  const bus = createBus();
  // Without debug or logLevel, records below the stderr level are never built: logging stays off the hot path.
  const logger = new Logger({
    bus,
    channel: 'app',
    level: options.logLevel ?? (debug ? 'debug' : stderrLevel === false ? 'error' : stderrLevel),
    currentRequest: () => requestStack.getCurrentRequest(),
  });
  const logs = debug ? new DebugLogBuffer(bus) : null;

  // Debug details (stack traces, logs, debug headers, the profiler) only for allowed clients, on hosts no other site can name.
  const requestLogger = logger.withChannel('request');
  const access = debug
    ? new DebugAccess(options.debugAllow ?? DEFAULT_PROFILER_ALLOW, { trustHost, onHiddenHost: warnOncePerHost(requestLogger), onUntrustedProxy: warnOncePerProxy(requestLogger) })
    : null;
  const showDebug = (request: Request): boolean => access !== null && access.isAllowed(request);

  const profilerOptions = debug && options.profiler !== false ? (options.profiler ?? {}) : null;
  // One set of rules for what the profiler stores and what stderr gets, with or without the profiler.
  const redactor = new Redactor(typeof options.profiler === 'object' && options.profiler !== null ? options.profiler.redaction : undefined);
  let profiler: Profiler | null = null;
  let allRoutes = routes;
  const profilerPages: Controller[] = [];
  if (profilerOptions !== null) {
    // The storage's own errors (its upkeep's, reported to onError) go on the channel of its saves' errors.
    const profilerLogger = logger.withChannel('profiler');
    profiler = new Profiler({
      storage: profilerOptions.storage ?? defaultStorage(profilerOptions, storageErrorLogger(profilerLogger)),
      requestStack,
      redactor,
      logger: profilerLogger,
      tokenLength: profilerOptions.tokenLength,
      maxQueuedProfiles: profilerOptions.maxQueuedProfiles,
      saveDelayMs: profilerOptions.saveDelayMs,
      showDebug,
    });
    // The profiler's pages come first, so an application's catch-all route cannot hide them.
    allRoutes = new RouteCollection();
    for (const [name, route] of profilerRoutes(new ProfilerController(profiler, { fileLink, logger: profilerLogger }))) {
      allRoutes.add(name, route);
      profilerPages.push(route.defaults._controller as Controller);
    }
    for (const [name, route] of routes) allRoutes.add(name, route);
  }
  const matcher = new UrlMatcher(allRoutes);
  const describeRequest = createRequestDescriber({ requestStack, profiler });
  const detachSink = stderrLevel === false ? () => {} : attachStderrSink(bus, { level: stderrLevel, describeRequest, redaction: redactor });
  if (profiler !== null && logs !== null) {
    const traceable = dispatcher as TraceableEventDispatcher;
    for (const collector of [
      new RequestCollector(redactor),
      new ExceptionCollector(redactor),
      new LoggerCollector(logs, redactor),
      new EventsCollector(traceable),
      new TimeCollector(),
      new RouterCollector(matcher, redactor),
      new MemoryCollector(),
      ...(profilerOptions?.collectors ?? []),
    ]) {
      profiler.addCollector(collector);
    }
  }

  const errorController = options.errorController ?? createErrorController({
    debug,
    showDebug,
    requestStack,
    logs,
    fileLink,
    profilerUrl: (request) => {
      const token = profiler?.tokenOf(request);
      return token === undefined ? null : `/_profiler/${token}`;
    },
  });
  // The error page's controller and the profiler's pages are set on requests by the kernel itself: resolvers of
  // the embedder's, which know the embedder's controllers, are gone around for them (the error controller's
  // arguments excepted, as documented: it may be the embedder's own).
  const controllerResolver = options.controllerResolver === undefined ? new ControllerResolver(options.controllers) : new OwnControllerResolver(options.controllerResolver, new Set([errorController, ...profilerPages]));
  const argumentResolver = options.argumentResolver === undefined ? undefined : new OwnArgumentResolver(options.argumentResolver, new Set(profilerPages));
  const kernel = new HttpKernel(dispatcher, controllerResolver, requestStack, argumentResolver);
  // The profile of a request is taken even when its kernel.terminate stops (or fails) before the profiler's listener.
  if (profiler !== null) profileStoppedTerminates(kernel, profiler);
  // A refused target or host is a 400 before any listener that might answer without reading them.
  dispatcher.addSubscriber(new ValidateHostListener());
  if (access !== null) dispatcher.addSubscriber(new ProfilerAccessListener(access));
  if (profiler !== null) {
    dispatcher.addSubscriber(profiler);
    dispatcher.addSubscriber(new ToolbarListener(showDebug));
  }
  const schemePorts: SchemePorts = { http: options.schemePorts?.http ?? 80, https: options.schemePorts?.https ?? 443 };
  dispatcher.addSubscriber(new RouterListener(matcher, logger.withChannel('request'), schemePorts));
  dispatcher.addSubscriber(new ResponseListener());
  if (!isProductionEnvironment(env)) dispatcher.addSubscriber(new DisallowRobotsIndexingListener());
  dispatcher.addSubscriber(new ErrorListener(errorController, logger.withChannel('request')));
  for (const subscriber of options.subscribers ?? []) dispatcher.addSubscriber(subscriber);

  // An error that escaped the kernel (a kernel.exception listener that threw) still gets the error
  // page, made outside the kernel as Symfony's ErrorHandler makes it, in an error sub-request's
  // context (its logs are the request's); the plain page when that fails too. The profiler records
  // the request with that page and error (the server terminates it once the page is sent).
  const unhandled = (error: unknown, request: Request): Response | Promise<Response> => {
    const sub = request.duplicate({ attributes: { _controller: errorController, exception: error } });
    const answered = (response: Response): Response => {
      profiler?.recordUnhandled(request, response, error);
      return response;
    };
    const fallback = (): Response => answered(fallbackErrorResponse(error, request));
    const page = (result: unknown): Response => (result instanceof Response ? answered(result) : fallback());
    try {
      const result = requestStack.run(request, () => requestStack.run(sub, () => errorController(sub)));
      return isPromiseLike(result) ? Promise.resolve(result).then(page, fallback) : page(result);
    } catch {
      return fallback();
    }
  };
  // One set of options for both: a request injected is read and answered as one from a socket.
  const serving: RequestListenerOptions = { trustedProxies: options.trustedProxies, trustedHosts: trustHost, bodyLimit: options.bodyLimit, logger, unhandled };
  const listener = createRequestListener(kernel, serving);
  const inject = createInjector(kernel, serving);

  // The matcher was compiled from these routes: a route added later would never be matched (yet the generator would know it).
  const compiled = 'the kernel compiled its routes when it was made, and would never match a change: add routes before createKernel().';
  routes.freeze(compiled);
  allRoutes.freeze(compiled);

  return {
    kernel,
    dispatcher,
    requestStack,
    bus,
    logger,
    logs,
    describeRequest,
    redactor,
    profiler,
    routes: allRoutes,
    listener,
    inject,
    env,
    debug,
    schemePorts,
    ready: () => profiler?.ready() ?? Promise.resolve(),
    async close() {
      // A stream body cut by the server's shutdown terminates once it has closed, an inject in flight once it is answered: its profile is queued then.
      await Promise.all([listener.settled(), inject.settled()]);
      try {
        await profiler?.close();
        await profiler?.storage.close();
      } finally {
        // Whether or not the storage closed (a disk gone): the sink and the collectors let go, and last the
        // request stack's AsyncLocalStorage, which would otherwise weigh on every async resource of the process for good.
        detachSink();
        logs?.detach();
        requestStack.close();
      }
    },
  };
}

/** Refuses, with what to give instead, a replacement part that the kernel could not call. */
function checkReplacements(options: KernelOptions): void {
  const { errorController, controllerResolver, argumentResolver } = options;
  if (errorController !== undefined && typeof errorController !== 'function') {
    throw new TypeError(`errorController must be a controller, a function of the request that returns a Response, not ${describeValue(errorController)}.`);
  }
  if (controllerResolver !== undefined && typeof (controllerResolver as Partial<ControllerResolverInterface> | null)?.getController !== 'function') {
    throw new TypeError(`controllerResolver must be an object with a getController(request) method, not ${describeValue(controllerResolver)}.`);
  }
  if (controllerResolver !== undefined && options.controllers !== undefined) {
    throw new TypeError('controllers registers names in the default ControllerResolver, which controllerResolver replaces: register them in your resolver, or leave controllerResolver out.');
  }
  if (argumentResolver !== undefined && typeof (argumentResolver as Partial<ArgumentResolverInterface> | null)?.getArguments !== 'function') {
    throw new TypeError(`argumentResolver must be an object with a getArguments(request, controller) method, not ${describeValue(argumentResolver)}.`);
  }
}

/** Every option createKernel knows: an unknown one is a typo (`route` for `routes`), refused rather than ignored. */
const KNOWN_OPTIONS: Readonly<Record<keyof KernelOptions, true>> = {
  env: true,
  debug: true,
  routes: true,
  controllers: true,
  controllerResolver: true,
  argumentResolver: true,
  errorController: true,
  ide: true,
  subscribers: true,
  stderrLogLevel: true,
  logLevel: true,
  trustedProxies: true,
  trustedHosts: true,
  bodyLimit: true,
  requestContext: true,
  debugAllow: true,
  profiler: true,
  schemePorts: true,
};

/** Refuses options of the wrong shape, which would fail later with a message naming none of them, or silently do nothing. */
function checkOptions(options: KernelOptions): void {
  if (!isPlainObject(options)) throw new TypeError(`createKernel takes a plain object of options, not ${describeValue(options)}.`);
  for (const name of Object.keys(options)) {
    if (!Object.hasOwn(KNOWN_OPTIONS, name)) throw new TypeError(`createKernel has no option "${name}"; its options are ${Object.keys(KNOWN_OPTIONS).join(', ')}.`);
  }
  if (options.routes !== undefined && !(options.routes instanceof RouteCollection)) {
    throw new TypeError(`routes is a RouteCollection (new RouteCollection().add('name', new Route('/path', ...))), not ${describeValue(options.routes)}.`);
  }
  if (options.subscribers !== undefined) {
    if (!Array.isArray(options.subscribers)) throw new TypeError(`subscribers is an array of event subscribers, not ${describeValue(options.subscribers)}.`);
    const bad = options.subscribers.findIndex((subscriber: unknown) => typeof (subscriber as { getSubscribedEvents?: unknown } | null)?.getSubscribedEvents !== 'function');
    if (bad !== -1) throw new TypeError(`subscribers[${bad}] is an event subscriber (an object with getSubscribedEvents()), not ${describeMisdeclaredSubscriber(options.subscribers[bad]) ?? describeValue(options.subscribers[bad])}.`);
  }
  for (const name of ['debug', 'requestContext'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'boolean') throw new TypeError(`${name} is true or false, not ${describeValue(options[name])}.`);
  }
  for (const name of ['env', 'ide'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'string') throw new TypeError(`${name} is a string, not ${describeValue(options[name])}.`);
  }
  for (const name of ['controllers', 'schemePorts'] as const) {
    const value: unknown = options[name];
    if (value !== undefined && !isPlainObject(value)) throw new TypeError(`${name} is a plain object, not ${describeValue(value)}.`);
  }
  for (const [name, port] of Object.entries(options.schemePorts ?? {})) {
    if (name !== 'http' && name !== 'https') throw new TypeError(`schemePorts has the ports of http and https only, not of "${name}".`);
    if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535) throw new TypeError(`schemePorts.${name} is a port from 1 to 65535, not ${describeValue(port)}.`);
  }
  for (const [name, controller] of Object.entries(options.controllers ?? {})) {
    if (typeof controller !== 'function') throw new TypeError(`controllers.${name} is a function, not ${describeValue(controller)}.`);
  }
  if (options.debugAllow !== undefined && (!Array.isArray(options.debugAllow) || options.debugAllow.some((entry) => typeof entry !== 'string'))) {
    throw new TypeError(`debugAllow is an array of addresses and CIDR ranges (such as ['loopback', '10.0.0.0/8']), not ${describeValue(options.debugAllow)}.`);
  }
  if (options.trustedHosts !== undefined && !Array.isArray(options.trustedHosts)) throw new TypeError(`trustedHosts is an array of host names and patterns, not ${describeValue(options.trustedHosts)}.`);
  checkProfilerOptions(options.profiler);
  if (options.bodyLimit !== undefined) checkBodyLimit(options.bodyLimit);
  checkTrustedProxies(options.trustedProxies);
  for (const name of ['stderrLogLevel', 'logLevel'] as const) {
    const value: unknown = options[name];
    if (value === undefined || (name === 'stderrLogLevel' && value === false)) continue;
    if (!isLevelName(value)) {
      throw new TypeError(`${name} is a level name (${LEVEL_NAMES_TEXT}, in any case)${name === 'stderrLogLevel' ? ' or false' : ''}, not ${describeValue(value)}.`);
    }
  }
}

const KNOWN_PROFILER_OPTIONS: Readonly<Record<keyof ProfilerKernelOptions, true>> = {
  storage: true,
  dir: true,
  bounds: true,
  thread: true,
  tokenLength: true,
  collectors: true,
  redaction: true,
  maxQueuedProfiles: true,
  saveDelayMs: true,
};

/** The profiler option: false, or an object of known options (`true` would read as the defaults, and a typo would be lost). */
function checkProfilerOptions(profiler: unknown): void {
  if (profiler === undefined || profiler === false) return;
  if (!isPlainObject(profiler)) {
    throw new TypeError(`profiler is false or a plain object of profiler options ({} for the defaults), not ${describeValue(profiler)}.`);
  }
  for (const name of Object.keys(profiler)) {
    if (!Object.hasOwn(KNOWN_PROFILER_OPTIONS, name)) throw new TypeError(`The profiler has no option "${name}"; its options are ${Object.keys(KNOWN_PROFILER_OPTIONS).join(', ')}.`);
  }
  const { collectors, thread, dir, tokenLength } = profiler as ProfilerKernelOptions;
  if (collectors !== undefined && (!Array.isArray(collectors) || collectors.some((collector: unknown) => typeof (collector as { name?: unknown } | null)?.name !== 'string'))) {
    throw new TypeError(`profiler.collectors is an array of data collectors (objects with a name), not ${describeValue(collectors)}.`);
  }
  if (thread !== undefined && typeof thread !== 'boolean') throw new TypeError(`profiler.thread is true or false, not ${describeValue(thread)}.`);
  if (dir !== undefined && (typeof dir !== 'string' || dir === '')) throw new TypeError(`profiler.dir is a directory path, not ${describeValue(dir)}.`);
  if (tokenLength !== undefined && !isTokenLength(tokenLength)) {
    throw new TypeError(`profiler.tokenLength is a whole number of hex characters from ${MIN_TOKEN_LENGTH} to ${MAX_TOKEN_LENGTH}, not ${describeValue(tokenLength)}.`);
  }
  checkSaveOptions(profiler, 'profiler.');
}

/** The file storage the profiler options describe (see ProfilerKernelOptions.thread). */
function defaultStorage(options: ProfilerKernelOptions, onError: (error: Error) => void): ProfilerStorage {
  // A directory given is the embedder's choice; the default is bin/serve's, with var/ made as it makes it.
  const fileOptions = { dir: options.dir ?? defaultUnderVar(`${VAR_DIRECTORY}/profiler`, 'profiler: { dir }'), bounds: options.bounds, onError };
  return (options.thread ?? availableParallelism() > 1) ? new ThreadedFileStorage(fileOptions) : new FileStorage(fileOptions);
}

/** Tells the developer, once per host, why an allowed client sees no debug details there. */
function warnOncePerHost(logger: Logger): (host: string) => void {
  return oncePerKey(
    (host: string) => host,
    (host) => logger.warning('Debug details and the profiler are hidden on host "{host}": they are shown on IP addresses, localhost and *.localhost, and on the trusted hosts (--trusted-hosts), so that a page of another site cannot read them by pointing its name at this server (DNS rebinding).', { host }),
  );
}

/** Tells the developer, once per proxy address, why an allowed client sees no debug details through it. */
function warnOncePerProxy(logger: Logger): (proxy: string, trusted: boolean) => void {
  const warn = oncePerKey(
    ({ proxy }: { proxy: string; trusted: boolean }) => proxy,
    ({ proxy, trusted }) =>
      trusted
        ? logger.warning('Debug details and the profiler are hidden from requests passed on by the trusted proxy at {proxy}: its X-Forwarded-For names no client, so the client is judged by its other forwarding headers (Forwarded, X-Real-IP, Via...), which name a client outside --profiler-allow, no client, or a host outside localhost and the trusted hosts. Have the proxy append its client to X-Forwarded-For; a server other machines can reach runs with --env prod or --no-debug.', { proxy })
        : logger.warning('Debug details and the profiler are hidden from requests passed on by the proxy at {proxy}, which is not in the trusted proxies (--trusted-proxies): its forwarding headers (X-Forwarded-For, Forwarded, X-Real-IP, Via...) name a client outside --profiler-allow, no client, or a host outside localhost and the trusted hosts. List the proxy in --trusted-proxies to have the client its X-Forwarded-For names judged; a server other machines can reach runs with --env prod or --no-debug.', { proxy }),
  );
  return (proxy, trusted) => warn({ proxy, trusted });
}
