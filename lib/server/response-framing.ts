import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, type TransformCallback } from 'node:stream';
import { headBodyLength, type Response } from '../../kernel/index.js';
import { describeValue } from '../../kernel/describe-value.js';

/** A Transfer-Encoding whose last coding is chunked (RFC 9112 6.1: the only one that delimits a body). */
const ENDS_CHUNKED = /(?:^|,)[ \t]*chunked[ \t]*$/i;
const CLOSE_TOKEN = /(?:^|,)[ \t]*close[ \t]*(?:,|$)/i;
const DIGITS = /^\d+$/;

/**
 * Fits the framing headers of `response` to its body and to the connection, before its head is
 * written, so a client always finds where the body ends and never reads one answer into the next
 * (RFC 9112 6). A controller or a late kernel.response listener may leave them wrong; node:http
 * writes whatever it is given.
 * - Connection and Keep-Alive are the server's: a response may ask to close, never to keep open a
 *   connection the server closes (a body left unread, HTTP/1.0, shutdown), nor announce a timeout
 *   the server does not keep.
 * - No Transfer-Encoding nor Content-Length on 204 and 304 (and HEAD keeps what GET would send).
 * - Transfer-Encoding must end with chunked (another coding leaves the body undelimited; compressed
 *   content is Content-Encoding), is never sent with Content-Length, nor to an HTTP/1.0 client
 *   (which gets a text body's length instead, for HEAD too: headBodyLength()).
 * - A string or bytes body goes with its own length, whatever Content-Length says.
 * Returns the Content-Length a stream body is held to, or -1 when it has none.
 * Throws a TypeError (the adapter's 500) for what no framing can send.
 */
export function frameResponse(req: IncomingMessage, res: ServerResponse, response: Response): number {
  const headers = response.headers;
  foldFramingNames(headers);
  if (headers.connection !== undefined || headers['keep-alive'] !== undefined) {
    if (CLOSE_TOKEN.test(String(headers.connection))) res.shouldKeepAlive = false;
    delete headers.connection;
    delete headers['keep-alive'];
  }
  if (response.isEmpty()) {
    delete headers['transfer-encoding'];
    delete headers['content-length'];
    return -1;
  }
  const codings = headers['transfer-encoding'];
  if (codings !== undefined) {
    checkTransferEncoding(codings);
    if (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
      delete headers['content-length'];
      return -1;
    }
    delete headers['transfer-encoding'];
    // Unchunked, a GET's text goes with its length (below): a HEAD's, whose text the kernel took, with the same (RFC 9110 9.3.2).
    const length = req.method === 'HEAD' && response.body === null ? headBodyLength(response) : undefined;
    if (length !== undefined) headers['content-length'] = String(length);
  }
  const body = response.body;
  const isHead = req.method === 'HEAD';
  if (typeof body === 'string' || body instanceof Uint8Array) {
    // HEAD answers with GET's length, which a HEAD controller may give without the body.
    if (isHead && body.length === 0 && headers['content-length'] !== undefined) return -1;
    const length = String(typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength);
    if (headers['content-length'] !== length) headers['content-length'] = length;
    return -1;
  }
  const declared = headers['content-length'];
  if (declared === undefined) {
    if (body === null && !isHead) headers['content-length'] = '0';
    return -1;
  }
  checkDeclaredLength(declared);
  if (body === null && !isHead) {
    headers['content-length'] = '0';
    return -1;
  }
  return isHead ? -1 : Number(declared);
}

/**
 * Throws what frameResponse throws for a response no framing can send (a Transfer-Encoding that
 * does not end with chunked, a stream's Content-Length that is no number), its framing headers'
 * names folded to lower case as frameResponse folds them: inject() answers it as the server does.
 */
export function checkFraming(response: Response): void {
  const headers = response.headers;
  foldFramingNames(headers);
  if (response.isEmpty()) return;
  const codings = headers['transfer-encoding'];
  if (codings !== undefined) return checkTransferEncoding(codings);
  const body = response.body;
  if (typeof body !== 'string' && !(body instanceof Uint8Array) && headers['content-length'] !== undefined) checkDeclaredLength(headers['content-length']);
}

function checkTransferEncoding(codings: string | string[]): void {
  if (Array.isArray(codings) || !ENDS_CHUNKED.test(codings)) {
    throw new TypeError(`A response's Transfer-Encoding ends with chunked (node:http adds it to a stream body itself), not "${String(codings)}": a compressed body is sent with Content-Encoding.`);
  }
}

function checkDeclaredLength(declared: string | string[]): void {
  if (typeof declared !== 'string' || !DIGITS.test(declared)) {
    throw new TypeError(`A response's Content-Length is a number of bytes, not ${JSON.stringify(declared)}.`);
  }
}

/** The headers frameResponse decides, by their lower-case names. */
const FRAMING_NAMES: ReadonlySet<string> = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive']);
const UPPER_CASE = /[A-Z]/;

/**
 * Moves a framing header written in another case (`headers['Content-Length'] = ...` on the plain
 * record) to its lower-case name, beside a value there (node:http would send both), so that no rule
 * above is passed by: a `Content-Length` left alone went out beside the body's own, or alone before a longer stream.
 */
function foldFramingNames(headers: Response['headers']): void {
  for (const name in headers) {
    if (!UPPER_CASE.test(name)) continue;
    const lower = name.toLowerCase();
    if (!FRAMING_NAMES.has(lower)) continue;
    const value = headers[name]!;
    const current = headers[lower];
    headers[lower] = current === undefined ? value : ([] as string[]).concat(current, value);
    delete headers[name];
  }
}

/**
 * Passes a stream body on while it keeps to its declared Content-Length, and fails (the adapter
 * then cuts the connection) at the first piece beyond it or at an end short of it: the client gets
 * at most the declared length and then the connection's end, never the rest of one answer read as
 * the next.
 */
export class ContentLengthGuard extends Transform {
  #left: number;

  constructor(readonly declared: number) {
    super();
    this.#left = declared;
  }

  override _transform(chunk: Buffer | string, encoding: BufferEncoding, callback: TransformCallback): void {
    const size = typeof chunk === 'string' ? Buffer.byteLength(chunk, encoding) : chunk.byteLength;
    if (size > this.#left) {
      callback(contentLengthError(this.declared, this.declared - this.#left + size));
      return;
    }
    this.#left -= size;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    if (this.#left > 0) callback(contentLengthError(this.declared, this.declared - this.#left));
    else callback();
  }
}

/** Why a stream body that gave `size` bytes breaks its declared Content-Length: what the guard fails with (inject() too). */
export function contentLengthError(declared: number, size: number): RangeError {
  return size > declared
    ? new RangeError(`The response body stream gave more bytes than its Content-Length (${declared}).`)
    : new RangeError(`The response body stream ended ${declared - size} bytes short of its Content-Length (${declared}).`);
}

/**
 * Passes on an object-mode stream body's chunks that are text or bytes, and fails (the adapter then
 * cuts the connection; a first chunk is checked before the head, see sendWith) at the first that is not: node:http's write() would throw it out of the pipe,
 * where nothing catches it, and the process would end.
 */
export class ChunkTypeGuard extends Transform {
  constructor() {
    // One chunk taken at a time, whatever its size: an object-mode buffer counts chunks, not bytes,
    // and the default 16 of a generator's 8 MiB pieces would be held for each client that reads slowly.
    super({ writableObjectMode: true, writableHighWaterMark: 1 });
  }

  override _transform(chunk: unknown, encoding: BufferEncoding, callback: TransformCallback): void {
    const error = chunkTypeError(chunk);
    if (error === undefined) callback(null, chunk);
    else callback(error);
  }
}

/** Why a stream body's chunk cannot be sent (it is no text nor bytes), or undefined: what the guard fails with (inject() too). */
export function chunkTypeError(chunk: unknown): TypeError | undefined {
  if (typeof chunk === 'string' || chunk instanceof Uint8Array) return undefined;
  return new TypeError(`A response body stream gives text or bytes, not ${describeValue(chunk)} (an object-mode stream's chunks are sent as they are).`);
}
