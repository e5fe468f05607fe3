// The worker thread of ThreadedFileStorage: one FileStorage, answering the main thread's calls.
// Its index, its file writes (synchronous on the save path) and its upkeep (bounds, compaction,
// crash clean-up) run here, off the thread that answers requests.

import { parentPort, workerData } from 'node:worker_threads';
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
    (value) => port.postMessage({ id: call.id, value } satisfies StorageReply),
    (error: unknown) => port.postMessage({ id: call.id, error: serializeError(error) } satisfies StorageReply),
  );
});

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
