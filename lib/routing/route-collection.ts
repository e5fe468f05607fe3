import { FrozenCollectionError } from './errors.js';
import { describeValue } from '../../kernel/describe-value.js';
import { Route } from './route.js';

/** Named routes in priority order: the matcher tries them in insertion order, first match wins. */
export class RouteCollection implements Iterable<[string, Route]> {
  readonly #routes = new Map<string, Route>();
  /** Why add() and remove() are refused, once frozen. */
  #frozen: string | null = null;

  /** Adds `route` under `name`, last in priority; an existing route of that name is replaced and moves last (as in Symfony). */
  add(name: string, route: Route): this {
    if (typeof name !== 'string' || name === '') throw new TypeError('A route name must be a non-empty string.');
    if (!(route instanceof Route)) throw new TypeError(`Route "${name}" is a Route (new Route('/path', options)), not ${describeValue(route)}.`);
    if (this.#frozen !== null) throw new FrozenCollectionError('add', name, this.#frozen);
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
    if (this.#frozen !== null) throw new FrozenCollectionError('remove', name, this.#frozen);
    return this.#routes.delete(name);
  }

  /**
   * Refuses every later add() and remove() with a FrozenCollectionError saying `reason`: for the
   * owner of a matcher compiled from the collection, which would never see such changes.
   */
  freeze(reason: string): this {
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
}
