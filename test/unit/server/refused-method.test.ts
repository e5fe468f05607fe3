import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { refusesHeadRequest } from '../../../lib/server/refused-method.js';

/**
 * refusesHeadRequest of the chunk `before + after`, node's parser having stopped where they meet
 * (its bytesParsed); `opening` when the chunk is the first the connection received.
 */
function refusedAt(before: string, after: string, opening: boolean): boolean {
  return refusesHeadRequest(Buffer.from(before + after, 'latin1'), before.length, opening);
}

const GOOD = 'GET / HTTP/1.1\r\nHost: x\r\n\r\n';

test('a HEAD whose head begins the connection\'s first chunk is one, wherever in its head the parser stopped', () => {
  assert.ok(refusedAt('HEAD / HTTP/1.1\r\nHost: x\r\n', 'bad line\r\n\r\n', true), 'in a field line');
  assert.ok(refusedAt('HEAD /', '\x01 HTTP/1.1\r\n\r\n', true), 'in the target');
  assert.ok(refusedAt('HEAD ', '\x01 HTTP/1.1\r\n\r\n', true), 'right after the method');
  assert.ok(refusedAt('\r\n\r\nHEAD / HTTP/1.1\r\n', 'bad line\r\n\r\n', true), 'after the empty lines a client may send first');
  assert.ok(refusedAt('\r\nHEAD / HTTP/1.1\r\n', 'bad line\r\n\r\n', true), 'after one empty line');
});

test('any other method, or a stop inside the method, is no HEAD', () => {
  assert.not.ok(refusedAt('GET / HTTP/1.1\r\nHost: x\r\n', 'bad line\r\n\r\n', true), 'GET');
  assert.not.ok(refusedAt('HEADER / HTTP/1.1\r\n', 'bad line\r\n\r\n', true), 'a longer method');
  assert.not.ok(refusedAt('head / HTTP/1.1\r\n', 'bad line\r\n\r\n', true), 'lower case, which node refuses');
  assert.not.ok(refusedAt('HEAD', ' / HTTP/1.1\r\n\r\n', true), 'stopped before the space');
  assert.not.ok(refusedAt('HEA', 'X / HTTP/1.1\r\n\r\n', true), 'stopped inside the method');
});

test('behind complete messages in the chunk, the refused request is the one after the last empty line', () => {
  assert.ok(refusedAt(`${GOOD}HEAD / HTTP/1.1\r\n`, 'bad line\r\n\r\n', false), 'after a head without a body');
  assert.ok(refusedAt(`${GOOD}${GOOD}\r\nHEAD / HTTP/1.1\r\n`, 'bad line\r\n\r\n', false), 'after two, and an empty line between');
  assert.ok(refusedAt('POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nHEAD / HTTP/1.1\r\n', 'bad line\r\n\r\n', false), 'after a chunked body');
  assert.not.ok(refusedAt(`HEAD / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\n`, 'bad line\r\n\r\n', false), 'a GET after a HEAD');
});

test('a chunk that begins inside the refused request\'s head cannot tell, whatever it begins with', () => {
  // The connection sent `GET /x` last: the refused request is `GET /xHEAD /...`.
  assert.not.ok(refusedAt('HEAD / HTTP/1.1\r\n', 'bad line\r\n\r\n', false));
  assert.not.ok(refusedAt('\r\nHEAD / HTTP/1.1\r\n', 'bad line\r\n\r\n', false), 'the CRLF may end a line begun before');
  assert.not.ok(refusedAt('a'.repeat(4000), ' HTTP/1.1\r\n\r\n', false), 'the rest of a long target');
});

test('a stop at the end of a head is not read as the request after it', () => {
  assert.not.ok(refusedAt('GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n', 'HEAD / HTTP/1.1\r\n\r\n', true));
});

test('an error without the parser\'s bytes, or with a position outside them, is no HEAD', () => {
  assert.not.ok(refusesHeadRequest(undefined, 10, true));
  assert.not.ok(refusesHeadRequest(Buffer.from('HEAD / HTTP/1.1\r\n'), undefined, true));
  assert.not.ok(refusesHeadRequest(Buffer.from('HEAD / HTTP/1.1\r\n'), 99, true));
  assert.not.ok(refusesHeadRequest(Buffer.from('HEAD / HTTP/1.1\r\n'), -1, true));
});

test.run();
