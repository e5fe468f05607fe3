import { describeValue } from '../../kernel/describe-value.js';
import { InvalidRouteError, MalformedPathError, MethodNotAllowedError, ResourceNotFoundError } from './errors.js';
import { cannotMatch } from './pattern.js';
import { compiledRoute, type Route } from './route.js';
import type { RouteCollection } from './route-collection.js';
import { paramsBuilder } from './params-builder.js';
import { RouteTree, type Candidate, type Group } from './route-tree.js';
import { setOwn } from '../../kernel/set-own.js';

export { normalizePercentEncoding } from './pattern.js';

/**
 * The request facts matching depends on (Symfony's RequestContext), required: a guessed method or
 * host would answer with another route. `host` is the hostname (a `:port` suffix is ignored; `''` for none).
 */
export interface MatchContext {
  readonly method: string;
  readonly host: string;
  readonly scheme: 'http' | 'https';
}

/** Where to redirect a GET/HEAD that matched only with its trailing slash toggled or over another scheme. */
export interface RedirectTarget {
  /** The raw path to redirect to (the query string is the caller's to keep). */
  readonly path: string;
  /** Set when the scheme changes. */
  readonly scheme?: 'http' | 'https';
}

/** A route matched the request as it is. Treat it as read-only: static results are shared. */
export interface RouteMatch {
  readonly kind: 'match';
  readonly name: string;
  readonly route: Route;
  /** The route's defaults overlaid with the decoded host and path parameters (a path wildcard: an array of segments; a host wildcard: text). */
  readonly params: Readonly<Record<string, unknown>>;
  readonly redirect?: undefined;
}

/** A route matches a canonical form of the request: answer with a redirect to `redirect`. */
export interface RedirectMatch {
  readonly kind: 'redirect';
  readonly name: string;
  readonly route: Route;
  readonly params: Readonly<Record<string, unknown>>;
  readonly redirect: RedirectTarget;
}

/** What `match()` returns. */
export type MatchResult = RouteMatch | RedirectMatch;

/** No route matches; `path` is the last path tried (the toggled one after a GET/HEAD retry). */
export interface NotFoundOutcome {
  readonly kind: 'not-found';
  readonly path: string;
}

/** Routes match the path, none for the method. */
export interface MethodNotAllowedOutcome {
  readonly kind: 'method-not-allowed';
  /** Uppercase, deduplicated, in route order; a GET route contributes `GET, HEAD`. */
  readonly allowedMethods: readonly string[];
}

/** The matched route's parameter `parameter` holds a malformed percent-encoding. */
export interface MalformedPathOutcome {
  readonly kind: 'malformed-path';
  readonly parameter: string;
  readonly path: string;
  readonly cause: unknown;
}

/** What `lookup()` returns: a match, or why there is none. */
export type LookupResult = MatchResult | NotFoundOutcome | MethodNotAllowedOutcome | MalformedPathOutcome;

/** One route's verdict in `explain()`. */
export interface RouteTrace {
  readonly name: string;
  /** The route's path pattern. */
  readonly path: string;
  /**
   * `match`: this route answers; `almost`: the path matches but not the host, method or scheme, or
   * only with the trailing slash toggled, or only without the requirements (as Symfony's
   * TraceableUrlMatcher says); `mismatch`: the path differs.
   */
  readonly verdict: 'match' | 'almost' | 'mismatch';
  /** One sentence on the first check that failed, or why the route matches. */
  readonly reason: string;
  /** Each check, or null when the route does not constrain it. */
  readonly checks: {
    readonly path: boolean;
    readonly host: boolean | null;
    readonly method: boolean | null;
    readonly scheme: boolean | null;
  };
}

const ALL_BITS = 0x7fffffff;
const MAX_METHODS = 30;

/** Static path -> outcome per method slot. */
interface StaticPaths {
  [path: string]: (LookupResult | null)[] | undefined;
}

/**
 * Makes the static paths table: an object whose prototype has no properties and no prototype.
 * Unlike Object.create(null), which V8 makes a hash table from the start, it keeps a hidden
 * class while it holds few paths (Node 20's V8 turns it into a hash table past 25), and a lookup
 * is then an inline-cache hit rather than a call to the generic keyed-load stub.
 */
const StaticPaths = function StaticPaths() {} as unknown as new () => StaticPaths;
StaticPaths.prototype = Object.create(null);

/**
 * Matches paths against a RouteCollection compiled at construction (later changes to the
 * collection are not seen). Semantics are those of Symfony's RedirectableUrlMatcher with the
 * compiled matcher: first route in collection order wins, HEAD matches GET routes, a path
 * known for other methods is a 405, and on a GET/HEAD miss the trailing slash is toggled and
 * other schemes tried, a hit being answered with a redirect.
 */
export class UrlMatcher {
  /**
   * Every method some route serves, GET bringing HEAD, in route order; null when a route takes any
   * method, so that no list names them all. What `OPTIONS *` (the server's own options) lists in Allow.
   */
  readonly servedMethods: readonly string[] | null;
  readonly #routes: readonly [string, Route][];
  readonly #tree = new RouteTree();
  /** Method -> slot; a slot's bit is `1 << slot`. Methods no route names share the last slot. */
  readonly #slots: Record<string, number> = Object.create(null) as Record<string, number>;
  readonly #otherSlot: number;
  /** Slots of the common methods, read without a keyed lookup. */
  readonly #getSlot: number;
  readonly #headSlot: number;
  readonly #postSlot: number;
  readonly #putSlot: number;
  readonly #deleteSlot: number;
  readonly #patchSlot: number;
  /**
   * Static paths -> outcome per method slot, precomputed (null: depends on host or scheme). An
   * object rather than a Map: V8 internalizes a string once used as a key, so a lookup is then a
   * pointer comparison.
   */
  readonly #static = new StaticPaths();
  /** Lengths of static paths (capped at 127): a dynamic path of another length skips the map. */
  readonly #staticLengths = new Uint8Array(128);
  /**
   * Whether a path can match only with a trailing slash added: some route's pattern ends with a
   * slash (`/items/`, not `/` alone), or with a parameter whose requirement may end with one. When
   * none does, a path without one is never retried with one.
   */
  readonly #slashEnded: boolean;

  constructor(routes: RouteCollection) {
    this.#routes = [...routes];
    for (const [, route] of this.#routes) {
      for (const method of compiledRoute(route).allowedMethods) {
        if (this.#slots[method] !== undefined) continue;
        const slot = Object.keys(this.#slots).length;
        if (slot === MAX_METHODS) throw new InvalidRouteError(`A UrlMatcher supports at most ${MAX_METHODS} distinct methods.`);
        this.#slots[method] = slot;
      }
    }
    this.servedMethods = this.#routes.some(([, route]) => route.methods.length === 0) ? null : Object.freeze(Object.keys(this.#slots));
    this.#otherSlot = Object.keys(this.#slots).length;
    this.#getSlot = this.#slots.GET ?? this.#otherSlot;
    this.#headSlot = this.#slots.HEAD ?? this.#otherSlot;
    this.#postSlot = this.#slots.POST ?? this.#otherSlot;
    this.#putSlot = this.#slots.PUT ?? this.#otherSlot;
    this.#deleteSlot = this.#slots.DELETE ?? this.#otherSlot;
    this.#patchSlot = this.#slots.PATCH ?? this.#otherSlot;

    const staticPaths = new Set<string>();
    this.#routes.forEach(([name, route], index) => {
      const compiled = compiledRoute(route);
      let mask = route.methods.length === 0 ? ALL_BITS : 0;
      for (const method of compiled.allowedMethods) mask |= 1 << this.#slots[method]!;
      const conditional = compiled.staticHost !== null || compiled.hostVariants !== null || route.schemes.length > 0;
      compiled.path.variants.forEach((parts, variant) => {
        this.#tree.insert(parts, {
          prio: index * 256 + variant,
          name,
          route,
          mask,
          staticHost: compiled.staticHost,
          hostVariants: compiled.hostVariants,
          schemes: route.schemes.length > 0 ? route.schemes : null,
          conditional,
          defaults: route.defaults,
        });
        if (parts.length === 1 && parts[0]!.type === 'text') staticPaths.add(parts[0]!.value);
      });
    });
    this.#tree.seal();
    this.#slashEnded = this.#routes.some(([, route]) =>
      compiledRoute(route).path.variants.some((parts) => {
        const last = parts[parts.length - 1];
        if (last === undefined) return false;
        if (last.type === 'text') return last.value.endsWith('/') && parts.length + last.value.length > 2;
        // A wildcard's default pattern matches `x` as well as `x/`: the path without the slash matched it already.
        return last.required && !cannotMatch(last.pattern, '/');
      }),
    );

    for (const group of this.#tree.groups) group.allow = precomputedAllow(group);

    // Static paths: every answer that depends only on path and method is computed now.
    const methods = Object.keys(this.#slots);
    // GET or HEAD that no route names shares the slot of the methods no route names, whose miss is
    // worked out for a method never redirected: a GET's miss there is searched live, with its retries.
    const otherHasGet = this.#getSlot === this.#otherSlot || this.#headSlot === this.#otherSlot;
    for (const path of staticPaths) {
      const outcomes: (LookupResult | null)[] = [];
      for (let slot = 0; slot <= this.#otherSlot; slot++) {
        const method = slot < this.#otherSlot ? methods[slot]! : '';
        const outcome = this.#live(path, method, slot, '', 'http');
        const live = this.#tree.conditional || outcome.kind === 'not-found' || (slot === this.#otherSlot && otherHasGet && outcome.kind !== 'match');
        outcomes.push(live ? null : deepFreeze(outcome));
      }
      this.#static[path] = outcomes;
      this.#staticLengths[path.length < 127 ? path.length : 127] = 1;
    }
  }

  /**
   * Matches `path` (raw, still percent-encoded, without the query string) and returns the match
   * or a redirect; throws ResourceNotFoundError, MethodNotAllowedError or MalformedPathError.
   * A path that is no string or a context without its method, host and scheme is a TypeError.
   */
  match(path: string, context: MatchContext): MatchResult {
    checkMatchArguments('match', path, context);
    const result = this.lookup(path, context);
    switch (result.kind) {
      case 'match':
      case 'redirect':
        return result;
      case 'not-found':
        throw new ResourceNotFoundError(result.path);
      case 'method-not-allowed':
        throw new MethodNotAllowedError(result.allowedMethods);
      case 'malformed-path':
        throw new MalformedPathError(result.parameter, result.path, { cause: result.cause });
    }
  }

  /**
   * Like `match()`, but answers a miss with an outcome instead of throwing: a 404 or 405 without the
   * cost of an exception. Its arguments are not checked: RouterListener calls it for every request.
   */
  lookup(path: string, context: MatchContext): LookupResult {
    const method = context.method;
    const slot = this.#slotOf(method);
    if (this.#staticLengths[path.length < 127 ? path.length : 127] === 1) {
      const outcomes = this.#static[path];
      if (outcomes !== undefined) {
        const outcome = outcomes[slot]!;
        if (outcome !== null) return outcome;
      }
    }
    if (path.length === 0) path = '/';
    const tree = this.#tree;
    tree.conditional = false;
    if (tree.find(path, 1 << slot, context.host, context.scheme)) return this.#result(path);
    return this.#miss(path, method, slot, context.host, context.scheme);
  }

  #slotOf(method: string): number {
    switch (method) {
      case 'GET':
        return this.#getSlot;
      case 'POST':
        return this.#postSlot;
      case 'HEAD':
        return this.#headSlot;
      case 'PUT':
        return this.#putSlot;
      case 'DELETE':
        return this.#deleteSlot;
      case 'PATCH':
        return this.#patchSlot;
      default:
        return this.#slots[method] ?? this.#otherSlot;
    }
  }

  // The lookup without the static table (used to fill it).
  #live(path: string, method: string, slot: number, host: string, scheme: string): LookupResult {
    const tree = this.#tree;
    tree.conditional = false;
    if (tree.find(path, 1 << slot, host, scheme)) return this.#result(path);
    return this.#miss(path, method, slot, host, scheme);
  }

  // After a search of `path` found nothing for the method: redirects (GET and HEAD), 405, or 404.
  #miss(path: string, method: string, slot: number, host: string, scheme: string): LookupResult {
    const tree = this.#tree;
    const redirects = method === 'GET' || method === 'HEAD';
    // The 405 first, unless a GET or HEAD may be redirected to the path with its trailing slash
    // toggled (a path without one is only when some route ends with one): that comes before it.
    if (tree.missCount > 0 && (!redirects || (path.charCodeAt(path.length - 1) !== 47 && !this.#slashEnded))) {
      const group = tree.missGroup!;
      const allowed = tree.missCount === 1 && !tree.conditional && group.allow !== null ? group.allow : this.#allowed(path, host, scheme);
      if (allowed !== null) return allowed;
    }
    return redirects ? this.#missGetOrHead(path, slot, host, scheme) : { kind: 'not-found', path };
  }

  /**
   * A GET or HEAD: a route serving the method under the path with its trailing slash toggled wins
   * over a 405 and a scheme redirect, as in Symfony's RedirectableUrlMatcher (its compiled matcher
   * stops at such a route, whatever its scheme, the methods allowed so far forgotten); then the 405
   * (unless such a route serves another scheme and none the path asked for), the scheme redirects,
   * and the 404 naming the last path tried.
   */
  #missGetOrHead(path: string, slot: number, host: string, scheme: string): LookupResult {
    const tree = this.#tree;
    const bit = 1 << slot;
    // What the search of `path` found, before another search overwrites it.
    const missCount = tree.missCount;
    const missGroup = tree.missGroup;
    const conditional = tree.conditional;
    const schemeMiss = tree.schemeMiss;
    const reach = tree.reach;
    const trimmed = trimTrailingSlashes(path);
    if (trimmed === '/') {
      const allowed = missCount === 0 ? null : this.#allowedAfter(path, missCount, missGroup!, conditional, host, scheme);
      return allowed ?? (schemeMiss !== null ? this.#redirectScheme(path, bit, host, schemeMiss[0]!) : { kind: 'not-found', path });
    }
    // The paths agree before trimmed.length: if the search never looked that far, no retry can match;
    // nor can a path given a trailing slash where no route's pattern ends with one.
    const retry = reach >= trimmed.length && (trimmed !== path || this.#slashEnded);
    // Several trailing slashes (`/dir//`): the canonical path may keep one.
    const oneSlash = retry && path.length > trimmed.length + 1 ? `${trimmed}/` : null;
    let retrySchemeMiss: readonly string[] | null = null;
    let oneSlashSchemeMiss: readonly string[] | null = null;
    if (retry) {
      const toggled = trimmed === path ? path + '/' : trimmed;
      if (tree.find(toggled, bit, host, scheme)) return this.#redirect(this.#result(toggled), toggled, undefined);
      retrySchemeMiss = tree.schemeMiss;
      if (oneSlash !== null) {
        if (tree.find(oneSlash, bit, host, scheme)) return this.#redirect(this.#result(oneSlash), oneSlash, undefined);
        oneSlashSchemeMiss = tree.schemeMiss;
      }
    }
    // A route serving the method under a retried path over another scheme wins over the 405 too: Symfony's
    // doMatch() stops at it whatever its scheme, the methods allowed so far forgotten. Not when one
    // serves the path as asked over another scheme: Symfony's 405 then (its `$allow` before `$allowSchemes`).
    if (missCount > 0 && (schemeMiss !== null || (retrySchemeMiss === null && oneSlashSchemeMiss === null))) {
      const allowed = this.#allowedAfter(path, missCount, missGroup!, conditional, host, scheme);
      if (allowed !== null) return allowed;
    }
    if (schemeMiss !== null) return this.#redirectScheme(path, bit, host, schemeMiss[0]!);
    const toggled = trimmed === path ? path + '/' : trimmed;
    if (retrySchemeMiss !== null) return this.#redirectScheme(toggled, bit, host, retrySchemeMiss[0]!);
    if (oneSlashSchemeMiss !== null) return this.#redirectScheme(oneSlash!, bit, host, oneSlashSchemeMiss[0]!);
    // The path last tried, also where the search proved the retries vain and skipped them: what a
    // 404 names must not depend on how far the other routes let the search read (`/x//` names `/x/`).
    return { kind: 'not-found', path: path.length > trimmed.length + 1 ? `${trimmed}/` : toggled };
  }

  // The 405 of `path` from what its search found: the one group's precomputed outcome, or every candidate's methods.
  #allowedAfter(path: string, missCount: number, missGroup: Group, conditional: boolean, host: string, scheme: string): MethodNotAllowedOutcome | null {
    return missCount === 1 && !conditional && missGroup.allow !== null ? missGroup.allow : this.#allowed(path, host, scheme);
  }

  #redirectScheme(path: string, bit: number, host: string, scheme: string): LookupResult {
    if (!this.#tree.find(path, bit, host, scheme)) return { kind: 'not-found', path };
    return this.#redirect(this.#result(path), path, scheme as 'http' | 'https');
  }

  #redirect(result: RouteMatch | MalformedPathOutcome, path: string, scheme: 'http' | 'https' | undefined): LookupResult {
    if (result.kind !== 'match') return result;
    const redirect: RedirectTarget = scheme === undefined ? { path } : { path, scheme };
    return { kind: 'redirect', name: result.name, route: result.route, params: result.params, redirect };
  }

  // The 405 outcome for `path` from every route matching it whatever the method, or null.
  #allowed(path: string, host: string, scheme: string): MethodNotAllowedOutcome | null {
    const candidates = this.#tree.collect(path, host, scheme);
    const allowedMethods = allowedMethodsOf(candidates);
    return allowedMethods === null ? null : { kind: 'method-not-allowed', allowedMethods };
  }

  // Builds the result of the tree's best match.
  #result(path: string): RouteMatch | MalformedPathOutcome {
    const tree = this.#tree;
    const candidate = tree.bestCandidate!;
    const build = candidate.build ?? (candidate.build = paramsBuilder(candidate));
    const params = build(path, tree.bestPositions, tree.bestTail, candidate.defaultValues);
    if (typeof params === 'number') return { kind: 'malformed-path', parameter: candidate.names[params]!, path, cause: new URIError('URI malformed') };
    if (candidate.hostVariants !== null) {
      const host = tree.hostOf();
      for (const variant of candidate.hostVariants) {
        const found = variant.regex.exec(host);
        if (found === null) continue;
        // setOwn: assigned, `__proto__` would set the prototype, and the parameter would be lost.
        for (let i = 0; i < variant.names.length; i++) setOwn(params, variant.names[i]!, found[i + 1]);
        break;
      }
    }
    return { kind: 'match', name: candidate.name, route: candidate.route, params };
  }

  /**
   * Why each route does or does not match, in priority order, up to the one that answers
   * (slow: for a profiler panel or a debug command, never on the request path).
   */
  explain(path: string, context: MatchContext): RouteTrace[] {
    checkMatchArguments('explain', path, context);
    const traces: RouteTrace[] = [];
    const host = hostWithoutPort(context.host);
    const trimmed = trimTrailingSlashes(path);
    const toggled = trimmed === '/' ? null : trimmed === path ? `${path}/` : trimmed;
    const oneSlash = toggled !== null && path.length > trimmed.length + 1 ? `${trimmed}/` : null;
    const canRedirect = context.method === 'GET' || context.method === 'HEAD';
    for (const [name, route] of this.#routes) {
      const compiled = compiledRoute(route);
      const pathMatches = compiled.testPath(path);
      const hostMatches = compiled.staticHost !== null ? compiled.staticHost === host : compiled.hostVariants === null ? null : compiled.hostVariants.some((variant) => variant.regex.test(host));
      const methodMatches = route.methods.length === 0 ? null : compiled.allowedMethods.includes(context.method);
      const schemeMatches = route.schemes.length === 0 ? null : route.schemes.includes(context.scheme);
      const checks = { path: pathMatches, host: hostMatches, method: methodMatches, scheme: schemeMatches };
      const trace = (verdict: RouteTrace['verdict'], reason: string): RouteTrace => ({ name, path: route.path, verdict, reason, checks });
      if (!pathMatches) {
        const canonical = toggled !== null && compiled.testPath(toggled) ? toggled : oneSlash !== null && compiled.testPath(oneSlash) ? oneSlash : null;
        const failed = canonical === null ? compiled.failedRequirement(path) : null;
        if (canonical !== null) {
          traces.push(trace('almost', `Path "${path}" matches only as "${canonical}"${canRedirect ? ', a GET or HEAD is redirected there if no route matches' : ''}.`));
        } else if (failed !== null) {
          // The requirements as their author wrote them, not as the matcher reads them (percent-encoded, groups non-capturing).
          const written = (name: string): string => compiled.writtenRequirements[name]!;
          traces.push(trace('almost', failed.length === 1
            ? `Requirement for "${failed[0]}" does not match (${written(failed[0]!)}).`
            : `Requirements for ${failed.map((name) => `"${name}" (${written(name)})`).join(', ')} do not match together (each alone does).`));
        } else traces.push(trace('mismatch', `Path "${path}" does not match "${route.path}".`));
        continue;
      }
      if (hostMatches === false) {
        traces.push(trace('almost', `Host "${host}" does not match "${route.host}".`));
        continue;
      }
      if (methodMatches === false) {
        traces.push(trace('almost', `Method "${context.method}" is not one of ${compiled.allowedMethods.join(', ')}.`));
        continue;
      }
      if (schemeMatches === false) {
        traces.push(trace('almost', `Scheme "${context.scheme}" is not one of ${route.schemes.join(', ')}${canRedirect ? ', a GET or HEAD is redirected to the first' : ''}.`));
        continue;
      }
      traces.push(trace('match', 'Route matches.'));
      break;
    }
    return traces;
  }
}

function trimTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 0 && path.charCodeAt(end - 1) === 47) end--;
  return end === path.length ? path : end === 0 ? '/' : path.slice(0, end);
}

function hostWithoutPort(host: string): string {
  host = host.toLowerCase();
  const colon = host.lastIndexOf(':');
  return colon !== -1 && host.indexOf(']') < colon ? host.slice(0, colon) : host;
}

// Methods of `candidates` (in priority order), deduplicated; null when there are none.
function allowedMethodsOf(candidates: readonly Candidate[]): readonly string[] | null {
  const methods = new Set<string>();
  for (const candidate of candidates) for (const method of compiledRoute(candidate.route).allowedMethods) methods.add(method);
  return methods.size === 0 ? null : Object.freeze([...methods]);
}

function precomputedAllow(group: Group): MethodNotAllowedOutcome | null {
  if (group.candidates.some((candidate) => candidate.conditional || candidate.route.methods.length === 0)) return null;
  const allowedMethods = allowedMethodsOf(group.candidates);
  return allowedMethods === null ? null : Object.freeze({ kind: 'method-not-allowed', allowedMethods });
}

function deepFreeze<T extends object>(outcome: T): T {
  if ('params' in outcome) Object.freeze(outcome.params);
  return Object.freeze(outcome);
}

/** Refuses what match() and explain() would misread deep inside: a path that is no string, a context missing or incomplete. */
function checkMatchArguments(call: string, path: unknown, context: unknown): void {
  if (typeof path !== 'string') throw new TypeError(`UrlMatcher.${call}() takes a path ('/books/1'), not ${describeValue(path)}.`);
  if (typeof context !== 'object' || context === null) {
    throw new TypeError(`UrlMatcher.${call}() takes the request's context as its second argument, { method: 'GET', host: 'example.com', scheme: 'https' }, not ${describeValue(context)}: there is no default, as a guessed method or host would match another route.`);
  }
  const { method, host, scheme } = context as Partial<Record<keyof MatchContext, unknown>>;
  if (typeof method !== 'string') throw new TypeError(`UrlMatcher.${call}()'s context has a method ('GET'), not ${describeValue(method)}.`);
  if (typeof host !== 'string') throw new TypeError(`UrlMatcher.${call}()'s context has a host ('example.com', or '' for none), not ${describeValue(host)}.`);
  if (scheme !== 'http' && scheme !== 'https') throw new TypeError(`UrlMatcher.${call}()'s context has a scheme, 'http' or 'https', not ${describeValue(scheme)}.`);
}
