import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeFlagGiven } from '../../../lib/server/young-generation.js';

const MB = 1024 * 1024;
const moduleUrl = new URL('../../../lib/server/young-generation.js', import.meta.url).href;

/**
 * Runs a fresh node (its new space at V8's start size) that allocates, keeping the last 60,000
 * objects alive so that enough survives each collection for V8 to grow new space, and yielding
 * after every 5,000 (the cap is checked after collections, from the event loop, as a server's
 * requests let it be). Prints the largest
 * new space seen, in bytes. `cap` caps it first; halfway through, `worker` starts a Worker,
 * `shrink` has V8 shrink new space (a heap snapshot reduces memory, as its memory reducer does on
 * an idle server) and `lift` lifts the cap; the largest is then of the second half only.
 */
function largestNewSpace({ cap, worker = false, shrink = false, lift = false, nodeArgs = [] }: { cap?: number; worker?: boolean; shrink?: boolean; lift?: boolean; nodeArgs?: string[] }): number {
  const script = `
    import { Worker } from 'node:worker_threads';
    import { getHeapSnapshot } from 'node:v8';
    const { capYoungGeneration, youngGenerationBytes } = await import(${JSON.stringify(moduleUrl)});
    const lift = ${cap === undefined ? '() => {}' : `capYoungGeneration(${cap})`};
    let kept = [];
    let largest = youngGenerationBytes();
    for (let chunk = 0; chunk < 1200; chunk++) {
      if (${worker} && chunk === 600) {
        const thread = new Worker('setTimeout(() => {}, 10)', { eval: true, resourceLimits: { maxYoungGenerationSizeMb: 6 } });
        await new Promise((resolve) => thread.once('online', resolve));
      }
      if (${shrink} && chunk === 600) {
        for await (const _ of getHeapSnapshot());
        if (youngGenerationBytes() > 2 * 1024 * 1024) throw new Error('the heap snapshot left new space as it was');
        largest = 0;
      }
      if (${lift} && chunk === 600) {
        lift();
        largest = 0;
      }
      for (let i = 0; i < 5000; i++) {
        kept.push({ i, text: 'x' + i });
        if (kept.length > 60000) kept = [];
      }
      largest = Math.max(largest, youngGenerationBytes());
      await new Promise((resolve) => setImmediate(resolve));
    }
    process.stdout.write(String(largest));
    process.exit(0);
  `;
  const run = spawnSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH },
    timeout: 20_000,
  });
  if (run.error) throw run.error;
  assert.is(run.status, 0, run.stderr);
  return Number(run.stdout);
}

test('without a cap the allocation below grows new space to 16 MB or more (so the tests below can fail)', () => {
  assert.ok(largestNewSpace({}) >= 16 * MB);
});

test('capYoungGeneration(8 MB): new space stops growing at 8 MB', () => {
  const largest = largestNewSpace({ cap: 8 * MB });
  assert.ok(largest <= 8 * MB, `new space reached ${largest / MB} MB`);
  assert.ok(largest >= 4 * MB, `new space stayed at ${largest / MB} MB`);
});

test('capYoungGeneration: a Worker started after the cap (V8 resets the growth factor for its heap) does not lift it', () => {
  const largest = largestNewSpace({ cap: 8 * MB, worker: true });
  assert.ok(largest <= 8 * MB, `new space reached ${largest / MB} MB`);
});

test('capYoungGeneration: new space that V8 shrinks (reducing memory, as on an idle server) grows back to the cap, not frozen small', () => {
  const largest = largestNewSpace({ cap: 8 * MB, shrink: true });
  assert.ok(largest >= 4 * MB, `new space stayed at ${largest / MB} MB`);
  assert.ok(largest <= 8 * MB, `new space reached ${largest / MB} MB`);
});

test('capYoungGeneration: the function it returns lifts the cap, and new space grows past it again (main() in a process of its caller stops it)', () => {
  assert.ok(largestNewSpace({ cap: 8 * MB, lift: true }) >= 16 * MB);
});

test('capYoungGeneration does nothing when node was started with a young generation flag of its own', () => {
  assert.ok(largestNewSpace({ cap: 8 * MB, nodeArgs: ['--max-semi-space-size=16'] }) >= 16 * MB);
});

test('capYoungGeneration refuses a cap that is not above 0', async () => {
  const { capYoungGeneration } = await import('../../../lib/server/young-generation.js');
  assert.throws(() => capYoungGeneration(0), /maxBytes must be above 0, got 0/);
  assert.throws(() => capYoungGeneration(Number.NaN), /maxBytes must be above 0, got NaN/);
});

test('nodeFlagGiven finds a flag on the command line or in NODE_OPTIONS, with or without a value, dashes or underscores', () => {
  assert.ok(nodeFlagGiven('--heap-growing-percent', ['--heap-growing-percent=50'], ''));
  assert.ok(nodeFlagGiven('--max-semi-space-size', [], '--enable-source-maps --max_semi_space_size=4'));
  assert.ok(nodeFlagGiven('--semi-space-growth-factor', ['--semi-space-growth-factor', '3'], ''));
  assert.not.ok(nodeFlagGiven('--max-semi-space-size', ['--max-semi-space-size-x=1', '--enable-source-maps'], '  '));
  assert.not.ok(nodeFlagGiven('--heap-growing-percent', [], ''));
});

test('nodeFlagGiven reads NODE_OPTIONS as node does: a double-quoted flag is that flag, a flag\'s name inside a quoted value is none', () => {
  assert.ok(nodeFlagGiven('--max-semi-space-size', [], '"--max-semi-space-size=16"'));
  assert.ok(nodeFlagGiven('--max-semi-space-size', [], '--title "a b" "--max-semi-space-size"=16'));
  assert.ok(nodeFlagGiven('--max-semi-space-size', [], '--require "dir\\"with quote.js" --max-semi-space-size=4'));
  assert.not.ok(nodeFlagGiven('--max-semi-space-size', [], '--title="a --max-semi-space-size=4"'));
  assert.not.ok(nodeFlagGiven('--max-semi-space-size', [], '--title="a \\" --max-semi-space-size=4"'));
});

test.run();
