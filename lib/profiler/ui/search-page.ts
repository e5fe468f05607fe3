/** The search results page: the form, the count, then one row per profile, newest first as given. */
import { html, type SafeHtml } from '../../errors/index.js';
import type { ProfileSummary } from '../profile.js';
import { formatProfileTime, isoTime, shownTimeZone, statusClass } from './format.js';
import { renderDocument, renderSearchForm, renderTopBar } from './layout.js';
import type { ProfilerUrls } from './urls.js';
import { renderShortUrl } from './values.js';

/** What `renderSearchPage` shows. */
export interface SearchPageInput {
  results: ProfileSummary[];
  /** The criteria of this search, as given in the query string; they prefill the form. */
  criteria: Record<string, string>;
  urls: ProfilerUrls;
  /** IANA time zone for the Time column and the form's From and Until; default the server's (see shownTimeZone). */
  timeZone?: string;
  /** The response's CSP nonce (see profilerPagePolicy). */
  nonce?: string;
}

/** The count sentence above the results: `No results found`, `1 result found`, `N results found`. */
export function resultCountSentence(count: number): string {
  if (count === 0) return 'No results found';
  if (count === 1) return '1 result found';
  return `${count} results found`;
}

/** Renders the complete HTML page of a profile search. */
export function renderSearchPage({ results, criteria, urls, timeZone, nonce }: SearchPageInput): string {
  const body = html`${renderTopBar(urls)}
<div class="layout">
<aside class="sidebar">${renderSearchForm(urls, criteria, timeZone)}</aside>
<main class="panel">
<h1 class="result-count">${resultCountSentence(results.length)}</h1>
${results.length > 0 ? renderResults(results, urls, timeZone) : html`<p class="empty">No profile matches these criteria. Widen the search, or make a request to the application first.</p>`}
</main>
</div>`;
  return renderDocument(`${resultCountSentence(results.length)} · Profiler`, body, { nonce });
}

function renderResults(results: ProfileSummary[], urls: ProfilerUrls, timeZone: string | undefined): SafeHtml {
  return html`<table class="results">
<thead><tr><th scope="col">Status</th><th scope="col">IP</th><th scope="col">Method</th><th scope="col">URL</th><th scope="col">Time <span class="zone">(${shownTimeZone(timeZone)})</span></th><th scope="col">Token</th></tr></thead>
<tbody>
${results.map(
  (result) => html`<tr${result.parent !== null ? html` class="sub-request"` : ''}>
<td class="col-status"><span class="status ${statusClass(result.status)}">${result.status}</span></td>
<td class="nowrap col-ip">${result.ip}</td>
<td class="nowrap col-method">${result.method}</td>
<td class="url">${renderShortUrl(result.url)}${result.parent !== null
    ? html`<span class="sub-of">sub-request of <a class="mono" href="${urls.panel(result.parent)}">${result.parent}</a></span>`
    : ''}</td>
<td class="nowrap col-time"><time datetime="${isoTime(result.time)}" title="${isoTime(result.time)}">${formatProfileTime(result.time, timeZone)}</time></td>
<td class="nowrap col-token"><a class="mono" href="${urls.panel(result.token)}">${result.token}</a></td>
</tr>
`,
)}</tbody>
</table>`;
}
