import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fileURLToPath } from 'node:url';
import { ControllerResolver, EventDispatcher, HttpKernel, KernelEvents, Request, Response, type RequestEvent } from '../../../kernel/index.js';
import { flattenError } from '../../../lib/errors/index.js';
import { ExceptionCollector } from '../../../lib/profiler/collectors/index.js';
import type { CollectContext } from '../../../lib/profiler/data-collector.js';
import { RawJson, type ExceptionData } from '../../../lib/profiler/profile.js';

/** The exception data a profile stores for `error` (through JSON, as the profile has it). */
function stored(error: unknown, failed: boolean | undefined): ExceptionData {
  const context: CollectContext = { request: Request.create('/'), response: new Response('page', 500), error, requestType: 'main', startTime: 0, startNow: 0, endNow: 0 };
  if (failed !== undefined) context.failed = failed;
  const data = new ExceptionCollector().lateCollect(context);
  return JSON.parse(data instanceof RawJson ? data.json : JSON.stringify(data)) as ExceptionData;
}

test('no error escaped: no exceptions; an error page sub-request, which did not fail, records the error it renders', () => {
  assert.equal(stored(undefined, false), { exceptions: [] });
  assert.equal(stored(new TypeError('rendered'), false).exceptions.map((e) => [e.class, e.message]), [['TypeError', 'rendered']]);
});

test('a thrown undefined or null is recorded as what was thrown; a context without `failed` records its error, or none', () => {
  assert.match(stored(undefined, true).exceptions[0]!.message, /\(undefined\)/);
  assert.match(stored(null, true).exceptions[0]!.message, /\(null\)/);
  // A collector context made elsewhere may lack `failed`: the error alone says.
  assert.equal(stored(undefined, undefined), { exceptions: [] });
  assert.equal(stored(null, undefined), { exceptions: [] });
  assert.equal(stored(new RangeError('bad'), undefined).exceptions.map((e) => [e.class, e.message]), [['RangeError', 'bad']]);
});

test('each error of the chain keeps its class, message, status, code and stack frames; a chain cut short says how many more there were', () => {
  const error = new Error('outer', { cause: Object.assign(new Error('inner'), { code: 'ERR_INNER' }) });
  const [outer, inner] = stored(error, true).exceptions;
  assert.equal([outer!.class, outer!.message, outer!.status, inner!.message, inner!.code], ['Error', 'outer', 500, 'inner', 'ERR_INNER']);
  assert.not.ok('code' in outer!, 'no code: none stored');
  const frames = flattenError(error, { sourceMaps: true })[0]!.frames;
  assert.ok(frames.length > 0);
  assert.equal(outer!.frames, frames.map((f) => ({ function: f.function, file: f.file, line: f.line, column: f.column, internal: f.internal })));
  // Twenty errors are kept (flattenError's default); the last counts the rest.
  let deep: Error = new Error('cause 25');
  for (let i = 24; i > 0; i--) deep = new Error(`cause ${i}`, { cause: deep });
  const chain = stored(deep, true).exceptions;
  assert.is(chain.length, 20);
  assert.is(chain.at(-1)!.omitted, 5);
  assert.ok(chain.slice(0, -1).every((e) => !('omitted' in e)));
});

test('stack frames that name compiled JavaScript are mapped to their TypeScript sources, as node without --enable-source-maps leaves them', () => {
  const js = fileURLToPath(import.meta.url);
  const error = new Error('compiled');
  error.stack = `Error: compiled\n    at compiled (${js}:1:1)`;
  const [frame] = stored(error, true).exceptions[0]!.frames;
  assert.ok(frame!.file!.endsWith('exception-collector.test.ts'), String(frame!.file));
});

test('an error a kernel.exception listener threw is recorded with the chain of the error it was handling', async () => {
  const dispatcher = new EventDispatcher();
  dispatcher.addListener(KernelEvents.REQUEST, (event: RequestEvent) => {
    event.request.attributes.set('_controller', () => {
      throw new Error('controller failed');
    });
  });
  dispatcher.addListener(KernelEvents.EXCEPTION, () => {
    throw new Error('listener failed');
  });
  const escaped = await new HttpKernel(dispatcher, new ControllerResolver()).handle(Request.create('/')).then(() => assert.unreachable(), (error: unknown) => error);
  const data = stored(escaped, true);
  assert.equal(data.exceptions.map((e) => e.message), ['listener failed']);
  assert.equal(data.handled!.map((e) => e.message), ['controller failed']);
  assert.not.ok('handled' in stored(new Error('alone'), true), 'none handled: no `handled`');
});

test.run();
