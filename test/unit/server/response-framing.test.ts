// frameResponse, checkFraming and the stream guards on their own: what framing headers a response
// leaves with, and what a stream body is held to, for each kind of body, method and HTTP version.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Response } from '../../../kernel/index.js';
import { ContentLengthGuard, checkFraming, contentLengthError, frameResponse } from '../../../lib/server/response-framing.js';

/** Frames `response` for a request of `method` over HTTP/1.`minor`; what it returned, and whether the connection is kept. */
function framed(response: Response, method = 'GET', minor = 1): { held: number; keepAlive: boolean } {
  const req = { method, httpVersionMajor: 1, httpVersionMinor: minor } as IncomingMessage;
  const res = { shouldKeepAlive: true } as ServerResponse;
  const held = frameResponse(req, res, response);
  return { held, keepAlive: res.shouldKeepAlive };
}

const stream = (): Readable => Readable.from(['abc']);

test('a text, bytes or empty body goes with its own length and holds no stream to one', () => {
  const text = new Response('héllo', 200, { 'content-length': '99' });
  assert.equal(framed(text), { held: -1, keepAlive: true });
  assert.is(text.headers['content-length'], '6', 'its bytes, not its characters');

  const bytes = new Response(new Uint8Array(3));
  assert.is(framed(bytes).held, -1);
  assert.is(bytes.headers['content-length'], '3');

  const empty = new Response('', 200, { 'content-length': '5' });
  assert.is(framed(empty).held, -1);
  assert.is(empty.headers['content-length'], '0', 'a GET\'s empty body is empty, whatever was declared');

  const none = new Response(null);
  assert.is(framed(none).held, -1);
  assert.is(none.headers['content-length'], '0', 'no body: a length of 0, so the client does not wait for one');

  const declaredNone = new Response(null, 200, { 'content-length': '5' });
  assert.is(framed(declaredNone).held, -1);
  assert.is(declaredNone.headers['content-length'], '0', 'no body: never a length that leaves the client waiting for bytes');
});

test('a HEAD keeps the length its GET would have, given or computed, and holds nothing to it', () => {
  const declared = new Response('', 200, { 'content-length': '5' });
  assert.is(framed(declared, 'HEAD').held, -1);
  assert.is(declared.headers['content-length'], '5', 'a HEAD controller may give GET\'s length without the body');

  const computed = new Response('', 200);
  framed(computed, 'HEAD');
  assert.is(computed.headers['content-length'], '0', 'an empty body without a length has the length 0');

  const text = new Response('abc', 200, { 'content-length': '9' });
  framed(text, 'HEAD');
  assert.is(text.headers['content-length'], '3', 'a body given has its own length');

  const none = new Response(null);
  framed(none, 'HEAD');
  assert.is(none.headers['content-length'], undefined, 'no body and no length: GET\'s length is unknown');

  const streamed = new Response(stream(), 200, { 'content-length': '3' });
  assert.is(framed(streamed, 'HEAD').held, -1, 'a HEAD sends no stream');
  assert.is(streamed.headers['content-length'], '3');
});

test('a stream body is held to its declared Content-Length, and without one to none', () => {
  const declared = new Response(stream(), 200, { 'content-length': '3' });
  assert.is(framed(declared).held, 3);
  assert.is(declared.headers['content-length'], '3');

  const chunked = new Response(stream());
  assert.is(framed(chunked).held, -1);
  assert.is(chunked.headers['content-length'], undefined, 'no length made up: node:http chunks it');
});

test('204 and 304 leave with neither Transfer-Encoding nor Content-Length', () => {
  for (const status of [204, 304]) {
    const response = new Response(null, status, { 'transfer-encoding': 'chunked', 'content-length': '5', etag: '"x"' });
    assert.is(framed(response).held, -1, String(status));
    assert.equal(response.headers, { etag: '"x"' }, String(status));
  }
});

test('Transfer-Encoding ending with chunked drops Content-Length for HTTP/1.1, and is dropped itself for HTTP/1.0', () => {
  const eleven = new Response(stream(), 200, { 'transfer-encoding': 'chunked', 'content-length': '3' });
  assert.is(framed(eleven).held, -1);
  assert.equal([eleven.headers['transfer-encoding'], eleven.headers['content-length']], ['chunked', undefined]);

  const ten = new Response('abc', 200, { 'transfer-encoding': 'chunked' });
  framed(ten, 'GET', 0);
  assert.equal([ten.headers['transfer-encoding'], ten.headers['content-length']], [undefined, '3']);

  for (const codings of ['gzip, chunked', 'gzip,chunked', 'CHUNKED', 'gzip ,  chunked\t']) {
    assert.is(framed(new Response(stream(), 200, { 'transfer-encoding': codings })).held, -1, codings);
  }
});

test('a Transfer-Encoding that does not end with chunked, or that is a list, is refused before any byte goes', () => {
  for (const codings of ['gzip', 'chunked, gzip', 'chunkedx', 'xchunked', 'gzip, xchunked']) {
    assert.throws(() => framed(new Response(stream(), 200, { 'transfer-encoding': codings })), (error: unknown) => error instanceof TypeError && /ends with chunked/.test((error as Error).message), codings);
  }
  const list = new Response(stream());
  list.headers['transfer-encoding'] = ['chunked', 'chunked'];
  assert.throws(() => framed(list), TypeError);
});

test('a stream body\'s Content-Length that is no number of bytes is refused, naming the value', () => {
  for (const declared of ['x12', '12x', '-1', '1.5', '']) {
    assert.throws(() => framed(new Response(stream(), 200, { 'content-length': declared })), (error: unknown) => error instanceof TypeError && (error as Error).message.includes(`not ${JSON.stringify(declared)}`), declared);
  }
});

test('Connection and Keep-Alive are the server\'s: a close token closes, anything else is dropped', () => {
  const closing = new Response('a', 200, { connection: 'keep-alive, close', 'keep-alive': 'timeout=99' });
  assert.is(framed(closing).keepAlive, false, 'close among other tokens');
  assert.equal([closing.headers.connection, closing.headers['keep-alive']], [undefined, undefined]);

  assert.is(framed(new Response('a', 200, { connection: 'Close' })).keepAlive, false, 'in any case');
  assert.is(framed(new Response('a', 200, { connection: 'closed' })).keepAlive, true, 'a token that only begins with close');
  assert.is(framed(new Response('a', 200, { connection: 'xclose' })).keepAlive, true, 'a token that only ends with close');

  const keepAliveAlone = new Response('a', 200, { 'keep-alive': 'timeout=99' });
  assert.is(framed(keepAliveAlone).keepAlive, true);
  assert.is(keepAliveAlone.headers['keep-alive'], undefined, 'a timeout the server does not keep is never announced');
});

test('framing headers written in another case are folded beside the lower-case ones, other headers left as written', () => {
  const both = new Response(stream(), 200, { 'content-length': '3' });
  both.headers['Content-Length'] = '5';
  assert.throws(() => framed(both), TypeError, 'two lengths are no number of bytes, whichever came first');
  assert.equal(both.headers['content-length'], ['3', '5']);

  const lower = new Response(stream(), 200, { 'content-length': '3', connection: 'close' });
  const { held, keepAlive } = framed(lower);
  assert.equal([held, keepAlive], [3, false], 'lower-case names are read as they are');
  assert.is(lower.headers['content-length'], '3');

  const mixed = new Response('a');
  mixed.headers['Connection'] = 'close';
  mixed.headers['X-Custom'] = 'kept';
  assert.is(framed(mixed).keepAlive, false);
  assert.equal(Object.keys(mixed.headers).sort(), ['X-Custom', 'content-length']);
});

test('checkFraming refuses what frameResponse refuses, and passes what it frames', () => {
  const refused = [
    new Response(stream(), 200, { 'transfer-encoding': 'gzip' }),
    new Response(stream(), 200, { 'content-length': 'x3' }),
    new Response('text', 200, { 'transfer-encoding': 'gzip' }),
  ];
  for (const response of refused) assert.throws(() => checkFraming(response), TypeError);
  const mixedCase = new Response(stream());
  mixedCase.headers['Transfer-Encoding'] = 'gzip';
  assert.throws(() => checkFraming(mixedCase), TypeError, 'in another case too');

  const passed = [
    new Response(stream(), 200, { 'transfer-encoding': 'chunked', 'content-length': 'x3' }),
    new Response(stream(), 200, { 'content-length': '3' }),
    new Response('text', 200, { 'content-length': 'any' }),
    new Response(new Uint8Array(1), 200, { 'content-length': 'any' }),
    new Response(null, 204, { 'transfer-encoding': 'gzip', 'content-length': 'x' }),
  ];
  for (const response of passed) checkFraming(response);
});

/** What a ContentLengthGuard of `declared` bytes gives for `chunks`, or the error it fails with. */
async function guarded(declared: number, chunks: string[]): Promise<{ sent: string; error?: Error }> {
  let sent = '';
  try {
    await pipeline(Readable.from(chunks), new ContentLengthGuard(declared), async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) sent += chunk.toString();
    });
    return { sent };
  } catch (error) {
    return { sent, error: error as Error };
  }
}

test('ContentLengthGuard passes a body of its length, and fails past it or at an end short of it, saying which', async () => {
  assert.equal(await guarded(3, ['ab', 'c']), { sent: 'abc' });
  assert.equal(await guarded(3, ['abc']), { sent: 'abc' }, 'the whole length in one piece');
  assert.equal(await guarded(0, []), { sent: '' });

  const over = await guarded(3, ['ab', 'cd']);
  assert.ok('ab'.startsWith(over.sent), 'nothing past the length');
  assert.is(over.error?.message, 'The response body stream gave more bytes than its Content-Length (3).');
  const past = await guarded(3, ['abc', 'd']);
  assert.is(past.error?.message, 'The response body stream gave more bytes than its Content-Length (3).', 'a piece after the whole length');

  const short = await guarded(5, ['ab']);
  assert.is(short.error?.message, 'The response body stream ended 3 bytes short of its Content-Length (5).');
});

test('contentLengthError says more for a size past the length, short by how much for one under it', () => {
  assert.is(contentLengthError(3, 4).message, 'The response body stream gave more bytes than its Content-Length (3).');
  assert.is(contentLengthError(3, 1).message, 'The response body stream ended 2 bytes short of its Content-Length (3).');
});

test.run();
