import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, NotFoundHttpError, Request, type RequestEvent } from '../../../kernel/index.js';
import { createKernel } from '../../../lib/app/index.js';
import { preferredMediaType, prefersJson } from '../../../lib/errors/index.js';
import { Route, RouteCollection } from '../../../lib/routing/index.js';

const FORMATS = ['text/html', 'application/json'];
const wants = (accept: string) => prefersJson(new Request('/', { headers: { accept } }));

test('application/json with a version or another parameter is JSON: ranges match on type and subtype', () => {
  for (const accept of ['application/json;v=2', 'application/json; version="2.1"', 'application/json;v=2, text/html;q=0.9', 'application/problem+json; profile="x"']) {
    assert.ok(wants(accept), accept);
  }
  assert.is(preferredMediaType('application/json;v=2', FORMATS), 'application/json');
  assert.is(preferredMediaType('text/html;level=1', FORMATS), 'text/html');
});

test('a parameter does not lift a range\'s q=0 nor its rank', () => {
  assert.not.ok(wants('application/json;v=2;q=0, */*'));
  assert.not.ok(wants('text/html, application/json;v=2;q=0.5'));
  assert.not.ok(wants('text/html;level=1, application/json;v=2'));
  assert.ok(wants('text/html;level=1;q=0.5, application/json;v=2'));
});

test('an empty q (q= or q="") is q=1, as negotiator reads a range as the client sent it, not a range refused', () => {
  assert.is(preferredMediaType('application/json;q=', FORMATS), 'application/json');
  assert.ok(wants('application/json;q=, text/html;q=0.5'));
  assert.ok(wants('text/html;q=0.5, application/json;q=""'));
  assert.ok(wants('text/html;q=0.5, application/json;v=2;q='));
});

test('charset keeps its meaning: utf-8 is the more specific match, another charset matches no offer', () => {
  assert.ok(wants('application/json; charset=utf-8'));
  assert.ok(wants('application/json;charset=UTF-8, */*;q=0.1'));
  assert.not.ok(wants('text/html; charset=utf-8, application/json;q=0.9'));
  // The specific range wins over the plain one, whatever their order.
  assert.ok(wants('application/json;q=0.1, application/json;charset=utf-8;v=2, text/html;q=0.5'));
  assert.not.ok(wants('application/json; charset=iso-8859-1, text/html;q=0.5'));
});

test('*/* and no Accept are HTML; problem+json alone is JSON; a malformed header is HTML, never a throw', () => {
  assert.not.ok(wants('*/*'));
  assert.not.ok(wants(''));
  assert.ok(wants('application/problem+json'));
  assert.ok(wants('application/*'));
  for (const accept of ['junk', ',,,', ';;', 'application/json;q="0,5"', 'application/json;charset="utf-8,x"', '"', 'a/b/c, application/json;v=2']) {
    assert.not.throws(() => wants(accept), accept);
  }
  assert.ok(wants('a/b/c, application/json;v=2'));
});

test('a request with no Accept header at all is HTML', () => {
  assert.not.ok(prefersJson(new Request('/')));
});

test('a charset that is no token drops its range whole: a quoted comma in it cannot add a range of its own', () => {
  assert.not.ok(wants('text/html;q=0.5, application/json;charset="x,application/json"'));
  assert.not.ok(wants('text/html;q=0.5, application/json;charset="utf-8,application/json;q=1"'));
  assert.is(preferredMediaType('text/html;q=0.5, application/json;charset="x,application/json"', FORMATS), 'text/html');
});

test('the request\'s _format attribute, json or html, wins over Accept, as Symfony\'s getPreferredFormat() puts the request format first', () => {
  const withFormat = (format: unknown, accept?: string) => {
    const request = new Request('/', { headers: accept === undefined ? {} : { accept } });
    request.attributes.set('_format', format);
    return prefersJson(request);
  };
  assert.ok(withFormat('json'));
  assert.ok(withFormat('json', 'text/html'));
  assert.not.ok(withFormat('html', 'application/json'));
  assert.ok(withFormat('xml', 'application/json'), 'another format leaves it to Accept');
  assert.not.ok(withFormat(undefined, '*/*'));
});

test('a JSON API\'s errors are problem+json for every client, */* and no Accept included: a route\'s _format default, a listener\'s for its paths', async () => {
  const routes = new RouteCollection()
    .add('book', new Route('/api/books/:id', { defaults: { _format: 'json', _controller: () => { throw new NotFoundHttpError('No book 7.'); } } }))
    .add('page', new Route('/page', { defaults: { _format: 'html', _controller: () => { throw new NotFoundHttpError('No page.'); } } }));
  const app = createKernel({ routes, stderrLogLevel: false });
  // Above the router (32), so that its 404 and 405 have the format too.
  app.dispatcher.addListener(KernelEvents.REQUEST, (event: RequestEvent) => {
    if (event.request.path.startsWith('/api/')) event.request.attributes.set('_format', 'json');
  }, 64);
  for (const [path, accept] of [['/api/books/7', '*/*'], ['/api/books/7', undefined], ['/api/nope', '*/*'], ['/api/nope', 'text/html']] as const) {
    const response = await app.kernel.handle(Request.create(path, 'GET', accept === undefined ? {} : { headers: { accept } }));
    assert.is(response.status, 404, path);
    assert.is(response.headers['content-type'], 'application/problem+json', `${path} ${accept}`);
  }
  const book = await app.kernel.handle(Request.create('/api/books/7'));
  assert.is(JSON.parse(String(book.body)).detail, 'No book 7.');
  const page = await app.kernel.handle(Request.create('/page', 'GET', { headers: { accept: 'application/json' } }));
  assert.match(String(page.headers['content-type']), /^text\/html/);
  assert.is((await app.kernel.handle(Request.create('/nope'))).headers['content-type'], 'text/html; charset=UTF-8', 'elsewhere: Accept decides');
});

test.run();
