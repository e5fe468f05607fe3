// A server of the embedder's own with node's socket timeout (`server.timeout`) shorter than the
// kernel's wait for a body: the body it cuts is the server's timeout (a 408 saying so), not the client leaving.
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Readable } from 'node:stream';
import { KernelEvents, Response, type Request, type TerminateEvent } from '../../kernel/index.js';
import { createKernel, type KernelApp } from '../../lib/app/index.js';
import type { LogEntry, LogRecord } from '../../lib/log/index.js';
import { MemoryStorage } from '../../lib/profiler/storage/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, devCertificate, rawStatus, sendRaw, until, type TestServer } from './harness.js';

const SOCKET_TIMEOUT_MS = 400;
const HALF_A_BODY = 'POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"a":';

/** A stream body whose first chunk waits for the request's whole body. */
async function* echoOnceRead(request: Request): AsyncGenerator<string> {
  yield await request.text();
}

for (const scheme of SCHEMES) {
  const test = suite(`a request body cut by server.timeout over ${scheme}`);
  let app: KernelApp;
  let server: http.Server;
  let target: TestServer;
  const records: LogRecord[] = [];
  const terminated: number[] = [];
  const onLog = ({ record }: LogEntry): void => void records.push(record);

  test.before(async () => {
    const routes = new RouteCollection()
      .add('echo', new Route('/echo', { methods: ['POST'], defaults: { _controller: async (request: Request) => Response.json(await request.json()) } }))
      .add('stream', new Route('/stream', { methods: ['POST'], defaults: { _controller: (request: Request) => new Response(Readable.from(echoOnceRead(request))) } }))
      // Answers a body it cannot read with an error status of its own.
      .add('own', new Route('/own', { methods: ['POST'], defaults: { _controller: (request: Request) => request.json().then(() => new Response('read\n'), () => new Response('unreadable\n', 422, { 'content-type': 'text/plain' })) } }));
    app = createKernel({ routes, env: 'prod', debug: false, stderrLogLevel: false, profiler: { storage: new MemoryStorage() } });
    app.bus.on('log', onLog);
    app.dispatcher.addListener(KernelEvents.TERMINATE, (event: TerminateEvent) => void terminated.push(event.response.status));
    // As the README's embedding section shows it, with the socket timeout it advises.
    server = scheme === 'http' ? http.createServer(app.listener) : https.createServer(await devCertificate(), app.listener);
    server.timeout = SOCKET_TIMEOUT_MS;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}`;
    target = { urls: { http: url, https: url } } as TestServer;
  });

  test.after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    app.bus.off('log', onLog);
    await app.close();
  });

  test.before.each(() => {
    records.length = 0;
    terminated.length = 0;
  });

  /** The request's ERROR record, waited for up to 5 s (the reader fails once the socket has closed). */
  async function uncaught(): Promise<LogRecord | undefined> {
    const find = (): LogRecord | undefined => records.find((record) => record.message.startsWith('Uncaught error'));
    for (let i = 0; i < 250 && find() === undefined; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    return find();
  }

  test('a body that stalls past server.timeout is answered 408 and logged as the server\'s socket timeout, not as the client closing', async () => {
    // Half a body, then nothing: node's socket timeout cuts it after 0.4 s (the client gives up after 5 s).
    const answer = await sendRaw(target, scheme, HALF_A_BODY, { waitMs: 5_000 });
    assert.is(rawStatus(answer), 408, `the client is answered 408 Request Timeout: ${JSON.stringify(answer)}`);
    const record = await uncaught();
    assert.ok(record !== undefined, `the request is logged: ${JSON.stringify(records.map((r) => r.message))}`);
    assert.match(record!.message, /The request body did not arrive: nothing came within the server's socket timeout \(server\.timeout, 0\.4 seconds\)\./);
    assert.not.match(record!.message, /client closed/);
    const exception = record!.context.exception as { status?: number; code?: string };
    assert.is(exception.status, 408);
    assert.is(exception.code, 'HK_REQUEST_TIMEOUT');
  });

  test('a stream response waiting on a body that stalls past server.timeout is terminated and logged as the 408 sent, not as a 499', async () => {
    const answer = await sendRaw(target, scheme, HALF_A_BODY.replace('/echo', '/stream'), { waitMs: 5_000 });
    assert.is(rawStatus(answer), 408, `the client is answered 408 Request Timeout: ${JSON.stringify(answer)}`);
    await until(() => terminated.length > 0, 5_000, 'kernel.terminate');
    assert.equal(terminated, [408], 'kernel.terminate names the 408');
    const record = await uncaught();
    assert.is(record?.levelName, 'ERROR', `logged as a 4xx: ${JSON.stringify(records.map((r) => r.message))}`);
    assert.is(record!.context.class, 'RequestTimeoutHttpError');
  });

  test('a controller that answers the body it could not read with an error status of its own (a 422) ends as the 408 the client got, not as its answer, which never went out', async () => {
    const answer = await sendRaw(target, scheme, HALF_A_BODY.replace('/echo', '/own'), { waitMs: 5_000 });
    assert.is(rawStatus(answer), 408, JSON.stringify(answer));
    assert.not.match(answer, /unreadable/);
    await until(() => terminated.length > 0, 5_000, 'kernel.terminate');
    assert.equal(terminated, [408], 'kernel.terminate names the 408 sent');
    const record = await uncaught();
    assert.is(record?.levelName, 'ERROR', `logged as the 408: ${JSON.stringify(records.map((r) => r.message))}`);
    assert.is(record!.context.class, 'RequestTimeoutHttpError');
  });

  test('a client that leaves mid-body is still the client closing the connection', async () => {
    await sendRaw(target, scheme, HALF_A_BODY, { waitMs: 100 });
    const record = await uncaught();
    assert.ok(record !== undefined, 'the request is logged');
    assert.match(record!.message, /The client closed the connection before the whole body was sent\./);
  });

  test('a timeout listener of the server\'s own decides instead, as node leaves it to it', async () => {
    let told = 0;
    const own = (socket: Socket): void => {
      told++;
      socket.destroy();
    };
    server.on('timeout', own);
    try {
      const answer = await sendRaw(target, scheme, HALF_A_BODY, { waitMs: 5_000 });
      assert.is(answer, '', 'nothing is answered: the listener cut the connection');
      assert.is(told, 1);
    } finally {
      server.off('timeout', own);
    }
  });

  test('a whole body is served as ever under server.timeout', async () => {
    const answer = await sendRaw(target, scheme, `${HALF_A_BODY}${' '.repeat(43)}1}`.replace('HTTP/1.1\r\n', 'HTTP/1.1\r\nConnection: close\r\n'));
    assert.is(rawStatus(answer), 200, JSON.stringify(answer));
    assert.match(answer, /\{"a":1\}$/);
  });

  test.run();
}
