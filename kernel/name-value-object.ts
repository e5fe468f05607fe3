/**
 * Whether `value` is read by its names, as headers or attributes are: a plain object, of this realm
 * or another (a vm's, a test runner's sandbox), one without prototype (node's `getHeaders()`), or a
 * class instance; not a `Headers`, Map, Set or list (iterables, whose entries would be misread or lost).
 */
export function isNameValueObject(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  // The usual case, for one read and no property lookup: a literal, or node's header objects.
  if (prototype === Object.prototype || prototype === null) return true;
  return typeof (value as Partial<Iterable<unknown>>)[Symbol.iterator] !== 'function';
}

/**
 * Whether `value` is a plain object, as options are given: a literal or `Object.create(null)`, of
 * this realm or another (a vm's, a test runner's sandbox); not a Map, a list or a class instance,
 * whose options would be read as none or under other names. Only for option objects, off the per-request path.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  if (prototype === Object.prototype || prototype === null) return true;
  // Another realm's Object.prototype: the end of its chain, its constructor named Object.
  return Object.getPrototypeOf(prototype) === null && (prototype as { constructor?: { name?: unknown } }).constructor?.name === 'Object';
}
