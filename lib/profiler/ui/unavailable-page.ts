/** The page for a profiler page that cannot be read for now (the caller sends it with 503 and Retry-After). */
import { html } from '../../errors/index.js';
import { renderDocument, renderTopBar } from './layout.js';
import type { ProfilerUrls } from './urls.js';

/** Renders the "Profiler unavailable" page saying why (`message`) and when to try again (never, for null). `nonce`: the response's CSP nonce. */
export function renderUnavailablePage(message: string, retryAfterSeconds: number | null, urls: ProfilerUrls, nonce?: string): string {
  const body = html`${renderTopBar(urls)}
<div class="layout">
<main class="panel">
<h1>Profiler unavailable</h1>
<p>${message}</p>
${retryAfterSeconds === null ? '' : html`<p>Reload this page in ${String(retryAfterSeconds)} ${retryAfterSeconds === 1 ? 'second' : 'seconds'}.</p>`}
</main>
</div>`;
  return renderDocument('Profiler unavailable · Profiler', body, { nonce });
}
