import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Agent } from 'undici';
import { KernelEvents, Response, type RequestEvent } from '../../kernel/index.js';
import { MemoryStorage } from '../../lib/profiler/storage/index.js';
import { SCHEMES, decodeEntities, fetchFrom, header, rawStatus, savedProfile, sendRaw, startTestServer, type TestServer } from './harness.js';

/** Everything in an answer that would send a reader to evil.test: a URL, a link or a redirect to it. */
const TO_EVIL = /\/\/evil\.test|href="[^"]*evil\.test|location:[^\r\n]*evil\.test/i;

/** The body of a raw HTTP answer. */
function rawBody(answer: string): string {
  return answer.slice(answer.indexOf('\r\n\r\n') + 4);
}

/** A raw answer's header, '' when absent. */
function rawHeader(answer: string, name: string): string {
  return new RegExp(`\\r\\n${name}: ([^\\r]*)\\r\\n`, 'i').exec(answer)?.[1] ?? '';
}

for (const scheme of SCHEMES) {
  const test = suite(`trusted hosts over ${scheme}`);
  let server: TestServer;
  let port: string;
  // The TLS client checks the certificate against the Host it sends: forged names are the point here, not TLS.
  let lenient: Agent;
  const get = (path: string, headers: Record<string, string>) => fetchFrom(server, scheme, path, { headers, dispatcher: lenient });
  /** The token of the latest profile whose URL holds `part` (for an answer that carries none). */
  const recordedToken = async (part: string): Promise<string> => {
    for (let i = 0; i < 100; i++) {
      const [found] = await server.app.profiler!.storage.find({ url: part, limit: 1 });
      if (found !== undefined) return found.token;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    throw new Error(`no profile of ${part} within 2 s`);
  };

  test.before(async () => {
    server = await startTestServer({
      app: { trustedHosts: ['localhost', '127.0.0.1', 'example.com', '.example.org'], trustedProxies: ['loopback'], profiler: { storage: new MemoryStorage() } },
    });
    port = new URL(server.urls[scheme]).port;
    lenient = new Agent({ connect: { rejectUnauthorized: false } });
  });
  test.after(async () => {
    await lenient.close();
    await server.close();
  });

  test('a Host outside trustedHosts is a 400 "Untrusted Host" without its port, with no redirect, link or URL to it, and no debug details (a name another may own); a listed host is redirected as before', async () => {
    const refused = await get('/health/?a=1', { host: `Evil.test:${port}` });
    assert.is(refused.status, 400);
    assert.not.ok(refused.body.includes('Untrusted Host'), 'the plain page: a rebinding page could read it');
    assert.is(refused.headers['x-debug-exception'], undefined);
    assert.is(refused.headers.location, undefined);
    assert.is(refused.headers['x-debug-token'], undefined);
    assert.is(refused.headers['x-debug-token-link'], undefined, 'no link to the untrusted host, nor a relative one resolved against it');
    assert.not.match(refused.body, TO_EVIL);
    const problem = await get('/health/?a=1', { host: `Evil.test:${port}`, accept: 'application/json' });
    assert.is(JSON.parse(problem.body).detail, 'Untrusted Host "evil.test".', 'the 4xx message, as any client gets it');
    assert.is(JSON.parse(problem.body).trace, undefined);

    const served = await get('/health/?a=1', { host: `example.com:${port}` });
    assert.is(served.status, 301);
    assert.is(header(served.headers.location), `${scheme}://example.com:${port}/health?a=1`);
    assert.is(header(served.headers['x-debug-token-link']), `${scheme}://example.com:${port}/_profiler/${header(served.headers['x-debug-token'])}`);
  });

  test('clients that prefer JSON get the message as the problem\'s detail, and its instance is the path alone', async () => {
    const response = await get('/nowhere', { host: 'evil.test', accept: 'application/json' });
    assert.is(response.status, 400);
    const problem = JSON.parse(response.body);
    assert.is(problem.detail, 'Untrusted Host "evil.test".');
    assert.is(problem.instance, '/nowhere');
    assert.not.match(response.body, TO_EVIL);
  });

  test('.example.org trusts example.org and its subdomains only', async () => {
    assert.is((await get('/health', { host: 'example.org' })).status, 200);
    assert.is((await get('/health', { host: 'api.eu.example.org' })).status, 200);
    assert.is((await get('/health', { host: 'evilexample.org' })).status, 400);
  });

  test('an absolute-form target naming an untrusted host is a 400; neither the page nor the saved profile holds a URL to that host', async () => {
    const answer = await sendRaw(server, scheme, `GET http://evil.test/health/?absolute=${scheme} HTTP/1.1\r\nHost: example.com\r\nAccept: application/json\r\nConnection: close\r\n\r\n`);
    assert.is(rawStatus(answer), 400);
    assert.is(JSON.parse(rawBody(answer)).detail, 'Untrusted Host "evil.test".');
    assert.not.match(answer, TO_EVIL);
    assert.not.match(answer, /x-debug-token/i);
    const token = await recordedToken(`?absolute=${scheme}`);
    const profile = await savedProfile(server, token);
    assert.is(profile.url, `/health/?absolute=${scheme}`, 'the path and query, not the target with its host');
    const page = await get(`/_profiler/${token}`, { host: 'localhost' });
    assert.is(page.status, 200);
    assert.not.match(page.body, TO_EVIL);
  });

  test('a trusted proxy\'s X-Forwarded-Host is checked as a Host header is', async () => {
    const refused = await get('/health/', { host: 'example.com', 'x-forwarded-host': 'evil.test', accept: 'application/json' });
    assert.is(refused.status, 400);
    assert.is(JSON.parse(refused.body).detail, 'Untrusted Host "evil.test".');
    assert.not.match(refused.body, TO_EVIL);
    const served = await get('/health/', { host: 'localhost', 'x-forwarded-host': 'www.example.org', 'x-forwarded-proto': 'https', 'x-forwarded-port': '443' });
    assert.is(served.status, 301);
    assert.is(header(served.headers.location), 'https://www.example.org/health');
  });

  test('the profiler\'s pages answer a listed host, never an untrusted one', async () => {
    const failed = await get('/nowhere', { host: `example.com:${port}` });
    const token = header(failed.headers['x-debug-token']);
    await savedProfile(server, token);
    const page = await get(`/_profiler/${token}`, { host: `example.com:${port}` });
    assert.is(page.status, 200);
    assert.ok(decodeEntities(page.body).includes(`No route found for "GET ${scheme}://example.com:${port}/nowhere"`));
    assert.is((await get('/_profiler/', { host: 'localhost' })).status, 200);
    const hidden = await get(`/_profiler/${token}`, { host: 'evil.test' });
    assert.is(hidden.status, 400, 'the 400 of any path on that host');
    assert.not.ok(hidden.body.includes(`/_profiler/${token}?panel`), 'no profile shown');
  });

  test('a request without Host (HTTP/1.0) is answered for the address it arrived at: error page, profiler link and profiler pages work', async () => {
    const missing = await sendRaw(server, scheme, 'GET /nowhere HTTP/1.0\r\n\r\n');
    assert.match(missing, /^HTTP\/1\.1 404 /);
    assert.ok(decodeEntities(rawBody(missing)).includes(`No route found for "GET ${scheme}://127.0.0.1:${port}/nowhere"`));
    const token = rawHeader(missing, 'x-debug-token');
    assert.is(rawHeader(missing, 'x-debug-token-link'), `${scheme}://127.0.0.1:${port}/_profiler/${token}`);
    await savedProfile(server, token);
    assert.match(await sendRaw(server, scheme, `GET /_profiler/${token} HTTP/1.0\r\n\r\n`), /^HTTP\/1\.1 200 /);
    // The same request naming a host is checked: the exemption is for the server's own address only.
    assert.match(await sendRaw(server, scheme, 'GET /nowhere HTTP/1.0\r\nHost: evil.test\r\n\r\n'), /^HTTP\/1\.1 400 /);
  });

  test.run();
}

{
  const test = suite('trusted hosts without debug');
  let server: TestServer;

  test.before(async () => {
    server = await startTestServer({ app: { debug: false, trustedHosts: ['example.com'] } });
  });
  test.after(async () => server.close());

  test('the plain 400 page and problem+json name no link to the untrusted host', async () => {
    const lenient = new Agent({ connect: { rejectUnauthorized: false } });
    for (const scheme of SCHEMES) {
      const page = await fetchFrom(server, scheme, '/health/', { headers: { host: 'evil.test' }, dispatcher: lenient });
      assert.is(page.status, 400, scheme);
      assert.is(page.headers.location, undefined);
      assert.is(page.headers['x-debug-token'], undefined);
      assert.not.match(page.body, TO_EVIL);
      const problem = await fetchFrom(server, scheme, '/health/', { headers: { host: 'evil.test', accept: 'application/json' }, dispatcher: lenient });
      assert.is(problem.status, 400, scheme);
      assert.is(JSON.parse(problem.body).detail, 'Untrusted Host "evil.test".');
      assert.not.match(problem.body, TO_EVIL);
    }
    await lenient.close();
  });

  test.run();
}

{
  const test = suite('trusted hosts before the router');
  let server: TestServer;
  let lenient: Agent;
  /** An application's listener that answers before routing (a health check, a CORS preflight, a maintenance page). */
  const earlyAnswer = {
    getSubscribedEvents: () => ({ [KernelEvents.REQUEST]: ['onKernelRequest', 100] as const }),
    onKernelRequest(event: RequestEvent) {
      if (event.isMainRequest() && event.request.path === '/early') event.setResponse(new Response('answered early', 200));
    },
  };

  test.before(async () => {
    server = await startTestServer({ app: { trustedHosts: ['example.com'], subscribers: [earlyAnswer] } });
    lenient = new Agent({ connect: { rejectUnauthorized: false } });
  });
  test.after(async () => {
    await lenient.close();
    await server.close();
  });

  test('an untrusted Host is a 400 before any kernel.request listener below 256 answers, as Symfony\'s ValidateRequestListener makes it', async () => {
    for (const scheme of SCHEMES) {
      const refused = await fetchFrom(server, scheme, '/early', { headers: { host: 'evil.test', accept: 'application/json' }, dispatcher: lenient });
      assert.is(refused.status, 400, scheme);
      assert.is(JSON.parse(refused.body).detail, 'Untrusted Host "evil.test".', scheme);
      assert.not.ok(refused.body.includes('answered early'), scheme);
      const served = await fetchFrom(server, scheme, '/early', { headers: { host: 'example.com' }, dispatcher: lenient });
      assert.is(served.status, 200, scheme);
      assert.is(served.body, 'answered early', scheme);
    }
  });

  test.run();
}
