// An object-mode stream body whose first chunk is no text nor bytes: its head goes only with its first
// chunk, so nothing was sent, and the client gets the error page of the TypeError, logged once, with
// the profile and kernel.terminate saying 500, as for a stream that fails before its first chunk.
import { Readable } from 'node:stream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Response, type TerminateEvent } from '../../kernel/index.js';
import { SCHEMES, fetchFrom, header, routesOf, savedProfile, startTestServer, type TestServer } from './harness.js';

const MESSAGE = 'A response body stream gives text or bytes, not an object of type Object';

for (const scheme of SCHEMES) {
  const test = suite(`an object-mode stream body of objects, over ${scheme}`);
  let server: TestServer;
  const terminated: string[] = [];
  const tapped: unknown[] = [];

  test.before(async () => {
    const recorder = {
      getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }),
      onTerminate: (event: TerminateEvent): void => void terminated.push(`${event.request.path} ${event.response.status}`),
    };
    const routes = routesOf({
      '/rows': () => new Response(Readable.from([{ id: 1 }]), 200, { 'content-type': 'text/csv' }),
      '/late': () => new Response(Readable.from(['id\n', { id: 1 }]), 200, { 'content-type': 'text/csv' }),
      '/text': () => new Response('served on'),
      // `undefined` chunks: no text nor bytes either, first or later.
      '/undefined': (request) => {
        const rows = new Readable({ objectMode: true, read() {} });
        if (request.query.has('late')) rows.push('id\n');
        rows.push(undefined);
        rows.push('1\n');
        rows.push(null);
        return new Response(rows, 200, { 'content-type': 'text/csv' });
      },
      // A tap on the body (a 'data' listener, paused so that the response reads it): it sees each chunk as it goes.
      '/tapped': () => {
        const rows = new Readable({ objectMode: true, read() {} });
        rows.on('data', (chunk: unknown) => void tapped.push(chunk));
        rows.pause();
        rows.push('id\n');
        rows.push('1\n');
        rows.push(null);
        return new Response(rows, 200, { 'content-type': 'text/csv' });
      },
    });
    server = await startTestServer({ kernel: { debug: true, routes, subscribers: [recorder] } });
  });
  test.after(async () => server.close());

  test('a first chunk that is no text nor bytes gets the error page: nothing was sent, and the TypeError is logged once', async () => {
    terminated.length = 0;
    const response = await fetchFrom(server, scheme, '/rows', { headers: { accept: 'application/json' } });
    assert.is(response.status, 500);
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
    assert.match(JSON.parse(response.body).detail, MESSAGE);
    const profile = await savedProfile(server, header(response.headers['x-debug-token']));
    assert.is(profile.status, 500);
    // Levels as RFC 5424 numbers them: 3 is ERROR, 2 CRITICAL.
    const severe = (profile.collectors.logger.logs as Array<{ level: number; message: string }>).filter((record) => record.level <= 3);
    assert.is(severe.length, 1, JSON.stringify(severe));
    assert.is(severe[0]!.level, 2);
    assert.match(severe[0]!.message, MESSAGE);
    assert.equal(terminated, ['/rows 500']);
    // The page is a whole answer: the connection serves on.
    assert.is((await fetchFrom(server, scheme, '/text')).body, 'served on');
  });

  test('a later chunk that is no text nor bytes still cuts the answer its head began', async () => {
    const cut = await fetchFrom(server, scheme, '/late').then(() => 'answered', () => 'cut');
    assert.is(cut, 'cut');
  });

  test('an undefined chunk is no text nor bytes either: refused first by the server and inject(), and later it cuts the answer', async () => {
    terminated.length = 0;
    const first = await fetchFrom(server, scheme, '/undefined', { headers: { accept: 'application/json' } });
    assert.is(first.status, 500);
    assert.match(JSON.parse(first.body).detail, 'not undefined');
    const injected = await server.app.inject('/undefined', { headers: { accept: 'application/json' } });
    assert.is(injected.status, 500);
    assert.match((injected.json() as { detail: string }).detail, 'not undefined');
    const cut = await fetchFrom(server, scheme, '/undefined?late').then((response) => `answered ${JSON.stringify(response.body)}`, () => 'cut');
    assert.is(cut, 'cut');
    const rejected = await server.app.inject('/undefined?late').then(() => 'resolved', (error: Error) => error.message);
    assert.match(rejected, 'not undefined');
  });

  test("the first chunk is checked where it waits, not read: a 'data' listener of the body sees it once", async () => {
    tapped.length = 0;
    const response = await fetchFrom(server, scheme, '/tapped');
    assert.is(response.status, 200);
    assert.is(response.body, 'id\n1\n');
    assert.equal(tapped, ['id\n', '1\n']);
  });

  test.run();
}
