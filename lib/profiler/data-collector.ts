import type { Request, Response } from '../../kernel/index.js';
import type { Profile } from './profile.js';

/** What a collector is given about one request. */
export interface CollectContext {
  request: Request;
  /** The response; at kernel.terminate, for a sub-request, a copy of its status and headers as they were at the profiler's kernel.response listener (its parent may send it on, changed). */
  response: Response;
  /** The error that escaped while handling the request, if any. */
  error: unknown;
  /** Whether an error escaped: `error` alone cannot say so when the value thrown was `undefined` or `null`. */
  failed?: boolean;
  requestType: 'main' | 'sub';
  /** Epoch milliseconds when the request began. */
  startTime: number;
  /** `performance.now()` when the request began, to place timeline entries. */
  startNow: number;
  /** `performance.now()` when the response was ready. */
  endNow: number;
}

/**
 * Gathers one panel's data for the profiler. `lateCollect` runs at `kernel.terminate`, after the
 * response is sent, and its data is serialised at once: the place for nearly everything (the
 * request and response are still there, and so are the logs and the listener trace). `collect`,
 * when there is one, runs on `kernel.response`, for what is gone by then; whatever it returns
 * stays alive until the request terminates (and is what `lateCollect` gets, or is stored as it is
 * when there is no `lateCollect`), so keep it small. Data is JSON-serialisable. `present` runs
 * when someone reads the profile (its panel page or JSON): what can be worked out from the stored
 * data belongs there, not on every request — the timeline from the listener trace, the router's
 * verdict on each route. The steps are synchronous: a collector that throws, or returns a promise,
 * costs its profile (dropped and logged), never the request.
 */
export interface DataCollector {
  readonly name: string;
  collect?(context: CollectContext): unknown;
  lateCollect?(context: CollectContext, collected: unknown): unknown;
  /**
   * True when `lateCollect` only reads, and may also run for a provisional view of a request that
   * is answered but not terminated yet (the toolbar or a panel asked while a stream is still being
   * sent). Otherwise it runs once, at kernel.terminate, and such a view shows what `collect` gathered.
   */
  readonly provisional?: boolean;
  /**
   * The data as pages and tools see it, as JSON (no BigInt, no cycle; synchronous); gets this collector's
   * stored data and the whole profile. When it throws or answers what JSON cannot write, the stored data is shown.
   */
  present?(data: unknown, profile: Profile): unknown;
}
