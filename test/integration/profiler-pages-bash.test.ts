// Every answer of the profiler's pages, redirects included, is private to the one who asked.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SCHEMES, fetchFrom, savedProfile, startTestServer, type TestServer } from './harness.js';

for (const scheme of SCHEMES) {
  const test = suite(`profiler pages over ${scheme}`);
  let server: TestServer;

  test.before(async () => {
    server = await startTestServer();
  });
  test.after(async () => server.close());

  test('/_profiler/latest redirects with Cache-Control: no-store and nosniff, as every profiler answer', async () => {
    await fetchFrom(server, scheme, '/health');
    for (let i = 0; i < 100 && (await server.app.profiler!.storage.find({ limit: 1 })).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    const latest = await fetchFrom(server, scheme, '/_profiler/latest');
    assert.is(latest.status, 302);
    assert.match(String(latest.headers.location), /^\/_profiler\/[0-9a-f]{6}$/);
    assert.is(latest.headers['cache-control'], 'no-store');
    assert.is(latest.headers['x-content-type-options'], 'nosniff');
  });

  test('/_profiler/latest after an error page opens the failed request, not the error page\'s sub-request', async () => {
    const failed = await fetchFrom(server, scheme, '/no-such-page');
    assert.is(failed.status, 404);
    const token = String(failed.headers['x-debug-token']);
    const sub = String(failed.headers['x-previous-debug-token']);
    for (let i = 0; i < 100 && (await server.app.profiler!.storage.read(sub)) === null; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    const latest = await fetchFrom(server, scheme, '/_profiler/latest');
    assert.is(latest.status, 302);
    assert.is(latest.headers.location, `/_profiler/${token}`);
  });

  test('/_profiler/latest?panel= keeps a known panel on the redirect, and an unknown one is a 404 naming it, escaped', async () => {
    const answered = await fetchFrom(server, scheme, '/health');
    const token = String(answered.headers['x-debug-token']);
    await savedProfile(server, token);
    const logger = await fetchFrom(server, scheme, '/_profiler/latest?panel=logger');
    assert.is(logger.status, 302);
    assert.is(logger.headers.location, `/_profiler/${token}?panel=logger`);
    for (const panel of ['nope', '<script>', '']) {
      const unknown = await fetchFrom(server, scheme, `/_profiler/latest?panel=${encodeURIComponent(panel)}`, { headers: { accept: 'text/html' } });
      assert.is(unknown.status, 404, panel);
      assert.is(unknown.headers.location, undefined, panel);
      assert.is(unknown.headers['cache-control'], 'no-store', panel);
      assert.ok(unknown.body.includes(`Panel &quot;${panel.replace('<', '&lt;').replace('>', '&gt;')}&quot; is not available for token &quot;${token}&quot;.`), panel);
      assert.not.match(unknown.body, /<script>"/, panel);
    }
  });

  test('an error page\'s sub-request profile shows its own response headers, not those its parent sent', async () => {
    const failed = await fetchFrom(server, scheme, '/no-such-page');
    const token = String(failed.headers['x-debug-token']);
    const sub = String(failed.headers['x-previous-debug-token']);
    const main = await savedProfile(server, token);
    const child = await savedProfile(server, sub);
    assert.is(main.collectors.request.responseHeaders['x-debug-token'], token);
    assert.is(main.collectors.request.responseHeaders['x-previous-debug-token'], sub);
    assert.is(child.collectors.request.responseHeaders['x-debug-token'], sub);
    assert.is(child.collectors.request.responseHeaders['x-previous-debug-token'], undefined);
    assert.is(child.status, 404);
  });

  test.run();
}
