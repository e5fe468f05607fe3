/** The shell shared by the profiler's pages: document, top bar and the search form. */
import { html, type SafeHtml } from '../../errors/index.js';
import { shownTimeZone } from './format.js';
import { pageScript, pageStyle } from './page-assets.js';
import type { ProfilerUrls } from './urls.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
const LIMITS = ['10', '50', '100'];

/** What a document carries besides its title and body. */
export interface DocumentOptions {
  /** The response's CSP nonce (see profilerPagePolicy), on the page's `<style>` and `<script>`. */
  nonce?: string;
  /** CSS rules the page adds to the shared stylesheet. */
  css?: string;
}

/** A complete HTML document around a page's body. */
export function renderDocument(title: string, body: SafeHtml, options: DocumentOptions = {}): string {
  return html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta name="robots" content="noindex,nofollow">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title}</title>
<link rel="icon" href="data:,">
${pageStyle(options.nonce, options.css)}
</head>
<body>
${body}
${pageScript(options.nonce)}
</body>
</html>
`.toString();
}

/** The dark bar at the top of every page, with the ways to reach other profiles. */
export function renderTopBar(urls: ProfilerUrls): SafeHtml {
  return html`<header class="topbar"><div class="inner">
<a class="brand" href="${urls.search()}">http-kernel profiler</a>
<nav aria-label="Profiler"><a href="${urls.latest()}">Latest</a><a href="${urls.search()}">Search</a></nav>
</div></header>`;
}

/**
 * The profile search form; it sends its fields with GET to the search page, prefilled from `criteria`.
 * From and Until say the zone they are read in (see shownTimeZone).
 */
export function renderSearchForm(urls: ProfilerUrls, criteria: Record<string, string> = {}, timeZone?: string): SafeHtml {
  const value = (name: string): string => criteria[name] ?? '';
  const method = value('method').toUpperCase();
  const methods = method !== '' && !METHODS.includes(method) ? [...METHODS, method] : METHODS;
  const limit = value('limit') || '10';
  const limits = LIMITS.includes(limit) ? LIMITS : [...LIMITS, limit];
  return html`<form class="search" method="get" action="${urls.search()}" role="search">
<h2>Search profiles</h2>
<div class="row">
<div><label for="search-ip">IP</label><input id="search-ip" name="ip" type="text" inputmode="decimal" placeholder="127.0.0.1" value="${value('ip')}"></div>
<div><label for="search-status">Status</label><input id="search-status" name="status" type="text" inputmode="numeric" placeholder="404" value="${value('status')}"></div>
</div>
<label for="search-method">Method</label>
<select id="search-method" name="method"><option value="">Any</option>${methods.map((m) => html`<option${m === method ? html` selected` : ''}>${m}</option>`)}</select>
<label for="search-url">URL contains</label><input id="search-url" name="url" type="text" placeholder="/books" value="${value('url')}">
<label for="search-token">Token</label><input id="search-token" name="token" type="text" autocomplete="off" spellcheck="false" placeholder="a1b2c3" value="${value('token')}">
<label for="search-start">From</label><input id="search-start" name="start" type="text" placeholder="2026-11-21 21:40" aria-describedby="search-zone" value="${value('start')}">
<label for="search-end">Until</label><input id="search-end" name="end" type="text" placeholder="2026-11-21 22:00" aria-describedby="search-zone" value="${value('end')}">
<p class="hint" id="search-zone">In ${shownTimeZone(timeZone)} time, unless ending with Z or an offset (+01:00)</p>
<label for="search-limit">Results</label>
<select id="search-limit" name="limit">${limits.map((l) => html`<option${l === limit ? html` selected` : ''}>${l}</option>`)}</select>
<button type="submit">Search</button>
</form>`;
}
