import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runInNewContext } from 'node:vm';
import { TOOLBAR_LOADER_JS } from '../../../../lib/profiler/ui/toolbar-assets.js';

/** A placeholder element as the loader sees it. */
function placeholder(id: string, src: string, token = 'a1b2c3', panel = `/_profiler/${token}`) {
  return { id, dataset: { token, src, panel }, replaceWith() {} };
}

/** The URLs the loader fetches when its script follows `own`, in a page whose element found by the placeholder's id is `byId`. */
function fetchesFrom(own: ReturnType<typeof placeholder>, byId: ReturnType<typeof placeholder> | null = null): string[] {
  const fetched: string[] = [];
  const document = {
    currentScript: { previousElementSibling: own },
    getElementById: (id: string) => (id === 'hk-toolbar-loader' ? byId : null),
    createRange: () => ({ createContextualFragment: () => ({}) }),
    createElement: () => ({ style: {}, appendChild() {}, setAttribute() {} }),
  };
  const fetch = (url: string) => {
    fetched.push(url);
    return new Promise(() => {});
  };
  runInNewContext(TOOLBAR_LOADER_JS, { document, fetch, window: { fetch }, setTimeout: () => 0 });
  return fetched;
}

/**
 * Runs the loader in a page where the application's own HTML, earlier in the document, holds an
 * element with the placeholder's id (what HTML sanitizers let through: ids and data attributes).
 */
function fetchedByLoader(): string[] {
  return fetchesFrom(placeholder('hk-toolbar-loader', '/_wdt/a1b2c3'), placeholder('hk-toolbar-loader', 'https://evil.test/payload'));
}

test('the toolbar loader loads from its own placeholder, not from an element of the page with the same id', () => {
  assert.equal(fetchedByLoader(), ['/_wdt/a1b2c3']);
});

/** What the loader did in a page where every fetch of the toolbar ends as `outcome` says: its fetches, timers and whether it fell back to the link. */
async function loaderFacing(outcome: () => Promise<unknown>): Promise<{ fetches: number; timers: number[]; fellBack: boolean }> {
  const seen = { fetches: 0, timers: [] as number[], fellBack: false };
  const own = { ...placeholder('hk-toolbar-loader', '/_wdt/a1b2c3'), replaceWith: (element: { id?: string }) => void (seen.fellBack ||= element.id === 'hk-toolbar') };
  const document = {
    currentScript: { previousElementSibling: own },
    getElementById: () => null,
    createRange: () => ({ createContextualFragment: () => ({}) }),
    createElement: () => ({ style: {}, appendChild() {}, setAttribute() {} }),
    addEventListener() {},
  };
  const fetch = () => {
    seen.fetches++;
    return outcome();
  };
  // Timers run at once (their delays are recorded): the retries of a 404 would otherwise take seconds.
  const setTimeout = (run: () => void, delay: number) => {
    seen.timers.push(delay);
    queueMicrotask(run);
    return 0;
  };
  runInNewContext(TOOLBAR_LOADER_JS, { document, fetch, window: { fetch }, setTimeout });
  for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
  return seen;
}

test('a fetch of the toolbar blocked by the page (a TypeError, as a Content-Security-Policy gives) shows the link at once, with no retry', async () => {
  const seen = await loaderFacing(() => Promise.reject(new TypeError('Failed to fetch')));
  assert.equal(seen, { fetches: 1, timers: [], fellBack: true });
});

test('an answer other than 404 shows the link at once; a 404 (a profile not saved yet) is retried three times first', async () => {
  const forbidden = await loaderFacing(() => Promise.resolve({ ok: false, status: 403, text: () => Promise.resolve('') }));
  assert.equal(forbidden, { fetches: 1, timers: [], fellBack: true });
  const notYet = await loaderFacing(() => Promise.resolve({ ok: false, status: 404, text: () => Promise.resolve('') }));
  assert.equal(notYet, { fetches: 4, timers: [400, 1600, 3600], fellBack: true });
});

test('the toolbar fetched after a 404 replaces the placeholder, with no link', async () => {
  let calls = 0;
  const seen = await loaderFacing(() => Promise.resolve(++calls === 1 ? { ok: false, status: 404, text: () => Promise.resolve('') } : { ok: true, status: 200, text: () => Promise.resolve('<div id="hk-toolbar"></div>') }));
  assert.equal(seen, { fetches: 2, timers: [400], fellBack: false });
});

test('a copy of the loader planted in the page (allowed by its CSP hash) fetches nothing but a toolbar of the profiler', () => {
  const fetched: string[] = [];
  for (const [token, src, panel] of [
    ['a1b2c3', 'https://evil.test/payload', '/_profiler/a1b2c3'],
    ['a1b2c3', '/payload', '/_profiler/a1b2c3'],
    ['a1b2c3', '/_wdt/a1b2c3', 'javascript:alert(1)'],
    ['../x', '/_wdt/../x', '/_profiler/../x'],
  ] as const) {
    fetched.push(...fetchesFrom(placeholder('hk-toolbar-loader', src, token, panel)));
  }
  assert.equal(fetched, []);
});

test.run();
