// Symfony's own profiler tests (HttpKernel's Profiler, storage, listener and data collectors;
// WebProfilerBundle's controller and toolbar listener), ported to this profiler's API. A case
// whose title starts with `difference:` asserts where we deliberately differ (see the README).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Request, RequestType, Response, ResponseEvent, type KernelLike } from '../../../kernel/index.js';
import { createKernel, type KernelApp } from '../../../lib/app/index.js';
import { Event, NotFoundHttpError } from '../../../kernel/index.js';
import { Route, RouteCollection } from '../../../lib/routing/index.js';
import {
  FileStorage,
  MemoryStorage,
  MemoryCollector,
  ProfileExistsError,
  ToolbarListener,
  parseCriteria,
  type ExceptionData,
  type LoggerData,
  type MemoryData,
  type Profile,
  type ProfilerStorage,
  type RequestData,
  type RouterData,
  type TimeData,
  type EventsData,
} from '../../../lib/profiler/index.js';

const test = suite('Symfony fidelity');

// --- helpers -----------------------------------------------------------------------------------

/** A profile as Symfony's storage tests build one (`new Profile('token')` with setters). */
function profile(token: string, fields: Partial<Profile> = {}): Profile {
  return { token, parent: null, children: [], ip: '127.0.0.1', method: 'GET', url: 'http://foo.bar/', time: Date.now() - 60_000, status: 200, collectors: {}, ...fields };
}

/** Runs `body` against a MemoryStorage and a FileStorage in a temp dir, as Symfony's FileProfilerStorageTest does against its file storage. */
async function eachStorage(body: (storage: ProfilerStorage, name: string) => Promise<void>): Promise<void> {
  const memory = new MemoryStorage();
  try {
    await body(memory, 'MemoryStorage');
  } finally {
    await memory.close();
  }
  const dir = mkdtempSync(join(tmpdir(), 'hk-sf-fidelity-'));
  const file = new FileStorage({ dir });
  try {
    await body(file, 'FileStorage');
  } finally {
    await file.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The i-th hex token of a series (Symfony's tests name them `token_1`; ours are hex). */
function tok(i: number, prefix = 0xa0): string {
  return (prefix * 0x10000 + i).toString(16).padStart(6, '0');
}

/** A debug kernel with a MemoryStorage and the given routes; profiles saved at once. */
function debugKernel(routes: RouteCollection = new RouteCollection()): { app: KernelApp; storage: MemoryStorage } {
  const storage = new MemoryStorage();
  const app = createKernel({ env: 'dev', debug: true, stderrLogLevel: false, routes, profiler: { storage, saveDelayMs: 0 } });
  return { app, storage };
}

async function send(app: KernelApp, path: string, method = 'GET', init: Parameters<typeof Request.create>[2] = {}): Promise<Response> {
  const request = Request.create(`http://127.0.0.1:8000${path}`, method, init);
  const response = await app.kernel.handle(request);
  await app.kernel.terminate(request, response);
  return response;
}

/** The profile of a response, presented as the pages show it. */
async function profileOf(app: KernelApp, response: Response): Promise<Profile> {
  const token = response.getHeader('x-debug-token');
  assert.ok(token, 'the response carries X-Debug-Token');
  const stored = await app.profiler!.loadProfile(token!);
  assert.ok(stored, `profile ${token} is stored`);
  return app.profiler!.present(stored!);
}

function bodyText(response: Response): string {
  return typeof response.body === 'string' ? response.body : Buffer.from(response.body as Uint8Array).toString('utf8');
}

const HTML = '<html><head></head><body></body></html>';
const kernelStub: KernelLike = { handle: async () => new Response('') };

/** The toolbar listener run on a response, as WebDebugToolbarListenerTest does. */
function injected(response: Response, request = Request.create('http://127.0.0.1:8000/'), type: RequestType = RequestType.MAIN): Response {
  new ToolbarListener().onKernelResponse(new ResponseEvent(kernelStub, request, type, response));
  return response;
}

function withToken(response: Response): Response {
  response.headers['x-debug-token'] = 'a1b2c3';
  return response;
}

// --- FileProfilerStorageTest -------------------------------------------------------------------

test('testStore: ten profiles written are all found by ip, url, method with a limit of 20', async () => {
  await eachStorage(async (storage, name) => {
    for (let i = 0; i < 10; i++) await storage.write(profile(tok(i), { url: 'http://foo.bar' }));
    assert.is((await storage.find({ ip: '127.0.0.1', url: 'http://foo.bar', limit: 20, method: 'GET' })).length, 10, name);
  });
});

test('testChildren: a child read back names its parent, and the parent lists the child', async () => {
  await eachStorage(async (storage, name) => {
    await storage.write(profile('aaaaa1', { url: 'http://foo.bar/parent', children: ['aaaaa2'] }));
    await storage.write(profile('aaaaa2', { url: 'http://foo.bar/child', parent: 'aaaaa1' }));
    const parent = await storage.read('aaaaa1');
    const child = await storage.read('aaaaa2');
    assert.is(child!.parent, parent!.token, name);
    assert.equal(parent!.children, ['aaaaa2'], name);
  });
});

test('testStoreSpecialCharsInUrl: URLs with quotes, a backslash or a comma are stored and read back', async () => {
  await eachStorage(async (storage, name) => {
    const urls = ["http://foo.bar/'", 'http://foo.bar/"', 'http://foo.bar/\\', 'http://foo.bar/,'];
    for (const [i, url] of urls.entries()) await storage.write(profile(tok(i, 0xb0), { url }));
    for (const [i, url] of urls.entries()) assert.is((await storage.read(tok(i, 0xb0)))?.url, url, `${name} ${url}`);
  });
});

test('difference: testStoreDuplicateToken: a second write under a stored token is refused (ProfileExistsError), the first profile kept, never overwritten', async () => {
  await eachStorage(async (storage, name) => {
    await storage.write(profile('c0ffee', { url: 'http://example.com/' }));
    const refused = await storage.write(profile('c0ffee', { url: 'http://example.net/' })).then(() => null, (error: unknown) => error);
    assert.instance(refused, ProfileExistsError, name);
    assert.is((await storage.read('c0ffee'))!.url, 'http://example.com/', name);
    assert.is((await storage.find({ limit: 1000 })).length, 1, `${name}: find() does not return the same profile twice`);
  });
});

test('testRetrieveByIp: the IP matches exactly; `%` and `_` are no wildcards', async () => {
  await eachStorage(async (storage, name) => {
    await storage.write(profile('d00001'));
    assert.is((await storage.find({ ip: '127.0.0.1', method: 'GET' })).length, 1, name);
    assert.is((await storage.find({ ip: '127.0.%.1', method: 'GET' })).length, 0, name);
    assert.is((await storage.find({ ip: '127.0._.1', method: 'GET' })).length, 0, name);
  });
});

test('difference: ip, method and status filter exactly (Symfony\'s file storage matches a part: `127.0` any 127.0.x.x, `40` a 404); url is a part, as in Symfony', async () => {
  await eachStorage(async (storage, name) => {
    await storage.write(profile('d10001', { ip: '127.0.0.1', method: 'GET', status: 404, url: 'http://foo.bar/books/42' }));
    assert.is((await storage.find({ ip: '127.0' })).length, 0, name);
    assert.is((await storage.find({ method: 'GE' })).length, 0, name);
    assert.is((await storage.find({ status: 40 })).length, 0, name);
    assert.is((await storage.find({ method: 'get' })).length, 1, `${name}: the method in any case`);
    assert.is((await storage.find({ url: '/books/' })).length, 1, name);
    assert.is((await storage.find({ url: '/BOOKS/' })).length, 0, `${name}: the url in its case`);
  });
});

test('testRetrieveByStatusCode: a profile is found by its status code', async () => {
  await eachStorage(async (storage, name) => {
    await storage.write(profile('e00200', { status: 200 }));
    await storage.write(profile('e00404', { status: 404 }));
    assert.equal((await storage.find({ status: 200 })).map((p) => p.token), ['e00200'], name);
    assert.equal((await storage.find({ status: 404 })).map((p) => p.token), ['e00404'], name);
  });
});

test('testRetrieveByUrl: quotes, backslash and semicolon are taken literally; `%` and `_` are no wildcards', async () => {
  await eachStorage(async (storage, name) => {
    const urls = ["http://foo.bar/'", 'http://foo.bar/"', 'http://foo\\bar/', 'http://foo.bar/%', 'http://foo.bar/_', 'http://foo.bar/;'];
    for (const [i, url] of urls.entries()) await storage.write(profile(tok(i, 0xc0), { url }));
    for (const url of urls) assert.is((await storage.find({ ip: '127.0.0.1', url, method: 'GET' })).length, 1, `${name} ${url}`);
  });
});

test('testStoreTime: find() lists newest first, and start/end bound the times (end inclusive)', async () => {
  await eachStorage(async (storage, name) => {
    const start = Date.now() - 10 * 60_000;
    for (let i = 0; i < 3; i++) await storage.write(profile(tok(i, 0xd0), { url: 'http://foo.bar', time: start + (i + 1) * 60_000 }));
    const all = await storage.find({ limit: 3, method: 'GET', start, end: start + 3 * 60_000 });
    assert.equal(all.map((p) => p.token), [tok(2, 0xd0), tok(1, 0xd0), tok(0, 0xd0)], name);
    const firstTwo = await storage.find({ limit: 3, method: 'GET', start, end: start + 2 * 60_000 });
    assert.equal(firstTwo.map((p) => p.token), [tok(1, 0xd0), tok(0, 0xd0)], name);
  });
});

test('testRetrieveByEmptyUrlAndIp: empty ip and url filters mean any', async () => {
  await eachStorage(async (storage, name) => {
    for (let i = 0; i < 5; i++) await storage.write(profile(tok(i, 0xe0)));
    assert.is((await storage.find({ ip: '', url: '', limit: 10, method: 'GET' })).length, 5, name);
  });
});

test('testRetrieveByMethodAndLimit: the method filters, the limit caps', async () => {
  await eachStorage(async (storage, name) => {
    for (const [m, method] of ['POST', 'GET'].entries()) for (let i = 0; i < 5; i++) await storage.write(profile(tok(i, 0xf0 + m), { method }));
    const posts = await storage.find({ limit: 5, method: 'POST' });
    assert.is(posts.length, 5, name);
    assert.ok(posts.every((p) => p.method === 'POST'), name);
    assert.is((await storage.find({ limit: 3, method: 'GET' })).length, 3, name);
  });
});

test('testPurge: purge() removes every profile and every index entry', async () => {
  await eachStorage(async (storage, name) => {
    await storage.write(profile('abc001', { url: 'http://example.com/' }));
    assert.ok(await storage.read('abc001'), name);
    assert.is((await storage.find({ ip: '127.0.0.1', method: 'GET' })).length, 1, name);
    await storage.write(profile('abc002', { url: 'http://example.net/' }));
    assert.is((await storage.find({ ip: '127.0.0.1', method: 'GET' })).length, 2, name);
    await storage.purge();
    assert.is(await storage.read('abc001'), null, name);
    assert.is((await storage.find({ ip: '127.0.0.1', method: 'GET' })).length, 0, name);
  });
});

test('testDuplicates: profiles written three times each are listed once each, up to the limit', async () => {
  await eachStorage(async (storage, name) => {
    for (let i = 1; i <= 5; i++) {
      const p = profile(tok(i, 0x10), { url: 'http://example.net/' });
      await storage.write(p);
      await storage.write(p).catch(() => {});
      await storage.write(p).catch(() => {});
    }
    assert.is((await storage.find({ ip: '127.0.0.1', url: 'http://example.net/', limit: 3, method: 'GET' })).length, 3, name);
    assert.is(new Set((await storage.find({ limit: 100 })).map((p) => p.token)).size, 5, name);
  });
});

test('testStatusCode: each found summary carries its status code', async () => {
  await eachStorage(async (storage, name) => {
    await storage.write(profile('f00001', { status: 200 }));
    await storage.write(profile('f00002', { status: 404 }));
    const found = await storage.find({ ip: '', url: '', limit: 10, method: '' });
    assert.is(found.length, 2, name);
    assert.equal(found.map((p) => p.status).sort(), [200, 404], name);
  });
});

test('testMultiRowIndexFile: the file storage\'s index has one line per profile, however often it was written', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hk-sf-fidelity-'));
  const storage = new FileStorage({ dir });
  try {
    for (let i = 0; i < 3; i++) {
      const p = profile(tok(i, 0x20), { ip: `127.0.0.${i}`, url: `http://foo.bar/${i}` });
      for (let n = 0; n < 3; n++) await storage.write(p).catch(() => {});
    }
    // A compaction may head the index with a line of its own, which names no profile.
    const lines = readFileSync(join(dir, 'index.ndjson'), 'utf8').split('\n').filter((line) => line.startsWith('{"t":'));
    assert.is(lines.length, 3);
    for (let i = 0; i < 3; i++) assert.ok(lines.some((line) => line.includes(tok(i, 0x20)) && line.includes(`127.0.0.${i}`) && line.includes(`http://foo.bar/${i}`)));
  } finally {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a token that is no token (a path, Symfony\'s `token_1`) reads as no profile, in each storage', async () => {
  await eachStorage(async (storage, name) => {
    for (const token of ['../../etc/passwd', 'token_1', '', 'ABCDEF']) assert.is(await storage.read(token), null, `${name} ${token}`);
  });
});

// --- ProfilerTest ------------------------------------------------------------------------------

test('ProfilerTest::testCollect: a 204 answer to GET with ?foo=bar is recorded with its status, method and query', async () => {
  const routes = new RouteCollection().add('empty', new Route('/', { defaults: { _controller: () => new Response('', 204) } }));
  const { app } = debugKernel(routes);
  const response = await send(app, '/?foo=bar');
  const recorded = await profileOf(app, response);
  await app.close();
  assert.is(recorded.status, 204);
  assert.is(recorded.method, 'GET');
  assert.is((recorded.collectors.request as RequestData).query.foo, 'bar');
});

test('ProfilerTest::testFindWorksWithDates: a search between two dates finds nothing when nothing was recorded then', async () => {
  const { criteria } = parseCriteria(new URLSearchParams({ start: '2014-04-07', end: '2014-04-09' }));
  assert.ok(criteria.start! < criteria.end!);
  const storage = new MemoryStorage();
  await storage.write(profile('aa0001'));
  assert.is((await storage.find(criteria)).length, 0);
});

test('ProfilerTest::testFindWorksWithTimestamps: start and end also take epoch times (milliseconds here, seconds in Symfony)', async () => {
  const { criteria } = parseCriteria(new URLSearchParams({ start: '1396828800000', end: '1397001600000' }));
  assert.is(criteria.start, 1396828800000);
  assert.is(criteria.end, 1397001600000);
  const storage = new MemoryStorage();
  await storage.write(profile('aa0002'));
  assert.is((await storage.find(criteria)).length, 0);
});

test('difference: ProfilerTest::testFindWorksWithInvalidDates: a start that is no date is a 400 saying so, not ignored', () => {
  assert.throws(() => parseCriteria(new URLSearchParams({ start: 'some string', end: '' })), (error: Error & { status?: number }) => error.status === 400 && /"start"/.test(error.message));
});

test('ProfilerTest::testFindWorksWithStatusCode: the status filter given as text is a number', async () => {
  const { criteria } = parseCriteria(new URLSearchParams({ status: '204' }));
  assert.is(criteria.status, 204);
  const storage = new MemoryStorage();
  await storage.write(profile('aa0003', { status: 200 }));
  assert.is((await storage.find(criteria)).length, 0);
});

// --- ProfilerListenerTest ----------------------------------------------------------------------

test('a main request with an error page sub-request is recorded as a tree: the sub-request is the main one\'s child, X-Previous-Debug-Token names it', async () => {
  const { app, storage } = debugKernel();
  const response = await send(app, '/missing');
  await app.close();
  assert.is(response.status, 404);
  const main = (await storage.read(response.getHeader('x-debug-token')!))!;
  const sub = (await storage.read(response.getHeader('x-previous-debug-token')!))!;
  assert.equal(main.children, [sub.token]);
  assert.is(sub.parent, main.token);
  assert.is(main.parent, null);
});

test('a sub-request made by a controller is recorded as a child of its main request, in order', async () => {
  const inner = () => new Response('inner');
  const routes = new RouteCollection().add('outer', new Route('/outer', { defaults: { _controller: async (request: Request) => {
    const first = await app.kernel.handle(request.duplicate({ attributes: { _controller: inner } }), RequestType.SUB);
    const second = await app.kernel.handle(request.duplicate({ attributes: { _controller: inner } }), RequestType.SUB);
    return new Response(`${String(first.body)} ${String(second.body)}`);
  } } }));
  const { app, storage } = debugKernel(routes);
  const response = await send(app, '/outer');
  await app.close();
  const main = (await storage.read(response.getHeader('x-debug-token')!))!;
  assert.is(main.children.length, 2);
  for (const child of main.children) {
    const sub = (await storage.read(child))!;
    assert.is(sub.parent, main.token);
    assert.is((app.profiler!.present(sub).collectors.request as RequestData).requestType, 'sub');
  }
  assert.ok((await storage.read(main.children[0]!))!.time <= (await storage.read(main.children[1]!))!.time);
});

test('difference: ProfilerListenerTest::testKernelTerminate (onlyException): every request is recorded, with or without an error; there is no onlyException option', async () => {
  const routes = new RouteCollection().add('ok', new Route('/ok', { defaults: { _controller: () => new Response('ok') } }));
  const { app, storage } = debugKernel(routes);
  const response = await send(app, '/ok');
  await app.close();
  assert.ok(await storage.read(response.getHeader('x-debug-token')!));
});

test('difference: ProfilerListenerTest::testCollectParameter: a `profile` query parameter or attribute neither turns recording on nor off', async () => {
  const routes = new RouteCollection().add('ok', new Route('/ok', { defaults: { _controller: () => new Response('ok') } }));
  const { app, storage } = debugKernel(routes);
  const off = await send(app, '/ok?profile=0');
  const on = await send(app, '/ok?profile=1');
  await app.close();
  assert.ok(await storage.read(off.getHeader('x-debug-token')!));
  assert.ok(await storage.read(on.getHeader('x-debug-token')!));
});

test('the profiler\'s own pages are not recorded (Symfony excludes its _profiler and _wdt routes)', async () => {
  const { app, storage } = debugKernel();
  const response = await send(app, '/_profiler/search');
  await app.close();
  assert.is(response.status, 200);
  assert.is(response.getHeader('x-debug-token'), undefined);
  assert.is((await storage.find({ limit: 10 })).length, 0);
});

test('X-Debug-Token-Link is the absolute URL of the token\'s panel (WebDebugToolbarListenerTest::testXDebugUrlHeader)', async () => {
  const routes = new RouteCollection().add('ok', new Route('/ok', { defaults: { _controller: () => new Response('ok') } }));
  const { app } = debugKernel(routes);
  const response = await send(app, '/ok');
  await app.close();
  const token = response.getHeader('x-debug-token')!;
  assert.match(token, /^[0-9a-f]{6}$/);
  assert.is(response.getHeader('x-debug-token-link'), `http://127.0.0.1:8000/_profiler/${token}`);
});

// --- WebDebugToolbarListenerTest ---------------------------------------------------------------

test('testInjectToolbar: the toolbar goes before the last </body>, not one inside a textarea', () => {
  const page = '<html>\n<head></head>\n<body>\n<textarea><html><head></head><body></body></html></textarea>\n</body>\n</html>';
  const body = bodyText(injected(withToken(new Response(page))));
  const at = body.indexOf('a1b2c3');
  assert.ok(at > body.indexOf('</textarea>'), 'after the textarea');
  assert.ok(body.endsWith('</body>\n</html>'));
  assert.ok(body.startsWith('<html>\n<head></head>\n<body>\n<textarea><html><head></head><body></body></html></textarea>\n'));
});

test('testToolbarIsInjected: an HTML main response with X-Debug-Token gets the toolbar', () => {
  const body = bodyText(injected(withToken(new Response(HTML))));
  assert.ok(body.length > HTML.length);
  assert.ok(body.startsWith('<html><head></head><body>') && body.endsWith('</body></html>'));
  assert.ok(body.includes('/_wdt/a1b2c3'));
});

test('testToolbarIsNotInjectedOnNonHtmlContentType: a text/xml response is left alone', () => {
  assert.is(bodyText(injected(withToken(new Response(HTML, 200, { 'content-type': 'text/xml' })))), HTML);
});

test('difference: an application/xhtml+xml response is left alone (Symfony matches any Content-Type containing "html")', () => {
  assert.is(bodyText(injected(withToken(new Response(HTML, 200, { 'content-type': 'application/xhtml+xml' })))), HTML);
});

test('testToolbarIsNotInjectedOnContentDispositionAttachment: an attachment is left alone, also without a filename', () => {
  assert.is(bodyText(injected(withToken(new Response(HTML, 200, { 'content-disposition': 'attachment; filename=test.html' })))), HTML);
  assert.is(bodyText(injected(withToken(new Response(HTML, 200, { 'content-disposition': 'attachment' })))), HTML);
});

test('testToolbarIsNotInjectedOnRedirection: 301 and 302 are left alone', () => {
  for (const status of [301, 302]) {
    const response = withToken(new Response(HTML, status, { location: '/elsewhere' }));
    assert.is(bodyText(injected(response)), HTML, String(status));
    assert.is(response.status, status, 'no interception of redirects either');
  }
});

test('testToolbarIsNotInjectedWhenThereIsNoNoXDebugTokenResponseHeader', () => {
  assert.is(bodyText(injected(new Response(HTML))), HTML);
});

test('testToolbarIsNotInjectedWhenOnSubRequest', () => {
  assert.is(bodyText(injected(withToken(new Response(HTML)), undefined, RequestType.SUB)), HTML);
});

test('testToolbarIsNotInjectedOnIncompleteHtmlResponses: no </body>, no toolbar', () => {
  assert.is(bodyText(injected(withToken(new Response('<div>Some content</div>')))), '<div>Some content</div>');
});

test('testToolbarIsNotInjectedOnXmlHttpRequests', () => {
  const request = Request.create('http://127.0.0.1:8000/', 'GET', { headers: { 'x-requested-with': 'XMLHttpRequest' } });
  assert.is(bodyText(injected(withToken(new Response(HTML)), request)), HTML);
});

test('a streamed response is left alone (Symfony cannot read a StreamedResponse\'s content either)', () => {
  const stream = Readable.from(['<html><body></body></html>']);
  const response = injected(withToken(new Response(stream, 200, { 'content-type': 'text/html' })));
  assert.is(response.body, stream);
  stream.destroy();
});

test('Content-Length follows the injected toolbar', () => {
  const response = injected(withToken(new Response(HTML, 200, { 'content-type': 'text/html; charset=UTF-8', 'content-length': String(HTML.length) })));
  assert.is(response.getHeader('content-length'), String(Buffer.byteLength(bodyText(response))));
  assert.ok(Number(response.getHeader('content-length')) > HTML.length);
});

test('the toolbar is injected in a page served through the whole kernel, and not in its JSON sibling', async () => {
  const routes = new RouteCollection()
    .add('page', new Route('/page', { defaults: { _controller: () => new Response(HTML, 200, { 'content-type': 'text/html; charset=UTF-8' }) } }))
    .add('data', new Route('/data', { defaults: { _controller: () => Response.json({ html: HTML }) } }));
  const { app } = debugKernel(routes);
  const page = await send(app, '/page');
  const data = await send(app, '/data');
  await app.close();
  assert.ok(bodyText(page).includes(`/_wdt/${page.getHeader('x-debug-token')}`));
  assert.not.ok(bodyText(data).includes('/_wdt/'));
});

test('a HEAD of a page announces the Content-Length its GET sends, toolbar included', async () => {
  const routes = new RouteCollection().add('page', new Route('/page', { defaults: { _controller: () => new Response(HTML, 200, { 'content-type': 'text/html; charset=UTF-8' }) } }));
  const { app } = debugKernel(routes);
  const get = await send(app, '/page');
  const head = await send(app, '/page', 'HEAD');
  await app.close();
  assert.is(get.getHeader('content-length'), String(Buffer.byteLength(bodyText(get))));
  assert.is(head.getHeader('content-length'), get.getHeader('content-length'));
});

// --- ProfilerControllerTest --------------------------------------------------------------------

test('difference: testHomeActionRedirect: /_profiler/ shows the latest 10 profiles itself, not a redirect to the search results', async () => {
  const { app } = debugKernel();
  const response = await send(app, '/_profiler/');
  await app.close();
  assert.is(response.status, 200);
  assert.match(bodyText(response), /No results found/);
});

test('testHomeActionRedirect: /_profiler/ lists the latest 10 profiles, newest first (Symfony\'s `limit=10`)', async () => {
  const { app, storage } = debugKernel();
  const base = Date.now() - 60_000;
  for (let i = 0; i < 12; i++) await storage.write(profile(tok(i, 0x30), { time: base + i }));
  const response = await send(app, '/_profiler/', 'GET', { headers: { accept: 'application/json' } });
  await app.close();
  const json = JSON.parse(bodyText(response)) as { count: number; results: Array<{ token: string }> };
  assert.is(json.count, 10);
  assert.is(json.results[0]!.token, tok(11, 0x30));
  assert.is(json.results[9]!.token, tok(2, 0x30));
});

test('testPanelActionWithLatestTokenWhenNoTokensExist: /_profiler/latest with nothing recorded says no profile was found', async () => {
  const { app } = debugKernel();
  const response = await send(app, '/_profiler/latest');
  await app.close();
  assert.is(response.status, 200);
  assert.match(bodyText(response), /No results found/);
});

test('testPanelActionWithLatestToken: /_profiler/latest leads to the last request\'s profile, which names its controller', async () => {
  const routes = new RouteCollection().add('homepage', new Route('/', { defaults: { _controller: function homepageController() { return new Response('home'); } } }));
  const { app } = debugKernel(routes);
  const home = await send(app, '/');
  const latest = await send(app, '/_profiler/latest');
  assert.is(latest.status, 302);
  assert.is(latest.getHeader('location'), `/_profiler/${home.getHeader('x-debug-token')}`);
  const page = await send(app, latest.getHeader('location')!);
  await app.close();
  assert.is(page.status, 200);
  assert.match(bodyText(page), /homepageController/);
});

test('testPanelActionWithoutValidToken: an unknown token is a 404 naming it', async () => {
  const { app } = debugKernel();
  const missing = await send(app, '/_profiler/abcdef');
  const malformed = await send(app, '/_profiler/this-token-does-not-exist');
  await app.close();
  assert.is(missing.status, 404);
  assert.match(bodyText(missing), /Token not found/);
  assert.match(bodyText(missing), /abcdef/);
  assert.is(malformed.status, 404);
  assert.match(bodyText(malformed), /this-token-does-not-exist/);
});

test('testPanelActionWithWrongPanel: a panel the profile does not have is a 404 naming it and the token, on its page and from /_profiler/latest, as HTML and JSON', async () => {
  const routes = new RouteCollection().add('homepage', new Route('/', { defaults: { _controller: () => new Response('home') } }));
  const { app } = debugKernel(routes);
  const home = await send(app, '/');
  const token = home.getHeader('x-debug-token')!;
  const message = `Panel "this-panel-does-not-exist" is not available for token "${token}".`;
  for (const path of ['/_profiler/latest?panel=this-panel-does-not-exist', `/_profiler/${token}?panel=this-panel-does-not-exist`]) {
    const page = await send(app, path, 'GET', { headers: { accept: 'text/html' } });
    assert.is(page.status, 404, path);
    assert.ok(bodyText(page).includes(message.replaceAll('"', '&quot;')), `${path}: the page names the panel and the token`);
    assert.is(page.getHeader('cache-control'), 'no-store', `${path}: with the headers of every profiler answer`);
    const answer = await send(app, path, 'GET', { headers: { accept: 'application/json' } });
    assert.is(answer.status, 404, `${path} as JSON`);
    assert.is(JSON.parse(bodyText(answer)).detail, message, `${path} as JSON`);
  }
  const empty = await send(app, `/_profiler/${token}?panel=`);
  await app.close();
  assert.is(empty.status, 404, 'an empty panel name is no panel either (Symfony reads it as given)');
});

test('a panel name in the 404 is escaped, in the HTML page and in the JSON', async () => {
  const { app } = debugKernel();
  const token = (await send(app, '/')).getHeader('x-debug-token')!;
  const path = `/_profiler/${token}?panel=${encodeURIComponent('<script>alert(1)</script>')}`;
  const page = bodyText(await send(app, path, 'GET', { headers: { accept: 'text/html' } }));
  const answer = bodyText(await send(app, path, 'GET', { headers: { accept: 'application/json' } }));
  await app.close();
  assert.not.match(page, /<script>alert/);
  assert.match(page, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.not.match(answer, /<script>/);
  assert.match(JSON.parse(answer).detail, 'Panel "<script>alert(1)</script>" is not available');
});

test('a collector of the embedder\'s own is a panel: its page and /_profiler/latest keep it', async () => {
  const storage = new MemoryStorage();
  const cache = { name: 'cache', lateCollect: () => ({ hits: 3 }) };
  const app = createKernel({ env: 'dev', debug: true, stderrLogLevel: false, profiler: { storage, saveDelayMs: 0, collectors: [cache] } });
  const token = (await send(app, '/')).getHeader('x-debug-token')!;
  const page = await send(app, `/_profiler/${token}?panel=cache`);
  const latest = await send(app, '/_profiler/latest?panel=cache');
  await app.close();
  assert.is(page.status, 200);
  assert.match(bodyText(page), /aria-current="page"><span>cache/i);
  assert.is(latest.getHeader('location'), `/_profiler/${token}?panel=cache`);
});

test('every ?panel= link of a profile\'s pages and of its toolbar leads to a panel it has (200, not the 404)', async () => {
  const routes = new RouteCollection().add('fail', new Route('/fail', { defaults: { _controller: () => { throw new NotFoundHttpError('gone'); } } }));
  const storage = new MemoryStorage();
  const app = createKernel({ env: 'dev', debug: true, stderrLogLevel: false, routes, profiler: { storage, saveDelayMs: 0, collectors: [{ name: 'cache', lateCollect: () => ({ hits: 3 }) }] } });
  const token = (await send(app, '/fail')).getHeader('x-debug-token')!;
  const pages = [`/_wdt/${token}`, `/_profiler/${token}`];
  const links = new Set<string>();
  for (const page of pages) for (const [, href] of bodyText(await send(app, page)).matchAll(/href="([^"]*\?panel=[^"]*)"/g)) links.add(href!.replaceAll('&amp;', '&'));
  const answers = await Promise.all([...links].map(async (link) => [link, (await send(app, link)).status] as const));
  await app.close();
  assert.ok(links.has(`/_profiler/${token}?panel=cache`) && links.has(`/_profiler/${token}?panel=router`), [...links].join(' '));
  for (const [link, status] of answers) assert.is(status, 200, link);
});

test('testPanelActionWithValidPanelAndToken: /_profiler/latest?panel=router leads to the router panel, which names the matched route', async () => {
  const routes = new RouteCollection().add('homepage', new Route('/', { defaults: { _controller: () => new Response('home') } }));
  const { app } = debugKernel(routes);
  const home = await send(app, '/');
  const latest = await send(app, '/_profiler/latest?panel=router');
  assert.is(latest.getHeader('location'), `/_profiler/${home.getHeader('x-debug-token')}?panel=router`);
  const page = await send(app, latest.getHeader('location')!);
  await app.close();
  assert.is(page.status, 200);
  assert.match(bodyText(page), /homepage/);
});

test('testReturns404onTokenNotFound: the toolbar of a known token is a 200, of an unknown one a 404', async () => {
  const routes = new RouteCollection().add('homepage', new Route('/', { defaults: { _controller: () => new Response('home') } }));
  const { app } = debugKernel(routes);
  const home = await send(app, '/');
  const found = await send(app, `/_wdt/${home.getHeader('x-debug-token')}`);
  const notFound = await send(app, '/_wdt/abcdef');
  await app.close();
  assert.is(found.status, 200);
  assert.is(notFound.status, 404);
});

test('testSearchActionWithoutToken: an empty token with the other filters lists the results, each linking to its profile', async () => {
  const routes = new RouteCollection().add('homepage', new Route('/', { defaults: { _controller: () => new Response('home') } }));
  const { app } = debugKernel(routes);
  const home = await send(app, '/');
  const token = home.getHeader('x-debug-token')!;
  const search = await send(app, '/_profiler/search?ip=&method=GET&status=&url=&token=&start=&end=&limit=10');
  await app.close();
  assert.is(search.status, 200);
  assert.match(bodyText(search), /1 result found/);
  assert.ok(bodyText(search).includes(`href="/_profiler/${token}">${token}</a>`));
});

test('testSearchActionWithToken: /_profiler/search?token=<token> redirects to that profile', async () => {
  const routes = new RouteCollection().add('homepage', new Route('/', { defaults: { _controller: () => new Response('home') } }));
  const { app } = debugKernel(routes);
  const home = await send(app, '/');
  const token = home.getHeader('x-debug-token')!;
  const search = await send(app, `/_profiler/search?token=${token}&ip=10.0.0.1`);
  const json = await send(app, `/_profiler/search?token=${token}`, 'GET', { headers: { accept: 'application/json' } });
  const unknown = await send(app, '/_profiler/search?token=abcdef');
  const unknownPage = await send(app, unknown.getHeader('location')!);
  await app.close();
  assert.is(search.status, 302);
  assert.is(search.getHeader('location'), `/_profiler/${token}`);
  assert.is(search.getHeader('cache-control'), 'no-store');
  assert.is(json.getHeader('location'), `/_profiler/${token}`);
  assert.is(unknownPage.status, 404);
});

test('search?token= with text that is no token (`..`, `.`, `//evil.example/`) is the 404 Token not found, no redirect out of the profiler: a browser resolves `/_profiler/..` to `/`, %2E%2E too', async () => {
  const { app } = debugKernel();
  const up = await send(app, '/_profiler/search?token=..');
  const here = await send(app, '/_profiler/search?token=.');
  const odd = await send(app, '/_profiler/search?token=%2F%2Fevil.example%2F', 'GET', { headers: { accept: 'application/json' } });
  await app.close();
  assert.is(new URL('http://a.test/_profiler/%2E%2E').pathname, '/');
  for (const answer of [up, here, odd]) {
    assert.is(answer.status, 404);
    assert.is(answer.getHeader('location'), undefined);
  }
  assert.match(bodyText(up), 'Token not found');
  assert.equal(JSON.parse(bodyText(odd)), { error: 'Token not found', token: '//evil.example/' });
});

test('search?token=latest redirects to /_profiler/latest, as Symfony\'s panel reads the token "latest" as the newest profile', async () => {
  const routes = new RouteCollection().add('homepage', new Route('/', { defaults: { _controller: () => new Response('home') } }));
  const { app } = debugKernel(routes);
  const token = (await send(app, '/')).getHeader('x-debug-token')!;
  const search = await send(app, '/_profiler/search?token=latest');
  const latest = await send(app, search.getHeader('location') ?? '/_profiler/search');
  await app.close();
  assert.is(search.status, 302);
  assert.is(search.getHeader('location'), '/_profiler/latest');
  assert.is(latest.getHeader('location'), `/_profiler/${token}`);
});

test('testSearchBarActionDefaultPage: the search form has empty ip, status, url, token, start and end fields', async () => {
  const { app } = debugKernel();
  const page = bodyText(await send(app, '/_profiler/search'));
  await app.close();
  for (const name of ['ip', 'status', 'url', 'token', 'start', 'end']) assert.match(page, new RegExp(`name="${name}"[^>]*value=""`), name);
});

test('testSearchResultsAction: the search honours its limit and filters (JSON view)', async () => {
  const { app, storage } = debugKernel();
  await storage.write(profile('aa1111', { url: 'http://example.com/', status: 200 }));
  await storage.write(profile('aa2222', { url: 'http://example.com/not_found', status: 404 }));
  await storage.write(profile('aa3333', { url: 'http://example.org/', status: 200, ip: '10.0.0.1' }));
  const response = await send(app, '/_profiler/search?limit=2&ip=127.0.0.1&method=GET&url=http://example.com/', 'GET', { headers: { accept: 'application/json' } });
  await app.close();
  const json = JSON.parse(bodyText(response)) as { count: number; results: Array<{ token: string }> };
  assert.is(json.count, 2);
  assert.equal(json.results.map((r) => r.token).sort(), ['aa1111', 'aa2222']);
});

test('testDefaultPanel: the default panel is the exception one when an error escaped, the request one otherwise', async () => {
  const routes = new RouteCollection()
    .add('ok', new Route('/ok', { defaults: { _controller: () => new Response('ok') } }))
    .add('boom', new Route('/boom', { defaults: { _controller: () => { throw new Error('DomainException'); } } }));
  const { app } = debugKernel(routes);
  const ok = await send(app, '/ok');
  const boom = await send(app, '/boom');
  const okPage = bodyText(await send(app, `/_profiler/${ok.getHeader('x-debug-token')}`));
  const boomPage = bodyText(await send(app, `/_profiler/${boom.getHeader('x-debug-token')}`));
  await app.close();
  assert.match(okPage, /aria-current="page"><span>Request \/ Response</);
  assert.match(boomPage, /aria-current="page"><span>Exception</);
  assert.match(boomPage, /DomainException/);
});

// --- data collectors ---------------------------------------------------------------------------

test('RequestDataCollectorTest::testCollect: route, route params, status text, status code, content type, query and cookies', async () => {
  const routes = new RouteCollection().add('foobar', new Route('/foo/:name', { defaults: { _controller: () => Response.json({}) } }));
  const { app } = debugKernel(routes);
  const response = await send(app, '/foo/foo?bar=baz', 'GET', { headers: { cookie: 'theme=dark' } });
  const data = (await profileOf(app, response)).collectors.request as RequestData;
  await app.close();
  assert.is(data.route, 'foobar');
  assert.equal(data.routeParams, { name: 'foo' });
  assert.is(data.statusText, 'OK');
  assert.is(data.statusCode, 200);
  assert.match(data.contentType!, /^application\/json/);
  assert.equal(data.query, { bar: 'baz' });
  assert.equal(data.cookies, { theme: 'dark' });
  assert.is(data.requestType, 'main');
});

test('RequestDataCollectorTest::testCollect: request attributes set by the application are collected', async () => {
  const routes = new RouteCollection().add('foobar', new Route('/foo', { defaults: { _controller: (request: Request) => {
    request.attributes.set('foo', 'bar');
    request.attributes.set('object', { type: 'stdClass' });
    return new Response('ok');
  } } }));
  const { app } = debugKernel(routes);
  const data = (await profileOf(app, await send(app, '/foo'))).collectors.request as RequestData;
  await app.close();
  assert.is(data.attributes.foo, 'bar');
  assert.equal(data.attributes.object, { type: 'stdClass' });
  assert.is(data.attributes._route, 'foobar');
});

test('difference: RequestDataCollectorTest::testCollect (response cookies): Set-Cookie is stored redacted, and so are the request\'s secret cookies', async () => {
  const routes = new RouteCollection().add('cookies', new Route('/cookies', { defaults: { _controller: () => {
    const response = new Response('ok');
    response.headers['set-cookie'] = ['foo=bar; Path=/foo; Secure; HttpOnly', 'bar=foo; Path=/'];
    return response;
  } } }));
  const { app } = debugKernel(routes);
  const data = (await profileOf(app, await send(app, '/cookies', 'GET', { headers: { cookie: 'theme=dark; PHPSESSID=s3cr3t' } }))).collectors.request as RequestData;
  await app.close();
  assert.is(data.responseHeaders['set-cookie'], '[redacted]');
  assert.equal(data.cookies, { theme: 'dark', PHPSESSID: '[redacted]' });
  assert.is(data.requestHeaders.cookie, '[redacted]');
});

test('RequestDataCollectorTest::testCollectWithoutRouteParams: a route without parameters has {} as its params', async () => {
  const routes = new RouteCollection().add('plain', new Route('/plain', { defaults: { _controller: () => new Response('ok') } }));
  const { app } = debugKernel(routes);
  const data = (await profileOf(app, await send(app, '/plain'))).collectors.request as RequestData;
  await app.close();
  assert.equal(data.routeParams, {});
});

test('RequestDataCollectorTest::testControllerInspection: the controller is named', async () => {
  const routes = new RouteCollection().add('named', new Route('/named', { defaults: { _controller: function showNamed() { return new Response('ok'); } } }));
  const { app } = debugKernel(routes);
  const data = (await profileOf(app, await send(app, '/named'))).collectors.request as RequestData;
  await app.close();
  assert.match(String(data.controller), /showNamed/);
});

test('RequestDataCollectorTest: the session data is collected (empty session: {})', async () => {
  const routes = new RouteCollection().add('session', new Route('/session', { defaults: { _controller: (request: Request) => {
    request.attributes.set('_session_data', {});
    return new Response('ok');
  } } }));
  const { app } = debugKernel(routes);
  const data = (await profileOf(app, await send(app, '/session'))).collectors.request as RequestData;
  await app.close();
  assert.equal(data.session, {});
});

test('difference: RequestDataCollectorTest::testGetPrettyJsonValidity: a JSON request body is stored parsed and pretty-printed (how its secrets are redacted field by field), as Symfony\'s panel shows it; one that does not parse is kept as sent', async () => {
  const routes = new RouteCollection().add('post', new Route('/post', { methods: ['POST'], defaults: { _controller: async (request: Request) => {
    await request.text();
    return new Response('ok');
  } } }));
  const { app } = debugKernel(routes);
  const bodyOf = async (body: string) => ((await profileOf(app, await send(app, '/post', 'POST', { headers: { 'content-type': 'application/json' }, body }))).collectors.request as RequestData).body;
  assert.is(await bodyOf('{ "foo": "bar" }'), '{\n  "foo": "bar"\n}');
  assert.is(await bodyOf('null'), 'null');
  assert.is(await bodyOf('{ "abc" }'), '{ "abc" }');
  await app.close();
});

test('RouterDataCollectorTest::testRouteRedirectResponse: a redirect answer is recorded with its target', async () => {
  const routes = new RouteCollection().add('foo', new Route('/foo', { defaults: { _controller: () => Response.redirect('http://test.com/redirect') } }));
  const { app } = debugKernel(routes);
  const response = await send(app, '/foo?bar=baz');
  const data = (await profileOf(app, response)).collectors.router as RouterData;
  const panel = bodyText(await send(app, `/_profiler/${response.getHeader('x-debug-token')}?panel=router`));
  await app.close();
  assert.is(data.redirect, 'http://test.com/redirect');
  assert.is(data.route, 'foo');
  // The route's controller answered it, not the router.
  assert.match(panel, /The response redirects to <a href="http:\/\/test.com\/redirect"/);
  assert.not.match(panel, /The router answered/);
});

test('RouterDataCollectorTest::testRouteNotRedirectResponse: no redirect, no target', async () => {
  const routes = new RouteCollection().add('foo', new Route('/foo', { defaults: { _controller: () => new Response('test') } }));
  const { app } = debugKernel(routes);
  const data = (await profileOf(app, await send(app, '/foo?bar=baz'))).collectors.router as RouterData;
  await app.close();
  assert.is(data.redirect, null);
  assert.is(data.route, 'foo');
});

test('the router\'s own redirect (trailing slash) is recorded with its target, as the router\'s; a controller\'s 301 as the response\'s', async () => {
  const routes = new RouteCollection()
    .add('books', new Route('/books/', { defaults: { _controller: () => new Response('books') } }))
    .add('moved', new Route('/moved', { defaults: { _controller: () => Response.redirect('/books/', 301) } }));
  const { app } = debugKernel(routes);
  const response = await send(app, '/books?page=2');
  const data = (await profileOf(app, response)).collectors.router as RouterData;
  const panel = bodyText(await send(app, `/_profiler/${response.getHeader('x-debug-token')}?panel=router`));
  const moved = await send(app, '/moved');
  const movedData = (await profileOf(app, moved)).collectors.router as RouterData;
  const movedPanel = bodyText(await send(app, `/_profiler/${moved.getHeader('x-debug-token')}?panel=router`));
  await app.close();
  assert.is(response.status, 301);
  assert.is(data.redirect, 'http://127.0.0.1:8000/books/?page=2');
  assert.is(data.route, null);
  assert.match(panel, /The router answered with a redirect to/);
  assert.is(movedData.redirect, '/books/');
  assert.is(movedData.route, 'moved');
  assert.match(movedPanel, /The response redirects to/);
  assert.not.match(movedPanel, /The router answered/);
});

test('ExceptionDataCollectorTest::testCollect: the error\'s message, class and status are recorded', async () => {
  const routes = new RouteCollection().add('boom', new Route('/boom', { defaults: { _controller: () => { throw new Error('foo'); } } }));
  const { app } = debugKernel(routes);
  const response = await send(app, '/boom');
  const data = (await profileOf(app, response)).collectors.exception as ExceptionData;
  await app.close();
  assert.is(response.status, 500);
  assert.is(data.exceptions[0]!.message, 'foo');
  assert.is(data.exceptions[0]!.class, 'Error');
  assert.is(data.exceptions[0]!.status, 500, 'an error that is no HTTP error is a 500, as FlattenException has it');
});

test('the debug error page of a main request gets the toolbar, as Symfony\'s exception page does; its sub-request\'s token is X-Previous-Debug-Token', async () => {
  const routes = new RouteCollection().add('boom', new Route('/boom', { defaults: { _controller: () => { throw new Error('foo'); } } }));
  const { app } = debugKernel(routes);
  const response = await send(app, '/boom', 'GET', { headers: { accept: 'text/html' } });
  await app.close();
  assert.is(response.status, 500);
  assert.ok(bodyText(response).includes(`/_wdt/${response.getHeader('x-debug-token')}`));
  assert.ok(response.getHeader('x-previous-debug-token'));
  assert.is.not(response.getHeader('x-previous-debug-token'), response.getHeader('x-debug-token'));
});

test('ExceptionDataCollectorTest: an HTTP error\'s status code is recorded (404)', async () => {
  const routes = new RouteCollection().add('gone', new Route('/gone', { defaults: { _controller: () => { throw new NotFoundHttpError('No such book'); } } }));
  const { app } = debugKernel(routes);
  const response = await send(app, '/gone');
  const recorded = await profileOf(app, response);
  await app.close();
  const data = recorded.collectors.exception as ExceptionData;
  assert.is(recorded.status, 404);
  assert.is(data.exceptions[0]!.status, 404);
  assert.is(data.exceptions[0]!.message, 'No such book');
});

test('ExceptionDataCollectorTest::testCollectWithoutException: no error, no exception', async () => {
  const routes = new RouteCollection().add('ok', new Route('/ok', { defaults: { _controller: () => new Response('ok') } }));
  const { app } = debugKernel(routes);
  const data = (await profileOf(app, await send(app, '/ok'))).collectors.exception as ExceptionData;
  await app.close();
  assert.equal(data.exceptions, []);
});

test('LoggerDataCollectorTest::testCollect: the request\'s records with their context, counted by level, errors and warnings apart', async () => {
  const routes = new RouteCollection().add('log', new Route('/log', { defaults: { _controller: () => {
    app.logger.debug('foo', { foo: 'bar' });
    app.logger.warning('careful');
    app.logger.error('broken');
    app.logger.critical('worse');
    return new Response('ok');
  } } }));
  const { app } = debugKernel(routes);
  const data = (await profileOf(app, await send(app, '/log'))).collectors.logger as LoggerData;
  await app.close();
  const foo = data.logs.find((record) => record.message === 'foo');
  assert.ok(foo);
  assert.equal(foo!.context, { foo: 'bar' });
  assert.is(foo!.levelName, 'DEBUG');
  assert.is(data.errorCount, 2);
  assert.is(data.warningCount, 1);
  assert.is(data.counts.ERROR, 1);
  assert.is(data.counts.CRITICAL, 1);
  assert.ok(data.counts.DEBUG! >= 1);
});

test('LoggerDataCollectorTest (a log with an exception in its context): the error is kept as its class and message', async () => {
  const routes = new RouteCollection().add('log', new Route('/log', { defaults: { _controller: () => {
    app.logger.warning('foo3', { exception: new RangeError('warning') });
    return new Response('ok');
  } } }));
  const { app } = debugKernel(routes);
  const data = (await profileOf(app, await send(app, '/log'))).collectors.logger as LoggerData;
  await app.close();
  const record = data.logs.find((r) => r.message === 'foo3');
  assert.equal(record!.context, { exception: { class: 'RangeError', message: 'warning' } });
});

test('LoggerDataCollector: another request\'s records are not in this one\'s profile (Symfony\'s DebugLogger is per request by reset)', async () => {
  const routes = new RouteCollection().add('log', new Route('/log/:n', { defaults: { _controller: (_request: Request, params: { n: string }) => {
    app.logger.info('request {n}', { n: params.n });
    return new Response('ok');
  } } }));
  const { app } = debugKernel(routes);
  const [one, two] = await Promise.all([send(app, '/log/1'), send(app, '/log/2')]);
  const logsOne = ((await profileOf(app, one)).collectors.logger as LoggerData).logs.map((r) => r.message);
  const logsTwo = ((await profileOf(app, two)).collectors.logger as LoggerData).logs.map((r) => r.message);
  await app.close();
  assert.ok(logsOne.includes('request 1') && !logsOne.includes('request 2'));
  assert.ok(logsTwo.includes('request 2') && !logsTwo.includes('request 1'));
});

test('TimeDataCollectorTest::testCollect: the start time is the request\'s, in epoch milliseconds, and the duration is not negative', async () => {
  const routes = new RouteCollection().add('ok', new Route('/ok', { defaults: { _controller: () => new Response('ok') } }));
  const { app } = debugKernel(routes);
  const before = Date.now();
  const response = await send(app, '/ok');
  const after = Date.now();
  const recorded = await profileOf(app, response);
  await app.close();
  const time = recorded.collectors.time as TimeData;
  assert.ok(time.startTime >= before - 5 && time.startTime <= after, `startTime ${time.startTime} within the request`);
  assert.is(time.startTime, recorded.time);
  assert.ok(time.duration >= 0 && time.duration <= after - before + 5);
  assert.ok(time.periods!.some((period) => period.category === 'controller'));
});

test('EventDataCollectorTest::testCollect: called listeners and listeners not called are listed apart', async () => {
  const routes = new RouteCollection().add('ok', new Route('/ok', { defaults: { _controller: () => new Response('ok') } }));
  const { app } = debugKernel(routes);
  const data = (await profileOf(app, await send(app, '/ok'))).collectors.events as EventsData;
  await app.close();
  assert.ok(data.called.some((call) => call.event === 'kernel.request' && call.listener.includes('RouterListener')));
  // No error: the kernel.exception listeners were not called.
  assert.ok(data.notCalled.some((listener) => listener.event === 'kernel.exception'));
});

test('EventDataCollector: an event dispatched with no listener is listed as orphaned; a listener that stopped propagation is marked', async () => {
  const routes = new RouteCollection().add('ok', new Route('/ok', { defaults: { _controller: async () => {
    await app.dispatcher.dispatch(new Event(), 'app.nobody_listens');
    await app.dispatcher.dispatch(new Event(), 'app.stopped');
    return new Response('ok');
  } } }));
  const { app } = debugKernel(routes);
  app.dispatcher.addListener('app.stopped', function stopper(event: Event) { event.stopPropagation(); }, 10);
  app.dispatcher.addListener('app.stopped', function never() {}, 0);
  const data = (await profileOf(app, await send(app, '/ok'))).collectors.events as EventsData;
  await app.close();
  assert.ok(data.orphaned.includes('app.nobody_listens'));
  const stopper = data.called.find((call) => call.event === 'app.stopped' && call.listener.includes('stopper'));
  assert.is(stopper?.stoppedPropagation, true);
  assert.ok(data.notCalled.some((listener) => listener.event === 'app.stopped' && listener.listener.includes('never')));
});

test('MemoryDataCollectorTest::testCollect: memory is whole bytes, the collector is named memory', async () => {
  const collector = new MemoryCollector();
  assert.is(collector.name, 'memory');
  const data = JSON.parse(collector.lateCollect().json) as MemoryData;
  assert.ok(Number.isInteger(data.heapUsed) && data.heapUsed > 0);
  assert.ok(Number.isInteger(data.rss) && data.rss! > 0);
});

test.run();
