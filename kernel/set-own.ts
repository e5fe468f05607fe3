/**
 * Sets `object[key]` as an own property, `__proto__` too: assigned, that key would set the object's
 * prototype (or nothing) rather than a property, and a name a route author, an embedder or a client
 * chose (a parameter, a header, a query key, a collector) would be missing from the object and its JSON.
 */
export function setOwn(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}
