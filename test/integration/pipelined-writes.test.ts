// Responses to requests pipelined in one read go out together (lib/server/pipelined-writes.ts):
// the same bytes in the same order, in fewer writes. Raw sockets over http and https; the server's
// own writes are counted where net.Socket hands them to the system (`_writeGeneric`).
import net from 'node:net';
import tls from 'node:tls';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response, type Request } from '../../kernel/index.js';
import { SCHEMES, readResponses, routesOf, startTestServer, until, type TestServer } from './harness.js';

/** More than GATHER_LIMIT in three responses: what is held goes out as it passes the limit. */
const LARGE = 'x'.repeat(48 * 1024);

/** A response of a size that two fit within the gathering limit, held together in a turn. */
const PART = 'p'.repeat(30 * 1024);

/** The number of writes each server connection has made, by the client's port. */
const writesByPort = new Map<number, number>();
/** Each server connection by the client's port: the socket node:http speaks on, and the TCP socket under it. */
const servedByPort = new Map<number, { http: net.Socket; raw: net.Socket }>();

function countWrites(socket: net.Socket): void {
  const port = socket.remotePort!;
  writesByPort.set(port, 0);
  servedByPort.set(port, { http: socket, raw: (socket as net.Socket & { _parent?: net.Socket })._parent ?? socket });
  const target = socket as net.Socket & { _writeGeneric: (...args: unknown[]) => unknown };
  const writeGeneric = target._writeGeneric;
  target._writeGeneric = function (...args: unknown[]) {
    writesByPort.set(port, writesByPort.get(port)! + 1);
    return writeGeneric.apply(this, args);
  };
}

const test = suite('pipelined writes');
let server: TestServer;
/** The same routes, with a short keep-alive timeout. */
let keptServer: TestServer;
const KEEP_ALIVE_MS = 300;

test.before(async () => {
  const kernel = {
    env: 'staging',
    debug: false,
    routes: routesOf({
      '/text': (request: Request) => new Response(`hello ${request.query.get('n') ?? ''}`, 200, { 'content-type': 'text/plain' }),
      '/large': (request: Request) => new Response(`${request.query.get('n') ?? ''}${LARGE}`, 200, { 'content-type': 'text/plain' }),
      '/part': () => new Response(PART, 200, { 'content-type': 'text/plain' }),
      '/later': async (request: Request) => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return new Response(`later ${request.query.get('n') ?? ''}`, 200, { 'content-type': 'text/plain' });
      },
    }),
  };
  server = await startTestServer({ kernel });
  keptServer = await startTestServer({ kernel, limits: { keepAliveTimeout: KEEP_ALIVE_MS } });
  // http's socket, or https's TLS socket (whose writes are the TLS layer's, counted the same way).
  for (const { running } of [server, keptServer]) {
    running.servers[0]!.on('connection', countWrites);
    running.servers[1]!.on('secureConnection', countWrites);
  }
});

test.after(async () => {
  await server.close();
  await keptServer.close();
});

interface Exchange {
  /** Everything read until the server closed the connection or `waitFor` responses had come. */
  received: string;
  /** The server's writes on the connection. */
  writes: number;
}

/** Sends `requests` in one write and reads until `waitFor` responses have come (or the server closed). */
async function pipeline(scheme: 'http' | 'https', requests: string[], waitFor: number): Promise<Exchange> {
  const port = Number(new URL(server.urls[scheme]).port);
  const socket = scheme === 'https' ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : net.connect(port, '127.0.0.1');
  let received = '';
  let closed = false;
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => {});
  socket.once('close', () => (closed = true));
  await new Promise((resolve) => socket.once(scheme === 'https' ? 'secureConnect' : 'connect', resolve));
  const localPort = socket.localPort!;
  socket.write(requests.join(''));
  const methods = requests.map(() => 'GET');
  await until(() => closed || readResponses(received, methods).responses.filter((response) => response.complete).length >= waitFor, 5_000, `${waitFor} responses`);
  socket.destroy();
  return { received, writes: writesByPort.get(localPort) ?? -1 };
}

const get = (path: string, close = false): string => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${close ? 'Connection: close\r\n' : ''}\r\n`;

for (const scheme of SCHEMES) {
  test(`eight requests pipelined in one write get their eight responses in order, in two writes (the first, then the rest together), over ${scheme}`, async () => {
    const requests = Array.from({ length: 8 }, (_, n) => get(`/text?n=${n}`));
    const { received, writes } = await pipeline(scheme, requests, 8);
    const { responses } = readResponses(received, requests.map(() => 'GET'));
    assert.equal(
      responses.map((response) => [response.status, response.body]),
      Array.from({ length: 8 }, (_, n) => [200, `hello ${n}`]),
    );
    assert.ok(writes >= 1 && writes <= 2, `the server wrote ${writes} times`);
  });

  test(`on a connection that has pipelined, a later burst goes out in one write, over ${scheme}`, async () => {
    const port = Number(new URL(server.urls[scheme]).port);
    const socket = scheme === 'https' ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : net.connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    await new Promise((resolve) => socket.once(scheme === 'https' ? 'secureConnect' : 'connect', resolve));
    const burst = (from: number): string => Array.from({ length: 4 }, (_, n) => get(`/text?n=${from + n}`)).join('');
    const answered = (count: number): boolean => readResponses(received, Array.from({ length: count }, () => 'GET')).responses.filter((response) => response.complete).length === count;
    socket.write(burst(0));
    await until(() => answered(4), 5_000, 'the first burst answered');
    const before = writesByPort.get(socket.localPort!)!;
    socket.write(burst(4));
    await until(() => answered(8), 5_000, 'the second burst answered');
    const writes = writesByPort.get(socket.localPort!)! - before;
    socket.destroy();
    assert.equal(
      readResponses(received, Array.from({ length: 8 }, () => 'GET')).responses.map((response) => response.body),
      Array.from({ length: 8 }, (_, n) => `hello ${n}`),
    );
    assert.is(writes, 1);
  });

  test(`a client that pipelines and reads none of its answers is read no further once they back up, and what the server holds for it stays bounded, over ${scheme}`, async () => {
    const port = Number(new URL(server.urls[scheme]).port);
    const socket = scheme === 'https' ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.pause();
    await new Promise((resolve) => socket.once(scheme === 'https' ? 'secureConnect' : 'connect', resolve));
    // Over TLS the server is done with the handshake a moment after its client.
    await until(() => servedByPort.has(socket.localPort!), 5_000, 'the server\'s end of the connection');
    const { http, raw } = servedByPort.get(socket.localPort!)!;
    // Pipelined once: the connection's writes are gathered from then on.
    socket.write(get('/part') + get('/part'));
    // Then a request at a time, each read in a turn of its own (its answer held alone), until the server stops reading.
    let sent = 2;
    const readWithin = async (before: number): Promise<boolean> => {
      for (const end = Date.now() + 200; raw.bytesRead === before; ) {
        if (Date.now() > end) return false;
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
      return true;
    };
    // 400 answers are 12 MB, far more than the connection's buffers take in.
    for (; sent < 400; sent++) {
      const before = raw.bytesRead;
      socket.write(get('/part'));
      if (!(await readWithin(before))) break;
    }
    // What waits in the server for this client: in its socket's buffer, and queued for the system.
    const waiting = http.writableLength + (raw as net.Socket & { _handle: { writeQueueSize: number } })._handle.writeQueueSize;
    socket.destroy();
    // Without it, the held answers' writes completed at once, so node:http never felt the client's
    // back-pressure: it read every request and queued every answer (over TLS, the process aborted).
    assert.ok(sent < 400, 'the server read all 400 requests');
    assert.ok(waiting < 1024 * 1024, `the server holds ${waiting} bytes for the client`);
  });

  test(`answers that count as sent but wait for a client that reads nothing keep their connection from the keep-alive timeout, over ${scheme}`, async () => {
    const port = Number(new URL(keptServer.urls[scheme]).port);
    const socket = scheme === 'https' ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : net.connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.pause();
    let closed = false;
    socket.once('close', () => (closed = true));
    await new Promise((resolve) => socket.once(scheme === 'https' ? 'secureConnect' : 'connect', resolve));
    await until(() => servedByPort.has(socket.localPort!), 5_000, 'the server\'s end of the connection');
    const { raw } = servedByPort.get(socket.localPort!)!;
    const handle = (raw as net.Socket & { _handle: { writeQueueSize: number } })._handle;
    socket.write(get('/part') + get('/part'));
    // A request at a time, each answered in a turn of its own, until an answer waits in the server: the connection's buffers are full.
    let sent = 2;
    while (handle.writeQueueSize === 0 && sent < 400) {
      const before = raw.bytesRead;
      socket.write(get('/part'));
      sent++;
      await until(() => raw.bytesRead > before, 5_000, `request ${sent} read`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    assert.ok(handle.writeQueueSize > 0, 'no answer waited in the server');
    // Past the keep-alive timeout (and node's margin, and a check), the client reads again.
    await new Promise((resolve) => setTimeout(resolve, KEEP_ALIVE_MS + 1_000 + 1_000));
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.resume();
    const methods = Array.from({ length: sent }, () => 'GET');
    const complete = (): number => readResponses(received, methods).responses.filter((response) => response.complete).length;
    await until(() => closed || complete() === sent, 10_000, 'every answer');
    socket.destroy();
    // Without it, the last answers were out of node:http's hands: the connection looked idle between
    // requests, and was closed with them still queued for the system.
    assert.is(complete(), sent);
  });

  test(`a pipelined burst whose last request says Connection: close is answered whole before the connection closes, over ${scheme}`, async () => {
    const requests = [...Array.from({ length: 5 }, (_, n) => get(`/text?n=${n}`)), get('/text?n=last', true)];
    const { received } = await pipeline(scheme, requests, Infinity);
    const { responses, rest } = readResponses(received, requests.map(() => 'GET'));
    assert.equal(
      responses.map((response) => response.body),
      ['hello 0', 'hello 1', 'hello 2', 'hello 3', 'hello 4', 'hello last'],
    );
    assert.ok(responses.every((response) => response.complete));
    assert.is(responses[5]!.headers['connection']?.[0], 'close');
    assert.is(rest, '');
  });

  test(`pipelined responses larger than the gathering limit all arrive whole and in order, over ${scheme}`, async () => {
    const requests = Array.from({ length: 4 }, (_, n) => get(`/large?n=${n}`));
    const { received, writes } = await pipeline(scheme, requests, 4);
    const { responses } = readResponses(received, requests.map(() => 'GET'));
    assert.equal(
      responses.map((response) => [response.status, response.complete, response.body.length, response.body[0]]),
      Array.from({ length: 4 }, (_, n) => [200, true, LARGE.length + 1, String(n)]),
    );
    // The first alone, the second and third once they pass the limit, the fourth in the turn's check phase.
    assert.ok(writes >= 3, `the server wrote ${writes} times`);
  });

  test(`responses that come later than the burst's turn (an asynchronous controller) are written as they come, in order, over ${scheme}`, async () => {
    const requests = [get('/later?n=0'), get('/text?n=1'), get('/later?n=2'), get('/text?n=3')];
    const { received } = await pipeline(scheme, requests, 4);
    const { responses } = readResponses(received, requests.map(() => 'GET'));
    assert.equal(
      responses.map((response) => response.body),
      ['later 0', 'hello 1', 'later 2', 'hello 3'],
    );
  });

  test(`requests that do not pipeline (each sent once the one before is answered) leave their connection untouched: one write per response, none held, over ${scheme}`, async () => {
    const port = Number(new URL(server.urls[scheme]).port);
    const socket = scheme === 'https' ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : net.connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    await new Promise((resolve) => socket.once(scheme === 'https' ? 'secureConnect' : 'connect', resolve));
    for (let n = 1; n <= 3; n++) {
      socket.write(get(`/text?n=${n}`));
      await until(() => readResponses(received, Array.from({ length: n }, () => 'GET')).responses.filter((response) => response.complete).length === n, 5_000, `response ${n}`);
    }
    const writes = writesByPort.get(socket.localPort!);
    const served = servedByPort.get(socket.localPort!)!.http;
    socket.destroy();
    assert.is(writes, 3);
    // Not wrapped: a gathering connection also makes one write per response when nothing else is in its turn.
    assert.is(served._write, net.Socket.prototype._write);
    assert.is(served._writev, net.Socket.prototype._writev);
  });
}

test.run();
