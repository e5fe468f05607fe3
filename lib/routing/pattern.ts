// Internal: turns a path-to-regexp pattern into what the matcher and the generator need.
// Optional groups are expanded into variants (in the order a regex would try them: with the
// group first), and every parameter gets the pattern it matches: its requirement, or the
// default (`[^/]+`, or `[^/.]+` when a separator such as `.` follows it inside the segment, as Symfony does).
// The default is the variant's: a parameter stops at the separator that starts the text after it
// there, and at those opening the optional groups right after it, written or left out (`/:name{.:format}`
// does not match `/x.`, as Symfony's one regex reads it); a group written after another is not right
// after it (`version` of `/docs/:version{/:page}.html` holds a `.` in `/docs/1.2/intro.html`).
import { parse, type Token } from 'path-to-regexp';
import { InvalidRouteError } from './errors.js';

/**
 * One piece of an expanded pattern. `pattern` is a regex source without capturing groups;
 * `required`: it must be matched as a regex (a requirement, or a default that gives characters back
 * to the text after it, or stops at more than one separator), rather than read up to the delimiter
 * or `stop`; `stop`: the separators that end a parameter without requirement besides the delimiter, in
 * its variant (one at most when it is not `required`; `''` for none, and for a requirement).
 */
export type Part =
  | { readonly type: 'text'; readonly value: string }
  | { readonly type: 'param' | 'wildcard'; readonly name: string; readonly pattern: string; readonly required: boolean; readonly stop: string };

/**
 * What ends a parameter without a requirement when it comes right after it: Symfony's RouteCompiler::SEPARATORS
 * (but for `|`, which route text holds encoded, `%7C`: the parameter takes back what that text needs).
 */
export const SEPARATORS = '/,;.:-_~+*=@|';

/** A pattern parsed, checked and expanded. */
export interface CompiledPattern {
  /** The tokens, for the generator (text already normalised: percent-encoded path, lowercase host). */
  readonly tokens: readonly Token[];
  /** One list of parts per combination of optional groups, highest priority first. */
  readonly variants: readonly (readonly Part[])[];
  /** Every parameter name, in order of appearance. */
  readonly names: readonly string[];
  /** The optional groups of `tokens` (at any depth, in order of appearance) by their place in a key of `variantOf`. */
  readonly groups: ReadonlyMap<Token, number>;
  /** The variant of each combination of groups, by a key of one character per group: `1` written, `0` left out. */
  readonly variantOf: ReadonlyMap<string, readonly Part[]>;
}

const MAX_VARIANTS = 256;

/** Parses `source` (a path when `delimiter` is `/`, a host when it is `.`) against `requirements`. */
export function compilePattern(source: string, delimiter: '/' | '.', requirements: Readonly<Record<string, string>>, label: string): CompiledPattern {
  let data;
  try {
    data = parse(source, { encodePath: delimiter === '/' ? encodePathText : (text) => text.toLowerCase() });
  } catch (error) {
    const message = (error as Error).message;
    const hint = syntaxHint(source, message, delimiter);
    throw new InvalidRouteError(`Invalid ${label} "${source}": ${hint === '' ? message : message.replace(/(; visit |$)/, `${hint}$1`)}`, { cause: error });
  }
  // On the text as written: the tokens' is percent-encoded (`{identité}`) or lower-cased (a host's `{Tenant}`).
  refuseBracedNames(parse(source).tokens, delimiter, source, label);
  const names: string[] = [];
  collectNames(data.tokens, names, source, label);
  const groups = new Map<Token, number>();
  collectGroups(data.tokens, groups);
  const variants: Part[][] = [];
  const variantOf = new Map<string, Part[]>();
  expand(data.tokens, 0, [], groups, (flat) => {
    if (variants.length === MAX_VARIANTS) throw new InvalidRouteError(`Invalid ${label} "${source}": more than ${MAX_VARIANTS} combinations of optional groups.`);
    const parts = toParts(flat, delimiter, requirements, source, label);
    if (delimiter === '/') {
      // A path that opens with an optional group (`{/:page}`) is `/` without it.
      if (parts.length === 0) parts.push({ type: 'text', value: '/' });
      const first = parts[0]!;
      if (first.type !== 'text' || !first.value.startsWith('/')) throw new InvalidRouteError(`Invalid ${label} "${source}": it must start with "/" whichever optional groups are left out.`);
      // Several leading slashes are one (Route makes them one), but a group can put two back (`/{:a}/b` without `a`):
      // a variant served under `//b` only, and generated as a network path (a link to the host `b`).
      if (first.value.startsWith('//')) {
        throw new InvalidRouteError(`Invalid ${label} "${source}": it must start with one "/" whichever optional groups are left out or written, not "${first.value}" (an optional group opening the path holds its slash: \`{/:locale}/home\`).`);
      }
      // Nor an empty segment further on (`/api/{/:v}` written is `/api//1`): a path served under `//` only,
      // which proxies that merge slashes (nginx's default) turn into another; the route's own `//` stays.
      if (groupMakesEmptySegment(flat)) {
        throw new InvalidRouteError(`Invalid ${label} "${source}": an optional group, written or left out, puts "//" in it ("${describeVariant(parts)}"); the group holds the slash before its segment, the text before it does not: \`/api{/:version}\`, \`/files{/:dir}/list\`.`);
      }
    }
    variants.push(parts);
    const key = Array<string>(groups.size).fill('0');
    for (const token of flat) if (token.type === 'group' && token.written) key[token.index] = '1';
    variantOf.set(key.join(''), parts);
  });
  return { tokens: data.tokens, variants, names, groups, variantOf };
}

// What to write instead of the syntax other routers use, which path-to-regexp 8 dropped or never had
// (Express 4's `:id?`, `:id+`, `:id(\\d+)`, a bare `*`): its parser says only which character it did not expect.
function syntaxHint(source: string, message: string, delimiter: '/' | '.'): string {
  const at = /^(Unexpected (.) at|Missing parameter name at) index (\d+)/.exec(message);
  if (at === null) return '';
  const chars = [...source];
  const index = Number(at[3]);
  if (at[2] === undefined) {
    return chars[index - 1] === '*' ? ' (a wildcard has a name: `/*path`, its value a list of segments)' : ' (a ":" that is text is escaped: `\\:`)';
  }
  if (at[2] === '?') {
    // A name as path-to-regexp reads one (`:identité`, `:$id`).
    const param = /(.?)([:*][$_\p{ID_Start}][$\u200c\u200d\p{ID_Continue}]*)$/u.exec(chars.slice(0, index).join(''));
    if (param === null) {
      // Not after a parameter: in a path, a query string (`/search?q`), which is no part of what a route matches.
      return delimiter === '/' ? ' (a route matches the path, without its query string, which request.query reads; a "?" that is text is escaped: `\\?`)' : '';
    }
    // The separator goes in the braces: the one before, or the one after a parameter opening the pattern (a host's `{:sub.}`).
    const [, before, name] = param;
    // Only a character that is there: every string includes '', so a "?" ending the pattern would add "undefined".
    const next = chars[index + 1];
    const after = before === '' && next !== undefined && SEPARATORS.includes(next) ? next : '';
    return ` (an optional part is written in braces with its separator: \`{${before}${name}${after}}\`, not Express 4's \`${before}${name}?${after}\`)`;
  }
  if (at[2] === '+') return ' (a parameter of one or more segments is a wildcard: `/files/*path`)';
  if (at[2] === '(') return ' (a parameter\'s pattern goes in the route\'s requirements, `{ requirements: { id: \'\\\\d+\' } }`, not in the path)';
  return ` (a "${at[2]}" that is text is escaped: \`\\${at[2]}\`)`;
}

/** A name Symfony's placeholder may hold (letters of any script, digits, `_`) that path-to-regexp takes after `:`. */
const PARAMETER_NAME = /^[_\p{ID_Start}][\p{ID_Continue}]*$/u;

// A group of a name alone between separators is Symfony's placeholder (`/books/{id}`, `/{id}.{_format}`),
// which path-to-regexp reads as optional text: a route that would match `/books/id` and `/books/` only.
// Optional text within a segment (`/api/{v}1`, `/book{s}`) is path-to-regexp's own and stays.
function refuseBracedNames(tokens: readonly Token[], delimiter: '/' | '.', source: string, label: string, opening = true): void {
  tokens.forEach((token, at) => {
    if (token.type !== 'group') return;
    refuseBracedNames(token.tokens, delimiter, source, label, false);
    const [only] = token.tokens;
    if (token.tokens.length !== 1 || only!.type !== 'text' || !PARAMETER_NAME.test(only!.value)) return;
    const previous = tokens[at - 1];
    const next = tokens[at + 1];
    const before = previous === undefined ? (opening ? delimiter : '') : previous.type === 'text' ? previous.value.slice(-1) : '';
    const after = next === undefined ? '' : next.type === 'text' ? next.value[0]! : 'x';
    if (before === '' || !SEPARATORS.includes(before) || (after !== '' && !SEPARATORS.includes(after))) return;
    const name = only!.value;
    const optional = delimiter === '/' ? `, an optional one in braces with its separator, "{${before}:${name}}"` : '';
    throw new InvalidRouteError(`Invalid ${label} "${source}": "{${name}}" is the optional text "${name}", not a parameter: a parameter is written ":${name}" (Symfony's "{${name}}")${optional}.`);
  });
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

// Numbers the optional groups in order of appearance, an enclosing one before those it holds.
function collectGroups(tokens: readonly Token[], groups: Map<Token, number>): void {
  for (const token of tokens) {
    if (token.type !== 'group') continue;
    groups.set(token, groups.size);
    collectGroups(token.tokens, groups);
  }
}

// The first character of each text an optional group may start with (a group in it may be there or not).
function openers(tokens: readonly Token[]): string {
  let chars = '';
  for (const token of tokens) {
    if (token.type === 'text') return token.value === '' ? chars : chars + token.value[0];
    if (token.type !== 'group') return chars;
    chars += openers(token.tokens);
  }
  return chars;
}

/**
 * Where an optional group stood in a variant: `written` (its contents follow), or left out,
 * `opens` then the first characters it would have put there.
 */
interface GroupMark {
  readonly type: 'group';
  readonly index: number;
  readonly written: boolean;
  readonly opens: string;
}

type FlatToken = Exclude<Token, { type: 'group' }> | GroupMark;

/** Whether text ending with `/` meets text starting with `/` where an optional group begins, ends or was left out. */
function groupMakesEmptySegment(flat: readonly FlatToken[]): boolean {
  let previous = '';
  for (const token of flat) {
    if (token.type !== 'text') {
      // A parameter or wildcard holds at least one character: no empty segment across it.
      if (token.type !== 'group') previous = '';
      continue;
    }
    if (token.value === '') continue;
    if (previous.endsWith('/') && token.value.startsWith('/')) return true;
    previous = token.value;
  }
  return false;
}

/** A variant as it reads, each parameter as written in a pattern (`/api//:v`), for messages. */
export function describeVariant(parts: readonly Part[]): string {
  return parts.map((part) => (part.type === 'text' ? part.value : `${part.type === 'wildcard' ? '*' : ':'}${part.name}`)).join('');
}

// Calls `emit` with each combination of optional groups, the group's contents first.
function expand(tokens: readonly Token[], index: number, prefix: FlatToken[], groups: ReadonlyMap<Token, number>, emit: (flat: FlatToken[]) => void): void {
  while (index < tokens.length) {
    const token = tokens[index++]!;
    if (token.type === 'group') {
      const rest = index;
      const length = prefix.length;
      const group = groups.get(token)!;
      prefix.push({ type: 'group', index: group, written: true, opens: '' });
      expand(token.tokens, 0, prefix, groups, (withGroup) => expand(tokens, rest, withGroup, groups, emit));
      prefix.length = length;
      prefix.push({ type: 'group', index: group, written: false, opens: openers(token.tokens) });
      expand(tokens, rest, prefix, groups, emit);
      return;
    }
    prefix.push(token);
  }
  emit(prefix.slice());
}

/**
 * What ends a parameter without requirement at flat[from] on: `follower`, the first character of
 * the text after it (the delimiter when none); `stops`, the separators besides the delimiter that
 * end it: the follower's, and those opening the groups left out between (the groups right after it).
 */
function stopsAfter(flat: readonly FlatToken[], from: number, delimiter: string): { follower: string; stops: string } {
  let follower = delimiter;
  let following = '';
  for (let j = from; j < flat.length; j++) {
    const token = flat[j]!;
    if (token.type === 'group') following += token.opens;
    else if (token.type !== 'text') break;
    else if (token.value !== '') {
      follower = token.value[0]!;
      following += follower;
      break;
    }
  }
  const stops = [...new Set(following)].filter((char) => char !== delimiter && SEPARATORS.includes(char)).join('');
  return { follower, stops };
}

function toParts(flat: readonly FlatToken[], delimiter: string, requirements: Readonly<Record<string, string>>, source: string, label: string): Part[] {
  const parts: Part[] = [];
  for (let i = 0; i < flat.length; i++) {
    const token = flat[i]!;
    if (token.type === 'group') continue;
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
    let required = requirement !== undefined;
    let stop = '';
    if (requirement !== undefined) pattern = requirement;
    else if (token.type === 'wildcard') pattern = '[^]+';
    else {
      // As Symfony's RouteCompiler: a separator after the parameter ends it (or opening a group after
      // it); other text (`/get:"what"Suffix`) does not, the parameter giving characters back to it,
      // which takes its regex, as do two separators (the tree reads up to one).
      const { follower, stops } = stopsAfter(flat, i + 1, delimiter);
      pattern = `[^${escapeClass(delimiter + stops)}]+`;
      required = stops.length > 1 || (follower !== delimiter && !stops.includes(follower));
      stop = stops;
    }
    parts.push({ type: token.type, name: token.name, pattern, required, stop });
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
// that a client must encode are encoded here, and %XX sequences written in the pattern are
// normalized as requests are (`/caf%c3%a9` is `/caf%C3%A9`, `/%7Euser` is `/~user`).
function encodePathText(text: string): string {
  return normalizePercentEncoding(text.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]+/g, encodeRun));
}

/** A run of characters percent-encoded as UTF-8; a lone surrogate, which has no encoding, said so rather than as encodeURIComponent's `URI malformed`. */
function encodeRun(chars: string): string {
  try {
    return encodeURIComponent(chars);
  } catch (error) {
    throw new InvalidRouteError('its text holds a lone surrogate (half of a UTF-16 pair), which no URL can carry', { cause: error });
  }
}

/** Unreserved characters (RFC 3986 2.3) by char code. */
const UNRESERVED = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~') UNRESERVED[c.charCodeAt(0)] = 1;

/**
 * The path with its percent-encodings normalized as RFC 3986 6.2.2 says: upper-case hex digits,
 * unreserved characters decoded. Route patterns are compiled to that form; reserved characters
 * (`%2F` among them) stay encoded, and a `%` that starts no encoding is left as it is.
 * RouterListener looks a path up again in this form after a miss (`/caf%c3%a9`, `/%69p`).
 */
export function normalizePercentEncoding(path: string): string {
  return path.replace(/%([0-9A-Fa-f]{2})/g, (encoding: string, hex: string) => {
    const code = parseInt(hex, 16);
    return code < 128 && UNRESERVED[code] === 1 ? String.fromCharCode(code) : `%${hex.toUpperCase()}`;
  });
}

/** A `.` or `..` path segment, written as it is. */
export const DOT_SEGMENT = /\/\.\.?(?=\/|$)/;
const DOT_SEGMENTS = new RegExp(DOT_SEGMENT.source, 'g');
/** A `.` or `..` path segment, each dot written as it is or percent-encoded (`%2E%2E`, `.%2e`): clients resolve either away. */
export const SPELLED_DOT_SEGMENT = /\/(?:\.|%2e)(?:\.|%2e)?(?=\/|$)/i;

/**
 * The path with its dot segments encoded (`/%2E%2E`, `/%2E`), as Symfony's generator writes them:
 * clients resolve `/..` and `/.` away (RFC 3986 5.2.4). Browsers and fetch() resolve them encoded too
 * (the WHATWG URL standard reads `%2E%2E` as `..`), so a route's own text keeps them so, and a value's
 * are refused (the generator's refuseDotSegment). The matcher gives a parameter back decoded, unless
 * its requirement refuses the encoding, which the generator's readBack finds.
 */
export function encodeDotSegments(path: string): string {
  return path.replace(DOT_SEGMENTS, (dots) => (dots === '/..' ? '/%2E%2E' : '/%2E'));
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

  // Anchors are the matcher's: `^` and `$`, or PCRE's `\A` and `\z` (which JavaScript would read as the letters A and z), as Symfony strips them.
  if (source.startsWith('^')) source = source.slice(1);
  else if (source.startsWith('\\A')) source = source.slice(2);
  if (source.endsWith('$') && !source.endsWith('\\$')) source = source.slice(0, -1);
  else if (source.endsWith('\\z') && !source.endsWith('\\\\z')) source = source.slice(0, -2);
  if (source === '') throw new InvalidRouteError(`The requirement for parameter "${name}" cannot be empty.`);
  for (let i = 0; i < source.length; i++) {
    if (source[i] !== '\\') continue;
    // Symfony's `\pL` (PCRE, with its utf8 option): JavaScript reads it as the letter p without the u flag, and a class of
    // characters has no reading against the encoded path anyway (`é` is `%C3%A9`).
    const next = source[i + 1] ?? '';
    if (next === 'p' || next === 'P') {
      throw new InvalidRouteError(
        `The requirement for parameter "${name}" uses \\${next}, but Unicode property escapes have no reading against a percent-encoded path: `
        + `write the characters as alternatives of their encodings (\`(?:[a-z]|%C3%A9)+\`): ${source}`,
      );
    }
    // Other PCRE escapes JavaScript has not (`\Z`, `\h`, `\R`, `\A` and `\z` inside the pattern) are read as their letter.
    if (/[A-Za-z]/.test(next) && !JS_LETTER_ESCAPES.includes(next)) {
      throw new InvalidRouteError(`The requirement for parameter "${name}" uses \\${next}, which JavaScript reads as the letter ${next} (it is no escape of its regular expressions): ${source}`);
    }
    i++;
  }

  let out = '';
  for (let i = 0; i < source.length; i++) {
    const char = source[i]!;
    if (char === '\\') {
      const next = source[i + 1] ?? '';
      if (/[1-9k]/.test(next)) throw new InvalidRouteError(`The requirement for parameter "${name}" must not use backreferences: ${source}`);
      // An escaped character a client must percent-encode (`\ `, `\{`, `\u20ac`) stands for its encoding, as below.
      const escaped = escapedLiteral(source, i);
      if (escaped !== null && mustEncode(escaped.char)) {
        out += `(?:${encodeLiteral(escaped.char, name, source)})`;
        i += escaped.length - 1;
        continue;
      }
      out += char + next;
      i++;
      continue;
    }
    if (char === '[') {
      const end = classEnd(source, i);
      if (end === -1) {
        out += char;
        continue;
      }
      out += encodedClass(source.slice(i, end + 1), name, source);
      i = end;
      continue;
    }
    // Paths are matched percent-encoded: a literal character a client must encode (`€`, a space)
    // stands for its encoding, so that `EUR|€` matches `/price/%E2%82%AC` (and its value is `€`).
    const literal = codePointAt(source, i);
    if (!REGEX_SYNTAX.includes(literal) && mustEncode(literal)) {
      out += `(?:${encodeLiteral(literal, name, source)})`;
      i += literal.length - 1;
      continue;
    }
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

/** The letters that make an escape in a JavaScript regular expression without the u flag (`\\k` is a backreference, refused apart). */
const JS_LETTER_ESCAPES = 'dDwWsSbBfnrtvcxuk';

/** Characters a route's path text keeps as they are (see encodePathText); any other is matched in its percent-encoding. */
const PATH_TEXT_CHAR = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/%]$/;
/** Characters that are regex syntax outside a class: kept as syntax, never encoded. */
const REGEX_SYNTAX = '\\^$.|?*+()[]{}';

/** Whether a literal character is matched in its percent-encoding: one a route's path text would encode. */
function mustEncode(char: string): boolean {
  return !PATH_TEXT_CHAR.test(char);
}

/** The character (one code point: a surrogate pair is one) at `i`. */
function codePointAt(source: string, i: number): string {
  const code = source.codePointAt(i)!;
  return String.fromCodePoint(code);
}

/** A character's percent-encoding (UTF-8), as regex source; a lone surrogate, which has none, is refused. */
function encodeLiteral(char: string, name: string, source: string): string {
  try {
    return encodeURIComponent(char);
  } catch (error) {
    throw new InvalidRouteError(`The requirement for parameter "${name}" holds a lone surrogate, which no URL can carry: ${source}`, { cause: error });
  }
}

/**
 * The literal character an escape at `i` stands for, and the escape's length: `\ `, `\{`, `\x20`,
 * `\u20ac`, `\u{1f600}`; null for a class (`\d`), an assertion (`\b`) or a control escape (`\n`).
 */
function escapedLiteral(source: string, i: number): { char: string; length: number } | null {
  const next = source[i + 1];
  if (next === undefined) return null;
  const hex = /^(?:x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4})|u\{([0-9A-Fa-f]{1,6})\})/.exec(source.slice(i + 1));
  if (hex !== null) {
    const code = Number.parseInt(hex[1] ?? hex[2] ?? hex[3]!, 16);
    return code > 0x10ffff ? null : { char: String.fromCodePoint(code), length: 1 + hex[0].length };
  }
  if (/[A-Za-z0-9]/.test(next)) return null;
  const char = codePointAt(source, i + 1);
  return { char, length: 1 + char.length };
}

/**
 * A character class with the characters a client must encode taken out into alternatives of
 * their encodings: `[a-z ]` is `(?:[a-z]|%20)`. Such a character in a range or a negated class has
 * no such rewriting, and is refused with what to write instead.
 */
function encodedClass(text: string, name: string, source: string): string {
  const negated = text[1] === '^';
  const body = text.slice(negated ? 2 : 1, -1);
  // The class's members: their source, and the literal character each stands for (null: `\d`, `\w`...).
  const members: Array<{ text: string; char: string | null }> = [];
  for (let i = 0; i < body.length; ) {
    if (body[i] === '\\') {
      const escaped = escapedLiteral(body, i);
      const length = escaped?.length ?? 2;
      members.push({ text: body.slice(i, i + length), char: escaped?.char ?? null });
      i += length;
    } else {
      const char = codePointAt(body, i);
      members.push({ text: char, char });
      i += char.length;
    }
  }
  const refuse = (char: string, where: string): never => {
    throw new InvalidRouteError(
      `The requirement for parameter "${name}" has ${JSON.stringify(char)} in ${where}, but paths are matched percent-encoded: `
      + `write it as an alternative of its encoding (\`(?:[a-z]|%C3%A9)\`): ${source}`,
    );
  };
  let kept = '';
  const encoded: string[] = [];
  for (let k = 0; k < members.length; k++) {
    const member = members[k]!;
    const char = member.char;
    // A range: member, an unescaped `-`, member.
    if (members[k + 1]?.text === '-' && k + 2 < members.length) {
      for (const end of [char, members[k + 2]!.char]) if (end !== null && mustEncode(end)) refuse(end, 'a range');
      kept += member.text + '-' + members[k + 2]!.text;
      k += 2;
      continue;
    }
    if (char === null || !mustEncode(char)) kept += member.text;
    else if (negated) refuse(char, 'a negated class');
    else encoded.push(encodeLiteral(char, name, source));
  }
  if (encoded.length === 0) return text;
  return `(?:${kept === '' ? '' : `[${kept}]|`}${encoded.join('|')})`;
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
