import mittImport, { type Emitter, type EventHandlerMap } from 'mitt';
import type { LogRecord } from './log-record.js';

/** A log record with the request it was written for (undefined outside any request). */
export interface LogEntry {
  record: LogRecord;
  request: object | undefined;
}

/** What flows on the observation bus. Producers emit; the profiler and sinks listen. */
export type BusEvents = {
  log: LogEntry;
  [event: string | symbol]: unknown;
};

/** The observation bus: producers (logger, listeners) never import their observers. */
export type ObservationBus = Emitter<BusEvents>;

// mitt's typings describe a CommonJS default export; loaded as ESM the import is the function itself.
const mitt = ((mittImport as unknown as { default?: unknown }).default ?? mittImport) as <E extends Record<string | symbol, unknown>>(
  all?: EventHandlerMap<E>,
) => Emitter<E>;

/** Makes a new, empty observation bus. */
export function createBus(): ObservationBus {
  return mitt<BusEvents>();
}
