// Every HTML page the app serves passes axe-core, the accessibility rule engine (test/axe.ts: the
// rules left out there need a layout, which jsdom has none of; colour contrast is checked by
// test/unit/profiler/ui/contrast.test.ts). The pages are made for real, by one app: a failing
// request with a cause chain and logs, a page with a sub-request and the toolbar, a POST with a
// body, a collector of the embedder's own.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RequestType, Response, type Request } from '../../../kernel/index.js';
import { createKernel, homeController, type KernelApp } from '../../../lib/app/index.js';
import { MemoryStorage } from '../../../lib/profiler/storage/index.js';
import { Route, RouteCollection } from '../../../lib/routing/index.js';
import { axeFindings, loadPage, scrollableWithoutFocus, type PageOptions } from '../../axe.js';

let app: KernelApp;

const routes = new RouteCollection();
routes.add('home', new Route('/', { defaults: { _controller: homeController } }));
// Fails with a cause chain three deep, after logging at several levels (one with a context).
routes.add('book', new Route('/books/:id', {
  defaults: {
    _controller: (_request: Request, params: Record<string, string>) => {
      app.logger.debug('Looking the book up');
      app.logger.info('Loading book {id}', { id: params['id'], include: ['author', 'reviews'] });
      app.logger.warning('The cache is cold');
      const cause = new RangeError(`Book id ${params['id']} is out of range`);
      throw new Error('The book page failed', { cause: new Error('Could not load the book', { cause }) });
    },
  },
}));
// An HTML page with a fragment rendered by a sub-request: the toolbar's host, and a profile with children.
routes.add('page', new Route('/page', {
  defaults: {
    _controller: async (request: Request) => {
      const fragment = await app.kernel.handle(request.duplicate({ attributes: { _controller: () => new Response('<p>A fragment</p>') } }), RequestType.SUB);
      return new Response(`<!DOCTYPE html>\n<html lang="en"><head><meta charset="UTF-8"><title>Host page</title></head><body><header><a href="/">Home</a></header><main><h1>Host page</h1>${String(fragment.body)}</main></body></html>`, 200, { 'content-type': 'text/html; charset=UTF-8' });
    },
  },
}));
// Reads its JSON body, so the request panel shows it.
routes.add('orders', new Route('/orders', { methods: ['POST'], defaults: { _controller: async (request: Request) => Response.json(await request.json(), 201) } }));

/** An embedder's collector: its panel is the generic one. */
const cacheCollector = { name: 'cache', provisional: true, lateCollect: () => ({ hits: 3, misses: 1, keys: Array.from({ length: 40 }, (_, i) => `book:${i}`) }) };

app = createKernel({ routes, debug: true, env: 'dev', stderrLogLevel: false, profiler: { storage: new MemoryStorage(), collectors: [cacheCollector] } });
/** The same routes in production: the plain error page, no toolbar. */
const productionApp = createKernel({ routes, stderrLogLevel: false });

/** A GET from the developer's own machine, as a browser sends it. */
async function get(target: string, from: KernelApp = app): Promise<{ status: number; body: string; headers: Record<string, string | string[]> }> {
  const response = await from.inject(target, { headers: { host: '127.0.0.1:8000', accept: 'text/html' }, remoteAddress: '127.0.0.1' });
  return { status: response.status, body: response.text(), headers: response.headers };
}

function header(response: { headers: Record<string, string | string[]> }, name: string): string {
  const value = response.headers[name];
  if (typeof value !== 'string') throw new Error(`No ${name} header`);
  return value;
}

const failed = await get('/books/7');
const failedToken = header(failed, 'x-debug-token');
const errorPageToken = header(failed, 'x-previous-debug-token');
const host = await get('/page');
const hostToken = header(host, 'x-debug-token');
const posted = await app.inject('/orders', { method: 'POST', headers: { host: '127.0.0.1:8000', 'content-type': 'application/json' }, body: JSON.stringify({ book: 7, quantity: 2, note: 'Gift wrap, please' }), remoteAddress: '127.0.0.1' });
const postedToken = header(posted, 'x-debug-token');

/** Fails with every finding of axe on the page, each with the elements it names. */
async function assertAccessible(page: string, options: PageOptions = {}): Promise<void> {
  const findings = await axeFindings(page, options);
  assert.equal(findings.map((found) => `${found.kind} ${found.rule} (${found.impact ?? 'no impact'}): ${found.help}\n    ${found.nodes.join('\n    ')}`), []);
}

test("the profiler's home, the latest profiles, passes axe", async () => {
  await assertAccessible((await get('/_profiler/')).body);
});

test('a profile search with results, sub-requests among them, passes axe', async () => {
  const page = await get('/_profiler/search?method=GET&limit=50');
  assert.match(page.body, 'sub-request of');
  await assertAccessible(page.body);
});

test('a profile search that finds nothing passes axe', async () => {
  const page = await get('/_profiler/search?ip=203.0.113.9');
  assert.match(page.body, 'No results found');
  await assertAccessible(page.body);
});

test("the profiler's 404 for a token no profile has passes axe", async () => {
  const page = await get('/_profiler/abcdef');
  assert.is(page.status, 404);
  await assertAccessible(page.body);
});

/** The host page with the toolbar where its loader puts it: `/_wdt/<token>` in place of the placeholder and the loader's script. */
async function withToolbar(page: string, token: string): Promise<string> {
  const toolbar = await get(`/_wdt/${token}`);
  assert.is(toolbar.status, 200);
  const loader = /<div id="hk-toolbar-loader"[^>]*><\/div><script[^>]*>[\s\S]*?<\/script>/;
  assert.match(page, loader);
  return page.replace(loader, () => toolbar.body);
}

test('a page with the toolbar passes axe, the toolbar a landmark of its own', async () => {
  await assertAccessible(await withToolbar(host.body, hostToken));
});

test("the welcome page with the toolbar passes axe", async () => {
  const page = await get('/');
  await assertAccessible(await withToolbar(page.body, header(page, 'x-debug-token')));
});

test('a page whose toolbar could not be fetched, showing the link its loader puts there instead, passes axe', async () => {
  // jsdom has no fetch: the loader shows its link to the profile at once.
  const dom = loadPage(host.body);
  assert.is(dom.window.document.querySelector('#hk-toolbar a')?.textContent, `Profiler: ${hostToken}`);
  dom.window.close();
  await assertAccessible(host.body);
});

test('the toolbar says it is in English, in a page of another language too, as the link its loader may show instead', async () => {
  const french = host.body.replace('<html lang="en">', '<html lang="fr">');
  assert.match(french, '<html lang="fr">');
  for (const page of [await withToolbar(french, hostToken), french]) {
    const dom = loadPage(page);
    const toolbar = dom.window.document.querySelector('#hk-toolbar');
    assert.ok(toolbar !== null);
    assert.is(toolbar.closest('[lang]')?.getAttribute('lang'), 'en');
    dom.window.close();
  }
});

test("the toolbar's hide toggle shows that it has the keyboard's focus, with the bar shown and hidden", async () => {
  const page = await withToolbar(host.body, hostToken);
  /** The toggle's box-shadow with the checkbox focused, after Space hid the bar or not (a page each: jsdom's style cache misses a change of checkedness). */
  const ring = (hidden: boolean): string => {
    const dom = loadPage(page);
    const { document } = dom.window;
    const hide = document.querySelector<HTMLInputElement>('#hk-toolbar-hide')!;
    hide.focus();
    if (hidden) hide.click();
    assert.is(hide.checked, hidden);
    assert.ok(hide.matches(':focus-visible'));
    const shadow = dom.window.getComputedStyle(document.querySelector('#hk-toolbar .hk-toggle')!).boxShadow;
    dom.window.close();
    return shadow;
  };
  assert.match(ring(false), 'inset 0 0 0 2px', 'bar shown');
  assert.match(ring(true), 'inset 0 0 0 2px', 'bar hidden');
});

const PANELS = ['request', 'exception', 'logger', 'events', 'time', 'router', 'cache'];

for (const panel of PANELS) {
  test(`the ${panel} panel of a failing request's profile passes axe`, async () => {
    const page = await get(`/_profiler/${failedToken}?panel=${panel}`);
    assert.is(page.status, 200);
    await assertAccessible(page.body);
  });
}

test("the profile of an error page's sub-request, its exception panel's note linking to the parent, passes axe", async () => {
  await assertAccessible((await get(`/_profiler/${errorPageToken}`)).body);
});

test('the profile of a page with a sub-request passes axe', async () => {
  await assertAccessible((await get(`/_profiler/${hostToken}`)).body);
});

test("the request panel of a POST showing its JSON body passes axe", async () => {
  await assertAccessible((await get(`/_profiler/${postedToken}?panel=request`)).body);
});

test('the debug error page of an error with a cause chain, with its logs and the toolbar, passes axe', async () => {
  assert.is(failed.status, 500);
  assert.match(failed.body, 'RangeError');
  await assertAccessible(await withToolbar(failed.body, failedToken));
});

test('the debug error page of a 404 passes axe', async () => {
  const page = await get('/nowhere');
  assert.is(page.status, 404);
  await assertAccessible(page.body);
});

test('the plain error page of a failing request passes axe', async () => {
  const page = await get('/books/7', productionApp);
  assert.is(page.status, 500);
  await assertAccessible(page.body);
});

test("the reference app's welcome page passes axe", async () => {
  const page = await get('/', productionApp);
  assert.is(page.status, 200);
  await assertAccessible(page.body);
});

// On a narrow screen (a phone, or a desktop zoomed to 400%) the tables are shown as cards: their
// cells must still have their column headers for a screen reader.
test('on a narrow screen, the search results, logs, events and routes tables and the debug page pass axe, their column headers kept for screen readers', async () => {
  const pages = {
    'search results': (await get('/_profiler/search?limit=50')).body,
    'logger panel': (await get(`/_profiler/${failedToken}?panel=logger`)).body,
    'events panel': (await get(`/_profiler/${failedToken}?panel=events`)).body,
    'router panel': (await get(`/_profiler/${failedToken}?panel=router`)).body,
    'debug error page': failed.body,
  };
  for (const [name, page] of Object.entries(pages)) {
    const findings = await axeFindings(page, { narrow: true });
    assert.equal(findings.map((found) => `${name}: ${found.kind} ${found.rule}: ${found.help}\n    ${found.nodes.join('\n    ')}`), [], name);
  }
});

// axe's scrollable-region-focusable needs scroll sizes, which jsdom does not have: this is its check
// for every box the stylesheets let scroll. The profiler's panel (main.panel) scrolls only as a guard:
// what it holds wraps or turns into cards (none overflowed in Chromium at 420 and 1280 px).
test('every box the pages let scroll can be reached with the keyboard, to scroll it', async () => {
  const pages = {
    'debug error page': failed.body,
    'exception panel': (await get(`/_profiler/${failedToken}?panel=exception`)).body,
    'logger panel': (await get(`/_profiler/${failedToken}?panel=logger`)).body,
    'cache panel': (await get(`/_profiler/${failedToken}?panel=cache`)).body,
    'request panel of a POST': (await get(`/_profiler/${postedToken}?panel=request`)).body,
    'toolbar': await withToolbar(host.body, hostToken),
  };
  const stuck = Object.entries(pages).flatMap(([name, page]) => scrollableWithoutFocus(page, { except: 'main.panel' }).map((element) => `${name}: ${element}`));
  assert.equal(stuck, []);
});

test.after(async () => {
  await app.close();
  await productionApp.close();
});

test.run();
