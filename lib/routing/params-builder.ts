// Internal: builds a match's parameters. For speed each parameter shape (names, defaults' keys)
// gets, when a route of that shape first matches, a small function returning an object literal
// (keys are JSON-escaped route definitions, never request data); where code generation is
// unavailable or a key could not be a plain property (`__proto__`), a generic loop does the same.
import type { Candidate, ParamsBuilder } from './route-tree.js';

/** Decodes a raw parameter; undefined when its percent-encoding is malformed. */
export function decode(raw: string): string | undefined {
  if (raw.indexOf('%') === -1) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/** Decodes a wildcard into its segments; undefined when one is malformed. */
export function decodeSegments(raw: string): string[] | undefined {
  let slash = raw.indexOf('/');
  // One segment (the common case): a literal array, without the element store's growth call.
  if (slash === -1) {
    const segment = decode(raw);
    return segment === undefined ? undefined : [segment];
  }
  // An indexOf loop: split() goes through the runtime and costs several times more.
  const segments: string[] = [];
  let start = 0;
  for (;;) {
    const segment = decode(slash === -1 ? raw.slice(start) : raw.slice(start, slash));
    if (segment === undefined) return undefined;
    segments.push(segment);
    if (slash === -1) return segments;
    start = slash + 1;
    slash = raw.indexOf('/', start);
  }
}

let codegen = true;
/** Builders by parameter shape: routes with the same names share one function, and one object shape. */
const builders = new Map<string, ParamsBuilder>();

/**
 * The builder for `candidate`'s parameters (path parameters over defaults; host parameters are
 * the caller's); also sets `candidate.defaultValues`, which it reads. Called as
 * `build(path, positions, tail, candidate.defaultValues)`.
 *
 * Default values are read from an array rather than from the route's defaults object: builders
 * are shared by every route of a shape, and defaults objects of equal keys need not share a
 * hidden class (a spread copy often gets one of its own), so a property read there would go
 * megamorphic.
 */
export function paramsBuilder(candidate: Candidate): ParamsBuilder {
  const { names, wildcards, treeParams, defaults } = candidate;
  const order = keyOrder(names, Object.keys(defaults));
  candidate.defaultValues = order.filter((key) => key.name === -1).map((key) => defaults[key.key]);
  const signature = JSON.stringify([names, wildcards, treeParams, order]);
  let build = builders.get(signature);
  if (build === undefined) {
    build = generate(names, wildcards, treeParams, order) ?? generic(names, wildcards, treeParams, order);
    builders.set(signature, build);
  }
  return build;
}

/** One key of a match's parameters: from the path (`name`, its index in the names) or a default (`name` -1, `value` its index in the default values). */
interface ParamKey {
  key: string;
  name: number;
  value: number;
}

/**
 * The keys of a match's parameters in Symfony's order (`mergeDefaults`): the defaults' keys as the
 * route lists them, a path parameter that overrides a default in that default's place, then the
 * other path parameters in the path's order. A key that reads as an array index (`"0"`) is listed
 * first whatever its place, by both builders: a JavaScript object lists those first (Symfony's PHP array does not).
 */
function keyOrder(names: readonly string[], defaultKeys: readonly string[]): ParamKey[] {
  let values = 0;
  const order = defaultKeys.map((key) => {
    const name = names.indexOf(key);
    return { key, name, value: name === -1 ? values++ : -1 };
  });
  names.forEach((key, name) => {
    if (!defaultKeys.includes(key)) order.push({ key, name, value: -1 });
  });
  return order;
}

function generate(names: readonly string[], wildcards: readonly boolean[], treeParams: number, order: readonly ParamKey[]): ParamsBuilder | null {
  if (!codegen || order.some((key) => key.key === '__proto__')) return null;
  let body = '"use strict";\nreturn function build(path, p, t, d) {\n';
  names.forEach((_, i) => {
    const raw = i < treeParams ? `path.slice(p[${i * 2}], p[${i * 2 + 1}])` : `t[${i - treeParams + 1}]`;
    body += wildcards[i]
      ? `  const v${i} = decodeSegments(${raw});\n  if (v${i} === undefined) return ${i};\n`
      : `  let v${i} = ${raw};\n  if (v${i}.indexOf('%') !== -1 && (v${i} = decode(v${i})) === undefined) return ${i};\n`;
  });
  const entries = order.map((key) => `${JSON.stringify(key.key)}: ${key.name === -1 ? `d[${key.value}]` : `v${key.name}`}`);
  body += `  return { ${entries.join(', ')} };\n};`;
  try {
    return new Function('decode', 'decodeSegments', body)(decode, decodeSegments) as ParamsBuilder;
  } catch {
    codegen = false;
    return null;
  }
}

function generic(names: readonly string[], wildcards: readonly boolean[], treeParams: number, order: readonly ParamKey[]): ParamsBuilder {
  return (path, p, t, d) => {
    const values: unknown[] = [];
    for (let i = 0; i < names.length; i++) {
      const raw = i < treeParams ? path.slice(p[i * 2], p[i * 2 + 1]) : t![i - treeParams + 1]!;
      const value = wildcards[i] ? decodeSegments(raw) : decode(raw);
      if (value === undefined) return i;
      values.push(value);
    }
    const params: Record<string, unknown> = {};
    // Defined, not assigned: a key named `__proto__` must be a property, not the prototype.
    for (const key of order) {
      const value = key.name === -1 ? d[key.value] : values[key.name];
      Object.defineProperty(params, key.key, { value, enumerable: true, writable: true, configurable: true });
    }
    return params;
  };
}
