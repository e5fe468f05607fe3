import { domainToASCII } from 'node:url';
import { describeValue } from '../../kernel/describe-value.js';
import { isValidHost } from '../../kernel/host-syntax.js';
import { isNameValueObject, isPlainObject } from '../../kernel/name-value-object.js';
import { InvalidRouteError } from './errors.js';
import { compilePattern, describeVariant, sanitizeRequirement, variantSource, type CompiledPattern, type Part } from './pattern.js';
import { TailMatcher } from './tail-matcher.js';

/** What a route accepts besides its path; every field is optional. */
export interface RouteOptions {
  /** Values the match result starts from; path and host parameters override them. */
  defaults?: Record<string, unknown>;
  /**
   * Per-parameter patterns (`{ id: '\\d+' }`), matched against the raw, still percent-encoded value:
   * a character a URL must encode (`€`, a space) stands for its encoding (`EUR|€` matches `%E2%82%AC`),
   * and one in a range or a negated class is refused (InvalidRouteError).
   */
  requirements?: Record<string, string | RegExp>;
  /** Accepted methods (none: any). GET implies HEAD. */
  methods?: readonly string[];
  /** Accepted schemes (none: any); a GET/HEAD over another scheme is answered with a redirect. */
  schemes?: readonly string[];
  /** Host pattern, same syntax as paths with `.` as the delimiter: `:tenant.example.com`. */
  host?: string;
}

/** What Route.with() changes: the path, or options, each given replacing the route's whole. */
export interface RouteChanges extends RouteOptions {
  path?: string;
}

/** Host variant: its anchored matcher and the names of its captures. */
export interface HostVariant {
  readonly regex: HostMatcher;
  readonly names: readonly string[];
}

/** What the matcher asks of a host variant, on the lower-cased host: a RegExp's test, and its exec's captures. */
export interface HostMatcher {
  test(host: string): boolean;
  exec(host: string): readonly (string | undefined)[] | null;
}

/** What the matcher and generator need, computed once when the route is built. */
export interface CompiledRoute {
  readonly path: CompiledPattern;
  readonly host: CompiledPattern | null;
  /** Host variants, or null when the route has no host or a static one (see `staticHost`). */
  readonly hostVariants: readonly HostVariant[] | null;
  /** The lowercase host when it has no parameters. */
  readonly staticHost: string | null;
  /**
   * Whether a path matches the whole path pattern, whatever the host and method (slow path:
   * explain). A wildcard followed by more of the pattern is read by a TailMatcher, as the tree
   * reads it: explain() runs on paths clients wrote, and the variant's regex would backtrack.
   */
  readonly testPath: (path: string) => boolean;
  /**
   * When `path` fails `testPath` but matches the pattern without requirements, the name of the
   * requirement that refuses it, or of every requirement when only their combination does (explain:
   * an almost match, as Symfony's TraceableUrlMatcher says); else null.
   */
  readonly failedRequirement: (path: string) => readonly string[] | null;
  /** Each requirement as its author wrote it (a RegExp as `/source/flags`), for messages: `requirements` holds it sanitized. */
  readonly writtenRequirements: Readonly<Record<string, string>>;
  /** `methods` with HEAD right after GET: what a 405 lists for this route. */
  readonly allowedMethods: readonly string[];
  /** The options the route was built from, its requirements as given (a RegExp stays one): what Route.with() starts from. */
  readonly options: Readonly<RouteOptions>;
}

const compiled = new WeakMap<Route, CompiledRoute>();

/** Internal: the compiled form of `route` (kept out of the public surface). */
export function compiledRoute(route: Route): CompiledRoute {
  return compiled.get(route)!;
}

const OPTIONS: ReadonlySet<string> = new Set(['defaults', 'requirements', 'methods', 'schemes', 'host']);

/**
 * `options` when it is a RouteOptions object; else an InvalidRouteError naming what is wrong. A typo
 * (`method`) would otherwise leave a route that answers every method, and a string a route with none.
 */
function checkOptions(path: string, options: unknown, also: readonly string[] = []): RouteOptions {
  if (!isPlainObject(options)) {
    throw new InvalidRouteError(`The options of route "${path}" are a plain object ({ methods: ['GET'] }), not ${describeValue(options)}.`);
  }
  for (const key of Object.keys(options)) {
    if (!OPTIONS.has(key) && !also.includes(key)) throw new InvalidRouteError(`Route "${path}" has no option "${key}"; its options are ${[...also, ...OPTIONS].join(', ')}.`);
  }
  const { defaults, requirements, host } = options as RouteOptions;
  for (const [name, value] of [['defaults', defaults], ['requirements', requirements]] as const) {
    if (value !== undefined && !isNameValueObject(value)) {
      throw new InvalidRouteError(`The ${name} of route "${path}" are an object, not ${describeValue(value)}.`);
    }
  }
  if (host !== undefined && typeof host !== 'string') throw new InvalidRouteError(`The host of route "${path}" is a string (':tenant.example.com'), not ${describeValue(host)}.`);
  return options as RouteOptions;
}

const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A path pattern with its defaults, requirements, methods, schemes and host. Immutable. */
export class Route {
  readonly path: string;
  readonly defaults: Readonly<Record<string, unknown>>;
  /** Sanitised requirement sources (anchors removed, groups made non-capturing). */
  readonly requirements: Readonly<Record<string, string>>;
  /** Uppercase, deduplicated; empty means any method. */
  readonly methods: readonly string[];
  /** Lowercase, deduplicated; empty means any scheme. */
  readonly schemes: readonly string[];
  readonly host: string | undefined;

  constructor(path: string, options: RouteOptions = {}) {
    if (typeof path !== 'string') throw new InvalidRouteError('A route path must be a string.');
    // One leading slash, as Symfony's Route::setPath makes it: a URL generated from `//x` would be a
    // network path (a link to the host `x`). A pattern opening with an optional group (`{/:locale}/home`) keeps it.
    this.path = path.startsWith('{/') ? path : `/${path.replace(/^\/+/, '')}`;
    options = checkOptions(this.path, options);
    this.defaults = Object.freeze({ ...options.defaults });
    // Entries, not assignments: assigning a requirement named `__proto__` would set nothing, and the requirement would be lost.
    const given = Object.entries(options.requirements ?? {});
    const requirements: Record<string, string> = Object.fromEntries(given.map(([name, requirement]) => [name, sanitizeRequirement(name, requirement)]));
    const writtenRequirements: Record<string, string> = Object.fromEntries(given.map(([name, requirement]) => [name, String(requirement)]));
    this.requirements = Object.freeze(requirements);
    if (options.methods !== undefined && !Array.isArray(options.methods)) throw new InvalidRouteError(`The methods of route "${this.path}" are an array (['GET']), not ${JSON.stringify(options.methods) ?? String(options.methods)}.`);
    if (options.schemes !== undefined && !Array.isArray(options.schemes)) throw new InvalidRouteError(`The schemes of route "${this.path}" are an array (['https']), not ${JSON.stringify(options.schemes) ?? String(options.schemes)}.`);
    this.methods = Object.freeze(unique((options.methods ?? []).map((method) => {
      if (typeof method !== 'string' || !METHOD.test(method)) throw new InvalidRouteError(`Invalid method ${JSON.stringify(method)} for route "${this.path}".`);
      return method.toUpperCase();
    })));
    this.schemes = Object.freeze(unique(options.schemes?.map((scheme) => {
      // The kernel serves these two: a route for another could never be reached, and its redirect would have no port to go to.
      const lower = typeof scheme === 'string' ? scheme.toLowerCase() : '';
      if (lower !== 'http' && lower !== 'https') throw new InvalidRouteError(`Invalid scheme ${JSON.stringify(scheme) ?? String(scheme)} for route "${this.path}": a route is served over http or https.`);
      return lower;
    }) ?? []));
    this.host = options.host === undefined || options.host === '' ? undefined : options.host;

    const pathPattern = compilePattern(this.path, '/', this.requirements, 'route path');
    const hostPattern = this.host === undefined ? null : compilePattern(this.host, '.', this.requirements, 'route host');
    refuseGeneratorNames('path', this.path, pathPattern.names);
    if (hostPattern !== null) {
      refuseGeneratorNames('host', this.host!, hostPattern.names);
      refuseNonHostText(this.host!, hostPattern);
    }
    for (const name of hostPattern?.names ?? []) {
      if (pathPattern.names.includes(name)) throw new InvalidRouteError(`Parameter "${name}" is used in both the host and the path of route "${this.path}".`);
    }
    let staticHost: string | null = null;
    let hostVariants: HostVariant[] | null = null;
    if (hostPattern !== null) {
      const only = hostPattern.variants.length === 1 ? hostPattern.variants[0]! : null;
      if (only !== null && only.length === 1 && only[0]!.type === 'text') staticHost = only[0]!.value;
      else {
        hostVariants = hostPattern.variants.map((parts) => ({
          regex: hostMatcher(parts, this.requirements),
          names: parts.flatMap((part) => (part.type === 'text' ? [] : [part.name])),
        }));
      }
    }
    const allowedMethods: string[] = [];
    for (const method of this.methods) {
      allowedMethods.push(method);
      if (method === 'GET' && !this.methods.includes('HEAD')) allowedMethods.push('HEAD');
    }
    compiled.set(this, {
      path: pathPattern,
      host: hostPattern,
      hostVariants,
      staticHost,
      testPath: pathTester(pathPattern.variants),
      failedRequirement: requirementFinder(this.path, pathPattern.names.filter((name) => Object.hasOwn(this.requirements, name)), this.requirements),
      writtenRequirements: Object.freeze(writtenRequirements),
      allowedMethods: Object.freeze(allowedMethods),
      options: Object.freeze({ defaults: this.defaults, requirements: Object.freeze({ ...options.requirements }), methods: this.methods, schemes: this.schemes, host: this.host }),
    });
  }

  /**
   * A new route: this one with `changes` in place of its path or options, each option given replacing
   * the route's whole (`host: ''` removes the host, `methods: []` allows any). One given as undefined
   * is kept, as the path is. What RouteCollection's group methods build.
   */
  with(changes: RouteChanges): Route {
    const { path = this.path, ...options } = checkOptions(this.path, changes, ['path']) as RouteChanges;
    const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
    return new Route(path, { ...compiledRoute(this).options, ...given });
  }
}

/** What UrlGenerator reads these parameters as, never a path or host value. */
const GENERATOR_NAMES: Readonly<Record<string, string>> = { _fragment: 'fragment', _query: 'query parameters' };

/** Refuses a parameter named as the generator's `_fragment` or `_query`: its value would go there too, or nowhere. */
function refuseGeneratorNames(where: 'path' | 'host', source: string, names: readonly string[]): void {
  const name = names.find((candidate) => Object.hasOwn(GENERATOR_NAMES, candidate));
  if (name === undefined) return;
  const [other] = Object.keys(GENERATOR_NAMES).filter((candidate) => candidate !== name);
  throw new InvalidRouteError(`Invalid route ${where} "${source}": "${name}" is no name for a parameter: UrlGenerator reads it as the URL's ${GENERATOR_NAMES[name]} ("${other}" as its ${GENERATOR_NAMES[other!]}).`);
}

const HOST_TEXT = /^[a-z0-9_.-]*$/;
const HOST_CHARACTERS = 'which holds letters, digits, "-", "_" and dots (or is a bracketed IPv6 address)';

/**
 * Refuses a host pattern whose text no request's host holds (kernel/host-syntax.ts): a route never
 * matched, whose generated URLs would point elsewhere (`evil.example@shop.example` is the host
 * `shop.example`, `example.com/admin` a path).
 */
function refuseNonHostText(source: string, pattern: CompiledPattern): void {
  const only = pattern.variants.length === 1 ? pattern.variants[0]! : null;
  if (only !== null && only.length === 1 && only[0]!.type === 'text') {
    if (isValidHost(only[0]!.value)) return;
  }
  for (const variant of pattern.variants) {
    for (const part of variant) {
      if (part.type !== 'text' || HOST_TEXT.test(part.value)) continue;
      const [character] = [...part.value].filter((char) => !HOST_TEXT.test(char));
      const port = character === ':' ? ' (a host pattern has no port: the request\'s is not matched)' : '';
      // A Host header carries an international name in its ASCII form (punycode), as browsers send it.
      const ascii = character!.charCodeAt(0) > 0x7f ? ` (an international name is written as it is sent: "${asciiLabels(source)}")` : '';
      throw new InvalidRouteError(`Invalid route host "${source}": "${character}" is no part of a host name, ${HOST_CHARACTERS}, so no request would match it${port}${ascii}.`);
    }
  }
  if (only !== null && only.length === 1 && only[0]!.type === 'text') {
    throw new InvalidRouteError(`Invalid route host "${source}": it is no host name (letters, digits, "-", "_" and dots, no label empty, or a bracketed IPv6 address), so no request would match it.`);
  }
  // A label of its own text empty whatever values fill it (`:tenant..example`, `{.:a}.example` without `a`): each value is at least one character.
  for (const variant of pattern.variants) {
    const text = describeVariant(variant);
    if (text.startsWith('.') || text.includes('..')) {
      const form = pattern.variants.length > 1 ? ` (as "${text}", one of its forms with optional groups written or left out)` : '';
      throw new InvalidRouteError(`Invalid route host "${source}": it has an empty label (a "." opening it, or "..")${form}, so no request would match it.`);
    }
  }
}

/** The host pattern with each label beyond ASCII in its ASCII form (`bücher` is `xn--bcher-kva`). */
function asciiLabels(source: string): string {
  return source
    .split('.')
    .map((label) => (/[^\x00-\x7f]/.test(label) ? domainToASCII(label) || label : label))
    .join('.');
}

/** The whole-path test of `variants`, built on its first call (most routes are never explained). */
function pathTester(variants: readonly (readonly Part[])[]): (path: string) => boolean {
  let tests: ((path: string) => boolean)[] | null = null;
  return (path) => {
    tests ??= variants.map(variantTest);
    for (const test of tests) if (test(path)) return true;
    return false;
  };
}

/** The failedRequirement of a path pattern, its testers compiled on its first call (slow path: explain). */
function requirementFinder(path: string, names: readonly string[], requirements: Readonly<Record<string, string>>): (request: string) => readonly string[] | null {
  if (names.length === 0) return () => null;
  let loose: ((request: string) => boolean) | null = null;
  let each: (readonly [string, (request: string) => boolean])[] | null = null;
  return (request) => {
    loose ??= pathTester(compilePattern(path, '/', {}, 'route path').variants);
    if (!loose(request)) return null;
    each ??= names.map((name) => [name, pathTester(compilePattern(path, '/', { [name]: requirements[name]! }, 'route path').variants)] as const);
    // Each requirement alone; when only their combination refuses the path, all of them.
    const alone = each.find(([, test]) => !test(request));
    return alone === undefined ? names : [alone[0]];
  };
}

/**
 * A host variant's matcher: its regex (hosts are matched lower-cased: a requirement in capitals, `[A-Z]+`,
 * matches them too, as Symfony compiles host patterns case-insensitive); or, when a parameter without
 * requirement gives characters back to the text after it (`:"a"x:"b"y.example.com`), a TailMatcher,
 * as in paths: the regex would take cubic time on a long Host header, which any client may send.
 */
function hostMatcher(parts: readonly Part[], requirements: Readonly<Record<string, string>>): HostMatcher {
  const regex = new RegExp(`^${variantSource(parts)}$`, 'i');
  if (!parts.some((part) => part.type === 'param' && part.required && !Object.hasOwn(requirements, part.name))) return regex;
  const head = parts[0]?.type === 'text' ? parts[0].value : '';
  const tail = TailMatcher.of(head === '' ? parts : parts.slice(1), '.');
  if (tail === null) return regex;
  return {
    test: (host) => host.startsWith(head) && tail.test(host, head.length),
    exec: (host) => (host.startsWith(head) ? tail.exec(host, head.length) : null),
  };
}

function variantTest(parts: readonly Part[]): (path: string) => boolean {
  const head = parts[0]?.type === 'text' ? parts[0].value : '';
  const rest = head === '' ? parts : parts.slice(1);
  if (rest.length === 0) return (path) => path === head;
  const tail = TailMatcher.of(rest);
  if (tail !== null) return (path) => path.startsWith(head) && tail.test(path, head.length);
  // A requirement is a regex of its own (its cost is its author's), as in the tree.
  const regex = new RegExp(`^${variantSource(parts)}$`);
  return (path) => regex.test(path);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
