/**
 * The CSS and JS of the profiler pages, inlined in every page: no build step, no external assets.
 * Constants we wrote ourselves, so they go in through `unsafeRaw`.
 */
import { html, nonceAttribute, unsafeRaw, type SafeHtml } from '../../errors/index.js';

const PAGE_CSS = `
:root { color-scheme: light dark;
  --bg: #f3f4f6; --fg: #1f2430; --muted: #56616f; --card: #ffffff; --border: #d9dde3; --head: #1f2937; --head-fg: #f9fafb;
  --link: #0b5cad; --code-bg: #f1f3f5; --row-hover: #f7f9fb; --selected: #e8f0fb; --highlight: #fff3c4;
  --ok: #177033; --redirect: #6f42c1; --warn: #9a5b00; --error: #c0262d; --info: #0b5cad; --debug: #6b7280;
  --ok-bg: #dcf5e3; --redirect-bg: #ece3fb; --warn-bg: #fff0d1; --error-bg: #fde2e1; --none-bg: #e5e7eb;
  --cat-event: #5b5bd6; --cat-listener: #0e8bbd; --cat-controller: #1a7f37; --cat-section: #8b95a3; --track: #eef0f3; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0f1216; --fg: #e4e7ec; --muted: #9aa4b2; --card: #171b21; --border: #2c333d; --head: #0a0c10; --head-fg: #f3f4f6;
    --link: #79b8ff; --code-bg: #0d1014; --row-hover: #1c2129; --selected: #1d2a3d; --highlight: #3a3214;
    --ok: #56d37a; --redirect: #b392f0; --warn: #f0b44c; --error: #ff7b72; --info: #79b8ff; --debug: #8b949e;
    --ok-bg: #12351f; --redirect-bg: #2d2145; --warn-bg: #3d2c0a; --error-bg: #47181a; --none-bg: #2c333d;
    --cat-event: #8d8df2; --cat-listener: #3fb5e6; --cat-controller: #56d37a; --cat-section: #7d8794; --track: #1f242c; }
}
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
a { color: var(--link); }
code, pre, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
h1, h2, h3 { line-height: 1.25; }
h2 { font-size: 18px; margin: 24px 0 10px; }
h2:first-child { margin-top: 0; }
h3 { font-size: 15px; margin: 18px 0 8px; }
.muted, .empty { color: var(--muted); }
.empty { font-style: italic; overflow-wrap: anywhere; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; }

/* Hidden until a keyboard focuses it (the clip keeps it readable to screen readers). */
.skip-link { position: absolute; left: 12px; top: 8px; z-index: 10; padding: 6px 12px; border-radius: 4px; background: var(--card); color: var(--link); font-weight: 600; box-shadow: 0 0 0 2px var(--link); }
.skip-link:not(:focus) { width: 1px; height: 1px; padding: 0; overflow: hidden; clip-path: inset(50%); white-space: nowrap; box-shadow: none; }
.topbar { background: var(--head); color: var(--head-fg); }
.topbar .inner { display: flex; align-items: center; gap: 18px; max-width: 1400px; margin: 0 auto; padding: 10px 20px; }
.topbar .brand { font-weight: 700; letter-spacing: .02em; color: inherit; text-decoration: none; }
.topbar nav { display: flex; gap: 14px; margin-left: auto; }
.topbar nav a { color: inherit; opacity: .85; text-decoration: none; }
.topbar nav a:hover { opacity: 1; text-decoration: underline; }

.summary { background: var(--card); border-bottom: 1px solid var(--border); }
.summary .inner { max-width: 1400px; margin: 0 auto; padding: 16px 20px; }
.summary h1 { margin: 0 0 8px; font-size: 20px; font-weight: 600; display: flex; gap: 10px; align-items: baseline; flex-wrap: wrap; }
.summary .url { overflow-wrap: anywhere; font-weight: 500; }
.summary .method { font-weight: 700; }
.facts { display: flex; flex-wrap: wrap; gap: 4px 22px; margin: 0; }
.facts div { display: flex; gap: 6px; align-items: baseline; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; font-weight: 500; }
.relations { margin: 10px 0 0; display: flex; flex-wrap: wrap; gap: 6px 16px; overflow-wrap: anywhere; }
.relations .exception-link { font-weight: 600; }
.relations ul { display: inline; list-style: none; padding: 0; margin: 0; }
.relations li { display: inline; margin-right: 10px; }

.status { display: inline-block; min-width: 3.2em; text-align: center; padding: 1px 8px; border-radius: 4px; font-weight: 700; font-variant-numeric: tabular-nums; }
.status-2xx { color: var(--ok); background: var(--ok-bg); }
.status-3xx { color: var(--redirect); background: var(--redirect-bg); }
.status-4xx { color: var(--warn); background: var(--warn-bg); }
.status-5xx { color: var(--error); background: var(--error-bg); }
.status-none { color: var(--muted); background: var(--none-bg); }

.layout { display: grid; grid-template-columns: 250px minmax(0, 1fr); gap: 20px; max-width: 1400px; margin: 0 auto; padding: 20px; }
.sidebar { display: flex; flex-direction: column; gap: 20px; }
.menu { list-style: none; margin: 0; padding: 0; background: var(--card); border: 1px solid var(--border); border-radius: 6px; overflow: hidden; }
.menu li + li { border-top: 1px solid var(--border); }
.menu a { display: flex; align-items: center; justify-content: space-between; gap: 8px; padding: 9px 12px; color: var(--fg); text-decoration: none; }
.menu a:hover { background: var(--row-hover); }
.menu a[aria-current="page"] { background: var(--selected); font-weight: 600; box-shadow: inset 3px 0 0 var(--link); }
.menu .extra-heading { padding: 6px 12px; font-size: 12px; color: var(--muted); text-transform: uppercase; letter-spacing: .05em; }
.badges { display: inline-flex; gap: 4px; }
.badge { display: inline-block; min-width: 1.6em; text-align: center; font-size: 12px; font-weight: 600; padding: 0 6px; border-radius: 9px; background: var(--none-bg); color: var(--fg); font-variant-numeric: tabular-nums; }
.badge.error { background: var(--error); color: #fff; }
.badge.warning { background: var(--warn); color: #fff; }
.badge.ok { background: var(--ok-bg); color: var(--ok); }
@media (prefers-color-scheme: dark) { .badge.error, .badge.warning { color: #111; } }

.search { background: var(--card); border: 1px solid var(--border); border-radius: 6px; padding: 12px; }
.search h2 { font-size: 15px; margin: 0 0 8px; }
.search label { display: block; font-size: 12px; color: var(--muted); margin: 8px 0 2px; }
.search input, .search select { width: 100%; padding: 5px 7px; font: inherit; color: var(--fg); background: var(--bg); border: 1px solid var(--border); border-radius: 4px; }
.search .row { display: grid; grid-template-columns: 1fr 1fr; gap: 8px; }
.search button { margin-top: 12px; width: 100%; padding: 6px; font: inherit; font-weight: 600; color: #fff; background: var(--link); border: 0; border-radius: 4px; cursor: pointer; }
@media (prefers-color-scheme: dark) { .search button { color: #0d1117; } }

.panel { background: var(--card); border: 1px solid var(--border); border-radius: 6px; padding: 18px 20px; min-width: 0; overflow-x: auto; container: panel / inline-size; }
.panel > h2:first-child { font-size: 20px; }
/* The page's own heading (search results, token not found), sized as a panel's first heading. */
.panel > h1:first-child { font-size: 20px; margin: 0 0 10px; }
.metrics { display: flex; flex-wrap: wrap; gap: 12px; margin: 0 0 16px; }
.metric { border: 1px solid var(--border); border-radius: 6px; padding: 8px 14px; min-width: 120px; }
.metric .value { display: block; font-size: 18px; font-weight: 600; overflow-wrap: anywhere; }
.metric .label { display: block; font-size: 12px; color: var(--muted); }

table { width: 100%; border-collapse: collapse; margin: 0 0 8px; }
th, td { text-align: left; vertical-align: baseline; padding: 6px 8px; border-bottom: 1px solid var(--border); }
thead th { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); font-weight: 600; border-bottom-width: 2px; }
thead th .zone { text-transform: none; letter-spacing: normal; font-weight: 400; }
.facts .zone { color: var(--muted); font-weight: 400; }
.search .hint { font-size: 12px; color: var(--muted); margin: 4px 0 0; }
tbody tr:hover { background: var(--row-hover); }
table.kv tbody th { width: 28%; font-weight: 500; overflow-wrap: anywhere; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.nowrap { white-space: nowrap; }
.json { background: var(--code-bg); border: 1px solid var(--border); border-radius: 4px; padding: 6px 8px; max-height: 420px; overflow: auto; }
.body-preview { background: var(--code-bg); border: 1px solid var(--border); border-radius: 4px; padding: 8px 10px; max-height: 480px; overflow: auto; }
.notice { padding: 8px 12px; border-radius: 4px; background: var(--warn-bg); color: var(--fg); border-left: 3px solid var(--warn); margin: 8px 0; }
.no-data { padding: 20px 0; }
.no-data .empty { font-size: 16px; margin: 0 0 4px; }

.error-card { border: 1px solid var(--border); border-left: 4px solid var(--error); border-radius: 6px; padding: 12px 16px; margin: 0 0 16px; }
.error-card h3 { margin: 0 0 6px; display: flex; gap: 8px; align-items: baseline; flex-wrap: wrap; }
.error-card .counter { font-size: 12px; color: var(--muted); font-weight: 400; }
.error-card .class { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.error-card .message { font-size: 15px; white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0 8px; }
.error-card dl { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 0 0 8px; }
.error-card dl div { display: flex; gap: 6px; }
.error-card dt { color: var(--muted); }
.error-card dd { margin: 0; }
.frames { list-style: none; padding: 0; margin: 0; border-top: 1px solid var(--border); }
.frames li { padding: 5px 0; border-bottom: 1px solid var(--border); overflow-wrap: anywhere; }
.frames .function { font-weight: 600; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
.frames .where { color: var(--muted); }
.frames .internal .function { font-weight: 400; color: var(--muted); }
.frames details ol { list-style: none; padding-left: 16px; margin: 4px 0 0; }
.frames details li:last-child { border-bottom: 0; }
.excerpt { background: var(--code-bg); border: 1px solid var(--border); border-radius: 4px; margin: 6px 0 2px; padding: 6px 0; overflow-x: auto; font-size: 12.5px; }
.excerpt .line { display: block; padding: 0 10px; white-space: pre; }
.excerpt .highlight { background: var(--highlight); }
.excerpt .number { display: inline-block; min-width: 4ch; margin-right: 12px; color: var(--muted); text-align: right; user-select: none; }
.excerpt-changed { margin: 6px 0 0; font-size: 12px; color: var(--warn); }
summary { cursor: pointer; color: var(--muted); }
.raw-stack { margin-top: 8px; }
.raw-stack pre { background: var(--code-bg); border: 1px solid var(--border); border-radius: 4px; padding: 8px; margin-top: 6px; }

.level { font-weight: 600; font-size: 12px; white-space: nowrap; }
.level-error .level, .count.level-error { color: var(--error); }
.level-warning .level, .count.level-warning { color: var(--warn); }
.level-info .level, .count.level-info { color: var(--info); }
.level-debug .level, .level-debug .message, .count.level-debug { color: var(--debug); }
tr.level-error { background: color-mix(in srgb, var(--error-bg) 55%, transparent); }
tr.level-warning { background: color-mix(in srgb, var(--warn-bg) 55%, transparent); }
.logs .message { overflow-wrap: anywhere; white-space: pre-wrap; }
.logs details { margin-top: 4px; }
.logs details pre { margin-top: 4px; }
.counts { display: flex; flex-wrap: wrap; gap: 6px 14px; margin: 0 0 10px; padding: 0; list-style: none; }
.count { font-weight: 600; }
.filters { display: flex; flex-wrap: wrap; gap: 6px; margin: 0 0 12px; }
.filters button { font: inherit; font-size: 13px; padding: 3px 10px; border-radius: 14px; border: 1px solid var(--border); background: var(--card); color: var(--fg); cursor: pointer; }
.filters button[aria-pressed="true"] { background: var(--link); border-color: var(--link); color: #fff; }
@media (prefers-color-scheme: dark) { .filters button[aria-pressed="true"] { color: #0d1117; } }
.logs[data-filter="error"] tbody tr:not(.level-error),
.logs[data-filter="warning"] tbody tr:not(.level-warning),
.logs[data-filter="info"] tbody tr:not(.level-info),
.logs[data-filter="debug"] tbody tr:not(.level-debug) { display: none; }

.stopped { display: inline-block; margin-left: 6px; font-size: 11px; font-weight: 600; padding: 0 6px; border-radius: 3px; color: var(--warn); background: var(--warn-bg); }
.listener { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; overflow-wrap: anywhere; }
.orphaned { margin: 0; padding-left: 20px; }

.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; list-style: none; padding: 0; margin: 0 0 12px; font-size: 13px; }
.legend li::before { content: ""; display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; background: var(--swatch); }
.cat-event { --swatch: var(--cat-event); }
.cat-listener { --swatch: var(--cat-listener); }
.cat-controller { --swatch: var(--cat-controller); }
.cat-section { --swatch: var(--cat-section); }
.waterfall { border-top: 1px solid var(--border); }
.wf-axis, .wf-row, .wf-marker { display: grid; grid-template-columns: minmax(180px, 32%) minmax(0, 1fr) 80px; gap: 10px; align-items: center; }
.wf-axis { font-size: 11px; color: var(--muted); padding: 4px 0; border-bottom: 1px solid var(--border); }
.wf-axis .ticks { position: relative; height: 16px; }
.wf-axis .tick { position: absolute; top: 0; transform: translateX(-50%); white-space: nowrap; }
.wf-axis .tick:first-child { left: 0; transform: none; }
.wf-axis .tick:nth-child(2) { left: 25%; }
.wf-axis .tick:nth-child(3) { left: 50%; }
.wf-axis .tick:nth-child(4) { left: 75%; }
.wf-axis .tick:last-child { left: 100%; transform: translateX(-100%); }
.wf-row { padding: 3px 0; border-bottom: 1px solid color-mix(in srgb, var(--border) 60%, transparent); }
.wf-row:hover { background: var(--row-hover); }
.wf-name { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
.wf-row.cat-listener .wf-name { padding-left: 16px; color: var(--muted); }
.wf-row.cat-controller .wf-name, .wf-row.cat-event .wf-name { font-weight: 600; }
.wf-track { position: relative; height: 14px; background: var(--track); border-radius: 2px; }
.wf-bar { position: absolute; top: 2px; bottom: 2px; min-width: 2px; border-radius: 2px; background: var(--swatch); }
.wf-axis .wf-duration { font-size: inherit; }
/* The response-ready marker: a line at --ready (set with the bars' positions) through every track, labelled under the axis. */
.wf-marker { font-size: 11px; padding: 2px 0; border-bottom: 1px solid var(--border); }
.wf-marker .when { position: relative; height: 16px; }
.wf-ready { position: absolute; top: 0; left: var(--ready); padding-left: 4px; border-left: 2px solid var(--warn); white-space: nowrap; }
.wf-ready.late { transform: translateX(-100%); padding: 0 4px 0 0; border-left: 0; border-right: 2px solid var(--warn); }
.wf-track::after { content: ""; position: absolute; top: -3px; bottom: -3px; left: var(--ready); border-left: 2px dashed var(--warn); }
.legend li.ready-key::before { width: 0; border-radius: 0; border-left: 2px dashed var(--warn); background: none; }
.wf-duration { text-align: right; font-size: 12px; font-variant-numeric: tabular-nums; white-space: nowrap; }

.verdict { font-weight: 600; font-size: 12px; padding: 1px 8px; border-radius: 4px; white-space: nowrap; }
.verdict-match { color: var(--ok); background: var(--ok-bg); }
.verdict-almost { color: var(--warn); background: var(--warn-bg); }
.verdict-mismatch { color: var(--muted); background: var(--none-bg); }
tr.trace-match { background: color-mix(in srgb, var(--ok-bg) 50%, transparent); }

.results td { vertical-align: top; }
.results .url { overflow-wrap: anywhere; min-width: 12em; }
.results .sub-of { display: block; font-size: 12px; color: var(--muted); }
.results tr.sub-request td:first-child { box-shadow: inset 3px 0 0 var(--border); }
.page-single { max-width: 1400px; margin: 0 auto; padding: 20px; }

@media (max-width: 860px) {
  .layout { grid-template-columns: minmax(0, 1fr); }
  .sidebar { display: contents; }
  .sidebar .search { order: 2; }
  .wf-axis .tick:not(:first-child):not(:last-child) { display: none; }
  .wf-axis, .wf-row, .wf-marker { grid-template-columns: minmax(110px, 38%) minmax(0, 1fr) 64px; }
}
@media (max-width: 640px) {
  .topbar .inner, .summary .inner { padding-left: 12px; padding-right: 12px; }
  .summary h1 { font-size: 17px; }
  .layout { padding: 12px; gap: 12px; }
  .panel { padding: 14px 12px; }
}

/* A panel too narrow for all the columns of these tables shows each row as a card, its URL, listener, message or route path on a line of its own. */
@container panel (max-width: 660px) {
  /* The header row is hidden from the eye only (not display: none): a screen reader still names each cell's column. */
  .results thead, .events-called thead, .events-not-called thead, .logs thead, .traces thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
  .results, .results tbody, .events-called, .events-called tbody, .events-not-called, .events-not-called tbody, .logs, .logs tbody, .traces, .traces tbody { display: block; }
  .results tr, .events-called tr, .events-not-called tr, .logs tr, .traces tr { display: flex; flex-wrap: wrap; align-items: baseline; gap: 2px 12px; padding: 8px 4px; border-bottom: 1px solid var(--border); }
  .results td, .events-called td, .events-not-called td, .logs td, .traces td { display: block; padding: 0; border: 0; min-width: 0; }
  .results .col-status { order: 1; }
  .results .col-method { order: 2; font-weight: 600; }
  .results .col-token { order: 3; margin-left: auto; }
  .results td.url { order: 4; flex: 1 0 100%; }
  .results .col-time { order: 5; }
  .results .col-ip { order: 6; }
  .results .col-time, .results .col-ip { font-size: 12.5px; color: var(--muted); }
  .results tr.sub-request { box-shadow: inset 3px 0 0 var(--border); padding-left: 12px; }
  .results tr.sub-request td:first-child { box-shadow: none; }
  .events-called .col-priority, .events-not-called .col-priority { margin-left: auto; }
  .events-called .col-listener, .events-not-called .col-listener { order: 1; flex: 1 0 100%; }
  .events-called .col-start, .events-called .col-duration { order: 2; text-align: left; }
  .events-called .col-priority::before, .events-not-called .col-priority::before { content: "priority "; }
  .events-called .col-start::before { content: "start "; }
  .events-called .col-duration::before { content: "duration "; }
  .events-called .col-priority::before, .events-not-called .col-priority::before, .events-called .col-start::before, .events-called .col-duration::before { color: var(--muted); font-size: 12px; }
  .logs .col-message { flex: 1 0 100%; }
  .traces .col-verdict { margin-left: auto; }
  .traces .col-path, .traces .col-reason { order: 1; flex: 1 0 100%; overflow-wrap: anywhere; }
}
`;

/**
 * Level filters of the logger panel. Without JS the buttons stay hidden and every record shows;
 * with it they set `data-filter` on the table and CSS hides the other rows.
 */
const PAGE_JS = `
(function () {
  var groups = document.querySelectorAll('[data-log-filters]');
  for (var i = 0; i < groups.length; i++) (function (group) {
    var table = document.getElementById(group.getAttribute('data-log-filters'));
    if (!table) return;
    var buttons = group.querySelectorAll('button[data-level]');
    group.hidden = false;
    for (var j = 0; j < buttons.length; j++) buttons[j].addEventListener('click', function (event) {
      var level = event.currentTarget.getAttribute('data-level');
      if (level === 'all') table.removeAttribute('data-filter'); else table.setAttribute('data-filter', level);
      for (var k = 0; k < buttons.length; k++) buttons[k].setAttribute('aria-pressed', String(buttons[k] === event.currentTarget));
    });
  })(groups[i]);
})();
`;

/**
 * The `<style>` element of every profiler page, with `css` a page adds (the time panel's bar
 * positions: rules we generate from numbers, never text from a profile). A `<` in it is written
 * as its CSS escape all the same, so that no `</style>` can ever end the element early.
 */
export function pageStyle(nonce: string | undefined, css = ''): SafeHtml {
  return html`<style${nonceAttribute(nonce)}>${unsafeRaw(PAGE_CSS)}${unsafeRaw(css.replaceAll('<', '\\3c '))}</style>`;
}

/** The `<script>` element of every profiler page (progressive enhancement only). */
export function pageScript(nonce: string | undefined): SafeHtml {
  return html`<script${nonceAttribute(nonce)}>${unsafeRaw(PAGE_JS)}</script>`;
}

/**
 * The Content-Security-Policy of the profiler's HTML pages: their one `<script>` and `<style>`
 * by nonce (no `style=` attribute anywhere, so styles need no 'unsafe-inline' either), the
 * `data:` favicon, the search form sent to the profiler itself; no fetch, no plugin, no `<base>`,
 * never framed. A page shows what clients wrote: markup slipping past the escaping still runs nothing.
 */
export function profilerPagePolicy(nonce: string): string {
  return `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`;
}
