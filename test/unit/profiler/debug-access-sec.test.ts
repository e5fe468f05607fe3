import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request } from '../../../kernel/index.js';
import { DebugAccess } from '../../../lib/profiler/index.js';

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

test.run();
