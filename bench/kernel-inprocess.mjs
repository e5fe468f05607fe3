// The kernel's own cost per request, without sockets: the reference app (debug off, staging, so
// with X-Robots-Tag) answers GET /health through handleMaybeAsync and terminateMaybeAsync, with
// the Request made in the loop. Prints the best and the median of five batches, in ns per request.
//
//   npx tsc -p tsconfig.json && taskset -c 0 node bench/kernel-inprocess.mjs [requests]
//
// Compare builds by running this alternately for each (figures move by about 5% between runs).
import { createApp } from '../dist/lib/app/index.js';
import { Request } from '../dist/kernel/index.js';

const requests = Number(process.argv[2] ?? 2_000_000);
const batches = 5;
const app = createApp({ env: 'staging', debug: false, stderrLogLevel: false });
const headers = { host: '127.0.0.1:8000', 'user-agent': 'autocannon' };

function batch(count) {
  let statuses = 0;
  for (let i = 0; i < count; i++) {
    const request = new Request('/health', { method: 'GET', headers, remoteAddress: '127.0.0.1' });
    const response = app.kernel.handleMaybeAsync(request);
    if (response instanceof Promise) throw new Error('GET /health went asynchronous: the synchronous path is what this measures');
    statuses += response.status;
    app.kernel.terminateMaybeAsync(request, response);
  }
  if (statuses !== count * 200) throw new Error(`expected ${count} answers of 200, got a status sum of ${statuses}`);
}

batch(300_000); // warm-up: every function optimised before measuring
const perRequest = [];
for (let k = 0; k < batches; k++) {
  const started = process.hrtime.bigint();
  batch(requests / batches);
  perRequest.push(Number(process.hrtime.bigint() - started) / (requests / batches));
}
perRequest.sort((a, b) => a - b);
console.log(`kernel in process, GET /health: best ${perRequest[0].toFixed(0)} ns per request, median ${perRequest[2].toFixed(0)} ns (node ${process.version})`);
await app.close();
