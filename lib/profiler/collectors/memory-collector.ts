import type { DataCollector } from '../data-collector.js';
import type { MemoryData } from '../profile.js';

/** How long one reading of the process's memory is reused: reading RSS opens /proc, too dear per request under load. */
const SAMPLE_TTL_MS = 100;

/** Memory of the process, read after the response is sent and shared by requests within 100 ms. */
export class MemoryCollector implements DataCollector {
  readonly name = 'memory';
  #sample: MemoryData | null = null;
  #sampledAt = 0;

  lateCollect(): MemoryData {
    const now = Date.now();
    if (this.#sample === null || now - this.#sampledAt > SAMPLE_TTL_MS) {
      const usage = process.memoryUsage();
      this.#sample = { heapUsed: usage.heapUsed, rss: usage.rss };
      this.#sampledAt = now;
    }
    return { ...this.#sample };
  }
}
