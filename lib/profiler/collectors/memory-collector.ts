import type { DataCollector } from '../data-collector.js';
import type { MemoryData } from '../profile.js';

/** Memory of the process, read after the response is sent (reading RSS is a system call). */
export class MemoryCollector implements DataCollector {
  readonly name = 'memory';

  collect(): null {
    return null;
  }

  lateCollect(): MemoryData {
    const usage = process.memoryUsage();
    return { heapUsed: usage.heapUsed, rss: usage.rss };
  }
}
