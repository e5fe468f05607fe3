/**
 * The exception panel: each error of the cause chain with its frames, internal frames folded away,
 * and the source lines around its first application frames, as the debug error page shows them.
 */
import { excerptReader, html, renderElided, renderSourceExcerpt, type FileLinker, type SafeHtml, type SourceExcerpt } from '../../../errors/index.js';
import type { Profile } from '../../profile.js';
import type { ProfilerUrls } from '../urls.js';
import { arrayOf, isRecord, numberOf, recordOf, renderNoData, SHOWN_MESSAGE_LENGTH, stringOf } from '../values.js';
import type { PanelContext } from './panel-context.js';

/** The errors of `collectors.exception`, or null when the collector recorded nothing. */
export function exceptionsOf(collectors: Record<string, unknown>): Record<string, unknown>[] | null {
  const data = collectors['exception'];
  if (!isRecord(data)) return null;
  return arrayOf(data['exceptions']).filter(isRecord);
}

/** The chain of the error a failing kernel.exception listener was handling (`collectors.exception.handled`); empty when there is none. */
export function handledExceptionsOf(collectors: Record<string, unknown>): Record<string, unknown>[] {
  const data = collectors['exception'];
  return isRecord(data) ? arrayOf(data['handled']).filter(isRecord) : [];
}

/** How frames are shown: editor links, and when the request was made (a source file changed since may have moved its lines). */
interface FrameView {
  fileLink: FileLinker | null;
  recordedAt: number;
}

/** Renders `collectors.exception`. */
export function renderExceptionPanel({ profile, urls, fileLink }: PanelContext): SafeHtml {
  const view: FrameView = { fileLink, recordedAt: profile.time };
  const errors = exceptionsOf(profile.collectors);
  if (errors === null) return html`<h2>Exceptions</h2>${renderNoData('exception', profile.collectors['exception'])}`;
  if (errors.length === 0) return html`<h2>Exceptions</h2><p class="empty">No exception was thrown while handling this request</p>${renderErrorPageNote(profile, urls)}`;
  const handled = handledExceptionsOf(profile.collectors);
  return html`<h2>Exceptions <span class="badge error">${errors.length}</span></h2>
${errors.length > 1 ? html`<p class="muted">Outermost first; each one was caused by the next.</p>` : ''}
${errors.map((error, i) => renderError(error, i, errors.length, view, 'exception'))}${renderOmittedErrors(errors)}
${handled.length === 0
  ? ''
  : html`<h2 id="handled">Thrown while handling <span class="badge error">${handled.length}</span></h2>
<p class="muted">A <code>kernel.exception</code> listener threw the error above while it handled this one: the error page does not show it, and the listeners after that one never saw it.</p>
${handled.map((error, i) => renderError(error, i, handled.length, view, 'handled'))}${renderOmittedErrors(handled)}`}`;
}

/** The note of a chain the profile keeps cut (a cause chain 1,000 deep, an AggregateError of 5,000). */
function renderOmittedErrors(errors: Record<string, unknown>[]): SafeHtml | '' {
  const omitted = numberOf(errors.at(-1)?.['omitted']) ?? 0;
  return omitted > 0 ? html`<p class="empty">${omitted} more ${omitted === 1 ? 'error of the chain is' : 'errors of the chain are'} not shown: the profile keeps its first ${errors.length}.</p>` : '';
}

/**
 * For the error page's sub-request (one with an `exception` attribute, as the error controller's
 * has): its status is the error's, yet it threw nothing itself. Says so, and links to the parent's
 * exception panel, where the error and its stack are.
 */
function renderErrorPageNote(profile: Profile, urls: ProfilerUrls): SafeHtml {
  const attributes = recordOf(recordOf(profile.collectors['request'])['attributes']);
  if (profile.parent === null || !Object.hasOwn(attributes, 'exception')) return html``;
  const error = stringOf(attributes['exception']);
  return html`<p class="notice error-page-note">This sub-request rendered the error page for an error of its parent request${error !== null ? html`, <span class="text">${renderElided(error, SHOWN_MESSAGE_LENGTH)}</span>` : ''}: <a href="${urls.panel(profile.parent, 'exception')}">see it on the parent's Exception panel</a>.</p>`;
}

function renderError(error: Record<string, unknown>, index: number, count: number, view: FrameView, idPrefix: string): SafeHtml {
  const status = numberOf(error['status']);
  const code = stringOf(error['code']);
  const stack = stringOf(error['stack']) ?? '';
  return html`<article class="error-card" id="${idPrefix}-${index + 1}">
<h3><span class="counter">${index + 1}/${count}${index > 0 ? ' caused' : ''}</span> <span class="class">${stringOf(error['class']) ?? 'Error'}</span></h3>
<p class="message">${stringOf(error['message']) ?? ''}</p>
${status !== null || code !== null
  ? html`<dl>${status !== null ? html`<div><dt>Status</dt><dd>${status}</dd></div>` : ''}${code !== null ? html`<div><dt>Code</dt><dd><code>${code}</code></dd></div>` : ''}</dl>`
  : ''}
${renderFrames(arrayOf(error['frames']).filter(isRecord), view)}
${stack !== '' ? html`<details class="raw-stack"><summary>Stack trace (plain text)</summary><pre>${stack}</pre></details>` : ''}
</article>`;
}

function renderFrames(frames: Record<string, unknown>[], view: FrameView): SafeHtml {
  if (frames.length === 0) return html`<p class="empty">No stack frames</p>`;
  const items: SafeHtml[] = [];
  let internalRun: SafeHtml[] = [];
  const flushInternal = (): void => {
    if (internalRun.length === 0) return;
    const label = internalRun.length === 1 ? '1 internal frame' : `${internalRun.length} internal frames`;
    items.push(html`<li class="internal-run"><details><summary>${label}</summary><ol>${internalRun}</ol></details></li>`);
    internalRun = [];
  };
  const readExcerpt = excerptReader();
  for (const frame of frames) {
    if (frame['internal'] === true) {
      internalRun.push(renderFrame(frame, view, null));
    } else {
      flushInternal();
      items.push(renderFrame(frame, view, readExcerpt(stringOf(frame['file']), numberOf(frame['line']))));
    }
  }
  flushInternal();
  return html`<ol class="frames">${items}</ol>`;
}

function renderFrame(frame: Record<string, unknown>, view: FrameView, source: SourceExcerpt | null): SafeHtml {
  const internal = frame['internal'] === true;
  const file = stringOf(frame['file']);
  const line = numberOf(frame['line']);
  const column = numberOf(frame['column']);
  const link = file !== null && view.fileLink !== null ? view.fileLink(file, line) : null;
  const position = html`${line !== null ? html`:${line}${column !== null ? html`:${column}` : ''}` : ''}`;
  const where = file === null ? html`unknown location` : link !== null ? html`<a href="${link}" title="Open in your editor">${file}${position}</a>` : html`${file}${position}`;
  return html`<li class="${internal ? 'frame internal' : 'frame'}"><span class="function">${stringOf(frame['function']) ?? '(anonymous)'}</span> <span class="where">at <span class="mono">${where}</span></span>${source === null ? '' : renderExcerpt(source, view)}</li>`;
}

// The file is read now, not when the request was made: one changed since may show other lines than the error's.
function renderExcerpt(source: SourceExcerpt, view: FrameView): SafeHtml {
  const changed = source.modifiedMs > view.recordedAt;
  return html`${changed ? html`<p class="excerpt-changed">This file has changed since the request: these may not be the lines it ran.</p>` : ''}${renderSourceExcerpt(source)}`;
}

/** The exception menu entry's badge: how many errors the chain holds (and the handled error's chain). */
export function exceptionBadge({ profile }: PanelContext): SafeHtml {
  const collectors = recordOf(profile.collectors);
  const count = (exceptionsOf(collectors)?.length ?? 0) + handledExceptionsOf(collectors).length;
  return count > 0 ? html`<span class="badge error">${count}</span>` : html``;
}
