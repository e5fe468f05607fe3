import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { compileTrustedHosts, type TrustedHost } from '../../../kernel/index.js';
import { thrown } from '../helpers.js';

const test = suite('compileTrustedHosts');

/** The hosts of `candidates` the list trusts. */
function trusted(entries: readonly TrustedHost[], candidates: readonly string[]): string[] {
  const trust = compileTrustedHosts(entries);
  return candidates.filter((host) => trust(host));
}

test('a host name trusts that host only, not its subdomains or look-alikes', () => {
  assert.equal(trusted(['example.com'], ['example.com', 'www.example.com', 'evil-example.com', 'example.com.evil.test', 'example.co', 'example.com.']), ['example.com']);
});

test('entries are matched case-insensitively (the Request gives its host lower-case)', () => {
  assert.equal(trusted(['Example.COM'], ['example.com']), ['example.com']);
});

test('.example.com trusts example.com and every subdomain, at any depth', () => {
  assert.equal(trusted(['.example.com'], ['example.com', 'a.example.com', 'a.b.example.com', 'evil-example.com', 'example.com.evil.test', 'aexample.com']), ['example.com', 'a.example.com', 'a.b.example.com']);
});

test('*.example.com trusts every subdomain but not example.com itself', () => {
  assert.equal(trusted(['*.example.com'], ['example.com', 'a.example.com', 'a.b.example.com', 'evil-example.com', 'aexample.com']), ['a.example.com', 'a.b.example.com']);
});

test('IPv4 and IPv6 addresses, bracketed or not, in any spelling of the address', () => {
  assert.equal(trusted(['127.0.0.1', '::1', '[2001:DB8::1]'], ['127.0.0.1', '127.0.0.2', '[::1]', '[0:0:0:0:0:0:0:1]', '[2001:db8::1]', '[2001:db8:0::1]', '[2001:db8::2]']), [
    '127.0.0.1',
    '[::1]',
    '[0:0:0:0:0:0:0:1]',
    '[2001:db8::1]',
    '[2001:db8:0::1]',
  ]);
  assert.equal(trusted(['::ffff:10.0.0.1'], ['[::ffff:10.0.0.1]', '[::ffff:a00:1]', '10.0.0.1']), ['[::ffff:10.0.0.1]', '[::ffff:a00:1]']);
});

test('an IPv4 address is trusted as written: 127.1 or 2130706433, which a URL reads as 127.0.0.1, are other hosts to the list', () => {
  assert.equal(trusted(['127.0.0.1'], ['127.0.0.1', '127.1', '2130706433', '0x7f.0.0.1', '127.0.0.01']), ['127.0.0.1']);
});

test('a RegExp must match the whole host, case-insensitively, whatever its own anchors and flags', () => {
  assert.equal(trusted([/example\.com/], ['example.com', 'evil-example.com', 'example.com.evil.test']), ['example.com']);
  assert.equal(trusted([/^api\d+\.example\.com$/], ['api1.example.com', 'api22.example.com', 'api.example.com', 'api1.example.com.evil.test']), ['api1.example.com', 'api22.example.com']);
  assert.equal(trusted([/API\.EXAMPLE\.COM/], ['api.example.com']), ['api.example.com']);
  assert.equal(trusted([/a|b/], ['a', 'b', 'ab', 'a.evil.test', 'evil.b']), ['a', 'b'], 'an alternation is anchored as a whole');
});

test('a global or sticky RegExp gives the same answer every time (no lastIndex carried over)', () => {
  const trust = compileTrustedHosts([/example\.com/gy]);
  assert.equal([trust('example.com'), trust('example.com'), trust('example.com')], [true, true, true]);
});

test('entries of every kind combine', () => {
  assert.equal(trusted(['localhost', '.example.com', /^[a-z]+\.test$/], ['localhost', 'www.example.com', 'app.test', 'evil.example', 'app.test.evil']), ['localhost', 'www.example.com', 'app.test']);
});

test('an entry with a port is refused: hosts are matched without their port', () => {
  const error = thrown(() => compileTrustedHosts(['example.com:8080']));
  assert.instance(error, RangeError);
  assert.is(error.message, 'Invalid trusted host "example.com:8080": hosts are matched without their port; give "example.com".');
});

test('invalid entries are refused with a RangeError naming them', () => {
  const cases: Array<[string, string]> = [
    ['', 'an empty host matches no request'],
    ['*', '"*" would trust every host; leave trustedHosts out to accept every host'],
    ['*example.com', '"*" is allowed only as the first label ("*.example.com"); give a RegExp for other patterns'],
    ['api.*.example.com', '"*" is allowed only as the first label ("*.example.com"); give a RegExp for other patterns'],
    ['https://example.com', 'give the host alone, not a URL'],
    ['/^example\\.com$/', 'a string is a host name, never a pattern; give a RegExp object (/^api\\d+\\.example\\.com$/) for patterns'],
    ['.127.0.0.1', 'an IP address has no subdomains'],
    ['*.[::1]', 'an IP address has no subdomains'],
    ['fe80::1%eth0', 'not an IPv6 address a Host header can hold'],
    [' example.com', 'not a host name, an IP address, ".example.com" or "*.example.com"'],
    ['exa mple.com', 'not a host name, an IP address, ".example.com" or "*.example.com"'],
    ['[1.2.3.4]', 'not a host name, an IP address, ".example.com" or "*.example.com"'],
    ['..example.com', 'not a host name, an IP address, ".example.com" or "*.example.com"'],
    ['*.a..example.com', 'not a host name, an IP address, ".example.com" or "*.example.com"'],
    ['example..com', 'not a host name, an IP address, ".example.com" or "*.example.com"'],
    ['user@example.com', 'not a host name, an IP address, ".example.com" or "*.example.com"'],
    ['a:b.example.com', 'not a host name, an IP address, ".example.com" or "*.example.com"'],
    ['example.com/', 'not a host name, an IP address, ".example.com" or "*.example.com"'],
    ['a::1]', 'not a host name, an IP address, ".example.com" or "*.example.com"'],
    ['[::1', 'not a host name, an IP address, ".example.com" or "*.example.com"'],
    ['a:b:80', 'not a host name, an IP address, ".example.com" or "*.example.com"'],
    ['*.example.com:443', 'hosts are matched without their port; give "*.example.com"'],
    ['/^api\\d+', 'a string is a host name, never a pattern; give a RegExp object (/^api\\d+\\.example\\.com$/) for patterns'],
    ['[::1]:8080', 'hosts are matched without their port; give "[::1]"'],
  ];
  for (const [entry, why] of cases) {
    const error = thrown(() => compileTrustedHosts(['example.org', entry]));
    assert.instance(error, RangeError, entry);
    assert.is(error.message, `Invalid trusted host "${entry}": ${why}.`);
  }
});

test('what is no string or RegExp is a TypeError naming it; so is a list that is no array', () => {
  assert.is(thrown(() => compileTrustedHosts(['a.test', 42 as unknown as string])).message, 'Invalid trusted host number 42: give a host name (string) or a RegExp.');
  assert.instance(thrown(() => compileTrustedHosts([null as unknown as string])), TypeError);
  assert.is(thrown(() => compileTrustedHosts({ hosts: ['a.test'] } as unknown as string[])).message, 'trustedHosts must be an array of host names and RegExps, not an object of type Object.');
  const single = thrown(() => compileTrustedHosts('example.com' as unknown as string[]));
  assert.instance(single, TypeError);
  assert.is(single.message, 'trustedHosts must be an array of host names and RegExps, not a string (write ["example.com"]).');
});

test('an empty list is refused: it would refuse every request', () => {
  const error = thrown(() => compileTrustedHosts([]));
  assert.instance(error, RangeError);
  assert.is(error.message, 'trustedHosts is empty, which would refuse every request: leave it out to accept every host.');
});

test.run();
