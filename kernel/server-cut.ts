import { maxHeaderSize as NODE_MAX_HEADER_SIZE, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { describeDuration } from './describe-duration.js';
import { ClientClosedError, HttpError, MalformedRequestError, PayloadTooLargeHttpError, RequestHeaderFieldsTooLargeHttpError, RequestTimeoutHttpError } from './http-errors.js';

/** What a connection is destroyed with when node's HTTP parser refused what came on it (`HPE_INVALID_CHUNK_SIZE`, `Invalid character in chunk size`). */
type ParserError = { code?: unknown; reason?: unknown };

/**
 * The error a request ends as when the server cut its connection with an answer of its own, or
 * undefined when the server did not say so on the connection. At its request timeout node destroys
 * it with an ERR_HTTP_REQUEST_TIMEOUT error (and so does startServers once it has answered the 408),
 * a server of its own with the RequestTimeoutHttpError it means (startServers's idle timeout, the node
 * adapter's at `server.timeout`): a 408. startServers, as node's own server, destroys it with node's
 * parser error when the parser refused the body (a malformed chunk, chunk extensions over node's
 * limit, trailer fields over the head limit) and answered that: a 400, 413 or 431 with the parser's
 * reason, not a client that closed the connection.
 * For the body's reader and for servers (not in index.ts); `cause`: what the read failed with.
 */
export function serverCut(message: IncomingMessage, cause?: unknown): HttpError | MalformedRequestError | undefined {
  const socket = message.socket as (Socket & { errored?: ParserError | null; server?: { requestTimeout?: unknown; maxHeaderSize?: unknown } }) | null;
  const errored = socket?.errored;
  if (errored instanceof RequestTimeoutHttpError) return new RequestTimeoutHttpError(errored.message, { cause: cause ?? errored });
  if (errored?.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    const timeout = socket!.server?.requestTimeout;
    return new RequestTimeoutHttpError(`The request body did not arrive within the request timeout${typeof timeout === 'number' && timeout > 0 ? ` (${describeDuration(timeout)})` : ''}.`, { cause: cause ?? errored });
  }
  // `Invalid EOF state` is the client ending the connection mid-body: its leaving, as it is to node's own server.
  if (typeof errored?.code !== 'string' || !errored.code.startsWith('HPE_') || errored.code === 'HPE_INVALID_EOF_STATE' || typeof errored.reason !== 'string') return undefined;
  // The parser's reasons are fixed texts, never the client's bytes.
  const why = `${errored.reason} (${errored.code}); the connection was closed.`;
  // Trailer fields over maxHeaderSize (node counts them apart from the head): the client got the 431 of a head too large, whose limit the log names too.
  if (errored.code === 'HPE_HEADER_OVERFLOW') {
    const limit = socket!.server?.maxHeaderSize;
    const reason = trailerFieldsTooLarge(typeof limit === 'number' && limit > 0 ? limit : NODE_MAX_HEADER_SIZE);
    return new RequestHeaderFieldsTooLargeHttpError(`${reason.slice(0, -1)}: ${why}`, { cause: cause ?? errored });
  }
  const text = `The request body is malformed: ${why}`;
  if (errored.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return new PayloadTooLargeHttpError(text, { cause: cause ?? errored });
  return new MalformedRequestError(text, { cause: cause ?? errored });
}

/**
 * What a request is told whose trailer fields (after its chunked body) are over the server's `maxHeaderSize`,
 * which node counts apart from the head: the answer's text, which the log record of the request's 431 gives too.
 */
export function trailerFieldsTooLarge(maxHeaderSize: number): string {
  return `The request's trailer fields (after its chunked body) are larger than ${maxHeaderSize} bytes.`;
}

/**
 * Why a request's connection closed before its answer went out: the server's own answer when it cut
 * the connection (see serverCut: a body that stalled, or that the parser refused), which the request
 * then ends as; otherwise the client leaving (a 499).
 */
export function connectionClosedError(message: IncomingMessage): HttpError | MalformedRequestError {
  return serverCut(message) ?? new ClientClosedError();
}
