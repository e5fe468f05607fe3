// A request body that stalls until the server's request timeout is answered 408 on the wire; the
// request is then terminated, profiled and logged with that 408, whoever waited on the body (a
// controller reading it, one that never does, a stream response), not as a client that left: one
// that truly closed its connection first stays a 499.
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Response, type Request, type TerminateEvent } from '../../kernel/index.js';
import type { LogEntry, LogRecord } from '../../lib/log/index.js';
import { SCHEMES, fetchFrom, rawStatus, routesOf, sendRaw, startTestServer, until, type TestServer } from './harness.js';

const REQUEST_TIMEOUT_MS = 1_000;

/** A head declaring 100 bytes of body, and the first 10 of them. */
const stalled = (path: string): string => `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n0123456789`;

/** A stream body whose first chunk waits for the request's whole body. */
async function* echoOnceRead(request: Request): AsyncGenerator<string> {
  yield await request.text();
}

/** What each route's controller does while the body stalls. */
const CONTROLLERS = {
  '/read': async (request: Request) => new Response(await request.text()),
  // Never reads its body, and answers once request.signal says the connection is gone.
  '/unread': (request: Request) => new Promise<Response>((resolve) => request.signal.addEventListener('abort', () => resolve(new Response('late')))),
  // Never reads its body, and never answers: the response timeout gives up on it.
  '/hang': () => new Promise<Response>(() => {}),
  // Waits on request.signal, which rejects with an AbortError.
  '/signal': async (request: Request) => {
    await sleep(10_000, undefined, { signal: request.signal });
    return new Response('late');
  },
  '/stream': (request: Request) => new Response(Readable.from(echoOnceRead(request))),
};

for (const scheme of SCHEMES) {
  const test = suite(`a stalled upload over ${scheme}`);
  let server: TestServer;
  const terminated: TerminateEvent[] = [];
  const records: LogRecord[] = [];
  const onLog = ({ record }: LogEntry): void => void records.push(record);

  test.before(async () => {
    server = await startTestServer({
      kernel: { routes: routesOf(CONTROLLERS), env: 'prod', debug: true },
      // node checks the request timeout once a second: the 408 goes 1 to 2 s after the head. The response
      // timeout, which would answer a 503 to a controller not reading its body, stays well clear of that on a loaded machine.
      limits: { headersTimeout: 500, requestTimeout: REQUEST_TIMEOUT_MS, responseTimeout: 5_000 },
    });
    server.app.dispatcher.addListener(KernelEvents.TERMINATE, (event: TerminateEvent) => void terminated.push(event));
    server.app.bus.on('log', onLog);
  });
  test.after(async () => {
    server.app.bus.off('log', onLog);
    await server.close();
  });
  test.before.each(() => {
    terminated.length = 0;
    records.length = 0;
  });

  /** What kernel.terminate, the profile (its JSON page) and the error's log record say of the request, once all have come (within 10 s: /hang's waits for the response timeout). */
  async function outcome(): Promise<{ terminated: number; profiled: number; record: LogRecord }> {
    await until(() => terminated.length > 0, 10_000, 'kernel.terminate');
    const response = terminated[0]!.response;
    const token = response.headers['x-debug-token'] as string;
    let profiled = 0;
    for (let i = 0; i < 100 && profiled === 0; i++) {
      const page = await fetchFrom(server, scheme, `/_profiler/${token}`, { headers: { accept: 'application/json' } });
      if (page.status === 200) profiled = (JSON.parse(page.body) as { status: number }).status;
      else await sleep(50);
    }
    const uncaught = (): LogRecord | undefined => records.find((one) => one.message.startsWith('Uncaught error'));
    await until(() => uncaught() !== undefined, 5_000, 'the error record');
    return { terminated: response.status, profiled, record: uncaught()! };
  }

  for (const path of Object.keys(CONTROLLERS)) {
    test(`${path}: a body that stalls past the request timeout is terminated, profiled and logged as the 408 sent`, async () => {
      // The server answers after 1 to 2 s and closes; the client gives up after 6 s at most.
      const answer = await sendRaw(server, scheme, stalled(path), { waitMs: 6_000 });
      assert.is(rawStatus(answer), 408, `the client is answered 408: ${JSON.stringify(answer)}`);
      const { terminated, profiled, record } = await outcome();
      assert.is(terminated, 408, 'kernel.terminate names the 408');
      assert.is(profiled, 408, 'the profile records the 408');
      assert.is(record.levelName, 'ERROR', 'logged as a 4xx');
      assert.is(record.context.class, 'RequestTimeoutHttpError');
      assert.match(String(record.context.message), /The request body did not arrive within the request timeout \(1 second\)\./);
    });
  }

  for (const path of ['/unread', '/hang', '/signal', '/stream']) {
    test(`${path}: a client that closes mid-body before the request timeout is still a 499`, async () => {
      const answer = await sendRaw(server, scheme, stalled(path), { waitMs: 100 });
      assert.is(answer, '', 'nothing was sent');
      const { terminated, profiled, record } = await outcome();
      assert.is(terminated, 499);
      assert.is(profiled, 499);
      assert.is(record.levelName, 'INFO');
      assert.is(record.context.class, 'ClientClosedError');
    });
  }

  test.run();
}
