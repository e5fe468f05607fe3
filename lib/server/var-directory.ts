// bin/serve keeps its files (the development certificate and key, the profiles) under var/ of the
// working directory: in this repository its .gitignore leaves var/ out, but in a project that
// installed the package nothing did, and `git add -A` after a first `npx http-kernel-serve` took in
// the development private key and what the profiled requests carried. A var/ that bin/serve makes
// (or createKernel, for its default profiler directory) gets a .gitignore of its own, as pytest
// does for .pytest_cache/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, parse, relative, resolve } from 'node:path';
import { PRIVATE_DIRECTORY } from '../fs/make-directory.js';

/** The directory under which bin/serve's defaults keep its files, relative to the working directory. */
export const VAR_DIRECTORY = 'var';

/** The .gitignore made in a new var/: all of it, this file included. (npm pack reads it too, so a project's tarball leaves var/ out.) */
export const VAR_GITIGNORE = '# Made by http-kernel: the development certificate and key, and the profiles, are not for version control.\n*\n';

/**
 * Makes `var/` in `cwd`, with VAR_GITIGNORE in it, when one of `paths` (relative to `cwd`, or absolute)
 * is var/ or under it and it does not exist yet; says whether it made it. A var/ that exists is the project's
 * own and is left as it is. Never throws: what cannot be made is reported by whatever then writes
 * under it (the certificate cache, the profiler's storage), as before. Synchronous, once at start-up:
 * an await here would let a signal that comes at once stop the server before its app is made.
 */
export function makeVarDirectory(paths: readonly string[], cwd: string = process.cwd()): boolean {
  if (!paths.some((path) => isUnderVar(path, cwd))) return false;
  const dir = resolve(cwd, VAR_DIRECTORY);
  try {
    mkdirSync(dir, { mode: PRIVATE_DIRECTORY });
  } catch {
    return false;
  }
  try {
    // `wx`: a .gitignore put there in the meantime is kept.
    writeFileSync(join(dir, '.gitignore'), VAR_GITIGNORE, { flag: 'wx' });
  } catch {
    // var/ is made; the certificate and the profiles are still kept in it, as before.
  }
  return true;
}

/**
 * `path` (under var/, relative to `cwd`) for a default of an app of the embedder's own (createKernel's
 * profiles), with var/ made as bin/serve makes it, .gitignore and all. From a filesystem root, where it
 * would be the system's /var, it throws instead, naming `option` to give elsewhere.
 */
export function defaultUnderVar(path: string, option: string, cwd: string = process.cwd()): string {
  if (parse(cwd).root === cwd) {
    throw new Error(`The default ${path} would be ${resolve(cwd, path)}, among the system's, as the working directory is ${cwd}: start the process from your project's directory (systemd: WorkingDirectory=; a container: WORKDIR), or give ${option} elsewhere.`);
  }
  makeVarDirectory([path], cwd);
  return path;
}

/**
 * Why `paths` must not be used from `cwd`, or null: from a filesystem root (a systemd unit without
 * WorkingDirectory=, a container whose WORKDIR is /) a relative `var/tls` or `var/profiler` is the
 * system's /var, where the development key and the profiles have no business.
 */
export function varUnderRoot(paths: readonly string[], cwd: string = process.cwd()): string | null {
  if (parse(cwd).root !== cwd) return null;
  // An absolute path given (`--profiler-dir /var/lib/app/profiles`) is the operator's choice.
  const underVar = paths.filter((path) => !isAbsolute(path) && isUnderVar(path, cwd));
  if (underVar.length === 0) return null;
  const shown = underVar.map((path) => resolve(cwd, path)).join(' and ');
  return `the working directory is ${cwd}, so the files kept under ${VAR_DIRECTORY}/ would go to ${shown}, among the system's: start it from your project's directory (systemd: WorkingDirectory=; a container: WORKDIR), or give --profiler-dir, and --tls-cert with --tls-key (or --https-port off), outside it`;
}

/**
 * Whether `path` (relative to `cwd`, or absolute) is `cwd`'s var/ or inside it: `--profiler-dir var`
 * keeps the profiles in var/ itself, which then needs its .gitignore (and from / is the system's /var) as much.
 */
function isUnderVar(path: string, cwd: string): boolean {
  const inside = relative(resolve(cwd, VAR_DIRECTORY), resolve(cwd, path));
  return !inside.startsWith('..') && !isAbsolute(inside);
}
