// `node bin/serve` as a child process for the integration tests. Every child and working directory made
// here is tracked, and stopServes (a suite's `after.each`) kills what is still running and removes the
// directories, passed or failed: a failed assertion must not leave a server running, which kept the run waiting on it.
import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

export const serveBin = fileURLToPath(new URL('../../../bin/serve', import.meta.url));

const running = new Set<ChildProcess>();
const workDirs = new Set<string>();

/** The variables bin/serve reads (lib/server/serve-options.ts): a test's flags say all it runs with. */
const SERVE_VARIABLES = ['HOST', 'PORT', 'HTTPS_PORT', 'APP_ENV', 'NODE_ENV', 'APP_DEBUG', 'PROFILER', 'TLS_CERT', 'TLS_KEY', 'PROFILER_DIR', 'PROFILER_MAX_PROFILES', 'PROFILER_ALLOW', 'TRUSTED_PROXIES', 'TRUSTED_HOSTS', 'HTTP_KERNEL_IDE', 'RESPONSE_TIMEOUT', 'LOG_LEVEL'];

/**
 * The environment to spawn bin/serve with: the test run's, without the variables bin/serve reads, so a
 * run started with NODE_ENV=production (a CI image's) or APP_DEBUG=0 still tests the debug server it asks for.
 */
export function serveEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of SERVE_VARIABLES) delete env[name];
  return env;
}

/**
 * Spawns `node bin/serve` with stdout and stderr piped; stopServes kills it if it is still running after its test.
 * `bin` is another copy of it to run (the one of a package installed from the tarball).
 */
export function spawnServe(args: readonly string[], cwd?: string, bin = serveBin): ChildProcessByStdio<null, Readable, Readable> {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env: serveEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  return child;
}

/** A fresh temp directory to run bin/serve in; stopServes removes it once its servers are gone. */
export function serveWorkDir(prefix = 'http-kernel-serve-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  workDirs.add(dir);
  return dir;
}

/** Starts bin/serve (or `bin`, as spawnServe) and waits (bounded) for its listening lines: one with `--https-port off`, else two. */
export function startServe(args: readonly string[], cwd: string, bin = serveBin): Promise<{ child: ChildProcess; urls: string[]; stderr: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawnServe(args, cwd, bin);
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`bin/serve did not start in time: ${stdout} ${stderr}`));
    }, 20_000);
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const urls = [...stdout.matchAll(/^listening on (\S+)$/gm)].map((m) => m[1]!);
      if (urls.length === (args.includes('off') ? 1 : 2)) {
        clearTimeout(timer);
        resolve({ child, urls, stderr: () => stderr });
      }
    });
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`bin/serve exited early with ${code}: ${stderr}`));
    });
  });
}

/** Whether the child is still running (neither exited nor killed by a signal). */
export function isRunning(child: ChildProcess): boolean {
  return child.pid !== undefined && child.exitCode === null && child.signalCode === null;
}

/** For a suite's `after.each`: kills every bin/serve still running, waits for each to exit, then removes the work directories. */
export async function stopServes(): Promise<void> {
  const children = [...running];
  running.clear();
  await Promise.all(
    children.filter(isRunning).map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
  for (const dir of workDirs) rmSync(dir, { recursive: true, force: true });
  workDirs.clear();
}

/** The child's exit code (null: ended by a signal); SIGKILLed if it has not exited within 15 s. */
export function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}
