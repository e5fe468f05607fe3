import { lstat, unlink } from 'node:fs/promises';
import { errorCode } from '../../fs/error-code.js';

export { errorCode };

/** Whether the error says a path (or one of its parents) is not there. */
export function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Awaits an fs call whose "not there" failure is expected; other failures still throw. */
export async function ignoreMissing<T>(promise: Promise<T>): Promise<T | undefined> {
  try {
    return await promise;
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

/**
 * Deletes a file; false when it was not there, or is a directory. The storage makes no directory
 * under a file's name: one found there (`left.tmp`, a segment's name) is someone else's, left as
 * it is; failing on it would fail the clean-up that found it, and with it every compaction, so the
 * bounds would never be applied again.
 */
export async function removeFile(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch (error) {
    if (isMissing(error)) return false;
    // Linux answers EISDIR for a directory, macOS EPERM.
    const code = errorCode(error);
    if (code === 'EISDIR' || (code === 'EPERM' && (await lstat(path).catch(() => null))?.isDirectory() === true)) return false;
    throw error;
  }
}

/** Whether the error, or one of its causes, says the disk (or the user's quota) is full. */
export function isDiskFull(error: unknown): boolean {
  for (let cause = error, depth = 0; cause !== undefined && cause !== null && depth < 8; depth++) {
    const code = errorCode(cause);
    if (code === 'ENOSPC' || code === 'EDQUOT') return true;
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * The error of a short write to a regular file, coded ENOSPC: libuv retries partial writes
 * until one fails, then returns the count written and drops the failure, which on a local
 * disk is the disk (or a quota) running full.
 */
export function shortWriteError(message: string): Error {
  return Object.assign(new Error(message), { code: 'ENOSPC' });
}
