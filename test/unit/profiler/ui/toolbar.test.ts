import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderToolbar, renderToolbarLoader, TOOLBAR_CSP_HASHES, type ToolbarInput } from '../../../../lib/profiler/ui/index.js';
import { declarationsFor } from '../../../css-rules.js';
import { urls } from './fixtures.js';

function toolbar(overrides: Partial<ToolbarInput> = {}): string {
  return renderToolbar({
    token: 'a1b2c3',
    status: 404,
    route: null,
    method: 'GET',
    durationMs: 6.5,
    memoryBytes: 12.5 * 1024 * 1024,
    logCount: 4,
    errorCount: 1,
    warningCount: 2,
    exceptionClass: 'NotFoundHttpError',
    urls,
    ...overrides,
  });
}

const hash = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

test('the toolbar is a fragment with one root element, #hk-toolbar', () => {
  const html = toolbar().trim();
  assert.ok(html.startsWith('<div id="hk-toolbar" class="hk-root" data-token="a1b2c3" role="region" aria-label="Profiler toolbar" lang="en">'));
  assert.ok(html.endsWith('</div>'));
  assert.not.match(html, /<html|<body|<head/);
});

test('the toolbar shows the status colored by its class, and links it to the request panel', () => {
  assert.match(toolbar(), '<a class="hk-item hk-request" href="/_profiler/a1b2c3?panel=request" title="Request and response"><span class="hk-status hk-status-4xx">404</span><span class="hk-sr"> </span><span class="hk-value">GET</span><span class="hk-sr">: request and response</span></a>');
  assert.match(toolbar({ status: 200 }), 'hk-status hk-status-2xx');
  assert.match(toolbar({ status: 503 }), 'hk-status hk-status-5xx');
});

test('each toolbar item links into its panel', () => {
  const html = toolbar();
  assert.match(html, /<a class="hk-item hk-route" href="\/_profiler\/a1b2c3\?panel=router"[^>]*><span class="hk-label">Route<\/span><span class="hk-value hk-mono">none<\/span><\/a>/);
  assert.match(html, /<a class="hk-item hk-time" href="\/_profiler\/a1b2c3\?panel=time"[^>]*><span class="hk-value">6.5<\/span><span class="hk-unit">ms<\/span><span class="hk-sr"> until the response was ready<\/span><\/a>/);
  assert.match(html, /<a class="hk-item hk-memory" href="\/_profiler\/a1b2c3\?panel=time"[^>]*><span class="hk-value">12.5<\/span><span class="hk-unit">MiB<\/span><span class="hk-sr"> of memory<\/span><\/a>/);
  assert.match(html, /<a class="hk-item hk-logs" href="\/_profiler\/a1b2c3\?panel=logger"[^>]*><span class="hk-label">Logs<\/span><span class="hk-sr"> <\/span><span class="hk-value">4<\/span><span class="hk-sr">, <\/span><span class="hk-badge hk-error">1<span class="hk-sr"> error<\/span><\/span><span class="hk-sr">, <\/span><span class="hk-badge hk-warning">2<span class="hk-sr"> warnings<\/span><\/span><\/a>/);
  assert.match(html, /<a class="hk-item hk-exception" href="\/_profiler\/a1b2c3\?panel=exception"[^>]*><span class="hk-badge hk-error" aria-hidden="true">!<\/span><span class="hk-sr">Exception <\/span><span class="hk-value hk-mono">NotFoundHttpError<\/span><\/a>/);
  assert.match(html, '<a class="hk-item hk-token" href="/_profiler/a1b2c3" title="Open the profile">');
});

test('items of bare figures read as words to a screen reader (hidden text), their visible text kept in order; the exception\'s "!" hidden from it', () => {
  // What a screen reader reads of an item: its text, hidden text (hk-sr) included, without what is aria-hidden.
  const spoken = (html: string, item: string): string | undefined => {
    const link = new RegExp(`<a class="hk-item hk-${item}"[^>]*>(.*?)</a>`).exec(html)?.[1];
    return link?.replace(/<span[^>]*aria-hidden="true"[^>]*>[^<]*<\/span>/g, '').replace(/<[^>]+>/g, '');
  };
  const html = toolbar();
  assert.is(spoken(html, 'request'), '404 GET: request and response');
  assert.is(spoken(html, 'time'), '6.5ms until the response was ready');
  assert.is(spoken(html, 'memory'), '12.5MiB of memory');
  // Each figure a word of its own: run together, `4` logs and `1` error were read as `41` (`Logs42 errors1 warning` for 4 logs, 2 errors).
  assert.is(spoken(html, 'logs'), 'Logs 4, 1 error, 2 warnings');
  assert.is(spoken(toolbar({ errorCount: 2, warningCount: 1 }), 'logs'), 'Logs 4, 2 errors, 1 warning');
  assert.is(spoken(toolbar({ errorCount: 0, warningCount: 2 }), 'logs'), 'Logs 4, 2 warnings');
  assert.is(spoken(toolbar({ errorCount: 0, warningCount: 0 }), 'logs'), 'Logs 4');
  assert.is(spoken(html, 'exception'), 'Exception NotFoundHttpError');
  // The hidden text is hidden by the toolbar's own CSS, not shown as text on the page.
  const hidden = declarationsFor(/<style>([^<]*)<\/style>/.exec(html)![1]!, '#hk-toolbar .hk-sr');
  assert.equal([hidden.get('position'), hidden.get('width'), hidden.get('height'), hidden.get('overflow'), hidden.get('clip')], ['absolute', '1px', '1px', 'hidden', 'rect(0 0 0 0)']);
});

test('the closed toggle reads its status and its name apart to a screen reader (hidden text), not run together', () => {
  const closed = /<span class="hk-when-closed">(.*?)<\/label>/.exec(toolbar())?.[1]?.replace(/<[^>]+>/g, '');
  assert.is(closed, '404 Profiler');
});

test('the logs tooltip puts each count with its noun in the right number', () => {
  const title = (errorCount: number, warningCount: number): string => /<a class="hk-item hk-logs"[^>]* title="([^"]*)"/.exec(toolbar({ errorCount, warningCount }))?.[1] ?? '';
  assert.is(title(1, 2), 'Logs: 1 error, 2 warnings');
  assert.is(title(2, 1), 'Logs: 2 errors, 1 warning');
  assert.is(title(0, 0), 'Logs: 0 errors, 0 warnings');
});

test('the toolbar shows the route name, and leaves out the exception and zero badges when there are none', () => {
  const html = toolbar({ status: 200, route: 'book_show', exceptionClass: null, errorCount: 0, warningCount: 0 });
  assert.match(html, '<span class="hk-value hk-mono">book_show</span>');
  assert.not.match(html, 'class="hk-item hk-exception"');
  assert.not.match(html, 'class="hk-badge');
});

test('every toolbar CSS rule is scoped under #hk-toolbar', () => {
  const css = /<style>([\s\S]*?)<\/style>/.exec(toolbar())?.[1] ?? '';
  assert.ok(css.length > 500);
  const withoutAtRules = css.replace(/@media[^{]*\{/g, '');
  const selectors = [...withoutAtRules.matchAll(/([^{}]+)\{[^{}]*\}/g)].flatMap((m) => m[1]!.split(',').map((s) => s.trim())).filter(Boolean);
  assert.ok(selectors.length > 20);
  for (const selector of selectors) assert.ok(selector.startsWith('#hk-toolbar'), `unscoped selector: ${selector}`);
});

test('on a screen narrower than the bar its items keep their width and the bar scrolls, rather than squeezing them over each other', () => {
  const css = /<style>([\s\S]*?)<\/style>/.exec(toolbar())?.[1] ?? '';
  // The reset gives every element min-width: 0, so a flex item that may shrink goes below its text's width.
  assert.is(declarationsFor(css, '#hk-toolbar *').get('min-width'), '0');
  assert.is(declarationsFor(css, '#hk-toolbar .hk-bar').get('overflow-x'), 'auto');
  const item = declarationsFor(css, '#hk-toolbar a.hk-item');
  const shrink = item.get('flex-shrink') ?? (item.get('flex') === 'none' ? '0' : item.get('flex')?.split(/\s+/)[1]);
  assert.is(shrink, '0', `a.hk-item: ${[...item].map(([name, value]) => `${name}: ${value}`).join('; ')}`);
});

test('the toolbar carries no style attributes, so a strict style-src only needs its hash', () => {
  assert.not.match(toolbar(), /\sstyle="/);
});

test('the toolbar collapses with a checkbox and label, and its script remembers the state in localStorage inside try/catch', () => {
  const html = toolbar();
  assert.match(html, '<input type="checkbox" id="hk-toolbar-hide" class="hk-hide" aria-label="Hide the profiler toolbar">');
  assert.match(html, '<label for="hk-toolbar-hide" class="hk-toggle"');
  const script = /<script>([\s\S]*?)<\/script>/.exec(html)?.[1] ?? '';
  assert.match(script, /try\{[^}]*localStorage.getItem/);
  assert.match(script, /try\{localStorage.setItem/);
});

test('the CSP hashes match the toolbar style and script and the loader script', () => {
  const html = toolbar();
  const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
  const script = /<script>([\s\S]*?)<\/script>/.exec(html)![1]!;
  const loader = /<script>([\s\S]*?)<\/script>/.exec(renderToolbarLoader('a1b2c3', urls))![1]!;
  assert.equal(TOOLBAR_CSP_HASHES.style, [hash(style)]);
  assert.ok(TOOLBAR_CSP_HASHES.script.includes(hash(script)));
  assert.ok(TOOLBAR_CSP_HASHES.script.includes(hash(loader)));
});

test('the loader is a placeholder with the toolbar and panel URLs, and a constant script', () => {
  const html = renderToolbarLoader('a1b2c3', urls);
  assert.match(html, '<div id="hk-toolbar-loader" hidden data-token="a1b2c3" data-src="/_wdt/a1b2c3" data-panel="/_profiler/a1b2c3"></div><script>');
  assert.is(/<script>([\s\S]*?)<\/script>/.exec(html)![1], /<script>([\s\S]*?)<\/script>/.exec(renderToolbarLoader('ffffff', urls))![1]);
  assert.ok(html.length < 2000, `the loader stays tiny (${html.length} bytes)`);
});

test('the loader retries a 404 of its fetch, then falls back to a bar linking to the panel (its behaviour: toolbar-loader-sec.test.ts)', () => {
  const script = /<script>([\s\S]*?)<\/script>/.exec(renderToolbarLoader('a1b2c3', urls))![1]!;
  assert.match(script, 'fetch(d.src');
  assert.match(script, /r.status===404&&n<3\)\{n\+\+;setTimeout\(load/);
  assert.match(script, /a.href=d.panel/);
  assert.match(script, 'createContextualFragment');
});

test('the loader takes a CSP nonce', () => {
  assert.match(renderToolbarLoader('a1b2c3', urls, { nonce: 'r4nd0m' }), '<script nonce="r4nd0m">');
});

test.run();
