// A query parameter, a cookie, a JSON body field or a request attribute named `__proto__` is recorded as any other key
// (the stored URL has it), shown escaped on the request panel, and sets no prototype on the way.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response, type Request } from '../../kernel/index.js';
import { MemoryStorage } from '../../lib/profiler/storage/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, fetchFrom, header, savedProfile, startTestServer, type TestServer } from './harness.js';

/** A controller that leaves a request attribute named `__proto__` (with a secret in it) for the profiler. */
function setsProtoAttribute(request: Request): Response {
  request.attributes.set('__proto__', { polluted: '<u>attr</u>', api_token: 'hunter2' });
  return new Response('ok');
}

for (const scheme of SCHEMES) {
  const test = suite(`__proto__ keys in a profile over ${scheme}`);
  let server: TestServer;

  test.before(async () => {
    const routes = new RouteCollection()
      .add('echo', new Route('/echo', { methods: ['POST'], defaults: { _controller: async (request: Request) => Response.json(await request.json()) } }))
      .add('attribute', new Route('/attribute', { defaults: { _controller: setsProtoAttribute } }));
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

  test('a request attribute named __proto__ is an own key of the profile\'s attributes, read back as JSON, and the request panel shows it escaped', async () => {
    const response = await fetchFrom(server, scheme, '/attribute');
    assert.is(response.status, 200);
    const token = header(response.headers['x-debug-token']);
    await savedProfile(server, token);
    const read = await fetchFrom(server, scheme, `/_profiler/${token}`, { headers: { accept: 'application/json' } });
    assert.is(read.status, 200);
    const attributes = (JSON.parse(read.body) as { collectors: { request: { attributes: Record<string, unknown> } } }).collectors.request.attributes;
    assert.ok(Object.hasOwn(attributes, '__proto__'), 'an own key');
    assert.is(Object.getPrototypeOf(attributes), Object.prototype);
    assert.equal(attributes['__proto__'], { polluted: '<u>attr</u>', api_token: '[redacted]' });
    assert.is(attributes['_route'], 'attribute');
    assert.is(({} as Record<string, unknown>).polluted, undefined, 'no prototype polluted');
    const page = await fetchFrom(server, scheme, `/_profiler/${token}?panel=request`);
    const table = page.body.slice(page.body.indexOf('<h3>Request attributes</h3>'));
    assert.match(table, '<th scope="row">__proto__</th>');
    assert.match(table, '&lt;u&gt;attr&lt;/u&gt;');
    assert.not.match(page.body, '<u>attr</u>');
    assert.not.match(page.body, 'hunter2');
  });

  test.run();
}
