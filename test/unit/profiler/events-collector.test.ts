import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { performance } from 'node:perf_hooks';
import { Event, KernelEvent, Request, RequestStack, RequestType, TraceableEventDispatcher, type KernelLike } from '../../../kernel/index.js';
import { EventsCollector, RawJson, TimeCollector, presentEvents, type CollectContext, type Profile, type StoredEventsData } from '../../../lib/profiler/index.js';

const test = suite('EventsCollector');
const kernel = {} as KernelLike;

/** The events JSON as the collector writes it, parsed. */
function collected(collector: EventsCollector, request: Request, startNow: number): StoredEventsData {
  const raw = collector.lateCollect({ request, startNow } as CollectContext);
  return JSON.parse(raw.json) as StoredEventsData;
}

/** What the collector must write, made independently from the dispatcher's trace as objects (nothing cached). */
function expected(dispatcher: TraceableEventDispatcher, request: Request, startNow: number): StoredEventsData {
  const trace = dispatcher.getTrace(request);
  const micros = (ms: number) => Math.round(ms * 1000);
  const data: StoredEventsData = {
    calls: trace.calls.map((c) =>
      c.stoppedPropagation
        ? [c.event, c.listener, c.priority, micros(c.start - startNow), micros(c.duration), 1]
        : [c.event, c.listener, c.priority, micros(c.start - startNow), micros(c.duration)],
    ),
    dispatches: trace.dispatches.map((d) => [d.event, micros(d.start - startNow), micros(d.duration)]),
    notCalled: dispatcher.getNotCalledListeners(request),
    orphaned: trace.orphaned,
  };
  // As JSON has it (an infinite priority is null).
  return JSON.parse(JSON.stringify(data)) as StoredEventsData;
}

/**
 * A dispatcher whose listeners take different paths by request path: `/stop…` stops in
 * kernel.request, `/last` stops in the last kernel.response listener (the same calls, one stop bit
 * more), `/orphan-<name>` dispatches an event nobody listens to, `/sub` handles a sub-request
 * inside a listener, `/async` awaits in a listener.
 */
function setUp() {
  const stack = new RequestStack();
  const dispatcher = new TraceableEventDispatcher(stack);
  const collector = new EventsCollector(dispatcher);
  dispatcher.addListener('kernel.request', function first(event: KernelEvent) {
    const path = event.request.path;
    if (path.startsWith('/orphan-')) dispatcher.dispatch(new KernelEvent(kernel, event.request, RequestType.MAIN), `nobody.${path.slice(8)}`);
    if (path === '/sub') {
      const sub = Request.create('/sub/inner');
      dispatcher.dispatch(new KernelEvent(kernel, sub, RequestType.SUB), 'kernel.request');
      dispatcher.dispatch(new KernelEvent(kernel, sub, RequestType.SUB), 'kernel.response');
    }
  }, 10);
  dispatcher.addListener('kernel.request', function stopper(event: KernelEvent) {
    if (event.request.path.startsWith('/stop')) event.stopPropagation();
  }, 0);
  dispatcher.addListener('kernel.request', function later(event: KernelEvent) {
    if (event.request.path === '/async') return new Promise((resolve) => setTimeout(resolve, 2));
    return undefined;
  }, -5);
  dispatcher.addListener('kernel.response', function onlyOne(event: KernelEvent) {
    if (event.request.path === '/last') event.stopPropagation();
  }, 0, 'quote"d \u2028 é \\ listener');
  dispatcher.addListener('kernel.exception', function never() {}, Infinity);
  const handle = async (path: string) => {
    const request = Request.create(path);
    const startNow = performance.now();
    await dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.request');
    await dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.controller');
    await dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.response');
    return { request, startNow };
  };
  /** Handles a request down `path`, asserts the collector wrote what the trace says, and returns that. */
  const check = async (path: string) => {
    const { request, startNow } = await handle(path);
    const data = collected(collector, request, startNow);
    assert.equal(data, expected(dispatcher, request, startNow), `events JSON of ${path}`);
    return { request, data };
  };
  return { stack, dispatcher, collector, handle, check };
}

test('requests down different listener paths, one after another, each get their own events JSON', async () => {
  const { check } = setUp();
  const paths = ['/a', '/stop', '/a', '/last', '/orphan-x', '/orphan-y', '/sub', '/async', '/stop', '/last', '/a', '/orphan-x', '/sub', '/async'];
  const seen = new Map<string, string>();
  for (const path of paths) {
    const { data } = await check(path);
    // Requests down the same path differ only in their times.
    const shape = JSON.stringify({ ...data, calls: data.calls.map((c) => [c[0], c[1], c[2], c[5]]), dispatches: data.dispatches.map((d) => d[0]) });
    if (seen.has(path)) assert.is(shape, seen.get(path), `${path} again`);
    seen.set(path, shape);
  }
  assert.is.not(seen.get('/last'), seen.get('/a'), 'a stop bit alone makes another path');
  assert.is.not(seen.get('/orphan-x'), seen.get('/orphan-y'), 'the same calls with another dispatch make another path');
});

test('paths that differ in a stop bit or a dispatch alone are different trace paths', async () => {
  const { dispatcher, handle } = setUp();
  const path = async (p: string) => dispatcher.getTracePath((await handle(p)).request);
  const a = await path('/a');
  assert.is(await path('/a'), a, 'the same records, the same path');
  assert.is.not(await path('/last'), a);
  assert.is.not(await path('/orphan-x'), await path('/orphan-y'));
  assert.is(a.records, 7, '3 dispatches and 4 listener calls');
});

test('the events JSON follows listeners added and removed at runtime', async () => {
  const { dispatcher, check } = setUp();
  const before = (await check('/a')).data;
  function added() {}
  dispatcher.addListener('kernel.response', added, 100);
  const during = (await check('/a')).data;
  assert.ok(during.calls.some((c) => c[1] === 'added'));
  dispatcher.addListener('kernel.terminate', function waiting() {}, 0);
  const notCalled = (await check('/a')).data.notCalled;
  assert.ok(notCalled.some((l) => l.listener === 'waiting'));
  dispatcher.removeListener('kernel.response', added);
  const after = (await check('/a')).data;
  assert.equal(after.calls.map((c) => c[1]), before.calls.map((c) => c[1]));
});

test('a request in flight when the registry changes gets the JSON of what it recorded', async () => {
  const { dispatcher, collector } = setUp();
  const request = Request.create('/a');
  const startNow = performance.now();
  await dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.request');
  // The path so far, cached before the change.
  collected(collector, request, startNow);
  dispatcher.addListener('kernel.response', function added() {}, 100);
  await dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.response');
  const data = collected(collector, request, startNow);
  assert.equal(data, expected(dispatcher, request, startNow));
  assert.ok(data.calls.some((c) => c[1] === 'added'));
});

test('events without a carried request, and a listener that throws, are written as recorded', () => {
  const { stack, dispatcher, collector } = setUp();
  dispatcher.addListener('custom', function failing() {
    throw new Error('boom');
  });
  for (let i = 0; i < 2; i++) {
    const request = Request.create('/x');
    const startNow = performance.now();
    stack.run(request, () => {
      dispatcher.dispatch(new Event(), 'nobody.listens');
      assert.throws(() => dispatcher.dispatch(new Event(), 'custom'), /boom/);
      dispatcher.dispatch(new Event(), 'nobody.listens');
    });
    const data = collected(collector, request, startNow);
    assert.equal(data, expected(dispatcher, request, startNow));
    assert.equal(data.orphaned, ['nobody.listens'], 'listed once');
    assert.equal(data.calls.map((c) => c[1]), ['failing']);
  }
});

test('the path tree is bounded: past the bound new paths are not shared, and their JSON is still right', async () => {
  const { dispatcher, handle, check } = setUp();
  const shared = dispatcher.getTracePath((await handle('/a')).request);
  // Each distinct orphaned event name is a path of its own (a few nodes each).
  for (let i = 0; i < 4096; i++) dispatcher.getTracePath((await handle(`/orphan-${i}`)).request);
  const novel = async () => dispatcher.getTracePath((await check('/orphan-novel')).request);
  assert.is.not(await novel(), await novel(), 'past the bound, a new path is not remembered');
  assert.is(dispatcher.getTracePath((await handle('/a')).request), shared, 'paths already in the tree are still shared');
  await check('/a');
  // A registry change starts a new tree.
  dispatcher.addListener('kernel.terminate', function later() {}, 0);
  assert.is(await novel(), await novel());
});

/** Stored events data of a request: three dispatches with a listener each (the second stops propagation), the controller between the last two. */
const storedEvents: StoredEventsData = {
  calls: [
    ['kernel.request', 'RouterListener::onKernelRequest', 32, 0, 1500],
    ['kernel.controller_arguments', 'stopper', -8, 2000, 250, 1],
    ['kernel.response', 'ResponseListener::onKernelResponse', 0, 5000, 125],
  ],
  dispatches: [
    ['kernel.request', 0, 1750],
    ['kernel.controller_arguments', 2000, 500],
    ['kernel.response', 5000, 250],
  ],
  notCalled: [{ event: 'kernel.exception', listener: 'never', priority: 0 }],
  orphaned: ['nobody.listens'],
};

test('presentEvents gives the stored calls and dispatches as objects, times in milliseconds, a stop only on the listener that stopped', () => {
  const shown = presentEvents(storedEvents);
  assert.equal(shown, {
    called: storedEvents.calls.map(([event, listener, priority, start, duration, stopped]) => ({ event, listener, priority, start: start / 1000, duration: duration / 1000, ...(stopped === 1 ? { stoppedPropagation: true } : {}) })),
    dispatches: storedEvents.dispatches.map(([event, start, duration]) => ({ event, start: start / 1000, duration: duration / 1000 })),
    notCalled: storedEvents.notCalled,
    orphaned: storedEvents.orphaned,
  });
  assert.equal(shown.called.map((call) => 'stoppedPropagation' in call), [false, true, false]);
  // As the collector returns it, before it is stored.
  assert.equal(presentEvents(new RawJson(JSON.stringify(storedEvents))), shown);
});

test('presentEvents keeps data already presented (older profiles), and makes empty lists of what is missing or no data', () => {
  const empty = { called: [], dispatches: [], notCalled: [], orphaned: [] };
  assert.equal(presentEvents(null), empty);
  assert.equal(presentEvents('events'), empty);
  assert.equal(presentEvents({}), empty);
  const shown = presentEvents(storedEvents);
  assert.equal(presentEvents(shown), shown);
  assert.equal(presentEvents({ calls: [], dispatches: 'none' }), empty);
});

test('the timeline has each dispatch, each listener and the controller (from the end of kernel.controller_arguments to the next dispatch), by start, events before listeners at the same start', () => {
  const profile = { collectors: { events: storedEvents } } as unknown as Profile;
  const time = new TimeCollector().present({ startTime: 1_700_000_000_000, duration: 5.25 }, profile);
  assert.equal(time, {
    startTime: 1_700_000_000_000,
    duration: 5.25,
    periods: [
      { name: 'kernel.request', category: 'event', start: 0, duration: 1.75 },
      { name: 'RouterListener::onKernelRequest', category: 'listener', start: 0, duration: 1.5 },
      { name: 'kernel.controller_arguments', category: 'event', start: 2, duration: 0.5 },
      { name: 'stopper', category: 'listener', start: 2, duration: 0.25 },
      { name: 'controller', category: 'controller', start: 2.5, duration: 2.5 },
      { name: 'kernel.response', category: 'event', start: 5, duration: 0.25 },
      { name: 'ResponseListener::onKernelResponse', category: 'listener', start: 5, duration: 0.125 },
    ],
  });
});

test('at the same start, the timeline has events before the controller, and the controller before listeners; no controller while kernel.controller_arguments is the last dispatch', () => {
  const timeline = (events: Partial<StoredEventsData>) => new TimeCollector().present({ startTime: 0, duration: 2 }, { collectors: { events: { calls: [], notCalled: [], orphaned: [], ...events } } } as unknown as Profile).periods!;
  // A controller that took no time: kernel.response starts where kernel.controller_arguments ended.
  const periods = timeline({
    calls: [['kernel.response', 'onResponse', 0, 1000, 250]],
    dispatches: [['kernel.controller_arguments', 0, 1000], ['kernel.response', 1000, 500]],
  });
  assert.equal(periods.map((p) => [p.name, p.start]), [['kernel.controller_arguments', 0], ['kernel.response', 1], ['controller', 1], ['onResponse', 1]]);
  // The controller still running (a profile seen early): its end is not known.
  const running = timeline({ dispatches: [['kernel.request', 0, 100], ['kernel.controller_arguments', 100, 50]] });
  assert.equal(running.map((p) => p.name), ['kernel.request', 'kernel.controller_arguments']);
});

test.run();
