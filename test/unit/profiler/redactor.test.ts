import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { LastHeaders, MAX_VALUE_JSON, REDACTED, Redactor } from '../../../lib/profiler/redactor.js';

const test = suite('Redactor');
const redactor = new Redactor();

test('Authorization, Proxy-Authorization, Cookie and Set-Cookie values are hidden', () => {
  const headers = redactor.headers({ Authorization: 'Bearer abc', 'proxy-authorization': 'Basic x', cookie: 'sid=1', 'set-cookie': ['a=1', 'b=2'], accept: 'text/html' });
  assert.equal(headers, { authorization: REDACTED, 'proxy-authorization': REDACTED, cookie: REDACTED, 'set-cookie': REDACTED, accept: 'text/html' });
});

test('Authorization, Proxy-Authorization, Cookie and Set-Cookie stay hidden under a key pattern of your own that names none of them', () => {
  const custom = new Redactor({ keyPattern: /^internal$/ });
  const headers = { Authorization: 'Bearer abc', 'Proxy-Authorization': 'Basic eA==', cookie: 'sid=1', 'set-cookie': 'sid=2', internal: 'i', accept: '*/*' };
  const expected = { authorization: REDACTED, 'proxy-authorization': REDACTED, cookie: REDACTED, 'set-cookie': REDACTED, internal: REDACTED, accept: '*/*' };
  assert.equal(custom.headers(headers), expected);
  assert.equal(JSON.parse(custom.headersJson(headers)), expected);
});

test('a header of several values is shown as one, joined with ", ", and a number as text', () => {
  const headers = { via: ['1.1 a', '1.1 b'], 'content-length': 15 };
  assert.equal(redactor.headers(headers), { via: '1.1 a, 1.1 b', 'content-length': '15' });
  assert.is(redactor.headersJson(headers), '{"via":"1.1 a, 1.1 b","content-length":"15"}');
});

test('headers whose names look secret are hidden', () => {
  assert.is(redactor.headers({ 'x-api-key': 'k', 'x-auth-token': 't' })['x-api-key'], REDACTED);
  assert.is(redactor.headers({ 'x-auth-token': 't' })['x-auth-token'], REDACTED);
});

test("the profiler's own X-Debug-Token headers are shown (a profile's name, not a secret)", () => {
  const redactor = new Redactor();
  assert.equal(redactor.headers({ 'X-Debug-Token': 'abc123', 'x-debug-token-link': 'http://h/_profiler/abc123', 'X-Previous-Debug-Token': 'def456', 'x-auth-token': 's3cr3t' }), {
    'x-debug-token': 'abc123',
    'x-debug-token-link': 'http://h/_profiler/abc123',
    'x-previous-debug-token': 'def456',
    'x-auth-token': '[redacted]',
  });
});

test('a header named __proto__, in any case, is shown as any other, never the prototype of the copy', () => {
  for (const name of ['__proto__', '__PROTO__']) {
    const source: Record<string, string> = { accept: 'text/html' };
    Object.defineProperty(source, name, { value: 'x', enumerable: true });
    const headers = redactor.headers(source);
    assert.is(Object.getPrototypeOf(headers), Object.prototype, name);
    assert.equal(Object.entries(headers), [['accept', 'text/html'], ['__proto__', 'x']], name);
    assert.is(redactor.headersJson(source), '{"accept":"text/html","__proto__":"x"}', name);
  }
});

test('headersJson writes what JSON.stringify(headers()) would', () => {
  const samples: Array<Record<string, string | string[] | number | undefined>> = [
    {},
    { host: 'h', accept: '*/*', 'x-api-key': 'k', cookie: 'a=1', 'content-length': 15, 'set-cookie': ['a=1', 'b=2'], gone: undefined },
    { 'x-quote': 'say "hi"\n', 'x-debug-token': 'abc123' },
    { 'Content-Type': 'text/html', 'content-type': 'text/plain' },
  ];
  for (const headers of samples) assert.is(redactor.headersJson(headers), JSON.stringify(redactor.headers(headers)), JSON.stringify(headers));
});

test('headersJson reuses JSON only for equal headers: a changed, added, removed or reordered header is written anew', () => {
  const redactor = new Redactor();
  const last = new LastHeaders();
  const long = 'x'.repeat(300);
  const sequence: Array<Record<string, string | string[] | number | undefined>> = [
    { host: 'h', accept: '*/*' },
    { host: 'h', accept: '*/*' },
    { host: 'h', accept: 'text/html' },
    { host: 'h', accept: 'text/html', 'x-more': 'y' },
    { host: 'h', accept: 'text/html', 'x-more': 'y' },
    { accept: 'text/html', host: 'h', 'x-more': 'y' },
    { host: 'h' },
    { host: 'h', gone: undefined },
    { host: 'h', 'x-long': long },
    { host: 'h', 'x-long': `${long}!` },
    { host: 'h', 'x-long': long },
    { host: 'h', 'set-cookie': ['a=1'] },
    { host: 'h', 'set-cookie': ['a=2'] },
    { host: 'other', 'content-length': 15 },
    { host: 'other', 'content-length': 16 },
  ];
  for (const headers of sequence) {
    const expected = JSON.stringify(redactor.headers(headers));
    assert.is(redactor.headersJson(headers, last), expected, JSON.stringify(headers));
    assert.is(redactor.headersJson(headers), expected, JSON.stringify(headers));
  }
});

test('headersJson writes anew a header renamed with its value unchanged: the last JSON names the headers it was written for', () => {
  const redactor = new Redactor();
  const last = new LastHeaders();
  for (const headers of [{ host: 'h', 'x-note': 'v' }, { host: 'h', 'x-other': 'v' }, { host: 'h', 'x-note': 'v' }]) {
    assert.is(redactor.headersJson(headers, last), JSON.stringify(headers));
  }
});

test('a secret header is still redacted when the headers around it are served from the cache', () => {
  const redactor = new Redactor();
  const last = new LastHeaders();
  for (const value of ['Bearer one', 'Bearer one', 'Bearer two', 'Bearer two']) {
    for (const json of [redactor.headersJson({ host: 'h', authorization: value, 'x-api-key': value }, last), redactor.headersJson({ host: 'h', authorization: value, 'x-api-key': value })]) {
      assert.is(json, '{"host":"h","authorization":"[redacted]","x-api-key":"[redacted]"}');
      assert.not.ok(json.includes('Bearer'));
    }
  }
});

test('a hidden header\'s value is not compared: it may change, but it must still be there for the same JSON', () => {
  const redactor = new Redactor();
  const last = new LastHeaders();
  const sequence: Array<Record<string, string | undefined>> = [
    { host: 'h', authorization: 'Bearer one' },
    { host: 'h', authorization: 'Bearer two' },
    { host: 'h', authorization: undefined },
    { host: 'h', authorization: 'Bearer three' },
    { host: 'h' },
    { host: 'h', authorization: 'Bearer four' },
    { host: 'other', authorization: 'Bearer four' },
  ];
  for (const headers of sequence) {
    assert.is(redactor.headersJson(headers, last), JSON.stringify(redactor.headers(headers)), JSON.stringify(headers));
  }
});

test('headers remembered by one redactor are written anew by another with other rules', () => {
  const last = new LastHeaders();
  const headers = { host: 'h', 'x-tenant': 't1' };
  assert.is(new Redactor().headersJson(headers, last), '{"host":"h","x-tenant":"t1"}');
  assert.is(new Redactor({ headers: ['x-tenant'] }).headersJson(headers, last), '{"host":"h","x-tenant":"[redacted]"}');
});

test('valueJson writes what JSON.stringify(value()) would, whatever the value', () => {
  const cyclic: Record<string, unknown> = { name: 'loop' };
  cyclic['self'] = cyclic;
  const shared = { n: 1 };
  let deep: unknown = 'bottom';
  for (let i = 0; i < 12; i++) deep = { level: i, deep };
  const samples: unknown[] = [
    null, undefined, 'text', 'password=hunter2 and more', 'x'.repeat(10_050), 42, -0, Number.NaN, Infinity, true, 10n, Symbol('s'), function named() {}, () => {},
    [], {}, [1, undefined, null, 'a', [2, [3]]], { a: 1, b: undefined, password: 'p', nested: { token: 't', ok: 'yes' } },
    { 2: 'two', 1: 'one', b: 'b', a: 'a' }, JSON.parse('{"__proto__": {"x": 1}, "y": 2}'), cyclic, { left: shared, right: shared }, deep,
    new Error('boom password=x'), new Date(0), new Date(Number.NaN), new Map<unknown, unknown>([['k', 'v'], [1, { secret: 's' }], ['1', 'collides']]),
    Array.from({ length: 150 }, (_, i) => i), Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`k${i}`, i])), { 'quote"key': 'line\nbreak \u2028', '': 'empty' },
  ];
  for (const sample of samples) assert.is(redactor.valueJson(sample), JSON.stringify(redactor.value(sample)), String(typeof sample === 'symbol' ? sample.toString() : JSON.stringify(redactor.value(sample))).slice(0, 80));
});

test('secret-looking keys are hidden at any depth, others kept', () => {
  const value = redactor.value({ user: 'ann', password: 'p', nested: { apiKey: 'k', list: [{ client_secret: 's', ok: 1 }] } });
  assert.equal(value, { user: 'ann', password: REDACTED, nested: { apiKey: REDACTED, list: [{ client_secret: REDACTED, ok: 1 }] } });
});

test('query parameters and URLs lose secret values', () => {
  assert.equal(redactor.searchParams(new URLSearchParams('q=books&token=abc&token=def')), { q: 'books', token: REDACTED });
  assert.is(redactor.url('http://h/login?user=ann&password=hunter2'), `http://h/login?user=ann&password=${encodeURIComponent(REDACTED)}`);
  assert.is(redactor.url('http://h/plain?q=1'), 'http://h/plain?q=1');
});

test('secret pairs inside free text (log messages, URLs in log context) are hidden', () => {
  assert.is(redactor.text('GET http://h/x?q=1&api_key=abc done'), `GET http://h/x?q=1&api_key=${REDACTED} done`);
  assert.equal(redactor.value({ request_uri: 'http://h/?token=t&a=b' }), { request_uri: `http://h/?token=${REDACTED}&a=b` });
  assert.is(redactor.text('no pairs here'), 'no pairs here');
});

test('JSON and form bodies are redacted field by field; other bodies kept', () => {
  assert.match(redactor.body('{"password":"p","name":"n"}', 'application/json'), /"password": "\[redacted\]"/);
  assert.not.match(redactor.body('{"password":"p"}', 'application/json'), /"p"/);
  assert.is(redactor.body('user=a&passwd=b', 'application/x-www-form-urlencoded'), `user=a&passwd=${encodeURIComponent(REDACTED)}`);
  assert.is(redactor.body('plain text', 'text/plain'), 'plain text');
});

test('the key pattern and header list are configurable', () => {
  const custom = new Redactor({ headers: ['x-internal'], keyPattern: /^pin$/ });
  assert.equal(custom.headers({ 'x-internal': 'v', authorization: 'a' }), { 'x-internal': REDACTED, authorization: 'a' });
  assert.equal(custom.value({ pin: 1, password: 2 }), { pin: REDACTED, password: 2 });
});

test('value() makes a JSON-safe copy in the same pass: functions, errors, Maps, dates, cycles, bounds', () => {
  const cyclic: Record<string, unknown> = { name: 'loop' };
  cyclic.self = cyclic;
  const copy = redactor.value({
    handler: function onRequest() {},
    error: new RangeError('bad ?token=abc'),
    map: new Map<string, unknown>([['session_id', 's'], ['lang', 'fr']]),
    when: new Date(Date.UTC(2026, 10, 22)),
    cyclic,
    many: Array.from({ length: 150 }, (_, i) => i),
    missing: undefined,
  }) as Record<string, unknown>;
  assert.is(copy.handler, '[function onRequest]');
  assert.equal(copy.error, { class: 'RangeError', message: `bad ?token=${REDACTED}` });
  assert.equal(copy.map, { session_id: REDACTED, lang: 'fr' });
  assert.is(copy.when, '2026-11-22T00:00:00.000Z');
  assert.equal(copy.cyclic, { name: 'loop', self: '[circular]' });
  const shared = { id: 1 };
  assert.equal(redactor.value({ a: shared, b: [shared] }), { a: { id: 1 }, b: [{ id: 1 }] }, 'an object met twice is no cycle');
  assert.is((copy.many as unknown[]).length, 100);
  assert.is(copy.missing, null);
  assert.not.throws(() => JSON.stringify(copy));
});

test('an error is copied with its code and own fields next to its class and message, redacted as an object is: secret keys, secret pairs in strings', () => {
  const system = Object.assign(new Error("ENOENT: no such file or directory, open '/x'"), { code: 'ENOENT', errno: -2, syscall: 'open', path: '/x?token=abc' });
  const library = Object.assign(new Error('Not Found'), { statusCode: 404, name: 'HTTPError', password: 'hunter2', response: { headers: { authorization: 'Bearer x' } } });
  class QuotaError extends Error {
    constructor(readonly limit: number) {
      super('over');
      this.name = 'QuotaError';
    }
  }
  const expected = {
    system: { class: 'Error', message: "ENOENT: no such file or directory, open '/x'", code: 'ENOENT', errno: -2, syscall: 'open', path: `/x?token=${REDACTED}` },
    library: { class: 'Error', message: 'Not Found', statusCode: 404, name: 'HTTPError', password: REDACTED, response: { headers: { authorization: REDACTED } } },
    quota: { class: 'QuotaError', message: 'over', limit: 3 },
  };
  const context = { system, library, quota: new QuotaError(3) };
  assert.equal(redactor.value(context), expected);
  assert.equal(JSON.parse(redactor.valueJson(context)), expected);
});

test('an error\'s own fields are copied within the bounds, without throwing: a cycle, a getter that throws, a Proxy whose ownKeys trap throws, 100 fields a level', () => {
  const looped = Object.assign(new Error('looped'), { info: {} as Record<string, unknown> });
  looped.info.error = looped;
  const throwing = Object.assign(new Error('throwing'), { kept: 1 });
  Object.defineProperty(throwing, 'broken', { enumerable: true, get: () => { throw new Error('getter'); } });
  const hidden = new Proxy(new TypeError('hidden'), { ownKeys: () => { throw new Error('trap'); } });
  const wide = Object.assign(new Error('wide'), Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`f${i}`, i])));
  for (const copy of [redactor.value({ looped, throwing, hidden, wide }), JSON.parse(redactor.valueJson({ looped, throwing, hidden, wide }))] as Array<Record<string, Record<string, unknown>>>) {
    assert.equal(copy.looped!.info, { error: '[circular]' });
    assert.equal(copy.throwing, { class: 'Error', message: 'throwing', kept: 1 });
    assert.equal(copy.hidden, { class: 'TypeError', message: 'hidden' });
    assert.is(Object.keys(copy.wide!).length, 102);
  }
});

test('an error of another realm (a vm context\'s) is copied by class and message, as one of this realm is, not as {}', () => {
  const foreign = runInNewContext('new TypeError("bad ?token=abc")') as Error;
  const expected = { class: 'TypeError', message: `bad ?token=${REDACTED}` };
  assert.equal((redactor.value({ error: foreign }) as Record<string, unknown>).error, expected);
  assert.equal(JSON.parse(redactor.valueJson({ error: foreign, list: [foreign] })), { error: expected, list: [expected] });
});

test('a value is cut at 8 levels deep through arrays, Maps and error fields, as through objects, and a Map keeps its first 100 entries', () => {
  const nested = (wrap: (inner: unknown) => unknown): unknown => {
    let value: unknown = 'bottom';
    for (let i = 0; i < 12; i++) value = wrap(value);
    return value;
  };
  const inner = (copy: unknown): unknown => (copy as Record<string, unknown>).inner;
  const shapes: Array<[(inner: unknown) => unknown, (copy: unknown) => unknown]> = [
    [(inner) => [inner], (copy) => (copy as unknown[])[0]],
    [(inner) => new Map([['inner', inner]]), inner],
    [(inner) => Object.assign(new Error('e'), { inner }), inner],
  ];
  for (const [wrap, step] of shapes) {
    for (let copy of [redactor.value(nested(wrap)), JSON.parse(redactor.valueJson(nested(wrap)))]) {
      let levels = 0;
      while (typeof copy !== 'string') {
        copy = step(copy);
        levels++;
      }
      assert.is(copy, '[too deep]');
      assert.is(levels, 9);
    }
  }
  const map = new Map(Array.from({ length: 150 }, (_, i) => [`k${i}`, i]));
  for (const copy of [redactor.value(map), JSON.parse(redactor.valueJson(map))] as Array<Record<string, number>>) {
    assert.is(Object.keys(copy).length, 100);
    assert.is(copy.k99, 99);
  }
});

test('what is no secret is kept as sent: every value of a repeated query key, a string of exactly 10,000 characters, an X-Debug-Exception with no secret pair in its encoding', () => {
  assert.equal(redactor.searchParams(new URLSearchParams('tag=a&tag=b&q=x')), { tag: ['a', 'b'], q: 'x' });
  const long = 'y'.repeat(10_000);
  assert.is(redactor.value(long), long);
  assert.is(JSON.parse(redactor.valueJson({ long })).long, long);
  assert.is(redactor.valueJson({ ok: false, on: true, n: 0 }), '{"ok":false,"on":true,"n":0}');
  const message = 'No route found for "GET /x"';
  assert.equal(redactor.headers({ 'x-debug-exception': message }), { 'x-debug-exception': message });
});

test('a JSON body is redacted whole, not cut at 100 items', () => {
  const body = JSON.stringify({ items: Array.from({ length: 150 }, (_, i) => ({ id: i, token: `t${i}` })) });
  const shown = JSON.parse(redactor.body(body, 'application/json')) as { items: Array<{ id: number; token: string }> };
  assert.is(shown.items.length, 150);
  assert.ok(shown.items.every((item) => item.token === REDACTED));
});

test('a JSON body that does not parse (cut at the body cap, or malformed) still has its secret values hidden', () => {
  const cut = JSON.stringify({ user: 'ann', password: 'hunter2', api_key: 'k-123', note: 'x'.repeat(50) }).slice(0, 80);
  const shown = redactor.body(cut, 'application/json');
  assert.not.match(shown, /hunter2|k-123/);
  assert.match(shown, /"user":"ann"/);
  assert.match(shown, /"password":"\[redacted\]"/);
  const malformed = redactor.body('{"user": "ann", "password": "hunter2", "pin": 1234, "token": "unterminated', 'application/json');
  assert.not.match(malformed, /hunter2|1234|unterminated/);
  assert.match(malformed, /"user": "ann"/);
  assert.is(redactor.body('{"a": "say \\"password\\": x"', 'application/json'), '{"a": "say \\"password\\": x"', 'a key-like text inside a string value is no key');
});

test('a multipart/form-data body hides the contents of the fields whose names look secret', () => {
  const body = [
    '--XyZ',
    'Content-Disposition: form-data; name="user"',
    '',
    'ann',
    '--XyZ',
    'Content-Disposition: form-data; name="password"',
    '',
    'hunter2',
    '--XyZ',
    'content-disposition: form-data; name="api_key"',
    'Content-Type: text/plain',
    '',
    'k-123',
    '--XyZ--',
    '',
  ].join('\r\n');
  const shown = redactor.body(body, 'multipart/form-data');
  assert.not.match(shown, /hunter2|k-123/);
  assert.match(shown, /name="user"\r\n\r\nann\r\n/);
  assert.match(shown, /name="password"\r\n\r\n\[redacted\]\r\n--XyZ/);
  assert.not.match(redactor.body(body.slice(0, body.indexOf('hunter2') + 4), 'multipart/form-data'), /hunt/, 'a part cut at the body cap');
});

test('a text body hides secret key=value pairs, as free text does', () => {
  assert.is(redactor.body('user=ann&password=hunter2', 'text/plain'), `user=ann&password=${REDACTED}`);
});

test('session cookie names of the common frameworks look secret; words that merely contain "session" or "sid" do not', () => {
  for (const name of ['PHPSESSID', 'JSESSIONID', 'connect.sid', 'sid', 'session', 'laravel_session', '_myapp_session', 'rack.session', 'sessionid', 'ASP.NET_SessionId', '__Host-session']) {
    assert.ok(redactor.isSecretKey(name), name);
  }
  for (const name of ['sessions_count', 'possession', 'side', 'inside', 'lang']) assert.not.ok(redactor.isSecretKey(name), name);
});

test('a Buffer or typed array in a value keeps its first 100 items as an object of them, whatever its size', () => {
  const redactor = new Redactor();
  const big = Buffer.alloc(10 * 1024 * 1024, 7);
  const first = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [String(i), 7]));
  assert.equal(redactor.value({ upload: big }), { upload: first });
  assert.is(redactor.valueJson({ upload: big }), JSON.stringify({ upload: first }));
  assert.equal(redactor.value(new Uint16Array([1, 2])), { 0: 1, 1: 2 });
  assert.is(redactor.valueJson(new BigInt64Array([3n])), '{"0":"3"}');
});

test('url() hides secret values and leaves the rest of the URL as it was sent', () => {
  assert.is(redactor.url('http://h/s?q=a%20b+c&tag=<b>&flag&password=hunter2&token=1&token=2'), `http://h/s?q=a%20b+c&tag=<b>&flag&password=${encodeURIComponent(REDACTED)}&token=${encodeURIComponent(REDACTED)}&token=${encodeURIComponent(REDACTED)}`);
  assert.is(redactor.url('http://h/s?api%5Fkey=1&x=%ZZ'), `http://h/s?api%5Fkey=${encodeURIComponent(REDACTED)}&x=%ZZ`);
  assert.is(redactor.url('http://h/s?a=1'), 'http://h/s?a=1');
});

test('url() and searchParams() hide the secret `;key=value` pairs of a path (a servlet session id) and of query values, and keep the others', () => {
  const hidden = encodeURIComponent(REDACTED);
  assert.is(redactor.url('http://h/cart;jsessionid=ABC123/items;v=2?a=1'), `http://h/cart;jsessionid=${hidden}/items;v=2?a=1`);
  assert.is(redactor.url('/cart;JSESSIONID=ABC123'), `/cart;JSESSIONID=${hidden}`);
  assert.is(redactor.url('http://h/x?x=1;secret=p6&y=2;z=3'), `http://h/x?x=1;secret=${hidden}&y=2;z=3`);
  assert.equal(redactor.searchParams(new URLSearchParams('x=1;secret=p6&y=2;z=3')), { x: `1;secret=${REDACTED}`, y: '2;z=3' });
  assert.is(redactor.url('http://h/a;b/c;d=e'), 'http://h/a;b/c;d=e');
});

test('secret pairs after a space or a line break in free text are hidden too', () => {
  assert.is(redactor.text('login failed: user=ann password=hunter2'), `login failed: user=ann password=${REDACTED}`);
  assert.is(redactor.text('a=1\ntoken=t0k\n'), `a=1\ntoken=${REDACTED}\n`);
});

test('the X-Debug-Exception header (a percent-encoded error message) has its secret pairs hidden', () => {
  const message = encodeURIComponent('upstream GET https://api.test/v1?api_key=SECRET1&a=b failed');
  const headers = { 'x-debug-exception': message, 'content-type': 'text/html' };
  const shown = redactor.headers(headers)['x-debug-exception']!;
  assert.not.match(shown, /SECRET1/);
  assert.is(decodeURIComponent(shown), `upstream GET https://api.test/v1?api_key=${REDACTED}&a=b failed`);
  assert.is(redactor.headersJson(headers), JSON.stringify(redactor.headers(headers)));
  assert.is(redactor.headersJson(headers, new LastHeaders()), JSON.stringify(redactor.headers(headers)));
});

test('URL-valued headers (Referer, Location, Content-Location) lose their secret query values and path pairs, as the request URL does', () => {
  const headers = {
    referer: 'https://a.test/callback?access_token=s3cr3t-r&state=ok',
    location: '/reset;jsessionid=s3cr3t-l?token=s3cr3t-t&next=/home',
    'content-location': '/x?api_key=s3cr3t-c',
    'user-agent': 'agent?token=kept',
  };
  const expected = {
    referer: 'https://a.test/callback?access_token=%5Bredacted%5D&state=ok',
    location: '/reset;jsessionid=%5Bredacted%5D?token=%5Bredacted%5D&next=/home',
    'content-location': '/x?api_key=%5Bredacted%5D',
    'user-agent': 'agent?token=kept',
  };
  assert.equal(redactor.headers(headers), expected);
  const last = new LastHeaders();
  assert.equal(JSON.parse(redactor.headersJson(headers, last)), expected);
  assert.equal(JSON.parse(redactor.headersJson(headers, last)), expected, 'the same headers again, from the cache');
});

test('a Location with its secrets in the fragment (an OAuth implicit grant\'s redirect, RFC 6749 4.2.2) loses them too, as url() hides a fragment\'s pairs', () => {
  const hidden = encodeURIComponent(REDACTED);
  const location = 'https://client.test/cb#access_token=s3cr3t-f&state=xyz&expires_in=3600';
  assert.equal(redactor.headers({ location }), { location: `https://client.test/cb#access_token=${hidden}&state=xyz&expires_in=3600` });
  assert.is(redactor.url('/cb?state=1#id_token=s3cr3t&x=2'), `/cb?state=1#id_token=${hidden}&x=2`);
  assert.is(redactor.url('/docs?page=2#section-token'), '/docs?page=2#section-token');
  assert.is(redactor.url('/docs#intro'), '/docs#intro');
});

test('a value that cannot be read (a Proxy whose traps throw) is "[unreadable value]" in its place, in value() and valueJson(); the rest is kept', () => {
  const boom = () => {
    throw new Error('trap');
  };
  const hostile = new Proxy(new Error('hostile'), { getPrototypeOf: boom, get: boom, has: boom, ownKeys: boom, getOwnPropertyDescriptor: boom });
  const context = { message: 'logged', exception: hostile, list: [1, hostile] };
  const expected = { message: 'logged', exception: '[unreadable value]', list: [1, '[unreadable value]'] };
  assert.equal(redactor.value(context), expected);
  assert.equal(JSON.parse(redactor.valueJson(context)), expected);
  assert.is(redactor.valueJson(hostile), '"[unreadable value]"');
});

test('in free text, a secret value in quotes, or an authorization scheme with its credentials, is hidden whole', () => {
  assert.is(redactor.text('login password="hunter 4" ok'), `login password=${REDACTED} ok`);
  assert.is(redactor.text("api_key='k4' sent"), `api_key=${REDACTED} sent`);
  assert.is(redactor.text('Authorization=Bearer abc.def next'), `Authorization=${REDACTED} next`);
  assert.is(redactor.text('token=Basic Zm9v'), `token=${REDACTED}`);
  assert.is(redactor.text('user="ann" mode=fast'), 'user="ann" mode=fast', 'harmless pairs are left as written');
  // An unclosed quote: the quote and what follows it up to a separator go; to the end when the text ends in it.
  assert.is(redactor.text('password="abc next\nline'), `password=${REDACTED} next\nline`);
  assert.is(redactor.text('password="abc next'), `password=${REDACTED}`);
});

test('a Map or an error whose keys are longer in JSON than as text (control characters) is a note past 256 KiB of JSON, as an object with those keys is', () => {
  const fields = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`${i}${'\u0001'.repeat(2_000)}`, 1]));
  for (const value of [fields, new Map(Object.entries(fields)), Object.assign(new Error('x'), fields)]) {
    assert.match(JSON.parse(redactor.valueJson(value)), /^\[value of at least \d+ characters left out: longer than 262144\]$/);
  }
  // Below the bound, written whole as before.
  const few = Object.fromEntries(Object.entries(fields).slice(0, 10));
  assert.is(redactor.valueJson(new Map(Object.entries(few))), JSON.stringify(redactor.value(new Map(Object.entries(few)))));
});

test("a client's long keys (a 60 KB JSON body key per request, a long header name) are not remembered with their verdicts: 2,000 of them held over 120 MB", () => {
  const redactor = new Redactor();
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const heap = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const before = heap();
  for (let i = 0; i < 2_000; i++) {
    const key = `${i}${'k'.repeat(60_000)}`;
    redactor.body(JSON.stringify({ [key]: 1 }), 'application/json');
    redactor.headersJson({ [key.slice(0, 16_000)]: 'v' });
  }
  const grown = heap() - before;
  assert.ok(grown < 20_000_000, `heap grew by ${grown} bytes`);
  // Short keys still are, and long ones still get their verdict.
  assert.is(redactor.body('{"password":"x","a":1}', 'application/json'), `{\n  "password": "${REDACTED}",\n  "a": 1\n}`);
  assert.ok(redactor.isSecretKey(`${'a'.repeat(300)}_password`));
});

test('a secret value in quotes that the cut at 10,000 characters splits is hidden whole, in a string, an error message and a Map (cut first, its words past the first showed)', () => {
  const text = `${'x'.repeat(9_970)} password="correct horse battery staple" done`;
  const shown = `${'x'.repeat(9_970)} password=${REDACTED}`;
  assert.is(redactor.value(text), shown);
  assert.equal(JSON.parse(redactor.valueJson({ text, error: new Error(text), map: new Map([['note', text]]) })), { text: shown, error: { class: 'Error', message: shown }, map: { note: shown } });
  assert.is(redactor.value(text.replaceAll('"', "'")), shown);
});

test('an error without a constructor (a null prototype, an own constructor of undefined, an anonymous class) or with a message that is no string is still an error, class Error, its fields redacted, not "[unreadable value]"', () => {
  const orphan = Object.setPrototypeOf(Object.assign(new Error('orphan'), { token: 't0k' }), null) as Error;
  const unset = Object.assign(new Error('unset'), { constructor: undefined });
  const anonymous = new (class extends Error {})('anonymous');
  const numbered = Object.defineProperty(new Error(), 'message', { value: 42 });
  const expected: unknown[] = [
    { class: 'Error', message: 'orphan', token: REDACTED },
    { class: 'Error', message: 'unset', constructor: null },
    { class: 'Error', message: 'anonymous' },
    { class: 'Error', message: 42 },
  ];
  assert.equal(redactor.value([orphan, unset, anonymous, numbered]), expected);
  assert.equal(JSON.parse(redactor.valueJson([orphan, unset, anonymous, numbered])), expected);
});

test("an error's message in a value is cut at 10,000 characters, as the value's other strings are (a 10 MB one was stored whole)", () => {
  const error = new Error(`password=hunter2 ${'x'.repeat(10 * 1024 * 1024)}`);
  for (const copy of [redactor.value({ error }), JSON.parse(redactor.valueJson({ error }))] as Array<{ error: { message: string } }>) {
    assert.is(copy.error.message, `password=${REDACTED} ${'x'.repeat(10_000 - 'password=hunter2 '.length)}…`);
  }
});

test('a value whose JSON passes 256 KiB (100 items of 100 items of 10,000 characters: 100 MB) is a note of its length in its place; one under it is kept', () => {
  const row = Array(100).fill('x'.repeat(20_000));
  const json = redactor.valueJson({ wide: Array(100).fill(row) });
  assert.ok(json.length < 200, `${json.length} characters`);
  assert.match(JSON.parse(json), /^\[value of at least \d+ characters left out: longer than 262144\]$/);
  assert.is(MAX_VALUE_JSON, 262_144);
  const kept = { rows: Array(20).fill('y'.repeat(10_000)) };
  assert.equal(JSON.parse(redactor.valueJson(kept)), kept);
  // The note is the whole value's, not a part's: a deep one is no object cut short.
  assert.type(JSON.parse(redactor.valueJson([[[row, row]]])), 'string');
});

test("a Map or an error's fields in a value are left as soon as they pass 256 KiB, as an object's are: not 100 MB built first to be written as a note", () => {
  let reads = 0;
  const wide = (): Record<string, string> => {
    const item: Record<string, string> = {};
    for (let i = 0; i < 100; i++) Object.defineProperty(item, `k${i}`, { enumerable: true, get: () => (reads++, 'x'.repeat(10_000)) });
    return item;
  };
  const error = Object.assign(new Error('the upstream failed'), { response: Array.from({ length: 100 }, wide) });
  for (const value of [new Map(Array.from({ length: 100 }, (_, i) => [i, wide()])), error]) {
    reads = 0;
    assert.match(JSON.parse(redactor.valueJson({ value })), /^\[value of at least \d+ characters left out: longer than 262144\]$/);
    // 27 strings of 10,000 characters pass 256 KiB: the other 9,973 are never read.
    assert.ok(reads < 100, `${reads} strings read`);
  }
  // Under the bound, both are written as before: a Map's keys as text, an error by class, message, code and fields.
  const kept = { map: new Map<unknown, unknown>([[1, 'a'], ['1', 'b'], ['token', 's3cret']]), error: Object.assign(new Error('x'), { code: 'E_X', status: 502 }) };
  assert.equal(JSON.parse(redactor.valueJson(kept)), redactor.value(kept));
  assert.equal(JSON.parse(redactor.valueJson(kept)), { map: { 1: 'b', token: REDACTED }, error: { class: 'Error', message: 'x', code: 'E_X', status: 502 } });
});

test.run();
