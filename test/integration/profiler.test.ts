import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Agent, request } from 'undici';
import { Response, type Request } from '../../kernel/index.js';
import type { LogEntry, LogRecord } from '../../lib/log/index.js';
import { Route, RouteCollection } from '../../lib/routing/index.js';
import { MemoryStorage } from '../../lib/profiler/storage/index.js';
import { SCHEMES, agentFrom, decodeEntities, fetchFrom, header, savedProfile, startTestServer, type TestServer } from './harness.js';
import { serveWorkDir, startServe, stopServes } from './serve-process.js';

async function json(server: TestServer, scheme: 'http' | 'https', path: string): Promise<{ status: number; body: any }> {
  const response = await fetchFrom(server, scheme, path, { headers: { accept: 'application/json' } });
  return { status: response.status, body: response.status === 200 ? JSON.parse(response.body) : response.body };
}

for (const scheme of SCHEMES) {
  const test = suite(`profiler over ${scheme}`);
  let server: TestServer;
  let origin: string;

  test.before(async () => {
    server = await startTestServer({ app: { profiler: { storage: new MemoryStorage() } } });
    origin = server.urls[scheme];
  });
  test.after(async () => server.close());

  test('a failing call is recorded twice: X-Debug-Token (main), X-Previous-Debug-Token (error page), X-Debug-Token-Link', async () => {
    const response = await fetchFrom(server, scheme, '/robots.txt');
    assert.is(response.status, 404);
    const token = header(response.headers['x-debug-token']);
    const previous = header(response.headers['x-previous-debug-token']);
    assert.match(token, /^[0-9a-f]{6}$/);
    assert.match(previous, /^[0-9a-f]{6}$/);
    assert.is.not(token, previous);
    assert.is(header(response.headers['x-debug-token-link']), `${origin}/_profiler/${token}`);
    const main = await savedProfile(server, token);
    const sub = await savedProfile(server, previous);
    assert.equal(main.children, [previous]);
    assert.is(sub.parent, token);
    assert.is(main.status, 404);
    assert.is(main.method, 'GET');
    assert.is(main.url, `${origin}/robots.txt`);
    assert.is(main.ip, '127.0.0.1');
  });

  test('the profile JSON holds the exception chain and the request\'s logs', async () => {
    const response = await fetchFrom(server, scheme, '/robots.txt');
    const token = header(response.headers['x-debug-token']);
    await savedProfile(server, token);
    const { status, body } = await json(server, scheme, `/_profiler/${token}`);
    assert.is(status, 200);
    for (const key of ['token', 'parent', 'children', 'ip', 'method', 'url', 'time', 'status', 'collectors']) assert.ok(key in body, key);
    const exceptions = body.collectors.exception.exceptions;
    assert.equal(exceptions.map((e: any) => e.class), ['NotFoundHttpError', 'ResourceNotFoundError']);
    assert.is(exceptions[0].message, `No route found for "GET ${origin}/robots.txt"`);
    assert.is(exceptions[1].message, 'No routes found for "/robots.txt/".');
    assert.ok(exceptions[0].frames.some((frame: any) => String(frame.file).endsWith('router-listener.ts')));
    const logs = body.collectors.logger.logs;
    assert.ok(logs.some((record: any) => record.levelName === 'ERROR' && record.message.startsWith('Uncaught error: NotFoundHttpError')));
    for (const record of logs) for (const field of ['time', 'level', 'channel', 'message', 'context']) assert.ok(field in record, field);
  });

  test('a profile as JSON is {token, parent, children, ip, method, url, time, status, collectors}; each exception {class, message, status, frames}, each log record {time, level, channel, message, context}', async () => {
    const response = await fetchFrom(server, scheme, '/robots.txt');
    const token = header(response.headers['x-debug-token']);
    const previous = header(response.headers['x-previous-debug-token']);
    await savedProfile(server, token);
    const { status, body } = await json(server, scheme, `/_profiler/${token}`);
    assert.is(status, 200);
    assert.equal(Object.keys(body).sort(), ['children', 'collectors', 'ip', 'method', 'parent', 'status', 'time', 'token', 'url']);
    assert.is(body.token, token);
    assert.is(body.parent, null);
    assert.equal(body.children, [previous]);
    assert.is(body.ip, '127.0.0.1');
    assert.is(body.method, 'GET');
    assert.is(body.url, `${origin}/robots.txt`);
    assert.ok(Number.isInteger(body.time) && Math.abs(Date.now() - body.time) < 60_000, `time is epoch milliseconds: ${body.time}`);
    assert.is(body.status, 404);
    const exceptions = body.collectors.exception.exceptions;
    assert.equal(exceptions.map((e: any) => [e.class, e.message, e.status]), [
      ['NotFoundHttpError', `No route found for "GET ${origin}/robots.txt"`, 404],
      ['ResourceNotFoundError', 'No routes found for "/robots.txt/".', 404],
    ]);
    for (const exception of exceptions) {
      assert.ok(Array.isArray(exception.frames) && exception.frames.length > 0, exception.class);
      for (const frame of exception.frames) assert.ok('file' in frame && 'line' in frame, exception.class);
    }
    const logs = body.collectors.logger.logs;
    assert.ok(logs.length > 0);
    for (const record of logs) {
      assert.type(record.time, 'number');
      assert.type(record.level, 'number');
      assert.type(record.channel, 'string');
      assert.type(record.message, 'string');
      assert.type(record.context, 'object');
    }
    assert.ok(logs.some((record: any) => record.channel === 'request' && record.message.startsWith('Uncaught error: NotFoundHttpError')));
  });

  test('the router logs Matched route "<name>". at INFO on the request channel, in the request\'s profile', async () => {
    const response = await fetchFrom(server, scheme, '/health');
    const profile = await savedProfile(server, header(response.headers['x-debug-token']));
    const matched = profile.collectors.logger.logs.filter((record: any) => record.message.startsWith('Matched route'));
    assert.equal(matched.map((record: any) => [record.message, record.level, record.channel]), [['Matched route "health".', 6, 'request']], 'INFO is syslog level 6');
  });

  test('the HTML panel shows exceptions, logs and stack traces with source lines; the default panel is the exception', async () => {
    const response = await fetchFrom(server, scheme, '/robots.txt');
    const token = header(response.headers['x-debug-token']);
    await savedProfile(server, token);
    const page = await fetchFrom(server, scheme, `/_profiler/${token}`);
    assert.is(page.status, 200);
    const text = decodeEntities(page.body);
    assert.ok(text.includes(`No route found for "GET ${origin}/robots.txt"`));
    assert.ok(text.includes('NotFoundHttpError'));
    assert.ok(text.includes('router-listener.ts'));
    // The source lines around the throw, as on the debug error page, the throwing line highlighted.
    const highlighted = /<span class="line highlight"><span class="number">\d+<\/span>([^<]*)<\/span>/.exec(page.body);
    assert.ok(highlighted, 'the exception panel shows a source excerpt');
    assert.match(decodeEntities(highlighted![1]!), /throw new NotFoundHttpError\(noRouteFoundMessage\(request, path\)/);
    for (const panel of ['request', 'exception', 'logger', 'events', 'time', 'router']) {
      const other = await fetchFrom(server, scheme, `/_profiler/${token}?panel=${panel}`);
      assert.is(other.status, 200, panel);
    }
    const logger = decodeEntities((await fetchFrom(server, scheme, `/_profiler/${token}?panel=logger`)).body);
    assert.ok(logger.includes('Uncaught error: NotFoundHttpError'));
  });

  test('the default panel is the exception one when there is one, else the request one; a main profile and its sub-request link to each other', async () => {
    const selected = (html: string): string => /<main class="panel" id="panel-([^"]+)">/.exec(html)?.[1] ?? '';
    const failed = await fetchFrom(server, scheme, '/robots.txt');
    const token = header(failed.headers['x-debug-token']);
    const previous = header(failed.headers['x-previous-debug-token']);
    const ok = header((await fetchFrom(server, scheme, '/health')).headers['x-debug-token']);
    for (const saved of [token, previous, ok]) await savedProfile(server, saved);
    const main = (await fetchFrom(server, scheme, `/_profiler/${token}`)).body;
    assert.is(selected(main), 'exception');
    assert.is(selected((await fetchFrom(server, scheme, `/_profiler/${ok}`)).body), 'request');
    assert.match(main, `href="/_profiler/${previous}"`, 'the main profile links to its sub-request');
    assert.match((await fetchFrom(server, scheme, `/_profiler/${previous}`)).body, `href="/_profiler/${token}"`, 'the sub-request links to its parent');
  });

  test('the debug error page links to the panel of its request', async () => {
    const response = await fetchFrom(server, scheme, '/robots.txt');
    const token = header(response.headers['x-debug-token']);
    assert.ok(response.body.includes(`/_profiler/${token}`));
  });

  test('search: count sentence, the columns, time format, newest first, sub-requests listed', async () => {
    await fetchFrom(server, scheme, '/robots.txt');
    const page = await fetchFrom(server, scheme, '/_profiler/search?status=404&limit=5');
    assert.is(page.status, 200);
    assert.match(page.body, /\d+ results? found/);
    for (const column of ['Status', 'IP', 'Method', 'URL', 'Time', 'Token']) assert.match(page.body, new RegExp(`<th scope="col">${column}[< ]`), column);
    // The Time column names the zone its times are in, the server's.
    assert.match(page.body, `<th scope="col">Time <span class="zone">(${new Intl.DateTimeFormat().resolvedOptions().timeZone})</span></th>`);
    assert.match(page.body, /\d{2}-[A-Z][a-z]{2}-\d{4} \d{2}:\d{2}:\d{2}/);
    const { body } = await json(server, scheme, '/_profiler/search?status=404&limit=5');
    assert.ok(body.results.length >= 2 && body.results.length <= 5);
    assert.ok(body.results.every((r: any) => r.status === 404));
    for (let i = 1; i < body.results.length; i++) assert.ok(body.results[i - 1].time >= body.results[i].time, 'newest first');
    assert.ok(body.results.some((r: any) => r.parent !== null), 'sub-request profiles are listed');
    const none = await fetchFrom(server, scheme, '/_profiler/search?url=no-such-thing-anywhere');
    assert.match(none.body, /No results found/);
  });

  test('the search count reads exactly "N results found", "1 result found" or "No results found", above a row per result whose token links to its panel', async () => {
    const response = await fetchFrom(server, scheme, '/robots.txt');
    const token = header(response.headers['x-debug-token']);
    const previous = header(response.headers['x-previous-debug-token']);
    for (const saved of [token, previous]) await savedProfile(server, saved);
    const two = await fetchFrom(server, scheme, '/_profiler/search?status=404&limit=2');
    assert.match(two.body, '<h1 class="result-count">2 results found</h1>');
    assert.ok(two.body.indexOf('2 results found') < two.body.indexOf('<table'), 'the count above the table');
    assert.match(two.body, `<a class="mono" href="/_profiler/${token}">${token}</a>`);
    assert.match(two.body, `<a class="mono" href="/_profiler/${previous}">${previous}</a>`, 'the sub-request is listed too');
    assert.match((await fetchFrom(server, scheme, '/_profiler/search?status=404&limit=1')).body, '<h1 class="result-count">1 result found</h1>');
    assert.match((await fetchFrom(server, scheme, '/_profiler/search?status=599')).body, '<h1 class="result-count">No results found</h1>');
  });

  test('bad search input is a 400 naming the filter, with the headers of every profiler answer, as HTML and as JSON', async () => {
    const response = await fetchFrom(server, scheme, '/_profiler/search?status=abc');
    assert.is(response.status, 400);
    assert.match(decodeEntities(response.body), /"status" filter/);
    for (const accept of ['text/html', 'application/json']) {
      const answer = await fetchFrom(server, scheme, '/_profiler/search?limit=0', { headers: { accept } });
      assert.is(answer.status, 400, accept);
      assert.is(answer.headers['cache-control'], 'no-store', accept);
      assert.is(answer.headers['x-content-type-options'], 'nosniff', accept);
      assert.is(answer.headers['x-frame-options'], 'DENY', accept);
      assert.is(answer.headers['referrer-policy'], 'same-origin', accept);
      assert.match(String(answer.headers['content-security-policy']), /frame-ancestors 'none'/, accept);
    }
    const crossed = await fetchFrom(server, scheme, '/_profiler/search?start=2026-11-22&end=2026-11-21', { headers: { accept: 'application/json' } });
    assert.is(crossed.status, 400);
    assert.match(JSON.parse(crossed.body).detail, /The "start" filter is after the "end" filter/);
    for (const name of ['start', 'end']) {
      const past = await fetchFrom(server, scheme, `/_profiler/search?${name}=99999999999999999999`, { headers: { accept: 'application/json' } });
      assert.is(past.status, 400, name);
      assert.match(JSON.parse(past.body).detail, `The "${name}" filter must be epoch milliseconds from 0 to 8640000000000000`);
    }
  });

  test('/_profiler/ lists the latest, /_profiler/latest redirects to the newest, and profiler pages are not recorded', async () => {
    const home = await fetchFrom(server, scheme, '/_profiler/');
    assert.is(home.status, 200);
    assert.is(home.headers['x-debug-token'], undefined);
    const latest = await fetchFrom(server, scheme, '/_profiler/latest');
    assert.is(latest.status, 302);
    assert.match(header(latest.headers.location), /^\/_profiler\/[0-9a-f]{6}$/);
    const { body } = await json(server, scheme, '/_profiler/search?url=_profiler&limit=100');
    assert.is(body.results.length, 0);
  });

  test('a request under /_profiler/ or /_wdt/ that is none of the profiler\'s pages is recorded, as any other', async () => {
    for (const [method, path, status] of [
      ['GET', '/_profiler/abcdef/extra', 404],
      ['GET', '/_profiler//abcdef', 404],
      ['GET', '/_wdt/', 404],
      ['POST', '/_profiler/search', 405],
    ] as const) {
      const response = await fetchFrom(server, scheme, path, { method });
      assert.is(response.status, status, `${method} ${path}`);
      const token = header(response.headers['x-debug-token']);
      assert.match(token, /^[0-9a-f]{6}$/, `${method} ${path}`);
      const profile = await json(server, scheme, `/_profiler/${token}`);
      assert.is(profile.body.status, status, `${method} ${path}: its profile`);
    }
    // The pages themselves still are not, HEAD included.
    assert.is((await fetchFrom(server, scheme, '/_profiler/search', { method: 'HEAD' })).headers['x-debug-token'], undefined);
  });

  test('an unknown or malformed token is a 404 "Token not found"', async () => {
    for (const token of ['ffffff', 'zzzzzz', '..%2F..%2Fetc', 'abc']) {
      const response = await fetchFrom(server, scheme, `/_profiler/${token}`);
      assert.is(response.status, 404, token);
      assert.match(response.body, /Token not found/);
    }
  });

  test('a page asked for as application/json; charset=utf-8 is JSON; text/html; charset=utf-8 first is HTML', async () => {
    for (const accept of ['application/json; charset=utf-8', 'application/json;charset=UTF-8, */*;q=0.1']) {
      const response = await fetchFrom(server, scheme, '/_profiler/search?limit=1', { headers: { accept } });
      assert.is(header(response.headers['content-type']), 'application/json', accept);
      assert.is(JSON.parse(response.body).count, 1, accept);
    }
    const html = await fetchFrom(server, scheme, '/_profiler/search?limit=1', { headers: { accept: 'text/html; charset=utf-8, application/json;q=0.9' } });
    assert.is(header(html.headers['content-type']), 'text/html; charset=UTF-8');
  });

  test('a page or error asked for as application/json with another parameter (a version) is JSON', async () => {
    const accept = 'application/json; v=2, text/html;q=0.9';
    const page = await fetchFrom(server, scheme, '/_profiler/search?limit=1', { headers: { accept } });
    assert.is(header(page.headers['content-type']), 'application/json');
    assert.is(JSON.parse(page.body).count, 1);
    const error = await fetchFrom(server, scheme, '/_profiler/search?limit=abc', { headers: { accept } });
    assert.is(error.status, 400);
    assert.is(header(error.headers['content-type']), 'application/problem+json');
    assert.match(JSON.parse(error.body).detail, /"limit" filter/);
  });

  test('every page that is HTML or JSON by Accept says Vary: Accept, found or not, as do its errors; the redirect and the toolbar do not', async () => {
    const home = await fetchFrom(server, scheme, '/');
    const token = header(home.headers['x-debug-token']);
    await savedProfile(server, token);
    for (const path of ['/_profiler/', '/_profiler/search?limit=1', `/_profiler/${token}`, `/_profiler/${token}?panel=logger`, '/_profiler/ffffff', '/_profiler/search?limit=abc']) {
      for (const accept of ['text/html', 'application/json']) {
        const response = await fetchFrom(server, scheme, path, { headers: { accept } });
        assert.is(header(response.headers.vary), 'Accept', `${path} as ${accept}`);
      }
    }
    assert.is((await fetchFrom(server, scheme, '/_profiler/latest')).headers.vary, undefined);
    assert.is((await fetchFrom(server, scheme, `/_wdt/${token}`)).headers.vary, undefined);
  });

  test('an unknown token asked for as JSON is named with <, > and & escaped, as problem+json has them', async () => {
    const response = await fetchFrom(server, scheme, '/_profiler/%3Cscript%3E%26', { headers: { accept: 'application/json' } });
    assert.is(response.status, 404);
    assert.is(header(response.headers['content-type']), 'application/json');
    assert.not.ok(/[<>&]/.test(response.body), response.body);
    assert.ok(response.body.includes('\\u003cscript\\u003e\\u0026'), response.body);
    assert.equal(JSON.parse(response.body), { error: 'Token not found', token: '<script>&' });
  });

  test('HTML pages get the toolbar before </body>; /_wdt/<token> serves it', async () => {
    const home = await fetchFrom(server, scheme, '/');
    const token = header(home.headers['x-debug-token']);
    const at = home.body.lastIndexOf('</body>');
    assert.ok(home.body.slice(0, at).includes(`/_wdt/${token}`), 'loader before </body>');
    assert.is(Number(header(home.headers['content-length'])), Buffer.byteLength(home.body));
    const bar = await fetchFrom(server, scheme, `/_wdt/${token}`);
    assert.is(bar.status, 200);
    assert.ok(bar.body.includes('200'));
    const health = await fetchFrom(server, scheme, '/health');
    assert.not.ok(health.body.includes('_wdt'), 'no toolbar in JSON');
  });

  test('a body the application never read is said to be unread on the request panel', async () => {
    const response = await fetchFrom(server, scheme, '/health', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"bob"}' });
    assert.is(response.status, 405);
    const token = header(response.headers['x-debug-token']);
    await savedProfile(server, token);
    const page = await fetchFrom(server, scheme, `/_profiler/${token}?panel=request`);
    assert.match(page.body, 'The application did not read the body (14 bytes), so the profile has none of it');
  });

  test('secrets are redacted before storage', async () => {
    const response = await fetchFrom(server, scheme, '/health?token=s3cr3t-q&q=ok', { headers: { authorization: 'Bearer s3cr3t-h', cookie: 'session_id=s3cr3t-c; theme=dark' } });
    const token = header(response.headers['x-debug-token']);
    const stored = JSON.stringify(await savedProfile(server, token));
    assert.not.ok(stored.includes('s3cr3t'), 'no secret in the stored profile');
    assert.ok(stored.includes('dark'), 'harmless values kept');
  });

  test('a secret in the query of a Referer is redacted before storage, as in the request URL (the page a token was handed to links on)', async () => {
    const referer = `${origin}/callback?access_token=s3cr3t-r&state=ok`;
    const response = await fetchFrom(server, scheme, '/health', { headers: { referer } });
    const profile = await savedProfile(server, header(response.headers['x-debug-token']));
    assert.not.ok(JSON.stringify(profile).includes('s3cr3t'), 'no secret in the stored profile');
    assert.is(profile.collectors.request.requestHeaders.referer, `${origin}/callback?access_token=%5Bredacted%5D&state=ok`);
  });

  test('values from the request are escaped on the panel', async () => {
    const response = await fetchFrom(server, scheme, '/%3Cscript%3Ealert(1)%3C/script%3E?x=%3Cscript%3E', { headers: { referer: '"><script>alert(2)</script>', 'x-evil': '<script>alert(3)</script>' } });
    const token = header(response.headers['x-debug-token']);
    await savedProfile(server, token);
    for (const panel of ['request', 'exception', 'logger', 'router']) {
      const page = await fetchFrom(server, scheme, `/_profiler/${token}?panel=${panel}`);
      assert.not.ok(/<script>alert/.test(page.body), panel);
      assert.is(page.headers['x-content-type-options'], 'nosniff', panel);
      assert.is(page.headers['referrer-policy'], 'same-origin', panel);
      assert.is(page.headers['x-frame-options'], 'DENY', panel);
      assert.match(String(page.headers['content-security-policy']), /^default-src 'none'; script-src 'nonce-[^']+'; .*; frame-ancestors 'none'$/, panel);
    }
    // The profile's JSON names the same values with <, > and & escaped.
    const json = await fetchFrom(server, scheme, `/_profiler/${token}`, { headers: { accept: 'application/json' } });
    assert.is(json.status, 200);
    assert.is(json.headers['x-content-type-options'], 'nosniff');
    assert.not.ok(/[<>]/.test(json.body), json.body.slice(0, 200));
    assert.ok(JSON.stringify(JSON.parse(json.body)).includes('<script>alert(3)</script>'), 'the values themselves are intact');
    const search = await fetchFrom(server, scheme, '/_profiler/search?url=%253Cscript', { headers: { accept: 'application/json' } });
    assert.is(search.headers['x-content-type-options'], 'nosniff');
    assert.ok(JSON.parse(search.body).results.some((result: { token: string }) => result.token === token));
  });

  test('200 concurrent requests: each profile holds only its own logs', async () => {
    const responses = await Promise.all(Array.from({ length: 200 }, (_, i) => fetchFrom(server, scheme, `/concurrent-${i}-end`)));
    await Promise.all(
      responses.map(async (response, i) => {
        const profile = await savedProfile(server, header(response.headers['x-debug-token']));
        const messages: string[] = profile.collectors.logger.logs.map((record: any) => record.message);
        assert.ok(messages.length > 0);
        const paths = messages.join(' ').match(/\/concurrent-\d+-end/g) ?? [];
        assert.ok(paths.length > 0 && paths.every((path) => path === `/concurrent-${i}-end`), `profile ${i}: ${paths.join(' ')}`);
      }),
    );
  });

  test.run();
}

for (const scheme of SCHEMES) {
  const test = suite(`profiler with longer tokens over ${scheme}`);
  let server: TestServer;

  test.before(async () => {
    server = await startTestServer({ app: { profiler: { storage: new MemoryStorage(), tokenLength: 12 } } });
  });
  test.after(async () => server.close());

  test('tokenLength 12: both tokens have 12 hex characters, and X-Debug-Token-Link, the panel and the toolbar open them', async () => {
    const response = await fetchFrom(server, scheme, '/robots.txt');
    const token = header(response.headers['x-debug-token']);
    assert.match(token, /^[0-9a-f]{12}$/);
    assert.match(header(response.headers['x-previous-debug-token']), /^[0-9a-f]{12}$/);
    await savedProfile(server, token);
    const link = header(response.headers['x-debug-token-link']);
    assert.is(link, `${server.urls[scheme]}/_profiler/${token}`);
    assert.is((await fetchFrom(server, scheme, `/_profiler/${token}`)).status, 200);
    assert.is((await fetchFrom(server, scheme, `/_wdt/${token}`)).status, 200);
  });

  test.run();
}

/** A MemoryStorage whose saves wait until `open()`: the profiles stay unsaved meanwhile. */
class HeldStorage extends MemoryStorage {
  #open: Promise<void>;
  open!: () => void;
  constructor() {
    super();
    this.#open = new Promise((resolve) => (this.open = resolve));
  }
  override async writeMany(profiles: Parameters<MemoryStorage['writeMany']>[0]): Promise<void> {
    await this.#open;
    return super.writeMany(profiles);
  }
}

for (const scheme of SCHEMES) {
  const test = suite(`profiler before the save over ${scheme}`);
  let server: TestServer;
  let storage: HeldStorage;

  test.before(async () => {
    storage = new HeldStorage();
    server = await startTestServer({ app: { profiler: { storage } } });
  });
  test.after(async () => {
    storage.open();
    await server.close();
  });

  test('the toolbar /_wdt/<token> and the panel of a profile not saved yet are served', async () => {
    const home = await fetchFrom(server, scheme, '/');
    const token = header(home.headers['x-debug-token']);
    assert.ok(home.body.includes(`/_wdt/${token}`), 'the page has the loader');
    // Past kernel.terminate: the profile waits in the queue for its save.
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.is(await storage.read(token), null, 'not saved yet');
    const bar = await fetchFrom(server, scheme, `/_wdt/${token}`);
    assert.is(bar.status, 200);
    assert.match(bar.body, 'id="hk-toolbar"');
    assert.match(bar.body, `href="/_profiler/${token}?panel=request"`);
    assert.match(bar.body, '>200<');
    const panel = await fetchFrom(server, scheme, `/_profiler/${token}`, { headers: { accept: 'application/json' } });
    assert.is(panel.status, 200);
    assert.is(JSON.parse(panel.body).token, token);
  });

  test.run();
}

for (const scheme of SCHEMES) {
  const test = suite(`script in a request body over ${scheme}`);
  let server: TestServer;

  test.before(async () => {
    const routes = new RouteCollection()
      .add('echo', new Route('/echo', { methods: ['POST'], defaults: { _controller: async (request: Request) => Response.json(await request.json()) } }))
      .add('note', new Route('/note', { methods: ['POST'], defaults: { _controller: async (request: Request) => new Response(`${(await request.text()).length} characters`) } }));
    server = await startTestServer({ kernel: { routes, env: 'dev', debug: true, profiler: { storage: new MemoryStorage() } } });
  });
  test.after(async () => server.close());

  test('script tags in a JSON and a text body are escaped on the request panel, and intact in the JSON', async () => {
    for (const [path, type, body] of [
      ['/echo', 'application/json', '{"note":"<script>alert(5)</script>"}'],
      ['/note', 'text/plain', '</pre><script>alert(6)</script>'],
    ] as const) {
      const response = await fetchFrom(server, scheme, path, { method: 'POST', headers: { 'content-type': type }, body });
      assert.is(response.status, 200, path);
      const token = header(response.headers['x-debug-token']);
      await savedProfile(server, token);
      const page = await fetchFrom(server, scheme, `/_profiler/${token}?panel=request`);
      assert.is(page.status, 200, path);
      assert.not.ok(/<script>alert/.test(page.body), `${path}: no script injected`);
      assert.ok(decodeEntities(page.body).includes('<script>alert('), `${path}: the body is shown, escaped`);
      const profile = await fetchFrom(server, scheme, `/_profiler/${token}`, { headers: { accept: 'application/json' } });
      assert.ok(JSON.stringify(JSON.parse(profile.body).collectors.request).includes('<script>alert('), `${path}: the value itself is intact`);
    }
  });

  test.run();
}

const access = suite('profiler access');

access('a client outside --profiler-allow gets 404 for profiler pages, the plain error page and no debug headers', async () => {
  const server = await startTestServer({ app: { debugAllow: ['127.0.0.1/32'], profiler: { storage: new MemoryStorage() } } });
  const outsider = agentFrom('127.0.0.2');
  try {
    for (const scheme of SCHEMES) {
      const own = await fetchFrom(server, scheme, '/robots.txt');
      assert.match(header(own.headers['x-debug-token']), /^[0-9a-f]{6}$/, 'allowed client gets the token');
      const page = await fetchFrom(server, scheme, '/_profiler/', { dispatcher: outsider });
      assert.is(page.status, 404);
      assert.not.ok(page.body.includes('results found'));
      const error = await fetchFrom(server, scheme, '/robots.txt', { dispatcher: outsider });
      assert.is(error.status, 404);
      assert.not.ok(error.body.includes('Stack Trace'));
      assert.not.ok(error.body.includes('No route found'));
      assert.is(error.headers['x-debug-token'], undefined);
      assert.is(error.headers['x-debug-exception'], undefined);
      // Its 404 says what the router's says of any missing path, word for word, in problem+json too.
      for (const [hidden, missing] of [['/_profiler/', '/_profilerx/'], ['/_wdt/abcdef', '/_wdtx/abcdef']]) {
        const headers = { accept: 'application/json', referer: 'http://r.test/' };
        const [one, other] = await Promise.all([hidden, missing].map((path) => fetchFrom(server, scheme, path!, { dispatcher: outsider, headers })));
        assert.is(one!.status, 404);
        assert.is(JSON.parse(one!.body).detail, JSON.parse(other!.body).detail.replace(missing!, hidden!), `${scheme} ${hidden}`);
      }
      // Another spelling of the path, which the router redirects to the canonical one: nothing of the profiler either.
      for (const path of ['/%5fprofiler/', '/%5Fprofiler/search', '/_%70rofiler/latest', '/%5Fwdt/abcdef']) {
        const other = await fetchFrom(server, scheme, path, { dispatcher: outsider });
        assert.is(other.status, 404, `${scheme} ${path}`);
        assert.is(other.headers.location, undefined, `${scheme} ${path}`);
      }
      const canonical = await fetchFrom(server, scheme, '/%5fprofiler/search?limit=1');
      assert.is(canonical.status, 301, 'an allowed client is sent to the canonical path');
      assert.match(header(canonical.headers.location), /\/_profiler\/search\?limit=1$/);
      const spoofed = await fetchFrom(server, scheme, '/_profiler/', { dispatcher: outsider, headers: { 'x-forwarded-for': '127.0.0.1' } });
      assert.is(spoofed.status, 404, 'X-Forwarded-For from an untrusted peer is ignored');
      assert.not.ok(spoofed.body.includes('results found'));
      const spoofedError = await fetchFrom(server, scheme, '/robots.txt', { dispatcher: outsider, headers: { 'x-forwarded-for': '127.0.0.1' } });
      assert.is(spoofedError.headers['x-debug-token'], undefined, 'no debug header for a spoofed loopback address');
      assert.not.ok(spoofedError.body.includes('Stack Trace'));
    }
  } finally {
    await outsider.close();
    await server.close();
  }
});

access('behind a proxy in --trusted-proxies, the client it forwards is the one judged: an outside client gets 404 and the plain page, a loopback one the profiler', async () => {
  const server = await startTestServer({ app: { trustedProxies: ['127.0.0.1'], debugAllow: ['127.0.0.1/32'], profiler: { storage: new MemoryStorage() } } });
  try {
    for (const scheme of SCHEMES) {
      const outside = { 'x-forwarded-for': '203.0.113.7' };
      const page = await fetchFrom(server, scheme, '/_profiler/', { headers: outside });
      assert.is(page.status, 404, scheme);
      assert.not.ok(page.body.includes('results found'), scheme);
      const error = await fetchFrom(server, scheme, '/robots.txt', { headers: outside });
      assert.is(error.status, 404);
      assert.not.ok(error.body.includes('Stack Trace') || error.body.includes('No route found'), `${scheme}: the plain page`);
      assert.is(error.headers['x-debug-token'], undefined, scheme);
      assert.is(error.headers['x-debug-exception'], undefined, scheme);
      const local = await fetchFrom(server, scheme, '/_profiler/', { headers: { 'x-forwarded-for': '127.0.0.1' } });
      assert.is(local.status, 200, scheme);
      assert.match(local.body, /results? found/);
    }
  } finally {
    await server.close();
  }
});

access('behind a proxy on this machine that is not in --trusted-proxies (nginx sends Host: 127.0.0.1:8000), a request forwarded for an outside client gets 404 for profiler pages, the plain error page and no debug headers; one for a loopback client, or with no such header, keeps them; trusting the proxy lets the client it names decide; the proxy is warned of once', async () => {
  const server = await startTestServer({ app: { profiler: { storage: new MemoryStorage() } } });
  const trusting = await startTestServer({ app: { trustedProxies: ['loopback'], profiler: { storage: new MemoryStorage() } } });
  const warnings: LogRecord[] = [];
  const listen = ({ record }: LogEntry): void => void (record.message.includes('--trusted-proxies') && warnings.push(record));
  server.app.bus.on('log', listen);
  const outside = { 'x-forwarded-for': '203.0.113.7', 'x-real-ip': '203.0.113.7', 'x-forwarded-proto': 'https' };
  try {
    for (const scheme of SCHEMES) {
      const as = (on: TestServer, path: string, headers: Record<string, string>) =>
        fetchFrom(on, scheme, path, { headers: { host: `127.0.0.1:${new URL(on.urls[scheme]).port}`, ...headers } });
      for (const [on, headers] of [[server, outside], [server, { 'x-forwarded-for': '203.0.113.7' }], [server, { via: '1.1 proxy' }], [trusting, outside], [trusting, { 'x-real-ip': '203.0.113.7', 'x-forwarded-proto': 'https' }]] as const) {
        const what = `${scheme} ${on === trusting ? 'trusted ' : ''}${JSON.stringify(headers)}`;
        const page = await as(on, '/_profiler/', headers);
        assert.is(page.status, 404, what);
        assert.not.ok(page.body.includes('results found'), what);
        const error = await as(on, '/robots.txt', headers);
        assert.is(error.status, 404, what);
        assert.not.ok(error.body.includes('Stack Trace') || error.body.includes('No route found'), `${what}: the plain page`);
        assert.is(error.headers['x-debug-token'], undefined, what);
        assert.is(error.headers['x-debug-exception'], undefined, what);
        const home = await as(on, '/', headers);
        assert.is(home.status, 200, what);
        assert.not.ok(home.body.includes('/_wdt/'), `${what}: no toolbar`);
      }
      for (const [on, headers] of [[server, {}], [server, { 'x-forwarded-for': '127.0.0.1', 'x-forwarded-proto': scheme }], [trusting, { 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '203.0.113.7' }], [trusting, {}]] as const) {
        const what = `${scheme} ${on === trusting ? 'trusted ' : ''}${JSON.stringify(headers)}`;
        const page = await as(on, '/_profiler/', headers);
        assert.is(page.status, 200, what);
        assert.match(page.body, /results? found/, what);
        const error = await as(on, '/robots.txt', headers);
        assert.match(header(error.headers['x-debug-token']), /^[0-9a-f]{6}$/, what);
        assert.ok(error.body.includes('Stack Trace'), `${what}: debug error page`);
        assert.ok((await as(on, '/', headers)).body.includes('/_wdt/'), `${what}: toolbar`);
      }
    }
    // Once for the proxy at 127.0.0.1, over both schemes and all the requests above.
    assert.is(warnings.length, 1);
    assert.is(warnings[0]!.context.proxy, '127.0.0.1');
    assert.is(warnings[0]!.levelName, 'WARNING');
    assert.is(warnings[0]!.channel, 'request');
  } finally {
    server.app.bus.off('log', listen);
    await server.close();
    await trusting.close();
  }
});

access('a loopback client naming a host another site could own (DNS rebinding, a tunnel) gets 404 for profiler pages and the plain error page; IP addresses, localhost names and trusted hosts get them; a hidden host is logged once; a refused one gets its 400 alone', async () => {
  const server = await startTestServer({ app: { profiler: { storage: new MemoryStorage() } } });
  const trusting = await startTestServer({ app: { trustedHosts: ['myapp.test', '127.0.0.1'], profiler: { storage: new MemoryStorage() } } });
  // The TLS client checks the certificate against the Host it sends: forged names are the point here, not TLS.
  const lenient = new Agent({ connect: { rejectUnauthorized: false } });
  const warnings: LogRecord[] = [];
  const listen = ({ record }: LogEntry): void => void (record.message.includes('are hidden on host') && warnings.push(record));
  server.app.bus.on('log', listen);
  const hidden = ['rebound.test', 'abc123.ngrok-free.app', 'localhost.test', 'notlocalhost'];
  try {
    for (const scheme of SCHEMES) {
      const as = (on: TestServer, host: string, path: string) =>
        fetchFrom(on, scheme, path, { dispatcher: lenient, headers: { host: `${host}:${new URL(on.urls[scheme]).port}` } });
      const token = header((await fetchFrom(server, scheme, '/robots.txt')).headers['x-debug-token']);
      assert.match(token, /^[0-9a-f]{6}$/);
      for (const host of hidden) {
        for (const path of ['/_profiler/', '/_profiler/latest', `/_profiler/${token}`, `/_wdt/${token}`]) {
          const page = await as(server, host, path);
          assert.is(page.status, 404, `${scheme} ${host} ${path}`);
          assert.not.ok(page.body.includes(token), `${scheme} ${host} ${path}: nothing of the profile`);
        }
        const error = await as(server, host, '/robots.txt');
        assert.is(error.status, 404);
        assert.not.ok(error.body.includes('Stack Trace'), `${scheme} ${host}: plain error page`);
        assert.not.ok(error.body.includes('No route found'));
        assert.is(error.headers['x-debug-token'], undefined);
        assert.is(error.headers['x-debug-exception'], undefined);
        const home = await as(server, host, '/');
        assert.is(home.status, 200);
        assert.not.ok(home.body.includes('_wdt'), `${scheme} ${host}: no toolbar`);
      }
      // A host the request refuses is left to the client rule: its 400 is all it gets, never a profiler page.
      for (const path of ['/_profiler/', `/_profiler/${token}`]) {
        const refused = await as(server, '-a.test', path);
        assert.is(refused.status, 400, `${scheme} ${path}`);
        assert.ok(decodeEntities(refused.body).includes('Invalid Host "-a.test'), 'the 400 says why');
        // The token's profile is of /robots.txt: neither the list nor the panel shows up.
        assert.not.ok(refused.body.includes('results found') || refused.body.includes('robots.txt'), `${scheme} ${path}: nothing of the profiler`);
      }
      for (const [on, host] of [[server, 'localhost'], [server, 'app.localhost'], [server, '127.0.0.1'], [server, '[::1]'], [trusting, 'myapp.test']] as const) {
        const page = await as(on, host, '/_profiler/');
        assert.is(page.status, 200, `${scheme} ${host}`);
        assert.match(page.body, /results? found/);
        const error = await as(on, host, '/robots.txt');
        assert.match(header(error.headers['x-debug-token']), /^[0-9a-f]{6}$/, `${scheme} ${host}`);
        assert.ok(error.body.includes('Stack Trace'), `${scheme} ${host}: debug error page`);
        assert.ok((await as(on, host, '/')).body.includes('/_wdt/'), `${scheme} ${host}: toolbar`);
      }
    }
    // Once per host, over both schemes and all the requests above.
    assert.equal(warnings.map((record) => record.context.host).sort(), [...hidden].sort());
    assert.ok(warnings.every((record) => record.levelName === 'WARNING' && record.channel === 'request'));
  } finally {
    server.app.bus.off('log', listen);
    await lenient.close();
    await server.close();
    await trusting.close();
  }
});

access.run();

const files = suite('profiler file storage');
files.after.each(stopServes);

files('profiles survive a restart, recorded and read over http and https', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'http-kernel-profiles-'));
  try {
    const first = await startTestServer({ app: { profiler: { dir } } });
    const tokens: string[] = [];
    for (const scheme of SCHEMES) {
      const response = await fetchFrom(first, scheme, '/robots.txt');
      tokens.push(header(response.headers['x-debug-token']));
      await savedProfile(first, tokens.at(-1)!);
    }
    await first.close();
    const second = await startTestServer({ app: { profiler: { dir } } });
    for (const scheme of SCHEMES) {
      for (const token of tokens) {
        const { status, body } = await json(second, scheme, `/_profiler/${token}`);
        assert.is(status, 200, `${token} over ${scheme}`);
        assert.is(body.token, token);
      }
      assert.is((await fetchFrom(second, scheme, `/_wdt/${tokens[0]}`)).status, 200, `the toolbar over ${scheme}`);
    }
    await second.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** bin/serve over http alone, on a free port; stopServes kills it after its test. */
async function serve(args: string[], cwd: string): Promise<{ child: ChildProcess; url: string }> {
  const { child, urls } = await startServe(['--port', '0', '--https-port', 'off', ...args], cwd);
  return { child, url: urls[0]! };
}

files('two server processes share one profiler directory: a profile written by one over http or https is read from the other over the other scheme', async () => {
  const dir = serveWorkDir('http-kernel-shared-');
  const args = ['--port', '0', '--https-port', '0', '--profiler-dir', join(dir, 'profiles')];
  const a = await startServe(args, dir);
  const b = await startServe(args, dir);
  // Both serve the development certificate of their shared working directory.
  const agent = new Agent({ connect: { rejectUnauthorized: false } });
  try {
    for (const [from, to] of [[0, 1], [1, 0]] as const) {
      const response = await request(`${a.urls[from]}/robots.txt`, { dispatcher: agent });
      await response.body.text();
      const token = header(response.headers['x-debug-token'] as string);
      let found = 0;
      for (let i = 0; i < 100 && found !== 200; i++) {
        const fromB = await request(`${b.urls[to]}/_profiler/${token}`, { headers: { accept: 'application/json' }, dispatcher: agent });
        found = fromB.statusCode;
        if (found === 200) assert.is(((await fromB.body.json()) as { token: string }).token, token);
        else await fromB.body.text();
        if (found !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
      }
      assert.is(found, 200, `a profile written by one process over ${a.urls[from]!.split(':')[0]} is read by the other`);
    }
  } finally {
    await agent.close();
  }
});

/** GET as JSON; the status and the parsed body (or null). */
async function getJson(url: string): Promise<{ status: number; body: any }> {
  const response = await request(url, { headers: { accept: 'application/json' } });
  const text = await response.body.text();
  return { status: response.statusCode, body: response.statusCode === 200 ? JSON.parse(text) : null };
}

/** Polls a server until the profile is readable; bounded (2 s). */
async function readable(url: string, token: string): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if ((await getJson(`${url}/_profiler/${token}`)).status === 200) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

files('kill -9 while profiles are being written loses none saved before and leaves a readable storage', async () => {
  const dir = serveWorkDir('http-kernel-crash-');
  const profiles = join(dir, 'profiles');
  const victim = await serve(['--profiler-dir', profiles], dir);
  const saved: string[] = [];
  for (let i = 0; i < 40; i++) {
    const response = await request(`${victim.url}/before-${i}`);
    await response.body.text();
    saved.push(header(response.headers['x-debug-token'] as string));
  }
  // Saved means listed by a search (a panel may also be served from the profiles not saved yet).
  let listed = new Set<string>();
  for (let i = 0; i < 100 && !saved.every((token) => listed.has(token)); i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    listed = new Set(((await getJson(`${victim.url}/_profiler/search?limit=1000`)).body?.results ?? []).map((result: { token: string }) => result.token));
  }
  assert.ok(saved.every((token) => listed.has(token)), 'every profile saved before the crash');

  // 300 requests in flight (bounded), and the process killed in the middle of their saves.
  const url = victim.url;
  const load = Promise.allSettled(Array.from({ length: 300 }, (_, i) => request(`${url}/during-${i}`).then((response) => response.body.text())));
  await new Promise((resolve) => setTimeout(resolve, 60));
  victim.child.kill('SIGKILL');
  await load;
  await new Promise((resolve) => (victim.child.exitCode !== null || victim.child.signalCode !== null ? resolve(null) : victim.child.once('exit', resolve)));

  const survivor = await serve(['--profiler-dir', profiles], dir);
  for (const token of saved) {
    const { status, body } = await getJson(`${survivor.url}/_profiler/${token}`);
    assert.is(status, 200, `profile ${token} still readable after the crash`);
    assert.is(body.token, token);
  }
  const search = await getJson(`${survivor.url}/_profiler/search?limit=1000`);
  assert.is(search.status, 200);
  assert.ok(search.body.count >= saved.length, `search lists at least the ${saved.length} saved profiles (got ${search.body.count})`);
  for (const result of search.body.results as Array<{ token: string }>) {
    assert.is((await getJson(`${survivor.url}/_profiler/${result.token}`)).status, 200, `listed profile ${result.token} is readable`);
  }
  const fresh = await request(`${survivor.url}/after`);
  await fresh.body.text();
  assert.ok(await readable(survivor.url, header(fresh.headers['x-debug-token'] as string)), 'the storage keeps working after the crash');
});

files('--no-debug records nothing and serves no profiler', async () => {
  const server = await startTestServer({ app: { debug: false } });
  try {
    const response = await fetchFrom(server, 'http', '/robots.txt');
    assert.is(response.headers['x-debug-token'], undefined);
    assert.is((await fetchFrom(server, 'http', '/_profiler/')).status, 404);
    assert.is(server.app.profiler, null);
  } finally {
    await server.close();
  }
});

files.run();
