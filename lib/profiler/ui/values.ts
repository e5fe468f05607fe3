/**
 * Rendering of loosely typed collector data. Profiles come from storage and from embedders'
 * collectors, so every reader here tolerates a missing or oddly shaped field instead of throwing.
 */
import { inspect } from 'node:util';
import { isError } from '../../../kernel/is-error.js';
import { elideMiddle, html, renderElided, type SafeHtml } from '../../errors/index.js';
import { isLeftOutData, MAX_COLLECTOR_JSON } from '../profile.js';

export { elideMiddle };

/** Longest JSON shown inline before it is cut: a page must stay bounded. */
const MAX_JSON_LENGTH = 20_000;

/** True for a plain object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value when it is an object, else an empty one. */
export function recordOf(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

/** The value when it is an array, else an empty one. */
export function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** The value when it is a string, else null. */
export function stringOf(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** The value when it is a finite number, else null. */
export function numberOf(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** Pretty JSON of any value; cycles, bigints and functions are shown instead of failing. Cut when huge. */
export function prettyJson(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value, jsonReplacer, 2) ?? String(value);
  } catch {
    text = inspect(value, { depth: 6, breakLength: 100 });
  }
  return text.length > MAX_JSON_LENGTH ? `${text.slice(0, MAX_JSON_LENGTH)}\n… (cut at ${MAX_JSON_LENGTH} characters)` : text;
}

function jsonReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return `${value}n`;
  if (isError(value)) return `${value.name}: ${value.message}`;
  if (typeof value === 'function') return `[Function ${value.name || 'anonymous'}]`;
  if (typeof value === 'symbol') return value.toString();
  return value;
}

/** One value in a table cell: text as text, scalars as code, objects as pretty JSON. */
export function renderValue(value: unknown): SafeHtml {
  if (typeof value === 'string') return html`<span class="text">${value}</span>`;
  if (value === null || value === undefined) return html`<code class="muted">${String(value)}</code>`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return html`<code>${String(value)}</code>`;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) {
    return html`${value.map((item, i) => html`${i > 0 ? html`<br>` : ''}<span class="text">${item}</span>`)}`;
  }
  return renderJson(value);
}

/**
 * Pretty JSON in its box, which scrolls past 420px (see .json): focusable (`tabindex="0"`), so
 * that a keyboard can scroll it too, as WCAG 2.1.1 asks and axe's scrollable-region-focusable checks.
 */
export function renderJson(value: unknown): SafeHtml {
  return html`<pre class="json" tabindex="0">${prettyJson(value)}</pre>`;
}

/** A two-column table of names and values, or a muted line saying it is empty. */
export function renderKeyValueTable(value: unknown, empty: string, options: { keyLabel?: string; valueLabel?: string } = {}): SafeHtml {
  const entries = Object.entries(recordOf(value));
  if (entries.length === 0) return html`<p class="empty">${empty}</p>`;
  return html`<table class="kv">
<thead><tr><th scope="col">${options.keyLabel ?? 'Key'}</th><th scope="col">${options.valueLabel ?? 'Value'}</th></tr></thead>
<tbody>
${entries.map(([key, item]) => html`<tr><th scope="row">${key}</th><td>${renderValue(item)}</td></tr>
`)}</tbody>
</table>`;
}

/**
 * The notice of a panel whose collector's data is not there: "No data" when it recorded nothing for
 * this profile, or the note that took the place of its data (`data`, see isLeftOutData).
 */
export function renderNoData(collector: string, data?: unknown): SafeHtml {
  if (isLeftOutData(data)) {
    return html`<div class="no-data"><p class="empty">${data}</p><p class="muted">The <code>${collector}</code> collector's data was too large to keep: a profile keeps at most ${MAX_COLLECTOR_JSON} characters of JSON of one collector's data.</p></div>`;
  }
  return html`<div class="no-data"><p class="empty">No data</p><p class="muted">The <code>${collector}</code> collector recorded nothing for this request.</p></div>`;
}

/** True for a URL safe to put in an `href` from recorded data: http(s) or a same-origin path. */
export function isSafeLink(url: string): boolean {
  return /^(?:\/(?![\/\\])|https?:\/\/)/i.test(url);
}

/**
 * Most characters of a URL shown in a heading, a results row or a sub-request line: a client can
 * send one of thousands, and printed whole it pushes everything after it out of view.
 */
export const SHOWN_URL_LENGTH = 120;

/**
 * Most sub-requests a profile's summary lists, the first ones: a controller that made 5,000 had
 * each of its pages list them all (and read every one's summary); the rest are counted, and the JSON has them all.
 */
export const SHOWN_CHILDREN = 20;

/** Most characters of an error message shown in a profile's summary: the exception panel shows it whole. */
export const SHOWN_MESSAGE_LENGTH = 300;

/** A URL as text of a few lines at most: a long one cut in its middle, whole in the title of its span. */
export function renderShortUrl(url: string): SafeHtml {
  return renderElided(url, SHOWN_URL_LENGTH);
}
