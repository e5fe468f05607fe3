// Message framing a proxy and this server could read differently (request smuggling, RFC 9112 6.3
// and 11.2), over raw sockets (undici would refuse to send most of it), over http and https.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { RequestHeaderFieldsTooLargeHttpError, Response, type Request } from '../../kernel/index.js';
import type { LogEntry, LogRecord } from '../../lib/log/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, rawStatus, readResponses, savedProfile, sendRaw, startTestServer, type TestServer } from './harness.js';

/** How long a controller that never reads the body waits for its request's signal. */
const WAIT_MS = 3_000;

function routes(): RouteCollection {
  const collection = new RouteCollection();
  const add = (path: string, controller: (request: Request) => Response | Promise<Response>): void => {
    collection.add(path, new Route(path, { methods: ['GET', 'POST'], defaults: { _controller: controller } }));
  };
  add('/read', async (request) => new Response(`read ${(await request.bytes()).length}\n`, 200, { 'content-type': 'text/plain' }));
  // Never reads the body: answers once its request's signal is aborted (or after WAIT_MS).
  add('/wait', async (request) => {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, WAIT_MS);
      request.signal.addEventListener('abort', () => resolve(clearTimeout(timer)), { once: true });
    });
    return new Response('waited\n', 200, { 'content-type': 'text/plain' });
  });
  // Never reads the body: answers an error status of its own a moment later.
  add('/gone', async () => {
    await new Promise((resolve) => setTimeout(resolve, 100));
    return new Response('gone\n', 410, { 'content-type': 'text/plain' });
  });
  // Counts the requests it serves, reading no body.
  add('/count', () => new Response(`served ${++served}\n`, 200, { 'content-type': 'text/plain' }));
  add('/smuggled', () => new Response('SMUGGLED\n', 200, { 'content-type': 'text/plain' }));
  return collection;
}

/** Requests /count served. */
let served = 0;

const test = suite('request smuggling');
let server: TestServer;
const records: LogRecord[] = [];
const onLog = ({ record }: LogEntry): void => void records.push(record);

test.before(async () => {
  server = await startTestServer({ kernel: { env: 'staging', debug: true, routes: routes() } });
  server.app.bus.on('log', onLog);
});

test.after(async () => {
  server.app.bus.off('log', onLog);
  await server.close();
});

/** The first `Uncaught error` record since `records` was emptied, once logged (bounded: 5 s); `path` names the request in a failure. */
async function uncaughtFor(path: string): Promise<LogRecord> {
  const find = (): LogRecord | undefined => records.find((record) => record.message.startsWith('Uncaught error'));
  for (let i = 0; i < 250 && find() === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  const record = find();
  assert.ok(record !== undefined, `the request to ${path} is logged: ${JSON.stringify(records.map((r) => r.message))}`);
  return record!;
}

/** The profile of the main request to `path` (a unique query), once saved (bounded: 5 s). */
async function profileOf(path: string): Promise<any> {
  for (let i = 0; i < 250; i++) {
    const [found] = await server.app.profiler!.storage.find({ url: path, method: 'POST' });
    if (found !== undefined) return savedProfile(server, found.token);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no profile of POST ${path} within 5 s`);
}

const SMUGGLED = 'GET /smuggled HTTP/1.1\r\nHost: localhost\r\n\r\n';

test('a chunked body the parser refuses is a 400 with its reason, and the request is logged and profiled with that reason, not as a client that left', async () => {
  for (const scheme of SCHEMES) {
    for (const route of ['/read', '/wait']) {
      const path = `${route}?malformed-chunk=${scheme}`;
      records.length = 0;
      // `-5` is no chunk size: the bytes after it must never be read as a request.
      const answer = await sendRaw(server, scheme, `POST ${path} HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n-5\r\n${SMUGGLED}`);
      assert.is(rawStatus(answer), 400, `${scheme} ${route}: ${answer}`);
      assert.match(answer, /\r\n\r\nBad Request: Invalid character in chunk size\.\n$/, `${scheme} ${route}: one answer, then the connection closed`);
      const record = await uncaughtFor(path);
      assert.match(record.message, /The request body is malformed: Invalid character in chunk size \(HPE_INVALID_CHUNK_SIZE\)/, `${scheme} ${route}: ${record.message}`);
      assert.not.match(record.message, /client closed/);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.is(records.filter((entry) => entry.message.startsWith('Uncaught error')).length, 1, `${scheme} ${route}: logged once: ${JSON.stringify(records.map((r) => r.message))}`);
      assert.is((record.context.exception as { status?: number }).status, 400, `${scheme} ${route}`);
      const profile = await profileOf(path);
      assert.is(profile.status, 400, `${scheme} ${route}: the profile has the status the client got`);
      assert.match(profile.collectors.exception.exceptions[0].message, /Invalid character in chunk size/, `${scheme} ${route}`);
    }
  }
});

test('a chunked body the parser refuses while the controller prepares an error answer of its own (a 410) ends as the 400 the client got, in the log and the profile', async () => {
  for (const scheme of SCHEMES) {
    const path = `/gone?malformed-chunk=${scheme}`;
    records.length = 0;
    const answer = await sendRaw(server, scheme, `POST ${path} HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n-5\r\n${SMUGGLED}`);
    assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n[^]*\r\n\r\nBad Request: Invalid character in chunk size\.\n$/, `${scheme}: ${answer}`);
    assert.match((await uncaughtFor(path)).message, /The request body is malformed: Invalid character in chunk size/, scheme);
    const profile = await profileOf(path);
    assert.is(profile.status, 400, `${scheme}: the profile has the status the client got`);
    assert.match(profile.collectors.exception.exceptions[0].message, /Invalid character in chunk size/, scheme);
  }
});

test('chunk extensions over node\'s limit are a 413 to the client, and to the log and the profile', async () => {
  for (const scheme of SCHEMES) {
    const path = `/read?long-extension=${scheme}`;
    records.length = 0;
    const answer = await sendRaw(server, scheme, `POST ${path} HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n5;a=${'x'.repeat(20_000)}\r\nhello\r\n0\r\n\r\n`);
    assert.is(rawStatus(answer), 413, `${scheme}: ${answer.slice(0, 200)}`);
    assert.match(answer, /Payload Too Large: Chunk extensions overflow\./);
    const record = await uncaughtFor(path);
    assert.match(record.message, /The request body is malformed: Chunk extensions overflow \(HPE_CHUNK_EXTENSIONS_OVERFLOW\)/, `${scheme}: ${record.message}`);
    assert.is((record.context.exception as { status?: number }).status, 413, scheme);
    assert.is((await profileOf(path)).status, 413, scheme);
  }
});

test('trailer fields over the head limit are a 431 to the client, and to the log and the profile', async () => {
  for (const scheme of SCHEMES) {
    const path = `/read?long-trailer=${scheme}`;
    records.length = 0;
    // node counts the trailers alone against maxHeaderSize (16 KiB here).
    const answer = await sendRaw(server, scheme, `POST ${path} HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\nX-T: ${'x'.repeat(20_000)}\r\n\r\n`);
    assert.is(rawStatus(answer), 431, `${scheme}: ${answer.slice(0, 200)}`);
    assert.match(answer, /\r\n\r\nRequest Header Fields Too Large: The request's trailer fields \(after its chunked body\) are larger than 16384 bytes\.\n$/, `${scheme}: the answer says which fields`);
    const record = await uncaughtFor(path);
    // The log names the limit the answer gives, and the parser's reason.
    assert.match(record.message, /The request's trailer fields \(after its chunked body\) are larger than 16384 bytes: Header overflow \(HPE_HEADER_OVERFLOW\)/, `${scheme}: ${record.message}`);
    assert.is((record.context.exception as { status?: number }).status, 431, `${scheme}: ${record.message}`);
    assert.instance(record.context.exception, RequestHeaderFieldsTooLargeHttpError, `${scheme}: ${record.message}`);
    assert.is((record.context.exception as { code?: string }).code, 'HK_REQUEST_HEADER_FIELDS_TOO_LARGE', scheme);
    assert.is((await profileOf(path)).status, 431, scheme);
  }
});

test('a Transfer-Encoding that does not end with chunked is a 400 before any controller runs (RFC 9112 6.3), and the connection closes', async () => {
  for (const scheme of SCHEMES) {
    // `chunked` then a no-break space (an obs-text byte, 0xA0), which node's parser takes for no chunked, nor white space.
    for (const [version, coding] of [['1.1', 'xchunked'], ['1.1', 'identity'], ['1.1', 'chunked;q=1'], ['1.1', ''], ['1.0', 'xchunked'], ['1.1', 'chunked\u00a0']] as const) {
      served = 0;
      records.length = 0;
      const answer = await sendRaw(server, scheme, `POST /count HTTP/${version}\r\nHost: localhost\r\nTransfer-Encoding: ${coding}\r\n\r\n5\r\nhello\r\n0\r\n\r\n${SMUGGLED}`, { latin1: true });
      const seen = `${scheme}, HTTP/${version} ${JSON.stringify(coding)}: ${answer}`;
      assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n[^]*\r\n\r\nBad Request: The request's Transfer-Encoding does not end with chunked, so the length of its body cannot be determined \(RFC 9112 6\.3\)\.\n$/, seen);
      assert.is(served, 0, `${seen}: the controller never ran`);
      assert.ok(records.some((record) => record.levelName === 'ERROR' && record.message.startsWith('A request was refused before it reached the kernel: 400 Bad Request: The request\'s Transfer-Encoding')), seen);
    }
  }
});

/** How long the client waits for the server to close the connection after its last answer. */
const CLOSE_WAIT_MS = 3_000;

test('a request refused in its head, which the kernel never sees, is logged at ERROR with its status, reason and client', async () => {
  const heads = [
    { bytes: `POST /read HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n${'Transfer-Encoding: chunked\r\n'}\r\n0\r\n\r\n`, status: 400, reason: "Transfer-Encoding can't be present with Content-Length." },
    { bytes: 'GET /read HTTP/1.1\r\n\r\n', status: 400, reason: 'An HTTP/1.1 request names the host it is for in a Host header.' },
  ];
  for (const scheme of SCHEMES) {
    for (const { bytes, status, reason } of heads) {
      records.length = 0;
      const answer = await sendRaw(server, scheme, bytes);
      assert.ok(answer.endsWith(`\r\n\r\nBad Request: ${reason}\n`), `${scheme}: ${answer}`);
      const record = records.find((entry) => entry.message.includes(reason));
      assert.ok(record !== undefined, `${scheme}: logged: ${JSON.stringify(records.map((r) => r.message))}`);
      assert.is(record!.levelName, 'ERROR', scheme);
      assert.is(record!.message, `A request was refused before it reached the kernel: ${status} Bad Request: ${reason}`, scheme);
      assert.equal({ status: record!.context.status, client: record!.context.client }, { status, client: '127.0.0.1' }, scheme);
    }
  }
});

/** A request pipelined behind the case's; it asks to close, so a connection kept after the case's answer ends after it. */
const NEXT = 'GET /smuggled HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n';
const post = (head: string, body: string): string => `POST /read HTTP/1.1\r\nHost: localhost\r\n${head}\r\n${body}`;
const CHUNKED = 'Transfer-Encoding: chunked\r\n';

/**
 * What node's parser (llhttp) decides, pinned so that a node upgrade that reads any of these another
 * way is noticed: `statuses` in order, the last answer's text, and whether NEXT, sent right behind
 * the case's bytes, was answered as a request of its own (never from inside a body).
 */
const FRAMING: ReadonlyArray<{ name: string; bytes: string; statuses: number[]; reason?: RegExp; next: boolean }> = [
  // Refused: a 400 saying why, the connection closed, nothing after it read as a request.
  { name: 'Content-Length and Transfer-Encoding', bytes: post(`Content-Length: 5\r\n${CHUNKED}`, `0\r\n\r\n${NEXT}`), statuses: [400], reason: /Transfer-Encoding can't be present with Content-Length/, next: false },
  { name: 'Transfer-Encoding and Content-Length', bytes: post(`${CHUNKED}Content-Length: 40\r\n`, `0\r\n\r\n${NEXT}`), statuses: [400], reason: /Content-Length can't be present with Transfer-Encoding/, next: false },
  { name: 'two equal Content-Lengths', bytes: post('Content-Length: 5\r\nContent-Length: 5\r\n', `hello${NEXT}`), statuses: [400], reason: /Duplicate Content-Length/, next: false },
  { name: 'two differing Content-Lengths', bytes: post('Content-Length: 5\r\nContent-Length: 0\r\n', `hello${NEXT}`), statuses: [400], reason: /Duplicate Content-Length/, next: false },
  { name: 'a Content-Length list', bytes: post('Content-Length: 5, 5\r\n', `hello${NEXT}`), statuses: [400], reason: /Invalid character in Content-Length/, next: false },
  { name: 'a signed Content-Length', bytes: post('Content-Length: +5\r\n', `hello${NEXT}`), statuses: [400], reason: /Invalid character in Content-Length/, next: false },
  { name: 'a Content-Length past 2^64', bytes: post('Content-Length: 18446744073709551621\r\n', `hello${NEXT}`), statuses: [400], reason: /Content-Length overflow/, next: false },
  { name: 'white space before the colon', bytes: post('Transfer-Encoding : chunked\r\n', `5\r\nhello\r\n0\r\n\r\n${NEXT}`), statuses: [400], reason: /Invalid header field char/, next: false },
  { name: 'chunked, then another coding', bytes: post('Transfer-Encoding: chunked, identity\r\n', `5\r\nhello\r\n0\r\n\r\n${NEXT}`), statuses: [400], reason: /Invalid `Transfer-Encoding` header value/, next: false },
  { name: 'chunked in one field, another coding in a second', bytes: post(`${CHUNKED}Transfer-Encoding: x\r\n`, `5\r\nhello\r\n0\r\n\r\n${NEXT}`), statuses: [400], reason: /Invalid `Transfer-Encoding` header value/, next: false },
  // node's parser refuses these only once the request is handed over; the server refuses them first (see the test above).
  { name: 'xchunked', bytes: post('Transfer-Encoding: xchunked\r\n', `5\r\nhello\r\n0\r\n\r\n${NEXT}`), statuses: [400], reason: /Transfer-Encoding does not end with chunked/, next: false },
  { name: 'Transfer-Encoding folded (obs-fold)', bytes: post('Transfer-Encoding:\r\n chunked\r\n', `5\r\nhello\r\n0\r\n\r\n${NEXT}`), statuses: [400], reason: /Invalid header value char/, next: false },
  { name: 'a bare LF ending the request line', bytes: `POST /read HTTP/1.1\nHost: localhost\nContent-Length: 5\n\nhello${NEXT}`, statuses: [400], reason: /Expected CRLF after version/, next: false },
  { name: 'a bare CR in a header value', bytes: post('Content-Length: 5\r\nX-A: a\rb\r\n', `hello${NEXT}`), statuses: [400], reason: /Missing expected LF after header value/, next: false },
  { name: 'a bare LF after a chunk size', bytes: post(CHUNKED, `5\nhello\r\n0\r\n\r\n${NEXT}`), statuses: [400], reason: /Missing expected CR after chunk size/, next: false },
  { name: 'a space between chunk size and extension', bytes: post(CHUNKED, `5 ;a=b\r\nhello\r\n0\r\n\r\n${NEXT}`), statuses: [400], reason: /Invalid character in chunk size/, next: false },
  { name: 'a negative chunk size', bytes: post(CHUNKED, `-5\r\nhello\r\n0\r\n\r\n${NEXT}`), statuses: [400], reason: /Invalid character in chunk size/, next: false },
  { name: 'a chunk size past 2^64', bytes: post(CHUNKED, `10000000000000005\r\nhello\r\n0\r\n\r\n${NEXT}`), statuses: [400], reason: /Chunk size overflow/, next: false },
  { name: 'chunk data longer than its size', bytes: post(CHUNKED, `3\r\nhello\r\n0\r\n\r\n${NEXT}`), statuses: [400], reason: /Expected LF after chunk data/, next: false },
  { name: 'a Content-Length among the trailers', bytes: post(CHUNKED, `5\r\nhello\r\n0\r\nContent-Length: 50\r\n\r\n${NEXT}`), statuses: [400], reason: /Content-Length can't be present with Transfer-Encoding/, next: false },
  { name: 'a last chunk whose empty line is missing', bytes: post(CHUNKED, `5\r\nhello\r\n0\r\n${NEXT}`), statuses: [400], reason: /Invalid header token/, next: false },
  // Unambiguous: the body read as framed, NEXT answered as the request after it.
  { name: 'Transfer-Encoding in another case, with white space', bytes: post('transfer-encoding:   CHUNKED  \r\n', `5\r\nhello\r\n0\r\n\r\n${NEXT}`), statuses: [200, 200], next: true },
  // An empty list element, which a recipient ignores (RFC 9110 5.6.1): chunked alone.
  { name: 'an empty list element before chunked', bytes: post('Transfer-Encoding: , chunked\r\n', `5\r\nhello\r\n0\r\n\r\n${NEXT}`), statuses: [200, 200], next: true },
  { name: 'chunk extensions, leading zeros and trailers', bytes: post(CHUNKED, `0005;a="b;c"\r\nhello\r\n000\r\nX-T: 1\r\n\r\n${NEXT}`), statuses: [200, 200], next: true },
  { name: 'a GET whose Content-Length body is a request', bytes: `GET /read HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${NEXT.length}\r\n\r\n${NEXT}${NEXT}`, statuses: [200, 200], next: true },
  { name: 'a HEAD whose chunked body is a request', bytes: `HEAD /smuggled HTTP/1.1\r\nHost: localhost\r\n${CHUNKED}\r\n${NEXT.length.toString(16)}\r\n${NEXT}\r\n0\r\n\r\n${NEXT}`, statuses: [200, 200], next: true },
  // node takes the last coding: chunked framing, and the kernel refuses the other coding when the body is read (a 400).
  { name: 'another coding, then chunked', bytes: post('Transfer-Encoding: gzip, chunked\r\n', `5\r\nhello\r\n0\r\n\r\n${NEXT}`), statuses: [400, 200], next: true },
  // More body than Content-Length says: the rest is the next request, refused as one.
  { name: 'a body longer than its Content-Length', bytes: post('Content-Length: 5\r\n', `helloXX${NEXT}`), statuses: [200, 400], reason: /Invalid method encountered/, next: false },
  // HTTP/1.0 has no chunked coding (RFC 9112 6.1): the body is read so, answered, and the connection closes.
  { name: 'HTTP/1.0 with Transfer-Encoding', bytes: `POST /read HTTP/1.0\r\nHost: localhost\r\n${CHUNKED}\r\n5\r\nhello\r\n0\r\n\r\n${NEXT}`, statuses: [200], next: false },
];

test('node\'s parser refuses ambiguous framing with a 400 and closes, and reads unambiguous framing as framed: nothing inside a body is answered', async () => {
  for (const scheme of SCHEMES) {
    for (const { name, bytes, statuses, reason, next } of FRAMING) {
      const methods = bytes.startsWith('HEAD') ? ['HEAD', 'GET'] : ['POST', 'GET'];
      const started = performance.now();
      const answer = await sendRaw(server, scheme, bytes, { waitMs: CLOSE_WAIT_MS });
      const closedWithin = performance.now() - started;
      const { responses, rest } = readResponses(answer, methods);
      const seen = `${scheme}, ${name}: ${JSON.stringify(answer.slice(0, 600))}`;
      assert.equal(responses.map((response) => response.status), statuses, seen);
      assert.is(rest, '', `${seen}: nothing after the last answer`);
      const last = responses.at(-1)!;
      if (reason !== undefined) assert.match(last.body, reason, seen);
      assert.is(last.headers.connection?.[0]?.toLowerCase(), 'close', `${seen}: the last answer says the connection closes`);
      assert.ok(closedWithin < CLOSE_WAIT_MS, `${seen}: the server closed the connection, not the client after ${CLOSE_WAIT_MS} ms`);
      assert.is(responses.filter((response) => response.body === 'SMUGGLED\n').length, next ? 1 : 0, seen);
      if (bytes.startsWith('POST /read') && statuses[0] === 200) assert.is(responses[0]!.body, 'read 5\n', `${seen}: the body read as framed`);
    }
  }
});

test.run();
