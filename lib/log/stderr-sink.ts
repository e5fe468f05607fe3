import type { ObservationBus, LogEntry } from './bus.js';
import { toLevel } from './logger.js';
import type { LogLevelName, LogRecord } from './log-record.js';

/** Where and how the stderr sink writes. */
export interface StderrSinkOptions {
  /** The least severe level written (default WARNING). */
  level?: LogLevelName | Lowercase<LogLevelName>;
  /** JSON lines (default when stderr is not a TTY) or Monolog-style text lines. */
  json?: boolean;
  /** Where to write (default process.stderr). */
  stream?: { write(chunk: string): unknown; isTTY?: boolean };
}

/** Writes log records to stderr; returns a function that detaches it from the bus. */
export function attachStderrSink(bus: ObservationBus, options: StderrSinkOptions = {}): () => void {
  const stream = options.stream ?? process.stderr;
  const threshold = toLevel(options.level ?? 'WARNING');
  const json = options.json ?? !stream.isTTY;
  const handler = ({ record }: LogEntry): void => {
    if (record.level > threshold) return;
    stream.write(json ? formatJson(record) : formatLine(record));
  };
  bus.on('log', handler);
  return () => bus.off('log', handler);
}

/** One JSON line per record. */
export function formatJson(record: LogRecord): string {
  const line = (context: unknown): string =>
    safeJson({ time: new Date(record.time).toISOString(), level: record.levelName.toLowerCase(), channel: record.channel, message: record.message, context });
  try {
    return `${line(record.context)}\n`;
  } catch (error) {
    return `${line(unwritable(error))}\n`;
  }
}

/** `[2026-11-21T21:40:54.123Z] request.ERROR: message {"context":1}` */
export function formatLine(record: LogRecord): string {
  let context = '';
  if (Object.keys(record.context).length > 0) {
    try {
      context = ` ${safeJson(record.context)}`;
    } catch (error) {
      context = ` ${unwritable(error)}`;
    }
  }
  return `[${new Date(record.time).toISOString()}] ${record.channel}.${record.levelName}: ${record.message}${context}\n`;
}

/** What stands for a context that JSON.stringify threw on (a throwing getter or toJSON): the record is still written. */
function unwritable(error: unknown): string {
  let reason: string;
  try {
    reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  } catch {
    reason = 'unknown error';
  }
  return `[context that cannot be written as JSON: ${reason}]`;
}

// JSON with errors as their class and message, bigints as text, and a cycle (an object inside
// itself) as "[circular]"; an object met twice elsewhere is written both times.
function safeJson(value: unknown): string {
  const ancestors: unknown[] = [];
  return JSON.stringify(value, function (this: unknown, _key: string, v: unknown) {
    if (v instanceof Error) return { class: v.constructor?.name ?? 'Error', message: v.message };
    if (typeof v === 'bigint') return v.toString();
    if (v !== null && typeof v === 'object') {
      // `this` holds v: the objects entered after it are finished.
      while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop();
      if (ancestors.includes(v)) return '[circular]';
      ancestors.push(v);
    }
    return v;
  });
}
