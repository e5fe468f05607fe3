import type { ObservationBus } from './bus.js';
import { describeValue } from '../../kernel/describe-value.js';
import { isError } from '../../kernel/is-error.js';
import { LogLevel, type LogLevelName, type LogRecord } from './log-record.js';
import { templateOf } from './message-template.js';

const LEVEL_NAMES = Object.keys(LogLevel) as LogLevelName[];

/**
 * Short names users type for a level, taken where they are the usual spelling: syslog's keywords
 * (emerg, crit, err) and warn (syslog's old keyword, pino's and the console's). Names that mean
 * another scale (pino's fatal and trace) or no level (information) are refused, as Monolog does.
 */
const LEVEL_ALIASES = { EMERG: LogLevel.EMERGENCY, CRIT: LogLevel.CRITICAL, ERR: LogLevel.ERROR, WARN: LogLevel.WARNING } as const;

/** A level's name or short name (`'warning'`, `'warn'`), in any case; typed all lower, all upper or capitalised (`'Warning'`). */
export type LogLevelInput = CaseForms<LogLevelName | keyof typeof LEVEL_ALIASES>;

/** `'WARNING'`, `'warning'` and `'Warning'`: the spellings of a name in common use. */
type CaseForms<Name extends string> = Name | Lowercase<Name> | Capitalize<Lowercase<Name>>;

const VALID_LEVELS = `0-7 or ${LEVEL_NAMES.join(', ').toLowerCase()} (or ${Object.keys(LEVEL_ALIASES).join(', ').toLowerCase()})`;

/** How a Logger is made. */
export interface LoggerOptions {
  /** Where records are published. */
  bus: ObservationBus;
  /** The channel records are written under (default `app`). */
  channel?: string;
  /** The least severe level kept (default DEBUG); less severe records cost nothing. */
  level?: LogLevelInput;
  /** The request being handled, for attributing records (usually `() => requestStack.getCurrentRequest()`). */
  currentRequest?: () => object | undefined;
}

/** Context values for a message's `{placeholders}` and for the record. */
export type LogContext = Record<string, unknown>;

/**
 * A PSR-3 style logger with the eight syslog levels. Records are published on the
 * observation bus, each with the request it was written for.
 */
export class Logger {
  readonly channel: string;
  readonly #bus: ObservationBus;
  readonly #threshold: number;
  readonly #currentRequest: () => object | undefined;

  constructor(options: LoggerOptions) {
    const channel: unknown = options.channel === undefined ? 'app' : options.channel;
    // An empty channel would write records under none, which no sink or panel can tell apart.
    if (typeof channel !== 'string' || channel === '') throw new TypeError(`A logger's channel is a non-empty string ('app', 'request'), not ${describeValue(channel)}.`);
    this.channel = channel;
    this.#bus = options.bus;
    this.#threshold = toLevel(options.level ?? 'DEBUG');
    this.#currentRequest = options.currentRequest ?? (() => undefined);
  }

  /** The same logger writing under another channel. */
  withChannel(channel: string): Logger {
    return new Logger({ bus: this.#bus, channel, level: LEVEL_NAMES[this.#threshold]!, currentRequest: this.#currentRequest });
  }

  /** Whether records of this level would be kept: a level as log() takes it (`LogLevel.INFO`, `'info'`, `'warn'`). */
  isEnabled(level: number | LogLevelInput): boolean {
    return (typeof level === 'number' && level >= 0 && level <= 7 && Number.isInteger(level) ? level : levelOf(level)) <= this.#threshold;
  }

  emergency(message: string, context?: LogContext): void {
    this.log(LogLevel.EMERGENCY, message, context);
  }
  alert(message: string, context?: LogContext): void {
    this.log(LogLevel.ALERT, message, context);
  }
  critical(message: string, context?: LogContext): void {
    this.log(LogLevel.CRITICAL, message, context);
  }
  error(message: string, context?: LogContext): void {
    this.log(LogLevel.ERROR, message, context);
  }
  warning(message: string, context?: LogContext): void {
    this.log(LogLevel.WARNING, message, context);
  }
  notice(message: string, context?: LogContext): void {
    this.log(LogLevel.NOTICE, message, context);
  }
  info(message: string, context?: LogContext): void {
    this.log(LogLevel.INFO, message, context);
  }
  debug(message: string, context?: LogContext): void {
    this.log(LogLevel.DEBUG, message, context);
  }

  /**
   * Writes a record at a syslog level: a number (0 = emergency ... 7 = debug) or a level's name or
   * short name, in any case; any other level is a TypeError (PSR-3's InvalidArgumentException). A
   * message that is no string is written as its text.
   */
  log(level: number | LogLevelInput, message: string, context: LogContext = {}): void {
    const severity = typeof level === 'number' && level >= 0 && level <= 7 && Number.isInteger(level) ? level : levelOf(level);
    if (severity > this.#threshold) return;
    const text = typeof message === 'string' ? message : textOf(message);
    const interpolated = interpolate(text, context);
    const record: LogRecord = {
      time: Date.now(),
      level: severity,
      levelName: LEVEL_NAMES[severity]!,
      channel: this.channel,
      message: interpolated,
      context,
      // The message as written, when placeholders were filled: the profiler fills them again with its secrets hidden.
      template: interpolated !== text ? text : undefined,
    };
    try {
      this.#bus.emit('log', { record, request: this.#currentRequest() });
    } catch (error) {
      // A sink of the application's that throws must not make the code that logs fail (a request, a 500).
      sinkFailed(error);
    }
  }
}

/** A level given as something else than 0-7: a name or short name (any case); anything else is refused. */
function levelOf(level: unknown): number {
  const named = typeof level === 'string' ? namedLevel(level) : undefined;
  if (named === undefined) throw new TypeError(`logger.log() takes a level of ${VALID_LEVELS}, not ${describeValue(level)}.`);
  return named;
}

/** The syslog number of a level's name or short name, in any case. */
function namedLevel(name: string): number | undefined {
  const key = name.toUpperCase();
  if (Object.hasOwn(LogLevel, key)) return LogLevel[key as LogLevelName];
  if (Object.hasOwn(LEVEL_ALIASES, key)) return LEVEL_ALIASES[key as keyof typeof LEVEL_ALIASES];
  return undefined;
}

/** A message that is no string, as text (`undefined`, `123`); one whose text cannot be had, its type. */
function textOf(message: unknown): string {
  try {
    return String(message);
  } catch {
    return `[${typeof message}]`;
  }
}

let sinkFailureReported = false;

/** Says once per process, on node's warning channel, that a log sink threw (later failures go unsaid). */
function sinkFailed(error: unknown): void {
  if (sinkFailureReported) return;
  sinkFailureReported = true;
  process.emitWarning(`A log sink threw, so records may be missing from it: ${isError(error) ? stringOf(() => error.message) : textOf(error)}`, { code: 'HK_LOG_SINK_FAILED' });
}

/**
 * A record's message with its placeholders filled again, the values of the context keys
 * `isSecretKey` names written `[redacted]` (`{password}`): as the message was when none is secret or it had none.
 */
export function messageWithSecretsHidden(record: LogRecord, isSecretKey: (key: string) => boolean): string {
  const { template, context } = record;
  if (template === undefined) return record.message;
  let hidden: LogContext | undefined;
  for (const key of Object.keys(context)) {
    if (!isSecretKey(key)) continue;
    hidden ??= { ...context };
    hidden[key] = '[redacted]';
  }
  return hidden === undefined ? record.message : interpolate(template, hidden);
}

/** Replaces `{name}` placeholders with context values (PSR-3); unknown ones stay as they are. */
export function interpolate(message: string, context: LogContext): string {
  if (message.indexOf('{') === -1) return message;
  const template = templateOf(message);
  let out = template[0]!;
  for (let i = 1; i < template.length; i += 2) {
    const key = template[i]!;
    out += (has(context, key) ? placeholderValue(context, key) : `{${key}}`) + template[i + 1]!;
  }
  return out;
}

// A context that is a Proxy whose traps throw has no placeholder values.
function has(context: LogContext, key: string): boolean {
  try {
    return Object.hasOwn(context, key);
  } catch {
    return false;
  }
}

// A getter that throws leaves its placeholder unfilled rather than the log call failing.
function placeholderValue(context: LogContext, key: string): string {
  let value: unknown;
  try {
    value = context[key];
  } catch {
    return `{${key}}`;
  }
  return stringify(value);
}

// Any value a context may hold, without throwing: a log call must never fail the code that logs.
function stringify(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || typeof value === 'symbol') return String(value);
  if (typeof value === 'function') return '[object Function]';
  // Reading a Proxy may throw anywhere (instanceof calls its getPrototypeOf trap).
  try {
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
    if (isError(value)) return errorText(value);
    return JSON.stringify(value, placeholderJson) ?? `[object ${classOf(value as object, 'Object')}]`;
  } catch {
    return `[object ${classOf(value as object, 'Object')}]`;
  }
}

/**
 * An Error as its name and message (`TypeError: x`), as Symfony's Logger and Monolog write an
 * exception, by its string form; never its stack, which would put a trace in the message. A name or
 * message that is no string, or whose getter throws, is left out (the name falls back to the class).
 * A name the class inherits (`class QuotaError extends Error {}` is named "Error") gives way to the
 * class, as Symfony writes the class and the error pages show it; one the class or error sets stays.
 */
function errorText(error: Error): string {
  const name = (!namesItself(error) && classOf(error, '')) || stringOf(() => error.name) || classOf(error, 'Error');
  const message = stringOf(() => error.message);
  return message === '' ? name : `${name}: ${message}`;
}

/** Whether the error, or its class's prototype, sets its own `name` (false when reading it throws: a Proxy's trap). */
function namesItself(error: Error): boolean {
  try {
    return Object.hasOwn(error, 'name') || Object.hasOwn((error.constructor as { prototype?: object } | undefined)?.prototype ?? error, 'name');
  } catch {
    return true;
  }
}

/** A property's value when it is a string; '' when it is not or its getter throws. */
function stringOf(read: () => unknown): string {
  try {
    const value = read();
    return typeof value === 'string' ? value : '';
  } catch {
    return '';
  }
}

/** JSON.stringify's replacer for an object in a placeholder: a bigint as its digits, an Error inside as the text an Error placeholder gets (JSON has `{}` for it). */
function placeholderJson(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  return isError(value) ? errorText(value) : value;
}

function classOf(value: object, fallback: string): string {
  try {
    const name: unknown = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === 'string' && name !== '' ? name : fallback;
  } catch {
    return fallback;
  }
}

/** Whether `name` is a level's name or short name, in any case (what `toLevel()` takes). */
export function isLevelName(name: unknown): name is LogLevelInput {
  return typeof name === 'string' && namedLevel(name) !== undefined;
}

/** The names a level may be given by, for messages: `emergency, alert, ... (or emerg, crit, err, warn)`. */
export const LEVEL_NAMES_TEXT = `${LEVEL_NAMES.join(', ').toLowerCase()} (or ${Object.keys(LEVEL_ALIASES).join(', ').toLowerCase()})`;

/** Turns a level name or short name into its syslog number. */
export function toLevel(level: LogLevelInput): number {
  const value = typeof level === 'string' ? namedLevel(level) : undefined;
  if (value === undefined) throw new RangeError(`Unknown log level "${String(level)}"; use one of ${LEVEL_NAMES_TEXT}.`);
  return value;
}
