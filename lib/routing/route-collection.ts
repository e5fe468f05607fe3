import { FrozenCollectionError, InvalidRouteError, type CollectionChange } from './errors.js';
import { describeValue } from '../../kernel/describe-value.js';
import { isNameValueObject } from '../../kernel/name-value-object.js';
import { compilePattern } from './pattern.js';
import { compiledRoute, Route, type RouteChanges } from './route.js';

/**
 * Named routes in priority order: the matcher tries them in insertion order, first match wins.
 * The group methods (addPrefix(), setHost(), ...) change every route it holds then, as Symfony's
 * RouteCollection does; a Route being immutable, each is replaced by a new one (Route.with()).
 */
export class RouteCollection implements Iterable<[string, Route]> {
  #routes = new Map<string, Route>();
  /** Why changes are refused, once frozen. */
  #frozen: string | null = null;

  /** Adds `route` under `name`, last in priority; an existing route of that name is replaced and moves last (as in Symfony). */
  add(name: string, route: Route): this {
    if (typeof name !== 'string' || name === '') throw new TypeError('A route name must be a non-empty string.');
    if (!(route instanceof Route)) throw new TypeError(`Route "${name}" is a Route (new Route('/path', options)), not ${describeValue(route)}.`);
    this.#refuseFrozen('add', name);
    this.#routes.delete(name);
    this.#routes.set(name, route);
    return this;
  }

  /** The route named `name`, or undefined. */
  get(name: string): Route | undefined {
    return this.#routes.get(name);
  }

  /** A snapshot of every route, in priority order. */
  all(): Map<string, Route> {
    return new Map(this.#routes);
  }

  /** Removes the route named `name`; true if there was one. */
  remove(name: string): boolean {
    this.#refuseFrozen('remove', name);
    return this.#routes.delete(name);
  }

  /**
   * Adds the routes of `collection` last, in their order; a route of a name already taken replaces
   * that route and moves last (as in Symfony). Later changes to `collection` do not reach this one.
   */
  addCollection(collection: RouteCollection): this {
    if (!(collection instanceof RouteCollection)) throw new TypeError(`addCollection() takes a RouteCollection, not ${describeValue(collection)}.`);
    this.#refuseFrozen('addCollection');
    for (const [name, route] of collection.all()) {
      this.#routes.delete(name);
      this.#routes.set(name, route);
    }
    return this;
  }

  /**
   * Puts `prefix` before every route's path (`/api` makes `/users/:id` `/api/users/:id`, and `/`
   * `/api/`), its slashes and spaces around trimmed, and adds `defaults` and `requirements` to every
   * route (replacing those of the same name), as Symfony's addPrefix() does; an empty prefix changes
   * no path (Symfony then drops `defaults` and `requirements` too). The prefix may hold parameters
   * (`/:locale`), but none of a route's path or host.
   */
  addPrefix(prefix: string, defaults: Record<string, unknown> = {}, requirements: Record<string, string | RegExp> = {}): this {
    if (typeof prefix !== 'string') throw new TypeError(`addPrefix() takes a prefix that is a string ('/api'), not ${describeValue(prefix)}.`);
    checkNamed('addPrefix', 'defaults', defaults);
    checkNamed('addPrefix', 'requirements', requirements);
    this.#refuseFrozen('addPrefix');
    const trimmed = prefix.trim().replace(/^\/+|\/+$/g, '');
    // An optional group opening the prefix holds its slash (`{/:locale}`), as one opening a path does.
    const head = trimmed === '' ? '' : trimmed.startsWith('{/') ? trimmed : `/${trimmed}`;
    // On its own first, so that a malformed prefix is named as such.
    const names = head === '' ? [] : compilePattern(head, '/', {}, 'route prefix').names;
    // Every route's path starts with "/" whatever its groups: a prefix that leaves a "/" before it (`/api/{:v}` without
    // its group) puts "//" in all of them, which is the prefix's fault, said once, not once per route.
    if (head !== '') refusePrefixOfEveryRoute(head);
    if (head === '' && Object.keys(defaults).length === 0 && Object.keys(requirements).length === 0) return this;
    return this.#change('addPrefix', (route, name) => {
      const { path, host, options } = compiledRoute(route);
      for (const [where, pattern, taken] of [['', route.path, path.names], ['the host of ', route.host, host?.names ?? []]] as const) {
        const param = names.find((prefixed) => taken.includes(prefixed));
        if (param !== undefined) {
          throw new InvalidRouteError(`Parameter "${param}" of the prefix "${head}" is also a parameter of ${where}route "${name}" ("${pattern}"): rename one of them.`);
        }
      }
      return {
        path: `${head}${route.path}`,
        defaults: { ...route.defaults, ...defaults },
        requirements: { ...options.requirements, ...requirements },
      };
    });
  }

  /** Puts `prefix` before every route's name (`api_`: `show` becomes `api_show`), keeping their order. */
  addNamePrefix(prefix: string): this {
    if (typeof prefix !== 'string') throw new TypeError(`addNamePrefix() takes a prefix that is a string ('api_'), not ${describeValue(prefix)}.`);
    this.#refuseFrozen('addNamePrefix');
    this.#routes = new Map([...this.#routes].map(([name, route]) => [`${prefix}${name}`, route]));
    return this;
  }

  /** Adds `defaults` to every route, replacing those of the same name. */
  addDefaults(defaults: Record<string, unknown>): this {
    checkNamed('addDefaults', 'defaults', defaults);
    this.#refuseFrozen('addDefaults');
    return this.#change('addDefaults', (route) => ({ defaults: { ...route.defaults, ...defaults } }));
  }

  /** Adds `requirements` to every route, replacing those of the same name. */
  addRequirements(requirements: Record<string, string | RegExp>): this {
    checkNamed('addRequirements', 'requirements', requirements);
    this.#refuseFrozen('addRequirements');
    return this.#change('addRequirements', (route) => ({ requirements: { ...compiledRoute(route).options.requirements, ...requirements } }));
  }

  /** Sets every route's host pattern (`''`: none), and adds `defaults` and `requirements` to every route. */
  setHost(pattern: string, defaults: Record<string, unknown> = {}, requirements: Record<string, string | RegExp> = {}): this {
    if (typeof pattern !== 'string') throw new TypeError(`setHost() takes a host pattern that is a string (':tenant.example.com', or '' for none), not ${describeValue(pattern)}.`);
    checkNamed('setHost', 'defaults', defaults);
    checkNamed('setHost', 'requirements', requirements);
    this.#refuseFrozen('setHost');
    return this.#change('setHost', (route) => ({
      host: pattern,
      defaults: { ...route.defaults, ...defaults },
      requirements: { ...compiledRoute(route).options.requirements, ...requirements },
    }));
  }

  /** Sets the schemes every route accepts (`['https']`; none: any). */
  setSchemes(schemes: readonly string[]): this {
    if (!Array.isArray(schemes)) throw new TypeError(`setSchemes() takes an array (['https']), not ${describeValue(schemes)}.`);
    this.#refuseFrozen('setSchemes');
    return this.#change('setSchemes', () => ({ schemes }));
  }

  /** Sets the methods every route accepts (`['GET']`; none: any). */
  setMethods(methods: readonly string[]): this {
    if (!Array.isArray(methods)) throw new TypeError(`setMethods() takes an array (['GET']), not ${describeValue(methods)}.`);
    this.#refuseFrozen('setMethods');
    return this.#change('setMethods', () => ({ methods }));
  }

  /**
   * Refuses every later change (add(), remove(), addPrefix(), ...) with a FrozenCollectionError saying
   * `reason` (default: the collection was frozen): for the owner of a matcher compiled from the
   * collection, which would never see such changes. A second call keeps the first reason.
   */
  freeze(reason = 'the collection was frozen.'): this {
    if (typeof reason !== 'string' || reason === '') {
      throw new TypeError(`freeze() takes the reason changes are refused, a non-empty string ('compiled already'), not ${describeValue(reason)}.`);
    }
    this.#frozen ??= reason;
    return this;
  }

  /** Whether the collection was frozen (see freeze()). */
  get isFrozen(): boolean {
    return this.#frozen !== null;
  }

  /** How many routes the collection holds. */
  get count(): number {
    return this.#routes.size;
  }

  [Symbol.iterator](): IterableIterator<[string, Route]> {
    return this.#routes.entries();
  }

  #refuseFrozen(change: CollectionChange, name: string | null = null): void {
    if (this.#frozen !== null) throw new FrozenCollectionError(change, name, this.#frozen);
  }

  /** Replaces every route by the one `changes` makes of it; all of them or, when one is invalid, none. */
  #change(method: CollectionChange, changes: (route: Route, name: string) => RouteChanges): this {
    const routes = new Map<string, Route>();
    for (const [name, route] of this.#routes) {
      const change = changes(route, name);
      try {
        routes.set(name, route.with(change));
      } catch (error) {
        if (!(error instanceof InvalidRouteError)) throw error;
        const path = change.path ?? route.path;
        throw new InvalidRouteError(`${method}() makes route "${name}" ("${path}") invalid: ${error.message}`, { cause: error });
      }
    }
    this.#routes = routes;
    return this;
  }
}

/** Refuses `value` when it is no object by name (a Map, a list), whose entries a spread would lose. */
function checkNamed(method: string, what: string, value: unknown): void {
  if (!isNameValueObject(value)) throw new TypeError(`The ${what} given to ${method}() are an object ({ name: value }), not ${describeValue(value)}.`);
}

/** Refuses a prefix after which a route's path, which starts with "/", has "//" in it, whatever the route; `head` is valid on its own. */
function refusePrefixOfEveryRoute(head: string): void {
  const probe = `${head}/x`;
  try {
    compilePattern(probe, '/', {}, 'route prefix');
  } catch (error) {
    if (!(error instanceof InvalidRouteError)) throw error;
    const reason = error.message.replace(`Invalid route prefix "${probe}": `, '');
    throw new InvalidRouteError(`Invalid route prefix "${head}": it puts "//" in the path of every route, as in "${probe}" for a route "/x": ${reason}`, { cause: error });
  }
}
