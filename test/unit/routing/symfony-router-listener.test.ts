// Symfony's RouterListenerTest, ported to this kernel's API: each test is named after the Symfony case it ports.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ControllerResolver,
  EventDispatcher,
  HttpKernel,
  MethodNotAllowedHttpError,
  NotFoundHttpError,
  Request,
  RequestEvent,
  RequestType,
  Response,
  SuspiciousOperationError,
} from '../../../kernel/index.js';
import { ErrorListener } from '../../../lib/errors/index.js';
import { ValidateHostListener } from '../../../lib/http/index.js';
import { Logger, createBus, type LogRecord } from '../../../lib/log/index.js';
import { Route, RouteCollection, RouterListener, UrlMatcher } from '../../../lib/routing/index.js';

const test = suite('Symfony RouterListenerTest, ported');
const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver());

function listenerFor(routes: RouteCollection, logger: Logger | null = null): RouterListener {
  return new RouterListener(new UrlMatcher(routes), logger);
}

function thrownBy(fn: () => void): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a throw');
}

test('testResourceNotFoundException: a NotFound error naming the method, the URL and the Referer', () => {
  const request = Request.create('https://www.symfony.com/path', 'GET', { headers: { referer: 'https://www.google.com' } });
  const error = thrownBy(() => listenerFor(new RouteCollection()).onKernelRequest(new RequestEvent(kernel, request, RequestType.MAIN)));
  assert.instance(error, NotFoundHttpError);
  assert.is(error.message, 'No route found for "GET https://www.symfony.com/path" (from "https://www.google.com")');
});

test('testMethodNotAllowedException: a MethodNotAllowed error with the allowed methods in its message and Allow', () => {
  const routes = new RouteCollection();
  routes.add('path', new Route('/path', { methods: ['POST'] }));
  const error = thrownBy(() => listenerFor(routes).onKernelRequest(new RequestEvent(kernel, Request.create('https://www.symfony.com/path'), RequestType.MAIN)));
  assert.instance(error, MethodNotAllowedHttpError);
  assert.is(error.message, 'No route found for "GET https://www.symfony.com/path": Method Not Allowed (Allow: POST)');
  assert.is((error as MethodNotAllowedHttpError).headers.allow, 'POST');
});

test('testLoggingParameter: "Matched route" at INFO with the route, its parameters, the URI and the method', () => {
  const bus = createBus();
  const records: LogRecord[] = [];
  bus.on('log', ({ record }) => records.push(record));
  const routes = new RouteCollection();
  routes.add('foo', new Route('/', { defaults: { _controller: 'home' } }));
  listenerFor(routes, new Logger({ bus })).onKernelRequest(new RequestEvent(kernel, Request.create('http://localhost/'), RequestType.MAIN));
  assert.is(records.length, 1);
  assert.is(records[0]!.levelName, 'INFO');
  assert.is(records[0]!.message, 'Matched route "foo".');
  assert.is(records[0]!.context.route, 'foo');
  assert.is(records[0]!.context.request_uri, 'http://localhost/');
  assert.is(records[0]!.context.method, 'GET');
});

test('a match sets _route, _controller and the parameters as attributes, and _route_params without _route and _controller', () => {
  const routes = new RouteCollection();
  routes.add('book', new Route('/books/:id', { defaults: { _controller: 'show', _format: 'json' } }));
  const request = Request.create('/books/42');
  listenerFor(routes).onKernelRequest(new RequestEvent(kernel, request, RequestType.MAIN));
  assert.is(request.attributes.get('_route'), 'book');
  assert.is(request.attributes.get('_controller'), 'show');
  assert.is(request.attributes.get('id'), '42');
  assert.equal(request.attributes.get('_route_params'), { _format: 'json', id: '42' });
});

test('createRequestEventForUri: a request that has a _controller already is not routed', () => {
  const request = Request.create('/nowhere');
  request.attributes.set('_controller', null);
  listenerFor(new RouteCollection()).onKernelRequest(new RequestEvent(kernel, request, RequestType.MAIN));
  assert.is(request.attributes.has('_route'), false);
});

test('testRequestWithBadHost: a request error from the router itself (a SuspiciousOperationError, which the kernel answers as a 400, as Symfony\'s BadRequestException)', () => {
  const request = Request.create('/', 'GET', { headers: { host: 'bad host %22' } });
  const error = thrownBy(() => listenerFor(new RouteCollection()).onKernelRequest(new RequestEvent(kernel, request, RequestType.MAIN)));
  assert.instance(error, SuspiciousOperationError);
  assert.is(error.message, 'Invalid Host "bad host %22".');
});

test('testWithBadRequest: with the host check, the router and the ErrorListener in a kernel, a bad Host is a 400 and no route is matched', async () => {
  const dispatcher = new EventDispatcher();
  let matched = 0;
  const routes = new RouteCollection();
  routes.add('home', new Route('/', { defaults: { _controller: () => new Response('home') } }));
  dispatcher.addSubscriber(new ValidateHostListener());
  dispatcher.addSubscriber(listenerFor(routes));
  dispatcher.addListener('kernel.controller', () => void matched++);
  dispatcher.addSubscriber(new ErrorListener(() => new Response('Exception handled', 400)));
  const response = await new HttpKernel(dispatcher, new ControllerResolver()).handle(Request.create('/', 'GET', { headers: { host: '###' } }));
  assert.is(response.status, 400);
  assert.is(response.body, 'Exception handled');
  assert.is(matched, 1, 'only the error controller');
});

test('Request.create() with an absolute URL takes its Host from the URL, not from a host header given with it (RFC 9112 3.2.2)', () => {
  const request = Request.create('http://a.test:8080/x', 'GET', { headers: { host: '###' } });
  assert.is(request.headers.host, 'a.test:8080');
  assert.is(request.httpHost, 'a.test:8080');
});

test.run();
