/**
 * A value as an error message names it: `null`, `undefined`, `the string "GET"`, `number 5`,
 * `a function (name)`, `an object of type Map`.
 */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'function') return `a function (${value.name || 'anonymous'})`;
  if (typeof value === 'string') return `the string "${value.length > 100 ? `${value.slice(0, 100)}...` : value}"`;
  if (typeof value !== 'object') return `${typeof value} ${String(value)}`;
  return `an object of type ${(value as { constructor?: { name?: string } }).constructor?.name || 'Object'}`;
}
