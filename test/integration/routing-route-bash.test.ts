// Routing over real sockets: redirects of paths with several trailing slashes, and the messages of misses.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response } from '../../kernel/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, decodeEntities, fetchFrom, startTestServer, type TestServer } from './harness.js';

function routes(): RouteCollection {
  const ok = () => Response.json({ ok: true });
  return new RouteCollection()
    .add('dir', new Route('/dir/', { methods: ['GET'], defaults: { _controller: ok } }))
    .add('book', new Route('/books/:id/', { methods: ['GET', 'POST'], requirements: { id: '\\d+' }, defaults: { _controller: ok } }));
}

const it = suite<{ server: TestServer }>('routing, route bash');

it.before(async (context) => {
  context.server = await startTestServer({ kernel: { routes: routes(), debug: true, env: 'test' } });
});
it.after(async (context) => {
  await context.server.close();
});

it('a GET or HEAD with several trailing slashes is a 301 to the route that keeps one, query kept', async ({ server }) => {
  for (const scheme of SCHEMES) {
    for (const method of ['GET', 'HEAD']) {
      const response = await fetchFrom(server, scheme, '/dir///?q=a%20b&r', { method });
      assert.is(response.status, 301, `${scheme} ${method}`);
      assert.is(response.headers.location, `${server.urls[scheme]}/dir/?q=a%20b&r`);
    }
    const book = await fetchFrom(server, scheme, '/books/12//');
    assert.is(book.status, 301);
    assert.is(book.headers.location, `${server.urls[scheme]}/books/12/`);
  }
});

it('other methods are not redirected: a 404 or a 405 naming the URL as sent', async ({ server }) => {
  for (const scheme of SCHEMES) {
    const post = await fetchFrom(server, scheme, '/dir//', { method: 'POST', headers: { referer: 'https://r.test/<b>' } });
    assert.is(post.status, 404);
    assert.ok(post.body.includes('&lt;b&gt;') && !post.body.includes('<b>'), 'the Referer is escaped');
    assert.ok(decodeEntities(post.body).includes(`<title>No route found for "POST ${server.urls[scheme]}/dir//" (from "https://r.test/<b>") (404 Not Found)</title>`));
    const put = await fetchFrom(server, scheme, '/books/12/', { method: 'PUT' });
    assert.is(put.status, 405);
    assert.is(put.headers.allow, 'GET, HEAD, POST');
    assert.ok(decodeEntities(put.body).includes(`No route found for "PUT ${server.urls[scheme]}/books/12/": Method Not Allowed (Allow: GET, HEAD, POST)`));
  }
});

it.run();
