// The soak's embedded server: createKernel in debug mode with routes that read JSON bodies, stream
// their answer, make sub-requests and wait on request.signal, served with startServers on http and
// https as bin/serve serves. Started by bench/soak/index.mjs (`--target app`); prints bin/serve's
// `listening on <url>` lines, and on SIGTERM closes the servers, then the app, and exits 0.
// Arguments: <profiler dir> <max profiles> <tls dir>.
import { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { RequestType, Response } from '../../dist/kernel/index.js';
import { createKernel } from '../../dist/lib/app/index.js';
import { Route, RouteCollection } from '../../dist/lib/routing/index.js';
import { DEBUG_YOUNG_GENERATION_BYTES, capYoungGeneration, loadOrCreateDevCertificate, startServers } from '../../dist/lib/server/index.js';

const [dir, maxProfiles, tlsDir] = process.argv.slice(2);

/** The storage threads posted to (see the kill-storage route). */
const workers = new Set();
const routes = new RouteCollection();
const route = (name, path, methods, controller) => routes.add(name, new Route(path, { methods, defaults: { _controller: controller } }));

route('health', '/health', ['GET'], () => Response.json({ status: 'ok' }));
route('echo', '/echo', ['POST'], async (request) => {
  const body = await request.json();
  app.logger.info('echo of {size} characters', { size: JSON.stringify(body).length });
  return Response.json({ keys: Object.keys(body ?? {}).length }, 201);
});
route('upload', '/upload', ['PUT', 'POST'], async (request) => {
  const bytes = await request.bytes();
  return Response.json({ length: bytes.length });
});
route('stream', '/stream', ['GET'], (request) => {
  const count = Math.min(Number(request.query.get('n') ?? 20) || 20, 200);
  async function* chunks() {
    for (let i = 0; i < count; i++) {
      yield `chunk ${i} ${'x'.repeat(1000)}\n`;
      if (i % 10 === 9) await delay(5);
    }
  }
  return new Response(Readable.from(chunks()), 200, { 'content-type': 'text/plain' });
});
route('fragments', '/fragments', ['GET'], async (request) => {
  const parts = [];
  for (let i = 0; i < 3; i++) {
    const sub = request.duplicate({ attributes: { _controller: () => new Response(`<p>fragment ${i}</p>`, 200, { 'content-type': 'text/html' }) } });
    const response = await app.kernel.handle(sub, RequestType.SUB);
    parts.push(response.body);
  }
  const failing = request.duplicate({ attributes: { _controller: () => { throw new Error('fragment failed'); } } });
  const failed = await app.kernel.handle(failing, RequestType.SUB);
  parts.push(`<p>failing fragment: ${failed.status}</p>`);
  return new Response(`<!doctype html><html><body>${parts.join('')}</body></html>`, 200, { 'content-type': 'text/html' });
});
route('wait', '/wait', ['GET'], async (request) => {
  await delay(300, undefined, { signal: request.signal });
  return Response.json({ waited: 300 });
});
// The soak samples this: what keeps the event loop busy, the heap after a full collection (node --expose-gc) and,
// with ?thread, the storage thread's (a heap snapshot of it, which costs this process tens of MB of RSS).
route('state', '/soak-state', ['GET'], async (request) => {
  globalThis.gc?.();
  const resources = {};
  for (const name of process.getActiveResourcesInfo()) resources[name] = (resources[name] ?? 0) + 1;
  const { heapUsed, external, arrayBuffers } = process.memoryUsage();
  return Response.json({ resources, heapUsed, external, arrayBuffers, workerHeap: request.query.has('thread') ? await workerHeap() : null });
});

/** Live bytes of the storage thread's heap (its heap snapshot's, taken after a full collection), or null with no thread. */
async function workerHeap() {
  const worker = [...workers].at(-1);
  if (worker === undefined || worker.threadId === -1) return null;
  try {
    let text = '';
    for await (const chunk of await worker.getHeapSnapshot()) text += chunk;
    const snapshot = JSON.parse(text);
    const fields = snapshot.snapshot.meta.node_fields;
    const size = fields.indexOf('self_size');
    let bytes = 0;
    for (let i = size; i < snapshot.nodes.length; i += fields.length) bytes += snapshot.nodes[i];
    return bytes;
  } catch {
    return null;
  }
}
// The soak ends the profiler's storage thread now and then (`--kill-storage-every`), to see it started again:
// the workers are seen as they are posted to, the storage's own being private.
const postMessage = Worker.prototype.postMessage;
Worker.prototype.postMessage = function (...args) {
  workers.add(this);
  return postMessage.apply(this, args);
};
route('kill-storage', '/soak-kill-storage', ['POST'], async () => {
  const live = [...workers];
  workers.clear();
  await Promise.all(live.map((worker) => worker.terminate()));
  return Response.json({ terminated: live.length });
});
route('boom', '/boom', ['GET'], () => {
  throw new Error('boom', { cause: new TypeError('the cause') });
});

const app = createKernel({ routes, env: 'staging', debug: true, profiler: { dir, bounds: { maxProfiles: Number(maxProfiles) } } });
capYoungGeneration(DEBUG_YOUNG_GENERATION_BYTES);
const { cert, key } = await loadOrCreateDevCertificate(tlsDir);
await app.ready();
const running = await startServers(app.listener, { host: '127.0.0.1', port: 0, httpsPort: 0, tls: { cert, key } });
for (const url of running.urls) process.stdout.write(`listening on ${url}\n`);

process.once('SIGTERM', async () => {
  await running.close();
  await app.close();
  process.exit(0);
});
