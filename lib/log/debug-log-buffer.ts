import { Request, RequestSlot } from '../../kernel/request.js';
import type { LogEntry, ObservationBus } from './bus.js';
import { countedLevel } from './counted-level.js';
import type { LogRecord } from './log-record.js';

/**
 * Keeps each request's log records (debug mode), for the debug error page and the
 * profiler. Records are held by the request itself (a RequestSlot), so they go when the request goes.
 */
export class DebugLogBuffer {
  readonly #records = new RequestSlot<LogRecord[]>();
  /** Records of a request past maxPerRequest: counted, so that the pages can say so. */
  readonly #dropped = new RequestSlot<number>();
  /** The same records by level (the index), so that an error among them still counts as one. */
  readonly #droppedLevels = new RequestSlot<number[]>();
  readonly #maxPerRequest: number;
  readonly #handler = ({ record, request }: LogEntry): void => {
    if (!(request instanceof Request)) return;
    const records = this.#records.get(request);
    if (records === undefined) this.#records.set(request, [record]);
    else if (records.length < this.#maxPerRequest) records.push(record);
    else {
      this.#dropped.set(request, (this.#dropped.get(request) ?? 0) + 1);
      let levels = this.#droppedLevels.get(request);
      if (levels === undefined) this.#droppedLevels.set(request, (levels = []));
      // A level no name has (another producer's record on the bus: a bridged logger's 50) is INFO, as presentLogger names it; a number as index would grow the list to it (2 ** 32 - 2 ran the process out of memory).
      const level = countedLevel(record.level);
      levels[level] = (levels[level] ?? 0) + 1;
    }
  };

  constructor(
    readonly bus: ObservationBus,
    options: { maxPerRequest?: number } = {},
  ) {
    this.#maxPerRequest = options.maxPerRequest ?? 1000;
    bus.on('log', this.#handler);
  }

  /** The records written while handling this request (not its sub-requests). */
  getLogs(request: object): readonly LogRecord[] {
    return request instanceof Request ? (this.#records.get(request) ?? []) : [];
  }

  /** How many records this request wrote past the most a request keeps (`maxPerRequest`, 1,000 by default): counted, not kept. */
  droppedCount(request: object): number {
    return request instanceof Request ? (this.#dropped.get(request) ?? 0) : 0;
  }

  /** droppedCount() by level: at each level's number (`[LogLevel.ERROR]`) how many of it were dropped; empty where none. */
  droppedByLevel(request: object): readonly (number | undefined)[] {
    return (request instanceof Request ? this.#droppedLevels.get(request) : undefined) ?? [];
  }

  /** The records of several requests (a request and its sub-requests), in time order. */
  getLogsOf(requests: Iterable<object>): LogRecord[] {
    const all: LogRecord[] = [];
    for (const request of requests) all.push(...this.getLogs(request));
    return all.sort((a, b) => a.time - b.time);
  }

  /** Stops collecting. */
  detach(): void {
    this.bus.off('log', this.#handler);
  }
}
