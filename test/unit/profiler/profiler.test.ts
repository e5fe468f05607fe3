import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { KernelEvents, Request, RequestStack, RequestType, type TerminateEvent } from '../../../kernel/index.js';
import type { LogEntry } from '../../../lib/log/index.js';
import { createApp, createKernel } from '../../../lib/app/index.js';
import { Route, RouteCollection } from '../../../lib/routing/index.js';
import { Response } from '../../../kernel/index.js';
import { FileStorage, MemoryStorage, ProfilerStorageError, THREAD_STOPPED_CODE, ThreadedFileStorage, type ProfilerStorage, type StorageErrorHandler } from '../../../lib/profiler/storage/index.js';
import { storageErrorLogger } from '../../../lib/app/profiler-storage-log.js';
import { markReported } from '../../../lib/profiler/storage/reported-errors.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MAX_COLLECTOR_JSON, Profiler, isLeftOutData, RawJson, Redactor, RequestCollector, SAVE_BATCH_SIZE, decodeProfile, encodeProfile, encodeProfileParts, type DataCollector, type EncodedProfile, type Profile, type RequestData, type StorableProfile } from '../../../lib/profiler/index.js';

import { thrown } from '../helpers.js';

const test = suite('Profiler');

async function run(app: ReturnType<typeof createApp>, path: string) {
  const request = Request.create(`http://127.0.0.1:8000${path}`);
  const response = await app.kernel.handle(request);
  await app.kernel.terminate(request, response);
  return response;
}

test('a main request and its error sub-request are linked parent and child, and saved', async () => {
  const storage = new MemoryStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage } });
  const response = await run(app, '/robots.txt');
  await app.close();
  const main = await storage.read(response.getHeader('x-debug-token')!);
  const sub = await storage.read(response.getHeader('x-previous-debug-token')!);
  assert.ok(main && sub);
  assert.equal(main!.children, [sub!.token]);
  assert.is(sub!.parent, main!.token);
  assert.is((main!.collectors.exception as { exceptions: unknown[] }).exceptions.length, 2);
  // The timeline and the router's verdicts are not stored: they are worked out on reading.
  assert.is((main!.collectors.time as { periods?: unknown }).periods, undefined);
  assert.is((main!.collectors.router as { traces?: unknown }).traces, undefined);
  // Stored compact: calls as tuples, times in whole microseconds.
  const stored = main!.collectors.events as { calls: unknown[][]; dispatches: unknown[][] };
  assert.ok(stored.calls.length > 0 && stored.calls.every((call) => Number.isInteger(call[3]) && Number.isInteger(call[4])));
  assert.ok(stored.dispatches.every((dispatch) => Number.isInteger(dispatch[1]) && Number.isInteger(dispatch[2])));
  const shown = app.profiler!.present(main!);
  const called = (shown.collectors.events as { called: Array<{ listener: string; start: number; duration: number }> }).called;
  assert.is(called.length, stored.calls.length);
  assert.is(called[0]!.listener, stored.calls[0]![1]);
  assert.is(called[0]!.duration, (stored.calls[0]![4] as number) / 1000, 'presented in milliseconds');
  const periods = (shown.collectors.time as { periods: Array<{ name: string; category: string }> }).periods;
  assert.ok(periods.some((p) => p.name === 'kernel.request' && p.category === 'event'));
  assert.ok(periods.some((p) => p.name === 'RouterListener::onKernelRequest' && p.category === 'listener'));
  const traces = (shown.collectors.router as { traces: Array<{ name: string; verdict: string }> }).traces;
  const appRoutes = traces.filter((t) => !t.name.startsWith('_'));
  assert.equal(appRoutes.map((t) => t.name), ['home', 'health']);
  assert.ok(traces.every((t) => t.verdict === 'mismatch'));
  assert.ok(main!.collectors.time !== shown.collectors.time, 'present() works on a copy');
});

test('a request whose kernel.terminate stops or fails before the profiler\'s listener is profiled all the same, under the X-Debug-Token it was sent', async () => {
  for (const how of ['stops', 'throws', 'rejects'] as const) {
    for (const via of ['terminate', 'inject'] as const) {
      const storage = new MemoryStorage();
      const routes = new RouteCollection();
      routes.add('home', new Route('/', { defaults: { _controller: () => new Response('home') } }));
      const app = createKernel({ debug: true, routes, stderrLogLevel: false, profiler: { storage, saveDelayMs: 0 } });
      app.dispatcher.addListener(KernelEvents.TERMINATE, (event: TerminateEvent) => {
        if (how === 'stops') return event.stopPropagation();
        if (how === 'throws') throw new Error('terminate listener failed');
        return Promise.reject(new Error('terminate listener failed'));
      });
      let response: Response;
      if (via === 'inject') {
        response = await app.inject('/');
      } else {
        const request = Request.create('/', 'GET', { remoteAddress: '127.0.0.1' });
        response = await app.kernel.handle(request);
        await app.kernel.terminate(request, response).catch(() => {});
      }
      await app.close();
      const token = response.getHeader('x-debug-token');
      assert.ok(token !== undefined, `${how}, ${via}: a token was sent`);
      const profile = await storage.read(token!);
      assert.ok(profile !== null, `${how}, ${via}: its profile was saved`);
      assert.is(profile!.status, 200);
    }
  }
});

test('a request served whose kernel.terminate runs a while (an async listener, or one before the profiler\'s that rejects) has its profile saved by app.close() after the server has closed', async () => {
  for (const how of ['resolves', 'rejects'] as const) {
    const storage = new MemoryStorage();
    const routes = new RouteCollection();
    routes.add('home', new Route('/', { defaults: { _controller: () => new Response('home') } }));
    const app = createKernel({ debug: true, routes, stderrLogLevel: false, profiler: { storage, saveDelayMs: 0 } });
    app.dispatcher.addListener(KernelEvents.TERMINATE, async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (how === 'rejects') throw new Error('terminate listener failed');
    });
    await app.ready();
    const server = createServer(app.listener);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const answer = await fetch(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } });
    const token = answer.headers.get('x-debug-token');
    await answer.text();
    await new Promise((resolve) => server.close(resolve));
    await app.close();
    assert.ok(token !== null, `${how}: a token was sent`);
    assert.ok((await storage.read(token!)) !== null, `${how}: its profile was saved before app.close() resolved`);
  }
});

test('an unhandled page recorded after its request was terminated (it came past the error page grace, a bare answer went instead) changes nothing in the profile', async () => {
  const storage = new MemoryStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage } });
  const request = Request.create('http://127.0.0.1:8000/robots.txt');
  const response = await app.kernel.handle(request);
  await app.kernel.terminate(request, response);
  const token = response.getHeader('x-debug-token')!;
  // Saved (the save delay is 20 ms) and still at hand as unsaved for the toolbar, or not: either way as terminated.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const late = new Response('too late', 418);
  app.profiler!.recordUnhandled(request, late, new Error('too late'));
  assert.is(app.profiler!.getUnsaved(token)?.status ?? response.status, response.status);
  await app.close();
  const saved = await storage.read(token);
  assert.is(saved!.status, response.status);
  assert.is(late.getHeader('x-debug-token'), undefined, 'the late page is not marked as profiled');
});

test('/_profiler/latest shows a sub-request whose parent is gone (dropped by the bounds) as itself', async () => {
  const storage = new MemoryStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage } });
  // The newest profile: an error page's sub-request whose main request's profile is no longer stored.
  const orphan: Profile = { token: 'a1b2c3', parent: 'dead00', children: [], ip: '127.0.0.1', method: 'GET', url: 'http://127.0.0.1:8000/gone', time: Date.now() + 1_000, status: 404, collectors: {} };
  await storage.write(orphan);
  const response = await run(app, '/_profiler/latest');
  await app.close();
  assert.is(response.status, 302);
  assert.is(response.getHeader('location'), '/_profiler/a1b2c3');
});

test('the toolbar of a profile with no memory data reads the heap without a file descriptor: process.memoryUsage() failing (EMFILE) does not fail it', async () => {
  const storage = new MemoryStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage } });
  const bare: Profile = { token: 'b0b0b0', parent: null, children: [], ip: '127.0.0.1', method: 'GET', url: 'http://127.0.0.1:8000/x', time: Date.now(), status: 200, collectors: {} };
  await storage.write(bare);
  const memoryUsage = process.memoryUsage;
  process.memoryUsage = Object.assign(() => {
    throw Object.assign(new Error('EMFILE: too many open files, uv_resident_set_memory'), { code: 'EMFILE' });
  }, { rss: memoryUsage.rss });
  let response: Response;
  try {
    response = await run(app, '/_wdt/b0b0b0');
  } finally {
    process.memoryUsage = memoryUsage;
  }
  await app.close();
  assert.is(response.status, 200);
  assert.match(String(response.body), /class="hk-item hk-memory"[^>]*><span class="hk-value">\d+(\.\d+)?<\/span><span class="hk-unit">(KiB|MiB|GiB)</);
});

test('profiler.collectors lists the built-in collectors in the order they run, then an embedder\'s; a second one of a name is refused', async () => {
  const extra = { name: 'cart', lateCollect: () => ({ items: 2 }) };
  const app = createApp({ stderrLogLevel: false, profiler: { storage: new MemoryStorage(), collectors: [extra] } });
  const profiler = app.profiler!;
  assert.equal(profiler.collectors.map((collector) => collector.name), ['request', 'exception', 'logger', 'events', 'time', 'router', 'memory', 'cart']);
  assert.throws(() => profiler.addCollector({ name: 'cart', lateCollect: () => null }), /A collector named "cart" is already registered/);
  assert.is(profiler.collectors.length, 8);
  await app.close();
});

test('a collector without a name, or with neither collect() nor lateCollect(), is a TypeError at createKernel, not a panel that never opens', async () => {
  const kernelWith = (collector: unknown) => () => createKernel({ debug: true, stderrLogLevel: false, profiler: { storage: new MemoryStorage(), collectors: [collector as DataCollector] } });
  assert.throws(kernelWith({ name: '', lateCollect: () => 1 }), (error: unknown) => error instanceof TypeError && error.message === 'A collector\'s name is a non-empty string (its panel is ?panel=<name>), not the string "".');
  assert.throws(kernelWith({ name: 'cache' }), (error: unknown) => error instanceof TypeError && error.message === 'Collector "cache" has neither collect() nor lateCollect(): it would record nothing, and its panel never show.');
  const app = kernelWith({ name: 'cache', collect: () => 1 })();
  assert.is(app.profiler!.collectors.at(-1)!.name, 'cache');
  await app.close();
});

test('a collector whose collect(), lateCollect() or present() is neither a function nor left out (null) is a TypeError at createKernel, not every profile dropped', async () => {
  const kernelWith = (collector: unknown) => () => createKernel({ debug: true, stderrLogLevel: false, profiler: { storage: new MemoryStorage(), collectors: [collector as DataCollector] } });
  assert.throws(kernelWith({ name: 'cache', collect: null, lateCollect: () => 1 }), (error: unknown) => error instanceof TypeError && error.message === 'The collect of collector "cache" is a function or left out, not null.');
  assert.throws(kernelWith({ name: 'cache', collect: () => 1, lateCollect: 'later' }), (error: unknown) => error instanceof TypeError && /^The lateCollect of collector "cache" is a function or left out, not the string "later"\.$/.test(error.message));
  assert.throws(kernelWith({ name: 'cache', lateCollect: () => 1, present: {} }), (error: unknown) => error instanceof TypeError && error.message.startsWith('The present of collector "cache" is a function or left out, not '));
  const app = kernelWith({ name: 'cache', collect: undefined, lateCollect: () => 1 })();
  assert.is(app.profiler!.collectors.at(-1)!.name, 'cache');
  await app.close();
});

/** A storage that is `inner` but for its writes, which go (one at a time as well) to `writeMany`. */
function writingThrough(inner: MemoryStorage, writeMany: ProfilerStorage['writeMany']): ProfilerStorage {
  return {
    claim: (token) => inner.claim(token),
    release: (token) => inner.release(token),
    discard: (token) => inner.discard(token),
    read: (token) => inner.read(token),
    find: (criteria) => inner.find(criteria),
    purge: () => inner.purge(),
    close: () => inner.close(),
    write: (profile) => writeMany([profile]),
    writeMany,
  };
}

/** A MemoryStorage whose writes wait for `release()`, recording each batch it is given. */
function gatedStorage() {
  const inner = new MemoryStorage();
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const batches: StorableProfile[][] = [];
  const storage = writingThrough(inner, async (profiles) => {
    batches.push([...profiles]);
    await gate;
    for (const profile of profiles) await inner.write(profile);
  });
  return { storage, batches, release: () => release(), inner };
}

test('new Profiler() refuses a maxQueuedProfiles or saveDelayMs outside its range, naming it, before it claims a token', async () => {
  const storage = new MemoryStorage();
  const make = (options: Record<string, unknown>) => new Profiler({ storage, requestStack: new RequestStack(), redactor: new Redactor(), ...options });
  for (const [options, message] of [
    [{ maxQueuedProfiles: Number.NaN }, "new Profiler()'s maxQueuedProfiles is a whole number of profiles, 1 or more (profiler: false records none), not number NaN."],
    [{ maxQueuedProfiles: 0 }, "new Profiler()'s maxQueuedProfiles is a whole number of profiles, 1 or more (profiler: false records none), not number 0."],
    [{ saveDelayMs: -1 }, "new Profiler()'s saveDelayMs is a whole number of milliseconds from 0 to 2147483647, not number -1."],
    [{ saveDelayMs: Infinity }, "new Profiler()'s saveDelayMs is a whole number of milliseconds from 0 to 2147483647, not number Infinity."],
  ] as const) {
    const error = thrown(() => make(options));
    assert.instance(error, TypeError, JSON.stringify(options));
    assert.is(error.message, message);
  }
  await make({ maxQueuedProfiles: 1, saveDelayMs: 0 }).close();
});

test('a storage slower than the traffic costs dropped profiles, not a growing queue', async () => {
  const { storage, batches, release, inner } = gatedStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage, maxQueuedProfiles: 10, saveDelayMs: 0 } });
  for (let i = 0; i < 50; i++) await run(app, '/health');
  // The first profile went out at once (a batch of 1, stuck at the gate); 10 wait in the queue; the rest are dropped.
  assert.is(app.profiler!.droppedProfiles, 39);
  assert.is(app.profiler!.recordedProfiles, 50);
  const messages: string[] = [];
  app.bus.on('log', ({ record }) => void messages.push(record.message));
  release();
  await app.close();
  // The closing total, which bench/http and bench/profiler-memory read.
  assert.ok(messages.includes('39 of 50 profiles were dropped in all: the storage could not keep up with the traffic.'), messages.join('\n'));
  assert.equal(batches.map((batch) => batch.length), [1, 10]);
  assert.is((await inner.find({ limit: 100 })).length, 11);
});

test('the warning that profiles are being dropped is the process\'s, written for no request', async () => {
  const { storage, release } = gatedStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage, maxQueuedProfiles: 1, saveDelayMs: 0 } });
  const entries: LogEntry[] = [];
  app.bus.on('log', (entry) => void entries.push(entry));
  for (let i = 0; i < 5; i++) await run(app, '/health');
  const warnings = entries.filter(({ record }) => record.message.startsWith('The profiler storage cannot keep up'));
  assert.is(warnings.length, 1);
  // Written while a request terminated, but about the process: no request's profile or stderr line.
  assert.is(warnings[0]!.request, undefined);
  release();
  await app.close();
});

test('the warning that profiles are being dropped comes again after 10 s of the monotonic clock, also when the wall clock was set back meanwhile', async () => {
  const { storage, release } = gatedStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage, maxQueuedProfiles: 1, saveDelayMs: 0 } });
  const warnings: string[] = [];
  app.bus.on('log', ({ record }) => void (record.message.startsWith('The profiler storage cannot keep up') && warnings.push(record.message)));
  for (let i = 0; i < 5; i++) await run(app, '/health');
  assert.is(warnings.length, 1);
  // NTP sets the clock back an hour; 11 s pass, and profiles are still being dropped.
  const realNow = Date.now;
  const realPerformanceNow = performance.now.bind(performance);
  Date.now = () => realNow() - 3_600_000;
  performance.now = () => realPerformanceNow() + 11_000;
  try {
    for (let i = 0; i < 3; i++) await run(app, '/health');
  } finally {
    Date.now = realNow;
    delete (performance as { now?: unknown }).now;
  }
  assert.is(warnings.length, 2, warnings.join('\n'));
  release();
  await app.close();
});

test('the token of a dropped profile, sent to its client, is never handed out again', async () => {
  const { storage, release, inner } = gatedStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage, maxQueuedProfiles: 1, saveDelayMs: 0 } });
  const tokens: string[] = [];
  for (let i = 0; i < 10; i++) tokens.push((await run(app, '/health')).getHeader('x-debug-token')!);
  assert.is(app.profiler!.droppedProfiles, 8);
  release();
  await app.close();
  const saved = new Set((await inner.find({ limit: 100 })).map((summary) => summary.token));
  const dropped = tokens.filter((token) => !saved.has(token));
  assert.is(dropped.length, 8);
  for (const token of dropped) assert.is(await inner.claim(token), false, `${token} went out in X-Debug-Token`);
});

test('profiles that pile up while a batch is written go out together in the next batch', async () => {
  const { storage, batches, release, inner } = gatedStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage, maxQueuedProfiles: 2 * SAVE_BATCH_SIZE, saveDelayMs: 0 } });
  const total = SAVE_BATCH_SIZE + 20;
  for (let i = 0; i < total; i++) await run(app, '/health');
  release();
  await app.close();
  assert.equal(batches.map((batch) => batch.length), [1, SAVE_BATCH_SIZE, total - 1 - SAVE_BATCH_SIZE]);
  assert.is((await inner.find({ limit: 10_000 })).length, total);
  assert.is(app.profiler!.droppedProfiles, 0);
});

test('profiles made within the save delay go to the storage in one batch, and close() does not wait for the delay', async () => {
  const { storage, batches, release, inner } = gatedStorage();
  release();
  const app = createApp({ stderrLogLevel: false, profiler: { storage, saveDelayMs: 60_000 } });
  for (let i = 0; i < 25; i++) await run(app, '/health');
  assert.equal(batches, [], 'nothing written before the delay');
  const started = Date.now();
  await app.close();
  assert.ok(Date.now() - started < 5_000, 'close() saved at once');
  assert.equal(batches.map((batch) => batch.length), [25]);
  assert.is((await inner.find({ limit: 100 })).length, 25);
});

test('a profile asked for between the response and kernel.terminate is worked out from the recording (the toolbar may ask that early)', async () => {
  const storage = new MemoryStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage } });
  const request = Request.create('http://127.0.0.1:8000/missing');
  const response = await app.kernel.handle(request);
  const token = response.getHeader('x-debug-token')!;
  const early = app.profiler!.getUnsaved(token);
  assert.ok(early, 'known before terminate');
  assert.is(early!.status, 404);
  assert.equal(early!.children.length, 1, 'the error page sub-request is its child already');
  assert.is((app.profiler!.present(early!).collectors.request as { method: string }).method, 'GET');
  assert.ok((early!.collectors.logger as { logs: unknown[] }).logs.length > 0, 'with its logs');
  // The built-in collectors only read late (provisional): each one's data is there already.
  for (const name of ['exception', 'events', 'time', 'router', 'memory']) assert.ok(early!.collectors[name] !== undefined && early!.collectors[name] !== null, `with its ${name} data`);
  assert.is(await storage.read(token), null, 'not saved yet');
  await app.kernel.terminate(request, response);
  await app.close();
  const saved = await storage.read(token);
  assert.equal(saved!.collectors.request, early!.collectors.request);
  assert.equal(saved!.collectors.exception, early!.collectors.exception);
});

test('secret-looking route parameters are redacted in the request and router data', async () => {
  const storage = new MemoryStorage();
  const routes = new RouteCollection();
  routes.add('reset', new Route('/reset/:token/:step', { methods: ['GET'], defaults: { _controller: () => new Response('ok') } }));
  const app = createKernel({ debug: true, stderrLogLevel: false, routes, profiler: { storage } });
  const response = await run(app, '/reset/s3cr3t-value/confirm');
  await app.close();
  const stored = await storage.read(response.getHeader('x-debug-token')!);
  assert.ok(stored);
  // The path is the URL and stays as it is; the parameter maps are redacted before storage.
  assert.equal(((stored!.collectors.request as { attributes: Record<string, unknown> }).attributes)._route_params, { token: '[redacted]', step: 'confirm' });
  assert.is(((stored!.collectors.request as { attributes: Record<string, unknown> }).attributes).token, '[redacted]');
  const profile = app.profiler!.present(stored!);
  assert.equal((profile.collectors.router as { params: unknown }).params, { token: '[redacted]', step: 'confirm' });
  assert.equal((profile.collectors.request as { routeParams: unknown }).routeParams, { token: '[redacted]', step: 'confirm' });
});

test('request, router and logger data are stored without what can be worked out on reading, and presented whole', async () => {
  const storage = new MemoryStorage();
  const routes = new RouteCollection();
  routes.add('book', new Route('/books/:id', { methods: ['GET'], defaults: { _controller: function showBook() { return Response.json({ ok: true }); } } }));
  const app = createKernel({ debug: true, stderrLogLevel: false, routes, profiler: { storage } });
  const response = await run(app, '/books/42?page=2');
  await app.close();
  const stored = (await storage.read(response.getHeader('x-debug-token')!))!;
  const request = stored.collectors.request as Record<string, unknown>;
  for (const key of ['method', 'url', 'statusCode', 'statusText', 'clientIp', 'contentType', 'route', 'routeParams', 'controller']) assert.not.ok(key in request, `request.${key} is not stored`);
  assert.equal(stored.collectors.router, {}, 'the router stores nothing of its own: the route is in the request attributes');
  const storedLogger = stored.collectors.logger as { logs: Array<Record<string, unknown>> };
  assert.ok(storedLogger.logs.length > 0 && storedLogger.logs.every((record) => !('levelName' in record)));
  assert.not.ok('counts' in storedLogger);

  const shown = app.profiler!.present(stored).collectors;
  assert.equal(
    { ...(shown.request as Record<string, unknown>), requestHeaders: undefined, responseHeaders: undefined, attributes: undefined },
    {
      method: 'GET',
      url: 'http://127.0.0.1:8000/books/42?page=2',
      path: '/books/42',
      requestHeaders: undefined,
      query: { page: '2' },
      cookies: {},
      body: null,
      bodyTruncated: false,
      attributes: undefined,
      route: 'book',
      routeParams: { id: '42' },
      controller: 'showBook',
      clientIp: '127.0.0.1',
      requestType: 'main',
      statusCode: 200,
      statusText: 'OK',
      responseHeaders: undefined,
      contentType: 'application/json',
      session: null,
    },
  );
  const router = shown.router as { route: string; params: unknown; redirect: string | null; routed: unknown; traces: Array<{ name: string; verdict: string }> };
  assert.equal({ ...router, traces: undefined }, { route: 'book', params: { id: '42' }, redirect: null, routed: { method: 'GET', path: '/books/42', host: '127.0.0.1', scheme: 'http' }, traces: undefined });
  assert.equal(router.traces.filter((trace) => trace.name === 'book').map((trace) => trace.verdict), ['match']);
  const logger = shown.logger as { logs: Array<{ levelName: string; message: string }>; counts: Record<string, number>; errorCount: number; warningCount: number };
  assert.ok(logger.logs.some((record) => record.levelName === 'INFO' && record.message === 'Matched route "book".'));
  assert.is(logger.counts.INFO, logger.logs.filter((record) => record.levelName === 'INFO').length);
  assert.is(logger.errorCount + logger.warningCount, 0);
});

test('the router data of a redirect and of an error page sub-request is worked out on reading', async () => {
  const storage = new MemoryStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage } });
  const redirect = await run(app, '/health/?x=1');
  const missing = await run(app, '/nothing');
  await app.close();
  const present = async (token: string) => app.profiler!.present((await storage.read(token))!).collectors.router as { redirect: string | null; routed: unknown };
  const redirected = await present(redirect.getHeader('x-debug-token')!);
  assert.is(redirect.status, 301);
  assert.is(redirected.redirect, 'http://127.0.0.1:8000/health?x=1');
  assert.equal(redirected.routed, { method: 'GET', path: '/health/', host: '127.0.0.1', scheme: 'http' });
  assert.equal((await present(missing.getHeader('x-debug-token')!)).routed, { method: 'GET', path: '/nothing', host: '127.0.0.1', scheme: 'http' });
  assert.is((await present(missing.getHeader('x-previous-debug-token')!)).routed, null, 'the error page was never routed');
});

test('profiles stored whole by earlier versions are presented as they were stored', () => {
  const app = createKernel({ debug: true, stderrLogLevel: false, profiler: { storage: new MemoryStorage() } });
  const request = { method: 'POST', url: 'http://old/x', path: '/x', requestHeaders: {}, query: {}, cookies: {}, body: null, bodyTruncated: false, attributes: {}, route: 'old_route', routeParams: { a: '1' }, controller: 'Old::run', clientIp: '10.0.0.9', requestType: 'main', statusCode: 418, statusText: 'Teapot', responseHeaders: {}, contentType: 'text/plain', session: null };
  const logger = { logs: [{ time: 1, level: 4, levelName: 'WARNING', channel: 'app', message: 'm', context: {} }], counts: { WARNING: 1 }, errorCount: 0, warningCount: 1 };
  const router = { route: 'old_route', params: { a: '1' }, redirect: null, routed: null };
  const old: Profile = { token: 'abcdef', parent: null, children: [], ip: '10.0.0.9', method: 'POST', url: 'http://old/x', time: 1, status: 418, collectors: { request, logger, router } };
  const shown = app.profiler!.present(old).collectors;
  assert.equal(shown.request, request);
  assert.equal(shown.logger, logger);
  assert.equal({ ...(shown.router as object), traces: undefined }, { ...router, traces: undefined });
});

test('a sub-request\'s response is copied for its profile as it is, not refused by the Response constructor\'s checks (a header set by hand to a list of numbers, which node:http sends)', async () => {
  const storage = new MemoryStorage();
  const inner = () => {
    const response = new Response('inner');
    response.headers['x-ids'] = [5, 6] as never;
    return response;
  };
  const routes = new RouteCollection().add('outer', new Route('/outer', { defaults: { _controller: async (request: Request) => {
    const sub = await app.kernel.handle(request.duplicate({ attributes: { _controller: inner } }), RequestType.SUB);
    return new Response(`outer ${String(sub.body)} ${String(sub.headers['x-ids'])}`);
  } } }));
  const app = createKernel({ debug: true, stderrLogLevel: false, routes, profiler: { storage } });
  const response = await run(app, '/outer');
  await app.close();
  assert.is(response.status, 200);
  assert.is(response.body, 'outer inner 5,6');
});

test('a sub-request\'s response header named __proto__ is copied for its profile as any other', async () => {
  const storage = new MemoryStorage();
  const inner = () => new Response('inner').setHeader('__Proto__', 'x');
  const routes = new RouteCollection().add('outer', new Route('/outer', { defaults: { _controller: async (request: Request) => {
    await app.kernel.handle(request.duplicate({ attributes: { _controller: inner } }), RequestType.SUB);
    return new Response('outer');
  } } }));
  const app = createKernel({ debug: true, stderrLogLevel: false, routes, profiler: { storage } });
  const token = (await run(app, '/outer')).getHeader('x-debug-token')!;
  await app.close();
  const sub = (await storage.read((await storage.read(token))!.children[0]!))!;
  const headers = (sub.collectors.request as RequestData).responseHeaders;
  assert.ok(Object.hasOwn(headers, '__proto__'));
  assert.is(headers['__proto__'], 'x');
});

test('a collector that throws late costs its profile only (not its sub-request\'s), logged, never the request', async () => {
  const storage = new MemoryStorage();
  const errors: string[] = [];
  const failing = { name: 'failing', lateCollect: ({ requestType }: { requestType: string }) => {
    if (requestType === 'main') throw new Error('collector broke');
    return { ok: true };
  } };
  const app = createApp({ stderrLogLevel: false, profiler: { storage, collectors: [failing] } });
  app.bus.on('log', ({ record }) => {
    if (record.level <= 3) errors.push(record.message);
  });
  const response = await run(app, '/missing');
  await app.close();
  assert.is(response.status, 404);
  assert.is(await storage.read(response.getHeader('x-debug-token')!), null, 'the main profile is lost');
  const sub = await storage.read(response.getHeader('x-previous-debug-token')!);
  assert.equal(sub?.collectors['failing'], { ok: true }, 'the error page sub-request is saved');
  assert.ok(errors.some((message) => message.includes('a collector failed (collector broke)')), errors.join('\n'));
});

test('a collector whose collect() throws on kernel.response costs its profile only, logged, never the request', async () => {
  const storage = new MemoryStorage();
  const errors: string[] = [];
  const early = {
    name: 'early',
    collect: ({ request }: { request: Request }) => {
      if (request.path === '/health') throw new Error('collect broke');
      return { fine: true };
    },
  };
  const app = createApp({ stderrLogLevel: false, profiler: { storage, collectors: [early] } });
  app.bus.on('log', ({ record }) => void (record.level <= 3 && errors.push(record.message)));
  const bad = await run(app, '/health');
  const good = await run(app, '/');
  await app.close();
  assert.is(bad.status, 200, 'answered as without the collector');
  assert.ok(bad.getHeader('x-debug-token'));
  assert.is(await storage.read(bad.getHeader('x-debug-token')!), null);
  assert.equal((await storage.read(good.getHeader('x-debug-token')!))?.collectors['early'], { fine: true });
  assert.ok(errors.some((message) => message.includes('a collector failed (collect broke)')), errors.join('\n'));
});

test('a collector that returns a promise is refused (its profile dropped, logged, not saved as {}), and its rejection never reaches the process', async () => {
  const storage = new MemoryStorage();
  const errors: string[] = [];
  let unhandled = 0;
  const onUnhandled = (): void => void unhandled++;
  process.on('unhandledRejection', onUnhandled);
  try {
    const late = { name: 'late', lateCollect: async () => Promise.reject(new Error('async broke')) };
    const app = createApp({ stderrLogLevel: false, profiler: { storage, collectors: [late] } });
    app.bus.on('log', ({ record }) => void (record.level <= 3 && errors.push(record.message)));
    const response = await run(app, '/health');
    await app.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.is(response.status, 200);
    assert.is(unhandled, 0);
    assert.is(await storage.read(response.getHeader('x-debug-token')!), null);
    assert.ok(errors.some((message) => message.includes('The collector "late" returned a promise from lateCollect()')), errors.join('\n'));
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test('a profile seen before kernel.terminate runs an embedder\'s lateCollect() only at kernel.terminate, once, unless it says it only reads; one that throws there makes the early view unknown, not a failure', async () => {
  const calls: string[] = [];
  const counting = { name: 'counting', collect: () => 'early', lateCollect: (_context: unknown, collected: unknown) => (calls.push('counting'), `${String(collected)} then late`) };
  const reading = { name: 'reading', provisional: true, lateCollect: () => (calls.push('reading'), 'read') };
  let failing = false;
  const fragile = { name: 'fragile', provisional: true, lateCollect: () => (failing ? (() => { throw new Error('not ready'); })() : 'ok') };
  const storage = new MemoryStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage, collectors: [counting, reading, fragile] } });
  const request = Request.create('http://127.0.0.1:8000/health');
  const response = await app.kernel.handle(request);
  const token = response.getHeader('x-debug-token')!;
  const early = app.profiler!.getUnsaved(token)!;
  assert.is(early.collectors['counting'], 'early', 'what collect() gathered');
  assert.is(early.collectors['reading'], 'read');
  failing = true;
  assert.is(app.profiler!.getUnsaved(token), undefined);
  assert.is(await app.profiler!.loadProfile(token), null);
  failing = false;
  await app.kernel.terminate(request, response);
  await app.close();
  // Three early views (the first, the failing one, loadProfile's), then kernel.terminate's collection.
  assert.equal(calls, ['reading', 'reading', 'reading', 'counting', 'reading']);
  assert.is((await storage.read(token))!.collectors['counting'], 'early then late');
});

test('a storage of an embedder\'s own is given each profile\'s JSON as a string it may keep; one that says it copies bytes gets bytes', async () => {
  for (const copies of [false, true]) {
    const inner = new MemoryStorage();
    const kinds: string[] = [];
    const kept: StorableProfile[] = [];
    const storage: ProfilerStorage = {
      ...writingThrough(inner, async (profiles) => {
        for (const profile of profiles) {
          kinds.push(typeof (profile as EncodedProfile).json);
          kept.push(profile);
          await inner.write(profile);
        }
      }),
      copiesProfileBytes: copies,
    };
    const app = createApp({ stderrLogLevel: false, profiler: { storage } });
    for (let i = 0; i < 3; i++) await run(app, `/health?n=${i}`);
    await app.close();
    assert.equal(kinds, Array(3).fill(copies ? 'object' : 'string'), String(copies));
    if (!copies) for (const [i, profile] of kept.entries()) assert.ok(String((decodeProfile(profile as EncodedProfile) as Profile).url).endsWith(`n=${i}`));
  }
});

test('MemoryStorage reads a profile whose collector wrote RawJson that is no JSON as unknown (null), as FileStorage does, not as a failure', async () => {
  const storage = new MemoryStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage, collectors: [{ name: 'raw', lateCollect: () => new RawJson('{"a":') }] } });
  const response = await run(app, '/health');
  await app.close();
  assert.is(await storage.read(response.getHeader('x-debug-token')!), null);
});

test('a collector whose data cannot be serialised costs its profile only, logged, never the request', async () => {
  const storage = new MemoryStorage();
  const errors: string[] = [];
  const app = createApp({ stderrLogLevel: false, profiler: { storage, collectors: [{ name: 'bigint', collect: ({ request }) => (request.path === '/health' ? { big: 1n } : { big: 'fine' }) }] } });
  app.bus.on('log', ({ record }) => {
    if (record.level <= 3) errors.push(record.message);
  });
  const bad = await run(app, '/health');
  const good = await run(app, '/');
  await app.close();
  assert.is(bad.status, 200);
  assert.is(await storage.read(bad.getHeader('x-debug-token')!), null);
  assert.ok(await storage.read(good.getHeader('x-debug-token')!));
  assert.ok(errors.some((message) => message.includes('not JSON-serialisable')), errors.join('\n'));
});

test("a collector's data past 2 MiB of JSON is stored as a note of its size, the other collectors' as they are (50 MB made a profile of 50 MB)", async () => {
  const storage = new MemoryStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage, collectors: [{ name: 'huge', lateCollect: () => ({ blob: 'x'.repeat(50 * 1024 * 1024) }) }, { name: 'small', lateCollect: () => ({ blob: 'y'.repeat(1024 * 1024) }) }] } });
  const response = await run(app, '/health');
  await app.close();
  assert.is(MAX_COLLECTOR_JSON, 2 * 1024 * 1024);
  const stored = await storage.read(response.getHeader('x-debug-token')!);
  const json = JSON.stringify(stored);
  assert.ok(json.length < 1.5 * 1024 * 1024, `${json.length} characters`);
  assert.is(stored!.collectors['huge'], `[data of ${50 * 1024 * 1024 + '{"blob":""}'.length} characters left out: longer than 2097152]`);
  assert.is((stored!.collectors['small'] as { blob: string }).blob.length, 1024 * 1024);
  assert.ok(Array.isArray((stored!.collectors['logger'] as { logs: unknown[] }).logs));
});

test("isLeftOutData() tells the note that takes a collector's data's place from any other value", () => {
  const encoded = decodeProfile(encodeProfile({ token: 'abc123', parent: null, children: [], ip: '127.0.0.1', method: 'GET', url: 'http://127.0.0.1/', time: 0, status: 200, collectors: { huge: 'x'.repeat(MAX_COLLECTOR_JSON) } }));
  assert.ok(isLeftOutData(encoded.collectors['huge']), String(encoded.collectors['huge']));
  for (const other of ['[data of many characters left out: longer than 2097152]', ' [data of 3 characters left out: longer than 2]', '[value of at least 262145 characters left out: longer than 262144]', { note: encoded.collectors['huge'] }, null]) {
    assert.not.ok(isLeftOutData(other), JSON.stringify(other));
  }
});

test("data left out as too large is presented as its note, not as the empty data a collector's present() takes it for", async () => {
  const app = createApp({ stderrLogLevel: false, profiler: { storage: new MemoryStorage(), collectors: [{ name: 'cache', lateCollect: () => ({}), present: () => ({ hits: 0 }) }] } });
  const response = await run(app, '/health');
  const profile = (await app.profiler!.loadProfile(response.getHeader('x-debug-token')!))!;
  await app.close();
  const note = '[data of 2097153 characters left out: longer than 2097152]';
  const names = ['request', 'exception', 'logger', 'events', 'time', 'router', 'memory', 'cache'];
  const shown = app.profiler!.present({ ...profile, collectors: Object.fromEntries(names.map((name) => [name, note])) }).collectors;
  for (const name of names) assert.is(shown[name], note, name);
});

test("a profile whose collectors' data was left out as too large still has its toolbar, and its JSON page keeps the notes", async () => {
  const storage = new MemoryStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage, saveDelayMs: 0 } });
  const profile = (await storage.read((await run(app, '/health')).getHeader('x-debug-token')!))!;
  const note = '[data of 2097153 characters left out: longer than 2097152]';
  const collectors = Object.fromEntries(Object.keys(profile.collectors).map((name) => [name, note]));
  await storage.write({ ...profile, token: 'f00d00', collectors });
  const toolbar = await run(app, '/_wdt/f00d00');
  const request = Request.create('http://127.0.0.1:8000/_profiler/f00d00', 'GET', { headers: { accept: 'application/json' } });
  const page = await app.kernel.handle(request);
  await app.kernel.terminate(request, page);
  await app.close();
  assert.is(toolbar.status, 200, String(toolbar.body).slice(0, 300));
  assert.match(String(toolbar.body), 'id="hk-toolbar"');
  assert.is(page.status, 200);
  assert.equal((JSON.parse(String(page.body)) as Profile).collectors, collectors);
});

test('encodeProfile writes the JSON that JSON.stringify would, with RawJson data spliced in', () => {
  const profile: Profile = {
    token: 'abc123',
    parent: null,
    children: ['def456'],
    ip: '127.0.0.1',
    method: 'GET',
    url: 'http://127.0.0.1/"quoted"?x=\u2028',
    time: 1795300000000,
    status: 404,
    collectors: { raw: new RawJson('{"calls":[["kernel.request","A::b",0,12,3]]}'), plain: { a: [1, 'two', null] }, gone: undefined, empty: null },
  };
  const encoded = encodeProfile(profile);
  const json = encoded.json.toString();
  assert.equal(JSON.parse(json), JSON.parse(JSON.stringify(profile)));
  assert.equal(Object.keys(JSON.parse(json).collectors), ['raw', 'plain', 'empty']);
  assert.equal(JSON.parse(json).collectors.raw, { calls: [['kernel.request', 'A::b', 0, 12, 3]] });
  assert.equal(decodeProfile(encoded), JSON.parse(JSON.stringify(profile)));
  assert.equal({ ...encoded, json: undefined }, { token: 'abc123', parent: null, ip: '127.0.0.1', method: 'GET', url: profile.url, time: 1795300000000, status: 404, json: undefined });
});

test('a listener of priority Infinity is recorded as JSON would have it (null), and the profile saves', async () => {
  const storage = new MemoryStorage();
  const first = { getSubscribedEvents: () => ({ 'kernel.request': ['onRequest', Infinity] as const }), onRequest() {} };
  const app = createKernel({ debug: true, stderrLogLevel: false, routes: new RouteCollection(), subscribers: [first], profiler: { storage } });
  const response = await run(app, '/anything');
  await app.close();
  const profile = await storage.read(response.getHeader('x-debug-token')!);
  assert.ok(profile, 'saved');
  const called = (app.profiler!.present(profile!).collectors.events as { called: Array<{ listener: string; priority: number | null }> }).called;
  assert.equal(called.find((call) => call.listener === 'subscriber::onRequest')?.priority, null);
});

test('encodeProfileParts writes the JSON of the profile it is given in parts, also when its ip, method or URL differ from the last one\'s', () => {
  const base: Profile = { token: 'abc123', parent: null, children: [], ip: '127.0.0.1', method: 'GET', url: 'http://127.0.0.1/a', time: 1795300000000, status: 200, collectors: { raw: new RawJson('{"x":1}'), plain: [1] } };
  const variants: Profile[] = [base, { ...base, token: 'abc124' }, { ...base, url: 'http://127.0.0.1/b' }, { ...base, method: 'POST' }, { ...base, ip: '::1' }, { ...base, parent: 'fff000', children: ['a', 'b'] }, base];
  for (const profile of variants) {
    const { collectors, children, ...summary } = profile;
    const json = encodeProfileParts(summary, children, Object.keys(collectors), Object.values(collectors)).json as string;
    assert.is(json, JSON.stringify(profile));
    assert.is(encodeProfile(profile).json, json);
  }
});

test('a collector named like an array index is saved first, as an object lists it; one named __proto__ under its own name, as any other', async () => {
  const saved: string[] = [];
  const storage = writingThrough(new MemoryStorage(), async (profiles) => {
    for (const profile of profiles) saved.push((profile as EncodedProfile).json.toString());
  });
  const collectors = [
    { name: 'seven', lateCollect: () => 'named' },
    { name: '7', lateCollect: () => 'indexed' },
    { name: '__proto__', lateCollect: () => ({ polluted: true }) },
  ];
  const app = createKernel({ debug: true, stderrLogLevel: false, routes: new RouteCollection(), profiler: { storage, collectors } });
  await run(app, '/anything');
  await app.close();
  assert.is(saved.length, 2, 'the 404 and its error page sub-request');
  for (const json of saved) {
    // An object lists an index first; `__proto__` is a key like any other (assigned, it set the prototype, and its data was lost).
    assert.ok(json.includes('"collectors":{"7":"indexed",'), json.slice(0, 200));
    assert.ok(json.endsWith(',"seven":"named","__proto__":{"polluted":true}}}'), json.slice(-200));
    const read = (JSON.parse(json) as Profile).collectors;
    assert.ok(Object.hasOwn(read, '__proto__'));
    assert.is(Object.getPrototypeOf(read), Object.prototype);
  }
  assert.is(({} as Record<string, unknown>).polluted, undefined);
});

test('a collector named __proto__ alone has its data saved and presented under its name, as any other', async () => {
  const storage = new MemoryStorage();
  const collectors = [{ name: '__proto__', lateCollect: () => ({ mine: 1 }), present: (data: unknown) => ({ shown: data }) }];
  const app = createKernel({ debug: true, stderrLogLevel: false, routes: new RouteCollection(), profiler: { storage, collectors } });
  const token = (await run(app, '/anything')).getHeader('x-debug-token')!;
  await app.close();
  const profile = (await storage.read(token))!;
  assert.ok(Object.hasOwn(profile.collectors, '__proto__'), 'saved as an own key');
  assert.equal(profile.collectors['__proto__'], { mine: 1 });
  assert.equal(Object.getOwnPropertyDescriptor(app.profiler!.present(profile).collectors, '__proto__')?.value, { shown: { mine: 1 } });
});

test('a collector whose present() answers what JSON cannot write (a BigInt, a cycle, a promise, undefined) is shown as stored, and the profile\'s JSON page still answers', async () => {
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  const collectors = [
    { name: 'big', lateCollect: () => ({ stored: 'big' }), present: () => ({ n: 1n }) },
    { name: 'cycle', lateCollect: () => ({ stored: 'cycle' }), present: () => cycle },
    { name: 'later', lateCollect: () => ({ stored: 'later' }), present: () => Promise.resolve({ n: 1 }) },
    { name: 'nothing', lateCollect: () => ({ stored: 'nothing' }), present: () => undefined },
    { name: 'fine', lateCollect: () => ({ stored: 'fine' }), present: (data: unknown) => ({ ...(data as object), shown: true }) },
  ];
  const app = createKernel({ debug: true, stderrLogLevel: false, routes: new RouteCollection(), profiler: { storage: new MemoryStorage(), collectors, saveDelayMs: 0 } });
  const token = (await run(app, '/anything')).getHeader('x-debug-token')!;
  const request = Request.create(`http://127.0.0.1:8000/_profiler/${token}`, 'GET', { headers: { accept: 'application/json' } });
  const page = await app.kernel.handle(request);
  await app.kernel.terminate(request, page);
  const html = await run(app, `/_profiler/${token}?panel=big`);
  await app.close();
  assert.is(page.status, 200, String(page.body).slice(0, 300));
  const shown = (JSON.parse(String(page.body)) as { collectors: Record<string, unknown> }).collectors;
  for (const name of ['big', 'cycle', 'later', 'nothing']) assert.equal(shown[name], { stored: name }, name);
  assert.equal(shown.fine, { stored: 'fine', shown: true });
  assert.is(html.status, 200);
  assert.ok(String(html.body).includes('&quot;stored&quot;: &quot;big&quot;'));
});

test("the built-in collectors' present() answers are not written as JSON to check them on every page view; an embedder's still are", async () => {
  const storage = new MemoryStorage();
  let checked = 0;
  const toJSON = () => (checked++, {});
  const app = createApp({ stderrLogLevel: false, profiler: { storage, saveDelayMs: 0, collectors: [{ name: 'cache', lateCollect: () => ({}), present: () => ({ toJSON }) }] } });
  const profile = (await storage.read((await run(app, '/health')).getHeader('x-debug-token')!))!;
  await app.close();
  // request, logger, router and time present what they were given along with what they work out: toJSON is in each answer.
  const built = ['request', 'logger', 'router', 'time'];
  const collectors = { ...profile.collectors, ...Object.fromEntries(built.map((name) => [name, { ...(profile.collectors[name] as object), toJSON }])) };
  const shown = app.profiler!.present({ ...profile, collectors }).collectors;
  for (const name of built) assert.is((shown[name] as { toJSON: unknown }).toJSON, toJSON, name);
  assert.is(checked, 1, "only the cache collector's answer was written");
  class LateRequests extends RequestCollector {
    override present(): RequestData {
      return { toJSON } as unknown as RequestData;
    }
  }
  const profiler = new Profiler({ storage, requestStack: new RequestStack(), redactor: new Redactor(), collectors: [new LateRequests(new Redactor())] });
  profiler.present(profile);
  assert.is(checked, 2, "a subclass's own present() is checked");
});

test('a collector named like an Object.prototype member (toString, constructor, __proto__) is presented only for data the profile holds, as its own key', () => {
  const asked: unknown[] = [];
  const collectors = ['toString', 'constructor', '__proto__'].map((name) => ({ name, lateCollect: () => 'data', present: (data: unknown) => (asked.push(data), { shown: data }) }));
  const profiler = new Profiler({ storage: new MemoryStorage(), requestStack: new RequestStack(), redactor: new Redactor(), collectors });
  const profile = { token: 'abc123', parent: null, children: [], ip: '127.0.0.1', method: 'GET', url: 'http://a.test/', time: 0, status: 200, collectors: {} } as unknown as Profile;
  const none = profiler.present(profile).collectors;
  assert.equal(Object.keys(none), [], 'no data: nothing presented');
  assert.is(Object.getPrototypeOf(none), Object.prototype);
  assert.equal(asked, []);
  const shown = profiler.present({ ...profile, collectors: JSON.parse('{"constructor": "c", "toString": "t", "__proto__": "p"}') as Record<string, unknown> }).collectors;
  assert.is(Object.getPrototypeOf(shown), Object.prototype);
  assert.equal(Object.entries(shown), [['constructor', { shown: 'c' }], ['toString', { shown: 't' }], ['__proto__', { shown: 'p' }]]);
});

test('the profiler\'s own kernel.terminate listener, running while the profile is taken, is not listed as not called', async () => {
  const storage = new MemoryStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage } });
  // Twice: the second profile is written from the events collector's cached template.
  for (let i = 0; i < 2; i++) await run(app, '/health');
  await app.close();
  const summaries = await storage.find({ limit: 10 });
  assert.is(summaries.length, 2);
  for (const { token } of summaries) {
    const profile = await storage.read(token);
    const events = app.profiler!.present(profile!).collectors.events as { notCalled: Array<{ event: string; listener: string }> };
    const notCalled = events.notCalled.map((l) => `${l.event} ${l.listener}`);
    assert.not.ok(notCalled.some((name) => name.startsWith('kernel.terminate ')), notCalled.join('; '));
    assert.ok(notCalled.includes('kernel.exception Profiler::onKernelException'), 'a request without an error calls no exception listener');
  }
});

test('the timeline starts with the request\'s first dispatch: no listener starts before it, not even one called before the profiler\'s', async () => {
  const storage = new MemoryStorage();
  const app = createApp({ stderrLogLevel: false, profiler: { storage } });
  const busyUntil = (ms: number) => {
    const end = performance.now() + ms;
    while (performance.now() < end);
  };
  // Called before the profiler's kernel.request listener (1024), and slow enough to show.
  let listenerStarted = 0;
  app.kernel.dispatcher.addListener(KernelEvents.REQUEST, () => ((listenerStarted = Date.now()), busyUntil(3)), 2048);
  const before = Date.now();
  const response = await run(app, '/health');
  await app.close();
  const profile = app.profiler!.present((await storage.read(response.getHeader('x-debug-token')!))!);
  // Between the call and the early listener's start (1 ms either way: two clocks), whatever else the machine is doing.
  assert.ok(profile.time >= before - 1 && profile.time <= listenerStarted + 1, `profiled at ${profile.time}, the request began at ${before}, its first listener at ${listenerStarted}`);
  const called = (profile.collectors.events as { called: Array<{ listener: string; start: number; duration: number }> }).called;
  assert.ok(called.every((call) => call.start >= 0), called.map((call) => `${call.listener} ${call.start}`).join('; '));
  assert.is(called[0]!.start, 0, 'the first listener starts the timeline');
  assert.ok(called[0]!.duration >= 3, `the early listener's 3 ms are in it (${called[0]!.duration})`);
  const time = profile.collectors.time as { duration: number; periods: Array<{ start: number }> };
  assert.ok(time.duration >= 3, `the total holds the early listener (${time.duration} ms)`);
  assert.ok(time.periods.every((period) => period.start >= 0));
});

test('a record written outside any request, while requests are in flight, goes to no profile', async () => {
  const storage = new MemoryStorage();
  let arrived!: () => void;
  let proceed!: () => void;
  const inController = new Promise<void>((resolve) => (arrived = resolve));
  const gate = new Promise<void>((resolve) => (proceed = resolve));
  let app: ReturnType<typeof createKernel>;
  const routes = new RouteCollection().add('slow', new Route('/slow', { defaults: { _controller: async () => {
    app.logger.info('Inside the request');
    arrived();
    await gate;
    return new Response('ok');
  } } }));
  app = createKernel({ debug: true, stderrLogLevel: false, routes, profiler: { storage, saveDelayMs: 0 } });
  try {
    const pending = Promise.all([run(app, '/slow'), run(app, '/slow')]);
    await inController;
    // Test code, a timer and a microtask started here run outside any request.
    app.logger.warning('Written by the process');
    await new Promise<void>((resolve) => setTimeout(() => (app.logger.warning('Written by a timer'), resolve()), 5));
    await Promise.resolve().then(() => app.logger.warning('Written by a microtask'));
    proceed();
    const responses = await pending;
    await app.close();
    for (const response of responses) {
      const profile = await storage.read(response.getHeader('x-debug-token')!);
      const messages = (profile!.collectors.logger as { logs: Array<{ message: string }> }).logs.map((record) => record.message);
      assert.equal(messages, ['Matched route "slow".', 'Inside the request']);
    }
  } finally {
    proceed();
    await app!.close();
  }
});

test('what kernel.terminate listeners log is in their request\'s profile; what a failing save logs carries no request', async () => {
  const inner = new MemoryStorage();
  let failing = false;
  const storage = writingThrough(inner, async (profiles) => {
    if (failing) throw new Error('disk full');
    for (const profile of profiles) await inner.write(profile);
  });
  const mailer = {
    getSubscribedEvents: () => ({ [KernelEvents.TERMINATE]: 'onTerminate' }),
    onTerminate: (event: TerminateEvent) => app.logger.notice('Mail sent for {path}', { path: event.request.path }),
  };
  const routes = new RouteCollection().add('home', new Route('/', { defaults: { _controller: () => new Response('ok') } }));
  const app = createKernel({ debug: true, stderrLogLevel: false, routes, subscribers: [mailer], profiler: { storage, saveDelayMs: 0 } });
  const entries: LogEntry[] = [];
  app.bus.on('log', (entry) => void entries.push(entry));
  const response = await run(app, '/');
  failing = true;
  await run(app, '/');
  await app.close();
  const profile = await inner.read(response.getHeader('x-debug-token')!);
  const logs = (profile!.collectors.logger as { logs: Array<{ message: string }> }).logs;
  assert.equal(logs.map((record) => record.message), ['Matched route "home".', 'Mail sent for /']);
  const failure = entries.find(({ record }) => record.message.startsWith('Profiler storage failed'));
  assert.ok(failure, 'the failing save is logged');
  assert.is(failure!.request, undefined);
});

test('a profile refused as its token holds another (ProfileExistsError, a collision) is one warning naming its request, not a storage failure that "works again" later', async () => {
  const inner = new MemoryStorage();
  const storage = writingThrough(inner, async (profiles) => {
    for (const profile of profiles) {
      // Another writer stored a profile under the token first.
      if (profile.url.endsWith('/taken')) await inner.write(profile);
      await inner.write(profile);
    }
  });
  const routes = new RouteCollection().add('any', new Route('/:name', { defaults: { _controller: () => new Response('ok') } }));
  const app = createKernel({ debug: true, stderrLogLevel: false, routes, profiler: { storage, saveDelayMs: 0 } });
  const entries: LogEntry[] = [];
  app.bus.on('log', (entry) => void entries.push(entry));
  let token: string | undefined;
  try {
    token = (await run(app, '/taken')).getHeader('x-debug-token') as string | undefined;
    await run(app, '/next');
  } finally {
    await app.close();
  }
  assert.ok(token);
  const profilerRecords = entries.filter(({ record }) => record.channel === 'profiler');
  assert.equal(profilerRecords.map(({ record }) => record.levelName), ['WARNING'], profilerRecords.map(({ record }) => record.message).join(' | '));
  const { record } = profilerRecords[0]!;
  assert.match(record.message, 'not saved');
  assert.match(JSON.stringify(record), token!);
  assert.match(JSON.stringify(record), '/taken');
  assert.is(profilerRecords[0]!.request, undefined, 'the process\'s record');
});

test('a save failed by a stop of the storage thread, which the storage gave its onError (logged at ERROR), is one ERROR line, not two: the failing period it starts is a WARNING', async () => {
  const inner = new MemoryStorage();
  let failing = false;
  const stop = new ProfilerStorageError('The profiler storage thread for /var/profiler stopped (exit code 1): Worker terminated due to reaching memory limit: JS heap out of memory. 1 batch of profiles in flight on it (1 profile) was not saved.', THREAD_STOPPED_CODE);
  // As ThreadedFileStorage with createKernel's onError: the stop reported once, and the batch in flight failing with it.
  const storage = writingThrough(inner, async (profiles) => {
    if (failing) {
      markReported(stop);
      storageErrorLogger(app.logger)(stop);
      throw stop;
    }
    for (const profile of profiles) await inner.write(profile);
  });
  const routes = new RouteCollection().add('home', new Route('/', { defaults: { _controller: () => new Response('ok') } }));
  const app = createKernel({ debug: true, stderrLogLevel: false, routes, profiler: { storage, saveDelayMs: 0 } });
  const entries: LogEntry[] = [];
  app.bus.on('log', (entry) => void entries.push(entry));
  await run(app, '/');
  failing = true;
  await run(app, '/');
  await app.close();
  const errors = entries.filter(({ record }) => record.levelName === 'ERROR').map(({ record }) => record.message);
  assert.equal(errors, [stop.message], 'the stop, once');
  const period = entries.find(({ record }) => record.message.startsWith('Profiler storage failed'));
  assert.ok(period, 'the failing period is still said');
  assert.is(period!.record.levelName, 'WARNING');
});

/**
 * Runs two requests through a debug app whose ThreadedFileStorage never starts (a 1 MB old generation: the thread
 * runs out of memory while it loads), the storage's errors given to `onError(app)`; `check` reads the app's log entries.
 */
async function withUnstartableThread(onError: (app: ReturnType<typeof createKernel>) => StorageErrorHandler, check: (entries: LogEntry[]) => void): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'hk-profiler-thread-'));
  const storage = new ThreadedFileStorage({ dir, resourceLimits: { maxOldGenerationSizeMb: 1, maxYoungGenerationSizeMb: 1 }, onError: (error) => onError(app)(error) });
  const routes = new RouteCollection().add('home', new Route('/', { defaults: { _controller: () => new Response('ok') } }));
  const app = createKernel({ debug: true, stderrLogLevel: false, routes, profiler: { storage, saveDelayMs: 0 } });
  const entries: LogEntry[] = [];
  app.bus.on('log', (entry) => void entries.push(entry));
  try {
    assert.is((await run(app, '/')).status, 200);
    await run(app, '/');
    check(entries);
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a storage thread that could not start, which the storage logs itself at ERROR, is one ERROR line, not two: the failing period it starts is a WARNING', () =>
  withUnstartableThread(
    (app) => storageErrorLogger(app.logger),
    (entries) => {
      const errors = entries.filter(({ record }) => record.levelName === 'ERROR').map(({ record }) => record.message);
      assert.is(errors.length, 1, errors.join('\n'));
      assert.match(errors[0]!, /^The profiler storage thread for .* stopped/);
      const period = entries.find(({ record }) => record.message.startsWith('Profiler storage failed'));
      assert.ok(period, 'the failing period is still said');
      assert.is(period!.record.levelName, 'WARNING');
    },
  ));

test("a storage thread that could not start, given to an onError of one's own that logs nothing, leaves the profiler's line an ERROR: no failure goes without one", () => {
  const given: Error[] = [];
  return withUnstartableThread(
    () => (error) => void given.push(error),
    (entries) => {
      assert.ok(given.length > 0, 'the storage gave its onError the failure');
      const errors = entries.filter(({ record }) => record.levelName === 'ERROR').map(({ record }) => record.message);
      assert.is(errors.length, 1, errors.join('\n'));
      assert.match(errors[0]!, /^Profiler storage failed, profiles are not saved until it recovers: The profiler storage thread for .* stopped/);
    },
  );
});

test("a storage thread that could not start, given to an onError of one's own that logs it at ERROR and returns true, is one ERROR line, that onError's: the profiler's line is a WARNING", () =>
  withUnstartableThread(
    (app) => (error) => {
      app.logger.error('My profiler storage failed: {message}', { message: error.message });
      return true;
    },
    (entries) => {
      const errors = entries.filter(({ record }) => record.levelName === 'ERROR').map(({ record }) => record.message);
      assert.ok(errors.length >= 1, 'the onError logged');
      for (const error of errors) assert.match(error, /^My profiler storage failed: The profiler storage thread for .* stopped/);
      const period = entries.find(({ record }) => record.message.startsWith('Profiler storage failed'));
      assert.ok(period, 'the failing period is still said');
      assert.is(period!.record.levelName, 'WARNING');
    },
  ));

test('a storage that fails to give tokens (a full disk) is asked again at most every few seconds: meanwhile requests go unrecorded at once, not each waiting for the failure', async () => {
  const inner = new MemoryStorage();
  let claims = 0;
  const storage: ProfilerStorage = {
    ...writingThrough(inner, (profiles) => inner.writeMany(profiles)),
    claim: async () => {
      claims++;
      await new Promise((resolve) => setTimeout(resolve, 20));
      throw new Error('ENOSPC: no space left on device');
    },
  };
  const routes = new RouteCollection().add('home', new Route('/', { defaults: { _controller: () => new Response('ok') } }));
  const app = createKernel({ debug: true, stderrLogLevel: false, routes, profiler: { storage } });
  const entries: LogEntry[] = [];
  app.bus.on('log', (entry) => void entries.push(entry));
  try {
    await app.ready();
    const first = await run(app, '/');
    assert.is(first.status, 200);
    assert.is(first.getHeader('x-debug-token'), undefined);
    const claimsAfterFirst = claims;
    const started = performance.now();
    for (let i = 0; i < 20; i++) {
      const response = await run(app, '/');
      assert.is(response.status, 200);
      assert.is(response.getHeader('x-debug-token'), undefined);
    }
    assert.is(claims, claimsAfterFirst, 'no request asked the failing storage again');
    assert.ok(performance.now() - started < 200, `20 requests took ${Math.round(performance.now() - started)} ms`);
    const failures = entries.filter(({ record }) => record.message.startsWith('Profiler storage failed'));
    assert.is(failures.length, 1, 'logged once');
    assert.is(failures[0]!.request, undefined, 'the process\'s record, not the request\'s that asked for a token');
  } finally {
    await app.close();
  }
});

test('log messages in a profile: placeholders of secret keys filled with [redacted], each message cut at 10,000 characters, records past a million characters counted, not kept', async () => {
  const storage = new MemoryStorage();
  let app: ReturnType<typeof createKernel>;
  const routes = new RouteCollection()
    .add('login', new Route('/login', { defaults: { _controller: () => {
      app.logger.info('Login for {user} with {password}', { user: 'bob', password: 'hunter2' });
      app.logger.info('x'.repeat(25_000));
      return new Response('ok');
    } } }))
    .add('chatty', new Route('/chatty', { defaults: { _controller: () => {
      for (let i = 0; i < 300; i++) app.logger.debug(`${i} ${'y'.repeat(9_000)}`);
      return new Response('ok');
    } } }));
  app = createKernel({ debug: true, stderrLogLevel: false, routes, profiler: { storage, saveDelayMs: 0 } });
  let login: Response;
  let chatty: Response;
  try {
    login = await run(app, '/login');
    chatty = await run(app, '/chatty');
  } finally {
    await app!.close();
  }
  {
    const logsOf = async (response: Response) => (await storage.read(response.getHeader('x-debug-token')!))!.collectors.logger as { logs: Array<{ message: string; context: Record<string, unknown> }>; omitted?: number };
    const logged = await logsOf(login);
    const message = logged.logs.find((record) => record.message.startsWith('Login for'))!;
    assert.is(message.message, 'Login for bob with [redacted]');
    assert.is(message.context.password, '[redacted]');
    const long = logged.logs.find((record) => record.message.startsWith('xxx'))!;
    assert.is(long.message, `${'x'.repeat(10_000)}… (15000 more characters)`);
    const many = await logsOf(chatty);
    assert.ok(many.logs.length < 300 && many.logs.length > 100, `${many.logs.length} records kept`);
    assert.is(many.omitted, 300 + 1 - many.logs.length, 'the rest are counted (the route\'s own record is one more)');
  }
});

test('the default file storage runs in a worker thread when the process may use more than one CPU; `thread` chooses', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hk-profiler-thread-'));
  try {
    const cases: [boolean | undefined, typeof FileStorage | typeof ThreadedFileStorage][] = [
      [undefined, availableParallelism() > 1 ? ThreadedFileStorage : FileStorage],
      [true, ThreadedFileStorage],
      [false, FileStorage],
    ];
    for (const [thread, expected] of cases) {
      const app = createApp({ stderrLogLevel: false, profiler: { dir: join(dir, String(thread)), thread } });
      try {
        assert.instance(app.profiler!.storage, expected, `thread: ${String(thread)}`);
        const response = await run(app, '/health');
        assert.match(String(response.headers['x-debug-token']), /^[0-9a-f]{6}$/);
      } finally {
        await app.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Node's gc(), without starting node with --expose-gc. */
function collectGarbage(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

test('a request handled and never terminated gives its token up once it is collected: the storage does not keep it claimed for ever', async () => {
  const gc = collectGarbage();
  const discarded = new Set<string>();
  const storage = new (class extends MemoryStorage {
    override async discard(token: string): Promise<void> {
      discarded.add(token);
      return super.discard(token);
    }
  })();
  const app = createApp({ stderrLogLevel: false, profiler: { storage } });
  // 400 requests: the profiler keeps the last 200 answered ones for the toolbar until they are saved.
  const handleOnly = async (): Promise<string[]> => {
    const tokens: string[] = [];
    for (let i = 0; i < 400; i++) tokens.push((await app.kernel.handle(Request.create('http://127.0.0.1:8000/health'))).getHeader('x-debug-token')!);
    return tokens;
  };
  const tokens = await handleOnly();
  for (let i = 0; i < 10 && discarded.size < 200; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc();
  }
  assert.ok(discarded.size >= 200, `${discarded.size} of 400 tokens of collected requests were given up`);
  assert.ok([...discarded].every((token) => tokens.includes(token)));
  await app.close();
});

test.run();
