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
  const defaultKeys = Object.keys(defaults).filter((key) => !names.includes(key));
  candidate.defaultValues = defaultKeys.map((key) => defaults[key]);
  const signature = JSON.stringify([names, wildcards, treeParams, defaultKeys]);
  let build = builders.get(signature);
  if (build === undefined) {
    build = generate(names, wildcards, treeParams, defaultKeys) ?? generic(names, wildcards, treeParams, defaultKeys);
    builders.set(signature, build);
  }
  return build;
}

function generate(names: readonly string[], wildcards: readonly boolean[], treeParams: number, defaultKeys: readonly string[]): ParamsBuilder | null {
  if (!codegen || names.includes('__proto__') || defaultKeys.includes('__proto__')) return null;
  let body = '"use strict";\nreturn function build(path, p, t, d) {\n';
  names.forEach((_, i) => {
    const raw = i < treeParams ? `path.slice(p[${i * 2}], p[${i * 2 + 1}])` : `t[${i - treeParams + 1}]`;
    body += wildcards[i]
      ? `  const v${i} = decodeSegments(${raw});\n  if (v${i} === undefined) return ${i};\n`
      : `  let v${i} = ${raw};\n  if (v${i}.indexOf('%') !== -1 && (v${i} = decode(v${i})) === undefined) return ${i};\n`;
  });
  const entries = [
    ...defaultKeys.map((key, i) => `${JSON.stringify(key)}: d[${i}]`),
    ...names.map((name, i) => `${JSON.stringify(name)}: v${i}`),
  ];
  body += `  return { ${entries.join(', ')} };\n};`;
  try {
    return new Function('decode', 'decodeSegments', body)(decode, decodeSegments) as ParamsBuilder;
  } catch {
    codegen = false;
    return null;
  }
}

function generic(names: readonly string[], wildcards: readonly boolean[], treeParams: number, defaultKeys: readonly string[]): ParamsBuilder {
  return (path, p, t, d) => {
    const params: Record<string, unknown> = {};
    // Defined, not assigned: a default named `__proto__` must be a property, not the prototype.
    for (let i = 0; i < defaultKeys.length; i++) Object.defineProperty(params, defaultKeys[i]!, { value: d[i], enumerable: true, writable: true, configurable: true });
    for (let i = 0; i < names.length; i++) {
      const raw = i < treeParams ? path.slice(p[i * 2], p[i * 2 + 1]) : t![i - treeParams + 1]!;
      const value = wildcards[i] ? decodeSegments(raw) : decode(raw);
      if (value === undefined) return i;
      Object.defineProperty(params, names[i]!, { value, enumerable: true, writable: true, configurable: true });
    }
    return params;
  };
}
