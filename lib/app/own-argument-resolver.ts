import { ArgumentResolver, type ArgumentResolverInterface, type Controller, type Request } from '../../kernel/index.js';

/**
 * An embedder's argument resolver that the kernel's own controllers go around: the profiler's pages
 * take `(request, routeParams)`, which a resolver written for the embedder's controllers (giving them
 * services, say) would not give.
 */
export class OwnArgumentResolver implements ArgumentResolverInterface {
  readonly #defaults = new ArgumentResolver();

  constructor(
    /** The embedder's resolver, asked for every other controller. */
    readonly resolver: ArgumentResolverInterface,
    readonly own: ReadonlySet<Controller>,
  ) {}

  getArguments(request: Request, controller: Controller): unknown[] {
    return this.own.has(controller) ? this.#defaults.getArguments(request, controller) : this.resolver.getArguments(request, controller);
  }
}
