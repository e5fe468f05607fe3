/**
 * Source excerpts as the pages show them: the first few application frames of an error get the
 * lines around theirs. Shared by the debug error page and the profiler's exception panel, which
 * bring their own CSS for `.excerpt`.
 */
import { html, type SafeHtml } from './html.js';
import { readSourceExcerpt, type SourceExcerpt } from './stack-frames.js';

/** How many application frames per error get a source excerpt. */
export const EXCERPT_FRAMES = 3;
/** Source lines shown either side of a frame's line, by default. */
export const EXCERPT_LINES = 5;

/**
 * A reader of excerpts for one error's frames: each call gives the lines `around` a frame's, until
 * `frames` excerpts have been given (a frame whose file cannot be read does not count).
 */
export function excerptReader(around = EXCERPT_LINES, frames = EXCERPT_FRAMES): (file: string | null, line: number | null) => SourceExcerpt | null {
  let left = frames;
  return (file, line) => {
    if (left <= 0 || file === null || line === null) return null;
    const source = readSourceExcerpt(file, line, around);
    if (source !== null) left--;
    return source;
  };
}

/**
 * An excerpt as `<pre class="excerpt">`: numbered lines, the frame's own highlighted. Its lines are
 * not wrapped, so the box scrolls sideways: it is focusable (`tabindex="0"`) so that a keyboard can scroll it.
 */
export function renderSourceExcerpt(source: SourceExcerpt): SafeHtml {
  return html`<pre class="excerpt" tabindex="0"><code>${source.lines.map(
    (text, i) =>
      // No newline between lines: each is a block already, a newline in <pre> would add a blank one.
      html`<span class="${source.start + i === source.highlight ? 'line highlight' : 'line'}"><span class="number">${source.start + i}</span>${text}</span>`,
  )}</code></pre>`;
}
