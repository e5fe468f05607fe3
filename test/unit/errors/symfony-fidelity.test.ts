// Symfony's ErrorListenerTest, ported to this kernel's API: each test is named after the Symfony case
// it ports; where the README documents a deliberate difference, the title says so.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import {
  EventDispatcher,
  ExceptionEvent,
  HttpError,
  HttpKernel,
  KernelEvents,
  NotFoundHttpError,
  Request,
  RequestStack,
  RequestType,
  Response,
  type Controller,
  type KernelLike,
} from '../../../kernel/index.js';
import { ErrorListener } from '../../../lib/errors/index.js';
import { Logger, createBus, type LogRecord } from '../../../lib/log/index.js';

const test = suite('Symfony ErrorListenerTest, ported');

function logger(): { logger: Logger; records: LogRecord[] } {
  const bus = createBus();
  const records: LogRecord[] = [];
  bus.on('log', ({ record }) => records.push(record));
  return { logger: new Logger({ bus }), records };
}

/** Symfony's TestKernel: answers the sub-request with 'foo', and the status and headers of an HttpError in its `exception` attribute. */
const testKernel: KernelLike = {
  handle: async (request: Request) => {
    const error = request.attributes.get('exception');
    return error instanceof HttpError ? new Response('foo', error.status, error.headers) : new Response('foo');
  },
};

/** Symfony's TestKernelThatThrowsException. */
const throwingKernel: KernelLike = {
  handle: async () => {
    throw new Error('bar');
  },
};

async function handled(listener: ErrorListener, event: ExceptionEvent): Promise<ExceptionEvent> {
  listener.logKernelException(event);
  await listener.onKernelException(event);
  return event;
}

test('testHandleWithLogger: the response is the sub-request\'s, and the error is logged CRITICAL as "Uncaught ...: "foo" at <file> line <n>"', async () => {
  const { logger: log, records } = logger();
  const listener = new ErrorListener(() => null as never, log);
  const event = await handled(listener, new ExceptionEvent(testKernel, Request.create('/'), RequestType.MAIN, new Error('foo')));
  assert.is(event.response?.body, 'foo');
  assert.is(records.length, 1);
  assert.is(records[0]!.levelName, 'CRITICAL');
  assert.match(records[0]!.message, /^Uncaught error: Error: "foo" at \S+symfony-fidelity\.test\.ts line \d+$/);
});

test('testHandleWithoutLogger: no logger, the same response', async () => {
  const event = await handled(new ErrorListener(() => null as never), new ExceptionEvent(testKernel, Request.create('/'), RequestType.MAIN, new Error('foo')));
  assert.is(event.response?.body, 'foo');
});

test('testHandleWithLogger, the kernel that throws: the failure is logged CRITICAL with the original beside it and the plain page goes out (README: Symfony rethrows it with the original as previous)', async () => {
  const { logger: log, records } = logger();
  const listener = new ErrorListener(() => null as never, log);
  const original = new Error('foo');
  const event = await handled(listener, new ExceptionEvent(throwingKernel, Request.create('/'), RequestType.MAIN, original));
  assert.is(event.response?.status, 500);
  assert.equal(records.map((record) => record.levelName), ['CRITICAL', 'CRITICAL']);
  assert.match(records[1]!.message, /^The error page failed \(Error: "bar"\), so the plain page was sent for Error: "foo"/);
  assert.is(records[1]!.context.original_exception, original);
});

test('testHandleHttpAttribute (an HttpError\'s status and headers): the error page has them', async () => {
  const error = new HttpError(412, 'precondition', { headers: { some: 'thing' } });
  const event = await handled(new ErrorListener(() => null as never), new ExceptionEvent(testKernel, Request.create('/'), RequestType.MAIN, error));
  assert.is(event.response?.status, 412);
  assert.is(event.response?.getHeader('some'), 'thing');
});

test('an HttpError below 500 is logged as ERROR, one of 500 or more and any other error as CRITICAL (Symfony\'s logKernelException levels)', async () => {
  const levels: string[] = [];
  for (const error of [new NotFoundHttpError(), new HttpError(503), new Error('bug')]) {
    const { logger: log, records } = logger();
    new ErrorListener(() => null as never, log).logKernelException(new ExceptionEvent(testKernel, Request.create('/'), RequestType.MAIN, error));
    levels.push(records[0]!.levelName);
  }
  assert.equal(levels, ['ERROR', 'CRITICAL', 'CRITICAL']);
});

test('the error page is a GET sub-request (catchErrors off) to the error controller, with the error as its `exception` attribute', async () => {
  const controller: Controller = () => new Response('page');
  let seen: { request: Request; type: RequestType | undefined; catchErrors: boolean | undefined } | undefined;
  const kernel: KernelLike = {
    handle: async (request, type, catchErrors) => {
      seen = { request, type, catchErrors };
      return new Response('page');
    },
  };
  const error = new Error('foo');
  const main = Request.create('/books', 'POST');
  await handled(new ErrorListener(controller), new ExceptionEvent(kernel, main, RequestType.MAIN, error));
  assert.ok(seen !== undefined && seen.request !== main);
  assert.is(seen!.request.method, 'GET');
  assert.is(seen!.request.path, '/books');
  assert.is(seen!.request.attributes.get('_controller'), controller);
  assert.is(seen!.request.attributes.get('exception'), error);
  assert.is(seen!.type, RequestType.SUB);
  assert.is(seen!.catchErrors, false);
});

test('subscribed to kernel.exception in a real kernel: the error controller answers, a 200 it sends gets the error\'s status, and the lifecycle ends as for any response', async () => {
  const dispatcher = new EventDispatcher();
  const seen: string[] = [];
  dispatcher.addSubscriber(new ErrorListener((request: Request) => new Response(`Exception handled: ${(request.attributes.get('exception') as Error).message}`)));
  dispatcher.addListener(KernelEvents.FINISH_REQUEST, (event: { isMainRequest(): boolean }) => void seen.push(event.isMainRequest() ? 'main' : 'sub'));
  const kernel = new HttpKernel(dispatcher, {
    getController: (request) => (request.attributes.get('_controller') as Controller | undefined) ?? (() => {
      throw new HttpError(418, 'teapot', { headers: { 'x-teapot': 'yes' } });
    }),
  }, new RequestStack());
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.body, 'Exception handled: teapot');
  assert.is(response.status, 418);
  assert.is(response.getHeader('x-teapot'), 'yes');
  assert.equal(seen, ['sub', 'main']);
});

test.run();
