// The toolbar goes into every HTML page an application serves, whatever form its body takes, and
// never into one it would break.
import { gunzipSync, gzipSync } from 'node:zlib';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { request as undiciRequest } from 'undici';
import { Response } from '../../kernel/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, fetchFrom, header, startTestServer, type TestServer } from './harness.js';

const PAGE = '<!DOCTYPE html><html><head><title>t</title></head><body><p>caf\u00e9</p></body></html>';

function routes(): RouteCollection {
  const collection = new RouteCollection();
  const page = (name: string, controller: () => Response): void => {
    collection.add(name, new Route(`/${name}`, { methods: ['GET'], defaults: { _controller: controller } }));
  };
  page('upper', () => new Response('<HTML><BODY><P>shouting</P></BODY></HTML>', 200, { 'content-type': 'text/html; charset=UTF-8' }));
  page('buffer', () => new Response(Buffer.from(PAGE, 'utf8'), 200, { 'content-type': 'text/html; charset=UTF-8' }));
  page('latin1', () => new Response(Buffer.from(PAGE, 'latin1'), 200, { 'content-type': 'text/html; charset=ISO-8859-1' }));
  page('gzip', () => new Response(gzipSync(Buffer.from(PAGE)), 200, { 'content-type': 'text/html; charset=UTF-8', 'content-encoding': 'gzip' }));
  page('utf16', () => new Response(Buffer.from(PAGE, 'utf16le'), 200, { 'content-type': 'text/html; charset=UTF-16LE' }));
  page('csp', () => new Response(PAGE, 200, { 'content-type': 'text/html; charset=UTF-8', 'content-security-policy': "default-src 'self'; script-src 'self'" }));
  return collection;
}

for (const scheme of SCHEMES) {
  const test = suite(`profiler toolbar injection over ${scheme}`);
  let server: TestServer;

  test.before(async () => {
    server = await startTestServer({ kernel: { env: 'dev', debug: true, routes: routes() } });
  });
  test.after(async () => server.close());

  /** The raw bytes of a page, and its headers. */
  async function bytesOf(path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
    const response = await undiciRequest(`${server.urls[scheme]}${path}`, { dispatcher: server.agent, headersTimeout: 10_000, bodyTimeout: 10_000 });
    return { status: response.statusCode, headers: response.headers, body: Buffer.from(await response.body.arrayBuffer()) };
  }

  test('a page whose Content-Security-Policy would block the toolbar gets the toolbar\'s hashes in it', async () => {
    const response = await fetchFrom(server, scheme, '/csp');
    assert.ok(response.body.includes('/_wdt/'), response.body);
    const policy = header(response.headers['content-security-policy']);
    assert.ok(policy.startsWith("default-src 'self'; script-src 'self' 'sha256-"), policy);
    assert.ok(/; style-src 'self' 'sha256-[^;]+$/.test(policy), policy);
  });

  test('an upper-case </BODY> gets the toolbar before it, with Content-Length corrected', async () => {
    const response = await fetchFrom(server, scheme, '/upper');
    const token = header(response.headers['x-debug-token']);
    assert.match(token, /^[0-9a-f]{6}$/);
    const at = response.body.lastIndexOf('</BODY>');
    assert.ok(response.body.slice(0, at).includes(`/_wdt/${token}`), response.body);
    assert.is(Number(header(response.headers['content-length'])), Buffer.byteLength(response.body));
  });

  test('an HTML body given as bytes gets the toolbar, its own bytes untouched', async () => {
    for (const [path, encoding] of [['/buffer', 'utf8'], ['/latin1', 'latin1']] as const) {
      const response = await bytesOf(path);
      const token = header(response.headers['x-debug-token']);
      const text = response.body.toString(encoding);
      const at = text.lastIndexOf('</body>');
      assert.ok(text.slice(0, at).includes(`/_wdt/${token}`), `${path}: ${text}`);
      assert.ok(text.includes('<p>caf\u00e9</p>'), `${path}: the page's own text is intact`);
      assert.is(Number(header(response.headers['content-length'])), response.body.byteLength, path);
    }
  });

  test('a compressed or UTF-16 body is left alone (injecting would corrupt it)', async () => {
    const gzip = await bytesOf('/gzip');
    assert.is(gzip.status, 200);
    assert.is(gunzipSync(gzip.body).toString(), PAGE);
    assert.is(Number(header(gzip.headers['content-length'])), gzip.body.byteLength);
    const utf16 = await bytesOf('/utf16');
    assert.is(utf16.body.toString('utf16le'), PAGE);
  });

  test.run();
}
