// Without --enable-source-maps (an embedder's `node app.js`) V8 names the compiled files; debug
// pages map frames back to their sources through the `.js.map` files beside them.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { clearSourceMapCache, mapFrameToSource } from '../../../lib/errors/source-maps.js';
import type { StackFrame } from '../../../lib/errors/stack-frames.js';

function frameAt(file: string, line: number, column: number): StackFrame {
  return { function: 'f', file, line, column, native: false, internal: false };
}

/** A compiled file whose line 1 maps to line 5, column 3 of `src/a.ts` (mappings `AAIE`), and line 2 to nothing. */
function compiled(dir: string, mapping: string, extra: Record<string, unknown> = {}): string {
  const file = join(dir, 'a.js');
  writeFileSync(file, `throw new Error('x');\nvoid 0;\n${mapping}\n`);
  writeFileSync(join(dir, 'a.js.map'), JSON.stringify({ version: 3, file: 'a.js', sources: ['src/a.ts'], names: [], mappings: 'AAIE', ...extra }));
  return file;
}

test('a frame of a compiled file is named by the source its map gives: file, line and column', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hk-maps-'));
  try {
    clearSourceMapCache();
    const file = compiled(dir, '//# sourceMappingURL=a.js.map');
    assert.equal(mapFrameToSource(frameAt(file, 1, 7)), { ...frameAt(join(dir, 'src', 'a.ts'), 5, 3) });
    // A line the map does not cover keeps the compiled position (findEntry would give an earlier line's).
    assert.equal(mapFrameToSource(frameAt(file, 2, 1)), frameAt(file, 2, 1));
    // sourceRoot is where the sources are.
    clearSourceMapCache();
    const rooted = compiled(dir, '//# sourceMappingURL=a.js.map', { sourceRoot: '../elsewhere' });
    assert.is(mapFrameToSource(frameAt(rooted, 1, 1)).file, join(dir, '..', 'elsewhere', 'src', 'a.ts'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a frame keeps its compiled position when no map beside its file can be read', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hk-maps-'));
  try {
    for (const comment of ['', '//# sourceMappingURL=data:application/json;base64,e30=', '//# sourceMappingURL=https://example.test/a.js.map', '//# sourceMappingURL=/etc/a.js.map', '//# sourceMappingURL=missing.js.map']) {
      clearSourceMapCache();
      const file = compiled(dir, comment);
      assert.equal(mapFrameToSource(frameAt(file, 1, 1)), frameAt(file, 1, 1), comment);
    }
    clearSourceMapCache();
    const broken = compiled(dir, '//# sourceMappingURL=a.js.map');
    writeFileSync(`${broken}.map`, '{ not json');
    assert.equal(mapFrameToSource(frameAt(broken, 1, 1)), frameAt(broken, 1, 1), 'a map that is no JSON');
    for (const frame of [frameAt('relative/a.js', 1, 1), frameAt(join(dir, 'a.ts'), 1, 1), { ...frameAt(broken, 1, 1), line: null }]) {
      assert.equal(mapFrameToSource(frame), frame);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without --enable-source-maps, the frames a debug page shows name this package\'s .ts sources', () => {
  // The test runner turns source maps on; a child process of its own runs without them.
  const script = `
    const { flattenError } = await import(${JSON.stringify(new URL('../../../lib/errors/index.js', import.meta.url).href)});
    const { Route } = await import(${JSON.stringify(new URL('../../../lib/routing/index.js', import.meta.url).href)});
    let error;
    try { new Route('/x', { methods: ['NOT A METHOD'] }); } catch (caught) { error = caught; }
    const file = (options) => flattenError(error, options)[0].frames[0].file;
    process.stdout.write(JSON.stringify([process.sourceMapsEnabled, file({ sourceMaps: true }), file({})]));`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 10_000 });
  const [enabled, mapped, compiledFile] = JSON.parse(result.stdout || 'null') as [boolean, string, string];
  assert.is(enabled, false, result.stderr);
  assert.match(mapped, /lib\/routing\/route\.ts$/);
  assert.match(compiledFile, /dist\/lib\/routing\/route\.js$/);
});

test('source maps turned on after the modules loaded (process.setSourceMapsEnabled late): debug-page frames still name the .ts sources', () => {
  const script = `
    const { flattenError } = await import(${JSON.stringify(new URL('../../../lib/errors/index.js', import.meta.url).href)});
    const { Route } = await import(${JSON.stringify(new URL('../../../lib/routing/index.js', import.meta.url).href)});
    process.setSourceMapsEnabled(true);
    let error;
    try { new Route('/x', { methods: ['NOT A METHOD'] }); } catch (caught) { error = caught; }
    process.stdout.write(JSON.stringify([process.sourceMapsEnabled, error.stack.includes('route.js'), flattenError(error, { sourceMaps: true })[0].frames[0].file]));`;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 10_000 });
  const [enabled, compiledInStack, mapped] = JSON.parse(result.stdout || 'null') as [boolean, boolean, string];
  assert.is(enabled, true, result.stderr);
  assert.ok(compiledInStack, 'V8 names the compiled file: the module loaded before source maps were on');
  assert.match(mapped, /lib\/routing\/route\.ts$/);
});

test.run();
