import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ControllerResolver, EventDispatcher, ExceptionEvent, HttpKernel, NotFoundHttpError, Request, RequestType } from '../../../kernel/index.js';
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

test.run();
