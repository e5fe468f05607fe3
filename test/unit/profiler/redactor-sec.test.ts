import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request } from '../../../kernel/index.js';
import { createApp } from '../../../lib/app/index.js';
import { MemoryStorage, REDACTED, Redactor } from '../../../lib/profiler/index.js';

/** Milliseconds `fn` takes. A linear scan of these inputs takes about one; the quadratic ones took seconds. */
function millis(fn: () => unknown): number {
  const start = performance.now();
  fn();
  return performance.now() - start;
}

const BOUND_MS = 150;

test('free text of many ";" with no secret pair is scanned in linear time', () => {
  const redactor = new Redactor();
  const text = `=${';'.repeat(30_000)}`;
  let out = '';
  const ms = millis(() => (out = redactor.text(text)));
  assert.is(out, text);
  assert.ok(ms < BOUND_MS, `${ms.toFixed(0)} ms`);
  assert.ok(millis(() => redactor.body(text, 'text/plain')) < BOUND_MS);
});

test('";" still separates pairs in free text: the secret after it is hidden', () => {
  const redactor = new Redactor();
  assert.is(redactor.text('a=1;password=hunter2; b=2'), `a=1;password=${REDACTED}; b=2`);
  assert.is(redactor.text('x;token=abc'), `x;token=${REDACTED}`);
});

test('a JSON body that does not parse, full of escaped quotes, is scanned in linear time', () => {
  const redactor = new Redactor();
  for (const text of [`"${'\\"'.repeat(20_000)}`, `{"a":"${'\\"'.repeat(20_000)}\\`, `"${'\\\n"'.repeat(15_000)}`]) {
    const ms = millis(() => redactor.body(text, 'application/json'));
    assert.ok(ms < BOUND_MS, `${ms.toFixed(0)} ms for ${text.slice(0, 12)}`);
  }
});

test('a cut JSON body still hides a secret pair, also after an escaped quote and before a string cut at a backslash', () => {
  const redactor = new Redactor();
  assert.is(redactor.body('{"a":"x\\"y","password":"hunter2","b":"\\', 'application/json'), `{"a":"x\\"y","password":${JSON.stringify(REDACTED)},"b":"\\`);
  assert.is(redactor.body('{"token":"abc\\', 'application/json'), `{"token":${JSON.stringify(REDACTED)}`);
});

test('a multipart body made to fail its field pattern late is scanned in linear time', () => {
  const redactor = new Redactor();
  for (const text of ['content-disposition: name=""\n'.repeat(2_300), `content-disposition:${' name="'.repeat(9_000)}`, 'content-disposition:'.repeat(3_200)]) {
    const ms = millis(() => redactor.body(text, 'multipart/form-data'));
    assert.ok(ms < BOUND_MS / 3, `${ms.toFixed(0)} ms for ${JSON.stringify(text.slice(0, 30))}`);
  }
});

test('a multipart body cut in a secret field\'s headers or content still hides it', () => {
  const redactor = new Redactor();
  assert.is(redactor.body('--b\r\ncontent-disposition: form-data; name="password"\r\n\r\nhunt', 'multipart/form-data'), `--b\r\ncontent-disposition: form-data; name="password"\r\n\r\n${REDACTED}`);
  assert.not.match(redactor.body('--b\r\ncontent-disposition: form-data; name="a"\r\n\r\nx\r\n--b\r\ncontent-disposition: form-data; name="token"\r\n\r\nabc\r\n--b--', 'multipart/form-data'), 'abc');
});

test('a 404 for a long path of ";" costs a debug server no quadratic work when its profile is collected', async () => {
  const app = createApp({ profiler: { storage: new MemoryStorage(), saveDelayMs: 0 }, stderrLogLevel: false });
  try {
    const request = Request.create(`/=${';'.repeat(15_000)}`, 'GET', { remoteAddress: '203.0.113.9', headers: { referer: `=${';'.repeat(15_000)}` } });
    const response = await app.kernel.handle(request);
    const start = performance.now();
    await app.kernel.terminate(request, response);
    const ms = performance.now() - start;
    assert.is(response.status, 404);
    assert.ok(ms < 4 * BOUND_MS, `${ms.toFixed(0)} ms`);
  } finally {
    await app.close();
  }
});


test('a JSON body of a +json type (JSON:API, merge patch) is redacted field by field, as application/json is', () => {
  const redactor = new Redactor();
  for (const type of ['application/vnd.api+json', 'application/merge-patch+json']) {
    const shown = redactor.body('{"user":"ann","password":"hunter2"}', type);
    assert.not.match(shown, /hunter2/, type);
    assert.equal(JSON.parse(shown), { user: 'ann', password: REDACTED }, type);
  }
});

test('a cut JSON body hides a secret number whole, after a string with an escaped quote too, and reads escaped keys as their text', () => {
  const redactor = new Redactor();
  assert.is(redactor.body('{"user":"ann","pin":123456,"a":', 'application/json'), `{"user":"ann","pin":${JSON.stringify(REDACTED)},"a":`);
  assert.is(redactor.body('{"notes":["a \\" b"],"password":"hunter2","b":', 'application/json'), `{"notes":["a \\" b"],"password":${JSON.stringify(REDACTED)},"b":`);
  const escaped = redactor.body('{"p\\u0061ssword":"hunter2","\\u0074oken":"abc","a":', 'application/json');
  assert.not.match(escaped, /hunter2|abc/);
});

test('a cut JSON body whose key holds an escape JSON does not know is still redacted, the key judged as written', () => {
  const redactor = new Redactor();
  assert.is(redactor.body('{"a\\x":1,"n\\qote":"x","password":"hunter2","b":', 'application/json'), `{"a\\x":1,"n\\qote":"x","password":${JSON.stringify(REDACTED)},"b":`);
});

test('a cut JSON body keeps a string that names a secret but is no key (a list of field names) as it was', () => {
  const redactor = new Redactor();
  const cut = '{"required":["password","token"],"a":';
  assert.is(redactor.body(cut, 'application/json'), cut);
  assert.is(redactor.body(cut, 'text/plain'), cut);
});

test('a multipart body with bare LF line breaks hides a secret field whole, spaces and all, and keeps the field after it', () => {
  const redactor = new Redactor();
  const body = '--b\ncontent-disposition: form-data; name="password"\ncontent-type: text/plain\n\ncorrect horse battery\n--b\ncontent-disposition: form-data; name="user"\n\nann\n--b--';
  assert.is(redactor.body(body, 'multipart/form-data'), body.replace('correct horse battery', REDACTED));
});

test('in free text, an authorization scheme followed by several spaces or a tab still hides its credentials', () => {
  const redactor = new Redactor();
  assert.is(redactor.text('authorization=Bearer  abc123 next'), `authorization=${REDACTED} next`);
  assert.is(redactor.text('Authorization=Basic \tdXNlcjpwYXNz'), `Authorization=${REDACTED}`);
});

test('a query key with a space written as + (card+pin) is judged as it reads, and a key of malformed percent-encoding is judged as written', () => {
  const redactor = new Redactor();
  assert.is(redactor.url('/pay?card+pin=1234&a=1'), `/pay?card+pin=${encodeURIComponent(REDACTED)}&a=1`);
  assert.is(redactor.text('a%zz=1 password=hunter2'), `a%zz=1 password=${REDACTED}`);
  assert.is(redactor.url('/x?a%zz=1&token=t'), `/x?a%zz=1&token=${encodeURIComponent(REDACTED)}`);
});


test('a JSON body sent as another type (text/plain, as sendBeacon() and fetch() of a string send it, or none) has its secret pairs hidden too', () => {
  const redactor = new Redactor();
  for (const type of ['text/plain', '', 'application/octet-stream']) {
    assert.is(redactor.body('{"user":"ann","password":"hunter2","note":"a=1&token=t"}', type), `{"user":"ann","password":${JSON.stringify(REDACTED)},"note":"a=1&token=${REDACTED}"}`, type);
  }
  assert.is(redactor.body('user=ann password=hunter2', 'text/plain'), `user=ann password=${REDACTED}`);
});

test('in a JSON text body, a secret key whose value is a list or an object has the whole value hidden, as in a parsed JSON body', () => {
  const redactor = new Redactor();
  const body = '{"user":"ann","tokens":["t1",{"id":"t2"}],"password":{"v":"x","n":[1,{"k":"y"}]},"token":["a]b\\"}"],"note":"ok"}';
  const parsed = JSON.parse(redactor.body(body, 'application/json')) as unknown;
  for (const type of ['text/plain', '']) {
    const shown = redactor.body(body, type);
    assert.equal(JSON.parse(shown), parsed, type);
    assert.not.match(shown, /t1|t2|"x"|"y"|a\]b/, type);
  }
  // Cut at the body cap (or malformed), the value runs to the end of the text: nothing of it is shown.
  assert.is(redactor.body('{"a":1,"tokens":["t1","t2"],"password":{"v":"x","w":["y"', 'application/json'), `{"a":1,"tokens":${JSON.stringify(REDACTED)},"password":${JSON.stringify(REDACTED)}`);
  assert.is(redactor.body('{"list":["password",{"k":1}],"token":[]}', 'text/plain'), `{"list":["password",{"k":1}],"token":${JSON.stringify(REDACTED)}}`);
});

test('secret keys with list or object values, nested or unclosed, are hidden in linear time', () => {
  const redactor = new Redactor();
  const size = 256 * 1024;
  for (const unit of ['{"token":[', '"token":["]",', '"token":{"a":[1]},', '"a":[{"b":"[\\"}"},']) {
    const text = `{${unit.repeat(Math.ceil(size / unit.length))}`;
    for (const type of ['application/json', 'text/plain']) {
      const ms = millis(() => redactor.body(text, type));
      assert.ok(ms < BOUND_MS, `${ms.toFixed(0)} ms for ${unit} as ${type}`);
    }
  }
});

test('a multipart field of a name that is no secret hides the secret "key": value pairs of the JSON it holds (GraphQL\'s operations, a JSON blob)', () => {
  const redactor = new Redactor();
  const body = '--b\r\ncontent-disposition: form-data; name="operations"\r\n\r\n{"variables":{"password":"hunter2","user":"ann"}}\r\n--b\r\ncontent-disposition: form-data; name="note"\r\n\r\n"a": 1\r\n--b--';
  assert.is(redactor.body(body, 'multipart/form-data'), body.replace('"hunter2"', JSON.stringify(REDACTED)));
});

test.run();
