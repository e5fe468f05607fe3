import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request } from '../../../kernel/index.js';
import { compileAddressList } from '../../../lib/http/address-list.js';
import { DebugAccess } from '../../../lib/profiler/index.js';

test('a range of prefix length 0 is every address of its family, which proxy-addr alone refuses', () => {
  const everyV4 = compileAddressList(['0.0.0.0/0']);
  for (const address of ['10.1.2.3', '127.0.0.1', '203.0.113.9', '255.255.255.255']) assert.ok(everyV4(address, 0), address);
  assert.not.ok(everyV4('2001:db8::1', 0), 'not IPv6 addresses');
  const everyV6 = compileAddressList(['::/0']);
  assert.ok(everyV6('2001:db8::1', 0));
  assert.ok(everyV6('::1', 0));
  // Other entries are proxy-addr's, names included, and a bad one is its TypeError.
  const some = compileAddressList(['loopback', '10.0.0.0/8']);
  assert.ok(some('127.0.0.1', 0) && some('10.9.9.9', 0) && !some('192.0.2.1', 0));
  for (const bad of ['nonsense/0', '10.0.0.0/33', 'x']) {
    let error: unknown;
    try {
      compileAddressList([bad]);
    } catch (caught) {
      error = caught;
    }
    assert.instance(error, TypeError, bad);
  }
});

test('debug access allowed to 0.0.0.0/0 lets in any IPv4 client (a container whose host connects from its bridge)', () => {
  const access = new DebugAccess(['0.0.0.0/0']);
  assert.ok(access.isAllowed(Request.create('http://127.0.0.1/', 'GET', { remoteAddress: '172.17.0.1' })));
});

test.run();
