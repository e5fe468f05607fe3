import { writeSync } from 'node:fs';
import { describeValue } from '../../kernel/describe-value.js';
import { errorShape } from '../../kernel/error-fields.js';
import { isError } from '../../kernel/is-error.js';
import type { ObservationBus, LogEntry } from './bus.js';
import { messageWithSecretsHidden, toLevel, type LogLevelInput } from './logger.js';
import { LogLevel, type LogRecord } from './log-record.js';
import type { RequestDescriber, RequestDescription } from './request-description.js';

/** What the sink writes to: process.stderr, or any stream with a `write`. */
export interface SinkStream {
  write(chunk: string, callback?: (error?: Error | null) => void): unknown;
  isTTY?: boolean;
  /** The stream's descriptor when it is a file (process.stderr redirected to one): written directly once the stream has failed, while the stream still has it. */
  fd?: number;
  /** Characters waiting to be written (a node stream's); a backlog past `maxBuffered` drops records. */
  writableLength?: number;
  on?(event: 'error' | 'drain', listener: () => void): unknown;
  once?(event: 'drain', listener: () => void): unknown;
  off?(event: 'error' | 'drain', listener: () => void): unknown;
}

/**
 * Hides secrets in the lines written (createKernel gives the profiler's Redactor, which fits):
 * `key=value` pairs with a secret key in free text and in a URL's query.
 */
export interface LogRedaction {
  /** Whether a context key names a secret: its value is written as `[redacted]`. */
  isSecretKey(key: string): boolean;
  /** Free text (the message, a string in the context) with the values of its secret `key=value` pairs hidden. */
  text(text: string): string;
  /** A path and query with the values of its secret parameters hidden. */
  url(url: string): string;
}

/** What a secret's value is written as. */
const REDACTED = '[redacted]';

/** Where and how the stderr sink writes. */
export interface StderrSinkOptions {
  /** The least severe level written (default WARNING). */
  level?: LogLevelInput;
  /** JSON lines (default when stderr is not a TTY) or Monolog-style text lines. */
  json?: boolean;
  /** Where to write (default process.stderr). */
  stream?: SinkStream;
  /** Most characters left waiting for a slow reader before records are dropped, a whole number from 0 (another is a TypeError; default 1 MiB). */
  maxBuffered?: number;
  /**
   * Says which request a record was written for (createKernel gives its app's `describeRequest`):
   * called only for records written, and never for those without a request. Without it, lines say nothing of the request.
   */
  describeRequest?: RequestDescriber;
  /**
   * Hides secrets in the lines (createKernel gives the profiler's rules, `profiler.redaction`): the
   * values of secret context keys, secret `key=value` pairs in the message, in the context's strings
   * and in the request's query. Without it, lines are written as logged.
   */
  redaction?: LogRedaction;
}

const DEFAULT_MAX_BUFFERED = 1024 * 1024;

/**
 * Writes log records to stderr; returns a function that detaches it from the bus. A reader that
 * has gone (EPIPE, as with `serve 2>&1 | head -1`) stops the sink rather than the process; one that
 * cannot keep up has records dropped past `maxBuffered` (memory stays bounded), and how many is
 * written as a WARNING of the `log` channel once it has caught up. A pipe is written asynchronously;
 * node writes a file or a terminal synchronously, so a terminal whose reader has stalled (Ctrl-S, a
 * frozen ssh session) blocks the process until it reads again. A file that failed (a full disk) is
 * written to its descriptor from then on, so logging resumes once there is room, with a count of what was lost;
 * a stream that closes its file when it fails (fs.createWriteStream) stops the sink instead.
 */
export function attachStderrSink(bus: ObservationBus, options: StderrSinkOptions = {}): () => void {
  const stream = options.stream ?? process.stderr;
  const threshold = toLevel(options.level ?? 'WARNING');
  const format = (options.json ?? !stream.isTTY) ? formatJson : formatLine;
  const maxBuffered = options.maxBuffered ?? DEFAULT_MAX_BUFFERED;
  // Compared with the backlog: NaN (or '1mb') never is, so nothing would ever be dropped; a negative one drops every record.
  if (!Number.isSafeInteger(maxBuffered) || maxBuffered < 0) throw new TypeError(`maxBuffered is a whole number of characters, 0 or more, not ${describeValue(maxBuffered)}.`);
  const describe = options.describeRequest;
  const redaction = options.redaction;
  let closed = false;
  let dropped = 0;
  let waitingForDrain = false;
  // Node keeps a stream that failed once (ENOSPC on a full disk) failed for good: the sink then writes
  // to its file descriptor itself, so that logging resumes once there is room again.
  let fd: number | undefined;
  // Records lost to write errors since the last write that went through, and why; whether a line may have been cut.
  let lost = 0;
  let lostReason = '';
  let cut = false;
  // After an error: EPIPE (the reader is gone) or a stream without a descriptor stops the sink; any other (ENOSPC) moves it to the descriptor.
  const failed = (error: unknown): void => {
    if (fd !== undefined || closed) return;
    const code = (error as { code?: unknown } | null)?.code;
    if (code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED' || typeof stream.fd !== 'number') closed = true;
    else {
      fd = stream.fd;
      cut = true;
    }
  };
  const writeToFd = (text: string): void => {
    // A stream that closed its file when it failed (fs.createWriteStream) no longer has it: its number may be another file's now.
    if (stream.fd !== fd) {
      closed = true;
      return;
    }
    const note =
      lost > 0
        ? format({ time: Date.now(), level: LogLevel.WARNING, levelName: 'WARNING', channel: 'log', message: `stderr could not be written (${lostReason}): ${lost} log records were lost`, context: { lost, reason: lostReason } })
        : '';
    // A newline first ends the line a failure cut in the middle.
    const head = `${cut ? '\n' : ''}${note}`;
    const whole = Buffer.from(`${head}${text}`);
    let buffer = whole;
    const length = buffer.length;
    try {
      while (buffer.length > 0) buffer = buffer.subarray(writeSync(fd!, buffer));
      lost = 0;
      cut = false;
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (code === 'EPIPE' || code === 'EBADF') closed = true;
      // A count written whole (a full disk takes what fits, then fails) has been said: only this record is lost since.
      if (length - buffer.length >= Buffer.byteLength(head)) lost = 0;
      lost++;
      lostReason = typeof code === 'string' ? code : 'error';
      // A line is cut when what went out ends inside one: not when it ends with the count, or with the newline before it.
      if (buffer.length < length) cut = whole[length - buffer.length - 1] !== 0x0a;
    }
  };
  const write = (record: LogRecord, request?: object): void => {
    let description: RequestDescription | undefined;
    if (request !== undefined && describe !== undefined) {
      try {
        description = describe(request);
      } catch {
        // A describer that fails on a strange request loses the description, not the record.
      }
    }
    let text: string;
    try {
      text = format(record, description, redaction);
    } catch {
      return;
    }
    if (fd !== undefined) {
      writeToFd(text);
      return;
    }
    try {
      stream.write(text, (error) => {
        if (error === undefined || error === null) return;
        failed(error);
        // A write that failed is tried again on the descriptor (after the others of its tick).
        if (fd !== undefined && !closed) writeToFd(text);
      });
    } catch {
      // A stream that throws (one of the application's) loses the record, not the code that logs.
    }
  };
  const onDrain = (): void => {
    waitingForDrain = false;
    writeDropped();
  };
  const writeDropped = (): void => {
    if (dropped === 0 || closed) return;
    const message = `stderr could not keep up: ${dropped} log records were dropped`;
    write({ time: Date.now(), level: LogLevel.WARNING, levelName: 'WARNING', channel: 'log', message, context: { dropped } });
    dropped = 0;
  };
  // Unhandled, a stream's error (EPIPE) would end the process; nothing written after it could arrive.
  const onError = (error?: unknown): void => {
    failed(error);
  };
  const handler = ({ record, request }: LogEntry): void => {
    if (record.level > threshold || closed) return;
    if (fd === undefined && (stream.writableLength ?? 0) > maxBuffered) {
      dropped++;
      // One listener, however often the backlog crosses the bound before it drains.
      if (!waitingForDrain) {
        waitingForDrain = true;
        stream.once?.('drain', onDrain);
      }
      return;
    }
    if (dropped > 0) writeDropped();
    write(record, request);
  };
  stream.on?.('error', onError);
  bus.on('log', handler);
  return () => {
    bus.off('log', handler);
    // Records dropped from the backlog still waiting (a shutdown under load) are counted once it drains, and an
    // error meanwhile (the reader gone) is still handled: only then does the sink let go of the stream.
    if (dropped > 0 && waitingForDrain && !closed) {
      stream.once?.('drain', () => stream.off?.('error', onError));
      return;
    }
    stream.off?.('error', onError);
    stream.off?.('drain', onDrain);
  };
}

/** Longer strings (the message, a context value) are cut in a line, with how many characters were left out. */
const MAX_STRING = 16_384;
/** A context written longer than this is left out of the line, with a note saying how long it was. */
const MAX_CONTEXT = 256 * 1024;
/**
 * Most characters an error's own fields take together (a client library's error may carry its
 * request, response and body): those past it are written as a note, so they never cost the line its error.
 */
const MAX_ERROR_FIELDS = 64 * 1024;

/**
 * One JSON line per record; an error in the context keeps its class, message, code, own fields, stack and causes.
 * With a request, `"request":{"method","path","ip","token"}` (and `"sub"`, `"mainToken"` for a sub-request) comes before the context.
 */
export function formatJson(record: LogRecord, request?: RequestDescription, redaction?: LogRedaction): string {
  const context = writableContext(record.context, redaction);
  const head = JSON.stringify({ time: new Date(record.time).toISOString(), level: record.levelName.toLowerCase(), channel: record.channel, message: cut(redactedMessage(record, redaction)) });
  const fields = requestFields(request, redaction);
  const described = fields === undefined ? '' : `,"request":${JSON.stringify(fields)}`;
  const line = `${head.slice(0, -1)}${described},"context":${context instanceof RawJson ? context.json : JSON.stringify(context)}}`;
  // Such characters stand only inside JSON strings, where their escapes read back as them.
  return `${line.replace(LINE_BREAKS_IN_JSON, unicodeEscape)}\n`;
}

/** `[2026-11-21T21:40:54.123Z] request.ERROR: message {"context":1} [GET /path token=abc123]` */
export function formatLine(record: LogRecord, request?: RequestDescription, redaction?: LogRedaction): string {
  let context = '';
  if (hasContext(record.context)) {
    const written = writableContext(record.context, redaction);
    // JSON escapes control characters but for C1 and the line and paragraph separators, which a terminal would act on too.
    context = ` ${(written instanceof RawJson ? written.json : written).replace(UNSAFE_IN_TEXT, percentEncode)}`;
  }
  return `[${new Date(record.time).toISOString()}] ${record.channel}.${record.levelName}: ${cut(redactedMessage(record, redaction)).replace(UNSAFE_IN_TEXT, percentEncode)}${context}${requestSuffix(request, redaction)}\n`;
}

/** The message with the placeholders of secret keys and its secret pairs hidden, when there are rules. */
function redactedMessage(record: LogRecord, redaction: LogRedaction | undefined): string {
  return redaction === undefined ? record.message : redaction.text(messageWithSecretsHidden(record, (key) => redaction.isSecretKey(key)));
}

/** Text with its secret pairs hidden, when there are rules; as it was otherwise. */
function redacted(text: string, redaction: LogRedaction | undefined): string {
  return redaction === undefined ? text : redaction.text(text);
}

// A context that is no object (a JavaScript caller's null) or whose keys cannot be listed (a Proxy) is still written, as JSON or a note.
function hasContext(context: unknown): boolean {
  if (context === null || typeof context !== 'object') return context !== undefined;
  try {
    return Object.keys(context).length > 0;
  } catch {
    return true;
  }
}

/** The most characters of each field of a request's description (a path, mostly) written in a line. */
const MAX_REQUEST_FIELD = 2048;

/**
 * The description's fields, each read once, checked and cut to MAX_REQUEST_FIELD; undefined when it
 * has none. A describer of the embedder's may return anything: a getter that throws leaves the line without.
 */
function requestFields(description: RequestDescription | undefined, redaction?: LogRedaction): RequestDescription | undefined {
  if (description === undefined || description === null || typeof description !== 'object') return undefined;
  try {
    const { method, path, ip, token, sub, mainToken } = description;
    const fields: RequestDescription = {};
    if (typeof method === 'string') fields.method = cut(method, MAX_REQUEST_FIELD);
    if (typeof path === 'string') fields.path = cut(redaction === undefined ? path : redaction.url(path), MAX_REQUEST_FIELD);
    if (typeof ip === 'string') fields.ip = cut(ip, MAX_REQUEST_FIELD);
    if (typeof token === 'string') fields.token = cut(token, MAX_REQUEST_FIELD);
    if (sub === true) fields.sub = true;
    if (typeof mainToken === 'string') fields.mainToken = cut(mainToken, MAX_REQUEST_FIELD);
    return Object.keys(fields).length === 0 ? undefined : fields;
  } catch {
    return undefined;
  }
}

/**
 * Characters JSON.stringify leaves as they are, yet some readers take for the end of a line
 * (NEL and the other C1 controls, U+2028, U+2029: Python's `str.splitlines()`, some log viewers).
 */
const LINE_BREAKS_IN_JSON = /[\u007f-\u009f\u2028\u2029]/g;

function unicodeEscape(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** Control characters (CR, LF, tab, escape sequences...) and Unicode line breaks: in a text line, the message and a request's value show them percent-encoded. */
const UNSAFE_IN_TEXT = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

function percentEncode(char: string): string {
  const code = char.charCodeAt(0);
  return code < 0x100 ? `%${code.toString(16).toUpperCase().padStart(2, '0')}` : encodeURIComponent(char);
}

/** ` [GET /path token=abc123]`, ` [GET /path sub-request token=def456 main=abc123]`; '' without a request. */
function requestSuffix(description: RequestDescription | undefined, redaction?: LogRedaction): string {
  const fields = requestFields(description, redaction);
  if (fields === undefined) return '';
  const parts: string[] = [];
  if (fields.method !== undefined) parts.push(fields.method);
  if (fields.path !== undefined) parts.push(fields.path);
  if (fields.sub === true) parts.push('sub-request');
  if (fields.token !== undefined) parts.push(`token=${fields.token}`);
  if (fields.mainToken !== undefined) parts.push(`main=${fields.mainToken}`);
  return parts.length === 0 ? '' : ` [${parts.join(' ').replace(UNSAFE_IN_TEXT, percentEncode)}]`;
}

/** JSON already written: the context, put into its line as is. */
class RawJson {
  constructor(readonly json: string) {}
}

// The context as JSON, or the note that stands for it: one JSON cannot take (a throwing getter or toJSON) or too long.
function writableContext(context: Record<string, unknown>, redaction?: LogRedaction): RawJson | string {
  let json: string;
  try {
    // A toJSON that returns undefined leaves nothing to write.
    json = boundedJson(context, MAX_CONTEXT, redaction) ?? 'null';
  } catch (error) {
    if (error instanceof ContextTooLong) return `[context of at least ${error.length} characters left out: longer than ${MAX_CONTEXT}]`;
    return unwritable(error);
  }
  return new RawJson(json);
}

function cut(text: string, max = MAX_STRING): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  const head = text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
  return `${head}… [${text.length - head.length} more characters]`;
}

/** What stands for a context that JSON.stringify threw on (a throwing getter or toJSON): the record is still written. */
function unwritable(error: unknown): string {
  let reason: string;
  try {
    reason = isError(error) ? `${error.name}: ${error.message}` : String(error);
  } catch {
    reason = 'unknown error';
  }
  return `[context that cannot be written as JSON: ${reason}]`;
}

/** Thrown by boundedJson as soon as its JSON is longer than it may be: the rest of the value is never walked. */
class ContextTooLong extends Error {
  constructor(readonly length: number) {
    super('context too long');
  }
}

/**
 * JSON.stringify's JSON with long strings cut, errors as their class, message, code, own fields, stack and
 * causes, bigints as text, and a cycle (an object inside itself, an error its own cause) as
 * "[circular]"; an object met twice elsewhere is written both times. Written piece by piece, it
 * throws ContextTooLong once past `max` characters, so a huge value (a 10 MiB Buffer, an array of
 * millions) costs what `max` characters of it do, not a walk and a copy of all of it: a Buffer's
 * bytes and a typed array's items are read one by one, never through its toJSON. With `redaction`,
 * a secret key's value is written `[redacted]` and each string has its secret pairs hidden.
 */
function boundedJson(value: unknown, max: number, redaction?: LogRedaction): string | undefined {
  let json = '';
  // Where the JSON must end: `max`, or sooner while an error's own fields are written.
  let limit = max;
  // The objects being written, as they were logged: a cycle is one of them met again.
  const ancestors: unknown[] = [];
  const add = (text: string): void => {
    if (json.length + text.length > limit) throw new ContextTooLong(json.length + text.length);
    json += text;
  };
  // Writes an error's own field within what is left of its fields' share (ending at `end`), or a note in its place.
  const writeField = (key: string, v: unknown, end: number): boolean => {
    const outer = limit;
    const start = json.length;
    limit = Math.min(outer, end);
    try {
      return write(key, v);
    } catch (error) {
      if (!(error instanceof ContextTooLong) || limit === outer) throw error;
      json = json.slice(0, start);
      limit = outer;
      add(`"[left out: the error's fields pass ${MAX_ERROR_FIELDS} characters]"`);
      return true;
    } finally {
      limit = outer;
    }
  };
  // Writes the value held under `key` (JSON.stringify's rules); false when it writes nothing (undefined, a function, a symbol).
  const write = (key: string, v: unknown): boolean => {
    if (v !== null && typeof v === 'object') {
      if (ArrayBuffer.isView(v) && !(v instanceof DataView)) return writeBytes(v as unknown as ArrayLike<number>);
      const toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') v = toJSON.call(v, key);
    }
    switch (typeof v) {
      case 'string':
        add(JSON.stringify(cut(redacted(v, redaction))));
        return true;
      case 'number':
        add(Number.isFinite(v) ? String(v) : 'null');
        return true;
      case 'boolean':
        add(v ? 'true' : 'false');
        return true;
      case 'bigint':
        add(`"${v}"`);
        return true;
      case 'object':
        if (v === null) {
          add('null');
          return true;
        }
        break;
      default:
        return false;
    }
    const object = v as object;
    if (ancestors.includes(object)) {
      add('"[circular]"');
      return true;
    }
    // Boxed primitives are written as their value, as JSON.stringify has them.
    if (object instanceof Number || object instanceof String || object instanceof Boolean || object instanceof BigInt) return write(key, object.valueOf());
    ancestors.push(object);
    try {
      if (Array.isArray(object)) {
        add('[');
        for (let i = 0; i < object.length; i++) {
          if (i > 0) add(',');
          if (!write(String(i), object[i])) add('null');
        }
        add(']');
        return true;
      }
      // An error's own fields, by name (none for any other object).
      const fields = isError(object) ? new Set<string>() : undefined;
      const written: Record<string, unknown> = fields !== undefined ? errorJson(object as Error, fields) : (object as Record<string, unknown>);
      add('{');
      let first = true;
      let fieldsEnd = -1;
      for (const name of Object.keys(written)) {
        const mark = json.length;
        // A key longer than what is left is not escaped first.
        if (json.length + name.length > max) throw new ContextTooLong(json.length + name.length);
        add(`${first ? '' : ','}${JSON.stringify(name)}:`);
        if (redaction?.isSecretKey(name) === true && written[name] !== undefined) {
          add(`"${REDACTED}"`);
          first = false;
        } else if (fields?.has(name) === true) {
          if (fieldsEnd === -1) fieldsEnd = mark + MAX_ERROR_FIELDS;
          if (writeField(name, written[name], fieldsEnd)) first = false;
          else json = json.slice(0, mark);
        } else if (write(name, written[name])) first = false;
        else json = json.slice(0, mark);
      }
      add('}');
      return true;
    } finally {
      ancestors.pop();
    }
  };
  // A Buffer as its toJSON has it (`{"type":"Buffer","data":[...]}`), any other typed array as an object of its items, byte by byte.
  const writeBytes = (bytes: ArrayLike<number>): boolean => {
    const buffer = Buffer.isBuffer(bytes);
    add(buffer ? '{"type":"Buffer","data":[' : '{');
    for (let i = 0; i < bytes.length; i++) {
      const item = bytes[i]!;
      const text = typeof item === 'number' ? (Number.isFinite(item) ? String(item) : 'null') : `"${String(item)}"`;
      add(`${i === 0 ? '' : ','}${buffer ? '' : `"${i}":`}${text}`);
    }
    add(buffer ? ']}' : '}');
    return true;
  };
  return write('', value) ? json : undefined;
}

/**
 * An error as a line writes it: its class, message and code, its own fields (a system error's
 * errno, syscall and path, a library's statusCode: see errorFields; their names put in `fields`), then its stack and causes.
 */
function errorJson(error: Error, fields: Set<string>): Record<string, unknown> {
  const json = errorShape(error, fields);
  const { stack, cause } = error;
  if (typeof stack === 'string') json.stack = stack;
  if (cause !== undefined) json.cause = cause;
  // An AggregateError's own `errors` (of another realm too, which instanceof misses).
  const errors = Object.getOwnPropertyDescriptor(error, 'errors')?.value;
  if (Array.isArray(errors)) json.errors = errors;
  return json;
}
