// Internal: every route variant in one radix tree, searched for the highest-priority match.
//
// Static text is a radix tree keyed by character; a parameter is an edge that reads up to the
// next `/` (or up to the separator that may follow it in its segment); a trailing wildcard reads
// the rest. What the tree cannot decide by reading forward (a requirement that may match `/`,
// a wildcard followed by more text) is left to a matcher of the rest of the path, a "tail": a
// TailMatcher (tail-matcher.ts, linear in the path) when its parts have no requirement, else a
// sticky regex. Each candidate has a priority (route index, then optional-group variant), and the
// search keeps the smallest: first match wins, as in Symfony, whatever the tree's shape.
// Subtrees whose best priority cannot beat the current match are skipped. A small tree without
// host, scheme or tail conditions is also compiled into one generated function that takes the
// same decisions (tree-compiler.ts); `find` runs that instead of the walk.
//
// Why a tree and not only merged regexes (Symfony's CompiledUrlMatcher, Hono's RegExpRouter): a
// merged regex needs a capture group per route to tell which one matched, so each match fills
// an array as long as the route count; per-bucket regexes still grow with the bucket. The tree
// reads each character of the path about once whatever the route count (bench/router: 10,000
// routes cost ~1.3x what 100 do), and regexes remain for the parts only a regex can decide.
import { cannotMatch, variantSource, type Part } from './pattern.js';
import { compileSearch, firstDifference, type CompiledSearch } from './tree-compiler.js';
import { TailMatcher } from './tail-matcher.js';
import type { HostVariant, Route } from './route.js';

/** What a candidate is made from, before the tree lays out its parameters. */
export interface CandidateBase {
  /** Route index * 256 + variant index: lower wins. */
  readonly prio: number;
  readonly name: string;
  readonly route: Route;
  /** Method bits the route accepts (all bits: any method). */
  readonly mask: number;
  readonly staticHost: string | null;
  readonly hostVariants: readonly HostVariant[] | null;
  readonly schemes: readonly string[] | null;
  /** Has a host or scheme condition: its outcome depends on more than path and method. */
  readonly conditional: boolean;
  readonly defaults: Readonly<Record<string, unknown>>;
}

/** One route variant the search can end on. A class, so that every candidate shares one shape. */
export class Candidate implements CandidateBase {
  readonly prio: number;
  readonly name: string;
  readonly route: Route;
  readonly mask: number;
  readonly staticHost: string | null;
  readonly hostVariants: readonly HostVariant[] | null;
  readonly schemes: readonly string[] | null;
  readonly conditional: boolean;
  readonly defaults: Readonly<Record<string, unknown>>;
  /** Parameter names: first those read by the tree (in order), then the tail's groups. */
  readonly names: readonly string[];
  /** Per name: a wildcard, whose value is split into segments. */
  readonly wildcards: readonly boolean[];
  /** How many of `names` the tree reads; the rest are the tail's groups. */
  readonly treeParams: number;
  /** The group it belongs to (for the 405 shortcut). */
  group: Group | null = null;
  /** Builds the parameters of a match; made by the matcher on first use. */
  build: ParamsBuilder | null = null;
  /** The values of the defaults no parameter overrides, in `build`'s order; set with it. */
  defaultValues: readonly unknown[] = [];

  constructor(base: CandidateBase, names: readonly string[], wildcards: readonly boolean[], treeParams: number) {
    this.prio = base.prio;
    this.name = base.name;
    this.route = base.route;
    this.mask = base.mask;
    this.staticHost = base.staticHost;
    this.hostVariants = base.hostVariants;
    this.schemes = base.schemes;
    this.conditional = base.conditional;
    this.defaults = base.defaults;
    this.names = names;
    this.wildcards = wildcards;
    this.treeParams = treeParams;
  }
}

/**
 * Builds a match's parameters from the path, the tree's parameter positions, the tail's match
 * and the candidate's `defaultValues`; answers the index of the parameter whose percent-encoding
 * is malformed instead.
 */
export type ParamsBuilder = (
  path: string,
  positions: readonly number[],
  tail: TailMatch | null,
  defaultValues: readonly unknown[],
) => Record<string, unknown> | number;

/** Candidates ending at the same place, in priority order. */
export interface Group {
  readonly candidates: Candidate[];
  /** Precomputed 405 outcome when this group alone matches the path; null when it depends on the request. */
  allow: { readonly kind: 'method-not-allowed'; readonly allowedMethods: readonly string[] } | null;
}

interface ParamEdge {
  /** Char code that also ends the parameter besides `/`, or -1. */
  readonly stop: number;
  /** Sticky requirement check, `(?:req)(?![^/])`, or null. */
  readonly test: RegExp | null;
  readonly key: string;
  readonly node: TreeNode;
  minPrio: number;
  /**
   * Set (by seal) when `node` only leads on through a child `/`: a parameter ended by a `/` then
   * goes straight to that child, whose first character indexOf has already found.
   */
  slash: TreeNode | null;
}

interface WildcardEdge {
  /** Sticky requirement check, `(?:req)$`, or null. */
  readonly test: RegExp | null;
  readonly key: string;
  readonly group: Group;
  minPrio: number;
}

/** What a tail's match gives: the rest of the path, then each of its parameters' raw value. */
export type TailMatch = readonly string[];

interface Tail {
  /** Matches the rest of the path from `pos`, to its end. */
  readonly match: (path: string, pos: number) => TailMatch | null;
  readonly group: Group;
  readonly prio: number;
}

/** Larger than any priority, and a small integer: V8 keeps such fields unboxed, unlike Infinity. */
const NONE = 0x3fffffff;

/** A node as the tree compiler reads it (after seal). */
export interface SearchNode {
  readonly prefix: string;
  readonly children: ReadonlyMap<number, SearchNode> | null;
  readonly params: readonly { readonly stop: number; readonly test: RegExp | null; readonly node: SearchNode; readonly minPrio: number }[] | null;
  readonly wildcards: readonly { readonly test: RegExp | null; readonly group: Group; readonly minPrio: number }[] | null;
  readonly tails: readonly unknown[] | null;
  readonly endpoints: Group | null;
  readonly minPrio: number;
  readonly staticOnly: boolean;
}

/** The outputs of a search, as the compiled search writes them. */
export interface SearchResult {
  best: number;
  bestCandidate: Candidate | null;
  readonly bestPositions: number[];
  bestDepth: number;
  bestTail: TailMatch | null;
  missCount: number;
  missGroup: Group | null;
  schemeMiss: readonly string[] | null;
  reach: number;
}

class TreeNode implements SearchNode {
  prefix: string;
  /** Children by the char code of their first character (while building). */
  children: Map<number, TreeNode> | null = null;
  /** After seal: first char codes and nodes of up to 8 children, scanned linearly... */
  codes: number[] | null = null;
  nodes: TreeNode[] | null = null;
  /** ...or, for more, an array indexed by char code (codes >= 128 go to `map`). */
  table: (TreeNode | undefined)[] | null = null;
  map: Map<number, TreeNode> | null = null;
  params: ParamEdge[] | null = null;
  wildcards: WildcardEdge[] | null = null;
  tails: Tail[] | null = null;
  endpoints: Group | null = null;
  minPrio = NONE;
  /** No parameter, wildcard or tail leaves this node: the search need not come back to it. */
  staticOnly = false;
  /**
   * The node's one way on when it is a parameter (no static child, wildcard or tail): the search
   * reads it in its loop instead of a call, as it follows a static-only node.
   */
  onlyParam: ParamEdge | null = null;

  constructor(prefix: string) {
    this.prefix = prefix;
  }
}


const SLASH = 47;

/** The tree and its search state (one search at a time: matching is synchronous). */
export class RouteTree implements SearchResult {
  readonly #root = new TreeNode('');
  /** The generated search, when the tree qualifies (see tree-compiler.ts). */
  #compiled: CompiledSearch | null = null;
  /**
   * The root's only child when it is `/` (every path pattern starts with one): a search of a path
   * starting with `/` begins there, one step fewer.
   */
  #slash: TreeNode | null = null;
  readonly #groups: Group[] = [];

  // Search inputs.
  #bit = 0;
  #host = '';
  #lowerHost: string | null = null;
  #scheme = '';
  /** When non-null, the search collects every candidate passing host and scheme, ignoring methods. */
  #collected: Candidate[] | null = null;
  #stack: number[] = [];
  /**
   * The path's length, read once per search: paths come as strings of several representations
   * (sequential, sliced, cons, thin), and past four a `path.length` in the recursive walk would be
   * a megamorphic property load.
   */
  #length = 0;

  // Search outputs.
  /** Priority of the best match so far. */
  best = NONE;
  bestCandidate: Candidate | null = null;
  /** Start and end of each tree-read parameter of the best match. */
  readonly bestPositions: number[] = [];
  bestDepth = 0;
  bestTail: TailMatch | null = null;
  /** Groups that matched the path but not the method, and the last of them. */
  missCount = 0;
  missGroup: Group | null = null;
  /** Schemes of the first candidate that matched all but the scheme. */
  schemeMiss: readonly string[] | null = null;
  /** Whether a conditional candidate was looked at; accumulates until the caller clears it. */
  conditional = false;
  /**
   * The furthest position of the path the last search looked at, a character or the end (`length`;
   * an overestimate is safe): a path that differs only beyond it gets the same answer. A miss
   * uses it to skip the trailing-slash retry without searching again.
   */
  reach = 0;

  /** Whether `find` runs a generated search (set by `seal`). */
  get compiled(): boolean {
    return this.#compiled !== null;
  }

  /** Every group, for the matcher to precompute their 405 outcomes. */
  get groups(): readonly Group[] {
    return this.#groups;
  }

  /** Adds a variant; `base` describes its route. Must be called in priority order. */
  insert(parts: readonly Part[], base: CandidateBase): void {
    let node = this.#root;
    const names: string[] = [];
    const wildcards: boolean[] = [];
    const make = (): Candidate => new Candidate(base, names, wildcards, names.length);
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      if (part.type === 'text') {
        node = insertText(node, part.value);
        continue;
      }
      const next = parts[i + 1];
      if (part.type === 'param') {
        // The separator that ends it besides `/` in this variant (of the text after it, or opening a group left out right after it).
        const stop = part.required || part.stop === '' ? -1 : part.stop.charCodeAt(0);
        let test: RegExp | null = null;
        if (part.required) {
          if ((next?.type === 'text' && next.value[0] !== '/') || !cannotMatch(part.pattern, '/') || matchesEmpty(part.pattern)) {
            this.#addTail(node, parts.slice(i), make(), names, wildcards);
            return;
          }
          test = new RegExp(`(?:${part.pattern})(?![^/])`, 'y');
        }
        const key = `${stop}:${test?.source ?? ''}`;
        node.params ??= [];
        let edge = node.params.find((candidate) => candidate.key === key);
        if (edge === undefined) {
          edge = { stop, test, key, node: new TreeNode(''), minPrio: NONE, slash: null };
          node.params.push(edge);
        }
        names.push(part.name);
        wildcards.push(false);
        node = edge.node;
        continue;
      }
      if (next !== undefined || (part.required && matchesEmpty(part.pattern))) {
        this.#addTail(node, parts.slice(i), make(), names, wildcards);
        return;
      }
      const test = part.required ? new RegExp(`(?:${part.pattern})$`, 'y') : null;
      const key = test?.source ?? '';
      node.wildcards ??= [];
      let edge = node.wildcards.find((candidate) => candidate.key === key);
      if (edge === undefined) {
        edge = { test, key, group: this.#group(), minPrio: NONE };
        node.wildcards.push(edge);
      }
      names.push(part.name);
      wildcards.push(true);
      this.#join(edge.group, make());
      return;
    }
    node.endpoints ??= this.#group();
    this.#join(node.endpoints, make());
  }

  /** Computes the priority bounds used to prune the search; call once after the last insert. */
  seal(): void {
    const root = this.#root;
    seal(root);
    const slash = root.staticOnly && root.endpoints === null ? childAt(root, SLASH) : undefined;
    if (slash !== undefined && slash.prefix === '/' && root.codes?.length === 1) this.#slash = slash;
    this.#compiled = compileSearch(root);
  }

  #addTail(node: TreeNode, parts: readonly Part[], candidate: Candidate, names: string[], wildcards: boolean[]): void {
    for (const part of parts) {
      if (part.type === 'text') continue;
      names.push(part.name);
      wildcards.push(part.type === 'wildcard');
    }
    const group = this.#group();
    this.#join(group, candidate);
    node.tails ??= [];
    node.tails.push({ match: tailMatch(parts), group, prio: candidate.prio });
  }

  #group(): Group {
    const group: Group = { candidates: [], allow: null };
    this.#groups.push(group);
    return group;
  }

  #join(group: Group, candidate: Candidate): void {
    candidate.group = group;
    group.candidates.push(candidate);
  }

  /** Searches `path` for the best candidate accepting `bit`; true when found (see `bestCandidate`). */
  find(path: string, bit: number, host: string, scheme: string): boolean {
    const compiled = this.#compiled;
    if (compiled !== null) return compiled(path, bit, this);
    this.#reset(bit, host, scheme);
    const slash = this.#slash;
    this.#length = path.length;
    if (slash !== null && path.charCodeAt(0) === SLASH) this.walk(slash, path, 1, 0);
    else this.walk(this.#root, path, 0, 0);
    return this.bestCandidate !== null;
  }

  /** Every candidate matching `path`, host and scheme, whatever its methods (slow path: 405). */
  collect(path: string, host: string, scheme: string): Candidate[] {
    this.#reset(0, host, scheme);
    const collected: Candidate[] = [];
    this.#collected = collected;
    this.#length = path.length;
    try {
      this.walk(this.#root, path, 0, 0);
    } finally {
      this.#collected = null;
    }
    return collected.sort((a, b) => a.prio - b.prio);
  }

  /** The host, lowercased and without a port, computed once per search. */
  hostOf(): string {
    if (this.#lowerHost === null) {
      let host = this.#host.toLowerCase();
      const colon = host.lastIndexOf(':');
      if (colon !== -1 && host.indexOf(']') < colon) host = host.slice(0, colon);
      this.#lowerHost = host;
    }
    return this.#lowerHost;
  }

  #reset(bit: number, host: string, scheme: string): void {
    this.#bit = bit;
    this.#host = host;
    this.#lowerHost = null;
    this.#scheme = scheme;
    this.best = NONE;
    this.bestCandidate = null;
    this.missCount = 0;
    this.missGroup = null;
    this.schemeMiss = null;
    this.reach = 0;
  }

  // Plain (not #private) methods on the hot path: no brand check per call.
  private walk(node: TreeNode, path: string, pos: number, depth: number): void {
    const length = this.#length;
    // Static-only nodes, and nodes whose only way on is one parameter, are followed in a loop; any
    // other node with parameters recurses into its static child first.
    for (;;) {
      if (pos === length) {
        if (length > this.reach) this.reach = length;
        if (node.endpoints !== null) this.tryGroup(node.endpoints, depth, null);
        if (node.tails !== null) this.tails(node.tails, path, pos, depth);
        return;
      }
      const only = node.onlyParam;
      if (only !== null) {
        // The parameter edge loop below, for its one edge, without a call.
        if (only.minPrio >= this.best) return;
        const end = paramEnd(path, pos, length, only.stop);
        if (end > this.reach) this.reach = end;
        if (end === pos || !passes(only.test, path, pos)) return;
        const stack = this.#stack;
        stack[depth * 2] = pos;
        stack[depth * 2 + 1] = end;
        depth++;
        const slash = only.slash;
        if (slash !== null && end < length) {
          if (slash.minPrio >= this.best) return;
          node = slash;
          pos = end + 1;
        } else {
          node = only.node;
          pos = end;
        }
        continue;
      }
      const child = childAt(node, path.charCodeAt(pos));
      let next = -1;
      // The furthest character read at this node (a failed prefix comparison: its last character).
      let seen = pos;
      if (child !== undefined && child.minPrio < this.best) {
        // The first character is already compared. TurboFan turns charCodeAt (and startsWith) into a
        // loop that checks the string's representation at every character; past two characters a
        // sliced string comparison is cheaper, and past 16 indexOf (memchr, then memcmp).
        const prefix = child.prefix;
        const size = prefix.length;
        if (size > 16) {
          if (path.indexOf(prefix, pos) === pos) next = pos + size;
        } else if (size > 2) {
          if (path.slice(pos, pos + size) === prefix) next = pos + size;
        } else if (size === 1 || prefix.charCodeAt(1) === path.charCodeAt(pos + 1)) next = pos + size;
        if (next === -1) {
          seen = pos + size - 1;
          // A prefix running past the end of the path: the first character that differs is what the
          // search looked at, so that a miss whose toggled trailing slash cannot match skips the retry.
          if (seen >= length) seen = firstDifference(path, pos, prefix);
        }
      }
      if (node.staticOnly) {
        if (next === -1) {
          if (seen > this.reach) this.reach = seen;
          return;
        }
        node = child!;
        pos = next;
        continue;
      }
      if (seen > this.reach) this.reach = seen;
      if (next !== -1) this.walk(child!, path, next, depth);
      break;
    }

    const params = node.params;
    if (params !== null) {
      for (let k = 0; k < params.length; k++) {
        const edge = params[k]!;
        if (edge.minPrio >= this.best) continue;
        const end = paramEnd(path, pos, length, edge.stop);
        if (end > this.reach) this.reach = end;
        if (end === pos || !passes(edge.test, path, pos)) continue;
        const stack = this.#stack;
        stack[depth * 2] = pos;
        stack[depth * 2 + 1] = end;
        const slash = edge.slash;
        if (slash === null || end === length) this.walk(edge.node, path, end, depth + 1);
        else if (slash.minPrio < this.best) this.walk(slash, path, end + 1, depth + 1);
      }
    }

    const wildcards = node.wildcards;
    if (wildcards !== null) {
      this.reach = length;
      for (let k = 0; k < wildcards.length; k++) {
        const edge = wildcards[k]!;
        if (edge.minPrio >= this.best) continue;
        const test = edge.test;
        if (test !== null) {
          test.lastIndex = pos;
          if (!test.test(path)) continue;
        }
        const stack = this.#stack;
        stack[depth * 2] = pos;
        stack[depth * 2 + 1] = length;
        this.tryGroup(edge.group, depth + 1, null);
      }
    }

    if (node.tails !== null) {
      this.reach = length;
      this.tails(node.tails, path, pos, depth);
    }
  }

  private tails(tails: Tail[], path: string, pos: number, depth: number): void {
    for (let k = 0; k < tails.length; k++) {
      const tail = tails[k]!;
      if (tail.prio >= this.best) continue;
      const match = tail.match(path, pos);
      if (match !== null) this.tryGroup(tail.group, depth, match);
    }
  }

  private tryGroup(group: Group, depth: number, tail: TailMatch | null): void {
    const candidates = group.candidates;
    const collected = this.#collected;
    for (let i = 0; i < candidates.length; i++) {
      const candidate = candidates[i]!;
      if (candidate.prio >= this.best) return;
      if (candidate.conditional) {
        this.conditional = true;
        if (!this.hostMatches(candidate)) continue;
        if (candidate.schemes !== null && !candidate.schemes.includes(this.#scheme)) {
          // Only a route serving the method can answer over its own scheme (Symfony's allowSchemes): one
          // that does not would make the redirect search find nothing, and keep the toggled path from its own.
          if (collected === null && this.schemeMiss === null && (candidate.mask & this.#bit) !== 0) this.schemeMiss = candidate.schemes;
          continue;
        }
      }
      if (collected !== null) {
        collected.push(candidate);
        continue;
      }
      if ((candidate.mask & this.#bit) === 0) {
        if (this.missGroup !== group) {
          this.missGroup = group;
          this.missCount++;
        }
        continue;
      }
      this.best = candidate.prio;
      this.bestCandidate = candidate;
      this.bestTail = tail;
      this.bestDepth = depth;
      const stack = this.#stack;
      const positions = this.bestPositions;
      for (let j = 0; j < depth * 2; j++) positions[j] = stack[j]!;
      return;
    }
  }

  private hostMatches(candidate: Candidate): boolean {
    if (candidate.staticHost !== null) return this.hostOf() === candidate.staticHost;
    const variants = candidate.hostVariants;
    if (variants === null) return true;
    const host = this.hostOf();
    for (const variant of variants) if (variant.regex.test(host)) return true;
    return false;
  }
}

/** Where a parameter starting at `pos` ends: at the next `/`, at `stop` (when not -1), or at the end. */
function paramEnd(path: string, pos: number, length: number, stop: number): number {
  if (stop === -1) {
    const end = path.indexOf('/', pos);
    return end === -1 ? length : end;
  }
  let end = pos;
  while (end < length) {
    const c = path.charCodeAt(end);
    if (c === SLASH || c === stop) break;
    end++;
  }
  return end;
}

/** Whether a parameter starting at `pos` meets its requirement (`test` null: none). */
function passes(test: RegExp | null, path: string, pos: number): boolean {
  if (test === null) return true;
  test.lastIndex = pos;
  return test.test(path);
}

/** The static child for the next character: a short list scan for few children, a table for many. */
function childAt(node: TreeNode, code: number): TreeNode | undefined {
  const codes = node.codes;
  if (codes !== null) {
    for (let k = 0; k < codes.length; k++) if (codes[k] === code) return node.nodes![k];
    return undefined;
  }
  if (node.table !== null) return code < 128 ? node.table[code] : node.map!.get(code);
  return undefined;
}

function insertText(node: TreeNode, text: string): TreeNode {
  while (text !== '') {
    node.children ??= new Map();
    const first = text.charCodeAt(0);
    const child = node.children.get(first);
    if (child === undefined) {
      const created = new TreeNode(text);
      node.children.set(first, created);
      return created;
    }
    const prefix = child.prefix;
    let common = 1;
    while (common < prefix.length && common < text.length && prefix[common] === text[common]) common++;
    if (common < prefix.length) {
      const middle = new TreeNode(prefix.slice(0, common));
      child.prefix = prefix.slice(common);
      middle.children = new Map([[child.prefix.charCodeAt(0), child]]);
      node.children.set(first, middle);
      node = middle;
    } else node = child;
    text = text.slice(common);
  }
  return node;
}

function seal(node: TreeNode): number {
  let min = NONE;
  if (node.endpoints !== null) min = Math.min(min, node.endpoints.candidates[0]!.prio);
  if (node.children !== null) {
    for (const child of node.children.values()) min = Math.min(min, seal(child));
    if (node.children.size <= 8) {
      node.codes = [...node.children.keys()];
      node.nodes = [...node.children.values()];
    } else {
      node.table = Array.from({ length: 128 }, (_, code) => node.children!.get(code));
      node.map = node.children;
    }
  }
  for (const edge of node.params ?? []) {
    edge.minPrio = seal(edge.node);
    min = Math.min(min, edge.minPrio);
    const next = edge.node;
    const only = next.children?.size === 1 ? next.children.values().next().value : undefined;
    if (edge.stop === -1 && next.staticOnly && only !== undefined && only.prefix === '/') edge.slash = only;
  }
  for (const edge of node.wildcards ?? []) {
    edge.minPrio = edge.group.candidates[0]!.prio;
    min = Math.min(min, edge.minPrio);
  }
  for (const tail of node.tails ?? []) min = Math.min(min, tail.prio);
  node.minPrio = min;
  node.staticOnly = node.params === null && node.wildcards === null && node.tails === null;
  node.onlyParam = node.children === null && node.wildcards === null && node.tails === null && node.params?.length === 1 ? node.params[0]! : null;
  // A flat (sequential) string keeps charCodeAt monomorphic and fast in the search.
  node.prefix = flatten(node.prefix);
  return min;
}

function flatten(text: string): string {
  return text === '' ? text : (JSON.parse(JSON.stringify(text)) as string);
}

/**
 * How a tail is matched: without backtracking when its parts are classes and texts (a wildcard
 * followed by more), else by its sticky regex (a requirement: its cost is its author's).
 */
function tailMatch(parts: readonly Part[]): Tail['match'] {
  const matcher = TailMatcher.of(parts);
  if (matcher !== null) return (path, pos) => matcher.exec(path, pos);
  const regex = new RegExp(`${variantSource(parts)}$`, 'y');
  return (path, pos) => {
    regex.lastIndex = pos;
    return regex.exec(path);
  };
}

function matchesEmpty(pattern: string): boolean {
  return new RegExp(`^(?:${pattern})$`).test('');
}
