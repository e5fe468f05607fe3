/** The page for a token no profile has (the caller sends it with 404). */
import { html } from '../../errors/index.js';
import { renderDocument, renderSearchForm, renderTopBar } from './layout.js';
import type { ProfilerUrls } from './urls.js';

/** Renders the "Token not found" page; the token is shown escaped, whatever it holds. `nonce`: the response's CSP nonce. */
export function renderTokenNotFoundPage(token: string, urls: ProfilerUrls, nonce?: string): string {
  // The token comes straight from the URL: keep the page small whatever was sent.
  const shown = token.length > 64 ? `${token.slice(0, 64)}…` : token;
  const body = html`${renderTopBar(urls)}
<div class="layout">
<aside class="sidebar">${renderSearchForm(urls)}</aside>
<main class="panel">
<h1>Token not found</h1>
<p>No profile has the token <code>${shown}</code>. It may have been removed to keep the storage within its bounds, or it was never recorded.</p>
<p><a href="${urls.latest()}">Open the latest profile</a> or <a href="${urls.search()}">search the profiles</a>.</p>
</main>
</div>`;
  return renderDocument('Token not found · Profiler', body, { nonce });
}
