import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { HttpError, Request, RequestStack, Response, type Controller } from '../../../kernel/index.js';
import { createKernel, createRequestDescriber, type KernelApp, type KernelOptions } from '../../../lib/app/index.js';
import { attachStderrSink, type RequestDescription } from '../../../lib/log/index.js';
import { MemoryStorage } from '../../../lib/profiler/index.js';
import { Route, RouteCollection } from '../../../lib/routing/index.js';

const test = suite('request descriptions in log lines');

test('a request is described by its method, path and query as received, and client IP; no token without a profiler', () => {
  const describe = createRequestDescriber();
  const request = Request.create('http://shop.example/orders/%0d%0a?page=2', 'POST', { remoteAddress: '203.0.113.7' });
  assert.equal(describe(request), { method: 'POST', path: '/orders/%0d%0a?page=2', ip: '203.0.113.7' });
  // An absolute-form target (as sent to proxies): its authority is left out.
  assert.equal(describe(new Request('http://evil.test/p?q=1', { method: 'GET' }))?.path, '/p?q=1');
  // A target that is no path is still worth a line.
  assert.equal(describe(new Request('nonsense', { method: 'GET' }))?.path, 'nonsense');
});

test('the describer never throws: a Proxy whose traps throw, a Request Proxy whose getters fail, something that is no Request', () => {
  const describe = createRequestDescriber({ requestStack: new RequestStack() });
  const hostile = new Proxy({}, {
    getPrototypeOf() {
      throw new Error('trap');
    },
    get() {
      throw new Error('trap');
    },
  });
  assert.is(describe(hostile), undefined);
  assert.is(describe({ method: 'GET', url: '/' }), undefined);
  const real = Request.create('/p?x=1');
  // Through a Proxy the private fields are out of reach: the getters that need them fail, and are left out.
  const proxied = new Proxy(real, {});
  assert.equal(describe(proxied), { method: 'GET', path: '/p?x=1' });
  const throwing = new Proxy(real, {
    get(target, key) {
      if (key === 'method') throw new Error('no method');
      return Reflect.get(target, key);
    },
  });
  assert.not.throws(() => describe(throwing));
  assert.is(describe(throwing)?.method, undefined);
});

/** A JSON line of the stderr sink. */
interface Line {
  level: string;
  message: string;
  request?: RequestDescription;
}

/** Makes a kernel with its stderr (JSON lines) captured, runs `fn`, and answers the lines written. */
async function stderrOf(options: KernelOptions, fn: (app: KernelApp) => Promise<void>): Promise<Line[]> {
  const written: string[] = [];
  const stderr = process.stderr;
  const write = stderr.write;
  const tty = Object.getOwnPropertyDescriptor(stderr, 'isTTY');
  Object.defineProperty(stderr, 'isTTY', { value: false, configurable: true, writable: true });
  stderr.write = ((chunk: string) => (written.push(String(chunk)), true)) as typeof stderr.write;
  let app: KernelApp | undefined;
  try {
    app = createKernel(options);
    await fn(app);
  } finally {
    await app?.close();
    stderr.write = write;
    if (tty === undefined) delete (stderr as { isTTY?: boolean }).isTTY;
    else Object.defineProperty(stderr, 'isTTY', tty);
  }
  return written.map((line) => JSON.parse(line) as Line);
}

const failing = new RouteCollection().add('fail', new Route('/fail', { defaults: { _controller: () => { throw new HttpError(409, 'Taken.'); } } }));

test('debug mode: the ERROR line of a request carries the token of its X-Debug-Token; a line of its error page\'s sub-request says sub and gives it as mainToken', async () => {
  let logger: KernelApp['logger'] | undefined;
  const errorController: Controller = () => {
    logger!.error('the error page logs');
    return new Response('page', 409);
  };
  let response: Response | undefined;
  const lines = await stderrOf({ debug: true, routes: failing, errorController, profiler: { storage: new MemoryStorage() } }, async (app) => {
    logger = app.logger;
    response = await app.kernel.handle(Request.create('/fail?x=1', 'PUT'));
  });
  const token = response!.getHeader('x-debug-token');
  const subToken = response!.getHeader('x-previous-debug-token');
  assert.match(String(token), /^[0-9a-f]{6}$/);
  assert.match(String(subToken), /^[0-9a-f]{6}$/);
  const uncaught = lines.find((line) => line.message.startsWith('Uncaught error'));
  assert.equal(uncaught?.request, { method: 'PUT', path: '/fail?x=1', ip: '127.0.0.1', token });
  const page = lines.find((line) => line.message === 'the error page logs');
  // The error page's sub-request is a GET of the same URL.
  assert.equal(page?.request, { method: 'GET', path: '/fail?x=1', ip: '127.0.0.1', token: subToken, sub: true, mainToken: token });
});

test('outside debug mode a record knows its request only with requestContext: true (method, path, IP; no profiler, no token)', async () => {
  const handle = async (app: KernelApp) => void (await app.kernel.handle(Request.create('/fail')));
  const [withContext] = await stderrOf({ routes: failing, requestContext: true }, handle);
  assert.equal(withContext?.request, { method: 'GET', path: '/fail', ip: '127.0.0.1' });
  const [without] = await stderrOf({ routes: failing }, handle);
  assert.is(without?.level, 'error');
  assert.is(without?.request, undefined);
});

test('records without a request (start-up, background work) carry no request field', async () => {
  const [line] = await stderrOf({ debug: true, profiler: { storage: new MemoryStorage() } }, async (app) => app.logger.error('started'));
  assert.is(line?.message, 'started');
  assert.is(line?.request, undefined);
});

test('an embedder\'s own sink writes the same request fields with app.describeRequest', async () => {
  const written: string[] = [];
  const app = createKernel({ routes: failing, stderrLogLevel: false, requestContext: true, logLevel: 'error' });
  const detach = attachStderrSink(app.bus, { json: true, stream: { write: (chunk: string) => written.push(chunk) }, describeRequest: app.describeRequest });
  try {
    await app.kernel.handle(Request.create('/fail', 'DELETE'));
  } finally {
    detach();
    await app.close();
  }
  assert.equal(JSON.parse(written[0]!).request, { method: 'DELETE', path: '/fail', ip: '127.0.0.1' });
});

test.run();
