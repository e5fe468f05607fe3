import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  renderProfilePage,
  renderSearchPage,
  renderTokenNotFoundPage,
  renderToolbar,
  renderToolbarLoader,
} from '../../../../lib/profiler/ui/index.js';
import { hostileProfile, summaryOf, urls, XSS } from './fixtures.js';

const ESCAPED = '&lt;script&gt;alert(1)&lt;/script&gt;';

/** No planted markup survives: no raw payload, no attribute break-out, no javascript: link. */
function assertInert(html: string, label: string): void {
  assert.not.match(html, '<script>alert', `${label}: raw script tag`);
  assert.not.match(html, /href="javascript:/i, `${label}: javascript: link`);
  assert.not.match(html, /<[a-z]+[^>]*\son[a-z]+=/i, `${label}: event handler attribute`);
}

test('every panel escapes request values: URL, method, headers, query keys, body, logs, exceptions, routes', () => {
  for (const panel of ['request', 'exception', 'logger', 'events', 'time', 'router', XSS]) {
    const html = renderProfilePage({ profile: hostileProfile(), panel, parent: null, children: [], urls });
    assertInert(html, panel);
    assert.match(html, ESCAPED, panel);
  }
});

test('the request panel escapes header names and values, query keys, cookies, body, attributes and session', () => {
  const html = renderProfilePage({ profile: hostileProfile(), panel: 'request', parent: null, children: [], urls });
  assert.match(html, `<th scope="row">${ESCAPED}</th><td><span class="text">${ESCAPED}</span>`);
  assert.match(html, `<pre class="body-preview" tabindex="0">${ESCAPED}</pre>`);
  assert.match(html, `&quot;nested&quot;: &quot;${ESCAPED}&quot;`);
  assert.ok((html.match(new RegExp(ESCAPED.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'g')) ?? []).length >= 15);
});

test('the exception, logger and router panels escape messages, classes, channels, contexts and route names', () => {
  const exception = renderProfilePage({ profile: hostileProfile(), panel: 'exception', parent: null, children: [], urls });
  assert.match(exception, `<span class="class">${ESCAPED}</span>`);
  assert.match(exception, `<p class="message">${ESCAPED}</p>`);
  // The error a failing kernel.exception listener was handling, in its own section.
  assert.match(exception, `<span class="class">${ESCAPED}handled</span>`);
  assert.match(exception, `<p class="message">${ESCAPED}handled</p>`);
  const logger = renderProfilePage({ profile: hostileProfile(), panel: 'logger', parent: null, children: [], urls });
  assert.match(logger, `<div class="message">${ESCAPED}</div>`);
  assert.match(logger, `<td class="nowrap">${ESCAPED}</td>`);
  const router = renderProfilePage({ profile: hostileProfile(), panel: 'router', parent: null, children: [], urls });
  assert.match(router, `<td class="mono">${ESCAPED}</td>`);
  assert.match(router, `<span class="mono">javascript:${ESCAPED}</span>`);
});

test('an embedder collector named with markup is escaped in the menu and its panel', () => {
  const html = renderProfilePage({ profile: hostileProfile(), panel: XSS, parent: null, children: [], urls });
  assert.match(html, `<span>${ESCAPED}</span>`);
  assert.match(html, `<h2>${ESCAPED}</h2>`);
});

test('the search page escapes URL, method, IP, the criteria echoed in the form', () => {
  const html = renderSearchPage({ results: [summaryOf(hostileProfile())], criteria: { url: `"><script>alert(1)</script>`, ip: XSS, method: XSS }, urls });
  assertInert(html, 'search');
  assert.match(html, `value="&quot;&gt;${ESCAPED}"`);
  assert.match(html, `<td class="url">http://127.0.0.1:8000/${ESCAPED}</td>`);
});

test('the token-not-found page escapes the token', () => {
  const html = renderTokenNotFoundPage(`"><script>alert(1)</script>`, urls);
  assertInert(html, 'token');
  assert.match(html, `<code>&quot;&gt;${ESCAPED}</code>`);
});

test('the toolbar escapes the route, method, exception class and token', () => {
  const html = renderToolbar({ token: XSS, status: 404, route: XSS, method: XSS, durationMs: 1, memoryBytes: 1, logCount: 0, errorCount: 0, warningCount: 0, exceptionClass: XSS, urls });
  assert.not.match(html, '<script>alert');
  assert.match(html, `<span class="hk-value hk-mono">${ESCAPED}</span>`);
  assert.match(html, `data-token="${ESCAPED}"`);
});

test('the toolbar loader puts values in escaped attributes, never in its script', () => {
  const html = renderToolbarLoader(`"><script>alert(1)</script>`, urls);
  assert.not.match(html, '<script>alert');
  assert.match(html, `data-token="&quot;&gt;${ESCAPED}"`);
  const script = /<script>([\s\S]*)<\/script>/.exec(html)?.[1] ?? '';
  assert.not.match(script, 'alert');
});

test.run();
