// Internal: `mkdir -p` without Node's `{ recursive: true }`.
//
// Node 20's recursive mkdir walks up on ENOENT and back down on EEXIST, with no bound: on a
// filesystem that answers ENOENT when asked to create a directory under a parent that exists
// (procfs, sysfs: `--profiler-dir /proc/nope`), it retries forever in a libuv thread. The
// callback never comes, a thread of the pool spins, and a server waiting on it never answers
// and never shuts down. These go up once and down once, and give that ENOENT to the caller.
import { mkdirSync, statSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errorCode } from './error-code.js';

/**
 * The mode of directories made for what requests reveal (profiles, leases, the dev TLS key): the
 * owner's alone, so other users of the machine cannot read them. A directory that exists keeps its
 * own mode: one shared on purpose (a group's) stays shared.
 */
export const PRIVATE_DIRECTORY = 0o700;

/** Makes `path` and any missing parents (each with `mode`); an existing directory is fine. */
export async function makeDirectory(path: string, mode?: number): Promise<void> {
  try {
    await mkdir(path, { mode });
    return;
  } catch (error) {
    if (errorCode(error) === 'EEXIST' && (await stat(path)).isDirectory()) return;
    const parent = dirname(path);
    if (errorCode(error) !== 'ENOENT' || parent === path) throw error;
    await makeDirectory(parent, mode);
  }
  try {
    await mkdir(path, { mode });
  } catch (error) {
    if (errorCode(error) !== 'EEXIST' || !(await stat(path)).isDirectory()) throw error;
  }
}

/** makeDirectory, blocking. */
export function makeDirectorySync(path: string, mode?: number): void {
  try {
    mkdirSync(path, { mode });
    return;
  } catch (error) {
    if (errorCode(error) === 'EEXIST' && statSync(path).isDirectory()) return;
    const parent = dirname(path);
    if (errorCode(error) !== 'ENOENT' || parent === path) throw error;
    makeDirectorySync(parent, mode);
  }
  try {
    mkdirSync(path, { mode });
  } catch (error) {
    if (errorCode(error) !== 'EEXIST' || !statSync(path).isDirectory()) throw error;
  }
}
