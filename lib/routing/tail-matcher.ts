// Internal: matches a route's tail (a wildcard followed by more of the pattern, `*path.:ext`,
// `*a/*b/end`) in time linear in the path, with the answers of the tail's regex.
//
// The regex (`([^]+)\.([^/]+)$`) is run by V8's backtracking engine, which tries the splits of
// the path between the parts one after another and reads the rest again for each: quadratic for
// `/*path.:ext` on 15,000 dots and a `/`, cubic for `/*a/*b/*c/end` on `a/` repeated. The search
// here is the same one, in the same order (each part reads as far as it can, then gives back one
// character at a time), so the first match it finds is the regex's, captures included. It also
// remembers what failed: whether the rest of the pattern matches after a part ends at a position
// depends on nothing else (parts are character classes and texts: no backreference, no
// lookaround), so nothing is tried twice, and two facts make that memory one slot per part:
// - A parameter's class excludes the first character of the text after it (`/`, or the separator
//   its default pattern stops at), so it can only end where its run of characters ends: from every
//   start inside one run, it succeeds or fails alike. A parameter followed by text that is no
//   separator (`:"a"Suffix`, as Symfony reads it) gives characters back to that text: it may end
//   anywhere in its run where the text follows, the longest first; a start failed there means every
//   end above it failed, so a lower start in the run only tries the ends from there down.
// - The search tries the ends of a part in decreasing order, and never comes back above an end that
//   failed; so the next part's starts only decrease, and it remembers the lowest failed start (a
//   wildcard: every end above it failed; a parameter: its run failed).
// Each part then reads each character of the path at most once: O(n * (k + texts' length)) for a
// path of n characters, k parameters and wildcards, and the texts between them.
//
// Why not other ways: a wildcard here reads any characters, not whole segments (`/*a-:b` splits
// `x-y/z-w` inside a segment), so segment-wise matching would change answers; matching the text
// after the last wildcard from the end is linear only for one wildcard, and the 15,000 dots sit
// in one segment anyway; V8's linear engine (the `l` flag) needs a startup flag.
// Only tails of parts without requirements qualify (a requirement written as the default pattern is
// one): a requirement is a regex of its own, whose cost is its author's, and the tree keeps the
// tail's regex for them.
import { escapeClass, type Part } from './pattern.js';

/** Characters read and texts compared by every search so far, for the tests' linearity checks. */
let steps = 0;

/** How much work tail searches have done (characters read, texts compared), for tests. */
export function tailMatcherSteps(): number {
  return steps;
}

/** A tail's parts, matched as its sticky regex `(X1)T1(X2)T2...$` would match them. */
export class TailMatcher {
  /** Per part: whether it is a wildcard (reads any character) rather than a parameter. */
  private readonly wildcards: Uint8Array;
  /** Per parameter: whether it gives characters back to the text after it (whose first character it reads). */
  private readonly giving: Uint8Array;
  /**
   * Per part, four words of bits over the ASCII codes: what a parameter does not read (the delimiter,
   * and the separators it stops at: one, or several when groups opening with either may follow it).
   */
  private readonly unread: Uint32Array;
  /** Per part: the text that follows it ('' for the last part when nothing does). */
  private readonly texts: readonly string[];
  private readonly count: number;
  /**
   * Per part, what failed in the search whose number is in `failedIn`: a wildcard's ends from
   * `failedFrom` on; a parameter's starts from `failedFrom` to `failedTo` (one run of its class).
   */
  private readonly failedIn: Int32Array;
  private readonly failedFrom: Int32Array;
  private readonly failedTo: Int32Array;
  /** Where each part's capture starts and ends in the match found. */
  private readonly bounds: Int32Array;

  // Search state (one search at a time: matching is synchronous).
  private path = '';
  private length = 0;
  private search = 0;

  private constructor(wildcards: number[], giving: number[], unread: number[], texts: string[]) {
    this.wildcards = Uint8Array.from(wildcards);
    this.giving = Uint8Array.from(giving);
    this.unread = Uint32Array.from(unread);
    this.texts = texts;
    this.count = texts.length;
    this.failedIn = new Int32Array(texts.length);
    this.failedFrom = new Int32Array(texts.length);
    this.failedTo = new Int32Array(texts.length);
    this.bounds = new Int32Array(texts.length * 2);
  }

  /**
   * The matcher of a tail (`parts` from its first parameter or wildcard to the end), or null when
   * it does not qualify: a part with a requirement, or a shape pattern.ts would not make.
   * `delimiter`: what parameters do not read, `/` in a path (a host's parts, read lower-cased, have `.`).
   */
  static of(parts: readonly Part[], delimiter: '/' | '.' = '/'): TailMatcher | null {
    const wildcards: number[] = [];
    const giving: number[] = [];
    const unread: number[] = [];
    const texts: string[] = [];
    for (let i = 0; i < parts.length; i += 2) {
      const part = parts[i]!;
      const next = parts[i + 1];
      if (part.type === 'text' || (next !== undefined && next.type !== 'text')) return null;
      const text = next?.value ?? '';
      if (text === '' && i + 1 < parts.length) return null;
      if (part.type === 'wildcard') {
        if (part.required || part.pattern !== '[^]+') return null;
        wildcards.push(1);
        giving.push(0);
        unread.push(0, 0, 0, 0);
      } else {
        // The classes pattern.ts gives a parameter without requirement: not `/`, nor the separators it
        // stops at (that starting the text after it in its segment, those opening groups after it); or a
        // requirement written as one. One that reads the first character of the text after it gives back to it.
        const after = text !== '' && text[0] !== delimiter ? text[0]! : '';
        const stops = part.pattern === `[^${escapeClass(delimiter + part.stop)}]+` ? part.stop
          : after !== '' && part.pattern === `[^${escapeClass(delimiter + after)}]+` ? after
          : null;
        if (stops === null) return null;
        const bits = [0, 0, 0, 0];
        for (const char of delimiter + stops) {
          const code = char.charCodeAt(0);
          if (code >= 128) return null;
          bits[code >>> 5] = bits[code >>> 5]! | (1 << (code & 31));
        }
        giving.push(after !== '' && !stops.includes(after) ? 1 : 0);
        unread.push(...bits);
        wildcards.push(0);
      }
      texts.push(text);
    }
    return texts.length === 0 ? null : new TailMatcher(wildcards, giving, unread, texts);
  }

  /** Matches `path` from `pos` to its end: `[tail, ...captures]` as the sticky regex's exec, or null. */
  /** Whether `path` from `pos` to its end matches, as the sticky regex's test (nothing allocated). */
  test(path: string, pos: number): boolean {
    if (++this.search === 0x7fffffff) {
      this.failedIn.fill(0);
      this.search = 1;
    }
    this.path = path;
    this.length = path.length;
    const found = this.part(0, pos);
    this.path = '';
    return found;
  }

  exec(path: string, pos: number): string[] | null {
    if (!this.test(path, pos)) return null;
    const bounds = this.bounds;
    const count = this.count;
    const match = new Array<string>(count + 1);
    match[0] = path.slice(pos);
    for (let j = 0; j < count; j++) match[j + 1] = path.slice(bounds[j * 2]!, bounds[j * 2 + 1]!);
    return match;
  }

  // Whether part `j`, from `start`, and the parts after it match the path to its end.
  private part(j: number, start: number): boolean {
    if (start >= this.length) return false;
    if (this.wildcards[j] === 1) return this.wildcard(j, start);
    return this.giving[j] === 1 ? this.givingParameter(j, start) : this.parameter(j, start);
  }

  private wildcard(j: number, start: number): boolean {
    const path = this.path;
    const length = this.length;
    const text = this.texts[j]!;
    const known = this.failedIn[j] === this.search;
    // Ends above `top` failed already.
    const top = known ? this.failedFrom[j]! - 1 : length;
    if (j === this.count - 1) {
      // The regex's `$`: the text ends the path.
      const end = length - text.length;
      steps++;
      if (end > start && end <= top && (text === '' || path.startsWith(text, end))) return this.found(j, start, end);
    } else {
      // The longest reading first, then shorter ones, where the text follows (the next part needs a character).
      // (A loop rather than lastIndexOf, a runtime call that costs more than the short paths read.)
      const first = text.charCodeAt(0);
      const size = text.length;
      let end = top < length - size - 1 ? top : length - size - 1;
      if (end > start) steps += end - start;
      for (; end > start; end--) {
        if (path.charCodeAt(end) !== first || (size > 1 && !path.startsWith(text, end))) continue;
        steps += size;
        if (this.part(j + 1, end + size)) return this.found(j, start, end);
      }
    }
    if (!known || start < top) {
      this.failedIn[j] = this.search;
      this.failedFrom[j] = start + 1;
    }
    return false;
  }

  /**
   * Whether parameter `j` cannot start at `start`: it does not read the character there, or a start
   * before it in the same run failed already (the run it would read is the one that failed).
   */
  private refusesStart(j: number, start: number): boolean {
    if (unreadable(this.unread, j * 4, this.path.charCodeAt(start))) return true;
    return this.failedIn[j] === this.search && start >= this.failedFrom[j]! && start < this.failedTo[j]!;
  }

  private parameter(j: number, start: number): boolean {
    if (this.refusesStart(j, start)) return false;
    const path = this.path;
    const length = this.length;
    const unread = this.unread;
    const base = j * 4;
    let c: number;
    const known = this.failedIn[j] === this.search;
    const from = this.failedFrom[j]!;
    // Read the run: the parameter can only end where it ends (the text after it starts with a character it cannot read).
    let end = start + 1;
    while (end < length) {
      if (known && end === from) {
        // The run of a start that failed.
        steps += end - start;
        this.failedFrom[j] = start;
        return false;
      }
      c = path.charCodeAt(end);
      if (unreadable(unread, base, c)) break;
      end++;
    }
    steps += end - start;
    if (this.after(j, end)) return this.found(j, start, end);
    this.failedIn[j] = this.search;
    this.failedFrom[j] = start;
    this.failedTo[j] = end;
    return false;
  }

  /**
   * A parameter whose text starts with a character it reads (`:"a"Suffix`): the regex reads its run
   * to the next `/`, then gives back one character at a time until the text and the rest follow.
   */
  private givingParameter(j: number, start: number): boolean {
    if (this.refusesStart(j, start)) return false;
    const path = this.path;
    const length = this.length;
    const unread = this.unread;
    const base = j * 4;
    let c: number;
    const known = this.failedIn[j] === this.search;
    const from = this.failedFrom[j]!;
    // The run's end, and the highest end not yet tried: a start that failed in the same run tried those above it.
    let end = start + 1;
    let top = -1;
    while (end < length) {
      if (known && end === from) {
        top = from;
        end = this.failedTo[j]!;
        break;
      }
      c = path.charCodeAt(end);
      if (unreadable(unread, base, c)) break;
      end++;
    }
    steps += (top === -1 ? end : top) - start;
    const runEnd = end;
    if (top === -1) top = runEnd;
    const text = this.texts[j]!;
    if (j === this.count - 1) {
      // The regex's `$`: the text ends the path.
      const at = length - text.length;
      steps += text.length;
      if (at > start && at <= top && path.startsWith(text, at)) return this.found(j, start, at);
    } else {
      const first = text.charCodeAt(0);
      for (let at = top; at > start; at--) {
        steps++;
        if (path.charCodeAt(at) !== first) continue;
        if (this.after(j, at)) return this.found(j, start, at);
      }
    }
    this.failedIn[j] = this.search;
    this.failedFrom[j] = start;
    this.failedTo[j] = runEnd;
    return false;
  }

  // Whether part `j`'s text, at `pos`, and the parts after it match the path to its end.
  private after(j: number, pos: number): boolean {
    const text = this.texts[j]!;
    const next = pos + text.length;
    const last = j === this.count - 1;
    if (last ? next !== this.length : next >= this.length) return false;
    if (text !== '') {
      steps += text.length;
      if (!this.path.startsWith(text, pos)) return false;
    }
    return last || this.part(j + 1, next);
  }

  private found(j: number, start: number, end: number): true {
    this.bounds[j * 2] = start;
    this.bounds[j * 2 + 1] = end;
    return true;
  }
}

/** Whether parameter `base / 4`'s table says it does not read the character `c` (its delimiter, or one of its stops: all ASCII). */
function unreadable(unread: Uint32Array, base: number, c: number): boolean {
  return c < 128 && (unread[base + (c >>> 5)]! & (1 << (c & 31))) !== 0;
}
