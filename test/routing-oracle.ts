// A naive reference matcher: the routing semantics of README "Routing" and ARCHITECTURE.md, written
// as plainly as possible and without any of lib/routing's code, so that the compiled matcher (static
// map, generated search, tree walk, TailMatcher) can be checked against an independent statement of
// what it must answer. Slow on purpose: every route is tried in collection order, each combination
// of optional groups as one backtracking regular expression over the raw (percent-encoded) path,
// the way Symfony's RouteCompiler writes a route's regex. Patterns are tokenized by path-to-regexp's
// own parse(), the grammar the routes are written in.
import { parse, type Token } from 'path-to-regexp';

/** A route as the oracle reads it; `requirements` are regex sources over the percent-encoded value. */
export interface OracleRoute {
  readonly name: string;
  readonly path: string;
  readonly host?: string | undefined;
  readonly methods: readonly string[];
  readonly schemes: readonly string[];
  readonly defaults: Readonly<Record<string, unknown>>;
  readonly requirements: Readonly<Record<string, string>>;
}

export interface OracleContext {
  readonly method: string;
  readonly host: string;
  readonly scheme: 'http' | 'https';
}

/** The outcomes, shaped as UrlMatcher.lookup()'s (without the Route object and the error's cause). */
export type OracleOutcome =
  | { kind: 'match'; name: string; params: Record<string, unknown> }
  | { kind: 'redirect'; name: string; params: Record<string, unknown>; redirect: { path: string; scheme?: 'http' | 'https' } }
  | { kind: 'method-not-allowed'; allowedMethods: string[] }
  | { kind: 'not-found'; path: string }
  | { kind: 'malformed-path'; parameter: string; path: string };

/** README: what ends a parameter without requirement when it comes right after it (Symfony's separators). */
const SEPARATORS = '/,;.:-_~+*=@';

/** Characters a route's path text keeps as they are; any other is compared in its UTF-8 percent-encoding. */
const KEPT = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/]$/;

/** One item of a pattern with its optional groups decided: text, a parameter, or a group left out (with what it would open with). */
type Item = { kind: 'text'; value: string } | { kind: 'param' | 'wildcard'; name: string } | { kind: 'skipped'; opens: string };

/** One combination of optional groups of a pattern, as a regex, and the names of its parameters in order. */
export interface Variant {
  readonly items: readonly Item[];
  readonly regex: RegExp;
  readonly names: readonly string[];
  readonly wildcards: ReadonlySet<string>;
}

function encodeText(text: string): string {
  let out = '';
  for (const char of text) out += KEPT.test(char) ? char : encodeURIComponent(char);
  return out;
}

function escapeRegex(text: string): string {
  return text.replace(/[.+*?^${}()[\]|/\\-]/g, '\\$&');
}

function escapeClass(chars: string): string {
  return chars.replace(/[\]\\^-]/g, '\\$&');
}

// What a left-out group would have put first: the first character of its text, and of groups before it.
function opens(tokens: readonly Token[], text: (value: string) => string): string {
  let chars = '';
  for (const token of tokens) {
    if (token.type === 'text') return chars + text(token.value)[0];
    if (token.type !== 'group') return chars;
    chars += opens(token.tokens, text);
  }
  return chars;
}

// Every combination of optional groups, a group written before left out (as a regex alternation tries them).
function combinations(tokens: readonly Token[], text: (value: string) => string): Item[][] {
  let results: Item[][] = [[]];
  for (const token of tokens) {
    if (token.type === 'text') results = results.map((items) => [...items, { kind: 'text', value: text(token.value) }]);
    else if (token.type === 'param' || token.type === 'wildcard') results = results.map((items) => [...items, { kind: token.type, name: token.name }]);
    else {
      const inside = combinations(token.tokens, text);
      const skipped: Item = { kind: 'skipped', opens: opens(token.tokens, text) };
      results = results.flatMap((items) => [...inside.map((written) => [...items, ...written]), [...items, skipped]]);
    }
  }
  return results;
}

// A parameter without requirement: anything but the delimiter and the separators that may follow it,
// the first character of the text after it and those opening the groups left out right after it.
function defaultPattern(items: readonly Item[], at: number, delimiter: string): string {
  let following = '';
  for (let i = at + 1; i < items.length; i++) {
    const item = items[i]!;
    if (item.kind === 'skipped') following += item.opens;
    else if (item.kind !== 'text') break;
    else if (item.value !== '') {
      following += item.value[0];
      break;
    }
  }
  const stops = [...new Set(following)].filter((char) => char !== delimiter && SEPARATORS.includes(char)).join('');
  return `[^${escapeClass(delimiter + stops)}]+`;
}

/** The variants of a path (delimiter `/`) or host (delimiter `.`) pattern, highest priority first. */
export function variantsOf(pattern: string, delimiter: '/' | '.', requirements: Readonly<Record<string, string>>): Variant[] {
  const text = delimiter === '/' ? encodeText : (value: string) => value.toLowerCase();
  return combinations(parse(pattern).tokens, text).map((items) => {
    let source = '';
    const names: string[] = [];
    const wildcards = new Set<string>();
    items.forEach((item, at) => {
      if (item.kind === 'skipped') return;
      if (item.kind === 'text') {
        source += escapeRegex(item.value);
        return;
      }
      names.push(item.name);
      if (item.kind === 'wildcard') wildcards.add(item.name);
      const requirement = Object.hasOwn(requirements, item.name) ? requirements[item.name]! : item.kind === 'wildcard' ? '[^]+' : defaultPattern(items, at, delimiter);
      source += `(?<${item.name}>(?:${requirement}))`;
    });
    // A path pattern opening with an optional group left out is `/`.
    if (delimiter === '/' && source === '') source = '/';
    return { items, regex: new RegExp(`^${source}$`, delimiter === '.' ? 'i' : ''), names, wildcards };
  });
}

interface Compiled {
  readonly route: OracleRoute;
  readonly path: Variant[];
  readonly host: Variant[] | null;
  /** The methods a 405 lists for the route: its own, HEAD right after GET unless listed. */
  readonly allowed: string[];
}

type Found = { kind: 'match'; name: string; params: Record<string, unknown> } | { kind: 'malformed-path'; parameter: string; path: string };

/** The reference matcher of a collection of routes given in the order they were added. */
export class OracleMatcher {
  readonly #routes: Compiled[] = [];

  constructor(routes: readonly OracleRoute[]) {
    // A name added again replaces its route and moves it last.
    const byName = new Map<string, OracleRoute>();
    for (const route of routes) {
      byName.delete(route.name);
      byName.set(route.name, route);
    }
    for (const route of byName.values()) {
      const methods = [...new Set(route.methods.map((method) => method.toUpperCase()))];
      const allowed: string[] = [];
      for (const method of methods) {
        allowed.push(method);
        if (method === 'GET' && !methods.includes('HEAD')) allowed.push('HEAD');
      }
      this.#routes.push({
        route: { ...route, methods, schemes: route.schemes.map((scheme) => scheme.toLowerCase()) },
        path: variantsOf(route.path, '/', route.requirements),
        host: route.host === undefined || route.host === '' ? null : variantsOf(route.host, '.', route.requirements),
        allowed,
      });
    }
  }

  lookup(path: string, context: OracleContext): OracleOutcome {
    if (path === '') path = '/';
    const host = hostname(context.host);
    const { method, scheme } = context;
    const found = this.#find(path, method, host, scheme);
    if (found !== null) return found;
    const getOrHead = method === 'GET' || method === 'HEAD';
    // The paths a GET or HEAD is retried with: the trailing slashes toggled, then (several of them) one.
    const retries: string[] = [];
    if (getOrHead) {
      const trimmed = path.replace(/\/+$/, '');
      if (trimmed !== '') {
        retries.push(trimmed === path ? `${path}/` : trimmed);
        if (path.length > trimmed.length + 1) retries.push(`${trimmed}/`);
      }
    }
    for (const retry of retries) {
      const hit = this.#find(retry, method, host, scheme);
      if (hit !== null) return redirect(hit, { path: retry });
    }
    const other = scheme === 'http' ? 'https' : 'http';
    // A route serving a GET or HEAD under a retried path over the other scheme wins over the 405 too
    // (Symfony's compiled matcher stops at it whatever its scheme, forgetting the methods allowed),
    // unless one serves the path as asked over that scheme (Symfony's 405 then).
    const elsewhere = (candidate: string): boolean => this.#find(candidate, method, host, other) !== null;
    const retriedElsewhere = retries.length > 0 && !elsewhere(path) && retries.some(elsewhere);
    const allowed = new Set<string>();
    for (const compiled of retriedElsewhere ? [] : this.#routes) {
      if (this.#pathParams(compiled, path) === null || this.#hostParams(compiled, host) === null) continue;
      if (compiled.route.schemes.length > 0 && !compiled.route.schemes.includes(scheme)) continue;
      for (const each of compiled.allowed) allowed.add(each);
    }
    if (allowed.size > 0) return { kind: 'method-not-allowed', allowedMethods: [...allowed] };
    if (getOrHead) {
      for (const candidate of [path, ...retries]) {
        const hit = this.#find(candidate, method, host, other);
        if (hit !== null) return redirect(hit, { path: candidate, scheme: other });
      }
    }
    return { kind: 'not-found', path: retries.at(-1) ?? path };
  }

  /** The routes in the order they are tried, methods in capitals. */
  routes(): OracleRoute[] {
    return this.#routes.map((compiled) => compiled.route);
  }

  /** The raw (still percent-encoded) path parameters of route `name` for `path`, or null when its path pattern does not match it. */
  rawPathParams(name: string, path: string): Record<string, string> | null {
    const compiled = this.#routes.find((each) => each.route.name === name);
    return compiled === undefined ? null : (this.#pathParams(compiled, path)?.groups ?? null);
  }

  /** Per route in order, whether its path pattern and its host (null: it has none) match, whatever the method and scheme. */
  checks(path: string, host: string): { name: string; path: boolean; host: boolean | null }[] {
    const name = hostname(host);
    return this.#routes.map((compiled) => ({
      name: compiled.route.name,
      path: this.#pathParams(compiled, path) !== null,
      host: compiled.host === null ? null : this.#hostParams(compiled, name) !== null,
    }));
  }

  // The first route answering the path, host, method and scheme, its parameters decoded.
  #find(path: string, method: string, host: string, scheme: string): Found | null {
    for (const compiled of this.#routes) {
      const { route } = compiled;
      if (route.methods.length > 0 && !route.methods.includes(method) && !(method === 'HEAD' && route.methods.includes('GET'))) continue;
      if (route.schemes.length > 0 && !route.schemes.includes(scheme)) continue;
      const hostParams = this.#hostParams(compiled, host);
      if (hostParams === null) continue;
      const matched = this.#pathParams(compiled, path);
      if (matched === null) continue;
      const params: Record<string, unknown> = { ...route.defaults };
      for (const name of matched.variant.names) {
        const raw = matched.groups[name]!;
        try {
          params[name] = matched.variant.wildcards.has(name) ? raw.split('/').map((segment) => decodeURIComponent(segment)) : decodeURIComponent(raw);
        } catch {
          return { kind: 'malformed-path', parameter: name, path };
        }
      }
      Object.assign(params, hostParams);
      return { kind: 'match', name: route.name, params };
    }
    return null;
  }

  #pathParams(compiled: Compiled, path: string): { variant: Variant; groups: Record<string, string> } | null {
    for (const variant of compiled.path) {
      const found = variant.regex.exec(path);
      if (found !== null) return { variant, groups: { ...found.groups } as Record<string, string> };
    }
    return null;
  }

  // The host parameters (the lower-cased host's text, not decoded), {} for a route without host, null on a mismatch.
  #hostParams(compiled: Compiled, host: string): Record<string, string> | null {
    if (compiled.host === null) return {};
    for (const variant of compiled.host) {
      const found = variant.regex.exec(host);
      if (found === null) continue;
      const params: Record<string, string> = {};
      for (const name of variant.names) params[name] = found.groups![name]!;
      return params;
    }
    return null;
  }
}

function redirect(found: Found, target: { path: string; scheme?: 'http' | 'https' }): OracleOutcome {
  return found.kind === 'match' ? { kind: 'redirect', name: found.name, params: found.params, redirect: target } : found;
}

/** The host as routes see it: lower-cased, without a `:port` (an IPv6 address keeps its brackets). */
function hostname(host: string): string {
  const found = /^(\[[^\]]*\]|[^:]*)(?::\d*)?$/.exec(host.toLowerCase());
  return found === null ? host.toLowerCase() : found[1]!;
}

// ---------------------------------------------------------------------------------------------
// RouterListener (the kernel.request listener), as README "Routing" and ARCHITECTURE.md describe
// it, on top of the reference matcher: what a request ends in, written without lib/routing.

/** A request as the listener sees it: the target as sent (path and query), the Host header, the Referer. */
export interface OracleRequest {
  readonly method: string;
  readonly scheme: 'http' | 'https';
  /** The Host header as sent (`A.Test:8080`), non-empty. */
  readonly hostHeader: string;
  /** Path and query as sent (`/books/1?q=x`). */
  readonly target: string;
  readonly referer?: string | undefined;
}

/** What the listener does with a request. */
export type ListenerOutcome =
  | { kind: 'routed'; route: string; params: Record<string, unknown> }
  | { kind: 'response'; status: number; location: string | null; allow: string | null }
  | { kind: 'error'; status: 400 | 404 | 405; message: string; allow: string | null; cause: string };

/** RFC 3986 2.3: the characters a percent-encoding of which is the character itself (6.2.2.2). */
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;

/** RFC 3986 6.2.2.1 and 6.2.2.2: hex digits in capitals, unreserved characters decoded. */
function canonicalSpelling(path: string): string {
  return path.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

/** A `.` or `..` segment, each dot written or encoded in either case: clients (WHATWG URL) resolve them away. */
const DOT_SEGMENT_ANY_SPELLING = /\/(\.|%2e){1,2}(?=\/|$)/i;

/** RFC 3986's URI characters, and `%` opening a percent-encoding; anything else goes into a Location encoded as UTF-8. */
const URI_CHAR = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]$/;

function asUri(text: string): string {
  let out = '';
  const chars = [...text];
  chars.forEach((char, i) => {
    if (URI_CHAR.test(char) || (char === '%' && /^[0-9A-Fa-f]{2}$/.test(chars.slice(i + 1, i + 3).join('')))) out += char;
    else for (const byte of new TextEncoder().encode(char)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  });
  return out;
}

/** The host and port a Host header names: lower-cased, the port the scheme's default when none is given. */
function hostAndPort(header: string, scheme: 'http' | 'https'): { host: string; port: number } {
  const found = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(header.toLowerCase())!;
  const port = found[2] === undefined || found[2] === '' ? (scheme === 'http' ? 80 : 443) : Number(found[2]);
  return { host: found[1]!, port };
}

/** The reference RouterListener: a matcher's outcome turned into attributes, a response or an HttpError. */
export function listenerOutcome(matcher: OracleMatcher, request: OracleRequest, ports: { http: number; https: number } = { http: 80, https: 443 }): ListenerOutcome {
  const q = request.target.indexOf('?');
  const path = q === -1 ? request.target : request.target.slice(0, q);
  const query = q === -1 ? '' : request.target.slice(q + 1);
  const { method, scheme } = request;
  const { host, port } = hostAndPort(request.hostHeader, scheme);
  const defaultPort = (each: 'http' | 'https'): number => (each === 'http' ? 80 : 443);
  const origin = `${scheme}://${host}${port === defaultPort(scheme) ? '' : `:${port}`}`;
  const notFound = (last: string): ListenerOutcome => ({
    kind: 'error',
    status: 404,
    message: `No route found for "${method} ${origin}${path}"${request.referer ? ` (from "${request.referer}")` : ''}`,
    allow: null,
    cause: `No routes found for "${last}".`,
  });
  const context = { method, host, scheme };
  let outcome = matcher.lookup(path, context);
  const getOrHead = method === 'GET' || method === 'HEAD';
  // README: a GET or HEAD that misses in another spelling of a route's path is a 301 to the canonical
  // spelling (after the matcher's own retries: lookup() matches the path as given). A miss, as for the
  // trailing slash, is also a path only routes of other methods match: the link works, as in Symfony.
  if (getOrHead && (outcome.kind === 'not-found' || outcome.kind === 'method-not-allowed')) {
    const canonical = canonicalSpelling(path);
    if (canonical !== path) {
      const retry = matcher.lookup(canonical, context);
      if (retry.kind === 'match') outcome = { kind: 'redirect', name: retry.name, params: retry.params, redirect: { path: canonical } };
      else if (retry.kind === 'redirect') outcome = retry;
    }
  }
  switch (outcome.kind) {
    case 'not-found':
      // RFC 9110 9.3.7: the server's own options.
      if (path === '*' && method === 'OPTIONS') return { kind: 'response', status: 200, location: null, allow: serverAllow(matcher) };
      return notFound(outcome.path);
    case 'method-not-allowed': {
      const allow = outcome.allowedMethods.join(', ');
      return { kind: 'error', status: 405, message: `No route found for "${method} ${origin}${path}": Method Not Allowed (Allow: ${allow})`, allow, cause: `Method Not Allowed (Allow: ${allow})` };
    }
    case 'malformed-path': {
      const message = `Malformed percent-encoding in parameter "${outcome.parameter}" of path "${outcome.path}".`;
      return { kind: 'error', status: 400, message, allow: null, cause: message };
    }
    case 'redirect': {
      // Never to a dot segment: the client would land elsewhere. The request's path is what is answered.
      if (DOT_SEGMENT_ANY_SPELLING.test(outcome.redirect.path)) return notFound(path);
      const to = outcome.redirect.scheme ?? scheme;
      const base = to === scheme ? origin : `${to}://${host}${ports[to] === defaultPort(to) ? '' : `:${ports[to]}`}`;
      return { kind: 'response', status: 301, location: `${base}${asUri(`${outcome.redirect.path}${query === '' ? '' : `?${query}`}`)}`, allow: null };
    }
    case 'match':
      return { kind: 'routed', route: outcome.name, params: outcome.params };
  }
}

/** The Allow of `OPTIONS *`: each method a route serves (GET bringing HEAD) and OPTIONS; none when a route takes any method. */
function serverAllow(matcher: OracleMatcher): string | null {
  const methods = matcher.routes();
  if (methods.some((route) => route.methods.length === 0)) return null;
  const allow = new Set<string>();
  for (const route of methods) {
    for (const method of route.methods) {
      allow.add(method);
      if (method === 'GET' && !route.methods.includes('HEAD')) allow.add('HEAD');
    }
  }
  allow.add('OPTIONS');
  return [...allow].join(', ');
}
