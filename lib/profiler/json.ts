/**
 * Small helpers for collectors that write their data as JSON themselves (RawJson). Node 20's
 * JSON.stringify pays a fixed cost per object and per property (a `toJSON` lookup among others):
 * for the fixed-shape records made on every request, a template with these helpers is several
 * times cheaper. Anything of arbitrary shape still goes through JSON.stringify.
 */

/** Characters a JSON string must escape, and lone surrogates (which JSON.stringify escapes too). */
const NEEDS_ESCAPING = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON: quoted as it is when nothing needs escaping, else as JSON.stringify has it. */
export function jsonString(value: string): string {
  // Typed as a string, but fed from request attributes and headers: anything else as JSON has it.
  if (typeof value !== 'string') return jsonValue(value);
  return NEEDS_ESCAPING.test(value) ? JSON.stringify(value) : `"${value}"`;
}

/** A string or null as JSON. */
export function jsonStringOrNull(value: string | null | undefined): string {
  return value === null || value === undefined ? 'null' : jsonString(value);
}

/** A number as JSON: non-finite ones are null, as JSON.stringify has them. */
export function jsonNumber(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/** Any JSON-serialisable value (JSON.stringify's answer; `null` where it has none). */
export function jsonValue(value: unknown): string {
  return (JSON.stringify(value) as string | undefined) ?? 'null';
}

/**
 * The string as one flat run of characters. V8 keeps a concatenation as a tree of its pieces until
 * something reads it whole, and copying a tree into a profile's JSON costs a step per piece: JSON
 * kept to be copied into every profile is made flat once (JSON.parse returns a fresh flat string).
 */
export function flat(text: string): string {
  return JSON.parse(JSON.stringify(text)) as string;
}

export { setOwn } from '../../kernel/set-own.js';
