import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ArgumentResolver,
  ControllerResolver,
  HttpError,
  Request,
  Response,
  TraceableEventDispatcher,
  type ArgumentResolverInterface,
  type Controller,
  type ControllerResolverInterface,
} from '../../../kernel/index.js';
import { createKernel, type KernelOptions } from '../../../lib/app/index.js';
import type { LogRecord } from '../../../lib/log/index.js';
import { FileStorage, MemoryStorage, ThreadedFileStorage } from '../../../lib/profiler/index.js';
import { Route, RouteCollection } from '../../../lib/routing/index.js';
import { VAR_GITIGNORE } from '../../../lib/server/var-directory.js';
import { thrown } from '../helpers.js';

const quiet = { stderrLogLevel: false } as const;

/** A kernel from `options`, closed after `fn`. */
async function withKernel(options: KernelOptions, fn: (app: ReturnType<typeof createKernel>) => Promise<void>): Promise<void> {
  const app = createKernel({ ...quiet, ...options });
  try {
    await fn(app);
  } finally {
    await app.close();
  }
}

const failing = (error: unknown) => new RouteCollection().add('fail', new Route('/fail', { defaults: { _controller: () => { throw error; } } }));

test('errorController renders the error pages in place of the default one, with the error in its `exception` attribute', async () => {
  const errorController: Controller = (request: Request) => {
    const error = request.attributes.get('exception') as HttpError;
    return new Response(`custom page: ${error.message}`, error.status, { 'content-type': 'text/plain' });
  };
  await withKernel({ routes: failing(new HttpError(402, 'Subscribe first.')), errorController }, async (app) => {
    const response = await app.kernel.handle(Request.create('/fail'));
    assert.is(response.status, 402);
    assert.is(response.body, 'custom page: Subscribe first.');
  });
});

for (const debug of [false, true]) {
  test(`an errorController that throws: the plain page with the error's status and headers, no debug details, and a CRITICAL log (${debug ? 'debug' : 'no debug'})`, async () => {
    const errorController: Controller = () => {
      throw new Error('template missing');
    };
    const profiler = debug ? { storage: new MemoryStorage() } : false;
    await withKernel({ routes: failing(new HttpError(429, 'Too fast: bucket 7', { headers: { 'retry-after': '9' } })), errorController, debug, profiler }, async (app) => {
      const records: LogRecord[] = [];
      app.bus.on('log', ({ record }) => records.push(record));
      const request = Request.create('/fail');
      const response = await app.kernel.handle(request);
      assert.is(response.status, 429);
      assert.is(response.getHeader('retry-after'), '9');
      assert.is(response.getHeader('x-debug-exception'), undefined);
      assert.ok(String(response.body).includes('The server returned a "429 Too Many Requests".'));
      assert.not.ok(String(response.body).includes('bucket 7'));
      assert.not.ok(String(response.body).includes('template missing'));
      const failure = records.find((record) => record.message.startsWith('The error page failed'));
      assert.is(failure?.levelName, 'CRITICAL');
      assert.is(failure?.context.original_message, 'Too fast: bucket 7');
      // In debug mode the request's own records, which its profile shows, have it.
      if (debug) assert.ok(app.logs!.getLogs(request).includes(failure!));
    });
  });
}

test('controllerResolver finds the controllers in place of the default one', async () => {
  const asked: string[] = [];
  const controllerResolver: ControllerResolverInterface = {
    getController(request) {
      asked.push(request.path);
      return request.path === '/hello' ? () => new Response('hello from my resolver') : null;
    },
  };
  await withKernel({ routes: new RouteCollection().add('hello', new Route('/hello')), controllerResolver }, async (app) => {
    // Wrapped, so that the kernel's own controllers (error page, profiler pages) go around it.
    assert.is((app.kernel.controllerResolver as ControllerResolverInterface & { resolver?: unknown }).resolver, controllerResolver);
    const response = await app.kernel.handle(Request.create('/hello'));
    assert.is(response.body, 'hello from my resolver');
    assert.equal(asked, ['/hello']);
  });
});

test('a controllerResolver that knows only its own controllers still gets the error pages and the profiler\'s pages, whose controllers the kernel sets itself', async () => {
  const mine: Record<string, Controller> = { home: () => new Response('home'), fail: () => { throw new HttpError(409, 'Already booked.'); } };
  const controllerResolver: ControllerResolverInterface = { getController: (request) => mine[String(request.attributes.get('_route'))] ?? null };
  const routes = new RouteCollection().add('home', new Route('/')).add('fail', new Route('/fail'));
  const customPage: Controller = (request: Request) => {
    const error = request.attributes.get('exception') as HttpError;
    return new Response(`custom: ${error.message}`, error.status);
  };
  for (const errorController of [undefined, customPage]) {
    await withKernel({ routes, controllerResolver, errorController, debug: true, profiler: { storage: new MemoryStorage() } }, async (app) => {
      const records: LogRecord[] = [];
      app.bus.on('log', ({ record }) => records.push(record));
      assert.is((await app.kernel.handle(Request.create('/'))).body, 'home');
      const failed = await app.kernel.handle(Request.create('/fail'));
      assert.is(failed.status, 409);
      if (errorController === undefined) assert.ok(String(failed.body).includes('Already booked.'), 'the debug page');
      else assert.is(failed.body, 'custom: Already booked.');
      const missing = await app.kernel.handle(Request.create('/nowhere'));
      assert.is(missing.status, 404);
      const latest = await app.kernel.handle(Request.create('/_profiler/latest'));
      assert.ok(latest.isRedirection() || latest.isSuccessful(), `the profiler's page answers (${latest.status})`);
      assert.equal(records.filter((record) => record.levelName === 'CRITICAL').map((record) => record.message), []);
    });
  }
});

test('an argumentResolver of one\'s own is not asked for the profiler\'s pages, which take (request, routeParams)', async () => {
  const argumentResolver: ArgumentResolverInterface = { getArguments: (request) => [request.attributes.get('_route'), 'my service'] };
  const routes = new RouteCollection().add('home', new Route('/', { defaults: { _controller: (route: string, service: string) => new Response(`${route} with ${service}`) } }));
  await withKernel({ routes, argumentResolver, debug: true, profiler: { storage: new MemoryStorage() } }, async (app) => {
    const request = Request.create('/');
    const home = await app.kernel.handle(request);
    assert.is(home.body, 'home with my service');
    await app.kernel.terminate(request, home);
    const token = home.getHeader('x-debug-token')!;
    const panel = await app.kernel.handle(Request.create(`/_profiler/${token}`, 'GET', { headers: { accept: 'application/json' } }));
    assert.is(panel.status, 200);
    assert.is(JSON.parse(String(panel.body)).token, token);
  });
});

test('argumentResolver gives the controllers their arguments in place of the default (request, routeParams)', async () => {
  const argumentResolver: ArgumentResolverInterface = new ArgumentResolver([(request, controller) => (controller.name === 'greet' ? [request.attributes.get('name'), request.method] : undefined)]);
  const routes = new RouteCollection().add('greet', new Route('/hi/:name', { defaults: { _controller: function greet(name: string, method: string) { return new Response(`${method} ${name}`); } } }));
  await withKernel({ routes, argumentResolver }, async (app) => {
    assert.is((app.kernel.argumentResolver as ArgumentResolverInterface & { resolver?: unknown }).resolver, argumentResolver);
    assert.is((await app.kernel.handle(Request.create('/hi/ada'))).body, 'GET ada');
    // The error controller is asked for too: this resolver leaves it the default arguments, so its page is the default one.
    const notFound = await app.kernel.handle(Request.create('/nowhere'));
    assert.is(notFound.status, 404);
    assert.ok(String(notFound.body).includes('404 Not Found'));
  });
});

test('without these options the defaults are the ones they always were', async () => {
  await withKernel({ controllers: { home: () => new Response('home') }, routes: new RouteCollection().add('home', new Route('/', { defaults: { _controller: 'home' } })) }, async (app) => {
    assert.instance(app.kernel.controllerResolver, ControllerResolver);
    assert.instance(app.kernel.argumentResolver, ArgumentResolver);
    assert.is((await app.kernel.handle(Request.create('/'))).body, 'home');
    const missing = await app.kernel.handle(Request.create('/missing', 'GET', { headers: { accept: 'application/json' } }));
    assert.is(missing.status, 404);
    assert.is(missing.getHeader('content-type'), 'application/problem+json');
  });
});

test('a replacement the kernel could not call is refused at construction, saying what to give', () => {
  const refused = (options: Record<string, unknown>) => thrown(() => createKernel({ ...quiet, ...options } as KernelOptions));
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ errorController: 'error' }, 'errorController must be a controller, a function of the request that returns a Response, not the string "error".'],
    [{ errorController: { render() {} } }, 'errorController must be a controller, a function of the request that returns a Response, not an object of type Object.'],
    [{ controllerResolver: () => null }, 'controllerResolver must be an object with a getController(request) method, not a function (controllerResolver).'],
    [{ controllerResolver: null }, 'controllerResolver must be an object with a getController(request) method, not null.'],
    [{ controllerResolver: new ArgumentResolver() }, 'controllerResolver must be an object with a getController(request) method, not an object of type ArgumentResolver.'],
    [{ argumentResolver: new ControllerResolver() }, 'argumentResolver must be an object with a getArguments(request, controller) method, not an object of type ControllerResolver.'],
    [{ argumentResolver: 42 }, 'argumentResolver must be an object with a getArguments(request, controller) method, not number 42.'],
    [
      { controllerResolver: new ControllerResolver(), controllers: { home: () => new Response('') } },
      'controllers registers names in the default ControllerResolver, which controllerResolver replaces: register them in your resolver, or leave controllerResolver out.',
    ],
  ];
  for (const [options, message] of cases) {
    const error = refused(options);
    assert.instance(error, TypeError);
    assert.is(error.message, message);
  }
});


test('listeners are traced only for the profiler, their one reader: debug mode without it dispatches untraced', async () => {
  await withKernel({ debug: true, profiler: { storage: new MemoryStorage() } }, async (app) => {
    assert.instance(app.dispatcher, TraceableEventDispatcher);
  });
  for (const options of [{ debug: true, profiler: false }, { debug: false }] as const) {
    await withKernel(options, async (app) => {
      assert.not.instance(app.dispatcher, TraceableEventDispatcher, JSON.stringify(options));
      // Debug pages and per-request logs stay: a 404's page lists its request's records.
      const response = await app.kernel.handle(Request.create('/nowhere', 'GET', { headers: { accept: 'text/html' } }));
      assert.is(response.status, 404);
      if (options.debug) assert.ok(String(response.body).includes('No routes found for'), 'the debug page with its logs');
    });
  }
});

test('ide: an editor or format it cannot use is a TypeError at construction', () => {
  const error = thrown(() => createKernel({ ...quiet, debug: true, ide: 'notepad' }));
  assert.instance(error, TypeError);
  assert.match(error.message, /^ide must be an editor \(vscode, /);
});

test('options of the wrong shape are refused by name before anything is started, not ignored or failing later', () => {
  const cases: Array<[unknown, RegExp]> = [
    [{ route: new RouteCollection() }, /^createKernel has no option "route"; its options are env, debug, routes, /],
    [{ routes: [new Route('/')] }, /^routes is a RouteCollection \(new RouteCollection\(\)\.add\('name', new Route\('\/path', \.\.\.\)\)\), not an object of type Array\.$/],
    [{ bodyLimit: '1mb' }, /^bodyLimit is a number of bytes \(a whole number, 0 or more, or Infinity for no limit\), not the string "1mb"\.$/],
    [{ bodyLimit: Number.NaN }, /^bodyLimit is a number of bytes/],
    [{ trustedProxies: '10.0.0.0/8' }, /^trustedProxies is an array of addresses and CIDR ranges .* not a string \(write \['10\.0\.0\.0\/8'\]\)\.$/],
    [{ subscribers: {} }, /^subscribers is an array of event subscribers/],
    [{ debug: true, stderrLogLevel: 'verbose' }, /^stderrLogLevel is a level name \(emergency, .* \(or emerg, crit, err, warn\), in any case\) or false, not the string "verbose"\.$/],
    [{ logLevel: 5 }, /^logLevel is a level name .* not number 5\.$/],
    [null, /^createKernel takes a plain object of options, not null\.$/],
    [new Map([['debug', true]]), /^createKernel takes a plain object of options, not an object of type Map\.$/],
    [[], /^createKernel takes a plain object of options, not an object of type Array\.$/],
    [{ controllers: new Map([['home', () => null]]) }, /^controllers is a plain object, not an object of type Map\.$/],
    [{ schemePorts: new Map([['https', 8443]]) }, /^schemePorts is a plain object, not an object of type Map\.$/],
    [{ profiler: new Map([['dir', 'x']]) }, /^profiler is false or a plain object of profiler options \(\{\} for the defaults\), not an object of type Map\.$/],
    [{ debug: 'yes' }, /^debug is true or false, not the string "yes"\.$/],
    [{ requestContext: 1 }, /^requestContext is true or false, not number 1\.$/],
    [{ env: 5 }, /^env is a string, not number 5\.$/],
    [{ ide: 5 }, /^ide is a string, not number 5\.$/],
    [{ controllers: 'x' }, /^controllers is a plain object, not the string "x"\.$/],
    [{ controllers: { home: 'HomeController::index' } }, /^controllers\.home is a function, not the string "HomeController::index"\.$/],
    [{ schemePorts: { htps: 8443 } }, /^schemePorts has the ports of http and https only, not of "htps"\.$/],
    [{ schemePorts: { https: '8443' } }, /^schemePorts\.https is a port from 1 to 65535, not the string "8443"\.$/],
    [{ debugAllow: 'loopback' }, /^debugAllow is an array of addresses and CIDR ranges .* not the string "loopback"\.$/],
    [{ subscribers: [{}] }, /^subscribers\[0\] is an event subscriber \(an object with getSubscribedEvents\(\)\), not an object of type Object\.$/],
    [{ subscribers: [new (class Audit { static getSubscribedEvents() { return {}; } })()] }, /^subscribers\[0\] is an event subscriber \(an object with getSubscribedEvents\(\)\), not an object of type Audit whose getSubscribedEvents\(\) is static, as in Symfony: here it is an instance method \(drop `static`\)\.$/],
    [{ trustedHosts: 'example.com' }, /^trustedHosts is an array of host names and patterns, not the string "example\.com"\.$/],
    [{ profiler: true }, /^profiler is false or a plain object of profiler options \(\{\} for the defaults\), not boolean true\.$/],
    [{ profiler: { nope: 1 } }, /^The profiler has no option "nope"; its options are storage, dir, /],
    [{ profiler: { collectors: [{}] } }, /^profiler\.collectors is an array of data collectors/],
    [{ profiler: { thread: 'yes' } }, /^profiler\.thread is true or false/],
    [{ profiler: { tokenLength: 4 } }, /^profiler\.tokenLength is a whole number of hex characters from 6 to 32, not number 4\.$/],
    [{ profiler: { tokenLength: 33 } }, /^profiler\.tokenLength is a whole number of hex characters from 6 to 32, not number 33\.$/],
    [{ profiler: { tokenLength: 7.5 } }, /^profiler\.tokenLength is a whole number of hex characters from 6 to 32, not number 7\.5\.$/],
    [{ profiler: { tokenLength: '8' } }, /^profiler\.tokenLength is a whole number of hex characters from 6 to 32, not the string "8"\.$/],
  ];
  for (const [options, message] of cases) {
    const error = thrown(() => createKernel(options as KernelOptions));
    assert.instance(error, TypeError, JSON.stringify(options));
    assert.match(error.message, message);
  }
});

test('profiler.maxQueuedProfiles and profiler.saveDelayMs outside their ranges are TypeErrors naming them, not a queue never bounded or a save timer firing at once', async () => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ maxQueuedProfiles: Number.NaN }, /^profiler\.maxQueuedProfiles is a whole number of profiles, 1 or more \(profiler: false records none\), not number NaN\.$/],
    [{ maxQueuedProfiles: 0 }, /^profiler\.maxQueuedProfiles is a whole number of profiles, 1 or more .* not number 0\.$/],
    [{ maxQueuedProfiles: -1 }, /^profiler\.maxQueuedProfiles .* not number -1\.$/],
    [{ maxQueuedProfiles: 1.5 }, /^profiler\.maxQueuedProfiles .* not number 1\.5\.$/],
    [{ maxQueuedProfiles: Infinity }, /^profiler\.maxQueuedProfiles .* not number Infinity\.$/],
    [{ maxQueuedProfiles: '10' }, /^profiler\.maxQueuedProfiles .* not the string "10"\.$/],
    [{ saveDelayMs: Number.NaN }, /^profiler\.saveDelayMs is a whole number of milliseconds from 0 to 2147483647, not number NaN\.$/],
    [{ saveDelayMs: -1 }, /^profiler\.saveDelayMs .* not number -1\.$/],
    [{ saveDelayMs: 1.5 }, /^profiler\.saveDelayMs .* not number 1\.5\.$/],
    [{ saveDelayMs: 2 ** 31 }, /^profiler\.saveDelayMs .* not number 2147483648\.$/],
    [{ saveDelayMs: Infinity }, /^profiler\.saveDelayMs .* not number Infinity\.$/],
    [{ saveDelayMs: '10' }, /^profiler\.saveDelayMs .* not the string "10"\.$/],
  ];
  for (const [profiler, message] of cases) {
    const error = thrown(() => createKernel({ ...quiet, debug: true, profiler: { storage: new MemoryStorage(), ...profiler } }));
    assert.instance(error, TypeError, JSON.stringify(profiler));
    assert.match(error.message, message);
  }
  // The ends of the ranges are taken.
  for (const profiler of [{ maxQueuedProfiles: 1, saveDelayMs: 0 }, { maxQueuedProfiles: Number.MAX_SAFE_INTEGER, saveDelayMs: 2 ** 31 - 1 }]) {
    await withKernel({ debug: true, profiler: { storage: new MemoryStorage(), ...profiler } }, async (app) => {
      assert.ok(app.profiler !== null, JSON.stringify(profiler));
    });
  }
});

test('the body limit given to createKernel holds on the wire: a larger body is a 413', async () => {
  const routes = new RouteCollection().add('echo', new Route('/echo', { methods: ['POST'], defaults: { _controller: async (request: Request) => new Response(String((await request.bytes()).length)) } }));
  await withKernel({ routes, bodyLimit: 10 }, async (app) => {
    const server = createServer(app.listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const post = async (body: string): Promise<number> => (await fetch(`http://127.0.0.1:${port}/echo`, { method: 'POST', body })).status;
      assert.is(await post('x'.repeat(10)), 200);
      assert.is(await post('x'.repeat(11)), 413);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

/** The file storage the profiler of `app` made for itself. */
function fileStorageOf(app: ReturnType<typeof createKernel>): FileStorage | ThreadedFileStorage {
  const storage = app.profiler!.storage;
  assert.ok(storage instanceof FileStorage || storage instanceof ThreadedFileStorage, 'a file storage');
  return storage;
}

test('the profiler\'s own file storage keeps 2 days, 10,000 profiles and 512 MiB by default; a bound given replaces that one alone', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'http-kernel-bounds-'));
  try {
    for (const thread of [false, true]) {
      await withKernel({ debug: true, profiler: { dir, thread } }, async (app) => {
        assert.equal({ ...fileStorageOf(app).bounds }, { maxAge: 2 * 24 * 60 * 60 * 1000, maxProfiles: 10_000, maxBytes: 512 * 1024 * 1024 }, `thread ${thread}`);
      });
      await withKernel({ debug: true, profiler: { dir, thread, bounds: { maxProfiles: 50 } } }, async (app) => {
        assert.equal({ ...fileStorageOf(app).bounds }, { maxAge: 2 * 24 * 60 * 60 * 1000, maxProfiles: 50, maxBytes: 512 * 1024 * 1024 }, `thread ${thread}`);
      });
    }
    assert.equal({ ...new MemoryStorage().bounds }, { maxAge: 2 * 24 * 60 * 60 * 1000, maxProfiles: 10_000, maxBytes: 512 * 1024 * 1024 }, 'the memory storage too');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a profiler bound that is not finite fails createKernel, thread or not, with a RangeError naming it and its range: maxAge Infinity kept dropped profiles\' tokens taken for ever', () => {
  const dir = mkdtempSync(join(tmpdir(), 'http-kernel-bounds-'));
  try {
    for (const thread of [false, true]) {
      const error = thrown(() => createKernel({ ...quiet, debug: true, profiler: { dir, thread, bounds: { maxAge: Infinity } } }));
      assert.instance(error, RangeError, `thread ${thread}`);
      assert.is(error.message, 'Profiler storage bound maxAge must be a finite number of milliseconds above 0, got number Infinity.');
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the profiler's default directory, var/profiler of the working directory, is in a var/ made with bin/serve's .gitignore; a directory given, var/profiler too, or a storage given makes none", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'http-kernel-default-dir-'));
  const cwd = process.cwd();
  try {
    process.chdir(dir);
    await withKernel({ debug: true, profiler: { thread: false } }, async (app) => {
      await app.ready();
      assert.is(readFileSync(join(dir, 'var', '.gitignore'), 'utf8'), VAR_GITIGNORE);
      assert.ok(statSync(join(dir, 'var', 'profiler')).isDirectory(), 'the profiles are in var/profiler');
    });
    rmSync(join(dir, 'var'), { recursive: true });
    for (const profiler of [{ dir: 'var/profiler', thread: false }, { storage: new MemoryStorage() }]) {
      await withKernel({ debug: true, profiler }, async (app) => {
        await app.ready();
        assert.not.ok(existsSync(join(dir, 'var', '.gitignore')), Object.keys(profiler).join());
      });
    }
  } finally {
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('app.close() lets go of the request stack\'s AsyncLocalStorage (disabled, as Node needs to collect it): a context still open sees no request after it', async () => {
  for (const options of [{ debug: true, profiler: false as const }, { requestContext: true }]) {
    const app = createKernel({ stderrLogLevel: false, ...options });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const request = Request.create('/');
    const seen = app.requestStack.run(request, async () => {
      await gate;
      return app.requestStack.getCurrentRequest();
    });
    await app.close();
    release();
    // Left enabled, each storage made every promise, timer and socket of the process carry its store for good.
    assert.is(await seen, undefined, JSON.stringify(options));
  }
});

test('app.close() whose profiler storage fails to close rejects with its error, and lets go of the request stack all the same', async () => {
  class FailingClose extends MemoryStorage {
    override async close(): Promise<void> {
      throw new Error('the disk is gone');
    }
  }
  const app = createKernel({ stderrLogLevel: false, debug: true, profiler: { storage: new FailingClose() } });
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const seen = app.requestStack.run(Request.create('/'), async () => {
    await gate;
    return app.requestStack.getCurrentRequest();
  });
  const failure = await app.close().then(() => null, (error: Error) => error);
  assert.is(failure?.message, 'the disk is gone');
  release();
  assert.is(await seen, undefined);
});

test.run();
