// One adapter per router: build(routes) takes [method, path] pairs (a trailing `*` is a wildcard)
// and returns find(request) -> a truthy result on a hit, null on a miss. Each adapter is its own
// function literal so that V8 keeps separate type feedback per router.
import FindMyWay from 'find-my-way';
import { RegExpRouter } from 'hono/router/reg-exp-router';
import { Memoirist } from 'memoirist';
import { addRoute, createRouter, findRoute } from 'rou3';
import { compileRouter } from 'rou3/compiler';
import { Route, RouteCollection, UrlMatcher } from '../../dist/lib/routing/index.js';

const noop = () => {};

export const peers = [
  {
    name: 'find-my-way',
    build(routes) {
      const router = FindMyWay();
      for (const [method, path] of routes) router.on(method, path, noop);
      return (request) => router.find(request.method, request.path);
    },
  },
  {
    name: 'hono-regexp',
    build(routes) {
      const router = new RegExpRouter();
      for (const [method, path] of routes) router.add(method, path, path);
      // match() returns the handlers and the regex match, not parameters: build them as Hono's
      // own c.req.param() does (#getAllDecodedParams), so that every router returns a params object.
      return (request) => {
        const result = router.match(request.method, request.path);
        const handlers = result[0];
        if (handlers.length === 0) return null;
        const [handler, paramIndexMap] = handlers[0];
        const stash = result[1];
        const params = {};
        for (const key in paramIndexMap) {
          const value = stash ? stash[paramIndexMap[key]] : paramIndexMap[key];
          if (value !== undefined) params[key] = value.indexOf('%') === -1 ? value : decodeURIComponent(value);
        }
        return { handler, params };
      };
    },
  },
  {
    name: 'rou3',
    build(routes) {
      const router = createRouter();
      for (const [method, path] of routes) addRoute(router, method, path.endsWith('*') ? `${path}*` : path, path);
      return (request) => findRoute(router, request.method, request.path) ?? null;
    },
  },
  {
    name: 'rou3-compiled',
    build(routes) {
      const router = createRouter();
      for (const [method, path] of routes) addRoute(router, method, path.endsWith('*') ? `${path}*` : path, path);
      const find = compileRouter(router);
      return (request) => find(request.method, request.path) ?? null;
    },
  },
  {
    name: 'memoirist',
    build(routes) {
      const router = new Memoirist();
      for (const [method, path] of routes) router.add(method, path, path);
      return (request) => router.find(request.method, request.path);
    },
  },
];

/** Our matcher, each route with a `_controller` default as an application's routes have. */
export function buildOurs(routes) {
  const collection = new RouteCollection();
  routes.forEach(([method, path], index) => {
    collection.add(`r${index}`, new Route(path.endsWith('*') ? `${path}path` : path, { methods: [method], defaults: { _controller: noop } }));
  });
  return new UrlMatcher(collection);
}
