import { Response, type Request } from '../../kernel/index.js';
import { html } from '../errors/index.js';
import { Route, RouteCollection } from '../routing/index.js';
import { createKernel, type KernelApp, type KernelOptions } from './create-kernel.js';

/** The reference service's options: those of createKernel, with the service's defaults (staging, debug on). */
export type AppOptions = Omit<KernelOptions, 'routes'>;

/** `GET /`: the welcome page (a HEAD is answered as GET, so that its Content-Length is GET's). */
export function homeController(request: Request): Response {
  const page = html`<!DOCTYPE html>
<html lang="en">
<head><meta charset="UTF-8"><title>http-kernel</title><link rel="icon" href="data:,">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem}@media(prefers-color-scheme:dark){body{background:#111;color:#eee}a{color:#8cf}}</style>
</head>
<body>
<main>
<h1>Welcome to http-kernel</h1>
<p>The service is running. Try <a href="/health">/health</a>.</p>
<p>You asked for <code>${request.method === 'HEAD' ? 'GET' : request.method} ${request.path}</code>.</p>
</main>
</body>
</html>
`;
  return new Response(String(page), 200, { 'content-type': 'text/html; charset=UTF-8' });
}

const HEALTH_BODY = JSON.stringify({ status: 'ok' });

/** `GET /health`: `{"status":"ok"}`. */
export function healthController(): Response {
  return new Response(HEALTH_BODY, 200, { 'content-type': 'application/json' });
}

/** The reference service's routes. */
export function referenceRoutes(): RouteCollection {
  const routes = new RouteCollection();
  routes.add('home', new Route('/', { methods: ['GET'], defaults: { _controller: homeController } }));
  routes.add('health', new Route('/health', { methods: ['GET'], defaults: { _controller: healthController } }));
  return routes;
}

/** The reference service that `bin/serve` runs. */
export function createApp(options: AppOptions = {}): KernelApp {
  // Its routes are the reference service's: routes of your own would be dropped without a word.
  if (options !== null && typeof options === 'object' && Object.hasOwn(options, 'routes')) {
    throw new TypeError('createApp() serves the reference routes (/ and /health); for routes of your own, call createKernel({ routes }).');
  }
  return createKernel({ env: 'staging', debug: true, ...options, routes: referenceRoutes() });
}
