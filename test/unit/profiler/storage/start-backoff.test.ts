import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FIRST_RESTART_DELAY_MS, MAX_RESTART_DELAY_MS, StartBackoff } from '../../../../lib/profiler/storage/start-backoff.js';

const test = suite('storage thread start backoff');

/** A backoff on a clock the test moves, and what the clock reads. */
function onClock(): { backoff: StartBackoff; advance(ms: number): void } {
  let now = 1_000;
  return { backoff: new StartBackoff(() => now), advance: (ms) => (now += ms) };
}

/** How long after a failed start `backoff` lets the next one start, read off the clock 1 ms at a time. */
function waitAfterFailure(backoff: StartBackoff, advance: (ms: number) => void): number {
  backoff.failed();
  let waited = 0;
  while (!backoff.mayStart()) {
    advance(1);
    waited++;
  }
  return waited;
}

test('a first start needs no wait', () => {
  assert.ok(onClock().backoff.mayStart());
});

test('after each failed start the next waits twice as long as the last, from the first delay up to the longest', () => {
  const { backoff, advance } = onClock();
  const waits: number[] = [];
  for (let i = 0; i < 9; i++) waits.push(waitAfterFailure(backoff, advance));
  assert.is(waits[0], FIRST_RESTART_DELAY_MS);
  for (let i = 1; i < waits.length; i++) assert.is(waits[i], Math.min(waits[i - 1]! * 2, MAX_RESTART_DELAY_MS), `wait ${i}`);
  assert.is(waits.at(-1), MAX_RESTART_DELAY_MS, 'bounded');
});

test('a thread that starts resets the wait: the next failure waits the first delay again, and a start right after it needs none', () => {
  const { backoff, advance } = onClock();
  for (let i = 0; i < 4; i++) waitAfterFailure(backoff, advance);
  backoff.failed();
  backoff.started();
  assert.ok(backoff.mayStart(), 'no wait once a thread started');
  assert.is(waitAfterFailure(backoff, advance), FIRST_RESTART_DELAY_MS);
});

test.run();
