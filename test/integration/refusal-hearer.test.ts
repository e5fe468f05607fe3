// A request listener of one's own given to startServers hears, under the hearsRefusals symbol, the
// requests refused in their head that it never sees; a hearer that fails never ends the process; and
// no body is invited (100 Continue) for a request refused so.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hearsRefusals, type Refusal } from '../../lib/server/index.js';
import { SCHEMES, rawStatus, sendRaw, serveListener, until, type ListenerServer } from './harness.js';

/** The refusals the hearer was called with. */
const heard: Refusal[] = [];
/** What the hearer does once it has recorded a refusal. */
let then: () => unknown = () => undefined;

const listener = Object.assign((_req: IncomingMessage, res: ServerResponse): void => void res.end('served\n'), {
  [hearsRefusals]: (refusal: Refusal): unknown => {
    heard.push(refusal);
    return then();
  },
});

const test = suite('hearsRefusals');
let server: ListenerServer;
const crashes: unknown[] = [];
const onCrash = (error: unknown): void => void crashes.push(error);

test.before(async () => {
  // What would end the process is recorded instead.
  process.on('unhandledRejection', onCrash);
  process.on('uncaughtException', onCrash);
  server = await serveListener(listener);
});

test.after(async () => {
  await server.close();
  process.off('unhandledRejection', onCrash);
  process.off('uncaughtException', onCrash);
});

test.before.each(() => {
  heard.length = 0;
  crashes.length = 0;
  then = () => undefined;
});

const NO_HOST = 'GET / HTTP/1.1\r\n\r\n';

test('a listener of its own hears each request refused in its head: status, reason and client', async () => {
  for (const scheme of SCHEMES) {
    heard.length = 0;
    assert.is(rawStatus(await sendRaw(server, scheme, NO_HOST)), 400, scheme);
    assert.equal(heard, [{ status: 400, reason: 'An HTTP/1.1 request names the host it is for in a Host header.', client: '127.0.0.1' }], scheme);
  }
});

test('bytes behind a refused request, which its closing connection never answers, are no refusal heard', async () => {
  const cases = [
    // Behind it in the same write: not a request (the parser refuses it), but nothing is answered after a refusal.
    { name: 'no request', bytes: `${NO_HOST}X\r\n\r\n`, reason: 'An HTTP/1.1 request names the host it is for in a Host header.' },
    // Requests pipelined behind it, which the closing connection never answers either.
    { name: '20 pipelined', bytes: NO_HOST.repeat(20), reason: 'An HTTP/1.1 request names the host it is for in a Host header.' },
    // node reads an empty Transfer-Encoding as no body: the chunked body behind it is the next "request".
    { name: 'an empty Transfer-Encoding', bytes: 'POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: \r\n\r\n5\r\nhello\r\n0\r\n\r\n', reason: "The request's Transfer-Encoding does not end with chunked, so the length of its body cannot be determined (RFC 9112 6.3)." },
  ];
  for (const scheme of SCHEMES) {
    for (const { name, bytes, reason } of cases) {
      heard.length = 0;
      const answer = await sendRaw(server, scheme, bytes);
      assert.ok(answer.startsWith('HTTP/1.1 400 ') && answer.endsWith(`\r\n\r\nBad Request: ${reason}\n`) && answer.match(/^HTTP\/1\.1 /gm)!.length === 1, `${scheme}, ${name}: one answer: ${answer}`);
      assert.equal(heard.map((refusal) => refusal.reason), [reason], `${scheme}, ${name}`);
    }
  }
});

test('a CONNECT and an Expect other than 100-continue, answered by startServers, are heard too', async () => {
  const cases = [
    { bytes: 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', status: 400, reason: 'CONNECT asks for a tunnel, and this server is no proxy.' },
    { bytes: 'GET / HTTP/1.1\r\nHost: localhost\r\nExpect: foo\r\nConnection: close\r\n\r\n', status: 417, reason: 'the only expectation this server meets is Expect: 100-continue.' },
    { bytes: 'POST / HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue, foo\r\nContent-Length: 5\r\n\r\n', status: 417, reason: 'the only expectation this server meets is Expect: 100-continue.' },
  ];
  for (const scheme of SCHEMES) {
    for (const { bytes, status, reason } of cases) {
      heard.length = 0;
      const answer = await sendRaw(server, scheme, bytes);
      assert.ok(answer.startsWith(`HTTP/1.1 ${status} `) && answer.endsWith(`: ${reason}\n`), `${scheme}: ${answer}`);
      assert.equal(heard, [{ status, reason, client: '127.0.0.1' }], `${scheme}: ${bytes.split('\r\n')[0]}`);
    }
  }
});

test('a plain-http request on the https port, answered in plain http, is heard too', async () => {
  // sendRaw over http, to the https listener's port.
  const answer = await sendRaw({ urls: { ...server.urls, http: server.urls.https.replace('https:', 'http:') } }, 'http', 'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
  const reason = 'this port speaks https; the request came as plain http.';
  assert.ok(answer.startsWith('HTTP/1.1 400 ') && answer.endsWith(`: ${reason}\n`), answer);
  assert.equal(heard, [{ status: 400, reason, client: '127.0.0.1' }]);
});

test('a request refused in its head gets no 100 Continue before its 400, though the listener leaves 100-continue to startServers', async () => {
  const cases = [
    { name: 'no Host', bytes: 'POST / HTTP/1.1\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n' },
    { name: 'a Transfer-Encoding not ending with chunked', bytes: 'POST / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: xchunked\r\nExpect: 100-continue\r\n\r\n' },
  ];
  for (const scheme of SCHEMES) {
    for (const { name, bytes } of cases) {
      const answer = await sendRaw(server, scheme, bytes);
      assert.match(answer, /^HTTP\/1\.1 400 Bad Request\r\n/, `${scheme}, ${name}: ${JSON.stringify(answer.slice(0, 100))}`);
    }
    // A request handed over still has its body invited.
    const answer = await sendRaw(server, scheme, 'POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/, `${scheme}: ${JSON.stringify(answer.slice(0, 100))}`);
  }
});

test('a hearer that throws, or returns a promise that rejects (an async one), neither keeps the answer back nor ends the process', async () => {
  const hearers: Array<[string, () => unknown]> = [
    ['throws', () => { throw new Error('hearer threw'); }],
    ['rejects', () => Promise.reject(new Error('hearer rejected'))],
  ];
  for (const [name, hearer] of hearers) {
    for (const scheme of SCHEMES) {
      then = hearer;
      crashes.length = 0;
      const answer = await sendRaw(server, scheme, NO_HOST);
      assert.ok(answer.endsWith('\r\n\r\nBad Request: An HTTP/1.1 request names the host it is for in a Host header.\n'), `${scheme}, a hearer that ${name}: ${answer}`);
      // An unhandled rejection is reported once the microtasks have run; a few turns of the loop are plenty.
      await new Promise((resolve) => setTimeout(resolve, 20));
      assert.equal(crashes.map(String), [], `${scheme}, a hearer that ${name}: the process would have ended`);
    }
  }
  then = () => undefined;
  await until(() => heard.length === 2 * hearers.length, 1_000, 'every refusal heard');
});

test.run();
