import type { ObservationBus, LogEntry } from './bus.js';
import { toLevel } from './logger.js';
import { LogLevel, type LogLevelName, type LogRecord } from './log-record.js';

/** What the sink writes to: process.stderr, or any stream with a `write`. */
export interface SinkStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  /** Characters waiting to be written (a node stream's); a backlog past `maxBuffered` drops records. */
  writableLength?: number;
  on?(event: 'error' | 'drain', listener: () => void): unknown;
  once?(event: 'drain', listener: () => void): unknown;
  off?(event: 'error' | 'drain', listener: () => void): unknown;
}

/** Where and how the stderr sink writes. */
export interface StderrSinkOptions {
  /** The least severe level written (default WARNING). */
  level?: LogLevelName | Lowercase<LogLevelName>;
  /** JSON lines (default when stderr is not a TTY) or Monolog-style text lines. */
  json?: boolean;
  /** Where to write (default process.stderr). */
  stream?: SinkStream;
  /** Most characters left waiting for a slow reader before records are dropped (default 1 MiB). */
  maxBuffered?: number;
}

const DEFAULT_MAX_BUFFERED = 1024 * 1024;

/**
 * Writes log records to stderr; returns a function that detaches it from the bus. A reader that
 * has gone (EPIPE, as with `serve 2>&1 | head -1`) stops the sink rather than the process; one that
 * cannot keep up has records dropped past `maxBuffered` (memory stays bounded, the event loop is never
 * blocked), and how many is written as a WARNING of the `log` channel once it has caught up.
 */
export function attachStderrSink(bus: ObservationBus, options: StderrSinkOptions = {}): () => void {
  const stream = options.stream ?? process.stderr;
  const threshold = toLevel(options.level ?? 'WARNING');
  const format = (options.json ?? !stream.isTTY) ? formatJson : formatLine;
  const maxBuffered = options.maxBuffered ?? DEFAULT_MAX_BUFFERED;
  let closed = false;
  let dropped = 0;
  const write = (record: LogRecord): void => {
    try {
      stream.write(format(record));
    } catch {
      // A stream that throws (one of the application's) loses the record, not the code that logs.
    }
  };
  const writeDropped = (): void => {
    if (dropped === 0 || closed) return;
    const message = `stderr could not keep up: ${dropped} log records were dropped`;
    write({ time: Date.now(), level: LogLevel.WARNING, levelName: 'WARNING', channel: 'log', message, context: { dropped } });
    dropped = 0;
  };
  // Unhandled, a stream's error (EPIPE) would end the process; nothing written after it could arrive.
  const onError = (): void => {
    closed = true;
  };
  const handler = ({ record }: LogEntry): void => {
    if (record.level > threshold || closed) return;
    if ((stream.writableLength ?? 0) > maxBuffered) {
      if (dropped++ === 0) stream.once?.('drain', writeDropped);
      return;
    }
    writeDropped();
    write(record);
  };
  stream.on?.('error', onError);
  bus.on('log', handler);
  return () => {
    bus.off('log', handler);
    stream.off?.('error', onError);
    stream.off?.('drain', writeDropped);
  };
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
