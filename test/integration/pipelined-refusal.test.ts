// A request the parser refuses (malformed, head or URL too large) behind another on the same
// connection: RFC 9112 9.3.2 wants the responses in the order of the requests, so the first is sent
// whole, then the refusal, then the connection closes. Raw sockets over http and https.
import net from 'node:net';
import { Readable } from 'node:stream';
import tls from 'node:tls';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response, type Request } from '../../kernel/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, readResponses, startTestServer, type TestServer } from './harness.js';

/** 1 MiB: more than a socket takes in one write, so its response is still in flight when the next request fails. */
const BODY = 'abcdefghijklmnop'.repeat(64 * 1024);
/** What /gated sends before it waits for the test to open the gate. */
const FIRST = BODY.slice(0, 1024);

let openGate: () => void = () => {};
let gate: Promise<void> = Promise.resolve();
/** Holds back the rest of the next /gated responses until openGate(). */
function closeGate(): void {
  gate = new Promise((resolve) => (openGate = resolve));
}

/** A body that sends `first` at once and the rest when `until` settles (never, when it does not). */
function heldBody(first: string, rest: string, until: Promise<void>): Readable {
  const body = new Readable({ read() {} });
  body.push(first);
  void until.then(() => {
    body.push(rest);
    body.push(null);
  });
  return body;
}

function routes(): RouteCollection {
  const collection = new RouteCollection();
  const add = (path: string, controller: (request: Request) => Response | Promise<Response>, methods = ['GET']): void => {
    collection.add(path, new Route(path, { methods, defaults: { _controller: controller } }));
  };
  add('/big', () => new Response(BODY, 200, { 'content-type': 'text/plain' }));
  add('/gated', () => new Response(heldBody(FIRST, BODY.slice(FIRST.length), gate), 200, { 'content-type': 'text/plain', 'content-length': String(BODY.length) }));
  add('/stalled', () => new Response(heldBody(FIRST, '', new Promise(() => {})), 200, { 'content-type': 'text/plain', 'content-length': String(BODY.length) }));
  add('/text', () => new Response('hello', 200, { 'content-type': 'text/plain' }));
  // Waits for the whole body: its response is never begun when that body is refused.
  add('/read', async (request) => new Response(`got ${(await request.bytes()).length}`, 200), ['POST', 'GET', 'HEAD']);
  return collection;
}

/** A raw connection the test writes to step by step, keeping all it reads until the server closes it. */
interface RawConnection {
  write(bytes: string): Promise<void>;
  received(): string;
  isClosed(): boolean;
  /** Everything read, once the server closed the connection. */
  closed: Promise<string>;
  destroy(): void;
}

function openRaw(server: TestServer, scheme: 'http' | 'https'): Promise<RawConnection> {
  const port = Number(new URL(server.urls[scheme]).port);
  const socket = scheme === 'https' ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : net.connect(port, '127.0.0.1');
  let received = '';
  let isClosed = false;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  // A reset after the answer is the server closing: what was received is still the answer.
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) =>
    socket.once('close', () => {
      isClosed = true;
      resolve(received);
    }),
  );
  return new Promise((resolve) => {
    socket.once(scheme === 'https' ? 'secureConnect' : 'connect', () =>
      resolve({
        write: (bytes) => new Promise((done) => socket.write(bytes, () => done())),
        received: () => received,
        isClosed: () => isClosed,
        closed,
        destroy: () => socket.destroy(),
      }),
    );
  });
}

/** Waits until `condition` holds; fails after 5 s rather than hanging. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited >= 5_000) throw new Error(`${what}: not within 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Everything read once the server closed `connection`; fails (and closes it) when the server has not within 5 s. */
async function closedByServer(connection: RawConnection): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      connection.destroy();
      reject(new Error(`the server did not close the connection within 5 s; read so far: ${JSON.stringify(connection.received().slice(0, 200))}`));
    }, 5_000);
  });
  return Promise.race([connection.closed, timeout]).finally(() => clearTimeout(timer));
}

const REFUSED: ReadonlyArray<[name: string, request: string, status: number]> = [
  ['garbage', 'GARBAGE\r\n\r\n', 400],
  ['a header over the limit', `GET /text HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`, 431],
  ['a URL over the limit', `GET /text?q=${'a'.repeat(20 * 1024)} HTTP/1.1\r\nHost: localhost\r\n\r\n`, 414],
  ['a malformed chunked body after a good head', 'POST /read HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400],
];

const test = suite('pipelined refusal');
let server: TestServer;
/** clientError events the servers have had: a step waits for the next one. */
let clientErrors = 0;
const countClientError = (): void => void clientErrors++;

test.before(async () => {
  server = await startTestServer({ kernel: { env: 'staging', debug: false, routes: routes() } });
  for (const listener of server.running.servers) listener.on('clientError', countClientError);
});

test.after(async () => {
  openGate();
  await server.close();
});

/**
 * Sends `first` and `refused` pipelined, in one write or (`split`) in two with the first response's
 * head read in between; /gated's rest is held until the server has had the refusal.
 */
async function exchange(scheme: 'http' | 'https', first: string, refused: string, split: boolean): Promise<string> {
  closeGate();
  const errorsBefore = clientErrors;
  const connection = await openRaw(server, scheme);
  const headRead = (): boolean => connection.received().includes('\r\n\r\n') || connection.isClosed();
  if (split) {
    await connection.write(first);
    await until(headRead, 'the head of the first response');
    await connection.write(refused);
  } else {
    await connection.write(first + refused);
  }
  await until(() => clientErrors > errorsBefore, 'the refusal');
  await until(headRead, 'the head of the first response');
  openGate();
  return closedByServer(connection);
}

test('a refused request behind a large response gets its answer after that response, sent whole, then the connection closes', async () => {
  for (const scheme of SCHEMES) {
    for (const split of [false, true]) {
      for (const [name, refused, status] of REFUSED) {
        const context = `${scheme}, ${name}, ${split ? 'two writes' : 'one write'}`;
        const answer = await exchange(scheme, 'GET /gated HTTP/1.1\r\nHost: localhost\r\n\r\n', refused, split);
        const { responses, rest } = readResponses(answer, ['GET', 'GET']);
        assert.equal(responses.map((response) => response.status), [200, status], `${context}: ${JSON.stringify(answer.slice(0, 200))}`);
        assert.ok(responses[0]!.body === BODY, `${context}: the first response is whole (${responses[0]!.body.length} of ${BODY.length} bytes)`);
        assert.ok(responses[1]!.complete, context);
        assert.equal(responses[1]!.headers.connection, ['close'], context);
        assert.is(rest, '', `${context}: bytes after the refusal: ${JSON.stringify(rest.slice(0, 100))}`);
      }
    }
  }
});

test('a refused request behind a response sent from a string, or behind a HEAD, is answered after it', async () => {
  for (const scheme of SCHEMES) {
    for (const method of ['GET', 'HEAD']) {
      for (const [name, refused, status] of REFUSED.slice(0, 3)) {
        const context = `${scheme}, ${method} then ${name}`;
        const answer = await exchange(scheme, `${method} /big HTTP/1.1\r\nHost: localhost\r\n\r\n`, refused, false);
        const { responses, rest } = readResponses(answer, [method, 'GET']);
        assert.equal(responses.map((response) => response.status), [200, status], `${context}: ${JSON.stringify(answer.slice(0, 200))}`);
        assert.equal(responses[0]!.headers['content-length'], [String(BODY.length)], context);
        assert.ok(responses[0]!.body === (method === 'HEAD' ? '' : BODY), `${context}: the first response is whole (${responses[0]!.body.length} bytes)`);
        assert.ok(responses[1]!.complete, context);
        assert.is(rest, '', context);
      }
    }
  }
});

test('a refused HEAD behind a response in flight gets, after that response, the head a GET gets, Content-Length included, and no text', async () => {
  const refusedAs = (method: string): ReadonlyArray<[name: string, request: string]> => [
    ['a garbage header line', `${method} /text HTTP/1.1\r\nHost: localhost\r\nnot a header\r\n\r\n`],
    ['a bad Content-Length', `${method} /text HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n`],
    ['a malformed chunked body after a good head', `${method} /read HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`],
  ];
  for (const scheme of SCHEMES) {
    for (const [i, [name, refused]] of refusedAs('HEAD').entries()) {
      const context = `${scheme}, ${name}`;
      // In one write: the refused head begins in the chunk that ends the request before it, which shows it is a HEAD.
      const answer = await exchange(scheme, 'GET /gated HTTP/1.1\r\nHost: localhost\r\n\r\n', refused, false);
      const { responses, rest } = readResponses(answer, ['GET', 'HEAD']);
      assert.equal(responses.map((response) => response.status), [200, 400], `${context}: ${JSON.stringify(answer.slice(0, 200))}`);
      assert.ok(responses[0]!.body === BODY, `${context}: the first response is whole (${responses[0]!.body.length} of ${BODY.length} bytes)`);
      assert.is(rest, '', `${context}: bytes after the HEAD's head: ${JSON.stringify(rest.slice(0, 100))}`);

      const asGet = await exchange(scheme, 'GET /gated HTTP/1.1\r\nHost: localhost\r\n\r\n', refusedAs('GET')[i]![1], false);
      const { responses: [, getRefusal] } = readResponses(asGet, ['GET', 'GET']);
      assert.ok(getRefusal?.complete && getRefusal.body.length > 0, `${context}: the GET's text: ${JSON.stringify(asGet.slice(-200))}`);
      const { date: _headDate, ...headFields } = responses[1]!.headers;
      const { date: _getDate, ...getFields } = getRefusal!.headers;
      assert.equal(headFields, getFields, `${context}: the HEAD's header fields are the GET's`);
    }
  }
});

test('after a request that said Connection: close, the bytes that follow get no answer: its response is sent whole and the connection closes', async () => {
  for (const scheme of SCHEMES) {
    for (const split of [false, true]) {
      const context = `${scheme}, ${split ? 'two writes' : 'one write'}`;
      const answer = await exchange(scheme, 'GET /gated HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', 'GARBAGE\r\n\r\n', split);
      const { responses, rest } = readResponses(answer, ['GET', 'GET']);
      assert.equal(responses.map((response) => response.status), [200], `${context}: ${JSON.stringify(answer.slice(0, 200))}`);
      assert.ok(responses[0]!.body === BODY, `${context}: the response is whole (${responses[0]!.body.length} of ${BODY.length} bytes)`);
      assert.equal(responses[0]!.headers.connection, ['close'], context);
      assert.is(rest, '', context);
    }
  }
});

test('a CONNECT behind responses in flight gets its 400 after them, sent whole, then the connection closes', async () => {
  let connects = 0;
  const countConnect = (): void => void connects++;
  for (const listener of server.running.servers) listener.on('connect', countConnect);
  try {
    for (const scheme of SCHEMES) {
      closeGate();
      const connectsBefore = connects;
      const connection = await openRaw(server, scheme);
      // /text, queued behind /gated, has no connection either when the CONNECT comes.
      await connection.write('GET /gated HTTP/1.1\r\nHost: localhost\r\n\r\nGET /text HTTP/1.1\r\nHost: localhost\r\n\r\nCONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n');
      await until(() => connects > connectsBefore, `${scheme}: the CONNECT`);
      await until(() => connection.received().includes('\r\n\r\n') || connection.isClosed(), `${scheme}: the head of the first response`);
      openGate();
      const answer = await closedByServer(connection);
      const { responses, rest } = readResponses(answer, ['GET', 'GET', 'CONNECT']);
      assert.equal(responses.map((response) => response.status), [200, 200, 400], `${scheme}: ${JSON.stringify(answer.slice(0, 200))}`);
      assert.ok(responses[0]!.body === BODY, `${scheme}: the first response is whole (${responses[0]!.body.length} of ${BODY.length} bytes)`);
      assert.is(responses[1]!.body, 'hello', scheme);
      assert.is(responses[2]!.body, 'Bad Request: CONNECT asks for a tunnel, and this server is no proxy.\n', scheme);
      assert.equal(responses[2]!.headers.connection, ['close'], scheme);
      assert.is(rest, '', scheme);
    }
  } finally {
    for (const listener of server.running.servers) listener.off('connect', countConnect);
  }
});

test('a request whose head is not in by headersTimeout, behind a response in flight, gets its 408 after that response, sent whole', async () => {
  const timed = await startTestServer({ kernel: { env: 'staging', debug: false, routes: routes() }, limits: { headersTimeout: 500 } });
  let timeouts = 0;
  for (const listener of timed.running.servers) listener.on('clientError', (error: NodeJS.ErrnoException) => void (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' && timeouts++));
  try {
    for (const scheme of SCHEMES) {
      closeGate();
      const timeoutsBefore = timeouts;
      const connection = await openRaw(timed, scheme);
      await connection.write('GET /gated HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await until(() => connection.received().includes('\r\n\r\n'), `${scheme}: the head of the first response`);
      await connection.write('GET /text HTTP/1.1\r\nHost: loc');
      await until(() => timeouts > timeoutsBefore || connection.isClosed(), `${scheme}: the request timeout`);
      openGate();
      const answer = await closedByServer(connection);
      const { responses, rest } = readResponses(answer, ['GET', 'GET']);
      assert.equal(responses.map((response) => response.status), [200, 408], `${scheme}: ${JSON.stringify(answer.slice(0, 200))}`);
      assert.ok(responses[0]!.body === BODY, `${scheme}: the first response is whole (${responses[0]!.body.length} of ${BODY.length} bytes)`);
      assert.is(responses[1]!.body, 'Request Timeout: The request did not arrive in time.\n', scheme);
      assert.is(rest, '', scheme);
    }
  } finally {
    openGate();
    await timed.close();
  }
});

test('a response that stalls ahead of a refusal is dropped at idleTimeout, however much the client keeps sending', async () => {
  const idle = await startTestServer({ kernel: { env: 'staging', debug: false, routes: routes() }, limits: { idleTimeout: 300 } });
  try {
    for (const scheme of SCHEMES) {
      const connection = await openRaw(idle, scheme);
      await connection.write('GET /stalled HTTP/1.1\r\nHost: localhost\r\n\r\n');
      await until(() => connection.received().includes('\r\n\r\n'), `${scheme}: the head of the stalled response`);
      await connection.write('GARBAGE\r\n\r\n');
      // More than idleTimeout would pass between two checks if these bytes counted.
      const trickle = setInterval(() => void connection.write('x').catch(() => {}), 50);
      const answer = await closedByServer(connection).finally(() => clearInterval(trickle));
      const { responses, rest } = readResponses(answer, ['GET', 'GET']);
      assert.equal(responses.map((response) => [response.status, response.complete]), [[200, false]], `${scheme}: ${JSON.stringify(answer.slice(0, 200))}`);
      assert.is(responses[0]!.body, FIRST, scheme);
      assert.is(rest, '', scheme);
    }
  } finally {
    await idle.close();
  }
});

test.run();
