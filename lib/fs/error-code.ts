/** The `code` of a Node.js system error (`ENOENT`, `ENOSPC`, ...), or undefined. */
export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;
}
