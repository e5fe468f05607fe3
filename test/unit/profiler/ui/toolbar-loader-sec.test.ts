import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runInNewContext } from 'node:vm';
import { TOOLBAR_LOADER_JS } from '../../../../lib/profiler/ui/toolbar-assets.js';

/** A placeholder element as the loader sees it. */
function placeholder(id: string, src: string) {
  return { id, dataset: { token: 'a1b2c3', src, panel: '/_profiler/a1b2c3' }, replaceWith() {} };
}

/**
 * Runs the loader in a page where the application's own HTML, earlier in the document, holds an
 * element with the placeholder's id (what HTML sanitizers let through: ids and data attributes).
 */
function fetchedByLoader(): string[] {
  const planted = placeholder('hk-toolbar-loader', 'https://evil.test/payload');
  const own = placeholder('hk-toolbar-loader', '/_wdt/a1b2c3');
  const script = { previousElementSibling: own };
  const fetched: string[] = [];
  const document = {
    currentScript: script,
    getElementById: (id: string) => (id === 'hk-toolbar-loader' ? planted : null),
    createRange: () => ({ createContextualFragment: () => ({}) }),
    createElement: () => ({ style: {}, appendChild() {} }),
  };
  const fetch = (url: string) => {
    fetched.push(url);
    return new Promise(() => {});
  };
  runInNewContext(TOOLBAR_LOADER_JS, { document, fetch, window: { fetch }, setTimeout: () => 0 });
  return fetched;
}

test('the toolbar loader loads from its own placeholder, not from an element of the page with the same id', () => {
  assert.equal(fetchedByLoader(), ['/_wdt/a1b2c3']);
});

test.run();
