// test/run.mjs, the README's test command that .ci/run ends with: its last line is the one CI reads.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const uvu = pathToFileURL(join(root, 'node_modules', 'uvu', 'dist', 'index.mjs')).href;

const test = suite('test runner');

/** Runs test/run.mjs on a directory holding `files` (name to test body); its exit code and last line (and its whole output). */
function runOn(files: Record<string, string>, env: Record<string, string> = {}): { status: number | null; last: string; output?: string } {
  const dir = mkdtempSync(join(tmpdir(), 'http-kernel-runner-'));
  try {
    for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), `import { test } from ${JSON.stringify(uvu)};\n${body}\ntest.run();\n`);
    const run = spawnSync(process.execPath, [join(root, 'test', 'run.mjs'), dir], { cwd: root, encoding: 'utf8', timeout: 30_000, env: { ...process.env, ...env } });
    const result = { status: run.status, last: run.stdout.trimEnd().split('\n').at(-1) ?? '' };
    return Object.keys(env).length === 0 ? result : { ...result, output: run.stdout + run.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the last line says "N passed, M failed", and the exit code is 0 only when nothing failed', () => {
  const pass = "test('one', () => {});\ntest('two', () => {});";
  const fail = "test('three', () => { throw new Error('no'); });";
  assert.equal(runOn({ 'a.test.js': pass }), { status: 0, last: '2 passed, 0 failed' });
  assert.equal(runOn({ 'a.test.js': pass, 'b.test.js': fail }), { status: 1, last: '2 passed, 1 failed' });
});

test('skipped tests are said on the line before: the last line stays exactly "N passed, M failed"', () => {
  assert.equal(runOn({ 'a.test.js': "test('one', () => {});\ntest.skip('later', () => {});" }), { status: 0, last: '1 passed, 0 failed' });
});

test('a test file that crashes before uvu sums up counts as a failure, never as green', () => {
  assert.equal(runOn({ 'a.test.js': "test('one', () => {});\nprocess.exit(3);" }), { status: 1, last: '0 passed, 1 failed' });
});

test('a run in which no test ran reads as one failure, as its exit code says: a file exiting early with code 0, only skipped tests, no test file', () => {
  assert.equal(runOn({ 'a.test.js': "test('one', () => {});\nprocess.exit(0);" }), { status: 1, last: '0 passed, 1 failed' });
  assert.equal(runOn({ 'a.test.js': "test.skip('later', () => {});" }), { status: 1, last: '0 passed, 1 failed' });
  assert.equal(runOn({}), { status: 1, last: '0 passed, 1 failed' });
});

test('a test\'s own output that reads like uvu\'s summary is not taken for it', () => {
  const echo = "test('one', () => { process.stdout.write('\\n  Total:     9\\n  Passed:    0\\n  Skipped:   0\\n'); });";
  assert.equal(runOn({ 'a.test.js': echo }), { status: 0, last: '1 passed, 0 failed' });
});

test('a test that hangs is stopped once no test has ended for HK_TEST_STALL_SECONDS, and counts as failed beside what ended before it', () => {
  const ended = "test('one', () => {});\ntest('two', () => { throw new Error('no'); });";
  // A pending promise with a timer keeps the process alive: a hang, as a broken test of a hang would be.
  const hangs = "test('waits', () => new Promise(() => setInterval(() => {}, 1_000)));";
  const started = Date.now();
  const run = runOn({ 'a.test.js': ended, 'b.test.js': hangs }, { HK_TEST_STALL_SECONDS: '1' });
  assert.ok(Date.now() - started < 20_000, 'stopped long before the spawn timeout');
  assert.is(run.status, 1);
  assert.is(run.last, '1 passed, 2 failed');
  assert.match(run.output!, 'No test ended for 1 s: the run was stopped as hung');
});

test('the stall limit counts from the last test that ended, not from the start: slow tests that keep ending are not stopped', () => {
  const slow = Array.from({ length: 4 }, (_, index) => `test('slow ${index}', () => new Promise((resolve) => setTimeout(resolve, 600)));`).join('\n');
  const run = runOn({ 'a.test.js': slow }, { HK_TEST_STALL_SECONDS: '1' });
  assert.is(run.last, '4 passed, 0 failed');
  assert.is(run.status, 0);
});

test('a stall limit that is no number of seconds above 0 is refused by name', () => {
  const run = runOn({ 'a.test.js': "test('one', () => {});" }, { HK_TEST_STALL_SECONDS: 'soon' });
  assert.is(run.status, 1);
  assert.match(run.output!, 'HK_TEST_STALL_SECONDS must be a number of seconds above 0, not "soon"');
});

test('.ci/run installs clean, then runs the README\'s test command', () => {
  const script = readFileSync(join(root, '.ci', 'run'), 'utf8');
  assert.match(script, /^npm ci\b/m);
  assert.match(script, /^npm test$/m);
  assert.match(readFileSync(join(root, 'README.md'), 'utf8'), 'npm test');
});

test.run();
