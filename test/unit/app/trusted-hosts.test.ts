import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createKernel } from '../../../lib/app/index.js';
import { thrown } from '../helpers.js';

test('createKernel refuses an invalid trusted host at construction, naming it', () => {
  const error = thrown(() => createKernel({ stderrLogLevel: false, trustedHosts: ['example.com', 'example.com:443'] }));
  assert.instance(error, RangeError);
  assert.is(error.message, 'Invalid trusted host "example.com:443": hosts are matched without their port; give "example.com".');
  assert.instance(thrown(() => createKernel({ stderrLogLevel: false, trustedHosts: 'example.com' as unknown as string[] })), TypeError);
});

test.run();
