import { createReadStream } from 'node:fs';
import { PassThrough, Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { request as undiciRequest } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, NotFoundHttpError, Response, type Request, type TerminateEvent } from '../../kernel/index.js';
import type { LogEntry } from '../../lib/log/index.js';
import { MemoryStorage } from '../../lib/profiler/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, fetchFrom, header, savedProfile, startTestServer, type TestServer } from './harness.js';

/** Bigger than a response's 16 KiB write buffer: each chunk makes the body wait for the socket's 'drain'. */
const PADDING = '.'.repeat(64 * 1024);

for (const scheme of SCHEMES) {
  const test = suite(`request context of streamed bodies over ${scheme}`);
  let server: TestServer;

  /** The id query parameter of the request current now ('-' when none is). */
  const currentId = (): string => server.app.requestStack.getCurrentRequest()?.query.get('id') ?? '-';

  /** Three chunks, each written after a pause, logged, and naming the request current while it is read. */
  const feed = (request: Request): Response => {
    const id = request.query.get('id');
    async function* chunks() {
      for (let i = 0; i < 3; i++) {
        await sleep(1);
        server.app.logger.info('chunk {i} of {id}, read for {current}', { i, id, current: currentId() });
        yield `${currentId()};`;
        yield PADDING;
      }
    }
    return new Response(Readable.from(chunks()), 200, { 'content-type': 'text/plain' });
  };

  /** A body that fails after its first chunk: the client gets a cut answer, the log says why. */
  const broken = (): Response => {
    async function* chunks() {
      yield PADDING;
      await sleep(1);
      throw new Error(`disk gone under ${currentId()}`);
    }
    return new Response(Readable.from(chunks()), 200, { 'content-type': 'text/plain' });
  };

  /** A file that cannot be opened: its stream fails before any chunk, as it does when a controller streams a file that went missing. */
  const unopened = (): Response => new Response(createReadStream(`/nonexistent/${currentId()}.txt`), 200, { 'content-type': 'text/plain', 'content-disposition': 'attachment' });
  /** A generator that finds nothing before its first chunk: its HttpError is the answer. */
  const vanished = (): Response => {
    async function* chunks() {
      await sleep(1);
      throw new NotFoundHttpError(`No export for ${currentId()}.`);
    }
    return new Response(Readable.from(chunks()), 200, { 'content-type': 'text/csv' });
  };

  /** A body without end, which logs when it is stopped. */
  const endless = (): Response => {
    async function* chunks() {
      try {
        for (;;) {
          yield PADDING;
          await sleep(1);
        }
      } finally {
        server.app.logger.info('Stopped streaming to {current}', { current: currentId() });
      }
    }
    return new Response(Readable.from(chunks()), 200, { 'content-type': 'text/plain' });
  };

  /** A kernel.terminate listener that logs, as one sending queued mail would. */
  const mailer = {
    getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }),
    onTerminate(event: TerminateEvent): void {
      server.app.logger.notice('Mail sent for {id} with {current} current', { id: event.request.query.get('id'), current: currentId() });
    },
  };

  /** Streams of /listen, each ended when a request to /end comes: as a hub sending server events would. */
  const hub = new Set<PassThrough>();
  const listen = (): Response => {
    const stream = new PassThrough();
    hub.add(stream);
    stream.write('listening\n');
    return new Response(stream, 200, { 'content-type': 'text/plain' });
  };
  /** A long body that never emits 'close' (emitClose: false), and whose clean-up takes a moment: its request cannot wait for it. */
  const silent = (): Response => {
    let sent = 0;
    const stream = new Readable({
      emitClose: false,
      read() {
        setTimeout(() => this.push(sent++ < 10_000 ? PADDING : null), 1);
      },
      destroy(error, callback) {
        setTimeout(() => callback(error), 5);
      },
    });
    return new Response(stream, 200, { 'content-type': 'text/plain' });
  };
  /** A body whose clean-up takes a turn of the event loop and logs, as a database cursor's close would; a 204 with `?empty`. */
  const cursor = (request: Request): Response => {
    const stream = new Readable({
      read() {
        this.push('rows');
        this.push(null);
      },
      destroy(error, callback) {
        setImmediate(() => {
          server.app.logger.info('Closed the cursor of {current}', { current: currentId() });
          callback(error);
        });
      },
    });
    return new Response(stream, request.query.has('empty') ? 204 : 200, { 'content-type': 'text/plain' });
  };
  const end = (): Response => {
    for (const stream of hub) stream.end('bye\n');
    hub.clear();
    return new Response('ended');
  };

  /** `<request id> under <main request id>` for each kernel.terminate, as a listener that saves a session per main request sees it. */
  const terminated: string[] = [];
  const sessions = {
    getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }),
    onTerminate(event: TerminateEvent): void {
      const stack = server.app.requestStack;
      terminated.push(`${event.request.query.get('id')} under ${stack.getMainRequest()?.query.get('id') ?? '-'} (${stack.all().length})`);
    },
  };

  test.before(async () => {
    const routes = new RouteCollection()
      .add('feed', new Route('/feed', { defaults: { _controller: feed } }))
      .add('broken', new Route('/broken', { defaults: { _controller: broken } }))
      .add('endless', new Route('/endless', { defaults: { _controller: endless } }))
      .add('unopened', new Route('/unopened', { defaults: { _controller: unopened } }))
      .add('vanished', new Route('/vanished', { defaults: { _controller: vanished } }))
      .add('listen', new Route('/listen', { defaults: { _controller: listen } }))
      .add('end', new Route('/end', { defaults: { _controller: end } }))
      .add('silent', new Route('/silent', { defaults: { _controller: silent } }))
      .add('cursor', new Route('/cursor', { defaults: { _controller: cursor } }))
      .add('text', new Route('/text', { defaults: { _controller: (request: Request) => new Response(`text for ${request.query.get('id')}`) } }));
    server = await startTestServer({ kernel: { env: 'staging', debug: true, routes, subscribers: [mailer, sessions] } });
  });
  test.after(async () => server.close());

  /** The logger panel's records of a saved profile, read as a tool does: its JSON at /_profiler/<token>. */
  async function profileLogs(token: string): Promise<Array<{ message: string; levelName: string }>> {
    await savedProfile(server, token);
    const page = await fetchFrom(server, scheme, `/_profiler/${token}`, { headers: { accept: 'application/json' } });
    assert.is(page.status, 200);
    return JSON.parse(page.body).collectors.logger.logs;
  }

  test('a streamed body reads with its request current, and what it logs is in that request\'s profile', async () => {
    const response = await fetchFrom(server, scheme, '/feed?id=solo');
    assert.is(response.status, 200);
    assert.is(response.body.replaceAll('.', ''), 'solo;solo;solo;');
    const messages = (await profileLogs(header(response.headers['x-debug-token']))).map((record) => record.message);
    for (let i = 0; i < 3; i++) assert.ok(messages.includes(`chunk ${i} of solo, read for solo`), `chunk ${i} in ${JSON.stringify(messages)}`);
  });

  test('kernel.terminate listeners run with their request current, once a stream has ended: their records are in the profile, after the stream\'s', async () => {
    const streamed = await fetchFrom(server, scheme, '/feed?id=mail');
    const messages = (await profileLogs(header(streamed.headers['x-debug-token']))).map((record) => record.message);
    assert.equal(messages.slice(-4), ['chunk 0 of mail, read for mail', 'chunk 1 of mail, read for mail', 'chunk 2 of mail, read for mail', 'Mail sent for mail with mail current']);
    const text = await fetchFrom(server, scheme, '/text?id=plain');
    assert.is(text.body, 'text for plain');
    const textMessages = (await profileLogs(header(text.headers['x-debug-token']))).map((record) => record.message);
    assert.equal(textMessages.slice(-1), ['Mail sent for plain with plain current']);
  });

  test('50 concurrent streamed requests: each body and each profile hold only their own request', async () => {
    const ids = Array.from({ length: 50 }, (_, i) => `c${i}`);
    const responses = await Promise.all(ids.map((id) => fetchFrom(server, scheme, `/feed?id=${id}`)));
    for (const [i, response] of responses.entries()) assert.is(response.body.replaceAll('.', ''), `${ids[i]};`.repeat(3));
    for (const [i, response] of responses.entries()) {
      const messages = (await profileLogs(header(response.headers['x-debug-token']))).map((record) => record.message).filter((message) => !message.startsWith('Matched route'));
      assert.equal(messages, [...[0, 1, 2].map((n) => `chunk ${n} of ${ids[i]}, read for ${ids[i]}`), `Mail sent for ${ids[i]} with ${ids[i]} current`]);
    }
  });

  test('a stream ended by another client\'s request terminates with its own request as the main request, alone on the stack', async () => {
    const listening = await undiciRequest(`${server.urls[scheme]}/listen?id=hub-${scheme}`, { dispatcher: server.agent });
    const body = listening.body.text();
    // The stream is in the hub once its head has come.
    assert.is(listening.statusCode, 200);
    const ended = await fetchFrom(server, scheme, `/end?id=ender-${scheme}`);
    assert.is(ended.body, 'ended');
    assert.is(await body, 'listening\nbye\n');
    await savedProfile(server, header(listening.headers['x-debug-token']));
    assert.equal(terminated.filter((line) => line.startsWith(`hub-${scheme} `)), [`hub-${scheme} under hub-${scheme} (1)`]);
  });

  test('a stream body never sent (a HEAD\'s, a 204\'s) is destroyed, and what its clean-up logs is in its request\'s profile, before kernel.terminate', async () => {
    for (const [method, query, id, status] of [['HEAD', 'id=head', 'head', 200], ['GET', 'id=empty&empty', 'empty', 204]] as const) {
      const response = await fetchFrom(server, scheme, `/cursor?${query}`, { method });
      assert.is(response.status, status);
      assert.is(response.body, '');
      const messages = (await profileLogs(header(response.headers['x-debug-token']))).map((record) => record.message);
      assert.equal(messages.slice(-2), [`Closed the cursor of ${id}`, `Mail sent for ${id} with ${id} current`], method);
    }
  });

  test('a streamed body that fails half-way: its failure is logged in its request\'s profile', async () => {
    const response = await fetchFrom(server, scheme, '/broken?id=cut').catch((error: Error) => error);
    // The head went out before the failure: the client sees the answer cut.
    assert.instance(response, Error);
    const token = await latestToken('/broken?id=cut');
    const failures = (await profileLogs(token)).filter((record) => record.levelName === 'CRITICAL');
    assert.equal(failures.map((record) => record.message), ['The response body stream failed: Error: disk gone under cut']);
  });

  test('a streamed body that fails before its first chunk: nothing was sent, so the client gets the error page, and the profile its status and error', async () => {
    const response = await fetchFrom(server, scheme, '/unopened?id=lost', { headers: { accept: 'text/html' } });
    assert.is(response.status, 500);
    assert.match(String(response.headers['content-type']), /^text\/html/);
    // None of the failed answer's headers is left on the page.
    assert.is(response.headers['content-disposition'], undefined);
    assert.ok(response.body.includes('ENOENT: no such file or directory'), 'the error is on the page');
    const token = header(response.headers['x-debug-token']);
    const profile = await savedProfile(server, token);
    assert.is(profile.status, 500);
    assert.match(profile.collectors.exception.exceptions[0].message, /ENOENT: no such file or directory, open '\/nonexistent\/lost\.txt'/);
    const critical = (await profileLogs(token)).filter((record) => record.levelName === 'CRITICAL');
    assert.equal(critical.length, 1, JSON.stringify(critical));
  });

  test('a streamed body whose HttpError comes before its first chunk answers with that error\'s status', async () => {
    const response = await fetchFrom(server, scheme, '/vanished?id=nov', { headers: { accept: 'application/json' } });
    assert.is(response.status, 404);
    assert.is(JSON.parse(response.body).detail, 'No export for nov.');
    // The connection stays usable: the error page is a whole answer.
    const next = await fetchFrom(server, scheme, '/text?id=after');
    assert.is(next.body, 'text for after');
  });

  test('a client that leaves mid-stream: the request terminates (its profile is saved) once the body\'s clean-up has run, which logs in its request and its profile', async () => {
    const stops: LogEntry[] = [];
    const onLog = (entry: LogEntry): void => void (entry.record.message.startsWith('Stopped streaming') && stops.push(entry));
    server.app.bus.on('log', onLog);
    try {
      const response = await undiciRequest(`${server.urls[scheme]}/endless?id=gone`, { dispatcher: server.agent });
      assert.is(response.statusCode, 200);
      for await (const _chunk of response.body) break;
      assert.is((await savedProfile(server, header(response.headers['x-debug-token']))).status, 200);
      for (let i = 0; i < 100 && stops.length === 0; i++) await sleep(20);
      assert.equal(stops.map(({ record }) => record.message), ['Stopped streaming to gone']);
      assert.is((stops[0]!.request as Request).query.get('id'), 'gone');
      // The request terminates once the body has closed, its clean-up done: the record is in the profile too.
      const logs = await profileLogs(header(response.headers['x-debug-token']));
      assert.ok(logs.some((record) => record.message === 'Stopped streaming to gone'), JSON.stringify(logs.map((record) => record.message)));
    } finally {
      server.app.bus.off('log', onLog);
    }
  });

  test('a client that leaves a body that never reports closing: the request terminates all the same', async () => {
    const response = await undiciRequest(`${server.urls[scheme]}/silent?id=silent`, { dispatcher: server.agent });
    assert.is(response.statusCode, 200);
    for await (const _chunk of response.body) break;
    // Saved once the request has terminated, well within the bound a body that hangs in its clean-up gets.
    assert.is((await savedProfile(server, header(response.headers['x-debug-token']))).status, 200);
    assert.ok(terminated.includes('silent under silent (1)'), JSON.stringify(terminated));
  });

  test('a stream cut by the shutdown terminates before app.close() resolves, which saves its profile', async () => {
    const events: string[] = [];
    const storage = new MemoryStorage();
    const recorder = {
      getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }),
      onTerminate: (event: TerminateEvent): void => void events.push(`terminate ${event.request.path}`),
    };
    async function* forever() {
      for (;;) {
        yield PADDING;
        await sleep(1);
      }
    }
    const routes = new RouteCollection().add('endless', new Route('/endless', { defaults: { _controller: () => new Response(Readable.from(forever())) } }));
    // A grace period shorter than the stream: the connection is cut.
    const own = await startTestServer({ kernel: { env: 'staging', debug: true, routes, subscribers: [recorder], profiler: { storage } }, limits: { shutdownTimeout: 50 } });
    const response = await undiciRequest(`${own.urls[scheme]}/endless`, { dispatcher: own.agent });
    const token = header(response.headers['x-debug-token']);
    response.body.on('error', () => {}).resume();
    await own.running.close();
    events.push('servers closed');
    await own.app.close();
    events.push('app closed');
    await own.agent.destroy();
    // The body's clean-up may end after the servers report closed; app.close() waits for it, then saves.
    assert.equal(events.filter((event) => event !== 'servers closed'), ['terminate /endless', 'app closed']);
    assert.is((await storage.read(token))?.status, 200);
  });

  /** The token of the latest profile of a URL ending with `path` (a cut answer's headers are not read). */
  async function latestToken(path: string): Promise<string> {
    for (let i = 0; i < 100; i++) {
      const found = await server.app.profiler!.storage.find({ url: path, limit: 1 });
      if (found.length > 0) return found[0]!.token;
      await sleep(20);
    }
    throw new Error(`no profile of ${path} within 2 s`);
  }

  test.run();
}
