import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { TakenTokens } from '../../../../lib/profiler/storage/taken-tokens.js';

const test = suite('taken tokens');

test('has, add and delete agree for tokens in the bitmap and in the Set, and size counts both', () => {
  const taken = new TakenTokens('ab');
  for (const token of ['ab0000', 'abffff', 'ab12cd', 'ab12cd0', 'ab12cdef01', 'cd0000', 'abCDEF']) {
    assert.is(taken.has(token), false, token);
    taken.add(token);
    assert.is(taken.has(token), true, token);
  }
  assert.is(taken.size, 7, 'ab12cd added once');
  taken.add('ab12cd');
  assert.is(taken.size, 7, 'adding a held token changes nothing');
  assert.is(taken.has('ab12ce'), false, 'a neighbouring bit');
  assert.is(taken.has('abcdef'), false, 'not the upper-case token');
  taken.delete('ab12cd');
  taken.delete('ab12cd');
  taken.delete('cd0000');
  assert.is(taken.size, 5);
  assert.is(taken.has('ab12cd'), false);
  assert.is(taken.has('ab12cd0'), true, 'a 7-character token of the same start stays');
});

test('draw returns distinct free tokens of the prefix and length, skipping held and busy ones', () => {
  const taken = new TakenTokens('7f');
  for (let suffix = 0; suffix < 0x8000; suffix++) taken.add(`7f${suffix.toString(16).padStart(4, '0')}`);
  const busy = new Set<string>();
  for (let suffix = 0x8000; suffix < 0xc000; suffix++) busy.add(`7f${suffix.toString(16).padStart(4, '0')}`);
  const drawn = new Set<string>();
  for (let i = 0; i < 2000; i++) {
    const token = taken.draw(6, 200, (candidate) => busy.has(candidate));
    assert.ok(token !== null);
    assert.match(token, /^7f[c-f][0-9a-f]{3}$/);
    assert.is(drawn.has(token), false, 'never drawn twice');
    assert.is(taken.has(token), true, 'held once drawn');
    drawn.add(token);
  }
  assert.is(taken.size, 0x8000 + 2000);
});

test('draw of other lengths goes through the Set; a full bitmap gives null', () => {
  const taken = new TakenTokens('00');
  const token = taken.draw(10, 8, () => false);
  assert.match(token ?? '', /^00[0-9a-f]{8}$/);
  assert.is(taken.has(token ?? ''), true);
  for (let suffix = 0; suffix < 0x10000; suffix++) taken.add(`00${suffix.toString(16).padStart(4, '0')}`);
  assert.is(taken.size, 0x10001);
  assert.is(taken.draw(6, 100, () => false), null);
});

test('a token with a character that is no lower-case hex digit shares no bit of the bitmap; the first and last bits are deleted like the others', () => {
  const bitmapTokens = Array.from({ length: 0x10000 }, (_, slot) => `ab${slot.toString(16).padStart(4, '0')}`);
  for (const odd of ['ab000g', 'ab1g00', 'ab000z', 'ab00:0', 'ab00/0', 'ab000G', 'ab00 0']) {
    const taken = new TakenTokens('ab');
    taken.add(odd);
    assert.ok(taken.has(odd), odd);
    assert.is(bitmapTokens.filter((token) => taken.has(token)).length, 0, odd);
    taken.delete(odd);
    assert.is(taken.size, 0, odd);
  }
  const taken = new TakenTokens('ab');
  for (const edge of ['ab0000', 'abffff']) {
    taken.add(edge);
    taken.delete(edge);
    assert.not.ok(taken.has(edge), edge);
  }
  assert.is(taken.size, 0);
});

test('draw makes `attempts` tries at most, and asks `busy` for tokens of other lengths too', () => {
  for (const length of [6, 10]) {
    let asked = 0;
    const taken = new TakenTokens('cd');
    assert.is(taken.draw(length, 5, () => (asked++, true)), null, `${length}: every candidate busy`);
    assert.is(asked, 5, `${length}: five tries`);
    assert.is(taken.size, 0, `${length}: nothing taken`);
  }
  assert.is(new TakenTokens('cd').draw(6, 0, () => false), null, 'no try');
});

test.run();
