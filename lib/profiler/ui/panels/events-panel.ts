/** The events panel: listeners called in order, listeners not called, events nobody listened to. */
import { html, type SafeHtml } from '../../../errors/index.js';
import { formatDuration } from '../format.js';
import { arrayOf, isRecord, numberOf, renderNoData, stringOf } from '../values.js';
import type { PanelContext } from './panel-context.js';

/** Renders `collectors.events`. */
export function renderEventsPanel({ profile }: PanelContext): SafeHtml {
  const data = profile.collectors['events'];
  if (!isRecord(data)) return html`<h2>Events</h2>${renderNoData('events', data)}`;
  const called = arrayOf(data['called']).filter(isRecord);
  const notCalled = arrayOf(data['notCalled']).filter(isRecord);
  const orphaned = arrayOf(data['orphaned']).filter((event): event is string => typeof event === 'string');

  return html`<h2>Events</h2>
<h3>Called listeners <span class="badge">${called.length}</span></h3>
${called.length === 0
  ? html`<p class="empty">No listener was called</p>`
  : html`<table class="events-called">
<thead><tr><th scope="col" class="num">#</th><th scope="col">Event</th><th scope="col">Listener</th><th scope="col" class="num">Priority</th><th scope="col" class="num">Start</th><th scope="col" class="num">Duration</th></tr></thead>
<tbody>
${called.map((call, i) => {
  const start = numberOf(call['start']);
  const duration = numberOf(call['duration']);
  return html`<tr>
<td class="num muted col-index">${i + 1}</td>
<td class="nowrap mono col-event">${stringOf(call['event']) ?? ''}</td>
<td class="col-listener"><span class="listener">${stringOf(call['listener']) ?? ''}</span>${call['stoppedPropagation'] === true ? html` <span class="stopped" title="This listener stopped the event's propagation: later listeners were not called">stopped propagation</span>` : ''}</td>
<td class="num col-priority">${numberOf(call['priority']) ?? ''}</td>
<td class="num col-start">${start !== null ? formatDuration(start) : ''}</td>
<td class="num col-duration">${duration !== null ? formatDuration(duration) : ''}</td>
</tr>
`;
})}</tbody>
</table>`}

<h3>Not called listeners <span class="badge">${notCalled.length}</span></h3>
${notCalled.length === 0
  ? html`<p class="empty">Every registered listener of the dispatched events was called</p>`
  : html`<table class="events-not-called">
<thead><tr><th scope="col">Event</th><th scope="col">Listener</th><th scope="col" class="num">Priority</th></tr></thead>
<tbody>
${notCalled.map((listener) => html`<tr><td class="nowrap mono col-event">${stringOf(listener['event']) ?? ''}</td><td class="col-listener"><span class="listener">${stringOf(listener['listener']) ?? ''}</span></td><td class="num col-priority">${numberOf(listener['priority']) ?? ''}</td></tr>
`)}</tbody>
</table>`}

<h3>Orphaned events <span class="badge">${orphaned.length}</span></h3>
${orphaned.length === 0
  ? html`<p class="empty">No orphaned events: every dispatched event had a listener</p>`
  : html`<p class="muted">Dispatched with no listener registered.</p><ul class="orphaned">${orphaned.map((event) => html`<li class="mono">${event}</li>`)}</ul>`}`;
}

/** The events menu entry's badge: how many listeners were called. */
export function eventsBadge({ profile }: PanelContext): SafeHtml {
  const data = profile.collectors['events'];
  if (!isRecord(data)) return html``;
  return html`<span class="badge">${arrayOf(data['called']).length}</span>`;
}
