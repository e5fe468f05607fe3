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
  return `${safeJson({ time: new Date(record.time).toISOString(), level: record.levelName.toLowerCase(), channel: record.channel, message: record.message, context: record.context })}\n`;
}

/** `[2026-11-21T21:40:54.123Z] request.ERROR: message {"context":1}` */
export function formatLine(record: LogRecord): string {
  const context = Object.keys(record.context).length > 0 ? ` ${safeJson(record.context)}` : '';
  return `[${new Date(record.time).toISOString()}] ${record.channel}.${record.levelName}: ${record.message}${context}\n`;
}

function safeJson(value: unknown): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof Error) return { class: v.constructor.name, message: v.message };
    if (typeof v === 'bigint') return v.toString();
    if (v !== null && typeof v === 'object') {
      if (seen.has(v)) return '[circular]';
      seen.add(v);
    }
    return v;
  });
}
