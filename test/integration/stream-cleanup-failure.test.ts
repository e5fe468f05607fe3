// A stream body that gives its last byte and then fails in its clean-up (a file whose close fails):
// the answer was complete, so the client gets all of it, even reading slowly, and the failure is
// logged once at ERROR in the request's profile, not as a body that failed.
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { request as undiciRequest } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Response, type Request, type TerminateEvent } from '../../kernel/index.js';
import { SCHEMES, header, routesOf, savedProfile, startTestServer, until, type TestServer } from './harness.js';

/** Bigger than what the socket buffers hold for a client that does not read: the body ends while most of it is still to be sent. */
const SIZE = 8 * 1024 * 1024;

/** A body of SIZE bytes whose clean-up fails, at once (`?at=once`) or a turn later. */
function closeFails(request: Request): Response {
  const id = request.query.get('id');
  const failure = new Error(`the file of ${id} could not be closed`);
  const body = new Readable({
    read() {
      this.push(Buffer.alloc(SIZE, 97));
      this.push(null);
    },
    destroy(_error, callback) {
      if (request.query.get('at') === 'once') callback(failure);
      else setImmediate(() => callback(failure));
    },
  });
  return new Response(body, 200, { 'content-type': 'application/octet-stream', 'content-length': String(SIZE) });
}

for (const scheme of SCHEMES) {
  const test = suite(`a stream body whose clean-up fails after its last byte, over ${scheme}`);
  let server: TestServer;
  const terminated: string[] = [];

  test.before(async () => {
    const recorder = {
      getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }),
      onTerminate: (event: TerminateEvent): void => void terminated.push(`${event.request.query.get('id')} ${event.response.status}`),
    };
    server = await startTestServer({ kernel: { debug: true, routes: routesOf({ '/file': closeFails }), subscribers: [recorder] } });
  });
  test.after(async () => server.close());

  test('a client reading slowly gets the whole answer; the clean-up failure is logged once at ERROR, and the request terminated once with its 200', async () => {
    for (const at of ['once', 'later']) {
      const id = `${scheme}-${at}`;
      const response = await undiciRequest(`${server.urls[scheme]}/file?id=${id}&at=${at}`, { dispatcher: server.agent, headersTimeout: 10_000, bodyTimeout: 10_000 });
      assert.is(response.statusCode, 200, id);
      // The client reads nothing for a while: the body has ended, and failed, long before the answer is sent.
      await sleep(500);
      const body = Buffer.from(await response.body.arrayBuffer());
      assert.is(body.byteLength, SIZE, id);
      assert.ok(body.every((byte) => byte === 97), id);
      await until(() => terminated.includes(`${id} 200`), 5_000, `the termination of ${id}`);
      const profile = await savedProfile(server, header(response.headers['x-debug-token']));
      assert.is(profile.status, 200, id);
      // Levels as RFC 5424 numbers them: 3 is ERROR, 2 CRITICAL.
      const logs = (profile.collectors.logger.logs as Array<{ level: number; message: string }>).filter((record) => record.level <= 3);
      assert.equal(logs.map((record) => `${record.level} ${record.message}`), [`3 The response body stream failed in its clean-up, after its last chunk: Error: the file of ${id} could not be closed`], id);
      assert.equal(terminated.filter((line) => line.startsWith(`${id} `)), [`${id} 200`], id);
    }
  });

  test.run();
}
