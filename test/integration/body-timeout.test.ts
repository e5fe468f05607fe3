// A body that stalls until the server's request timeout is the server's doing (a 408 saying so),
// not the client's, which a body cut by the client going away stays.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response, type Request } from '../../kernel/index.js';
import type { LogEntry, LogRecord } from '../../lib/log/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, rawStatus, sendRaw, startTestServer, type TestServer } from './harness.js';

const REQUEST_TIMEOUT_MS = 1_000;
const HALF_A_BODY = 'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"a":';

/** The first `Uncaught error` record logged while `send` runs (waiting up to 5 s for it). */
async function uncaughtDuring(server: TestServer, send: () => Promise<string>): Promise<{ record: LogRecord | undefined; answer: string }> {
  const records: LogRecord[] = [];
  const listen = ({ record }: LogEntry): void => void records.push(record);
  server.app.bus.on('log', listen);
  try {
    const answer = await send();
    const uncaught = (): LogRecord | undefined => records.find((record) => record.message.startsWith('Uncaught error'));
    for (let i = 0; i < 250 && uncaught() === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    return { record: uncaught(), answer };
  } finally {
    server.app.bus.off('log', listen);
  }
}

for (const scheme of SCHEMES) {
  const test = suite(`a request body cut short over ${scheme}`);
  let server: TestServer;

  test.before(async () => {
    const routes = new RouteCollection().add('echo', new Route('/echo', { methods: ['POST'], defaults: { _controller: async (request: Request) => Response.json(await request.json()) } }));
    server = await startTestServer({ kernel: { routes, env: 'prod', debug: true }, limits: { headersTimeout: 500, requestTimeout: REQUEST_TIMEOUT_MS } });
  });
  test.after(async () => server.close());

  test('a body that stalls past the request timeout is a 408 saying the server waited that long, not that the client left', async () => {
    // Half a body, then nothing until the server gives up (after 1 s; the socket is dropped after 6 s at most).
    const { record, answer } = await uncaughtDuring(server, () => sendRaw(server, scheme, HALF_A_BODY, { waitMs: 6_000 }));
    assert.is(rawStatus(answer), 408, 'the client is answered 408 Request Timeout');
    assert.ok(record !== undefined, 'the request is logged');
    assert.match(record!.message, /The request body did not arrive within the request timeout \(1 second\)\./);
    assert.not.match(record!.message, /client closed/);
    const exception = record!.context.exception as { status?: number; code?: string };
    assert.is(exception.status, 408);
    assert.is(exception.code, 'HK_REQUEST_TIMEOUT');
  });

  test('a client that leaves mid-body is still the client closing the connection', async () => {
    const { record } = await uncaughtDuring(server, () => sendRaw(server, scheme, HALF_A_BODY, { waitMs: 100 }));
    assert.ok(record !== undefined, 'the request is logged');
    assert.match(record!.message, /The client closed the connection before the whole body was sent\./);
  });

  test.run();
}
