/**
 * The toolbar's CSS and JS, and the tiny loader script. Every rule is scoped under `#hk-toolbar`
 * so the host page is never restyled, and every script is a constant (the values it needs come
 * from data attributes), so a Content-Security-Policy can allow them by hash.
 */
import { createHash } from 'node:crypto';

/** localStorage key remembering that the toolbar was collapsed. */
export const TOOLBAR_STORAGE_KEY = 'hk-toolbar/hidden';

/**
 * The toolbar's stylesheet (the text of its `<style>` element). The toggle's focus ring comes after
 * the hidden bar's shadow, a rule of the same specificity, so that it shows in both states.
 */
export const TOOLBAR_CSS = `
#hk-toolbar, #hk-toolbar * { box-sizing: border-box; margin: 0; padding: 0; border: 0; font: inherit; line-height: inherit; color: inherit;
  background: none; text-decoration: none; text-transform: none; letter-spacing: normal; text-align: left; text-shadow: none; box-shadow: none;
  float: none; width: auto; height: auto; min-width: 0; max-width: none; min-height: 0; max-height: none; opacity: 1; transform: none; vertical-align: baseline; }
#hk-toolbar { display: block; position: static; font: 13px/1 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color-scheme: light dark;
  --hk-bg: #ffffff; --hk-fg: #1f2430; --hk-muted: #5f6b7a; --hk-border: #d0d5dc; --hk-hover: #eef1f5; --hk-ok: #1a7f37; --hk-redirect: #6f42c1;
  --hk-warn: #9a5b00; --hk-error: #c0262d; --hk-none: #6b7280; --hk-badge-fg: #ffffff; }
@media (prefers-color-scheme: dark) {
  #hk-toolbar { --hk-bg: #171b21; --hk-fg: #e4e7ec; --hk-muted: #9aa4b2; --hk-border: #323a45; --hk-hover: #232a33; --hk-ok: #56d37a;
    --hk-redirect: #b392f0; --hk-warn: #f0b44c; --hk-error: #ff7b72; --hk-none: #8b949e; --hk-badge-fg: #0f1216; }
}
#hk-toolbar .hk-spacer { display: block; height: 36px; }
#hk-toolbar .hk-bar { display: flex; align-items: stretch; position: fixed; left: 0; right: 0; bottom: 0; z-index: 2147483000; height: 36px;
  padding-right: 40px; background: var(--hk-bg); color: var(--hk-fg); border-top: 1px solid var(--hk-border); box-shadow: 0 -2px 8px rgba(0, 0, 0, .12);
  overflow-x: auto; overflow-y: hidden; white-space: nowrap; }
#hk-toolbar a.hk-item { display: flex; flex: none; align-items: center; gap: 6px; padding: 0 12px; height: 100%; border-right: 1px solid var(--hk-border); cursor: pointer; color: var(--hk-fg); }
#hk-toolbar a.hk-item:hover, #hk-toolbar a.hk-item:focus-visible { background: var(--hk-hover); outline: none; }
#hk-toolbar a.hk-item:focus-visible { box-shadow: inset 0 0 0 2px var(--hk-redirect); }
#hk-toolbar .hk-label { color: var(--hk-muted); }
#hk-toolbar .hk-value { font-weight: 600; }
#hk-toolbar .hk-unit { color: var(--hk-muted); }
#hk-toolbar .hk-sr { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
#hk-toolbar .hk-mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12px; }
#hk-toolbar .hk-token { margin-left: auto; border-left: 1px solid var(--hk-border); }
#hk-toolbar .hk-status, #hk-toolbar .hk-badge { display: inline-block; padding: 3px 6px; border-radius: 4px; font-weight: 700; font-variant-numeric: tabular-nums;
  color: var(--hk-badge-fg); background: var(--hk-none); }
#hk-toolbar .hk-badge { padding: 3px 5px; border-radius: 8px; font-size: 11px; }
#hk-toolbar .hk-status-2xx { background: var(--hk-ok); }
#hk-toolbar .hk-status-3xx { background: var(--hk-redirect); }
#hk-toolbar .hk-status-4xx, #hk-toolbar .hk-warning { background: var(--hk-warn); }
#hk-toolbar .hk-status-5xx, #hk-toolbar .hk-error { background: var(--hk-error); }
#hk-toolbar .hk-exception .hk-value { color: var(--hk-error); }
#hk-toolbar .hk-hide { position: fixed; right: 0; bottom: 0; width: 1px; height: 1px; opacity: 0; overflow: hidden; clip: rect(0 0 0 0); }
#hk-toolbar .hk-toggle { display: flex; align-items: center; gap: 6px; position: fixed; right: 0; bottom: 0; z-index: 2147483001; height: 36px; min-width: 40px;
  justify-content: center; padding: 0 10px; cursor: pointer; user-select: none; color: var(--hk-muted); background: var(--hk-bg);
  border-top: 1px solid var(--hk-border); border-left: 1px solid var(--hk-border); }
#hk-toolbar .hk-toggle:hover { color: var(--hk-fg); background: var(--hk-hover); }
#hk-toolbar .hk-when-open { font-size: 18px; }
#hk-toolbar .hk-when-closed { display: none; align-items: center; gap: 6px; }
#hk-toolbar .hk-hide:checked ~ .hk-bar, #hk-toolbar .hk-hide:checked ~ .hk-spacer, #hk-toolbar .hk-hide:checked ~ .hk-toggle .hk-when-open { display: none; }
#hk-toolbar .hk-hide:checked ~ .hk-toggle .hk-when-closed { display: inline-flex; }
#hk-toolbar .hk-hide:checked ~ .hk-toggle { border-top-left-radius: 6px; box-shadow: 0 -2px 8px rgba(0, 0, 0, .12); }
#hk-toolbar .hk-hide:focus-visible ~ .hk-toggle { box-shadow: inset 0 0 0 2px var(--hk-redirect); }
@media (max-width: 640px) {
  #hk-toolbar .hk-bar { scrollbar-width: none; }
  #hk-toolbar a.hk-item { gap: 4px; padding: 0 8px; }
  #hk-toolbar a.hk-route, #hk-toolbar a.hk-memory, #hk-toolbar .hk-token .hk-label { display: none; }
}
@media print { #hk-toolbar { display: none; } }
`;

/** Restores and remembers the collapsed state; the toggle itself works without it (checkbox and CSS). */
export const TOOLBAR_JS = `(function(){var b=document.getElementById('hk-toolbar-hide');if(!b)return;var k='${TOOLBAR_STORAGE_KEY}';try{var v=localStorage.getItem(k);if(v!==null)b.checked=v==='1'}catch(e){}b.addEventListener('change',function(){try{localStorage.setItem(k,b.checked?'1':'0')}catch(e){}})})();`;

/**
 * The loader: fetches the toolbar (`data-src`) and inserts it in place of its placeholder, so its script
 * runs. The placeholder is the element right before the loader's own `<script>`, never one found by its
 * id: the page's HTML may hold an element with that id (HTML sanitizers keep ids and data attributes),
 * whose `data-src` would have the loader run markup from anywhere. The profile may not be saved yet (that happens after the response): a
 * 404 is retried a few times (about 6 s in all). Anything else that fails shows at once a minimal bar linking to the profile (`data-panel`):
 * another status, or a fetch that rejects, which is how a page's Content-Security-Policy blocking it ends (a retry would only be blocked again).
 * The page's policy allows the loader by its hash, so a copy of it planted by an HTML injection runs too: it does nothing unless its
 * placeholder names a hex token and the profiler's own URLs for it, so all such a copy can load is a toolbar.
 * The link it shows instead is a landmark in English, as the toolbar is, so that it is not content outside every landmark of the page.
 */
export const TOOLBAR_LOADER_JS = `(function(){var c=document.currentScript,s=c&&c.previousElementSibling;if(!s||s.id!=='hk-toolbar-loader'||document.getElementById('hk-toolbar'))return;var d=s.dataset,n=0;if(!/^[0-9a-f]{1,64}$/.test(d.token||'')||d.src!=='/_wdt/'+d.token||d.panel!=='/_profiler/'+d.token)return;function fallback(){var b=document.createElement('div'),a=document.createElement('a');b.id='hk-toolbar';b.setAttribute('role','region');b.setAttribute('aria-label','Profiler toolbar');b.lang='en';b.style.cssText='position:fixed;right:0;bottom:0;z-index:2147483000;padding:8px 12px;font:13px/1.2 system-ui,sans-serif;background:#1f2937;border-top-left-radius:6px';a.style.cssText='color:#f9fafb;text-decoration:underline';a.href=d.panel;a.textContent='Profiler: '+d.token;b.appendChild(a);s.replaceWith(b)}function show(h){try{s.replaceWith(document.createRange().createContextualFragment(h))}catch(e){fallback()}}function load(){fetch(d.src,{headers:{Accept:'text/html'},credentials:'same-origin'}).then(function(r){if(r.ok)r.text().then(show,fallback);else if(r.status===404&&n<3){n++;setTimeout(load,n*n*400)}else fallback()},fallback)}if(window.fetch&&document.createRange)load();else fallback()})();`;

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/**
 * CSP sources allowing the toolbar's inline script and style and the loader by hash (add them to
 * `script-src` and `style-src` of HTML responses that get the toolbar). The fallback bar sets its
 * style through the CSSOM, which CSP allows.
 */
export const TOOLBAR_CSP_HASHES: Readonly<{ script: readonly string[]; style: readonly string[] }> = Object.freeze({
  script: Object.freeze([sha256(TOOLBAR_LOADER_JS), sha256(TOOLBAR_JS)]),
  style: Object.freeze([sha256(TOOLBAR_CSS)]),
});

/**
 * The Content-Security-Policy of `/_wdt/<token>` opened by itself: the bar's own script and style
 * by hash (constants, like those of the loader) and nothing else. Inserted into a page by the
 * loader, the bar runs under that page's policy instead (see TOOLBAR_CSP_HASHES).
 */
export const TOOLBAR_POLICY = `default-src 'none'; script-src ${sha256(TOOLBAR_JS)}; style-src ${sha256(TOOLBAR_CSS)}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
