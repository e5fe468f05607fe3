import { open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_INDEX_LINE_BYTES, appendIndexLine, decodeIndexLine, encodeIndexLine, readIndexFrom, type IndexEntry } from '../../../../lib/profiler/storage/index-file.js';
import { BASE_TIME, makeTempDir } from './fixtures.js';

const test = suite('index file');

let dir = '';
let cleanup: () => Promise<void> = async () => {};

test.before(async () => {
  ({ dir, cleanup } = await makeTempDir('index-file'));
});

test.after(async () => {
  await cleanup();
});

function entry(token: string, overrides: Partial<IndexEntry> = {}): IndexEntry {
  return { token, parent: null, ip: '::1', method: 'GET', url: 'http://h/a?b="c"\n', time: BASE_TIME, status: 200, bytes: 1234, ...overrides };
}

test('a line decodes to the entry it encodes, quotes and newlines in the URL included', () => {
  const original = entry('abcdef', { parent: '123456', method: 'PATCH' });
  const line = encodeIndexLine(original);
  assert.ok(line.endsWith('\n') && line.indexOf('\n') === line.length - 1, 'one line');
  assert.equal(decodeIndexLine(line.slice(0, -1)), original);
});

test('a line never exceeds the atomic-append size: long URLs are cut, multi-byte ones too', () => {
  for (const url of ['http://h/' + 'a'.repeat(50_000), 'http://h/' + '€'.repeat(20_000), 'http://h/' + '\u0001'.repeat(5_000)]) {
    const line = encodeIndexLine(entry('abcdef', { url, ip: 'x'.repeat(500), method: 'M'.repeat(500) }));
    assert.ok(Buffer.byteLength(line) <= MAX_INDEX_LINE_BYTES, `${Buffer.byteLength(line)} bytes`);
    assert.ok(url.startsWith(decodeIndexLine(line.slice(0, -1))?.url ?? '-'));
  }
});

test('a torn line is not an entry, but a whole line glued after it is recovered', () => {
  const whole = encodeIndexLine(entry('abcdef')).slice(0, -1);
  assert.is(decodeIndexLine(whole.slice(0, 30)), null);
  assert.equal(decodeIndexLine(whole.slice(0, 30) + whole)?.token, 'abcdef');
  assert.is(decodeIndexLine('{"t":"ABCDEF","ts":1}'), null, 'fields are validated');
  assert.is(decodeIndexLine('{"t":"../etc","ts":1,"s":200,"m":"GET","i":"","p":null,"b":1,"u":""}'), null, 'tokens are validated');
});

test('reading stops before a partial last line and resumes from there', async () => {
  const path = join(dir, 'partial.ndjson');
  const first = encodeIndexLine(entry('aaaaaa'));
  const second = encodeIndexLine(entry('bbbbbb'));
  await writeFile(path, first + second.slice(0, 20));
  const handle = await open(path, 'r');
  try {
    const chunk = await readIndexFrom(handle, 0);
    assert.equal(chunk.entries.map((e) => e.token), ['aaaaaa']);
    assert.is(chunk.end, Buffer.byteLength(first));
    await writeFile(path, first + second);
    const rest = await readIndexFrom(handle, chunk.end);
    assert.equal(rest.entries.map((e) => e.token), ['bbbbbb']);
  } finally {
    await handle.close();
  }
});

test('appendIndexLine appends whole lines and creates the file', async () => {
  const path = join(dir, 'append.ndjson');
  await Promise.all(Array.from({ length: 50 }, (_, i) => appendIndexLine(path, encodeIndexLine(entry((0x100000 + i).toString(16))))));
  const lines = (await readFile(path, 'utf8')).split('\n').filter(Boolean);
  assert.is(lines.length, 50);
  assert.ok(lines.every((line) => decodeIndexLine(line) !== null));
});

test.run();
