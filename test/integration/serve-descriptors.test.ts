// bin/serve under a low limit of open files (`ulimit -n`): what it says when it cannot start.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { exitOf, serveBin, serveEnv, serveWorkDir, stopServes } from './serve-process.js';

const test = suite('node bin/serve, out of file descriptors');
test.after.each(stopServes);

/** Runs bin/serve under `ulimit -n <maxFiles>` until it exits (SIGKILLed after 15 s): its exit code and stderr. */
async function serveUnder(maxFiles: number): Promise<{ code: number | null; stderr: string }> {
  const dir = serveWorkDir();
  const args = ['--port', '0', '--https-port', 'off', '--profiler-dir', `${dir}/profiler`];
  const child = spawn('bash', ['-c', `ulimit -n ${maxFiles} && exec "$0" "$@"`, process.execPath, serveBin, ...args], { cwd: dir, env: serveEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await exitOf(child);
  return { code, stderr };
}

// Node's loader opens a module graph's files at once: at 24 the command's own modules fail to load
// (bin/serve's import), at 40 the app's (main()'s start-up error). Either way, one line saying what to raise.
for (const maxFiles of [24, 40]) {
  test(`under ulimit -n ${maxFiles} it exits 1 with one line saying it is out of file descriptors and which limit to raise`, async () => {
    const { code, stderr } = await serveUnder(maxFiles);
    assert.is(code, 1, stderr);
    const lines = stderr.trim().split('\n');
    assert.is(lines.length, 1, stderr);
    assert.match(lines[0]!, /^serve: EMFILE: too many open files, open '.*': the process is out of file descriptors\. Raise its limit of open files \(ulimit -n 4096/);
    assert.match(lines[0]!, /LimitNOFILE=/);
  });
}

// The system's table full (ENFILE) cannot be brought about by a test: a loader hook fails the command's
// own module with it, as node's loader would, and bin/serve must name the system's limit, not the process's.
test("when the system's whole table of open files is full (ENFILE) as it loads its modules, it exits 1 with one line saying so and naming the system's limit", async () => {
  const dir = serveWorkDir();
  writeFileSync(join(dir, 'hooks.mjs'), `export async function load(url, context, next) {
  if (url.endsWith('/dist/lib/server/cli.js')) throw Object.assign(new Error("ENFILE: file table overflow, open '" + new URL(url).pathname + "'"), { code: 'ENFILE', errno: -23, syscall: 'open' });
  return next(url, context);
}
`);
  writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`);
  const args = ['--port', '0', '--https-port', 'off', '--profiler-dir', `${dir}/profiler`];
  const child = spawn(process.execPath, ['--import', pathToFileURL(join(dir, 'register.mjs')).href, serveBin, ...args], { cwd: dir, env: serveEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  assert.is(await exitOf(child), 1, stderr);
  const lines = stderr.trim().split('\n');
  assert.is(lines.length, 1, stderr);
  assert.match(lines[0]!, /^serve: ENFILE: file table overflow, open '.*cli\.js': the system is out of file descriptors \(its whole table is full\): close what holds them, or raise fs\.file-max \(sysctl\)$/);
});

test.run();
