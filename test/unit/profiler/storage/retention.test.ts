// keptRange on its own: which profiles the bounds keep, given in time order.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { droppedNewest, keptRange, TRIM_TO, type Retained } from '../../../../lib/profiler/storage/retention.js';
import { FUTURE_SLACK_MS } from '../../../../lib/profiler/storage/validation.js';

const test = suite('retention');

const NOW = 1_800_000_000_000;
const DAY = 86_400_000;
const roomy = { maxAge: DAY, maxProfiles: 1_000, maxBytes: 1e9 };

/** `count` profiles a second apart, the newest `newestAgo` ms before NOW, each `bytes` long. */
function series(count: number, newestAgo = 0, bytes = 100): Retained[] {
  return Array.from({ length: count }, (_, i) => ({ time: NOW - newestAgo - (count - 1 - i) * 1_000, bytes }));
}

test('within every bound, everything is kept', () => {
  assert.equal(keptRange(series(50), roomy, NOW), [0, 50]);
  assert.equal(keptRange([], roomy, NOW), [0, 0]);
});

test('profiles older than maxAge go, however few there are', () => {
  const profiles = series(10);
  // The 4 oldest are more than 5.5 s old.
  assert.equal(keptRange(profiles, { ...roomy, maxAge: 5_500 }, NOW), [4, 10]);
  assert.equal(keptRange(series(3, 2 * DAY), roomy, NOW), [3, 3], 'all expired: none kept');
});

test('a profile exactly maxAge old is kept, one a millisecond older goes', () => {
  const profiles = [{ time: NOW - 5_001, bytes: 100 }, { time: NOW - 5_000, bytes: 100 }, { time: NOW, bytes: 100 }];
  assert.equal(keptRange(profiles, { ...roomy, maxAge: 5_000 }, NOW), [1, 3]);
});

test('the count bound counts only the profiles the age bound keeps', () => {
  // 10 profiles a second apart, the 4 oldest past a maxAge of 5.5 s: 6 left.
  assert.equal(keptRange(series(10), { ...roomy, maxAge: 5_500, maxProfiles: 6 }, NOW), [4, 10], '6 left, at the bound: none more goes');
  // Bound 4: the 6 left are trimmed to 3, the newest.
  assert.equal(keptRange(series(10), { ...roomy, maxAge: 5_500, maxProfiles: 4 }, NOW), [7, 10]);
});

test('over maxProfiles, the oldest go until TRIM_TO of the bound is left', () => {
  const [first, end] = keptRange(series(120), { ...roomy, maxProfiles: 100 }, NOW);
  assert.is(end, 120, 'the newest are kept');
  assert.is(end - first, Math.floor(100 * TRIM_TO));
});

test('at maxProfiles exactly, nothing goes; a bound of one keeps the newest', () => {
  assert.equal(keptRange(series(100), { ...roomy, maxProfiles: 100 }, NOW), [0, 100]);
  assert.equal(keptRange(series(5), { ...roomy, maxProfiles: 1 }, NOW), [4, 5]);
});

test('over maxBytes, the oldest go until TRIM_TO of the bytes is left, and never the last one', () => {
  const [first, end] = keptRange(series(100, 0, 1_000), { ...roomy, maxBytes: 50_000 }, NOW);
  assert.is(end, 100);
  assert.is(end - first, 37, `${end - first} kept: the most whose 1,000 bytes each fit in 37,500`);
  assert.equal(keptRange(series(3, 0, 10_000), { ...roomy, maxBytes: 5_000 }, NOW), [2, 3], 'one profile over the bound alone stays');
});

test('over a bound, profiles dated ahead of the clock go first, furthest ahead first', () => {
  const profiles = [...series(6), { time: NOW + FUTURE_SLACK_MS + 1_000, bytes: 100 }, { time: NOW + FUTURE_SLACK_MS + 2_000, bytes: 100 }];
  // 8 profiles, bound 4: trimmed to 3; the two from the future are the first to go, then the 3 oldest.
  assert.equal(keptRange(profiles, { ...roomy, maxProfiles: 4 }, NOW), [3, 6]);
  // Only a little ahead (within the slack): an ordinary newest profile.
  const near = [...series(6), { time: NOW + FUTURE_SLACK_MS - 1_000, bytes: 100 }];
  assert.equal(keptRange(near, { ...roomy, maxProfiles: 4 }, NOW), [4, 7]);
  // Under the bounds, nothing goes, from the future or not.
  assert.equal(keptRange(profiles, roomy, NOW), [0, 8]);
});

test('over maxProfiles, only as many profiles dated ahead go as the trim needs, the furthest ahead', () => {
  const ahead = NOW + FUTURE_SLACK_MS;
  const profiles = [...series(3), { time: ahead + 1_000, bytes: 100 }, { time: ahead + 2_000, bytes: 100 }, { time: ahead + 3_000, bytes: 100 }, { time: ahead + 4_000, bytes: 100 }];
  // 7 profiles, bound 6: trimmed to 4; the 3 furthest ahead go, the nearest of them stays with the 3 others.
  assert.equal(keptRange(profiles, { ...roomy, maxProfiles: 6 }, NOW), [0, 4]);
});

test('a profile dated exactly FUTURE_SLACK_MS ahead is an ordinary newest profile, under either bound', () => {
  const profiles = [...series(4, 0, 1_000), { time: NOW + FUTURE_SLACK_MS, bytes: 1_000 }];
  // Bound 4: trimmed to 3, the oldest going.
  assert.equal(keptRange(profiles, { ...roomy, maxProfiles: 4 }, NOW), [2, 5]);
  // 5,000 bytes, bound 4,000, target 3,000: the oldest go.
  assert.equal(keptRange(profiles, { ...roomy, maxBytes: 4_000 }, NOW), [2, 5]);
});

test('at maxBytes exactly nothing goes; over it, the oldest go until the bytes are at most TRIM_TO of it, exactly', () => {
  assert.equal(keptRange(series(10, 0, 1_000), { ...roomy, maxBytes: 10_000 }, NOW), [0, 10], 'at the bound');
  assert.equal(keptRange(series(10, 0, 1_000), { ...roomy, maxBytes: 10_001 }, NOW), [0, 10], 'between TRIM_TO of the bound and the bound');
  // 5,000 bytes, bound 4,000: trimmed to 3,000, 3 profiles, not fewer.
  assert.equal(keptRange(series(5, 0, 1_000), { ...roomy, maxBytes: 4_000 }, NOW), [2, 5]);
});

test('a profile of exactly maxBytes is within the byte bound alone: one that is, newest, stays, and beside one over it, the one over it goes', () => {
  // The newest, of the bound exactly, is not alone over it: the oldest goes.
  assert.equal(keptRange([{ time: NOW - 1, bytes: 100 }, { time: NOW, bytes: 1_000 }], { ...roomy, maxBytes: 1_000 }, NOW), [1, 2]);
  // One of the bound exactly fits, so a newest one over it goes rather than it.
  assert.equal(keptRange([{ time: NOW - 1, bytes: 1_000 }, { time: NOW, bytes: 1_001 }], { ...roomy, maxBytes: 1_000 }, NOW), [0, 1]);
});

test('over maxBytes, profiles from the future go first too', () => {
  const profiles = [...series(4, 0, 1_000), { time: NOW + FUTURE_SLACK_MS + 1, bytes: 3_000 }];
  // 7,000 bytes, bound 6,000, target 4,500: the 3,000 from the future go, leaving 4,000.
  assert.equal(keptRange(profiles, { ...roomy, maxBytes: 6_000 }, NOW), [0, 4]);
});

test('over maxBytes, a newest profile alone over the whole bound (a corrupt index line) goes, not every one before it', () => {
  const profiles = series(10);
  profiles[9] = { ...profiles[9]!, bytes: Number.MAX_SAFE_INTEGER };
  assert.equal(keptRange(profiles, { ...roomy, maxBytes: 10_000 }, NOW), [0, 9]);
  // Two of them: both go.
  profiles[8] = { ...profiles[8]!, bytes: 20_000 };
  assert.equal(keptRange(profiles, { ...roomy, maxBytes: 10_000 }, NOW), [0, 8]);
});

test('droppedNewest says from which time profiles dated ahead went from the newest end, and over which size ones alone over the byte bound went', () => {
  const ahead = NOW + FUTURE_SLACK_MS + 1_000;
  const profiles = [...series(4), { time: ahead, bytes: 100 }, { time: ahead + 5, bytes: 100 }];
  const countBound = { ...roomy, maxProfiles: 4 };
  const [, end] = keptRange(profiles, countBound, NOW);
  assert.equal(droppedNewest(profiles, end, countBound, NOW), { aheadFrom: ahead, overBytes: null });
  const large = [...series(3), { time: NOW + 1, bytes: 50_000 }];
  const byteBound = { ...roomy, maxBytes: 10_000 };
  const [, endLarge] = keptRange(large, byteBound, NOW);
  assert.is(endLarge, 3);
  assert.equal(droppedNewest(large, endLarge, byteBound, NOW), { aheadFrom: null, overBytes: 10_000 });
  assert.equal(droppedNewest(series(5), 5, roomy, NOW), { aheadFrom: null, overBytes: null }, 'none from the newest end');
  const atSlack = [...series(3), { time: NOW + FUTURE_SLACK_MS, bytes: 50_000 }];
  assert.equal(droppedNewest(atSlack, 3, byteBound, NOW), { aheadFrom: null, overBytes: 10_000 }, 'dated exactly FUTURE_SLACK_MS ahead: not ahead');
});

test.run();
