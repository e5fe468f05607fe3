/**
 * Errors as plain data for the error pages and the profiler, in the manner of Symfony's FlattenException:
 * the whole `cause` chain, each with its status, headers and parsed stack frames.
 */
import { inspect, types } from 'node:util';
import { boundErrorHeaders, isHttpError } from '../../kernel/index.js';
import { mapFrameToSource } from './source-maps.js';
import { parseStack, type StackFrame } from './stack-frames.js';
import { statusText } from './status-text.js';

/** One error of a cause chain, detached from the live object (safe to store and render). */
export interface FlatError {
  /** The constructor name, e.g. `NotFoundHttpError`; `Error` for values thrown that are not errors. */
  class: string;
  message: string;
  /** The HTTP status: always set on the outermost error; on causes only when they carry their own. */
  status: number | null;
  statusText: string | null;
  /** The error's stable code (`ERR_...`), when it has a string one. */
  code?: string;
  /** Response headers the error asks for (e.g. `Allow` on a 405), less those boundErrorHeaders leaves out. */
  headers: Record<string, string>;
  frames: StackFrame[];
  /** The raw `error.stack` text; empty when there is none. */
  stack: string;
  /**
   * On the last error of a chain cut at `maxErrors`: how many errors came after it and are not kept
   * (causes counted up to 10,000, an AggregateError's `errors` by their number), for the pages to say so.
   */
  omitted?: number;
}

/** Options of `flattenError`. */
export interface FlattenErrorOptions {
  /** Status of the outermost error, overriding its own (e.g. when the kernel maps it to 400). */
  status?: number;
  /** Most errors of the chain to keep; default 20. */
  maxErrors?: number;
  /**
   * Name the sources of compiled frames (`.ts` files and lines, from the `.js.map` files beside
   * them) where node did not: without `--enable-source-maps`, or for modules loaded before
   * `process.setSourceMapsEnabled(true)`; for debug pages: it reads files. Default false.
   */
  sourceMaps?: boolean;
}

const DEFAULT_MAX_ERRORS = 20;
/** Errors past the kept ones counted, at most (reading each one's `cause` and `errors` is all it costs). */
const MAX_COUNTED = 10_000;

/**
 * What is kept of each error, so that its pages, problem+json and log line stay bounded whatever
 * was thrown (a 5 MB message, Error.stackTraceLimit = Infinity, a forged stack); longer text is cut with a note.
 */
const MAX_MESSAGE = 10_000;
const MAX_STACK = 20_000;
const MAX_FRAMES = 50;
/** Of a frame's function and file (PATH_MAX is 4096; a real path is far shorter). */
const MAX_FRAME_TEXT = 1000;
/** Of a class name and a code. */
const MAX_NAME = 200;

/**
 * Flattens an error and its ES2022 `cause` chain, outermost first; an AggregateError's `errors`
 * (each with its own causes) come right after it, before its cause (`Promise.any()`, a connection
 * tried on several addresses: the reasons are there). An error met again (listed twice, or a cause
 * listed too) is shown once, where it is first met. Stops at a cycle or at `maxErrors`.
 */
export function flattenError(error: unknown, options: FlattenErrorOptions = {}): FlatError[] {
  const max = Math.max(1, options.maxErrors ?? DEFAULT_MAX_ERRORS);
  const mapSources = options.sourceMaps === true;
  const chain: FlatError[] = [];
  const seen = new Set<unknown>();
  // Taken from the end: what comes next is pushed last.
  const pending: unknown[] = [error];
  // An AggregateError's `errors` past what a chain keeps: counted, never walked.
  let leftOut = 0;
  while (chain.length < max && pending.length > 0) {
    const current = pending.pop();
    // Listed twice by an AggregateError, or its cause too: both were pending before either was shown.
    if (seen.has(current)) continue;
    const outermost = chain.length === 0;
    if (!isErrorLike(current)) {
      chain.push(flattenThrownValue(current, outermost));
      // An object thrown or rejected with is one value wherever it is listed; equal strings may be two failures.
      if (isObject(current)) seen.add(current);
      continue;
    }
    chain.push(flattenOne(current, outermost, mapSources));
    seen.add(current);
    const cause = hasOwnOrInherited(current, 'cause') ? read(current, 'cause') : undefined;
    if (cause !== undefined && !seen.has(cause)) pending.push(cause);
    const aggregated = aggregatedErrors(current);
    leftOut += aggregated.count - aggregated.first.length;
    for (let i = aggregated.first.length - 1; i >= 0; i--) if (!seen.has(aggregated.first[i])) pending.push(aggregated.first[i]);
  }
  const omitted = leftOut + countRest(pending, seen);
  if (omitted > 0) chain[chain.length - 1]!.omitted = omitted;
  if (isHttpStatus(options.status)) {
    chain[0]!.status = options.status;
    chain[0]!.statusText = statusText(options.status);
  }
  return chain;
}

function flattenOne(error: object, outermost: boolean, mapSources: boolean): FlatError {
  const message = stringOr(read(error, 'message'), '');
  const name = stringOr(read(error, 'name'), '');
  const stack = stringOr(read(error, 'stack'), '');
  const status = ownStatus(error) ?? (outermost ? 500 : null);
  const code = read(error, 'code');
  const flat: FlatError = {
    class: cut(className(error, name), MAX_NAME),
    message: cut(message, MAX_MESSAGE),
    status,
    statusText: status === null ? null : statusText(status),
    // Only an HttpError's (ours, or its shape across copies): another error's `headers` may be another response's (undici's ResponseError carries the upstream's, Set-Cookie included).
    headers: isHttpError(error) ? headersOf(read(error, 'headers')) : {},
    frames: parseStack(stack, stackHeader(name, message), MAX_FRAMES).map(mapSources ? (frame) => cutFrame(mapFrameToSource(frame)) : cutFrame),
    stack: cut(stack, MAX_STACK),
  };
  if (typeof code === 'string') flat.code = cut(code, MAX_NAME);
  return flat;
}

/** `text` whole, or its first `max` characters (a surrogate pair kept whole or left out) and how many more there were. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  const head = text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
  return `${head}… [${text.length - head.length} more characters]`;
}

function cutFrame(frame: StackFrame): StackFrame {
  if ((frame.function?.length ?? 0) <= MAX_FRAME_TEXT && (frame.file?.length ?? 0) <= MAX_FRAME_TEXT) return frame;
  return { ...frame, function: frame.function === null ? null : cut(frame.function, MAX_FRAME_TEXT), file: frame.file === null ? null : cut(frame.file, MAX_FRAME_TEXT) };
}

function flattenThrownValue(value: unknown, outermost: boolean): FlatError {
  return {
    class: 'Error',
    message: `${outermost ? 'Thrown value' : 'Cause'} is not an Error (${describeType(value)}): ${preview(value)}`,
    status: outermost ? 500 : null,
    statusText: outermost ? statusText(500) : null,
    headers: {},
    frames: [],
    stack: '',
  };
}

/**
 * How many errors `pending` holds with their causes and aggregated errors, not seen yet, counted up
 * to MAX_COUNTED: a chain 1,000 deep cut at 20 is 980 more, however long (a getter may make causes without end).
 */
function countRest(pending: unknown[], seen: Set<unknown>): number {
  let count = 0;
  while (pending.length > 0 && count < MAX_COUNTED) {
    const current = pending.pop();
    if (seen.has(current)) continue;
    count++;
    if (!isErrorLike(current)) {
      if (isObject(current)) seen.add(current);
      continue;
    }
    seen.add(current);
    const cause = hasOwnOrInherited(current, 'cause') ? read(current, 'cause') : undefined;
    if (cause !== undefined && !seen.has(cause)) pending.push(cause);
    // Counted by their number, not walked: an array of millions costs nothing here.
    count += aggregatedErrors(current).count;
  }
  return Math.min(count, MAX_COUNTED);
}

/** An AggregateError's `errors` (of this realm or another): the first as many as a chain keeps, and how many in all; none for any other error. */
function aggregatedErrors(error: object): { first: readonly unknown[]; count: number } {
  try {
    if (!(error instanceof AggregateError) && read(error, 'name') !== 'AggregateError') return NO_ERRORS;
    const errors = read(error, 'errors');
    return Array.isArray(errors) ? { first: errors.slice(0, DEFAULT_MAX_ERRORS), count: errors.length } : NO_ERRORS;
  } catch {
    return NO_ERRORS;
  }
}

const NO_ERRORS = { first: [], count: 0 };

function isObject(value: unknown): value is object {
  return (typeof value === 'object' && value !== null) || typeof value === 'function';
}

function isErrorLike(value: unknown): value is object {
  try {
    return value instanceof Error || types.isNativeError(value);
  } catch {
    // A Proxy whose getPrototypeOf trap throws.
    return false;
  }
}

function isHttpStatus(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 400 && value <= 599;
}

// `status` is our convention; `statusCode` is what http-errors and Fastify errors carry.
function ownStatus(error: object): number | null {
  const status = read(error, 'status');
  if (isHttpStatus(status)) return status;
  const statusCode = read(error, 'statusCode');
  return isHttpStatus(statusCode) ? statusCode : null;
}

function className(error: object, name: string): string {
  const ctor = read(error, 'constructor');
  // A class's static `name` may be a getter that throws, too.
  const ctorName = typeof ctor === 'function' ? read(ctor, 'name') : undefined;
  if (typeof ctorName === 'string' && ctorName !== '') return ctorName;
  return name !== '' ? name : 'Error';
}

// The first line(s) of a V8 stack, as Error.prototype.toString writes them.
function stackHeader(name: string, message: string): string {
  if (name === '') return message;
  if (message === '') return name;
  return `${name}: ${message}`;
}

// Checked and bounded as on a response (boundErrorHeaders): what the pages, problem+json and profiles show is what was sent.
function headersOf(value: unknown): Record<string, string> {
  return boundErrorHeaders(value).headers;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value !== 'object') return typeof value;
  const ctor = read(value, 'constructor');
  const ctorName = typeof ctor === 'function' ? read(ctor, 'name') : undefined;
  return typeof ctorName === 'string' && ctorName !== '' ? `object ${ctorName}` : 'object';
}

function preview(value: unknown): string {
  try {
    const text = inspect(value, { depth: 2, breakLength: Infinity, compact: true, maxArrayLength: 20, maxStringLength: 500 });
    return text.length > 1000 ? `${text.slice(0, 1000)}…` : text;
  } catch {
    return '[value that cannot be inspected]';
  }
}

// Errors come from anywhere; a throwing getter or Proxy trap must not turn rendering an error into a new one.
function read(target: object, key: string): unknown {
  try {
    return (target as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function hasOwnOrInherited(target: object, key: string): boolean {
  try {
    return key in target;
  } catch {
    return false;
  }
}

function stringOr(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}
