import { validateHeaderValue } from 'node:http';
import { Readable } from 'node:stream';
import { runInNewContext } from 'node:vm';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Request, Response, discardedBody } from '../../../kernel/index.js';
import { thrown } from '../helpers.js';

const test = suite('Response');

test('header names are case-insensitive', () => {
  const response = new Response('x', 200, { 'Content-Type': 'text/plain', 'X-Count': 3 });
  assert.is(response.getHeader('content-type'), 'text/plain');
  assert.is(response.getHeader('X-COUNT'), '3');
  response.appendHeader('Set-Cookie', 'a=1').appendHeader('set-cookie', 'b=2');
  assert.equal(response.headers['set-cookie'], ['a=1', 'b=2']);
  response.removeHeader('X-Count');
  assert.not.ok(response.hasHeader('x-count'));
});

test('a header named constructor or __proto__ is a header like any other, never Object.prototype\'s member nor the headers\' prototype', () => {
  const fresh = new Response('');
  assert.is(fresh.hasHeader('constructor'), false);
  assert.is(fresh.getHeader('Constructor'), undefined);
  assert.is(fresh.getHeader('__proto__'), undefined);
  fresh.appendHeader('Constructor', 'a');
  assert.is(fresh.getHeader('constructor'), 'a');
  const given = new Response('', 200, { ['__proto__']: ['a', 'b'] });
  assert.is(Object.getPrototypeOf(given.headers), Object.prototype);
  assert.is(given.getHeader('__proto__'), 'a, b');
  given.appendHeader('__proto__', 'c');
  assert.equal(Object.getOwnPropertyDescriptor(given.headers, '__proto__')?.value, ['a', 'b', 'c']);
  const set = new Response('').setHeader('__PROTO__', 'x');
  assert.is(set.hasHeader('__proto__'), true);
  assert.equal(Object.keys(set.removeHeader('__proto__').headers), []);
});

test('json() and redirect() helpers', () => {
  const json = Response.json({ a: 1 }, 201);
  assert.is(json.status, 201);
  assert.is(json.getHeader('content-type'), 'application/json');
  assert.is(json.body, '{"a":1}');
  const redirect = Response.redirect('/there', 301);
  assert.is(redirect.getHeader('location'), '/there');
  assert.throws(() => Response.redirect('/x', 200), RangeError);
});

test('json() refuses a value JSON cannot encode (undefined, a function), rather than a 200 application/json with an empty body', () => {
  for (const value of [undefined, () => 1, Symbol('s')]) {
    assert.throws(() => Response.json(value), (error: unknown) => error instanceof TypeError && /JSON/.test((error as Error).message), String(value));
  }
  assert.is(Response.json(null).body, 'null');
});

test('prepare() adds charset and Content-Length in bytes', () => {
  const response = new Response('héllo').prepare(Request.create('/'));
  assert.is(response.getHeader('content-type'), 'text/html; charset=UTF-8');
  assert.is(response.getHeader('content-length'), '6');
  const text = new Response('x', 200, { 'content-type': 'text/plain' }).prepare(Request.create('/'));
  assert.is(text.getHeader('content-type'), 'text/plain; charset=UTF-8');
});

test('prepare() strips the body of 204 and 304 responses', () => {
  const response = new Response('gone', 204, { 'content-type': 'text/plain' }).prepare(Request.create('/'));
  assert.is(response.body, null);
  assert.not.ok(response.hasHeader('content-type'));
});

test('prepare() destroys the stream body of a 204 and keeps it for the server (discardedBody), which waits for its clean-up', () => {
  const stream = Readable.from(['rows']);
  const response = new Response(stream, 204).prepare(Request.create('/'));
  assert.is(response.body, null);
  assert.ok(stream.destroyed);
  assert.is(discardedBody(response), stream);
  assert.is(discardedBody(new Response('gone', 204).prepare(Request.create('/'))), undefined, 'text: nothing to wait for');
});

test('prepare() leaves no Transfer-Encoding on 204 and 304 (RFC 9112 6.1), and no Content-Length beside a Transfer-Encoding (RFC 9112 6.2)', () => {
  const empty = new Response('', 204, { 'transfer-encoding': 'chunked' }).prepare(Request.create('/'));
  assert.is(empty.headers['transfer-encoding'], undefined);
  const chunked = new Response(Readable.from(['a']), 200, { 'transfer-encoding': 'chunked', 'content-length': '1' }).prepare(Request.create('/'));
  assert.is(chunked.headers['content-length'], undefined);
  assert.is(chunked.headers['transfer-encoding'], 'chunked');
  const text = new Response('abc', 200, { 'transfer-encoding': 'chunked', 'content-length': '3' }).prepare(Request.create('/'));
  assert.is(text.headers['content-length'], undefined);
});

test('prepare() sends 205 Reset Content with no content (RFC 9110 15.3.6): Content-Length 0, a stream body destroyed', () => {
  const text = new Response('form saved', 205, { 'content-type': 'text/plain' }).prepare(Request.create('/'));
  assert.is(text.body, null);
  assert.is(text.headers['content-length'], '0');
  assert.is(text.headers['content-type'], undefined);
  const stream = Readable.from(['x']);
  new Response(stream, 205, { 'transfer-encoding': 'chunked' }).prepare(Request.create('/'));
  assert.ok(stream.destroyed);
});

test('prepare() destroys a stream body it strips (a 304 made from a file response), so its file or socket is not left open', () => {
  const stream = Readable.from(['never sent']);
  const response = new Response(stream, 304).prepare(Request.create('/'));
  assert.is(response.body, null);
  assert.ok(stream.destroyed);
});

test('status classes', () => {
  assert.ok(new Response('', 404).isClientError());
  assert.ok(new Response('', 503).isServerError());
  assert.ok(new Response('', 301).isRedirect());
  assert.is(new Response('', 404).statusText, 'Not Found');
});

test('isRedirection() is any 3xx; isRedirect() the statuses that send the client elsewhere, as Symfony\'s, optionally to a given Location', () => {
  for (const status of [300, 301, 304, 399]) assert.ok(new Response('', status).isRedirection(), String(status));
  assert.not.ok(new Response('', 201).isRedirection());
  for (const status of [201, 301, 302, 303, 307, 308]) assert.ok(new Response('', status).isRedirect(), String(status));
  for (const status of [300, 304, 305, 200]) assert.not.ok(new Response('', status).isRedirect(), String(status));
  const found = new Response('', 302, { location: '/there' });
  assert.ok(found.isRedirect('/there'));
  assert.not.ok(found.isRedirect('/elsewhere'));
});

test('redirect() refuses a status that is no 3xx integer (NaN, 301.5) as it refuses 200', () => {
  assert.throws(() => Response.redirect('/x', 200), RangeError);
  assert.throws(() => Response.redirect('/x', Number.NaN), RangeError);
  assert.throws(() => Response.redirect('/x', 301.5), RangeError);
  assert.is(Response.redirect('/x', 308).status, 308);
});

test('prepare() sees a charset parameter whatever its case, and adds no second one', () => {
  const request = Request.create('/');
  assert.is(new Response('x', 200, { 'content-type': 'text/plain; Charset=ISO-8859-1' }).prepare(request).headers['content-type'], 'text/plain; Charset=ISO-8859-1');
  assert.is(new Response('x', 200, { 'content-type': 'text/plain' }).prepare(request).headers['content-type'], 'text/plain; charset=UTF-8');
});

test('setCookie: Path=/, HttpOnly and SameSite=Lax by default, the value percent-encoded, several cookies kept', () => {
  const response = new Response('').setCookie('session', 'a b;c').setCookie('theme', 'dark', { httpOnly: false, sameSite: 'strict', maxAge: 3600, path: '/app', domain: 'example.com' });
  assert.equal(response.headers['set-cookie'], ['session=a%20b%3Bc; Path=/; HttpOnly; SameSite=Lax', 'theme=dark; Max-Age=3600; Domain=example.com; Path=/app; SameSite=Strict']);
});

test('setCookie: options that are no plain object, or hold a key it does not know (a typo), are a TypeError naming it, rather than dropped', () => {
  const response = new Response('');
  assert.throws(() => response.setCookie('s', '1', { httponly: false } as never), (error: unknown) => error instanceof TypeError && /^Cookie "s" has no option "httponly"; its options are maxAge, /.test(error.message));
  assert.throws(() => response.setCookie('s', '1', new Map([['maxAge', 60]]) as never), (error: unknown) => error instanceof TypeError && /^The options of cookie "s" are a plain object/.test(error.message));
  assert.throws(() => response.clearCookie('s', { domian: 'example.com' } as never), /has no option "domian"/);
  assert.is(response.headers['set-cookie'], undefined);
});

test('setCookie: a maxAge that is no whole number of seconds, or an expires that is no valid Date, is a TypeError naming the cookie and what is expected', () => {
  assert.is(thrown(() => new Response('').setCookie('session', 'a', { maxAge: 1.5 })).message, 'The maxAge of cookie "session" is a whole number of seconds, not number 1.5 (Express\'s res.cookie() counts it in milliseconds).');
  assert.match(thrown(() => new Response('').setCookie('session', 'a', { maxAge: '3600' as never })).message, 'not the string "3600"');
  for (const expires of [Date.now(), '2030-01-01', new Date('soon')]) {
    const error = thrown(() => new Response('').setCookie('session', 'a', { expires: expires as Date }));
    assert.instance(error, TypeError);
    assert.match(error.message, 'The expires of cookie "session" is a valid Date (new Date(Date.now() + 86_400_000) for a day), not ');
  }
  assert.match(String(new Response('').setCookie('session', 'a', { maxAge: 0, expires: new Date(0) }).headers['set-cookie']), 'Max-Age=0; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT');
});

test('setCookie: a maxAge too large to be written in digits (1e21, Number.MAX_VALUE for "forever") is a TypeError, not a Max-Age=1e+21 browsers ignore', () => {
  for (const maxAge of [1e21, Number.MAX_VALUE, -1e21]) {
    assert.match(thrown(() => new Response('').setCookie('session', 'a', { maxAge })).message, `The maxAge of cookie "session" is a whole number of seconds, not number ${maxAge}`);
  }
  assert.match(String(new Response('').setCookie('session', 'a', { maxAge: 400 * 86_400 }).headers['set-cookie']), 'Max-Age=34560000;');
  assert.match(String(new Response('').setCookie('session', 'a', { maxAge: -1 }).headers['set-cookie']), 'Max-Age=-1;');
});

test("setCookie: an expires of 0, null or '' makes a session cookie, as the cookie package did before expires was checked and as Express documents for 0", () => {
  for (const expires of [0, null, '', false]) {
    assert.is(new Response('').setCookie('session', 'a', { expires: expires as never }).headers['set-cookie'], 'session=a; Path=/; HttpOnly; SameSite=Lax', String(expires));
  }
  assert.is(thrown(() => new Response('').setCookie('session', 'a', { expires: new Date('soon') })).message, 'The expires of cookie "session" is a valid Date (new Date(Date.now() + 86_400_000) for a day), not an invalid Date.');
});

test('setCookie: Secure follows the request\'s scheme at prepare(), unless given; SameSite=None and Partitioned always have it', () => {
  const cookies = (request: Request) =>
    new Response('')
      .setCookie('auto', '1')
      .setCookie('never', '1', { secure: false })
      .setCookie('cross', '1', { sameSite: 'none' })
      .appendHeader('set-cookie', 'raw=1')
      .prepare(request).headers['set-cookie'];
  assert.equal(cookies(Request.create('https://example.com/')), [
    'auto=1; Path=/; HttpOnly; SameSite=Lax; Secure',
    'never=1; Path=/; HttpOnly; SameSite=Lax',
    'cross=1; Path=/; HttpOnly; Secure; SameSite=None',
    'raw=1',
  ]);
  assert.equal(cookies(Request.create('http://example.com/')), [
    'auto=1; Path=/; HttpOnly; SameSite=Lax',
    'never=1; Path=/; HttpOnly; SameSite=Lax',
    'cross=1; Path=/; HttpOnly; Secure; SameSite=None',
    'raw=1',
  ]);
  // A 204 keeps its cookies, made secure as well.
  assert.is(new Response(null, 204).setCookie('a', '1').prepare(Request.create('https://example.com/')).headers['set-cookie'], 'a=1; Path=/; HttpOnly; SameSite=Lax; Secure');
  // Prepared twice (a sub-request's response going on as its parent's): Secure is added once.
  const twice = new Response('').setCookie('a', '1');
  twice.prepare(Request.create('https://example.com/')).prepare(Request.create('https://example.com/'));
  assert.is(twice.headers['set-cookie'], 'a=1; Path=/; HttpOnly; SameSite=Lax; Secure');
});

test('setCookie: sameSite is read regardless of case, so SameSite=None in capitals (as the header writes it) is Secure too, not dropped by browsers', () => {
  const over = (scheme: string, sameSite: string) => new Response('').setCookie('cross', '1', { sameSite: sameSite as 'none' }).prepare(Request.create(`${scheme}://example.com/`)).headers['set-cookie'];
  for (const sameSite of ['None', 'NONE', 'none']) {
    assert.is(over('http', sameSite), 'cross=1; Path=/; HttpOnly; Secure; SameSite=None', sameSite);
    assert.is(over('https', sameSite), 'cross=1; Path=/; HttpOnly; Secure; SameSite=None', sameSite);
  }
  assert.is(over('http', 'Strict'), 'cross=1; Path=/; HttpOnly; SameSite=Strict');
});

test('headers that are no object of names and values (Headers, a Map, a list of pairs, a string) or a value of another type are a TypeError at the call', () => {
  for (const headers of [new Headers({ 'content-type': 'text/plain' }), new Map([['content-type', 'text/plain']]), [['content-type', 'text/plain']], 'content-type: text/plain', null]) {
    const error = thrown(() => new Response('x', 200, headers as never));
    assert.instance(error, TypeError, String(headers));
    assert.match(error.message, /^The headers of a response are an object of names and values \(\{ 'content-type': 'text\/plain' \}\), not /);
  }
  assert.match(thrown(() => Response.json({}, 200, new Headers() as never)).message, /not an object of type Headers\.$/);
  assert.is(thrown(() => new Response('x', 200, { 'x-a': null } as never)).message, 'The value of header "x-a" is a string, a number or a list of strings, not null.');
  assert.is(thrown(() => new Response('x', 200, { 'x-a': ['1', 2] } as never)).message, 'The value of header "x-a" is a string, a number or a list of strings, not a list holding number 2.');
  assert.equal(new Response('x', 200, { 'X-A': ['1', '2'], 'content-length': 1, skipped: undefined }).headers, { 'x-a': ['1', '2'], 'content-length': '1' });
  assert.equal(new Response('x', 200, Object.assign(Object.create(null), { a: 'b' })).headers, { a: 'b' });
});

test('setHeader() and appendHeader() refuse what the constructor refuses: a value of another type, a list holding one, a name that is no string', () => {
  const response = new Response('x');
  assert.is(thrown(() => response.setHeader('x-a', null as never)).message, 'The value of header "x-a" is a string, a number or a list of strings, not null.');
  assert.is(thrown(() => response.setHeader('x-a', ['1', 2] as never)).message, 'The value of header "x-a" is a string, a number or a list of strings, not a list holding number 2.');
  assert.is(thrown(() => response.setHeader(undefined as never, 'x')).message, 'A header name is a non-empty string, not undefined.');
  assert.is(thrown(() => response.appendHeader('vary', 5 as never)).message, 'A value appended to header "vary" is a string, not number 5.');
  assert.is(thrown(() => response.appendHeader('', 'x')).message, 'A header name is a non-empty string, not the string "".');
  response.setHeader('X-B', 2).setHeader('x-c', ['1', '2']).appendHeader('Vary', 'Accept').appendHeader('vary', 'Origin');
  assert.equal(response.headers, { 'x-b': '2', 'x-c': ['1', '2'], vary: ['Accept', 'Origin'] });
});

test('headers made by another realm (vm, a test runner\'s sandbox) or by a class are read by their names, as a literal is', () => {
  assert.equal(new Response('x', 200, runInNewContext("({ 'Content-Type': 'text/plain', 'x-n': 1 })")).headers, { 'content-type': 'text/plain', 'x-n': '1' });
  class CacheHeaders {
    'cache-control' = 'no-store';
  }
  assert.equal(new Response('x', 200, new CacheHeaders() as never).headers, { 'cache-control': 'no-store' });
  const inherited = Object.assign(Object.create({ vary: 'accept' }) as Record<string, string>, { etag: '"1"' });
  assert.equal(new Response('x', 200, inherited).headers, { etag: '"1"', vary: 'accept' });
  assert.match(thrown(() => new Response('x', 200, runInNewContext("new Map([['a', 'b']])"))).message, /^The headers of a response are an object of names and values/);
});

test('clearCookie expires it with its path and domain; an invalid name is a TypeError', () => {
  assert.is(new Response('').clearCookie('session', { path: '/app' }).headers['set-cookie'], 'session=; Max-Age=0; Path=/app; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Lax');
  assert.throws(() => new Response('').setCookie('bad name', 'x'), (error: unknown) => error instanceof TypeError);
  assert.throws(() => new Response('').setCookie('a', 'x', { maxAge: 1.5 }), (error: unknown) => error instanceof TypeError);
});

test('a status is a whole number from 100 to 599, in the constructor and when set later, and a body of another type is refused (as Symfony refuses both)', () => {
  for (const status of [0, 99, 600, 999, 200.5, Number.NaN, '201']) {
    const error = thrown(() => new Response('x', status as number));
    assert.instance(error, RangeError, String(status));
    assert.match(error.message, /^A response status is a whole number from 100 to 599, not /);
    const response = new Response('x');
    assert.instance(thrown(() => (response.status = status as number)), RangeError, `set ${String(status)}`);
    assert.is(response.status, 200, 'the refused status is not kept');
  }
  assert.match(thrown(() => new Response('x', '201' as unknown as number)).message, /not the string "201"/);
  assert.is(thrown(() => new Response('x', 600)).message, 'A response status is a whole number from 100 to 599, not 600.');
  assert.is(thrown(() => new Response(42 as unknown as string)).message, 'A response body is a string, bytes, a readable stream or null, not number 42.');
  assert.is(thrown(() => new Response({ a: 1 } as unknown as string)).message, 'A response body is a string, bytes, a readable stream or null, not an object of type Object: send JSON with Response.json(data).');
  assert.is(new Response().body, '', 'no body given: an empty one');
  const response = new Response('x', 100);
  response.status = 599;
  assert.is(response.status, 599);
});

test('redirect() percent-encodes what a Location cannot carry (non-ASCII as UTF-8, spaces) and keeps the rest as given', () => {
  assert.is(Response.redirect('/é').headers.location, '/%C3%A9');
  assert.is(Response.redirect('/€?q=ü').headers.location, '/%E2%82%AC?q=%C3%BC');
  assert.is(Response.redirect('https://example.com/a b').headers.location, 'https://example.com/a%20b');
  assert.is(Response.redirect('/a%2Fb?x=%E9#f').headers.location, '/a%2Fb?x=%E9#f');
});

test('redirect() writes an absolute URL\'s host in another script in punycode; refuses a status that is no redirect and an empty URL', () => {
  assert.is(Response.redirect('https://bücher.example/straße?q=ü').headers.location, 'https://xn--bcher-kva.example/stra%C3%9Fe?q=%C3%BC');
  for (const status of [300, 304, 305, 399, 200]) assert.throws(() => Response.redirect('/x', status), /A redirect's status is 301, 302, 303, 307, 308 or 201/, String(status));
  for (const status of [201, 301, 302, 303, 307, 308]) assert.is(Response.redirect('/x', status).status, status);
  assert.throws(() => Response.redirect(''), /A redirect needs a URL to go to, not an empty one/);
});

test('redirect() takes a URL object as its href, as Fetch\'s Response.redirect() does, rather than refusing it as "no URL"', () => {
  assert.is(Response.redirect(new URL('/books?page=2', 'https://shop.example'), 303).getHeader('location'), 'https://shop.example/books?page=2');
  assert.is(Response.redirect(new URL('https://bücher.example/ä')).getHeader('location'), 'https://xn--bcher-kva.example/%C3%A4');
});

test('redirect() refuses a URL with a control character (CR, LF, tab, NUL, DEL) at the call, not when node:http refuses the header', () => {
  for (const url of ['/a\r\nSet-Cookie: x=1', 'http://a.test/\nx', ' java\tscript:alert(1)', '/a\u0000', '/a\u007f', 'https://bücher.example/\r']) {
    const error = thrown(() => Response.redirect(url));
    assert.instance(error, TypeError, JSON.stringify(url));
    assert.match(error.message, /^A redirect's URL has no control characters \(CR, LF, tab\.\.\.\), not ".*"\.$/s, JSON.stringify(url));
  }
  assert.is(thrown(() => Response.redirect('/a\r\nb')).message, "A redirect's URL has no control characters (CR, LF, tab...), not \"/a\\r\\nb\".");
});

test('a body of another kind (a web ReadableStream, an async generator, an object) is a TypeError naming the call that makes a body of it', () => {
  assert.match(thrown(() => new Response(new ReadableStream() as never)).message, 'not a web ReadableStream: pass Readable.fromWeb(stream)');
  assert.match(thrown(() => new Response((async function* () {})() as never)).message, 'not an async iterable (an async generator): pass Readable.from(iterable)');
  assert.match(thrown(() => new Response(new ArrayBuffer(2) as never)).message, 'pass new Uint8Array(buffer)');
  assert.match(thrown(() => new Response({ id: 1 } as never)).message, 'not an object of type Object: send JSON with Response.json(data)');
  assert.match(thrown(() => new Response(42 as never)).message, 'not number 42.');
});

test('setContentDisposition() writes a non-ASCII file name as filename* (UTF-8) with an ASCII filename beside it, which node:http can send', () => {
  const response = new Response('x').setContentDisposition('attachment', 'Bericht über €.txt');
  const header = response.getHeader('content-disposition') ?? '';
  assert.is(header, "attachment; filename=\"Bericht ?ber ?.txt\"; filename*=UTF-8''Bericht%20%C3%BCber%20%E2%82%AC.txt");
  assert.ok(/^[\x20-\x7e]+$/.test(header), header);
  validateHeaderValue('content-disposition', header);
  assert.is(new Response('x').setContentDisposition('inline', 'report "Q1".pdf').getHeader('content-disposition'), 'inline; filename="report \\"Q1\\".pdf"');
  assert.is(new Response('x').setContentDisposition('attachment').getHeader('content-disposition'), 'attachment');
});

test('setContentDisposition() refuses another disposition, and a file name that is a path or holds a control character, at the call', () => {
  assert.match(thrown(() => new Response('x').setContentDisposition('download' as 'attachment', 'a.txt')).message, "is 'attachment' or 'inline'");
  for (const name of ['../etc/passwd', 'a\\b.txt', 'a\r\nSet-Cookie: x=1', '']) {
    const error = thrown(() => new Response('x').setContentDisposition('attachment', name));
    assert.instance(error, TypeError, name);
  }
  assert.match(thrown(() => new Response('x').setContentDisposition('attachment', 'dir/a.txt')).message, 'a name, not a path');
});

test('setContentDisposition() refuses a file name with a lone surrogate (half an emoji cut by slice()) as a TypeError at the call, not a URIError from the encoder', () => {
  const cut = '\u{1F600}report.txt'.slice(1);
  const error = thrown(() => new Response('x').setContentDisposition('attachment', cut));
  assert.instance(error, TypeError);
  assert.is(error.message, `A file name for Content-Disposition is well-formed UTF-16 (no half of a surrogate pair), not ${JSON.stringify(cut)}.`);
  assert.is(new Response('x').setContentDisposition('attachment', '\u{1F600}.png').getHeader('content-disposition'), "attachment; filename=\"??.png\"; filename*=UTF-8''%F0%9F%98%80.png");
});

test('Response.json() names what it got that JSON encodes as nothing', () => {
  assert.throws(() => Response.json({ toJSON: () => undefined }), /Response\.json\(\) got an object of type Object, which JSON encodes as nothing/);
  assert.throws(() => Response.json(undefined), /got undefined/);
  assert.throws(() => Response.json(Symbol('s')), /got a symbol/);
});

test('each status class holds its first and last status and no other: 1xx informational, 2xx successful, 3xx redirection, 4xx client error, 5xx server error', () => {
  const classes = (status: number) => {
    const response = new Response('', status);
    return [response.isInformational(), response.isSuccessful(), response.isRedirection(), response.isClientError(), response.isServerError()];
  };
  for (const [status, which] of [[100, 0], [199, 0], [200, 1], [299, 1], [300, 2], [399, 2], [400, 3], [499, 3], [500, 4], [599, 4]] as const) {
    assert.equal(classes(status), [0, 1, 2, 3, 4].map((index) => index === which), String(status));
  }
  assert.is(new Response('', 599).statusText, 'Unknown Status', 'a status with no reason phrase');
});

test('getHeader() joins several values with ", ", and hasHeader() finds a header whatever the case of the name asked', () => {
  const response = new Response('', 200, { Vary: ['Accept', 'Origin'], 'Content-Type': 'text/plain' });
  assert.is(response.getHeader('vary'), 'Accept, Origin');
  assert.ok(response.hasHeader('Content-Type'));
  assert.ok(response.hasHeader('VARY'));
  assert.not.ok(response.hasHeader('etag'));
});

test('redirect() names a status or URL of another type in its error, makes an empty body, and sends an ASCII URL as given (an absolute one not rewritten by the URL parser)', () => {
  assert.is(thrown(() => Response.redirect('/x', '301' as never)).message, 'A redirect\'s status is 301, 302, 303, 307, 308 or 201, not the string "301".');
  assert.is(thrown(() => Response.redirect('/x', 200)).message, 'A redirect\'s status is 301, 302, 303, 307, 308 or 201, not 200.');
  const error = thrown(() => Response.redirect(42 as never));
  assert.instance(error, TypeError);
  assert.is(error.message, 'A redirect needs a URL to go to, not number 42.');
  const redirect = Response.redirect('HTTPS://Example.COM');
  assert.is(redirect.body, '');
  assert.is(redirect.getHeader('location'), 'HTTPS://Example.COM');
  assert.ok(redirect.isRedirect(), 'a redirect with a Location, asked for none in particular');
  assert.ok(redirect.isRedirect('HTTPS://Example.COM'));
});

test('setCookie: a Partitioned cookie is Secure over http too (browsers drop it otherwise), priority is written, and a maxAge too large for digits is named so', () => {
  assert.is(new Response('').setCookie('chip', '1', { partitioned: true }).prepare(Request.create('http://example.com/')).headers['set-cookie'], 'chip=1; Path=/; HttpOnly; Secure; Partitioned; SameSite=Lax');
  assert.is(new Response('').setCookie('chip', '1', { partitioned: true, secure: false }).headers['set-cookie'], 'chip=1; Path=/; HttpOnly; Partitioned; SameSite=Lax', 'secure: false as asked');
  assert.is(new Response('').setCookie('a', '1', { priority: 'high' }).headers['set-cookie'], 'a=1; Path=/; HttpOnly; Priority=High; SameSite=Lax');
  assert.is(thrown(() => new Response('').setCookie('session', 'a', { maxAge: 1e21 })).message, 'The maxAge of cookie "session" is a whole number of seconds, not number 1e+21, too large to be written in digits.');
});

test('setContentDisposition() names a file name of another type, or an empty one, in its TypeError', () => {
  const error = thrown(() => new Response('x').setContentDisposition('attachment', 42 as never));
  assert.instance(error, TypeError);
  assert.is(error.message, 'A file name for Content-Disposition is a non-empty string, not number 42.');
  assert.is(thrown(() => new Response('x').setContentDisposition('inline', '')).message, 'A file name for Content-Disposition is a non-empty string, not an empty one.');
});

test('prepare() frames a bytes body by its byte length and adds no Content-Type to it; a null body is Content-Length 0 unless one was given', () => {
  const request = Request.create('/');
  const bytes = new Response(new Uint8Array([1, 2, 3]), 200, { 'content-length': '9' }).prepare(request);
  assert.equal(bytes.headers, { 'content-length': '3' });
  assert.equal(new Response(new Uint8Array(2), 200, { 'transfer-encoding': 'chunked' }).prepare(request).headers, { 'transfer-encoding': 'chunked' });
  assert.equal(new Response(null).prepare(request).headers, { 'content-length': '0' });
  assert.equal(new Response(null, 200, { 'content-length': '10' }).prepare(request).headers, { 'content-length': '10' });
  const stream = new Response(Readable.from(['abcd']), 200, { 'content-length': '4' }).prepare(request);
  assert.equal(stream.headers, { 'content-length': '4' }, 'a stream keeps the length given with it');
});

test('prepare() adds a charset to text/ types only (application/json stays as it is)', () => {
  const request = Request.create('/');
  assert.is(Response.json({ a: 1 }).prepare(request).headers['content-type'], 'application/json');
  assert.is(new Response('x', 200, { 'content-type': 'image/svg+xml' }).prepare(request).headers['content-type'], 'image/svg+xml');
  assert.equal(new Response('x', 200, { 'content-type': ['text/plain'] }).prepare(request).headers['content-type'], ['text/plain'], 'a list, which prepare() leaves to the server rather than throwing');
});

test('prepare() keeps the Content-Length given with the empty body of a HEAD\'s answer (the GET\'s length), and for any other request or a body that is not empty writes the body\'s own', () => {
  const head = (method: string, body: string | Uint8Array) => new Response(body, 200, { 'content-length': '42' }).prepare(Request.create('/', method)).headers['content-length'];
  assert.is(head('HEAD', ''), '42');
  assert.is(head('HEAD', new Uint8Array(0)), '42');
  assert.is(head('GET', ''), '0');
  assert.is(head('GET', new Uint8Array(0)), '0');
  assert.is(head('HEAD', 'abc'), '3');
  assert.is(head('HEAD', new Uint8Array(5)), '5');
  assert.is(new Response('', 200).prepare(Request.create('/', 'HEAD')).headers['content-length'], '0', 'none given: the empty body\'s');
});

test('prepare() drops every framing header of a 204 and of a 205 (RFC 9110), and names no discarded body for a 204 that had none', () => {
  const request = Request.create('/');
  assert.equal(new Response('gone', 204, { 'content-length': '4', 'transfer-encoding': 'chunked', etag: '"1"' }).prepare(request).headers, { etag: '"1"' });
  assert.equal(new Response(Readable.from(['x']), 205, { 'transfer-encoding': 'chunked', 'content-type': 'text/plain' }).prepare(request).headers, { 'content-length': '0' });
  assert.is(discardedBody(new Response(null, 204).prepare(request)), undefined);
});

test('prepare() over https of a response whose cookies setCookie() set were removed leaves no Set-Cookie header', () => {
  const response = new Response('').setCookie('a', '1').removeHeader('set-cookie').prepare(Request.create('https://example.com/'));
  assert.not.ok('set-cookie' in response.headers);
});

test('redirect() reads a URL as absolute only when it starts with a scheme: one after a space or in the query is percent-encoded as given, its host not rewritten', () => {
  assert.is(Response.redirect(' https://bücher.example/ü').getHeader('location'), '%20https://b%C3%BCcher.example/%C3%BC');
  assert.is(Response.redirect('/go?to=https://bücher.example/').getHeader('location'), '/go?to=https://b%C3%BCcher.example/');
});

test('setCookie: every cookie left to the scheme gets Secure over https, not only the last one set', () => {
  const response = new Response('').setCookie('a', '1').setCookie('b', '2').setCookie('c', '3').prepare(Request.create('https://example.com/'));
  assert.equal(response.headers['set-cookie'], ['a=1; Path=/; HttpOnly; SameSite=Lax; Secure', 'b=2; Path=/; HttpOnly; SameSite=Lax; Secure', 'c=3; Path=/; HttpOnly; SameSite=Lax; Secure']);
});

test.run();
