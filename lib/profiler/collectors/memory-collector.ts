import { getHeapStatistics } from 'node:v8';
import type { DataCollector } from '../data-collector.js';
import { RawJson } from '../profile.js';

/** How long one reading of the process's memory is reused: reading RSS opens /proc, too dear per request under load. */
const SAMPLE_TTL_MS = 100;

/** Memory of the process, read after the response is sent and shared by requests within 100 ms. */
export class MemoryCollector implements DataCollector {
  readonly name = 'memory';
  /** Its lateCollect only reads: a provisional view may run it too. */
  readonly provisional = true;
  /** The last reading as MemoryData JSON, shared by the requests within SAMPLE_TTL_MS. */
  #sample: RawJson | null = null;
  /** performance.now() of the last reading: by the wall clock, one set back an hour kept a reading for that hour. */
  #sampledAt = 0;

  lateCollect(): RawJson {
    const now = performance.now();
    if (this.#sample === null || now - this.#sampledAt > SAMPLE_TTL_MS) {
      this.#sample = readMemory();
      this.#sampledAt = now;
    }
    return this.#sample;
  }
}

/**
 * process.memoryUsage() throws when it cannot open /proc/self/stat for the RSS (EMFILE: the process is
 * out of file descriptors), which cost the whole profile; the heap is V8's own count, read without a
 * descriptor, so the profile keeps it and goes without `rss` (the time panel shows what it has).
 */
function readMemory(): RawJson {
  try {
    const usage = process.memoryUsage();
    return new RawJson(`{"heapUsed":${usage.heapUsed},"rss":${usage.rss}}`);
  } catch {
    return new RawJson(`{"heapUsed":${getHeapStatistics().used_heap_size}}`);
  }
}
