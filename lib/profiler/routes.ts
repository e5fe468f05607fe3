import { Route, RouteCollection } from '../routing/index.js';
import type { ProfilerController } from './profiler-controller.js';

/** The profiler's routes: `_profiler_home`, `_profiler_search`, `_profiler_latest`, `_profiler` (the token), `_wdt`. */
export function profilerRoutes(controller: ProfilerController): RouteCollection {
  const routes = new RouteCollection();
  const get = { methods: ['GET'] };
  routes.add('_profiler_home', new Route('/_profiler/', { ...get, defaults: { _controller: controller.home.bind(controller) } }));
  routes.add('_profiler_search', new Route('/_profiler/search', { ...get, defaults: { _controller: controller.search.bind(controller) } }));
  routes.add('_profiler_latest', new Route('/_profiler/latest', { ...get, defaults: { _controller: controller.latest.bind(controller) } }));
  routes.add('_profiler', new Route('/_profiler/:token', { ...get, defaults: { _controller: controller.panel.bind(controller) } }));
  routes.add('_wdt', new Route('/_wdt/:token', { ...get, defaults: { _controller: controller.toolbar.bind(controller) } }));
  return routes;
}
