import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { statusText } from '../../../lib/errors/status-text.js';

test('registered statuses have their reason phrase; 499 is nginx\'s Client Closed Request; others their class', () => {
  assert.is(statusText(404), 'Not Found');
  assert.is(statusText(499), 'Client Closed Request');
  assert.is(statusText(498), 'Client Error');
  assert.is(statusText(599), 'Server Error');
  assert.is(statusText(99), 'Unknown Status');
});

test.run();
