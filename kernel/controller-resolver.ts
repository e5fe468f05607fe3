import { closestName } from './closest-name.js';
import type { Controller } from './events.js';
import { InvalidControllerError } from './http-errors.js';
import type { Request } from './request.js';

/** Finds the callable that handles a request. */
export interface ControllerResolverInterface {
  /** The controller for the request, or null when it names none. */
  getController(request: Request): Controller | null;
}

/** How many registered names the error for an unknown one lists. */
const LISTED_NAMES = 10;
/** How many unknown names' messages are kept (the oldest asked for goes first). */
const UNKNOWN_NAMES_KEPT = 64;

/**
 * Reads `request.attributes._controller`: a function, the name of a registered
 * controller, or an `[object, 'method']` pair.
 */
export class ControllerResolver implements ControllerResolverInterface {
  readonly #named = new Map<string, Controller>();
  /**
   * What the error says for unknown names asked for lately. A misconfigured route fails on every
   * request, and the "Did you mean" costs an edit distance per registered name (68 ms with 10,000).
   */
  readonly #unknownMessages = new Map<string, string>();

  constructor(controllers: Record<string, Controller> = {}) {
    for (const [name, controller] of Object.entries(controllers)) this.register(name, controller);
  }

  /** Makes `controller` reachable as `_controller: name`. */
  register(name: string, controller: Controller): this {
    this.#named.set(name, controller);
    this.#unknownMessages.clear();
    return this;
  }

  getController(request: Request): Controller | null {
    const spec = request.attributes.get('_controller');
    if (spec === undefined || spec === null) return null;
    if (typeof spec === 'function') return spec as Controller;
    if (typeof spec === 'string') {
      const controller = this.#named.get(spec);
      if (controller === undefined) {
        throw new InvalidControllerError(`The controller for URI "${request.path}" is not callable: ${this.#unknownName(spec)}`);
      }
      return controller;
    }
    if (Array.isArray(spec) && spec.length === 2 && typeof spec[1] === 'string') {
      const [target, method] = spec as [Record<string, unknown>, string];
      const fn = target?.[method];
      if (typeof fn === 'function') return fn.bind(target) as Controller;
      throw new InvalidControllerError(`The controller for URI "${request.path}" is not callable: expected method "${method}" on class "${classOf(target)}", which has ${methodList(target)}.`);
    }
    throw new InvalidControllerError(`The controller for URI "${request.path}" is not callable.`);
  }

  #unknownName(name: string): string {
    let message = this.#unknownMessages.get(name);
    if (message !== undefined) return message;
    message = this.#describeUnknown(name);
    if (this.#unknownMessages.size >= UNKNOWN_NAMES_KEPT) this.#unknownMessages.delete(this.#unknownMessages.keys().next().value!);
    this.#unknownMessages.set(name, message);
    return message;
  }

  /** Says which names are registered, and the one `name` was likely meant to be, as Symfony's "Did you mean" messages do. */
  #describeUnknown(name: string): string {
    const said = `no controller is registered as "${name}"`;
    if (this.#named.size === 0) return `${said}, nor under any other name.`;
    const names = [...this.#named.keys()].sort();
    const closest = closestName(name, names);
    const listed = `"${names.slice(0, LISTED_NAMES).join('", "')}"${names.length > LISTED_NAMES ? ` and ${names.length - LISTED_NAMES} more` : ''}`;
    return `${said}.${closest === undefined ? '' : ` Did you mean "${closest}"?`} The registered controllers are ${listed}.`;
  }
}

function classOf(target: unknown): string {
  return (target as { constructor?: { name?: string } } | null)?.constructor?.name || 'Object';
}

/** The methods an object has (own and inherited, Object's left out), for the error that names a missing one. */
function methodList(target: unknown): string {
  const names = new Set<string>();
  for (let proto = target; proto !== null && proto !== undefined && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor') continue;
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      if (typeof descriptor?.value === 'function') names.add(name);
    }
  }
  if (names.size === 0) return 'no methods';
  const sorted = [...names].sort();
  return `"${sorted.slice(0, 20).join('", "')}"${sorted.length > 20 ? ` and ${sorted.length - 20} more` : ''}`;
}

/**
 * A controller as messages and the profiler name it: a function's name, a registered name, `Class::method`; null for none.
 * Never throws: it names whatever a request's `_controller` attribute holds, from a timer too (the response timeout),
 * where a Proxy whose traps throw, or a name that is no string, would crash the process; such a value is `unnamed`.
 */
export function describeController(controller: unknown): string | null {
  if (controller === undefined || controller === null) return null;
  try {
    if (typeof controller === 'function') {
      const name: unknown = controller.name;
      return typeof name === 'string' && name !== '' ? name : 'anonymous function';
    }
    if (typeof controller === 'string') return controller;
    if (Array.isArray(controller) && controller.length === 2) {
      const owner: unknown = (controller[0] as object | null | undefined)?.constructor?.name;
      return `${typeof owner === 'string' ? owner : 'object'}::${String(controller[1])}`;
    }
    return typeof controller;
  } catch {
    return 'unnamed';
  }
}
