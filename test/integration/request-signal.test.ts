// request.signal over real sockets: aborted with a ClientClosedError when the client leaves before
// its response is finished (the controller's wait rejects, the error is the client's: a 499 at INFO,
// no CRITICAL), with the ResponseTimeoutError when the response timeout passes, and never for a
// request answered as usual, nor for another request on its keep-alive connection.
import net from 'node:net';
import { Readable } from 'node:stream';
import tls from 'node:tls';
import { setTimeout as wait } from 'node:timers/promises';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Agent, request as undiciRequest } from 'undici';
import { ClientClosedError, KernelEvents, Response, ResponseTimeoutError, type Controller, type Request, type TerminateEvent } from '../../kernel/index.js';
import { LogLevel, type LogEntry, type LogRecord } from '../../lib/log/index.js';
import type { RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, fetchFrom, readResponses, sendRaw, routesOf, startTestServer, until, type TestServer } from './harness.js';

/** The response timeout of the timed server, in milliseconds. */
const TIMEOUT_MS = 200;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What became of each controller's wait on request.signal, by the request's `id`. */
const waits = new Map<string, { started: boolean; outcome?: 'waited' | unknown }>();
/** The stream bodies of /late-stream-forever, by `id`. */
const lateStreams = new Map<string, Readable>();
/** The signal of each request answered at once, by `id`. */
const signals = new Map<string, AbortSignal>();

const controllers: Record<string, Controller> = {
  // Waits ten seconds unless its signal is aborted; the rejection goes on to the kernel, as a controller's would.
  '/wait': async (request: Request) => {
    const entry: { started: boolean; outcome?: unknown } = { started: true };
    waits.set(request.query.get('id') ?? '', entry);
    try {
      await wait(10_000, undefined, { signal: request.signal });
      entry.outcome = 'waited';
    } catch (error) {
      entry.outcome = error;
      throw error;
    }
    return new Response('waited', 200, { 'content-type': 'text/plain' });
  },
  '/quick': async (request: Request) => {
    signals.set(request.query.get('id') ?? '', request.signal);
    await wait(50, undefined, { signal: request.signal });
    return new Response(`aborted: ${request.signal.aborted}`, 200, { 'content-type': 'text/plain' });
  },
  // Answers after 300 ms, taking no signal: a client gone meanwhile is only seen once it answers.
  '/late': async (request: Request) => {
    waits.set(request.query.get('id') ?? '', { started: true });
    await wait(300);
    return new Response('late', 200, { 'content-type': 'text/plain' });
  },
  // A stream body that never ends by itself: its chunks wait on the signal.
  '/stream-forever': (request: Request) => {
    const entry: { started: boolean; outcome?: unknown } = { started: false };
    waits.set(request.query.get('id') ?? '', entry);
    async function* chunks(): AsyncGenerator<string> {
      try {
        for (;;) {
          yield 'x';
          entry.started = true;
          await wait(50, undefined, { signal: request.signal });
        }
      } catch (error) {
        entry.outcome = error;
        throw error;
      }
    }
    return new Response(Readable.from(chunks()), 200, { 'content-type': 'text/plain' });
  },
  // After 300 ms, a stream body that never ends by itself and takes no signal.
  '/late-stream-forever': async (request: Request) => {
    waits.set(request.query.get('id') ?? '', { started: true });
    await wait(300);
    async function* chunks(): AsyncGenerator<string> {
      for (;;) {
        yield 'x'.repeat(1024);
        await wait(5);
      }
    }
    const body = Readable.from(chunks());
    lateStreams.set(request.query.get('id') ?? '', body);
    return new Response(body, 200, { 'content-type': 'text/plain' });
  },
  // A stream body whose chunks wait on the signal: it must end whole, the signal left alone.
  '/stream': (request: Request) => {
    signals.set(request.query.get('id') ?? '', request.signal);
    async function* chunks(): AsyncGenerator<string> {
      for (const chunk of ['a', 'b', 'c']) {
        await wait(20, undefined, { signal: request.signal });
        yield chunk;
      }
    }
    return new Response(Readable.from(chunks()), 200, { 'content-type': 'text/plain' });
  },
};

const routes = (): RouteCollection => routesOf(controllers);

for (const scheme of SCHEMES) {
  const test = suite(`request.signal, over ${scheme}`);
  let server: TestServer;
  let timed: TestServer;
  const records: LogRecord[] = [];
  const onLog = ({ record }: LogEntry): void => void records.push(record);
  const terminated: Array<{ id: string; status: number; aborted: boolean }> = [];
  const terminateRecorder = {
    getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }),
    onTerminate: (event: TerminateEvent): void =>
      void terminated.push({ id: event.request.query.get('id') ?? '', status: event.response.status, aborted: event.request.signal.aborted }),
  };
  const kernel = () => ({ debug: false, logLevel: 'debug' as const, routes: routes(), subscribers: [terminateRecorder] });

  test.before(async () => {
    server = await startTestServer({ kernel: kernel() });
    timed = await startTestServer({ kernel: kernel(), limits: { responseTimeout: TIMEOUT_MS } });
    server.app.bus.on('log', onLog);
    timed.app.bus.on('log', onLog);
  });
  test.after(async () => {
    server.app.bus.off('log', onLog);
    timed.app.bus.off('log', onLog);
    await server.close();
    await timed.close();
  });

  /** Requests `path?id=`, and leaves once its controller has started; resolves when the client has given up. */
  const leaveOnceStarted = async (path: string, id: string): Promise<void> => {
    const client = new AbortController();
    const pending = undiciRequest(`${server.urls[scheme]}${path}?id=${id}`, { dispatcher: server.agent, signal: client.signal }).then(
      () => 'answered',
      (error: unknown) => error,
    );
    await until(() => waits.get(id)?.started === true, 5_000, 'the controller to start');
    client.abort();
    assert.is((await pending as Error).name, 'AbortError', 'the client gave up');
  };

  test('a client that aborts its request aborts request.signal with a ClientClosedError: the wait rejects, kernel.terminate sees a 499, nothing is CRITICAL', async () => {
    records.length = 0;
    const id = `${scheme}-gone`;
    await leaveOnceStarted('/wait', id);
    await until(() => waits.get(id)?.outcome !== undefined, 5_000, 'the controller\'s wait to end');
    const outcome = waits.get(id)!.outcome as Error & { cause?: unknown };
    assert.is(outcome.name, 'AbortError', 'the wait was aborted, not waited out');
    assert.instance(outcome.cause, ClientClosedError);
    assert.is((outcome.cause as ClientClosedError).message, 'The client closed the connection before the response was sent.');
    await until(() => terminated.some((one) => one.id === id), 5_000, 'kernel.terminate');
    assert.equal(terminated.find((one) => one.id === id), { id, status: 499, aborted: true });
    assert.equal(records.filter((record) => record.level <= LogLevel.ERROR).map((record) => record.message), [], 'nothing at ERROR or above');
    const info = records.filter((record) => record.level === LogLevel.INFO && /ClientClosedError/.test(record.message));
    assert.is(info.length, 1, JSON.stringify(records.map((record) => record.message)));
    // The server goes on serving.
    assert.is((await fetchFrom(server, scheme, `/quick?id=${id}-after`)).body, 'aborted: false');
  });

  test('a client gone before a controller that takes no signal answers: the request ends as its leaving, terminated with a 499 at INFO, not the 200 it never got', async () => {
    records.length = 0;
    const id = `${scheme}-gone-late`;
    await leaveOnceStarted('/late', id);
    await until(() => terminated.some((one) => one.id === id), 5_000, 'kernel.terminate');
    assert.equal(terminated.find((one) => one.id === id), { id, status: 499, aborted: true });
    assert.equal(records.filter((record) => record.level <= LogLevel.ERROR).map((record) => record.message), [], 'nothing at ERROR or above');
    assert.is(records.filter((record) => record.level === LogLevel.INFO && /ClientClosedError/.test(record.message)).length, 1, JSON.stringify(records.map((record) => record.message)));
  });

  test('a client that leaves while a stream body is being sent aborts request.signal: the body\'s wait rejects, and its failure is no server error', async () => {
    records.length = 0;
    const id = `${scheme}-stream-gone`;
    const client = new AbortController();
    const response = await undiciRequest(`${server.urls[scheme]}/stream-forever?id=${id}`, { dispatcher: server.agent, signal: client.signal });
    assert.is(response.statusCode, 200);
    await until(() => waits.get(id)?.started === true, 5_000, 'the body to be sent');
    client.abort();
    await response.body.text().catch(() => {});
    await until(() => waits.get(id)?.outcome !== undefined, 5_000, 'the body\'s wait to end');
    const outcome = waits.get(id)!.outcome as Error & { cause?: unknown };
    assert.is(outcome.name, 'AbortError');
    assert.instance(outcome.cause, ClientClosedError);
    await until(() => terminated.some((one) => one.id === id), 5_000, 'kernel.terminate');
    assert.equal(records.filter((record) => record.level <= LogLevel.ERROR).map((record) => record.message), [], 'nothing at ERROR or above');
  });

  test('the response timeout aborts request.signal with the ResponseTimeoutError it answers: one CRITICAL, the wait\'s AbortError at INFO', async () => {
    records.length = 0;
    const id = `${scheme}-timeout`;
    const response = await fetchFrom(timed, scheme, `/wait?id=${id}`);
    assert.is(response.status, 503);
    await until(() => waits.get(id)?.outcome !== undefined, 5_000, 'the controller\'s wait to end');
    const outcome = waits.get(id)!.outcome as Error & { cause?: unknown };
    assert.is(outcome.name, 'AbortError');
    assert.instance(outcome.cause, ResponseTimeoutError);
    assert.is((outcome.cause as Error).message, 'The response was not ready within 0.2 seconds (route "wait", controller "/wait").');
    await until(() => records.some((record) => /AbortError/.test(record.message)), 5_000, 'the late AbortError to be logged');
    const critical = records.filter((record) => record.level === LogLevel.CRITICAL);
    assert.is(critical.length, 1, JSON.stringify(critical.map((record) => record.message)));
    assert.match(critical[0]!.message, /ResponseTimeoutError/);
    assert.is(records.find((record) => /AbortError/.test(record.message))!.level, LogLevel.INFO);
    assert.equal(terminated.filter((one) => one.id === id), [{ id, status: 503, aborted: true }]);
  });

  test('a request answered as usual: its signal is not aborted, before the response, at kernel.terminate, nor once its connection closes', async () => {
    const id = `${scheme}-quick`;
    // A client of its own, to close its connections.
    const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
    const response = await fetchFrom(server, scheme, `/quick?id=${id}`, { dispatcher });
    assert.is(response.body, 'aborted: false');
    await until(() => terminated.some((one) => one.id === id), 5_000, 'kernel.terminate');
    assert.equal(terminated.find((one) => one.id === id), { id, status: 200, aborted: false });
    // A stream body whose chunks wait on the signal ends whole.
    const streamed = await fetchFrom(server, scheme, `/stream?id=${id}-stream`, { dispatcher });
    assert.is(streamed.body, 'abc');
    await until(() => terminated.some((one) => one.id === `${id}-stream`), 5_000, 'kernel.terminate of the stream');
    assert.equal(terminated.find((one) => one.id === `${id}-stream`), { id: `${id}-stream`, status: 200, aborted: false });
    // Their keep-alive connections closed by the client: still not aborted.
    await dispatcher.close();
    await sleep(200);
    assert.is(signals.get(id)!.aborted, false);
    assert.is(signals.get(`${id}-stream`)!.aborted, false);
  });

  test('keep-alive: a request answered on a connection, then another on it, then the client closing it, aborts neither', async () => {
    const host = new URL(server.urls[scheme]).host;
    const get = (id: string): string => `GET /quick?id=${id} HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
    const first = `${scheme}-keep-1`;
    const second = `${scheme}-keep-2`;
    // The second is written once the first is answered (50 ms of controller, then a wide margin); the client closes after 1.5 s.
    const answer = await sendRaw(server, scheme, [get(first), get(second)], { gapMs: 500, waitMs: 1_500 });
    const { responses } = readResponses(answer, ['GET', 'GET']);
    assert.equal(responses.map((one) => [one.status, one.body]), [[200, 'aborted: false'], [200, 'aborted: false']]);
    await sleep(200);
    assert.is(signals.get(first)!.aborted, false);
    assert.is(signals.get(second)!.aborted, false);
  });

  test('a client that closes a connection with two requests pipelined on it aborts both: the one being answered, and the one queued behind it', async () => {
    const port = Number(new URL(server.urls[scheme]).port);
    const first = `${scheme}-pipelined-1`;
    const second = `${scheme}-pipelined-2`;
    const get = (id: string): string => `GET /wait?id=${id} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
    const socket = scheme === 'https' ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write(get(first) + get(second));
    await until(() => waits.get(first)?.started === true && waits.get(second)?.started === true, 5_000, 'both controllers to start');
    socket.destroy();
    await until(() => waits.get(first)?.outcome !== undefined && waits.get(second)?.outcome !== undefined, 5_000, 'both waits to end');
    for (const id of [first, second]) {
      const outcome = waits.get(id)!.outcome as Error & { cause?: unknown };
      assert.is(outcome.name, 'AbortError', id);
      assert.instance(outcome.cause, ClientClosedError, id);
    }
  });

  test('a stream response queued behind another on a connection that closes (pipelined) ends as its client\'s leaving: terminated with a 499 at INFO, not the 200 it never sent', async () => {
    records.length = 0;
    const port = Number(new URL(server.urls[scheme]).port);
    const first = `${scheme}-queued-1`;
    const second = `${scheme}-queued-2`;
    const get = (id: string): string => `GET /stream-forever?id=${id} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`;
    const socket = scheme === 'https' ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    let received = '';
    socket.on('data', (chunk: Buffer) => void (received += chunk.toString('latin1')));
    socket.write(get(first) + get(second));
    // The first's body is being sent: the second's, behind it, waits for the connection. The first's
    // generator runs ahead of the socket, so its head is awaited where the client reads it.
    await until(() => waits.get(first)?.started === true && waits.has(second), 5_000, 'both controllers to answer');
    await until(() => /^HTTP\/1\.1 200 [^]*\r\n\r\n[^]*x/.test(received), 5_000, 'the first\'s head and a chunk of its body at the client');
    socket.destroy();
    await until(() => terminated.some((one) => one.id === first) && terminated.some((one) => one.id === second), 5_000, 'kernel.terminate of both');
    assert.is(received.match(/^HTTP\/1\.1 /gm)?.length, 1, 'one head went out, the first\'s');
    assert.is(terminated.find((one) => one.id === first)!.status, 200, 'the first\'s head went out');
    assert.equal(terminated.find((one) => one.id === second), { id: second, status: 499, aborted: true });
    assert.equal(records.filter((record) => record.level <= LogLevel.ERROR).map((record) => record.message), [], 'nothing at ERROR or above');
    assert.ok(records.some((record) => record.level === LogLevel.INFO && /ClientClosedError/.test(record.message)), JSON.stringify(records.map((record) => record.message)));
  });

  test('a stream response given once its connection has closed behind another (pipelined) is destroyed and ends as its client\'s leaving (a 499), as one whose client left before it was ready, not left waiting for a connection for ever', async () => {
    records.length = 0;
    const port = Number(new URL(server.urls[scheme]).port);
    const first = `${scheme}-closed-1`;
    const second = `${scheme}-closed-2`;
    const socket = scheme === 'https' ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write(`GET /stream-forever?id=${first} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\nGET /late-stream-forever?id=${second} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`);
    await until(() => waits.get(first)?.started === true && waits.has(second), 5_000, 'both controllers to run');
    // Closed while the second's controller still works: its stream comes after.
    socket.destroy();
    await until(() => terminated.some((one) => one.id === first) && terminated.some((one) => one.id === second), 5_000, 'kernel.terminate of both');
    assert.equal(terminated.find((one) => one.id === second), { id: second, status: 499, aborted: true });
    assert.ok(lateStreams.get(second)?.destroyed, 'its stream is destroyed');
    assert.equal(records.filter((record) => record.level <= LogLevel.ERROR).map((record) => record.message), [], 'nothing at ERROR or above');
  });

  test.run();
}
