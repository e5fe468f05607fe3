// Which request's profile a log record lands in, under the async patterns of real applications, with
// concurrent requests on a real server: work the kernel starts (request.signal aborted by the client
// leaving), resources shared by every request (an emitter, a keep-alive socket, a coalescing cache,
// a timer started at boot), sub-requests, kernel.terminate and what comes after the profile.
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { PassThrough } from 'node:stream';
import { setTimeout as wait } from 'node:timers/promises';
import { request as undiciRequest } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, RequestType, Response, type Controller, type Request, type TerminateEvent } from '../../kernel/index.js';
import { attachStderrSink, type LogEntry } from '../../lib/log/index.js';
import { SCHEMES, fetchFrom, header, routesOf, startTestServer, until, type TestServer } from './harness.js';

/** How many requests each pattern runs at once. */
const CONCURRENT = 20;

for (const scheme of SCHEMES) {
  const test = suite(`log records under async patterns, attributed by profile, over ${scheme}`);
  let server: TestServer;
  let echo: net.Server;
  let socket: net.Socket;
  let tick: NodeJS.Timeout;
  const stderr: string[] = [];
  const entries: LogEntry[] = [];
  const onLog = (entry: LogEntry): void => void entries.push(entry);
  /** The token of each request that reached kernel.terminate, by its `id` (a client gone gets no header to read it from). */
  const tokens = new Map<string, string>();
  /** Controllers that have started waiting, by `id`. */
  const started = new Set<string>();

  const log = (message: string, context: Record<string, unknown>): void => server.app.logger.info(message, context);
  const idOf = (request: Request): string => request.query.get('id') ?? '-';

  // Made at start-up, outside any request, and used by all of them.
  const pubsub = new EventEmitter();
  pubsub.setMaxListeners(0);
  const subscribed = new Set<string>();
  const replies = new Map<string, () => void>();
  let loading: Promise<void> | null = null;
  let asking = 0;
  /**
   * A cache that coalesces the concurrent misses into one load: it runs in the first request's context.
   * The load ends once every request has asked (not after a delay, which a loaded machine outlasts).
   */
  const load = (id: string): Promise<void> => {
    asking++;
    return (loading ??= (async () => {
      await until(() => asking === CONCURRENT, 5_000, 'every request to ask the cache');
      log('cache loaded for {id}', { id });
    })().finally(() => {
      loading = null;
      asking = 0;
    }));
  };

  const controllers: Record<string, Controller> = {
    // Waits until its client leaves; what its abort listener logs belongs to it.
    '/wait': async (request: Request) => {
      const id = idOf(request);
      request.signal.addEventListener('abort', () => log('stopped waiting for {id}', { id }));
      started.add(id);
      await wait(10_000, undefined, { signal: request.signal });
      return new Response('waited');
    },
    // Subscribes to its own channel, then publishes on the next request's: the delivery runs in the publisher's context.
    '/pubsub': async (request: Request) => {
      const id = idOf(request);
      const delivered = new Promise<void>((resolve) => {
        pubsub.once(`to ${id}`, server.app.requestStack.bind(() => {
          log('message delivered to {id}', { id });
          resolve();
        }));
      });
      subscribed.add(id);
      // Published once the next request has subscribed: requests arrive one after the other.
      const next = String((Number(id) + 1) % CONCURRENT);
      await until(() => subscribed.has(next), 5_000, `request ${next} to subscribe`);
      pubsub.emit(`to ${next}`);
      await Promise.race([delivered, wait(5_000)]);
      return new Response('ok');
    },
    // Writes to a keep-alive socket made at start-up; its 'data' callback resolves the wait.
    '/socket': async (request: Request) => {
      const id = idOf(request);
      const replied = new Promise<void>((resolve) => replies.set(id, resolve));
      socket.write(`${id}\n`);
      await replied;
      log('reply read for {id}', { id });
      return new Response('ok');
    },
    '/cache': async (request: Request) => {
      await load(idOf(request));
      log('cache used for {id}', { id: idOf(request) });
      return new Response('ok');
    },
    // Three sub-requests at once, each logging in its own controller.
    '/subs': async (request: Request) => {
      const id = idOf(request);
      const sub = (n: number): Request =>
        request.duplicate({
          attributes: {
            _controller: async () => {
              await wait(5);
              log('sub-request {n} of {id}', { n, id });
              return new Response(String(n));
            },
          },
        });
      await Promise.all([1, 2, 3].map((n) => server.app.kernel.handle(sub(n), RequestType.SUB)));
      log('main request {id} after its sub-requests', { id });
      return new Response('ok');
    },
    // A timer that fires once the profile has been taken.
    '/late': (request: Request) => {
      const id = idOf(request);
      setTimeout(() => log('late timer of {id}', { id }), 300);
      return new Response('ok');
    },
  };

  const terminateRecorder = {
    getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }),
    onTerminate(event: TerminateEvent): void {
      const id = idOf(event.request);
      tokens.set(`${event.request.path}?id=${id}`, event.response.getHeader('x-debug-token') ?? '');
      if (event.request.path === '/late') log('terminated {id}', { id });
    },
  };

  test.before(async () => {
    echo = net.createServer((connection) => connection.pipe(connection));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    socket = net.connect((echo.address() as net.AddressInfo).port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
      for (let end = received.indexOf('\n'); end !== -1; end = received.indexOf('\n')) {
        const id = received.slice(0, end);
        received = received.slice(end + 1);
        log('socket data for {id}', { id });
        replies.get(id)?.();
        replies.delete(id);
      }
    });
    server = await startTestServer({ kernel: { debug: true, routes: routesOf(controllers), subscribers: [terminateRecorder] } });
    server.app.bus.on('log', onLog);
    const stream = new PassThrough();
    stream.on('data', (line: Buffer) => void stderr.push(...line.toString().split('\n').filter(Boolean)));
    attachStderrSink(server.app.bus, { stream: stream as unknown as NodeJS.WritableStream, json: true, level: 'info', describeRequest: server.app.describeRequest });
    tick = setInterval(() => log('tick of the process', {}), 10);
  });
  test.after(async () => {
    clearInterval(tick);
    server.app.bus.off('log', onLog);
    socket.destroy();
    echo.close();
    await server.close();
  });

  /** The messages of a request's profile, read as a client reads it (Accept: application/json). */
  const profileMessages = async (token: string): Promise<string[]> => {
    let response = await fetchFrom(server, scheme, `/_profiler/${token}`, { headers: { accept: 'application/json' } });
    for (let i = 0; i < 100 && response.status === 404; i++) {
      await wait(20);
      response = await fetchFrom(server, scheme, `/_profiler/${token}`, { headers: { accept: 'application/json' } });
    }
    assert.is(response.status, 200, `profile ${token}`);
    return JSON.parse(response.body).collectors.logger.logs.map((record: { message: string }) => record.message);
  };

  /** Requests `path?id=0...` at once; the messages of each profile, by id. */
  const concurrently = async (path: string): Promise<string[][]> => {
    const responses = await Promise.all(Array.from({ length: CONCURRENT }, (_, id) => fetchFrom(server, scheme, `${path}?id=${id}`)));
    return Promise.all(responses.map((response) => profileMessages(header(response.headers['x-debug-token']))));
  };

  /** The ids a profile's messages name after `for`, `of` or `to` (never another request's). */
  const idsIn = (messages: string[]): string[] => messages.flatMap((message) => [...message.matchAll(/\b(?:for|of|to|request) (\d+)\b/g)].map((match) => match[1]!));

  test('request.signal aborted by the client leaving: what its abort listener logs is in the request\'s own profile', async () => {
    const clients = Array.from({ length: CONCURRENT }, () => new AbortController());
    const pending = clients.map((client, id) =>
      undiciRequest(`${server.urls[scheme]}/wait?id=${scheme}-${id}`, { dispatcher: server.agent, signal: client.signal }).then(
        () => 'answered',
        () => 'gone',
      ),
    );
    await until(() => clients.every((_, id) => started.has(`${scheme}-${id}`)), 5_000, 'every controller to start waiting');
    for (const client of clients) client.abort();
    assert.ok((await Promise.all(pending)).every((outcome) => outcome === 'gone'));
    await until(() => clients.every((_, id) => tokens.has(`/wait?id=${scheme}-${id}`)), 5_000, 'kernel.terminate of each');
    for (let id = 0; id < CONCURRENT; id++) {
      const messages = await profileMessages(tokens.get(`/wait?id=${scheme}-${id}`)!);
      assert.ok(messages.includes(`stopped waiting for ${scheme}-${id}`), `profile ${id}: ${messages.join(' | ')}`);
      assert.ok(messages.every((message) => !/stopped waiting/.test(message) || message === `stopped waiting for ${scheme}-${id}`), `profile ${id}: ${messages.join(' | ')}`);
    }
  });

  test('a listener of an emitter shared by every request, bound with requestStack.bind() where it subscribes: in its subscriber\'s profile, not the publisher\'s', async () => {
    const profiles = await concurrently('/pubsub');
    profiles.forEach((messages, id) => {
      assert.ok(messages.includes(`message delivered to ${id}`), `profile ${id}: ${messages.join(' | ')}`);
      assert.equal(idsIn(messages), [String(id)], `profile ${id}: ${messages.join(' | ')}`);
    });
  });

  test('a keep-alive socket made at start-up: its \'data\' callback logs for no request, the request awaiting the reply for itself', async () => {
    entries.length = 0;
    const profiles = await concurrently('/socket');
    profiles.forEach((messages, id) => {
      assert.equal(idsIn(messages), [String(id)], `profile ${id}: ${messages.join(' | ')}`);
      assert.ok(messages.includes(`reply read for ${id}`));
    });
    const data = entries.filter(({ record }) => record.message.startsWith('socket data for'));
    assert.is(data.length, CONCURRENT);
    assert.ok(data.every(({ request }) => request === undefined));
  });

  test('a cache that coalesces concurrent misses: its one load logs in the profile of the request that started it, each use in its own', async () => {
    const profiles = await concurrently('/cache');
    const loads = profiles.filter((messages) => messages.some((message) => message.startsWith('cache loaded')));
    assert.is(loads.length, 1, 'one load, in one profile');
    profiles.forEach((messages, id) => assert.ok(messages.includes(`cache used for ${id}`), `profile ${id}`));
    const loader = profiles.findIndex((messages) => messages.some((message) => message.startsWith('cache loaded')));
    assert.ok(profiles[loader]!.includes(`cache loaded for ${loader}`), 'the load is the starting request\'s');
  });

  test('concurrent sub-requests: each one\'s records in its own profile, a child of the main one, the main request\'s in its own', async () => {
    const responses = await Promise.all(Array.from({ length: CONCURRENT }, (_, id) => fetchFrom(server, scheme, `/subs?id=${id}`)));
    for (const [id, response] of responses.entries()) {
      const token = header(response.headers['x-debug-token']);
      assert.equal(await profileMessages(token), ['Matched route "subs".', `main request ${id} after its sub-requests`]);
      const children: string[] = JSON.parse((await fetchFrom(server, scheme, `/_profiler/${token}`, { headers: { accept: 'application/json' } })).body).children;
      const subs = (await Promise.all(children.map(profileMessages))).map((messages) => messages.join(' | ')).sort();
      assert.equal(subs, [1, 2, 3].map((n) => `sub-request ${n} of ${id}`));
    }
  });

  test('kernel.terminate\'s records are in the profile; a timer firing once it is taken carries its request (the stderr line names its token) and is in no profile', async () => {
    entries.length = 0;
    const response = await fetchFrom(server, scheme, '/late?id=7');
    const token = header(response.headers['x-debug-token']);
    await until(() => entries.some(({ record }) => record.message === 'late timer of 7'), 5_000, 'the late timer');
    assert.equal(await profileMessages(token), ['Matched route "late".', 'terminated 7']);
    assert.is((entries.find(({ record }) => record.message === 'late timer of 7')!.request as Request | undefined)?.path, '/late');
    await until(() => stderr.some((line) => line.includes('late timer of 7')), 5_000, 'the stderr line');
    assert.match(stderr.find((line) => line.includes('late timer of 7'))!, `"token":"${token}"`);
  });

  test('a timer started at boot logs while requests are in flight: in no profile, on stderr without a request', async () => {
    const profiles = await concurrently('/cache');
    for (const messages of profiles) assert.not.ok(messages.includes('tick of the process'), messages.join(' | '));
    const ticks = stderr.filter((line) => line.includes('tick of the process'));
    assert.ok(ticks.length > 0);
    assert.ok(ticks.every((line) => !line.includes('"request"')), ticks[0]);
  });

  test.run();
}
