// A query parameter, a cookie or a JSON body field named `__proto__` is recorded as any other key
// (the stored URL has it), shown escaped on the request panel, and sets no prototype on the way.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response, type Request } from '../../kernel/index.js';
import { MemoryStorage } from '../../lib/profiler/storage/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, fetchFrom, header, savedProfile, startTestServer, type TestServer } from './harness.js';

for (const scheme of SCHEMES) {
  const test = suite(`__proto__ keys in a profile over ${scheme}`);
  let server: TestServer;

  test.before(async () => {
    const routes = new RouteCollection().add('echo', new Route('/echo', { methods: ['POST'], defaults: { _controller: async (request: Request) => Response.json(await request.json()) } }));
    server = await startTestServer({ kernel: { routes, env: 'dev', debug: true, profiler: { storage: new MemoryStorage() } } });
  });
  test.after(async () => server.close());

  test('the query, the cookies and a JSON body keep their __proto__ keys, and the request panel shows them escaped', async () => {
    const response = await fetchFrom(server, scheme, '/echo?__proto__=%3Cb%3Eq&a=2', {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: '__proto__=%3Ci%3Ec; theme=dark' },
      body: '{"__proto__":{"polluted":"<u>j</u>"},"a":1}',
    });
    assert.is(response.status, 200);
    const token = header(response.headers['x-debug-token']);
    const profile = await savedProfile(server, token);
    const data = profile.collectors.request;
    assert.ok(Object.hasOwn(data.query, '__proto__'), 'query');
    assert.is(data.query['__proto__'], '<b>q');
    assert.is(data.query.a, '2');
    assert.ok(Object.hasOwn(data.cookies, '__proto__'), 'cookies');
    assert.is(data.cookies['__proto__'], '<i>c');
    assert.is(data.cookies.theme, 'dark');
    const body = JSON.parse(data.body);
    assert.ok(Object.hasOwn(body, '__proto__'), 'JSON body');
    assert.equal(body['__proto__'], { polluted: '<u>j</u>' });
    assert.is(body.a, 1);
    assert.is(({} as Record<string, unknown>).polluted, undefined, 'no prototype polluted');
    const page = await fetchFrom(server, scheme, `/_profiler/${token}?panel=request`);
    assert.match(page.body, '<th scope="row">__proto__</th><td><span class="text">&lt;b&gt;q</span>');
    assert.match(page.body, '<th scope="row">__proto__</th><td><span class="text">&lt;i&gt;c</span>');
    assert.match(page.body, '&quot;__proto__&quot;: {');
    assert.match(page.body, '&lt;u&gt;j&lt;/u&gt;');
    assert.not.match(page.body, '<u>j</u>');
  });

  test.run();
}
