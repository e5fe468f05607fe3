import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request } from '../../../kernel/index.js';
import { DebugLogBuffer, Logger, createBus } from '../../../lib/log/index.js';
import { LoggerCollector } from '../../../lib/profiler/collectors/logger-collector.js';
import type { CollectContext } from '../../../lib/profiler/data-collector.js';
import { REDACTED, Redactor } from '../../../lib/profiler/redactor.js';

/** The contexts a profile stores for what `log` writes while handling one request. */
function storedContexts(log: (logger: Logger) => void): Array<Record<string, unknown>> {
  const bus = createBus();
  const request = Request.create('/');
  const collector = new LoggerCollector(new DebugLogBuffer(bus), new Redactor());
  log(new Logger({ bus, currentRequest: () => request }));
  const data = JSON.parse(collector.lateCollect({ request } as CollectContext).json) as { logs: Array<{ context: Record<string, unknown> }> };
  return data.logs.map((record) => record.context);
}

test('a profile keeps an error\'s code and own fields in its log context, next to its class and message, secret ones redacted', () => {
  const error = Object.assign(new Error("ENOENT: no such file or directory, open '/x'"), { code: 'ENOENT', errno: -2, syscall: 'open', path: '/x', password: 'hunter2' });
  const [context] = storedContexts((logger) => logger.error('Failed: {error}', { error, list: [Object.assign(new TypeError('bad'), { statusCode: 400 })] }));
  assert.equal(context, {
    error: { class: 'Error', message: "ENOENT: no such file or directory, open '/x'", code: 'ENOENT', errno: -2, syscall: 'open', path: '/x', password: REDACTED },
    list: [{ class: 'TypeError', message: 'bad', statusCode: 400 }],
  });
});

test('the records a request wrote past the 1,000 the buffer keeps are counted as omitted, not dropped silently (20,000 logged showed as 1,000)', () => {
  const bus = createBus();
  const request = Request.create('/');
  const buffer = new DebugLogBuffer(bus);
  const collector = new LoggerCollector(buffer, new Redactor());
  const logger = new Logger({ bus, currentRequest: () => request });
  for (let i = 0; i < 20_000; i++) logger.info('record {i}', { i });
  assert.is(buffer.droppedCount(request), 19_000);
  const data = JSON.parse(collector.lateCollect({ request } as CollectContext).json) as { logs: unknown[]; omitted?: number };
  assert.is(data.logs.length, 1000);
  assert.is(data.omitted, 19_000);
});

test.run();
