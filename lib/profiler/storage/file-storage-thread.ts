// The worker thread of ThreadedFileStorage: one FileStorage, answering the main thread's calls.
// Its index, its file writes (synchronous on the save path) and its upkeep (bounds, compaction,
// crash clean-up) run here, off the thread that answers requests.

import { parentPort, workerData } from 'node:worker_threads';
import { ProfilerStorageError, UNREADABLE_CODE } from './errors.js';
import { FileStorage } from './file-storage.js';
import type { SearchCriteria } from './profiler-storage.js';
import { decodeBatch, serializeError, type StorageBatch, type StorageCall, type StorageReply, type StorageThreadData } from './storage-thread-protocol.js';

if (parentPort === null) throw new Error('file-storage-thread.js runs as a worker thread of ThreadedFileStorage.');
const port = parentPort;

const data = workerData as StorageThreadData;
const storage = new FileStorage({
  dir: data.dir,
  bounds: data.bounds,
  segmentBytes: data.segmentBytes,
  leaseOwner: data.leaseOwner,
  deadLeaseOwners: data.deadLeaseOwners,
  onError: (error) => port.postMessage({ id: 0, error: serializeError(error) } satisfies StorageReply),
});

port.on('message', (call: StorageCall) => {
  let result: Promise<unknown>;
  try {
    result = run(call);
  } catch (error) {
    // Thrown here, it would end the thread and fail every call in flight.
    result = Promise.reject(error);
  }
  result.then(
    (value) => reply(call, value),
    (error: unknown) => replyError(call, error),
  );
});

/**
 * The call's answer. The structured clone of a value can throw (a profile nested too deep overflows the stack,
 * one too large for a string or a buffer): thrown out of this handler, it ended the thread, every call in flight
 * with it, and the read, sent once more, ended the next one too. The call fails instead, saying why.
 */
function reply(call: StorageCall, value: unknown): void {
  try {
    port.postMessage({ id: call.id, value } satisfies StorageReply);
  } catch (error) {
    const what = call.op === 'read' ? `The profile ${String(call.args[0])} cannot be read` : `The profiler storage's ${call.op} answer cannot be sent`;
    const message = `${what}: its data cannot pass between threads (${error instanceof Error ? error.message : String(error)}).`;
    replyError(call, new ProfilerStorageError(message, UNREADABLE_CODE, { cause: error }));
  }
}

/** The call's failure; an error that cannot be described or sent (a getter that throws) fails it all the same. */
function replyError(call: StorageCall, error: unknown): void {
  try {
    port.postMessage({ id: call.id, error: serializeError(error) } satisfies StorageReply);
  } catch {
    port.postMessage({ id: call.id, error: { name: 'ProfilerStorageError', message: `The profiler storage's ${call.op} failed with an error that cannot be sent between threads.`, code: 'HK_PROFILER_STORAGE' } } satisfies StorageReply);
  }
}

// Started: a thread that dies after this, at its first call even, is started again by the next call,
// where one that dies before it could not load and would fail the same way each time (see ThreadedFileStorage#stopped).
port.postMessage({ id: 0 } satisfies StorageReply);

function run({ op, args }: StorageCall): Promise<unknown> {
  switch (op) {
    case 'claim':
      return storage.claim(args[0] as string);
    case 'drawToken':
      return storage.drawToken(args[0] as number);
    case 'drawTokens':
      return storage.drawTokens(args[0] as number, args[1] as number);
    case 'release':
      return storage.release(args[0] as string);
    case 'discard':
      return storage.discard(args[0] as string);
    case 'writeMany':
      return storage.writeMany(decodeBatch(args[0] as StorageBatch));
    case 'read':
      return storage.read(args[0] as string);
    case 'find':
      return storage.find(args[0] as SearchCriteria | undefined);
    case 'purge':
      return storage.purge();
    case 'compact':
      return storage.compact();
    case 'close':
      // Once closed, nothing is left to do: the thread ends when its port closes.
      return storage.close().finally(() => setImmediate(() => port.close()));
    default:
      throw new TypeError(`Unknown profiler storage operation ${JSON.stringify(String(op))}.`);
  }
}
