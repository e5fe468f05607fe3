// RFC 9112 9.3.2: a server may handle pipelined requests in parallel only when they all have safe
// methods. node:http hands each request to its listener as soon as the head is parsed, so a DELETE
// pipelined behind a PUT ran alongside it, and could be done first. Such a request is held back
// until node hands its response the connection, the responses before it having gone out whole.

import type { IncomingMessage, ServerResponse } from 'node:http';

/** RFC 9110 9.2.1: methods that change nothing on the server. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/** On a connection: the response of the latest unsafe request, while it waits or is under way. */
const unsafePending = Symbol('unsafePending');

type PipelinedSocket = { [unsafePending]?: ServerResponse | undefined };

/** Requests that were held back: nothing read their body while they waited. */
const heldBack = new WeakSet<IncomingMessage>();

/**
 * Calls `listener` for the request now, or, when an earlier request on its connection is still
 * being answered and this one or one before it is unsafe, once the answers before it have been sent;
 * then `handedOver` first, if given.
 */
export function listenInTurn<T>(
  listener: (req: IncomingMessage, res: ServerResponse, extra: T) => void,
  req: IncomingMessage,
  res: ServerResponse,
  extra: T,
  handedOver?: (req: IncomingMessage) => void,
): void {
  const socket = req.socket as PipelinedSocket;
  if (!SAFE_METHODS.has(req.method!)) {
    socket[unsafePending] = res;
    res.once('close', () => {
      if (socket[unsafePending] === res) socket[unsafePending] = undefined;
    });
  }
  // node gives a response the connection once the responses before it have finished: until then it has none.
  if (res.socket === null && socket[unsafePending] !== undefined) {
    heldBack.add(req);
    res.once('socket', () => {
      handedOver?.(req);
      listener(req, res, extra);
    });
  } else listener(req, res, extra);
}

/** Whether the request was held back behind the answers before it (see listenInTurn). */
export function wasHeldBack(req: IncomingMessage): boolean {
  return heldBack.has(req);
}
