import {
  ControllerResolver,
  EventDispatcher,
  HttpKernel,
  RequestStack,
  TraceableEventDispatcher,
  type Controller,
  type EventSubscriber,
} from '../../kernel/index.js';
import { ErrorListener, createErrorController } from '../errors/index.js';
import { DisallowRobotsIndexingListener, ResponseListener } from '../http/index.js';
import { DebugLogBuffer, Logger, attachStderrSink, createBus, type LogLevelName, type ObservationBus } from '../log/index.js';
import { RouteCollection, RouterListener, UrlMatcher } from '../routing/index.js';
import { createRequestListener, type NodeRequestListener } from '../server/node-adapter.js';

/** Everything `createKernel` accepts; the defaults are the safe ones (production, no debug). */
export interface KernelOptions {
  /** Environment name; outside `prod` responses carry `X-Robots-Tag: noindex`. Default `prod`. */
  env?: string;
  /** Debug mode: traced dispatcher, per-request logs, debug error pages. Default false. */
  debug?: boolean;
  /** The routes; `_controller` in a route's defaults names a function or a registered controller. */
  routes?: RouteCollection;
  /** Controllers reachable by name from `_controller`. */
  controllers?: Record<string, Controller>;
  /** More listeners (objects with `getSubscribedEvents()`), added after the default chain. */
  subscribers?: EventSubscriber[];
  /** Least severe level written to stderr, or false for none. Default `warning`. */
  stderrLogLevel?: LogLevelName | Lowercase<LogLevelName> | false;
  /** Proxies allowed to set X-Forwarded-* (CIDR list). Default none. */
  trustedProxies?: readonly string[];
  /** Largest request body in bytes. Default 1 MiB. */
  bodyLimit?: number;
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
  routes: RouteCollection;
  /** A node:http request listener serving this kernel. */
  listener: NodeRequestListener;
  env: string;
  debug: boolean;
  /** Detaches sinks and collectors. */
  close(): Promise<void>;
}

/** Builds a kernel with the default request chain. The whole wiring is here, in one place. */
export function createKernel(options: KernelOptions = {}): KernelApp {
  const env = options.env ?? 'prod';
  const debug = options.debug ?? false;
  const routes = options.routes ?? new RouteCollection();
  const stderrLevel = options.stderrLogLevel ?? 'warning';

  const requestStack = new RequestStack();
  const dispatcher = debug ? new TraceableEventDispatcher(requestStack) : new EventDispatcher();
  const bus = createBus();
  // Without debug, records below the stderr level are never built: logging stays off the hot path.
  const logger = new Logger({
    bus,
    channel: 'app',
    level: debug ? 'debug' : stderrLevel === false ? 'error' : stderrLevel,
    currentRequest: () => requestStack.getCurrentRequest(),
  });
  const detachSink = stderrLevel === false ? () => {} : attachStderrSink(bus, { level: stderrLevel });
  const logs = debug ? new DebugLogBuffer(bus) : null;

  const controllerResolver = new ControllerResolver(options.controllers);
  const kernel = new HttpKernel(dispatcher, controllerResolver, requestStack);

  const errorController = createErrorController({ debug, requestStack, logs });
  dispatcher.addSubscriber(new RouterListener(new UrlMatcher(routes), logger.withChannel('request')));
  dispatcher.addSubscriber(new ResponseListener());
  if (env !== 'prod') dispatcher.addSubscriber(new DisallowRobotsIndexingListener());
  dispatcher.addSubscriber(new ErrorListener(errorController, logger.withChannel('request')));
  for (const subscriber of options.subscribers ?? []) dispatcher.addSubscriber(subscriber);

  const listener = createRequestListener(kernel, { trustedProxies: options.trustedProxies, bodyLimit: options.bodyLimit, logger });

  return {
    kernel,
    dispatcher,
    requestStack,
    bus,
    logger,
    logs,
    routes,
    listener,
    env,
    debug,
    async close() {
      detachSink();
      logs?.detach();
    },
  };
}
