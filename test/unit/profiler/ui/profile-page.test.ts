import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Profile } from '../../../../lib/profiler/profile.js';
import { defaultPanel, extraPanels, renderProfilePage, SHOWN_CHILDREN, type ProfilePageInput } from '../../../../lib/profiler/ui/index.js';
import { createFileLinker } from '../../../../lib/errors/file-link.js';
import { declarationsFor } from '../../../css-rules.js';
import { inlineElements } from '../../../csp-check.js';
import { childSummary, mainProfile, okProfile, summaryOf, urls } from './fixtures.js';

function page(overrides: Partial<ProfilePageInput> = {}): string {
  return renderProfilePage({ profile: mainProfile(), panel: 'request', parent: null, children: [childSummary()], urls, timeZone: 'UTC', ...overrides });
}

/** The content of the selected panel (the <main> element). */
function panelOf(html: string): string {
  const match = /<main class="panel" id="panel-([^"]+)">([\s\S]*)<\/main>/.exec(html);
  assert.ok(match, 'the page has a panel');
  return match![2]!;
}

function selectedPanel(html: string): string {
  return /<main class="panel" id="panel-([^"]+)">/.exec(html)?.[1] ?? '';
}

test('the header summarises method, URL, status, IP, time and token', () => {
  const html = page();
  assert.ok(html.startsWith('<!DOCTYPE html>'));
  assert.match(html, '<span class="status status-4xx">404</span> <span class="method">GET</span>');
  assert.match(html, 'http://127.0.0.1:8000/robots.txt?page=2');
  assert.match(html, '404 Not Found');
  assert.match(html, '<dt>IP</dt><dd>127.0.0.1</dd>');
  assert.match(html, '21-Nov-2026 21:40:54');
  assert.match(html, '<dd class="mono">a1b2c3</dd>');
});

test('a "Skip to panel" link, hidden until focused, is the first thing a keyboard reaches, and leads to the panel', () => {
  for (const panel of ['request', 'time', 'custom collector']) {
    const html = page({ panel, profile: { ...mainProfile(), collectors: { ...mainProfile().collectors, 'custom collector': { a: 1 } } } });
    const body = html.slice(html.indexOf('<body>'));
    const first = /<(?:a|button|input|select|textarea)\b[^>]*>/.exec(body)![0];
    assert.is(first, `<a class="skip-link" href="#panel-${encodeURIComponent(panel)}">`);
    assert.match(html, `<main class="panel" id="panel-${panel}">`);
  }
  const css = page();
  assert.is(declarationsFor(css, '.skip-link:not(:focus)').get('clip-path'), 'inset(50%)');
  assert.is(declarationsFor(css, '.skip-link').get('position'), 'absolute');
});

test('the summary lists the first 20 sub-requests and counts the rest (5,000 were each listed on every panel)', () => {
  const tokens = Array.from({ length: 5000 }, (_, i) => i.toString(16).padStart(6, '0'));
  const html = page({ profile: { ...mainProfile(), children: tokens }, children: tokens.slice(0, SHOWN_CHILDREN).map((token) => ({ ...childSummary(), token })) });
  assert.is(SHOWN_CHILDREN, 20);
  assert.is(html.match(/<li><a class="mono" href="\/_profiler\/[0-9a-f]{6}">/g)!.length, 20);
  assert.match(html, '<li class="muted">… 4980 more sub-requests not shown</li></ul>');
  assert.ok(html.length < 100_000, `page ${html.length}`);
});

test('the header names the outermost exception and links to the exception panel', () => {
  assert.match(page(), /<a class="exception-link" href="\/_profiler\/a1b2c3\?panel=exception">NotFoundHttpError<\/a>/);
});

test('a main profile links to each sub-request profile with its status and URL', () => {
  const html = page();
  assert.match(html, /Sub-requests: <ul><li><a class="mono" href="\/_profiler\/d4e5f6">d4e5f6<\/a>/);
  assert.match(html, 'http://127.0.0.1:8000/_error/404');
});

test('a child token without a loaded summary is still linked', () => {
  const html = page({ children: [] });
  assert.match(html, '<a class="mono" href="/_profiler/d4e5f6">d4e5f6</a>');
});

test('a sub-request profile links to its parent profile', () => {
  const child: Profile = { ...childSummary(), children: [], collectors: {} };
  const html = page({ profile: child, parent: summaryOf(mainProfile()), children: [] });
  assert.match(html, /Sub-request of <a class="mono" href="\/_profiler\/a1b2c3">a1b2c3<\/a>/);
  assert.match(html, 'GET http://127.0.0.1:8000/robots.txt?page=2');
});

test('a long URL of a parent or sub-request in the header wraps inside the page instead of widening it', () => {
  const long = `http://127.0.0.1:8000/${'segment'.repeat(60)}?q=${'x'.repeat(300)}`;
  const child: Profile = { ...childSummary(), url: long, children: [], collectors: {} };
  for (const html of [page({ children: [{ ...childSummary(), url: long }] }), page({ profile: child, parent: { ...summaryOf(mainProfile()), url: long }, children: [] })]) {
    const relations = /<div class="relations">([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '';
    assert.match(relations, long, 'the URL is in the relations line');
    // A URL is one word: without a break opportunity, the flex item's minimum width is the whole URL.
    const css = inlineElements(html).find((element) => element.tag === 'style')!.text;
    assert.is(declarationsFor(css, '.relations').get('overflow-wrap'), 'anywhere');
  }
});

test('on a narrow screen a table wider than its panel scrolls inside the panel instead of spilling over its border and widening the page', () => {
  const css = inlineElements(page({ panel: 'events' })).find((element) => element.tag === 'style')!.text;
  // One column below 860px; a table does not shrink below its widest cells (priorities, durations, listener names).
  assert.is(declarationsFor(css, '.layout', '(max-width: 860px)').get('grid-template-columns'), 'minmax(0, 1fr)');
  assert.is(declarationsFor(css, '.panel').get('overflow-x'), 'auto');
});

test('the menu links every built-in panel and marks the selected one', () => {
  const html = page({ panel: 'logger' });
  for (const panel of ['request', 'exception', 'logger', 'events', 'time', 'router']) {
    assert.match(html, `href="/_profiler/a1b2c3?panel=${panel}"`);
  }
  assert.match(html, '<a href="/_profiler/a1b2c3?panel=logger" aria-current="page">');
  assert.is((html.match(/<a [^>]*aria-current="page"/g) ?? []).length, 1);
});

test('the menu shows the exception count and the log error and warning counts', () => {
  const html = page();
  assert.match(html, /panel=exception"><span>Exception<\/span><span class="badge error">2<\/span>/);
  assert.match(html, /panel=logger"><span>Logs<\/span><span class="badges"><span class="badge error" title="Errors">1<\/span><span class="badge warning" title="Warnings">1<\/span>/);
});

test('the search form sends ip, method, status, url, start, end and limit with GET to the search URL', () => {
  const html = page();
  assert.match(html, '<form class="search" method="get" action="/_profiler/search"');
  for (const name of ['ip', 'method', 'status', 'url', 'start', 'end', 'limit']) assert.match(html, `name="${name}"`);
});

test('the request panel shows headers, query, cookies, attributes and the response', () => {
  const html = panelOf(page({ panel: 'request' }));
  assert.match(html, '<h2>Request</h2>');
  assert.match(html, '<th scope="row">user-agent</th><td><span class="text">curl/8.5.0</span>');
  assert.match(html, '<th scope="row">authorization</th><td><span class="text">[redacted]</span>');
  assert.match(html, '<th scope="row">page</th><td><span class="text">2</span>');
  assert.match(html, '<th scope="row">tag</th><td><span class="text">a</span><br><span class="text">b</span>');
  assert.match(html, '<th scope="row">theme</th><td><span class="text">dark</span>');
  assert.match(html, '<th scope="row">_locale</th>');
  assert.match(html, '<th scope="row">x-debug-token</th><td><span class="text">a1b2c3</span>');
  assert.match(html, 'No body');
  assert.match(html, 'No session was used');
  assert.match(html, 'No route parameters');
});

test('the request panel shows the body with a truncation note, the route, controller and session', () => {
  const html = panelOf(page({ profile: okProfile(), panel: 'request' }));
  assert.match(html, '<pre class="body-preview" tabindex="0">{&quot;title&quot;:&quot;Dune&quot;,&quot;password&quot;:&quot;[redacted]&quot;}</pre>');
  assert.match(html, 'The body is truncated');
  assert.match(html, 'BookController::create');
  assert.match(html, 'book_create');
  assert.match(html, '<th scope="row">_format</th><td><span class="text">json</span>');
  assert.match(html, '<th scope="row">user</th><td><span class="text">alice</span>');
  assert.match(html, '<span class="status status-2xx">201</span> Created');
});

test('a body the request declared but the application never read is said to be unread, not missing', () => {
  const withHeaders = (headers: Record<string, string>): Profile => {
    const profile = mainProfile();
    const request = profile.collectors['request'] as Record<string, unknown>;
    return { ...profile, collectors: { ...profile.collectors, request: { ...request, requestHeaders: { ...(request['requestHeaders'] as object), ...headers } } } };
  };
  const bodyOf = (profile: Profile) => /<h3>Request body<\/h3>\s*(.*)/.exec(panelOf(page({ profile })))![1]!;
  assert.is(bodyOf(withHeaders({ 'content-length': '51' })), '<p class="empty">The application did not read the body (51 bytes), so the profile has none of it</p>');
  assert.match(bodyOf(withHeaders({ 'content-length': '1' })), '(1 byte)');
  assert.match(bodyOf(withHeaders({ 'transfer-encoding': 'chunked' })), 'did not read the body (sent in chunks)');
  assert.is(bodyOf(withHeaders({ 'content-length': '0' })), '<p class="empty">No body</p>');
  assert.is(bodyOf(withHeaders({ 'content-length': 'x' })), '<p class="empty">No body</p>');
});

test('the exception panel shows each error of the chain with class, message, status, code and frames', () => {
  const html = panelOf(page({ panel: 'exception' }));
  assert.match(html, '<span class="counter">1/2</span> <span class="class">NotFoundHttpError</span>');
  assert.match(html, '<span class="counter">2/2 caused</span> <span class="class">ResourceNotFoundError</span>');
  assert.match(html, 'No route found for &quot;GET http://127.0.0.1:8000/robots.txt&quot; (from &quot;http://127.0.0.1:8000/home&quot;)');
  assert.match(html, 'No routes found for &quot;/robots.txt/&quot;.');
  assert.match(html, '<dt>Status</dt><dd>404</dd>');
  assert.match(html, '<dt>Code</dt><dd><code>HK_NOT_FOUND</code></dd>');
  assert.match(html, '<span class="function">RouterListener.onKernelRequest</span> <span class="where">at <span class="mono">/app/lib/routing/router-listener.ts:41:13</span>');
});

test('the exception panel says how many errors of a chain cut at 20 the profile left out', () => {
  const profile = mainProfile();
  const one = { class: 'Error', message: 'e', status: 500, frames: [], stack: '' };
  profile.collectors['exception'] = { exceptions: [...Array(19).fill(one), { ...one, omitted: 981 }] };
  assert.match(panelOf(page({ profile, panel: 'exception' })), '<p class="empty">981 more errors of the chain are not shown: the profile keeps its first 20.</p>');
});

test('the notes of one left out say so in the singular: one error of the chain, one log record, one attribute, one sub-request', () => {
  const profile = mainProfile();
  const one = { class: 'Error', message: 'e', status: 500, frames: [], stack: '' };
  profile.collectors['exception'] = { exceptions: [one, { ...one, omitted: 1 }] };
  profile.collectors['logger'] = { logs: [{ time: 0, level: 6, levelName: 'INFO', channel: 'app', message: 'first' }], omitted: 1 };
  profile.collectors['request'] = { ...(profile.collectors['request'] as object), attributesOmitted: 1 };
  const tokens = Array.from({ length: SHOWN_CHILDREN + 1 }, (_, i) => i.toString(16).padStart(6, '0'));
  profile.children = tokens;
  assert.match(panelOf(page({ profile, panel: 'exception' })), '<p class="empty">1 more error of the chain is not shown: the profile keeps its first 2.</p>');
  assert.match(panelOf(page({ profile, panel: 'logger' })), '<p class="empty">1 more log record is not shown:');
  const request = page({ profile, panel: 'request', children: [] });
  assert.match(panelOf(request), '<p class="empty">1 more attribute is not shown:');
  assert.match(request, '<li class="muted">… 1 more sub-request not shown</li>');
});

test('the exception panel folds consecutive internal frames into one collapsed group', () => {
  const html = panelOf(page({ panel: 'exception' }));
  assert.match(html, /<details><summary>2 internal frames<\/summary><ol><li class="frame internal"><span class="function">process.processTicksAndRejections<\/span>/);
  assert.not.match(html, /<details open/);
});

test('the exception panel says so when there was no exception', () => {
  const html = panelOf(page({ profile: okProfile(), panel: 'exception' }));
  assert.match(html, 'No exception');
  assert.not.match(html, 'error-card');
});

test('the exception panel of the error page\'s sub-request links to its parent\'s exception panel, where the error is', () => {
  const profile = okProfile();
  const request = profile.collectors['request'] as Record<string, unknown>;
  profile.parent = 'a1b2c3';
  profile.status = 500;
  profile.collectors = { ...profile.collectors, request: { ...request, attributes: { _controller: 'errorController', exception: 'DatabaseError: <b>down</b>' } } };
  const html = panelOf(page({ profile, panel: 'exception', parent: summaryOf(mainProfile()) }));
  assert.match(html, 'No exception was thrown while handling this request');
  assert.match(html, 'This sub-request rendered the error page for an error of its parent request, <span class="text">DatabaseError: &lt;b&gt;down&lt;/b&gt;</span>');
  assert.match(html, '<a href="/_profiler/a1b2c3?panel=exception">');
  // A main request, or a sub-request that was handed no error, gets no such note.
  assert.not.match(panelOf(page({ profile: okProfile(), panel: 'exception' })), 'error page');
  const plainSub = { ...okProfile(), parent: 'a1b2c3' };
  assert.not.match(panelOf(page({ profile: plainSub, panel: 'exception' })), 'error page');
});

test('the logger panel lists time, level, channel and message, with context in a details element', () => {
  const html = panelOf(page({ panel: 'logger' }));
  assert.match(html, /<tr class="level-error">\s*<td class="nowrap mono"><time datetime="2026-11-21T21:40:54.127Z" title="2026-11-21T21:40:54.127Z">21:40:54.127<\/time><\/td>\s*<td class="level">ERROR<\/td>\s*<td class="nowrap">request<\/td>/);
  assert.match(html, 'Uncaught exception NotFoundHttpError');
  assert.match(html, /<details><summary>Context \(2 keys\)<\/summary><pre class="json" tabindex="0">\{\n {2}&quot;path&quot;: &quot;\/robots.txt&quot;,\n {2}&quot;tried&quot;: 3\n\}<\/pre><\/details>/);
  assert.match(html, '<tr class="level-warning">');
  assert.match(html, '<tr class="level-debug">');
});

test('the logger panel says how many records the profile omitted (past its 1,000 records or 1 MB), after those it shows', () => {
  const profile = mainProfile();
  profile.collectors['logger'] = { logs: [{ time: 0, level: 6, levelName: 'INFO', channel: 'app', message: 'first' }], omitted: 19_999 };
  const html = panelOf(page({ profile, panel: 'logger' }));
  assert.match(html, /first[\s\S]*<\/table>\n<p class="empty">19999 more log records are not shown: a profile keeps a request's first 1,000 records, within 1 MB of them\.<\/p>/);
});

test("the logger panel shows a context stored as a note (one over the profile's bound for a value)", () => {
  const profile = mainProfile();
  const note = '[value of at least 100040207 characters left out: longer than 262144]';
  profile.collectors['logger'] = { logs: [{ time: 0, level: 6, levelName: 'INFO', channel: 'app', message: 'wide', context: note }] };
  assert.match(panelOf(page({ profile, panel: 'logger' })), `<p class="muted">Context: ${note}</p>`);
});

test('the logger panel counts records by level, most severe first', () => {
  const html = panelOf(page({ panel: 'logger' }));
  const counts = /<ul class="counts"[^>]*>([\s\S]*?)<\/ul>/.exec(html)?.[1] ?? '';
  assert.is(counts.replace(/<[^>]+>/g, '|').split('|').filter(Boolean).join(', '), '1 ERROR, 1 WARNING, 1 INFO, 1 DEBUG');
});

test('the logger filter buttons are hidden until the script shows them, so without JS every record shows', () => {
  const html = panelOf(page({ panel: 'logger' }));
  assert.match(html, '<div class="filters" data-log-filters="log-records" hidden');
  assert.match(html, '<button type="button" data-level="all" aria-pressed="true">All (4)</button>');
  assert.match(html, '<button type="button" data-level="error" aria-pressed="false">Errors (1)</button>');
  assert.match(html, '<button type="button" data-level="warning" aria-pressed="false">Warnings (1)</button>');
  assert.match(html, '<table class="logs" id="log-records">');
  assert.not.match(html, 'data-filter=');
});

test('the logger panel says so when nothing was logged', () => {
  const profile = mainProfile();
  profile.collectors['logger'] = { logs: [], counts: {}, errorCount: 0, warningCount: 0 };
  assert.match(panelOf(page({ profile, panel: 'logger' })), 'No log messages');
});

test('the events panel lists called listeners in order with priority, duration and the propagation stop', () => {
  const html = panelOf(page({ panel: 'events' }));
  const called = /<table class="events-called">([\s\S]*?)<\/table>/.exec(html)?.[1] ?? '';
  const listeners = [...called.matchAll(/<span class="listener">([^<]+)<\/span>/g)].map((m) => m[1]);
  assert.equal(listeners, [
    'CorsListener.onKernelRequest',
    'SessionListener.onKernelRequest',
    'RouterListener.onKernelRequest',
    'ErrorListener.onKernelException',
    'ProfilerListener.onKernelResponse',
  ]);
  assert.match(called, /<td class="nowrap mono col-event">kernel.request<\/td>\s*<td class="col-listener"><span class="listener">CorsListener.onKernelRequest<\/span><\/td>\s*<td class="num col-priority">250<\/td>\s*<td class="num col-start">0.2 ms<\/td>\s*<td class="num col-duration">0.05 ms<\/td>/);
  assert.match(called, /ErrorListener.onKernelException<\/span> <span class="stopped"[^>]*>stopped propagation<\/span>/);
  assert.is((called.match(/class="stopped"/g) ?? []).length, 1);
});

test('the events panel lists not-called listeners and orphaned events', () => {
  const html = panelOf(page({ panel: 'events' }));
  assert.match(html, /<table class="events-not-called">[\s\S]*FirewallListener.onKernelRequest[\s\S]*<td class="num col-priority">8<\/td>/);
  assert.match(html, '<li class="mono">kernel.view</li>');
});

test('the time panel draws each period as a bar scaled to the total duration', () => {
  const html = panelOf(page({ panel: 'time' }));
  assert.match(html, '<span class="value">6.5 ms</span><span class="label">Total duration</span>');
  assert.match(html, '21-Nov-2026 21:40:54<span class="muted">.123</span>');
  // kernel.exception: start 2.3 ms, 3.3 ms long, over 6.5 ms.
  assert.match(html, /<div class="wf-row cat-event"[^>]*>\s*<span class="wf-name" role="cell">kernel.exception<\/span>\s*<div class="wf-track" role="cell"><span class="wf-bar" id="wf-bar-3"><\/span><\/div>\s*<span class="wf-duration" role="cell">3.3 ms<\/span>/);
  // Positioned by the page's stylesheet (no style= attribute: the page's CSP allows none).
  assert.match(page({ panel: 'time' }), '#wf-bar-3 { left: 35.385%; width: 50.769%; }');
  assert.match(html, /<div class="wf-row cat-listener"[^>]*>\s*<span class="wf-name" role="cell">RouterListener.onKernelRequest<\/span>/);
  assert.is((html.match(/class="wf-row /g) ?? []).length, 6);
  assert.match(html, '<li class="cat-event">Event dispatch</li><li class="cat-listener">Listener</li>');
  assert.match(html, '12.5 MiB');
});

test('the time panel marks where the response was ready on the axis, and its legend says the total ends there', () => {
  const profile = mainProfile();
  profile.collectors['time'] = { startTime: profile.time, duration: 5, periods: [{ name: 'kernel.terminate', category: 'event', start: 6, duration: 4 }] };
  const full = page({ profile, panel: 'time' });
  const html = panelOf(full);
  assert.match(html, '<div class="wf-marker" aria-hidden="true"><span></span><div class="when"><span class="wf-ready">response ready, 5 ms</span></div><span></span></div>');
  assert.match(html, '<li class="ready-key">Response ready: the total duration ends there; what follows (kernel.terminate) runs after the response</li>');
  // Placed by the page's stylesheet, as the bars are: no style= attribute.
  assert.match(full, '.waterfall { --ready: 50.000%; }');
  assert.not.match(html, 'style=');
  // Past the middle, the label sits left of its line.
  assert.match(panelOf(page({ panel: 'time' })), '<span class="wf-ready late">response ready, 6.5 ms</span>');
});

test('the time panel scales to a period that ends after the total duration', () => {
  const profile = mainProfile();
  profile.collectors['time'] = { startTime: profile.time, duration: 5, periods: [{ name: 'late', category: 'section', start: 5, duration: 5 }] };
  assert.match(page({ profile, panel: 'time' }), '#wf-bar-0 { left: 50.000%; width: 50.000%; }');
});

test('the router panel shows each route verdict and reason', () => {
  const html = panelOf(page({ panel: 'router' }));
  assert.match(html, 'No route matched <span class="mono">GET http://127.0.0.1:8000/robots.txt?page=2</span>');
  assert.match(html, /<tr class="trace-almost">[\s\S]*?robots_dir[\s\S]*?\/robots.txt\/[\s\S]*?<span class="verdict verdict-almost">Almost<\/span>[\s\S]*?Path almost matches, but with a trailing slash/);
  assert.is((html.match(/verdict-mismatch">Mismatch/g) ?? []).length, 2);
  assert.match(html, '<h3>Route matching <span class="muted">1 almost match, 2 mismatches</span></h3>', 'the counts are in words, plural when not one');
});

test('the router panel shows the matched route and its parameters', () => {
  const html = panelOf(page({ profile: okProfile(), panel: 'router' }));
  assert.match(html, '<span class="value mono">book_create</span><span class="label">Matched route</span>');
  assert.match(html, '<th scope="row">_format</th><td><span class="text">json</span>');
  assert.match(html, '<span class="verdict verdict-match">Match</span>');
});

test('the router panel shows a redirect', () => {
  const profile = mainProfile();
  profile.collectors['router'] = { route: null, params: {}, redirect: 'http://127.0.0.1:8000/books/', traces: [] };
  const html = panelOf(page({ profile, panel: 'router' }));
  assert.match(html, 'redirect to <a href="http://127.0.0.1:8000/books/" rel="noreferrer">http://127.0.0.1:8000/books/</a>');
});

test('an unknown panel name shows the request panel', () => {
  const html = page({ panel: 'nope' });
  assert.is(selectedPanel(html), 'request');
  assert.match(panelOf(html), '<h2>Request</h2>');
});

test('the default panel is exception when there is one, else request', () => {
  assert.is(defaultPanel(mainProfile()), 'exception');
  assert.is(defaultPanel(okProfile()), 'request');
  assert.is(defaultPanel({ ...mainProfile(), collectors: {} }), 'request');
});

test('every built-in panel renders "No data" when its collector is missing', () => {
  const profile: Profile = { ...mainProfile(), collectors: {} };
  for (const panel of ['request', 'exception', 'logger', 'events', 'time', 'router']) {
    const html = page({ profile, panel });
    assert.is(selectedPanel(html), panel);
    assert.match(panelOf(html), '<p class="empty">No data</p>', panel);
  }
});

test("every panel shows the note that took the place of its collector's data past 2 MiB, and the default panel is exception when that one's was", () => {
  const note = '[data of 52428811 characters left out: longer than 2097152]';
  for (const panel of ['request', 'exception', 'logger', 'events', 'time', 'router', 'cache']) {
    const profile: Profile = { ...okProfile(), collectors: { ...okProfile().collectors, [panel]: note } };
    const html = panelOf(page({ profile, panel }));
    assert.match(html, `<p class="empty">${note}</p>`, panel);
    assert.match(html, `The <code>${panel}</code> collector's data was too large to keep: a profile keeps at most 2097152 characters of JSON of one collector's data.`, panel);
    assert.not.match(html, '&quot;', panel);
  }
  assert.is(defaultPanel({ ...okProfile(), collectors: { ...okProfile().collectors, exception: note } }), 'exception');
});

test("the time panel shows the events collector's note in place of the timeline it would have drawn", () => {
  const note = '[data of 2097153 characters left out: longer than 2097152]';
  const profile: Profile = { ...okProfile(), collectors: { ...okProfile().collectors, time: { startTime: 0, duration: 3, periods: [] }, events: note } };
  assert.match(panelOf(page({ profile, panel: 'time' })), `<h3>Timeline</h3>\n<div class="no-data"><p class="empty">${note}</p>`);
});

test('collector data of the wrong shape renders without throwing', () => {
  const profile: Profile = {
    ...mainProfile(),
    collectors: {
      request: { requestHeaders: 'nope', query: [1, 2], body: 42, session: 'x' },
      exception: { exceptions: [{ frames: 'none' }, 'bad'] },
      logger: { logs: [{ time: 'noon' }, null] },
      events: { called: 'x', notCalled: [null], orphaned: [1] },
      time: { periods: [{ start: 'x' }], duration: null },
      router: { traces: [{ verdict: 'weird' }] },
    },
  };
  for (const panel of ['request', 'exception', 'logger', 'events', 'time', 'router']) {
    const html = page({ profile, panel });
    assert.is(selectedPanel(html), panel);
    assert.match(html, '</html>');
  }
});

test('an embedder collector gets a menu entry and a generic panel with its JSON', () => {
  const profile = mainProfile();
  profile.collectors['cache'] = { hits: 3, keys: ['a', 'b'] };
  assert.equal(extraPanels(profile), ['cache']);
  const html = page({ profile, panel: 'cache' });
  assert.match(html, '<a href="/_profiler/a1b2c3?panel=cache" aria-current="page"><span>cache</span>');
  assert.is(selectedPanel(html), 'cache');
  assert.match(panelOf(html), '<pre class="json" tabindex="0">{\n  &quot;hits&quot;: 3,\n  &quot;keys&quot;: [\n    &quot;a&quot;,\n    &quot;b&quot;\n  ]\n}</pre>');
});

test('the memory collector has no panel of its own', () => {
  assert.equal(extraPanels(mainProfile()), []);
  assert.is(selectedPanel(page({ panel: 'memory' })), 'request');
});

test('the exception panel links frames on disk to the editor, not node\'s internal ones', () => {
  const linked = panelOf(page({ panel: 'exception', fileLink: createFileLinker('idea') }));
  assert.match(linked, '<a href="idea://open?file=/app/lib/routing/router-listener.ts&amp;line=41" title="Open in your editor">/app/lib/routing/router-listener.ts:41:13</a>');
  assert.not.match(linked, 'idea://open?file=node:');
  assert.not.match(panelOf(page({ panel: 'exception' })), '<a href="idea:');
});

test('a profile, or a log record, dated past what a Date holds (a corrupt record) is shown without its time rather than failing the page', () => {
  const profile = mainProfile();
  const logger = profile.collectors['logger'] as { logs: Array<{ time: number }> };
  assert.ok(logger.logs.length > 0, 'the fixture has log records');
  for (const time of [1e16, -1e16]) {
    const dated = { ...profile, time, collectors: { ...profile.collectors, logger: { ...logger, logs: logger.logs.map((record) => ({ ...record, time })) } } };
    const summary = page({ profile: dated });
    assert.match(summary, '<dt>Profiled on</dt><dd><time datetime="">', String(time));
    const logs = panelOf(page({ profile: dated, panel: 'logger' }));
    assert.match(logs, '<table class="logs"', String(time));
    assert.not.match(logs, 'could not be rendered', String(time));
  }
});

test('a profile page names the time zone of its times: in the summary, the search form, the logger panel and the time panel', () => {
  const summary = page({ timeZone: 'America/St_Johns' });
  assert.match(summary, '<dt>Profiled on</dt><dd><time datetime="2026-11-21T21:40:54.123Z">21-Nov-2026 18:10:54</time> <span class="zone">America/St_Johns</span></dd>');
  assert.match(summary, 'In America/St_Johns time, unless ending with Z or an offset');
  assert.match(panelOf(page({ timeZone: 'America/St_Johns', panel: 'logger' })), '<th scope="col">Time <span class="zone">(America/St_Johns)</span></th>');
  assert.match(panelOf(page({ timeZone: 'America/St_Johns', panel: 'time' })), '<span class="label">Started at, America/St_Johns time</span>');
});

test.run();
