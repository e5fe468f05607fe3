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

/**
 * A subscriber given in Symfony's shape, or as its class, named so rather than as an object
 * "without" getSubscribedEvents(): an object whose class declares it static (as Symfony's
 * subscribers do; here it is an instance method), or a class whose instances declare it.
 * Undefined for any other value.
 */
export function describeMisdeclaredSubscriber(value: unknown): string | undefined {
  if (typeof value === 'function') {
    const declared = typeof (value as { prototype?: { getSubscribedEvents?: unknown } }).prototype?.getSubscribedEvents === 'function';
    return declared ? `the class ${value.name || 'anonymous'}: pass an instance (new ${value.name || 'Subscriber'}())` : undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const type = (value as { constructor?: { name?: string; getSubscribedEvents?: unknown } }).constructor;
  if (typeof type?.getSubscribedEvents !== 'function') return undefined;
  return `an object of type ${type.name || 'Object'} whose getSubscribedEvents() is static, as in Symfony: here it is an instance method (drop \`static\`)`;
}
