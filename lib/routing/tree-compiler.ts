// Internal: turns a sealed route tree into one generated search function, the tree's own walk
// unrolled. Each node's static text becomes a literal comparison, its children a switch on the
// next character, priorities and method masks become constants, and the search state (best
// priority, parameter positions, 405 groups, reach) lives in locals written back once. The
// generated code takes exactly the generic walk's decisions in the same order, so both give the
// same answers; only trees whose every candidate is unconditional and free of tails are compiled
// (the rest, and any tree past a size where V8 would no longer optimize the function, keep the
// generic walk). Keys and literals come from route definitions (JSON-escaped), never from requests.
import type { Candidate, Group, SearchNode, SearchResult } from './route-tree.js';

/** The generated search: fills `out` as RouteTree.find does for an unconditional tree; true on a match. */
export type CompiledSearch = (path: string, bit: number, out: SearchResult) => boolean;

/** Nodes plus candidates above which a tree keeps the generic walk (checked before generating). */
const MAX_SIZE = 600;
/**
 * Generated source length above which the tree keeps the generic walk. V8's time to optimize a
 * function grows faster than its size: the GitHub API's 203 routes (~145,000 characters) took
 * about a second on the reference VM, running unoptimized, at a third of the walk's speed, until
 * then. Split into functions of at most a few thousand characters, most of them were called too
 * rarely to be optimized at all during a bench case. A tree this size takes a few milliseconds.
 */
const MAX_SOURCE = 32_000;

let codegen = true;

/** Compiles the search of the tree at `root`, or null when it does not qualify or code generation is unavailable. */
export function compileSearch(root: SearchNode): CompiledSearch | null {
  if (!codegen) return null;
  const emitter = new Emitter();
  if (!emitter.qualifies(root)) return null;
  const body = emitter.program(root);
  if (body.length > MAX_SOURCE) return null;
  try {
    return new Function('C', 'G', 'T', 'firstDifference', body)(emitter.candidates, emitter.groups, emitter.tests, firstDifference) as CompiledSearch;
  } catch {
    codegen = false;
    return null;
  }
}

/** Where `path` from `pos` first differs from `prefix` (the path's length when it is a prefix of it). */
export function firstDifference(path: string, pos: number, prefix: string): number {
  let k = pos + 1;
  while (k < path.length && path.charCodeAt(k) === prefix.charCodeAt(k - pos)) k++;
  return k;
}

class Emitter {
  readonly candidates: Candidate[] = [];
  readonly groups: Group[] = [];
  readonly tests: RegExp[] = [];
  #lines: string[] = [];
  #ids = 0;
  #maxDepth = 0;
  #size = 0;

  qualifies(node: SearchNode): boolean {
    this.#size++;
    if (this.#size > MAX_SIZE || node.tails !== null) return false;
    if (node.endpoints !== null && !this.#plain(node.endpoints)) return false;
    for (const child of node.children?.values() ?? []) if (!this.qualifies(child)) return false;
    for (const edge of node.params ?? []) if (!this.qualifies(edge.node)) return false;
    for (const edge of node.wildcards ?? []) if (!this.#plain(edge.group)) return false;
    return true;
  }

  #plain(group: Group): boolean {
    this.#size += group.candidates.length;
    return group.candidates.every((candidate) => !candidate.conditional);
  }

  program(root: SearchNode): string {
    this.#invocation(root, '0', 0);
    const slots = Array.from({ length: this.#maxDepth * 2 }, (_, i) => `s${i} = 0`);
    return [
      '"use strict";',
      'return function search(path, bit, out) {',
      '  const length = path.length;',
      `  let best = ${NONE}, found = null, depth = 0, missCount = 0, missGroup = null, reach = 0${slots.length > 0 ? `, ${slots.join(', ')}` : ''};`,
      '  const positions = out.bestPositions;',
      ...this.#lines,
      '  out.best = best; out.bestCandidate = found; out.bestDepth = depth; out.bestTail = null;',
      '  out.missCount = missCount; out.missGroup = missGroup; out.reach = reach; out.schemeMiss = null;',
      '  return found !== null;',
      '};',
    ].join('\n');
  }

  #id(): number {
    return this.#ids++;
  }

  #emit(line: string): void {
    this.#lines.push(line);
  }

  // One call of the generic walk(node, path, pos, depth): a labelled block, a `return` being a break.
  #invocation(node: SearchNode, pos: string, depth: number): void {
    const label = `w${this.#id()}`;
    this.#emit(`${label}: {`);
    this.#step(node, pos, depth, label);
    this.#emit('}');
  }

  // The walk's loop body at `node`, position `pos`; static-only nodes continue the loop in line.
  #step(node: SearchNode, pos: string, depth: number, label: string): void {
    this.#emit(`if (${pos} === length) {`);
    this.#emit('if (length > reach) reach = length;');
    if (node.endpoints !== null) this.#group(node.endpoints, depth);
    this.#emit(`break ${label};`);
    this.#emit('}');
    const children = node.children === null ? [] : [...node.children.values()];
    if (children.length > 0) {
      this.#emit(`switch (path.charCodeAt(${pos})) {`);
      for (const child of children) {
        this.#emit(`case ${child.prefix.charCodeAt(0)}: {`);
        this.#child(node, child, pos, depth, label);
        this.#emit('}');
      }
      this.#emit('default:');
    }
    // No child for this character: nothing read beyond `pos`.
    this.#emit(`if (${pos} > reach) reach = ${pos};`);
    if (node.staticOnly) this.#emit(`break ${label};`);
    if (children.length > 0) this.#emit('}');
    if (!node.staticOnly) this.#edges(node, pos, depth);
  }

  #child(node: SearchNode, child: SearchNode, pos: string, depth: number, label: string): void {
    const id = this.#id();
    const prefix = child.prefix;
    const size = prefix.length;
    const literal = JSON.stringify(prefix);
    let same: string;
    if (size > 16) same = `path.indexOf(${literal}, ${pos}) === ${pos}`;
    else if (size > 2) same = `path.slice(${pos}, ${pos} + ${size}) === ${literal}`;
    else if (size === 2) same = `path.charCodeAt(${pos} + 1) === ${prefix.charCodeAt(1)}`;
    else same = 'true';
    this.#emit(`let n${id} = -1, r${id} = ${pos};`);
    this.#emit(`if (${child.minPrio} < best) {`);
    this.#emit(`if (${same}) n${id} = ${pos} + ${size};`);
    this.#emit(`else { r${id} = ${pos} + ${size - 1}; if (r${id} >= length) r${id} = firstDifference(path, ${pos}, ${literal}); }`);
    this.#emit('}');
    if (node.staticOnly) {
      this.#emit(`if (n${id} === -1) { if (r${id} > reach) reach = r${id}; break ${label}; }`);
      this.#step(child, `n${id}`, depth, label);
      this.#emit(`break ${label};`);
      return;
    }
    this.#emit(`if (r${id} > reach) reach = r${id};`);
    this.#emit(`if (n${id} !== -1) {`);
    this.#invocation(child, `n${id}`, depth);
    this.#emit('}');
    this.#emit('break;');
  }

  #edges(node: SearchNode, pos: string, depth: number): void {
    if (depth + 1 > this.#maxDepth && (node.params !== null || node.wildcards !== null)) this.#maxDepth = depth + 1;
    for (const edge of node.params ?? []) {
      const end = `e${this.#id()}`;
      this.#emit(`if (${edge.minPrio} < best) {`);
      if (edge.stop === -1) {
        this.#emit(`let ${end} = path.indexOf("/", ${pos});`);
        this.#emit(`if (${end} === -1) ${end} = length;`);
      } else {
        this.#emit(`let ${end} = ${pos};`);
        this.#emit(`while (${end} < length) { const c = path.charCodeAt(${end}); if (c === 47 || c === ${edge.stop}) break; ${end}++; }`);
      }
      this.#emit(`if (${end} > reach) reach = ${end};`);
      let accept = `${end} !== ${pos}`;
      if (edge.test !== null) {
        const test = `T[${this.tests.push(edge.test) - 1}]`;
        accept += ` && (${test}.lastIndex = ${pos}, ${test}.test(path))`;
      }
      this.#emit(`if (${accept}) {`);
      this.#emit(`s${depth * 2} = ${pos}; s${depth * 2 + 1} = ${end};`);
      this.#invocation(edge.node, end, depth + 1);
      this.#emit('}');
      this.#emit('}');
    }
    if (node.wildcards !== null) {
      this.#emit('reach = length;');
      for (const edge of node.wildcards) {
        let accept = `${edge.minPrio} < best`;
        if (edge.test !== null) {
          const test = `T[${this.tests.push(edge.test) - 1}]`;
          accept += ` && (${test}.lastIndex = ${pos}, ${test}.test(path))`;
        }
        this.#emit(`if (${accept}) {`);
        this.#emit(`s${depth * 2} = ${pos}; s${depth * 2 + 1} = length;`);
        this.#group(edge.group, depth + 1);
        this.#emit('}');
      }
    }
  }

  // tryGroup for unconditional candidates: the first (lowest priority) accepting the method wins.
  #group(group: Group, depth: number): void {
    const label = `g${this.#id()}`;
    const groupRef = `G[${this.groups.push(group) - 1}]`;
    this.#emit(`${label}: {`);
    for (const candidate of group.candidates) {
      const ref = `C[${this.candidates.push(candidate) - 1}]`;
      this.#emit(`if (${candidate.prio} >= best) break ${label};`);
      this.#emit(`if ((bit & ${candidate.mask}) === 0) { if (missGroup !== ${groupRef}) { missGroup = ${groupRef}; missCount++; } }`);
      let hit = `else { best = ${candidate.prio}; found = ${ref}; depth = ${depth};`;
      for (let j = 0; j < depth * 2; j++) hit += ` positions[${j}] = s${j};`;
      this.#emit(`${hit} break ${label}; }`);
    }
    this.#emit('}');
  }
}

/** Larger than any priority (as in route-tree.ts). */
const NONE = 0x3fffffff;
