// `ide`: the debug error page and the profiler's exception panel link each frame's file to the
// developer's editor, over http and https; without it, and without debug access, no link.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { SCHEMES, fetchFrom, header, savedProfile, startTestServer, type TestServer } from './harness.js';

for (const scheme of SCHEMES) {
  const test = suite(`editor links, over ${scheme}`);
  let linked: TestServer;
  let plain: TestServer;

  test.before(async () => {
    linked = await startTestServer({ app: { ide: 'vscode' } });
    plain = await startTestServer();
  });
  test.after(async () => {
    await linked.close();
    await plain.close();
  });

  test('the debug page links the frames of our sources to the editor, at their line', async () => {
    const response = await fetchFrom(linked, scheme, '/robots.txt');
    assert.is(response.status, 404);
    // The 404 is thrown by the router listener: its .ts source, through the source maps.
    assert.match(response.body, /<a class="file" href="vscode:\/\/file\/[^"]*\/lib\/routing\/router-listener\.ts:\d+" title="Open in your editor">lib\/routing\/router-listener\.ts<\/a>/);
    assert.not.match(response.body, 'href="vscode://file/node:');
    assert.not.match((await fetchFrom(plain, scheme, '/robots.txt')).body, 'vscode://');
  });

  test('the exception panel links them too', async () => {
    const response = await fetchFrom(linked, scheme, '/robots.txt');
    const token = header(response.headers['x-debug-token']);
    await savedProfile(linked, token);
    const panel = await fetchFrom(linked, scheme, `/_profiler/${token}?panel=exception`);
    assert.is(panel.status, 200);
    assert.match(panel.body, /<a href="vscode:\/\/file\/[^"]*\/lib\/routing\/router-listener\.ts:\d+" title="Open in your editor">/);
  });

  test.run();
}
