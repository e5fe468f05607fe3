import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { headOverflow } from '../../../lib/server/head-overflow.js';

const LIMIT = 16 * 1024;
const a = (n: number): string => 'a'.repeat(n);

/**
 * headOverflow of the chunk `before + after`, node's parser having stopped where they meet (its
 * bytesParsed): at the space ending a target, the colon or CR ending a field, or the chunk's end.
 */
function overflowAt(before: string, after = ''): string {
  return headOverflow(Buffer.from(before + after, 'latin1'), before.length, LIMIT);
}

test('a target that alone reaches the limit is the request target, wherever the parser stopped in it', () => {
  const target = `/${a(LIMIT)}`;
  assert.is(overflowAt(`GET ${target}`, ' HTTP/1.1\r\nHost: x\r\n\r\n'), 'request-target', 'stopped at the space after it');
  assert.is(overflowAt(`GET ${target}`), 'request-target', 'stopped at the end of the chunk, inside it');
  assert.is(overflowAt(`M-SEARCH ${target}`), 'request-target', 'a method with a hyphen');
  assert.is(overflowAt(`\r\nGET ${target}`), 'request-target', 'after the empty line a client may send first');
  assert.is(overflowAt(`GET / HTTP/1.1\r\nHost: x\r\n\r\nGET ${target}`, ' HTTP/1.1\r\n'), 'request-target', 'the second request of a pipeline');
});

test('a chunk inside a long target is the request target when the target ends in it at a space', () => {
  assert.is(overflowAt(a(4000), ' HTTP/1.1\r\nHost: x\r\n\r\n'), 'request-target');
});

test('a field name or value that overran the limit is the header fields, even after a long target', () => {
  assert.is(overflowAt(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${a(LIMIT)}`, '\r\n\r\n'), 'header-fields', 'a value ended by CR');
  assert.is(overflowAt(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${a(LIMIT)}   `, '\r\n\r\n'), 'header-fields', 'a value with trailing spaces');
  assert.is(overflowAt(`GET / HTTP/1.1\r\nHost: x\r\nX-${a(LIMIT)}`, ': y\r\n\r\n'), 'header-fields', 'a name ended by its colon');
  assert.is(overflowAt(`GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${a(LIMIT)}`), 'header-fields', 'a value running past the chunk');
  assert.is(overflowAt(`GET /${a(LIMIT - 400)} HTTP/1.1\r\nHost: x\r\nX-Big: ${a(1000)}`, '\r\n\r\n'), 'header-fields', 'a target under the limit, the fields taking it over');
  assert.is(overflowAt(Array.from({ length: 700 }, (_, i) => `X-H${i}: ${a(20)}\r\n`).join('') + 'X-Last: aa', '\r\n'), 'header-fields', 'many fields');
});

test('a chunk inside a field value is the header fields when the value shows a space or ends in it', () => {
  assert.is(overflowAt(`${a(100)} ${a(8000)}`), 'header-fields', 'a space: no target holds one');
  assert.is(overflowAt(`${a(100)}\t${a(8000)}`), 'header-fields', 'a tab');
  assert.is(overflowAt(a(8000), '\r\n\r\n'), 'header-fields', 'ended by CR');
  assert.is(overflowAt(`Bearer ${a(8000)}`), 'header-fields', 'a value that starts like a request line, yet is shorter than any target the parser refuses');
  assert.is(overflowAt(`GET ${a(LIMIT)} ${a(10)}`), 'header-fields', 'a value that starts like a request line, with a second space no target has');
});

test('a chunk that is all the middle of one spaceless line cannot tell', () => {
  assert.is(overflowAt(a(LIMIT)), 'unknown');
});

test('an error without the parser\'s bytes, or with a position outside them, cannot tell', () => {
  assert.is(headOverflow(undefined, 10, LIMIT), 'unknown');
  assert.is(headOverflow(Buffer.from('GET /'), undefined, LIMIT), 'unknown');
  assert.is(headOverflow(Buffer.from('GET /'), 99, LIMIT), 'unknown');
  assert.is(headOverflow(Buffer.from('GET /'), -1, LIMIT), 'unknown');
});

test.run();
