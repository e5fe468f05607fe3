import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_ERROR_HEADERS, MAX_ERROR_HEADER_BYTES, boundErrorHeaders } from '../../../kernel/index.js';

const reasons = (source: unknown) => boundErrorHeaders(source).dropped.map((header) => `${header.name}: ${header.reason}`);

test('valid headers are kept in order, numbers as text and a list of strings joined', () => {
  const { headers, dropped, droppedCount } = boundErrorHeaders({ Allow: ['GET', 'HEAD'], 'Retry-After': 30, 'WWW-Authenticate': 'Bearer realm="api"', skipped: undefined });
  assert.equal(headers, { Allow: 'GET, HEAD', 'Retry-After': '30', 'WWW-Authenticate': 'Bearer realm="api"' });
  assert.equal(Object.keys(headers), ['Allow', 'Retry-After', 'WWW-Authenticate']);
  assert.equal(dropped, []);
  assert.is(droppedCount, 0);
});

test('a value with CR, LF, NUL or a character beyond Latin-1 is dropped, as is a name that is no token: no response splitting', () => {
  const { headers } = boundErrorHeaders({
    'x-split': 'a\r\nSet-Cookie: session=evil',
    'x-lf': 'a\nb',
    'x-nul': 'a\0b',
    'x-wide': '\u20ac',
    'bad name': 'x',
    'x\r\ninjected': 'y',
    '': 'empty',
    'x-ok': 'caf\u00e9',
  });
  assert.equal(headers, { 'x-ok': 'caf\u00e9' });
  assert.equal(reasons({ 'x-split': 'a\r\nb', 'bad name': 'x', 'x-object': { a: 1 }, 'x-nan': Number.NaN, 'x-bool': true }), [
    'x-split: invalid value',
    'bad name: invalid name',
    'x-object: invalid value',
    'x-nan: invalid value',
    'x-bool: invalid value',
  ]);
});

test('headers about the body are dropped: the response has a body, and framing, of its own', () => {
  assert.equal(boundErrorHeaders({ 'Content-Length': '1', 'transfer-encoding': 'chunked', 'content-encoding': 'gzip', 'Content-Type': 'text/plain', allow: 'GET' }).headers, { allow: 'GET' });
  assert.equal(reasons({ 'Content-Length': '1' }), ['Content-Length: body header']);
});

test(`at most ${MAX_ERROR_HEADERS} headers are kept; the others are counted, and the first 10 named`, () => {
  const many: Record<string, string> = {};
  for (let i = 0; i < 5000; i++) many[`x-h${i}`] = String(i);
  const { headers, dropped, droppedCount } = boundErrorHeaders(many);
  assert.is(Object.keys(headers).length, MAX_ERROR_HEADERS);
  assert.is(headers[`x-h${MAX_ERROR_HEADERS - 1}`], String(MAX_ERROR_HEADERS - 1));
  assert.is(headers[`x-h${MAX_ERROR_HEADERS}`], undefined);
  assert.is(droppedCount, 5000 - MAX_ERROR_HEADERS);
  assert.is(dropped.length, 10);
  assert.equal(dropped[0], { name: `x-h${MAX_ERROR_HEADERS}`, reason: 'too many' });
});

test(`the kept headers take at most ${MAX_ERROR_HEADER_BYTES} bytes; a megabyte value is dropped and a later small one still fits`, () => {
  const { headers, dropped } = boundErrorHeaders({ 'retry-after': '5', 'x-huge': 'x'.repeat(1_000_000), 'x-huge-invalid': `${'x'.repeat(1_000_000)}\n`, 'x-small': 'ok' });
  assert.equal(headers, { 'retry-after': '5', 'x-small': 'ok' });
  assert.equal(dropped, [
    { name: 'x-huge', reason: 'too large' },
    { name: 'x-huge-invalid', reason: 'too large' },
  ]);
  // Exactly at the bound: `name: value\r\n` of 4096 bytes is kept, one more byte is not.
  const fits = 'v'.repeat(MAX_ERROR_HEADER_BYTES - 'x-a'.length - 4);
  assert.equal(boundErrorHeaders({ 'x-a': fits }).headers, { 'x-a': fits });
  assert.equal(reasons({ 'x-a': `${fits}v` }), ['x-a: too large']);
  const total = (source: Record<string, string>) => Object.entries(source).reduce((sum, [name, value]) => sum + name.length + value.length + 4, 0);
  const spread: Record<string, string> = {};
  for (let i = 0; i < 20; i++) spread[`x-${i}`] = 'y'.repeat(400);
  assert.ok(total(boundErrorHeaders(spread).headers) <= MAX_ERROR_HEADER_BYTES);
});

test('a later header of the same name in another case replaces the earlier one, and frees its bytes', () => {
  const big = 'z'.repeat(MAX_ERROR_HEADER_BYTES - 'Link'.length - 4);
  assert.equal(boundErrorHeaders({ Link: big, link: '</a>' }).headers, { link: '</a>' });
  assert.equal(boundErrorHeaders(new Map<unknown, unknown>([['Allow', 'GET'], ['allow', 'POST'], [42, 'x']])).headers, { allow: 'POST' });
});

test('a reported name is cut to 100 characters', () => {
  const [report] = boundErrorHeaders({ [`${'n'.repeat(5000)} x`]: 'v' }).dropped;
  assert.is(report!.name, `${'n'.repeat(100)}…`);
  assert.is(report!.reason, 'invalid name');
});

test('never throws: a getter or a Proxy trap that throws leaves that header, or the rest, unread', () => {
  const source = { a: '1' } as Record<string, unknown>;
  Object.defineProperty(source, 'b', {
    enumerable: true,
    get() {
      throw new Error('getter');
    },
  });
  source.c = '3';
  assert.equal(boundErrorHeaders(source).headers, { a: '1', c: '3' });
  assert.equal(reasons(source), ['b: unreadable']);
  const boom = () => {
    throw new Error('trap');
  };
  const hostile = new Proxy({}, { ownKeys: boom, getPrototypeOf: boom });
  assert.equal(boundErrorHeaders(hostile).headers, {});
  assert.is(boundErrorHeaders(hostile).droppedCount, 1);
  const list = new Proxy(['a'], { get: boom });
  assert.equal(boundErrorHeaders({ 'x-list': list, ok: 'y' }).headers, { ok: 'y' });
  for (const nothing of [null, undefined, 'text', 42]) assert.equal(boundErrorHeaders(nothing), { headers: {}, dropped: [], droppedCount: 0 });
});

test('a name of exactly 100 characters is reported whole', () => {
  const name = `${'n'.repeat(99)} `;
  assert.equal(reasons({ [name]: 'v' }), [`${name}: invalid name`]);
});

test(`a header replaced once ${MAX_ERROR_HEADERS} are kept is replaced, not dropped as one too many`, () => {
  const full: Record<string, string> = {};
  for (let i = 0; i < MAX_ERROR_HEADERS; i++) full[`x-h${i}`] = String(i);
  const { headers, dropped } = boundErrorHeaders({ ...full, 'X-H0': 'again' });
  assert.is(Object.keys(headers).length, MAX_ERROR_HEADERS);
  assert.is(headers['X-H0'], 'again');
  assert.is(headers['x-h0'], undefined);
  assert.equal(dropped, []);
});

test('a header replaced several times counts its bytes once, leaving room for the next', () => {
  const half = 'h'.repeat(MAX_ERROR_HEADER_BYTES / 2 - 20);
  assert.equal(Object.keys(boundErrorHeaders({ 'x-a': half, 'X-A': half, 'X-a': half, 'x-b': half }).headers), ['X-a', 'x-b']);
});

test('a list holding anything but strings is an invalid value', () => {
  assert.equal(reasons({ Allow: ['GET', 1] }), ['Allow: invalid value']);
});

test('a header named __proto__, in any case, is kept as an own header as Response keeps one, never the record\'s prototype', () => {
  const { headers, dropped } = boundErrorHeaders(JSON.parse('{"__proto__":"x","x-ok":"y"}'));
  assert.equal(dropped, []);
  assert.equal(Object.keys(headers), ['__proto__', 'x-ok']);
  assert.is(Object.getOwnPropertyDescriptor(headers, '__proto__')?.value, 'x');
  assert.is(Object.getPrototypeOf(headers), Object.prototype);
  assert.equal(Object.entries(boundErrorHeaders({ '__PROTO__': ['a', 'b'] }).headers), [['__PROTO__', 'a, b']]);
  // A later one of another case replaces it, as setHeader() would.
  const replaced = boundErrorHeaders(new Map([['__PROTO__', 'x'], ['__proto__', 'y']])).headers;
  assert.equal(Object.entries(replaced), [['__proto__', 'y']]);
  assert.is(Object.getPrototypeOf(replaced), Object.prototype);
});

test('a header named "undefined" is kept beside the next one, as any other', () => {
  assert.equal(boundErrorHeaders({ undefined: '1', 'x-b': '2' }).headers, { undefined: '1', 'x-b': '2' });
});

test('a Map key that is no string is skipped unreported, and a Proxy whose ownKeys throws reports the rest as unreadable', () => {
  assert.equal(boundErrorHeaders(new Map<unknown, unknown>([[42, 'x'], [Symbol('s'), 'y'], ['allow', 'GET']])), { headers: { allow: 'GET' }, dropped: [], droppedCount: 0 });
  const boom = () => {
    throw new Error('trap');
  };
  assert.equal(reasons(new Proxy({}, { ownKeys: boom })), ['(the rest): unreadable']);
});

test.run();
