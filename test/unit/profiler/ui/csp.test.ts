// Every profiler page runs only its own script and style under its Content-Security-Policy.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Profile } from '../../../../lib/profiler/profile.js';
import {
  PROFILER_PANELS,
  TOOLBAR_POLICY,
  extraPanels,
  profilerPagePolicy,
  renderProfilePage,
  renderSearchPage,
  renderTokenNotFoundPage,
  renderToolbar,
} from '../../../../lib/profiler/ui/index.js';
import { pageStyle } from '../../../../lib/profiler/ui/page-assets.js';
import { allowsInline, inlineCode, inlineElements, sourcesFor, startTags } from '../../../csp-check.js';
import { childSummary, hostileProfile, mainProfile, okProfile, summaryOf, urls, XSS } from './fixtures.js';

const NONCE = 'q2Z8t1Yw0Fz4c9Vx3kLm7A==';

/** Every page of a profile: each panel, built-in and extra, and the default one. */
function pagesOf(profile: Profile, nonce = NONCE): Array<[string, string]> {
  return [...PROFILER_PANELS, ...extraPanels(profile), 'unknown'].map((panel) => [
    panel,
    renderProfilePage({ profile, panel, parent: summaryOf(mainProfile()), children: [childSummary()], urls, timeZone: 'UTC', nonce }),
  ]);
}

function assertOnlyOwnCode(page: string, policy: string, label: string): void {
  const elements = inlineElements(page);
  assert.equal(elements.map((element) => element.tag), ['style', 'script'], `${label}: one <style> in the head, one <script> at the end`);
  for (const element of elements) {
    assert.is(element.attributes.get('nonce'), NONCE, `${label}: <${element.tag}> carries the nonce`);
    assert.ok(allowsInline(policy, element), `${label}: <${element.tag}> runs under the policy`);
  }
  assert.equal(inlineCode(page), [], `${label}: no event handler, javascript: URL or style= attribute`);
}

test('every panel of a profile with an exception, logs, a sub-request and a timeline carries the nonce on each <script> and <style>, and nothing inline else', () => {
  const policy = profilerPagePolicy(NONCE);
  for (const profile of [mainProfile(), okProfile(), hostileProfile()]) {
    for (const [panel, page] of pagesOf(profile)) assertOnlyOwnCode(page, policy, `${profile.token} ${panel}`);
  }
});

test('a payload in the profile gives no element the policy would run: an injected <script> has no nonce', () => {
  const policy = profilerPagePolicy(NONCE);
  for (const [panel, page] of pagesOf(hostileProfile())) {
    assert.not.ok(page.includes(XSS), panel);
    for (const element of inlineElements(page)) assert.ok(element.attributes.get('nonce') === NONCE, `${panel}: ${element.text.slice(0, 60)}`);
    assert.ok(inlineElements(`${page}${XSS}`).some((element) => !allowsInline(policy, element)), 'a script without the nonce is blocked');
  }
});

test('the time panel draws its bars with rules in the nonce\'d stylesheet, not with style= attributes', () => {
  const page = renderProfilePage({ profile: mainProfile(), panel: 'time', parent: null, children: [], urls, timeZone: 'UTC', nonce: NONCE });
  const [style] = inlineElements(page);
  // kernel.request: 0.1 ms to 2.2 ms of 6.5 ms.
  assert.ok(style!.text.includes('#wf-bar-0 { left: 1.538%; width: 32.308%; }'), style!.text.slice(-400));
  assert.ok(style!.text.includes('#wf-bar-5 { left: 86.154%; width: 7.692%; }'));
  assert.match(page, '<span class="wf-bar" id="wf-bar-0"></span>');
  assert.not.match(page, 'style=');
  // The other panels add no rule.
  const request = renderProfilePage({ profile: mainProfile(), panel: 'request', parent: null, children: [], urls, timeZone: 'UTC', nonce: NONCE });
  assert.not.ok(inlineElements(request)[0]!.text.includes('#wf-bar-'));
});

test('CSS a page adds can never end its <style> early', () => {
  const style = String(pageStyle(NONCE, `#x { content: "</style><script>alert(1)</script>"; }`));
  assert.is(style.indexOf('</style'), style.length - '</style>'.length);
  assert.equal(inlineElements(`${style}`).map((element) => element.tag), ['style']);
});

test('the search page and the "Token not found" page carry the nonce on each <script> and <style>', () => {
  const policy = profilerPagePolicy(NONCE);
  const search = renderSearchPage({ results: [summaryOf(mainProfile()), childSummary()], criteria: { url: XSS, method: XSS }, urls, timeZone: 'UTC', nonce: NONCE });
  assertOnlyOwnCode(search, policy, 'search');
  assertOnlyOwnCode(renderSearchPage({ results: [], criteria: {}, urls, nonce: NONCE }), policy, 'empty search');
  assertOnlyOwnCode(renderTokenNotFoundPage(XSS, urls, NONCE), policy, 'token not found');
});

test('the profiler pages\' policy allows scripts and styles by nonce only, the data: favicon, the search form to the profiler, and no framing', () => {
  const policy = profilerPagePolicy(NONCE);
  assert.equal(sourcesFor(policy, 'default-src'), ["'none'"]);
  assert.equal(sourcesFor(policy, 'script-src-elem'), [`'nonce-${NONCE}'`]);
  assert.equal(sourcesFor(policy, 'style-src-elem'), [`'nonce-${NONCE}'`]);
  assert.equal(sourcesFor(policy, 'style-src-attr'), [`'nonce-${NONCE}'`], 'style= attributes blocked');
  assert.equal(sourcesFor(policy, 'img-src'), ['data:']);
  assert.equal(sourcesFor(policy, 'connect-src'), ["'none'"]);
  assert.equal(sourcesFor(policy, 'object-src'), ["'none'"]);
  assert.equal(sourcesFor(policy, 'form-action'), ["'self'"]);
  assert.equal(sourcesFor(policy, 'base-uri'), ["'none'"]);
  assert.equal(sourcesFor(policy, 'frame-ancestors'), ["'none'"]);
  // What the pages load: the data: favicon and the search form, sent to the profiler.
  const page = renderSearchPage({ results: [], criteria: {}, urls, nonce: NONCE });
  const loads = startTags(page).filter((tag) => ['link', 'img', 'iframe', 'object', 'embed', 'base', 'form'].includes(tag.name));
  assert.equal(loads.map((tag) => tag.source), ['<link rel="icon" href="data:,">', '<form class="search" method="get" action="/_profiler/search" role="search">']);
});

test('the toolbar\'s policy allows exactly the bar\'s own script and style, by hash', () => {
  const bar = renderToolbar({ token: 'a1b2c3', status: 500, route: XSS, method: 'GET', durationMs: 1, memoryBytes: 1, logCount: 2, errorCount: 1, warningCount: 1, exceptionClass: XSS, urls });
  const elements = inlineElements(bar);
  assert.equal(elements.map((element) => element.tag), ['style', 'script']);
  for (const element of elements) assert.ok(allowsInline(TOOLBAR_POLICY, element), element.tag);
  assert.not.ok(allowsInline(TOOLBAR_POLICY, { tag: 'script', attributes: new Map(), text: 'alert(1)' }));
  assert.equal(inlineCode(bar), []);
  assert.equal(sourcesFor(TOOLBAR_POLICY, 'default-src'), ["'none'"]);
  assert.equal(sourcesFor(TOOLBAR_POLICY, 'frame-ancestors'), ["'none'"]);
});

test.run();
