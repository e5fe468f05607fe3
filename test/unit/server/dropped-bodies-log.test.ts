// The part of every request's terminate by the server and inject() that says how its sub-requests' stream bodies end (see
// droppedBodiesLog()): a request with nothing to say (GET /health, no sub-request) must cost it nothing, no closure nor array.
import { PerformanceObserver } from 'node:perf_hooks';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ControllerResolver, EventDispatcher, HttpKernel, Request, RequestStack } from '../../../kernel/index.js';
import { Logger, createBus } from '../../../lib/log/index.js';
import { droppedBodiesLog } from '../../../lib/server/node-adapter.js';

const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

for (const asyncContext of [false, true]) {
  test(`a request's terminate with no record to say allocates nothing: a million of them run no garbage collection (asyncContext ${asyncContext})`, async () => {
    const kernel = new HttpKernel(new EventDispatcher(), new ControllerResolver(), new RequestStack({ asyncContext }));
    // Given a logger, it also takes the kernel's records of the sub-requests whose main request it cannot know.
    const terminated = droppedBodiesLog(kernel, new Logger({ bus: createBus() }));
    const requests = Array.from({ length: 1000 }, () => Request.create('/health'));
    // Each request has had its first terminate (its late-record hook set), and the code is warm.
    for (let i = 0; i < 20_000; i++) terminated(requests[i % requests.length]!);
    let collections = 0;
    const observer = new PerformanceObserver((list) => void (collections += list.getEntries().length));
    observer.observe({ entryTypes: ['gc'] });
    await wait(20);
    collections = 0;
    // Before, each call made three closures, a context and two arrays (and, without request context, the request's slot array): some 100 collections.
    for (let i = 0; i < 1_000_000; i++) terminated(requests[i % requests.length]!);
    await wait(20);
    observer.disconnect();
    assert.ok(collections <= 1, `${collections} garbage collections`);
  });
}

test.run();
