// Temporary directories for the benches (a server's working directory, its profiler files):
// created under the OS temp dir, never in the repository, and removed when the bench is done
// with them or, failing that, when the bench process exits (normally, on error or on a signal).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const live = new Set();
let hooked = false;

/** Creates a fresh directory under the OS temp dir; it is removed at exit if not before. */
export function makeTempDir(prefix = 'http-kernel-bench-') {
  if (!hooked) {
    hooked = true;
    // 'exit' also runs after process.exit() from the signal handlers of killChildrenOnExit.
    process.on('exit', removeAllTempDirs);
  }
  const dir = mkdtempSync(join(tmpdir(), prefix));
  live.add(dir);
  return dir;
}

/** Removes one directory made by makeTempDir (retrying while a just-killed child lets go of it). */
export function removeTempDir(dir) {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  } catch (error) {
    process.stderr.write(`bench: could not remove ${dir}: ${error.message}\n`);
  }
  live.delete(dir);
}

/** Synchronous, so it can run in an 'exit' handler. */
export function removeAllTempDirs() {
  for (const dir of [...live]) removeTempDir(dir);
}
