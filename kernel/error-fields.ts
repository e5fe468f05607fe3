/**
 * An error's class as its writers name it: its constructor's name, or `Error` when it has none (a
 * null prototype, an own `constructor` of undefined, an anonymous class) or reading it throws.
 */
export function errorClassName(error: Error): string {
  try {
    const name: unknown = (error.constructor as { name?: unknown } | undefined)?.name;
    return typeof name === 'string' && name !== '' ? name : 'Error';
  } catch {
    return 'Error';
  }
}

/** What an error's writers write apart, never among its fields. */
const WRITTEN_APART = new Set(['class', 'message', 'stack', 'cause']);

/**
 * An error's own enumerable fields, for a log context's JSON: a system error's `code`, `errno`,
 * `syscall` and `path`, a library's `statusCode`, any an application adds; not what is written
 * apart (class, message, stack, cause), nor a `name` that only repeats `className`. A field whose
 * getter throws is left out, and there are none when they cannot be listed (a Proxy's ownKeys trap).
 */
export function errorFields(error: Error, className: string): Array<[key: string, value: unknown]> {
  let keys: string[];
  try {
    keys = Object.keys(error);
  } catch {
    return [];
  }
  const fields: Array<[string, unknown]> = [];
  for (const key of keys) {
    if (WRITTEN_APART.has(key)) continue;
    let value: unknown;
    try {
      value = (error as unknown as Record<string, unknown>)[key];
    } catch {
      continue;
    }
    if (key === 'name' && value === className) continue;
    fields.push([key, value]);
  }
  return fields;
}

/**
 * An error as a log context's JSON shows it: its class, message and code, then its own fields (see
 * errorFields), whose names go in `fields` when given. Without prototype: a field named
 * `__proto__` is one like any other, as JSON.parse would read it back.
 */
export function errorShape(error: Error, fields?: Set<string>): Record<string, unknown> {
  const className = errorClassName(error);
  const shape: Record<string, unknown> = Object.assign(Object.create(null) as Record<string, unknown>, { class: className, message: error.message });
  const code: unknown = (error as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') shape.code = code;
  for (const [key, value] of errorFields(error, className)) {
    if (Object.hasOwn(shape, key)) continue;
    shape[key] = value;
    fields?.add(key);
  }
  return shape;
}
