// What ThreadedFileStorage and its worker thread (file-storage-thread.ts) send each other.
// Errors cross the thread boundary as plain data and are rebuilt as the same classes, so a caller
// of the threaded storage can tell a refused profile from a failing disk exactly as with FileStorage.

import type { StorageBounds } from './profiler-storage.js';
import { InvalidProfileError, ProfileBatchError, ProfileExistsError, ProfilerStorageError } from './errors.js';

/** The FileStorage options a worker is started with (the clock cannot cross threads). */
export interface StorageThreadData {
  dir: string;
  bounds: StorageBounds;
  segmentBytes: number | undefined;
}

/** The storage methods the worker answers. */
export type StorageOp = 'claim' | 'drawToken' | 'drawTokens' | 'release' | 'writeMany' | 'read' | 'find' | 'purge' | 'compact' | 'close';

/** A call: `id` is unique among the calls in flight; the reply carries it back. */
export interface StorageCall {
  id: number;
  op: StorageOp;
  args: unknown[];
}

/** A call's outcome; `id` 0 carries an error of the background upkeep (FileStorage's onError). */
export interface StorageReply {
  id: number;
  value?: unknown;
  error?: SerializedError;
}

/** An error as data: enough to rebuild the storage's own error classes and keep the stack. */
export interface SerializedError {
  name: string;
  message: string;
  stack?: string;
  code?: string;
  /** ProfileExistsError's token. */
  token?: string;
  /** ProfileBatchError's refusals. */
  errors?: SerializedError[];
  cause?: SerializedError;
}

/** The error as data (see SerializedError); anything thrown that is not an Error becomes its string. */
export function serializeError(error: unknown, depth = 0): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const serialized: SerializedError = { name: error.name, message: error.message };
  if (error.stack !== undefined) serialized.stack = error.stack;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') serialized.code = code;
  if (error instanceof ProfileExistsError) serialized.token = error.token;
  if (error instanceof ProfileBatchError) serialized.errors = error.errors.map((each) => serializeError(each, depth + 1));
  // A cause chain is short (a storage error over an fs error); the cap guards against a cycle.
  if (error.cause !== undefined && depth < 8) serialized.cause = serializeError(error.cause, depth + 1);
  return serialized;
}

const STANDARD_ERRORS: Record<string, ErrorConstructor> = { TypeError, RangeError, SyntaxError };

/** The error rebuilt from its data: the storage's classes as themselves, others as Error with their name and code. */
export function rebuildError(serialized: SerializedError): Error {
  const cause = serialized.cause === undefined ? undefined : rebuildError(serialized.cause);
  let error: Error;
  switch (serialized.name) {
    case 'ProfileExistsError':
      error = new ProfileExistsError(serialized.token ?? '');
      break;
    case 'InvalidProfileError':
      error = new InvalidProfileError(serialized.message);
      break;
    case 'ProfileBatchError':
      error = new ProfileBatchError((serialized.errors ?? []).map((each) => rebuildError(each) as ProfilerStorageError));
      break;
    case 'ProfilerStorageError':
      error = new ProfilerStorageError(serialized.message, serialized.code, { cause });
      break;
    default: {
      const Constructor = STANDARD_ERRORS[serialized.name] ?? Error;
      error = new Constructor(serialized.message, { cause });
      if (Constructor === Error) error.name = serialized.name;
      if (serialized.code !== undefined) (error as Error & { code?: string }).code = serialized.code;
    }
  }
  // The worker's stack says where the failure happened, which is what a reader of the log needs.
  if (serialized.stack !== undefined) error.stack = serialized.stack;
  return error;
}
