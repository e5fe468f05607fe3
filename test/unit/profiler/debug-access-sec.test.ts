import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request } from '../../../kernel/index.js';
import { DebugAccess, isLocalName } from '../../../lib/profiler/index.js';

/** A request from the trusted proxy 10.0.0.2 saying the client is `forwardedFor`. */
function viaProxy(forwardedFor: string): Request {
  return new Request('/_profiler/', { remoteAddress: '10.0.0.2', headers: { 'x-forwarded-for': forwardedFor }, trustProxy: (address) => address === '10.0.0.2' });
}

test('a forwarded hop that spells loopback in no usual notation (decimal, hex, octal) is not allowed', () => {
  const access = new DebugAccess();
  for (const hop of ['2130706433', '0x7f000001', '0177.0.0.1']) assert.is(access.isAllowed(viaProxy(hop)), false, hop);
});

test('a forwarded loopback hop in the usual notations is allowed, IPv4-mapped IPv6 too', () => {
  const access = new DebugAccess();
  for (const hop of ['127.0.0.1', '127.0.0.1:4711', '::1', '[::1]:443', '::ffff:127.0.0.1']) assert.is(access.isAllowed(viaProxy(hop)), true, hop);
});

test('X-Forwarded-For from a client that is no trusted proxy is not believed', () => {
  const access = new DebugAccess();
  const request = new Request('/_profiler/', { remoteAddress: '203.0.113.7', headers: { 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '127.0.0.1', forwarded: 'for=127.0.0.1' } });
  assert.is(access.isAllowed(request), false);
});

/** A loopback request naming `host` in its Host header. */
function onHost(host: string): Request {
  return new Request('/_profiler/', { remoteAddress: '127.0.0.1', headers: { host } });
}

test('local names: IP addresses, localhost and names under it; any other name, however close, is not one', () => {
  for (const host of ['localhost', 'app.localhost', 'a.b.localhost', '127.0.0.1', '10.1.2.3', '[::1]', '[fe80::1]', '[::ffff:127.0.0.1]']) assert.ok(isLocalName(host), host);
  for (const host of ['localhost.test', 'notlocalhost', 'localhost.', 'example.com', '127.1', '2130706433', '[::1', '[example]', '::1', '']) assert.not.ok(isLocalName(host), host);
});

test('an allowed client sees debug details on a local name or a trusted host only, whatever the port', () => {
  const access = new DebugAccess(undefined, { trustHost: (host) => host === 'myapp.test' });
  for (const host of ['localhost:8000', 'App.Localhost', '127.0.0.1:8443', '[::1]:8000', 'myapp.test:8000']) assert.ok(access.isAllowed(onHost(host)), host);
  for (const host of ['rebound.test:8000', 'abc.ngrok-free.app', 'myapp.test.evil.test']) assert.not.ok(access.isAllowed(onHost(host)), host);
  assert.not.ok(new DebugAccess().isAllowed(onHost('myapp.test')), 'no host is trusted by default');
});

test('behind a trusted proxy, the forwarded host is the one judged', () => {
  const access = new DebugAccess();
  const proxied = (forwardedHost: string) => new Request('/_profiler/', { remoteAddress: '127.0.0.1', headers: { host: 'localhost', 'x-forwarded-for': '127.0.0.1', 'x-forwarded-host': forwardedHost }, trustProxy: () => true });
  assert.not.ok(access.isAllowed(proxied('rebound.test')));
  assert.ok(access.isAllowed(proxied('app.localhost')));
});

test('a host the request refuses as malformed or repeated (no browser sends one) leaves the verdict to the client rule: its 400 comes before any page, and may say why', () => {
  const access = new DebugAccess();
  assert.ok(access.isAllowed(onHost('<script>')));
  assert.ok(access.isAllowed(new Request('/', { remoteAddress: '127.0.0.1', headers: { host: ['a.localhost', 'b.localhost'] } })));
  assert.not.ok(access.isAllowed(new Request('/', { remoteAddress: '203.0.113.7', headers: { host: '<script>' } })), 'the client rule still holds');
});

test('a host outside the trusted hosts is hidden, as a name a rebinding page may own: trusting hosts never shows more than trusting none', () => {
  const trustHost = (host: string): boolean => host === 'localhost';
  const access = new DebugAccess(undefined, { trustHost });
  const rebound = new Request('/', { remoteAddress: '127.0.0.1', headers: { host: 'rebound.test' }, trustHost });
  assert.throws(() => rebound.host, /Untrusted Host "rebound.test"/);
  assert.not.ok(access.isAllowed(rebound));
  assert.not.ok(new DebugAccess().isAllowed(new Request('/', { remoteAddress: '127.0.0.1', headers: { host: 'rebound.test' } })));
  assert.ok(access.isAllowed(new Request('/', { remoteAddress: '127.0.0.1', headers: { host: 'localhost:8000' }, trustHost })));
});

test('onHiddenHost hears of each host hidden from an allowed client once, and never of a client refused anyway', () => {
  const heard: string[] = [];
  const access = new DebugAccess(undefined, { onHiddenHost: (host) => heard.push(host) });
  for (let i = 0; i < 3; i++) {
    access.isAllowed(onHost('rebound.test:8000'));
    access.isAllowed(onHost('other.test'));
    access.isAllowed(onHost('localhost'));
    access.isAllowed(new Request('/', { remoteAddress: '203.0.113.7', headers: { host: 'outsider.test' } }));
  }
  assert.equal(heard, ['rebound.test', 'other.test']);
});

test('a long forwarded hop or host gets its verdict without being remembered: clients sending 15 KB ones hold no cache of them', () => {
  const access = new DebugAccess();
  const long = 'a'.repeat(15_000);
  for (let i = 0; i < 50; i++) {
    assert.is(access.isAllowed(viaProxy(`${long}${i}`)), false);
    assert.is(access.isAllowed(onHost(`h${i}.${'a'.repeat(60)}.${long.slice(0, 200)}.example`)), false);
  }
  assert.is(access.isAllowed(viaProxy('127.0.0.1')), true);
  assert.ok(access.cachedChars < 1024, `${access.cachedChars} characters remembered`);
});

test('a forwarded hop or host remembered does not keep alive the long header it was cut from', () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const access = new DebugAccess(undefined, { trustHost: () => false });
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < 1000; i++) {
    const pad = `${'b'.repeat(15_000)}${i}`;
    assert.is(access.isAllowed(viaProxy(`${pad}, ${'c'.repeat(200)}${i}`)), false);
    const host = `${'c'.repeat(100)}${i}.example, ${pad}.example`;
    assert.is(access.isAllowed(new Request('/_profiler/', { remoteAddress: '127.0.0.1', headers: { host: 'localhost', 'x-forwarded-host': host }, trustProxy: () => true })), false);
  }
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  // 30 MB of headers were kept alive by their hops and hosts; those themselves are 0.3 MB.
  assert.ok(grown < 5_000_000, `the heap grew by ${grown} bytes`);
});


test('cachedChars counts what the verdict caches hold: the client IPs, hosts and proxies reported', () => {
  const access = new DebugAccess(undefined, { onUntrustedProxy: () => {} });
  assert.is(access.cachedChars, 0);
  access.isAllowed(new Request('/_profiler/', { remoteAddress: '127.0.0.1', headers: { host: '127.0.0.1:8000', 'x-forwarded-for': '203.0.113.7' } }));
  access.isAllowed(onHost('localhost'));
  // 127.0.0.1 judged as a client and reported as a proxy, 203.0.113.7 judged as the client it named, localhost as a host.
  assert.is(access.cachedChars, 2 * '127.0.0.1'.length + '203.0.113.7'.length + 'localhost'.length);
});

test.run();
