// Runs every compiled test file (unit and integration) with uvu and ends with the
// one summary line CI reads: "N passed, M failed".
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const root = fileURLToPath(new URL('..', import.meta.url));
const uvuBin = join(root, 'node_modules', 'uvu', 'bin.js');
// A source path (test/unit/kernel) runs its compiled twin (dist/test/unit/kernel).
const given = process.argv[2] ?? 'dist/test';
const dir = given.startsWith('dist/') || given.startsWith('/') ? given : join('dist', given);
const pattern = process.argv[3] ?? '\\.test\\.js$';

const child = spawn(process.execPath, ['--enable-source-maps', uvuBin, dir, pattern], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
});

let output = '';
child.stdout.on('data', (chunk) => {
  output += chunk;
  process.stdout.write(chunk);
});

child.on('close', (code) => {
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
  // uvu sums up last: the last summary found, so a test's own output that reads like one is not taken for it.
  const summary = [...plain.matchAll(/^ {2}Total: +(\d+)\n {2}Passed: +(\d+)\n {2}Skipped: +(\d+)$/gm)].at(-1);
  const [total, passed, skipped] = summary === undefined ? [0, 0, 0] : summary.slice(1).map(Number);
  // uvu's total leaves skipped tests out. A crash or an exit before uvu's summary, or a run in which no
  // test ran, counts as one failure: never green, and the last line says what the exit code does.
  const failed = total - passed + ((code !== 0 || total === 0) && total === passed ? 1 : 0);
  const why = summary === undefined ? 'The tests ended before uvu summed them up (a crash or an early exit).\n' : total === 0 ? 'No test ran.\n' : '';
  // The last line is exactly "N passed, M failed" (CI reads it); skipped tests are said on the line before.
  process.stdout.write(`\n${why}${skipped ? `${skipped} skipped\n` : ''}${passed} passed, ${failed} failed\n`);
  process.exitCode = failed === 0 ? 0 : 1;
});
