import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ControllerResolver, EventDispatcher, HttpKernel, Request, RequestEvent, RequestType } from '../../../kernel/index.js';
import { Route, RouteCollection, RouterListener, UrlMatcher } from '../../../lib/routing/index.js';

const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver());

/** The Location of the redirect the router answers `target` with, on host a.test. */
function redirectOf(target: string): string | undefined {
  const routes = new RouteCollection();
  routes.add('health', new Route('/health', { methods: ['GET'] }));
  routes.add('book', new Route('/books/:id', { methods: ['GET'] }));
  const event = new RequestEvent(kernel, new Request(target, { headers: { host: 'a.test' } }), RequestType.MAIN);
  new RouterListener(new UrlMatcher(routes)).onKernelRequest(event);
  assert.is(event.response?.status, 301, target);
  return event.response?.getHeader('location');
}

test('a trailing-slash redirect keeps the path and query as sent when they are a valid URI', () => {
  assert.is(redirectOf('/health/'), 'http://a.test/health');
  assert.is(redirectOf("/health/?a=1&b=%C3%A9&c=x:y/z?@!$'()*+,;=~"), "http://a.test/health?a=1&b=%C3%A9&c=x:y/z?@!$'()*+,;=~");
  assert.is(redirectOf('/books/caf%C3%A9/'), 'http://a.test/books/caf%C3%A9');
});

test('a redirect percent-encodes what no URI may hold, so the client\'s markup never reaches Location', () => {
  assert.is(redirectOf('/health/?q=<script>x</script>'), 'http://a.test/health?q=%3Cscript%3Ex%3C/script%3E');
  assert.is(redirectOf('/health/?a="><img/src=x>&b={|}^`\\'), 'http://a.test/health?a=%22%3E%3Cimg/src=x%3E&b=%7B%7C%7D%5E%60%5C');
  assert.is(redirectOf('/books/<b>/'), 'http://a.test/books/%3Cb%3E');
});

test('a redirect encodes a % that starts no percent-encoding, and an embedder\'s non-ASCII text as UTF-8', () => {
  assert.is(redirectOf('/health/?a=%41&b=%zz&c=%'), 'http://a.test/health?a=%41&b=%25zz&c=%25');
  assert.is(redirectOf('/health/?q=é €'), 'http://a.test/health?q=%C3%A9%20%E2%82%AC');
  assert.is(redirectOf('/health/?q=\ud800'), 'http://a.test/health?q=%EF%BF%BD', 'a lone surrogate is U+FFFD, never a URIError');
});

test.run();
