// A request the server refuses before the kernel sees it (node's parser, or the checks of its head)
// gets a one-line text; a refused HEAD gets the same head without it (RFC 9110 9.3.2). Raw sockets
// over http and https, read as a client reads them: no body for HEAD.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response, type Request } from '../../kernel/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, readResponses, sendRaw, startTestServer, type TestServer, type WireResponse } from './harness.js';

function routes(): RouteCollection {
  const collection = new RouteCollection();
  collection.add('/text', new Route('/text', { methods: ['GET'], defaults: { _controller: () => new Response('hello', 200, { 'content-type': 'text/plain' }) } }));
  // Waits for the whole body: its response is never begun when that body is refused.
  const read = async (request: Request): Promise<Response> => new Response(`got ${(await request.bytes()).length}`, 200);
  collection.add('/read', new Route('/read', { methods: ['GET', 'HEAD', 'POST'], defaults: { _controller: read } }));
  return collection;
}

/** The head limit: under a TLS record's 16 KiB, so an over-long head still arrives in one chunk over https (a longer one: see the last test). */
const LIMIT = 12 * 1024;
const a = (n: number): string => 'a'.repeat(n);
/** 2,100 small fields: more than node keeps, well under the head limit. */
const FIELDS = Array.from({ length: 2_100 }, (_, i) => `x${i.toString(36)}: 1\r\n`).join('');

const REFUSED: ReadonlyArray<[name: string, request: (method: string) => string, status: number]> = [
  ['an over-long URL', (method) => `${method} /text?q=${a(LIMIT)} HTTP/1.1\r\nHost: localhost\r\n\r\n`, 414],
  ['an over-long header', (method) => `${method} /text HTTP/1.1\r\nHost: localhost\r\nX-Big: ${a(LIMIT)}\r\n\r\n`, 431],
  ['a garbage header line', (method) => `${method} /text HTTP/1.1\r\nHost: localhost\r\nnot a header\r\n\r\n`, 400],
  ['a bad Content-Length', (method) => `${method} /text HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n`, 400],
  ['a malformed chunked body', (method) => `${method} /read HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n`, 400],
  ['no Host on HTTP/1.1', (method) => `${method} /text HTTP/1.1\r\n\r\n`, 400],
  ['more than 2000 header fields', (method) => `${method} /text HTTP/1.1\r\nHost: localhost\r\n${FIELDS}\r\n`, 431],
];

/** A response's header fields but Date, which may tick between two requests. */
function fieldsOf(response: WireResponse): Record<string, string[]> {
  const { date: _date, ...fields } = response.headers;
  return fields;
}

const test = suite('refusals of HEAD requests');
let server: TestServer;
let unlimited: TestServer;

test.before(async () => {
  server = await startTestServer({ kernel: { env: 'staging', debug: false, routes: routes() }, limits: { maxHeaderSize: LIMIT } });
  unlimited = await startTestServer({ kernel: { env: 'staging', debug: false, routes: routes() } });
});

test.after(async () => {
  await server.close();
  await unlimited.close();
});

test('a refused HEAD gets the status and header fields a GET gets, Content-Length included, and no text; the GET gets its text', async () => {
  for (const scheme of SCHEMES) {
    for (const [name, request, status] of REFUSED) {
      const context = `${scheme}, ${name}`;
      const get = await sendRaw(server, scheme, request('GET'));
      const { responses: [refusal], rest: afterGet } = readResponses(get, ['GET']);
      assert.is(refusal?.status, status, `${context}: ${JSON.stringify(get.slice(0, 300))}`);
      assert.ok(refusal!.complete && refusal!.body.length > 0, `${context}: the GET's text: ${JSON.stringify(get.slice(0, 300))}`);
      assert.equal(refusal!.headers['content-length'], [String(Buffer.byteLength(refusal!.body))], context);
      assert.equal(refusal!.headers.connection, ['close'], context);
      assert.is(afterGet, '', context);

      const head = await sendRaw(server, scheme, request('HEAD'));
      const { responses: [headRefusal], rest } = readResponses(head, ['HEAD']);
      assert.is(headRefusal?.status, status, `${context}: ${JSON.stringify(head.slice(0, 300))}`);
      assert.equal(fieldsOf(headRefusal!), fieldsOf(refusal!), `${context}: the HEAD's header fields are the GET's`);
      assert.is(rest, '', `${context}: bytes after the HEAD's head: ${JSON.stringify(rest.slice(0, 100))}`);
    }
  }
});

test('a refused HEAD behind a GET in the same write gets its head, after the GET\'s whole response, and no text', async () => {
  for (const scheme of SCHEMES) {
    for (const [name, request, status] of REFUSED.slice(0, 5)) {
      const context = `${scheme}, ${name}`;
      const answer = await sendRaw(server, scheme, `GET /text HTTP/1.1\r\nHost: localhost\r\n\r\n${request('HEAD')}`);
      const { responses, rest } = readResponses(answer, ['GET', 'HEAD']);
      assert.equal(responses.map((response) => [response.status, response.body]), [[200, 'hello'], [status, '']], `${context}: ${JSON.stringify(answer.slice(0, 300))}`);
      assert.ok(Number(responses[1]!.headers['content-length']?.[0]) > 0, `${context}: the length of the text not sent`);
      assert.is(rest, '', `${context}: bytes after the HEAD's head: ${JSON.stringify(rest.slice(0, 100))}`);
    }
  }
});

test('a refused GET keeps its text where bytes before it read like a HEAD: a body sized by Content-Length, or its own head begun in an earlier write', async () => {
  const refusedGet = 'GET /text HTTP/1.1\r\nHost: localhost\r\nnot a header\r\n\r\n';
  const body = '\r\n\r\nHEAD /text HTTP/1.1';
  for (const scheme of SCHEMES) {
    const cases: Array<[string, string | string[], string[], number[]]> = [
      ['after a body', `POST /read HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${body.length}\r\n\r\n${body}${refusedGet}`, ['POST', 'GET'], [200, 400]],
      // The request refused is `GET /xHEAD /text ...`: the parser stops in the second write, which begins `HEAD `.
      ['in two writes', ['GET /x', 'HEAD /text HTTP/1.1\r\nHost: localhost\r\n\r\n'], ['GET'], [400]],
    ];
    for (const [name, bytes, methods, statuses] of cases) {
      const answer = await sendRaw(server, scheme, bytes, { gapMs: 50 });
      const { responses, rest } = readResponses(answer, methods);
      assert.equal(responses.map((response) => response.status), statuses, `${scheme}, ${name}: ${JSON.stringify(answer.slice(0, 300))}`);
      const refusal = responses.at(-1)!;
      assert.ok(refusal.complete && refusal.body.startsWith('Bad Request'), `${scheme}, ${name}: the GET's text: ${JSON.stringify(answer.slice(0, 300))}`);
      assert.is(rest, '', `${scheme}, ${name}`);
    }
  }
});

test('a HEAD whose head outgrows a TLS record is refused with the text, framed as for a GET: its method went by in an earlier record', async () => {
  const answer = await sendRaw(unlimited, 'https', `HEAD /text?q=${a(20 * 1024)} HTTP/1.1\r\nHost: localhost\r\n\r\n`);
  const { responses: [refusal] } = readResponses(answer, ['GET']);
  assert.is(refusal?.status, 414, JSON.stringify(answer.slice(0, 300)));
  assert.ok(refusal!.complete && refusal!.body.startsWith('URI Too Long'), JSON.stringify(answer.slice(0, 300)));
  assert.equal(refusal!.headers.connection, ['close']);
});

test('every refusal carries Date, as every other answer does (RFC 9110 6.6.1: an origin server with a clock MUST send it in 4xx)', async () => {
  for (const scheme of SCHEMES) {
    for (const [name, request] of REFUSED) {
      const { responses: [refusal] } = readResponses(await sendRaw(server, scheme, request('GET')), ['GET']);
      const date = refusal!.headers.date;
      assert.ok(date !== undefined && date.length === 1 && !Number.isNaN(Date.parse(date[0]!)), `${scheme}, ${name}: ${JSON.stringify(refusal!.headers)}`);
    }
  }
});

test.run();
