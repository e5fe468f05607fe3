// A body a controller reads in the background, answering without awaiting the read, settles when its
// connection ends after the response: node tells a request of that end only until its response has finished.
import net from 'node:net';
import tls from 'node:tls';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response, type Request } from '../../kernel/index.js';
import { RouteCollection, Route } from '../../lib/routing/index.js';
import { SCHEMES, rawStatus, sendRaw, startTestServer, type TestServer } from './harness.js';

const HALF_A_BODY = (path: string): string => `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"a":`;
/** Far beyond what settling takes: a read that never settles fails the test rather than holding it. */
const SETTLE_WAIT_MS = 5_000;

type Outcome = { state: 'resolved' | 'rejected' | 'pending'; error?: { code?: string; message?: string } };

/** How a read settles, taken as the controller starts it (a rejection nobody awaits yet would be unhandled). */
function outcomeOf(read: Promise<unknown>): Promise<Outcome> {
  return read.then(
    () => ({ state: 'resolved' }),
    (error: { code?: string; message?: string }) => ({ state: 'rejected', error }),
  );
}

/** How the read settled, or 'pending' after SETTLE_WAIT_MS. */
async function settlement(read: Promise<Outcome> | undefined): Promise<Outcome> {
  assert.ok(read !== undefined, 'the controller started the read');
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<Outcome>((resolve) => (timer = setTimeout(() => resolve({ state: 'pending' }), SETTLE_WAIT_MS)));
  const outcome = await Promise.race([read!, pending]);
  clearTimeout(timer);
  return outcome;
}

function assertCutAfterAnswer(outcome: Outcome): void {
  assert.is(outcome.state, 'rejected', 'the read settles, rejected');
  assert.is(outcome.error?.code, 'HK_MALFORMED_REQUEST');
  assert.match(outcome.error?.message ?? '', /^The connection closed before the whole body had come, after the response was sent: read the body before answering/);
}

/** A kernel whose controllers start reading the body and answer without awaiting it; `reads` gets each read. */
async function serverReadingInBackground(reads: Array<Promise<Outcome>>): Promise<TestServer> {
  const routes = new RouteCollection()
    .add('text', new Route('/text', { methods: ['POST'], defaults: { _controller: (request: Request) => (reads.push(outcomeOf(request.text())), new Response('ok\n')) } }))
    .add('json', new Route('/json', { methods: ['POST'], defaults: { _controller: (request: Request) => (reads.push(outcomeOf(request.json())), new Response('ok\n')) } }))
    // Its read has begun when it answers: the server closes the connection after the answer (Connection: close).
    .add('later', new Route('/later', { methods: ['POST'], defaults: { _controller: async (request: Request) => {
      reads.push(outcomeOf(request.bytes()));
      await new Promise((resolve) => setTimeout(resolve, 50));
      return new Response('ok\n');
    } } }));
  // Awaits the whole body before it answers, as a controller should.
  routes.add('awaited', new Route('/awaited', { methods: ['POST'], defaults: { _controller: async (request: Request) => new Response(`${(await request.text()).length}\n`) } }));
  // Its read begins once the answer is out: node:http has drained the body by then.
  routes.add('after', new Route('/after', { methods: ['POST'], defaults: { _controller: (request: Request) => {
    reads.push(new Promise((resolve) => setTimeout(() => resolve(outcomeOf(request.text())), 100)));
    return new Response('ok\n');
  } } }));
  return startTestServer({ kernel: { routes, env: 'prod', debug: false } });
}

for (const scheme of SCHEMES) {
  const test = suite(`a request body read in the background over ${scheme}`);
  const reads: Array<Promise<Outcome>> = [];
  let server: TestServer;

  test.before(async () => {
    server = await serverReadingInBackground(reads);
  });
  test.before.each(() => void (reads.length = 0));
  test.after(async () => server.close());

  test('a read of text() rejects when the client leaves mid-body after the response', async () => {
    // Half a body; the client leaves 300 ms on, the response read.
    const answer = await sendRaw(server, scheme, HALF_A_BODY('/text'), { waitMs: 300 });
    assert.is(rawStatus(answer), 200);
    assertCutAfterAnswer(await settlement(reads[0]));
  });

  test('a read of json() rejects when the client leaves mid-body after the response', async () => {
    const answer = await sendRaw(server, scheme, HALF_A_BODY('/json'), { waitMs: 300 });
    assert.is(rawStatus(answer), 200);
    assertCutAfterAnswer(await settlement(reads[0]));
  });

  test('a read begun after the answer, of a body that came whole, rejects saying it was read too late, not resolving empty', async () => {
    const answer = await sendRaw(server, scheme, `POST /after HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 10\r\nConnection: close\r\n\r\n0123456789`, { waitMs: 300 });
    assert.is(rawStatus(answer), 200);
    const outcome = await settlement(reads[0]);
    assert.is(outcome.state, 'rejected', 'the late read does not pass for the body');
    assert.match(outcome.error?.message ?? '', /^The request body is read after the response was sent: node:http discards a body nobody reads once the answer is out/);
  });

  test('a read begun after the answer of a request that declares no body (Content-Length: 00) resolves empty', async () => {
    const answer = await sendRaw(server, scheme, `POST /after HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 00\r\nConnection: close\r\n\r\n`, { waitMs: 300 });
    assert.is(rawStatus(answer), 200);
    assert.is((await settlement(reads[0])).state, 'resolved', 'no body was declared: there is nothing it could have lost');
  });

  test('a read begun before the answer rejects when the server closes the connection after it', async () => {
    // The client stays (up to 5 s): the server closes the connection, Connection: close, its body half read.
    const answer = await sendRaw(server, scheme, HALF_A_BODY('/later'), { waitMs: SETTLE_WAIT_MS });
    assert.is(rawStatus(answer), 200);
    assert.match(answer, /\r\nConnection: close\r\n/i);
    assertCutAfterAnswer(await settlement(reads[0]));
  });

  test('a kept connection whose bodies come in two parts, read before each answer, gathers no listener per request', async () => {
    const sockets: net.Socket[] = [];
    for (const listening of server.running.servers) listening.on(scheme === 'https' ? 'secureConnection' : 'connection', (socket: net.Socket) => sockets.push(socket));
    const port = Number(new URL(server.urls[scheme]).port);
    const client = scheme === 'https' ? tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] }) : net.connect(port, '127.0.0.1');
    await new Promise((resolve) => client.once(scheme === 'https' ? 'secureConnect' : 'connect', resolve));
    let received = '';
    client.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const closeListeners: number[] = [];
    try {
      for (let i = 1; i <= 12; i++) {
        // The rest of the body comes after the read has begun: the request is not complete when it starts.
        client.write('POST /awaited HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\n01234');
        await new Promise((resolve) => setTimeout(resolve, 20));
        client.write('56789');
        for (let wait = 0; wait < 250 && (received.match(/HTTP\/1\.1 200/g) ?? []).length < i; wait++) await new Promise((resolve) => setTimeout(resolve, 20));
        await new Promise((resolve) => setTimeout(resolve, 20));
        closeListeners.push(sockets[0]?.listenerCount('close') ?? -1);
      }
    } finally {
      client.destroy();
    }
    assert.is((received.match(/HTTP\/1\.1 200/g) ?? []).length, 12, 'every request answered on the one connection');
    assert.is(closeListeners.at(-1), closeListeners[0], `the socket's close listeners stay as after the first request (${closeListeners.join(', ')})`);
  });

  test.run();

  const closing = suite(`a request body read in the background when the server closes, over ${scheme}`);

  closing('the server closing the kept connection after the response fails the read, and neither close() waits for it', async () => {
    const closingReads: Array<Promise<Outcome>> = [];
    const closingServer = await serverReadingInBackground(closingReads);
    // The answer goes before the body is read from: the connection is kept alive, its body still to come.
    const answer = sendRaw(closingServer, scheme, HALF_A_BODY('/text'), { waitMs: 3 * SETTLE_WAIT_MS });
    for (let i = 0; i < 250 && closingReads.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    let closed = false;
    const close = closingServer.close().then(() => void (closed = true));
    assertCutAfterAnswer(await settlement(closingReads[0]));
    for (let i = 0; i < SETTLE_WAIT_MS / 20 && !closed; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(closed, 'the server and the app have closed');
    await close;
    assert.is(rawStatus(await answer), 200);
  });

  closing.run();
}
