import { stringify, type Token } from 'path-to-regexp';
import { describeValue } from '../../kernel/describe-value.js';
import { isNameValueObject, isPlainObject } from '../../kernel/name-value-object.js';
import { isValidHost } from '../../kernel/host-syntax.js';
import type { Request } from '../../kernel/request.js';
import { InvalidParameterError, MissingMandatoryParametersError, RouteNotFoundError } from './errors.js';
import { decode } from './params-builder.js';
import { DOT_SEGMENT, encodeDotSegments, escapeClass, escapeRegex, variantSource, type CompiledPattern, type Part } from './pattern.js';
import { compiledRoute, type Route } from './route.js';
import type { RouteCollection } from './route-collection.js';
import type { SchemePorts } from './router-listener.js';

/** Where generated URLs point: scheme, host and port for absolute URLs, and the base path the app is mounted under. */
export interface GeneratorContext {
  /** Default `http`. */
  readonly scheme?: 'http' | 'https';
  /** Default `localhost`. */
  readonly host?: string;
  /** The port of `scheme` (default its `httpPort` or `httpsPort`); omitted from URLs when it is the scheme's default (80, 443). */
  readonly port?: number;
  /** The port of http, for links to a route that forces http from an https context (Symfony's `httpPort`). Default 80. */
  readonly httpPort?: number;
  /** The port of https, for links to a route that forces https from an http context (Symfony's `httpsPort`). Default 443. */
  readonly httpsPort?: number;
  /** Prefix of every generated path, e.g. `/app` (default none). */
  readonly baseUrl?: string;
  /**
   * Values of route variables for every URL made in this context (Symfony's `RequestContext`
   * parameters, such as `_locale`): a variable not given to generate() takes it before the route's
   * default; it never goes into the query string. Default none.
   */
  readonly parameters?: Readonly<Record<string, unknown>>;
}

// One parameter slot of a pattern; the pattern its value must match is that of the variant written (see check).
interface Slot {
  readonly name: string;
  readonly wildcard: boolean;
  /** A parameter of the route's host: its value is written as it is, never percent-encoded. */
  readonly host: boolean;
  /** The requirement, or the default pattern without separators, for messages on a value that has no text. */
  readonly pattern: string;
}

/** An optional group: `index`, its place in the keys of its pattern's `variantOf`; `source`, as written in the pattern, for messages. */
interface Group {
  readonly group: readonly Piece[];
  readonly index: number;
  readonly names: readonly string[];
  readonly source: string;
}

type Piece = string | Slot | Group;

/** What one writing of a pattern gathers besides its text. */
interface Writing {
  /** Each parameter's encoded value. */
  readonly written: Map<string, string>;
  /** Parameters the text needed and had no value for. */
  readonly missing: string[];
  /** Why parameters of optional groups among `missing` were needed. */
  readonly reasons: string[];
  /** Groups left out, for want of values, before a group written (when every group before one written is asked for). */
  readonly leftOut: Array<{ readonly group: Group; readonly before: string }>;
}

function newWriting(): Writing {
  return { written: new Map(), missing: [], reasons: [], leftOut: [] };
}

/** A pattern's pieces, and the compiled pattern whose variant a combination of groups written is. */
interface Template {
  readonly pieces: readonly Piece[];
  readonly compiled: CompiledPattern;
  /** The route's host pattern, matched without regard to case. */
  readonly host: boolean;
}

interface Plan {
  readonly path: Template;
  readonly host: Template | null;
  /** Names used by path and host. */
  readonly variables: ReadonlySet<string>;
}

const plans = new WeakMap<Route, Plan>();
/** What a host parameter's value may hold (dots only where it stands for several labels: see refuseHostValue). */
const HOST_TEXT = /^[A-Za-z0-9_.-]+$/;
const DEFAULT_PORTS: Record<string, number> = { http: 80, https: 443 };

/** Builds URLs from route names and parameters, the reverse of UrlMatcher (Symfony's UrlGenerator). */
export class UrlGenerator {
  readonly #routes: RouteCollection;
  readonly #scheme: 'http' | 'https';
  readonly #host: string;
  /** Each scheme's port, the context's scheme's being `port` (undefined: the scheme's default). */
  readonly #ports: Readonly<Record<'http' | 'https', number | undefined>>;
  readonly #baseUrl: string;
  readonly #parameters: ReadonlyArray<readonly [string, unknown]>;

  /**
   * The context of a request's own links (Symfony's `RequestContext::fromRequest()`): its scheme, host
   * and port as `request.scheme`, `host` and `port` read them, so X-Forwarded-* count from a trusted
   * proxy alone, and a host `trustedHosts` refuses throws its 400 rather than go into a URL. No
   * `baseUrl`: a request does not know where the app is mounted; add your own. `ports` (`app.schemePorts`)
   * gives the other scheme's port, so a link to a route that forces it goes where the router's redirect goes.
   * A request whose route gave it a `_locale` (a text attribute) passes it on as a context parameter,
   * so its links keep its language unless given another, as Symfony's LocaleListener sets the router's context.
   */
  static contextFrom(request: Request, ports?: Readonly<Partial<SchemePorts>>): GeneratorContext {
    const locale = request.attributes.get('_locale');
    const context: GeneratorContext = {
      scheme: request.scheme,
      host: request.host,
      port: request.port,
      ...(typeof locale === 'string' && locale !== '' ? { parameters: { _locale: locale } } : {}),
    };
    const other = request.scheme === 'http' ? 'https' : 'http';
    const port = ports?.[other];
    if (port === undefined) return context;
    return other === 'https' ? { ...context, httpsPort: port } : { ...context, httpPort: port };
  }

  constructor(routes: RouteCollection, context: GeneratorContext = {}) {
    checkContext(context);
    this.#routes = routes;
    this.#scheme = context.scheme ?? 'http';
    this.#host = (context.host ?? 'localhost').toLowerCase();
    const { httpPort, httpsPort } = context;
    this.#ports = this.#scheme === 'http' ? { http: context.port ?? httpPort, https: httpsPort } : { http: httpPort, https: context.port ?? httpsPort };
    this.#baseUrl = (context.baseUrl ?? '').replace(/\/+$/, '');
    // Copied: a caller's object changed later does not change the links of a generator made with it.
    this.#parameters = Object.entries(context.parameters ?? {});
  }

  /**
   * The URL of route `name`: path parameters filled (percent-encoded) from `params` then the
   * route's defaults, other parameters in the query string, with those of `_query` (an object by name,
   * whose names may be the route's own), and `_fragment`, given or the route's default, as the fragment.
   * Relative to the host unless `absolute`, or unless the route requires another scheme or host.
   */
  generate(name: string, params: Record<string, unknown> = {}, absolute = false): string {
    // A list would be read as parameters named "0", "1"..., a Map as none: `id` reported missing though a value was given.
    if (!isNameValueObject(params)) {
      throw new TypeError(`The parameters of route "${name}" are an object by name ({ id: 42 }), not ${describeValue(params)}.`);
    }
    const route = this.#routes.get(name);
    if (route === undefined) throw new RouteNotFoundError(name);
    const plan = planOf(route);
    params = withContextParameters(params, this.#parameters, plan.variables);
    let writing = newWriting();
    // The matcher gives a dot segment's parameter back decoded, unless its requirement refuses the encoding, which readBack finds.
    let path = encodeDotSegments(write(plan.path, name, route, params, writing, false));
    const hostWriting = newWriting();
    let host = plan.host === null ? null : write(plan.host, name, route, params, hostWriting, false).toLowerCase();
    // A parameter missing is written as its placeholder (`{a}`), which readBack takes as its value: the
    // groups that could not be left out once it is given are named with it, not by the next call.
    let misread = readBack(route, path, writing.written, writing.missing);
    if (misread !== null) {
      // Optional groups side by side (`{/:year}{/:month}`): one written after one left out reads back
      // as the earlier one (`/archive/05` is a year). Every group before a written one that has its
      // values (given or defaults) is written too, as Symfony writes every optional parameter before
      // the last one given; one without them stays out, and if the URL still does not read back, it
      // is the group that cannot be left out.
      const first = writing;
      writing = newWriting();
      try {
        path = encodeDotSegments(write(plan.path, name, route, params, writing, true));
      } catch (error) {
        // A default refused in a group written only for a later one: what is missing is told first, as the first writing found it.
        if (first.missing.length > 0) refuseMissing(name, plan, [first, hostWriting], null);
        throw error;
      }
      misread = readBack(route, path, writing.written, writing.missing);
    }
    refuseMissing(name, plan, [writing, hostWriting], misread === null ? null : groupsInTheWay(writing, misread, route, params, path));
    if (misread !== null) {
      const shown = JSON.stringify(path === '' ? '/' : path);
      // A parameter read from the pattern's text needs a value of its own.
      if (!writing.written.has(misread.name)) throw new MissingMandatoryParametersError(name, [misread.name], { reason: `${shown} would ${describeRead(misread.read)}` });
      const value = misread.read === null ? undefined : own(misread.read, misread.name);
      throw new InvalidParameterError(name, misread.name, misread.pattern, own(params, misread.name) ?? own(route.defaults, misread.name), {
        expected: `give a URL that matches back to it (${shown} would give ${value === undefined ? 'no value' : JSON.stringify(value)})`,
      });
    }
    if (host !== null) {
      let hostMisread = readBackHost(route, host, hostWriting.written);
      if (hostMisread !== null) {
        // As for the path: a host group written after one left out (`{:a.}{:b.}example.test` with
        // only `b`) reads back as the earlier one, so the groups before it are written with their
        // values or defaults, and one that has none is the group that cannot be left out.
        const everyBefore = newWriting();
        host = write(plan.host!, name, route, params, everyBefore, true).toLowerCase();
        hostMisread = readBackHost(route, host, everyBefore.written);
        if (hostMisread !== null) refuseMissing(name, plan, [], groupsInTheWay(everyBefore, hostMisread, route, params, host));
      }
      if (hostMisread !== null) {
        const value = hostMisread.read === null ? undefined : own(hostMisread.read, hostMisread.name);
        throw new InvalidParameterError(name, hostMisread.name, hostMisread.pattern, own(params, hostMisread.name) ?? own(route.defaults, hostMisread.name), {
          expected: `give a URL that matches back to it (host ${JSON.stringify(host)} would give ${value === undefined ? 'no value' : JSON.stringify(value)})`,
        });
      }
    }
    const written = writing.written;

    refuseDotSegment(name, route, params, path, written);

    // A path starting with `//` is a network path: a browser reads `//evil.example/x` as the host
    // evil.example. Only a value can start one (an empty first segment), as a route's leading slashes are one.
    if (path.startsWith('//')) {
      const [first = ''] = written.keys();
      throw new InvalidParameterError(name, first, own(route.requirements, first) ?? '', own(params, first) ?? own(route.defaults, first), {
        expected: `not start the path with "//" (${JSON.stringify(path)} would be a network path, to the host after the slashes)`,
      });
    }

    let scheme = this.#scheme;
    let needsHost = absolute;
    if (route.schemes.length > 0 && !route.schemes.includes(scheme)) {
      scheme = route.schemes[0] as 'http' | 'https';
      needsHost = true;
    }
    if (host === null) host = this.#host;
    else if (host !== this.#host) needsHost = true;

    let url = this.#baseUrl + (path === '' ? '/' : path);
    const query = queryString(params, route.defaults, plan.variables, name);
    if (query !== '') url += `?${query}`;
    // A route may give its fragment as a default, as in Symfony; a value given replaces it (an empty one: none).
    const fragment = own(params, '_fragment') ?? own(route.defaults, '_fragment');
    if (fragment !== undefined && fragment !== null && fragment !== '') url += `#${percentEncode(String(fragment), encodeURI, name, '_fragment').replace(/#/g, '%23')}`;
    if (!needsHost) return url;
    const port = this.#ports[scheme] !== undefined && this.#ports[scheme] !== DEFAULT_PORTS[scheme] ? `:${this.#ports[scheme]}` : '';
    return `${scheme}://${host}${port}${url}`;
  }
}

/** Refuses a context that would make malformed URLs (`http://localhostshop/x` from a baseUrl without its slash). */
function checkContext(context: GeneratorContext): void {
  if (!isPlainObject(context as unknown)) throw new TypeError(`The generator's context is a plain object ({ host: 'example.com' }), not ${describeValue(context)}.`);
  // A typo (`baseURL`) would otherwise leave every URL without what it was meant to set.
  for (const key of Object.keys(context)) {
    if (!CONTEXT_OPTIONS.includes(key)) throw new TypeError(`The generator has no context option "${key}"; its options are ${CONTEXT_OPTIONS.join(', ')}.`);
  }
  const { scheme, host, port, httpPort, httpsPort, baseUrl, parameters } = context;
  const refuse = (what: string, value: unknown, expected: string): never => {
    throw new TypeError(`The generator's ${what} is ${expected}, not ${JSON.stringify(value) ?? String(value)}.`);
  };
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') refuse('scheme', scheme, '"http" or "https"');
  if (host !== undefined && (typeof host !== 'string' || !isValidHost(host))) refuse('host', host, 'a host name or address without a port (`example.com`, `127.0.0.1`, `[::1]`)');
  for (const [name, value] of [['port', port], ['httpPort', httpPort], ['httpsPort', httpsPort]] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 1 || value > 65_535)) refuse(name, value, 'a port number from 1 to 65535');
  }
  // `port` is the context's scheme's port: another one given for that scheme would leave its links ambiguous.
  const current = scheme ?? 'http';
  const schemePort = current === 'http' ? httpPort : httpsPort;
  if (port !== undefined && schemePort !== undefined && schemePort !== port) {
    throw new TypeError(`The generator's port ${port} and ${current}Port ${schemePort} are both the port of its scheme, ${current}: give one.`);
  }
  // A base path is written into every URL as it is: it starts with a slash, and holds no query, fragment or character a URL must encode.
  if (baseUrl !== undefined && (typeof baseUrl !== 'string' || (baseUrl !== '' && !BASE_URL.test(baseUrl)))) refuse('baseUrl', baseUrl, "empty or a path starting with a slash (`/shop`), its characters percent-encoded where a URL needs it");
  // `//shop` would make every path a network path: browsers read `//shop/books/1` as the host `shop`.
  if (baseUrl?.startsWith('//') && baseUrl.replace(/\/+$/, '') !== '') refuse('baseUrl', baseUrl, 'a path starting with one slash (`/shop`): one starting with two makes every link a network path, to the host after them');
  if (parameters !== undefined) {
    if (!isPlainObject(parameters as unknown)) throw new TypeError(`The generator's parameters are a plain object by name ({ _locale: 'fr' }), not ${describeValue(parameters)}.`);
    // They fill route variables only: a fragment or query for every URL would be a surprise in each one.
    for (const name of ['_fragment', '_query']) {
      if (Object.hasOwn(parameters, name)) throw new TypeError(`The generator's parameters fill route variables, which "${name}" never is: give it to generate() for the URL that needs it.`);
    }
  }
}

const CONTEXT_OPTIONS: readonly string[] = ['scheme', 'host', 'port', 'httpPort', 'httpsPort', 'baseUrl', 'parameters'];

/**
 * `params` with the context's parameters for the route's variables it does not give (an own
 * `undefined` counts as not given, as generate() reads it; `null` is given: none), or `params` itself when none is added.
 */
function withContextParameters(params: Record<string, unknown>, parameters: ReadonlyArray<readonly [string, unknown]>, variables: ReadonlySet<string>): Record<string, unknown> {
  let merged: Record<string, unknown> | undefined;
  for (const [name, value] of parameters) {
    if (!variables.has(name) || own(params, name) !== undefined) continue;
    merged ??= { ...params };
    // Defined as an own property: a variable named `__proto__` is a value, not the object's prototype.
    Object.defineProperty(merged, name, { value, enumerable: true, writable: true, configurable: true });
  }
  return merged ?? params;
}

const BASE_URL = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*$/;

function planOf(route: Route): Plan {
  let plan = plans.get(route);
  if (plan === undefined) {
    const compiled = compiledRoute(route);
    const variables = new Set([...compiled.path.names, ...(compiled.host?.names ?? [])]);
    plan = {
      path: { pieces: piecesOf(compiled.path.tokens, '/', route.requirements, compiled.path.groups), compiled: compiled.path, host: false },
      host: compiled.host === null ? null : { pieces: piecesOf(compiled.host.tokens, '.', route.requirements, compiled.host.groups), compiled: compiled.host, host: true },
      variables,
    };
    plans.set(route, plan);
  }
  return plan;
}

// `groups`: the index of each optional group among its pattern's.
function piecesOf(tokens: readonly Token[], delimiter: string, requirements: Readonly<Record<string, string>>, groups: ReadonlyMap<Token, number>): Piece[] {
  return tokens.map((token): Piece => {
    if (token.type === 'text') return token.value;
    if (token.type === 'group') {
      // Only the group's own parameters decide whether it is written; nested groups decide for themselves.
      const names = token.tokens.flatMap((inner) => (inner.type === 'param' || inner.type === 'wildcard' ? [inner.name] : []));
      return { group: piecesOf(token.tokens, delimiter, requirements, groups), index: groups.get(token)!, names, source: stringify({ tokens: [token] }) };
    }
    const pattern = own(requirements, token.name) ?? (token.type === 'wildcard' ? '[^]+' : `[^${escapeClass(delimiter)}]+`);
    return { name: token.name, wildcard: token.type === 'wildcard', host: delimiter === '.', pattern };
  });
}

/**
 * The template written out, each parameter's encoded value recorded in `written` and checked against
 * the matcher's pattern for it in the variant written: a parameter without requirement stops at the
 * separators after it there (`version` of `/docs/:version{/:page}.html` may hold a `.` with `page` only).
 */
function write(template: Template, routeName: string, route: Route, params: Record<string, unknown>, writing: Writing, everyGroupBefore: boolean): string {
  const { pieces, compiled } = template;
  const opened = Array<string>(compiled.groups.size).fill('0');
  const out = render(pieces, routeName, route, params, writing, everyGroupBefore, opened);
  const variant = compiled.variantOf.get(opened.join(''))!;
  if (template.host) refuseEmptyLabel(out, variant, writing, routeName, route, params);
  for (const part of variant) {
    if (part.type === 'text') continue;
    const encoded = writing.written.get(part.name);
    if (encoded !== undefined && !check(part, template.host).test(encoded)) {
      throw new InvalidParameterError(routeName, part.name, part.pattern, own(params, part.name) ?? own(route.defaults, part.name));
    }
  }
  return out;
}

/** Each variant part's whole-value check, made once. */
const checks = new WeakMap<Part, RegExp>();

// A host's requirement is matched without regard to case, as the matcher matches it (hosts are lower-cased).
function check(part: Extract<Part, { name: string }>, host: boolean): RegExp {
  let regex = checks.get(part);
  if (regex === undefined) checks.set(part, (regex = new RegExp(`^(?:${part.pattern})$`, host ? 'i' : '')));
  return regex;
}

/**
 * The pieces written out, each parameter's encoded value recorded in `writing`, and `1` put in
 * `opened` at each group written. `everyGroupBefore`: an optional group that has its values is also
 * written when one after it is (in the same sequence, or after the group holding it); one that has
 * not is recorded as left out.
 * `holder`: the group these pieces are the inside of, written for a group nested in it. `after`: the
 * nearest group written after that one, for its own values: the groups at the end of the inside
 * (`{/:b}` of `{/:a{/:b}}{/:c}`) are before it too.
 */
function render(pieces: readonly Piece[], routeName: string, route: Route, params: Record<string, unknown>, writing: Writing, everyGroupBefore: boolean, opened: string[], holder?: { outer: Group; inner: Group }, after?: string): string {
  const writes = pieces.map((piece) => isGroup(piece) && groupWritten(piece, route, params));
  // Each group's nearest group after, written for its own values, here or after these pieces.
  const laterOf: Array<string | undefined> = [];
  if (everyGroupBefore) {
    let later = after;
    for (let i = pieces.length - 1; i >= 0; i--) {
      const piece = pieces[i]!;
      if (!isGroup(piece)) continue;
      laterOf[i] = later;
      if (writes[i]) later = piece.source;
      else if (later !== undefined && piece.names.every((name) => hasValue(name, route, params))) writes[i] = true;
      else if (later !== undefined) writing.leftOut.push({ group: piece, before: later });
    }
  }
  let out = '';
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i]!;
    if (typeof piece === 'string') {
      out += piece;
      continue;
    }
    if (isGroup(piece)) {
      if (writes[i]) {
        opened[piece.index] = '1';
        // Written for a group inside it rather than for values of its own: what it lacks, it lacks for that group.
        const inner = includeGroup(piece.names, route, params) ? undefined : piece.group.find((nested) => isGroup(nested) && groupWritten(nested, route, params));
        out += render(piece.group, routeName, route, params, writing, everyGroupBefore, opened, inner === undefined ? undefined : { outer: piece, inner: inner as Group }, laterOf[i]);
      }
      continue;
    }
    const value = own(params, piece.name) ?? own(route.defaults, piece.name);
    if (value === undefined || value === null) {
      writing.missing.push(piece.name);
      if (holder !== undefined) writing.reasons.push(`the optional group "${holder.inner.source}" is inside "${holder.outer.source}", which cannot be written without "${piece.name}"`);
      // Never returned: the URL is refused for it. Read back, it shows which groups its value would need (see readBack).
      out += placeholder(piece.name);
      continue;
    }
    const encoded = encodeValue(piece, value, routeName);
    if (piece.host) refuseHostValue(piece, encoded, value, routeName, route);
    writing.written.set(piece.name, encoded);
    out += encoded;
  }
  return out;
}

/**
 * Refuses a host parameter's value that no request's host holds (kernel/host-syntax.ts), so the URL would
 * never match: anything but letters, digits, `-`, `_` and dots (`@` or `:` would even move the host). Dots
 * only where the parameter stands for several labels (a wildcard, or a requirement that takes them); elsewhere
 * a dot is named here rather than by the default pattern (`[^.]+`). Whether nothing, or its dots, leave an
 * empty label depends on the text around it: see refuseEmptyLabel.
 */
function refuseHostValue(piece: Slot, encoded: string, value: unknown, routeName: string, route: Route): void {
  const several = piece.wildcard || own(route.requirements, piece.name) !== undefined;
  const refuse = (expected: string): never => {
    throw new InvalidParameterError(routeName, piece.name, piece.pattern, value, { expected });
  };
  if (encoded === '') return;
  if (!HOST_TEXT.test(encoded) || (!several && encoded.includes('.'))) refuse(several ? 'be host name labels (letters, digits, "-" and "_") separated by dots' : 'be a host name label (letters, digits, "-" and "_")');
}

/**
 * Refuses a host written with an empty label (`.example.test`, `a..example.test`), naming the first value,
 * empty or with dots, that may have made it: the route's own text has none (Route refuses it). A dot ending
 * the host is no empty label: `example.test.` is a fully qualified name, which a request's host may be.
 * Before the parameters' patterns are checked, which would name an empty value less clearly.
 */
function refuseEmptyLabel(host: string, variant: readonly Part[], writing: Writing, routeName: string, route: Route, params: Record<string, unknown>): void {
  if (!host.startsWith('.') && !host.includes('..')) return;
  for (const part of variant) {
    if (part.type === 'text') continue;
    const encoded = writing.written.get(part.name);
    if (encoded === undefined || (encoded !== '' && !encoded.startsWith('.') && !encoded.endsWith('.') && !encoded.includes('..'))) continue;
    throw new InvalidParameterError(routeName, part.name, part.pattern, own(params, part.name) ?? own(route.defaults, part.name), {
      expected: encoded === '' ? 'not be empty (it would leave an empty label in the host)' : `be host name labels separated by dots that leave no label of the host empty (${JSON.stringify(host.toLowerCase())})`,
    });
  }
}

function isGroup(piece: Piece): piece is Group {
  return typeof piece !== 'string' && 'group' in piece;
}

/**
 * A MissingMandatoryParametersError for what the writings lacked and the optional groups in the way
 * (see groupsInTheWay), all named at once in the pattern's order, with why, if anything is missing.
 */
function refuseMissing(routeName: string, plan: Plan, writings: readonly Writing[], inTheWay: { needed: readonly string[]; reason: string } | null): void {
  const missing = writings.flatMap((writing) => writing.missing);
  if (missing.length === 0 && inTheWay === null) return;
  const reasons = writings.flatMap((writing) => writing.reasons);
  if (inTheWay !== null) reasons.push(inTheWay.reason);
  const order = [...plan.variables];
  const names = [...new Set([...missing, ...(inTheWay?.needed ?? [])])].sort((one, other) => order.indexOf(one) - order.indexOf(other));
  throw new MissingMandatoryParametersError(routeName, names, reasons.length === 0 ? {} : { reason: reasons.join('; ') });
}

/**
 * The optional groups left out, for want of values, that `path` would read a value written after
 * them into, and the parameters they need: from the first group whose parameters took such a value
 * (`/t/x/y` of `{/:b}{/:c}` read as b), every one left out after it, in the pattern's order (earlier
 * ones were not in the way); null when none was left out. Requirements decide what a group reads, so
 * a value given later may put one more in the way (`{/:a}{/:b}{/:c}` with b `[a-z]+`: c given as `x`, not `1`).
 */
function groupsInTheWay(writing: Writing, misread: Misread, route: Route, params: Record<string, unknown>, path: string): { needed: string[]; reason: string } | null {
  if (writing.leftOut.length === 0) return null;
  const leftOut = [...writing.leftOut].sort((one, other) => one.group.index - other.group.index);
  const first = leftOut.findIndex(({ group }) => misread.read !== null && group.names.some((inner) => Object.hasOwn(misread.read!, inner)));
  const blamed = leftOut.slice(Math.max(first, 0));
  const needed = blamed.flatMap(({ group }) => group.names.filter((inner) => !hasValue(inner, route, params)));
  const byLater = new Map<string, string[]>();
  for (const { group, before } of blamed) byLater.set(before, [...(byLater.get(before) ?? []), `"${group.source}"`]);
  const groups = [...byLater].map(([before, sources]) => `the optional group${sources.length > 1 ? 's' : ''} ${sources.join(', ')} cannot be left out before "${before}"`);
  return { needed, reason: `${groups.join('; ')} (${JSON.stringify(path === '' ? '/' : path)} would ${describeRead(misread.read)})` };
}

// An optional group is written when its own parameters say so, or when a group nested in it is written (it holds that one).
function groupWritten(piece: { readonly group: readonly Piece[]; readonly names: readonly string[] }, route: Route, params: Record<string, unknown>): boolean {
  return includeGroup(piece.names, route, params) || piece.group.some((inner) => typeof inner !== 'string' && 'group' in inner && groupWritten(inner, route, params));
}

/** A variant's regex, anchored, one capturing group per parameter, made once. */
const variantRegexes = new WeakMap<readonly Part[], RegExp>();

/** What readBack finds wrong: the parameter, its pattern there, and what the path would read (null: no match). */
interface Misread {
  readonly name: string;
  readonly pattern: string;
  readonly read: Record<string, string> | null;
}

/** What stands in the path for a parameter that has no value: `{a}`. */
function placeholder(name: string): string {
  return `{${name}}`;
}

/**
 * What the matcher would read wrong in `path`: the first parameter whose value it would read back
 * otherwise than it was written, or read though it was not written, with every parameter it would read (decoded; `read` null: the path
 * would not match at all), or null when every one comes back as written. The matcher takes the
 * first variant of the route's pattern that matches, as here. A `missing` parameter is written as
 * its placeholder, which its slot reads whatever its requirement (a value it will be given), and any other slot may read too.
 */
function readBack(route: Route, path: string, written: ReadonlyMap<string, string>, missing: readonly string[] = []): Misread | null {
  const target = path === '' ? '/' : path;
  const expected = missing.length === 0 ? written : new Map([...written, ...missing.map((name): [string, string] => [name, placeholder(name)])]);
  for (const parts of compiledRoute(route).path.variants) {
    const found = variantRegex(parts, missing).exec(target);
    if (found === null) continue;
    const slots = parts.filter((part): part is Extract<Part, { name: string }> => part.type !== 'text');
    // Decoded, as the matcher decodes parameters (an encoded dot segment comes back as the dots).
    const readAt = (at: number): string => decode(found[at + 1]!) ?? found[at + 1]!;
    const misread = (name: string, at: number) => ({ name, pattern: slots[at]?.pattern ?? '', read: Object.fromEntries(slots.map((slot, i) => [slot.name, readAt(i)])) });
    for (const [name, value] of expected) {
      const at = slots.findIndex((slot) => slot.name === name);
      if (at === -1 || readAt(at) !== (decode(value) ?? value)) return misread(name, at);
    }
    // A parameter not written is read from the pattern's text (`page` of `/posts{/:page}{/feed}` in
    // `/posts/feed`), unless what it reads is its default, which the matcher would give it anyway.
    const extra = slots.findIndex((slot, at) => !expected.has(slot.name) && readAt(at) !== fallback(route, slot.name));
    return extra === -1 ? null : misread(slots[extra]!.name, extra);
  }
  const [first] = expected.keys();
  return first === undefined ? null : { name: first, pattern: '', read: null };
}

/**
 * readBack for the host: what the matcher would read wrong in `host` (written lower-cased), as it
 * reads it, the first host variant that matches giving the values, not decoded. Two parameters
 * that take dots (`:a.:b.com` with `[a-z.]+`) can split `a.b.a.b.com` otherwise than written.
 */
function readBackHost(route: Route, host: string, written: ReadonlyMap<string, string>): Misread | null {
  const { hostVariants, host: pattern } = compiledRoute(route);
  if (hostVariants === null) return null;
  for (const [index, variant] of hostVariants.entries()) {
    const found = variant.regex.exec(host);
    if (found === null) continue;
    // Entries, not assignments: assigning `__proto__` would set the prototype, and its value would be read as none.
    const read: Record<string, string> = Object.fromEntries(variant.names.map((name, i) => [name, found[i + 1]!]));
    const patternOf = (name: string): string => {
      const part = pattern!.variants[index]!.find((each) => each.type !== 'text' && each.name === name);
      return part === undefined || part.type === 'text' ? '' : part.pattern;
    };
    for (const [name, value] of written) if (own(read, name) !== value.toLowerCase()) return { name, pattern: patternOf(name), read };
    const extra = variant.names.find((name) => !written.has(name) && own(read, name) !== fallback(route, name));
    return extra === undefined ? null : { name: extra, pattern: patternOf(extra), read };
  }
  const [first] = written.keys();
  return first === undefined ? null : { name: first, pattern: '', read: null };
}

/** The regex of a variant, its `missing` parameters' slots taking their placeholders too; only the matcher's own is kept. */
function variantRegex(parts: readonly Part[], missing: readonly string[]): RegExp {
  if (missing.length > 0 && parts.some((part) => part.type !== 'text' && missing.includes(part.name))) {
    const withPlaceholders = parts.map((part) => (part.type !== 'text' && missing.includes(part.name) ? { ...part, pattern: `(?:${part.pattern})|${escapeRegex(placeholder(part.name))}` } : part));
    return new RegExp(`^${variantSource(withPlaceholders)}$`);
  }
  let regex = variantRegexes.get(parts);
  if (regex === undefined) variantRegexes.set(parts, (regex = new RegExp(`^${variantSource(parts)}$`)));
  return regex;
}

/** What a path reads back as, for messages: `read back as a "x", b "y"`. */
function describeRead(read: Readonly<Record<string, string>> | null): string {
  if (read === null) return 'not match the route';
  const entries = Object.entries(read);
  return entries.length === 0 ? 'read back without parameters' : `read back as ${entries.map(([name, value]) => `${name} ${JSON.stringify(value)}`).join(', ')}`;
}

const ENCODED_DOT_SEGMENT = /\/(%2E(?:%2E)?)(?=\/|$)/;

/**
 * Refuses a path in which a value makes a `.` or `..` segment: browsers and fetch() resolve it away,
 * `%2E%2E` too, so the link would lead elsewhere (`/files/%2E%2E/download` is requested as
 * `/download`). A route whose own text holds one is left as Symfony writes it (encoded).
 */
function refuseDotSegment(routeName: string, route: Route, params: Record<string, unknown>, path: string, written: ReadonlyMap<string, string>): void {
  const found = ENCODED_DOT_SEGMENT.exec(path);
  if (found === null) return;
  if (textHasDotSegment(route)) return;
  const segment = found[1]!.length === 3 ? '.' : '..';
  const names = [...written.keys()];
  const name = names.find((key) => written.get(key)!.split('/').some((value) => value === '.' || value === '..')) ?? names[0] ?? '';
  const resolved = new URL(path, 'http://localhost').pathname;
  throw new InvalidParameterError(routeName, name, own(route.requirements, name) ?? '', own(params, name) ?? own(route.defaults, name), {
    expected: `not make the path segment "${segment}" (browsers and fetch() resolve "." and ".." segments away, ${found[1]} too: ${JSON.stringify(path)} is requested as ${JSON.stringify(resolved)})`,
  });
}

/**
 * Whether the route's own text holds a `.` or `..` segment whatever values fill it: each parameter
 * stands for a value (no dots), so the text of `/files/.:name` before its parameter is no segment.
 */
function textHasDotSegment(route: Route): boolean {
  return compiledRoute(route).path.variants.some((parts) => DOT_SEGMENT.test(parts.map((part) => (part.type === 'text' ? part.value : 'v')).join('')));
}

// An optional group is written when all its parameters have values and one was given with a value other than its default.
function includeGroup(names: readonly string[], route: Route, params: Record<string, unknown>): boolean {
  if (names.length === 0) return true;
  let given = false;
  for (const name of names) {
    const value = own(params, name);
    const fallback = own(route.defaults, name);
    if ((value === undefined || value === null) && (fallback === undefined || fallback === null)) return false;
    if (value !== undefined && value !== null && !sameValue(value, fallback)) given = true;
  }
  return given;
}

/** The parameter's default as the matcher gives it back, as text (undefined when it has none). */
function fallback(route: Route, name: string): string | undefined {
  const value = own(route.defaults, name);
  return value === undefined || value === null ? undefined : String(value);
}

/** Whether the parameter has a value to write, given or its default. */
function hasValue(name: string, route: Route, params: Record<string, unknown>): boolean {
  const value = own(params, name) ?? own(route.defaults, name);
  return value !== undefined && value !== null;
}

// A parameter's value, never one inherited from Object.prototype (a parameter named `constructor`).
function own<T>(values: Readonly<Record<string, T>>, name: string): T | undefined {
  return Object.hasOwn(values, name) ? values[name] : undefined;
}

function sameValue(value: unknown, fallback: unknown): boolean {
  return fallback !== undefined && fallback !== null && String(value) === String(fallback);
}

function encodeValue(slot: Slot, value: unknown, routeName: string): string {
  if (slot.wildcard) {
    const segments = Array.isArray(value) ? value : typeof value === 'string' ? value.split('/') : [value];
    if (segments.length === 0) throw new InvalidParameterError(routeName, slot.name, slot.pattern, value);
    return segments.map((segment) => encodeSegment(scalar(segment, slot, routeName), slot, routeName)).join('/');
  }
  return encodeSegment(scalar(value, slot, routeName), slot, routeName);
}

function scalar(value: unknown, slot: Slot, routeName: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  throw new InvalidParameterError(routeName, slot.name, slot.pattern, value);
}

// encodeURIComponent, then the sub-delimiters a path segment may hold are written as they are.
function encodeSegment(value: string, slot: Slot, routeName: string): string {
  return percentEncode(value, encodeURIComponent, routeName, slot.name, slot.pattern).replace(/%(?:40|3A|2C|3B|3D|2B|24|26)/g, (escape) => decodeURIComponent(escape));
}

function queryString(params: Record<string, unknown>, defaults: Readonly<Record<string, unknown>>, variables: ReadonlySet<string>, routeName: string): string {
  const entries = new Map<string, unknown>();
  for (const [key, value] of Object.entries(params)) {
    if (variables.has(key) || key === '_fragment' || key === '_query') continue;
    if (Object.hasOwn(defaults, key) && sameValue(value, defaults[key])) continue;
    entries.set(key, value);
  }
  // Symfony's `_query`: query parameters by name, a route parameter's name included; one also given
  // among the other parameters takes its place.
  const query = own(params, '_query');
  if (query !== undefined && query !== null) {
    if (!isPlainObject(query)) throw new TypeError(`The _query parameter of route "${routeName}" is a plain object by name ({ page: 2 }), not ${describeValue(query)}.`);
    for (const [key, value] of Object.entries(query)) entries.set(key, value);
  }
  const pairs: string[] = [];
  for (const [key, value] of entries) {
    if (value === undefined || value === null) continue;
    const encode = (text: string): string => percentEncode(text, encodeURIComponent, routeName, key);
    const encodedKey = encode(key);
    if (!Array.isArray(value)) {
      pairs.push(`${encodedKey}=${encode(queryValue(value, key, routeName))}`);
      continue;
    }
    // A list is the key repeated, which request.query.getAll() reads back.
    for (const item of value) {
      if (item !== undefined && item !== null) pairs.push(`${encodedKey}=${encode(queryValue(item, key, routeName))}`);
    }
  }
  return pairs.join('&');
}

/**
 * A query value as text; a TypeError for an object (or a list in a list), which request.query
 * (URLSearchParams, no PHP-style brackets) would not read back as it was given, and for what has no text (a function, a symbol).
 */
function queryValue(value: unknown, key: string, routeName: string): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  throw new TypeError(
    `The query parameter "${key}" of route "${routeName}" is a string, a number, a boolean or a list of them, not ${describeValue(value)}: ` +
      `request.query reads no nested keys (${key}[a]=1 is the key "${key}[a]"), so give each value its own parameter, or text (a date's toISOString(), JSON).`,
  );
}

/**
 * `encode(text)`, or an InvalidParameterError naming the parameter when the text holds a lone
 * surrogate (half of a UTF-16 pair: it has no UTF-8 form, and the encoders throw a bare URIError).
 * Refused rather than written as U+FFFD, which would give a URL for another value than the one asked for.
 */
function percentEncode(text: string, encode: (text: string) => string, routeName: string, parameter: string, requirement = ''): string {
  try {
    return encode(text);
  } catch {
    throw new InvalidParameterError(routeName, parameter, requirement, text, { expected: 'be well-formed Unicode (no lone surrogate)' });
  }
}
