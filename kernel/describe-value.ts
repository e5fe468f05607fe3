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

/**
 * An object of a class named `name` that is not the kernel's own (an instanceof check refused it):
 * one of another copy of http-kernel, installed twice, is named so rather than as "an object of
 * type Response"; undefined for any other value.
 */
export function describeOtherCopy(value: unknown, name: 'Request' | 'Response'): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  return (value as { constructor?: { name?: unknown } }).constructor?.name === name ? `a ${name} of another copy of http-kernel (is it installed twice?)` : undefined;
}
