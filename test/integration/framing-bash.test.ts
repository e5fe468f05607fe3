// Defects found in an audit of message framing at the socket (RFC 9110, RFC 9112): what a client
// reads from the wire, over raw sockets (undici would normalise it), over http and https.
import { Readable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Response, type Request, type ResponseEvent } from '../../kernel/index.js';
import type { LogEntry, LogRecord } from '../../lib/log/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, readResponses, sendRaw, startTestServer, type TestServer } from './harness.js';

/** Bodies made of pieces, as a stream. */
function pieces(...parts: string[]): Readable {
  return Readable.from(parts);
}

function routes(): RouteCollection {
  const collection = new RouteCollection();
  const get = (path: string, controller: (request: Request) => Response, methods = ['GET']): void => {
    collection.add(path, new Route(path, { methods, defaults: { _controller: controller } }));
  };
  get('/text', () => new Response('hello world', 200, { 'content-type': 'text/plain' }));
  get('/stream-declared-short', () => new Response(pieces('a', 'bb', 'ccc'), 200, { 'content-type': 'text/plain', 'content-length': '3' }));
  get('/stream-declared-long', () => new Response(pieces('a', 'bb', 'ccc'), 200, { 'content-type': 'text/plain', 'content-length': '100' }));
  get('/stream-declared-exact', () => new Response(pieces('a', 'bb', 'ccc'), 200, { 'content-type': 'text/plain', 'content-length': '6' }));
  get('/stream-chunked-and-length', () => new Response(pieces('a', 'bb'), 200, { 'transfer-encoding': 'chunked', 'content-length': '3' }));
  get('/bytes-chunked-and-length', () => new Response(Buffer.from('abc'), 200, { 'transfer-encoding': 'chunked', 'content-length': '2' }));
  get('/stream-chunked', () => new Response(pieces('a', 'bb'), 200, { 'transfer-encoding': 'chunked' }));
  get('/text-chunked', () => new Response('hello world', 200, { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }));
  get('/bytes-chunked', () => new Response(Buffer.from('abc'), 200, { 'transfer-encoding': 'chunked' }));
  get('/stream-gzip-coded', () => new Response(pieces('a', 'bb'), 200, { 'transfer-encoding': 'gzip' }));
  get('/stream-length-not-a-number', () => new Response(pieces('a', 'bb'), 200, { 'content-length': '3 bytes' }));
  get('/no-content-chunked', () => new Response('', 204, { 'transfer-encoding': 'chunked' }));
  get('/not-modified-chunked', () => new Response(null, 304, { 'transfer-encoding': 'chunked', etag: '"v1"' }));
  get('/early-hints', () => new Response('', 103, { link: '</style.css>; rel=preload' }));
  get('/switching', () => new Response('', 101));
  // `headers` is a plain record: a controller may write a name in another case than the lower case Response keeps.
  get('/stream-length-mixed-case', () => Object.assign(new Response(pieces('a', 'bb'), 200, { 'content-type': 'text/plain' }), { headers: { 'Content-Length': '1' } }));
  get('/text-length-mixed-case', () => Object.assign(new Response('hello', 200, { 'content-type': 'text/plain' }), { headers: { 'Content-Length': '5' } }), ['GET']);
  get('/keep-alive', () => new Response('kept', 200, { connection: 'keep-alive', 'keep-alive': 'timeout=600' }));
  get('/close', () => new Response('closing', 200, { connection: 'close' }));
  get('/upload', (request) => new Response(`${request.headers['content-length'] ?? 'chunked'}`, 200), ['POST']);
  collection.add('/read', new Route('/read', { methods: ['POST'], defaults: { _controller: async (request: Request) => new Response(`got ${(await request.bytes()).length}`, 200) } }));
  return collection;
}

/** A late kernel.response listener (after the response is prepared) that rewrites bodies and headers, as an application's may. */
const lateListener = {
  getSubscribedEvents: () => ({ [KernelEvents.RESPONSE]: ['onResponse', -200] as const }),
  onResponse(event: ResponseEvent): void {
    const { request, response } = event;
    if (request.headers['x-append'] !== undefined && typeof response.body === 'string') response.body += String(request.headers['x-append']);
    const connection = request.headers['x-response-connection'];
    if (typeof connection === 'string') response.headers.connection = connection;
    const mixedCase = request.headers['x-response-connection-mixed-case'];
    if (typeof mixedCase === 'string') Object.assign(response.headers, { Connection: mixedCase, 'Keep-Alive': 'timeout=600' });
  },
};

const test = suite('framing bug bash');
let server: TestServer;
const records: LogRecord[] = [];
const onLog = ({ record }: LogEntry): void => void records.push(record);

test.before(async () => {
  server = await startTestServer({ kernel: { env: 'staging', debug: false, routes: routes(), bodyLimit: 1024, subscribers: [lateListener] } });
  server.app.bus.on('log', onLog);
});

test.after(async () => {
  server.app.bus.off('log', onLog);
  await server.close();
});

const NEXT = 'GET /text HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n';

test('a stream body longer than its Content-Length is cut there and its connection closed, never read as the next response', async () => {
  for (const scheme of SCHEMES) {
    records.length = 0;
    const answer = await sendRaw(server, scheme, `GET /stream-declared-short HTTP/1.1\r\nHost: localhost\r\n\r\n${NEXT}`);
    const { responses, rest } = readResponses(answer, ['GET', 'GET']);
    assert.is(responses[0]?.body, 'abb', `${scheme}: ${JSON.stringify(answer)}`);
    assert.is(responses.length, 1, `${scheme}: the connection stays open after a body cut short: ${JSON.stringify(answer)}`);
    assert.is(rest, '', `${scheme}: bytes after the declared body: ${JSON.stringify(rest)}`);
    assert.ok(records.some((record) => record.levelName === 'CRITICAL' && record.message.includes('Content-Length')), `${scheme}: ${JSON.stringify(records.map((r) => r.message))}`);
  }
});

test('a stream body shorter than its Content-Length ends its connection, so the client sees it cut, not the next response as its rest', async () => {
  for (const scheme of SCHEMES) {
    records.length = 0;
    const answer = await sendRaw(server, scheme, `GET /stream-declared-long HTTP/1.1\r\nHost: localhost\r\n\r\n${NEXT}`);
    const { responses } = readResponses(answer, ['GET', 'GET']);
    assert.is(responses.length, 1, scheme);
    assert.is(responses[0]!.complete, false, `${scheme}: ${JSON.stringify(answer)}`);
    assert.is(responses[0]!.body, 'abbccc', `${scheme}: ${JSON.stringify(answer)}`);
    assert.ok(records.some((record) => record.levelName === 'CRITICAL' && record.message.includes('Content-Length')), `${scheme}: ${JSON.stringify(records.map((r) => r.message))}`);
  }
});

test('a stream body of its declared Content-Length is sent with it, and the connection serves the next request', async () => {
  for (const scheme of SCHEMES) {
    const answer = await sendRaw(server, scheme, `GET /stream-declared-exact HTTP/1.1\r\nHost: localhost\r\n\r\n${NEXT}`);
    const { responses, rest } = readResponses(answer, ['GET', 'GET']);
    assert.equal(responses.map((response) => [response.status, response.body, response.headers['content-length']?.[0]]), [[200, 'abbccc', '6'], [200, 'hello world', '11']], scheme);
    assert.is(rest, '', scheme);
  }
});

test('a body a late kernel.response listener changed is sent with its own length, not the stale Content-Length', async () => {
  for (const scheme of SCHEMES) {
    const answer = await sendRaw(server, scheme, `GET /text HTTP/1.1\r\nHost: localhost\r\nX-Append: !!!\r\n\r\n${NEXT}`);
    const { responses, rest } = readResponses(answer, ['GET', 'GET']);
    assert.equal(responses.map((response) => response.body), ['hello world!!!', 'hello world'], `${scheme}: ${JSON.stringify(answer)}`);
    assert.is(rest, '', scheme);
  }
});

test('Content-Length is never sent with Transfer-Encoding (RFC 9112 6.2): the body is chunked', async () => {
  for (const scheme of SCHEMES) {
    for (const path of ['/stream-chunked-and-length', '/bytes-chunked-and-length']) {
      const answer = await sendRaw(server, scheme, `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n${NEXT}`);
      const { responses, rest } = readResponses(answer, ['GET', 'GET']);
      assert.is(responses[0]?.headers['content-length'], undefined, `${scheme} ${path}: ${JSON.stringify(answer)}`);
      assert.equal(responses[0]!.headers['transfer-encoding'], ['chunked'], `${scheme} ${path}`);
      assert.equal(responses.map((response) => response.status), [200, 200], `${scheme} ${path}`);
      assert.is(rest, '', scheme);
    }
  }
});

test('204 and 304 carry neither Transfer-Encoding nor Content-Length (RFC 9112 6.1, RFC 9110 8.6), and 304 keeps its ETag', async () => {
  for (const scheme of SCHEMES) {
    for (const path of ['/no-content-chunked', '/not-modified-chunked']) {
      const answer = await sendRaw(server, scheme, `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n${NEXT}`);
      const { responses, rest } = readResponses(answer, ['GET', 'GET']);
      assert.is(responses[0]?.headers['transfer-encoding'], undefined, `${scheme} ${path}: ${JSON.stringify(answer)}`);
      assert.is(responses[0]!.headers['content-length'], undefined, `${scheme} ${path}`);
      assert.equal(responses.map((response) => response.status), [path === '/no-content-chunked' ? 204 : 304, 200], `${scheme} ${path}: the connection serves the next request`);
      assert.is(rest, '', scheme);
    }
    const answer = await sendRaw(server, scheme, `GET /not-modified-chunked HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    assert.equal(readResponses(answer, ['GET']).responses[0]?.headers.etag, ['"v1"'], scheme);
  }
});

test('a Transfer-Encoding other than chunked is a 500 saying what to use instead, never a body nothing delimits on a kept connection', async () => {
  for (const scheme of SCHEMES) {
    records.length = 0;
    const answer = await sendRaw(server, scheme, `GET /stream-gzip-coded HTTP/1.1\r\nHost: localhost\r\n\r\n${NEXT}`);
    const { responses, rest } = readResponses(answer, ['GET', 'GET']);
    assert.equal(responses.map((response) => response.status), [500, 200], `${scheme}: ${JSON.stringify(answer)}`);
    assert.is(rest, '', scheme);
    assert.ok(records.some((record) => record.levelName === 'CRITICAL' && record.message.includes('Content-Encoding')), `${scheme}: ${JSON.stringify(records.map((r) => r.message))}`);
  }
});

test('a stream body whose Content-Length is not a number of bytes is a 500 saying so, and the connection serves the next request', async () => {
  for (const scheme of SCHEMES) {
    records.length = 0;
    const answer = await sendRaw(server, scheme, `GET /stream-length-not-a-number HTTP/1.1\r\nHost: localhost\r\n\r\n${NEXT}`);
    const { responses, rest } = readResponses(answer, ['GET', 'GET']);
    assert.equal(responses.map((response) => response.status), [500, 200], `${scheme}: ${JSON.stringify(answer)}`);
    assert.is(rest, '', scheme);
    assert.ok(records.some((record) => record.levelName === 'CRITICAL' && record.message.includes('Content-Length is a number of bytes, not "3 bytes"')), `${scheme}: ${JSON.stringify(records.map((r) => r.message))}`);
  }
});

test('an HTTP/1.0 client never gets Transfer-Encoding (RFC 9112 6.1): the body ends with the connection', async () => {
  for (const scheme of SCHEMES) {
    const answer = await sendRaw(server, scheme, 'GET /stream-chunked HTTP/1.0\r\nHost: localhost\r\n\r\n');
    const { responses } = readResponses(answer, ['GET']);
    assert.is(responses[0]?.headers['transfer-encoding'], undefined, `${scheme}: ${JSON.stringify(answer)}`);
    assert.is(responses[0]!.body, 'abb', `${scheme}: ${JSON.stringify(answer)}`);
    assert.equal(responses[0]!.headers.connection, ['close'], scheme);
  }
});

test('a HEAD of a text or bytes body with Transfer-Encoding gets its GET\'s framing headers: Content-Length for HTTP/1.0 (RFC 9112 6.1: never chunked), chunked for HTTP/1.1 (RFC 9110 9.3.2)', async () => {
  const framing = (response: { headers: Record<string, string[]> } | undefined) => [response?.headers['content-length'], response?.headers['transfer-encoding']];
  for (const scheme of SCHEMES) {
    for (const [path, length] of [['/text-chunked', '11'], ['/bytes-chunked', '3']] as const) {
      const heads: Record<string, unknown> = {};
      for (const version of ['1.0', '1.1']) {
        for (const method of ['GET', 'HEAD']) {
          const answer = await sendRaw(server, scheme, `${method} ${path} HTTP/${version}\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
          const { responses, rest } = readResponses(answer, [method]);
          assert.is(responses[0]?.status, 200, `${scheme} ${method} ${path} HTTP/${version}: ${JSON.stringify(answer)}`);
          assert.is(rest, '', `${scheme} ${method} ${path} HTTP/${version}: ${JSON.stringify(answer)}`);
          heads[`${method} ${version}`] = framing(responses[0]);
        }
      }
      assert.equal(heads, {
        'GET 1.0': [[length], undefined],
        'HEAD 1.0': [[length], undefined],
        'GET 1.1': [undefined, ['chunked']],
        'HEAD 1.1': [undefined, ['chunked']],
      }, `${scheme} ${path}`);
    }
  }
});

test('a 1xx status from a controller is a 500, not an interim answer after which the client waits for ever', async () => {
  for (const scheme of SCHEMES) {
    for (const path of ['/early-hints', '/switching']) {
      records.length = 0;
      const answer = await sendRaw(server, scheme, `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`, { waitMs: 1_000 });
      const { responses } = readResponses(answer, ['GET']);
      assert.is(responses[0]?.status, 500, `${scheme} ${path}: ${JSON.stringify(answer)}`);
      assert.ok(records.some((record) => record.levelName === 'CRITICAL' && record.message.includes('final status')), `${scheme}: ${JSON.stringify(records.map((r) => r.message))}`);
    }
  }
});

test('a response\'s Connection: keep-alive never keeps open a connection the server closes: after a 413 with the body unread, or for HTTP/1.0', async () => {
  for (const scheme of SCHEMES) {
    // The rest of the refused body is a request: were the connection kept, the server would read or answer it.
    const refused = `POST /read HTTP/1.1\r\nHost: localhost\r\nX-Response-Connection: keep-alive\r\nContent-Length: 4000\r\n\r\n`;
    const answer = await sendRaw(server, scheme, [refused, `${"x".repeat(4000)}${NEXT}`], { gapMs: 100 });
    const { responses, rest } = readResponses(answer, ['POST', 'GET']);
    assert.equal(responses.map((response) => response.status), [413], `${scheme}: ${JSON.stringify(answer.replace(/<[^]*>/, '...'))}`);
    assert.equal(responses[0]!.headers.connection, ['close'], scheme);
    assert.is(rest, '', scheme);

    // An HTTP/1.0 client that did not ask to keep the connection reads until it closes.
    const started = Date.now();
    const old = await sendRaw(server, scheme, 'GET /keep-alive HTTP/1.0\r\nHost: localhost\r\n\r\n', { waitMs: 2_000 });
    assert.ok(Date.now() - started < 1_000, `${scheme}: the connection stayed open ${Date.now() - started} ms`);
    const { responses: [response] } = readResponses(old, ['GET']);
    assert.is(response?.body, 'kept', scheme);
    assert.equal(response!.headers.connection, ['close'], scheme);
    assert.is(response!.headers['keep-alive'], undefined, scheme);
  }
});

test('a response\'s Connection: close is honoured, and its keep-alive on a kept connection is the server\'s own header only', async () => {
  for (const scheme of SCHEMES) {
    const answer = await sendRaw(server, scheme, `GET /close HTTP/1.1\r\nHost: localhost\r\n\r\n${NEXT}`);
    const { responses, rest } = readResponses(answer, ['GET', 'GET']);
    assert.equal(responses.map((response) => [response.status, response.headers.connection]), [[200, ['close']]], `${scheme}: ${JSON.stringify(answer)}`);
    assert.is(rest, '', scheme);
    const kept = await sendRaw(server, scheme, `GET /keep-alive HTTP/1.1\r\nHost: localhost\r\n\r\n${NEXT}`);
    const { responses: both } = readResponses(kept, ['GET', 'GET']);
    assert.equal(both.map((response) => [response.status, response.headers.connection?.length, response.headers['keep-alive']?.length]), [[200, 1, 1], [200, 1, undefined]], `${scheme}: ${JSON.stringify(kept)}`);
    assert.not.match(kept, 'timeout=600', scheme);
  }
});

test('framing headers written in another case (Content-Length, Connection, Keep-Alive) are held to the same rules as lower-case ones', async () => {
  for (const scheme of SCHEMES) {
    records.length = 0;
    const cut = await sendRaw(server, scheme, `GET /stream-length-mixed-case HTTP/1.1\r\nHost: localhost\r\n\r\n${NEXT}`);
    const { responses, rest } = readResponses(cut, ['GET', 'GET']);
    assert.is(responses.length, 1, `${scheme}: the rest of the body was read as the next response: ${JSON.stringify(cut)}`);
    assert.is(responses[0]!.body, 'a', scheme);
    assert.is(rest, '', `${scheme}: ${JSON.stringify(cut)}`);

    const refused = `POST /read HTTP/1.1\r\nHost: localhost\r\nX-Response-Connection-Mixed-Case: keep-alive\r\nContent-Length: 4000\r\n\r\n`;
    const answer = await sendRaw(server, scheme, [refused, `${'x'.repeat(4000)}${NEXT}`], { gapMs: 100 });
    const { responses: kept, rest: after } = readResponses(answer, ['POST', 'GET']);
    assert.equal(kept.map((response) => response.status), [413], `${scheme}: ${JSON.stringify(answer.replace(/<[^]*>/, '...'))}`);
    assert.equal(kept[0]!.headers.connection, ['close'], scheme);
    assert.is(kept[0]!.headers['keep-alive'], undefined, scheme);
    assert.is(after, '', scheme);
  }
});

test('a HEAD of a text body whose Content-Length was set by hand in another case gets the GET\'s head, not a 500 for a Content-Length of two values', async () => {
  for (const scheme of SCHEMES) {
    const answer = await sendRaw(server, scheme, `GET /text-length-mixed-case HTTP/1.1\r\nHost: localhost\r\n\r\nHEAD /text-length-mixed-case HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    const { responses, rest } = readResponses(answer, ['GET', 'HEAD']);
    assert.equal(responses.map((response) => response.status), [200, 200], `${scheme}: ${JSON.stringify(answer.replace(/<[^]*>/, '...'))}`);
    assert.is(responses[0]!.body, 'hello', scheme);
    assert.equal(responses[1]!.headers['content-length'], ['5'], scheme);
    assert.is(responses[1]!.body, '', scheme);
    assert.is(rest, '', scheme);
  }
});

test('an HTTP/1.0 request with Transfer-Encoding is answered, then its connection closes (RFC 9112 6.1: its framing is faulty)', async () => {
  for (const scheme of SCHEMES) {
    const answer = await sendRaw(server, scheme, `POST /read HTTP/1.0\r\nHost: localhost\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n${NEXT}`);
    const { responses, rest } = readResponses(answer, ['POST', 'GET']);
    assert.equal(responses.map((response) => [response.status, response.body, response.headers.connection]), [[200, 'got 3', ['close']]], `${scheme}: ${JSON.stringify(answer)}`);
    assert.is(rest, '', scheme);
  }
});

test('an HTTP/1.1 request without Host is a 400 whose body says it needs one (RFC 9112 3.2), not an empty answer', async () => {
  for (const scheme of SCHEMES) {
    for (const [target, host] of [['/text', ''], ['http://localhost/text', ''], ['/text', 'Host: \r\n']]) {
      const answer = await sendRaw(server, scheme, `GET ${target} HTTP/1.1\r\n${host}\r\n${NEXT}`);
      const { responses, rest } = readResponses(answer, ['GET', 'GET']);
      assert.equal(responses.map((response) => [response.status, response.headers.connection]), [[400, ['close']]], `${scheme} ${target}: ${JSON.stringify(answer)}`);
      assert.match(responses[0]!.body, /Host header/, `${scheme}: ${JSON.stringify(answer)}`);
      assert.is(rest, '', scheme);
    }
    const old = await sendRaw(server, scheme, 'GET /text HTTP/1.0\r\n\r\n');
    assert.is(readResponses(old, ['GET']).responses[0]?.status, 200, `${scheme}: HTTP/1.0 needs no Host`);
  }
});

test('more header fields than node:http keeps (2000) are a 431 saying so, never a request served with the rest dropped', async () => {
  for (const scheme of SCHEMES) {
    // Small fields: 2,100 of them stay under the 16 KiB head limit, which node counts without separators.
    const fields = Array.from({ length: 2_100 }, (_, i) => `x${i.toString(36)}: 1\r\n`).join('');
    const answer = await sendRaw(server, scheme, `GET /text HTTP/1.1\r\nHost: localhost\r\n${fields}\r\n${NEXT}`);
    const { responses, rest } = readResponses(answer, ['GET', 'GET']);
    assert.equal(responses.map((response) => [response.status, response.headers.connection]), [[431, ['close']]], `${scheme}: ${JSON.stringify(answer.slice(0, 300))}`);
    assert.match(responses[0]!.body, /2000 header fields/, scheme);
    assert.is(rest, '', scheme);
    const most = Array.from({ length: 1_998 }, (_, i) => `x${i.toString(36)}: 1\r\n`).join('');
    const kept = await sendRaw(server, scheme, `GET /text HTTP/1.1\r\nHost: localhost\r\n${most}Connection: close\r\n\r\n`);
    assert.is(readResponses(kept, ['GET']).responses[0]?.status, 200, `${scheme}: 2000 fields are served`);
  }
});

test('a request body sent with a transfer coding other than chunked is a 400 saying so when read, logged at ERROR as the client\'s doing (never CRITICAL), not its coded bytes taken for the body', async () => {
  for (const scheme of SCHEMES) {
    records.length = 0;
    const answer = await sendRaw(server, scheme, `POST /read HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n${NEXT}`);
    const { responses, rest } = readResponses(answer, ['POST', 'GET']);
    assert.equal(responses.map((response) => response.status), [400, 200], `${scheme}: ${JSON.stringify(answer.slice(0, 300))}`);
    assert.is(rest, '', scheme);
    // Outside debug mode too, the client is told what to send instead.
    assert.is(JSON.parse(responses[0]!.body).detail, 'The request body is sent with Transfer-Encoding "gzip, chunked"; this server decodes chunked only (a compressed body goes with Content-Encoding).', scheme);
    const logged = records.filter((record) => record.message.includes('Transfer-Encoding "gzip, chunked"'));
    assert.equal(logged.map((record) => record.levelName), ['ERROR'], `${scheme}: ${JSON.stringify(records.map((record) => [record.levelName, record.message]))}`);
    assert.is((logged[0]!.context.exception as { code?: string }).code, 'HK_UNSUPPORTED_TRANSFER_CODING', scheme);
    assert.not.ok(records.some((record) => record.levelName === 'CRITICAL'), scheme);
    const chunked = await sendRaw(server, scheme, `POST /read HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: Chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n`);
    assert.is(readResponses(chunked, ['POST']).responses[0]?.body, 'got 3', scheme);
  }
});

test('a URL that alone reaches the 16 KiB head limit is a 414 saying so (RFC 9110 15.5.15), whole or in pieces; headers over it stay a 431', async () => {
  const long = `/text?q=${'a'.repeat(20 * 1024)}`;
  for (const scheme of SCHEMES) {
    const cases: Array<[string, string | string[], string[], number[]]> = [
      ['one write', `GET ${long} HTTP/1.1\r\nHost: localhost\r\n\r\n${NEXT}`, ['GET', 'GET'], [414]],
      // Another write, another chunk for the parser: the one it stops in starts inside the URL.
      ['two writes', [`GET ${long.slice(0, 10_000)}`, `${long.slice(10_000)} HTTP/1.1\r\nHost: localhost\r\n\r\n${NEXT}`], ['GET', 'GET'], [414]],
      ['a header over the limit', `GET /text HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`, ['GET'], [431]],
      ['a URL under the limit, a header taking the head over', `GET ${long.slice(0, 15_000)} HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(2_000)}\r\n\r\n`, ['GET'], [431]],
    ];
    for (const [name, bytes, methods, statuses] of cases) {
      const answer = await sendRaw(server, scheme, bytes, { gapMs: 50 });
      const { responses, rest } = readResponses(answer, methods);
      assert.equal(responses.map((response) => response.status), statuses, `${scheme} ${name}: ${JSON.stringify(answer.slice(0, 300))}`);
      const refusal = responses.at(-1)!;
      assert.equal(refusal.headers.connection, ['close'], `${scheme} ${name}`);
      assert.equal(refusal.headers['content-type'], ['text/plain; charset=utf-8'], `${scheme} ${name}`);
      assert.ok(refusal.complete, `${scheme} ${name}: ${JSON.stringify(answer.slice(0, 300))}`);
      assert.is(
        refusal.body,
        refusal.status === 414
          ? 'URI Too Long: The request target (URL) alone reaches the 16384-byte limit of the request line and headers.\n'
          : 'Request Header Fields Too Large: The request line and headers are larger than 16384 bytes.\n',
        `${scheme} ${name}`,
      );
      assert.is(rest, '', `${scheme} ${name}: bytes after the answer: ${JSON.stringify(rest.slice(0, 100))}`);
    }
  }
});

test('OPTIONS * (RFC 9110 9.3.7) is a 200 with Content-Length: 0 and an Allow of the routes\' methods, over HTTP/1.1 and 1.0, in absolute-form too; the connection serves on', async () => {
  const allow = ['GET, HEAD, POST, OPTIONS'];
  for (const scheme of SCHEMES) {
    const cases: Array<[string, string, string[]]> = [
      ['HTTP/1.1', `OPTIONS * HTTP/1.1\r\nHost: localhost\r\n\r\n${NEXT}`, ['OPTIONS', 'GET']],
      ['with a body, left unread', `OPTIONS * HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello${NEXT}`, ['OPTIONS', 'GET']],
      ['absolute-form with an empty path (RFC 9112 3.2.4)', `OPTIONS http://localhost HTTP/1.1\r\nHost: localhost\r\n\r\n${NEXT}`, ['OPTIONS', 'GET']],
      ['HTTP/1.0 without Host', 'OPTIONS * HTTP/1.0\r\n\r\n', ['OPTIONS']],
    ];
    for (const [name, bytes, methods] of cases) {
      const answer = await sendRaw(server, scheme, bytes);
      const { responses, rest } = readResponses(answer, methods);
      const options = responses[0];
      assert.equal([options?.status, options?.headers.allow, options?.headers['content-length'], options?.headers['content-type']], [200, allow, ['0'], undefined], `${scheme} ${name}: ${JSON.stringify(answer)}`);
      assert.equal(responses.map((response) => response.status), methods.length === 2 ? [200, 200] : [200], `${scheme} ${name}`);
      if (methods.length === 1) assert.equal(options!.headers.connection, ['close'], `${scheme} ${name}`);
      assert.is(rest, '', `${scheme} ${name}`);
    }
  }
});

test('"*" for another method than OPTIONS is a 400 saying so (RFC 9112 3.2.4), not a 404; OPTIONS on a path is routed as any method is', async () => {
  for (const scheme of SCHEMES) {
    for (const method of ['GET', 'HEAD', 'POST']) {
      const body = method === 'POST' ? 'Content-Length: 3\r\n\r\nabc' : '\r\n';
      // The message is the problem+json's detail (the HTML page outside debug shows the status only).
      const answer = await sendRaw(server, scheme, `${method} * HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\n${body}${NEXT}`);
      const { responses, rest } = readResponses(answer, [method, 'GET']);
      assert.equal(responses.map((response) => response.status), [400, 200], `${scheme} ${method}: ${JSON.stringify(answer.slice(0, 300))}`);
      if (method !== 'HEAD') {
        assert.is(JSON.parse(responses[0]!.body).detail, `Invalid request target "*" for ${method}: "*" (asking about the server itself) is for OPTIONS only; name a path such as "/".`, `${scheme} ${method}`);
      }
      assert.is(rest, '', `${scheme} ${method}`);
    }
    for (const target of ['/text', 'http://localhost/text']) {
      const answer = await sendRaw(server, scheme, `OPTIONS ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
      const { responses } = readResponses(answer, ['OPTIONS']);
      assert.equal([responses[0]?.status, responses[0]?.headers.allow], [405, ['GET, HEAD']], `${scheme} ${target}: ${JSON.stringify(answer.slice(0, 300))}`);
    }
  }
});

test.run();
