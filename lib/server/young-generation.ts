/**
 * A cap on V8's young generation ("new space") for a process already running.
 *
 * V8 starts new space small and doubles it each time enough of it survives a collection, up to
 * `--max-semi-space-size` (16 MB a semi-space, 32 MB of new space, on 64-bit). A server that
 * allocates fast and keeps things briefly, as a debug server recording every request does,
 * reaches that maximum within a second, and all of it stays resident. Half of it, or a quarter,
 * serves as well: what survives a collection is the requests in flight, not the size of the space
 * (bench/README.md: 8 MB kept throughput as it was and the profiler bench's peak RSS 20 MB lower).
 *
 * `--max-semi-space-size` is read once, when the heap is made, so only node's command line sets
 * it. The growth factor (`--semi-space-growth-factor`, 2) is read at each growth: set to 1 once
 * new space has reached the cap, new space grows no further. V8 puts the factor back to 2 whenever
 * it makes a heap (each new Worker): after each collection while a Worker is starting, and once it
 * is up, the cap is set again.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import type { Worker } from 'node:worker_threads';

/** New space (both semi-spaces) that `bin/serve` lets a debug server reach. */
export const DEBUG_YOUNG_GENERATION_BYTES = 8 * 1024 * 1024;

/** The node flags that size the young generation themselves: given any of them, the cap is not set. */
const YOUNG_GENERATION_FLAGS = ['--max-semi-space-size', '--min-semi-space-size', '--semi-space-growth-factor', '--max-young-generation-size'];

/** Size of this thread's new space now (both semi-spaces), in bytes. */
export function youngGenerationBytes(): number {
  for (const space of getHeapSpaceStatistics()) {
    if (space.space_name === 'new_space') return space.space_size;
  }
  return 0;
}

/** Whether node was started with `flag` (`--name` or `--name=value`, underscores or dashes), on its command line or in NODE_OPTIONS. */
export function nodeFlagGiven(flag: string, execArgv: readonly string[] = process.execArgv, nodeOptions = process.env['NODE_OPTIONS'] ?? ''): boolean {
  const wanted = flag.replaceAll('_', '-');
  const names = [...execArgv, ...nodeOptions.split(/\s+/)].map((arg) => arg.split('=', 1)[0]!.replaceAll('_', '-'));
  return names.includes(wanted);
}

/**
 * Stops this thread's new space from growing once it is `maxBytes` or more. V8 doubles it (2, 4,
 * 8, 16, 32 MB), so it stops at the first of those at or above `maxBytes`; new space already larger
 * stays as it is. Does nothing when node was given one of the young generation's own flags. Returns a
 * function that stops checking. A process-wide V8 setting: for a process that is yours.
 */
export function capYoungGeneration(maxBytes: number): () => void {
  if (!(maxBytes > 0)) throw new RangeError(`capYoungGeneration: maxBytes must be above 0, got ${maxBytes}`);
  if (YOUNG_GENERATION_FLAGS.some((flag) => nodeFlagGiven(flag))) return () => {};
  let stopped = false;
  /** Workers started and not up yet: their heaps may be made at any moment. */
  let starting = 0;
  let observing = false;
  const observer = new PerformanceObserver(() => check());
  const observe = () => {
    if (observing) return;
    observer.observe({ entryTypes: ['gc'] });
    observing = true;
  };
  const check = () => {
    if (stopped || youngGenerationBytes() < maxBytes) return;
    setFlagsFromString('--semi-space-growth-factor=1');
    // Capped: collections need no watching (nor their cost) until a Worker may set the factor back.
    if (starting === 0 && observing) {
      observer.disconnect();
      observing = false;
    }
  };
  const onWorker = (worker: Worker) => {
    starting++;
    observe();
    let up = false;
    const onUp = () => {
      if (up) return;
      up = true;
      starting--;
      check();
    };
    worker.once('online', onUp);
    worker.once('exit', onUp);
  };
  observe();
  check();
  process.on('worker', onWorker);
  return () => {
    stopped = true;
    observer.disconnect();
    observing = false;
    process.off('worker', onWorker);
  };
}
