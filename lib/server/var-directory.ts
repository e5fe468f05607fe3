// bin/serve keeps its files (the development certificate and key, the profiles) under var/ of the
// working directory: in this repository its .gitignore leaves var/ out, but in a project that
// installed the package nothing did, and `git add -A` after a first `npx http-kernel-serve` took in
// the development private key and what the profiled requests carried. A var/ that bin/serve makes
// gets a .gitignore of its own, as pytest does for .pytest_cache/.
import { mkdirSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { PRIVATE_DIRECTORY } from '../fs/make-directory.js';

/** The directory under which bin/serve's defaults keep its files, relative to the working directory. */
export const VAR_DIRECTORY = 'var';

/** The .gitignore made in a new var/: all of it, this file included. (npm pack reads it too, so a project's tarball leaves var/ out.) */
export const VAR_GITIGNORE = '# Made by http-kernel-serve: the development certificate and key, and the profiles, are not for version control.\n*\n';

/**
 * Makes `var/` in `cwd`, with VAR_GITIGNORE in it, when one of `paths` (relative to `cwd`, or absolute)
 * is under it and it does not exist yet; says whether it made it. A var/ that exists is the project's
 * own and is left as it is. Never throws: what cannot be made is reported by whatever then writes
 * under it (the certificate cache, the profiler's storage), as before. Synchronous, once at start-up:
 * an await here would let a signal that comes at once stop the server before its app is made.
 */
export function makeVarDirectory(paths: readonly string[], cwd: string = process.cwd()): boolean {
  const dir = resolve(cwd, VAR_DIRECTORY);
  const under = paths.some((path) => {
    const inside = relative(dir, resolve(cwd, path));
    return inside !== '' && !inside.startsWith('..') && !isAbsolute(inside);
  });
  if (!under) return false;
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
