import { addAbortListener, getEventListeners } from 'node:events';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Headers as UndiciHeaders } from 'undici';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ClientClosedError, PayloadTooLargeHttpError, MalformedRequestError, Request, RequestSlot, abortRequest, SuspiciousOperationError, UnsupportedMediaTypeHttpError, compileTrustedHosts, type RequestInit } from '../../../kernel/index.js';
import { thrown } from '../helpers.js';
import { DebugAccess } from '../../../lib/profiler/index.js';

const test = suite('Request');

test('create() splits an absolute URL into scheme, host, port, path and query', () => {
  const request = Request.create('https://example.test:8443/a%20b/c?x=1&y=two', 'post');
  assert.is(request.method, 'POST');
  assert.is(request.scheme, 'https');
  assert.is(request.host, 'example.test');
  assert.is(request.port, 8443);
  assert.is(request.path, '/a%20b/c');
  assert.is(request.query.get('y'), 'two');
  assert.is(request.uri, 'https://example.test:8443/a%20b/c?x=1&y=two');
  assert.is(request.uriForPath('/z'), 'https://example.test:8443/z');
});

test('create() refuses a scheme other than http and https, and a localPort that is no port, rather than writing them into the request\'s URLs', () => {
  for (const [init, message] of [
    [{ scheme: 'HTTPS' }, "Request.create()'s scheme is 'http' or 'https', not the string \"HTTPS\"."],
    [{ scheme: 'ftp' }, "Request.create()'s scheme is 'http' or 'https', not the string \"ftp\"."],
    [{ localPort: Number.NaN }, "Request.create()'s localPort is a port from 1 to 65535, not number NaN."],
    [{ localPort: -1 }, "Request.create()'s localPort is a port from 1 to 65535, not number -1."],
    [{ localPort: 65_536 }, "Request.create()'s localPort is a port from 1 to 65535, not number 65536."],
    [{ localPort: '8080' }, "Request.create()'s localPort is a port from 1 to 65535, not the string \"8080\"."],
  ] as const) {
    const error = thrown(() => Request.create('/x', 'GET', { headers: { host: '' }, ...(init as RequestInit) }));
    assert.instance(error, TypeError, JSON.stringify(init));
    assert.is(error.message, message);
  }
  const request = Request.create('/x', 'GET', { headers: { host: '' }, scheme: 'https', localPort: 8443 });
  assert.is(request.uri, 'https://localhost:8443/x');
});

test('create() refuses an absolute URL that is no URL (a port past 65535, a space in its host) with a TypeError naming it, its password left out, not a bare "Invalid URL"', () => {
  for (const [uri, shown] of [
    ['http://localhost:99999/home', 'http://localhost:99999/home'],
    ['https://a b.test/', 'https://a b.test/'],
    ['http://u:secret@localhost:99999/', 'http://localhost:99999/'],
  ] as const) {
    const error = thrown(() => Request.create(uri));
    assert.instance(error, TypeError, uri);
    assert.is(error.message, `Request.create()'s target "${shown}" is no URL (new URL() refuses it: a port past 65535, a host with a space...): give a path ('/books') or an http or https URL.`, uri);
  }
});

test('create() keeps an absolute URL with a user or password (or an empty one) as its target, as a socket would carry it, so that the kernel refuses it with a 400; they were dropped and the request served', () => {
  for (const uri of ['http://u:secret@localhost/home?x=1', 'http://@localhost/home', 'https://u@localhost:8443/']) {
    const request = Request.create(uri);
    assert.is(request.headers.host, new URL(uri).host, `${uri}: the Host a client writes from it`);
    assert.instance(request.targetError, MalformedRequestError, uri);
    assert.ok(!request.targetError!.message.includes('secret'), `${uri}: the password is left out`);
    assert.is(request.path.startsWith('/'), false, `${uri}: routed nowhere`);
  }
  assert.is(Request.create('https://u@localhost:8443/').scheme, 'https');
});

test('default ports are left out of httpHost', () => {
  assert.is(Request.create('http://example.test:80/').httpHost, 'example.test');
  assert.is(Request.create('https://example.test/').httpHost, 'example.test');
  assert.is(Request.create('http://example.test:8000/').httpHost, 'example.test:8000');
});

test('an invalid Host header is a suspicious operation', () => {
  const request = Request.create('/', 'GET', { headers: { Host: '<script>' } });
  assert.throws(() => request.host, (error: unknown) => error instanceof SuspiciousOperationError && (error as Error).message === 'Invalid Host "<script>".');
});

test('IPv6 hosts keep their brackets; bad ports are refused', () => {
  assert.is(Request.create('/', 'GET', { headers: { host: '[::1]:8000' } }).host, '[::1]');
  assert.throws(() => Request.create('/', 'GET', { headers: { host: 'a:99999' } }).host, (error: unknown) => error instanceof SuspiciousOperationError);
});

test('a Host port of 1 to 65535 is that port; an empty one (`a.test:`, RFC 3986) is the scheme\'s default', () => {
  const request = (host: string, scheme: 'http' | 'https' = 'http') => Request.create('/', 'GET', { headers: { host }, scheme });
  assert.is(request('a.test:1').port, 1);
  assert.is(request('a.test:65535').httpHost, 'a.test:65535');
  assert.is(request('a.test:').httpHost, 'a.test');
  assert.is(request('a.test:', 'https').port, 443);
  assert.is(request('[::1]:').uri, 'http://[::1]/');
  for (const host of ['a.test:0', 'a.test:65536']) assert.is(thrown(() => request(host).host).message, `Invalid Host "${host}".`, host);
});

test('a Host of one character is a host; an embedder\'s Host is read without the white space around it', () => {
  assert.is(Request.create('/', 'GET', { headers: { host: 'x' } }).httpHost, 'x');
  assert.is(Request.create('/', 'GET', { headers: { host: 'x:8080' } }).port, 8080);
  assert.is(Request.create('/', 'GET', { headers: { host: ' Example.test:8080 ' } }).httpHost, 'example.test:8080');
});

test('a Host with an empty label is invalid (as in Symfony): a..example.com passes for no subdomain of example.com', () => {
  for (const host of ['a..example.com', 'a..example.com:8000', 'example..com', 'www.example.com..']) {
    assert.throws(() => Request.create('/', 'GET', { headers: { host } }).host, (error: unknown) => error instanceof SuspiciousOperationError && (error as Error).message === `Invalid Host "${host}".`, host);
  }
  assert.is(Request.create('/', 'GET', { headers: { host: 'www.example.com.' } }).host, 'www.example.com.', 'one final dot (the root) is no empty label');
});

test('a bracketed Host must hold an IPv6 address: [1.2.3.4], [::::], [.] are refused', () => {
  for (const host of ['[1.2.3.4]', '[1.2.3.4]:80', '[::::]', '[.]', '[1:2]', '[:]']) {
    assert.instance(thrown(() => Request.create('/', 'GET', { headers: { host } }).host), SuspiciousOperationError, host);
  }
  assert.is(Request.create('/', 'GET', { headers: { host: '[2001:DB8::1]:8443' } }).httpHost, '[2001:db8::1]:8443');
  assert.is(Request.create('/', 'GET', { headers: { host: '[::ffff:10.0.0.1]' } }).host, '[::ffff:10.0.0.1]');
});

test('an embedder\'s array of several Host values is refused as several Host headers are; an array of one is that Host', () => {
  const error = thrown(() => Request.create('/', 'GET', { headers: { host: ['a.test', 'b.test'] } }).host);
  assert.instance(error, SuspiciousOperationError);
  assert.is(error.message, 'Several Host headers ("a.test", "b.test"): a request must have exactly one.');
  assert.is(Request.create('/', 'GET', { headers: { host: ['a.test:8000'] } }).httpHost, 'a.test:8000');
  assert.instance(thrown(() => new Request('http://c.test/', { headers: { host: ['a.test', 'b.test'] } }).host), SuspiciousOperationError, 'also beside an absolute-form target');
});

test('create() refuses a header value that is no string, finite number nor a list of them, naming the header, rather than a request no client can send (a number Host was a 500)', () => {
  for (const [name, value, described] of [
    ['host', Number.NaN, 'number NaN'],
    ['expect', Infinity, 'number Infinity'],
    ['transfer-encoding', 5n, 'bigint 5'],
    ['cookie', null, 'null'],
    ['X-A', true, 'boolean true'],
    ['x-a', {}, 'an object of type Object'],
    ['x-a', [['a', 'b']], 'an object of type Array'],
    ['set-cookie', ['a=1', {}], 'an object of type Object'],
  ] as const) {
    const error = thrown(() => Request.create('/', 'GET', { headers: { [name]: value } as unknown as Record<string, string> }));
    assert.instance(error, TypeError, name);
    assert.is(error.message, `The header "${name}" given to Request.create() is a string, a finite number or a list of them (a line each), not ${described}.`, name);
  }
  // A finite number is written as node:http's outgoing headers write one.
  const numbered = Request.create('/', 'POST', { headers: { 'content-length': 2, 'x-n': [1, '2'] } as unknown as Record<string, string>, body: 'ab' });
  assert.equal([numbered.headers['content-length'], numbered.headers['x-n']], ['2', '1, 2']);
  // A list with no line, or undefined, is no header; a string or a list of strings is taken.
  const request = Request.create('/', 'GET', { headers: { 'x-a': [], 'x-b': undefined, 'x-c': [undefined as unknown as string, 'c'], 'x-d': 'd' } });
  assert.equal({ ...request.headers }, { 'x-c': 'c', 'x-d': 'd', host: 'localhost' });
});

test('the client IP ignores X-Forwarded-For unless the peer is a trusted proxy', () => {
  const headers = { 'x-forwarded-for': '203.0.113.9, 10.0.0.2' };
  assert.is(Request.create('/', 'GET', { headers, remoteAddress: '10.0.0.1' }).clientIp, '10.0.0.1');
  const trusted = (address: string) => address.startsWith('10.');
  assert.is(Request.create('/', 'GET', { headers, remoteAddress: '10.0.0.1', trustProxy: trusted }).clientIp, '203.0.113.9');
});

test('forwarded hops lose their ports; a hop that is no address is the client, never the proxy before it', () => {
  const trusted = (address: string) => address === '127.0.0.1';
  const ip = (forwarded: string) => Request.create('/', 'GET', { headers: { 'x-forwarded-for': forwarded }, remoteAddress: '127.0.0.1', trustProxy: trusted }).clientIp;
  assert.is(ip('203.0.113.7:4711'), '203.0.113.7');
  assert.is(ip('[2001:db8::1]:443'), '2001:db8::1');
  assert.is(ip('[2001:db8::1]'), '2001:db8::1');
  assert.is(ip('2001:db8::1'), '2001:db8::1', 'a bare IPv6 address keeps its colons');
  // Behind a loopback proxy, an unusable hop must not make the client look like 127.0.0.1.
  assert.is(ip('unknown'), 'unknown');
  assert.is(ip('203.0.113.7, unknown'), 'unknown');
  assert.is(ip('127.0.0.1:80, unknown'), 'unknown');
  assert.is(ip('127.0.0.1:80'), '127.0.0.1', 'a trusted hop with a port is still trusted');
});

test('a trusted proxy that sends no X-Forwarded-For, or empty entries in it, is itself the client or passes over them', () => {
  const trusted = (address: string) => address === '10.0.0.1';
  const ip = (headers: Record<string, string>) => Request.create('/', 'GET', { headers, remoteAddress: '10.0.0.1', trustProxy: trusted }).clientIp;
  assert.is(ip({}), '10.0.0.1');
  assert.is(ip({ 'x-forwarded-for': '' }), '10.0.0.1');
  assert.is(ip({ 'x-forwarded-for': '203.0.113.9, , ' }), '203.0.113.9');
});

test('a hop that is no address ends the chain even for a trust function that would vouch for it: what lies beyond was written by whoever it is', () => {
  const ip = (forwarded: string) => Request.create('/', 'GET', { headers: { 'x-forwarded-for': forwarded }, remoteAddress: '10.0.0.1', trustProxy: () => true }).clientIp;
  assert.is(ip('198.51.100.1, unknown'), 'unknown');
  assert.is(ip('198.51.100.1, 203.0.113.9'), '198.51.100.1', 'every hop trusted: the farthest is the client');
});

test('a forwarded hop that is no address is shown as sent, never cut into one', () => {
  const trusted = (address: string) => address === '127.0.0.1';
  const ip = (forwarded: string) => Request.create('/', 'GET', { headers: { 'x-forwarded-for': forwarded }, remoteAddress: '127.0.0.1', trustProxy: trusted }).clientIp;
  assert.is(ip('203.0.113.75'), '203.0.113.75', 'an IPv4 hop without a port is whole');
  for (const hop of ['[2001:db8::1', '203.0.113.7:80:80', 'unknown:80']) assert.is(ip(hop), hop);
  // Only a port may follow a bracketed address: anything else makes the hop no address, not the one in the brackets.
  for (const hop of ['[2001:db8::1]junk', '[::1]x:80', '[::1]]']) assert.is(ip(hop), hop);
  assert.is(ip('[2001:db8::1]:443'), '2001:db8::1');
});

test('a forwarded hop whose address is followed by a colon and anything but a port is no address either, bracketed or IPv4; RFC 7239 obfuscated ports are ports', () => {
  const trusted = (address: string) => address === '127.0.0.1';
  const ip = (forwarded: string) => Request.create('/', 'GET', { headers: { 'x-forwarded-for': forwarded }, remoteAddress: '127.0.0.1', trustProxy: trusted }).clientIp;
  for (const hop of ['[2001:db8::1]:junk', '[2001:db8::1]:', '[::1]:80x', '[::1]:123456', '203.0.113.7:junk', '203.0.113.7:', '203.0.113.7:-1', '203.0.113.7:_']) assert.is(ip(hop), hop);
  for (const [hop, address] of [['[2001:db8::1]:443', '2001:db8::1'], ['[2001:db8::1]:_gazonk', '2001:db8::1'], ['203.0.113.7:4711', '203.0.113.7'], ['203.0.113.7:_a.b-c_1', '203.0.113.7']]) assert.is(ip(hop), address, hop);
});

test('IPv4-mapped IPv6 client addresses show as IPv4', () => {
  assert.is(Request.create('/', 'GET', { remoteAddress: '::ffff:127.0.0.1' }).clientIp, '127.0.0.1');
});

test('an IPv4-mapped address written in hex, upper case or in full shows as IPv4 as ::ffff:a.b.c.d does, from the socket or X-Forwarded-For', () => {
  for (const address of ['::ffff:7f00:1', '::FFFF:7F00:0001', '0:0:0:0:0:ffff:7f00:1', '::ffff:127.0.0.1']) {
    assert.is(Request.create('/', 'GET', { remoteAddress: address }).clientIp, '127.0.0.1', address);
  }
  assert.is(Request.create('/', 'GET', { remoteAddress: '::ffff:0:1' }).clientIp, '0.0.0.1');
  const ip = (forwarded: string) => Request.create('/', 'GET', { headers: { 'x-forwarded-for': forwarded }, remoteAddress: '10.0.0.1', trustProxy: () => true }).clientIp;
  assert.is(ip('::ffff:c633:6401'), '198.51.100.1');
  assert.is(ip('[::ffff:c633:6401]:443'), '198.51.100.1');
  // A link-local address's zone is no part of a mapped address: the address stays as sent.
  assert.is(ip('::ffff:c633:6401%eth0'), '::ffff:c633:6401%eth0');
});

test('only an IPv4-mapped address (::ffff:a.b.c.d) shows as IPv4: another IPv6 address stays IPv6, whatever it ends in', () => {
  assert.is(Request.create('/', 'GET', { remoteAddress: '::fffe:192.0.2.1' }).clientIp, '::fffe:192.0.2.1');
  assert.is(Request.create('/', 'GET', { remoteAddress: '64:ff9b::192.0.2.1' }).clientIp, '64:ff9b::192.0.2.1');
  assert.is(Request.create('/', 'GET', { remoteAddress: '::ffff:1' }).clientIp, '::ffff:1', '::ffff:0.0.0.1 is ::ffff:0:1, not ::ffff:1');
  for (const address of ['::fffe:7f00:1', '1::ffff:7f00:1', '::ffff:7f00:1:0', 'ffff::7f00:1']) assert.is(Request.create('/', 'GET', { remoteAddress: address }).clientIp, address);
});

test('X-Forwarded-Proto and Host count only from trusted proxies', () => {
  const headers = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'public.test', host: 'internal:8000' };
  const untrusted = Request.create('/', 'GET', { headers, remoteAddress: '192.0.2.1' });
  assert.is(untrusted.schemeAndHttpHost, 'http://internal:8000');
  const trusted = Request.create('/', 'GET', { headers, remoteAddress: '192.0.2.1', trustProxy: () => true });
  assert.is(trusted.schemeAndHttpHost, 'https://public.test');
});

test('a trusted proxy\'s X-Forwarded-Proto of http or https (or on, ssl, 1, as Symfony reads them) is the scheme, whatever the connection\'s; none or another value leaves the connection\'s', () => {
  const scheme = (headers: Record<string, string>, socket: 'http' | 'https') => Request.create('/', 'GET', { headers, scheme: socket, trustProxy: () => true }).scheme;
  assert.is(scheme({ 'x-forwarded-proto': 'http' }, 'https'), 'http');
  assert.is(scheme({ 'x-forwarded-proto': 'https' }, 'http'), 'https');
  assert.is(scheme({}, 'https'), 'https');
  assert.is(scheme({ 'x-forwarded-proto': 'wss' }, 'https'), 'https');
  assert.is(scheme({ 'x-forwarded-proto': 'wss' }, 'http'), 'http');
  // Symfony's isSecure() spellings of https, from proxies that copy an HTTPS=on variable.
  for (const secure of ['on', 'ON', 'ssl', '1']) assert.is(scheme({ 'x-forwarded-proto': secure }, 'http'), 'https', secure);
  assert.is(scheme({ 'x-forwarded-proto': 'off' }, 'http'), 'http');
  assert.not.ok(Request.create('/', 'GET', { headers: { 'x-forwarded-proto': 'http' }, scheme: 'https', trustProxy: () => true }).isSecure());
});

test('a chain of trusted proxies that each append to X-Forwarded-Proto and -Port: the first value counts, as for X-Forwarded-Host', () => {
  const headers = { 'x-forwarded-proto': 'https, http', 'x-forwarded-host': 'public.test, lb.internal', 'x-forwarded-port': '443, 8080', host: 'internal:8000' };
  const request = Request.create('/a', 'GET', { headers, remoteAddress: '10.0.0.2', trustProxy: () => true });
  assert.is(request.scheme, 'https');
  assert.is(request.port, 443);
  assert.is(request.uri, 'https://public.test/a');
  assert.is(Request.create('/', 'GET', { headers: { 'x-forwarded-proto': ' HTTPS ' }, trustProxy: () => true }).scheme, 'https');
});

test('an absolute-form target names the host and port; the Host header is ignored, the scheme stays the connection\'s', () => {
  const request = new Request('http://A.test:8080/x?y=1', { headers: { host: 'b.test' } });
  assert.is(request.host, 'a.test');
  assert.is(request.port, 8080);
  assert.is(request.path, '/x');
  assert.is(request.uri, 'http://a.test:8080/x?y=1');
  // The target's scheme does not make a plain connection secure, nor the other way round: its default port is the connection's.
  const overTls = new Request('http://a.test/x', { headers: { host: 'b.test:8443' }, scheme: 'https' });
  assert.is(overTls.uri, 'https://a.test/x');
  assert.is(overTls.port, 443);
  assert.is(new Request('http://[::1]:8000/', { headers: { host: 'b.test' } }).httpHost, '[::1]:8000');
  assert.is(new Request('*', { method: 'OPTIONS', headers: { host: 'b.test' } }).host, 'b.test', 'OPTIONS * has no authority: the Host header counts');
});

test('without a Host header (HTTP/1.0), an absolute-form target names the host, and OPTIONS * is for the address the request arrived at', () => {
  assert.is(new Request('http://a.test:8080/x').uri, 'http://a.test:8080/x');
  assert.is(new Request('*', { method: 'OPTIONS', localAddress: '10.0.0.5', localPort: 8000 }).uri, 'http://10.0.0.5:8000');
});

test('an absolute-form target\'s authority is checked as a Host header is; the Host header must still be valid', () => {
  const invalid = (target: string, host = 'b.test') => thrown(() => new Request(target, { headers: { host } }).host);
  for (const [target, message] of [
    ['http://a.test:0/x', 'Invalid Host "a.test:0".'],
  ]) {
    const error = invalid(target!);
    assert.instance(error, SuspiciousOperationError, target);
    assert.is(error.message, message, target);
  }
  assert.is(invalid('http://a.test/x', '<script>').message, 'Invalid Host "<script>".');
  assert.instance(invalid('http://[bad/x'), MalformedRequestError, 'a target that is no URL is named as such');
  assert.is(invalid('http:///x').message, 'Invalid request target "http:///x": it names no host.', 'an empty authority is not filled in from Host');
  // RFC 9110 4.2.4: a user and password are refused, and left out of the message and the path.
  const userinfo = new Request('http://user:pw@a.test/x', { headers: { host: 'b.test' } });
  assert.instance(userinfo.targetError, MalformedRequestError);
  assert.is(userinfo.targetError!.message, 'Invalid request target "http://a.test/x": a request target names no user or password (RFC 9110 4.2.4); they are left out here.');
  assert.instance(invalid('http://user:pw@a.test/x'), MalformedRequestError, 'reading the host throws it');
  assert.is(userinfo.path, 'http://a.test/x');
  assert.is(new Request('http://a.test@b@evil.test/', { headers: { host: 'b.test' } }).path, 'http://evil.test/', 'up to the last @');
});

test('the asterisk-form target "*" is for OPTIONS only (RFC 9112 3.2.4): for another method, or with a query, it is a malformed request', () => {
  const options = new Request('*', { method: 'OPTIONS' });
  assert.is(options.path, '*');
  assert.is(options.targetError, null);
  for (const method of ['GET', 'HEAD', 'POST', 'PATCH']) {
    const error = new Request('*', { method, headers: { host: 'a.test' } }).targetError;
    assert.instance(error, MalformedRequestError, method);
    assert.is(error!.message, `Invalid request target "*" for ${method}: "*" (asking about the server itself) is for OPTIONS only; name a path such as "/".`);
    assert.instance(thrown(() => new Request('*', { method, headers: { host: 'a.test' } }).host), MalformedRequestError, `${method}: reading the host first says the same`);
  }
  assert.is(new Request('*?x', { method: 'OPTIONS' }).targetError?.message, 'Invalid request target "*?x".');
});

test('path never throws: a refused target gives the target as sent, which names no route ("*" for an empty one, which would be "/")', () => {
  for (const [target, method] of [['*', 'PATCH'], ['*?x', 'OPTIONS'], ['ftp://a.test/x?y', 'GET'], ['http://[bad/x', 'GET'], ['http:///x', 'GET'], ['x', 'GET'], ['?a=1', 'GET']] as const) {
    const request = new Request(target, { method, headers: { host: 'b.test' } });
    assert.is(request.path, target, target);
    assert.instance(request.targetError, MalformedRequestError, target);
    assert.is(thrown(() => request.host), request.targetError, `${target}: the host is the target's error`);
  }
  const empty = new Request('');
  assert.is(empty.path, '*');
  assert.is(empty.targetError?.message, 'Invalid request target "".');
  assert.is(new Request('/a?b').targetError, null);
  assert.is(new Request('http://a.test/x').targetError, null);
});

test('OPTIONS to a URL with an empty path and no query asks about the server, as OPTIONS * does (RFC 9112 3.2.4); with "/" or a query it names that path', () => {
  const request = new Request('http://a.test:8080', { method: 'OPTIONS', headers: { host: 'b.test' } });
  assert.is(request.path, '*');
  assert.is(request.httpHost, 'a.test:8080');
  assert.is(new Request('http://a.test/', { method: 'OPTIONS' }).path, '/');
  assert.is(new Request('http://a.test?x=1', { method: 'OPTIONS' }).path, '/');
  assert.is(new Request('http://a.test', { method: 'GET' }).path, '/');
});

test('the URI of OPTIONS * is the server\'s origin: its path is empty (RFC 9112 3.3), never "*" glued to the host', () => {
  assert.is(new Request('*', { method: 'OPTIONS', headers: { host: 'a.test:8080' } }).uri, 'http://a.test:8080');
  assert.is(new Request('*', { method: 'OPTIONS', headers: { host: 'a.test' }, scheme: 'https' }).uri, 'https://a.test');
});

test('a trusted proxy\'s X-Forwarded-Host still beats an absolute-form target', () => {
  const request = new Request('http://a.test/x', { headers: { host: 'b.test', 'x-forwarded-host': 'public.test' }, trustProxy: () => true });
  assert.is(request.host, 'public.test');
  assert.is(new Request('http://a.test/x', { headers: { host: 'b.test', 'x-forwarded-host': 'public.test' } }).host, 'a.test', 'untrusted: the target');
});

test('a trusted proxy\'s X-Forwarded-Port outside 1-65535 is ignored, as one that is not written in digits is', () => {
  const port = (forwarded: string, host = 'internal:8000') => Request.create('/', 'GET', { headers: { host, 'x-forwarded-port': forwarded }, trustProxy: () => true }).port;
  assert.is(port('8443'), 8443);
  assert.is(port('65535'), 65535);
  for (const forwarded of ['99999', '65536', '0', '-1', 'abc']) assert.is(port(forwarded), 8000, forwarded);
  // What Number() would read as a port is none either: RFC 3986's port is digits.
  for (const forwarded of ['0x1F90', '1e3', '0b11111', '0o17', '8080.0', '+8080', ' 8080x', '000008080']) assert.is(port(forwarded), 8000, forwarded);
  assert.is(port('99999', 'public.test'), 80, 'no port in Host: the scheme\'s default');
});

test('cookies are parsed lazily and a malformed header gives none', () => {
  assert.equal({ ...Request.create('/', 'GET', { headers: { cookie: 'a=1; b=two' } }).cookies }, { a: '1', b: 'two' });
  assert.equal({ ...Request.create('/').cookies }, {});
});

test('cookies never hold Object.prototype\'s members: none sent is as empty as a header without the name (no constructor, no toString)', () => {
  for (const request of [Request.create('/'), Request.create('/', 'GET', { headers: { cookie: 'a=1' } }), Request.create('/', 'GET', { headers: { cookie: '' } })]) {
    assert.is(request.cookies.constructor, undefined);
    assert.is(request.cookies.toString, undefined);
  }
  assert.is(Request.create('/', 'GET', { headers: { cookie: 'constructor=1; __proto__=2' } }).cookies.constructor, '1');
});

test('the body reads as text, JSON and bytes', async () => {
  const request = Request.create('/', 'POST', { headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
  assert.equal(await request.json(), { a: 1 });
  assert.is(await request.text(), '{"a":1}');
  assert.is((await request.bytes()).byteLength, 7);
});

test('form() declared in a charset other than UTF-8 reads its escapes in it (Apache HttpClient\'s forms are ISO-8859-1): caf%E9 is café, not caf\uFFFD', async () => {
  const form = (body: string | number[], charset: string) => Request.create('/', 'POST', { body: typeof body === 'string' ? body : Buffer.from(body), headers: { 'content-type': `application/x-www-form-urlencoded; charset=${charset}` } }).form();
  const latin1 = await form('name=caf%E9+cr%e8me&q=%80%2B1&flag&=v', 'ISO-8859-1');
  assert.equal([...latin1], [['name', 'caf\u00e9 cr\u00e8me'], ['q', '\u20ac+1'], ['flag', ''], ['', 'v']]);
  assert.is((await form([0x6e, 0x3d, 0xe9, 0x25, 0x45, 0x39], 'latin1')).get('n'), '\u00e9\u00e9', 'a byte sent as it is and one escaped, alike');
  assert.is((await form('a=%82%A0', 'shift_jis')).get('a'), '\u3042');
  const invalid = await form('a=%82', 'shift_jis').then(() => undefined, (e: Error) => e);
  assert.instance(invalid, MalformedRequestError, 'an escape that is no text in the charset is a 400, not U+FFFD unseen');
  assert.is((await form('a=caf%C3%A9', 'utf-8')).get('a'), 'caf\u00e9');
});

test('a body given to create() is read as given whatever Transfer-Encoding its headers name: an embedder\'s body is no client\'s coded bytes, which only node:http leaves undecoded', async () => {
  for (const value of ['gzip, chunked', 'gzip', ['gzip', 'chunked']]) {
    const headers = { 'transfer-encoding': value };
    assert.is(await Request.create('/', 'POST', { headers, body: 'hello' }).text(), 'hello', String(value));
    assert.is((await Request.create('/', 'POST', { headers, body: Readable.from([Buffer.from('hello')]) }).bytes()).toString(), 'hello', String(value));
    assert.is((await Request.create('/', 'POST', { headers }).bytes()).length, 0, String(value));
  }
});

test('form() reads a urlencoded body as the query is read, and refuses other types with a 415 that says which', async () => {
  const form = await Request.create('/', 'POST', { headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' }, body: 'name=J%C3%BCrgen+B&tag=a&tag=b&list[]=1&empty=' }).form();
  assert.is(form.get('name'), 'Jürgen B');
  assert.equal(form.getAll('tag'), ['a', 'b']);
  assert.is(form.get('list[]'), '1');
  assert.is(form.get('empty'), '');
  assert.is((await Request.create('/', 'POST', { body: 'a=1' }).form()).get('a'), '1', 'no Content-Type: read as a form');
  for (const [type, message] of [
    ['application/json', 'The request body is application/json, not a form (application/x-www-form-urlencoded).'],
    ['multipart/form-data; boundary=x', 'The request body is multipart/form-data, not a form (application/x-www-form-urlencoded). Read a multipart body with bytes() and a multipart parser.'],
  ] as const) {
    const error = await Request.create('/', 'POST', { headers: { 'content-type': type }, body: '{}' }).form().then(
      () => assert.unreachable(type),
      (reason: unknown) => reason,
    );
    assert.instance(error, UnsupportedMediaTypeHttpError, type);
    assert.is((error as UnsupportedMediaTypeHttpError).status, 415);
    assert.is((error as Error).message, message);
  }
  // At most 1000 fields by default: a 1 MiB body of `a&a&...` would be half a million entries.
  const fields = (count: number) => Request.create('/', 'POST', { body: Array.from({ length: count }, (_, i) => `f${i}=1`).join('&') });
  assert.is([...(await fields(1000).form()).keys()].length, 1000);
  const tooMany = await fields(1001).form().then(() => assert.unreachable(), (error: unknown) => error);
  assert.instance(tooMany, MalformedRequestError);
  assert.is((tooMany as Error).message, 'The form has more than 1000 fields.');
  assert.is([...(await fields(1001).form({ maxFields: 2000 })).keys()].length, 1001);
  assert.is([...(await Request.create('/', 'POST', { body: '' }).form()).keys()].length, 0);
  // The body's limit and UTF-8 check hold as for text().
  await Request.create('/', 'POST', { body: Buffer.from([0x61, 0x3d, 0xff]) }).form().then(
    () => assert.unreachable(),
    (error: unknown) => assert.instance(error, MalformedRequestError),
  );
});

test('json() reads application/json or a +json type, and refuses other types (text/plain, a form: sent cross-site without a preflight) with a 415 that says which, unread', async () => {
  for (const type of ['application/json', 'Application/JSON; charset=utf-8', 'application/json ; x=y', 'application/merge-patch+json', 'application/vnd.api+json']) {
    assert.equal(await Request.create('/', 'POST', { headers: { 'content-type': type }, body: '{"a":1}' }).json(), { a: 1 }, type);
  }
  for (const [type, message] of [
    ['text/plain;charset=UTF-8', 'The request body is text/plain, not JSON (application/json).'],
    ['application/x-www-form-urlencoded', 'The request body is application/x-www-form-urlencoded, not JSON (application/json). Read a form with form().'],
    ['multipart/form-data; boundary=x', 'The request body is multipart/form-data, not JSON (application/json).'],
    ['application/jsonp', 'The request body is application/jsonp, not JSON (application/json).'],
    ['text/json', 'The request body is text/json, not JSON (application/json).'],
  ] as const) {
    const request = Request.create('/', 'POST', { headers: { 'content-type': type }, body: '{"a":1}' });
    const error = await request.json().then(() => assert.unreachable(type), (reason: unknown) => reason);
    assert.instance(error, UnsupportedMediaTypeHttpError, type);
    assert.is((error as UnsupportedMediaTypeHttpError).status, 415);
    assert.is((error as Error).message, message);
    assert.is(request.peekBody(), undefined, 'the body is left unread');
  }
});

test('json() refuses a body with no Content-Type (a Blob or ArrayBuffer of no type, which a page of another site sends without a preflight) with a 415 saying to send application/json', async () => {
  for (const body of ['{"a":1}', Buffer.from('[1]')]) {
    const error = await Request.create('/', 'POST', { body }).json().then(() => assert.unreachable(String(body)), (reason: unknown) => reason);
    assert.instance(error, UnsupportedMediaTypeHttpError);
    assert.is((error as UnsupportedMediaTypeHttpError).status, 415);
    assert.is((error as Error).message, 'The request body has no Content-Type; send it as application/json.');
  }
  const none = await Request.create('/', 'POST').json().then(() => assert.unreachable(), (reason: unknown) => reason);
  assert.is((none as Error).message, 'The request body is empty; JSON was expected.', 'no body at all is the empty body\'s 400');
});

test('json() of a body with no Content-Type says to send application/json, whatever the body: not "not valid UTF-8" nor a Content-Encoding the server does not decode', async () => {
  for (const [body, headers] of [[Buffer.from([0xff, 0xfe, 0x7b]), {}], [Buffer.from([0x1f, 0x8b, 0x08]), { 'content-encoding': 'gzip' }], [' \r\n', {}]] as const) {
    const error = await Request.create('/', 'POST', { headers, body }).json().then(() => assert.unreachable(), (reason: unknown) => reason);
    assert.instance(error, UnsupportedMediaTypeHttpError, String(body));
    assert.is((error as Error).message, 'The request body has no Content-Type; send it as application/json.');
  }
});

test('json() of an empty body is a 400 saying it is empty, not "Unexpected end of JSON input"', async () => {
  for (const body of [null, '', ' \r\n']) {
    const error = await Request.create('/', 'POST', { headers: { 'content-type': 'application/json' }, body }).json().then(() => assert.unreachable(), (reason: unknown) => reason);
    assert.instance(error, MalformedRequestError);
    assert.is((error as Error).message, 'The request body is empty; JSON was expected.');
  }
});

test('json() of a body of other white space than JSON\'s (a no-break space, U+2028) is malformed JSON, not an empty body', async () => {
  for (const body of ['\u00a0', '\u2028', ' \u3000 ']) {
    const error = await Request.create('/', 'POST', { headers: { 'content-type': 'application/json' }, body }).json().then(() => assert.unreachable(), (reason: unknown) => reason);
    assert.instance(error, MalformedRequestError);
    assert.match((error as Error).message, /^Malformed JSON body: /, JSON.stringify(body));
  }
});

test('peekBody() shows the body only once something has read it', async () => {
  const request = Request.create('/', 'POST', { body: 'hello' });
  assert.is(request.peekBody(), undefined);
  await request.text();
  assert.is(request.peekBody()?.toString(), 'hello');
});

test('malformed JSON is a request error naming the problem', async () => {
  await Request.create('/', 'POST', { headers: { 'content-type': 'application/json' }, body: '{nope' }).json().then(
    () => assert.unreachable(),
    (error: Error) => {
      assert.instance(error, MalformedRequestError);
      assert.match(error.message, /^Malformed JSON body/);
    },
  );
});

test('a body that is not valid UTF-8 is a request error from text() and json(), never silently replaced by U+FFFD', async () => {
  const invalid = Buffer.from([0x22, 0xff, 0xfe, 0x22]); // "\xff\xfe": the quotes are fine, the bytes between are no UTF-8
  for (const read of ['text', 'json'] as const) {
    await Request.create('/', 'POST', { headers: { 'content-type': 'application/json' }, body: invalid })[read]().then(
      () => assert.unreachable(`${read}() accepted invalid UTF-8`),
      (error: Error) => {
        assert.instance(error, MalformedRequestError, read);
        assert.match(error.message, 'not valid UTF-8', read);
      },
    );
  }
  assert.equal([...(await Request.create('/', 'POST', { body: invalid }).bytes())], [...invalid], 'bytes() still gives the bytes as sent');
  assert.is(await Request.create('/', 'POST', { headers: { 'content-type': 'application/json' }, body: '"héllo ✓"' }).json(), 'héllo ✓');
});

test('a body over the limit is a 413, by Content-Length or while streaming', async () => {
  await Request.create('/', 'POST', { body: 'x'.repeat(11), bodyLimit: 10 }).text().then(
    () => assert.unreachable(),
    (error: unknown) => assert.instance(error, PayloadTooLargeHttpError),
  );
  async function* chunks() {
    yield new Uint8Array(6);
    yield new Uint8Array(6);
  }
  await new Request('/', { method: 'POST', body: chunks(), bodyLimit: 10 }).bytes().then(
    () => assert.unreachable(),
    (error: unknown) => assert.instance(error, PayloadTooLargeHttpError),
  );
  // A text or bytes body without a Content-Length, or with one that understates it, is measured itself.
  for (const [body, headers] of [
    ['x'.repeat(11), {}],
    [new Uint8Array(11), {}],
    ['x'.repeat(11), { 'content-length': '5' }],
  ] as const) {
    await new Request('/', { method: 'POST', body, headers, bodyLimit: 10 }).bytes().then(
      () => assert.unreachable(`${typeof body} ${JSON.stringify(headers)}`),
      (error: unknown) => assert.instance(error, PayloadTooLargeHttpError),
    );
  }
  assert.is((await new Request('/', { method: 'POST', body: 'x'.repeat(10), bodyLimit: 10 }).text()).length, 10, 'at the limit: kept');
  assert.is((await new Request('/', { method: 'POST' }).bytes()).byteLength, 0, 'no body: empty');
});

test('a node:http request whose socket has no address (destroyed) has no client address, not loopback', () => {
  const message = new IncomingMessage(new Socket());
  message.url = '/_profiler/latest';
  message.method = 'GET';
  message.headers = { host: '127.0.0.1:8000' };
  assert.is(message.socket.remoteAddress, undefined);
  const request = Request.fromIncomingMessage(message);
  assert.is(request.remoteAddress, '');
  assert.is(request.clientIp, '');
  // The default allow list is loopback: a request without an address gets no debug details.
  assert.is(new DebugAccess().isAllowed(request), false);
  assert.is(new DebugAccess().isAllowed(Request.create('/')), true);
});

test('duplicate() keeps URL and headers, takes new attributes and method', () => {
  const request = Request.create('http://h.test/p?q=1', 'POST', { headers: { referer: 'r' } });
  request.attributes.set('_route', 'x');
  const copy = request.duplicate({ method: 'GET', attributes: { exception: 1 } });
  assert.is(copy.method, 'GET');
  assert.is(copy.uri, 'http://h.test/p?q=1');
  assert.is(copy.headers.referer, 'r');
  assert.not.ok(copy.attributes.has('_route'));
  assert.is(copy.attributes.get('exception'), 1);
  // Its own headers: a sub-request's listener that changes one leaves the main request's as they came.
  copy.headers.accept = 'application/json';
  delete copy.headers.referer;
  assert.is(request.headers.accept, undefined);
  assert.is(request.headers.referer, 'r');
});

test('duplicate() keeps the _format attribute unless given, as Symfony\'s does, and no other', () => {
  const request = Request.create('/');
  request.attributes.set('_format', 'json');
  request.attributes.set('_route', 'home');
  const copy = request.duplicate({ attributes: { exception: 1 } });
  assert.is(copy.attributes.get('_format'), 'json');
  assert.not.ok(copy.attributes.has('_route'));
  assert.is(request.duplicate({ attributes: { _format: 'html' } }).attributes.get('_format'), 'html');
  assert.not.ok(Request.create('/').duplicate().attributes.has('_format'));
});

test('a RequestSlot holds one value per request, apart from other slots, and a duplicate starts empty', () => {
  const trace = new RequestSlot<string[]>();
  const count = new RequestSlot<number>();
  const first = Request.create('/a');
  const second = Request.create('/b');
  assert.is(trace.get(first), undefined);
  trace.set(first, ['x']);
  count.set(first, 2);
  count.set(second, 5);
  assert.equal(trace.get(first), ['x']);
  assert.is(trace.get(second), undefined);
  assert.is(count.get(first), 2);
  assert.is(count.get(second), 5);
  assert.is(trace.get(first.duplicate()), undefined);
  trace.delete(first);
  trace.delete(second);
  assert.is(trace.get(first), undefined);
  assert.is(count.get(first), 2);
});

test('X-Forwarded-For given as several header values is one chain: the client is found from its end, not taken from the first value', () => {
  const trusted = (address: string) => address === '10.0.0.1';
  // The client sent "X-Forwarded-For: 6.6.6.6" itself; the trusted proxy added a second header with the address it saw.
  const request = Request.create('/', 'GET', { headers: { 'x-forwarded-for': ['6.6.6.6', '203.0.113.9'] }, remoteAddress: '10.0.0.1', trustProxy: trusted });
  assert.is(request.clientIp, '203.0.113.9');
  const joined = Request.create('/', 'GET', { headers: { 'x-forwarded-for': '6.6.6.6, 203.0.113.9' }, remoteAddress: '10.0.0.1', trustProxy: trusted });
  assert.is(joined.clientIp, '203.0.113.9');
});

test('create() sends a path as a client would: leading slash added, fragment dropped, non-ASCII and spaces percent-encoded as UTF-8', () => {
  const path = (uri: string) => Request.create(uri).path;
  assert.is(path('health'), '/health');
  assert.is(path(''), '/');
  assert.is(Request.create('?a=1').url, '/?a=1');
  assert.is(Request.create('/x?y=1#top').url, '/x?y=1');
  assert.is(path('/café'), Request.create('http://localhost/café').path);
  assert.is(path('/café'), '/caf%C3%A9');
  assert.is(Request.create('/a b?q=ö').url, '/a%20b?q=%C3%B6');
  assert.is(Request.create('/a b?q=ö').query.get('q'), 'ö');
  // What a client may send is kept as it is: encodings (even malformed ones), dot segments, '*' for OPTIONS.
  assert.is(path('/a%2Fb/%ZZ/../c'), '/a%2Fb/%ZZ/../c');
  assert.is(Request.create('*', 'OPTIONS').path, '*');
});

test('cookies given as several Cookie header values are all read, as node:http joins them with "; "', () => {
  const request = Request.create('/', 'GET', { headers: { cookie: ['a=1', 'b=2; c=x=y'] } });
  assert.equal({ ...request.cookies }, { a: '1', b: '2', c: 'x=y' });
});

const trustHost = compileTrustedHosts(['example.com', '.example.org']);

/** The error reading `request.host` throws, checked to be a suspicious operation. */
function hostError(request: Request): Error {
  const error = thrown(() => request.host);
  assert.instance(error, SuspiciousOperationError);
  return error;
}

test('a host outside trustHost is a suspicious operation naming it without its port; every way to an absolute URL throws it', () => {
  const request = Request.create('/p?q=1', 'GET', { headers: { host: 'Evil.test:8080' }, trustHost });
  assert.is(hostError(request).message, 'Untrusted Host "evil.test".');
  for (const read of [() => request.port, () => request.httpHost, () => request.schemeAndHttpHost, () => request.uri, () => request.uriForPath('/x')]) {
    assert.is(thrown(read).message, 'Untrusted Host "evil.test".');
  }
  assert.is(request.path, '/p', 'the path does not need the host');
});

test('the port and case of a Host play no part: EXAMPLE.com:8443 is trusted, evil.test:443 is not', () => {
  assert.is(Request.create('/', 'GET', { headers: { host: 'EXAMPLE.com:8443' }, trustHost }).httpHost, 'example.com:8443');
  assert.is(Request.create('https://www.example.org/x', 'GET', { trustHost }).uri, 'https://www.example.org/x');
  assert.is(hostError(Request.create('https://evil.test:443/x', 'GET', { trustHost })).message, 'Untrusted Host "evil.test".');
});

test('an invalid Host is reported as invalid before any trust check', () => {
  assert.is(hostError(Request.create('/', 'GET', { headers: { host: '<script>' }, trustHost })).message, 'Invalid Host "<script>".');
  assert.is(hostError(Request.create('/', 'GET', { headers: { host: 'script' }, trustHost })).message, 'Untrusted Host "script".');
});

test('a trusted proxy\'s X-Forwarded-Host and an absolute-form target are checked as a Host header is', () => {
  const headers = { host: 'example.com', 'x-forwarded-host': 'evil.test' };
  assert.is(hostError(new Request('/', { headers, trustProxy: () => true, trustHost })).message, 'Untrusted Host "evil.test".');
  assert.is(new Request('/', { headers, trustHost }).host, 'example.com', 'from an untrusted proxy, X-Forwarded-Host is not read at all');
  assert.is(hostError(new Request('http://evil.test/x', { headers: { host: 'example.com' }, trustHost })).message, 'Untrusted Host "evil.test".');
  assert.is(new Request('http://example.com/x', { headers: { host: 'evil.test' }, trustHost }).host, 'example.com', 'the Host header an absolute-form target overrides is not used, so not checked');
});

test('without a Host header the request is for the address it arrived at, which the client cannot choose: never untrusted', () => {
  const request = new Request('/', { localAddress: '10.0.0.5', localPort: 8000, trustHost });
  assert.is(request.httpHost, '10.0.0.5:8000');
  assert.is(new Request('/', { localAddress: '::1', localPort: 8443, scheme: 'https', trustHost }).uri, 'https://[::1]:8443/');
  // The same address named by the client is a host like any other: not in the list, refused.
  assert.is(hostError(new Request('/', { headers: { host: '10.0.0.5:8000' }, localAddress: '10.0.0.5', localPort: 8000, trustHost })).message, 'Untrusted Host "10.0.0.5".');
});

test('without a Host header, a link-local IPv6 address it arrived at is its host without the zone, which names an interface of the server alone', () => {
  const request = new Request('/', { localAddress: 'fe80::1%eth0', localPort: 8080, trustHost });
  assert.is(request.host, '[fe80::1]');
  assert.is(request.httpHost, '[fe80::1]:8080');
  assert.is(request.uri, 'http://[fe80::1]:8080/');
  assert.is(new URL(request.uri).host, '[fe80::1]:8080', 'a URL any client can read');
  assert.is(new Request('/x', { localAddress: 'fe80::a:b%2', localPort: 443, scheme: 'https' }).uri, 'https://[fe80::a:b]/x');
});

test('a duplicate (the error page\'s sub-request) checks its host against the same list', () => {
  const request = Request.create('/', 'GET', { headers: { host: 'evil.test' }, trustHost });
  assert.is(hostError(request.duplicate({ method: 'GET' })).message, 'Untrusted Host "evil.test".');
});

test('fromIncomingMessage() refuses several Host headers, whatever their case, though node:http keeps only the first', () => {
  const message = new IncomingMessage(new Socket());
  message.url = '/';
  message.method = 'GET';
  message.headers = { host: 'a.test', date: 'x' };
  message.rawHeaders = ['Host', 'a.test', 'Date', 'x', 'HOST', 'b.test'];
  const error = thrown(() => Request.fromIncomingMessage(message).host);
  assert.instance(error, SuspiciousOperationError);
  assert.is(error.message, 'Several Host headers ("a.test", "b.test"): a request must have exactly one.');
  message.rawHeaders = ['X-Host', 'b.test', 'Host', 'a.test', 'Date', 'x', 'Hosts', 'c.test'];
  assert.is(Request.fromIncomingMessage(message).host, 'a.test', 'one Host header, beside others of four letters or named like it');
});

test('fromIncomingMessage() takes trustHost', () => {
  const message = new IncomingMessage(new Socket());
  message.url = '/';
  message.method = 'GET';
  message.headers = { host: 'evil.test' };
  assert.is(hostError(Request.fromIncomingMessage(message, { trustHost })).message, 'Untrusted Host "evil.test".');
  assert.is(Request.fromIncomingMessage(message).host, 'evil.test', 'no list: every valid host');
});

test('a body limit of another type is a TypeError, not a limit that lets every body through', () => {
  for (const limit of ['1mb', '10', Number.NaN, -1, 1.5, null]) {
    const error = thrown(() => new Request('/', { bodyLimit: limit as unknown as number }));
    assert.instance(error, TypeError, String(limit));
    assert.match(error.message, /^bodyLimit is a number of bytes/);
  }
  assert.match(thrown(() => Request.create('/', 'POST', { bodyLimit: '1mb' as unknown as number })).message, /not the string "1mb"/);
});

test('a body limit of 0 refuses any body, Infinity none', async () => {
  assert.instance(await Request.create('/', 'POST', { body: 'x', bodyLimit: 0 }).bytes().catch((error: unknown) => error), PayloadTooLargeHttpError);
  assert.is((await Request.create('/', 'POST', { body: 'x'.repeat(2_000_000), bodyLimit: Infinity }).bytes()).length, 2_000_000);
});

test('a duplicate shares the body of the request it was made from: read once, whichever reads first', async () => {
  let reads = 0;
  const source = async function* () {
    reads++;
    yield Buffer.from('{"x":');
    yield Buffer.from('1}');
  };
  const main = Request.create('/', 'POST', { headers: { 'content-type': 'application/json' }, body: Readable.from(source()) });
  const sub = main.duplicate({ attributes: { _controller: 'x' } });
  assert.is(sub.peekBody(), undefined, 'nothing read yet');
  assert.equal(await sub.json(), { x: 1 }, 'the sub-request reads it first');
  assert.equal(await main.json(), { x: 1 });
  assert.is(reads, 1);
  assert.is(main.peekBody()?.toString(), '{"x":1}');
  // Read by the main request first: a sub-request made afterwards sees it at once.
  const later = main.duplicate();
  assert.is(later.peekBody()?.toString(), '{"x":1}');
  assert.is((await later.text()), '{"x":1}');
});

test('an absolute-form target keeps its path as sent, as an origin-form one does: no dot segments resolved, nothing re-encoded', () => {
  const path = (target: string) => new Request(target, { headers: { host: 'b.test' } }).path;
  assert.is(path('http://a.test/public/../admin'), '/public/../admin');
  assert.is(path('http://a.test/public/%2e%2e/admin'), '/public/%2e%2e/admin');
  assert.is(path('http://a.test/a\\b'), '/a\\b');
  assert.is(path('http://a.test/{x}?y=1'), '/{x}');
  assert.is(path('http://a.test'), '/');
  assert.is(path('http://a.test?y=1'), '/');
  assert.is(new Request('http://a.test/public/../admin?y=1', { headers: { host: 'b.test' } }).uri, 'http://a.test/public/../admin?y=1');
  assert.instance(new Request('http://a.test:99999/x').targetError, MalformedRequestError);
});

test('a fragment a client sent in the target is no part of the path or the query (Symfony drops it too)', () => {
  const socket = new Socket();
  const message = new IncomingMessage(socket);
  message.url = '/x?y=1#top';
  message.method = 'GET';
  message.headers = { host: 'a.test' };
  const request = Request.fromIncomingMessage(message);
  assert.is(request.path, '/x');
  assert.is(request.query.get('y'), '1');
  assert.is(request.uri, 'http://a.test/x?y=1');
  message.url = '/x#top?y=1';
  assert.is(Request.fromIncomingMessage(message).path, '/x');
  assert.is(Request.fromIncomingMessage(message).queryString, '');
  socket.destroy();
});

test('a body with a Content-Encoding is a 415 for text(), json() and form(), not "not valid UTF-8"; bytes() gives it as sent', async () => {
  const { gzipSync } = await import('node:zlib');
  const make = () => Request.create('/', 'POST', { body: gzipSync('{"a":1}'), headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
  for (const read of [(r: Request) => r.text(), (r: Request) => r.json(), (r: Request) => r.form()]) {
    const error = await read(make()).then(() => undefined, (e: unknown) => e);
    assert.instance(error, UnsupportedMediaTypeHttpError);
  }
  const form = Request.create('/', 'POST', { body: gzipSync('a=1'), headers: { 'content-encoding': 'GZIP' } });
  assert.instance(await form.form().then(() => undefined, (e: unknown) => e), UnsupportedMediaTypeHttpError);
  assert.is((await make().bytes())[0], 0x1f);
  assert.is(await Request.create('/', 'POST', { body: 'x', headers: { 'content-encoding': 'identity' } }).text(), 'x');
});

test('create() with an absolute URL takes its host and port over a Host header, as the same absolute-form target on the wire', () => {
  const request = Request.create('http://a.test:8080/x', 'GET', { headers: { Host: 'b.test' } });
  assert.is(request.httpHost, 'a.test:8080');
  assert.is(request.uri, 'http://a.test:8080/x');
});

test('an absolute-form target is an http or https URL: another scheme is a 400, not a host to read', () => {
  for (const target of ['ws://a.test/x', 'foo://evil/echo', 'file:///etc/passwd']) {
    assert.is(new Request(target, { headers: { host: 'b.test' } }).targetError?.message, `Invalid request target "${target}": an absolute-form target is an http or https URL.`, target);
  }
  assert.is(new Request('HTTPS://a.test/x', { headers: { host: 'b.test' } }).path, '/x');
});

test('text() leaves out a byte order mark, so json() reads a body that starts with one', async () => {
  const withBom = (text: string) => Request.create('/', 'POST', { body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]), headers: { 'content-type': 'application/json' } });
  assert.equal(await withBom('{"a":1}').json(), { a: 1 });
  assert.is(await withBom('x').text(), 'x');
  assert.is(await Request.create('/', 'POST', { body: 'x\uFEFF' }).text(), 'x\uFEFF', 'only a leading one');
});

test('text() and json() read a body in the charset its Content-Type declares: latin1 and UTF-16 are their text, not a 400 saying "not valid UTF-8" nor other text', async () => {
  const body = (bytes: number[], type: string) => Request.create('/', 'POST', { body: Buffer.from(bytes), headers: { 'content-type': type } });
  assert.is(await body([0x63, 0x61, 0x66, 0xe9], 'text/plain; charset=latin1').text(), 'caf\u00e9');
  // Bytes that happen to be UTF-8 too ("é" in UTF-8) are the charset's text all the same.
  assert.is(await body([0xc3, 0xa9], 'text/plain; charset=ISO-8859-1').text(), '\u00c3\u00a9');
  assert.is(await body([0x63, 0x00, 0xe9, 0x00], 'text/plain; charset="utf-16le"').text(), 'c\u00e9');
  const utf16 = [0xff, 0xfe, ...Buffer.from('{"a":"\u00e9"}', 'utf16le')];
  assert.equal(await body(utf16, 'application/json; charset=utf-16').json(), { a: '\u00e9' }, 'its byte order mark left out');
  assert.is(await body([0xc3, 0xa9], 'text/plain; charset=UTF-8').text(), '\u00e9');
});

test('a body that is no text in its declared charset is a 400 naming it, and a charset no decoder knows a 415', async () => {
  const body = (type: string) => Request.create('/', 'POST', { body: Buffer.from([0x61, 0x00, 0x00, 0xd8]), headers: { 'content-type': type } });
  const invalid = await body('text/plain; charset=utf-16le').text().then(() => undefined, (e: Error) => e);
  assert.instance(invalid, MalformedRequestError);
  assert.is(invalid!.message, 'The request body is not valid utf-16le text (its Content-Type says charset=utf-16le).');
  for (const read of ['text', 'json'] as const) {
    const unknown = await body(read === 'json' ? 'application/json; charset=utf-7' : 'text/plain; charset=utf-7')[read]().then(() => undefined, (e: Error) => e);
    assert.instance(unknown, UnsupportedMediaTypeHttpError, read);
    assert.is(unknown!.message, 'The request body\'s charset "utf-7" is not one this server can decode; send it as UTF-8.', read);
  }
});

test('a charset no decoder knows is a 415 for text(), json() and form() before a byte of the body is read (no upload first); an oversize body in a known charset is still a 413', async () => {
  for (const [read, type] of [['text', 'text/plain; charset=utf-7'], ['json', 'application/json; charset=utf-7'], ['form', 'application/x-www-form-urlencoded; charset=utf-7']] as const) {
    let pulled = false;
    const source = new Readable({ read() { pulled = true; this.push('x'.repeat(100)); this.push(null); } });
    // Content-Length over the limit: a read would be a 413, so the 415 shows the charset was judged first.
    const request = Request.create('/', 'POST', { body: source, bodyLimit: 10, headers: { 'content-type': type, 'content-length': '100' } });
    const error = await request[read]().then(() => undefined, (e: Error) => e);
    assert.instance(error, UnsupportedMediaTypeHttpError, read);
    assert.is(error!.message, 'The request body\'s charset "utf-7" is not one this server can decode; send it as UTF-8.', read);
    assert.is(pulled, false, `${read}: nothing pulled from the body`);
    assert.is(request.peekBody(), undefined, `${read}: the body is left unread`);
  }
  for (const type of ['text/plain; charset=latin1', 'application/json; charset=utf-8']) {
    const request = Request.create('/', 'POST', { body: 'x'.repeat(100), bodyLimit: 10, headers: { 'content-type': type } });
    const error = await (type.startsWith('text') ? request.text() : request.json()).then(() => undefined, (e: Error) => e);
    assert.instance(error, PayloadTooLargeHttpError, type);
  }
});

test('a body declared latin1 or windows-1252 is read as windows-1252 whatever node\'s TextDecoder does (node 20.18.3 and 22.13.0 read it as ISO-8859-1): 0x80 is €, 0x93 “', async () => {
  const body = (bytes: number[], type: string) => Request.create('/', 'POST', { body: Buffer.from(bytes), headers: { 'content-type': type } });
  const bytes = [0x80, 0x20, 0x93, 0x71, 0x94, 0x20, 0x81, 0x9f, 0xe9];
  for (const charset of ['latin1', 'ISO-8859-1', 'windows-1252', 'us-ascii']) {
    assert.is(await body(bytes, `text/plain; charset=${charset}`).text(), '\u20ac \u201cq\u201d \u0081\u0178\u00e9', charset);
  }
});

test('a UTF-16 body\'s byte order mark says its byte order: charset=utf-16 sent big-endian (Java\'s UTF-16) is its text, not other characters', async () => {
  const body = (bytes: number[], type: string) => Request.create('/', 'POST', { body: Buffer.from(bytes), headers: { 'content-type': type } });
  const bigEndian = [0xfe, 0xff, 0x00, 0x63, 0x00, 0xe9, 0x27, 0x03];
  assert.is(await body(bigEndian, 'text/plain; charset=utf-16').text(), 'c\u00e9\u2703');
  assert.equal(await body([0xfe, 0xff, 0x00, 0x5b, 0x00, 0x31, 0x00, 0x5d], 'application/json; charset=UTF-16').json(), [1]);
  assert.is(await body([0xff, 0xfe, 0x63, 0x00], 'text/plain; charset=utf-16be').text(), 'c', 'a little-endian mark read so');
  assert.is(await body([0x00, 0x63], 'text/plain; charset=utf-16be').text(), 'c', 'no mark: the declared order');
});

test('json() of a body declared in a charset other than UTF-8 or UTF-16 is a 415 saying JSON is UTF-8, unread, not the text of another charset', async () => {
  // "é" in UTF-8, which a client mislabelling it latin1 sends: read as windows-1252 it would be "Ã©" unseen.
  const request = Request.create('/', 'POST', { body: Buffer.from('{"a":"\u00e9"}'), headers: { 'content-type': 'application/json; charset=iso-8859-1' } });
  const error = await request.json().then(() => undefined, (e: Error) => e);
  assert.instance(error, UnsupportedMediaTypeHttpError);
  assert.is(error!.message, 'The request body\'s charset "iso-8859-1" is not one JSON is sent in; send it as UTF-8 (RFC 8259).');
  assert.is(request.peekBody(), undefined, 'unread');
  assert.equal(await Request.create('/', 'POST', { body: '{"a":1}', headers: { 'content-type': 'application/json; charset=unicode-1-1-utf-8' } }).json(), { a: 1 });
});

test('contentType reads the first of several Content-Type values an embedder gave, not a TypeError', () => {
  assert.is(Request.create('/', 'POST', { headers: { 'content-type': ['Application/JSON; charset=utf-8', 'text/plain'] as never } }).contentType, 'application/json');
});

test("a request body that is an object or an array (Fastify's inject() body sends it as JSON) is a TypeError saying json is the option that does", () => {
  for (const body of [{ title: 'Dune' }, [1, 2]]) {
    assert.match(thrown(() => Request.create('/', 'POST', { body: body as never })).message, ': give it as json to send it as JSON ({ json: value }).');
  }
  assert.not.match(thrown(() => Request.create('/', 'POST', { body: 5 as never })).message, 'json');
});

test('Request.create() refuses a body it cannot read and a method that is no token at the call, not at the first read', () => {
  for (const body of [5, { a: 1 }, new Blob(['x']), true]) {
    const error = thrown(() => Request.create('/', 'POST', { body: body as never }));
    assert.instance(error, TypeError, String(body));
    assert.match(error.message, /^A request body is a string, bytes, an async iterable of them \(a readable stream\) or null, not /);
  }
  assert.is(thrown(() => Request.create('/', 'POST', { body: 5 as never })).message, 'A request body is a string, bytes, an async iterable of them (a readable stream) or null, not number 5.');
  assert.is(thrown(() => Request.create('/', 5 as never)).message, 'A request method is a token such as GET or POST, not number 5.');
  assert.is(thrown(() => Request.create('/', 'GE T')).message, 'A request method is a token such as GET or POST, not the string "GE T".');
  assert.is(thrown(() => Request.create('/', '')).message, 'A request method is a token such as GET or POST, not the string "".');
  assert.is(Request.create('/', 'post', { body: Readable.from(['x']) }).method, 'POST');
  assert.is(Request.create('/', 'PUT', { body: new Blob(['x']).stream() as never }).method, 'PUT');
  assert.is(Request.create('/', 'POST', { body: undefined }).method, 'POST');
});

test('Request.create() refuses an option it does not know (a typo: header) and headers it would misread (Headers, a list of pairs)', () => {
  const typo = thrown(() => Request.create('/', 'GET', { header: { accept: 'text/html' } } as never));
  assert.instance(typo, TypeError);
  assert.match(typo.message, /^Request\.create\(\) has no option "header"; its options are headers, body, json, scheme, /);
  for (const headers of [new Headers({ accept: 'text/html' }), [['accept', 'text/html']], 'accept: text/html', null]) {
    const error = thrown(() => Request.create('/', 'GET', { headers: headers as never }));
    assert.instance(error, TypeError, String(headers));
    assert.match(error.message, /^The headers given to Request\.create\(\) are an object of names and values \(\{ accept: 'text\/html' \}\), not /);
  }
  assert.is(thrown(() => Request.create('/', 'GET', null as never)).message, 'Request.create() takes a plain object of options as its third argument ({ headers, body }), not null.');
  assert.is(Request.create('/', 'GET', { headers: { Accept: 'text/html' }, scheme: 'https', remoteAddress: '10.0.0.1' }).headers.accept, 'text/html');
});

test('Request.create() lower-cases a header named __proto__ as any other, kept as a header, never the headers\' prototype', () => {
  const headers = Request.create('/', 'GET', { headers: { '__Proto__': ['a', 'b'], 'Constructor': 'c' } }).headers;
  assert.is(Object.getPrototypeOf(headers), Object.prototype);
  // Its two lines joined, as any field's (see addHeaderLine).
  assert.equal(Object.getOwnPropertyDescriptor(headers, '__proto__')?.value, 'a, b');
  assert.is(headers.constructor, 'c');
});

test('Request.create() with json sends the value written as JSON, as application/json unless the headers give a Content-Type', async () => {
  const request = Request.create('/books', 'POST', { json: { title: 'Dune', year: 1965, tags: ['sf'], price: 9.5, note: null } });
  assert.is(request.headers['content-type'], 'application/json');
  assert.is(request.headers['content-length'], '66');
  assert.equal(await request.json(), { title: 'Dune', year: 1965, tags: ['sf'], price: 9.5, note: null });
  const text = Request.create('/', 'POST', { json: 'caf\u00e9' });
  assert.is(text.headers['content-length'], '7');
  assert.is(await text.text(), '"caf\u00e9"');
  for (const json of [null, 0, false, []]) assert.equal(await Request.create('/', 'POST', { json }).json(), json);
  // A Content-Type of the caller's, in any case, is kept: a +json type or a charset.
  const typed = Request.create('/', 'PATCH', { json: [{ op: 'remove', path: '/a' }], headers: { 'Content-Type': 'application/json-patch+json' } });
  assert.is(typed.headers['content-type'], 'application/json-patch+json');
  assert.equal(await typed.json(), [{ op: 'remove', path: '/a' }]);
  // As JSON.stringify writes it: a toJSON() is called, an undefined or function property left out.
  assert.is(await Request.create('/', 'POST', { json: { at: new Date(0), skip: undefined, fn: () => 1 } }).text(), '{"at":"1970-01-01T00:00:00.000Z"}');
});

test('Request.create() refuses json with a body, and a json value that JSON writes as nothing or cannot write, with a TypeError at the call', () => {
  const both = thrown(() => Request.create('/', 'POST', { json: { a: 1 }, body: '{"a":1}' }));
  assert.instance(both, TypeError);
  assert.is(both.message, 'Request.create() takes a body or a json option, not both: json is the body, written as JSON.');
  assert.instance(thrown(() => Request.create('/', 'POST', { json: null, body: null })), TypeError);
  assert.is(Request.create('/', 'POST', { json: 1, body: undefined }).headers['content-length'], '1');

  assert.is(thrown(() => Request.create('/', 'POST', { json: undefined })).message, 'Request.create() got undefined as its json option, which JSON writes as nothing (a toJSON() may give undefined); pass null for a JSON null.');
  assert.is(thrown(() => Request.create('/', 'POST', { json: Symbol('s') })).message, 'Request.create() got a symbol as its json option, which JSON writes as nothing (a toJSON() may give undefined); pass null for a JSON null.');
  const fn = thrown(() => Request.create('/', 'POST', { json: () => 1 }));
  assert.instance(fn, TypeError);
  assert.match(fn.message, /^Request\.create\(\) got .*function.* as its json option, which JSON writes as nothing/);
  const big = thrown(() => Request.create('/', 'POST', { json: { id: 10n } }));
  assert.instance(big, TypeError);
  assert.match(big.message, /^Request\.create\(\) cannot write its json option as JSON: .*BigInt/);
  const cycle: Record<string, unknown> = { name: 'loop' };
  cycle.self = cycle;
  const circular = thrown(() => Request.create('/', 'POST', { json: cycle }));
  assert.instance(circular, TypeError);
  assert.match(circular.message, /^Request\.create\(\) cannot write its json option as JSON: Converting circular structure to JSON/);
  const failing = new Error('no JSON for you');
  const toJson = thrown(() => Request.create('/', 'POST', { json: { toJSON: () => { throw failing; } } }));
  assert.instance(toJson, TypeError);
  assert.is((toJson as Error & { cause?: unknown }).cause, failing);
});

test('Request.create() takes an init whose method is undefined or the method argument (in any case), and refuses another saying the method is its second argument', () => {
  assert.is(Request.create('/', 'POST', { method: undefined }).method, 'POST');
  assert.is(Request.create('/', 'POST', { method: 'POST', body: 'x' }).method, 'POST');
  assert.is(Request.create('/', 'post', { method: 'POST' }).method, 'POST');
  assert.is(Request.create('/', 'PATCH', { method: 'patch' }).method, 'PATCH');
  const init: RequestInit = { method: 'DELETE', headers: { accept: 'application/json' } };
  assert.is(Request.create('/items/1', 'DELETE', init).headers.accept, 'application/json');
  const conflict = thrown(() => Request.create('/', 'POST', { method: 'PUT' }));
  assert.instance(conflict, TypeError);
  assert.is(conflict.message, 'Request.create() got the method POST as its second argument and the string "PUT" as its option "method": the method is its second argument (leave the option out).');
  assert.match(thrown(() => Request.create('/', undefined, { method: 'POST' })).message, /got the method GET as its second argument and the string "POST"/);
  assert.match(thrown(() => Request.create('/', 'GET', { method: 5 as never })).message, /and number 5 as its option "method"/);
  assert.match(thrown(() => Request.create('/', 'GET', { method: null as never })).message, /and null as its option "method"/);
});

test('Request.create() refuses any Headers (undici\'s package) or other iterable (another realm\'s Map), read as no headers, and takes a plain object of another realm', () => {
  for (const headers of [new UndiciHeaders({ accept: 'text/html' }), runInNewContext("new Map([['accept', 'text/html']])"), new Set(['accept']), new URLSearchParams('accept=text/html')]) {
    const error = thrown(() => Request.create('/', 'GET', { headers: headers as never }));
    assert.instance(error, TypeError, String(headers.constructor.name));
    assert.match(error.message, /^The headers given to Request\.create\(\) are an object of names and values/);
  }
  assert.is(Request.create('/', 'GET', { headers: runInNewContext("({ Accept: 'text/html' })") }).headers.accept, 'text/html');
  assert.is(Request.create('/').duplicate({ attributes: runInNewContext('({ a: 1 })') }).attributes.get('a'), 1);
});

test('duplicate() refuses an option it does not know (a typo: attribute) and attributes that are no plain object, rather than make a sub-request routed back to its own controller', () => {
  const request = Request.create('/shelf');
  const typo = thrown(() => request.duplicate({ attribute: { _controller: () => null } } as never));
  assert.instance(typo, TypeError);
  assert.is(typo.message, 'duplicate() has no option "attribute"; its options are attributes, method.');
  assert.is(thrown(() => request.duplicate({ attributes: new Map([['_controller', 1]]) } as never)).message, 'The attributes of duplicate() are an object of names and values ({ _controller: ... }), not an object of type Map.');
  assert.is(thrown(() => request.duplicate(null as never)).message, 'duplicate() takes a plain object ({ attributes, method }), not null.');
  assert.is(thrown(() => request.duplicate({ method: 'GE T' })).message, 'A request method is a token such as GET or POST, not the string "GE T".');
  assert.is(request.duplicate({ attributes: { a: 1 }, method: 'post' }).attributes.get('a'), 1);
  assert.is(request.duplicate({ attributes: undefined }).method, 'GET');
});

test('Request.create() without a signal has one that is never aborted, the same at every read', () => {
  const request = Request.create('/');
  assert.instance(request.signal, AbortSignal);
  assert.is(request.signal, request.signal);
  assert.is(request.signal.aborted, false);
  assert.is(new Request('/').signal.aborted, false);
});

test('Request.create() with a signal: request.signal follows it, with its reason, and a sub-request\'s too', () => {
  const controller = new AbortController();
  const request = Request.create('/', 'GET', { signal: controller.signal });
  assert.is(getEventListeners(controller.signal, 'abort').length, 0, 'nothing until request.signal is read');
  assert.is(request.signal, request.signal);
  assert.is(request.duplicate().signal, request.signal);
  assert.is(request.signal.aborted, false);
  const reason = new Error('shutting down');
  controller.abort(reason);
  assert.is(request.signal.aborted, true);
  assert.is(request.signal.reason, reason);
  const later = Request.create('/', 'GET', { signal: controller.signal });
  assert.is(later.signal.reason, reason, 'made with a signal already aborted');
});

test('Request.create() with a signal: abortRequest() aborts it too, the first reason stays, and the caller\'s signal lets go of it', () => {
  const controller = new AbortController();
  const request = Request.create('/', 'GET', { signal: controller.signal });
  const waiting = request.duplicate().signal;
  assert.is(getEventListeners(controller.signal, 'abort').length, 1);
  const timeout = new Error('the response timeout');
  abortRequest(request, timeout);
  assert.is(waiting.aborted, true);
  assert.is(waiting.reason, timeout);
  assert.is(getEventListeners(controller.signal, 'abort').length, 0);
  controller.abort(new Error('shutting down'));
  assert.is(request.signal.reason, timeout);

  const caller = new AbortController();
  const unread = Request.create('/', 'GET', { signal: caller.signal });
  const first = new Error('shutting down');
  caller.abort(first);
  abortRequest(unread, new Error('the response timeout'));
  assert.is(unread.signal.reason, first, 'the caller\'s abort came first, though the signal was not read yet');
});

test('a sub-request shares its main request\'s signal, whichever aborts it', () => {
  const main = Request.create('/');
  const sub = main.duplicate({ method: 'GET', attributes: { exception: 1 } });
  const subOfSub = sub.duplicate();
  assert.is(sub.signal, main.signal);
  assert.is(subOfSub.signal, main.signal);
  const reason = new ClientClosedError();
  abortRequest(subOfSub, reason);
  assert.is(main.signal.aborted, true);
  assert.is(sub.signal.reason, reason);
});

test('abortRequest() before the signal is read: the signal read later is aborted with its reason; a second abort keeps the first', () => {
  const request = Request.create('/');
  const first = new Error('the response timeout');
  abortRequest(request, first);
  abortRequest(request, new Error('later'));
  assert.is(request.signal.aborted, true);
  assert.is(request.signal.reason, first);
  assert.is(request.duplicate().signal.reason, first);
});

test('Request.create() and duplicate() refuse options given as a Map, a list or a class instance, asking for a plain object, rather than read them as none; one of another realm is taken', () => {
  class Init {
    headers = { accept: 'text/html' };
  }
  for (const [init, kind] of [[new Map([['headers', { accept: 'text/html' }]]), 'Map'], [[], 'Array'], [new Init(), 'Init']] as const) {
    const created = thrown(() => Request.create('/', 'GET', init as never));
    assert.instance(created, TypeError, kind);
    assert.is(created.message, `Request.create() takes a plain object of options as its third argument ({ headers, body }), not an object of type ${kind}.`);
    const duplicated = thrown(() => Request.create('/').duplicate(init as never));
    assert.instance(duplicated, TypeError, kind);
    assert.is(duplicated.message, `duplicate() takes a plain object ({ attributes, method }), not an object of type ${kind}.`);
  }
  assert.is(Request.create('/', 'GET', runInNewContext("({ headers: { accept: 'text/html' } })") as never).headers.accept, 'text/html');
  assert.is(Request.create('/').duplicate(runInNewContext("({ method: 'POST' })") as never).method, 'POST');
  assert.is(Request.create('/').duplicate(Object.assign(Object.create(null) as object, { method: 'PUT' })).method, 'PUT');
});

/** Node's gc(), without starting node with --expose-gc. */
function collectGarbage(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

test('a request following a long-lived signal passes its abort to listeners on its signal after the request and its signal are collected', async () => {
  const gc = collectGarbage();
  const caller = new AbortController();
  const seen: string[] = [];
  // Code that holds neither the request nor its signal, as a stream body's cleanup, a fetch() or a combined signal would.
  const listenOnly = (): void => {
    Request.create('/', 'GET', { signal: caller.signal }).signal.addEventListener('abort', () => seen.push('listener'));
    addAbortListener(Request.create('/', 'GET', { signal: caller.signal }).signal, () => seen.push('addAbortListener'));
    AbortSignal.any([Request.create('/', 'GET', { signal: caller.signal }).signal]).addEventListener('abort', () => seen.push('any'));
  };
  listenOnly();
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    gc();
  }
  caller.abort(new Error('shutting down'));
  assert.equal(seen.sort(), ['addAbortListener', 'any', 'listener']);
  assert.is(getEventListeners(caller.signal, 'abort').length, 0, 'its listener is gone once it aborted');
});

test.run();
