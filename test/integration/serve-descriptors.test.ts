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

/**
 * Runs bin/serve with a loader hook that fails the module whose URL ends with `module` with `code`, as
 * node's loader would when out of file descriptors: its exit code and stderr.
 */
async function serveFailingToLoad(module: string, code: 'EMFILE' | 'ENFILE'): Promise<{ code: number | null; stderr: string }> {
  const dir = serveWorkDir();
  const message = code === 'EMFILE' ? 'EMFILE: too many open files' : 'ENFILE: file table overflow';
  const errno = code === 'EMFILE' ? -24 : -23;
  writeFileSync(join(dir, 'hooks.mjs'), `export async function load(url, context, next) {
  if (url.endsWith(${JSON.stringify(module)})) throw Object.assign(new Error(${JSON.stringify(`${message}, open '`)} + new URL(url).pathname + "'"), { code: ${JSON.stringify(code)}, errno: ${errno}, syscall: 'open' });
  return next(url, context);
}
`);
  writeFileSync(join(dir, 'register.mjs'), `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`);
  const args = ['--port', '0', '--https-port', 'off', '--profiler-dir', `${dir}/profiler`];
  const child = spawn(process.execPath, ['--import', pathToFileURL(join(dir, 'register.mjs')).href, serveBin, ...args], { cwd: dir, env: serveEnv(), stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return { code: await exitOf(child), stderr };
}

// The system's table full (ENFILE) cannot be brought about by a test: a loader hook fails the command's
// own module with it, as node's loader would, and bin/serve must name the system's limit, not the process's.
test("when the system's whole table of open files is full (ENFILE) as it loads its modules, it exits 1 with one line saying so and naming the system's limit", async () => {
  const { code, stderr } = await serveFailingToLoad('/dist/lib/server/cli.js', 'ENFILE');
  assert.is(code, 1, stderr);
  const lines = stderr.trim().split('\n');
  assert.is(lines.length, 1, stderr);
  assert.match(lines[0]!, /^serve: ENFILE: file table overflow, open '.*cli\.js': the system is out of file descriptors \(its whole table is full\): close what holds them, or raise fs\.file-max \(sysctl\)$/);
});

// bin/serve keeps its own copy of main()'s words: at the lowest limit it runs under, no file can be
// opened once it is loaded, so no module it could share them from would load either.
test("what bin/serve says when its own modules fail to load is what main() says when the app's do, for EMFILE and ENFILE", async () => {
  for (const code of ['EMFILE', 'ENFILE'] as const) {
    const said: string[] = [];
    for (const module of ['/dist/lib/server/cli.js', '/dist/lib/app/index.js']) {
      const { code: exit, stderr } = await serveFailingToLoad(module, code);
      assert.is(exit, 1, stderr);
      assert.is(stderr.trim().split('\n').length, 1, stderr);
      // The same line but for the file named.
      said.push(stderr.trim().replace(/open '[^']*'/, "open '…'"));
    }
    assert.is(said[0], said[1], code);
  }
});

test.run();
