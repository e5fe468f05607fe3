/**
 * What a log line says about the request a record was written for (Monolog's WebProcessor,
 * pino-http's `req`): enough to find the request, and in debug mode its profile, never its headers.
 */
export interface RequestDescription {
  /** The method, upper-case. */
  method?: string;
  /** The path and query string as received (still percent-encoded). */
  path?: string;
  /** The client's IP (a trusted proxy's X-Forwarded-For honoured). */
  ip?: string;
  /** The profiler's token for this request (its X-Debug-Token): the profile is at `/_profiler/<token>`. */
  token?: string;
  /** True for a sub-request (the error page's, a forward). */
  sub?: boolean;
  /** A sub-request's main request's token: the X-Debug-Token of the response the client got. */
  mainToken?: string;
}

/** Describes the request of a log entry (`LogEntry.request`); undefined when it cannot say. */
export type RequestDescriber = (request: object) => RequestDescription | undefined;
