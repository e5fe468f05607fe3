import type { Controller } from './events.js';
import type { Request } from './request.js';

/** Works out the arguments a controller is called with. */
export interface ArgumentResolverInterface {
  getArguments(request: Request, controller: Controller): unknown[];
}

/** One source of arguments: returns the full list, or undefined to let the next resolver try. */
export type ArgumentValueResolver = (request: Request, controller: Controller) => unknown[] | undefined;

const EMPTY_PARAMS: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * Calls each registered resolver in turn; the default gives every controller
 * `(request, routeParams)`.
 */
export class ArgumentResolver implements ArgumentResolverInterface {
  constructor(readonly resolvers: readonly ArgumentValueResolver[] = []) {}

  getArguments(request: Request, controller: Controller): unknown[] {
    for (const resolver of this.resolvers) {
      const args = resolver(request, controller);
      if (args !== undefined) return args;
    }
    return [request, (request.attributes.get('_route_params') as Record<string, unknown> | undefined) ?? EMPTY_PARAMS];
  }
}
