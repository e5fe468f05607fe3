// send(): the exported function that writes a kernel Response onto a node:http response, for
// embedders with a server of their own. A real node:http server on 127.0.0.1:0, undici as client.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ControllerResolver, EventDispatcher, HttpKernel, KernelEvents, Request, Response, type ResponseEvent } from '../../../kernel/index.js';
import type { Logger } from '../../../lib/log/index.js';
import { send } from '../../../lib/server/index.js';

/** What a raw connection to `base` receives for `writes` (each after `gapMs`), until the server closes it or `ms` pass; and whether it closed. */
async function exchange(base: string, writes: string[], gapMs = 50, ms = 1_000): Promise<{ received: string; closed: boolean }> {
  const socket = connect(Number(new URL(base).port), '127.0.0.1');
  socket.on('error', () => {});
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  const closed = new Promise<boolean>((resolve) => socket.once('close', () => resolve(true)));
  await new Promise((resolve) => socket.once('connect', resolve));
  for (const [index, data] of writes.entries()) {
    if (index > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    socket.write(data);
  }
  const result = await Promise.race([closed, new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);
  socket.destroy();
  return { received, closed: result };
}

/** A stream that records whether it was read and destroyed. */
function watchedStream(): { body: Readable; reads: number; destroyed: boolean } {
  const watched = {
    reads: 0,
    destroyed: false,
    body: new Readable({
      read() {
        watched.reads++;
        this.push('x');
        this.push(null);
      },
      destroy(error, callback) {
        watched.destroyed = true;
        callback(error);
      },
    }),
  };
  return watched;
}

async function serving(handler: (req: IncomingMessage, res: ServerResponse) => void, body: (base: string) => Promise<void>): Promise<void> {
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await body(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

test('send() writes text with its length, a stream chunked then calls onBodyEnd, and HEAD gets the headers only', async () => {
  const ends: string[] = [];
  const returned: Record<string, boolean> = {};
  await serving((req, res) => {
    const response = req.url === '/stream'
      ? new Response(Readable.from(['a', 'bb', 'ccc']), 200, { 'content-type': 'text/plain' })
      : new Response('hello', 201, { 'content-type': 'text/plain', 'x-extra': 'yes' });
    returned[`${req.method} ${req.url}`] = send(req, res, response, undefined, () => ends.push(req.url!));
  }, async (base) => {
    const text = await request(`${base}/text`);
    assert.is(text.statusCode, 201);
    assert.is(text.headers['content-length'], '5');
    assert.is(text.headers['x-extra'], 'yes');
    assert.is(await text.body.text(), 'hello');

    const stream = await request(`${base}/stream`);
    assert.is(stream.headers['transfer-encoding'], 'chunked');
    assert.is(await stream.body.text(), 'abbccc');

    const head = await request(`${base}/text`, { method: 'HEAD' });
    assert.is(head.headers['content-length'], '5');
    assert.is(await head.body.text(), '');
  });
  assert.equal(returned, { 'GET /text': false, 'GET /stream': true, 'HEAD /text': false });
  assert.equal(ends, ['/stream'], 'onBodyEnd only for the stream, once it ended');
});

test('send() throws before writing anything for what cannot be sent, so the caller can still answer', async () => {
  const thrown: string[] = [];
  await serving((req, res) => {
    try {
      send(req, res, new Response('', 103));
    } catch (error) {
      thrown.push((error as Error).constructor.name);
      res.writeHead(500, { 'content-type': 'text/plain' }).end('could not send');
    }
  }, async (base) => {
    const answer = await request(`${base}/`);
    assert.is(answer.statusCode, 500);
    assert.is(await answer.body.text(), 'could not send');
  });
  assert.is(thrown.length, 1);
});

test('stream responses queued behind others on a connection (pipelined) that closes first: each body is destroyed and its onBodyEnd called, and nothing is logged as a failure', async () => {
  let destroyed = 0;
  const ends: string[] = [];
  const logged: string[] = [];
  const logger = { critical: (message: string, context: { message: string }) => void logged.push(message.replace('{message}', context.message)) } as unknown as Logger;
  await serving((req, res) => {
    // Endless: the first answer never finishes, so the ones after it stay queued without a socket.
    const body = new Readable({
      read() {
        setTimeout(() => this.push('x'.repeat(1024)), 5);
      },
      destroy(error, callback) {
        destroyed++;
        callback(error);
      },
    });
    send(req, res, new Response(body, 200, { 'content-type': 'text/plain' }), logger, () => ends.push(req.url!));
  }, async (base) => {
    const { port } = new URL(base);
    const socket = connect(Number(port), '127.0.0.1');
    socket.on('error', () => {});
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(['/1', '/2', '/3', '/4', '/5'].map((path) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`).join(''));
    await new Promise((resolve) => setTimeout(resolve, 200));
    socket.destroy();
    const deadline = Date.now() + 3_000;
    while (ends.length < 5 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  });
  assert.is(destroyed, 5, 'every body destroyed, the four queued ones too');
  assert.equal([...ends].sort(), ['/1', '/2', '/3', '/4', '/5']);
  assert.equal(logged, [], 'a client leaving is no failure of the body: neither the cut one nor the queued ones');
});

test('a stream body that does not destroy itself (autoDestroy: false) ends its request when it ends, not 5 s later for a close that never comes', async () => {
  let endedAt = 0;
  let sentAt = 0;
  await serving((req, res) => {
    const body = new Readable({
      autoDestroy: false,
      read() {
        this.push('x');
        this.push(null);
      },
    });
    send(req, res, new Response(body), undefined, () => (endedAt = Date.now()));
  }, async (base) => {
    const answer = await request(`${base}/`);
    assert.is(await answer.body.text(), 'x');
    sentAt = Date.now();
    const deadline = Date.now() + 6_000;
    while (endedAt === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  });
  assert.ok(endedAt > 0 && endedAt - sentAt < 1_000, `onBodyEnd came ${endedAt - sentAt} ms after the answer`);
});

test('a stream that fails before its first chunk: its head was never written, so the client gets a bare 500, whole, and onBodyEnd is called once', async () => {
  const ends: string[] = [];
  const logged: string[] = [];
  const logger = { critical: (message: string, context: { message: string }) => void logged.push(message.replace('{message}', context.message)) } as unknown as Logger;
  await serving((req, res) => {
    async function* failing() {
      await new Promise((resolve) => setTimeout(resolve, 5));
      throw new Error('no such export');
    }
    send(req, res, new Response(Readable.from(failing()), 200, { 'content-type': 'text/csv', 'x-export': 'yes' }), logger, () => ends.push(req.url!));
  }, async (base) => {
    const answer = await request(`${base}/export`);
    assert.is(answer.statusCode, 500);
    assert.is(answer.headers['x-export'], undefined);
    assert.is(await answer.body.text(), 'Internal Server Error\n');
  });
  assert.equal(ends, ['/export']);
  assert.equal(logged, ['The response body stream failed: Error: no such export']);
});

test('an object-mode stream whose first chunk is no text nor bytes: its head was never written, so the client gets a bare 500, whole', async () => {
  const ends: string[] = [];
  const logged: string[] = [];
  const logger = { critical: (message: string, context: { message: string }) => void logged.push(message.replace('{message}', context.message)) } as unknown as Logger;
  await serving((req, res) => {
    send(req, res, new Response(Readable.from([{ id: 1 }]), 200, { 'content-type': 'text/csv', 'x-export': 'yes' }), logger, () => ends.push(req.url!));
  }, async (base) => {
    const answer = await request(`${base}/rows`);
    assert.is(answer.statusCode, 500);
    assert.is(answer.headers['x-export'], undefined);
    assert.is(await answer.body.text(), 'Internal Server Error\n');
  });
  assert.equal(ends, ['/rows']);
  assert.equal(logged.length, 1);
  assert.match(logged[0]!, 'The response body stream failed: TypeError: A response body stream gives text or bytes, not an object of type Object');
});

test('a stream body with a header node:http refuses: send() throws before anything is written, as for any other body', async () => {
  let destroyed = false;
  await serving((req, res) => {
    const body = new Readable({
      read() {
        this.push('late');
        this.push(null);
      },
      destroy: (error, callback) => ((destroyed = true), callback(error)),
    });
    try {
      send(req, res, new Response(body, 200, { 'x-note': 'one\r\ntwo' }));
    } catch (error) {
      body.destroy();
      res.writeHead(500, { 'content-type': 'text/plain' }).end((error as Error & { code: string }).code);
    }
  }, async (base) => {
    const answer = await request(`${base}/`);
    assert.is(answer.statusCode, 500);
    assert.is(await answer.body.text(), 'ERR_INVALID_CHAR');
  });
  assert.ok(destroyed);
});

test('a client that leaves while the head waits for the first chunk: the body is destroyed and onBodyEnd called', async () => {
  let destroyed = false;
  let ended = 0;
  let reached!: () => void;
  const waiting = new Promise<void>((resolve) => (reached = resolve));
  await serving((req, res) => {
    // A stream with nothing to say yet, as an event stream between events.
    const body = new Readable({ read() {}, destroy: (error, callback) => ((destroyed = true), callback(error)) });
    send(req, res, new Response(body), undefined, () => ended++);
    reached();
  }, async (base) => {
    const url = new URL(base);
    const socket = connect(Number(url.port), url.hostname, () => socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
    await waiting;
    socket.destroy();
    const deadline = Date.now() + 2_000;
    while (ended === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  });
  assert.ok(destroyed, 'the body is destroyed');
  assert.is(ended, 1);
});


test('an object-mode stream of large chunks, to a client that does not read: a few chunks are taken from it, not 16 more for the chunk check to hold', async () => {
  const CHUNK = 4 * 1024 * 1024;
  let produced = 0;
  await serving((req, res) => {
    async function* pieces() {
      for (;;) {
        produced++;
        yield Buffer.alloc(CHUNK, 98);
      }
    }
    send(req, res, new Response(Readable.from(pieces())));
  }, async (base) => {
    const socket = connect(Number(new URL(base).port), '127.0.0.1');
    socket.on('error', () => {});
    // Never read: once the socket's buffers are full, the source is read only as far as the pipe holds.
    socket.pause();
    socket.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n');
    let seen = -1;
    for (let i = 0; i < 50 && (produced === 0 || produced !== seen); i++) {
      seen = produced;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    socket.destroy();
  });
  assert.ok(produced <= 8, `${produced} chunks of 4 MiB taken from the source`);
});

test('send() to a response answered already, or queued on a connection that has closed, writes nothing and destroys a stream body', async () => {
  const results: Array<{ returned: boolean; destroyed: boolean }> = [];
  let sent!: () => void;
  const bothSent = new Promise<void>((resolve) => (sent = resolve));
  await serving((req, res) => {
    if (req.url === '/answered') {
      res.end('first');
      const watched = watchedStream();
      results.push({ returned: send(req, res, new Response(watched.body)), destroyed: watched.destroyed });
      return;
    }
    // /hold is never answered: /queued waits behind it without a socket, and is sent to once the connection has closed.
    if (req.url === '/queued') {
      req.socket.once('close', () => {
        const watched = watchedStream();
        let ended = 0;
        results.push({ returned: send(req, res, new Response(watched.body), undefined, () => ended++), destroyed: watched.destroyed });
        sent();
      });
    }
  }, async (base) => {
    const answered = await request(`${base}/answered`);
    assert.is(await answered.body.text(), 'first');
    const cut = await exchange(base, ['GET /hold HTTP/1.1\r\nHost: x\r\n\r\nGET /queued HTTP/1.1\r\nHost: x\r\n\r\n'], 0, 100);
    assert.is(cut.received, '');
    await bothSent;
  });
  assert.equal(results, [{ returned: false, destroyed: true }, { returned: false, destroyed: true }]);
});

test('a HEAD\'s stream body is destroyed unread; onBodyEnd, when given, follows its close', async () => {
  const seen: Record<string, { returned: boolean; reads: number; destroyed: boolean }> = {};
  let ends = 0;
  await serving((req, res) => {
    const watched = watchedStream();
    const returned = send(req, res, new Response(watched.body, 200, { 'content-type': 'text/plain' }), undefined, req.url === '/told' ? () => ends++ : undefined);
    seen[req.url!] = { returned, reads: watched.reads, destroyed: watched.destroyed };
  }, async (base) => {
    for (const path of ['/told', '/untold']) {
      const head = await request(`${base}${path}`, { method: 'HEAD' });
      assert.is(head.statusCode, 200);
      assert.is(await head.body.text(), '');
    }
    const deadline = Date.now() + 1_000;
    while (ends === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  });
  assert.equal(seen, { '/told': { returned: true, reads: 0, destroyed: true }, '/untold': { returned: false, reads: 0, destroyed: true } });
  assert.is(ends, 1);
});

/** A stream whose clean-up fails 5 ms after it is destroyed; `emitClose: false` keeps it from emitting 'close'. */
const failingInCleanUp = (what: string, emitClose = true): Readable => new Readable({ emitClose, read() {}, destroy: (_error, callback) => setTimeout(() => callback(new Error(`${what} failed`)), 5) });

/** A logger that keeps its ERROR lines, their message filled in. */
function errorLog(): { logger: Logger; logged: string[] } {
  const logged: string[] = [];
  return { logged, logger: { error: (message: string, context: { message: string }) => void logged.push(message.replace('{message}', context.message)) } as unknown as Logger };
}

test("without onBodyEnd, a kernel's answer to a HEAD whose stream body fails in its clean-up, or a 204's prepare() took, is logged once at ERROR, as the server logs it", async () => {
  const { logger, logged } = errorLog();
  const dispatcher = new EventDispatcher();
  // As the ResponseListener does: prepare() takes a 204's stream.
  dispatcher.addListener(KernelEvents.RESPONSE, (event: ResponseEvent) => void event.response.prepare(event.request));
  const kernel = new HttpKernel(dispatcher, new ControllerResolver());
  const controllers: Record<string, () => Response> = {
    '/export': () => new Response(failingInCleanUp('the export'), 200, { 'content-type': 'text/plain' }),
    '/quiet': () => new Response(failingInCleanUp('the quiet export', false), 200, { 'content-type': 'text/plain' }),
    '/empty': () => new Response(failingInCleanUp('the empty export'), 204),
  };
  const returned: Record<string, boolean> = {};
  await serving((req, res) => {
    const request = Request.fromIncomingMessage(req);
    request.attributes.set('_controller', controllers[req.url!]);
    void kernel.handle(request).then((response) => (returned[req.url!] = send(req, res, response, logger)));
  }, async (base) => {
    assert.is((await request(`${base}/export`, { method: 'HEAD' })).statusCode, 200);
    assert.is((await request(`${base}/quiet`, { method: 'HEAD' })).statusCode, 200);
    assert.is((await request(`${base}/empty`)).statusCode, 204);
    const deadline = Date.now() + 1_000;
    while (logged.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 20));
  });
  assert.equal(returned, { '/export': false, '/quiet': false, '/empty': false });
  assert.equal(logged.sort(), [
    'The response body stream, not sent, failed: Error: the empty export failed',
    'The response body stream, not sent, failed: Error: the export failed',
    'The response body stream, not sent, failed: Error: the quiet export failed',
  ]);
});

test("without onBodyEnd, a HEAD's stream body of a Response made by hand that fails in its clean-up is logged once at ERROR, and the process lives", async () => {
  const { logger, logged } = errorLog();
  await serving((req, res) => void send(req, res, new Response(failingInCleanUp('the hand-made export'), 200), logger), async (base) => {
    assert.is((await request(`${base}/`, { method: 'HEAD' })).statusCode, 200);
    const deadline = Date.now() + 1_000;
    while (logged.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  });
  assert.equal(logged, ['The response body stream, not sent, failed: Error: the hand-made export failed']);
});

test("with onBodyEnd, a HEAD's stream body of a Response made by hand that fails in its clean-up does not end the process: onBodyEnd follows it, its error in `errored`", async () => {
  const uncaught: unknown[] = [];
  const hear = (error: unknown): void => void uncaught.push(error);
  // Node ends the process on an 'error' nobody listens to: here it is kept, so that the test run lives to say so.
  process.on('uncaughtException', hear);
  const ended: Array<string | undefined> = [];
  try {
    await serving((req, res) => {
      const body = failingInCleanUp('the hand-made export');
      send(req, res, new Response(body, 200), undefined, () => void ended.push((body.errored as Error | null)?.message));
    }, async (base) => {
      assert.is((await request(`${base}/`, { method: 'HEAD' })).statusCode, 200);
      const deadline = Date.now() + 1_000;
      while (ended.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      await new Promise((resolve) => setTimeout(resolve, 20));
    });
  } finally {
    process.off('uncaughtException', hear);
  }
  assert.equal(uncaught.map((error) => (error as Error).message), []);
  assert.equal(ended, ['the hand-made export failed']);
});

test('a 204 whose stream prepare() dropped: onBodyEnd follows that stream\'s close; a response without a body never calls it', async () => {
  const returned: Record<string, boolean> = {};
  let ends = 0;
  let closed = false;
  await serving((req, res) => {
    if (req.url === '/none') {
      returned['/none'] = send(req, res, new Response(null, 200), undefined, () => ends++);
      return;
    }
    const watched = watchedStream();
    watched.body.once('close', () => (closed = true));
    const response = new Response(watched.body, 204).prepare(Request.fromIncomingMessage(req));
    returned['/dropped'] = send(req, res, response, undefined, () => {
      assert.ok(closed, 'after the stream closed');
      ends++;
    });
  }, async (base) => {
    const none = await request(`${base}/none`);
    assert.is(none.headers['content-length'], '0');
    await none.body.text();
    const dropped = await request(`${base}/dropped`);
    assert.is(dropped.statusCode, 204);
    await dropped.body.text();
    const deadline = Date.now() + 1_000;
    while (ends === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  });
  assert.equal(returned, { '/none': false, '/dropped': true });
  assert.is(ends, 1, 'once, for the dropped stream alone');
});

test('a request body left unread is drained on a kept connection, but one whose client awaits 100 Continue, never invited, closes it', async () => {
  const reply = (req: IncomingMessage, res: ServerResponse): void => void send(req, res, new Response(`${req.method} ${req.url}`));
  const server = createServer(reply);
  // A checkContinue listener of its own: node sends no 100 Continue, and the client may or may not send its body.
  server.on('checkContinue', reply);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const unread = await exchange(base, ['POST /unread HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n', 'abcdeGET /next HTTP/1.1\r\nHost: x\r\n\r\n'], 100, 500);
    assert.match(unread.received, /^HTTP\/1\.1 200 OK\r\n[^]*Connection: keep-alive\r\n[^]*POST \/unread/);
    assert.match(unread.received, 'GET /next', 'the body was drained and the next request answered');

    const waiting = await exchange(base, ['POST /continue HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n']);
    assert.match(waiting.received, /^HTTP\/1\.1 200 OK\r\n[^]*Connection: close\r\n[^]*POST \/continue$/);
    assert.ok(waiting.closed, 'closed after the answer');
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

test('a request body left unread after node sent 100 Continue itself is drained on a kept connection', async () => {
  await serving((req, res) => void send(req, res, new Response(`${req.method} ${req.url}`)), async (base) => {
    const invited = await exchange(base, ['POST /invited HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n', 'abcdeGET /next HTTP/1.1\r\nHost: x\r\n\r\n'], 100, 500);
    assert.match(invited.received, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n[^]*Connection: keep-alive\r\n[^]*POST \/invited/);
    assert.match(invited.received, 'GET /next', 'the body was drained and the next request answered');
  });
});

test('an HTTP/1.0 request that asks to keep its connection, without Transfer-Encoding, keeps it', async () => {
  await serving((req, res) => void send(req, res, new Response(`${req.url}`)), async (base) => {
    const kept = await exchange(base, ['GET /first HTTP/1.0\r\nConnection: keep-alive\r\n\r\n', 'GET /second HTTP/1.0\r\n\r\n'], 100, 1_000);
    assert.match(kept.received, /^HTTP\/1\.1 200 OK\r\n[^]*Connection: keep-alive\r\n[^]*\/first[^]*\/second$/);
    assert.ok(kept.closed, 'the second, which does not ask, closes it');
  });
});

test('a client that leaves while the head waits: nothing is logged, a clean-up that fails late is let go, and no onBodyEnd is needed', async () => {
  const logged: string[] = [];
  const logger = { critical: (message: string) => void logged.push(message) } as unknown as Logger;
  let ended = 0;
  let cleaned = 0;
  const left: Array<Promise<void>> = [];
  await serving((req, res) => {
    // Its clean-up fails after the fact, as a generator's destroyed while it awaits.
    const body = new Readable({
      read() {},
      destroy: (error, callback) => void setTimeout(() => ((cleaned++), callback(new Error('clean-up failed'))), 10),
    });
    left.push(new Promise((resolve) => body.once('close', () => resolve())));
    send(req, res, new Response(body), logger, req.url === '/told' ? () => ended++ : undefined);
  }, async (base) => {
    for (const path of ['/told', '/untold']) {
      const url = new URL(base);
      const socket = connect(Number(url.port), url.hostname, () => socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
      await new Promise((resolve) => setTimeout(resolve, 50));
      socket.destroy();
    }
    await Promise.race([Promise.all(left), new Promise((resolve) => setTimeout(resolve, 2_000))]);
    await new Promise((resolve) => setTimeout(resolve, 20));
  });
  assert.is(cleaned, 2, 'both bodies destroyed');
  assert.is(ended, 1);
  assert.equal(logged, [], 'a client leaving is no failure of the body');
});

test('without a logger or onBodyEnd, a stream failing before its first chunk still gets the bare 500, and one failing after it a cut connection', async () => {
  await serving((req, res) => {
    async function* failing(after: boolean) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (after) yield 'first';
      await new Promise((resolve) => setTimeout(resolve, 5));
      throw new Error('failed');
    }
    send(req, res, new Response(Readable.from(failing(req.url === '/after'))));
  }, async (base) => {
    const before = await request(`${base}/before`);
    assert.is(before.statusCode, 500);
    assert.is(await before.body.text(), 'Internal Server Error\n');
    const after = await request(`${base}/after`);
    assert.is(after.statusCode, 200);
    const cut = await after.body.text().then(() => false, () => true);
    assert.ok(cut, 'the body is cut, not ended as if whole');
  });
});

test('a stream body that failed before send() was called: its head never goes, the client gets the bare 500, and the failure is logged', async () => {
  const logged: string[] = [];
  const logger = { critical: (message: string, context: { message: string }) => void logged.push(message.replace('{message}', context.message)) } as unknown as Logger;
  await serving((req, res) => {
    const body = new Readable({ read() {} });
    body.on('error', () => {});
    body.destroy(new Error('gone bad'));
    send(req, res, new Response(body, 200, { 'x-export': 'yes' }), logger);
  }, async (base) => {
    const answer = await request(`${base}/`);
    assert.is(answer.statusCode, 500);
    assert.is(answer.headers['x-export'], undefined);
    assert.is(await answer.body.text(), 'Internal Server Error\n');
  });
  assert.equal(logged, ['The response body stream failed: Error: gone bad']);
});

test('a stream destroyed without an error before its first chunk, before send() or while its head waits: the bare 500, logged, and onBodyEnd called once', async () => {
  const ends: string[] = [];
  const logged: string[] = [];
  const logger = { critical: (message: string, context: { message: string }) => void logged.push(message.replace('{message}', context.message)) } as unknown as Logger;
  await serving((req, res) => {
    const body = new Readable({ read() {} });
    if (req.url === '/before') body.destroy();
    else setTimeout(() => body.destroy(), 10);
    send(req, res, new Response(body, 200, { 'x-export': 'yes' }), logger, () => ends.push(req.url!));
  }, async (base) => {
    for (const path of ['/before', '/waiting']) {
      const answer = await request(`${base}${path}`);
      assert.is(answer.statusCode, 500, path);
      assert.is(answer.headers['x-export'], undefined);
      assert.is(await answer.body.text(), 'Internal Server Error\n');
    }
  });
  assert.equal(ends, ['/before', '/waiting']);
  const message = 'The response body stream failed: ResponseBodyDestroyedError: The response body stream was destroyed before its first chunk was sent, without an error (an empty body ends with push(null)).';
  assert.equal(logged, [message, message]);
});

test('a stream destroyed without an error after its first chunk: the answer its head began is cut, and logged as the body\'s failure, not taken for the client leaving', async () => {
  const ends: string[] = [];
  const logged: string[] = [];
  const logger = { critical: (message: string, context: { message: string }) => void logged.push(message.replace('{message}', context.message)) } as unknown as Logger;
  await serving((req, res) => {
    const body = new Readable({ read() {} });
    body.push('first');
    setTimeout(() => body.destroy(), 10);
    send(req, res, new Response(body), logger, () => ends.push(req.url!));
  }, async (base) => {
    const answer = await request(`${base}/`);
    assert.is(answer.statusCode, 200);
    const cut = await answer.body.text().then(() => false, () => true);
    assert.ok(cut, 'the body is cut, not ended as if whole');
  });
  assert.equal(ends, ['/']);
  assert.equal(logged, ['The response body stream failed: ResponseBodyDestroyedError: The response body stream was destroyed before its end, without an error: the answer was cut after its head.']);
});

test('an object-mode stream partly read before send(): the chunk its check looks at is the next one waiting, not one read already', async () => {
  const logged: string[] = [];
  const logger = { critical: (message: string, context: { message: string }) => void logged.push(message.replace('{message}', context.message)) } as unknown as Logger;
  await serving((req, res) => {
    const body = new Readable({ objectMode: true, read() {} });
    body.push('read already');
    body.push({ id: 1 });
    body.push(null);
    assert.is(body.read(), 'read already');
    send(req, res, new Response(body), logger);
  }, async (base) => {
    const answer = await request(`${base}/`);
    assert.is(answer.statusCode, 500);
    assert.is(await answer.body.text(), 'Internal Server Error\n');
  });
  assert.equal(logged.length, 1);
  assert.match(logged[0]!, 'not an object of type Object');
});

test.run();
