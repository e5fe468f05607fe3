/** Syslog severities (RFC 5424): lower is more severe. */
export const LogLevel = {
  EMERGENCY: 0,
  ALERT: 1,
  CRITICAL: 2,
  ERROR: 3,
  WARNING: 4,
  NOTICE: 5,
  INFO: 6,
  DEBUG: 7,
} as const;

/** One of the eight syslog level names. */
export type LogLevelName = keyof typeof LogLevel;

/** One log record, as published on the observation bus and kept for the debug pages. */
export interface LogRecord {
  /** Epoch milliseconds (with sub-millisecond precision when available). */
  time: number;
  level: number;
  levelName: LogLevelName;
  channel: string;
  /** The message with `{placeholders}` already interpolated from the context. */
  message: string;
  context: Record<string, unknown>;
  /** The message as written, with its `{placeholders}`: only when they were filled (the profiler fills them again, secrets hidden). */
  template?: string | undefined;
}
