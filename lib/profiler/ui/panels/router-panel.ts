/** The router panel: the matched route and its parameters (or the redirect), then each route's verdict. */
import { html, type SafeHtml } from '../../../errors/index.js';
import { arrayOf, isRecord, isSafeLink, renderKeyValueTable, renderNoData, renderShortUrl, stringOf } from '../values.js';
import type { PanelContext } from './panel-context.js';

const VERDICTS = ['match', 'almost', 'mismatch'] as const;
const VERDICT_LABELS: Record<(typeof VERDICTS)[number], string> = { match: 'Match', almost: 'Almost', mismatch: 'Mismatch' };
/** The heading's count of each verdict, singular and plural: "1 match, 2 almost matches, 5 mismatches". */
const VERDICT_COUNTS: Record<(typeof VERDICTS)[number], [string, string]> = {
  match: ['match', 'matches'],
  almost: ['almost match', 'almost matches'],
  mismatch: ['mismatch', 'mismatches'],
};

/** Renders `collectors.router`. */
export function renderRouterPanel({ profile }: PanelContext): SafeHtml {
  const data = profile.collectors['router'];
  if (!isRecord(data)) return html`<h2>Routing</h2>${renderNoData('router', data)}`;
  const route = stringOf(data['route']);
  const redirect = stringOf(data['redirect']);
  const traces = arrayOf(data['traces']).filter(isRecord);
  const counts = new Map<string, number>();
  for (const trace of traces) counts.set(String(trace['verdict']), (counts.get(String(trace['verdict'])) ?? 0) + 1);

  return html`<h2>Routing</h2>
<div class="metrics">
<div class="metric"><span class="value mono">${route ?? (redirect !== null ? 'redirect' : 'no match')}</span><span class="label">Matched route</span></div>
<div class="metric"><span class="value">${profile.method}</span><span class="label">Method</span></div>
<div class="metric"><span class="value">${traces.length}</span><span class="label">Routes checked</span></div>
</div>
${redirect !== null ? html`<p class="notice">${route === null ? 'The router answered with a redirect to' : 'The response redirects to'} ${isSafeLink(redirect) ? html`<a href="${redirect}" rel="noreferrer">${redirect}</a>` : html`<span class="mono">${redirect}</span>`}</p>` : ''}
${route === null && redirect === null ? html`<p class="empty">No route matched <span class="mono">${profile.method} ${renderShortUrl(profile.url)}</span></p>` : ''}

<h3>Route parameters</h3>
${renderKeyValueTable(data['params'], 'No route parameters')}

<h3>Route matching <span class="muted">${VERDICTS.filter((verdict) => counts.has(verdict)).map((verdict, i) => html`${i > 0 ? ', ' : ''}${counts.get(verdict)} ${VERDICT_COUNTS[verdict][counts.get(verdict) === 1 ? 0 : 1]}`)}</span></h3>
${traces.length === 0
  ? html`<p class="empty">No route was tried (a sub-request with its own controller is never routed)</p>`
  : html`<table class="traces">
<thead><tr><th scope="col" class="num">#</th><th scope="col">Route name</th><th scope="col">Path</th><th scope="col">Verdict</th><th scope="col">Reason</th></tr></thead>
<tbody>
${traces.map((trace, i) => {
  const verdict = VERDICTS.find((known) => known === trace['verdict']) ?? 'mismatch';
  return html`<tr class="trace-${verdict}">
<td class="num muted col-index">${i + 1}</td>
<td class="mono">${stringOf(trace['name']) ?? ''}</td>
<td class="mono col-path">${stringOf(trace['path']) ?? ''}</td>
<td class="col-verdict"><span class="verdict verdict-${verdict}">${VERDICT_LABELS[verdict]}</span></td>
<td class="text col-reason">${stringOf(trace['reason']) ?? ''}</td>
</tr>
`;
})}</tbody>
</table>`}`;
}

/** The router menu entry's badge: the matched route's name, or nothing. */
export function routerBadge({ profile }: PanelContext): SafeHtml {
  const data = profile.collectors['router'];
  if (!isRecord(data)) return html``;
  const route = stringOf(data['route']);
  return route !== null ? html`<span class="badge ok mono">${route.length > 18 ? `${route.slice(0, 17)}…` : route}</span>` : html``;
}
