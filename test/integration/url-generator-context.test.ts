import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response, type Request } from '../../kernel/index.js';
import { Route, RouteCollection, UrlGenerator, type SchemePorts } from '../../lib/routing/index.js';
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

/**
 * Routes each limited to one scheme, and a controller answering the links to them, made with the
 * context of the request and the app's schemePorts (`ports()`, read once the listeners are up).
 */
function schemeRoutes(ports: () => SchemePorts): RouteCollection {
  const routes = new RouteCollection();
  routes.add('secure', new Route('/secure', { schemes: ['https'], defaults: { _controller: () => new Response('secure') } }));
  routes.add('plain', new Route('/plain', { schemes: ['http'], defaults: { _controller: () => new Response('plain') } }));
  routes.add('links', new Route('/links', {
    defaults: {
      _controller: (request: Request) => {
        const urls = new UrlGenerator(routes, UrlGenerator.contextFrom(request, ports()));
        return Response.json({ secure: urls.generate('secure'), plain: urls.generate('plain') });
      },
    },
  }));
  return routes;
}

const links = suite('links to a route of the other scheme');
let listening: TestServer;

links.before(async () => {
  listening = await startTestServer({ kernel: { routes: schemeRoutes(() => listening.app.schemePorts) } });
  // As bin/serve does: the other scheme is at the port its listener was given (port 0: one picked).
  Object.assign(listening.app.schemePorts, listening.running.ports);
});
links.after(async () => {
  await listening.close();
});

links('name the port the other scheme listens on, the one the router redirects to', async () => {
  for (const [scheme, other, name] of [['http', 'https', 'secure'], ['https', 'http', 'plain']] as const) {
    const answer = await fetchFrom(listening, scheme, '/links');
    assert.is(answer.status, 200, answer.body);
    const link = (JSON.parse(answer.body) as Record<string, string>)[name];
    assert.is(link, `${listening.urls[other]}/${name}`, `a link from ${scheme}`);
    const redirect = await fetchFrom(listening, scheme, `/${name}`);
    assert.is(redirect.status, 301);
    assert.is(redirect.headers.location, link, `the redirect from ${scheme}`);
    const followed = await fetchFrom(listening, other, `/${name}`);
    assert.is(followed.body, name);
  }
});

links.run();
