import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { describeDuration } from './describe-duration.js';
import { ClientClosedError, MalformedRequestError, PayloadTooLargeHttpError, RequestTimeoutHttpError } from './http-errors.js';

/** What a connection is destroyed with when node's HTTP parser refused what came on it (`HPE_INVALID_CHUNK_SIZE`, `Invalid character in chunk size`). */
type ParserError = { code?: unknown; reason?: unknown };

/**
 * The error a request ends as when the server cut its connection with an answer of its own, or
 * undefined when the server did not say so on the connection. At its request timeout node destroys
 * it with an ERR_HTTP_REQUEST_TIMEOUT error (and so does startServers once it has answered the 408),
 * a server of its own with the RequestTimeoutHttpError it means (startServers's idle timeout, the node
 * adapter's at `server.timeout`): a 408. startServers, as node's own server, destroys it with node's
 * parser error when the parser refused the body (a malformed chunk, chunk extensions over node's
 * limit) and answered that: a 400 or 413 with the parser's reason, not a client that closed the connection.
 * For the body's reader and for servers (not in index.ts); `cause`: what the read failed with.
 */
export function serverCut(message: IncomingMessage, cause?: unknown): RequestTimeoutHttpError | MalformedRequestError | PayloadTooLargeHttpError | undefined {
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
  const text = `The request body is malformed: ${errored.reason} (${errored.code}); the connection was closed.`;
  return errored.code === 'HPE_CHUNK_EXTENSIONS_OVERFLOW' ? new PayloadTooLargeHttpError(text, { cause: cause ?? errored }) : new MalformedRequestError(text, { cause: cause ?? errored });
}

/**
 * Why a request's connection closed before its answer went out: the server's own answer when it cut
 * the connection (see serverCut: a body that stalled, or that the parser refused), which the request
 * then ends as; otherwise the client leaving (a 499).
 */
export function connectionClosedError(message: IncomingMessage): RequestTimeoutHttpError | MalformedRequestError | PayloadTooLargeHttpError | ClientClosedError {
  return serverCut(message) ?? new ClientClosedError();
}
