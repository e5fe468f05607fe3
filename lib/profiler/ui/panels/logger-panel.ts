/** The logger panel: every record of the request, with counts by level and level filters. */
import { html, type SafeHtml } from '../../../errors/index.js';
import { LogLevel } from '../../../log/index.js';
import { formatClockTime, isoTime, shownTimeZone } from '../format.js';
import { arrayOf, isRecord, numberOf, prettyJson, recordOf, renderJson, renderNoData, stringOf } from '../values.js';
import type { PanelContext } from './panel-context.js';

/** The filter groups, most severe first; a record belongs to exactly one. */
const GROUPS = [
  { id: 'error', label: 'Errors' },
  { id: 'warning', label: 'Warnings' },
  { id: 'info', label: 'Info' },
  { id: 'debug', label: 'Debug' },
] as const;
type Group = (typeof GROUPS)[number]['id'];

const LEVEL_BY_NAME: Record<string, number> = LogLevel;

/** The filter group of a record, from its numeric level or else its level name. */
function groupOf(record: Record<string, unknown>): Group {
  const level = numberOf(record['level']) ?? LEVEL_BY_NAME[String(record['levelName']).toUpperCase()] ?? LogLevel.INFO;
  if (level <= LogLevel.ERROR) return 'error';
  if (level === LogLevel.WARNING) return 'warning';
  if (level >= LogLevel.DEBUG) return 'debug';
  return 'info';
}

/** Error and warning counts of `collectors.logger`, or null when it recorded nothing. */
export function logCountsOf(collectors: Record<string, unknown>): { total: number; errors: number; warnings: number } | null {
  const data = collectors['logger'];
  if (!isRecord(data)) return null;
  const logs = arrayOf(data['logs']).filter(isRecord);
  let errors = 0;
  let warnings = 0;
  for (const record of logs) {
    const group = groupOf(record);
    if (group === 'error') errors++;
    else if (group === 'warning') warnings++;
  }
  return {
    total: logs.length,
    errors: numberOf(data['errorCount']) ?? errors,
    warnings: numberOf(data['warningCount']) ?? warnings,
  };
}

/** Renders `collectors.logger`. */
export function renderLoggerPanel({ profile, timeZone }: PanelContext): SafeHtml {
  const data = profile.collectors['logger'];
  if (!isRecord(data)) return html`<h2>Logs</h2>${renderNoData('logger', data)}`;
  const logs = arrayOf(data['logs']).filter(isRecord);
  const omitted = numberOf(data['omitted']) ?? 0;
  const note = omitted > 0 ? html`<p class="empty">${omitted} more ${omitted === 1 ? 'log record is' : 'log records are'} not shown: a profile keeps a request's first 1,000 records, within 1 MB of them.</p>` : '';
  if (logs.length === 0) return html`<h2>Logs</h2>${omitted > 0 ? note : html`<p class="empty">No log messages</p>`}`;

  const levelCounts = countsByLevel(data['counts'], logs);
  const groupCounts = new Map<Group, number>();
  for (const record of logs) groupCounts.set(groupOf(record), (groupCounts.get(groupOf(record)) ?? 0) + 1);

  return html`<h2>Logs <span class="badge">${logs.length}</span></h2>
<ul class="counts" aria-label="Records by level">${levelCounts.map(
    ([name, count]) => html`<li class="count level-${groupOf({ levelName: name })}">${count} ${name}</li>`,
  )}</ul>
<div class="filters" data-log-filters="log-records" hidden role="group" aria-label="Show levels">
<button type="button" data-level="all" aria-pressed="true">All (${logs.length})</button>
${GROUPS.filter((group) => groupCounts.has(group.id)).map(
  (group) => html`<button type="button" data-level="${group.id}" aria-pressed="false">${group.label} (${groupCounts.get(group.id)})</button>`,
)}
</div>
<table class="logs" id="log-records">
<thead><tr><th scope="col">Time <span class="zone">(${shownTimeZone(timeZone)})</span></th><th scope="col">Level</th><th scope="col">Channel</th><th scope="col">Message</th></tr></thead>
<tbody>
${logs.map((record) => renderRecord(record, timeZone))}</tbody>
</table>
${note}`;
}

function renderRecord(record: Record<string, unknown>, timeZone: string | undefined): SafeHtml {
  const time = numberOf(record['time']);
  const context = recordOf(record['context']);
  const keys = Object.keys(context).length;
  return html`<tr class="level-${groupOf(record)}">
<td class="nowrap mono">${time !== null ? html`<time datetime="${isoTime(time)}" title="${isoTime(time)}">${formatClockTime(time, timeZone)}</time>` : ''}</td>
<td class="level">${stringOf(record['levelName']) ?? String(record['level'] ?? '')}</td>
<td class="nowrap">${stringOf(record['channel']) ?? ''}</td>
<td class="col-message"><div class="message">${stringOf(record['message']) ?? prettyJson(record['message'])}</div>${keys > 0
    ? html`<details><summary>Context (${keys === 1 ? '1 key' : `${keys} keys`})</summary>${renderJson(context)}</details>`
    : typeof record['context'] === 'string'
      ? html`<p class="muted">Context: ${record['context']}</p>`
      : ''}</td>
</tr>
`;
}

/** `[levelName, count]`, most severe first: from the collector's counts, else counted from the records. */
function countsByLevel(counts: unknown, logs: Record<string, unknown>[]): Array<[string, number]> {
  const result = new Map<string, number>();
  if (isRecord(counts) && Object.keys(counts).length > 0) {
    for (const [name, count] of Object.entries(counts)) if (typeof count === 'number' && count > 0) result.set(name, count);
  } else {
    for (const record of logs) {
      const name = stringOf(record['levelName']) ?? 'UNKNOWN';
      result.set(name, (result.get(name) ?? 0) + 1);
    }
  }
  return [...result].sort(([a], [b]) => (LEVEL_BY_NAME[a.toUpperCase()] ?? 99) - (LEVEL_BY_NAME[b.toUpperCase()] ?? 99));
}

/** The logger menu entry's badges: errors and warnings, or the record count when there are neither. */
export function loggerBadge({ profile }: PanelContext): SafeHtml {
  const counts = logCountsOf(profile.collectors);
  if (counts === null) return html``;
  if (counts.errors === 0 && counts.warnings === 0) return counts.total > 0 ? html`<span class="badge">${counts.total}</span>` : html``;
  return html`<span class="badges">${counts.errors > 0 ? html`<span class="badge error" title="Errors">${counts.errors}</span>` : ''}${counts.warnings > 0 ? html`<span class="badge warning" title="Warnings">${counts.warnings}</span>` : ''}</span>`;
}
