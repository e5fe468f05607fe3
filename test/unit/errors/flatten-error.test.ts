import { inspect } from 'node:util';
import { runInNewContext } from 'node:vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { flattenError } from '../../../lib/errors/flatten-error.js';
import { statusText } from '../../../lib/errors/status-text.js';

class ResourceNotFoundError extends Error {
  readonly code = 'ERR_ROUTE_NOT_FOUND';
}

class NotFoundHttpError extends Error {
  readonly status = 404;
  readonly code = 'ERR_NOT_FOUND';
  readonly headers: Record<string, unknown>;
  constructor(message: string, options?: ErrorOptions & { headers?: Record<string, unknown> }) {
    super(message, options);
    this.name = 'NotFoundHttpError';
    this.headers = options?.headers ?? {};
  }
}

test('lists the cause chain outermost first with constructor names and messages', () => {
  const inner = new ResourceNotFoundError('No routes found for "/robots.txt/".');
  const outer = new NotFoundHttpError('No route found for "GET http://127.0.0.1:8000/robots.txt"', { cause: inner });
  const chain = flattenError(outer);
  assert.equal(
    chain.map((error) => [error.class, error.message]),
    [
      ['NotFoundHttpError', 'No route found for "GET http://127.0.0.1:8000/robots.txt"'],
      ['ResourceNotFoundError', 'No routes found for "/robots.txt/".'],
    ],
  );
});

test('takes the outermost status from the error and leaves causes without one at null', () => {
  const chain = flattenError(new NotFoundHttpError('x', { cause: new Error('inner') }));
  assert.is(chain[0]!.status, 404);
  assert.is(chain[0]!.statusText, 'Not Found');
  assert.is(chain[1]!.status, null);
  assert.is(chain[1]!.statusText, null);
});

test('keeps the own status of a cause', () => {
  const chain = flattenError(new Error('outer', { cause: new NotFoundHttpError('inner') }));
  assert.is(chain[0]!.status, 500);
  assert.is(chain[1]!.status, 404);
});

test('uses 500 when the status is missing or not an error status', () => {
  for (const status of [undefined, 200, 302, 600, '404', 404.5]) {
    const error = Object.assign(new Error('x'), { status });
    assert.is(flattenError(error)[0]!.status, 500, `status ${String(status)}`);
  }
});

test('takes response headers only from an HttpError (ours, or one of its shape: a numeric status and headers), never from an error that carries another response\'s (undici\'s ResponseError: statusCode and the upstream\'s headers)', () => {
  const upstream = Object.assign(new Error('Response status code 401: Unauthorized'), { statusCode: 401, headers: { 'set-cookie': 'upstream_session=secret', 'www-authenticate': 'Basic realm="upstream"' } });
  const [flat] = flattenError(upstream);
  assert.is(flat!.status, 401);
  assert.equal(flat!.headers, {});
  const httpErrorsShape = Object.assign(new Error('Method Not Allowed'), { status: 405, statusCode: 405, headers: { Allow: 'GET' } });
  assert.equal(flattenError(httpErrorsShape)[0]!.headers, { Allow: 'GET' });
});

test('accepts statusCode as used by http-errors', () => {
  assert.is(flattenError(Object.assign(new Error('x'), { statusCode: 422 }))[0]!.status, 422);
});

test('lets the caller override the outermost status', () => {
  const [flat] = flattenError(new Error('bad header'), { status: 400 });
  assert.is(flat!.status, 400);
  assert.is(flat!.statusText, 'Bad Request');
});

test('an override that is no error status (200, 600, 404.5) leaves the outermost its own, and 599 is one', () => {
  for (const status of [200, 600, 404.5]) assert.is(flattenError(new Error('x'), { status })[0]!.status, 500, String(status));
  assert.is(flattenError(new Error('x'), { status: 599 })[0]!.status, 599);
  assert.is(flattenError(Object.assign(new Error('x'), { status: 599 }))[0]!.status, 599);
});

test('copies a string code and string headers', () => {
  const error = new NotFoundHttpError('x', { headers: { Allow: ['GET', 'HEAD'], 'Retry-After': 30, Bad: { a: 1 } } });
  const [flat] = flattenError(error);
  assert.is(flat!.code, 'ERR_NOT_FOUND');
  assert.equal(flat!.headers, { Allow: 'GET, HEAD', 'Retry-After': '30' });
  const plain = flattenError(Object.assign(new Error('x'), { code: 42 }))[0]!;
  assert.not.ok('code' in plain);
  assert.equal(plain.headers, {});
});

test('stops at a cause cycle', () => {
  const a = new Error('a');
  const b = new Error('b', { cause: a });
  (a as { cause?: unknown }).cause = b;
  assert.equal(
    flattenError(a).map((error) => error.message),
    ['a', 'b'],
  );
});

test('stops after 20 errors of a long chain', () => {
  let error = new Error('0');
  for (let i = 1; i < 30; i++) error = new Error(String(i), { cause: error });
  const chain = flattenError(error);
  assert.is(chain.length, 20);
  assert.is(chain[0]!.message, '29');
  assert.is(flattenError(error, { maxErrors: 3 }).length, 3);
});

test('an AggregateError\'s errors follow it, each with its own causes, before its cause; a cycle through them stops', async () => {
  const refused = new Error('connect ECONNREFUSED 10.0.0.1:5432', { cause: new Error('socket closed') });
  const timedOut = new Error('connect ETIMEDOUT 10.0.0.2:5432');
  const any = await Promise.any([Promise.reject(refused), Promise.reject(timedOut)]).catch((error: unknown) => error);
  const outer = new Error('database unavailable', { cause: any });
  assert.equal(flattenError(outer).map((error) => `${error.class}: ${error.message}`), [
    'Error: database unavailable',
    'AggregateError: All promises were rejected',
    'Error: connect ECONNREFUSED 10.0.0.1:5432',
    'Error: socket closed',
    'Error: connect ETIMEDOUT 10.0.0.2:5432',
  ]);
  const looped = new AggregateError([], 'looped');
  (looped as unknown as { errors: unknown[] }).errors = [looped, 'a string'];
  assert.equal(flattenError(looped).map((error) => error.message), ['looped', 'Cause is not an Error (string): \'a string\'']);
  assert.is(flattenError(new AggregateError(Array.from({ length: 50 }, (_, i) => new Error(String(i))))).length, 20);
});

test('an error an AggregateError lists twice, or that is its cause too, is shown once, in its first place, and the others all the same', () => {
  const refused = new Error('refused', { cause: new Error('socket closed') });
  const timedOut = new Error('timed out');
  const twice = new AggregateError([refused, timedOut, refused], 'all failed');
  assert.equal(flattenError(twice).map((error) => error.message), ['all failed', 'refused', 'socket closed', 'timed out']);
  const alsoCause = new AggregateError([refused, timedOut], 'all failed', { cause: refused });
  assert.equal(flattenError(alsoCause).map((error) => error.message), ['all failed', 'refused', 'socket closed', 'timed out']);
  // The cause chain of one listed error leads to another listed error: it is shown where the chain reaches it.
  const chained = new AggregateError([new Error('a', { cause: timedOut }), timedOut], 'both');
  assert.equal(flattenError(chained).map((error) => error.message), ['both', 'a', 'timed out']);
  assert.ok(flattenError(twice).every((error) => error.omitted === undefined), 'nothing is counted as left out');
});

test('a value that is no Error, an object an AggregateError lists twice (a shared rejection), is shown once too; equal strings, which may be two rejections, each', () => {
  const reason = { code: 'ECONNREFUSED' };
  const listed = flattenError(new AggregateError([reason, new Error('timed out'), reason], 'all failed', { cause: reason }));
  assert.equal(listed.map((error) => error.message.replace(/ \(.*$/, '')), ['all failed', 'Cause is not an Error', 'timed out']);
  assert.is(flattenError(new AggregateError(['down', 'down'], 'all failed')).length, 3);
  // Counted once past the kept ones too.
  assert.is(flattenError(new AggregateError([reason, reason], 'cut'), { maxErrors: 1 })[0]!.omitted, 1);
});

test('turns a thrown string into an Error entry that says what was thrown', () => {
  const [flat, ...rest] = flattenError('oops');
  assert.is(rest.length, 0);
  assert.is(flat!.class, 'Error');
  assert.ok(flat!.message.includes('not an Error'));
  assert.ok(flat!.message.includes('string'));
  assert.ok(flat!.message.includes('oops'));
  assert.is(flat!.status, 500);
  assert.equal(flat!.frames, []);
});

test('describes thrown objects, null and undefined', () => {
  assert.ok(flattenError({ reason: 'nope' })[0]!.message.includes("reason: 'nope'"));
  assert.ok(flattenError(null)[0]!.message.includes('(null)'));
  assert.ok(flattenError(undefined)[0]!.message.includes('(undefined)'));
});

test('flattens a cause that is not an Error', () => {
  const chain = flattenError(new Error('outer', { cause: 'disk full' }));
  assert.is(chain.length, 2);
  assert.is(chain[1]!.class, 'Error');
  assert.ok(chain[1]!.message.includes('disk full'));
  assert.is(chain[1]!.status, null);
});

test('keeps the raw stack and its parsed frames', () => {
  const error = new Error('with frames');
  const [flat] = flattenError(error);
  assert.is(flat!.stack, error.stack);
  assert.ok(flat!.frames.length > 0);
  assert.ok(flat!.frames[0]!.file!.endsWith('flatten-error.test.ts'));
});

test('does not take lines of a multi-line message for frames', () => {
  const error = new Error('first line\n    at evil (/etc/passwd:1:1)');
  const [flat] = flattenError(error);
  assert.not.ok(flat!.frames.some((frame) => frame.file === '/etc/passwd'));
});

test('survives errors whose properties throw when read', () => {
  const error = new Error('hostile');
  Object.defineProperty(error, 'headers', {
    get() {
      throw new Error('getter');
    },
  });
  Object.defineProperty(error, 'cause', {
    get() {
      throw new Error('getter');
    },
  });
  const chain = flattenError(error);
  assert.is(chain.length, 1);
  assert.equal(chain[0]!.headers, {});
});

test('survives a thrown Proxy whose traps throw', () => {
  const trap = (): never => {
    throw new Error('trap');
  };
  const proxy = new Proxy(new Error('p'), { get: trap, has: trap, getPrototypeOf: trap, ownKeys: trap, getOwnPropertyDescriptor: trap });
  const [flat] = flattenError(proxy);
  assert.is(flat!.status, 500);
  assert.is(flat!.class, 'Error');
});

test('cuts a huge message, class name, code, stack and frame list: every page and log line of an error stays bounded', () => {
  const Huge = { ['K'.repeat(100_000)]: class extends Error {} }['K'.repeat(100_000)]!;
  const error = new Huge('m'.repeat(5_000_000)) as Error & { code?: string };
  error.code = 'C'.repeat(100_000);
  const frames = Array.from({ length: 10_000 }, (_, i) => `    at f${i} (/app/src/${'d'.repeat(i === 0 ? 100_000 : 1)}.ts:${i + 1}:1)`);
  error.stack = `Error: ${error.message}\n${frames.join('\n')}`;
  const [flat] = flattenError(error);
  assert.ok(flat!.message.length < 10_100, `message ${flat!.message.length}`);
  assert.match(flat!.message, /^m+… \[4990000 more characters\]$/);
  assert.ok(flat!.class.length < 300, `class ${flat!.class.length}`);
  assert.ok(flat!.code!.length < 300, `code ${flat!.code!.length}`);
  assert.ok(flat!.stack.length < 20_100, `stack ${flat!.stack.length}`);
  assert.is(flat!.frames.length, 50);
  assert.is(flat!.frames[1]!.function, 'f1');
  assert.ok(flat!.frames[0]!.file!.length < 1100, `file ${flat!.frames[0]!.file!.length}`);
  assert.is(flat!.frames[0]!.line, 1);
  const emoji = flattenError(new Error(`a${'\u{1F600}'.repeat(6000)}`))[0]!.message;
  assert.is(emoji.slice(9997, 10000), '\u{1F600}…', 'a surrogate pair is kept whole or left out');
});

test('statusText gives the reason phrase, with a fallback for unknown codes; 499 is nginx\'s Client Closed Request', () => {
  assert.is(statusText(404), 'Not Found');
  assert.is(statusText(405), 'Method Not Allowed');
  assert.is(statusText(599), 'Server Error');
  assert.is(statusText(498), 'Client Error');
  assert.is(statusText(499), 'Client Closed Request');
  assert.is(statusText(99), 'Unknown Status');
});

test('a chain cut at 20 errors counts the rest on its last one: 981 of a cause chain 1,001 long, 4,981 of an AggregateError of 5,000, none when whole', () => {
  let deep = new Error('root');
  for (let i = 0; i < 1000; i++) deep = new Error(`level ${i}`, { cause: deep });
  const chain = flattenError(deep);
  assert.is(chain.length, 20);
  assert.is(chain[19]!.omitted, 981);
  assert.is(chain[0]!.omitted, undefined);
  const aggregate = flattenError(new AggregateError(Array.from({ length: 5000 }, (_, i) => new Error(`e${i}`)), 'many'));
  assert.is(aggregate.length, 20);
  assert.is(aggregate[19]!.omitted, 4981);
  assert.ok(flattenError(new Error('alone', { cause: new Error('cause') })).every((error) => error.omitted === undefined));
  // Causes made without end by a getter are counted up to 10,000.
  const endless = { get cause(): Error { return Object.defineProperty(new Error('next'), 'cause', { get: () => new Error('again', { cause: endless.cause }) }); } };
  const made = Object.defineProperty(new Error('top'), 'cause', { get: () => endless.cause });
  assert.is(flattenError(made).at(-1)!.omitted, 10_000);
});

test('says what was thrown in full: "Thrown value" or "Cause", its type and its preview, with no stack', () => {
  assert.is(flattenError('oops')[0]!.message, "Thrown value is not an Error (string): 'oops'");
  assert.is(flattenError('oops')[0]!.stack, '');
  assert.is(flattenError({ reason: 'nope' })[0]!.message, "Thrown value is not an Error (object Object): { reason: 'nope' }");
  assert.is(flattenError(Object.create(null))[0]!.message, 'Thrown value is not an Error (object): [Object: null prototype] {}');
  class Rejection {}
  assert.is(flattenError({ constructor: { name: 'Forged' } })[0]!.message, "Thrown value is not an Error (object): { constructor: { name: 'Forged' } }");
  assert.is(flattenError(new Rejection())[0]!.message, 'Thrown value is not an Error (object Rejection): Rejection {}');
  const anonymous = new ((() => class {})())();
  assert.match(flattenError(anonymous)[0]!.message, /^Thrown value is not an Error \(object\): /);
  assert.is(flattenError(new Error('outer', { cause: 42 }))[1]!.message, 'Cause is not an Error (number): 42');
});

test('a thrown value\'s preview is one line of at most 1,000 characters, and a value that cannot be inspected says so', () => {
  const wide = { list: Array.from({ length: 30 }, (_, i) => `item ${i}`), nested: { a: { b: { c: { d: 1 } } } } };
  const message = flattenError(wide)[0]!.message;
  assert.not.ok(message.includes('\n'), message);
  assert.ok(message.includes('... 10 more items'), message);
  assert.ok(message.includes('a: { b: [Object] }'), message);
  const huge = flattenError(Array.from({ length: 20 }, () => 'y'.repeat(400)))[0]!.message;
  const prefix = 'Thrown value is not an Error (object Array): ';
  assert.ok(huge.startsWith(`${prefix}[ 'yyy`), huge.slice(0, 80));
  assert.is(huge.length, prefix.length + 1001);
  assert.ok(huge.endsWith('…'));
  const exact = flattenError(['a'.repeat(495), 'b'.repeat(495)])[0]!.message;
  assert.is(exact.length, prefix.length + 1000);
  assert.ok(exact.endsWith(`${'b'.repeat(495)}' ]`), exact.slice(-20));
  const uninspectable = { [inspect.custom]: () => { throw new Error('no'); } };
  assert.is(flattenError(uninspectable)[0]!.message, 'Thrown value is not an Error (object Object): [value that cannot be inspected]');
});

test('a thrown Proxy whose traps throw is described as a thrown value, not read as an error', () => {
  const trap = (): never => {
    throw new Error('trap');
  };
  const proxy = new Proxy(new Error('p'), { get: trap, has: trap, getPrototypeOf: trap, ownKeys: trap, getOwnPropertyDescriptor: trap });
  assert.match(flattenError(proxy)[0]!.message, /^Thrown value is not an Error \(object\): /);
});

test('an error of another realm (a vm context) is an error, and its AggregateError\'s errors follow it', () => {
  const [flat] = flattenError(runInNewContext('new TypeError("from a vm")'));
  assert.is(flat!.class, 'TypeError');
  assert.is(flat!.message, 'from a vm');
  const chain = flattenError(runInNewContext('new AggregateError([new Error("a"), new Error("b")], "all failed")'));
  assert.equal(chain.map((error) => error.message), ['all failed', 'a', 'b']);
});

test('an AggregateError subclass with a name of its own keeps its errors; one whose errors (or their list) cannot be read has none', () => {
  class AllFailed extends AggregateError {
    override name = 'AllFailed';
  }
  assert.equal(flattenError(new AllFailed([new Error('a')], 'x')).map((error) => error.message), ['x', 'a']);
  const unreadable = Object.defineProperty(new AggregateError([new Error('a')], 'y'), 'errors', { get: () => { throw new Error('getter'); } });
  assert.equal(flattenError(unreadable).map((error) => error.message), ['y']);
  const hostileList = new Proxy([new Error('a')], { get: () => { throw new Error('trap'); } });
  assert.equal(flattenError(Object.defineProperty(new AggregateError([], 'z'), 'errors', { value: hostileList })).map((error) => error.message), ['z']);
});

test('the class is the constructor\'s name, else the error\'s name, else Error', () => {
  const anonymous = (() => class extends Error {})();
  assert.is(anonymous.name, '');
  assert.is(flattenError(new anonymous('x'))[0]!.class, 'Error');
  assert.is(flattenError(Object.assign(new anonymous('x'), { name: 'CustomName' }))[0]!.class, 'CustomName');
  assert.is(flattenError(Object.assign(new anonymous('x'), { name: '' }))[0]!.class, 'Error');
  assert.is(flattenError(Object.defineProperty(new Error('x'), 'constructor', { value: 'not a function' }))[0]!.class, 'Error');
  assert.is(flattenError(Object.defineProperty(new Error('x'), 'constructor', { value: { name: 'Forged' } }))[0]!.class, 'Error', 'a constructor that is no function');
});

test('a message, name or stack that is no string is read as empty', () => {
  const odd = Object.assign(new Error('x'), { message: 42, stack: { frames: 1 } });
  const [flat] = flattenError(odd);
  assert.is(flat!.message, '');
  assert.is(flat!.stack, '');
  assert.equal(flat!.frames, []);
  const unnamed = Object.assign((() => class extends Error {})(), {});
  assert.is(flattenError(Object.assign(new unnamed('x'), { name: 7 }))[0]!.class, 'Error');
});

test('lines of a multi-line message are not frames when the error has no name either', () => {
  class Nameless extends Error {}
  Nameless.prototype.name = '';
  const error = new Nameless('first line\n    at evil (/etc/passwd:1:1)');
  assert.ok(error.stack!.startsWith('first line\n'));
  assert.ok(flattenError(error)[0]!.frames.length > 0);
  assert.not.ok(flattenError(error)[0]!.frames.some((frame) => frame.file === '/etc/passwd'));
});

test('a message of 10,000 characters is whole; past it, a surrogate pair across the cut is left out whole, one ending at it kept', () => {
  const whole = 'w'.repeat(10_000);
  assert.is(flattenError(new Error(whole))[0]!.message, whole);
  assert.is(flattenError(new Error(`${whole}!`))[0]!.message, `${whole}… [1 more characters]`);
  for (const pair of ['\u{10000}', '\u{10FFFF}']) {
    const message = `${'a'.repeat(9_999)}${pair}b`;
    assert.is(flattenError(new Error(message))[0]!.message, `${'a'.repeat(9_999)}… [3 more characters]`, pair);
  }
  const pairBefore = `${'a'.repeat(9_998)}\u{10000}`;
  assert.is(flattenError(new Error(`${pairBefore}b`))[0]!.message, `${pairBefore}… [1 more characters]`, 'a pair ending at the cut is kept');
  const privateUse = `${'a'.repeat(9_999)}\uE000`;
  assert.is(flattenError(new Error(`${privateUse}b`))[0]!.message, `${privateUse}… [1 more characters]`, 'a character past the surrogates is no pair');
});

test('a frame\'s function and file are each cut at 1,000 characters, the other kept as it is', () => {
  const error = new Error('frames');
  const longName = 'f'.repeat(5_000);
  const longFile = `/app/${'d'.repeat(2_000)}.ts`;
  error.stack = `Error: frames\n    at ${'g'.repeat(1_000)} (/app/${'e'.repeat(992)}.ts:1:1)\n    at ${longName} (/app/x.ts:2:1)\n    at ${longFile}:3:1\n    at ${longName} (native)`;
  const [kept, byName, byFile, native] = flattenError(error)[0]!.frames;
  assert.is(kept!.function, 'g'.repeat(1_000));
  assert.is(kept!.file!.length, 1_000);
  assert.is(byName!.function, `${'f'.repeat(1_000)}… [4000 more characters]`);
  assert.is(byName!.file, '/app/x.ts');
  assert.is(byFile!.function, null);
  assert.is(byFile!.file, `${longFile.slice(0, 1_000)}… [${longFile.length - 1_000} more characters]`);
  assert.is(native!.function, byName!.function);
  assert.is(native!.file, null);
});

test('an AggregateError past the cut counts its errors: a chain of 20 whose last cause aggregates 100 says 101 more', () => {
  let error: Error = new AggregateError(Array.from({ length: 100 }, (_, i) => new Error(`e${i}`)), 'aggregate');
  for (let i = 0; i < 20; i++) error = new Error(`level ${i}`, { cause: error });
  assert.is(flattenError(error).at(-1)!.omitted, 101);
});

test('an error that is no AggregateError keeps an errors list of its own out of the chain (a validation error\'s details)', () => {
  const validation = Object.assign(new Error('invalid body', { cause: new Error('schema') }), { errors: [new Error('name is required'), new Error('age is no number')] });
  assert.equal(flattenError(validation).map((error) => error.message), ['invalid body', 'schema']);
});

test.run();
