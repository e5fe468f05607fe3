/**
 * A cap on V8's young generation ("new space") for a process already running.
 *
 * V8 starts new space small and doubles it each time enough of it survives a collection, up to
 * `--max-semi-space-size` (16 MB a semi-space, 32 MB of new space, on 64-bit). A server that
 * allocates fast and keeps things briefly, as a debug server recording every request does,
 * reaches that maximum within a second, and all of it stays resident. Half of it, or a quarter,
 * serves as well: what survives a collection is the requests in flight, not the size of the space
 * (bench/README.md: 8 MB kept throughput as it was and the profiler bench's peak RSS about 30 MB lower).
 *
 * `--max-semi-space-size` is read once, when the heap is made, so only node's command line sets
 * it. The growth factor (`--semi-space-growth-factor`, 2) is read at each growth: set to 1 once
 * new space has reached the cap, new space grows no further. V8 puts the factor back to 2 whenever
 * it makes a heap (each new Worker), and shrinks new space when it reduces memory (its memory
 * reducer, once a server goes idle): the factor is set again after each collection and once each
 * Worker is up, 1 at the cap and 2 below it.
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
  const names = [...execArgv, ...nodeOptionsArgs(nodeOptions)].map((arg) => arg.split('=', 1)[0]!.replaceAll('_', '-'));
  return names.includes(wanted);
}

/**
 * NODE_OPTIONS as node splits it: at spaces outside double quotes, which are dropped (a backslash
 * in them escapes the next character). `"--max-semi-space-size=16"` is that flag, and a quoted
 * value holding a flag's name (`--title="a --max-semi-space-size"`) is not.
 */
function nodeOptionsArgs(nodeOptions: string): string[] {
  const args = nodeOptions.match(/(?:[^ "]|"(?:\\[^]|[^"\\])*"?)+/g) ?? [];
  return args.map((arg) => arg.replace(/"((?:\\[^]|[^"\\])*)"?/g, (_quoted, inside: string) => inside.replace(/\\([^])/g, '$1')));
}

/** The caps set and not stopped, in this thread: the smallest holds (the growth factor is one for the process). */
const caps: number[] = [];
/** Watches collections while a cap is set, for the process's life (see check). */
let observer: PerformanceObserver | undefined;

/**
 * Sets the growth factor for new space as it is now: 1 at the cap or above, else 2 (V8's own). Set
 * at each collection, not once: V8 shrinks new space (a collection reducing memory, as its memory
 * reducer runs on a server gone idle, or a heap snapshot), which at 1 could never grow back; and a
 * Worker's heap puts the factor back to 2 behind our back.
 */
function check(): void {
  if (caps.length > 0) setFlagsFromString(`--semi-space-growth-factor=${youngGenerationBytes() < Math.min(...caps) ? 2 : 1}`);
}

/** A Worker's heap is made on its own thread: the cap is set again as soon as it is up, not at the next collection. */
function onWorker(worker: Worker): void {
  worker.once('online', check);
}

/**
 * Stops this thread's new space from growing once it is `maxBytes` or more. V8 doubles it (2, 4,
 * 8, 16, 32 MB), so it stops at the first of those at or above `maxBytes`; new space already larger
 * stays as it is, and new space V8 shrinks grows back to the cap. Does nothing when node was given
 * one of the young generation's own flags. Returns a function that lifts the cap. A process-wide V8
 * setting (a Worker's new space stops growing too): for a process that is yours.
 */
export function capYoungGeneration(maxBytes: number): () => void {
  if (!(maxBytes > 0)) throw new RangeError(`capYoungGeneration: maxBytes must be above 0, got ${maxBytes}`);
  if (YOUNG_GENERATION_FLAGS.some((flag) => nodeFlagGiven(flag))) return () => {};
  caps.push(maxBytes);
  if (observer === undefined) {
    observer = new PerformanceObserver(check);
    observer.observe({ entryTypes: ['gc'] });
    process.on('worker', onWorker);
  }
  check();
  let lifted = false;
  return () => {
    if (lifted) return;
    lifted = true;
    caps.splice(caps.indexOf(maxBytes), 1);
    if (caps.length > 0) return check();
    observer!.disconnect();
    observer = undefined;
    process.off('worker', onWorker);
    setFlagsFromString('--semi-space-growth-factor=2');
  };
}
