import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { recordLines, type IndexEntry, type IndexRecord } from '../../../../lib/profiler/storage/index-file.js';
import { ProfileIndex } from '../../../../lib/profiler/storage/profile-index.js';
import { BASE_TIME } from './fixtures.js';

const test = suite('profile index');

const FILE = { dev: 1, ino: 1 };

function records(from: number, count: number, segment: string | null, time = (i: number) => BASE_TIME + i): IndexRecord[] {
  const entries: IndexEntry[] = [];
  for (let i = from; i < from + count; i++) {
    entries.push({ token: (0x100000 + i).toString(16), parent: null, ip: '::1', method: 'GET', url: 'http://h/', time: time(i), status: 200, bytes: 10, segment, offset: segment === null ? 0 : i * 10 });
  }
  return recordLines(entries).records;
}

test('addAll counts entries, bytes and segments; a token already held keeps its first record', () => {
  const index = new ProfileIndex('/nonexistent/index.ndjson');
  const first = records(0, 5, 'a1-1-00000000.ndjson');
  index.addAll(first);
  index.addAll([...records(5, 3, 'a2-1-00000000.ndjson'), ...records(8, 2, null), ...records(0, 1, 'a3-1-00000000.ndjson')]);
  assert.is(index.size, 10);
  assert.is(index.bytes, 100);
  assert.is(index.get(first[0]!.token), first[0]);
  assert.ok(index.refersTo('a1-1-00000000.ndjson') && index.refersTo('a2-1-00000000.ndjson'));
  assert.not.ok(index.refersTo('a3-1-00000000.ndjson'), 'the duplicate did not count for its segment');
});

test('compacted drops the removed records (oldest or not, in any order) and forgets segments no entry refers to', () => {
  const index = new ProfileIndex('/nonexistent/index.ndjson');
  const old = records(0, 4, 'a1-1-00000000.ndjson');
  const mixed = records(4, 4, 'a2-1-00000000.ndjson');
  const young = records(8, 4, 'a3-1-00000000.ndjson');
  index.addAll([...old, ...mixed, ...young]);
  index.compacted([...old], 0, FILE, BASE_TIME + 3, BASE_TIME + 3);
  assert.is(index.size, 8);
  assert.not.ok(index.refersTo('a1-1-00000000.ndjson'));
  assert.is(index.oldest(), mixed[0]);
  // Out of time order, and a record the index does not hold (another copy of a held token): only held ones go.
  const stranger = records(9, 1, 'a3-1-00000000.ndjson')[0]!;
  index.compacted([young[2]!, mixed[1]!, stranger, mixed[3]!], 0, FILE, null, BASE_TIME + 3);
  assert.equal([...index.oldestFirst()].map((record) => record.token), [mixed[0]!, mixed[2]!, young[0]!, young[1]!, young[3]!].map((record) => record.token));
  assert.is(index.bytes, 50);
  assert.ok(index.refersTo('a2-1-00000000.ndjson') && index.refersTo('a3-1-00000000.ndjson'));
  index.compacted([mixed[0]!, mixed[2]!], 0, FILE, null, BASE_TIME + 3);
  assert.not.ok(index.refersTo('a2-1-00000000.ndjson'));
  assert.ok(index.get(stranger.token) !== undefined, 'the held record of that token stays');
});

test.run();
