import { unlink } from 'node:fs/promises';
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

/** Deletes a file; false when it was not there. */
export async function removeFile(path: string): Promise<boolean> {
  try {
    await unlink(path);
    return true;
  } catch (error) {
    if (isMissing(error)) return false;
    throw error;
  }
}
