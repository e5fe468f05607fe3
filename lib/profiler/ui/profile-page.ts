/** The page of one profile: a summary of the request, the panel menu, the search form and the selected panel. */
import { html, renderElided, statusText, type FileLinker, type SafeHtml } from '../../errors/index.js';
import { isLeftOutData, type Profile, type ProfileSummary } from '../profile.js';
import { formatProfileTime, isoTime, shownTimeZone, statusClass } from './format.js';
import { renderDocument, renderSearchForm, renderTopBar } from './layout.js';
import { exceptionBadge, exceptionsOf, renderExceptionPanel } from './panels/exception-panel.js';
import { eventsBadge, renderEventsPanel } from './panels/events-panel.js';
import { renderGenericPanel } from './panels/generic-panel.js';
import { loggerBadge, renderLoggerPanel } from './panels/logger-panel.js';
import type { PanelContext } from './panels/panel-context.js';
import { renderRequestPanel, requestBadge } from './panels/request-panel.js';
import { renderRouterPanel, routerBadge } from './panels/router-panel.js';
import { renderTimePanel, timeBadge, timelineStyles } from './panels/time-panel.js';
import type { ProfilerUrls } from './urls.js';
import { elideMiddle, isSafeLink, recordOf, renderJson, renderShortUrl, SHOWN_CHILDREN, SHOWN_MESSAGE_LENGTH, SHOWN_URL_LENGTH, stringOf } from './values.js';

/** What `renderProfilePage` shows. */
export interface ProfilePageInput {
  profile: Profile;
  /** The panel asked for; unknown names show the request panel. */
  panel: string;
  /** The summary of the profile this one is a sub-request of, when it could be loaded. */
  parent: ProfileSummary | null;
  /** Summaries of the sub-request profiles that could be loaded (tokens in `profile.children` without one are still linked). */
  children: ProfileSummary[];
  urls: ProfilerUrls;
  /** IANA time zone for times; default the server's local time. */
  timeZone?: string;
  /** The response's CSP nonce (see profilerPagePolicy). */
  nonce?: string;
  /** Links stack frames to the developer's editor (see createFileLinker). */
  fileLink?: FileLinker | null;
}

interface PanelDefinition {
  name: string;
  label: string;
  render(context: PanelContext): SafeHtml;
  badge(context: PanelContext): SafeHtml;
  /** CSS rules the panel needs in the page's stylesheet (it has no `style=` attribute). */
  styles?(context: PanelContext): string;
}

const PANELS: readonly PanelDefinition[] = [
  { name: 'request', label: 'Request / Response', render: renderRequestPanel, badge: requestBadge },
  { name: 'exception', label: 'Exception', render: renderExceptionPanel, badge: exceptionBadge },
  { name: 'logger', label: 'Logs', render: renderLoggerPanel, badge: loggerBadge },
  { name: 'events', label: 'Events', render: renderEventsPanel, badge: eventsBadge },
  { name: 'time', label: 'Performance', render: renderTimePanel, badge: timeBadge, styles: timelineStyles },
  { name: 'router', label: 'Routing', render: renderRouterPanel, badge: routerBadge },
];

/** The built-in panels, in menu order. */
export const PROFILER_PANELS: readonly string[] = PANELS.map((panel) => panel.name);

/** Collectors shown by a built-in panel (memory appears in the time panel); any other gets a generic panel. */
const BUILT_IN_COLLECTORS = new Set([...PROFILER_PANELS, 'memory']);

/** The panel to show when none is asked for: exception when the request had one (or its data was too large to keep), else request. */
export function defaultPanel(profile: Profile): string {
  const collectors = recordOf(profile.collectors);
  const errors = exceptionsOf(collectors);
  return (errors !== null && errors.length > 0) || isLeftOutData(collectors['exception']) ? 'exception' : 'request';
}

/** Names of the collectors in a profile that have no built-in panel (embedders' collectors), sorted. */
export function extraPanels(profile: Profile): string[] {
  return Object.keys(recordOf(profile.collectors))
    .filter((name) => !BUILT_IN_COLLECTORS.has(name))
    .sort();
}

/** Renders the complete HTML page of one profile. */
export function renderProfilePage(input: ProfilePageInput): string {
  const { profile, urls } = input;
  const context: PanelContext = { profile: { ...profile, collectors: recordOf(profile.collectors) }, urls, timeZone: input.timeZone, fileLink: input.fileLink ?? null };
  const extras = extraPanels(context.profile);
  const builtIn = PANELS.find((panel) => panel.name === input.panel);
  const selected = builtIn?.name ?? (extras.includes(input.panel) ? input.panel : 'request');
  const definition = PANELS.find((panel) => panel.name === selected);
  const content = safely(context, selected, () => (definition !== undefined ? definition.render(context) : renderGenericPanel(context, selected)));
  const css = stylesOf(definition, context);

  // The first thing a keyboard reaches: past the top bar, the menu and the search form to the panel.
  const body = html`<a class="skip-link" href="#panel-${encodeURIComponent(selected)}">Skip to panel</a>
${renderTopBar(urls)}
${renderSummary(input, context)}
<div class="layout">
<aside class="sidebar">
<nav aria-label="Panels"><ul class="menu">
${PANELS.map((panel) => renderMenuItem(urls, profile.token, panel.name, panel.label, safely(context, null, () => panel.badge(context)), selected))}
${extras.length > 0 ? html`<li class="extra-heading">Other collectors</li>${extras.map((name) => renderMenuItem(urls, profile.token, name, name, html``, selected))}` : ''}
</ul></nav>
${renderSearchForm(urls, {}, input.timeZone)}
</aside>
<main class="panel" id="panel-${selected}">
${content}
</main>
</div>`;
  return renderDocument(`${profile.method} ${elideMiddle(profile.url, SHOWN_URL_LENGTH)} (${profile.status}) · ${profile.token} · Profiler`, body, { nonce: input.nonce, css });
}

/** The panel's CSS rules; none when its data cannot be read (its content shows the notice then). */
function stylesOf(definition: PanelDefinition | undefined, context: PanelContext): string {
  try {
    return definition?.styles?.(context) ?? '';
  } catch {
    return '';
  }
}

function renderMenuItem(urls: ProfilerUrls, token: string, name: string, label: string, badge: SafeHtml, selected: string): SafeHtml {
  return html`<li><a href="${urls.panel(token, name)}"${name === selected ? html` aria-current="page"` : ''}><span>${label}</span>${badge}</a></li>
`;
}

function renderSummary(input: ProfilePageInput, context: PanelContext): SafeHtml {
  const { profile, urls, parent } = input;
  const linkable = (profile.method === 'GET' || profile.method === 'HEAD') && isSafeLink(profile.url);
  const errors = exceptionsOf(context.profile.collectors) ?? [];
  const outermost = errors[0];
  const known = new Map(input.children.map((child) => [child.token, child]));
  const childTokens = [...new Set([...(Array.isArray(profile.children) ? profile.children : []), ...known.keys()])];

  return html`<section class="summary" aria-label="Request summary"><div class="inner">
<h1><span class="status ${statusClass(profile.status)}">${profile.status}</span> <span class="method">${profile.method}</span> ${linkable ? html`<a class="url" href="${profile.url}">${renderShortUrl(profile.url)}</a>` : html`<span class="url">${renderShortUrl(profile.url)}</span>`}</h1>
<dl class="facts">
<div><dt>Status</dt><dd>${profile.status} ${statusText(profile.status)}</dd></div>
<div><dt>IP</dt><dd>${profile.ip}</dd></div>
<div><dt>Profiled on</dt><dd><time datetime="${isoTime(profile.time)}">${formatProfileTime(profile.time, input.timeZone)}</time> <span class="zone">${shownTimeZone(input.timeZone)}</span></dd></div>
<div><dt>Token</dt><dd class="mono">${profile.token}</dd></div>
</dl>
${outermost !== undefined
  ? html`<p class="relations"><a class="exception-link" href="${urls.panel(profile.token, 'exception')}">${stringOf(outermost['class']) ?? 'Error'}</a> <span class="text">${renderElided(stringOf(outermost['message']) ?? '', SHOWN_MESSAGE_LENGTH)}</span></p>`
  : ''}
${profile.parent !== null || childTokens.length > 0
  ? html`<div class="relations">${profile.parent !== null
      ? html`<span>Sub-request of ${renderProfileLink(urls, profile.parent, parent)}</span>`
      : ''}${childTokens.length > 0
      ? html`<span>Sub-requests: <ul>${childTokens.slice(0, SHOWN_CHILDREN).map((token) => html`<li>${renderProfileLink(urls, token, known.get(token) ?? null)}</li>`)}${childTokens.length > SHOWN_CHILDREN
          ? html`<li class="muted">… ${childTokens.length - SHOWN_CHILDREN} more ${childTokens.length - SHOWN_CHILDREN === 1 ? 'sub-request' : 'sub-requests'} not shown</li>`
          : ''}</ul></span>`
      : ''}</div>`
  : ''}
</div></section>`;
}

function renderProfileLink(urls: ProfilerUrls, token: string, summary: ProfileSummary | null): SafeHtml {
  return html`<a class="mono" href="${urls.panel(token)}">${token}</a>${summary !== null
    ? html` <span class="status ${statusClass(summary.status)}">${summary.status}</span> <span class="muted">${summary.method} ${renderShortUrl(summary.url)}</span>`
    : ''}`;
}

/**
 * Runs a renderer; data it cannot render (an embedder's odd profile) shows as a notice and the raw
 * JSON instead of failing the whole page.
 */
function safely(context: PanelContext, collector: string | null, render: () => SafeHtml): SafeHtml {
  try {
    return render();
  } catch (error) {
    if (collector === null) return html``;
    const reason = error instanceof Error ? error.message : String(error);
    return html`<p class="notice">This panel could not be rendered (${reason}); its recorded data follows.</p>
${renderJson(context.profile.collectors[collector] ?? null)}`;
  }
}
