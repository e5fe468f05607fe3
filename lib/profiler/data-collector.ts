import type { Request, Response } from '../../kernel/index.js';

/** What a collector is given about one request. */
export interface CollectContext {
  request: Request;
  response: Response;
  /** The error that escaped while handling the request, if any. */
  error: unknown;
  requestType: 'main' | 'sub';
  /** Epoch milliseconds when the request began. */
  startTime: number;
  /** `performance.now()` when the request began, to place timeline entries. */
  startNow: number;
  /** `performance.now()` when the response was ready. */
  endNow: number;
}

/**
 * Gathers one panel's data for the profiler. `collect` runs on `kernel.response`
 * and must be cheap; `lateCollect` runs after the response is sent, before saving
 * (the place for anything that happens late or costs more: logs, timeline).
 * Both return JSON-serialisable data.
 */
export interface DataCollector {
  readonly name: string;
  collect(context: CollectContext): unknown;
  lateCollect?(context: CollectContext, collected: unknown): unknown;
}
