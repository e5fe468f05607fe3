import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  ControllerResolver,
  EventDispatcher,
  ExceptionEvent,
  HttpError,
  HttpKernel,
  KernelEvents,
  NotFoundHttpError,
  Request,
  RequestType,
  Response,
  type Controller,
  type RequestEvent,
} from '../../../kernel/index.js';
import { ErrorListener, flattenError } from '../../../lib/errors/index.js';
import { Logger, createBus, type LogRecord } from '../../../lib/log/index.js';

const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver());

/** The record ErrorListener.logKernelException writes for `error`. */
function logged(error: unknown): LogRecord {
  const bus = createBus();
  const records: LogRecord[] = [];
  bus.on('log', ({ record }) => records.push(record));
  new ErrorListener(() => null as never, new Logger({ bus })).logKernelException(new ExceptionEvent(kernel, new Request('/x'), RequestType.MAIN, error));
  assert.is(records.length, 1);
  return records[0]!;
}

test('an error is logged at the level of the status its page is sent with: ERROR for 4xx, CRITICAL otherwise', () => {
  assert.is(logged(new NotFoundHttpError('gone')).levelName, 'ERROR');
  assert.is(logged(new Error('bug')).levelName, 'CRITICAL');
  assert.is(logged('a string').levelName, 'CRITICAL');
  // http-errors and Fastify errors carry `statusCode` (or `status`) without our `headers`: their page is a 4xx too.
  const foreign = Object.assign(new Error('Gone for good'), { statusCode: 410 });
  assert.is(flattenError(foreign)[0]!.status, 410);
  assert.is(logged(foreign).levelName, 'ERROR');
  assert.is(logged(Object.assign(new Error('teapot'), { status: 418 })).levelName, 'ERROR');
  assert.is(logged(Object.assign(new Error('odd'), { status: 302, headers: {} })).levelName, 'CRITICAL', 'a status no error page has is a 500');
});

/** A kernel whose controller throws `error`, with an ErrorListener rendering pages through `errorController`; the records logged. */
function failingWith(error: unknown, errorController: Controller) {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.REQUEST, (event: RequestEvent) => {
    if (!event.request.attributes.has('_controller')) {
      event.request.attributes.set('_controller', () => {
        throw error;
      });
    }
  });
  const bus = createBus();
  const records: LogRecord[] = [];
  bus.on('log', ({ record }) => records.push(record));
  dispatcher.addSubscriber(new ErrorListener(errorController, new Logger({ bus, level: 'debug' })));
  return { kernel: new HttpKernel(dispatcher, new ControllerResolver()), records };
}

test('an error\'s headers that its response goes without are logged once, as a WARNING naming them; valid ones log no warning', async () => {
  const headers: Record<string, string> = { 'retry-after': '1', 'x-split': 'a\r\nb', 'bad name': 'x', 'x-huge': 'x'.repeat(2_000_000) };
  for (let i = 0; i < 40; i++) headers[`x-h${i}`] = 'y';
  const page = () => new Response('page', 429);
  const { kernel, records } = failingWith(new HttpError(429, 'slow', { headers }), page);
  const response = await kernel.handle(Request.create('/'));
  assert.is(response.status, 429);
  const warnings = records.filter((record) => record.levelName === 'WARNING');
  assert.is(warnings.length, 1);
  // retry-after and x-h0 to x-h30 are the 32 kept.
  assert.is(warnings[0]!.context.count, 12);
  assert.is(warnings[0]!.message, '12 of the headers of HttpError left out of its response: x-split (invalid value), bad name (invalid name), x-huge (too large), x-h31 (too many), x-h32 (too many), x-h33 (too many), x-h34 (too many), x-h35 (too many), x-h36 (too many), x-h37 (too many), and 2 more');
  const valid = failingWith(new HttpError(429, 'slow', { headers: { 'retry-after': '1' } }), page);
  await valid.kernel.handle(Request.create('/'));
  assert.is(valid.records.filter((record) => record.levelName === 'WARNING').length, 0);
});

test.run();
