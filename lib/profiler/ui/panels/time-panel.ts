/**
 * The time panel: the request's timeline as a waterfall, bars scaled to its longest period. The total
 * duration runs until the response was ready; kernel.terminate comes after it, so a marker shows where.
 */
import { html, type SafeHtml } from '../../../errors/index.js';
import { formatBytes, formatClockTime, formatDuration, formatProfileTime, shownTimeZone } from '../format.js';
import { arrayOf, isRecord, numberOf, renderNoData, stringOf } from '../values.js';
import { isLeftOutData } from '../../profile.js';
import type { PanelContext } from './panel-context.js';

const CATEGORIES = ['event', 'listener', 'controller', 'section'] as const;
const CATEGORY_LABELS: Record<(typeof CATEGORIES)[number], string> = {
  event: 'Event dispatch',
  listener: 'Listener',
  controller: 'Controller',
  section: 'Other',
};

/** The category's CSS class; unknown categories are drawn as "section". */
function categoryClass(category: string | null): string {
  return `cat-${CATEGORIES.find((known) => known === category) ?? 'section'}`;
}

/** A CSS percentage with bounded precision. */
function percent(value: number): string {
  return `${Math.min(100, Math.max(0, value)).toFixed(3)}%`;
}

interface Timeline {
  periods: Array<{ name: string; category: string | null; start: number; duration: number }>;
  duration: number;
  startTime: number | null;
  /** The length in milliseconds the track's full width stands for. */
  scale: number;
}

/** The timeline of `collectors.time`, or null when there is none. */
function timelineOf(data: unknown): Timeline | null {
  if (!isRecord(data)) return null;
  const periods = arrayOf(data['periods'])
    .filter(isRecord)
    .map((period) => ({
      name: stringOf(period['name']) ?? '',
      category: stringOf(period['category']),
      start: Math.max(0, numberOf(period['start']) ?? 0),
      duration: Math.max(0, numberOf(period['duration']) ?? 0),
    }));
  const duration = numberOf(data['duration']) ?? 0;
  // Scale to whatever is longest, so a period that ends after the response was ready still fits.
  const scale = Math.max(duration, ...periods.map((period) => period.start + period.duration), 0.001);
  return { periods, duration, startTime: numberOf(data['startTime']), scale };
}

/**
 * The waterfall bars' positions, as CSS rules for the page's `<style>` (an inline `style=`
 * attribute would need 'unsafe-inline' in the page's Content-Security-Policy). Made of indexes and
 * percentages only, never of text from the profile.
 */
export function timelineStyles({ profile }: PanelContext): string {
  const timeline = timelineOf(profile.collectors['time']);
  if (timeline === null) return '';
  const { periods, duration, scale } = timeline;
  // Where the response was ready, for the marker line through the tracks (see .wf-track::after).
  const ready = `\n.waterfall { --ready: ${percent((duration / scale) * 100)}; }`;
  return ready + periods.map((period, i) => `\n#wf-bar-${i} { left: ${percent((period.start / scale) * 100)}; width: ${percent((period.duration / scale) * 100)}; }`).join('');
}

/** Renders `collectors.time` (and the memory figures of `collectors.memory` when present). */
export function renderTimePanel({ profile, timeZone }: PanelContext): SafeHtml {
  const timeline = timelineOf(profile.collectors['time']);
  if (timeline === null) return html`<h2>Performance</h2>${renderMemory(profile.collectors['memory'])}${renderNoData('time', profile.collectors['time'])}`;
  const { periods, duration, scale } = timeline;
  const startTime = timeline.startTime ?? profile.time;
  const present = CATEGORIES.filter((category) => periods.some((period) => categoryClass(period.category) === `cat-${category}`));
  // Placed at 0, 25, 50, 75 and 100% by the page's stylesheet (.wf-axis .tick).
  const ticks = [0, 0.25, 0.5, 0.75, 1];

  return html`<h2>Performance</h2>
<div class="metrics">
<div class="metric"><span class="value">${formatDuration(duration)}</span><span class="label">Total duration</span></div>
<div class="metric"><span class="value">${formatProfileTime(startTime, timeZone)}<span class="muted">${formatClockTime(startTime, timeZone).slice(8)}</span></span><span class="label">Started at, ${shownTimeZone(timeZone)} time</span></div>
<div class="metric"><span class="value">${periods.length}</span><span class="label">Timeline periods</span></div>
${renderMemoryMetrics(profile.collectors['memory'])}
</div>
<h3>Timeline</h3>
${periods.length === 0
  ? isLeftOutData(profile.collectors['events']) ? renderNoData('events', profile.collectors['events']) : html`<p class="empty">No timeline periods were recorded</p>`
  : html`<ul class="legend">${present.map((category) => html`<li class="cat-${category}">${CATEGORY_LABELS[category]}</li>`)}<li class="ready-key">Response ready: the total duration ends there; what follows (kernel.terminate) runs after the response</li></ul>
<div class="waterfall" role="table" aria-label="Timeline">
<div class="wf-axis" role="row"><span role="columnheader">Period</span><div class="ticks" aria-hidden="true">${ticks.map(
      (tick) => html`<span class="tick">${formatDuration(scale * tick)}</span>`,
    )}</div><span role="columnheader" class="wf-duration">Duration</span></div>
<div class="wf-marker" aria-hidden="true"><span></span><div class="when"><span class="wf-ready${duration / scale > 0.5 ? ' late' : ''}">response ready, ${formatDuration(duration)}</span></div><span></span></div>
${periods.map((period, i) => {
  const label = `${period.name} (${period.category ?? 'unknown'}): starts at ${formatDuration(period.start)}, lasts ${formatDuration(period.duration)}`;
  return html`<div class="wf-row ${categoryClass(period.category)}" role="row" title="${label}">
<span class="wf-name" role="cell">${period.name}</span>
<div class="wf-track" role="cell"><span class="wf-bar" id="wf-bar-${i}"></span></div>
<span class="wf-duration" role="cell">${formatDuration(period.duration)}</span>
</div>
`;
})}</div>`}`;
}

function renderMemoryMetrics(memory: unknown): SafeHtml {
  if (!isRecord(memory)) return html``;
  const heapUsed = numberOf(memory['heapUsed']);
  const heapDelta = numberOf(memory['heapDelta']);
  const rss = numberOf(memory['rss']);
  return html`${heapUsed !== null ? html`<div class="metric"><span class="value">${formatBytes(heapUsed)}</span><span class="label">Heap used</span></div>` : ''}${heapDelta !== null ? html`<div class="metric"><span class="value">${heapDelta > 0 ? '+' : ''}${formatBytes(heapDelta)}</span><span class="label">Heap growth during the request</span></div>` : ''}${rss !== null ? html`<div class="metric"><span class="value">${formatBytes(rss)}</span><span class="label">Resident memory</span></div>` : ''}`;
}

function renderMemory(memory: unknown): SafeHtml {
  return isRecord(memory) ? html`<div class="metrics">${renderMemoryMetrics(memory)}</div>` : html``;
}

/** The time menu entry's badge: the total duration. */
export function timeBadge({ profile }: PanelContext): SafeHtml {
  const data = profile.collectors['time'];
  const duration = isRecord(data) ? numberOf(data['duration']) : null;
  return duration !== null ? html`<span class="badge">${formatDuration(duration)}</span>` : html``;
}
