// Secrets a client sends must not reach the profiler's storage, whatever shape the request takes.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response, type Request } from '../../kernel/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, fetchFrom, header, savedProfile, startTestServer, type TestServer } from './harness.js';

/** A login endpoint that reads its body, as a real one would. */
function routes(): RouteCollection {
  const collection = new RouteCollection();
  collection.add('login', new Route('/login', { methods: ['POST'], defaults: { _controller: async (request: Request) => new Response(`read ${(await request.bytes()).byteLength} bytes`, 200, { 'content-type': 'text/plain' }) } }));
  collection.add('upstream', new Route('/upstream', { methods: ['GET'], defaults: { _controller: () => {
    throw new Error('upstream GET https://api.test/v1?api_key=s3cr3t-upstream failed');
  } } }));
  collection.add('page', new Route('/page', { methods: ['GET'], defaults: { _controller: () => new Response('ok', 200, { 'content-type': 'text/plain' }) } }));
  return collection;
}

for (const scheme of SCHEMES) {
  const test = suite(`profiler redaction over ${scheme}`);
  let server: TestServer;

  test.before(async () => {
    server = await startTestServer({ kernel: { env: 'dev', debug: true, routes: routes() } });
  });
  test.after(async () => server.close());

  async function storedFor(path: string, init: { method?: string; headers?: Record<string, string>; body?: string }): Promise<string> {
    const response = await fetchFrom(server, scheme, path, init);
    assert.is(response.status, 200, response.body.slice(0, 200));
    return JSON.stringify(await savedProfile(server, header(response.headers['x-debug-token'])));
  }

  test('a JSON body beyond the 64 KiB the profile keeps still has its password hidden', async () => {
    const body = JSON.stringify({ user: 'ann', password: 'hunter2-json', padding: 'x'.repeat(70 * 1024) });
    const stored = await storedFor('/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.ok(stored.includes('"bodyTruncated":true'), 'the body was cut');
    assert.not.ok(stored.includes('hunter2'), 'no password in the stored profile');
    assert.ok(stored.includes('ann'), 'the rest of the body is kept');
  });

  test('a malformed JSON body still has its password hidden', async () => {
    const stored = await storedFor('/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"user":"ann","password":"hunter2-bad",}' });
    assert.not.ok(stored.includes('hunter2'));
  });

  test('a multipart/form-data login form has its password field hidden', async () => {
    const body = ['--b0undary', 'Content-Disposition: form-data; name="user"', '', 'ann', '--b0undary', 'Content-Disposition: form-data; name="password"', '', 'hunter2-multipart', '--b0undary--', ''].join('\r\n');
    const stored = await storedFor('/login', { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=b0undary' }, body });
    assert.not.ok(stored.includes('hunter2'));
    assert.ok(stored.includes('ann'));
  });

  test('session cookies of the common frameworks are hidden in the cookie list', async () => {
    const stored = await storedFor('/page', { headers: { cookie: 'PHPSESSID=s3cr3t-php; connect.sid=s3cr3t-express; session=s3cr3t-flask; theme=dark' } });
    assert.not.ok(stored.includes('s3cr3t'), stored.slice(0, 300));
    assert.ok(stored.includes('dark'));
  });

  test('a session id in a path parameter (`;jsessionid=`) or a query value is hidden in the URL, the path and the router panel too', async () => {
    const response = await fetchFrom(server, scheme, '/nope;jsessionid=s3cr3t-path?x=1;secret=s3cr3t-value', { headers: { accept: 'application/json' } });
    assert.is(response.status, 404);
    const token = header(response.headers['x-debug-token']);
    await savedProfile(server, token);
    const page = await fetchFrom(server, scheme, `/_profiler/${token}?panel=router`, { headers: { accept: 'application/json' } });
    assert.is(page.status, 200);
    assert.not.ok(page.body.includes('s3cr3t'), page.body.slice(0, 400));
    assert.ok(page.body.includes('/nope;jsessionid='));
  });

  test('hiding a secret query parameter leaves the rest of the URL as sent, so a search finds it', async () => {
    const response = await fetchFrom(server, scheme, '/page?q=a%20b+c&token=s3cr3t-q&tag=%3Cb%3E');
    const token = header(response.headers['x-debug-token']);
    const profile = await savedProfile(server, token);
    assert.is(profile.url, `${server.urls[scheme]}/page?q=a%20b+c&token=%5Bredacted%5D&tag=%3Cb%3E`);
    const search = await fetchFrom(server, scheme, `/_profiler/search?url=${encodeURIComponent('q=a%20b+c')}&limit=100`, { headers: { accept: 'application/json' } });
    assert.ok(JSON.parse(search.body).results.some((result: { token: string }) => result.token === token), search.body.slice(0, 300));
  });

  test('an error message with a secret pair is hidden in the exception, its stack, the attributes and X-Debug-Exception, as in its log', async () => {
    const response = await fetchFrom(server, scheme, '/upstream');
    assert.is(response.status, 500);
    for (const token of [header(response.headers['x-debug-token']), header(response.headers['x-previous-debug-token'])]) {
      const stored = JSON.stringify(await savedProfile(server, token));
      assert.not.ok(stored.includes('s3cr3t'), stored.slice(Math.max(0, stored.indexOf('s3cr3t') - 200), stored.indexOf('s3cr3t') + 20));
      assert.ok(stored.includes('api.test'), 'the rest of the message is kept');
    }
  });

  test.run();
}
