import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { describeDuration } from './describe-duration.js';
import { ClientClosedError, RequestTimeoutHttpError } from './http-errors.js';

/**
 * The 408 for a request whose connection the server cut for taking too long, or undefined when the
 * server did not say so on the connection: node destroys it with an ERR_HTTP_REQUEST_TIMEOUT error at
 * its request timeout (and so does startServers once it has answered the 408), a server of its own with
 * the RequestTimeoutHttpError it means (startServers's idle timeout, the node adapter's at `server.timeout`).
 * For the body's reader and for servers (not in index.ts); `cause`: what the read failed with.
 */
export function requestTimeoutCut(message: IncomingMessage, cause?: unknown): RequestTimeoutHttpError | undefined {
  const socket = message.socket as (Socket & { errored?: { code?: unknown } | null; server?: { requestTimeout?: unknown } }) | null;
  const errored = socket?.errored;
  if (errored instanceof RequestTimeoutHttpError) return new RequestTimeoutHttpError(errored.message, { cause: cause ?? errored });
  if (errored?.code !== 'ERR_HTTP_REQUEST_TIMEOUT') return undefined;
  const timeout = socket!.server?.requestTimeout;
  return new RequestTimeoutHttpError(`The request body did not arrive within the request timeout${typeof timeout === 'number' && timeout > 0 ? ` (${describeDuration(timeout)})` : ''}.`, { cause: cause ?? errored });
}

/**
 * Why a request's connection closed before its answer went out: the server's request timeout when
 * it cut a body that stalled and answered the 408 itself (see requestTimeoutCut), which the request
 * then ends as; otherwise the client leaving (a 499).
 */
export function connectionClosedError(message: IncomingMessage): RequestTimeoutHttpError | ClientClosedError {
  return requestTimeoutCut(message) ?? new ClientClosedError();
}
