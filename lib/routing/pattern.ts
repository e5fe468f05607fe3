// Internal: turns a path-to-regexp pattern into what the matcher and the generator need.
// Optional groups are expanded into variants (in the order a regex would try them: with the
// group first), and every parameter gets the pattern it matches: its requirement, or the
// default (`[^/]+`, or `[^/.]+` when `.` follows it inside the segment, as Symfony does).
import { parse, type Token } from 'path-to-regexp';
import { InvalidRouteError } from './errors.js';

/** One piece of an expanded pattern. `pattern` is a regex source without capturing groups. */
export type Part =
  | { readonly type: 'text'; readonly value: string }
  | { readonly type: 'param' | 'wildcard'; readonly name: string; readonly pattern: string; readonly required: boolean };

/** A pattern parsed, checked and expanded. */
export interface CompiledPattern {
  /** The tokens, for the generator (text already normalised: percent-encoded path, lowercase host). */
  readonly tokens: readonly Token[];
  /** One list of parts per combination of optional groups, highest priority first. */
  readonly variants: readonly (readonly Part[])[];
  /** Every parameter name, in order of appearance. */
  readonly names: readonly string[];
}

const MAX_VARIANTS = 256;

/** Parses `source` (a path when `delimiter` is `/`, a host when it is `.`) against `requirements`. */
export function compilePattern(source: string, delimiter: '/' | '.', requirements: Readonly<Record<string, string>>, label: string): CompiledPattern {
  let data;
  try {
    data = parse(source, { encodePath: delimiter === '/' ? encodePathText : (text) => text.toLowerCase() });
  } catch (error) {
    throw new InvalidRouteError(`Invalid ${label} "${source}": ${(error as Error).message}`, { cause: error });
  }
  const names: string[] = [];
  collectNames(data.tokens, names, source, label);
  const variants: Part[][] = [];
  expand(data.tokens, 0, [], (flat) => {
    if (variants.length === MAX_VARIANTS) throw new InvalidRouteError(`Invalid ${label} "${source}": more than ${MAX_VARIANTS} combinations of optional groups.`);
    variants.push(toParts(flat, delimiter, requirements, source, label));
  });
  return { tokens: data.tokens, variants, names };
}

function collectNames(tokens: readonly Token[], names: string[], source: string, label: string): void {
  for (const token of tokens) {
    if (token.type === 'group') collectNames(token.tokens, names, source, label);
    else if (token.type !== 'text') {
      if (names.includes(token.name)) throw new InvalidRouteError(`Invalid ${label} "${source}": parameter "${token.name}" is used twice.`);
      names.push(token.name);
    }
  }
}

type FlatToken = Exclude<Token, { type: 'group' }>;

// Calls `emit` with each combination of optional groups, the group's contents first.
function expand(tokens: readonly Token[], index: number, prefix: FlatToken[], emit: (flat: FlatToken[]) => void): void {
  while (index < tokens.length) {
    const token = tokens[index++]!;
    if (token.type === 'group') {
      const rest = index;
      const length = prefix.length;
      expand(token.tokens, 0, prefix, (withGroup) => expand(tokens, rest, withGroup, emit));
      prefix.length = length;
      expand(tokens, rest, prefix, emit);
      return;
    }
    prefix.push(token);
  }
  emit(prefix.slice());
}

function toParts(flat: FlatToken[], delimiter: string, requirements: Readonly<Record<string, string>>, source: string, label: string): Part[] {
  const parts: Part[] = [];
  for (let i = 0; i < flat.length; i++) {
    const token = flat[i]!;
    if (token.type === 'text') {
      const last = parts[parts.length - 1];
      if (last?.type === 'text') parts[parts.length - 1] = { type: 'text', value: last.value + token.value };
      else parts.push(token);
      continue;
    }
    if (parts.length > 0 && parts[parts.length - 1]!.type !== 'text') {
      throw new InvalidRouteError(`Invalid ${label} "${source}": parameter "${token.name}" must be separated from the previous one by some text.`);
    }
    // Own properties only: a parameter named `constructor` or `toString` has no requirement unless given one.
    const requirement = Object.hasOwn(requirements, token.name) ? requirements[token.name] : undefined;
    let pattern: string;
    if (requirement !== undefined) pattern = requirement;
    else if (token.type === 'wildcard') pattern = '[^]+';
    else {
      const next = flat[i + 1];
      const stop = next?.type === 'text' && next.value[0] !== delimiter ? next.value[0]! : '';
      pattern = `[^${escapeClass(delimiter + stop)}]+`;
    }
    parts.push({ type: token.type, name: token.name, pattern, required: requirement !== undefined });
  }
  return parts;
}

/** The regex source of a variant, one capturing group per parameter (anchoring left to the caller). */
export function variantSource(parts: readonly Part[]): string {
  let source = '';
  for (const part of parts) source += part.type === 'text' ? escapeRegex(part.value) : `(${part.pattern})`;
  return source;
}

/** Escapes `text` for use as a literal inside a regex. */
export function escapeRegex(text: string): string {
  return text.replace(/[.+*?^${}()[\]|/\\-]/g, '\\$&');
}

/** Escapes `chars` for use inside a regex character class. */
export function escapeClass(chars: string): string {
  return chars.replace(/[\]\\^-]/g, '\\$&');
}

// Route text is compared with the raw request path, so it is kept percent-encoded: characters
// that a client must encode are encoded here, and existing %XX sequences are kept as they are.
function encodePathText(text: string): string {
  return text.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]+/g, (chars) => encodeURIComponent(chars));
}

/**
 * Normalises a requirement into a regex source that can be embedded in a larger one: anchors
 * dropped (as Symfony does), capturing groups made non-capturing, flags and backreferences refused.
 */
export function sanitizeRequirement(name: string, requirement: string | RegExp): string {
  let source: string;
  if (requirement instanceof RegExp) {
    if (requirement.flags.replace(/[gyd]/g, '') !== '') {
      throw new InvalidRouteError(`The requirement for parameter "${name}" must not use the "${requirement.flags}" flags.`);
    }
    source = requirement.source;
  } else if (typeof requirement === 'string') source = requirement;
  else throw new InvalidRouteError(`The requirement for parameter "${name}" must be a string or a RegExp.`);

  if (source.startsWith('^')) source = source.slice(1);
  if (source.endsWith('$') && !source.endsWith('\\$')) source = source.slice(0, -1);
  if (source === '') throw new InvalidRouteError(`The requirement for parameter "${name}" cannot be empty.`);

  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const char = source[i]!;
    if (char === '\\') {
      const next = source[i + 1] ?? '';
      if (/[1-9k]/.test(next) && !inClass) throw new InvalidRouteError(`The requirement for parameter "${name}" must not use backreferences: ${source}`);
      out += char + next;
      i++;
      continue;
    }
    if (inClass) {
      if (char === ']') inClass = false;
      out += char;
      continue;
    }
    if (char === '[') inClass = true;
    if (char === '(') {
      if (source[i + 1] !== '?') {
        out += '(?:';
        continue;
      }
      const named = /^\(\?<([$_\p{ID_Start}][$\u200c\u200d\p{ID_Continue}]*)>/u.exec(source.slice(i));
      if (named) {
        out += '(?:';
        i += named[0].length - 1;
        continue;
      }
    }
    out += char;
  }
  try {
    new RegExp(`^(?:${out})$`);
  } catch (error) {
    throw new InvalidRouteError(`The requirement for parameter "${name}" is not a valid regular expression: ${source}`, { cause: error });
  }
  return out;
}

/**
 * Whether a regex source can never match the character `char` (conservative: `false` when unsure).
 * The matcher's tree reads a parameter up to the next `/`; a requirement that might match a `/`
 * has to be matched by a regex instead.
 */
export function cannotMatch(source: string, char: string): boolean {
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '\\') {
      const next = source[i + 1] ?? '';
      i++;
      if ('dwsbB'.includes(next)) continue;
      if ('DWSpPcxu'.includes(next) || next === char) return false;
      continue;
    }
    if (c === '.' || c === char) return false;
    if (c === '[') {
      const end = classEnd(source, i);
      if (end === -1) return false;
      if (!classExcludes(source.slice(i + 1, end), char)) return false;
      i = end;
    }
  }
  return true;
}

// Index of the `]` closing the class opened at `start` (in JavaScript `]` always closes, even first).
function classEnd(source: string, start: number): number {
  for (let i = start + 1; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === ']') return i;
  }
  return -1;
}

// Whether the class body (between the brackets) certainly excludes `char`.
function classExcludes(body: string, char: string): boolean {
  const negated = body.startsWith('^');
  if (negated) body = body.slice(1);
  const code = char.charCodeAt(0);
  let listed = false;
  let unsure = false;
  for (let i = 0; i < body.length; i++) {
    let c = body[i]!;
    if (c === '\\') {
      const next = body[i + 1] ?? '';
      i++;
      if ('dws'.includes(next)) continue;
      if ('DWSpPcxu'.includes(next)) {
        unsure = true;
        continue;
      }
      c = next;
    }
    if (body[i + 1] === '-' && i + 2 < body.length) {
      let high = body[i + 2]!;
      if (high === '\\') {
        high = body[i + 3] ?? '';
        i++;
      }
      i += 2;
      if (c.charCodeAt(0) <= code && code <= high.charCodeAt(0)) listed = true;
      continue;
    }
    if (c === char) listed = true;
  }
  // A negated class excludes `char` only if it lists it; a positive one if it cannot contain it.
  return negated ? listed : !listed && !unsure;
}
