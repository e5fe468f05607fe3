import net from 'node:net';
import tls from 'node:tls';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Agent } from 'undici';
import { Response, type Request } from '../../kernel/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import type { LogEntry, LogRecord } from '../../lib/log/index.js';
import { SCHEMES, decodeEntities, fetchFrom, rawStatus, savedProfile, sendRaw, startTestServer, type TestServer } from './harness.js';

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/** The body of a raw HTTP/1.1 answer sent with Content-Length. */
function rawBody(answer: string): string {
  return answer.slice(answer.indexOf('\r\n\r\n') + 4);
}

for (const scheme of SCHEMES) {
  const test = suite(`reference service over ${scheme}`);
  let server: TestServer;
  let origin: string;

  test.before(async () => {
    server = await startTestServer();
    origin = server.urls[scheme];
  });
  test.after(async () => server.close());

  test('GET /health answers {"status":"ok"} with X-Robots-Tag: noindex', async () => {
    const response = await fetchFrom(server, scheme, '/health');
    assert.is(response.status, 200);
    assert.equal(JSON.parse(response.body), { status: 'ok' });
    assert.is(header(response.headers['content-type']), 'application/json');
    assert.is(header(response.headers['x-robots-tag']), 'noindex');
  });

  test('GET / is the HTML welcome page', async () => {
    const response = await fetchFrom(server, scheme, '/');
    assert.is(response.status, 200);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    assert.match(response.body, /Welcome to http-kernel/);
  });

  test('HEAD / gets the headers GET / does, its Content-Length the length of the body GET sends', async () => {
    const get = await fetchFrom(server, scheme, '/');
    const head = await fetchFrom(server, scheme, '/', { method: 'HEAD' });
    assert.is(head.status, 200);
    assert.is(head.body, '');
    assert.is(head.headers['content-length'], String(Buffer.byteLength(get.body)));
    assert.is(get.headers['content-length'], String(Buffer.byteLength(get.body)));
  });

  test('GET / declares an empty data: icon, so a browser asks for no /favicon.ico (a 404, and a profile, of its own)', async () => {
    const response = await fetchFrom(server, scheme, '/');
    assert.match(response.body, /<head>[^]*<link rel="icon" href="data:,">[^]*<\/head>/);
    assert.is(response.headers['content-security-policy'], undefined, 'no policy of its own, so none to allow data: images');
  });

  test('GET /robots.txt is a debug 404 page with message, cause, stack trace and logs', async () => {
    const response = await fetchFrom(server, scheme, '/robots.txt');
    assert.is(response.status, 404);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    const message = `No route found for "GET ${origin}/robots.txt"`;
    assert.is(decodeURIComponent(String(response.headers['x-debug-exception'])), message);
    assert.is(response.headers['cache-control'], 'no-store', 'no shared cache may keep a page of debug details');
    const text = decodeEntities(response.body);
    assert.ok(text.includes(`<title>${message} (404 Not Found)</title>`), 'title names message and status');
    assert.ok(text.includes('No routes found for "/robots.txt/".'), 'the matcher\'s cause is shown');
    assert.ok(text.includes('ResourceNotFoundError'), 'the cause class is shown');
    assert.match(text, /router-listener\.ts/, 'stack frames name the .ts source');
    assert.match(text, /Stack Trace \(Plain Text\)/);
    assert.match(text, /Logs/);
    assert.ok(text.includes(`Uncaught error: NotFoundHttpError: "${message}"`), 'the request\'s own log record is listed');
  });

  test('the debug 404 names where it was thrown in X-Debug-Exception-File: the .ts source, URL-encoded, and its line', async () => {
    const response = await fetchFrom(server, scheme, '/robots.txt');
    const file = String(response.headers['x-debug-exception-file']);
    assert.match(file, /^[^/:\s]+:\d+$/, 'the path is percent-encoded, the line after a colon');
    assert.match(decodeURIComponent(file), /^\/.*\/lib\/routing\/router-listener\.ts:[1-9]\d*$/);
  });

  test('a Referer is quoted at the end of the 404 message', async () => {
    const response = await fetchFrom(server, scheme, '/robots.txt', { headers: { referer: 'http://example.test/page' } });
    assert.is(response.status, 404);
    const message = `No route found for "GET ${origin}/robots.txt" (from "http://example.test/page")`;
    assert.is(decodeURIComponent(String(response.headers['x-debug-exception'])), message);
    assert.ok(decodeEntities(response.body).includes(message));
  });

  test('OPTIONS * is a 200 whose Allow lists what the service serves; its profile names the server\'s origin, and its router panel shows', async () => {
    const answer = await sendRaw(server, scheme, 'OPTIONS * HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    assert.is(rawStatus(answer), 200, answer);
    assert.match(answer, /\r\nallow: GET, HEAD, OPTIONS\r\n/i);
    assert.match(answer, /\r\ncontent-length: 0\r\n/i);
    assert.ok(answer.endsWith('\r\n\r\n'), 'no content');
    const token = /\r\nx-debug-token: ([0-9a-f]+)\r\n/i.exec(answer)?.[1] ?? '';
    const profile = await savedProfile(server, token);
    assert.is(profile.url, `${scheme}://localhost`, 'RFC 9112 3.3: the target URI of OPTIONS * has an empty path');
    const panel = await fetchFrom(server, scheme, `/_profiler/${token}?panel=router`, { headers: { accept: 'application/json' } });
    assert.is(panel.status, 200);
    assert.equal(JSON.parse(panel.body).collectors.router.routed, { method: 'OPTIONS', path: '*', host: 'localhost', scheme });
    assert.is((await fetchFrom(server, scheme, `/_profiler/${token}?panel=router`)).status, 200, 'the HTML panel');
  });

  test('GET * is a 400 saying "*" is for OPTIONS only', async () => {
    const answer = await sendRaw(server, scheme, 'GET * HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    assert.is(rawStatus(answer), 400, answer.slice(0, 300));
    assert.is(decodeURIComponent(/\r\nx-debug-exception: (.*)\r\n/i.exec(answer)?.[1] ?? ''), 'Invalid request target "*" for GET: "*" (asking about the server itself) is for OPTIONS only; name a path such as "/".');
  });

  test('POST /health is a 405 listing GET, HEAD in Allow and in the message', async () => {
    const response = await fetchFrom(server, scheme, '/health', { method: 'POST', body: '' });
    assert.is(response.status, 405);
    assert.is(header(response.headers.allow), 'GET, HEAD');
    const message = `No route found for "POST ${origin}/health": Method Not Allowed (Allow: GET, HEAD)`;
    assert.is(decodeURIComponent(String(response.headers['x-debug-exception'])), message);
    assert.ok(decodeEntities(response.body).includes(message));
  });

  test('HEAD /health is served by the GET route', async () => {
    const response = await fetchFrom(server, scheme, '/health', { method: 'HEAD' });
    assert.is(response.status, 200);
    assert.is(response.body, '');
    assert.is(header(response.headers['content-length']), '15');
  });

  test('GET /health/ redirects with 301 to /health, query kept', async () => {
    const response = await fetchFrom(server, scheme, '/health/?a=1&b=two');
    assert.is(response.status, 301);
    assert.is(header(response.headers.location), `${origin}/health?a=1&b=two`);
  });

  test('a redirect percent-encodes what node:http lets through a target but no URI may hold (<, >, ")', async () => {
    const answer = await sendRaw(server, scheme, `GET /health/?q=<script>x</script>&a="b" HTTP/1.1\r\nHost: ${new URL(origin).host}\r\nConnection: close\r\n\r\n`);
    assert.is(rawStatus(answer), 301);
    assert.is(/\r\nlocation: ([^\r]*)\r\n/i.exec(answer)?.[1], `${origin}/health?q=%3Cscript%3Ex%3C/script%3E&a=%22b%22`);
  });

  test('POST /nothing/ is a 404 without the trailing-slash retry', async () => {
    const response = await fetchFrom(server, scheme, '/nothing/', { method: 'POST', body: '' });
    assert.is(response.status, 404);
    assert.ok(decodeEntities(response.body).includes('No routes found for "/nothing/".'));
  });

  test('HEAD /robots.txt is a 404 without a body', async () => {
    const response = await fetchFrom(server, scheme, '/robots.txt', { method: 'HEAD' });
    assert.is(response.status, 404);
    assert.is(response.body, '');
  });

  test('an invalid Host header is a 400 naming it, escaped', async () => {
    // The TLS client would check the certificate against this Host: the forged name is the point here, not TLS.
    const lenient = new Agent({ connect: { rejectUnauthorized: false } });
    const response = await fetchFrom(server, scheme, '/health', { headers: { host: '<script>' }, dispatcher: lenient });
    await lenient.close();
    assert.is(response.status, 400);
    assert.ok(response.body.includes('Invalid Host &quot;&lt;script&gt;&quot;.'), 'message shown escaped');
    assert.not.ok(response.body.includes('"<script>"'), 'nothing from the request is raw HTML');
  });

  test('a request with two Host headers is a 400 naming them, never served', async () => {
    const answer = await sendRaw(server, scheme, 'GET /health HTTP/1.1\r\nHost: localhost\r\nHost: evil.test\r\nConnection: close\r\n\r\n');
    assert.is(rawStatus(answer), 400);
    assert.ok(decodeEntities(answer).includes('Several Host headers ("localhost", "evil.test"): a request must have exactly one.'), 'the page says what is wrong');
  });

  test('an absolute-form target names the host, not the Host header (RFC 9112 3.2.2); an invalid authority is a 400', async () => {
    // Names under localhost: debug details are shown on them (on a.test they would be hidden, see profiler.test.ts).
    const answer = await sendRaw(server, scheme, 'GET http://a.localhost/nowhere HTTP/1.1\r\nHost: b.localhost\r\nConnection: close\r\n\r\n');
    assert.is(rawStatus(answer), 404);
    assert.ok(decodeEntities(answer).includes(`No route found for "GET ${scheme}://a.localhost/nowhere"`), 'the message names the target\'s host');
    const invalid = await sendRaw(server, scheme, 'GET http://a..test/health HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\nConnection: close\r\n\r\n');
    assert.is(rawStatus(invalid), 400);
    assert.is(JSON.parse(rawBody(invalid)).detail, 'Invalid Host "a..test".');
  });

  test('script in the URL and Referer is escaped on the error page', async () => {
    const response = await fetchFrom(server, scheme, '/%3Cscript%3Ealert(1)%3C/script%3E', { headers: { referer: 'http://x.test/"><script>alert(2)</script>' } });
    assert.is(response.status, 404);
    assert.not.ok(response.body.includes('<script>alert'), 'no script injected');
  });

  test('clients that prefer JSON get application/problem+json', async () => {
    const response = await fetchFrom(server, scheme, '/robots.txt', { headers: { accept: 'application/json' } });
    assert.is(response.status, 404);
    assert.is(header(response.headers['content-type']), 'application/problem+json');
    const problem = JSON.parse(response.body);
    assert.is(problem.status, 404);
    assert.is(problem.title, 'Not Found');
    assert.is(problem.detail, `No route found for "GET ${origin}/robots.txt"`);
    assert.is(problem.class, 'NotFoundHttpError');
  });

  test('an Accept range with a charset parameter ranks as its media type: application/json; charset=utf-8 gets problem+json, text/html; charset=utf-8 first the HTML page', async () => {
    for (const accept of ['application/json; charset=utf-8', 'application/json;charset=UTF-8, */*;q=0.1', 'application/problem+json; charset=utf-8']) {
      const response = await fetchFrom(server, scheme, '/robots.txt', { headers: { accept } });
      assert.is(header(response.headers['content-type']), 'application/problem+json', accept);
    }
    const html = await fetchFrom(server, scheme, '/robots.txt', { headers: { accept: 'text/html; charset=utf-8, application/json;q=0.9' } });
    assert.is(header(html.headers['content-type']), 'text/html; charset=UTF-8');
  });

  test('200 concurrent requests to distinct missing paths: each page lists only its own logs', async () => {
    const responses = await Promise.all(Array.from({ length: 200 }, (_, i) => fetchFrom(server, scheme, `/missing-${i}-end`)));
    responses.forEach((response, i) => {
      assert.is(response.status, 404);
      const text = decodeEntities(response.body);
      assert.ok(text.includes(`Uncaught error: NotFoundHttpError: "No route found for "GET ${origin}/missing-${i}-end"`), `page ${i} lists its own record`);
      const others = text.match(/\/missing-\d+-end/g) ?? [];
      assert.ok(others.every((path) => path === `/missing-${i}-end`), `page ${i} shows only its own path, saw ${[...new Set(others)].join(' ')}`);
    });
  });

  test.run();
}

for (const scheme of SCHEMES) {
  const test = suite(`--no-debug over ${scheme}`);
  let server: TestServer;

  test.before(async () => {
    server = await startTestServer({ app: { debug: false } });
  });
  test.after(async () => server.close());

  test('a 404 is a plain page: no stack trace, no logs, no internals', async () => {
    const response = await fetchFrom(server, scheme, '/robots.txt');
    assert.is(response.status, 404);
    assert.match(response.body, /404 Not Found/);
    for (const internal of ['Stack Trace', 'router-listener', 'No route found', 'Logs', 'NotFoundHttpError', '.ts']) {
      assert.not.ok(response.body.includes(internal), `no "${internal}" in the page`);
    }
    assert.is(response.headers['x-debug-exception'], undefined);
    assert.is(response.headers['x-debug-exception-file'], undefined);
    assert.is(response.headers['cache-control'], undefined, 'the plain page is the same for every client: caching it is the application\'s call');
  });

  test('an absolute-form target that is no URL is a 400 problem naming it, never a 500', async () => {
    const answer = await sendRaw(server, scheme, 'GET http://[bad/health HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\nConnection: close\r\n\r\n');
    assert.is(rawStatus(answer), 400);
    assert.is(JSON.parse(rawBody(answer)).detail, 'Invalid request target "http://[bad/health".');
  });

  test('problem+json without debug has no class or trace', async () => {
    const response = await fetchFrom(server, scheme, '/robots.txt', { headers: { accept: 'application/json' } });
    const problem = JSON.parse(response.body);
    assert.is(problem.status, 404);
    assert.is(problem.class, undefined);
    assert.is(problem.trace, undefined);
  });

  test.run();
}

for (const scheme of SCHEMES) {
  const test = suite(`embedded kernel with a parameter route over ${scheme}`);
  let server: TestServer;

  test.before(async () => {
    const routes = new RouteCollection();
    routes.add('book', new Route('/books/:id', { methods: ['GET'], defaults: { _controller: (_: Request, params: { id: string }) => Response.json({ id: params.id }) } }));
    routes.add('echo', new Route('/echo', { methods: ['POST'], defaults: { _controller: async (request: Request) => Response.json(await request.json()) } }));
    routes.add('fail', new Route('/fail', { defaults: { _controller: () => { throw new TypeError('controller bug'); } } }));
    routes.add('go', new Route('/go', { defaults: { _controller: (request: Request) => Response.redirect(request.query.get('to') ?? '/') } }));
    routes.add('go-later', new Route('/go-later', { defaults: { _controller: async (request: Request) => Response.redirect(request.query.get('to') ?? '/') } }));
    server = await startTestServer({ kernel: { routes, env: 'prod', debug: true, bodyLimit: 64 } });
  });
  test.after(async () => server.close());

  test('route parameters are decoded', async () => {
    const response = await fetchFrom(server, scheme, '/books/caf%C3%A9');
    assert.is(response.status, 200);
    assert.equal(JSON.parse(response.body), { id: 'café' });
    assert.is(response.headers['x-robots-tag'], undefined, 'no X-Robots-Tag in prod');
  });

  test('a malformed percent-encoding in a parameter is a 400, never a 500', async () => {
    const response = await fetchFrom(server, scheme, '/books/%E0%A4%A');
    assert.is(response.status, 400);
    assert.match(decodeEntities(response.body), /Malformed percent-encoding/);
  });

  test('a JSON body is read; malformed JSON is a 400, an oversized body a 413', async () => {
    const ok = await fetchFrom(server, scheme, '/echo', { method: 'POST', body: '{"a":1}', headers: { 'content-type': 'application/json' } });
    assert.is(ok.status, 200);
    assert.equal(JSON.parse(ok.body), { a: 1 });
    const bad = await fetchFrom(server, scheme, '/echo', { method: 'POST', body: '{nope', headers: { 'content-type': 'application/json' } });
    assert.is(bad.status, 400);
    assert.match(decodeEntities(bad.body), /Malformed JSON body/);
    const big = await fetchFrom(server, scheme, '/echo', { method: 'POST', body: JSON.stringify({ a: 'x'.repeat(100) }) });
    assert.is(big.status, 413);
  });

  test('a JSON body that starts with an emoji is a 400 naming it, never a 500 (the parser quotes half of it)', async () => {
    const response = await fetchFrom(server, scheme, '/echo', { method: 'POST', body: '😀', headers: { 'content-type': 'application/json' } });
    assert.is(response.status, 400);
    assert.match(decodeURIComponent(String(response.headers['x-debug-exception'])), /^Malformed JSON body: .*"😀"/);
  });

  test('a client that aborts mid-body or sends garbage does not take the server down', async () => {
    const { port } = new URL(server.urls[scheme]);
    const open = () => (scheme === 'https' ? tls.connect({ host: '127.0.0.1', port: Number(port), rejectUnauthorized: false }) : net.connect(Number(port), '127.0.0.1'));
    for (const payload of ['POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\n{"a":', 'GARBAGE\r\n\r\n', '\x00\x01\x02']) {
      await new Promise<void>((resolve) => {
        const socket = open();
        socket.on('error', () => resolve());
        socket.write(payload, () => setTimeout(() => (socket.destroy(), resolve()), 20));
      });
    }
    const after = await fetchFrom(server, scheme, '/books/1');
    assert.is(after.status, 200);
  });

  test('an absolute-form target that is no URL is a 400 naming it on the debug page and as problem+json, never a 500', async () => {
    const target = 'http://[bad/books/1';
    const page = await sendRaw(server, scheme, `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    assert.is(rawStatus(page), 400);
    assert.ok(decodeEntities(page).includes(`Invalid request target "${target}".`), 'the page names the target');
    const problem = await sendRaw(server, scheme, `GET ${target} HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\nConnection: close\r\n\r\n`);
    assert.is(rawStatus(problem), 400);
    assert.is(JSON.parse(rawBody(problem)).detail, `Invalid request target "${target}".`);
  });

  test('a chunked body over the limit is a 413, then the connection closes', async () => {
    const piece = `20\r\n${'x'.repeat(32)}\r\n`;
    const head = 'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
    const answer = await sendRaw(server, scheme, [head, piece, piece, piece, '0\r\n\r\n'], { gapMs: 20 });
    assert.is(rawStatus(answer), 413);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    const after = await fetchFrom(server, scheme, '/books/1');
    assert.is(after.status, 200);
  });

  test('a Content-Length over the limit is a 413 without reading the body, then the connection closes', async () => {
    const head = 'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n';
    const started = Date.now();
    const answer = await sendRaw(server, scheme, [head, ...Array.from({ length: 20 }, () => 'x'.repeat(100))], { gapMs: 20, waitMs: 5_000 });
    assert.is(rawStatus(answer), 413);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    assert.ok(Date.now() - started < 5_000, 'the server closed the connection instead of waiting for the rest of the body');
  });

  test('a client that aborts mid-body is a client error logged as ERROR, not a CRITICAL 500', async () => {
    const records: LogRecord[] = [];
    const listen = ({ record }: LogEntry): void => void records.push(record);
    server.app.bus.on('log', listen);
    try {
      await sendRaw(server, scheme, 'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"a":', { waitMs: 100 });
      for (let i = 0; i < 100 && !records.some((record) => record.message.startsWith('Uncaught error')); i++) await new Promise((resolve) => setTimeout(resolve, 20));
      const uncaught = records.filter((record) => record.message.startsWith('Uncaught error'));
      assert.is(uncaught.length, 1, 'the abort is logged once');
      assert.is(uncaught[0]!.levelName, 'ERROR');
      assert.match(uncaught[0]!.message, /closed the connection before the whole body was sent/);
    } finally {
      server.app.bus.off('log', listen);
    }
  });

  test('a header value node:http refuses (CR/LF, beyond Latin-1) is a 500, never a crash', async () => {
    for (const path of ['/go?to=/a%0D%0ASet-Cookie:%20x=1', '/go-later?to=/a%0D%0ASet-Cookie:%20x=1']) {
      const response = await fetchFrom(server, scheme, path);
      assert.is(response.status, 500, path);
      assert.is(response.headers['set-cookie'], undefined, path);
      assert.is(response.headers.location, undefined, 'nothing of the refused response is sent');
    }
    // redirect() percent-encodes what is beyond ASCII, as a Location must be.
    const euro = await fetchFrom(server, scheme, '/go?to=/%E2%82%AC');
    assert.is(euro.status, 302);
    assert.is(euro.headers.location, '/%E2%82%AC');
    const after = await fetchFrom(server, scheme, '/go?to=/books/1');
    assert.is(after.status, 302);
  });

  test('a controller error is a 500 logged as CRITICAL', async () => {
    const response = await fetchFrom(server, scheme, '/fail');
    assert.is(response.status, 500);
    const text = decodeEntities(response.body);
    assert.match(text, /controller bug/);
    assert.match(text, /CRITICAL/);
  });

  test.run();
}

for (const scheme of SCHEMES) {
  const test = suite(`default body limit over ${scheme}`);
  let server: TestServer;

  test.before(async () => {
    const routes = new RouteCollection();
    routes.add('size', new Route('/size', { methods: ['POST'], defaults: { _controller: async (request: Request) => Response.json({ bytes: (await request.bytes()).byteLength }) } }));
    // No bodyLimit: the documented default (1 MiB) applies.
    server = await startTestServer({ kernel: { routes } });
  });
  test.after(async () => server.close());

  test('without bodyLimit, a body of 1 MiB is read and one byte more is a 413', async () => {
    const mebibyte = 1024 * 1024;
    const whole = await fetchFrom(server, scheme, '/size', { method: 'POST', body: 'x'.repeat(mebibyte) });
    assert.is(whole.status, 200);
    assert.equal(JSON.parse(whole.body), { bytes: mebibyte });
    const over = await fetchFrom(server, scheme, '/size', { method: 'POST', body: 'x'.repeat(mebibyte + 1) });
    assert.is(over.status, 413);
  });

  test.run();
}
