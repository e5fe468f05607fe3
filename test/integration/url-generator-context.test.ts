import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response, type Request } from '../../kernel/index.js';
import { Route, RouteCollection, UrlGenerator } from '../../lib/routing/index.js';
import { SCHEMES, fetchFrom, startTestServer, type TestServer } from './harness.js';

/** A route whose controller answers its own absolute URL, made with the context of the request. */
function selfLinkingRoutes(): RouteCollection {
  const routes = new RouteCollection();
  routes.add('book', new Route('/books/:id', {
    defaults: {
      _controller: (request: Request, params: { id: string }) => Response.json({ self: new UrlGenerator(routes, UrlGenerator.contextFrom(request)).generate('book', { id: params.id }, true) }),
    },
  }));
  return routes;
}

const FORWARDED = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'shop.example' };

for (const scheme of SCHEMES) {
  const test = suite(`UrlGenerator.contextFrom over ${scheme}`);
  let behindProxy: TestServer;
  let direct: TestServer;
  const selfOf = async (server: TestServer, headers: Record<string, string> = {}): Promise<string> => {
    const response = await fetchFrom(server, scheme, '/books/42', { headers });
    assert.is(response.status, 200, response.body);
    return (JSON.parse(response.body) as { self: string }).self;
  };

  test.before(async () => {
    behindProxy = await startTestServer({ kernel: { routes: selfLinkingRoutes(), trustedProxies: ['loopback'] } });
    direct = await startTestServer({ kernel: { routes: selfLinkingRoutes() } });
  });
  test.after(async () => {
    await behindProxy.close();
    await direct.close();
  });

  test('links go to the scheme, host and port the client used', async () => {
    assert.is(await selfOf(direct), `${direct.urls[scheme]}/books/42`);
    assert.is(await selfOf(behindProxy), `${behindProxy.urls[scheme]}/books/42`);
  });

  test('behind a trusted proxy, links go to the scheme and host it forwarded', async () => {
    assert.is(await selfOf(behindProxy, FORWARDED), 'https://shop.example/books/42');
    assert.is(await selfOf(behindProxy, { ...FORWARDED, 'x-forwarded-port': '8443' }), 'https://shop.example:8443/books/42');
  });

  test('X-Forwarded-* from a client that is no trusted proxy change no link', async () => {
    assert.is(await selfOf(direct, FORWARDED), `${direct.urls[scheme]}/books/42`);
  });

  test.run();
}
