// The routing component: routes, their collection, the matcher and the URL generator.
export * from './errors.js';
export { Route, type RouteChanges, type RouteOptions } from './route.js';
export { RouteCollection } from './route-collection.js';
export * from './url-matcher.js';
export * from './url-generator.js';
export * from './router-listener.js';
