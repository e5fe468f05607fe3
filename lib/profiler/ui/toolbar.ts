/**
 * The debug toolbar: a small bar fixed at the bottom of an HTML page, with the request's status,
 * route, time, memory, logs and exception, each linking into its profile panel. A self-contained
 * fragment (no <html>/<body>) whose CSS is scoped under `#hk-toolbar`.
 */
import { html, unsafeRaw } from '../../errors/index.js';
import { formatBytes, formatDuration, statusClass } from './format.js';
import { TOOLBAR_CSS, TOOLBAR_JS, TOOLBAR_LOADER_JS } from './toolbar-assets.js';
import type { ProfilerUrls } from './urls.js';

/** What the toolbar shows about one request. */
export interface ToolbarInput {
  token: string;
  status: number;
  /** The matched route's name, or null. */
  route: string | null;
  method: string;
  durationMs: number;
  memoryBytes: number;
  logCount: number;
  errorCount: number;
  warningCount: number;
  /** The class of the outermost error, or null when there was none. */
  exceptionClass: string | null;
  urls: ProfilerUrls;
}

/** Renders the toolbar fragment (what `/_wdt/<token>` serves). */
export function renderToolbar(input: ToolbarInput): string {
  const { token, urls } = input;
  const duration = formatDuration(input.durationMs).split(' ');
  const memory = formatBytes(input.memoryBytes).split(' ');
  // The landmark is the whole toolbar, its hide toggle too, which sits outside the bar (the CSS shows it when the bar is hidden).
  // Its text is English whatever the page's language, which a screen reader would read it in.
  // Bare figures (`404GET`, `Logs 4 1 2`) get words in hidden text (hk-sr), so a screen reader reads `404 GET: request and
  // response`, `Logs 4, 1 error, 2 warnings`: a name from the content, which keeps the visible text in it (WCAG's label in name).
  // Adjacent figures each get a hidden separator: run together, `4` logs and `1` error would be read as `41`.
  return html`<div id="hk-toolbar" class="hk-root" data-token="${token}" role="region" aria-label="Profiler toolbar" lang="en">
<style>${unsafeRaw(TOOLBAR_CSS)}</style>
<input type="checkbox" id="hk-toolbar-hide" class="hk-hide" aria-label="Hide the profiler toolbar">
<div class="hk-spacer"></div>
<div class="hk-bar">
<a class="hk-item hk-request" href="${urls.panel(token, 'request')}" title="Request and response"><span class="hk-status hk-${statusClass(input.status)}">${input.status}</span><span class="hk-sr"> </span><span class="hk-value">${input.method}</span><span class="hk-sr">: request and response</span></a>
<a class="hk-item hk-route" href="${urls.panel(token, 'router')}" title="Routing"><span class="hk-label">Route</span><span class="hk-value hk-mono">${input.route ?? 'none'}</span></a>
<a class="hk-item hk-time" href="${urls.panel(token, 'time')}" title="Time until the response was ready"><span class="hk-value">${duration[0]}</span><span class="hk-unit">${duration[1]}</span><span class="hk-sr"> until the response was ready</span></a>
<a class="hk-item hk-memory" href="${urls.panel(token, 'time')}" title="Memory"><span class="hk-value">${memory[0]}</span><span class="hk-unit">${memory[1]}</span><span class="hk-sr"> of memory</span></a>
<a class="hk-item hk-logs" href="${urls.panel(token, 'logger')}" title="Logs: ${counted(input.errorCount, 'error')}, ${counted(input.warningCount, 'warning')}"><span class="hk-label">Logs</span><span class="hk-sr"> </span><span class="hk-value">${input.logCount}</span>${input.errorCount > 0 ? html`<span class="hk-sr">, </span><span class="hk-badge hk-error">${input.errorCount}<span class="hk-sr"> ${input.errorCount === 1 ? 'error' : 'errors'}</span></span>` : ''}${input.warningCount > 0 ? html`<span class="hk-sr">, </span><span class="hk-badge hk-warning">${input.warningCount}<span class="hk-sr"> ${input.warningCount === 1 ? 'warning' : 'warnings'}</span></span>` : ''}</a>
${input.exceptionClass !== null ? html`<a class="hk-item hk-exception" href="${urls.panel(token, 'exception')}" title="Exception"><span class="hk-badge hk-error" aria-hidden="true">!</span><span class="hk-sr">Exception </span><span class="hk-value hk-mono">${input.exceptionClass}</span></a>` : ''}
<a class="hk-item hk-token" href="${urls.panel(token)}" title="Open the profile"><span class="hk-label">Profile</span><span class="hk-value hk-mono">${token}</span></a>
</div>
<label for="hk-toolbar-hide" class="hk-toggle" title="Hide or show the profiler toolbar"><span class="hk-when-open" aria-hidden="true">×</span><span class="hk-when-closed"><span class="hk-status hk-${statusClass(input.status)}">${input.status}</span><span class="hk-sr"> </span>Profiler</span></label>
<script>${unsafeRaw(TOOLBAR_JS)}</script>
</div>
`.toString();
}

/** `1 error`, `2 errors`, `0 warnings`: a count with its noun in the right number. */
function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** Options of the toolbar loader. */
export interface ToolbarLoaderOptions {
  /** CSP nonce for the loader's `<script>` (the alternative to allowing TOOLBAR_CSP_HASHES). */
  nonce?: string;
}

/** The snippet injected before `</body>`: a placeholder with the URLs it needs, and the constant loader script. */
export function renderToolbarLoader(token: string, urls: ProfilerUrls, options: ToolbarLoaderOptions = {}): string {
  return html`<div id="hk-toolbar-loader" hidden data-token="${token}" data-src="${urls.toolbar(token)}" data-panel="${urls.panel(token)}"></div><script${options.nonce !== undefined ? html` nonce="${options.nonce}"` : ''}>${unsafeRaw(TOOLBAR_LOADER_JS)}</script>
`.toString();
}
