// What ThreadedFileStorage and its worker thread (file-storage-thread.ts) send each other.
// Errors cross the thread boundary as plain data and are rebuilt as the same classes, so a caller
// of the threaded storage can tell a refused profile from a failing disk exactly as with FileStorage.

import type { EncodedProfile, ProfileSummary } from '../profile.js';
import type { StorageBounds } from './profiler-storage.js';
import { InvalidProfileError, ProfileBatchError, ProfileExistsError, ProfilerStorageError } from './errors.js';

/** The FileStorage options a worker is started with (the clock cannot cross threads). */
export interface StorageThreadData {
  dir: string;
  bounds: StorageBounds;
  segmentBytes: number | undefined;
  /** This worker's name in its prefix leases, and the names of the workers before it that died (see FileStorageOptions). */
  leaseOwner: string;
  deadLeaseOwners: string[];
}

/** The storage methods the worker answers. */
export type StorageOp = 'claim' | 'drawToken' | 'drawTokens' | 'release' | 'discard' | 'writeMany' | 'read' | 'find' | 'purge' | 'compact' | 'close';

/** A call: `id` is unique among the calls in flight; the reply carries it back. */
export interface StorageCall {
  id: number;
  op: StorageOp;
  args: unknown[];
}

/** A call's outcome; `id` 0 carries an error of the background upkeep (FileStorage's onError), or, with none, says the thread has started. */
export interface StorageReply {
  id: number;
  value?: unknown;
  error?: SerializedError;
}

/**
 * A writeMany batch as it crosses the thread: in columns, with one buffer for all the JSON. The
 * structured clone of an array of summary objects writes every key of every object, and was the
 * dearest step of a save on the request thread; columns of numbers are copied whole, and a
 * server's ip, method and URL strings, which repeat from one profile to the next, go once.
 */
export interface StorageBatch {
  /** The tokens, and the parents ('' for none), joined by ','; tokens are hex (checked before). */
  tokens: string;
  parents: string;
  /** The batch's distinct ip, method and URL strings; `refs` holds three indexes into it per profile. */
  strings: string[];
  refs: Uint32Array;
  times: Float64Array;
  statuses: Float64Array;
  /** Where each profile's JSON ends in `bytes`. */
  ends: Uint32Array;
  bytes: Uint8Array;
}

/** The batch of `summaries` and their JSON, and the buffers to transfer with it. */
export function encodeBatch(summaries: readonly ProfileSummary[], jsons: readonly (string | Buffer)[]): { batch: StorageBatch; transfer: ArrayBuffer[] } {
  const count = summaries.length;
  let total = 0;
  for (const json of jsons) total += typeof json === 'string' ? Buffer.byteLength(json) : json.length;
  // Its own ArrayBuffer (never the pool's), so it can be transferred.
  const bytes = Buffer.allocUnsafeSlow(total);
  const ends = new Uint32Array(count);
  const refs = new Uint32Array(count * 3);
  const times = new Float64Array(count);
  const statuses = new Float64Array(count);
  const strings: string[] = [];
  const indexes = new Map<string, number>();
  const ref = (value: string): number => {
    let index = indexes.get(value);
    if (index === undefined) {
      index = strings.push(value) - 1;
      indexes.set(value, index);
    }
    return index;
  };
  const tokens: string[] = [];
  const parents: string[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    const summary = summaries[i]!;
    const json = jsons[i]!;
    at += typeof json === 'string' ? bytes.write(json, at) : json.copy(bytes, at);
    ends[i] = at;
    tokens.push(summary.token);
    parents.push(summary.parent ?? '');
    refs[i * 3] = ref(summary.ip);
    refs[i * 3 + 1] = ref(summary.method);
    refs[i * 3 + 2] = ref(summary.url);
    times[i] = summary.time;
    statuses[i] = summary.status;
  }
  const batch: StorageBatch = { tokens: tokens.join(','), parents: parents.join(','), strings, refs, times, statuses, ends, bytes };
  return { batch, transfer: [bytes.buffer as ArrayBuffer, ends.buffer, refs.buffer, times.buffer, statuses.buffer] };
}

/** The batch's profiles, each JSON a view of the one transferred buffer. */
export function decodeBatch(batch: StorageBatch): EncodedProfile[] {
  const { strings, refs, times, statuses, ends } = batch;
  const all = Buffer.from(batch.bytes.buffer, batch.bytes.byteOffset, batch.bytes.byteLength);
  const tokens = batch.tokens.split(',');
  const parents = batch.parents.split(',');
  const profiles: EncodedProfile[] = [];
  let start = 0;
  for (let i = 0; i < ends.length; i++) {
    const end = ends[i]!;
    const parent = parents[i]!;
    profiles.push({
      token: tokens[i]!,
      parent: parent === '' ? null : parent,
      ip: strings[refs[i * 3]!]!,
      method: strings[refs[i * 3 + 1]!]!,
      url: strings[refs[i * 3 + 2]!]!,
      time: times[i]!,
      status: statuses[i]!,
      json: all.subarray(start, end),
    });
    start = end;
  }
  return profiles;
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
      error = new ProfileExistsError(serialized.token ?? '', serialized.message);
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
      // Own names only: an error named `constructor` would be built as an Object, one named `hasOwnProperty` would throw.
      const Constructor = (Object.hasOwn(STANDARD_ERRORS, serialized.name) ? STANDARD_ERRORS[serialized.name] : undefined) ?? Error;
      error = new Constructor(serialized.message, { cause });
      if (Constructor === Error) error.name = serialized.name;
      if (serialized.code !== undefined) (error as Error & { code?: string }).code = serialized.code;
    }
  }
  // The worker's stack says where the failure happened, which is what a reader of the log needs.
  if (serialized.stack !== undefined) error.stack = serialized.stack;
  return error;
}
