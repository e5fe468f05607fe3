import { performance } from 'node:perf_hooks';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Event, KernelEvent, Request, RequestStack, RequestType, TraceableEventDispatcher, type KernelLike } from '../../../kernel/index.js';

const test = suite('TraceableEventDispatcher');
const kernel = {} as KernelLike;


/** Spins for `ms` milliseconds: a listener that takes that long. */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

test('records each listener called with event, priority and duration, per request', async () => {
  const stack = new RequestStack();
  const dispatcher = new TraceableEventDispatcher(stack);
  dispatcher.addListener('kernel.request', function first() {}, 10);
  dispatcher.addListener('kernel.request', async function second() {
    await new Promise((resolve) => setTimeout(resolve, 15));
  }, 0);
  dispatcher.addListener('kernel.response', function never() {}, 0);
  const a = Request.create('/a');
  const b = Request.create('/b');
  await dispatcher.dispatch(new KernelEvent(kernel, a, RequestType.MAIN), 'kernel.request');
  const calls = dispatcher.getCalledListeners(a);
  assert.equal(calls.map((c) => [c.event, c.listener, c.priority]), [
    ['kernel.request', 'first', 10],
    ['kernel.request', 'second', 0],
  ]);
  assert.ok(calls[1]!.duration >= 10, `async duration measured (${calls[1]!.duration})`);
  assert.equal(dispatcher.getCalledListeners(b), []);
  assert.equal(dispatcher.getNotCalledListeners(a), [{ event: 'kernel.response', listener: 'never', priority: 0 }]);
});

test('not-called lists are shared by requests down the same path and follow registry changes', () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  function stopper(event: KernelEvent) {
    if (event.request.path === '/stop') event.stopPropagation();
  }
  function later() {}
  dispatcher.addListener('kernel.request', stopper, 10);
  dispatcher.addListener('kernel.request', later, 0);
  const dispatch = (path: string) => {
    const request = Request.create(path);
    dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.request');
    return request;
  };
  const [a, b, stopped] = [dispatch('/a'), dispatch('/b'), dispatch('/stop')];
  assert.equal(dispatcher.getNotCalledListeners(a), []);
  assert.is(dispatcher.getNotCalledListeners(b), dispatcher.getNotCalledListeners(a), 'same path, same (cached) list');
  assert.equal(dispatcher.getNotCalledListeners(stopped), [{ event: 'kernel.request', listener: 'later', priority: 0 }]);
  dispatcher.addListener('kernel.terminate', function added() {}, 5);
  const c = dispatch('/c');
  assert.equal(dispatcher.getNotCalledListeners(c), [{ event: 'kernel.terminate', listener: 'added', priority: 5 }]);
  dispatcher.removeListener('kernel.request', later);
  assert.equal(dispatcher.getNotCalledListeners(dispatch('/d')), [{ event: 'kernel.terminate', listener: 'added', priority: 5 }]);
});

test('events without request are attributed to the current request of the stack', () => {
  const stack = new RequestStack();
  const dispatcher = new TraceableEventDispatcher(stack);
  dispatcher.addListener('custom', function onCustom() {});
  const request = Request.create('/x');
  stack.run(request, () => {
    dispatcher.dispatch(new Event(), 'custom');
    dispatcher.dispatch(new Event(), 'nobody.listens');
  });
  assert.equal(dispatcher.getCalledListeners(request).map((c) => c.listener), ['onCustom']);
  assert.equal(dispatcher.getOrphanedEvents(request), ['nobody.listens']);
});

test('a listener that stops propagation is marked and the rest are not called', () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  dispatcher.addListener('e', (event: Event) => event.stopPropagation(), 5);
  dispatcher.addListener('e', function later() {});
  const request = Request.create('/');
  dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'e');
  const calls = dispatcher.getCalledListeners(request);
  assert.is(calls.length, 1);
  assert.ok(calls[0]!.stoppedPropagation);
  assert.equal(dispatcher.getNotCalledListeners(request).map((l) => l.listener), ['later']);
});

test('a listener that throws is still recorded', () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  dispatcher.addListener('e', function failing() {
    throw new Error('boom');
  });
  const request = Request.create('/');
  assert.throws(() => dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'e'), /boom/);
  assert.equal(dispatcher.getCalledListeners(request).map((c) => c.listener), ['failing']);
});

test('every dispatch is recorded, orphaned ones too, in start order', () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  dispatcher.addListener('a', function onA() {});
  const request = Request.create('/');
  dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'a');
  dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'b');
  const dispatches = dispatcher.getTrace(request).dispatches;
  assert.equal(dispatches.map((d) => d.event), ['a', 'b']);
  assert.ok(dispatches[0]!.start <= dispatches[1]!.start);
  assert.is(dispatches[1]!.duration, 0);
});

test('listeners and subscribers added or removed after a dispatch are called (or not) from the next one', () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  const calls: string[] = [];
  function first() {
    calls.push('first');
  }
  class Subscriber {
    getSubscribedEvents() {
      return { e: ['onE', 5] as const };
    }
    onE() {
      calls.push('subscriber');
    }
  }
  const subscriber = new Subscriber();
  const dispatch = () => {
    const request = Request.create('/');
    dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'e');
    return dispatcher.getCalledListeners(request).map((c) => `${c.listener}:${c.priority}`);
  };
  assert.equal(dispatch(), []);
  dispatcher.addListener('e', first);
  assert.equal(dispatch(), ['first:0']);
  dispatcher.addSubscriber(subscriber);
  assert.equal(dispatch(), ['Subscriber::onE:5', 'first:0']);
  dispatcher.removeListener('e', first);
  assert.equal(dispatch(), ['Subscriber::onE:5']);
  dispatcher.removeSubscriber(subscriber);
  assert.equal(dispatch(), []);
  assert.equal(calls, ['first', 'subscriber', 'first', 'subscriber']);
});

test('listener times are honest: each call ends where the next begins, and the dispatch spans them', () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  dispatcher.addListener('e', function slow() {
    busy(5);
  }, 10);
  dispatcher.addListener('e', function quick() {}, 5);
  dispatcher.addListener('e', function slower() {
    busy(8);
  }, 0);
  const request = Request.create('/');
  dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'e');
  const { calls, dispatches } = dispatcher.getTrace(request);
  const [slow, quick, slower] = calls;
  // Lower bounds only: a busy machine may stretch any of them.
  assert.ok(slow!.duration >= 5, `slow ${slow!.duration}`);
  assert.ok(slower!.duration >= 8, `slower ${slower!.duration}`);
  assert.ok(quick!.duration < slow!.duration, `quick ${quick!.duration}`);
  // Equal but for floating-point rounding (start + (end - start) may differ from end in the last bit).
  const near = (a: number, b: number) => Math.abs(a - b) < 1e-9;
  assert.ok(near(quick!.start, slow!.start + slow!.duration));
  assert.ok(near(slower!.start, quick!.start + quick!.duration));
  assert.is(dispatches[0]!.start, slow!.start);
  assert.ok(near(dispatches[0]!.duration, slower!.start + slower!.duration - slow!.start));
});

test('traceStart is when the request\'s first traced dispatch began, also asked from within it; undefined before any', () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  const request = Request.create('/a');
  let seenWithin: number | undefined;
  dispatcher.addListener('kernel.request', () => busy(2), 10);
  dispatcher.addListener('kernel.request', (_event, _name, from) => {
    seenWithin = (from as TraceableEventDispatcher).traceStart(request);
  }, 0);
  assert.is(dispatcher.traceStart(request), undefined);
  const before = performance.now();
  dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.request');
  dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.response');
  const start = dispatcher.traceStart(request)!;
  assert.ok(start >= before && start <= before + 1, `${start} against ${before}`);
  assert.is(seenWithin, start);
  assert.is(dispatcher.getTrace(request).dispatches[0]!.start, start);
  assert.is(dispatcher.traceStart(Request.create('/b')), undefined, 'per request');
});

test('a listener asking for the not-called list while it runs is not in it; the listeners after it are, until they run', async () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  const seen: string[][] = [];
  const names = (request: Request) => dispatcher.getNotCalledListeners(request).map((l) => `${l.event} ${l.listener}`);
  dispatcher.addListener('kernel.request', function routing() {}, 10);
  dispatcher.addListener('kernel.terminate', function before() {}, 10);
  dispatcher.addListener('kernel.terminate', function collecting(event: KernelEvent) {
    seen.push(names(event.request));
  }, 0);
  dispatcher.addListener('kernel.terminate', function after() {}, -10);
  const requests = [Request.create('/a'), Request.create('/b')];
  for (const request of requests) {
    dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.request');
    dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.terminate');
  }
  assert.equal(seen, [['kernel.terminate after'], ['kernel.terminate after']]);
  assert.equal(names(requests[0]!), [], 'every listener ran');
  assert.equal(dispatcher.getCalledListeners(requests[0]!).map((c) => c.listener), ['routing', 'before', 'collecting', 'after']);

  // An async listener is running until its promise settles; one that throws is done.
  const request = Request.create('/c');
  let release = () => {};
  dispatcher.addListener('slow', function waiting() {
    return new Promise<void>((resolve) => (release = resolve));
  });
  dispatcher.addListener('slow', function next() {}, -1);
  dispatcher.addListener('failing', function boom() {
    throw new Error('boom');
  });
  const pending = dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'slow');
  assert.not.ok(names(request).includes('slow waiting'), 'running, not "not called"');
  assert.ok(names(request).includes('slow next'));
  release();
  await pending;
  assert.not.ok(names(request).some((name) => name.startsWith('slow ')));
  assert.ok(names(request).includes('failing boom'));
  assert.throws(() => dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'failing'), /boom/);
  assert.not.ok(names(request).includes('failing boom'));
  assert.ok(names(request).includes('kernel.request routing'), 'this request never dispatched kernel.request');
});

test('a dispatch a listener fails (by throwing or rejecting) still spans the listeners it called', async () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  dispatcher.addListener('sync', function throwing() {
    busy(5);
    throw new Error('boom');
  });
  dispatcher.addListener('async', async function rejecting() {
    await new Promise((resolve) => setTimeout(resolve, 5));
    throw new Error('boom');
  });
  const request = Request.create('/');
  assert.throws(() => dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'sync'), /boom/);
  await (dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'async') as Promise<KernelEvent>).then(
    () => assert.unreachable('the rejection propagates'),
    (error: Error) => assert.match(error.message, 'boom'),
  );
  const { calls, dispatches } = dispatcher.getTrace(request);
  assert.equal(calls.map((c) => c.listener), ['throwing', 'rejecting']);
  for (let i = 0; i < 2; i++) {
    assert.ok(calls[i]!.duration >= 4, `${calls[i]!.listener} took its time (${calls[i]!.duration})`);
    assert.ok(dispatches[i]!.duration >= calls[i]!.duration, `${dispatches[i]!.event} spans its listener (${dispatches[i]!.duration} < ${calls[i]!.duration})`);
  }
});

test('a listener not called is listed even when a called one has the same name (two instances of a subscriber, two closures)', () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  class Guard {
    constructor(readonly stops: boolean) {}
    getSubscribedEvents() {
      return { 'kernel.request': 'onRequest' };
    }
    onRequest(event: Event) {
      if (this.stops) event.stopPropagation();
    }
  }
  dispatcher.addSubscriber(new Guard(true));
  dispatcher.addSubscriber(new Guard(false));
  dispatcher.addListener('kernel.response', () => {}, 1);
  dispatcher.addListener('kernel.response', () => {}, -1);
  const request = Request.create('/');
  dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.request');
  dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.response');
  assert.equal(dispatcher.getCalledListeners(request).map((c) => c.listener), ['Guard::onRequest', 'closure', 'closure']);
  assert.equal(dispatcher.getNotCalledListeners(request), [{ event: 'kernel.request', listener: 'Guard::onRequest', priority: 0 }]);
});

test('after an async listener, the next ones run in order, async or not, and one that stops propagation ends the dispatch; all are recorded', async () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  const ran: string[] = [];
  const later = () => new Promise((resolve) => setTimeout(resolve, 2));
  dispatcher.addListener('kernel.view', async function first() {
    await later();
    ran.push('first');
  }, 30);
  dispatcher.addListener('kernel.view', async function second() {
    await later();
    ran.push('second');
  }, 20);
  dispatcher.addListener('kernel.view', function third(event: KernelEvent) {
    ran.push('third');
    if (event.request.path === '/stop') event.stopPropagation();
  }, 10);
  dispatcher.addListener('kernel.view', function fourth() {
    ran.push('fourth');
  }, 0);
  const go = Request.create('/go');
  await dispatcher.dispatch(new KernelEvent(kernel, go, RequestType.MAIN), 'kernel.view');
  assert.equal(ran, ['first', 'second', 'third', 'fourth']);
  assert.equal(dispatcher.getCalledListeners(go).map((call) => call.listener), ['first', 'second', 'third', 'fourth']);
  ran.length = 0;
  const stop = Request.create('/stop');
  const event = new KernelEvent(kernel, stop, RequestType.MAIN);
  assert.is(await dispatcher.dispatch(event, 'kernel.view'), event);
  assert.equal(ran, ['first', 'second', 'third']);
  const calls = dispatcher.getCalledListeners(stop);
  assert.equal(calls.map((call) => [call.listener, call.stoppedPropagation]), [['first', false], ['second', false], ['third', true]]);
  assert.equal(dispatcher.getNotCalledListeners(stop).map((listener) => listener.listener), ['fourth']);
});

test('an event dispatched outside any request (start-up, a timer) reaches its listeners, and is recorded for no request', async () => {
  const stack = new RequestStack();
  const dispatcher = new TraceableEventDispatcher(stack);
  const seen: string[] = [];
  dispatcher.addListener('app.warmup', () => void seen.push('sync'), 10);
  dispatcher.addListener('app.warmup', async () => {
    await Promise.resolve();
    seen.push('async');
  }, 0);
  const event = new Event();
  assert.is(await dispatcher.dispatch(event, 'app.warmup'), event);
  assert.equal(seen, ['sync', 'async']);
  const later = Request.create('/later');
  assert.equal(dispatcher.getCalledListeners(later), []);
});

test('an async listener started, not awaited, by a synchronous one is running, not "not called", until it ends', async () => {
  const stack = new RequestStack();
  const dispatcher = new TraceableEventDispatcher(stack);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  dispatcher.addListener('app.audit', async function audit() {
    await gate;
  });
  dispatcher.addListener('kernel.request', function starter() {
    void dispatcher.dispatch(new Event(), 'app.audit');
  });
  const request = Request.create('/');
  stack.run(request, () => dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.request'));
  assert.equal(dispatcher.getNotCalledListeners(request), [], 'audit is running');
  release();
  await gate;
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(dispatcher.getCalledListeners(request).map((c) => c.listener), ['starter', 'audit']);
  assert.equal(dispatcher.getNotCalledListeners(request), []);
});

test('a listener that stops propagation and then throws is recorded as itself, stopping, and the dispatch spans no more than it took', () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  dispatcher.addListener('e', function first() {}, 10);
  dispatcher.addListener('e', function stopsThenThrows(event: Event) {
    event.stopPropagation();
    throw new Error('boom');
  }, 0);
  const request = Request.create('/');
  const before = performance.now();
  assert.throws(() => dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'e'), /boom/);
  const elapsed = performance.now() - before;
  const { calls, dispatches } = dispatcher.getTrace(request);
  assert.equal(calls.map((call) => [call.listener, call.stoppedPropagation]), [['first', false], ['stopsThenThrows', true]]);
  assert.ok(dispatches[0]!.duration <= elapsed, `the dispatch took ${dispatches[0]!.duration} ms of ${elapsed}`);
});

test('after an async listener, the calls and the dispatch are timed within the wall time, and a first async listener that stops propagation is recorded as itself', async () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  const pause = () => new Promise((resolve) => setTimeout(resolve, 3));
  dispatcher.addListener('warm', function warm() {});
  dispatcher.addListener('e', async function first(event: Event) {
    await pause();
    if ((event as KernelEvent).request.path === '/stop') event.stopPropagation();
  }, 10);
  dispatcher.addListener('e', async function second() {
    await pause();
  }, 0);
  const request = Request.create('/');
  dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'warm');
  const before = performance.now();
  await dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'e');
  const elapsed = performance.now() - before;
  const { calls, dispatches } = dispatcher.getTrace(request);
  const [, first, second] = calls;
  const dispatch = dispatches[1]!;
  assert.equal([first!.listener, second!.listener], ['first', 'second']);
  assert.ok(second!.duration >= 2 && second!.duration <= elapsed, `second took ${second!.duration} ms of ${elapsed}`);
  assert.ok(dispatch.duration >= first!.duration + second!.duration && dispatch.duration <= elapsed, `the dispatch took ${dispatch.duration} ms of ${elapsed}`);
  assert.ok(dispatch.start >= before && dispatch.start <= first!.start);

  const stopped = Request.create('/stop');
  await dispatcher.dispatch(new KernelEvent(kernel, stopped, RequestType.MAIN), 'e');
  assert.equal(dispatcher.getCalledListeners(stopped).map((call) => [call.listener, call.stoppedPropagation]), [['first', true]]);
});

test('the not-called list asked from within a listener leaves only it out, one asked before it ran lists it, and requests down the same path share the list asked from within', () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  const within = new Map<Request, readonly unknown[]>();
  dispatcher.addListener('kernel.request', function routing() {}, 10);
  dispatcher.addListener('kernel.terminate', function collecting(event: KernelEvent) {
    within.set(event.request, dispatcher.getNotCalledListeners(event.request));
  });
  const names = (list: readonly unknown[]) => list.map((listener) => (listener as { listener: string }).listener);
  const requestOnly = () => {
    const request = Request.create('/');
    dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.request');
    return request;
  };
  const terminated = (request: Request) => {
    dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.terminate');
    return within.get(request)!;
  };
  const [a, b] = [requestOnly(), requestOnly()];
  assert.equal(names(terminated(a)), []);
  assert.equal(names(dispatcher.getNotCalledListeners(b)), ['collecting']);
  const [c, d] = [requestOnly(), requestOnly()];
  assert.equal(names(dispatcher.getNotCalledListeners(c)), ['collecting']);
  assert.equal(names(terminated(d)), []);
  assert.is(within.get(d), within.get(a), 'the same list for the same path and running listener');
});

test('requests down a second path (another listener stopped propagation) share one not-called list too', () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  dispatcher.addListener('kernel.request', function guard(event: KernelEvent) {
    if (event.request.path === '/stop') event.stopPropagation();
  }, 10);
  dispatcher.addListener('kernel.request', function later() {});
  const dispatched = (path: string) => {
    const request = Request.create(path);
    dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.request');
    return request;
  };
  const [go, stopped, stoppedToo] = [dispatched('/go'), dispatched('/stop'), dispatched('/stop')];
  assert.equal(dispatcher.getNotCalledListeners(go), []);
  assert.equal(dispatcher.getNotCalledListeners(stopped).map((listener) => listener.listener), ['later']);
  assert.is(dispatcher.getNotCalledListeners(stoppedToo), dispatcher.getNotCalledListeners(stopped));
});

test('a request asked again after a listener is added lists the new one as not called', () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  dispatcher.addListener('kernel.request', function routing() {});
  const request = Request.create('/');
  dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), 'kernel.request');
  assert.equal(dispatcher.getNotCalledListeners(request), []);
  dispatcher.addListener('kernel.response', function added() {}, 5);
  assert.equal(dispatcher.getNotCalledListeners(request), [{ event: 'kernel.response', listener: 'added', priority: 5 }]);
});

test('a request begun before the listener table is replaced (past 65,536 event names) keeps a true trace next to one begun after', () => {
  const dispatcher = new TraceableEventDispatcher(new RequestStack());
  dispatcher.addListener('e', function known() {});
  dispatcher.addListener('f', function other() {});
  const dispatch = (request: Request, name: string) => dispatcher.dispatch(new KernelEvent(kernel, request, RequestType.MAIN), name);
  const calls = (request: Request) => dispatcher.getCalledListeners(request).map((call) => `${call.event} ${call.listener}`);
  const early = Request.create('/early');
  dispatch(early, 'e');
  // Event names made per entity: the table of names fills up, and the next request starts a new one.
  const names = Request.create('/names');
  for (let i = 0; i < 65_536; i++) dispatch(names, `entity.${i}.created`);
  const late = Request.create('/late');
  dispatch(late, 'f');
  dispatch(late, 'e');
  dispatch(early, 'e');
  dispatch(early, 'f');
  assert.equal(calls(late), ['f other', 'e known']);
  assert.equal(calls(early), ['e known', 'e known', 'f other']);
  assert.equal(dispatcher.getOrphanedEvents(early), []);
  assert.equal(dispatcher.getNotCalledListeners(late), []);
  assert.equal(dispatcher.getNotCalledListeners(early), []);
  assert.is(dispatcher.getTracePath(early).records, 6);
});

test.run();
