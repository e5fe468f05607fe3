// A legacy stream body (a `stream.Stream` with pipe() alone, no readableEnded): sent whole, and,
// once it has ended, left as pipeline() leaves a body that ended, not destroyed (its destroy() may
// close what it reads from); one whose client leaves before its end is destroyed.
import { Stream } from 'node:stream';
import net from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Response } from '../../kernel/index.js';
import { SCHEMES, fetchFrom, routesOf, startTestServer, until, type TestServer } from './harness.js';

/** What each legacy body of a test saw: its destroy() called, by the id of its request. */
const destroyed: string[] = [];

/** A legacy stream of two chunks (`?forever` never ending), recording a destroy() call. */
function legacy(id: string, forever: boolean): Stream {
  const stream = new Stream() as Stream & { destroy(): void };
  let timer: NodeJS.Timeout | undefined;
  stream.destroy = () => {
    clearInterval(timer);
    destroyed.push(id);
  };
  setTimeout(() => {
    stream.emit('data', Buffer.from('leg'));
    if (forever) timer = setInterval(() => stream.emit('data', Buffer.alloc(16_384, 97)), 1);
    else {
      stream.emit('data', Buffer.from('acy'));
      stream.emit('end');
    }
  }, 5);
  return stream;
}

const test = suite('a legacy stream body');
let server: TestServer;

test.before(async () => {
  const routes = routesOf({ '/legacy': (request) => new Response(legacy(request.query.get('id') ?? '', request.query.has('forever')) as never, 200) });
  server = await startTestServer({ kernel: { routes } });
});
test.after(async () => server.close());

test('one that ends is sent whole and not destroyed after its end, by the server and by inject()', async () => {
  destroyed.length = 0;
  for (const scheme of SCHEMES) {
    const response = await fetchFrom(server, scheme, `/legacy?id=${scheme}`);
    assert.is(response.status, 200);
    assert.is(response.body, 'legacy');
  }
  const injected = await server.app.inject('/legacy?id=inject');
  assert.is(injected.text(), 'legacy');
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(destroyed, []);
});

test('one whose client leaves before its end is destroyed', async () => {
  destroyed.length = 0;
  const socket = net.connect(Number(new URL(server.urls.http).port), '127.0.0.1');
  socket.write('GET /legacy?id=left&forever HTTP/1.1\r\nHost: localhost\r\n\r\n');
  let received = 0;
  socket.on('data', (data: Buffer) => {
    received += data.length;
    if (received > 50_000) socket.destroy();
  });
  await until(() => destroyed.includes('left'), 5_000, 'the destroy of the legacy body left by its client');
  socket.destroy();
  assert.equal(destroyed, ['left']);
});

test.run();
