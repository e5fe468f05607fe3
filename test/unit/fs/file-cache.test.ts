import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FileCache } from '../../../lib/fs/file-cache.js';

test('a FileCache loads a file once while its mtime and size hold, again once it changes, and keeps the most recently used', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hk-file-cache-'));
  try {
    const cache = new FileCache<string>(2);
    const loads: string[] = [];
    const load = (path: string): string => {
      loads.push(path);
      return `loaded ${path.slice(dir.length)}`;
    };
    const [a, b, c] = ['a', 'b', 'c'].map((name) => {
      const path = join(dir, name);
      writeFileSync(path, name);
      return path;
    }) as [string, string, string];
    assert.is(cache.get(a, load), 'loaded /a');
    assert.is(cache.get(a, load), 'loaded /a');
    assert.equal(loads, [a]);
    writeFileSync(a, 'a longer');
    cache.get(a, load);
    assert.equal(loads, [a, a], 'read again after it changed');
    cache.get(b, load);
    cache.get(a, load); // a is now the most recently used
    cache.get(c, load); // b goes
    assert.is(cache.size, 2);
    cache.get(a, load);
    cache.get(b, load);
    assert.equal(loads, [a, a, b, c, b]);
    assert.is(cache.get(join(dir, 'missing'), load), undefined);
    assert.is(cache.get(dir, load), undefined, 'a directory is no file');
    assert.is(loads.length, 5);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
