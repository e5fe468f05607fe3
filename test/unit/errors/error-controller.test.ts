import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BadRequestHttpError, HttpError, MethodNotAllowedHttpError, Request, RequestStack, Response } from '../../../kernel/index.js';
import { createErrorController } from '../../../lib/errors/index.js';

/** The error controller's answer to a request that failed with `error`, in debug mode. */
function answerTo(error: Error): Response {
  const request = new Request('/echo', { method: 'POST' });
  request.attributes.set('exception', error);
  return createErrorController({ debug: true, requestStack: new RequestStack() })(request) as Response;
}

test('X-Debug-Exception carries the message, percent-encoded', () => {
  const response = answerTo(new BadRequestHttpError('No "x" here.'));
  assert.is(decodeURIComponent(String(response.headers['x-debug-exception'])), 'No "x" here.');
});

test('a message quoting half an emoji (as JSON.parse does) is a 400 with U+FFFD in X-Debug-Exception, never a URIError', () => {
  let parseMessage = '';
  try {
    JSON.parse('😀');
  } catch (error) {
    parseMessage = (error as Error).message;
  }
  assert.ok(parseMessage.includes("'\ud83d'"), 'V8 quotes the lone high surrogate');
  const response = answerTo(new BadRequestHttpError(`Malformed JSON body: ${parseMessage}.`));
  assert.is(response.status, 400);
  assert.is(decodeURIComponent(String(response.headers['x-debug-exception'])), `Malformed JSON body: ${parseMessage.replace('\ud83d', '\ufffd')}.`);
});

test('a long message is cut to 2,048 encoded characters in X-Debug-Exception, never inside a character', () => {
  const header = (message: string) => String(answerTo(new BadRequestHttpError(message)).headers['x-debug-exception']);
  // An emoji that does not fit whole is left out, not cut into half a pair (nor into U+FFFD).
  const ascii = header(`${'x'.repeat(2047)}😀 and more`);
  assert.is(decodeURIComponent(ascii), 'x'.repeat(2047));
  const emoji = header(`${'x'.repeat(2036)}😀 and more`);
  assert.is(decodeURIComponent(emoji), `${'x'.repeat(2036)}😀`);
  assert.is(emoji.length, 2048);
  // 2,000 CJK characters would encode to 18,000 (9 each): past a proxy's header buffer or undici's 16 KiB.
  const cjk = header('中'.repeat(2000));
  assert.ok(cjk.length <= 2048, `${cjk.length} characters`);
  assert.is(decodeURIComponent(cjk), '中'.repeat(227));
  // A message that fits is kept whole.
  assert.is(decodeURIComponent(header(`${'é'.repeat(300)}.`)), `${'é'.repeat(300)}.`);
});

test('a page with debug details is stored by no cache, whatever the error asked for; the plain page keeps the error\'s Cache-Control', () => {
  assert.is(answerTo(new BadRequestHttpError('x')).headers['cache-control'], 'no-store');
  const cacheable = new HttpError(404, 'Gone for now.', { headers: { 'Cache-Control': 'public, max-age=600' } });
  assert.is(answerTo(cacheable).headers['cache-control'], 'no-store');
  const json = new Request('/echo', { headers: { accept: 'application/json' } });
  json.attributes.set('exception', cacheable);
  assert.is((createErrorController({ debug: true, requestStack: new RequestStack() })(json) as Response).headers['cache-control'], 'no-store', 'problem+json too');
  for (const options of [{ debug: false }, { debug: true, showDebug: () => false }]) {
    const request = new Request('/echo');
    request.attributes.set('exception', cacheable);
    const plain = createErrorController({ ...options, requestStack: new RequestStack() })(request) as Response;
    assert.is(plain.headers['cache-control'], 'public, max-age=600', JSON.stringify(options));
    assert.not.ok(plain.body?.toString().includes('Gone for now.'), 'the plain page');
  }
});

test('the error\'s headers are kept, but not those node:http would refuse nor those about the body the page replaces', () => {
  const response = answerTo(new HttpError(503, 'Down.', { headers: { 'Retry-After': '5', 'x-bad': 'a\nb', 'bad name': 'x', 'x-wide': '\u20ac', 'Content-Length': '1', 'content-encoding': 'gzip' } }));
  assert.is(response.status, 503);
  assert.equal(Object.keys(response.headers).filter((name) => !name.startsWith('x-debug-')).sort(), ['cache-control', 'content-security-policy', 'content-type', 'retry-after', 'vary']);
  assert.is(response.headers['retry-after'], '5');
  assert.is(answerTo(new MethodNotAllowedHttpError(['GET', 'HEAD'])).headers.allow, 'GET, HEAD');
});

test('an error response varies by Accept, added to a Vary the error asks for', () => {
  assert.is(answerTo(new BadRequestHttpError('x')).headers.vary, 'Accept');
  assert.is(answerTo(new HttpError(400, 'x', { headers: { vary: 'Origin' } })).headers.vary, 'Origin, Accept');
  assert.is(answerTo(new HttpError(400, 'x', { headers: { vary: 'origin, accept' } })).headers.vary, 'origin, accept');
  assert.is(answerTo(new HttpError(400, 'x', { headers: { vary: '*' } })).headers.vary, '*');
});

test('an error\'s header named __proto__, in any case, is a header of its page as Response keeps one, never the headers\' prototype', () => {
  for (const name of ['__proto__', '__PROTO__']) {
    const response = answerTo(new HttpError(503, 'Down.', { headers: JSON.parse(`{"${name}":"x","Retry-After":"5"}`) as Record<string, string> }));
    assert.is(Object.getOwnPropertyDescriptor(response.headers, '__proto__')?.value, 'x', name);
    assert.is(response.getHeader('__proto__'), 'x', name);
    assert.is(response.headers['retry-after'], '5', name);
    assert.is(Object.getPrototypeOf(response.headers), Object.prototype, name);
  }
});

test.run();
