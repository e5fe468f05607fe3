import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const test = suite('package exports');

test('the root entry exposes the kernel by the package name', async () => {
  const root = (await import('http-kernel')) as Record<string, unknown>;
  for (const name of ['HttpKernel', 'EventDispatcher', 'TraceableEventDispatcher', 'Request', 'Response', 'RequestStack', 'NotFoundHttpError']) {
    assert.type(root[name], 'function', name);
  }
  assert.is((root.KernelEvents as Record<string, string>).REQUEST, 'kernel.request');
});

test('subpaths expose routing, server, errors, log and app', async () => {
  assert.type((await import('http-kernel/routing')).RouteCollection, 'function');
  assert.type((await import('http-kernel/server')).startServers, 'function');
  assert.type((await import('http-kernel/errors')).renderDebugPage, 'function');
  assert.type((await import('http-kernel/log')).Logger, 'function');
  assert.type((await import('http-kernel/app')).createKernel, 'function');
});

test('an embedder can run a request through the kernel without a socket', async () => {
  const { Request, Response } = await import('http-kernel');
  const { createKernel } = await import('http-kernel/app');
  const { Route, RouteCollection } = await import('http-kernel/routing');
  const routes = new RouteCollection();
  routes.add('book', new Route('/books/:id', { methods: ['GET'], requirements: { id: '\\d+' }, defaults: { _controller: (_: unknown, params: { id: string }) => Response.json({ id: Number(params.id) }) } }));
  const app = createKernel({ routes, stderrLogLevel: false });
  const ok = await app.kernel.handle(Request.create('/books/42'));
  assert.is(ok.status, 200);
  assert.is(ok.body, '{"id":42}');
  const miss = await app.kernel.handle(Request.create('/books/abc'));
  assert.is(miss.status, 404);
  await app.close();
});

test.run();
