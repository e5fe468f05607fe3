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

// uvu has no per-test timeout: a test that hangs would hold CI until CI's own limit, saying nothing. A run
// in which no test has finished for this long is stopped and counts as failed (HK_TEST_STALL_SECONDS).
const stallSeconds = Number(process.env.HK_TEST_STALL_SECONDS ?? 300);
if (!(stallSeconds > 0)) throw new RangeError(`HK_TEST_STALL_SECONDS must be a number of seconds above 0, not ${JSON.stringify(process.env.HK_TEST_STALL_SECONDS)}`);

const child = spawn(process.execPath, ['--enable-source-maps', uvuBin, dir, pattern], {
  cwd: root,
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, FORCE_COLOR: '0', NO_COLOR: '1' },
});

let output = '';
let stalled = false;
let watchdog;
// uvu writes a mark as each test ends: output is progress.
const rearm = () => {
  clearTimeout(watchdog);
  watchdog = setTimeout(() => {
    stalled = true;
    child.kill('SIGKILL');
    // A process the hung test started may hold the pipe open: stop reading so that the child's exit ends the run.
    child.stdout.destroy();
  }, stallSeconds * 1000);
};
rearm();
child.stdout.on('data', (chunk) => {
  output += chunk;
  process.stdout.write(chunk);
  rearm();
});

let finished = false;
function finish(code) {
  if (finished) return;
  finished = true;
  clearTimeout(watchdog);
  const plain = output.replace(/\x1b\[[0-9;]*m/g, '');
  // uvu sums up last: the last summary found, so a test's own output that reads like one is not taken for it.
  const summary = [...plain.matchAll(/^ {2}Total: +(\d+)\n {2}Passed: +(\d+)\n {2}Skipped: +(\d+)$/gm)].at(-1);
  let [total, passed, skipped] = summary === undefined ? [0, 0, 0] : summary.slice(1).map(Number);
  if (stalled) {
    // No summary: the suites that ended say what they passed ("(3 / 4)"); the hung test is one failure more.
    const suites = [...plain.matchAll(/\((\d+) \/ (\d+)\)$/gm)].map((match) => [Number(match[1]), Number(match[2])]);
    passed = suites.reduce((sum, [ok]) => sum + ok, 0);
    total = suites.reduce((sum, [, all]) => sum + all, 0) + 1;
  }
  // uvu's total leaves skipped tests out. A crash or an exit before uvu's summary, or a run in which no
  // test ran, counts as one failure: never green, and the last line says what the exit code does.
  const failed = total - passed + ((code !== 0 || total === 0) && total === passed ? 1 : 0);
  const why = stalled
    ? `No test ended for ${stallSeconds} s: the run was stopped as hung, in or after the last suite above (HK_TEST_STALL_SECONDS sets the limit).\n`
    : summary === undefined ? 'The tests ended before uvu summed them up (a crash or an early exit).\n' : total === 0 ? 'No test ran.\n' : '';
  // The last line is exactly "N passed, M failed" (CI reads it); skipped tests are said on the line before.
  process.stdout.write(`\n${why}${skipped ? `${skipped} skipped\n` : ''}${passed} passed, ${failed} failed\n`);
  process.exitCode = failed === 0 ? 0 : 1;
}
child.on('close', finish);
child.on('exit', (code) => {
  if (stalled) finish(code);
});
