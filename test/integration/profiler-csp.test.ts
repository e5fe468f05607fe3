// The profiler's pages and the error pages, as a debug server sends them, run nothing but their
// own script and style under their Content-Security-Policy, each with a nonce of its own; the
// debug toolbar still runs on the debug error page.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { HttpError, RequestType, Response, type Request } from '../../kernel/index.js';
import { PROFILER_PANELS } from '../../lib/profiler/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { allowsInline, inlineCode, inlineElements, sourcesFor } from '../csp-check.js';
import { SCHEMES, fetchFrom, header, savedProfile, startTestServer, type TestResponse, type TestServer } from './harness.js';

const XSS = '"><script>alert(1)</script><img src=x onerror=alert(2)>';

function htmlPage(title: string, content: string): Response {
  return new Response(`<!DOCTYPE html><html><head><title>${title}</title></head><body>${content}</body></html>`, 200, { 'content-type': 'text/html; charset=UTF-8' });
}

/** Routes that fill profiles with every kind of data: logs, an exception chain, a sub-request, a redirect. */
function routes(server: () => TestServer): RouteCollection {
  const collection = new RouteCollection();
  const add = (name: string, path: string, controller: (request: Request) => Response | Promise<Response>): void => {
    collection.add(name, new Route(path, { methods: ['GET'], defaults: { _controller: controller } }));
  };
  add('page', '/page', () => htmlPage('page', '<p>An application page.</p>'));
  add('fail', '/fail', (request) => {
    server().app.logger.warning('About to fail for {query}', { query: request.url });
    server().app.logger.error(`Failing: ${XSS}`);
    throw new HttpError(500, `Boom ${XSS}`, { cause: new TypeError(`javascript:alert(3) ${XSS}`) });
  });
  add('outer', '/outer', async (request) => {
    const inner = await server().app.kernel.handle(request.duplicate({ attributes: { _controller: () => new Response('<p>inner</p>', 200, { 'content-type': 'text/html; charset=UTF-8' }) } }), RequestType.SUB, true);
    return htmlPage('outer', String(inner.body));
  });
  add('go', '/go', () => Response.redirect('/page'));
  add('dir', '/dir/', () => htmlPage('dir', '<p>A directory.</p>'));
  return collection;
}

/** What the panels show of the requests above: the pages checked hold every kind of data. */
const SIGNS = ['Sub-requests:', 'Sub-request of', 'The router answered with a redirect', 'TypeError', 'About to fail', 'id="wf-bar-0"', 'Token not found', 'results found', 'status-3xx'];

function policyOf(response: TestResponse, label: string): string {
  const policy = response.headers['content-security-policy'];
  assert.type(policy, 'string', `${label}: one Content-Security-Policy header`);
  return policy as string;
}

function nonceOf(policy: string): string {
  return /'nonce-([^']+)'/.exec(policy)?.[1] ?? '';
}

for (const scheme of SCHEMES) {
  const test = suite(`Content-Security-Policy of the profiler and error pages over ${scheme}`);
  let server: TestServer;
  /** Tokens of profiles with: an exception and logs, its error page, a sub-request, its child, a redirect, hostile values. */
  const tokens: string[] = [];

  test.before(async () => {
    server = await startTestServer({ kernel: { env: 'dev', debug: true, routes: routes(() => server) } });
    const requests: Array<[string, Record<string, string>]> = [
      ['/fail?next=javascript:alert(1)', { referer: 'javascript:alert(1)', 'x-evil': XSS }],
      ['/outer', {}],
      ['/go', {}],
      ['/dir', {}],
      [`/page?q=${encodeURIComponent(XSS)}`, { referer: XSS }],
      ['/no-such-page', {}],
    ];
    for (const [path, headers] of requests) {
      const response = await fetchFrom(server, scheme, path, { headers });
      const token = header(response.headers['x-debug-token']);
      const profile = await savedProfile(server, token);
      tokens.push(token, ...profile.children);
    }
    for (const token of tokens) await savedProfile(server, token);
  });
  test.after(async () => server.close());

  /** Every HTML page of the profiler: search, home, every panel of every profile, "Token not found". */
  function profilerPages(): string[] {
    return [
      '/_profiler/',
      '/_profiler/search',
      `/_profiler/search?url=${encodeURIComponent(XSS)}&method=${encodeURIComponent(XSS)}&ip=127.0.0.1&limit=100`,
      ...tokens.flatMap((token) => [`/_profiler/${token}`, ...PROFILER_PANELS.map((panel) => `/_profiler/${token}?panel=${panel}`)]),
      '/_profiler/ffffff',
      `/_profiler/${encodeURIComponent(XSS)}`,
    ];
  }

  test('every profiler page and panel runs only its own <script> and <style>, by the nonce of its policy; no handler, javascript: URL or style= anywhere', async () => {
    assert.ok(tokens.length >= 9, `profiles: ${tokens.join(' ')}`);
    const seen = new Set<string>();
    for (const path of profilerPages()) {
      const response = await fetchFrom(server, scheme, path);
      for (const sign of SIGNS) if (response.body.includes(sign)) seen.add(sign);
      assert.ok(response.status === 200 || response.status === 404, `${path}: ${response.status}`);
      assert.match(header(response.headers['content-type']), /^text\/html/, path);
      const policy = policyOf(response, path);
      const nonce = nonceOf(policy);
      assert.match(nonce, /^[A-Za-z0-9+/]{22}==$/, `${path}: ${policy}`);
      assert.equal(sourcesFor(policy, 'script-src-elem'), [`'nonce-${nonce}'`], path);
      assert.equal(sourcesFor(policy, 'style-src-elem'), [`'nonce-${nonce}'`], path);
      assert.equal(sourcesFor(policy, 'style-src-attr'), [`'nonce-${nonce}'`], path);
      assert.equal(sourcesFor(policy, 'default-src'), ["'none'"], path);
      assert.equal(sourcesFor(policy, 'base-uri'), ["'none'"], path);
      assert.equal(sourcesFor(policy, 'frame-ancestors'), ["'none'"], path);
      const elements = inlineElements(response.body);
      assert.equal(elements.map((element) => element.tag), ['style', 'script'], path);
      for (const element of elements) {
        assert.is(element.attributes.get('nonce'), nonce, `${path}: <${element.tag}>`);
        assert.ok(allowsInline(policy, element), `${path}: <${element.tag}>`);
      }
      assert.equal(inlineCode(response.body), [], path);
    }
    assert.equal([...seen].sort(), [...SIGNS].sort(), 'the pages showed every kind of data');
  });

  test('a nonce is never reused: every page, and the same page twice, has its own', async () => {
    const nonces = new Set<string>();
    const pages = [...profilerPages(), ...profilerPages().slice(0, 5)];
    for (const path of pages) nonces.add(nonceOf(policyOf(await fetchFrom(server, scheme, path), path)));
    for (let i = 0; i < 3; i++) nonces.add(nonceOf(policyOf(await fetchFrom(server, scheme, '/fail'), '/fail')));
    assert.is(nonces.size, pages.length + 3);
  });

  test('JSON answers, the redirect of /_profiler/latest and an empty /_wdt 404 allow nothing at all', async () => {
    const answers = [
      await fetchFrom(server, scheme, '/_profiler/', { headers: { accept: 'application/json' } }),
      await fetchFrom(server, scheme, `/_profiler/${tokens[0]}`, { headers: { accept: 'application/json' } }),
      await fetchFrom(server, scheme, '/_profiler/ffffff', { headers: { accept: 'application/json' } }),
      await fetchFrom(server, scheme, '/_profiler/latest'),
    ];
    assert.is(answers[3]!.status, 302);
    for (const answer of answers) assert.is(answer.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
    const missing = await fetchFrom(server, scheme, '/_wdt/ffffff');
    assert.is(missing.status, 404);
    assert.equal(sourcesFor(policyOf(missing, '/_wdt/ffffff'), 'default-src'), ["'none'"]);
  });

  test('/_wdt/<token> opened by itself runs only the bar\'s own script and style (by hash)', async () => {
    for (const token of tokens) {
      const bar = await fetchFrom(server, scheme, `/_wdt/${token}`);
      assert.is(bar.status, 200);
      const policy = policyOf(bar, token);
      assert.equal(sourcesFor(policy, 'default-src'), ["'none'"]);
      assert.equal(sourcesFor(policy, 'frame-ancestors'), ["'none'"]);
      const elements = inlineElements(bar.body);
      assert.equal(elements.map((element) => element.tag), ['style', 'script']);
      for (const element of elements) assert.ok(allowsInline(policy, element), `${token}: <${element.tag}>`);
      assert.not.ok(allowsInline(policy, { tag: 'script', attributes: new Map(), text: 'alert(1)' }));
      assert.equal(inlineCode(bar.body), [], token);
    }
  });

  test('the debug error page runs its own <style> by nonce and the toolbar by hash: the loader, its fetch of the bar, the bar\'s script and style', async () => {
    for (const path of ['/fail?x=javascript:alert(1)', '/no-such-page']) {
      const response = await fetchFrom(server, scheme, path, { headers: { 'x-evil': XSS } });
      assert.is(response.status, path === '/fail?x=javascript:alert(1)' ? 500 : 404);
      const policy = policyOf(response, path);
      const nonce = nonceOf(policy);
      assert.match(nonce, /^[A-Za-z0-9+/]{22}==$/, policy);
      assert.equal(sourcesFor(policy, 'default-src'), ["'none'"]);
      assert.equal(sourcesFor(policy, 'frame-ancestors'), ["'none'"]);
      assert.equal(sourcesFor(policy, 'base-uri'), ["'none'"]);
      const elements = inlineElements(response.body);
      assert.equal(elements.map((element) => element.tag), ['style', 'script'], 'the page\'s style, then the toolbar loader');
      assert.is(elements[0]!.attributes.get('nonce'), nonce);
      for (const element of elements) assert.ok(allowsInline(policy, element), `${path}: <${element.tag}>`);
      assert.equal(inlineCode(response.body), [], path);
      // The loader fetches the bar from this origin and inserts it: its script and style run under the page's policy.
      const token = header(response.headers['x-debug-token']);
      const src = /data-src="([^"]+)"/.exec(response.body)?.[1];
      assert.is(src, `/_wdt/${token}`);
      assert.ok(sourcesFor(policy, 'connect-src')!.includes("'self'"), policy);
      const bar = await fetchFrom(server, scheme, src!);
      const barElements = inlineElements(bar.body);
      assert.is(barElements.length, 2);
      for (const element of barElements) assert.ok(allowsInline(policy, element), `the bar's <${element.tag}> on ${path}`);
    }
  });

  test('an error page on a profiler URL (a bad search, an unknown panel) has the debug page\'s policy, and runs nothing of the client\'s', async () => {
    for (const [path, status] of [['/_profiler/search?status=abc', 400], [`/_profiler/${tokens[0]}?panel=${encodeURIComponent(XSS)}`, 404]] as const) {
      const response = await fetchFrom(server, scheme, path);
      assert.is(response.status, status, path);
      const policy = policyOf(response, path);
      const [style] = inlineElements(response.body);
      assert.ok(style !== undefined && allowsInline(policy, style) && style.attributes.get('nonce') === nonceOf(policy), policy);
      assert.equal(sourcesFor(policy, 'frame-ancestors'), ["'none'"]);
      assert.equal(inlineCode(response.body), [], path);
      assert.not.ok(response.body.includes(XSS), `${path}: the client's text is escaped`);
    }
  });

  test('an application\'s own page keeps its own policy: the toolbar adds none where the page had none', async () => {
    const response = await fetchFrom(server, scheme, '/page');
    assert.ok(response.body.includes('/_wdt/'));
    assert.is(response.headers['content-security-policy'], undefined);
  });

  test.run();
}

for (const scheme of SCHEMES) {
  const test = suite(`Content-Security-Policy of the plain error page over ${scheme}`);
  let server: TestServer;

  test.before(async () => {
    server = await startTestServer({ kernel: { env: 'prod', debug: false, routes: routes(() => server) } });
  });
  test.after(async () => server.close());

  test('the plain error page runs only its own <style>, by a nonce of its own', async () => {
    const nonces = new Set<string>();
    for (const path of ['/fail', '/no-such-page', '/fail']) {
      const response = await fetchFrom(server, scheme, path);
      const policy = policyOf(response, path);
      const nonce = nonceOf(policy);
      assert.match(nonce, /^[A-Za-z0-9+/]{22}==$/, policy);
      nonces.add(nonce);
      assert.equal(sourcesFor(policy, 'default-src'), ["'none'"]);
      const elements = inlineElements(response.body);
      assert.equal(elements.map((element) => [element.tag, element.attributes.get('nonce')]), [['style', nonce]], path);
      assert.ok(allowsInline(policy, elements[0]!));
      assert.equal(inlineCode(response.body), [], path);
    }
    assert.is(nonces.size, 3);
  });

  test.run();
}
