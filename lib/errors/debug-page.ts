/**
 * The debug error page (debug mode only): the error chain with stack frames and source excerpts,
 * the request's logs, and the raw stack traces. Like Symfony's exception_full page, with no external assets.
 */
import { isAbsolute, relative, sep } from 'node:path';
import { inspect } from 'node:util';
import { errorShape } from '../../kernel/error-fields.js';
import { isError } from '../../kernel/is-error.js';
import { LogLevel, type LogRecord } from '../log/log-record.js';
import { nonceAttribute } from './csp-nonce.js';
import type { FileLinker } from './file-link.js';
import type { FlatError } from './flatten-error.js';
import { elideMiddle, html, renderElided, unsafeRaw, type SafeHtml } from './html.js';
import { localTimeZoneName } from './local-time-zone.js';
import { EXCERPT_LINES, excerptReader, renderSourceExcerpt } from './source-excerpt.js';
import type { StackFrame } from './stack-frames.js';
import { statusText } from './status-text.js';

/** What the debug page shows. */
export interface DebugPageInput {
  /** The cause chain from `flattenError`, outermost first. */
  errors: FlatError[];
  /**
   * When the error escaped the kernel, thrown by a `kernel.exception` listener: the cause chain of
   * the error that listener was handling (see HttpKernel.handledErrorOf), shown after the others.
   */
  handled?: FlatError[];
  /** Log records of the failed request, oldest first. */
  logs: LogRecord[];
  /** Records it wrote past the most a request keeps (DebugLogBuffer.droppedCount): counted in the note of those not shown. Default 0. */
  droppedLogs?: number;
  request: { method: string; uri: string };
  /** Status of the response the page is sent with. */
  status: number;
  /** Link to this request's profile; relative or http(s) only. */
  profilerUrl?: string | null;
  /** Default `UTF-8`. */
  charset?: string;
  /** Source lines shown either side of a frame's line; default 5. */
  excerptLines?: number;
  /** The CSP nonce of the response (see debugPagePolicy); the page's `<style>` carries it. */
  nonce?: string;
  /** Links each frame's file to the developer's editor (see createFileLinker); none by default. */
  fileLink?: FileLinker | null;
}

/**
 * The Content-Security-Policy the debug page is sent with. The page runs no script and loads
 * nothing but its own `<style>` (by nonce) and its empty `data:` icon (declared so that a browser
 * does not ask for `/favicon.ico`, whose 404 would be one more profile); `connect-src 'self'` is
 * for the debug toolbar, which the toolbar listener adds before `</body>` (with its hashes in this
 * policy) and which fetches its bar from this origin.
 */
export function debugPagePolicy(nonce: string): string {
  return `default-src 'none'; style-src 'nonce-${nonce}'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;
}

/** Log messages and contexts longer than this are cut: the page must stay readable and bounded. */
const MAX_CONTEXT_LENGTH = 5000;
/** Items of an array in a log context walked; the rest are counted (the page shows MAX_CONTEXT_LENGTH characters of it). */
const MAX_CONTEXT_ITEMS = 100;
/** Characters of log messages and contexts shown in all; the records past it are counted, not shown. */
const LOGS_BUDGET = 1_000_000;

/**
 * Most characters of the message and of the URL in the page's header: a client can send a URL of
 * thousands, which a 404's message repeats, and printed whole they push the stack out of view.
 * The first error's card shows the message whole, and each is whole in its span's title.
 */
const SHOWN_MESSAGE_LENGTH = 300;
const SHOWN_URI_LENGTH = 120;
/** Most characters of the message in the page's `<title>` and its HTML comments: a tab or a history entry shows little more. */
const TITLE_MESSAGE_LENGTH = 150;

/** Renders the complete debug error page as an HTML5 document. */
export function renderDebugPage(input: DebugPageInput): string {
  const errors = input.errors.length > 0 ? input.errors : [placeholderError(input.status)];
  const outermost = errors[0]!;
  const status = input.status;
  const reason = statusText(status);
  const message = outermost.message !== '' ? outermost.message : reason;
  const summary = `${elideMiddle(message, TITLE_MESSAGE_LENGTH)} (${status} ${reason})`;
  const around = input.excerptLines ?? EXCERPT_LINES;
  const cwd = process.cwd();
  const profilerUrl = isSafeLink(input.profilerUrl) ? input.profilerUrl : null;
  const handled = input.handled ?? [];
  const view: FrameView = { cwd, around, fileLink: input.fileLink ?? null };

  const page = html`<!-- ${summary} -->
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="${input.charset ?? 'UTF-8'}">
<meta name="robots" content="noindex,nofollow">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${summary}</title>
<link rel="icon" href="data:,">
<style${nonceAttribute(input.nonce)}>${unsafeRaw(STYLE)}</style>
</head>
<body>
<header class="summary ${status >= 500 ? 'status-5xx' : 'status-4xx'}">
<div class="container">
<p class="chain">${errors.map((error, i) => html`${i > 0 ? html` <span class="arrow" aria-hidden="true">←</span><span class="visually-hidden">caused by</span> ` : ''}<a href="#error-${i + 1}">${error.class}</a>`)}</p>
<p class="http">HTTP ${status} <small>${reason}</small></p>
<h1 class="message">${renderElided(message, SHOWN_MESSAGE_LENGTH)}</h1>
<p class="request"><span class="method">${input.request.method}</span> <span class="uri">${renderElided(input.request.uri, SHOWN_URI_LENGTH)}</span></p>
${profilerUrl !== null ? html`<p class="links"><a href="${profilerUrl}">View in profiler</a></p>` : ''}
</div>
</header>
<main class="container">
<section id="errors">
<h2>Exceptions <span class="badge">${errors.length}</span></h2>
${errors.map((error, i) => renderError(error, i, errors.length, view, 'error'))}${renderOmittedErrors(errors)}
</section>
${handled.length === 0
  ? ''
  : html`<section id="handled">
<h2>Thrown while handling <span class="badge">${handled.length}</span></h2>
<p class="empty">A <code>kernel.exception</code> listener threw the error above while it handled this one, which no later listener saw.</p>
${handled.map((error, i) => renderError(error, i, handled.length, view, 'handled'))}${renderOmittedErrors(handled)}
</section>
`}${renderLogs(input.logs, input.droppedLogs ?? 0)}
<section id="plain-trace">
<h2>Stack Trace (Plain Text)</h2>
${errors.map((error, i) => html`<h3>[${i + 1}/${errors.length}] ${error.class}</h3>
<pre class="plain" tabindex="0">${plainStack(error)}</pre>
`)}${handled.map((error, i) => html`<h3>[${i + 1}/${handled.length}] ${error.class} (thrown while handling)</h3>
<pre class="plain" tabindex="0">${plainStack(error)}</pre>
`)}
</section>
</main>
</body>
</html>
<!-- ${summary} -->
`;
  return page.toString();
}

/** How frames are shown: paths relative to `cwd`, `around` lines of source either side, editor links. */
interface FrameView {
  cwd: string;
  around: number;
  fileLink: FileLinker | null;
}

function plainStack(error: FlatError): string {
  return error.stack !== '' ? error.stack : `${error.class}: ${error.message}`;
}

function renderError(error: FlatError, index: number, count: number, view: FrameView, idPrefix: string): SafeHtml {
  const readExcerpt = excerptReader(view.around);
  const items: SafeHtml[] = [];
  let internalRun: SafeHtml[] = [];
  const flushInternal = (): void => {
    if (internalRun.length === 0) return;
    const label = internalRun.length === 1 ? '1 internal frame' : `${internalRun.length} internal frames`;
    items.push(html`<li class="frames-internal"><details><summary>${label}</summary><ol>${internalRun}</ol></details></li>
`);
    internalRun = [];
  };
  for (const frame of error.frames) {
    if (frame.internal) {
      internalRun.push(renderFrame(frame, view, null));
      continue;
    }
    flushInternal();
    const source = readExcerpt(frame.file, frame.line);
    items.push(renderFrame(frame, view, source === null ? null : renderSourceExcerpt(source)));
  }
  flushInternal();

  const headers = Object.entries(error.headers);
  return html`<article class="error" id="${idPrefix}-${index + 1}">
<h3><span class="counter">Exceptions ${index + 1}/${count}</span> <span class="class">${error.class}</span></h3>
<p class="message">${error.message}</p>
${error.status !== null || error.code !== undefined || headers.length > 0
  ? html`<dl class="meta">${error.status !== null ? html`<dt>Status</dt><dd>${error.status} ${error.statusText ?? ''}</dd>` : ''}${error.code !== undefined ? html`<dt>Code</dt><dd><code>${error.code}</code></dd>` : ''}${headers.length > 0 ? html`<dt>Headers</dt><dd>${headers.map(([name, value]) => html`<code>${name}: ${value}</code> `)}</dd>` : ''}</dl>
`
  : ''}${items.length > 0 ? html`<ol class="frames">${items}</ol>` : html`<p class="empty">No stack frames</p>`}
</article>
`;
}

function renderFrame(frame: StackFrame, view: FrameView, excerpt: SafeHtml | null): SafeHtml {
  const link = frame.file !== null && view.fileLink !== null ? view.fileLink(frame.file, frame.line) : null;
  const shown = frame.file !== null ? displayPath(frame.file, view.cwd) : '';
  const where =
    frame.file !== null
      ? html`${link !== null ? html`<a class="file" href="${link}" title="Open in your editor">${shown}</a>` : html`<span class="file">${shown}</span>`}${frame.line !== null ? html` line <span class="line-number">${frame.line}</span>` : ''}${frame.column !== null ? html`<span class="column">:${frame.column}</span>` : ''}`
      : html`<span class="file">${frame.native ? 'native code' : 'unknown location'}</span>`;
  return html`<li class="${frame.internal ? 'frame internal' : 'frame'}">
<div class="frame-head"><span class="function">${frame.function ?? '(anonymous)'}</span> <span class="location">in ${where}</span></div>
${excerpt}
</li>
`;
}

/** The note of a chain cut at the errors flattenError keeps (a cause chain 1,000 deep, an AggregateError of 5,000). */
function renderOmittedErrors(errors: FlatError[]): SafeHtml | '' {
  const omitted = errors.at(-1)?.omitted ?? 0;
  return omitted > 0 ? html`<p class="empty">${omitted} more ${omitted === 1 ? 'error of the chain is' : 'errors of the chain are'} not shown: a page shows its first ${errors.length}.</p>
` : '';
}

function renderLogs(logs: LogRecord[], dropped: number): SafeHtml {
  if (logs.length === 0) {
    return html`<section id="logs">
<h2>Logs</h2>
<p class="empty">No log messages</p>
</section>
`;
  }
  const rows: SafeHtml[] = [];
  let spent = 0;
  for (const record of logs) {
    if (spent >= LOGS_BUDGET) break;
    const message = cutText(record.message);
    const context = formatContext(record.context);
    spent += message.length + (context?.length ?? 0);
    rows.push(html`<tr class="level-${levelClass(record.level)}">
<td class="time">${formatTime(record.time)}</td>
<td class="level">${record.levelName}</td>
<td class="channel">${record.channel}</td>
<td class="log-message">${message}${context !== null ? html`<pre class="context">${context}</pre>` : ''}</td>
</tr>
`);
  }
  const hidden = logs.length - rows.length + dropped;
  return html`<section id="logs">
<h2>Logs <span class="badge">${logs.length}</span> ${levelCounts(logs).map(([name, n]) => html`<span class="count level-${levelClass(namedLevel(name))}">${n} ${name}</span> `)}</h2>
<table class="logs">
<thead><tr><th>Time <span class="zone">(${localTimeZoneName()})</span></th><th>Level</th><th>Channel</th><th>Message</th></tr></thead>
<tbody>
${rows}${hidden > 0 ? html`<tr class="more"><td colspan="4" class="empty">${hidden} more ${hidden === 1 ? 'log record is' : 'log records are'} not shown: the page holds a request's first 1,000 records, within ${LOGS_BUDGET / 1_000_000} MB of them.</td></tr>
` : ''}</tbody>
</table>
</section>
`;
}

function cutText(text: string): string {
  return text.length > MAX_CONTEXT_LENGTH ? `${text.slice(0, MAX_CONTEXT_LENGTH)}…` : text;
}

/** Counts per level name, most severe first. */
function levelCounts(logs: LogRecord[]): Array<[keyof typeof LogLevel, number]> {
  const counts = new Map<keyof typeof LogLevel, number>();
  for (const record of logs) counts.set(record.levelName, (counts.get(record.levelName) ?? 0) + 1);
  return [...counts].sort(([a], [b]) => (namedLevel(a) ?? 99) - (namedLevel(b) ?? 99));
}

// Own names only: another producer's record may name its level anything (`constructor` is Object's function, and sorted as NaN).
function namedLevel(name: string): number | undefined {
  return Object.hasOwn(LogLevel, name) ? LogLevel[name as keyof typeof LogLevel] : undefined;
}

function levelClass(level: number | undefined): string {
  if (level === undefined) return 'info';
  if (level <= LogLevel.ERROR) return 'error';
  if (level === LogLevel.WARNING) return 'warning';
  if (level === LogLevel.DEBUG) return 'debug';
  return 'info';
}

/** `HH:MM:SS.mmm` in local time, with the full ISO instant in the attribute and tooltip. */
function formatTime(time: number): SafeHtml {
  const date = new Date(time);
  if (Number.isNaN(date.getTime())) return html``;
  const pad = (n: number, width = 2): string => String(n).padStart(width, '0');
  const clock = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
  const iso = date.toISOString();
  return html`<time datetime="${iso}" title="${iso}">${clock}</time>`;
}

function formatContext(context: Record<string, unknown> | undefined): string | null {
  try {
    if (context === null || typeof context !== 'object' || Object.keys(context).length === 0) return null;
    let text: string;
    try {
      text = JSON.stringify(context, contextReplacer(), 2) ?? '';
    } catch {
      // Cycles and other values JSON cannot take: inspect handles them all.
      text = inspect(context, { depth: 4, breakLength: 100, maxArrayLength: MAX_CONTEXT_ITEMS, maxStringLength: MAX_CONTEXT_LENGTH });
    }
    return cutText(text);
  } catch {
    // A Proxy whose traps throw: the record is still shown.
    return '[context that cannot be shown]';
  }
}

/**
 * JSON.stringify's replacer for one context: an error as the profiler's logger panel shows it (class,
 * message, code, own fields), then, met again (its own field, a cycle), as `Class: message`.
 */
function contextReplacer(): (this: unknown, key: string, value: unknown) => unknown {
  const shown = new Set<Error>();
  // Characters met so far: past what the page shows, values are no longer walked (100 items of 100
  // items of 20,000 characters were written whole, 200 MB, to show 5,000 characters of them).
  let spent = 0;
  // The objects being written, outermost first (JSON.stringify walks depth first, calling with the
  // holder as `this`): a cycle is written `[Circular]` here rather than failing over to a walk of all of it.
  const path: unknown[] = [];
  return function (this: unknown, key, value) {
    while (path.length > 0 && path[path.length - 1] !== this) path.pop();
    spent += key.length + 4;
    if (spent > MAX_CONTEXT_LENGTH) return '…';
    const shownAs = replaced(value);
    if (shownAs !== null && typeof shownAs === 'object') {
      if (path.includes(value) || path.includes(shownAs)) return '[Circular]';
      path.push(shownAs);
    }
    return shownAs;
  };

  function replaced(value: unknown): unknown {
    if (typeof value === 'string') {
      spent += value.length;
      return value.length > MAX_CONTEXT_LENGTH ? `${value.slice(0, MAX_CONTEXT_LENGTH)}…` : value;
    }
    if (Array.isArray(value)) return value.length > MAX_CONTEXT_ITEMS ? [...value.slice(0, MAX_CONTEXT_ITEMS), `… ${value.length - MAX_CONTEXT_ITEMS} more ${value.length - MAX_CONTEXT_ITEMS === 1 ? 'item' : 'items'}`] : value;
    if (value !== null && typeof value === 'object' && !isError(value)) return firstMembers(value) ?? value;
    if (typeof value === 'bigint') return `${value}n`;
    if (isError(value)) {
      if (shown.has(value)) return `${value.name}: ${value.message}`;
      shown.add(value);
      return errorShape(value);
    }
    if (typeof value === 'function') return `[Function ${value.name || 'anonymous'}]`;
    if (typeof value === 'symbol') return value.toString();
    return value;
  }
}

/**
 * An object of more than MAX_CONTEXT_ITEMS keys (a typed array of more items) as its first ones and a
 * count of the rest, or null: JSON.stringify reads and writes them all (a context's object of 100,000
 * keys was read whole to show 5,000 characters of it).
 */
function firstMembers(value: object): Record<string, unknown> | null {
  const typed = ArrayBuffer.isView(value) && !(value instanceof DataView);
  const keys = typed ? null : Object.keys(value);
  const count = keys === null ? (value as unknown as ArrayLike<unknown>).length : keys.length;
  if (count <= MAX_CONTEXT_ITEMS) return null;
  const first: Record<string, unknown> = {};
  for (let i = 0; i < MAX_CONTEXT_ITEMS; i++) {
    const key = keys === null ? String(i) : keys[i]!;
    // Defined, not assigned: a `__proto__` key is a member like any other.
    Object.defineProperty(first, key, { value: (value as Record<string, unknown>)[key], enumerable: true, writable: true, configurable: true });
  }
  const rest = count - MAX_CONTEXT_ITEMS;
  first['…'] = `${rest} more ${typed ? 'item' : 'key'}${rest === 1 ? '' : 's'}`;
  return first;
}

/** A path relative to the working directory when inside it: shorter, and what the developer's editor shows. */
function displayPath(file: string, cwd: string): string {
  if (isAbsolute(file) && file.startsWith(cwd + sep)) return relative(cwd, file);
  return file;
}

function isSafeLink(url: string | null | undefined): url is string {
  return typeof url === 'string' && /^(?:\/(?!\/)|https?:\/\/)/i.test(url);
}

function placeholderError(status: number): FlatError {
  return { class: 'Error', message: '', status, statusText: statusText(status), headers: {}, frames: [], stack: '' };
}

// Our own constant CSS, the text of the page's `<style>`.
const STYLE = `
:root { color-scheme: light dark; --bg: #f5f6f8; --fg: #1d2330; --muted: #5d6679; --card: #fff; --border: #d8dde5;
  --link: #0b5cad; --code-bg: #f2f4f7; --highlight: #fff1b8; --error: #b42318; --warning: #a15c07;
  --head-4xx: #7a4b00; --head-5xx: #8f1d16; --head-fg: #fff; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #0e1116; --fg: #e3e7ee; --muted: #98a2b3; --card: #161b22; --border: #2b323c;
    --link: #6cb6ff; --code-bg: #0b0e13; --highlight: #3a3214; --error: #ff7b72; --warning: #e3b341;
    --head-4xx: #4d3100; --head-5xx: #5a1511; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
a { color: var(--link); }
code, pre, .file, .function { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.container { max-width: 1200px; margin: 0 auto; padding: 0 20px; }
.summary { color: var(--head-fg); padding: 24px 0; }
.summary a { color: inherit; }
.status-4xx { background: var(--head-4xx); }
.status-5xx { background: var(--head-5xx); }
.chain, .http, .request, .links { margin: 4px 0; }
.chain a { font-weight: 600; text-decoration: none; }
.arrow { opacity: .7; }
/* Read by screen readers, not shown: the arrow says it to the eye (an aria-label on a span is ignored by most of them). */
.visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; border: 0; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.http small { font-size: inherit; opacity: .8; }
.summary h1 { font-size: 24px; margin: 12px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.request { opacity: .85; overflow-wrap: anywhere; }
.method { font-weight: 600; }
section { margin: 28px 0; }
h2 { font-size: 20px; border-bottom: 1px solid var(--border); padding-bottom: 6px; }
.badge, .count { display: inline-block; font-size: 12px; font-weight: 600; padding: 1px 8px; border-radius: 10px; background: var(--code-bg); border: 1px solid var(--border); }
.count.level-error { color: var(--error); }
.count.level-warning { color: var(--warning); }
.error { background: var(--card); border: 1px solid var(--border); border-radius: 6px; padding: 12px 16px; margin: 16px 0; }
.error h3 { margin: 0 0 6px; font-size: 17px; }
.counter { color: var(--muted); font-weight: 400; font-size: 13px; margin-right: 6px; }
.message { white-space: pre-wrap; overflow-wrap: anywhere; }
.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0 0 8px; color: var(--muted); }
.meta dd { margin: 0; }
.frames { list-style: none; padding: 0; margin: 0; }
.frame { border-top: 1px solid var(--border); padding: 6px 0; }
.frame-head { overflow-wrap: anywhere; }
.function { font-weight: 600; }
.location { color: var(--muted); }
.internal .function { font-weight: 400; color: var(--muted); }
.frames-internal { border-top: 1px solid var(--border); padding: 6px 0; color: var(--muted); }
.frames-internal ol { list-style: none; padding-left: 16px; }
.frames-internal summary { cursor: pointer; }
.excerpt { background: var(--code-bg); border: 1px solid var(--border); border-radius: 4px; margin: 6px 0; padding: 6px 0; overflow-x: auto; }
.excerpt .line { display: block; padding: 0 10px; white-space: pre; }
.excerpt .highlight { background: var(--highlight); }
.excerpt .number { display: inline-block; min-width: 4ch; margin-right: 12px; color: var(--muted); text-align: right; user-select: none; }
.logs { width: 100%; border-collapse: collapse; background: var(--card); }
.logs th, .logs td { text-align: left; vertical-align: top; padding: 6px 8px; border-bottom: 1px solid var(--border); }
.logs .time, .logs .level, .logs .channel { white-space: nowrap; font-size: 13px; }
.logs th .zone { font-weight: 400; color: var(--muted); }
.logs tr.level-error .level { color: var(--error); font-weight: 600; }
.logs tr.level-warning .level { color: var(--warning); font-weight: 600; }
.logs tr.level-debug { color: var(--muted); }
.log-message { overflow-wrap: anywhere; }
@media (max-width: 640px) {
  /* A narrow screen: time, level and channel on one line, the message under them across the width. The header
     row is hidden from the eye only: a screen reader still names each cell's column. */
  .logs thead { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
  .logs tr { display: grid; grid-template-columns: auto auto 1fr; border-bottom: 1px solid var(--border); }
  .logs td { border-bottom: none; }
  .logs td.log-message, .logs td.empty { grid-column: 1 / -1; padding-top: 0; }
}
.context { margin: 4px 0 0; color: var(--muted); white-space: pre-wrap; }
/* Stack traces and excerpts scroll sideways; the markup makes them focusable (tabindex) so that a keyboard can scroll them. */
.plain { background: var(--card); border: 1px solid var(--border); border-radius: 4px; padding: 10px; overflow-x: auto; }
.empty { color: var(--muted); font-style: italic; }
`;
