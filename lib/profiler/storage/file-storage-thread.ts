// The worker thread of ThreadedFileStorage: one FileStorage, answering the main thread's calls.
// Its index, its file writes (synchronous on the save path) and its upkeep (bounds, compaction,
// crash clean-up) run here, off the thread that answers requests.

import { parentPort, workerData } from 'node:worker_threads';
import type { EncodedProfile, ProfileSummary } from '../profile.js';
import { FileStorage } from './file-storage.js';
import type { SearchCriteria } from './profiler-storage.js';
import { serializeError, type StorageCall, type StorageReply, type StorageThreadData } from './storage-thread-protocol.js';

if (parentPort === null) throw new Error('file-storage-thread.js runs as a worker thread of ThreadedFileStorage.');
const port = parentPort;

const data = workerData as StorageThreadData;
const storage = new FileStorage({
  dir: data.dir,
  bounds: data.bounds,
  segmentBytes: data.segmentBytes,
  onError: (error) => port.postMessage({ id: 0, error: serializeError(error) } satisfies StorageReply),
});

port.on('message', (call: StorageCall) => {
  run(call).then(
    (value) => port.postMessage({ id: call.id, value } satisfies StorageReply),
    (error: unknown) => port.postMessage({ id: call.id, error: serializeError(error) } satisfies StorageReply),
  );
});

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
    case 'writeMany':
      return storage.writeMany(encodedProfiles(args[0] as ProfileSummary[], args[1] as number[], args[2] as Uint8Array));
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
  }
}

/** The batch's profiles, each JSON a view of the one transferred buffer (`ends`: where each one ends). */
function encodedProfiles(summaries: readonly ProfileSummary[], ends: readonly number[], bytes: Uint8Array): EncodedProfile[] {
  const all = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const profiles: EncodedProfile[] = [];
  let start = 0;
  for (let i = 0; i < summaries.length; i++) {
    const { token, parent, ip, method, url, time, status } = summaries[i]!;
    const end = ends[i]!;
    profiles.push({ token, parent, ip, method, url, time, status, json: all.subarray(start, end) });
    start = end;
  }
  return profiles;
}
