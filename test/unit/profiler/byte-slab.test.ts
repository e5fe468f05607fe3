import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { ByteSlab } from '../../../lib/profiler/byte-slab.js';

const test = suite('byte slab');

test('copies a text as its UTF-8 bytes, multi-byte characters and lone surrogates included', () => {
  const slab = new ByteSlab();
  for (const text of ['', '{"a":1}', 'é€𝄞', '\ud800x', 'x'.repeat(100_000), '€'.repeat(20_000)]) {
    const bytes = slab.copy(text);
    assert.ok(Buffer.isBuffer(bytes));
    assert.equal(bytes, Buffer.from(text, 'utf8'), text.slice(0, 20));
  }
});

test('slices never overlap: earlier copies keep their bytes while later ones fill and replace the shared buffer', () => {
  const slab = new ByteSlab();
  const texts = Array.from({ length: 2_000 }, (_, i) => `{"i":${i},"u":"${'€é'.repeat(i % 50)}${'x'.repeat(i % 700)}"}`);
  const copies = texts.map((text) => slab.copy(text));
  texts.forEach((text, i) => assert.is((copies[i] as Buffer).toString('utf8'), text, `copy ${i}`));
  const shared = new Set(copies.map((copy) => copy.buffer));
  assert.ok(shared.size > 1 && shared.size < 100, `${shared.size} shared buffers for about 1.5 MB`);
});

test('a shared buffer is reused only once every copy in it is released', () => {
  const slab = new ByteSlab();
  const text = 'y'.repeat(10_000);
  const first = Array.from({ length: 100 }, () => slab.copy(text));
  const groups = new Map<ArrayBufferLike, Buffer[]>();
  for (const copy of first) groups.set(copy.buffer, [...(groups.get(copy.buffer) ?? []), copy]);
  assert.ok(groups.size >= 4, `${groups.size} shared buffers for 1 MB`);
  assert.is(slab.buffersInUse, groups.size);
  const [oldest, ...rest] = [...groups.values()];
  // Releasing all but one copy of the first buffer frees nothing.
  for (const copy of oldest!.slice(1)) slab.release(copy);
  assert.is(slab.buffersInUse, groups.size);
  slab.release(oldest![0]!);
  assert.is(slab.buffersInUse, groups.size - 1);
  // Filling the current buffer takes the freed one next; copies still held keep their bytes.
  const later = Array.from({ length: 60 }, () => slab.copy('z'.repeat(10_000)));
  assert.ok(later.some((copy) => copy.buffer === oldest![0]!.buffer), 'the emptied buffer is reused');
  for (const group of rest) for (const copy of group) assert.is(copy.toString(), text);
  for (const copy of later) assert.is(copy.toString(), 'z'.repeat(10_000));
  // A copy too large to share has its own buffer; releasing it is harmless.
  const large = slab.copy('w'.repeat(100_000));
  slab.release(large);
  assert.is(large.toString(), 'w'.repeat(100_000));
});

test.run();
