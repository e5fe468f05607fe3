/** Realistic profiles for the UI tests: a 404 with its error-page sub-request, and ways to spoil them. */
import type { LogRecord } from '../../../../lib/log/index.js';
import type {
  EventsData,
  ExceptionData,
  LoggerData,
  MemoryData,
  Profile,
  ProfileSummary,
  RequestData,
  RouterData,
  TimeData,
} from '../../../../lib/profiler/profile.js';
import type { ProfilerUrls } from '../../../../lib/profiler/ui/index.js';

/** 21-Nov-2026 21:40:54.123 UTC. */
export const TIME = Date.UTC(2026, 10, 21, 21, 40, 54, 123);

export const urls: ProfilerUrls = {
  panel: (token, panel) => `/_profiler/${token}${panel !== undefined ? `?panel=${panel}` : ''}`,
  search: (criteria) => `/_profiler/search${criteria !== undefined ? `?${new URLSearchParams(criteria)}` : ''}`,
  latest: () => '/_profiler/latest',
  toolbar: (token) => `/_wdt/${token}`,
};

function log(overrides: Partial<LogRecord>): LogRecord {
  return { time: TIME + 2, level: 6, levelName: 'INFO', channel: 'request', message: '', context: {}, ...overrides };
}

export function mainProfile(): Profile {
  const request: RequestData = {
    method: 'GET',
    url: 'http://127.0.0.1:8000/robots.txt?page=2',
    path: '/robots.txt',
    requestHeaders: { host: '127.0.0.1:8000', 'user-agent': 'curl/8.5.0', accept: '*/*', authorization: '[redacted]', referer: 'http://127.0.0.1:8000/home' },
    query: { page: '2', tag: ['a', 'b'] },
    cookies: { theme: 'dark', session: '[redacted]' },
    body: null,
    bodyTruncated: false,
    attributes: { _controller: null, _locale: 'en' },
    route: null,
    routeParams: {},
    controller: null,
    clientIp: '127.0.0.1',
    requestType: 'main',
    statusCode: 404,
    statusText: 'Not Found',
    responseHeaders: { 'content-type': 'text/html; charset=UTF-8', 'x-debug-token': 'a1b2c3', 'x-previous-debug-token': 'd4e5f6' },
    contentType: 'text/html; charset=UTF-8',
    session: null,
  };
  const exception: ExceptionData = {
    exceptions: [
      {
        class: 'NotFoundHttpError',
        message: 'No route found for "GET http://127.0.0.1:8000/robots.txt" (from "http://127.0.0.1:8000/home")',
        status: 404,
        code: 'HK_NOT_FOUND',
        frames: [
          { function: 'RouterListener.onKernelRequest', file: '/app/lib/routing/router-listener.ts', line: 41, column: 13, internal: false },
          { function: 'EventDispatcher.dispatch', file: '/app/kernel/event-dispatcher.ts', line: 88, column: 7, internal: false },
          { function: 'process.processTicksAndRejections', file: 'node:internal/process/task_queues', line: 95, column: 5, internal: true },
          { function: 'runNextTicks', file: 'node:internal/process/task_queues', line: 64, column: 3, internal: true },
        ],
        stack: 'NotFoundHttpError: No route found for "GET http://127.0.0.1:8000/robots.txt"\n    at RouterListener.onKernelRequest (/app/lib/routing/router-listener.ts:41:13)',
      },
      {
        class: 'ResourceNotFoundError',
        message: 'No routes found for "/robots.txt/".',
        status: null,
        frames: [{ function: 'UrlMatcher.match', file: '/app/lib/routing/url-matcher.ts', line: 120, column: 11, internal: false }],
        stack: 'ResourceNotFoundError: No routes found for "/robots.txt/".',
      },
    ],
  };
  const logs: LogRecord[] = [
    log({ level: 7, levelName: 'DEBUG', channel: 'event', message: 'Notified event "kernel.request" to listener "CorsListener.onKernelRequest".' }),
    log({ level: 6, levelName: 'INFO', channel: 'request', message: 'Matched no route for "/robots.txt"', context: { path: '/robots.txt', tried: 3 } }),
    log({ level: 4, levelName: 'WARNING', channel: 'security', message: 'Remember-me cookie is missing' }),
    log({ time: TIME + 4.5, level: 3, levelName: 'ERROR', channel: 'request', message: 'Uncaught exception NotFoundHttpError: No route found for "GET http://127.0.0.1:8000/robots.txt"', context: { exception: 'NotFoundHttpError' } }),
  ];
  const logger: LoggerData = { logs, counts: { DEBUG: 1, INFO: 1, WARNING: 1, ERROR: 1 }, errorCount: 1, warningCount: 1 };
  const events: EventsData = {
    called: [
      { event: 'kernel.request', listener: 'CorsListener.onKernelRequest', priority: 250, start: 0.2, duration: 0.05 },
      { event: 'kernel.request', listener: 'SessionListener.onKernelRequest', priority: 128, start: 0.3, duration: 0.04 },
      { event: 'kernel.request', listener: 'RouterListener.onKernelRequest', priority: 32, start: 0.4, duration: 1.7 },
      { event: 'kernel.exception', listener: 'ErrorListener.onKernelException', priority: -128, start: 2.4, duration: 3.1, stoppedPropagation: true },
      { event: 'kernel.response', listener: 'ProfilerListener.onKernelResponse', priority: -100, start: 5.7, duration: 0.3 },
    ],
    dispatches: [
      { event: 'kernel.request', start: 0.1, duration: 2.1 },
      { event: 'kernel.exception', start: 2.3, duration: 3.3 },
      { event: 'kernel.response', start: 5.6, duration: 0.5 },
    ],
    notCalled: [{ event: 'kernel.request', listener: 'FirewallListener.onKernelRequest', priority: 8 }],
    orphaned: ['kernel.view'],
  };
  const time: TimeData = {
    startTime: TIME,
    duration: 6.5,
    periods: [
      { name: 'kernel.request', category: 'event', start: 0.1, duration: 2.1 },
      { name: 'CorsListener.onKernelRequest', category: 'listener', start: 0.2, duration: 0.05 },
      { name: 'RouterListener.onKernelRequest', category: 'listener', start: 0.4, duration: 1.7 },
      { name: 'kernel.exception', category: 'event', start: 2.3, duration: 3.3 },
      { name: 'ErrorListener.onKernelException', category: 'listener', start: 2.4, duration: 3.1 },
      { name: 'kernel.response', category: 'event', start: 5.6, duration: 0.5 },
    ],
  };
  const router: RouterData = {
    route: null,
    params: {},
    redirect: null,
    routed: { method: 'GET', path: '/robots.txt', host: '127.0.0.1', scheme: 'http' },
    traces: [
      { name: 'home', path: '/', verdict: 'mismatch', reason: 'Path does not match' },
      { name: 'robots_dir', path: '/robots.txt/', verdict: 'almost', reason: 'Path almost matches, but with a trailing slash' },
      { name: 'health', path: '/health', verdict: 'mismatch', reason: 'Path does not match' },
    ],
  };
  const memory: MemoryData = { heapUsed: 12.5 * 1024 * 1024, rss: 64 * 1024 * 1024 };
  return {
    token: 'a1b2c3',
    parent: null,
    children: ['d4e5f6'],
    ip: '127.0.0.1',
    method: 'GET',
    url: 'http://127.0.0.1:8000/robots.txt?page=2',
    time: TIME,
    status: 404,
    collectors: { request, exception, logger, events, time, router, memory },
  };
}

export function childSummary(): ProfileSummary {
  return { token: 'd4e5f6', parent: 'a1b2c3', ip: '127.0.0.1', method: 'GET', url: 'http://127.0.0.1:8000/_error/404', time: TIME + 3, status: 404 };
}

export function summaryOf(profile: Profile): ProfileSummary {
  return { token: profile.token, parent: profile.parent, ip: profile.ip, method: profile.method, url: profile.url, time: profile.time, status: profile.status };
}

/** A profile with no exception, a matched route, a body and a session. */
export function okProfile(): Profile {
  const profile = mainProfile();
  const request = profile.collectors['request'] as RequestData;
  profile.token = '0f9e8d';
  profile.status = 201;
  profile.method = 'POST';
  profile.url = 'http://127.0.0.1:8000/books';
  profile.children = [];
  profile.collectors = {
    ...profile.collectors,
    request: {
      ...request,
      method: 'POST',
      url: 'http://127.0.0.1:8000/books',
      path: '/books',
      body: '{"title":"Dune","password":"[redacted]"}',
      bodyTruncated: true,
      route: 'book_create',
      routeParams: { _format: 'json' },
      controller: 'BookController::create',
      statusCode: 201,
      statusText: 'Created',
      session: { user: 'alice', cart: [1, 2] },
    } satisfies RequestData,
    exception: { exceptions: [] } satisfies ExceptionData,
    router: { route: 'book_create', params: { _format: 'json' }, redirect: null, routed: { method: 'POST', path: '/books', host: 'localhost', scheme: 'http' }, traces: [{ name: 'book_create', path: '/books', verdict: 'match', reason: 'Route matches' }] } satisfies RouterData,
  };
  return profile;
}

/** The HTML-special payload every escaping test plants. */
export const XSS = '<script>alert(1)</script>';

/** A profile with the payload in every request-controlled place. */
export function hostileProfile(): Profile {
  const profile = mainProfile();
  const request = profile.collectors['request'] as RequestData;
  profile.url = `http://127.0.0.1:8000/${XSS}`;
  profile.method = XSS;
  profile.ip = XSS;
  profile.collectors = {
    ...profile.collectors,
    request: {
      ...request,
      url: profile.url,
      path: `/${XSS}`,
      requestHeaders: { [XSS]: XSS, referer: XSS },
      query: { [XSS]: XSS, list: [XSS] },
      cookies: { [XSS]: XSS },
      body: XSS,
      attributes: { [XSS]: { nested: XSS } },
      route: XSS,
      routeParams: { [XSS]: XSS },
      controller: XSS,
      responseHeaders: { [XSS]: XSS },
      session: { [XSS]: XSS },
    } satisfies RequestData,
    exception: {
      exceptions: [{ class: XSS, message: XSS, status: 404, code: XSS, frames: [{ function: XSS, file: XSS, line: 1, column: 1, internal: false }, { function: XSS, file: XSS, line: 2, column: 1, internal: true }], stack: XSS }],
      handled: [{ class: `${XSS}handled`, message: `${XSS}handled`, status: 500, frames: [{ function: XSS, file: XSS, line: 3, column: 1, internal: false }], stack: XSS }],
    } satisfies ExceptionData,
    logger: {
      logs: [log({ levelName: 'ERROR', level: 3, channel: XSS, message: XSS, context: { [XSS]: XSS } })],
      counts: { ERROR: 1 },
      errorCount: 1,
      warningCount: 0,
    } satisfies LoggerData,
    events: {
      called: [{ event: XSS, listener: XSS, priority: 0, start: 0, duration: 1 }],
      dispatches: [{ event: XSS, start: 0, duration: 1 }],
      notCalled: [{ event: XSS, listener: XSS, priority: 0 }],
      orphaned: [XSS],
    } satisfies EventsData,
    time: { startTime: TIME, duration: 1, periods: [{ name: XSS, category: 'listener', start: 0, duration: 1 }] } satisfies TimeData,
    router: { route: XSS, params: { [XSS]: XSS }, redirect: `javascript:${XSS}`, routed: { method: 'GET', path: XSS, host: XSS, scheme: 'http' }, traces: [{ name: XSS, path: XSS, verdict: 'almost', reason: XSS }] } satisfies RouterData,
    [XSS]: { [XSS]: XSS },
  };
  return profile;
}
