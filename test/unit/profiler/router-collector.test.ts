import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Response } from '../../../kernel/index.js';
import { Route, RouteCollection, UrlMatcher } from '../../../lib/routing/index.js';
import { RouterCollector } from '../../../lib/profiler/collectors/index.js';
import type { Profile, RouterData } from '../../../lib/profiler/profile.js';
import { Redactor } from '../../../lib/profiler/redactor.js';

const routes = new RouteCollection();
routes.add('secure', new Route('/secure', { schemes: ['https'], defaults: { _controller: () => new Response('ok') } }));
const collector = new RouterCollector(new UrlMatcher(routes), new Redactor());

/** A profile of `url` answered with `status`, its request data as stored (`request`, the path taken from the URL by default). */
function profileOf(url: string, status: number, request: Record<string, unknown> = {}, parent: string | null = null): Profile {
  const path = URL.canParse(url) ? new URL(url).pathname : '/';
  return { token: 'abc123', parent, children: [], ip: '127.0.0.1', method: 'GET', url, time: 0, status, collectors: { request: { path, requestType: parent === null ? 'main' : 'sub', ...request } } } as unknown as Profile;
}

function present(profile: Profile, stored: unknown = {}): RouterData {
  return collector.present(stored, profile);
}

test('each route\'s verdict is worked out over the scheme the request came by', () => {
  assert.equal(present(profileOf('https://localhost/secure', 200)).traces!.map((t) => t.verdict), ['match']);
  assert.equal(present(profileOf('http://localhost/secure', 301)).traces!.map((t) => t.verdict), ['almost']);
});

test('a sub-request made with its own controller was never routed: no verdicts; one that was routed has them', () => {
  const own = present(profileOf('http://localhost/fragment', 200, {}, 'def456'));
  assert.equal([own.routed, own.traces], [null, []]);
  const routed = present(profileOf('https://localhost/secure', 200, { attributes: { _route: 'secure' } }, 'def456'));
  assert.equal(routed.routed, { method: 'GET', path: '/secure', host: 'localhost', scheme: 'https' });
  assert.equal(routed.traces!.map((t) => t.verdict), ['match']);
});

test('a URL that does not parse (an unusable Host header) leaves nothing routed, and the router data is still shown', () => {
  const data = present(profileOf('http://[bad/secure', 200));
  assert.equal([data.routed, data.traces], [null, []]);
});

test('what the matcher refuses to explain (stored by an older version) gives no verdicts, not a failure', () => {
  const data = present(profileOf('http://localhost/secure', 200), { routed: { method: 'GET', path: 7, host: 'localhost', scheme: 'http' } });
  assert.equal(data.traces, []);
});

test('the redirect is the Location of a 3xx answer only: not of a 201 Created or a 400, nor a 3xx without one', () => {
  const redirect = (status: number, location?: string) => present(profileOf('http://localhost/secure', status, location === undefined ? {} : { responseHeaders: { location } })).redirect;
  assert.is(redirect(300, '/a'), '/a');
  assert.is(redirect(301, 'https://localhost/secure'), 'https://localhost/secure');
  assert.is(redirect(399, '/b'), '/b');
  assert.is(redirect(201, '/books/1'), null);
  assert.is(redirect(299, '/c'), null);
  assert.is(redirect(400, '/d'), null);
  assert.is(redirect(302), null);
});

test.run();
