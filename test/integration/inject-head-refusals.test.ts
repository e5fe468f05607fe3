// What the server refuses in a request's head (node's parser, node:http before any listener, startServers'
// own checks), inject() answers alike: each case is sent as raw bytes on a real socket and through inject(),
// and the two answers (status, Content-Type, Content-Length, body, whether the connection closes) and the
// refusals logged are compared, so inject() cannot drift from the server. Cases with several problems
// check which refusal wins; a few served ones check that inject() refuses no more than the server.
import net from 'node:net';
import { Readable } from 'node:stream';
import tls from 'node:tls';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response } from '../../kernel/index.js';
import type { LogEntry } from '../../lib/log/index.js';
import { request as undiciRequest } from 'undici';
import { SCHEMES, routesOf, startTestServer, type TestServer } from './harness.js';

/** A request: its method and header lines, in order (a `Host: localhost` is added, on the wire, to one without a Host, as inject() adds it). */
interface Case {
  name: string;
  method: string;
  lines: Array<[string, string]>;
  /** Handed to the kernel: no refusal logged. */
  served?: true;
  /** The target, on the wire and to inject() (default `/home`). */
  target?: string;
  /** The target on the wire, where a client sends another than the one given to it: percent-encoded, without its fragment. */
  sentTarget?: string;
  /** The method on the wire, where a client sends another than the one given to it: node:http's request() upper-cases every method. */
  sentAs?: string;
  /** The names given to inject() as written (each once), not lower-cased into lists. */
  asWritten?: true;
}

const MANY = Array.from({ length: 2001 }, (): [string, string] => ['X', '1']);
/** The server's default head limit: node's parser counts the target, the field names and the values (not their leading spaces) against it. */
const HEAD_LIMIT = 16 * 1024;
/** An X-A value that brings a GET /home with the Host added (`Host: localhost`) to the limit, where the parser stops. */
const AT_LIMIT = 'a'.repeat(HEAD_LIMIT - '/home'.length - 'Host'.length - 'localhost'.length - 'X-A'.length);

const CASES: Case[] = [
  { name: 'served, for comparison', method: 'GET', lines: [], served: true },
  { name: 'Expect: 100-continue alone is served', method: 'GET', lines: [['Expect', '100-continue']], served: true },
  { name: 'an empty Host', method: 'GET', lines: [['Host', '']] },
  { name: 'an empty Host, to a HEAD', method: 'HEAD', lines: [['Host', '']] },
  { name: 'a Host of spaces and a tab, which the parser drops', method: 'GET', lines: [['Host', ' \t ']] },
  { name: 'an empty first Host of two', method: 'GET', lines: [['Host', ''], ['Host', 'a.test']] },
  { name: 'two Hosts, served to the kernel, which refuses them', method: 'GET', lines: [['Host', 'a.test'], ['Host', 'b.test']], served: true },
  { name: 'CONNECT', method: 'CONNECT', lines: [] },
  { name: 'CONNECT with an odd Expect, an empty Host and an unchunked Transfer-Encoding: CONNECT wins', method: 'CONNECT', lines: [['Host', ''], ['Expect', 'foo'], ['Transfer-Encoding', 'xchunked']] },
  { name: 'CONNECT with a Transfer-Encoding node\'s parser refuses: the parser wins', method: 'CONNECT', lines: [['Transfer-Encoding', 'chunked, gzip']] },
  { name: 'an odd Expect', method: 'GET', lines: [['Expect', 'foo']] },
  { name: 'an empty Expect', method: 'GET', lines: [['Expect', '']] },
  { name: 'Expect: 100-continue and more', method: 'POST', lines: [['Expect', '100-continue, foo']] },
  { name: 'two Expect lines, 100-continue and another', method: 'POST', lines: [['Expect', '100-continue'], ['expect', 'foo']] },
  { name: 'an odd Expect, to a HEAD', method: 'HEAD', lines: [['Expect', 'foo']] },
  { name: 'an odd Expect and an empty Host: the Expect wins', method: 'GET', lines: [['Host', ''], ['Expect', 'foo']] },
  { name: 'an odd Expect and an unchunked Transfer-Encoding: the Expect wins', method: 'POST', lines: [['Transfer-Encoding', 'xchunked'], ['Expect', 'foo']] },
  { name: 'an odd Expect and both Content-Length and Transfer-Encoding: the parser wins', method: 'POST', lines: [['Expect', 'foo'], ['Content-Length', '0'], ['Transfer-Encoding', 'chunked']] },
  { name: 'two Content-Length lines of one value', method: 'POST', lines: [['Content-Length', '0'], ['content-length', '0']] },
  { name: 'two Content-Length lines, then a Transfer-Encoding: the duplicate wins', method: 'POST', lines: [['Content-Length', '0'], ['Content-Length', '0'], ['Transfer-Encoding', 'chunked']] },
  { name: 'a Transfer-Encoding, then two Content-Length lines: the first of them wins', method: 'POST', lines: [['Transfer-Encoding', 'chunked'], ['Content-Length', '0'], ['Content-Length', '0']] },
  { name: 'CONNECT with two Content-Length lines: the parser wins', method: 'CONNECT', lines: [['Content-Length', '0'], ['Content-Length', '0']] },
  { name: 'an empty Host and an unchunked Transfer-Encoding: the Host wins', method: 'POST', lines: [['Host', ''], ['Transfer-Encoding', 'xchunked']] },
  { name: 'more fields than node keeps', method: 'GET', lines: MANY },
  { name: 'more fields than node keeps and an empty Host: the count wins', method: 'GET', lines: [['Host', ''], ...MANY] },
  { name: 'more fields than node keeps and an odd Expect: the Expect wins', method: 'GET', lines: [['Expect', 'foo'], ...MANY] },
  { name: 'a lower-case GET, which a client sends as GET (fetch, node:http), is served', method: 'get', sentAs: 'GET', lines: [], served: true },
  { name: 'a GET in mixed case is served', method: 'gEt', sentAs: 'GET', lines: [], served: true },
  { name: 'a lower-case HEAD is served as a HEAD', method: 'head', sentAs: 'HEAD', lines: [], served: true },
  { name: 'a lower-case HEAD with an empty Host: the HEAD\'s refusal, without its body', method: 'head', sentAs: 'HEAD', lines: [['Host', '']] },
  { name: 'a lower-case PATCH is served as a PATCH, as node:http and Fastify\'s inject() send it', method: 'patch', sentAs: 'PATCH', lines: [], served: true },
  { name: 'a lower-case CONNECT is refused as a CONNECT', method: 'connect', sentAs: 'CONNECT', lines: [] },
  { name: 'a lower-case method node\'s parser does not know, sent upper-cased', method: 'foo', sentAs: 'FOO', lines: [] },
  { name: 'a method node\'s parser does not know', method: 'FOO', lines: [] },
  { name: 'an unknown method, an odd Expect and both Content-Length and Transfer-Encoding: the method wins', method: 'FOO', lines: [['Expect', 'foo'], ['Content-Length', '0'], ['Transfer-Encoding', 'chunked']] },
  { name: 'a method node\'s parser knows beyond the usual ones is served', method: 'PURGE', lines: [], served: true },
  { name: 'a lower-case POST, sent as POST, with both Content-Length and Transfer-Encoding: the parser refuses those', method: 'post', sentAs: 'POST', lines: [['Content-Length', '0'], ['Transfer-Encoding', 'chunked']] },
  ...['DESCRIBE', 'ANNOUNCE', 'SETUP', 'PLAY', 'PAUSE', 'TEARDOWN', 'GET_PARAMETER', 'SET_PARAMETER', 'REDIRECT', 'RECORD', 'FLUSH'].map((method): Case => ({ name: `RTSP's ${method}, which node's parser knows for RTSP alone`, method, lines: [] })),
  { name: 'an RTSP method with an odd Expect: the method wins', method: 'SETUP', lines: [['Expect', 'foo']] },
  { name: 'PRI, HTTP/2\'s preface method, with an HTTP/1.1 version', method: 'PRI', lines: [] },
  { name: 'PRI to *, with a bad name: the method wins', method: 'PRI', lines: [['X A', 'b']], target: '*' },
  { name: 'Content-Length and content-length, two names to inject()', method: 'POST', lines: [['Content-Length', '0'], ['content-length', '0']], asWritten: true },
  { name: 'Transfer-Encoding: chunked and transfer-encoding: gzip, two names to inject()', method: 'POST', lines: [['Transfer-Encoding', 'chunked'], ['transfer-encoding', 'gzip']], asWritten: true },
  { name: 'Host empty and host a.test, two names to inject()', method: 'GET', lines: [['Host', ''], ['host', 'a.test']], asWritten: true },
  { name: 'an absolute-form target with an empty Host', method: 'GET', lines: [['Host', '']], target: 'http://localhost/home' },
  { name: 'an absolute-form target with its Host is served', method: 'GET', lines: [['Host', 'localhost']], target: 'http://localhost/home', served: true },
  { name: 'Content-Length, Transfer-Encoding, content-length: the parser stops at the Transfer-Encoding', method: 'POST', lines: [['Content-Length', '0'], ['Transfer-Encoding', 'chunked'], ['content-length', '0']], asWritten: true },
  { name: 'an empty Transfer-Encoding, then a Content-Length: the parser takes no coding from it', method: 'POST', lines: [['Transfer-Encoding', ''], ['Content-Length', '0']] },
  { name: 'a Transfer-Encoding of a no-break space (obs-text, no space to the parser), then a Content-Length', method: 'POST', lines: [['Transfer-Encoding', '\xa0'], ['Content-Length', '0']] },
  { name: 'an empty Content-Length', method: 'POST', lines: [['Content-Length', '']] },
  { name: 'a Content-Length of spaces', method: 'POST', lines: [['Content-Length', '  ']] },
  { name: 'a Content-Length that is no number', method: 'POST', lines: [['Content-Length', 'abc']] },
  { name: 'a Content-Length of two numbers', method: 'POST', lines: [['Content-Length', '5 5']] },
  { name: 'a signed Content-Length', method: 'POST', lines: [['Content-Length', '+0']] },
  { name: 'a Content-Length past 64 bits', method: 'POST', lines: [['Content-Length', '99999999999999999999']] },
  { name: 'a Content-Length with spaces around it is served', method: 'POST', lines: [['Content-Length', ' 0 ']], served: true },
  { name: 'a control character in a value', method: 'GET', lines: [['X-A', 'a\x01b']] },
  { name: 'a DEL in a value', method: 'GET', lines: [['X-A', 'a\x7fb']] },
  { name: 'a tab and obs-text in a value are served', method: 'GET', lines: [['X-A', 'a\tb\x80']], served: true },
  { name: 'a space in a name', method: 'GET', lines: [['X A', 'b']] },
  { name: 'a control character in a name', method: 'GET', lines: [['X\x01A', 'b']] },
  { name: 'an empty name', method: 'GET', lines: [['', 'b']] },
  { name: 'a bad value, then an odd Expect: the parser wins', method: 'GET', lines: [['X-A', '\x01'], ['Expect', 'foo']] },
  { name: 'Content-Length, a bad value, content-length: the bad value wins', method: 'POST', lines: [['Content-Length', '0'], ['X-A', 'a\x01b'], ['content-length', '0']], asWritten: true },
  { name: 'chunked then gzip, then a bad value: the Transfer-Encoding wins', method: 'POST', lines: [['Transfer-Encoding', 'chunked'], ['transfer-encoding', 'gzip'], ['X-A', 'a\x01b']], asWritten: true },
  { name: 'a bad Content-Length, then a Transfer-Encoding: the Content-Length wins', method: 'POST', lines: [['Content-Length', 'abc'], ['Transfer-Encoding', 'chunked']] },
  { name: 'a Transfer-Encoding, then a bad Content-Length: their conflict wins', method: 'POST', lines: [['Transfer-Encoding', 'chunked'], ['Content-Length', 'abc']] },
  { name: 'a Content-Length, then a Transfer-Encoding with a bad value: their conflict, met at its name, wins', method: 'POST', lines: [['Content-Length', '0'], ['Transfer-Encoding', 'a\x01']] },
  { name: 'a Transfer-Encoding, then a Content-Length with a control character: their conflict wins', method: 'POST', lines: [['Transfer-Encoding', 'chunked'], ['Content-Length', '\x01']] },
  { name: 'a Content-Length with a tab after it', method: 'POST', lines: [['Content-Length', '0\t']] },
  { name: 'a Content-Length with spaces and tabs before it is served', method: 'POST', lines: [['Content-Length', ' \t 0 ']], served: true },
  { name: 'an absolute-form target with a user and password, served to the kernel, which refuses it', method: 'GET', lines: [], target: 'http://u:secret@localhost/home', served: true },
  { name: 'an absolute-form target with an empty user, served to the kernel, which refuses it', method: 'GET', lines: [], target: 'http://@localhost/home', served: true },
  { name: 'a head that reaches the limit (a long value)', method: 'GET', lines: [['X-A', AT_LIMIT]] },
  { name: 'a head a byte short of the limit is served', method: 'GET', lines: [['X-A', AT_LIMIT.slice(1)]], served: true },
  { name: 'a head short of the limit but for the spaces after a value, which the parser counts', method: 'GET', lines: [['X-A', `${AT_LIMIT.slice(2)}  `]] },
  { name: 'a head short of the limit with spaces before a value, which the parser does not count, is served', method: 'GET', lines: [['X-A', `  ${AT_LIMIT.slice(1)}`]], served: true },
  { name: 'a head over the limit in many lines', method: 'GET', lines: Array.from({ length: 20 }, (): [string, string] => ['X-A', 'a'.repeat(1000)]) },
  { name: 'a head over the limit, then a bad name: the limit wins', method: 'GET', lines: [['X-A', AT_LIMIT], ['X A', 'b']] },
  { name: 'a bad name, then a head over the limit: the name wins', method: 'GET', lines: [['X A', 'b'], ['X-A', AT_LIMIT]] },
  { name: 'a head over the limit, then a CONNECT\'s and an odd Expect\'s refusals: the limit wins', method: 'CONNECT', lines: [['Expect', 'foo'], ['X-A', AT_LIMIT]] },
  { name: 'more fields than node keeps, over the limit too: the parser\'s limit wins', method: 'GET', lines: Array.from({ length: 2001 }, (): [string, string] => ['X', 'a'.repeat(10)]) },
  { name: 'an odd Expect and a head over the limit: the parser\'s limit wins', method: 'GET', lines: [['Expect', 'foo'], ['X-A', AT_LIMIT]] },
  { name: 'a Content-Length line that brings the head to the limit', method: 'POST', lines: [['X-A', AT_LIMIT.slice('Content-Length'.length + 1)], ['Content-Length', '0']] },
  { name: 'a target that alone reaches the limit', method: 'GET', lines: [], target: `/home?${'a'.repeat(HEAD_LIMIT - '/home?'.length)}` },
  { name: 'a long target, then a value that brings the head to the limit', method: 'GET', lines: [['X-A', 'a'.repeat(3)]], target: `/home?${'a'.repeat(HEAD_LIMIT - '/home?'.length - 'Host'.length - 'localhost'.length - 'X-A'.length - 3)}` },
  { name: 'a target of non-ASCII characters that reaches the limit as a client sends it, percent-encoded', method: 'GET', lines: [], target: `/home?${'é'.repeat(2730)}`, sentTarget: `/home?${'%C3%A9'.repeat(2730)}` },
  { name: 'a target a byte short of the limit but for its fragment, which no client sends, is served', method: 'GET', lines: [], target: `/home?${'a'.repeat(HEAD_LIMIT - '/home?'.length - 'Host'.length - 'localhost'.length - 1)}#fragment`, sentTarget: `/home?${'a'.repeat(HEAD_LIMIT - '/home?'.length - 'Host'.length - 'localhost'.length - 1)}`, served: true },
  { name: 'a relative target that reaches the limit with the leading slash a client sends', method: 'GET', lines: [], target: `home?${'a'.repeat(HEAD_LIMIT - '/home?'.length - 'Host'.length - 'localhost'.length)}`, sentTarget: `/home?${'a'.repeat(HEAD_LIMIT - '/home?'.length - 'Host'.length - 'localhost'.length)}` },
];

/** An answer's status, the headers compared, and its body. */
interface Answer {
  status: number;
  type: string | undefined;
  length: string | undefined;
  closes: boolean;
  body: string;
}

/** The first answer to `bytes` on a connection of their own, read to the end of its body (none to a HEAD), within 5 s. */
function sent(server: TestServer, scheme: 'http' | 'https', bytes: string, head: boolean): Promise<Answer> {
  const port = Number(new URL(server.urls[scheme]).port);
  const socket = scheme === 'https' ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : net.connect(port, '127.0.0.1');
  return new Promise((resolve, reject) => {
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no whole answer in 5 s: ${JSON.stringify(received.slice(0, 300))}`));
    }, 5_000);
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      if (end === -1) return;
      const headLines = received.slice(0, end).split('\r\n');
      const field = (name: string): string | undefined => headLines.find((line) => line.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim();
      const length = field('content-length');
      const body = received.slice(end + 4);
      if (!head && body.length < Number(length ?? 0)) return;
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: Number(headLines[0]!.split(' ')[1]), type: field('content-type'), length, closes: field('connection')?.toLowerCase() === 'close', body: head ? '' : body });
    });
    socket.write(bytes);
  });
}

for (const scheme of SCHEMES) {
  const test = suite(`inject() refuses in the head what the server refuses, as it does, over ${scheme}`);
  let server: TestServer;
  const refusals: string[] = [];

  test.before(async () => {
    server = await startTestServer({ kernel: { debug: false, routes: routesOf({ '/home': () => new Response('home') }) } });
    server.app.bus.on('log', ({ record }: LogEntry) => {
      if (record.message.startsWith('A request was refused before it reached the kernel')) refusals.push(`${record.levelName} ${record.message}`);
    });
  });

  test.after(async () => {
    await server.close();
  });

  test('each case: the same answer, and the same refusal logged', async () => {
    for (const { name, method, lines, served, target = '/home', asWritten, sentAs = method, sentTarget = target } of CASES) {
      const wireLines = lines.some(([field]) => field.toLowerCase() === 'host') ? lines : [['Host', 'localhost'], ...lines];
      refusals.length = 0;
      const fromServer = await sent(server, scheme, `${sentAs} ${sentTarget} HTTP/1.1\r\n${wireLines.map(([field, value]) => `${field}: ${value}\r\n`).join('')}\r\n`, sentAs === 'HEAD');
      const serverRefusals = [...refusals];
      refusals.length = 0;
      // The lines as inject()'s headers: several of one name (in any case) a list, in their order.
      const headers: Record<string, string[]> = {};
      for (const [field, value] of lines) (headers[asWritten === true ? field : field.toLowerCase()] ??= []).push(value);
      const injected = await server.app.inject(target, { method, headers });
      // An error page's CSP nonce is drawn for each answer.
      const unnonced = (text: string): string => text.replace(/nonce="[^"]*"/g, 'nonce=""');
      const body = unnonced(injected.text());
      assert.equal(
        { status: injected.status, type: injected.headers['content-type'], length: injected.headers['content-length'], body },
        { status: fromServer.status, type: fromServer.type, length: fromServer.length, body: unnonced(fromServer.body) },
        name,
      );
      // A refusal inject() says closes the connection closes it on the server (node may close after a 417 for reasons of its own).
      if (injected.headers.connection === 'close') assert.ok(fromServer.closes, `${name}: the server closes the connection`);
      assert.equal(refusals, serverRefusals, `${name}: the refusal logged`);
      assert.is(refusals.length, served === true ? 0 : 1, `${name}: one refusal logged, none for a request served`);
    }
  });

  test('the Transfer-Encoding: chunked line undici sends for a stream body counts toward the limit: a head that reaches it with that line is refused, a byte short served, by inject() as by the server', async () => {
    // undici's head: the Host given, its own Connection: keep-alive (which inject() is given to count it too), the lines given, then the framing line.
    const counted = '/home'.length + 'host'.length + 'localhost'.length + 'connection'.length + 'keep-alive'.length + 'x-a'.length + 'transfer-encoding'.length + 'chunked'.length;
    for (const [value, status] of [['a'.repeat(HEAD_LIMIT - counted), 431], ['a'.repeat(HEAD_LIMIT - counted - 1), 200]] as const) {
      const label = `a head of ${counted + value.length} bytes`;
      const response = await undiciRequest(`${server.urls[scheme]}/home`, { method: 'POST', headers: { host: 'localhost', 'x-a': value }, body: Readable.from(['a']), dispatcher: server.agent });
      const fromServer = { status: response.statusCode, type: response.headers['content-type'], body: await response.body.text() };
      assert.is(fromServer.status, status, label);
      const injected = await server.app.inject('/home', { method: 'POST', headers: { connection: 'keep-alive', 'x-a': value }, body: Readable.from(['a']) });
      assert.equal({ status: injected.status, type: injected.headers['content-type'], body: injected.text() }, fromServer, label);
    }
  });

  test('the Transfer-Encoding: chunked line undici sends for a stream body counts among the fields: one more than node keeps with it is refused, as many as it keeps served, by inject() as by the server', async () => {
    // undici's lines: the Host given, its own Connection: keep-alive (which inject() is given to count it too), the X lines, the framing line.
    for (const [count, status] of [[2000 - 2, 431], [2000 - 3, 200]] as const) {
      const label = `${count} X lines`;
      const xs = Array.from({ length: count }, () => '1');
      const response = await undiciRequest(`${server.urls[scheme]}/home`, { method: 'POST', headers: { host: 'localhost', x: xs }, body: Readable.from(['a']), dispatcher: server.agent });
      const fromServer = { status: response.statusCode, type: response.headers['content-type'], body: await response.body.text() };
      assert.is(fromServer.status, status, label);
      const injected = await server.app.inject('/home', { method: 'POST', headers: { connection: 'keep-alive', x: xs }, body: Readable.from(['a']) });
      assert.equal({ status: injected.status, type: injected.headers['content-type'], body: injected.text() }, fromServer, label);
    }
  });

  test('a stream body of a refused request is let go, not left waiting for a reader; an aborted signal rejects, nothing logged', async () => {
    const refusedInits = [{ method: 'CONNECT' }, { method: 'POST', headers: { expect: 'foo' } }, { method: 'POST', headers: { host: '' } }];
    for (const init of refusedInits) {
      const label = JSON.stringify(init);
      refusals.length = 0;
      // A body that never ends, as an upload in progress: read, it would be read for ever.
      const stream = new Readable({ read() {} });
      const answer = await server.app.inject('/home', { ...init, body: stream });
      assert.ok(answer.status >= 400, label);
      assert.ok(stream.destroyed, `${label}: the stream body is destroyed`);
      // An async generator: ended, its next() done.
      const generator = (async function* (): AsyncGenerator<string> {
        yield 'never read';
      })();
      await server.app.inject('/home', { ...init, body: generator });
      assert.equal(await generator.next(), { done: true, value: undefined }, `${label}: the generator is ended`);
      assert.is(refusals.length, 2, `${label}: both refusals logged`);
      refusals.length = 0;
      const aborted = new Readable({ read() {} });
      const controller = new AbortController();
      controller.abort(new Error('the caller gave up'));
      const outcome = await server.app.inject('/home', { ...init, body: aborted, signal: controller.signal }).then((response) => `resolved ${response.status}`, (error: unknown) => error);
      assert.is(outcome, controller.signal.reason, `${label}: rejected with the signal's reason`);
      assert.ok(aborted.destroyed, `${label}: the stream body is destroyed`);
      assert.equal(refusals, [], `${label}: an answer never given is not logged`);
    }
  });

  test.run();
}
