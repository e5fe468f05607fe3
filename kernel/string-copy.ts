/**
 * A string of its own with the characters of `text`, for a cache that keeps it. A string cut from a
 * larger one (`header.split(',')`, `body.slice(0, 200)`) is a view on all of it in V8: kept as a
 * key, a 200-character hop of a 15 KB header held the whole header alive.
 */
export function stringCopy(text: string): string {
  return Buffer.from(text, 'utf16le').toString('utf16le');
}
