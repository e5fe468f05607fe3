import type { Controller, ControllerResolverInterface, Request } from '../../kernel/index.js';

/**
 * An embedder's controller resolver that the kernel's own controllers go around: the error page's and
 * the profiler's pages' are functions the kernel sets as `_controller` itself, which a resolver that
 * knows the embedder's controllers (by route or by name) would not find, failing every such page.
 */
export class OwnControllerResolver implements ControllerResolverInterface {
  constructor(
    /** The embedder's resolver, asked for every other request. */
    readonly resolver: ControllerResolverInterface,
    readonly own: ReadonlySet<Controller>,
  ) {}

  getController(request: Request): Controller | null {
    const spec = request.attributes.get('_controller');
    return typeof spec === 'function' && this.own.has(spec as Controller) ? (spec as Controller) : this.resolver.getController(request);
  }
}
