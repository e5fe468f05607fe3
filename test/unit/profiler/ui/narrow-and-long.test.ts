import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Profile } from '../../../../lib/profiler/profile.js';
import { renderProfilePage, renderSearchPage } from '../../../../lib/profiler/ui/index.js';
import { elideMiddle, SHOWN_MESSAGE_LENGTH, SHOWN_URL_LENGTH } from '../../../../lib/profiler/ui/values.js';
import { declarationsFor } from '../../../css-rules.js';
import { inlineElements } from '../../../csp-check.js';
import { childSummary, mainProfile, summaryOf, urls, XSS } from './fixtures.js';

/** What a tester sent: `GET /long?v=` and 5000 `A`. */
const LONG_URL = `http://127.0.0.1:8000/long?v=${'A'.repeat(5000)}`;
const NARROW_PANEL = 'panel (max-width: 660px)';

function profilePage(profile: Profile, children = [childSummary()], panel = 'request'): string {
  return renderProfilePage({ profile, panel, parent: null, children, urls, timeZone: 'UTC' });
}

function searchPage(results = [summaryOf(mainProfile()), childSummary()]): string {
  return renderSearchPage({ results, criteria: {}, urls, timeZone: 'UTC' });
}

function stylesheetOf(html: string): string {
  return inlineElements(html).find((element) => element.tag === 'style')!.text;
}

/** The rules inside `@container <query> { ... }`, as a stylesheet of their own. */
function containerRules(css: string, query: string): string {
  const start = css.indexOf(`@container ${query} {`);
  assert.ok(start !== -1, `the stylesheet has @container ${query}`);
  let depth = 0;
  for (let i = css.indexOf('{', start); i < css.length; i++) {
    if (css[i] === '{') depth++;
    else if (css[i] === '}' && --depth === 0) return css.slice(css.indexOf('{', start) + 1, i);
  }
  return '';
}

/** The longest run of one character in the text a browser shows (tags and their attributes left out). */
function longestRun(html: string, char: string): number {
  const shown = html.replace(/<[^>]*>/g, '');
  return Math.max(0, ...[...shown.matchAll(new RegExp(`${char}+`, 'g'))].map((m) => m[0].length));
}

test('the panel is the container the narrow layout measures, so a sidebar beside it counts too', () => {
  assert.is(declarationsFor(stylesheetOf(searchPage()), '.panel').get('container'), 'panel / inline-size');
});

test('in a narrow panel each search result is a card: URL on a line of its own, status, method and the token link on the first', () => {
  const html = searchPage();
  const narrow = containerRules(stylesheetOf(html), NARROW_PANEL);
  // The header row is hidden from the eye only: a screen reader still names each cell's column.
  assert.is(declarationsFor(narrow, '.results thead').get('clip-path'), 'inset(50%)');
  assert.is(declarationsFor(narrow, '.results thead').get('display'), undefined);
  assert.is(declarationsFor(narrow, '.results tr').get('display'), 'flex');
  assert.is(declarationsFor(narrow, '.results tr').get('flex-wrap'), 'wrap');
  assert.is(declarationsFor(narrow, '.results td.url').get('flex'), '1 0 100%');
  const order = (selector: string): number => Number(declarationsFor(narrow, selector).get('order'));
  assert.ok(order('.results .col-status') < order('.results td.url'));
  assert.ok(order('.results .col-token') < order('.results td.url'), 'the link to the profile stays on the first line');
  assert.is(declarationsFor(narrow, '.results .col-token').get('margin-left'), 'auto');
  const row = /<tbody>\s*(<tr[\s\S]*?<\/tr>)/.exec(html)?.[1] ?? '';
  const classes = [...row.matchAll(/<td class="([^"]*)"/g)].map((m) => m[1]);
  assert.equal(classes, ['col-status', 'nowrap col-ip', 'nowrap col-method', 'url', 'nowrap col-time', 'nowrap col-token']);
});

test('in a narrow panel the events tables are cards: the listener on a full line, priority, start and duration labelled', () => {
  const html = profilePage(mainProfile(), [childSummary()], 'events');
  const narrow = containerRules(stylesheetOf(html), NARROW_PANEL);
  for (const table of ['.events-called', '.events-not-called']) {
    assert.is(declarationsFor(narrow, `${table} thead`).get('clip-path'), 'inset(50%)', table);
    assert.is(declarationsFor(narrow, `${table} tr`).get('display'), 'flex', table);
    assert.is(declarationsFor(narrow, `${table} .col-listener`).get('flex'), '1 0 100%', table);
    assert.is(declarationsFor(narrow, `${table} .col-priority::before`).get('content'), '"priority "', table);
  }
  assert.is(declarationsFor(narrow, '.events-called .col-start::before').get('content'), '"start "');
  assert.is(declarationsFor(narrow, '.events-called .col-duration::before').get('content'), '"duration "');
  assert.match(html, /<td class="col-listener"><span class="listener">CorsListener.onKernelRequest<\/span><\/td>\s*<td class="num col-priority">250<\/td>\s*<td class="num col-start">/);
});

test('in a narrow panel a log record is a card with its message on a full line', () => {
  const html = profilePage(mainProfile(), [childSummary()], 'logger');
  const narrow = containerRules(stylesheetOf(html), NARROW_PANEL);
  assert.is(declarationsFor(narrow, '.logs tr').get('display'), 'flex');
  assert.is(declarationsFor(narrow, '.logs .col-message').get('flex'), '1 0 100%');
  assert.match(html, '<td class="col-message"><div class="message">');
});

test('in a narrow panel a route trace is a card: name and verdict first, path and reason on lines of their own', () => {
  const html = profilePage(mainProfile(), [childSummary()], 'router');
  const narrow = containerRules(stylesheetOf(html), NARROW_PANEL);
  assert.is(declarationsFor(narrow, '.traces tr').get('display'), 'flex');
  assert.is(declarationsFor(narrow, '.traces .col-verdict').get('margin-left'), 'auto');
  assert.is(declarationsFor(narrow, '.traces .col-path').get('flex'), '1 0 100%');
  assert.is(declarationsFor(narrow, '.traces .col-reason').get('flex'), '1 0 100%');
  assert.match(html, /<td class="mono">[^<]*<\/td>\s*<td class="mono col-path">/);
});

test('on a narrow screen the page gives its width to the content, not to margins', () => {
  const css = stylesheetOf(searchPage());
  assert.is(declarationsFor(css, '.layout', '(max-width: 640px)').get('padding'), '12px');
  assert.is(declarationsFor(css, '.panel', '(max-width: 640px)').get('padding'), '14px 12px');
});

test('search results align their cells to the top, so the cells of a tall row do not look empty', () => {
  assert.is(declarationsFor(stylesheetOf(searchPage()), '.results td').get('vertical-align'), 'top');
});

test('a long URL in the search results is cut in its middle, whole in the title', () => {
  const html = searchPage([{ ...childSummary(), url: LONG_URL }]);
  const cell = /<td class="url">([\s\S]*?)<\/td>/.exec(html)?.[1] ?? '';
  assert.match(cell, `<span class="elided" title="${LONG_URL}">${elideMiddle(LONG_URL, SHOWN_URL_LENGTH)}</span>`);
  assert.ok(longestRun(html, 'A') < SHOWN_URL_LENGTH, 'the shown text is short');
  assert.match(cell, 'sub-request of <a class="mono" href="/_profiler/a1b2c3">a1b2c3</a>', 'what follows the URL is still shown');
});

test('a long URL shows once, cut, on a profile page, so the panel menu stays near the top', () => {
  const base = mainProfile();
  const profile: Profile = { ...base, url: LONG_URL, collectors: { ...base.collectors, request: { ...(base.collectors['request'] as object), url: LONG_URL } } };
  const html = profilePage(profile, [{ ...childSummary(), url: `${LONG_URL}&_error=1` }]);
  const summary = /<section class="summary"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
  assert.ok(longestRun(summary, 'A') < SHOWN_URL_LENGTH, 'neither the heading nor the sub-request line prints the whole URL');
  assert.match(summary, `<a class="url" href="${LONG_URL}"><span class="elided" title="${LONG_URL}">`);
  assert.match(summary, `title="${LONG_URL}&amp;_error=1"`);
  const beforeMenu = html.slice(html.indexOf('<body>'), html.indexOf('<ul class="menu">')).replace(/<[^>]*>/g, '');
  assert.ok(beforeMenu.length < 1000, `${beforeMenu.length} characters before the menu`);
  assert.ok(/<title>[^<]*<\/title>/.exec(html)![0].length < 300, 'the document title is short too');
  const router = profilePage(profile, [], 'router');
  assert.match(router, `No route matched <span class="mono">GET <span class="elided" title="${LONG_URL}">`);
  // The request panel is where the URL is shown whole.
  assert.match(/<main class="panel"[\s\S]*<\/main>/.exec(html)![0], `<span class="text">${LONG_URL}</span>`);
});

test('a 404 message repeating a long URL is cut in the summary too, whole in its title and on the exception panel', () => {
  const base = mainProfile();
  const message = `No route found for "GET ${LONG_URL}"`;
  const exception = { exceptions: [{ class: 'NotFoundHttpError', message, status: 404, frames: [] }] };
  const profile: Profile = { ...base, url: LONG_URL, status: 404, collectors: { ...base.collectors, exception } };
  const html = profilePage(profile, [], 'logger');
  const summary = /<section class="summary"[\s\S]*?<\/section>/.exec(html)?.[0] ?? '';
  assert.ok(longestRun(summary, 'A') < SHOWN_MESSAGE_LENGTH, 'the summary does not print the whole message');
  assert.match(summary, `<span class="text"><span class="elided" title="No route found for &quot;GET ${LONG_URL}&quot;">No route found`);
  const beforeMenu = html.slice(html.indexOf('<body>'), html.indexOf('<ul class="menu">')).replace(/<[^>]*>/g, '');
  assert.ok(beforeMenu.length < 1000, `${beforeMenu.length} characters before the menu`);
  const panel = profilePage(profile, [], 'exception');
  assert.match(/<main class="panel"[\s\S]*<\/main>/.exec(panel)![0], `<p class="message">No route found for &quot;GET ${LONG_URL}&quot;</p>`);
});

test('a long hostile URL is escaped in its cut text and in its title', () => {
  const url = `http://127.0.0.1:8000/${XSS}${'A'.repeat(300)}${XSS}"'`;
  const escaped = (text: string): string => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;').replaceAll("'", '&#39;');
  for (const html of [searchPage([{ ...childSummary(), url }]), profilePage({ ...mainProfile(), url }, [{ ...childSummary(), url }])]) {
    assert.not.match(html, '<script>alert');
    assert.match(html, `title="${escaped(url)}"`);
    assert.match(html, `>${escaped(elideMiddle(url, SHOWN_URL_LENGTH))}</span>`);
  }
});

test('elideMiddle keeps both ends, cuts only what is over the limit, and never splits a character', () => {
  assert.is(elideMiddle('short', 10), 'short');
  assert.is(elideMiddle('0123456789', 10), '0123456789');
  const cut = elideMiddle('abcdefghijklmnopqrstuvwxyz', 10);
  assert.is(cut, 'abcdef…xyz');
  const emoji = elideMiddle('😀'.repeat(20), 10);
  assert.is(Array.from(emoji).length, 10);
  assert.is(Buffer.from(emoji).toString(), emoji, 'no lone surrogate');
  assert.ok(emoji.startsWith('😀'.repeat(6)) && emoji.endsWith('😀'.repeat(3)));
});

test.run();
