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

test.run();
