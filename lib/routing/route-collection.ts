import type { Route } from './route.js';

/** Named routes in priority order: the matcher tries them in insertion order, first match wins. */
export class RouteCollection implements Iterable<[string, Route]> {
  readonly #routes = new Map<string, Route>();

  /** Adds `route` under `name`, last in priority; an existing route of that name is replaced and moves last (as in Symfony). */
  add(name: string, route: Route): this {
    if (typeof name !== 'string' || name === '') throw new TypeError('A route name must be a non-empty string.');
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
    return this.#routes.delete(name);
  }

  /** How many routes the collection holds. */
  get count(): number {
    return this.#routes.size;
  }

  [Symbol.iterator](): IterableIterator<[string, Route]> {
    return this.#routes.entries();
  }
}
