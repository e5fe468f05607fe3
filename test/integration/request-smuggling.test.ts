// Message framing a proxy and this server could read differently (request smuggling, RFC 9112 6.3
// and 11.2), over raw sockets (undici would refuse to send most of it), over http and https.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response, type Request } from '../../kernel/index.js';
import type { LogEntry, LogRecord } from '../../lib/log/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, rawStatus, savedProfile, sendRaw, startTestServer, type TestServer } from './harness.js';

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
  add('/smuggled', () => new Response('SMUGGLED\n', 200, { 'content-type': 'text/plain' }));
  return collection;
}

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
      assert.is((record.context.exception as { status?: number }).status, 400, `${scheme} ${route}`);
      const profile = await profileOf(path);
      assert.is(profile.status, 400, `${scheme} ${route}: the profile has the status the client got`);
      assert.match(profile.collectors.exception.exceptions[0].message, /Invalid character in chunk size/, `${scheme} ${route}`);
    }
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

test.run();
