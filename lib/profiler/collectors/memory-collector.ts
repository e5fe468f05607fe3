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
      const usage = process.memoryUsage();
      this.#sample = new RawJson(`{"heapUsed":${usage.heapUsed},"rss":${usage.rss}}`);
      this.#sampledAt = now;
    }
    return this.#sample;
  }
}
