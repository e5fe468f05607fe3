// Property-based lifecycle invariants under random APPLICATION faults (robustness.test.ts varies what
// the client sends; this varies what the application does). fast-check generates an app: listeners on
// every kernel event at random priorities (equal ones included), sync or async, each doing nothing,
// throwing (an Error, an HttpError with headers, a string, null, a hostile Proxy), rejecting later,
// stopping propagation, setting a response (text, bytes, a stream, a stream that fails), replacing the
// controller or the arguments, making a sub-request (catching or not), or adding or removing a listener
// mid-dispatch; and controllers that answer a Response, nothing, an object, a stream, or throw. Each app
// is run by createKernel (debug with a MemoryStorage profiler, no debug with requestContext, no debug), through handle() +
// terminate() and through app.inject(), two requests at a time, and the kernel's promises are checked:
// one Response or a documented rejection, terminate once per main request, no request current in
// another's listeners, every stream body closed, no unhandled rejection, a valid status and the error's
// own on its error page, a profiler tree whose parents and debug tokens exist, and a traced listener list
// that is the calls made, in order. Deterministic by default: FC_SEED=<n> replays a failure's seed.
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ControllerArgumentsEvent,
  ControllerEvent,
  ExceptionEvent,
  HttpError,
  KernelEvents,
  Request,
  RequestEvent,
  RequestType,
  Response,
  ResponseEvent,
  TraceableEventDispatcher,
  ViewEvent,
  isHttpError,
  type Controller,
  type EventDispatcher,
} from '../../../kernel/index.js';
import { destroyBody } from '../../../kernel/response-body.js';
import { createKernel, type KernelApp } from '../../../lib/app/index.js';
import { MemoryStorage } from '../../../lib/profiler/index.js';
import { Route, RouteCollection } from '../../../lib/routing/index.js';
import { propertyParameters } from '../../arbitraries.js';

const EVENTS = [
  KernelEvents.REQUEST,
  KernelEvents.CONTROLLER,
  KernelEvents.CONTROLLER_ARGUMENTS,
  KernelEvents.VIEW,
  KernelEvents.RESPONSE,
  KernelEvents.FINISH_REQUEST,
  KernelEvents.EXCEPTION,
  KernelEvents.TERMINATE,
] as const;
type EventName = (typeof EVENTS)[number];

type ThrowKind = 'error' | 'http' | 'string' | 'null' | 'proxy' | 'revoked';
type BodyKind = 'text' | 'bytes' | 'stream' | 'failing-early' | 'failing-late';
type ControllerSpec =
  | { returns: 'response'; body: BodyKind }
  | { returns: 'nothing' | 'object' }
  | { returns: 'throw' | 'reject'; what: ThrowKind; status: number };
type Action =
  | { do: 'nothing' | 'stop' | 'replace-arguments' | 'add-listener' }
  | { do: 'throw' | 'reject'; what: ThrowKind; status: number }
  | { do: 'respond'; body: BodyKind; status: number }
  | { do: 'replace-controller'; controller: ControllerSpec }
  | { do: 'sub-request'; catchErrors: boolean; use: boolean }
  | { do: 'remove-listener'; index: number }
  | { do: 'set-error'; what: ThrowKind; status: number };
interface ListenerSpec {
  event: EventName;
  priority: number;
  async: boolean;
  action: Action;
}
interface AppSpec {
  listeners: ListenerSpec[];
  controller: ControllerSpec;
  subController: ControllerSpec;
}

const throwKind = fc.constantFrom<ThrowKind>('error', 'http', 'string', 'null', 'proxy', 'revoked');
// Error statuses, and ones an error's own status does not count from (README, The lifecycle).
const errorStatus = fc.constantFrom(400, 404, 418, 503, 302, 200, 999);
const bodyKind = fc.constantFrom<BodyKind>('text', 'bytes', 'stream', 'failing-early', 'failing-late');
const controllerSpec: fc.Arbitrary<ControllerSpec> = fc.oneof(
  fc.record({ returns: fc.constant('response' as const), body: bodyKind }),
  fc.record({ returns: fc.constantFrom('nothing' as const, 'object' as const) }),
  fc.record({ returns: fc.constantFrom('throw' as const, 'reject' as const), what: throwKind, status: errorStatus }),
);
const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ do: fc.constantFrom('nothing' as const, 'stop' as const, 'replace-arguments' as const, 'add-listener' as const) }) },
  { weight: 3, arbitrary: fc.record({ do: fc.constantFrom('throw' as const, 'reject' as const), what: throwKind, status: errorStatus }) },
  { weight: 3, arbitrary: fc.record({ do: fc.constant('respond' as const), body: bodyKind, status: fc.constantFrom(200, 202, 404, 503) }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('replace-controller' as const), controller: controllerSpec }) },
  { weight: 2, arbitrary: fc.record({ do: fc.constant('sub-request' as const), catchErrors: fc.boolean(), use: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('remove-listener' as const), index: fc.nat(7) }) },
  { weight: 1, arbitrary: fc.record({ do: fc.constant('set-error' as const), what: throwKind, status: errorStatus }) },
);
const listenerSpec: fc.Arbitrary<ListenerSpec> = fc.record({
  event: fc.constantFrom(...EVENTS),
  // The default chain's priorities among them (the router's 32, the error listener's -128): equal ones run in registration order.
  priority: fc.constantFrom(-256, -128, -1, 0, 0, 10, 32, 300),
  async: fc.boolean(),
  action,
});
const appSpec: fc.Arbitrary<AppSpec> = fc.record({ listeners: fc.array(listenerSpec, { maxLength: 9 }), controller: controllerSpec, subController: controllerSpec });

/** What one case saw, checked once both of its requests are done. */
class Observed {
  /** Every listener call of ours, in call order, with its request. */
  readonly calls: Array<{ request: Request; event: string; name: string }> = [];
  /** A request current in another's listener, controller or stream. */
  readonly leaks: string[] = [];
  readonly streams: Readable[] = [];
  readonly terminated = new Map<Request, number>();
  /** Per main request: the last error kernel.exception saw for it, or one of our kernel.exception listeners threw. */
  readonly lastError = new Map<Request, { error: unknown }>();
  /** Main requests whose error may escape handle() (an exception listener of ours threw, or stopped the error listener). */
  readonly mayEscape = new Set<Request>();
  /** Requests whose kernel.terminate may reject (a terminate listener of ours threw). */
  readonly terminateMayFail = new Set<Request>();
  readonly unhandled: unknown[] = [];
  /** The main requests the kernel got, by their x-case header. */
  readonly mains = new Map<string, Request>();
  /** The errors of our stream bodies that failed before their first chunk. */
  readonly bodyErrors = new WeakSet<object>();
  /**
   * Main requests whose stream body failed before its first chunk, its error given to handleException():
   * when no page comes of it (a kernel.exception listener threw or stopped the error listener) or the page's
   * own stream body fails before its first chunk too, the server, and inject(), send the bare 500, logged,
   * not the `unhandled` page of an error escaping handle().
   */
  readonly bodyFailurePaged = new Set<Request>();
}

function thrown(what: ThrowKind, status: number): unknown {
  switch (what) {
    case 'error':
      return new Error('listener failed');
    case 'http':
      return new HttpError(status, 'http failure', { headers: { 'x-error': 'yes' } });
    case 'string':
      return 'a string';
    case 'null':
      return null;
    case 'proxy':
      return new Proxy(new Error('proxied'), {
        get() {
          throw new Error('get trap');
        },
        getPrototypeOf() {
          throw new Error('getPrototypeOf trap');
        },
      });
    case 'revoked': {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    }
  }
}

/** A thrown value named without touching it (a Proxy's traps throw). */
function describe(value: unknown): string {
  try {
    return value instanceof Error ? `${value.name}: ${value.message}` : typeof value === 'string' ? value : Object.prototype.toString.call(value);
  } catch {
    return 'a hostile value';
  }
}

/** The status the error page of `error` has (README, The lifecycle): an HttpError's own from 400 to 599, else 500. */
function statusOf(error: unknown): number {
  if (!isHttpError(error)) return 500;
  const status = error.status;
  return Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500;
}

function makeStream(observed: Observed, kind: BodyKind, app: KernelApp, request: Request): Readable {
  let reads = 0;
  const fails = kind === 'failing-early' ? 0 : kind === 'failing-late' ? 1 : -1;
  const stream = new Readable({
    read() {
      // The request that answered with it is current while it is read (README, The lifecycle).
      const stack = app.requestStack;
      if (stack.tracksAsyncContext && stack.getCurrentRequest() !== request) observed.leaks.push(`a stream body of ${request.path} read with ${stack.getCurrentRequest()?.path ?? 'no request'} current`);
      if (reads === fails) {
        const error = new Error('body failed');
        if (reads === 0) observed.bodyErrors.add(error);
        this.destroy(error);
        return;
      }
      reads++;
      this.push(reads <= 2 ? 'chunk' : null);
    },
  });
  observed.streams.push(stream);
  return stream;
}

function makeResponse(observed: Observed, kind: BodyKind, status: number, by: string, app: KernelApp, request: Request): Response {
  const body = kind === 'text' ? `made by ${by}` : kind === 'bytes' ? new TextEncoder().encode(`made by ${by}`) : makeStream(observed, kind, app, request);
  return new Response(body, status, { 'x-made-by': by });
}

function makeController(observed: Observed, spec: ControllerSpec, app: () => KernelApp, name: string): Controller {
  const controller = (request: Request): unknown => {
    const stack = app().requestStack;
    if (stack.tracksAsyncContext && stack.getCurrentRequest() !== request) observed.leaks.push(`${name}: another request current in its controller`);
    switch (spec.returns) {
      case 'response':
        return makeResponse(observed, spec.body, 200, name, app(), request);
      case 'nothing':
        return undefined;
      case 'object':
        return { made: name };
      case 'throw':
        throw thrown(spec.what, spec.status);
      case 'reject':
        return Promise.resolve().then(() => {
          throw thrown(spec.what, spec.status);
        });
    }
  };
  Object.defineProperty(controller, 'name', { value: name });
  return controller;
}

/** A kernel for the case, with its listeners of ours added after the default chain. */
function buildApp(spec: AppSpec, observed: Observed, subject: Subject): { app: KernelApp; storage: MemoryStorage | null } {
  const debug = subject === 'debug';
  let app: KernelApp;
  const getApp = () => app;
  const routes = new RouteCollection();
  routes.add('main', new Route('/t', { defaults: { _controller: makeController(observed, spec.controller, getApp, 'main') } }));
  routes.add('sub', new Route('/sub', { defaults: { _controller: makeController(observed, spec.subController, getApp, 'sub') } }));
  const storage = debug ? new MemoryStorage() : null;
  app = createKernel({ env: 'dev', debug, requestContext: subject === 'context', routes, stderrLogLevel: false, profiler: storage === null ? false : { storage, saveDelayMs: 0 } });
  const dispatcher = app.dispatcher;
  const added = new Map<string, (...args: never[]) => unknown>();
  let addedCount = 0;

  const record = (name: string) => (event: { request: Request }, eventName: string): void => {
    observed.calls.push({ request: event.request, event: eventName, name });
  };
  // Counts every main request's kernel.terminate, first of all.
  dispatcher.addListener(KernelEvents.TERMINATE, (event) => observed.terminated.set(event.request, (observed.terminated.get(event.request) ?? 0) + 1), 1e9, 'count');
  dispatcher.addListener(KernelEvents.REQUEST, (event) => {
    if (event.isMainRequest()) observed.mains.set(event.request.headers['x-case'] as string, event.request);
  }, 1e9, 'mains');
  dispatcher.addListener(KernelEvents.EXCEPTION, (event) => {
    if (!event.isMainRequest()) return;
    observed.lastError.set(event.request, { error: event.error });
    if (typeof event.error === 'object' && event.error !== null && observed.bodyErrors.has(event.error)) observed.bodyFailurePaged.add(event.request);
  }, 1e9, 'lastError');

  const listeners: Array<(...args: any[]) => unknown> = [];
  spec.listeners.forEach((listenerSpec, index) => {
    const name = `L${index}`;
    const { event: eventName, action: act } = listenerSpec;
    const checkContext = (event: { request: Request }, when: string): void => {
      const stack = app.requestStack;
      if (!stack.tracksAsyncContext) return;
      if (stack.getCurrentRequest() !== event.request) observed.leaks.push(`${name} on ${eventName} ${when}: another request current`);
      if (eventName === KernelEvents.TERMINATE && stack.all().length !== 1) observed.leaks.push(`${name} on kernel.terminate: ${stack.all().length} requests on the stack`);
    };
    const act1 = (event: any): unknown => {
      const isMain = event.requestType === RequestType.MAIN;
      switch (act.do) {
        case 'nothing':
          return undefined;
        case 'stop':
          if (eventName === KernelEvents.EXCEPTION && isMain) observed.mayEscape.add(event.request);
          if (eventName === KernelEvents.TERMINATE) observed.terminateMayFail.add(event.request);
          event.stopPropagation();
          return undefined;
        case 'throw':
        case 'reject': {
          if (eventName === KernelEvents.EXCEPTION && isMain) observed.mayEscape.add(event.request);
          if (eventName === KernelEvents.TERMINATE) observed.terminateMayFail.add(event.request);
          const error = thrown(act.what, act.status);
          if (eventName === KernelEvents.EXCEPTION && isMain) observed.lastError.set(event.request, { error });
          if (act.do === 'throw') throw error;
          return new Promise((_, reject) => setImmediate(() => reject(error)));
        }
        case 'respond': {
          if (event instanceof ResponseEvent) {
            event.response = makeResponse(observed, act.body, act.status, name, app, event.request);
          } else if (event instanceof RequestEvent && !(event instanceof ExceptionEvent && event.response !== null)) {
            // RequestEvent, ViewEvent and ExceptionEvent take one.
            event.setResponse(makeResponse(observed, act.body, act.status, name, app, event.request));
          }
          return undefined;
        }
        case 'replace-controller':
          if (event instanceof ControllerEvent || event instanceof ControllerArgumentsEvent) event.setController(makeController(observed, act.controller, () => app, `${name}-controller`));
          return undefined;
        case 'set-error':
          if (event instanceof ExceptionEvent) {
            const error = thrown(act.what, act.status);
            event.setError(error);
            if (isMain) observed.lastError.set(event.request, { error });
          }
          return undefined;
        case 'replace-arguments':
          if (event instanceof ControllerArgumentsEvent) event.setArguments([event.request]);
          return undefined;
        case 'add-listener': {
          const addedName = `A${addedCount++}`;
          const listener = record(addedName);
          added.set(addedName, listener);
          dispatcher.addListener(eventName, listener, listenerSpec.priority, addedName);
          return undefined;
        }
        case 'remove-listener': {
          const other = listeners[act.index % Math.max(listeners.length, 1)];
          if (other !== undefined) dispatcher.removeListener(spec.listeners[act.index % listeners.length]!.event, other);
          return undefined;
        }
        case 'sub-request': {
          // A sub-request of the main request only (README's guard): one made from sub-requests would nest to the bound.
          if (!isMain || eventName === KernelEvents.TERMINATE || eventName === KernelEvents.FINISH_REQUEST) return undefined;
          const sub = Request.create('/sub', 'GET', { remoteAddress: '127.0.0.1' });
          return app.kernel.handle(sub, RequestType.SUB, act.catchErrors).then((response) => {
            checkContext(event, 'after its sub-request');
            const takes = event instanceof ResponseEvent || (event instanceof RequestEvent && event.response === null);
            if (!act.use || !takes) return destroyBody(response.body);
            // The sub-request's page is no error page of the main request's.
            response.setHeader('x-made-by', `${name}-sub`);
            if (event instanceof ResponseEvent) event.response = response;
            else (event as RequestEvent).setResponse(response);
          }, (error: unknown) => {
            // Its error is this listener's: on kernel.exception, it escapes handle() (README, The lifecycle).
            if (eventName === KernelEvents.EXCEPTION) {
              observed.mayEscape.add(event.request);
              observed.lastError.set(event.request, { error });
            }
            throw error;
          });
        }
      }
    };
    const listener = (event: any, eventNameGiven: string): unknown => {
      record(name)(event, eventNameGiven);
      checkContext(event, 'at its call');
      if (!listenerSpec.async) return act1(event);
      return new Promise((resolve) => setImmediate(resolve)).then(() => {
        checkContext(event, 'after an await');
        return act1(event);
      });
    };
    listeners.push(listener);
    dispatcher.addListener(eventName, listener, listenerSpec.priority, name);
  });
  return { app, storage };
}

/** Reads a stream body whole, as a server sends it; its failure is the client's cut connection. */
async function consume(response: Response): Promise<void> {
  const body = response.body;
  if (body === null || typeof body === 'string' || body instanceof Uint8Array) return;
  try {
    for await (const _ of body as Readable);
  } catch {
    // A stream that fails once begun: the server cuts the connection.
  }
}

function checkStatus(status: number, where: string): void {
  assert.ok(Number.isInteger(status) && status >= 100 && status <= 599, `${where}: status ${status}`);
}

/** The error page's status and headers are its error's, when no listener of ours made the page. */
function checkErrorPage(observed: Observed, request: Request, response: Response): void {
  const last = observed.lastError.get(request);
  if (last === undefined || response.headers['x-made-by'] !== undefined) return;
  // The page of a body that failed before its first chunk failed too (a kernel.exception listener threw, or
  // the page's own stream body failed so too): the bare 500 (README, Server limits).
  if (observed.bodyFailurePaged.has(request) && response.status === 500) return;
  assert.is(response.status, statusOf(last.error), `the error page's status is its error's (${String(response.status)})`);
  if (isHttpError(last.error) && last.error.headers['x-error'] === 'yes') assert.is(response.headers['x-error'], 'yes', "the error page carries the error's headers");
}

async function checkProfiles(app: KernelApp, storage: MemoryStorage, answered: Array<{ request: Request; response: Response }>): Promise<void> {
  await app.close();
  const summaries = await storage.find({ limit: 10_000 });
  const tokens = new Set(summaries.map((summary) => summary.token));
  for (const summary of summaries) {
    const profile = await storage.read(summary.token);
    assert.ok(profile !== null, `profile ${summary.token} is readable`);
    if (profile.parent !== null) assert.ok(tokens.has(profile.parent), `profile ${profile.token}'s parent ${profile.parent} was saved`);
    for (const child of profile.children) assert.ok(tokens.has(child), `profile ${profile.token}'s child ${child} was saved`);
  }
  for (const { response } of answered) {
    const token = response.headers['x-debug-token'];
    const previous = response.headers['x-previous-debug-token'];
    if (typeof token === 'string') {
      assert.ok(tokens.has(token), `X-Debug-Token ${token} names a saved profile`);
      assert.is((await storage.read(token))!.parent, null, `X-Debug-Token ${token} names the main request's profile`);
    }
    if (typeof previous === 'string') {
      assert.ok(tokens.has(previous), `X-Previous-Debug-Token ${previous} names a saved profile`);
      assert.is((await storage.read(previous))!.parent, token, `X-Previous-Debug-Token ${previous} names a sub-request of ${String(token)}`);
    }
  }
}

/** The traced dispatcher's called listeners (ours) are the calls made, in order, request by request. */
function checkTrace(app: KernelApp, observed: Observed): void {
  if (!(app.dispatcher instanceof TraceableEventDispatcher)) return;
  const traced = app.dispatcher;
  const requests = new Set(observed.calls.map((call) => call.request));
  for (const request of requests) {
    const made = observed.calls.filter((call) => call.request === request).map((call) => `${call.event} ${call.name}`);
    const seen = traced.getCalledListeners(request).filter((call) => /^[LA]\d+$/.test(call.listener)).map((call) => `${call.event} ${call.listener}`);
    assert.equal(seen, made, `the traced calls of ${request.path} are the calls made`);
  }
}

/** Lets pending rejections surface (unhandledRejection fires after the microtasks of a macrotask). */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

type Mode = 'handle' | 'inject';
/** Debug with the profiler and its traced dispatcher; no debug, with the request tracked across awaits (requestContext); no debug at all. */
type Subject = 'debug' | 'context' | 'plain';
const SUBJECT_NAMES: Record<Subject, string> = { debug: 'debug, profiler', context: 'no debug, requestContext', plain: 'no debug' };

async function runCase(spec: AppSpec, subject: Subject, mode: Mode): Promise<void> {
  const observed = new Observed();
  const onUnhandled = (reason: unknown): void => {
    observed.unhandled.push(reason);
  };
  process.on('unhandledRejection', onUnhandled);
  process.on('uncaughtException', onUnhandled);
  const { app, storage } = buildApp(spec, observed, subject);
  const answered: Array<{ request: Request; response: Response }> = [];
  let closed = false;
  try {
    await app.ready();
    const one = async (name: string): Promise<void> => {
      const headers = { 'x-case': name };
      if (mode === 'inject') {
        let response: Response;
        try {
          response = await app.inject('/t', { headers });
        } catch (error) {
          // Documented: a stream body that fails once begun.
          assert.ok(error instanceof Error && error.message === 'body failed', `inject() rejects only for a body failing once begun, not ${describe(error)}`);
          return;
        }
        checkStatus(response.status, 'inject');
        const request = observed.mains.get(name)!;
        checkErrorPage(observed, request, response);
        assert.is(observed.terminated.get(request), 1, 'kernel.terminate ran once for the main request');
        return void answered.push({ request, response });
      }
      const request = Request.create('/t', 'GET', { remoteAddress: '127.0.0.1', headers });
      let response: Response;
      try {
        response = await app.kernel.handle(request);
      } catch (error) {
        assert.ok(observed.mayEscape.has(request), `handle() rejects only when a kernel.exception listener threw or stopped the error page, not with ${describe(error)}`);
        assert.ok(error === observed.lastError.get(request)?.error, `handle() rejects with the error it met (the exception listener's, or the one none answered), not ${describe(error)}`);
        assert.is(observed.terminated.get(request), undefined, 'no kernel.terminate before the embedder asks');
        return;
      }
      assert.ok(response instanceof Response, 'handle() answers a Response');
      checkStatus(response.status, 'handle');
      checkErrorPage(observed, request, response);
      answered.push({ request, response });
      await consume(response);
      try {
        await app.kernel.terminate(request, response);
      } catch (error) {
        assert.ok(observed.terminateMayFail.has(request), `terminate() rejects only with a terminate listener's error, not ${describe(error)}`);
      }
      assert.is(observed.terminated.get(request), 1, 'kernel.terminate ran once for the main request');
    };
    await Promise.all([one('a'), one('b')]);
    if (mode === 'inject') for (const request of observed.mains.values()) assert.is(observed.terminated.get(request), 1, 'kernel.terminate ran once per main request');
    for (const request of observed.terminated.keys()) assert.ok([...observed.mains.values()].includes(request), 'kernel.terminate ran for main requests only');
    assert.is(app.requestStack.getCurrentRequest(), undefined, 'no request current afterwards');
    await settle();
    if (storage !== null) {
      closed = true;
      await checkProfiles(app, storage, answered);
    }
    await settle();
    assert.equal(observed.leaks, [], 'no request current in another\'s listeners');
    const open = observed.streams.filter((stream) => !stream.destroyed);
    assert.is(open.length, 0, `${open.length} of ${observed.streams.length} stream bodies left open`);
    assert.equal(observed.unhandled.map(describe), [], 'no unhandled rejection or uncaught exception');
    checkTrace(app, observed);
  } finally {
    if (!closed) await app.close();
    process.off('unhandledRejection', onUnhandled);
    process.off('uncaughtException', onUnhandled);
  }
}

/**
 * Cases run before the generated ones, whatever the seed: a stream body failing before its first chunk whose page a
 * kernel.exception listener fails, or whose page's own stream body fails so too (inject() sends the bare 500, not the
 * status of the listener's HttpError).
 */
const EXAMPLES: Array<[AppSpec]> = [
  [{ listeners: [{ event: KernelEvents.EXCEPTION, priority: 10, async: false, action: { do: 'throw', what: 'http', status: 400 } }], controller: { returns: 'response', body: 'failing-early' }, subController: { returns: 'nothing' } }],
  [
    {
      listeners: [
        { event: KernelEvents.EXCEPTION, priority: 0, async: false, action: { do: 'set-error', what: 'http', status: 400 } },
        { event: KernelEvents.REQUEST, priority: -256, async: false, action: { do: 'respond', body: 'failing-early', status: 200 } },
      ],
      controller: { returns: 'response', body: 'text' },
      subController: { returns: 'nothing' },
    },
  ],
];

for (const subject of ['debug', 'context', 'plain'] as const) {
  for (const mode of ['handle', 'inject'] as const) {
    const test = suite(`lifecycle faults: ${SUBJECT_NAMES[subject]}, ${mode === 'handle' ? 'handle() + terminate()' : 'app.inject()'}`);
    test('any app of listeners and controllers keeps the lifecycle invariants', async () => {
      await fc.assert(
        fc.asyncProperty(appSpec, (spec) => runCase(spec, subject, mode)),
        // A case that hangs (a lifecycle that never settles) is a failure after 10 s, not a suite that never ends.
        { ...propertyParameters(150), examples: EXAMPLES, timeout: 10_000 },
      );
    });
    test.run();
  }
}
