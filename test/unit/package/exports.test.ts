import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';

const root = fileURLToPath(new URL('../../../../', import.meta.url));
const manifest = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as {
  exports: Record<string, string | { types?: string; default?: string }>;
};

const test = suite('package exports');

test('the root entry exposes the kernel by the package name', async () => {
  const root = (await import('http-kernel')) as Record<string, unknown>;
  for (const name of ['HttpKernel', 'EventDispatcher', 'TraceableEventDispatcher', 'Request', 'Response', 'RequestStack', 'NotFoundHttpError']) {
    assert.type(root[name], 'function', name);
  }
  assert.is((root.KernelEvents as Record<string, string>).REQUEST, 'kernel.request');
});

test("the root entry keeps the kernel's cookie bookkeeping to itself: secureCookies() called out of turn would drop the Secure a cookie is owed", async () => {
  const root = (await import('http-kernel')) as Record<string, unknown>;
  assert.is(root.secureCookies, undefined);
});

test("the root entry keeps the kernel's response-body helpers to itself: withoutHeadBody(), destroyBody() and checkResponseBody() are the kernel's and servers' steps, not API", async () => {
  const root = (await import('http-kernel')) as Record<string, unknown>;
  for (const name of ['withoutHeadBody', 'destroyBody', 'checkResponseBody']) assert.is(root[name], undefined, name);
  for (const name of ['discardedBody', 'headBodyLength']) assert.type(root[name], 'function', `${name} stays, for servers of an embedder's`);
});

test('subpaths expose routing, server, errors, log and app', async () => {
  assert.type((await import('http-kernel/routing')).RouteCollection, 'function');
  assert.type((await import('http-kernel/server')).startServers, 'function');
  assert.type((await import('http-kernel/server')).capYoungGeneration, 'function');
  const profiler = await import('http-kernel/profiler');
  assert.equal([profiler.MIN_TOKEN_LENGTH, profiler.MAX_TOKEN_LENGTH, profiler.isTokenLength(8), profiler.isTokenLength(5)], [6, 32, true, false]);
  assert.type((await import('http-kernel/errors')).renderDebugPage, 'function');
  assert.type((await import('http-kernel/log')).Logger, 'function');
  assert.type((await import('http-kernel/app')).createKernel, 'function');
});

test('every subpath gives types and code that exist in dist/', () => {
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    if (subpath === './package.json') continue;
    assert.type(target, 'object', subpath);
    const { types, default: code } = target as { types?: string; default?: string };
    assert.ok(types?.endsWith('.d.ts'), `${subpath}: types`);
    assert.ok(code?.endsWith('.js'), `${subpath}: default`);
    assert.ok(existsSync(`${root}${types}`), `${subpath}: ${types} exists`);
    assert.ok(existsSync(`${root}${code}`), `${subpath}: ${code} exists`);
  }
});

test('the listeners of the default chain are importable (http-kernel/http)', async () => {
  const http = await import('http-kernel/http');
  assert.type(http.ResponseListener, 'function');
  assert.type(http.DisallowRobotsIndexingListener, 'function');
  assert.type(http.ValidateHostListener, 'function');
});

test('a collector can write its own JSON with the built-in collectors\' helpers (http-kernel/profiler)', async () => {
  const { RawJson, jsonNumber, jsonString, jsonStringOrNull, jsonValue } = await import('http-kernel/profiler');
  const raw = new RawJson(`{"name":${jsonString('a"b')},"note":${jsonStringOrNull(null)},"n":${jsonNumber(Infinity)},"v":${jsonValue([1])}}`);
  assert.equal(JSON.parse(JSON.stringify(raw)), { name: 'a"b', note: null, n: null, v: [1] });
});

test('the tarball holds the built code, sources and licence, and no tests, certificates or var/ data', () => {
  // npm_execpath is npm's own script under `npm test`; `node test/run.mjs` finds npm on the PATH.
  const npmCli = process.env.npm_execpath;
  const [command, args] =
    npmCli !== undefined && /npm-cli\.js$/.test(npmCli) ? [process.execPath, [npmCli]] : ['npm', [] as string[]];
  const output = execFileSync(command, [...args, 'pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const files = (JSON.parse(output) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((file) => file.path);
  for (const needed of ['package.json', 'README.md', 'LICENSE', 'bin/serve', 'dist/kernel/index.js', 'dist/lib/server/cli.js', 'kernel/index.ts']) {
    assert.ok(files.includes(needed), `${needed} is packed`);
  }
  const unwanted = files.filter((path) => /^(dist\/)?(test|bench|var)\/|\.(pem|key|crt)$|\.tgz$/.test(path));
  assert.equal(unwanted, []);
});

test('an embedder can run a request through the kernel without a socket', async () => {
  const { Request, Response } = await import('http-kernel');
  const { createKernel } = await import('http-kernel/app');
  const { Route, RouteCollection } = await import('http-kernel/routing');
  const routes = new RouteCollection();
  routes.add('book', new Route('/books/:id', { methods: ['GET'], requirements: { id: '\\d+' }, defaults: { _controller: (_: unknown, params: { id: string }) => Response.json({ id: Number(params.id) }) } }));
  const app = createKernel({ routes, stderrLogLevel: false });
  const ok = await app.kernel.handle(Request.create('/books/42'));
  assert.is(ok.status, 200);
  assert.is(ok.body, '{"id":42}');
  const miss = await app.kernel.handle(Request.create('/books/abc'));
  assert.is(miss.status, 404);
  await app.close();
});

test('an embedder can inject a request as the server would, and a kernel of its own has createInjector', async () => {
  const { Response } = await import('http-kernel');
  const { createKernel } = await import('http-kernel/app');
  const { Route, RouteCollection } = await import('http-kernel/routing');
  const routes = new RouteCollection();
  routes.add('book', new Route('/books/:id', { defaults: { _controller: (_: unknown, params: { id: string }) => Response.json({ id: Number(params.id) }) } }));
  const app = createKernel({ routes, stderrLogLevel: false, trustedHosts: ['books.example'] });
  assert.equal((await app.inject('http://books.example/books/42')).json(), { id: 42 });
  assert.is((await app.inject('/books/42')).status, 400);
  await app.close();
  assert.type((await import('http-kernel/server')).createInjector, 'function');
});

test.run();
