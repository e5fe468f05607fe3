import type { Request, RequestBodySource } from './request.js';
import type { RequestStack } from './request-stack.js';

/** Ways into a Request's private state for the kernel's own files (not in index.ts); Request's static block sets them. */
export const requestInternals: {
  /** The request is done (kernel.terminate has run): its signal stops following the caller's. */
  endSignalFollowing: (request: Request) => void;
  /** The request is being handled as a main request with `stack`: its signal's abort listeners run with it current (see Request.signal). */
  handledWith: (request: Request, stack: RequestStack) => void;
  /** The request is being handled as a main request: its duplicates are counted from it (depth 0), whatever it was duplicated from. */
  handledAsMain: (request: Request) => void;
  /** How many duplicate() steps the request is from its main request: how deep a sub-request is when the stack does not track it. */
  duplicateDepth: (request: Request) => number;
  /** The request `depth` duplicate() steps from its main request, on the chain that made `request` (itself when no deeper). */
  duplicatedAt: (request: Request, depth: number) => Request;
  /** The request stands for bytes a client sent (inject()'s): its body is held to the Transfer-Encoding rules of one from a socket when read. */
  sentAsByClient: (request: Request) => void;
  /** The body the request was made with, not yet read (a json init's as Request.create() wrote it), or null: inject() holds that very text to its Content-Length. */
  unreadBody: (request: Request) => RequestBodySource;
  /** Who is told of a record kept under the main request once its server has terminated it (see onLateRecords()), or undefined. */
  lateRecords: (request: Request) => ((request: Request) => void) | undefined;
  /** Sets who lateRecords() answers: a field of the request, as every request served gets one (GET /health too), which costs it no allocation. */
  setLateRecords: (request: Request, said: (request: Request) => void) => void;
} = {
  endSignalFollowing: () => {},
  handledWith: () => {},
  handledAsMain: () => {},
  duplicateDepth: () => 0,
  duplicatedAt: (request) => request,
  sentAsByClient: () => {},
  unreadBody: () => null,
  lateRecords: () => undefined,
  setLateRecords: () => {},
};
