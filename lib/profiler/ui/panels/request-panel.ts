/** The request panel: what came in (headers, query, cookies, body, attributes, route, session) and what went out. */
import { html, type SafeHtml } from '../../../errors/index.js';
import { statusClass } from '../format.js';
import { isRecord, numberOf, recordOf, renderKeyValueTable, renderNoData, renderValue, stringOf } from '../values.js';
import type { PanelContext } from './panel-context.js';

/** Renders `collectors.request`. */
export function renderRequestPanel({ profile }: PanelContext): SafeHtml {
  const data = profile.collectors['request'];
  if (!isRecord(data)) return html`<h2>Request</h2>${renderNoData('request', data)}`;
  const status = numberOf(data['statusCode']) ?? profile.status;
  const statusText = stringOf(data['statusText']) ?? '';
  const body = stringOf(data['body']);
  const session = data['session'];
  const controller = stringOf(data['controller']);
  const route = stringOf(data['route']);
  const requestType = stringOf(data['requestType']);
  const attributesOmitted = numberOf(data['attributesOmitted']) ?? 0;

  return html`<h2>Request</h2>
<div class="metrics">
<div class="metric"><span class="value"><span class="status ${statusClass(status)}">${status}</span> ${statusText}</span><span class="label">Response status</span></div>
<div class="metric"><span class="value mono">${controller ?? 'none'}</span><span class="label">Controller</span></div>
<div class="metric"><span class="value mono">${route ?? 'none'}</span><span class="label">Route</span></div>
${requestType === 'sub' ? html`<div class="metric"><span class="value">Sub-request</span><span class="label">Request type</span></div>` : ''}
</div>
<table class="kv">
<tbody>
<tr><th scope="row">Method</th><td>${renderValue(data['method'] ?? profile.method)}</td></tr>
<tr><th scope="row">URL</th><td>${renderValue(data['url'] ?? profile.url)}</td></tr>
<tr><th scope="row">Path</th><td>${renderValue(data['path'] ?? '')}</td></tr>
<tr><th scope="row">Client IP</th><td>${renderValue(data['clientIp'] ?? profile.ip)}</td></tr>
<tr><th scope="row">Content type</th><td>${renderValue(data['contentType'] ?? null)}</td></tr>
</tbody>
</table>

<h3>Route parameters</h3>
${renderKeyValueTable(data['routeParams'], 'No route parameters')}

<h3>Query parameters</h3>
${renderKeyValueTable(data['query'], 'No query parameters')}

<h3>Request body</h3>
${body !== null && body !== ''
  ? html`${data['bodyTruncated'] === true ? html`<p class="notice">The body is truncated: only its beginning was kept.</p>` : ''}<pre class="body-preview" tabindex="0">${body}</pre>`
  : html`<p class="empty">${data['bodyTruncated'] === true ? 'The body was too large to keep' : unreadBody(recordOf(data['requestHeaders'])) ?? 'No body'}</p>`}

<h3>Cookies</h3>
${renderKeyValueTable(data['cookies'], 'No cookies')}

<h3>Request headers</h3>
${renderKeyValueTable(data['requestHeaders'], 'No headers', { keyLabel: 'Header' })}

<h3>Request attributes</h3>
${renderKeyValueTable(data['attributes'], 'No attributes')}${attributesOmitted > 0 ? html`<p class="empty">${attributesOmitted} more ${attributesOmitted === 1 ? 'attribute is' : 'attributes are'} not shown: a profile keeps 1 MiB of a request's attributes.</p>` : ''}

<h3>Session</h3>
${session === null || session === undefined ? html`<p class="empty">No session was used</p>` : renderKeyValueTable(recordOf(session), 'The session is empty')}

<h2>Response</h2>
<p><span class="status ${statusClass(status)}">${status}</span> ${statusText}</p>
<h3>Response headers</h3>
${renderKeyValueTable(data['responseHeaders'], 'No headers', { keyLabel: 'Header' })}`;
}

/** The request menu entry's badge: the response status. */
export function requestBadge({ profile }: PanelContext): SafeHtml {
  return html`<span class="status ${statusClass(profile.status)}">${profile.status}</span>`;
}

/**
 * What to say of a body the request declared but the profile has none of: the profiler keeps the
 * body only when the application read it (it never reads one itself), and "No body" would say
 * the client sent none. Null when the request declared no body.
 */
function unreadBody(headers: Record<string, unknown>): string | null {
  const length = Number(stringOf(headers['content-length']) ?? 0);
  if (length > 0) return `The application did not read the body (${length} ${length === 1 ? 'byte' : 'bytes'}), so the profile has none of it`;
  if (headers['transfer-encoding'] !== undefined) return 'The application did not read the body (sent in chunks), so the profile has none of it';
  return null;
}
