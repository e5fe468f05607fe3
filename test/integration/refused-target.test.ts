// A request target the kernel refuses (`PATCH *`, `GET ftp://a.test/x`) is a 400 made on
// kernel.request at 256, over real sockets (raw ones: undici never sends such a target), and what
// runs after it (a kernel.terminate listener, the profiler) reads the request's path unharmed.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Response, type RequestEvent, type TerminateEvent } from '../../kernel/index.js';
import type { LogEntry, LogRecord } from '../../lib/log/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { SCHEMES, decodeEntities, rawStatus, savedProfile, sendRaw, startTestServer, type TestServer } from './harness.js';

const ASTERISK_MESSAGE = 'Invalid request target "*" for PATCH: "*" (asking about the server itself) is for OPTIONS only; name a path such as "/".';

/** Keeps the path of each request that reached kernel.terminate. */
function pathRecorder(): { paths: string[]; getSubscribedEvents(): Record<string, readonly [string, number]>; onTerminate(event: TerminateEvent): void } {
  return {
    paths: [],
    getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: ['onTerminate', 0] as const }),
    onTerminate(event: TerminateEvent): void {
      this.paths.push(event.request.path);
    },
  };
}

/** An application's listener below the request checks that answers every request asking for it, reading neither path nor host. */
const answerAll = {
  getSubscribedEvents: () => ({ [KernelEvents.REQUEST]: ['onRequest', 100] as const }),
  onRequest(event: RequestEvent): void {
    if (event.request.headers['x-answer-all'] !== undefined) event.setResponse(new Response('answered', 200));
  },
};

function tokenOf(answer: string): string {
  return /\r\nx-debug-token: ([0-9a-f]+)\r\n/i.exec(answer)?.[1] ?? '';
}

for (const scheme of SCHEMES) {
  const test = suite(`a refused request target, over ${scheme}`);
  const recorder = pathRecorder();
  const records: LogRecord[] = [];
  const listen = ({ record }: LogEntry): void => void records.push(record);
  let server: TestServer;

  test.before(async () => {
    const routes = new RouteCollection().add('home', new Route('/', { defaults: { _controller: () => new Response('home') } }));
    server = await startTestServer({ kernel: { debug: true, routes, subscribers: [recorder, answerAll] } });
    server.app.bus.on('log', listen);
  });
  test.after(async () => {
    server.app.bus.off('log', listen);
    await server.close();
  });
  test.before.each(() => {
    recorder.paths.length = 0;
    records.length = 0;
  });

  /** Waits (bounded) until kernel.terminate ran for `count` requests. */
  async function terminated(count: number): Promise<void> {
    for (let i = 0; i < 100 && recorder.paths.length < count; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  test('PATCH * is a 400 with the same page; a kernel.terminate listener reads its path ("*"), nothing is logged as CRITICAL, the profiler records it', async () => {
    const answer = await sendRaw(server, scheme, 'PATCH * HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    assert.is(rawStatus(answer), 400, answer.slice(0, 300));
    assert.is(decodeURIComponent(/\r\nx-debug-exception: (.*)\r\n/i.exec(answer)?.[1] ?? ''), ASTERISK_MESSAGE);
    assert.ok(decodeEntities(answer).includes(ASTERISK_MESSAGE), 'the page says what is wrong');
    await terminated(1);
    assert.equal(recorder.paths, ['*']);
    const profile = await savedProfile(server, tokenOf(answer));
    assert.is(profile.method, 'PATCH');
    assert.is(profile.status, 400);
    assert.equal(records.filter((record) => record.levelName === 'CRITICAL').map((record) => record.message), []);
  });

  test('PATCH * as problem+json names the target as its instance', async () => {
    const answer = await sendRaw(server, scheme, 'PATCH * HTTP/1.1\r\nHost: localhost\r\nAccept: application/json\r\nConnection: close\r\n\r\n');
    assert.is(rawStatus(answer), 400);
    const problem = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));
    assert.is(problem.detail, ASTERISK_MESSAGE);
    assert.is(problem.instance, '*');
  });

  test('an absolute-form target of another scheme is a 400; its path is the target as sent, which no route matches', async () => {
    const answer = await sendRaw(server, scheme, 'GET ftp://localhost/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    assert.is(rawStatus(answer), 400);
    assert.is(decodeURIComponent(/\r\nx-debug-exception: (.*)\r\n/i.exec(answer)?.[1] ?? ''), 'Invalid request target "ftp://localhost/": an absolute-form target is an http or https URL.');
    await terminated(1);
    assert.equal(recorder.paths, ['ftp://localhost/']);
    assert.is((await savedProfile(server, tokenOf(answer))).status, 400);
    assert.equal(records.filter((record) => record.levelName === 'CRITICAL').map((record) => record.message), []);
  });

  test('an absolute-form target with a user and password is a 400 that says so; they reach no page, header, log or profile', async () => {
    const message = 'Invalid request target "http://localhost/x": a request target names no user or password (RFC 9110 4.2.4); they are left out here.';
    const answer = await sendRaw(server, scheme, 'GET http://alice:s3cr3t@localhost/x HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    assert.is(rawStatus(answer), 400, answer.slice(0, 300));
    assert.is(decodeURIComponent(/\r\nx-debug-exception: (.*)\r\n/i.exec(answer)?.[1] ?? ''), message);
    assert.ok(decodeEntities(answer).includes(message), 'the page says what is wrong');
    assert.not.ok(answer.includes('s3cr3t'), 'the page');
    await terminated(1);
    assert.equal(recorder.paths, ['http://localhost/x']);
    const profile = await savedProfile(server, tokenOf(answer));
    assert.is(profile.status, 400);
    assert.not.ok(JSON.stringify(profile).includes('s3cr3t'), 'the profile');
    assert.ok(records.length > 0);
    assert.not.ok(JSON.stringify(records).includes('s3cr3t'), 'the logs');
    // The host before the `@` is none: `http://localhost@evil.test/` is for evil.test, the same 400 says so.
    const disguised = await sendRaw(server, scheme, 'GET http://localhost@evil.test/ HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    assert.is(decodeURIComponent(/\r\nx-debug-exception: (.*)\r\n/i.exec(disguised)?.[1] ?? ''), 'Invalid request target "http://evil.test/": a request target names no user or password (RFC 9110 4.2.4); they are left out here.');
  });

  test('the refusal comes before the application\'s kernel.request listeners, which would answer it otherwise', async () => {
    const answer = await sendRaw(server, scheme, 'PATCH * HTTP/1.1\r\nHost: localhost\r\nX-Answer-All: 1\r\nConnection: close\r\n\r\n');
    assert.is(rawStatus(answer), 400, answer.slice(0, 300));
    const control = await sendRaw(server, scheme, 'PATCH /anything HTTP/1.1\r\nHost: localhost\r\nX-Answer-All: 1\r\nConnection: close\r\n\r\n');
    assert.is(rawStatus(control), 200);
  });

  test.run();
}
