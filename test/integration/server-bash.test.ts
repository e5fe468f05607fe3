// Defects found in a bug bash of the server and the request/response lifecycle, each checked over
// real sockets (http and https) against a server started as the harness starts one.
import net from 'node:net';
import { Readable } from 'node:stream';
import tls from 'node:tls';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response, type Request } from '../../kernel/index.js';
import type { LogEntry, LogRecord } from '../../lib/log/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, fetchFrom, rawStatus, sendRaw, startTestServer, type TestServer } from './harness.js';

/** A body that sends its first piece, then fails. */
function failingBody(): Readable {
  return Readable.from(
    (async function* () {
      yield 'first piece\n';
      await new Promise((resolve) => setTimeout(resolve, 20));
      throw new Error('the data source broke');
    })(),
  );
}

/** A body of 50 pieces 20 ms apart: a client has time to leave half-way. */
function slowBody(): Readable {
  return Readable.from(
    (async function* () {
      for (let i = 0; i < 50; i++) {
        yield `piece ${i}\n`;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })(),
  );
}

/** The stream bodies /late-stream made, to see what became of them. */
const lateStreams: Readable[] = [];

function routes(): RouteCollection {
  const collection = new RouteCollection();
  collection.add('late-stream', new Route('/late-stream', { methods: ['GET'], defaults: { _controller: async () => {
    await new Promise((resolve) => setTimeout(resolve, 150));
    const stream = Readable.from(['never sent']);
    lateStreams.push(stream);
    return new Response(stream, 200, { 'content-type': 'text/plain' });
  } } }));
  collection.add('echo', new Route('/echo', { methods: ['POST'], defaults: { _controller: async (request: Request) => Response.json({ got: await request.json() }) } }));
  collection.add('login', new Route('/login', { methods: ['POST'], defaults: { _controller: () => new Response(null, 204).setCookie('session', 'abc 123') } }));
  collection.add('form', new Route('/form', { methods: ['POST'], defaults: { _controller: async (request: Request) => Response.json(Object.fromEntries(await request.form())) } }));
  collection.add('text', new Route('/text', { methods: ['POST'], defaults: { _controller: async (request: Request) => new Response(await request.text(), 200, { 'content-type': 'text/plain' }) } }));
  collection.add('go', new Route('/go', { methods: ['GET'], defaults: { _controller: (request: Request) => Response.redirect(request.query.get('to') ?? '/') } }));
  collection.add('slow-stream', new Route('/slow-stream', { methods: ['GET'], defaults: { _controller: () => new Response(slowBody(), 200, { 'content-type': 'text/plain' }) } }));
  collection.add('broken-stream', new Route('/broken-stream', { methods: ['GET'], defaults: { _controller: () => new Response(failingBody(), 200, { 'content-type': 'text/plain' }) } }));
  // Plain JavaScript can give a Response any body: the type is only TypeScript's.
  collection.add('number-body', new Route('/number-body', { methods: ['GET'], defaults: { _controller: () => new Response(42 as unknown as string, 200) } }));
  return collection;
}

/** Writes `bytes` (Latin-1: one byte per character, where the harness's sendRaw writes UTF-8) and reads until the server closes. */
function sendLatin1(scheme: 'http' | 'https', bytes: string, waitMs = 2_000): Promise<string> {
  const port = Number(new URL(server.urls[scheme]).port);
  const socket = scheme === 'https' ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : net.connect(port, '127.0.0.1');
  return new Promise((resolve) => {
    let received = '';
    const timer = setTimeout(() => socket.destroy(), waitMs);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', () => {});
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.once(scheme === 'https' ? 'secureConnect' : 'connect', () => socket.write(Buffer.from(bytes, 'latin1')));
  });
}

const test = suite('server bug bash');
let server: TestServer;
const records: LogRecord[] = [];
const onLog = ({ record }: LogEntry): void => void records.push(record);

test.before(async () => {
  server = await startTestServer({ kernel: { env: 'staging', debug: false, routes: routes(), bodyLimit: 1024 } });
  server.app.bus.on('log', onLog);
});

test.after(async () => {
  server.app.bus.off('log', onLog);
  await server.close();
});

test('a response node:http refuses to write is a 500 whose reason phrase is Internal Server Error, not the refused status\'s', async () => {
  for (const scheme of SCHEMES) {
    const answer = await sendRaw(server, scheme, 'GET /go?to=/x%0d%0aSet-Cookie:a=b HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 500 Internal Server Error\r\n/, `${scheme}: ${JSON.stringify(answer.slice(0, 80))}`);
    assert.not.match(answer, /set-cookie/i, scheme);
  }
});

test('a body that is no string, bytes or stream is a 500 error page logged with what it was, never a head with no body after it', async () => {
  for (const scheme of SCHEMES) {
    records.length = 0;
    const answer = await sendRaw(server, scheme, 'GET /number-body HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 500 Internal Server Error\r\n/, `${scheme}: ${JSON.stringify(answer.slice(0, 80))}`);
    assert.ok(answer.includes('The server returned a "500 Internal Server Error".'), scheme);
    const logged = records.filter((record) => record.message.includes('A response body is a string, bytes, a readable stream or null, not number 42.'));
    assert.is(logged.length, 1, `${scheme}: ${JSON.stringify(records.map((record) => record.message))}`);
  }
});

test('a stream body that fails half-way is logged, and the client sees an incomplete answer', async () => {
  for (const scheme of SCHEMES) {
    records.length = 0;
    const answer = await sendRaw(server, scheme, 'GET /broken-stream HTTP/1.1\r\nHost: localhost\r\n\r\n');
    assert.is(rawStatus(answer), 200, scheme);
    assert.ok(answer.includes('first piece'), scheme);
    assert.not.ok(answer.endsWith('0\r\n\r\n'), `${scheme}: the chunked body must not look complete`);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const logged = records.filter((record) => record.message.includes('the data source broke'));
    assert.is(logged.length, 1, `${scheme}: ${JSON.stringify(records.map((record) => record.message))}`);
    assert.is(logged[0]!.levelName, 'CRITICAL', scheme);
  }
});

test('a client that leaves in the middle of a stream body is no server failure: nothing critical is logged', async () => {
  for (const scheme of SCHEMES) {
    records.length = 0;
    const answer = await sendRaw(server, scheme, 'GET /slow-stream HTTP/1.1\r\nHost: localhost\r\n\r\n', { waitMs: 150 });
    assert.ok(answer.includes('piece 0'), scheme);
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(records.filter((record) => record.level <= 2).map((record) => record.message), [], scheme);
  }
});

test('a JSON or text body that is not valid UTF-8 is a 400 saying so, not data silently replaced', async () => {
  for (const scheme of SCHEMES) {
    for (const path of ['/echo', '/text']) {
      const answer = await sendLatin1(scheme, `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 4\r\nConnection: close\r\n\r\n"\xff\xfe"`);
      assert.is(rawStatus(answer), 400, `${scheme} ${path}: ${JSON.stringify(answer.slice(0, 300))}`);
      assert.match(answer, 'not valid UTF-8', `${scheme} ${path}`);
    }
  }
});

test('a form body is read as the browser sent it; another type is a 415 that says which', async () => {
  for (const scheme of SCHEMES) {
    const form = await fetchFrom(server, scheme, '/form', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=J%C3%BCrgen+B&city=K%C3%B6ln' });
    assert.is(form.status, 200, scheme);
    assert.equal(JSON.parse(form.body), { name: 'Jürgen B', city: 'Köln' }, scheme);
    const json = await fetchFrom(server, scheme, '/form', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: '{"name":"x"}' });
    assert.is(json.status, 415, scheme);
    assert.is(JSON.parse(json.body).detail, 'The request body is application/json, not a form (application/x-www-form-urlencoded).', scheme);
  }
});

test('a cookie set with setCookie() is Secure over https only, HttpOnly and SameSite=Lax on both', async () => {
  for (const scheme of SCHEMES) {
    const response = await fetchFrom(server, scheme, '/login', { method: 'POST' });
    assert.is(response.status, 204, scheme);
    const expected = `session=abc%20123; Path=/; HttpOnly; SameSite=Lax${scheme === 'https' ? '; Secure' : ''}`;
    assert.equal(response.headers['set-cookie'], expected, scheme);
  }
});

/** The body of a raw answer framed by Content-Length. */
function rawBody(answer: string): string {
  const headEnd = answer.indexOf('\r\n\r\n');
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(answer)?.[1] ?? -1);
  return answer.slice(headEnd + 4, headEnd + 4 + length);
}

test('a request the HTTP parser refuses gets a 4xx whose body says what is wrong with it', async () => {
  const cases: Array<[string, number, RegExp]> = [
    ['POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', 400, /Duplicate Content-Length/],
    ['POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400, /Transfer-Encoding can't be present with Content-Length/],
    ['POST /echo HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400, /chunk size/],
    ['GET / HTTP/1.1\r\nHost: localhost\r\nBad Name: x\r\n\r\n', 400, /header/i],
    [`GET / HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`, 431, /larger than 16384 bytes/],
  ];
  for (const scheme of SCHEMES) {
    for (const [bytes, status, message] of cases) {
      const answer = await sendRaw(server, scheme, bytes);
      assert.is(rawStatus(answer), status, `${scheme} ${JSON.stringify(bytes.slice(0, 60))}: ${JSON.stringify(answer.slice(0, 200))}`);
      assert.match(answer, /\r\ncontent-type: text\/plain; charset=utf-8\r\n/i, scheme);
      assert.match(rawBody(answer), message, `${scheme}: ${JSON.stringify(answer)}`);
    }
  }
});

test('CONNECT (this server is no proxy) is a 400 saying so, not a connection closed without an answer', async () => {
  for (const scheme of SCHEMES) {
    const answer = await sendRaw(server, scheme, 'CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n');
    assert.is(rawStatus(answer), 400, `${scheme}: ${JSON.stringify(answer)}`);
    assert.match(rawBody(answer), /CONNECT/, scheme);
    assert.is((await fetchFrom(server, scheme, '/go?to=/next')).status, 302, `${scheme}: still serving`);
  }
});

test('an Expect other than 100-continue is a 417 saying which expectation is supported', async () => {
  for (const scheme of SCHEMES) {
    const answer = await sendRaw(server, scheme, 'GET /go HTTP/1.1\r\nHost: localhost\r\nExpect: teapot\r\nConnection: close\r\n\r\n');
    assert.is(rawStatus(answer), 417, `${scheme}: ${JSON.stringify(answer)}`);
    assert.match(rawBody(answer), /100-continue/, `${scheme}: ${JSON.stringify(answer)}`);
  }
});

test('an Expect of 100-continue and more (100-continue, foo) is a 417 before any 100 Continue, and the connection closes', async () => {
  for (const scheme of SCHEMES) {
    // Only the head: were it taken for 100-continue, the body would be invited and waited for.
    const answer = await sendRaw(server, scheme, 'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 7\r\nExpect: 100-continue, foo\r\n\r\n', { waitMs: 4_000 });
    assert.is(rawStatus(answer), 417, `${scheme}: ${JSON.stringify(answer)}`);
    assert.match(rawBody(answer), /100-continue/, `${scheme}: ${JSON.stringify(answer)}`);
    assert.match(answer, /\r\nconnection: close\r\n/i, scheme);
  }
});

test('Expect: 100-Continue (any case) is still invited once the controller reads the body', async () => {
  for (const scheme of SCHEMES) {
    const head = 'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 7\r\nExpect: 100-Continue\r\nConnection: close\r\n\r\n';
    const answer = await sendRaw(server, scheme, [head, '{"a":1}'], { gapMs: 200 });
    assert.match(answer, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/, `${scheme}: ${JSON.stringify(answer.slice(0, 200))}`);
  }
});

test('Expect: 100-continue with a body over the limit is answered 413 at once, without inviting the body first', async () => {
  for (const scheme of SCHEMES) {
    const answer = await sendRaw(server, scheme, 'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n');
    assert.is(rawStatus(answer), 413, `${scheme}: ${JSON.stringify(answer.slice(0, 200))}`);
    assert.match(answer, /\r\nconnection: close\r\n/i, scheme);
  }
});

test('Expect: 100-continue on a path that reads no body gets its final answer without 100 Continue, and the connection closes', async () => {
  for (const scheme of SCHEMES) {
    const answer = await sendRaw(server, scheme, 'POST /go HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n');
    assert.is(rawStatus(answer), 405, `${scheme}: ${JSON.stringify(answer.slice(0, 200))}`);
    assert.match(answer, /\r\nconnection: close\r\n/i, scheme);
  }
});

test('Expect: 100-continue gets 100 Continue once the controller reads the body, then the answer', async () => {
  for (const scheme of SCHEMES) {
    const head = 'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 7\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n';
    const answer = await sendRaw(server, scheme, [head, '{"a":1}'], { gapMs: 200 });
    assert.match(answer, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/, `${scheme}: ${JSON.stringify(answer.slice(0, 200))}`);
    assert.equal(JSON.parse(rawBody(answer.slice(answer.indexOf('\r\n\r\n') + 4))), { got: { a: 1 } }, scheme);
  }
});

test('an HTTP/1.0 request with Expect: 100-continue gets no 100 Continue (RFC 9110 10.1.1), only its answer', async () => {
  for (const scheme of SCHEMES) {
    const answer = await sendRaw(server, scheme, 'POST /echo HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 7\r\nExpect: 100-continue\r\n\r\n{"a":1}');
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n/, `${scheme}: ${JSON.stringify(answer.slice(0, 200))}`);
    assert.not.match(answer, '100 Continue', scheme);
  }
});

test('a stream body whose client left before the answer is destroyed, not left open', async () => {
  for (const scheme of SCHEMES) {
    lateStreams.length = 0;
    await sendRaw(server, scheme, 'GET /late-stream HTTP/1.1\r\nHost: localhost\r\n\r\n', { waitMs: 30 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.is(lateStreams.length, 1, scheme);
    assert.ok(lateStreams[0]!.destroyed, `${scheme}: the stream is still open`);
  }
});

test.run();
