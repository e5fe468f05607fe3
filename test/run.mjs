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
  const total = Number(/Total:\s+(\d+)/.exec(plain)?.[1] ?? 0);
  const passed = Number(/Passed:\s+(\d+)/.exec(plain)?.[1] ?? 0);
  const skipped = Number(/Skipped:\s+(\d+)/.exec(plain)?.[1] ?? 0);
  // uvu's total leaves skipped tests out. A crash before uvu's summary counts as one failure, so a broken suite never reads as green.
  const failed = total - passed + (code !== 0 && total === passed ? 1 : 0);
  // The last line is exactly "N passed, M failed" (CI reads it); skipped tests are said on the line before.
  process.stdout.write(`\n${skipped ? `${skipped} skipped\n` : ''}${passed} passed, ${failed} failed\n`);
  process.exitCode = code === 0 && failed === 0 && total > 0 ? 0 : 1;
});
