// app.inject() runs a request as the app's server would, without a socket: the app's trusted hosts,
// proxies and body limit, the server's answer to an error that escapes the kernel, a stream body
// read whole, HEAD without a body, and kernel.terminate (the profile) before it resolves. Where the
// server's answer is the point, it is compared with a real server's on 127.0.0.1.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Stream } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { request as undiciRequest } from 'undici';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, NotFoundHttpError, Request as KernelRequest, RequestType, Response, ResponseTimeoutError, type Controller, type EventSubscriber, type ExceptionEvent, type Request, type TerminateEvent } from '../../../kernel/index.js';
import { createKernel, type KernelApp, type KernelOptions } from '../../../lib/app/index.js';
import type { Logger } from '../../../lib/log/index.js';
import { MemoryStorage } from '../../../lib/profiler/storage/index.js';
import { Route, RouteCollection } from '../../../lib/routing/index.js';
import { createInjector, startServers } from '../../../lib/server/index.js';
import type { LogEntry } from '../../../lib/log/index.js';

function routesOf(controllers: Record<string, Controller>): RouteCollection {
  const routes = new RouteCollection();
  for (const [path, controller] of Object.entries(controllers)) routes.add(path.slice(1) || 'home', new Route(path, { defaults: { _controller: controller } }));
  return routes;
}

function appOf(options: KernelOptions = {}): KernelApp {
  return createKernel({ stderrLogLevel: false, ...options });
}

/** The status, content type and body a real server on 127.0.0.1 answers for `path` sent with `headers`. */
async function served(app: KernelApp, path: string, init: { method?: 'GET' | 'HEAD'; headers?: Record<string, string> } = {}): Promise<{ status: number; type: unknown; body: string }> {
  const server = http.createServer(app.listener).listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    const response = await undiciRequest(`http://127.0.0.1:${port}${path}`, { method: init.method ?? 'GET', headers: init.headers });
    return { status: response.statusCode, type: response.headers['content-type'], body: await response.body.text() };
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

/** Counts kernel.terminate, with what the body of each response was by then. */
function terminateWatcher(): { ended: Array<number>; getSubscribedEvents(): Record<string, readonly [string, number]>; onTerminate(event: TerminateEvent): void } {
  return {
    ended: [],
    getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: ['onTerminate', 0] as const }),
    onTerminate(event: TerminateEvent): void {
      this.ended.push(event.response.status);
    },
  };
}

/** A kernel.exception listener with a bug: the error escapes handle(). */
const buggyFormatter = {
  getSubscribedEvents: () => ({ [KernelEvents.EXCEPTION]: ['onException', 10] as const }),
  onException(event: ExceptionEvent): void {
    const details = (event.error as { details?: { reason: string } }).details;
    event.setResponse(new Response(`failed: ${details!.reason}`, 500));
  },
};

test('inject refuses a host the app does not trust with the 400 and the message of its server', async () => {
  const app = appOf({ trustedHosts: ['example.com'], routes: routesOf({ '/': () => new Response('home') }) });
  const injected = await app.inject('http://evil.test/', { headers: { accept: 'application/json' } });
  const fromServer = await served(app, '/', { headers: { host: 'evil.test', accept: 'application/json' } });
  assert.equal((injected.json() as { status: number; detail: string }), { type: 'about:blank', title: 'Bad Request', status: 400, detail: 'Untrusted Host "evil.test".', instance: '/' });
  assert.equal([injected.status, injected.headers['content-type'], injected.text()], [fromServer.status, fromServer.type, fromServer.body]);
  assert.is((await app.inject('http://example.com/')).text(), 'home');
  await app.close();
});

/** What startServers (the app's server, as bin/serve runs it) answers `bytes` sent on a connection of their own, read until it closes. */
async function servedRaw(app: KernelApp, bytes: string): Promise<{ status: number; type: string | undefined; body: string }> {
  const running = await startServers(app.listener, { host: '127.0.0.1', port: 0, httpsPort: null, limits: { shutdownTimeout: 1_000 } });
  try {
    const socket = net.connect(running.ports.http, '127.0.0.1');
    socket.end(bytes);
    let answer = '';
    for await (const chunk of socket) answer += (chunk as Buffer).toString('latin1');
    const [head, ...body] = answer.split('\r\n\r\n');
    return { status: Number(head!.split(' ')[1]), type: /\r\ncontent-type: ([^\r]*)/i.exec(head!)?.[1], body: body.join('\r\n\r\n') };
  } finally {
    await running.close();
  }
}

test('a Transfer-Encoding the server refuses, inject() refuses with its answer: one not ending with chunked a 400 before any listener runs, logged at ERROR; another coding before chunked a 400 when the body is read', async () => {
  const watcher = terminateWatcher();
  let ran = 0;
  const app = appOf({ subscribers: [watcher], routes: routesOf({ '/read': async (request: Request) => new Response(`read ${(++ran, await request.bytes()).length}`) }) });
  const records: Array<{ level: string; message: string }> = [];
  app.bus.on('log', ({ record }: LogEntry) => void records.push({ level: record.levelName, message: record.message }));
  const notChunked = await app.inject('/read', { method: 'POST', headers: { 'transfer-encoding': 'xchunked' }, body: 'hello' });
  const fromServer = await servedRaw(app, 'POST /read HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: xchunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n');
  assert.equal([notChunked.status, notChunked.headers['content-type'], notChunked.text()], [fromServer.status, fromServer.type, fromServer.body]);
  assert.is(notChunked.status, 400);
  assert.is(ran, 0, 'no controller ran');
  assert.equal(watcher.ended, [], 'the kernel never saw it');
  const refusedLines = records.filter((record) => record.message.startsWith('A request was refused before it reached the kernel: 400 Bad Request: The request\'s Transfer-Encoding does not end with chunked'));
  assert.equal(refusedLines.map((record) => record.level), ['ERROR', 'ERROR'], JSON.stringify(records));
  records.length = 0;
  const headers = { 'transfer-encoding': 'gzip, chunked', accept: 'application/json' };
  const coded = await app.inject('/read', { method: 'POST', headers, body: 'hello' });
  const codedFromServer = await servedRaw(app, 'POST /read HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n');
  assert.equal([coded.status, coded.headers['content-type'], (coded.json() as { detail: string }).detail], [codedFromServer.status, codedFromServer.type, JSON.parse(codedFromServer.body).detail]);
  assert.is(coded.status, 400);
  assert.equal(records.filter((record) => record.message.includes('Transfer-Encoding "gzip, chunked"')).map((record) => record.level), ['ERROR', 'ERROR']);
  // chunked alone is read as the body it frames.
  assert.is((await app.inject('/read', { method: 'POST', headers: { 'transfer-encoding': 'Chunked' }, body: 'hello' })).text(), 'read 5');
  await app.close();
});

test('a Transfer-Encoding node\'s parser refuses in its head (chunked before another coding, or an empty element), inject() refuses with the server\'s answer, the controller never run, where it served a controller that reads no body', async () => {
  const watcher = terminateWatcher();
  let ran = 0;
  const app = appOf({ subscribers: [watcher], routes: routesOf({ '/noread': () => new Response(`ran ${++ran}`) }) });
  const running = await startServers(app.listener, { host: '127.0.0.1', port: 0, httpsPort: null, limits: { shutdownTimeout: 1_000 } });
  try {
    for (const value of ['chunked, chunked', 'chunked,', 'gzip, CHUNKED , x', ['chunked', 'gzip']]) {
      const fields = (typeof value === 'string' ? [value] : value).map((one) => `Transfer-Encoding: ${one}\r\n`).join('');
      const socket = net.connect(running.ports.http, '127.0.0.1');
      socket.end(`POST /noread HTTP/1.1\r\nHost: localhost\r\n${fields}\r\n5\r\nhello\r\n0\r\n\r\n`);
      let answer = '';
      for await (const chunk of socket) answer += (chunk as Buffer).toString('latin1');
      const injected = await app.inject('/noread', { method: 'POST', headers: { 'transfer-encoding': value }, body: 'hello' });
      assert.equal(`${injected.status} ${injected.text()}`, `${answer.split(' ')[1]} ${answer.split('\r\n\r\n')[1]}`, JSON.stringify(value));
      assert.is(injected.status, 400, JSON.stringify(value));
    }
    assert.is(ran, 0, 'no controller ran');
    assert.equal(watcher.ended, [], 'the kernel never saw them');
  } finally {
    await running.close();
    await app.close();
  }
});

test('a request with both Content-Length and Transfer-Encoding, inject() refuses with the 400 node\'s parser answers, naming the field that comes second; one with Transfer-Encoding alone reaches the controller without the Content-Length the server never gives it', async () => {
  let ran = 0;
  const app = appOf({ routes: routesOf({ '/h': async (request: Request) => new Response(`read ${(++ran, await request.bytes()).length}, Content-Length ${request.headers['content-length']}`) }) });
  const running = await startServers(app.listener, { host: '127.0.0.1', port: 0, httpsPort: null, limits: { shutdownTimeout: 1_000 } });
  try {
    const sent = async (fields: string): Promise<string> => {
      const socket = net.connect(running.ports.http, '127.0.0.1');
      socket.end(`POST /h HTTP/1.1\r\nHost: localhost\r\n${fields}Connection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n`);
      let answer = '';
      for await (const chunk of socket) answer += (chunk as Buffer).toString('latin1');
      return `${answer.split(' ')[1]} ${answer.split('\r\n\r\n')[1]}`;
    };
    for (const headers of [{ 'content-length': '5', 'transfer-encoding': 'chunked' }, { 'Transfer-Encoding': 'gzip, chunked', 'Content-Length': '5' }, { 'transfer-encoding': 'chunked', 'content-length': '0' }]) {
      const fields = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
      const injected = await app.inject('/h', { method: 'POST', headers, body: 'hello' });
      assert.equal(`${injected.status} ${injected.text()}`, await sent(fields), JSON.stringify(headers));
      assert.is(injected.status, 400, JSON.stringify(headers));
    }
    assert.is(ran, 0, 'no controller ran');
    const chunked = await app.inject('/h', { method: 'POST', headers: { 'transfer-encoding': 'chunked' }, body: 'hello' });
    assert.equal(`${chunked.status} ${chunked.text()}`, await sent('Transfer-Encoding: chunked\r\n'));
    assert.is(chunked.text(), 'read 5, Content-Length undefined');
  } finally {
    await running.close();
    await app.close();
  }
});

test("inject honours a trusted proxy's X-Forwarded-For and ignores an untrusted peer's", async () => {
  const app = appOf({ trustedProxies: ['10.0.0.0/8'], routes: routesOf({ '/ip': (request: Request) => new Response(String(request.clientIp)) }) });
  const headers = { 'x-forwarded-for': '203.0.113.7' };
  assert.is((await app.inject('/ip', { remoteAddress: '10.1.2.3', headers })).text(), '203.0.113.7');
  assert.is((await app.inject('/ip', { remoteAddress: '192.0.2.9', headers })).text(), '192.0.2.9');
  // Request.create()'s default client.
  assert.is((await app.inject('/ip', { headers })).text(), '127.0.0.1');
  await app.close();
});

test("a body over the app's bodyLimit is a 413, one within it is read", async () => {
  const app = appOf({ bodyLimit: 16, routes: routesOf({ '/upload': async (request: Request) => new Response(`${(await request.bytes()).length} bytes`) }) });
  assert.is((await app.inject('/upload', { method: 'POST', body: 'x'.repeat(17) })).status, 413);
  const streamed = await app.inject('/upload', { method: 'POST', body: Readable.from(['x'.repeat(10), 'x'.repeat(10)]) });
  assert.is(streamed.status, 413);
  const within = await app.inject('/upload', { method: 'POST', json: { a: 1 } });
  assert.is(within.status, 200);
  assert.is(within.text(), '7 bytes');
  await app.close();
});

test('a text or bytes body of another length than the Content-Length given is refused as a client refuses to send it (undici, node:http), the controller never run; the server reads that many bytes', async () => {
  const reads: string[] = [];
  const app = appOf({ routes: routesOf({ '/upload': async (request: Request) => new Response(String(reads.push(await request.text()))) }) });
  for (const [length, body] of [['1', 'xy'], ['3', 'xy'], [' 3 ', Buffer.from('xy')], ['0', 'xy']] as const) {
    const outcome = await app.inject('/upload', { method: 'POST', headers: { 'content-length': length }, body }).then((response) => `resolved ${response.status}`, (error: unknown) => error);
    assert.instance(outcome, RangeError, length);
    assert.is((outcome as Error).message, `inject()'s body is 2 bytes, where its Content-Length says ${length.trim()}: no client sends it (undici and node:http refuse it), and the server would read ${length.trim()} bytes.`);
  }
  assert.equal(reads, []);
  // As sent: read whole.
  assert.is((await app.inject('/upload', { method: 'POST', headers: { 'content-length': '2' }, body: 'xy' })).status, 200);
  assert.equal(reads, ['xy']);
  await app.close();
});

test('a header given as a finite number is a line in the head checks as Request.create() writes it, not a TypeError from them; a json body is held to its Content-Length too', async () => {
  const reads: string[] = [];
  const app = appOf({ routes: routesOf({ '/upload': async (request: Request) => new Response(`${String(reads.push(await request.text()))} ${String(request.headers['x-n'])}`) }) });
  const numbers = await app.inject('/upload', { method: 'POST', headers: { 'content-length': 2, 'x-n': [1, 2] } as unknown as Record<string, string>, body: 'xy' });
  assert.is(numbers.status, 200);
  assert.is(numbers.text(), '1 1, 2');
  assert.equal(reads, ['xy']);
  const mismatch = await app.inject('/upload', { method: 'POST', headers: { 'content-length': 3 } as unknown as Record<string, string>, body: 'xy' }).then(() => 'resolved', (error: unknown) => error);
  assert.instance(mismatch, RangeError);
  for (const length of ['1', 1]) {
    const json = await app.inject('/upload', { method: 'POST', headers: { 'content-length': length } as unknown as Record<string, string>, json: { a: 1 } }).then((response) => `resolved ${response.status}`, (error: unknown) => error);
    assert.instance(json, RangeError, String(length));
    assert.is((json as Error).message, "inject()'s body is 7 bytes, where its Content-Length says 1: no client sends it (undici and node:http refuse it), and the server would read 1 bytes.");
  }
  assert.equal(reads, ['xy']);
  assert.is((await app.inject('/upload', { method: 'POST', headers: { 'content-length': 7 } as unknown as Record<string, string>, json: { a: 1 } })).status, 200);
  assert.equal(reads, ['xy', '{"a":1}']);
  await app.close();
});

test("a stream body given no Content-Length nor Transfer-Encoding reaches the kernel with the Transfer-Encoding: chunked a client sends for it, as from the server (the head limit counts that line too)", async () => {
  const seen = async (request: Request): Promise<Response> => new Response(JSON.stringify({ framing: request.headers['transfer-encoding'] ?? null, length: request.headers['content-length'] ?? null, body: await request.text() }), 200, { 'content-type': 'application/json' });
  const app = appOf({ routes: routesOf({ '/seen': seen }) });
  const server = http.createServer(app.listener).listen(0, '127.0.0.1');
  await once(server, 'listening');
  try {
    const { port } = server.address() as AddressInfo;
    for (const headers of [{}, { 'content-length': '2' }] as Array<Record<string, string>>) {
      const fromServer = await undiciRequest(`http://127.0.0.1:${port}/seen`, { method: 'POST', headers, body: Readable.from(['a', 'b']) });
      const served = await fromServer.body.json();
      const injected = (await app.inject('/seen', { method: 'POST', headers, body: Readable.from(['a', 'b']) })).json();
      assert.equal(injected, served, JSON.stringify(headers));
    }
  } finally {
    server.closeAllConnections();
    server.close();
  }
  await app.close();
});

test("a json body is written as JSON once: the text held to its Content-Length is the one sent, whatever a toJSON() that changes gives on a second call", async () => {
  const reads: string[] = [];
  const app = appOf({ routes: routesOf({ '/upload': async (request: Request) => new Response(String(reads.push(await request.text()))) }) });
  let calls = 0;
  // `{"n":1}` (7 bytes) on its first call, `{"n":"one thousand"}` (20) on any other.
  const changing = { toJSON: () => (calls++ === 0 ? { n: 1 } : { n: 'one thousand' }) };
  const sent = await app.inject('/upload', { method: 'POST', headers: { 'content-length': '7' }, json: changing }).then((response) => `resolved ${response.status}`, (error: unknown) => error);
  assert.is(sent, 'resolved 200');
  assert.equal(reads, ['{"n":1}']);
  calls = 0;
  const refused = await app.inject('/upload', { method: 'POST', headers: { 'content-length': '20' }, json: changing }).then((response) => `resolved ${response.status}`, (error: unknown) => error);
  assert.instance(refused, RangeError);
  assert.is((refused as Error).message, "inject()'s body is 7 bytes, where its Content-Length says 20: no client sends it (undici and node:http refuse it), and the server would read 20 bytes.");
  assert.is(calls, 1);
  assert.equal(reads, ['{"n":1}']);
  await app.close();
});

test('a stream body is read whole, and kernel.terminate runs once, after its end', async () => {
  const watcher = terminateWatcher();
  const events: string[] = [];
  async function* chunks(): AsyncGenerator<string> {
    for (const part of ['{"a":', '[1,2,', '3]}']) {
      await sleep(5);
      yield part;
    }
    events.push('body ended');
  }
  const app = appOf({
    subscribers: [watcher, { getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }), onTerminate: () => void events.push('terminated') } as EventSubscriber],
    routes: routesOf({ '/data': () => new Response(Readable.from(chunks()), 200, { 'content-type': 'application/json' }) }),
  });
  const response = await app.inject('/data');
  assert.is(response.status, 200);
  assert.instance(response.body, Uint8Array);
  assert.is(response.text(), '{"a":[1,2,3]}');
  assert.equal(response.json(), { a: [1, 2, 3] });
  assert.equal(events, ['body ended', 'terminated']);
  assert.equal(watcher.ended, [200]);
  // Text and bytes bodies read the same.
  const bytes = appOf({ routes: routesOf({ '/b': () => new Response(new TextEncoder().encode('{"b":true}')), '/t': () => Response.json({ t: 'é' }) }) });
  assert.equal((await bytes.inject('/b')).json(), { b: true });
  assert.equal((await bytes.inject('/t')).json(), { t: 'é' });
  await Promise.all([app.close(), bytes.close()]);
});

test('HEAD gets no body, as from the server, an escaped error page included', async () => {
  let destroyed = false;
  const stream = (): Response =>
    new Response(
      new Readable({
        read() {
          this.push('never read');
        },
        destroy(error, callback) {
          destroyed = true;
          callback(error);
        },
      }),
    );
  const app = appOf({ subscribers: [buggyFormatter], routes: routesOf({ '/text': () => new Response('hello'), '/stream': stream, '/fail': () => { throw new Error('down'); } }) });
  for (const path of ['/text', '/stream', '/fail']) {
    const response = await app.inject(path, { method: 'HEAD' });
    if (path === '/stream') assert.ok(destroyed, 'the stream nobody reads is destroyed');
    const fromServer = await served(app, path, { method: 'HEAD' });
    assert.is(response.status, fromServer.status, path);
    assert.is(response.body, null, path);
    assert.is(response.text(), '', path);
  }
  await app.close();
});

test('kernel.terminate waits for the clean-up of a stream body never sent (HEAD, 204), as from the server', async () => {
  const events: string[] = [];
  const slowClose = (name: string): Readable =>
    new Readable({
      read() {
        this.push('unsent');
        this.push(null);
      },
      destroy(error, callback) {
        setTimeout(() => {
          events.push(`${name} closed`);
          callback(error);
        }, 20);
      },
    });
  const app = appOf({
    subscribers: [{ getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }), onTerminate: (event: TerminateEvent) => void events.push(`${event.request.path} terminated`) } as EventSubscriber],
    routes: routesOf({ '/head': () => new Response(slowClose('/head')), '/none': () => new Response(slowClose('/none'), 204) }),
  });
  for (const [path, method] of [['/head', 'HEAD'], ['/none', 'GET']] as const) {
    await app.inject(path, { method });
    const injected = events.splice(0);
    await served(app, path, { method });
    // The server terminates after its answer went out.
    for (let i = 0; i < 200 && events.length < 2; i++) await sleep(10);
    assert.equal(injected, [`${path} closed`, `${path} terminated`], path);
    assert.equal(events.splice(0), injected, path);
  }
  await app.close();
});

test('the profile is recorded under X-Debug-Token when inject resolves, and saved by close()', async () => {
  const storage = new MemoryStorage();
  const app = appOf({ debug: true, profiler: { storage }, routes: routesOf({ '/hello': () => new Response('hi') }) });
  const response = await app.inject('/hello');
  const token = response.headers['x-debug-token'];
  assert.type(token, 'string');
  // kernel.terminate has run: the profile is complete, from memory until its save.
  const profile = await app.profiler!.loadProfile(token as string);
  assert.is(profile?.status, 200);
  await app.close();
  assert.is((await storage.read(token as string))?.url, 'http://localhost/hello');
});

test('close() waits for the injects in flight: their profiles are saved', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'http-kernel-inject-'));
  try {
    const app = appOf({ debug: true, profiler: { dir, thread: false }, routes: routesOf({ '/slow': async () => new Response(await sleep(30, 'late')) }) });
    const pending = app.inject('/slow');
    await sleep(5);
    await app.close();
    const response = await pending;
    assert.is(response.text(), 'late');
    assert.is((await app.profiler!.storage.read(response.headers['x-debug-token'] as string))?.url, 'http://localhost/slow');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an error that escapes the kernel gets the answer of the server, and is terminated with it', async () => {
  const watcher = terminateWatcher();
  const app = appOf({ subscribers: [buggyFormatter, watcher], routes: routesOf({ '/order': () => { throw new Error('the order service is down'); } }) });
  const injected = await app.inject('/order', { headers: { accept: 'application/json' } });
  const fromServer = await served(app, '/order', { headers: { accept: 'application/json' } });
  assert.is(injected.status, 500);
  assert.equal([injected.status, injected.headers['content-type'], injected.text()], [fromServer.status, fromServer.type, fromServer.body]);
  assert.equal(watcher.ended, [500, 500]);
  // An error page that never settles: the bare 500, as the server sends it after its grace.
  const hung = appOf({ subscribers: [buggyFormatter], errorController: () => new Promise<Response>(() => {}), routes: routesOf({ '/order': () => { throw new Error('down'); } }) });
  const bare = await hung.inject('/order');
  assert.equal([bare.status, bare.text()], [500, 'Internal Server Error\n']);
  await Promise.all([app.close(), hung.close()]);
});

test('a response the server would refuse to send gets its error page, as from the server, and is terminated with it', async () => {
  const watcher = terminateWatcher();
  const app = appOf({
    subscribers: [watcher],
    routes: routesOf({
      '/latin': () => new Response('hi', 200, { 'x-name': 'Łukasz' }),
      '/interim': () => new Response('', 103),
      '/gzip': () => new Response('hi', 200, { 'transfer-encoding': 'gzip' }),
      '/length': () => {
        const response = new Response(Readable.from(['hi']));
        response.headers['Content-Length'] = 'two';
        return response;
      },
    }),
  });
  for (const path of ['/latin', '/interim', '/gzip', '/length']) {
    const injected = await app.inject(path, { headers: { accept: 'application/json' } });
    const fromServer = await served(app, path, { headers: { accept: 'application/json' } });
    assert.equal([injected.status, injected.headers['content-type'], injected.text()], [fromServer.status, fromServer.type, fromServer.body], path);
    assert.is(injected.status, 500, path);
  }
  assert.equal(watcher.ended, Array(8).fill(500));
  await app.close();
});

test('a stream body with pipe() and no once() (no EventEmitter) gets the error page of the server\'s refusal, logged, destroyed once and terminated as that 500, as from the server; a HEAD\'s is let go', async () => {
  const watcher = terminateWatcher();
  let destroyed = 0;
  // Piped, it would give 'abc'; the server reads a stream body's end and errors with once() and on().
  const half = (): Response => new Response({ pipe: (dest: NodeJS.WritableStream) => dest.end('abc'), on() { return this; }, destroy: () => void destroyed++ } as never, 200);
  const severe: string[] = [];
  const app = appOf({ subscribers: [watcher], routes: routesOf({ '/half': half }) });
  app.bus.on('log', (entry) => void (entry.record.level <= 3 && severe.push(`${entry.record.levelName} ${entry.record.message}`)));
  const fromServer = await served(app, '/half', { headers: { accept: 'application/json' } });
  assert.is(fromServer.status, 500);
  const records = severe.splice(0).map((record) => record.replace(/ at .*$/, ''));
  assert.is(records.length, 1, JSON.stringify(records));
  assert.match(records[0]!, /^CRITICAL Uncaught error: ResponseNotSendableError: /);
  const injected = await app.inject('/half', { headers: { accept: 'application/json' } }).catch((error: Error) => `rejected: ${error.message}`);
  assert.ok(typeof injected !== 'string', String(injected));
  assert.equal([injected.status, injected.headers['content-type'], injected.text()], [fromServer.status, fromServer.type, fromServer.body]);
  assert.equal(severe.map((record) => record.replace(/ at .*$/, '')), records);
  assert.is(destroyed, 2);
  assert.is((await app.inject('/half', { method: 'HEAD' })).status, 200);
  assert.equal(watcher.ended, [500, 500, 200]);
  await app.close();
});

test('the error page of a stream body failed before its first chunk that the server would refuse to send gets the bare 500, once rendered and its refusal logged once, as from the server', async () => {
  let pages = 0;
  const severe: string[] = [];
  const app = appOf({
    routes: routesOf({ '/export': () => new Response(new Readable({ read() { this.destroy(new Error('the export cannot be read')); } })) }),
    errorController: () => {
      pages++;
      return new Response('the page', 500, { 'x-note': 'a\r\nb' });
    },
  });
  app.bus.on('log', (entry) => void (entry.record.level <= 3 && severe.push(`${entry.record.levelName} ${entry.record.message}`)));
  const fromServer = await served(app, '/export');
  assert.equal([fromServer.status, fromServer.body, pages], [500, 'Internal Server Error\n', 1]);
  const records = severe.splice(0).map((record) => record.replace(/ at .*$/, ''));
  pages = 0;
  const injected = await app.inject('/export');
  assert.equal([injected.status, injected.text(), pages], [fromServer.status, fromServer.body, 1]);
  assert.equal(severe.map((record) => record.replace(/ at .*$/, '')), records);
  assert.equal(records, ['CRITICAL Uncaught error: Error: "the export cannot be read"', 'CRITICAL Unhandled error: TypeError: Invalid character in header content ["x-note"]']);
  await app.close();
});

test('the error page of a 404 whose own stream fails before its first chunk gets the bare 500, and its request terminates as that 500, from the server as from inject()', async () => {
  const watcher = terminateWatcher();
  const app = appOf({
    subscribers: [watcher],
    routes: routesOf({ '/missing': () => { throw new NotFoundHttpError('No book 7.'); } }),
    errorController: () => new Response(new Readable({ read() { this.destroy(new Error('the page template cannot be read')); } }), 404, { 'content-type': 'text/html' }),
  });
  const fromServer = await served(app, '/missing');
  assert.equal([fromServer.status, fromServer.body], [500, 'Internal Server Error\n']);
  for (let i = 0; i < 100 && watcher.ended.length === 0; i++) await sleep(10);
  const injected = await app.inject('/missing');
  assert.equal([injected.status, injected.text()], [fromServer.status, fromServer.body]);
  assert.equal(watcher.ended, [500, 500]);
  await app.close();
});

test('an error page that comes after the grace is dropped as the server drops it: its stream destroyed, its failure logged', async () => {
  const logged: string[] = [];
  const logger = { critical: (message: string) => void logged.push(message), error: (message: string) => void logged.push(message) } as unknown as Logger;
  let lateBody: Readable | undefined;
  const app = appOf({ subscribers: [buggyFormatter], routes: routesOf({ '/order': () => { throw new Error('down'); } }) });
  const latePage = createInjector(app.kernel, {
    logger,
    unhandled: async () => {
      await sleep(800);
      lateBody = new Readable({ read() {} });
      return new Response(lateBody);
    },
  });
  assert.is((await latePage('/order')).status, 500);
  for (let i = 0; i < 300 && lateBody === undefined; i++) await sleep(10);
  await sleep(10);
  assert.ok(lateBody?.destroyed, 'the late page\'s stream is destroyed');
  const lateFailure = createInjector(app.kernel, {
    logger,
    unhandled: async () => {
      await sleep(800);
      throw new Error('the page template is missing');
    },
  });
  logged.length = 0;
  const lateLine = 'The error page, given up on after {ms} ms, failed later: {message} (the page was for {for})';
  assert.is((await lateFailure('/order')).status, 500);
  for (let i = 0; i < 300 && !logged.includes(lateLine); i++) await sleep(10);
  assert.ok(logged.includes(lateLine), logged.join('\n'));
  await app.close();
});

test('a stream body that fails before its first chunk gets the error page; one that fails later rejects, terminated', async () => {
  const watcher = terminateWatcher();
  async function* later(): AsyncGenerator<string> {
    yield 'part';
    await sleep(1);
    throw new Error('the feed broke');
  }
  const app = appOf({
    subscribers: [watcher],
    routes: routesOf({
      '/missing': () => new Response(Readable.from((async function* () { throw new Error('no such file'); })())),
      '/broken': () => new Response(Readable.from(later())),
    }),
  });
  const page = await app.inject('/missing', { headers: { accept: 'application/json' } });
  assert.is(page.status, 500);
  assert.equal((page.json() as { status: number }).status, 500);
  let failure: unknown;
  await app.inject('/broken').catch((error: unknown) => (failure = error));
  assert.is((failure as Error).message, 'the feed broke');
  assert.equal(watcher.ended, [500, 200]);
  await app.close();
});

test("a stream body destroyed without an error that emits no 'close' (emitClose: false) is answered, not waited on for ever: the error page of its ResponseBodyDestroyedError before its first chunk (the server's at its response timeout), a rejection after it, each logged once", async () => {
  const watcher = terminateWatcher();
  const quiet = (request: Request): Response => {
    const body = new Readable({ read() {}, emitClose: false });
    if (request.query.has('begun')) body.push('id\n');
    setTimeout(() => body.destroy(), 20);
    return new Response(body, 200, { 'content-type': 'text/csv' });
  };
  const app = appOf({ debug: true, profiler: { storage: new MemoryStorage() }, subscribers: [watcher], routes: routesOf({ '/quiet': quiet }) });
  const severe: string[] = [];
  app.bus.on('log', (entry) => void (entry.record.level <= 3 && severe.push(`${entry.record.levelName} ${entry.record.message}`)));
  const page = await Promise.race([app.inject('/quiet', { headers: { accept: 'application/json' } }), sleep(3_000, 'still waiting')]);
  assert.ok(typeof page !== 'string', 'inject() settles');
  assert.is(page.status, 500);
  assert.is((page.json() as { detail: string }).detail, 'The response body stream was destroyed before its first chunk was sent, without an error (an empty body ends with push(null)).');
  assert.is(severe.length, 1, JSON.stringify(severe));
  assert.match(severe[0]!, /^CRITICAL Uncaught error: ResponseBodyDestroyedError: /);
  severe.length = 0;
  const cut = await Promise.race([app.inject('/quiet?begun').then(() => 'resolved', (error: Error) => `${error.name}: ${error.message}`), sleep(3_000, 'still waiting')]);
  const message = 'ResponseBodyDestroyedError: The response body stream was destroyed before its end, without an error: the answer was cut after its head.';
  assert.is(cut, message);
  assert.equal(severe, [`CRITICAL The response body stream failed: ${message}`]);
  assert.equal(watcher.ended, [500, 200]);
  await app.close();
});

test("a stream body that emits no 'close' (emitClose: false), destroyed with an error its clean-up gives only later, gets the page of that error, as from the server, not of a ResponseBodyDestroyedError", async () => {
  const slow = (): Response => {
    const body = new Readable({
      read() {},
      emitClose: false,
      // The error is the body's from destroy() on, emitted once the clean-up (an upstream socket closing) is done.
      destroy(error, callback) {
        setTimeout(() => callback(error), 150);
      },
    });
    setTimeout(() => body.destroy(new Error('the upstream export broke')), 10);
    return new Response(body, 200, { 'content-type': 'text/csv' });
  };
  const app = appOf({ debug: true, profiler: { storage: new MemoryStorage() }, routes: routesOf({ '/slow': slow }) });
  const severe: string[] = [];
  app.bus.on('log', (entry) => void (entry.record.level <= 3 && severe.push(`${entry.record.levelName} ${entry.record.message}`)));
  const fromServer = await served(app, '/slow', { headers: { accept: 'application/json' } });
  assert.is(fromServer.status, 500);
  assert.is((JSON.parse(fromServer.body) as { detail: string }).detail, 'the upstream export broke');
  const records = severe.splice(0).map((record) => record.replace(/ at .*$/, ''));
  assert.equal(records, ['CRITICAL Uncaught error: Error: "the upstream export broke"']);
  const injected = await Promise.race([app.inject('/slow', { headers: { accept: 'application/json' } }), sleep(3_000, 'still waiting')]);
  assert.ok(typeof injected !== 'string', 'inject() settles');
  assert.equal([injected.status, injected.text()], [fromServer.status, fromServer.body]);
  assert.equal(severe.map((record) => record.replace(/ at .*$/, '')), records);
  await app.close();
});

test("a stream body destroyed with an error whose clean-up never calls back (emitting no 'close' or one) settles with that error: its page before its first chunk, a rejection after it, each logged once", async () => {
  const hung = (request: Request): Response => {
    const body = new Readable({
      read() {},
      emitClose: request.query.has('quiet') ? false : true,
      // The clean-up never ends: node never emits the error, nor 'close'.
      destroy() {},
    });
    if (request.query.has('begun')) body.push('id\n');
    setTimeout(() => body.destroy(new Error('the upstream export broke')), 10);
    return new Response(body, 200, { 'content-type': 'text/csv' });
  };
  const watcher = terminateWatcher();
  const app = appOf({ debug: true, profiler: { storage: new MemoryStorage() }, subscribers: [watcher], routes: routesOf({ '/hung': hung }) });
  // kernel.terminate waits for a 'close' that never comes a tenth of a second, not 5 s.
  const inject = createInjector(app.kernel, { logger: app.logger, bodyCloseWaitMs: 100 });
  const severe: string[] = [];
  app.bus.on('log', (entry) => void (entry.record.level <= 3 && severe.push(`${entry.record.levelName} ${entry.record.message}`.replace(/ at .*$/, ''))));
  for (const quiet of ['', '&quiet']) {
    severe.length = 0;
    const page = await Promise.race([inject(`/hung?${quiet}`, { headers: { accept: 'application/json' } }), sleep(3_000, 'still waiting')]);
    assert.ok(typeof page !== 'string', `inject() settles ${quiet}`);
    assert.equal([page.status, (page.json() as { detail: string }).detail], [500, 'the upstream export broke']);
    assert.equal(severe, ['CRITICAL Uncaught error: Error: "the upstream export broke"']);
    severe.length = 0;
    const cut = await Promise.race([inject(`/hung?begun${quiet}`).then(() => 'resolved', (error: Error) => error.message), sleep(3_000, 'still waiting')]);
    assert.is(cut, 'the upstream export broke', quiet);
    assert.equal(severe, ['CRITICAL The response body stream failed: Error: the upstream export broke']);
  }
  assert.equal(watcher.ended, [500, 200, 500, 200]);
  await app.close();
});

/** What a process that injects `path` (of a kernel whose only route is `/stall`, answered by `controller`'s text) prints, and how it ends, at most 5 s on. */
function injectInChild(controller: string, path: string): Promise<{ code: number | string | null; out: string }> {
  const url = (path: string): string => new URL(path, import.meta.url).href;
  const script = `
    import { Readable } from 'node:stream';
    import { createKernel } from '${url('../../../lib/app/index.js')}';
    import { Response } from '${url('../../../kernel/index.js')}';
    import { Route, RouteCollection } from '${url('../../../lib/routing/index.js')}';
    const routes = new RouteCollection();
    routes.add('stall', new Route('/stall', { defaults: { _controller: ${controller} } }));
    const app = createKernel({ stderrLogLevel: false, profiler: false, routes });
    app.inject('${path}', { headers: { accept: 'application/json' } }).then((answer) => console.log('answered ' + answer.status), (error) => console.log('rejected ' + error.message));
  `;
  return new Promise((resolve) => {
    execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 5_000 }, (error, stdout) => {
      resolve({ code: error === null ? 0 : (error.killed ? 'killed' : (error.code ?? null)), out: stdout.trim() });
    });
  });
}

test("a stream body that stalls, never destroyed (one that emits no 'close', emitClose: false, too), does not keep inject()'s process alive by itself, and is answered once nothing else could give it a chunk: the page of a 503 before its first chunk, as the server's at its response timeout, a rejection after it", async () => {
  const stalled = "(request) => { const body = new Readable({ read() {}, emitClose: !request.query.has('quiet') }); if (request.query.has('begun')) body.push('id'); return new Response(body, 200); }";
  const message = 'The response body stream stalled: nothing left to run in the process could give its next chunk (the server answers such a body at its response timeout).';
  for (const quiet of ['', '&quiet']) {
    assert.equal(await injectInChild(stalled, `/stall?${quiet}`), { code: 0, out: 'answered 503' }, quiet);
    assert.equal(await injectInChild(stalled, `/stall?begun${quiet}`), { code: 0, out: `rejected ${message}` }, quiet);
  }
});

test("a stream body that stalls in a process kept alive by something else (a listening server, an interval) is answered at createInjector()'s responseTimeout, as by the server at its own: the page of its 503 before its first chunk, a rejection with it after, the request's signal aborted", async () => {
  const watcher = terminateWatcher();
  const signals: AbortSignal[] = [];
  const stall = (request: Request): Response => {
    signals.push(request.signal);
    const body = new Readable({ read() {} });
    if (request.query.has('begun')) body.push('id\n');
    return new Response(body, 200, { 'content-type': 'text/csv' });
  };
  const app = appOf({ subscribers: [watcher], routes: routesOf({ '/stall': stall }) });
  const inject = createInjector(app.kernel, { logger: app.logger, responseTimeout: 200 });
  const records: string[] = [];
  app.bus.on('log', (entry) => void (entry.record.level <= 3 && records.push(`${entry.record.levelName} ${entry.record.message}`.replace(/ at .*$/, ''))));
  const keepAlive = setInterval(() => {}, 1_000);
  const running = await startServers(app.listener, { host: '127.0.0.1', port: 0, httpsPort: null, limits: { responseTimeout: 200, shutdownTimeout: 1_000 } });
  try {
    const fromServer = await undiciRequest(`http://127.0.0.1:${running.ports.http}/stall`, { headers: { accept: 'application/json' } });
    const served = { status: fromServer.statusCode, type: fromServer.headers['content-type'], body: await fromServer.body.text() };
    assert.is(served.status, 503);
    const timedOut = 'ResponseTimeoutError: "The response was not ready within 0.2 seconds (route "stall", controller "stall")."';
    assert.equal(records.splice(0), [`CRITICAL Uncaught error: ${timedOut}`]);
    watcher.ended.length = 0;
    signals.length = 0;
    const started = performance.now();
    const page = await Promise.race([inject('/stall', { headers: { accept: 'application/json' } }), sleep(3_000, 'still waiting')]);
    assert.ok(typeof page !== 'string', 'inject() settles');
    assert.ok(performance.now() - started >= 190, 'not before the response timeout');
    assert.equal({ status: page.status, type: page.headers['content-type'], body: page.text() }, served);
    assert.equal(records.splice(0), [`CRITICAL Uncaught error: ${timedOut}`]);
    const cut = await Promise.race([inject('/stall?begun').then(() => 'resolved', (error: unknown) => error), sleep(3_000, 'still waiting')]);
    assert.instance(cut, ResponseTimeoutError);
    assert.is((cut as ResponseTimeoutError).status, 503);
    // Begun, then quiet: its error says so, not that the response was not ready.
    assert.equal(records.splice(0), ['CRITICAL The response body stream failed: ResponseTimeoutError: The response body stream gave no chunk for 0.2 seconds once begun (route "stall", controller "stall").']);
    assert.equal(signals.map((signal) => signal.aborted), [true, true]);
    assert.is(signals[1]!.reason, cut);
    assert.equal(watcher.ended, [503, 200]);
  } finally {
    clearInterval(keepAlive);
    await running.close();
  }
  await app.close();
});

test("inject()'s response timeout counts from the moment the request is handled, and ends once the answer is whole: a body given late is the 503, one read in time is answered, its request's signal never aborted after", async () => {
  const signals: AbortSignal[] = [];
  const slow = async (request: Request): Promise<Response> => {
    signals.push(request.signal);
    // 150 ms in handle(), then chunks 60 ms apart: the first is late counted from handle(), the whole body in time from its start.
    await sleep(Number(request.query.get('wait')));
    return new Response(Readable.from((async function* () {
      for (const chunk of ['a', 'b', 'c']) {
        await sleep(Number(request.query.get('gap')));
        yield chunk;
      }
    })()));
  };
  const app = appOf({ routes: routesOf({ '/slow': slow }) });
  const inject = createInjector(app.kernel, { responseTimeout: 200 });
  assert.is((await inject('/slow?wait=0&gap=20')).text(), 'abc');
  assert.is((await inject('/slow?wait=150&gap=60')).status, 503);
  await sleep(300);
  assert.equal(signals.map((signal) => signal.aborted), [false, true]);
  await app.close();
});

test("a stream body that keeps giving chunks past the response timeout is read whole, as the server sends it (its head out, it never cuts a body that flows); one that then stalls for a whole response timeout is cut", async () => {
  const signals: AbortSignal[] = [];
  const flowing = (request: Request): Response => {
    signals.push(request.signal);
    // A chunk every 50 ms, 8 of them: 400 ms in all, twice the response timeout, never 200 ms without one; `stalls`: none after the fourth.
    const chunks = [...'abcdefgh'];
    let ticker: NodeJS.Timeout | undefined;
    const body = new Readable({
      read() {},
      destroy(error, callback) {
        clearInterval(ticker);
        callback(error);
      },
    });
    body.push(chunks.shift());
    ticker = setInterval(() => {
      if (request.query.has('stalls') && chunks.length === 4) return;
      body.push(chunks.shift() ?? null);
      if (chunks.length === 0) body.push(null);
    }, 50);
    body.once('end', () => clearInterval(ticker));
    return new Response(body, 200, { 'content-type': 'text/plain' });
  };
  const app = appOf({ routes: routesOf({ '/flowing': flowing }) });
  const inject = createInjector(app.kernel, { logger: app.logger, responseTimeout: 200 });
  const running = await startServers(app.listener, { host: '127.0.0.1', port: 0, httpsPort: null, limits: { responseTimeout: 200, shutdownTimeout: 1_000 } });
  try {
    const fromServer = await undiciRequest(`http://127.0.0.1:${running.ports.http}/flowing`);
    const served = { status: fromServer.statusCode, body: await fromServer.body.text() };
    assert.equal(served, { status: 200, body: 'abcdefgh' });
    const injected = await inject('/flowing').then((response) => ({ status: response.status, body: response.text() }), (error: unknown) => error);
    assert.equal(injected, served);
    const started = performance.now();
    const cut = await Promise.race([inject('/flowing?stalls').then(() => 'resolved', (error: unknown) => error), sleep(3_000, 'still waiting')]);
    assert.instance(cut, ResponseTimeoutError);
    // It says what happened: the response was ready (four chunks read), then its stream went quiet; not `was not ready within`.
    assert.is((cut as ResponseTimeoutError).message, 'The response body stream gave no chunk for 0.2 seconds once begun (route "flowing", controller "flowing").');
    assert.is((cut as ResponseTimeoutError).timeoutMs, 200);
    // The fourth chunk at about 150 ms, then 200 ms without one.
    assert.ok(performance.now() - started >= 340, 'not before a whole response timeout without a chunk');
    assert.equal(signals.map((signal) => signal.aborted), [false, false, true]);
  } finally {
    await running.close();
  }
  await app.close();
});

test("a stream body answered synchronously has the whole response timeout for its first chunk from the moment handle() returns, as from the server: a synchronous controller's own time is not taken from it", async () => {
  const busy = (): Response => {
    // 250 ms of synchronous work (longer than the response timeout), then a stream whose first chunk comes 50 ms on.
    const until = performance.now() + 250;
    while (performance.now() < until);
    const body = new Readable({ read() {} });
    setTimeout(() => {
      body.push('done');
      body.push(null);
    }, 50);
    return new Response(body, 200, { 'content-type': 'text/plain' });
  };
  const app = appOf({ routes: routesOf({ '/busy': busy }) });
  const inject = createInjector(app.kernel, { logger: app.logger, responseTimeout: 200 });
  const running = await startServers(app.listener, { host: '127.0.0.1', port: 0, httpsPort: null, limits: { responseTimeout: 200, shutdownTimeout: 1_000 } });
  try {
    const fromServer = await undiciRequest(`http://127.0.0.1:${running.ports.http}/busy`);
    const served = { status: fromServer.statusCode, body: await fromServer.body.text() };
    assert.equal(served, { status: 200, body: 'done' });
    const injected = await inject('/busy');
    assert.equal({ status: injected.status, body: injected.text() }, served);
  } finally {
    await running.close();
  }
  await app.close();
});

test("a handle() that has not settled within createInjector()'s responseTimeout is answered as by the server at its own: the page of its 503, the request's signal aborted; what it gives later is dropped, a stream destroyed, an error logged CRITICAL", async () => {
  const watcher = terminateWatcher();
  const signals: AbortSignal[] = [];
  const late: Readable[] = [];
  const slow = async (request: Request): Promise<Response> => {
    signals.push(request.signal);
    if (request.query.has('never')) return new Promise<Response>(() => {});
    await sleep(400);
    if (request.query.has('fails')) throw new Error('the upstream answered too late');
    const body = new Readable({ read() {} });
    late.push(body);
    return new Response(body);
  };
  const app = appOf({ subscribers: [watcher], routes: routesOf({ '/slow': slow }) });
  const inject = createInjector(app.kernel, { logger: app.logger, responseTimeout: 200 });
  const records: string[] = [];
  app.bus.on('log', (entry) => void (entry.record.level <= 3 && records.push(`${entry.record.levelName} ${entry.record.message}`.replace(/ at .*$/, ''))));
  const running = await startServers(app.listener, { host: '127.0.0.1', port: 0, httpsPort: null, limits: { responseTimeout: 200, shutdownTimeout: 1_000 } });
  try {
    for (const path of ['/slow?never', '/slow?fails', '/slow?stream']) {
      const fromServer = await undiciRequest(`http://127.0.0.1:${running.ports.http}${path}`, { headers: { accept: 'application/json' } });
      const served = { status: fromServer.statusCode, type: fromServer.headers['content-type'], body: await fromServer.body.text() };
      assert.is(served.status, 503, path);
      // What handle() gives late, logged or destroyed.
      await sleep(300);
      const serverRecords = records.splice(0);
      const timedOut = 'CRITICAL Uncaught error: ResponseTimeoutError: "The response was not ready within 0.2 seconds (route "slow", controller "slow")."';
      assert.equal(serverRecords, path === '/slow?fails' ? [timedOut, 'CRITICAL Uncaught error: Error: "the upstream answered too late"'] : [timedOut], path);
      const started = performance.now();
      const page = await Promise.race([inject(path, { headers: { accept: 'application/json' } }), sleep(3_000, 'still waiting')]);
      assert.ok(typeof page !== 'string', `inject() settles ${path}`);
      assert.ok(performance.now() - started < 400, `before handle() settles ${path}`);
      assert.equal({ status: page.status, type: page.headers['content-type'], body: page.text() }, served, path);
      await sleep(300);
      assert.equal(records.splice(0), serverRecords, path);
    }
    assert.equal(signals.map((signal) => signal.aborted), [true, true, true, true, true, true]);
    assert.equal(late.map((body) => body.destroyed), [true, true]);
    assert.equal(watcher.ended, [503, 503, 503, 503, 503, 503]);
  } finally {
    await running.close();
  }
  await app.close();
});

test("a handle() that settles in time after init.signal aborted ends as the server ends a client that left, a ClientClosedError (499), in place of an answer under 400 nobody got; an error answer is kept, as the server keeps it", async () => {
  const watcher = terminateWatcher();
  // Deaf to request.signal: it answers at 150 ms whatever happens, within the 200 ms response timeout.
  const deaf = async (request: Request): Promise<Response> => new Response(await sleep(150, 'late'), request.query.has('gone') ? 410 : 200);
  const app = appOf({ subscribers: [watcher], routes: routesOf({ '/deaf': deaf }) });
  const inject = createInjector(app.kernel, { logger: app.logger, responseTimeout: 200 });
  const running = await startServers(app.listener, { host: '127.0.0.1', port: 0, httpsPort: null, limits: { responseTimeout: 200, shutdownTimeout: 1_000 } });
  try {
    for (const query of ['', '?gone']) {
      const left = await undiciRequest(`http://127.0.0.1:${running.ports.http}/deaf${query}`, { signal: AbortSignal.timeout(50) }).then(() => 'answered', (error: unknown) => (error as Error).name);
      assert.is(left, 'TimeoutError');
      await sleep(300);
      const fromServer = watcher.ended.splice(0);
      const reason = new Error('the test gave up');
      const controller = new AbortController();
      setTimeout(() => controller.abort(reason), 50);
      const given = await inject(`/deaf${query}`, { signal: controller.signal }).then(() => 'answered', (error: unknown) => error);
      assert.is(given, reason);
      await sleep(100);
      // 726cd03 ended such a request as a 499 only when handle() outlasted the response timeout; in time, it ended as the 200 never given.
      assert.equal({ query, injected: watcher.ended.splice(0) }, { query, injected: fromServer });
      assert.equal(fromServer, [query === '' ? 499 : 410]);
    }
  } finally {
    await running.close();
  }
  await app.close();
});

test("a handle() still running at the response timeout after init.signal aborted is given up as the server gives up on a client that left: a ClientClosedError (499, logged at INFO), not a 503 logged CRITICAL; inject() rejects with the signal's reason", async () => {
  const watcher = terminateWatcher();
  // Deaf to request.signal: it answers at 400 ms whatever happens.
  const deaf = async (): Promise<Response> => new Response(await sleep(400, 'late'));
  const app = appOf({ subscribers: [watcher], routes: routesOf({ '/deaf': deaf }) });
  const inject = createInjector(app.kernel, { logger: app.logger, responseTimeout: 200 });
  const records: string[] = [];
  app.bus.on('log', (entry) => void (entry.record.level <= 3 && records.push(`${entry.record.levelName} ${entry.record.message}`)));
  const running = await startServers(app.listener, { host: '127.0.0.1', port: 0, httpsPort: null, limits: { responseTimeout: 200, shutdownTimeout: 1_000 } });
  try {
    const left = await undiciRequest(`http://127.0.0.1:${running.ports.http}/deaf`, { signal: AbortSignal.timeout(100) }).then(() => 'answered', (error: unknown) => (error as Error).name);
    assert.is(left, 'TimeoutError');
    await sleep(500);
    assert.equal({ ended: watcher.ended.splice(0), records: records.splice(0) }, { ended: [499], records: [] });
    const reason = new Error('the test gave up');
    const controller = new AbortController();
    setTimeout(() => controller.abort(reason), 100);
    const given = await inject('/deaf', { signal: controller.signal }).then(() => 'answered', (error: unknown) => error);
    assert.is(given, reason);
    await sleep(200);
    assert.equal({ ended: watcher.ended.splice(0), records: records.splice(0) }, { ended: [499], records: [] });
  } finally {
    await running.close();
  }
  await app.close();
});

test("createInjector()'s responseTimeout takes what the server's limits.responseTimeout takes, a whole number of milliseconds up to setTimeout's longest, 0 turning it off, and refuses the rest as the server does (a RangeError): one value configures both", async () => {
  const app = appOf({ routes: routesOf({ '/stall': () => new Response(new Readable({ read() {} })) }) });
  for (const bad of [Infinity, -Infinity, '200', -1, 1.5, NaN, 2 ** 31, null]) {
    const fromServer = await startServers(app.listener, { host: '127.0.0.1', port: 0, httpsPort: null, limits: { responseTimeout: bad as number } }).then(async (running) => (await running.close(), 'started'), (error: unknown) => error);
    assert.instance(fromServer, RangeError, String(bad));
    assert.throws(() => createInjector(app.kernel, { responseTimeout: bad as number }), (error: unknown) => error instanceof RangeError && `limits.${error.message}` === (fromServer as Error).message, String(bad));
  }
  // The value as it was given: `'200'` written bare, `not 200`, named as wrong a whole number in range; an object without a
  // prototype, written with String(), threw a TypeError of its own ('Cannot convert object to primitive value') in both.
  const said = (bad: unknown): unknown => {
    try {
      createInjector(app.kernel, { responseTimeout: bad as number });
      return 'taken';
    } catch (error) {
      return `${(error as Error).name}: ${(error as Error).message}`;
    }
  };
  assert.is(said('200'), 'RangeError: responseTimeout is a whole number of milliseconds from 0 (off) to 2147483647, not the string "200".');
  assert.is(said(Object.create(null)), 'RangeError: responseTimeout is a whole number of milliseconds from 0 (off) to 2147483647, not an object of type Object.');
  assert.is(said(1.5), 'RangeError: responseTimeout is a whole number of milliseconds from 0 (off) to 2147483647, not 1.5.');
  const fromServer = await startServers(app.listener, { host: '127.0.0.1', port: 0, httpsPort: null, limits: { responseTimeout: Object.create(null) as number } }).then(async (running) => (await running.close(), 'started'), (error: unknown) => `${(error as Error).name}: ${(error as Error).message}`);
  assert.is(fromServer, `RangeError: limits.${String(said(Object.create(null))).slice('RangeError: '.length)}`);
  assert.throws(() => createInjector(app.kernel, { responsetimeout: 200 } as never), (error: unknown) => error instanceof Error && error.message === 'createInjector() has no option "responsetimeout"; its options are trustedProxies, trustedHosts, bodyLimit, logger, unhandled, bodyCloseWaitMs, responseTimeout.');
  assert.type(createInjector(app.kernel, { responseTimeout: 2 ** 31 - 1 }), 'function');
  for (const off of [0]) {
    const controller = new AbortController();
    const answer = createInjector(app.kernel, { responseTimeout: off })('/stall', { signal: controller.signal }).then(() => 'answered', () => 'rejected');
    // The sleep keeps the process alive: no 'beforeExit' gives the body up.
    assert.is(await Promise.race([answer, sleep(300, 'still waiting')]), 'still waiting', String(off));
    controller.abort(new Error('enough'));
    assert.is(await answer, 'rejected');
  }
  await app.close();
});

test('a stream body that breaks its Content-Length rejects, logged and terminated, as the server cuts its connection', async () => {
  const tokens: string[] = [];
  const app = appOf({
    debug: true,
    profiler: { storage: new MemoryStorage() },
    subscribers: [{ getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }), onTerminate: (event: TerminateEvent) => void tokens.push(event.response.headers['x-debug-token'] as string) } as EventSubscriber],
    routes: routesOf({
      '/long': () => new Response(Readable.from(['hello world']), 200, { 'content-length': '5' }),
      '/short': () => new Response(Readable.from(['hi']), 200, { 'content-length': '5' }),
    }),
  });
  for (const [path, message] of [['/long', 'gave more bytes than its Content-Length (5)'], ['/short', 'ended 3 bytes short of its Content-Length (5)']] as const) {
    assert.is(await served(app, path).then(() => 'answered', () => 'cut'), 'cut', path);
    tokens.length = 0;
    const failure = await app.inject(path).then(() => undefined, (error: unknown) => error as Error);
    assert.instance(failure, RangeError, path);
    assert.match(failure!.message, message, path);
    assert.is(tokens.length, 1, path);
    const profile = await app.profiler!.loadProfile(tokens[0]!);
    // Levels as RFC 5424 numbers them: 3 is ERROR, 2 CRITICAL.
    const logs = (profile!.collectors.logger as { logs: Array<{ message: string }> }).logs.map((record) => record.message);
    assert.ok(logs.includes(`The response body stream failed: RangeError: ${failure!.message}`), path);
  }
  await app.close();
});

test('a stream body whose clean-up fails after its last chunk: inject gives the whole body, and logs the failure once at ERROR, as the server does', async () => {
  const watcher = terminateWatcher();
  const closeFails = (request: Request): Response => {
    const failure = new Error('the file could not be closed');
    return new Response(
      new Readable({
        read() {
          this.push('all of it');
          this.push(null);
        },
        destroy(_error, callback) {
          // At once, or a turn later, as a file's close fails.
          if (request.query.has('once')) callback(failure);
          else setImmediate(() => callback(failure));
        },
      }),
    );
  };
  const app = appOf({ debug: true, profiler: { storage: new MemoryStorage() }, subscribers: [watcher], routes: routesOf({ '/file': closeFails }) });
  for (const path of ['/file?once', '/file']) {
    const response = await app.inject(path);
    assert.is(response.status, 200, path);
    assert.is(response.text(), 'all of it', path);
    const profile = await app.profiler!.loadProfile(response.headers['x-debug-token'] as string);
    // Levels as RFC 5424 numbers them: 3 is ERROR, 2 CRITICAL.
    const logs = (profile!.collectors.logger as { logs: Array<{ level: number; message: string }> }).logs.filter((record) => record.level <= 3);
    assert.equal(logs.map((record) => `${record.level} ${record.message}`), ['3 The response body stream failed in its clean-up, after its last chunk: Error: the file could not be closed'], path);
  }
  assert.equal(watcher.ended, [200, 200]);
  await app.close();
});

test('an object-mode stream body that gives no text nor bytes: its first chunk gets the error page, a later one cuts the connection, and inject answers as the server does', async () => {
  const watcher = terminateWatcher();
  const app = appOf({
    subscribers: [watcher],
    routes: routesOf({
      '/rows': () => new Response(Readable.from([{ id: 1 }])),
      '/late': () => new Response(Readable.from(['a', { id: 1 }])),
      '/mixed': () => new Response(Readable.from(['a', new Uint8Array([0x61, 0x62, 0x63]).subarray(1), Buffer.from('d')])),
    }),
  });
  // Nothing was sent before the first chunk: the TypeError's page, where the client got a closed connection.
  const fromServer = await served(app, '/rows', { headers: { accept: 'application/json' } });
  assert.is(fromServer.status, 500);
  const page = await app.inject('/rows', { headers: { accept: 'application/json' } });
  assert.equal([page.status, page.headers['content-type'], page.text()], [fromServer.status, fromServer.type, fromServer.body]);
  // node:http's write() threw out of the pipe, where nothing caught it: the process ended.
  assert.is(await served(app, '/late').then(() => 'answered', () => 'cut'), 'cut');
  assert.is((await served(app, '/mixed')).body, 'abcd');
  const failure = await app.inject('/late').then(() => undefined, (error: unknown) => error as Error);
  assert.instance(failure, TypeError);
  assert.match(failure!.message, 'A response body stream gives text or bytes, not');
  assert.is((await app.inject('/mixed')).text(), 'abcd');
  assert.equal(watcher.ended, [500, 500, 200, 200, 200, 200]);
  await app.close();
});

test("a stream body whose clean-up never ends is answered once bodyCloseWaitMs has passed, as the server terminates it", async () => {
  const watcher = terminateWatcher();
  const app = appOf({
    subscribers: [watcher],
    routes: routesOf({
      '/hung': () =>
        new Response(
          new Readable({
            read() {
              this.push('data');
              this.push(null);
            },
            destroy() {
              // Its callback never called: the stream never closes.
            },
          }),
        ),
    }),
  });
  const inject = createInjector(app.kernel, { bodyCloseWaitMs: 50 });
  const answer = await Promise.race([inject('/hung').then((response) => response.text()), sleep(3_000, 'still waiting')]);
  assert.is(answer, 'data');
  assert.equal(watcher.ended, [200]);
  await inject.settled();
  await app.close();
});

test('a signal of the caller stops reading a body that never ends', async () => {
  const watcher = terminateWatcher();
  const app = appOf({ subscribers: [watcher], routes: routesOf({ '/feed': () => new Response(new Readable({ read() { setTimeout(() => this.push('tick\n'), 5); } })) }) });
  const controller = new AbortController();
  const done = app.inject('/feed', { signal: controller.signal }).then(() => 'resolved', (error: unknown) => error);
  await sleep(30);
  controller.abort(new Error('enough'));
  assert.is(((await done) as Error).message, 'enough');
  assert.equal(watcher.ended, [200]);
  await app.close();
});

test('a signal aborted before inject() is called rejects with its reason whatever the answer would be, the request never handled', async () => {
  const watcher = terminateWatcher();
  let handled = 0;
  const app = appOf({
    subscribers: [watcher],
    routes: routesOf({
      '/text': () => (handled++, new Response('text')),
      '/bytes': () => (handled++, new Response(new Uint8Array([1, 2]))),
      '/feed': () => (handled++, new Response(Readable.from(['a', 'b']))),
    }),
  });
  const reason = new Error('the caller gave up');
  for (const [target, init] of [['/text', {}], ['/bytes', {}], ['/feed', {}], ['/text', { headers: { 'content-length': 'x' } }]] as const) {
    const outcome = await app.inject(target, { ...init, signal: AbortSignal.abort(reason) }).then((response) => `resolved ${response.status}`, (error: unknown) => error);
    assert.is(outcome, reason, `${target} ${JSON.stringify(init)}`);
  }
  assert.is(handled, 0);
  assert.equal(watcher.ended, []);
  await app.close();
});

test('a signal aborting while handle() runs rejects with its reason for a text answer too, the request terminated', async () => {
  const watcher = terminateWatcher();
  const controller = new AbortController();
  const app = appOf({
    subscribers: [watcher],
    routes: routesOf({
      '/slow': async () => {
        controller.abort(new Error('enough'));
        return new Response('too late');
      },
    }),
  });
  const outcome = await app.inject('/slow', { signal: controller.signal }).then((response) => `resolved ${response.status}`, (error: unknown) => error);
  assert.is((outcome as Error).message, 'enough');
  // Terminated as the server terminates a request whose client left before its answer: a 499, not the 200 nobody got.
  assert.equal(watcher.ended, [499]);
  await app.close();
});

test('a stream body whose _destroy cannot be replaced (read-only, a frozen stream\'s) is read whole and terminated, not rejected with a TypeError', async () => {
  const watcher = terminateWatcher();
  let body: Readable | undefined;
  const readOnly = (): Response => {
    body = new Readable({ read() { this.push('whole'); this.push(null); } });
    Object.defineProperty(body, '_destroy', { value: body._destroy, writable: false });
    return new Response(body);
  };
  const app = appOf({ subscribers: [watcher], routes: routesOf({ '/read-only': readOnly }) });
  const outcome = await app.inject('/read-only').then((response) => `${response.status} ${response.text()}`, (error: unknown) => error);
  assert.is(outcome, '200 whole');
  assert.equal(watcher.ended, [200]);
  assert.ok(body!.destroyed);
  await app.close();
});

test("a stream body whose _destroy the application assigns while inject() reads it keeps that one once read, not the one it had before", async () => {
  const destroyed: string[] = [];
  const bodies: Readable[] = [];
  const own = function (this: Readable, error: Error | null, callback: (error?: Error | null) => void): void {
    destroyed.push('own');
    callback(error);
  };
  const reassigns = (request: Request): Response => {
    // Not destroyed at its end (autoDestroy: false): the application destroys it itself, after the answer.
    const body = new Readable({ autoDestroy: false, read() {}, ...(request.query.has('given') ? { destroy: (error, callback) => (destroyed.push('given'), callback(error)) } : {}) });
    bodies.push(body);
    body.push('a');
    setTimeout(() => {
      body._destroy = own;
      body.push('b');
      body.push(null);
    }, 10);
    return new Response(body);
  };
  const app = appOf({ routes: routesOf({ '/reassigns': reassigns }) });
  for (const path of ['/reassigns', '/reassigns?given']) {
    destroyed.length = 0;
    assert.is((await app.inject(path)).text(), 'ab', path);
    const body = bodies.pop()!;
    assert.is(body._destroy, own, path);
    body.destroy();
    assert.equal(destroyed, ['own'], path);
  }
  await app.close();
});

test('a signal aborting once the answer is whole (in kernel.terminate, or while a read stream closes) is harmless: the answer is given', async () => {
  let controller = new AbortController();
  const aborter = { getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }), onTerminate: () => controller.abort(new Error('too late to give up')) };
  const app = appOf({
    subscribers: [aborter],
    routes: routesOf({
      '/text': () => new Response('whole'),
      '/feed': () => new Response(Readable.from(['who', 'le'])),
      // Its clean-up takes a while after its last chunk: the signal aborts at its end.
      '/closing': () => new Response(new Readable({
        read() {
          this.push('whole');
          this.push(null);
        },
        destroy: (_error, callback) =>
          void setTimeout(() => {
            controller.abort(new Error('too late to give up'));
            callback(null);
          }, 20),
      })),
    }),
  });
  for (const target of ['/text', '/feed', '/closing']) {
    controller = new AbortController();
    const outcome = await app.inject(target, { signal: controller.signal }).then((response) => `${response.status} ${response.text()}`, (error: unknown) => `rejected: ${(error as Error).message}`);
    assert.is(outcome, '200 whole', target);
    assert.ok(controller.signal.aborted, target);
  }
  await app.close();
});

test('a signal of the caller stops reading a legacy stream body (pipe() alone, no destroy()) without an uncaught TypeError', async () => {
  const watcher = terminateWatcher();
  let timer: NodeJS.Timeout | undefined;
  const legacy = (): Response => {
    const stream = new Stream();
    timer = setInterval(() => stream.emit('data', Buffer.from('tick\n')), 5);
    return new Response(stream as never);
  };
  const app = appOf({ subscribers: [watcher], routes: routesOf({ '/legacy': legacy }) });
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown): void => void uncaught.push(error);
  process.on('uncaughtException', onUncaught);
  try {
    const controller = new AbortController();
    const done = app.inject('/legacy', { signal: controller.signal }).then(() => 'resolved', (error: unknown) => error);
    await sleep(30);
    controller.abort(new Error('enough'));
    assert.is(((await done) as Error).message, 'enough');
    await sleep(20);
    assert.equal(uncaught, []);
    assert.equal(watcher.ended, [200]);
  } finally {
    clearInterval(timer);
    process.off('uncaughtException', onUncaught);
  }
  await app.close();
});

test('concurrent injects keep their logs apart', async () => {
  const app = appOf({
    debug: true,
    profiler: { storage: new MemoryStorage() },
    routes: routesOf({
      '/work': async (request: Request) => {
        const id = request.query.get('id');
        app.logger.info('start {id}', { id });
        await sleep(Number(id) % 3 * 5);
        app.logger.info('end {id}', { id });
        return new Response(`done ${id}`);
      },
    }),
  });
  const ids = ['1', '2', '3', '4', '5', '6'];
  const responses = await Promise.all(ids.map((id) => app.inject(`/work?id=${id}`)));
  for (const [i, response] of responses.entries()) {
    assert.is(response.text(), `done ${ids[i]}`);
    const profile = await app.profiler!.loadProfile(response.headers['x-debug-token'] as string);
    const messages = (profile!.collectors.logger as { logs: Array<{ message: string }> }).logs.map((record) => record.message).filter((message) => /^(start|end) /.test(message));
    assert.equal(messages, [`start ${ids[i]}`, `end ${ids[i]}`]);
  }
  await app.close();
});

test("inject refuses the server's settings and options it does not know, as TypeErrors at the call", async () => {
  const app = appOf();
  const refused = async (init: unknown): Promise<Error> => {
    try {
      await app.inject('/', init as object);
    } catch (error) {
      return error as Error;
    }
    throw new Error('expected a rejection');
  };
  const setting = await refused({ trustHost: () => true });
  assert.instance(setting, TypeError);
  assert.match(setting.message, 'with the server\'s trustedHosts: give that to createKernel()');
  assert.match((await refused({ bodylimit: 10 })).message, 'inject() has no option "bodylimit"');
  assert.instance(await refused(new Map()), TypeError);
  await app.close();
});

test("inject() refuses Fastify's inject() options (payload, query, cookies, url) saying where each goes here", async () => {
  const app = appOf();
  const refusal = async (init: object): Promise<string> => {
    try {
      await app.inject('/', init);
    } catch (error) {
      return (error as Error).message;
    }
    throw new Error('expected a rejection');
  };
  assert.match(await refusal({ method: 'POST', payload: { title: 'Dune' } }), 'inject() has no option "payload"; its options are method, headers, body, json, scheme, remoteAddress, localAddress, localPort, signal. Fastify\'s payload is json here for a value to send as JSON, or body for text or bytes.');
  assert.match(await refusal({ query: { tag: 'a' } }), "Put the query in the target: inject('/books?tag=a&tag=b').");
  assert.match(await refusal({ cookies: { session: 'abc' } }), "Send cookies as a header: headers: { cookie: 'session=abc' }.");
  assert.match(await refusal({ url: '/books' }), "The target is inject()'s first argument.");
  assert.ok((await refusal({ cookie: 'a=1' })).endsWith('its options are method, headers, body, json, scheme, remoteAddress, localAddress, localPort, signal.'));
  await app.close();
});

test("inject() refuses a target that is no string, naming Fastify's inject({ method, url, payload }) when it gets one, rather than failing inside Request.create()", async () => {
  const app = appOf();
  const refusal = (target: unknown): Promise<unknown> => app.inject(target as string).then(() => undefined, (error: unknown) => error);
  const fastify = await refusal({ method: 'POST', url: '/books', payload: { title: 'Dune' } });
  assert.instance(fastify, TypeError);
  assert.is((fastify as Error).message, "inject() takes the request's target as its first argument, a string ('/books?page=2'), not an object of type Object: Fastify's inject({ method, url, payload }) is inject(url, { method, json }) here.");
  assert.is(((await refusal(42)) as Error).message, "inject() takes the request's target as its first argument, a string ('/books?page=2'), not number 42.");
  assert.is((await app.inject(new URL('http://localhost/nowhere') as unknown as string)).status, 404, 'a URL object, which Request.create() reads as its text, still goes');
  await app.close();
});

test('inject() refuses an option named as a property of every object (constructor, toString) as one it does not know, not as a server setting', async () => {
  const app = appOf();
  for (const key of ['constructor', 'toString', 'hasOwnProperty']) {
    const init = { [key]: 1 };
    const message = await app.inject('/', init).then(() => 'resolved', (error: Error) => error.message);
    assert.is(message, `inject() has no option "${key}"; its options are method, headers, body, json, scheme, remoteAddress, localAddress, localPort, signal.`, key);
  }
  await app.close();
});

test('a body set to undefined after the constructor is refused by name, as a body of another type is, rather than by a TypeError of the check', async () => {
  const refused: string[] = [];
  const recorder = {
    getSubscribedEvents: () => ({ [KernelEvents.EXCEPTION]: ['onException', 0] as const }),
    onException(event: ExceptionEvent): void {
      refused.push((event.error as Error).message);
    },
  };
  const app = appOf({
    subscribers: [recorder],
    routes: routesOf({
      '/unset': () => {
        const response = new Response('x');
        response.body = undefined as never;
        return response;
      },
    }),
  });
  assert.is((await app.inject('/unset')).status, 500);
  assert.equal(refused, ['The response cannot be sent: A response body is a string, bytes, a readable stream or null, not undefined.']);
  await app.close();
});

test("a Request.create() sub-request's stream (debug off) failing unheard is logged by the injector with a logger, not taken by another of the kernel's with none, which would log it nowhere", async () => {
  let app: KernelApp | undefined = undefined;
  const fragment = (controller: Controller): Promise<Response> => {
    const made = KernelRequest.create('/fragment');
    made.attributes.set('_controller', controller);
    return app!.kernel.handle(made, RequestType.SUB);
  };
  app = appOf({
    debug: false,
    routes: routesOf({
      '/text': () => new Response('served on'),
      // Ignores its fragment's stream, which fails while it still works on its page.
      '/holds': async () => {
        await fragment(() => {
          const stream = new Readable({ read() {} });
          setTimeout(() => stream.destroy(new Error('the ignored fragment failed')), 20);
          return new Response(stream);
        });
        await sleep(40);
        return new Response('page');
      },
    }),
  });
  const logged: string[] = [];
  app.bus.on('log', (entry: LogEntry) => void (entry.record.message.includes('the ignored fragment failed') && logged.push(`${entry.record.levelName} ${entry.record.message}`)));
  // An injector of the embedder's own, given no logger: its requests' records are said to nobody.
  const quiet = createInjector(app.kernel);
  const page = app.inject('/holds');
  await sleep(5);
  assert.is((await quiet('/text')).text(), 'served on');
  assert.is((await page).text(), 'page');
  for (let i = 0; i < 50 && logged.length === 0; i++) await sleep(10);
  assert.equal(logged, ['ERROR The response body stream of a sub-request failed with nobody listening: Error: the ignored fragment failed']);
  await app.close();
});

test("a Request.create() sub-request's stream of another kernel (debug off) that a page answers with, failing while its kernel.response awaits, is the page's server's alone to log: that other kernel's terminates leave it", async () => {
  const fragments = appOf({ debug: false, routes: routesOf({ '/text': () => new Response('served on') }) });
  const slow: EventSubscriber = {
    getSubscribedEvents: () => ({ [KernelEvents.RESPONSE]: 'onResponse' }),
    onResponse: (event: { isMainRequest(): boolean }) => (event.isMainRequest() ? sleep(60) : undefined),
  } as EventSubscriber;
  const pages = appOf({
    debug: false,
    subscribers: [slow],
    routes: routesOf({
      // Answers with a fragment of the other kernel's, as a gateway composing apps does.
      '/forwards': () => {
        const made = KernelRequest.create('/fragment');
        made.attributes.set('_controller', () => {
          const stream = new Readable({ read() {} });
          setTimeout(() => stream.destroy(new Error('the forwarded fragment failed')), 5);
          return new Response(stream);
        });
        return fragments.kernel.handle(made, RequestType.SUB);
      },
    }),
  });
  const logged: string[] = [];
  for (const app of [fragments, pages]) app.bus.on('log', (entry: LogEntry) => void (entry.record.message.includes('the forwarded fragment failed') && logged.push(`${entry.record.levelName} ${entry.record.message}`.replace(/ at .*$/, ''))));
  const page = pages.inject('/forwards');
  await sleep(20);
  assert.is((await fragments.inject('/text')).text(), 'served on');
  assert.is((await page).status, 500);
  await sleep(30);
  assert.equal(logged, ['CRITICAL Uncaught error: Error: "the forwarded fragment failed"']);
  await pages.close();
  await fragments.close();
});

test.run();
