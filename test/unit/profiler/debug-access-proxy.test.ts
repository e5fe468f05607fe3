import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request, type TrustProxy } from '../../../kernel/index.js';
import { DebugAccess } from '../../../lib/profiler/index.js';
import { compileAddressList } from '../../../lib/http/address-list.js';

/** A request to the profiler from `peer` (a proxy on this machine by default) with `headers`, trusting the proxies `trustProxy` trusts. */
function passedOn(headers: Record<string, string | string[] | undefined>, peer = '127.0.0.1', trustProxy: TrustProxy | null = null): Request {
  return new Request('/_profiler/', { remoteAddress: peer, headers: { host: '127.0.0.1:8000', ...headers }, trustProxy });
}

const OUTSIDER = '203.0.113.7';

test('a loopback peer that is no trusted proxy, passing a request on for a client outside the list, shows it no debug details, in any forwarding header', () => {
  const access = new DebugAccess();
  for (const headers of [
    { 'x-forwarded-for': OUTSIDER },
    { 'x-forwarded-for': `127.0.0.1, ${OUTSIDER}` },
    { 'x-forwarded-for': [`127.0.0.1`, `${OUTSIDER}:4711`] },
    { 'x-real-ip': OUTSIDER },
    { forwarded: `for=${OUTSIDER};proto=https;host=127.0.0.1` },
    { forwarded: 'for="[2001:db8::7]:4711"' },
    { 'x-client-ip': OUTSIDER },
    { 'cf-connecting-ip': OUTSIDER },
    { 'true-client-ip': OUTSIDER },
    { 'x-forwarded-for': '127.0.0.1', 'x-real-ip': OUTSIDER },
    { 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'https', via: '1.1 nginx', forwarded: `for=127.0.0.1, For=${OUTSIDER}` },
  ]) {
    assert.is(access.isAllowed(passedOn(headers)), false, JSON.stringify(headers));
    assert.is(access.isAllowed(passedOn(headers, '::1')), false, `::1 ${JSON.stringify(headers)}`);
  }
});

test('a hop a client wrote before the proxy\'s counts too: forwarding headers can only hide more, never show more', () => {
  const access = new DebugAccess();
  assert.is(access.isAllowed(passedOn({ 'x-forwarded-for': `${OUTSIDER}, 127.0.0.1` })), false);
  // A quoted `,` a client wrote into Forwarded does not swallow the element the proxy appends.
  assert.is(access.isAllowed(passedOn({ forwarded: `for="127.0.0.1, for=127.0.0.1;x=", for=${OUTSIDER}` })), false);
  assert.is(access.isAllowed(passedOn({ forwarded: `for="127.0.0.1;x=1", for=${OUTSIDER}` })), false);
});

test('forwarding headers that name allowed clients only keep debug details: a local dev proxy writing X-Forwarded-For: 127.0.0.1', () => {
  const access = new DebugAccess();
  for (const headers of [
    { 'x-forwarded-for': '127.0.0.1' },
    { 'x-forwarded-for': '::1, 127.0.0.1:51234, [::1]:443, ::ffff:127.0.0.1' },
    { 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': 'http', 'x-forwarded-port': '3000', 'x-forwarded-host': 'localhost:3000', via: '1.1 vite' },
    { forwarded: 'for=127.0.0.1;proto=http;host=localhost, FOR="[::1]:4711"' },
    { 'x-real-ip': '127.0.0.1', 'x-forwarded-for': '127.0.0.1' },
    { 'x-forwarded-for': '127.0.0.1', 'x-forwarded-host': '[::1]:3000, app.localhost' },
    { 'x-forwarded-for': '::ffff:7f00:1, [::FFFF:7F00:1]:443' },
    { forwarded: 'for="[::1]:_port1"', 'x-forwarded-for': '127.0.0.1:_p' },
  ]) {
    assert.is(access.isAllowed(passedOn(headers)), true, JSON.stringify(headers));
  }
  const wide = new DebugAccess(['loopback', '10.0.0.0/8']);
  assert.is(wide.isAllowed(passedOn({ 'x-forwarded-for': '10.1.2.3', 'x-real-ip': '10.1.2.3' })), true, 'the allow list judges the named clients');
});

test('a proxy that names no client, or something that is no address, hides debug details: Via alone says a proxy passed the request on, for someone unknown', () => {
  const access = new DebugAccess();
  for (const headers of [
    { via: '1.1 nginx' },
    { 'x-forwarded-proto': 'https' },
    { 'x-forwarded-port': '443' },
    { 'x-forwarded-host': 'localhost' },
    { forwarded: 'proto=https;host=localhost' },
    { forwarded: 'for=unknown' },
    { forwarded: 'for=_hidden' },
    { 'x-forwarded-for': 'unknown' },
    { 'x-forwarded-for': '' },
    { 'x-forwarded-for': '2130706433' },
    { 'x-real-ip': '0177.0.0.1' },
    { 'x-forwarded-for': '127.0.0.1, localhost' },
    { 'x-forwarded-for': '[::1]junk' },
    { forwarded: 'for="[::1]evil"' },
    { 'x-forwarded-for': '[::1]:evil' },
    { 'x-forwarded-for': '127.0.0.1:evil' },
    { forwarded: 'for="[::1]:"' },
  ]) {
    assert.is(access.isAllowed(passedOn(headers)), false, JSON.stringify(headers));
  }
});

test('an X-Forwarded-Host from a proxy that is no trusted one is judged as a Host: a local name or a trusted host only', () => {
  const access = new DebugAccess(undefined, { trustHost: (host) => host === 'myapp.test' });
  const forHost = (host: string) => passedOn({ 'x-forwarded-for': '127.0.0.1', 'x-forwarded-host': host });
  for (const host of ['localhost:3000', 'App.Localhost', '127.0.0.1', '[::1]:3000', 'myapp.test:8080']) assert.is(access.isAllowed(forHost(host)), true, host);
  for (const host of ['rebound.test:3000', 'abc.ngrok-free.app', 'localhost, evil.test', '<script>', 'myapp.test.evil.test']) assert.is(access.isAllowed(forHost(host)), false, host);
  assert.is(new DebugAccess(undefined, { trustHost: () => true }).isAllowed(forHost('a b')), false, 'no valid host is no trusted one, whatever a RegExp takes');
});

test('an X-Forwarded-Host that is no valid host is no local name either, whatever it ends with', () => {
  const access = new DebugAccess();
  const forHost = (host: string) => passedOn({ 'x-forwarded-for': '127.0.0.1', 'x-forwarded-host': host });
  for (const host of ['evil.test/.localhost', 'evil.test?.localhost', 'evil.test#.localhost', 'evil.test .localhost', '[::1]evil.test', '[::1].evil.test:80']) {
    assert.is(access.isAllowed(forHost(host)), false, host);
  }
  for (const host of ['app.localhost', '[::1]', '[::1]:3000', 'localhost:80']) assert.is(access.isAllowed(forHost(host)), true, host);
});

test('behind a trusted proxy, the client it forwards decides as before: its other headers are not read', () => {
  const access = new DebugAccess();
  const loopback = compileAddressList(['loopback']);
  assert.is(access.isAllowed(passedOn({ 'x-forwarded-for': OUTSIDER }, '127.0.0.1', loopback)), false);
  assert.is(access.isAllowed(passedOn({ 'x-forwarded-for': '127.0.0.1', 'x-real-ip': OUTSIDER, via: '1.1 nginx' }, '127.0.0.1', loopback)), true);
  assert.is(access.isAllowed(passedOn({ 'x-forwarded-for': OUTSIDER }, '127.0.0.1', compileAddressList(['10.0.0.0/8']))), false, 'another proxy trusted: this peer is not');
});

test('a trusted proxy whose X-Forwarded-For names no client is judged by its other forwarding headers: listing an nginx that writes X-Real-IP alone shows the internet nothing', () => {
  const heard: [string, boolean][] = [];
  const access = new DebugAccess(undefined, { onUntrustedProxy: (proxy, trusted) => heard.push([proxy, trusted]) });
  const loopback = compileAddressList(['loopback']);
  for (const headers of [
    { 'x-real-ip': OUTSIDER },
    { 'x-real-ip': OUTSIDER, 'x-forwarded-proto': 'https' },
    { forwarded: `for=${OUTSIDER};proto=https` },
    { via: '1.1 nginx', 'x-forwarded-proto': 'https' },
    { 'x-forwarded-for': '', 'x-real-ip': OUTSIDER },
  ]) {
    assert.is(access.isAllowed(passedOn(headers, '127.0.0.1', loopback)), false, JSON.stringify(headers));
    assert.is(access.isAllowed(passedOn(headers, '::1', loopback)), false, `::1 ${JSON.stringify(headers)}`);
  }
  assert.equal(heard, [['127.0.0.1', true], ['::1', true]]);
  for (const headers of [{}, { 'x-real-ip': '127.0.0.1' }, { forwarded: 'for="[::1]:4711";proto=http', 'x-forwarded-proto': 'http' }]) {
    assert.is(access.isAllowed(passedOn(headers, '127.0.0.1', loopback)), true, JSON.stringify(headers));
  }
});

test('without forwarding headers, an allowed peer keeps debug details and nothing is reported', () => {
  const heard: string[] = [];
  const access = new DebugAccess(undefined, { onUntrustedProxy: (proxy) => heard.push(proxy) });
  assert.is(access.isAllowed(passedOn({})), true);
  assert.is(access.isAllowed(passedOn({ 'x-requested-with': 'XMLHttpRequest', referer: 'http://127.0.0.1:8000/' }, '::1')), true);
  assert.equal(heard, []);
});

test('onUntrustedProxy hears of each proxy once, and never of a peer refused anyway', () => {
  const heard: string[] = [];
  const access = new DebugAccess(undefined, { onUntrustedProxy: (proxy, trusted) => heard.push(`${proxy}${trusted ? ' trusted' : ''}`) });
  for (let i = 0; i < 3; i++) {
    access.isAllowed(passedOn({ 'x-forwarded-for': OUTSIDER }));
    access.isAllowed(passedOn({ via: '1.1 nginx' }));
    access.isAllowed(passedOn({ 'x-real-ip': OUTSIDER }, '::1'));
    access.isAllowed(passedOn({ 'x-forwarded-for': '127.0.0.1' }, '127.0.0.2'));
    access.isAllowed(passedOn({ 'x-forwarded-for': '127.0.0.1' }, OUTSIDER));
  }
  assert.equal(heard, ['127.0.0.1', '::1']);
});


test('without trusted hosts, an X-Forwarded-Host that names another site hides debug details (and the check does not throw)', () => {
  const access = new DebugAccess();
  for (const host of ['rebound.test', 'abc.ngrok-free.app:443']) assert.is(access.isAllowed(passedOn({ 'x-forwarded-for': '127.0.0.1', 'x-forwarded-host': host })), false, host);
});

test('an X-Forwarded-Host with more than one colon outside brackets is no host, not the name before its first colon', () => {
  const access = new DebugAccess();
  for (const host of ['localhost:1:evil.test', 'localhost:80:80', '::1']) assert.is(access.isAllowed(passedOn({ 'x-forwarded-for': '127.0.0.1', 'x-forwarded-host': host })), false, host);
});

test('a trusted proxy whose X-Forwarded-For holds only commas and blanks names no client: it is judged by its other headers', () => {
  const access = new DebugAccess();
  const loopback = compileAddressList(['loopback']);
  for (const forwardedFor of [',', ' , ', ', ,']) {
    assert.is(access.isAllowed(passedOn({ 'x-forwarded-for': forwardedFor }, '127.0.0.1', loopback)), false, JSON.stringify(forwardedFor));
    assert.is(access.isAllowed(passedOn({ 'x-forwarded-for': forwardedFor, 'x-real-ip': OUTSIDER }, '127.0.0.1', loopback)), false, JSON.stringify(forwardedFor));
  }
});

test('a Forwarded for= is unquoted only when quoted at both ends: an unbalanced quote leaves no address, which no range allows', () => {
  const access = new DebugAccess();
  assert.is(access.isAllowed(passedOn({ forwarded: 'for="127.0.0.1"' })), true);
  for (const forwarded of ['for="127.0.0.1', 'for=127.0.0.1"', 'for=x127.0.0.1"', 'for="127.0.0.1x', 'for="x127.0.0.1', 'for="', 'for=""']) {
    assert.is(access.isAllowed(passedOn({ forwarded })), false, forwarded);
  }
});

test.run();
