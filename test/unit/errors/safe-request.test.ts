import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request, compileTrustedHosts } from '../../../kernel/index.js';
import { safeUri } from '../../../lib/errors/safe-request.js';

const trustHost = compileTrustedHosts(['example.com']);

test('safeUri() is the path and query when the host is untrusted or invalid (a refused host never becomes a URL, also from an absolute-form target), the raw target when there is no path either', () => {
  assert.is(safeUri(new Request('/a?b=1', { headers: { host: 'example.com:8000' }, trustHost })), 'http://example.com:8000/a?b=1');
  assert.is(safeUri(new Request('/a?b=1', { headers: { host: 'evil.test' }, trustHost })), '/a?b=1');
  assert.is(safeUri(new Request('http://evil.test/a?b=1', { headers: { host: 'example.com' }, trustHost })), '/a?b=1');
  assert.is(safeUri(new Request('http://evil..test/a', { headers: { host: 'example.com' } })), '/a');
  assert.is(safeUri(new Request('http://user:pw@evil.test/a', { headers: { host: 'example.com' } })), 'http://evil.test/a', 'a refused target, its user and password left out');
  assert.is(safeUri(new Request('/a?', { headers: { host: '<script>' } })), '/a?', 'an empty query is kept as sent');
  assert.is(safeUri(new Request('http://[x/a', { headers: { host: 'example.com' } })), 'http://[x/a');
});

test.run();
