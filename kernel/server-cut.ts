import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { describeDuration } from './describe-duration.js';
import { ClientClosedError, HttpError, MalformedRequestError, PayloadTooLargeHttpError, RequestTimeoutHttpError } from './http-errors.js';

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
  const socket = message.socket as (Socket & { errored?: ParserError | null; server?: { requestTimeout?: unknown } }) | null;
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
  // Trailer fields over maxHeaderSize (node counts them apart from the head): the client got the 431 of a head too large.
  if (errored.code === 'HPE_HEADER_OVERFLOW') return new HttpError(431, `The request's trailer fields are too large: ${why}`, { code: 'HK_REQUEST_HEADER_FIELDS_TOO_LARGE', cause: cause ?? errored });
  const text = `The request body is malformed: ${why}`;
  if (errored.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW') return new PayloadTooLargeHttpError(text, { cause: cause ?? errored });
  return new MalformedRequestError(text, { cause: cause ?? errored });
}

/**
 * Why a request's connection closed before its answer went out: the server's own answer when it cut
 * the connection (see serverCut: a body that stalled, or that the parser refused), which the request
 * then ends as; otherwise the client leaving (a 499).
 */
export function connectionClosedError(message: IncomingMessage): HttpError | MalformedRequestError {
  return serverCut(message) ?? new ClientClosedError();
}
