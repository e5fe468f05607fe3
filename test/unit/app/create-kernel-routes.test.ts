import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request, Response } from '../../../kernel/index.js';
import { createApp, createKernel } from '../../../lib/app/index.js';
import { MemoryStorage } from '../../../lib/profiler/index.js';
import { Route, RouteCollection, UrlGenerator } from '../../../lib/routing/index.js';

const ok = () => new Response('ok');

for (const debug of [false, true]) {
  const mode = debug ? 'debug' : 'no debug';

  test(`a route added after createKernel() is refused, not left unmatched while the generator knows it (${mode})`, async () => {
    const routes = new RouteCollection().add('home', new Route('/', { defaults: { _controller: ok } }));
    const app = createKernel({ routes, debug, stderrLogLevel: false, profiler: debug ? { storage: new MemoryStorage() } : false });
    try {
      assert.throws(() => routes.add('late', new Route('/late', { defaults: { _controller: ok } })), (error: Error) =>
        (error as { code?: string }).code === 'HK_ROUTING_COLLECTION_FROZEN' && /route "late".*before createKernel\(\)/.test(error.message));
      assert.throws(() => routes.remove('home'), /route "home".*before createKernel\(\)/);
      assert.throws(() => app.routes.add('late', new Route('/late')), /before createKernel\(\)/);
      assert.is(routes.get('late'), undefined);
      assert.is(new UrlGenerator(routes).generate('home'), '/');
      assert.is((await app.kernel.handle(Request.create('/'))).status, 200);
    } finally {
      await app.close();
    }
  });
}

test('a collection refused by createKernel (an invalid trusted host) can still be changed', () => {
  const routes = new RouteCollection();
  assert.throws(() => createKernel({ routes, trustedHosts: [], stderrLogLevel: false }));
  routes.add('home', new Route('/'));
  assert.is(routes.count, 1);
});

test('createApp() with routes of its caller is a TypeError pointing to createKernel(), rather than serving the reference routes in their place', () => {
  const routes = new RouteCollection();
  routes.add('mine', new Route('/mine', { defaults: { _controller: ok } }));
  assert.throws(() => createApp({ routes, stderrLogLevel: false } as Parameters<typeof createApp>[0]), (error: unknown) => error instanceof TypeError && /createKernel\(\{ routes \}\)/.test(error.message));
});

test('a route naming an unregistered controller shows the registered names and the near miss on the debug page, and nothing of them without debug', async () => {
  const routes = new RouteCollection().add('book', new Route('/books/:id', { defaults: { _controller: 'book.shwo' } }));
  const controllers = { 'book.show': ok, 'book.list': ok };
  const message = 'The controller for URI "/books/1" is not callable: no controller is registered as "book.shwo". Did you mean "book.show"? The registered controllers are "book.list", "book.show".';
  const debug = createKernel({ routes, controllers, debug: true, stderrLogLevel: false, profiler: false });
  try {
    const page = await debug.kernel.handle(Request.create('/books/1'));
    assert.is(page.status, 500);
    const html = String(page.body);
    assert.ok(html.includes(message.replace(/"/g, '&quot;')), 'the debug page shows the message');
    assert.is(decodeURIComponent(String(page.headers['x-debug-exception'])), message);
    const json = await debug.kernel.handle(Request.create('/books/1', 'GET', { headers: { accept: 'application/json' } }));
    assert.is(JSON.parse(String(json.body)).detail, message);
  } finally {
    await debug.close();
  }
  const prod = createKernel({ routes: new RouteCollection().add('book', new Route('/books/:id', { defaults: { _controller: 'book.shwo' } })), controllers, debug: false, stderrLogLevel: false });
  try {
    for (const accept of ['text/html', 'application/json']) {
      const response = await prod.kernel.handle(Request.create('/books/1', 'GET', { headers: { accept } }));
      assert.is(response.status, 500);
      const shown = `${String(response.body)} ${JSON.stringify(response.headers)}`;
      for (const internal of ['book.sh', 'book.list', 'registered', 'not callable', 'InvalidController']) assert.not.ok(shown.includes(internal), `${accept}: ${internal} in ${shown}`);
    }
  } finally {
    await prod.close();
  }
});

test.run();
