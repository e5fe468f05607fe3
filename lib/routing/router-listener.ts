import {
  BadRequestHttpError,
  KernelEvents,
  MethodNotAllowedHttpError,
  NotFoundHttpError,
  Response,
  type Request,
  type RequestEvent,
} from '../../kernel/index.js';
import { setOwn } from '../../kernel/set-own.js';
import type { Logger } from '../log/index.js';
import { MalformedPathError, MethodNotAllowedError, ResourceNotFoundError } from './errors.js';
import { SPELLED_DOT_SEGMENT, normalizePercentEncoding } from './pattern.js';
import type { UrlMatcher } from './url-matcher.js';

/** The port of each scheme, for redirects to the other one (Symfony's RequestContext httpPort and httpsPort). */
export interface SchemePorts {
  http: number;
  https: number;
}

/**
 * Matches each request against the routes on `kernel.request` (priority 32) and
 * stores `_route`, `_controller`, `_route_params` and the parameters as attributes.
 * A miss is a 404, a path known for other methods a 405 with `Allow`, a GET/HEAD
 * path that matches with the trailing slash toggled a 301 to the canonical URL, and one that
 * matches only over another scheme a 301 to that scheme, at its port in `ports` (read at each
 * redirect, so a server may fill it in once it listens). `OPTIONS *`, which asks about the
 * server rather than a path, is a 200 whose `Allow` lists what the routes serve.
 */
/**
 * The message of the router's 404: `No route found for "GET http://host/path"`, with
 * ` (from "<Referer>")` when the request has one. Also for a listener that hides a path as if no
 * route had it (the profiler's, from clients not allowed). Thrown where it is made, so that an
 * error page's first frame is the throw.
 */
export function noRouteFoundMessage(request: Request, path: string): string {
  const referer = request.headers.referer;
  return `No route found for "${request.method} ${request.uriForPath(path)}"${referer ? ` (from "${referer}")` : ''}`;
}

export class RouterListener {
  readonly #logMatches: boolean;
  /** The Allow of `OPTIONS *`: the routes' methods and OPTIONS, which the server answers for `*`; null when a route takes any method. */
  readonly #serverAllow: string | null;

  constructor(
    readonly matcher: UrlMatcher,
    readonly logger: Logger | null = null,
    readonly ports: Readonly<SchemePorts> = { http: 80, https: 443 },
  ) {
    this.#logMatches = logger?.isEnabled('info') ?? false;
    const served = matcher.servedMethods;
    this.#serverAllow = served === null ? null : (served.includes('OPTIONS') ? served : [...served, 'OPTIONS']).join(', ');
  }

  getSubscribedEvents() {
    return { [KernelEvents.REQUEST]: ['onKernelRequest', 32] as const };
  }

  onKernelRequest(event: RequestEvent): void {
    const request = event.request;
    // Already routed: a sub-request made with its own controller (error pages, fragments).
    if (request.attributes.has('_controller')) return;

    // lookup() reports misses as values: no exception is thrown unless one reaches the client.
    const path = request.path;
    const context = { method: request.method, host: request.host, scheme: request.scheme };
    let result = this.matcher.lookup(path, context);
    // A GET or HEAD of another spelling of a route's path (`%c3%a9`, `%69`) is redirected to the
    // canonical one, as a toggled trailing slash is: never served under a path that checks made
    // before routing (the profiler's access, a firewall) did not see. Tried on a miss only, where
    // the error to come costs far more than the look; a 405 is one too (a POST catch-all must not
    // turn the link to a GET route into a 405), as a toggled trailing slash's hit wins over it.
    if ((result.kind === 'not-found' || result.kind === 'method-not-allowed') && (context.method === 'GET' || context.method === 'HEAD') && path.indexOf('%') !== -1) {
      const normalized = normalizePercentEncoding(path);
      const retry = normalized === path ? result : this.matcher.lookup(normalized, context);
      if (retry.kind === 'match') result = { kind: 'redirect', name: retry.name, route: retry.route, params: retry.params, redirect: { path: normalized } };
      else if (retry.kind === 'redirect') result = retry;
    }
    switch (result.kind) {
      case 'not-found': {
        // RFC 9110 9.3.7: OPTIONS * asks about the server in general; no route has `*` (Request allows it for OPTIONS only).
        if (path === '*' && request.method === 'OPTIONS') {
          event.setResponse(new Response(null, 200, this.#serverAllow === null ? undefined : { allow: this.#serverAllow }));
          return;
        }
        throw new NotFoundHttpError(noRouteFoundMessage(request, path), { cause: new ResourceNotFoundError(result.path) });
      }
      case 'method-not-allowed': {
        const allowed = result.allowedMethods;
        const cause = new MethodNotAllowedError(allowed);
        throw new MethodNotAllowedHttpError(allowed, `No route found for "${request.method} ${request.uriForPath(path)}": Method Not Allowed (Allow: ${allowed.join(', ')})`, { cause });
      }
      case 'malformed-path': {
        const cause = new MalformedPathError(result.parameter, result.path, { cause: result.cause });
        throw new BadRequestHttpError(cause.message, { cause });
      }
    }

    if (result.redirect !== undefined) {
      const scheme = result.redirect.scheme ?? request.scheme;
      // No redirect to a path with a `.` or `..` segment: the client would resolve it away, and browsers and
      // fetch() do so written `%2E%2E` too (the WHATWG URL standard), landing on another route (`/files/../x`
      // is requested as `/x`). No URL such a client keeps leads to this route with it: the miss stands. The
      // path of a trailing-slash or scheme redirect is the request's own, its dots maybe encoded (`/items/%2E%2E/`).
      if (SPELLED_DOT_SEGMENT.test(result.redirect.path)) {
        throw new NotFoundHttpError(noRouteFoundMessage(request, path), { cause: new ResourceNotFoundError(path) });
      }
      const query = request.queryString;
      const base = scheme === request.scheme ? request.schemeAndHttpHost : `${scheme}://${request.host}${portSuffix(scheme, this.ports)}`;
      event.setResponse(Response.redirect(`${base}${uriText(`${result.redirect.path}${query ? `?${query}` : ''}`)}`, 301));
      return;
    }

    const attributes = request.attributes;
    const params = result.params;
    const routeParams: Record<string, unknown> = {};
    for (const name in params) {
      attributes.set(name, params[name]);
      if (name === '_controller') continue;
      // setOwn: assigned, `__proto__` would set the prototype (a default's object), and the parameter would be lost.
      setOwn(routeParams, name, params[name]);
    }
    attributes.set('_route', result.name);
    attributes.set('_route_params', routeParams);
    if (this.#logMatches) {
      this.logger!.info('Matched route "{route}".', { route: result.name, route_parameters: params, request_uri: request.uri, method: request.method });
    }
  }
}

/** A character no URI may hold (RFC 3986: `<`, `"`, space, non-ASCII...), or a `%` that starts no percent-encoding. */
const NOT_URI_TEXT = /[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]|%(?![0-9A-Fa-f]{2})/gu;

/**
 * The path and query of a redirect as a URI: node:http lets `<`, `>` and `"` through in a target, and
 * an embedder's request may hold any text. Each such character is percent-encoded (its UTF-8 bytes),
 * so the Location is a valid URI and never carries the client's markup.
 */
function uriText(pathAndQuery: string): string {
  return pathAndQuery.replace(NOT_URI_TEXT, (character) => {
    let encoded = '';
    for (const byte of Buffer.from(character)) encoded += `%${byte < 16 ? '0' : ''}${byte.toString(16).toUpperCase()}`;
    return encoded;
  });
}

/** `:port` for a URL of `scheme`, empty for the scheme's default port. */
function portSuffix(scheme: 'http' | 'https', ports: Readonly<SchemePorts>): string {
  const port = ports[scheme];
  return port === (scheme === 'http' ? 80 : 443) ? '' : `:${port}`;
}
