import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Request, type Response } from '../../../kernel/index.js';
import { createApp } from '../../../lib/app/index.js';
import { MemoryStorage } from '../../../lib/profiler/index.js';

/** A debug app with one recorded request, and a way to ask it something as a client outside the allowed range. */
async function appWithAProfile() {
  const app = createApp({ profiler: { storage: new MemoryStorage(), saveDelayMs: 0 }, stderrLogLevel: false });
  const seed = Request.create('/health');
  await app.kernel.terminate(seed, await app.kernel.handle(seed));
  const asOutsider = (target: string, method = 'GET'): Promise<Response> => app.kernel.handle(Request.create(target, method, { remoteAddress: '203.0.113.7' }));
  return { app, asOutsider };
}

test('another spelling of a profiler path (%5f, %5F, an encoded letter) is a 404 for a client that is not allowed', async () => {
  const { app, asOutsider } = await appWithAProfile();
  try {
    for (const target of ['/%5fprofiler/', '/%5Fprofiler/', '/_%70rofiler/', '/%5fprofiler/latest', '/%5fprofiler/search?ip=127.0.0.1', '/%5Fwdt/abcdef', '/%5f%70rofiler/']) {
      for (const method of ['GET', 'HEAD', 'POST']) {
        const response = await asOutsider(target, method);
        assert.is(response.status, 404, `${method} ${target}`);
        assert.is(response.getHeader('location'), undefined, `${method} ${target}`);
      }
    }
    // No redirect either: the trailing-slash retry of the normalized path would name the profiler.
    assert.is((await asOutsider('/%5fprofiler')).status, 404);
  } finally {
    await app.close();
  }
});

test('an allowed client is sent from another spelling of a profiler path to the canonical one', async () => {
  const { app } = await appWithAProfile();
  try {
    const response = await app.kernel.handle(Request.create('/%5fprofiler/'));
    assert.is(response.status, 301);
    assert.is(response.getHeader('location'), 'http://localhost/_profiler/');
  } finally {
    await app.close();
  }
});

test.run();
