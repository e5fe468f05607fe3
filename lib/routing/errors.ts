// The routing component's errors. Each has a stable `code`; the matcher's three also carry the
// HTTP `status` (and `headers`) they stand for, so a listener can map them without a lookup table.

/** Options every routing error accepts: the ES2022 `cause`. */
export interface RoutingErrorOptions {
  cause?: unknown;
}

/** Base class of every error thrown by lib/routing. */
export class RoutingError extends Error {
  /** Stable machine-readable code, `HK_ROUTING_*`. */
  readonly code: string;
  /** The HTTP status this error stands for when it reaches a client (500: a programming error). */
  readonly status: number;
  /** Response headers that go with `status`. */
  readonly headers: Readonly<Record<string, string>>;

  constructor(message: string, code: string, status = 500, headers: Record<string, string> = {}, options?: RoutingErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.status = status;
    this.headers = headers;
  }
}

/** No route matches the path (after the GET/HEAD retries); `path` is the last path tried. */
export class ResourceNotFoundError extends RoutingError {
  readonly path: string;

  constructor(path: string, options?: RoutingErrorOptions) {
    super(`No routes found for "${path}".`, 'HK_ROUTING_NOT_FOUND', 404, {}, options);
    this.path = path;
  }
}

/** Routes match the path, but none for the request method. */
export class MethodNotAllowedError extends RoutingError {
  /** Uppercase, deduplicated, in route order; a GET route contributes `GET, HEAD`. */
  readonly allowedMethods: readonly string[];

  constructor(allowedMethods: readonly string[], options?: RoutingErrorOptions) {
    const allow = allowedMethods.join(', ');
    super(`Method Not Allowed (Allow: ${allow})`, 'HK_ROUTING_METHOD_NOT_ALLOWED', 405, { allow }, options);
    this.allowedMethods = allowedMethods;
  }
}

/** A matched path parameter holds a malformed percent-encoding: the client's mistake, a 400. */
export class MalformedPathError extends RoutingError {
  readonly parameter: string;
  readonly path: string;

  constructor(parameter: string, path: string, options?: RoutingErrorOptions) {
    super(`Malformed percent-encoding in parameter "${parameter}" of path "${path}".`, 'HK_ROUTING_MALFORMED_PATH', 400, {}, options);
    this.parameter = parameter;
    this.path = path;
  }
}

/** A route's pattern, host or requirements cannot be compiled; thrown when the Route is built. */
export class InvalidRouteError extends RoutingError {
  constructor(message: string, options?: RoutingErrorOptions) {
    super(message, 'HK_ROUTING_INVALID_ROUTE', 500, {}, options);
  }
}

/** What a frozen collection refuses: a RouteCollection method that changes its routes. */
export type CollectionChange = 'add' | 'remove' | 'addCollection' | 'addPrefix' | 'addNamePrefix' | 'addDefaults' | 'addRequirements' | 'setHost' | 'setSchemes' | 'setMethods';

/** A collection changed after it was frozen (see RouteCollection.freeze): a route added or removed, or every route changed. */
export class FrozenCollectionError extends RoutingError {
  /** The method refused. */
  readonly change: CollectionChange;
  /** The route added or removed; null for a change to every route (addPrefix(), setHost(), ...). */
  readonly routeName: string | null;

  constructor(change: CollectionChange, routeName: string | null, reason: string, options?: RoutingErrorOptions) {
    const what = routeName === null ? `call ${change}()` : `${change} route "${routeName}"`;
    super(`Cannot ${what}: ${reason}`, 'HK_ROUTING_COLLECTION_FROZEN', 500, {}, options);
    this.change = change;
    this.routeName = routeName;
  }
}

/** The generator was asked for a route name the collection does not hold. */
export class RouteNotFoundError extends RoutingError {
  readonly routeName: string;

  constructor(routeName: string, options?: RoutingErrorOptions) {
    super(`Unable to generate a URL for the named route "${routeName}" as such route does not exist.`, 'HK_ROUTING_ROUTE_NOT_FOUND', 500, {}, options);
    this.routeName = routeName;
  }
}

/** Options of MissingMandatoryParametersError. */
export interface MissingMandatoryParametersErrorOptions extends RoutingErrorOptions {
  /** Why parameters of optional groups are needed (the group that cannot be left out), when some are. */
  reason?: string;
}

/** The generator lacks values for parameters the route's path (or host) cannot do without, in the URL asked for. */
export class MissingMandatoryParametersError extends RoutingError {
  readonly routeName: string;
  readonly missingParameters: readonly string[];

  constructor(routeName: string, missingParameters: readonly string[], options: MissingMandatoryParametersErrorOptions = {}) {
    const names = missingParameters.map((name) => `"${name}"`).join(', ');
    const reason = options.reason === undefined ? '' : `: ${options.reason}`;
    super(`Some mandatory parameters are missing (${names}) to generate a URL for route "${routeName}"${reason}.`, 'HK_ROUTING_MISSING_PARAMETERS', 500, {}, options);
    this.routeName = routeName;
    this.missingParameters = missingParameters;
  }
}

/** Options of InvalidParameterError. */
export interface InvalidParameterErrorOptions extends RoutingErrorOptions {
  /** What the value must be, when that is not its requirement (default `match "<requirement>"`). */
  expected?: string;
}

/** A value given to the generator does not satisfy the parameter's requirement, or cannot be written in a URL at all. */
export class InvalidParameterError extends RoutingError {
  readonly routeName: string;
  readonly parameter: string;
  readonly requirement: string;
  readonly value: unknown;

  constructor(routeName: string, parameter: string, requirement: string, value: unknown, options: InvalidParameterErrorOptions = {}) {
    super(
      `Parameter "${parameter}" for route "${routeName}" must ${options.expected ?? `match "${requirement}"`} (${describeValue(value)} given) to generate a corresponding URL.`,
      'HK_ROUTING_INVALID_PARAMETER',
      500,
      {},
      options,
    );
    this.routeName = routeName;
    this.parameter = parameter;
    this.requirement = requirement;
    this.value = value;
  }
}

// The value as the message shows it: quoted text, or the object's tag when it has no text (a null-prototype object).
function describeValue(value: unknown): string {
  try {
    return JSON.stringify(String(value));
  } catch {
    return Object.prototype.toString.call(value);
  }
}
